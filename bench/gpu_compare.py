#!/usr/bin/env python3
"""dynd on a CUDA device beside CuPy, one run, side by side (issue #29).

    python bench/gpu_compare.py [--size 1e8] [--runs 10]

Needs a CUDA device, the `dynd` wheel and CuPy (the lent device machine has
CuPy and PyTorch; scripts/gpu-check.sh runs this). On --size float64
elements (default 10^8, 800 MB per array), median of --runs after a
warm-up, each timed with the device synchronised before and after:

  - `a + b` into a new array: dynd vs CuPy;
  - `a * b + c` through two calls: dynd vs CuPy's `a * b + c`;
  - `a * b + c` fused: CuPy's ElementwiseKernel; dynd's fused kernel is
    the dynd-ops `Cuda` executor, a Rust API: its time is the `BENCH` line
    scripts/gpu-check.sh prints from the GPU tests (the row says so);
  - `to("cuda")` / `cpu()` of one array: dynd vs `cupy.asarray` / `.get()`
    (dynd stages copies of 8 MiB and up through pinned buffers);
  - `sum`, `mean`, `argmax` of the whole array, and `sum` over the inner
    axis of a 10^7 x 10 view: dynd vs CuPy;
  - a checked cast to float32: dynd vs CuPy's `astype` (unchecked);
  - ragged `sum(x, axis=-1)` over --size / 10 rows of mean length 10
    (lengths 0..20, rows in order): dynd vs CuPy's cumsum difference and
    `torch.segment_reduce` (when PyTorch is there);
  - ragged `x + 1.0` (GB/s counting values and descriptors read and
    written), `x[x > 12.0]`, `sort(x)` of each row (vs CuPy's lexsort by
    row and value, and dynd on the host's CPUs), `cumsum(x)` of each row;
  - skewed rows' `sum(x, axis=-1)` (every 1000th row 20 000 values long:
    a block each), and `sort(x)` of --size / 10^5 rows of 10^5 values
    (every long row in one radix sort) vs CuPy's lexsort;
  - `sort(a)` of the 1-D array: dynd's radix sort vs `cupy.sort`.

Prints a markdown table: work | dynd ms | CuPy ms | dynd / CuPy speed
(> 1 is dynd faster), and GB/s for the copies. Exits 2 without a device.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time


def ragged_column(pa, offsets, values):
    """`N * var * float64` over Arrow offsets and values, zero-copy.

    A bare Arrow array imports as `?var * ?float64` (Arrow arrays are
    nullable; DESIGN §12), so the list goes in as a non-nullable column of
    a record batch, and the column is taken out of the record."""
    import dynd
    import numpy as np

    large = offsets.dtype == np.int64
    item = pa.field("item", pa.float64(), nullable=False)
    t = pa.large_list(item) if large else pa.list_(item)
    lists = (pa.LargeListArray if large else pa.ListArray).from_arrays(pa.array(offsets), pa.array(values), type=t)
    batch = pa.record_batch([lists], schema=pa.schema([pa.field("x", t, nullable=False)]))
    return dynd.from_arrow(batch)["x"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=float, default=1e8)
    p.add_argument("--runs", type=int, default=10)
    args = p.parse_args()
    import dynd

    if not dynd.cuda.is_available():
        print("SKIP: no CUDA device (dynd.cuda.is_available() is False)")
        return 2
    import cupy
    import numpy as np

    n = int(args.size)

    def timed(f):
        cupy.cuda.runtime.deviceSynchronize()
        f()  # warm-up: compiles and caches kernels
        times = []
        for _ in range(args.runs):
            cupy.cuda.runtime.deviceSynchronize()
            t = time.perf_counter()
            f()
            cupy.cuda.runtime.deviceSynchronize()
            times.append(time.perf_counter() - t)
        return statistics.median(times) * 1e3

    rng = np.random.default_rng(0)
    host = [rng.standard_normal(n) for _ in range(3)]
    ca, cb, cc = (cupy.asarray(h) for h in host)
    da, db, dc = (dynd.array(h, device="cuda") for h in host)
    fused = cupy.ElementwiseKernel("float64 a, float64 b, float64 c", "float64 r", "r = a * b + c", "fma3")

    dev = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"{n:.0e} float64 on {dev}, median of {args.runs} runs")
    print("| work | dynd ms | CuPy ms | dynd / CuPy | note |")
    print("|---|---|---|---|---|")

    # Each row prints as soon as it is measured, so a later failure or time
    # limit keeps the rows before it.
    def row(work, ours, theirs, note=""):
        speed = f"{theirs / ours:.2f}x" if ours and theirs else ""
        ours_s = f"{ours:.3f}" if ours else "not on the device yet"
        theirs_s = f"{theirs:.3f}" if theirs else ""
        print(f"| {work} | {ours_s} | {theirs_s} | {speed} | {note} |", flush=True)

    row("`a + b`", timed(lambda: da + db), timed(lambda: ca + cb))
    row("`a * b + c` (two calls)", timed(lambda: da * db + dc), timed(lambda: ca * cb + cc))
    row("`a * b + c` fused", None, timed(lambda: fused(ca, cb, cc)), "dynd: the BENCH line of the GPU tests (dynd-ops Cuda executor)")
    gb = n * 8 / 1e9
    up = timed(lambda: dynd.array(host[0], device="cuda"))
    up_c = timed(lambda: cupy.asarray(host[0]))
    row("`to(\"cuda\")` of 800 MB" if n == 10**8 else "`to(\"cuda\")`", up, up_c, f"{gb / (up / 1e3):.1f} GB/s vs {gb / (up_c / 1e3):.1f}")
    down = timed(lambda: da.cpu())
    down_c = timed(lambda: ca.get())
    row("`cpu()`", down, down_c, f"{gb / (down / 1e3):.1f} GB/s vs {gb / (down_c / 1e3):.1f}")
    row("`sum(a)`", timed(lambda: dynd.sum(da)), timed(lambda: ca.sum()))
    row("`mean(a)`", timed(lambda: dynd.mean(da)), timed(lambda: ca.mean()))
    row("`argmax(a)`", timed(lambda: dynd.argmax(da)), timed(lambda: ca.argmax()))
    if n % 10 == 0:
        d2, c2 = da.reshape(n // 10, 10), ca.reshape(n // 10, 10)
        row("`sum(a, axis=-1)` of rows of 10", timed(lambda: dynd.sum(d2, axis=-1)), timed(lambda: c2.sum(axis=-1)))
    row("cast to float32 (checked)", timed(lambda: da.cast("float32")), timed(lambda: ca.astype(cupy.float32)), "CuPy does not check")

    # Ragged rows: lengths 0..20 (mean 10), values in one block.
    n_rows = max(n // 10, 1)
    lens = rng.integers(0, 21, size=n_rows)
    offsets = np.concatenate([[0], np.cumsum(lens)])
    vals = rng.standard_normal(int(offsets[-1]))
    try:
        import pyarrow as pa

        ragged = ragged_column(pa, offsets.astype(np.int32), vals)
    except ImportError:
        ragged = None
    if ragged is not None:
        dx = ragged.to("cuda")
        cv, co = cupy.asarray(vals), cupy.asarray(offsets)

        def cupy_segsum():
            c = cupy.concatenate([cupy.zeros(1), cupy.cumsum(cv)])
            return c[co[1:]] - c[co[:-1]]

        ours = timed(lambda: dynd.sum(dx, axis=-1))
        note = ""
        try:
            import torch

            tv, tl = torch.as_tensor(vals, device="cuda"), torch.as_tensor(lens, device="cuda")
            tt = timed(lambda: torch.segment_reduce(tv, "sum", lengths=tl))
            note = f"torch.segment_reduce {tt:.3f} ms ({tt / ours:.1f}x)"
        except Exception as e:  # noqa: BLE001 - the row says why
            note = f"torch.segment_reduce: {type(e).__name__}"
        row(f"ragged `sum(x, axis=-1)`, {n_rows:.0e} rows", ours, timed(cupy_segsum), note)
        np.testing.assert_allclose(np.asarray(dynd.sum(dx, axis=-1).cpu()), cupy.asnumpy(cupy_segsum()), rtol=1e-6, atol=1e-6)
        # Bytes moved: values and descriptors read, values and descriptors written.
        moved = (vals.size * 8 * 2 + n_rows * 16 * 2) / 1e9
        ours = timed(lambda: dx + 1.0)
        row("ragged `x + 1.0`", ours, timed(lambda: cv + 1.0), f"{moved / (ours / 1e3):.0f} GB/s; CuPy: the values alone")

        def cupy_filter():
            m = cv > 12.0
            c = cupy.concatenate([cupy.zeros(1, dtype=cupy.int64), cupy.cumsum(m)])
            return cv[m], c[co]

        row("ragged `x[x > 12.0]`", timed(lambda: dynd.filter(dx, dx > 12.0)), timed(cupy_filter), "CuPy: mask, values, new offsets")
        seg = cupy.repeat(cupy.arange(n_rows), cupy.asarray(lens))
        ours = timed(lambda: dynd.sort(dx))
        t0 = time.perf_counter()
        dynd.sort(ragged)
        host_ms = (time.perf_counter() - t0) * 1e3
        row("ragged `sort(x)` (each row)", ours, timed(lambda: cv[cupy.lexsort(cupy.stack([cv, seg]))]),
            f"CuPy: lexsort by (row, value); dynd on the host CPUs {host_ms:.0f} ms ({host_ms / ours:.0f}x)")
        row("ragged `cumsum(x)` (each row)", timed(lambda: dynd.cumsum(dx)), None)
        # Each sorted row keeps its values (their sums agree).
        np.testing.assert_allclose(np.asarray(dynd.sum(dynd.sort(dx), axis=-1).cpu()),
                                   np.asarray(dynd.sum(dx, axis=-1).cpu()), rtol=1e-9, atol=1e-9)
        # Skewed rows: every 1000th row 20 000 values long, the rest as above
        # (long rows take a block each in the reduction).
        slens = lens[: max(n_rows // 10, 1)].copy()
        slens[::1000] = 20_000
        soff = np.concatenate([[0], np.cumsum(slens)])
        svals = rng.standard_normal(int(soff[-1]))
        sx = ragged_column(pa, soff.astype(np.int32), svals).to("cuda")
        scv, sco = cupy.asarray(svals), cupy.asarray(soff)

        def cupy_skewed():
            c = cupy.concatenate([cupy.zeros(1), cupy.cumsum(scv)])
            return c[sco[1:]] - c[sco[:-1]]

        row(f"skewed `sum(x, axis=-1)`, {slens.size:.0e} rows, {int(soff[-1]):.0e} values",
            timed(lambda: dynd.sum(sx, axis=-1)), timed(cupy_skewed), "every 1000th row 20 000 long")
        np.testing.assert_allclose(np.asarray(dynd.sum(sx, axis=-1).cpu()), cupy.asnumpy(cupy_skewed()), rtol=1e-6, atol=1e-6)
        # Many long rows: --size / 10^5 rows of 10^5 values (radix sort of
        # every row at once).
        l_rows = max(n // 100_000, 1)
        loff = np.arange(l_rows + 1, dtype=np.int64) * 100_000
        lvals = rng.standard_normal(int(loff[-1]))
        lx = ragged_column(pa, loff, lvals).to("cuda")
        lcv = cupy.asarray(lvals)
        lseg = cupy.repeat(cupy.arange(l_rows), 100_000)
        row(f"ragged `sort(x)`, {l_rows} rows of 10^5", timed(lambda: dynd.sort(lx)),
            timed(lambda: lcv[cupy.lexsort(cupy.stack([lcv, lseg]))]), "CuPy: lexsort by (row, value)")
        ls = dynd.sort(lx).cpu()
        for r in sorted({0, l_rows // 2, l_rows - 1}):
            np.testing.assert_array_equal(np.asarray(ls[r]), np.sort(lvals[int(loff[r]):int(loff[r + 1])]))
        del lx, lcv, lseg, sx, scv
    else:
        row("ragged `sum(x, axis=-1)`", None, None, "pyarrow is not installed")
    row("`sort(a)` (1-D)", timed(lambda: dynd.sort(da)), timed(lambda: cupy.sort(ca)), "dynd: stable LSD radix sort")
    np.testing.assert_array_equal(np.asarray(dynd.sort(da).cpu()), cupy.asnumpy(cupy.sort(ca)))

    # The results agree.
    np.testing.assert_array_equal(np.asarray((da * db + dc).cpu()), cupy.asnumpy(ca * cb + cc))
    assert int(np.asarray(dynd.argmax(da).cpu())) == int(ca.argmax())
    np.testing.assert_allclose(float(np.asarray(dynd.sum(da).cpu())), float(ca.sum()), rtol=1e-9)
    return 0


if __name__ == "__main__":
    sys.exit(main())
