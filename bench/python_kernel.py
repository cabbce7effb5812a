#!/usr/bin/env python3
"""A Numba ``@dynd.kernel`` over 10M ragged float64 values, against the same
scalar function written with ``numba.njit`` over awkward's flattened content.

    python bench/python_kernel.py [--rows N] [--repeat R]

Needs dynd installed (``maturin develop --release -m crates/dynd-python/Cargo.toml``
for meaningful numbers), numba, awkward and pyarrow.

The data: 1M rows of ``(i * 7 + 3) % 21`` float64 values each (10M values;
bench/compare.py's ragged array), built once as an awkward array and
imported into dynd through Arrow (a LargeList of the same offsets and
values; the values zero-copy).

Both sides compute ``f(x, 0.5)`` for every value into a new ragged array of
the same rows:

- dynd: ``k(x, 0.5)`` where ``k`` is ``@dynd.kernel("(float64, float64) ->
  float64")`` of ``f`` — dynd lifts it over ``1000000 * var * float64``,
  broadcasting the scalar, and runs the loop on its worker threads;
- Numba + awkward: an ``@numba.njit`` loop calling ``f`` over
  ``x.layout.content.data`` (the flattened values, no copy) into a new NumPy
  array, wrapped as an awkward array with ``x``'s offsets. One thread (what
  njit without ``parallel=True`` does; the issue's baseline).

Each side is timed as the median of ``--repeat`` runs after a warm-up. dynd
runs in child processes with ``RAYON_NUM_THREADS=1`` and ``=2`` (rayon sizes
its pool once per process); the Numba side is timed in each child too, so
each ratio compares timings taken together. ratio = numba ms / dynd ms
(above 1: dynd is faster). Targets: >= 1.0 on 1 thread, >= 1.5 on 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time


def f(x, y):
    return math.sqrt(x * x + y) * y


def ragged(rows):
    import awkward as ak
    import numpy as np

    lengths = (np.arange(rows, dtype=np.int64) * 7 + 3) % 21
    offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    content = np.sin(np.arange(total, dtype=np.float64)) * 100.0
    return ak.Array(ak.contents.ListOffsetArray(ak.index.Index64(offsets), ak.contents.NumpyArray(content)))


class _NonNullable:
    """``x`` as an Arrow LargeList whose schema says "no nulls" at both
    levels (pyarrow marks every top-level array nullable, which dynd imports
    as ``?var``)."""

    def __init__(self, x, pa, np):
        self.pa = pa
        self.type = pa.large_list(pa.field("item", pa.float64(), nullable=False))
        offsets = pa.array(np.asarray(x.layout.offsets))
        self.array = pa.LargeListArray.from_arrays(offsets, pa.array(x.layout.content.data), type=self.type)

    def __arrow_c_array__(self, requested_schema=None):
        _, array = self.array.__arrow_c_array__()
        return self.pa.field("x", self.type, nullable=False).__arrow_c_schema__(), array


def median_ms(fn, repeat):
    fn()  # warm-up (compilation, page faults)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def worker(rows, repeat):
    import awkward as ak
    import numba
    import numpy as np
    import pyarrow as pa

    import dynd

    x = ragged(rows)
    d = dynd.from_arrow(_NonNullable(x, pa, np))
    assert d.type == f"{rows} * var * float64", d.type

    k = dynd.kernel("(float64, float64) -> float64")(f)
    f_njit = numba.njit(f)

    @numba.njit
    def apply(content, y, out):
        for i in range(content.shape[0]):
            out[i] = f_njit(content[i], y)

    def numba_awkward():
        content = x.layout.content.data
        out = np.empty_like(content)
        apply(content, 0.5, out)
        return ak.Array(ak.contents.ListOffsetArray(x.layout.offsets, ak.contents.NumpyArray(out)))

    def dynd_kernel():
        return k(d, 0.5)

    # Same values on both sides.
    a = np.asarray(numba_awkward().layout.content.data)
    b = pa.array(dynd_kernel()).flatten().to_numpy()
    if not np.array_equal(a, b):
        raise SystemExit("dynd.kernel and numba.njit disagree")

    return {
        "threads": int(os.environ.get("RAYON_NUM_THREADS", "0")),
        "values": int(len(x.layout.content)),
        "dynd_ms": median_ms(dynd_kernel, repeat),
        "numba_ms": median_ms(numba_awkward, repeat),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        print(json.dumps(worker(args.rows, args.repeat)))
        return 0

    try:
        load = os.getloadavg()
        print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; cpus: {os.cpu_count()}")
    except OSError:
        pass
    results = []
    for threads in (1, 2):
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
        out = subprocess.run(
            [sys.executable, __file__, "--worker", "--rows", str(args.rows), "--repeat", str(args.repeat)],
            env=env,
            capture_output=True,
            text=True,
        )
        if out.returncode != 0:
            sys.stderr.write(out.stderr)
            raise SystemExit(f"the worker with {threads} thread(s) failed")
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"f(x, 0.5) = sqrt(x*x + 0.5) * 0.5 over {results[0]['values']:,} ragged float64 values ({args.rows:,} rows)")
    print(f"{'threads':>7}  {'dynd.kernel ms':>14}  {'numba.njit+awkward ms':>21}  {'ratio':>6}  target")
    for r in results:
        ratio = r["numba_ms"] / r["dynd_ms"]
        target = 1.0 if r["threads"] == 1 else 1.5
        flag = "ok" if ratio >= target else "BELOW"
        print(f"{r['threads']:>7}  {r['dynd_ms']:>14.2f}  {r['numba_ms']:>21.2f}  {ratio:>6.2f}  >= {target} {flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
