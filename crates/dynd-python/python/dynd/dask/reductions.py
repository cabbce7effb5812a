"""Reductions: axes inside the element run per partition; the partitioned
axis (0) and ``None`` reduce as a tree of ``split_every`` partials per task.

Every combine is exact:

- sum, prod, min, max, any, all, count: each partition reduces with
  ``keepdims``; a combine concatenates partials along axis 0 and reduces them
  again with the same function (count's partials add up). Ragged rows combine
  position by position, as dynd does on the whole.
- mean, var, std: a partial is (count, mean, M2) and two combine by Chan et
  al.'s pairwise update, so no sum of squares ever cancels; the means are
  carried as hi + lo so that their difference stays exact.
- argmin, argmax: a partial is (value, position, extent); positions become
  global by adding the extents of the partitions before it, and ties keep the
  first position, NaN wins and missing values lose, as in dynd.

An empty partition contributes nothing (dynd's min of an empty extent is an
error); when every partition is empty the result is dynd's on the (empty)
data, error included.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any

from dask.delayed import Delayed

import dynd

from .core import Array, Call, _SLOT, _optimize, elementwise, new_name, position


class Result(Delayed):
    """A reduction's result over the partitioned axis: a ``dask.delayed``
    object whose graph gets dynd.dask's optimizations (culling, column
    projection) when computed."""

    __slots__ = ()
    __dask_optimize__ = staticmethod(_optimize)

REDUCTIONS = ("sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax", "any", "all", "count")
DIRECT = frozenset({"sum", "prod", "min", "max", "any", "all", "count"})
MOMENTS = frozenset({"mean", "var", "std"})
POSITIONS = frozenset({"argmin", "argmax"})


class Empty:
    """The partial of a partition with no rows: it holds the (empty) partition
    so that an all-empty collection gives dynd's own answer, and the extent 0."""

    __slots__ = ("part",)

    def __init__(self, part: dynd.Array) -> None:
        self.part = part

    def __reduce__(self) -> Any:
        return (Empty, (self.part,))


def normalize_axes(x: Array, axis: Any) -> tuple[int, ...] | None:
    if axis is None:
        return None
    ndim = x.ndim
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        b = position(
            a,
            ndim,
            f"axis must be an int, a tuple of ints or None, not {axis!r}",
            f"axis {a} is out of range for {x.type} ({ndim} dims)",
        )
        if b in out:
            raise dynd.InvalidArgumentError(f"axis {a} is repeated in {axis!r}")
        out.append(b)
    return tuple(sorted(out))


def has_var(elem: str) -> bool:
    return "var *" in elem


def _drop_kept(r: dynd.Array, axes: tuple[int, ...] | None) -> dynd.Array:
    """``r`` (reduced with keepdims) without its kept ``1 *`` dims."""
    if axes is None:
        idx: tuple[Any, ...] = (0,) * r.ndim
    else:
        idx = tuple(0 if k in axes else slice(None) for k in range(r.ndim))
    if not idx:
        return r
    return r[idx]


def _nonull(b: dynd.Array) -> dynd.Array:
    return dynd.fill_null(b, False) if str(b.type).endswith("?bool") else b


def ragged_rows(elem: str) -> bool:
    """Whether rows are ``var * scalar``: their axis-0 partials are ragged rows
    of different lengths that :func:`pad` brings to one length."""
    t = dynd.type(elem)
    return t.ndim == 1 and elem.startswith("var * ")


def row_len(p: dynd.Array) -> int:
    """The length of a ``1 * var * X`` partial's row."""
    return len(p[0])


