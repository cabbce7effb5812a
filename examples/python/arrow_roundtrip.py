"""An Arrow round trip: pyarrow table -> dynd -> compute -> pyarrow.

A table of records with a ragged column (a list per row, with missing
values inside) and missing names goes into dynd through the Arrow PyCapsule
interface (``dynd.from_arrow``), dynd computes per-row sums and counts of
the ragged column and filters the rows, and the results go back to pyarrow
(``pa.array(dynd_array)`` reads ``__arrow_c_array__``). Every step is
checked against the same computation in plain Python; the script exits
non-zero on a mismatch.

    pip install ./crates/dynd-python pyarrow
    python examples/python/arrow_roundtrip.py
"""

from __future__ import annotations

import sys

import pyarrow as pa

import dynd


def main() -> int:
    # Every row has an id and a list of scores (perhaps empty, with missing
    # values inside); names may be missing. A field declared non-nullable
    # imports without the option (``?``), as dynd's reductions need for the dim.
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("name", pa.string()),
            pa.field("scores", pa.list_(pa.float64()), nullable=False),
        ]
    )
    table = pa.table(
        {
            "id": [1, 2, 3, 4, 5, 6],
            "name": ["ada", None, "grace", "alan", None, "edsger"],
            "scores": [[1.5, 2.5], [], [10.0, None, 5.0], [0.5], [None], [3.0, 3.0, 3.0, 3.0]],
        },
        schema=schema,
    )
    print(f"pyarrow table: {table.num_rows} rows, schema:\n{table.schema}\n")

    # pyarrow -> dynd (through __arrow_c_stream__: a table is a stream of batches).
    a = dynd.from_arrow(table)
    print(f"dynd type: {a.type}")
    print(f"dynd array: {a!r}\n")
    failures = []

    def check(what: str, got: object, want: object) -> None:
        ok = got == want
        print(f"{'ok ' if ok else 'BAD'} {what}: {got}")
        if not ok:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    rows = table.to_pylist()
    check("round trip of the records", a.to_list(), rows)

    # Compute on the ragged column: per-row sums and counts (missing values skipped).
    scores = a.scores
    print(f"\nscores column: {scores.type}")
    totals = dynd.sum(scores, axis=-1)
    counts = dynd.count(scores, axis=-1)
    want_totals = [sum(v for v in r["scores"] if v is not None) for r in rows]
    want_counts = [sum(v is not None for v in r["scores"]) for r in rows]
    check("per-row sums", totals.to_list(), want_totals)
    check("per-row counts", counts.to_list(), want_counts)

    # Filter: the rows whose total is at least 4.
    keep = totals >= 4.0
    picked = a[keep]
    want_picked = [r for r, t in zip(rows, want_totals) if t >= 4.0]
    check("filtered rows' ids", picked.id.to_list(), [r["id"] for r in want_picked])

    # dynd -> pyarrow: each result column through __arrow_c_array__.
    out = pa.table(
        {
            "id": pa.array(picked.id),
            "name": pa.array(picked.name),
            "scores": pa.array(picked.scores),
            "total": pa.array(totals[keep]),
        }
    )
    print(f"\nback in pyarrow:\n{out.to_pandas() if _has_pandas() else out.to_pylist()}\n")
    want_out = [dict(r, total=t) for r, t in zip(rows, want_totals) if t >= 4.0]
    check("result table", out.to_pylist(), want_out)

    # The whole filtered record array in one go (a struct column), and back into dynd.
    whole = pa.array(picked)
    check("records as one struct array", whole.to_pylist(), want_picked)
    check("and into dynd again", dynd.from_arrow(whole).to_list(), want_picked)

    if failures:
        print("\nMISMATCH:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    print("\nall checks passed")
    return 0


def _has_pandas() -> bool:
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
