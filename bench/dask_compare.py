"""dynd.dask benchmarks (DESIGN §15, issue #28): not timed tests, numbers.

1. read -> filter -> sum(axis=-1) -> total over a JSON Lines dataset of ragged
   records in 8 files (generated here), on a LocalCluster of 2 worker
   processes x 1 thread against 1 worker x 1 thread, and against
   dask-awkward's from_json -> the same pipeline on the same cluster shape
   (dask-awkward needs dask < 2025.4: give it a venv of its own with
   --awkward-python, e.g. one made by
   `python3 -m venv /tmp/dak && /tmp/dak/bin/pip install dask-awkward "dask<2025.4" distributed`).
2. pickling a ~100 MB ragged partition with protocol 5 (out-of-band
   buffers): round-trip throughput and the stream's size against the data's.

    python bench/dask_compare.py [--records 4000000] [--data /tmp/dynd-dask-bench]
                                 [--awkward-python /tmp/dak/bin/python] [--quick]

Run with a release build of dynd (`maturin develop --release`).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import textwrap
import time

NFILES = 8


def generate(data: str, records: int) -> list[str]:
    """8 JSON Lines files of ragged records ``{id, kind, xs: [0..7 floats]}``."""
    os.makedirs(data, exist_ok=True)
    paths = [os.path.join(data, f"part-{k}.jsonl") for k in range(NFILES)]
    stamp = os.path.join(data, f".done-{records}")
    if os.path.exists(stamp):
        return paths
    import numpy as np

    rng = np.random.default_rng(42)
    per = records // NFILES
    kinds = ["a", "b", "c", "d"]
    for k, p in enumerate(paths):
        n = per if k < NFILES - 1 else records - per * (NFILES - 1)
        lens = rng.integers(0, 8, n)
        vals = np.round(rng.random(int(lens.sum())) * 100, 3)
        kind = rng.integers(0, 4, n)
        with open(p, "w") as f:
            pos = 0
            lines = []
            for i in range(n):
                m = int(lens[i])
                xs = ",".join(repr(float(v)) for v in vals[pos : pos + m])
                pos += m
                lines.append(f'{{"id":{k * per + i},"kind":"{kinds[kind[i]]}","xs":[{xs}]}}\n')
                if len(lines) >= 100_000:
                    f.write("".join(lines))
                    lines = []
            f.write("".join(lines))
    open(stamp, "w").close()
    return paths


ELEM = "{id: int64, kind: string, xs: var * float64}"


def dynd_pipeline(paths: list[str], blocksize: str) -> float:
    import dynd.dask as dd

    x = dd.from_json(paths, type=ELEM, blocksize=blocksize)
    sel = x[x.id % 3 != 0]
    return dd.sum(dd.sum(sel.xs, axis=-1)).compute().to_list()


def _cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def time_on_cluster(fn, workers: int, repeat: int) -> tuple[float, float, float]:
    """The best wall time of ``repeat`` runs, the result, and the workers' CPU
    seconds in that run (summed over the workers)."""
    import distributed

    with distributed.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    ) as cluster, distributed.Client(cluster) as client:
        fn()  # warm up: imports and compiles on the workers
        best = float("inf")
        value = None
        cpu_best = 0.0
        for _ in range(repeat):
            before = sum(client.run(_cpu).values())
            t = time.perf_counter()
            value = fn()
            dt = time.perf_counter() - t
            cpu = sum(client.run(_cpu).values()) - before
            if dt < best:
                best, cpu_best = dt, cpu
    return best, value, cpu_best


DAK_SCRIPT = textwrap.dedent(
    """
    import sys, time, json
    import awkward as ak, dask_awkward as dak, distributed
    paths = json.loads(sys.argv[1]); workers = int(sys.argv[2]); repeat = int(sys.argv[3])
    def run():
        x = dak.from_json(paths)
        sel = x[x.id % 3 != 0]
        return float(dak.sum(dak.sum(sel.xs, axis=-1), axis=None).compute())
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as c, distributed.Client(c):
        run()
        best = float("inf")
        for _ in range(repeat):
            t = time.perf_counter(); v = run(); best = min(best, time.perf_counter() - t)
    print(json.dumps({"seconds": best, "value": v}))
    """
)


def dask_awkward(python: str, paths: list[str], workers: int, repeat: int) -> tuple[float, float] | None:
    r = subprocess.run(
        [python, "-c", DAK_SCRIPT, json.dumps(paths), str(workers), str(repeat)], capture_output=True, text=True
    )
    if r.returncode != 0:
        print("dask-awkward failed:", r.stderr[-2000:], file=sys.stderr)
        return None
    out = json.loads(r.stdout.strip().splitlines()[-1])
    return out["seconds"], out["value"]


def pickle_bench(mbytes: int, repeat: int) -> dict[str, float]:
    import numpy as np
    import pyarrow as pa

    import dynd
    from dynd._pickle import nbytes

    rng = np.random.default_rng(1)
    rows = mbytes * 1_000_000 // (4 * 8 + 8)  # ~4 values a row plus the offset
    lens = rng.integers(0, 9, rows)
    vals = rng.random(int(lens.sum()))
    offs = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    arr = pa.LargeListArray.from_arrays(pa.array(offs), pa.array(vals)).cast(
        pa.large_list(pa.field("item", pa.float64(), nullable=False))
    )
    part = dynd.from_arrow(pa.RecordBatch.from_arrays([arr], schema=pa.schema([pa.field("xs", arr.type, nullable=False)])))
    part = part.xs
    data = nbytes(part)
    best = float("inf")
    size = 0
    for _ in range(repeat):
        bufs: list = []
        t = time.perf_counter()
        s = pickle.dumps(part, protocol=5, buffer_callback=bufs.append)
        back = pickle.loads(s, buffers=bufs)
        best = min(best, time.perf_counter() - t)
        size = len(s) + sum(memoryview(b).nbytes for b in bufs)
        assert len(back) == len(part)
    return {"type": str(part.type), "data_mb": data / 1e6, "pickle_mb": size / 1e6, "seconds": best, "gb_s": data / best / 1e9}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=4_000_000)
    ap.add_argument("--data", default="/tmp/dynd-dask-bench")
    ap.add_argument("--blocksize", default="32 MiB")
    ap.add_argument("--awkward-python")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="200k records, 10 MB pickle, one repeat")
    args = ap.parse_args()
    if args.quick:
        args.records, args.repeat = 200_000, 1
    # one thread per worker process: dynd's own kernel threads off, so that
    # "n workers x 1 thread" means n cores (the workers inherit this)
    os.environ["RAYON_NUM_THREADS"] = "1"
    paths = generate(args.data, args.records)
    size = sum(os.path.getsize(p) for p in paths)
    print(f"dataset: {args.records} records, {NFILES} files, {size / 1e6:.0f} MB of JSON Lines\n")

    fn = lambda: dynd_pipeline(paths, args.blocksize)  # noqa: E731
    load0 = os.getloadavg()[0]
    t1, v1, c1 = time_on_cluster(fn, 1, args.repeat)
    t2, v2, c2 = time_on_cluster(fn, 2, args.repeat)

    def unprojected() -> float:
        import dask

        with dask.config.set({"dynd.dask.project-columns": False}):
            return fn()

    t3, v3, c3 = time_on_cluster(unprojected, 2, args.repeat)
    print("| pipeline (read -> filter -> sum(axis=-1) -> total) | seconds | workers' CPU s | MB/s of JSON | vs dynd.dask 2 workers |")
    print("|---|---:|---:|---:|---:|")
    print(f"| dynd.dask, 1 worker x 1 thread | {t1:.2f} | {c1:.2f} | {size / t1 / 1e6:.0f} | {t1 / t2:.2f}x slower |")
    print(f"| dynd.dask, 2 workers x 1 thread | {t2:.2f} | {c2:.2f} | {size / t2 / 1e6:.0f} | 1.00x |")
    print(f"| dynd.dask, 2 workers x 1 thread, column projection off | {t3:.2f} | {c3:.2f} | {size / t3 / 1e6:.0f} | {t3 / t2:.2f}x slower |")
    if args.awkward_python:
        r = dask_awkward(args.awkward_python, paths, 2, args.repeat)
        if r is not None:
            ta, va = r
            print(f"| dask-awkward from_json, 2 workers x 1 thread | {ta:.2f} | | {size / ta / 1e6:.0f} | {ta / t2:.2f}x slower |")
            if abs(va - v2) > 1e-9 * abs(v2):
                print(f"(dask-awkward's total {va!r} differs from dynd's {v2!r})")
    assert abs(v1 - v2) <= 1e-9 * abs(v2) and abs(v3 - v2) <= 1e-9 * abs(v2), (v1, v2, v3)
    print(f"\ntotal: {v2!r}; 2 workers vs 1: {t1 / t2:.2f}x; load average {load0:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} CPUs\n")

    p = pickle_bench(10 if args.quick else 100, args.repeat)
    # data MB: what the partition holds in memory (dynd's 16-byte row
    # descriptors included); the pickle carries Arrow's 8-byte offsets.
    print("| pickling (protocol 5, out of band) | data MB | pickle MB | round trip s | GB/s |")
    print("|---|---:|---:|---:|---:|")
    print(f"| one ragged partition, {p['type'].split(' * ', 1)[1]} | {p['data_mb']:.1f} | {p['pickle_mb']:.1f} "
          f"({(p['pickle_mb'] / p['data_mb'] - 1) * 100:+.1f}%) | {p['seconds']:.3f} | {p['gb_s']:.2f} |")


if __name__ == "__main__":
    main()