def pad(p: dynd.Array, n: int, fill: Any) -> dynd.Array:
    """A ``1 * var * X`` partial with its row padded to ``n`` by ``fill``
    (``None``: missing values, the type becomes ``?X``; else that value): the
    partial and a template row of length ``n`` stacked, then reduced over
    the stack with dynd's own position-by-position rule (max skips missing
    values; sum adds the template's zeros)."""
    if row_len(p) == n:
        return p
    scalar = str(p.type).split(" * ")[-1]
    if fill is None:
        opt = scalar if scalar.startswith("?") else f"?{scalar}"
        if opt != scalar:
            p = p.cast(f"1 * var * {opt}")
        tmpl = dynd.array([[None] * n], type=f"1 * var * {opt}")
        return dynd.max(dynd.concatenate([p, tmpl]), axis=0, keepdims=True)
    tmpl = dynd.array([[fill] * n], type=f"1 * var * {scalar}")
    return dynd.sum(dynd.concatenate([p, tmpl]), axis=0, keepdims=True)


def _settle(r: dynd.Array, want: str, keepdims: bool) -> dynd.Array:
    """``r`` with the type dynd gives on the whole data (padding made rows
    optional where the whole data has a value at every position)."""
    if not keepdims and want.startswith("1 * "):
        want = want[4:]
    return r if str(r.type) == want else r.cast(want)


# -- per-family partials, combines and finals -------------------------------------


class Direct:
    """sum, prod, min, max, any, all, count."""

    def __init__(self, name: str, axes: tuple[int, ...] | None, keepdims: bool) -> None:
        self.name = name
        self.axes = axes
        self.keepdims = keepdims
        self.op = getattr(dynd, name)
        self.combine_op = dynd.sum if name == "count" else self.op

    def partial(self, part: dynd.Array) -> Any:
        if len(part) == 0:
            return Empty(part)
        return self.op(part, axis=self.axes, keepdims=True)

    def _stack(self, partials: Sequence[Any]) -> Any:
        real = [p for p in partials if not isinstance(p, Empty)]
        if not real:
            return partials[0]
        return real[0] if len(real) == 1 else dynd.concatenate(real)

    def combine(self, *partials: Any) -> Any:
        s = self._stack(partials)
        return s if isinstance(s, Empty) else self.combine_op(s, axis=self.axes, keepdims=True)

    def final(self, *partials: Any) -> dynd.Array:
        s = self._stack(partials)
        if isinstance(s, Empty):
            return self.op(s.part, axis=self.axes, keepdims=self.keepdims)
        return self.combine_op(s, axis=self.axes, keepdims=self.keepdims)


class Moments:
    """mean, var, std: partials (count, mean, M2), combined by Chan's update.

    A partial mean is carried as ``hi + lo``: ``hi`` dynd's mean of the
    partition, ``lo`` the mean of the partition minus ``hi`` (the digits
    ``hi`` rounded away). Combines keep the first partial's ``hi`` as the
    anchor and move ``lo``, so the difference of two means -- the one
    quantity Chan's update needs -- is taken between nearby numbers and
    stays exact even when the data sit on a large common offset.
    """

    def __init__(self, name: str, axes: tuple[int, ...] | None, keepdims: bool, ragged: bool = False) -> None:
        self.name = name
        self.axes = axes
        self.keepdims = keepdims
        self.ragged = ragged
        self.want: str | None = None

    def padded(self, parts: list[Any]) -> list[Any]:
        n = builtins.max(row_len(p[0]) for p in parts)
        return [(pad(c, n, 0), pad(h, n, None), pad(lo, n, None), pad(m2, n, None), w) for c, h, lo, m2, w in parts]

    def partial(self, part: dynd.Array) -> Any:
        if len(part) == 0:
            return Empty(part)
        c = dynd.count(part, axis=self.axes, keepdims=True)
        hi = dynd.mean(part, axis=self.axes, keepdims=True)
        # Ragged rows do not broadcast against their mean row: plain Chan there.
        lo = hi * 0.0 if self.ragged else dynd.mean(part - hi, axis=self.axes, keepdims=True)
        m2 = dynd.var(part, axis=self.axes, keepdims=True) * c
        return (c, hi, lo, m2, str(hi.type))

    @staticmethod
    def pair(a: Any, b: Any) -> Any:
        ca, ha, la, m2a, want = a
        cb, hb, lb, m2b, _ = b
        n = ca + cb
        a_none = ca == 0
        b_none = cb == 0
        nd = dynd.where(n == 0, 1, n)
        delta = (hb - ha) + (lb - la)
        hi = dynd.where(a_none, hb, ha)
        lo = dynd.where(a_none, lb, dynd.where(b_none, la, la + delta * (cb / nd)))
        m2 = dynd.where(a_none, m2b, dynd.where(b_none, m2a, m2a + m2b + delta * delta * (ca * cb / nd)))
        return (n, hi, lo, m2, want)

    def combine(self, *partials: Any) -> Any:
        real = [p for p in partials if not isinstance(p, Empty)]
        if not real:
            return partials[0]
        if self.ragged:
            real = self.padded(real)
        acc = real[0]
        for p in real[1:]:
            acc = self.pair(acc, p)
        return acc

    def final(self, *partials: Any) -> dynd.Array:
        acc = self.combine(*partials)
        if isinstance(acc, Empty):
            return getattr(dynd, self.name)(acc.part, axis=self.axes, keepdims=self.keepdims)
        c, hi, lo, m2, want = acc
        if self.name == "mean":
            r = hi + lo
        else:
            r = m2 / c
            if self.name == "std":
                r = dynd.sqrt(r)
        r = r if self.keepdims else _drop_kept(r, self.axes)
        return _settle(r, want, self.keepdims) if self.ragged else r


