"""Zero-copy interop from Python: time per call on an 80 MB array.

    python bench/python_interop.py [--runs N] [--mb MB]

np.asarray(dynd array), dynd.asarray(NumPy array), np.from_dlpack(dynd),
dynd.from_dlpack(NumPy), pa.array(dynd) and dynd.from_arrow(pyarrow) on
10M float64 (80 MB), and the same on 1,000 elements (8 KB): the
conversions are O(1), so the two columns agree. Median of --runs runs of
a batch of calls each, in µs per call. Each result is also checked to
share the producer's memory (same data address), and the copies (the
Arrow import of a nullable pyarrow array, dynd.array) are shown for scale.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pyarrow as pa

import dynd


def per_call_us(f, runs: int, batch: int) -> float:
    f()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(batch):
            f()
        samples.append((time.perf_counter() - t0) / batch * 1e6)
    return statistics.median(samples)


class NonNullable:
    """A pyarrow array exported under a non-nullable field: pyarrow marks
    every array nullable, which imports as ?T (a copy, DESIGN §12)."""

    def __init__(self, p):
        self.p = p

    def __arrow_c_array__(self, requested_schema=None):
        schema = pa.field("v", self.p.type, nullable=False).__arrow_c_schema__()
        return schema, self.p.__arrow_c_array__()[1]


def cases(n: int):
    x = np.arange(n, dtype=np.float64)
    a = dynd.asarray(x)
    p = pa.array(x)
    nn = NonNullable(p)
    addr = x.__array_interface__["data"][0]
    # Zero-copy checks (the data address of every result is x's).
    assert np.asarray(a).__array_interface__["data"][0] == addr
    assert np.from_dlpack(a).__array_interface__["data"][0] == addr
    assert np.asarray(dynd.from_dlpack(x)).__array_interface__["data"][0] == addr
    assert pa.array(a).buffers()[1].address == addr
    assert np.asarray(dynd.from_arrow(nn)).__array_interface__["data"][0] == addr
    return [
        ("np.asarray(a)", lambda: np.asarray(a), True),
        ("dynd.asarray(x)", lambda: dynd.asarray(x), True),
        ("np.from_dlpack(a)", lambda: np.from_dlpack(a), True),
        ("dynd.from_dlpack(x)", lambda: dynd.from_dlpack(x), True),
        ("pa.array(a)", lambda: pa.array(a), True),
        ("dynd.from_arrow(non-nullable pa)", lambda: dynd.from_arrow(nn), True),
        ("dynd.from_arrow(pa) [?T: copy]", lambda: dynd.from_arrow(p), False),
        ("dynd.array(x) [copy]", lambda: dynd.array(x), False),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--mb", type=int, default=80)
    args = ap.parse_args()
    big = args.mb * 1_000_000 // 8
    small = 1000
    rows_big = cases(big)
    rows_small = cases(small)
    print(f"dynd {dynd.__version__}, numpy {np.__version__}, pyarrow {pa.__version__}")
    print(f"median of {args.runs} runs, µs per call")
    print(f"{'call':36} {f'{args.mb} MB':>12} {'8 KB':>10}")
    for (name, f_big, zero_copy), (_, f_small, _) in zip(rows_big, rows_small):
        batch = 200 if zero_copy else 1
        t_big = per_call_us(f_big, args.runs, batch)
        t_small = per_call_us(f_small, args.runs, 200)
        print(f"{name:36} {t_big:12.2f} {t_small:10.2f}")


if __name__ == "__main__":
    main()
