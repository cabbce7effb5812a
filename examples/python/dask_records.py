"""dynd.dask on a local cluster: ragged records in several JSON Lines files
-> filter -> a per-row compiled kernel -> grouped totals.

    python examples/python/dask_records.py            # 40k records, 2 worker processes
    python examples/python/dask_records.py --records 2000000

Needs `pip install "dynd[dask]"` and numba (for @dynd.kernel).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile

import distributed

import dynd
import dynd.dask as dd


def write_dataset(directory: str, records: int, files: int = 4) -> str:
    """``files`` JSON Lines files of orders: a customer kind and ragged item prices."""
    rnd = random.Random(7)
    kinds = ["retail", "wholesale", "online"]
    per = records // files
    for k in range(files):
        with open(os.path.join(directory, f"orders-{k}.jsonl"), "w") as f:
            for i in range(per):
                prices = [round(rnd.uniform(1, 100), 2) for _ in range(rnd.randrange(0, 6))]
                rec = {"id": k * per + i, "kind": kinds[rnd.randrange(3)], "prices": prices}
                f.write(json.dumps(rec) + "\n")
    return os.path.join(directory, "*.jsonl")


@dynd.kernel("(float64) -> float64")
def with_tax(price):
    return price * 1.2 if price > 10.0 else price


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=40_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d, distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=40
    ) as cluster, distributed.Client(cluster) as client:
        pattern = write_dataset(d, args.records)
        orders = dd.from_json(pattern, blocksize="1 MiB")  # the element type inferred by dynd
        print(f"{orders.npartitions} partitions of {orders.element_type}")

        big = orders[dd.count(orders.prices, axis=-1) >= 2]  # orders of two items or more
        totals = dd.sum(big.prices.map_partitions(with_tax), axis=-1)  # per row: the kernel, then the row's sum

        kinds = ["retail", "wholesale", "online"]
        grouped = {k: dd.sum(totals[big.kind == k]) for k in kinds}
        futures = client.compute(list(grouped.values()))
        distributed.progress(futures, notebook=False)  # dask's progress bar (the dashboard shows the same)
        print()
        for k, f in zip(kinds, futures, strict=True):
            print(f"{k:>10}: {f.result().to_list():,.2f}")

        # the same totals with dynd on the whole data, in this process
        whole = orders.compute()
        sel = whole[dynd.count(whole.prices, axis=-1) >= 2]
        t = dynd.sum(with_tax(sel.prices), axis=-1)
        for k, f in zip(kinds, futures, strict=True):
            want = dynd.sum(t[sel.kind == k]).to_list()
            assert abs(f.result().to_list() - want) <= 1e-9 * abs(want), (k, want)
        print("checked against dynd on the whole data")


if __name__ == "__main__":
    main()