class Positions:
    """argmin, argmax: partials (value, local position, extent)."""

    def __init__(self, name: str, axes: tuple[int, ...] | None, keepdims: bool, ragged: bool = False) -> None:
        self.name = name
        self.axes = axes
        self.keepdims = keepdims
        self.ragged = ragged
        self.value = dynd.min if name == "argmin" else dynd.max
        self.pos = getattr(dynd, name)

    def extent(self, part: dynd.Array) -> int:
        """How many positions ``part`` covers along the reduced extent."""
        if self.axes is None:
            shape = part.shape
            if None not in shape:
                return math.prod(shape)
            return int(dynd.count(dynd.is_null(part)))
        shape = part.shape
        return len(part) * math.prod(shape[k] for k in self.axes if k > 0 and shape[k] is not None)

    def partial(self, part: dynd.Array) -> Any:
        size = self.extent(part)
        if len(part) == 0 or size == 0:
            return (Empty(part), size)
        v = self.value(part, axis=self.axes, keepdims=True)
        i = self.pos(part, axis=self.axes, keepdims=True)
        return ((v, i, str(i.type)), size)

    def better(self, vb: dynd.Array, va: dynd.Array) -> dynd.Array:
        """Where ``vb`` (a later partial) beats ``va``: strictly better, or NaN
        against a number, or present against missing; ties keep ``va``."""
        strictly = _nonull(vb < va if self.name == "argmin" else vb > va)
        nan_b = _nonull(vb != vb)
        nan_a = _nonull(va != va)
        null_a = dynd.is_null(va)
        null_b = dynd.is_null(vb)
        return (strictly & ~nan_a) | (nan_b & ~nan_a & ~null_b) | (null_a & ~null_b)

    def combine(self, *partials: Any) -> Any:
        acc = None
        first_empty = None
        offset = 0
        n = builtins.max((row_len(vi[0]) for vi, _ in partials if not isinstance(vi, Empty)), default=0) if self.ragged else 0
        for vi, size in partials:
            if isinstance(vi, Empty):
                first_empty = first_empty or vi
            else:
                v, i, want = vi
                if offset:
                    i = i + offset
                if self.ragged:
                    v, i = pad(v, n, None), pad(i, n, None)
                if acc is None:
                    acc = (v, i, want)
                else:
                    take_b = self.better(v, acc[0])
                    acc = (dynd.where(take_b, v, acc[0]), dynd.where(take_b, i, acc[1]), acc[2])
            offset += size
        return (acc if acc is not None else first_empty, offset)

    def final(self, *partials: Any) -> dynd.Array:
        acc, _ = self.combine(*partials)
        if isinstance(acc, Empty):
            return self.pos(acc.part, axis=self.axes, keepdims=self.keepdims)
        i = acc[1]
        i = i if self.keepdims else _drop_kept(i, self.axes)
        return _settle(i, acc[2], self.keepdims) if self.ragged else i


