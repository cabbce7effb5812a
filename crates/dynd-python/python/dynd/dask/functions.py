"""``dd.<name>``: every function of dynd's registry, generated from
``dynd.callable_names()`` (reductions live in :mod:`.reductions`).

Each runs partition by partition over aligned collections. Functions that work
along the innermost dim (sort, argsort, cumsum, cumprod, take) are row-local
only when the element has a dim of its own; on a collection of scalars the
innermost dim is the partitioned one, and they say so instead of giving a
per-partition answer.
"""

from __future__ import annotations

from typing import Any

import dynd

from .core import Array, concatenate, elementwise
from .reductions import REDUCTIONS

#: Along the innermost dim, across rows when the element is a scalar.
ALONG_INNERMOST = frozenset({"sort", "argsort", "cumsum", "cumprod", "take"})
#: Drop rows (instead of elements of rows) when the element is a scalar.
DROPS_ROWS = frozenset({"filter", "drop_null"})
#: Not generated: reductions (tree-reduced) and concatenate (joins collections).
SPECIAL = frozenset(REDUCTIONS) | {"concatenate"}


def _make(name: str) -> Any:
    fn = getattr(dynd, name)

    def function(*args: Any, **kwargs: Any) -> Any:
        colls = [a for a in args if isinstance(a, Array)]
        if not colls:
            return fn(*args, **kwargs)
        first = args[0] if isinstance(args[0], Array) else colls[0]
        scalar_rows = dynd.type(first._elem).ndim == 0
        if name in ALONG_INNERMOST and scalar_rows:
            raise dynd.InvalidArgumentError(
                f"dd.{name} works along the innermost dim, which for a collection of type {first.type} is "
                "the partitioned axis: not supported (it is row-local only for elements with a dim)"
            )
        keeps = not (name in DROPS_ROWS and scalar_rows)
        return elementwise(fn, args, preserves_lengths=keeps, prefix=name, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``dynd.{name}`` partition by partition over aligned dynd.dask collections.\n\n{fn.__doc__ or ''}"
    return function


__all__ = ["concatenate"]
for _name in dynd.callable_names():
    if _name in SPECIAL or not hasattr(dynd, _name):
        continue
    globals()[_name] = _make(_name)
    __all__.append(_name)
for _name in ("sort", "argsort"):
    if _name not in __all__:
        globals()[_name] = _make(_name)
        __all__.append(_name)
del _name
