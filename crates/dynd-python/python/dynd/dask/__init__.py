"""dynd.dask: dynd arrays partitioned along their outermost dim, scheduled by Dask (DESIGN §15).

::

    import dynd.dask as dd
    x = dd.from_json("data/*.jsonl", blocksize="64 MiB")   # var * {id: int64, xs: var * float64}
    y = x[dd.greater(x.id, 10)].xs
    dd.sum(dd.sum(y, axis=-1)).compute()

Each partition is a :class:`dynd.Array` of type ``n_i * T`` with one element
type ``T`` for the whole collection, known without computing. Dask schedules
(the threaded scheduler by default, or a ``distributed.Client``); dynd computes.
"""

from __future__ import annotations

try:
    import dask as _dask  # noqa: F401
except ImportError as _e:  # pragma: no cover - exercised by a subprocess test
    raise ImportError(
        "dynd.dask needs dask: install it with `pip install \"dynd[dask]\"` "
        "(or `pip install dask distributed`)"
    ) from _e

from .core import Array, from_delayed, from_dynd, map_partitions
from .functions import __all__ as _function_names
from .functions import *  # noqa: F403 - the generated dd.<name> functions
from .io import from_arrow, from_json, from_parquet, to_dask_array, to_json, to_parquet
from .reductions import all, any, argmax, argmin, count, max, mean, min, prod, std, sum, var  # noqa: A004

__all__ = [
    "Array",
    "from_arrow",
    "from_delayed",
    "from_dynd",
    "from_json",
    "from_parquet",
    "map_partitions",
    "to_dask_array",
    "to_json",
    "to_parquet",
    *_function_names,
    "sum", "prod", "min", "max", "mean", "var", "std", "count", "any", "all", "argmin", "argmax",
]