FAMILIES: dict[str, type] = {**dict.fromkeys(DIRECT, Direct), **dict.fromkeys(MOMENTS, Moments), **dict.fromkeys(POSITIONS, Positions)}


def tree(x: Array, family: Any, split_every: int, prefix: str) -> Any:
    """The reduction of ``x`` as a tree: a partial per partition, combines of
    ``split_every`` partials, one final task. A ``dask.delayed`` object."""
    if split_every < 2:
        raise dynd.InvalidArgumentError(f"split_every must be at least 2, not {split_every}")
    name = new_name(prefix)
    dsk = dict(x.dask)
    keys = []
    for i in range(x.npartitions):
        k = (f"{name}-partial", i)
        dsk[k] = (Call(family.partial, [_SLOT], {}, i, None, False), (x.name, i))
        keys.append(k)
    level = 0
    while len(keys) > split_every:
        level += 1
        nxt = []
        for j in range(0, len(keys), split_every):
            k = (f"{name}-combine-{level}", j // split_every)
            dsk[k] = (family.combine, *keys[j : j + split_every])
            nxt.append(k)
        keys = nxt
    dsk[(name, 0)] = (family.final, *keys)
    return Result((name, 0), dsk)


def reduce(name: str, x: Any, axis: Any = None, keepdims: bool = False, split_every: int = 8) -> Any:
    if not isinstance(x, Array):
        return getattr(dynd, name)(x, axis=axis, keepdims=keepdims)
    axes = normalize_axes(x, axis)
    op: Callable[..., Any] = getattr(dynd, name)
    if axes is not None and 0 not in axes:
        if x._filtered is not None:
            # a row filter commutes with a per-row reduction: reduce the
            # unfiltered rows, then filter the (smaller) results
            source, mask = x._filtered
            return reduce(name, source, axis, keepdims, split_every)[mask]
        return elementwise(op, [x], preserves_lengths=True, prefix=name, axis=axes, keepdims=keepdims)
    ragged = False
    if axes is not None and name in MOMENTS | POSITIONS and has_var(x._elem):
        kept = [k for k in range(1, x.ndim) if k not in axes]
        ragged = kept == [1] and ragged_rows(x._elem)
        if kept and not ragged:
            raise dynd.TypeMismatchError(
                f"dd.{name} over axis 0 of {x.type} with dims {kept} kept is not implemented: its partials are "
                "ragged of different shapes, and only rows of var * scalar are padded to one length; reduce "
                "those dims too, or use axis=None"
            )
    family = FAMILIES[name](name, axes, keepdims, ragged) if name in MOMENTS | POSITIONS else FAMILIES[name](name, axes, keepdims)
    return tree(x, family, split_every, f"{name}-tree")


def _make(name: str) -> Any:
    def reduction(x: Any, axis: Any = None, keepdims: bool = False, split_every: int = 8) -> Any:
        return reduce(name, x, axis, keepdims, split_every)

    reduction.__name__ = reduction.__qualname__ = name
    reduction.__doc__ = (
        f"dynd's {name} of a dynd.dask collection. Axes inside the element (not 0) run per partition and give a "
        "collection; axis 0 or None reduce as a tree of ``split_every`` partials and give a ``dask.delayed`` "
        "object whose compute() is dynd's result on the whole data."
    )
    return reduction


sum = _make("sum")  # noqa: A001
prod = _make("prod")
min = _make("min")  # noqa: A001
max = _make("max")  # noqa: A001
mean = _make("mean")
var = _make("var")
std = _make("std")
count = _make("count")
any = _make("any")  # noqa: A001
all = _make("all")  # noqa: A001
argmin = _make("argmin")
argmax = _make("argmax")
