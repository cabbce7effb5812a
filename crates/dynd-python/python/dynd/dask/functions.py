"""``dd.<name>``: every function of dynd's registry, generated from
``dynd.callable_names()`` (reductions live in :mod:`.reductions`).

Each runs partition by partition over aligned collections. Functions that work
along the innermost dim are row-local only when the element has a dim of its
own; on a collection of scalars the innermost dim is the partitioned one:
cumsum and cumprod then carry each partition's total into the next (a chain
of small tasks), and sort, argsort and take say they are not supported
instead of giving a per-partition answer.
"""

from __future__ import annotations

import operator
from typing import Any

import dynd

from .core import _SLOT, Array, Call, concatenate, elementwise, new_name, resolve_type
from .reductions import REDUCTIONS

#: Along the innermost dim, across rows when the element is a scalar (the
#: scans cumsum and cumprod then carry across partitions, see :func:`scan`).
ALONG_INNERMOST = frozenset({"sort", "argsort", "take"})
SCANS = {"cumsum": ("sum", operator.add, 0), "cumprod": ("prod", operator.mul, 1)}
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
        if name in SCANS and scalar_rows and len(args) == 1 and not kwargs:
            return scan(name, first)
        keeps = not (name in DROPS_ROWS and scalar_rows)
        return elementwise(fn, args, preserves_lengths=keeps, prefix=name, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``dynd.{name}`` partition by partition over aligned dynd.dask collections.\n\n{fn.__doc__ or ''}"
    return function


class _ApplyCarry:
    """Partition ``i`` of a scan: the partition's own scan, then the carry of
    the partitions before it (their total) added (multiplied) in."""

    __slots__ = ("scan", "op")

    def __init__(self, scan: Any, op: Any) -> None:
        self.scan, self.op = scan, op

    def __reduce__(self) -> Any:
        return (_ApplyCarry, (self.scan, self.op))

    def __call__(self, part: Any, carry: Any) -> Any:
        return self.op(self.scan(part), carry)


def scan(name: str, x: Array) -> Array:
    """cumsum / cumprod along the partitioned axis of a collection of scalars:
    each partition's total, a chain of carries (the totals before it, summed
    or multiplied), then each partition's scan combined with its carry."""
    total_name, op, identity = SCANS[name]
    fn = getattr(dynd, name)
    elem = resolve_type(fn, [x], {}, f"{name} on {x.type}")
    tot = getattr(dynd, total_name)
    out = new_name(name)
    dsk = dict(x.dask)
    for i in range(x.npartitions):
        dsk[(f"{out}-total", i)] = (Call(tot, [_SLOT], {}, i, None, False), (x.name, i))
        if i == 0:
            dsk[(f"{out}-carry", 0)] = (Call(lambda: identity, [], {}, 0, None, False),)
        else:
            dsk[(f"{out}-carry", i)] = (op, (f"{out}-carry", i - 1), (f"{out}-total", i - 1))
        apply = Call(_ApplyCarry(fn, op), [_SLOT, _SLOT], {}, i, elem, False)
        dsk[(out, i)] = (apply, (x.name, i), (f"{out}-carry", i))
    return Array(dsk, out, x.npartitions, elem, x.lengths)


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
