"""The collection: a Dask graph whose keys ``(name, i)`` each hold partition ``i``.

It speaks dask's public collection protocol (``__dask_graph__``,
``__dask_keys__``, ``__dask_postcompute__``, ...) with a plain dict graph in
dask's task-tuple form, so it rides on any dask version that keeps that
protocol and never subclasses dask's graph internals. The element type ``T``
is known without computing: an operation's output type comes from running it
on an empty partition ``0 * T`` (dynd resolves types from types, so this costs
no data); a ``type=`` given instead is checked on every partition at compute
time.
"""

from __future__ import annotations

import copyreg
import operator
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.threaded
from dask.base import DaskMethodsMixin

import dynd

# --------------------------------------------------------------------------
# element types and partitions


def element_type(tp: Any) -> str:
    """The element type ``T`` of an array type ``n * T`` (canonical text)."""
    tp = dynd.type(tp)
    if tp.ndim < 1:
        raise dynd.TypeMismatchError(f"a partition needs an outer dim, and type {tp} has none")
    return str(tp).split(" * ", 1)[1]


def canonical(elem: Any) -> str:
    """The canonical text of an element type given as a dynd.Type or a string."""
    try:
        return str(dynd.type(elem))
    except dynd.Error as e:
        raise type(e)(f"type={elem!r}: {e}") from None


def empty(elem: str) -> dynd.Array:
    """An empty partition ``0 * T``: what operations run on to find their output type."""
    return dynd.array([], type=f"0 * {elem}")


def named(err: BaseException, where: str) -> BaseException:
    """The same dynd error class, its message prefixed with ``where``."""
    if isinstance(err, dynd.Error):
        new = type(err)(f"{where}: {err}")
        new.__cause__ = err.__cause__
        return new
    return err


def check_partition(part: Any, elem: str, index: int) -> dynd.Array:
    """``part`` if it is a dynd array ``n * elem``, else the error naming partition ``index``."""
    if not isinstance(part, dynd.Array):
        raise dynd.TypeMismatchError(
            f"partition {index}: expected a dynd.Array of type n * {elem}, got {type(part).__name__}"
        )
    if part.ndim < 1:
        raise dynd.TypeMismatchError(f"partition {index}: has type {part.type}, which has no outer dim (expected n * {elem})")
    got = element_type(part.type)
    if got != elem:
        raise dynd.TypeMismatchError(f"partition {index}: has type {part.type}, expected n * {elem}")
    return part


class Literal:
    """A task that returns a value held in the graph (a partition of ``from_dynd``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self) -> Any:
        return self.value

    def __reduce__(self) -> Any:
        return (Literal, (self.value,))


class Call:
    """The task of partition ``index``: ``func`` called on the arguments of
    ``template`` with each collection slot filled by that collection's
    partition (the task's arguments, in order). Literal arguments live here,
    not in the task tuple, so dask never reads them as keys or tasks.

    A dynd error gets the partition named; ``check`` (an element type) checks
    the result; ``aligned`` requires the collection partitions to have equal
    lengths (operators and dd functions), naming the partition otherwise.
    """

    __slots__ = ("func", "template", "kwargs", "index", "check", "aligned")

    def __init__(
        self,
        func: Callable[..., Any],
        template: Sequence[Any],
        kwargs: dict[str, Any],
        index: int,
        check: str | None,
        aligned: bool,
    ) -> None:
        self.func = func
        self.template = tuple(template)
        self.kwargs = kwargs
        self.index = index
        self.check = check
        self.aligned = aligned

    def __call__(self, *parts: Any) -> Any:
        if self.aligned and len(parts) > 1:
            lengths = [len(p) for p in parts]
            if len(set(lengths)) > 1:
                raise dynd.BroadcastError(
                    f"partition {self.index}: the collections' partitions have {' and '.join(map(str, lengths))} rows: "
                    "misaligned partitions (operands need the same partition lengths)"
                )
        it = iter(parts)
        args = [next(it) if a is _SLOT else a for a in self.template]
        try:
            out = self.func(*args, **self.kwargs)
        except dynd.Error as e:
            raise named(e, f"partition {self.index}") from e
        if self.check is not None:
            check_partition(out, self.check, self.index)
        return out

    def __reduce__(self) -> Any:
        return (Call, (self.func, self.template, self.kwargs, self.index, self.check, self.aligned))


class _Slot:
    """Marks where a collection's partition goes in a :class:`Call` template."""

    _instance: _Slot | None = None

    def __new__(cls) -> _Slot:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __reduce__(self) -> Any:
        return (_Slot, ())

    def __repr__(self) -> str:
        return "<partition>"


_SLOT = _Slot()


def _identity(x: Any) -> Any:
    return x


def _concat(results: Sequence[dynd.Array]) -> dynd.Array:
    results = list(results)
    if len(results) == 1:
        return results[0]
    return dynd.concatenate(results)


def _cull(dsk: Any, keys: Any, **kwargs: Any) -> Any:
    from dask.optimization import cull

    flat = list(dask.core.flatten(keys))
    return cull(dict(dsk), flat)[0]


def _optimize(dsk: Any, keys: Any, **kwargs: Any) -> Any:
    from .optimize import optimize

    return optimize(dsk, keys, **kwargs)


def position(i: Any, n: int, not_int: str, out_of_range: str) -> int:
    """``i`` (an int, negative from the end) as a position in ``0..n``;
    ``InvalidArgumentError(not_int)`` for anything but an int,
    ``IndexOutOfBoundsError(out_of_range)`` outside the range."""
    if not isinstance(i, int) or isinstance(i, bool):
        raise dynd.InvalidArgumentError(not_int)
    j = i + n if i < 0 else i
    if not 0 <= j < n:
        raise dynd.IndexOutOfBoundsError(out_of_range)
    return j


def new_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


# --------------------------------------------------------------------------
# the collection


class Array(DaskMethodsMixin):
    """A dynd array partitioned along its outermost dim, each partition a
    :class:`dynd.Array` ``n_i * T`` computed by a Dask task.

    ``x.type`` is ``N * T`` when the partition lengths are known, ``var * T``
    otherwise; ``x.compute()`` is the partitions concatenated.
    """

    __slots__ = ("_dask", "_name", "_npartitions", "_elem", "_lengths", "_filtered")

    def __init__(
        self,
        dsk: dict[Any, Any],
        name: str,
        npartitions: int,
        elem: str,
        lengths: Sequence[int] | None = None,
    ) -> None:
        if npartitions < 1:
            raise dynd.InvalidArgumentError("a dynd.dask collection has at least one partition")
        self._dask = dsk
        self._name = name
        self._npartitions = npartitions
        self._elem = elem
        self._lengths = tuple(int(n) for n in lengths) if lengths is not None else None
        # (source, mask) when this collection is source[mask] with a row
        # mask: a field of it is then taken before the filter, so that the
        # filter copies one column, not whole records.
        self._filtered: tuple[Array, Array] | None = None
        if self._lengths is not None and len(self._lengths) != npartitions:
            raise dynd.InvalidArgumentError(f"{len(self._lengths)} lengths for {npartitions} partitions")

    # -- dask's collection protocol --------------------------------------
    def __dask_graph__(self) -> dict[Any, Any]:
        return self._dask

    def __dask_keys__(self) -> list[tuple[str, int]]:
        return [(self._name, i) for i in range(self._npartitions)]

    def __dask_tokenize__(self) -> str:
        return self._name

    __dask_optimize__ = staticmethod(_optimize)
    __dask_scheduler__ = staticmethod(dask.threaded.get)

    def __dask_postcompute__(self) -> Any:
        return _concat, ()

    def __dask_postpersist__(self) -> Any:
        return self._rebuild, ()

    def _rebuild(self, dsk: Any, *args: Any, rename: dict[str, str] | None = None) -> Array:
        name = rename.get(self._name, self._name) if rename else self._name
        return Array(dict(dsk), name, self._npartitions, self._elem, self._lengths)

    # -- metadata ----------------------------------------------------------
    @property
    def dask(self) -> dict[Any, Any]:
        return self._dask

    @property
    def name(self) -> str:
        """Dask's key name of this collection (never a field: use ``x["name"]``)."""
        return self._name

    @property
    def npartitions(self) -> int:
        return self._npartitions

    @property
    def element_type(self) -> dynd.Type:
        """``T``: one row's type."""
        return dynd.type(self._elem)

    @property
    def type(self) -> dynd.Type:
        if self._lengths is not None:
            return dynd.type(f"{sum(self._lengths)} * {self._elem}")
        return dynd.type(f"var * {self._elem}")

    @property
    def ndim(self) -> int:
        return 1 + dynd.type(self._elem).ndim

    @property
    def known_lengths(self) -> bool:
        return self._lengths is not None

    @property
    def lengths(self) -> tuple[int, ...] | None:
        """The partition lengths where known, else None."""
        return self._lengths

    def partition_lengths(self, **compute_kwargs: Any) -> tuple[int, ...]:
        """The partition lengths, computing them when they are not known."""
        if self._lengths is not None:
            return self._lengths
        lens = self.map_raw(len, prefix="len")
        return tuple(int(n) for n in dask.compute(*lens, **compute_kwargs))

    def __len__(self) -> int:
        return sum(self.partition_lengths())

    def __repr__(self) -> str:
        return f"dynd.dask.Array<{self._name}, npartitions={self._npartitions}, type={self.type}>"

    @property
    def partitions(self) -> _Partitions:
        """``x.partitions[i]`` (or a slice, or a list): a collection of those partitions."""
        return _Partitions(self)

    def to_delayed(self, optimize_graph: bool = True) -> list[Any]:
        """One ``dask.delayed`` object per partition."""
        from dask.delayed import Delayed

        keys = self.__dask_keys__()
        dsk = _optimize(self._dask, keys) if optimize_graph else self._dask
        return [Delayed(k, dsk) for k in keys]

    def map_raw(self, func: Callable[[dynd.Array], Any], prefix: str) -> list[Any]:
        """Delayed ``func(partition)`` for every partition (values of any kind)."""
        from dask.delayed import Delayed

        name = new_name(prefix)
        dsk = dict(self._dask)
        for i in range(self._npartitions):
            dsk[(name, i)] = (Call(func, [_SLOT], {}, i, None, False), (self._name, i))
        return [Delayed((name, i), dsk) for i in range(self._npartitions)]

    def map_partitions(self, func: Callable[..., Any], *args: Any, type: Any = None, **kwargs: Any) -> Array:  # noqa: A002
        """``func(partition, *args, **kwargs)`` for every partition: see :func:`map_partitions`."""
        return map_partitions(func, self, *args, type=type, **kwargs)

    # -- fields and indexing -------------------------------------------------
    def __getattr__(self, name: str) -> Array:
        if name.startswith("_"):
            raise AttributeError(name)
        fields = dynd.type(self._elem).fields
        if fields and name in fields:
            return self[name]
        raise AttributeError(f"dynd.dask.Array has no attribute or field {name!r} (element type {self._elem})")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(dynd.type(self._elem).fields or ()))

    def __getitem__(self, key: Any) -> Array:
        if isinstance(key, str):
            if self._filtered is not None:
                source, mask = self._filtered
                return source[key][mask]
            return elementwise(operator.getitem, [self, key], preserves_lengths=True, prefix="getitem")
        if isinstance(key, Array):
            kt = dynd.type(key._elem)
            if kt.ndim == 0 and key._elem.lstrip("?") == "bool":
                out = elementwise(operator.getitem, [self, key], preserves_lengths=False, prefix="filter")
                out._filtered = (self, key)
                return out
            if kt.ndim == 0 and key._elem.lstrip("?") != "bool":
                raise dynd.InvalidArgumentError(
                    f"x[idx] with a collection of row positions ({key.type}) takes rows across partitions: "
                    "not supported; index rows with an aligned bool mask, or rows' elements with an aligned "
                    "collection of per-row positions"
                )
            return elementwise(operator.getitem, [self, key], preserves_lengths=kt.ndim > 0, prefix="getitem")
        if isinstance(key, slice) and key == slice(None):
            return self
        if isinstance(key, tuple) and key and isinstance(key[0], slice) and key[0] == slice(None):
            if any(isinstance(k, Array) for k in key):
                raise dynd.InvalidArgumentError("a dynd.dask collection inside an index tuple is not supported")
            return elementwise(operator.getitem, [self, key], preserves_lengths=True, prefix="getitem")
        raise dynd.InvalidArgumentError(
            f"x[{key!r}] indexes the partitioned (outermost) axis: dynd.dask takes ':' there "
            "(x[:, 0], x[:, 1:3]), a field name, or an aligned collection (mask or per-row positions); "
            "use x.partitions[i] or compute() for rows"
        )

    # -- operators -----------------------------------------------------------
    def _binary(self, op: Callable[[Any, Any], Any], other: Any, reflected: bool = False) -> Array:
        args = [other, self] if reflected else [self, other]
        return elementwise(op, args, preserves_lengths=True, prefix=getattr(op, "__name__", "op"))

    def __lt__(self, o: Any) -> Array:  # type: ignore[override]
        return self._binary(operator.lt, o)

    def __le__(self, o: Any) -> Array:  # type: ignore[override]
        return self._binary(operator.le, o)

    def __gt__(self, o: Any) -> Array:  # type: ignore[override]
        return self._binary(operator.gt, o)

    def __ge__(self, o: Any) -> Array:  # type: ignore[override]
        return self._binary(operator.ge, o)

    def __eq__(self, o: Any) -> Array:  # type: ignore[override]
        return self._binary(operator.eq, o)

    def __ne__(self, o: Any) -> Array:  # type: ignore[override]
        return self._binary(operator.ne, o)

    __hash__ = object.__hash__

    def __neg__(self) -> Array:
        return elementwise(operator.neg, [self], preserves_lengths=True, prefix="neg")

    def __pos__(self) -> Array:
        return self

    def __abs__(self) -> Array:
        return elementwise(operator.abs, [self], preserves_lengths=True, prefix="abs")

    def __invert__(self) -> Array:
        return elementwise(operator.invert, [self], preserves_lengths=True, prefix="invert")

    def __bool__(self) -> bool:
        raise dynd.InvalidArgumentError("the truth value of a dynd.dask collection is ambiguous: compute() it first")

    # -- writers (in io.py) ---------------------------------------------------
    def to_json(self, path: str, **kwargs: Any) -> list[str]:
        from .io import to_json

        return to_json(self, path, **kwargs)

    def to_parquet(self, path: str, **kwargs: Any) -> list[str]:
        from .io import to_parquet

        return to_parquet(self, path, **kwargs)

    def to_dask_array(self) -> Any:
        from .io import to_dask_array

        return to_dask_array(self)


class _Partitions:
    __slots__ = ("_x",)

    def __init__(self, x: Array) -> None:
        self._x = x

    def __len__(self) -> int:
        return self._x.npartitions

    def __getitem__(self, key: Any) -> Array:
        x = self._x
        n = x.npartitions
        if isinstance(key, slice):
            picks = list(range(n))[key]
        elif isinstance(key, (list, tuple)):
            picks = list(key)
        else:
            picks = [key]
        chosen = []
        for i in picks:
            chosen.append(
                position(
                    i,
                    n,
                    f"partitions[{key!r}]: partition numbers are ints",
                    f"partition {i} is out of range for {n} partitions",
                )
            )
        if not chosen:
            raise dynd.InvalidArgumentError(f"partitions[{key!r}] selects no partition")
        name = new_name("partitions")
        dsk = dict(x._dask)
        for out, j in enumerate(chosen):
            dsk[(name, out)] = (_identity, (x._name, j))
        lengths = [x._lengths[j] for j in chosen] if x._lengths is not None else None
        return Array(dsk, name, len(chosen), x._elem, lengths)


# --------------------------------------------------------------------------
# building collections


def _collections(args: Sequence[Any]) -> list[Array]:
    return [a for a in args if isinstance(a, Array)]


def _aligned_partitions(colls: Sequence[Array]) -> tuple[int, tuple[int, ...] | None]:
    """The common partition count (and lengths, where every collection knows them)."""
    n = colls[0].npartitions
    for c in colls[1:]:
        if c.npartitions != n:
            raise dynd.BroadcastError(
                f"misaligned partitions: collections with {n} and {c.npartitions} partitions "
                "(operands need the same partition lengths)"
            )
    known = [c._lengths for c in colls if c._lengths is not None]
    for lens in known[1:]:
        for i, (a, b) in enumerate(zip(known[0], lens, strict=True)):
            if a != b:
                raise dynd.BroadcastError(
                    f"partition {i}: the collections' partitions have {a} and {b} rows: misaligned partitions "
                    "(operands need the same partition lengths)"
                )
    return n, (known[0] if known else None)


def resolve_type(func: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], what: str) -> str:
    """The element type of ``func``'s output, from running it on empty partitions."""
    metas = [empty(a._elem) if isinstance(a, Array) else a for a in args]
    try:
        out = func(*metas, **kwargs)
    except dynd.Error as e:
        raise type(e)(f"{what}: {e}") from None
    except Exception as e:
        raise dynd.TypeMismatchError(
            f"{what}: cannot resolve the output type on an empty partition ({type(e).__name__}: {e}); give type="
        ) from e
    if not isinstance(out, dynd.Array) or out.ndim < 1:
        raise dynd.TypeMismatchError(
            f"{what}: returns {type(out).__name__ if not isinstance(out, dynd.Array) else out.type} for a "
            "partition; a partition function must return a dynd.Array with an outer dim"
        )
    return element_type(out.type)


def build(
    func: Callable[..., Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
    elem: str,
    check: bool,
    aligned: bool,
    preserves_lengths: bool,
    prefix: str,
) -> Array:
    colls = _collections(args)
    n, lengths = _aligned_partitions(colls) if aligned else (colls[0].npartitions, colls[0]._lengths)
    if not aligned:
        for c in colls[1:]:
            if c.npartitions != n:
                raise dynd.BroadcastError(f"collections with {n} and {c.npartitions} partitions")
    template = [_SLOT if isinstance(a, Array) else a for a in args]
    name = new_name(prefix)
    dsk: dict[Any, Any] = {}
    for c in colls:
        dsk.update(c._dask)
    for i in range(n):
        call = Call(func, template, kwargs, i, elem if check else None, aligned)
        dsk[(name, i)] = (call, *[(c._name, i) for c in colls])
    return Array(dsk, name, n, elem, lengths if preserves_lengths else None)


def elementwise(func: Callable[..., Any], args: Sequence[Any], preserves_lengths: bool, prefix: str, **kwargs: Any) -> Array:
    """``func`` partition by partition over aligned collections (dynd arrays
    and scalars as they are), its output type resolved from the input types."""
    what = f"{prefix} on {', '.join(str(a.type) if isinstance(a, Array) else type(a).__name__ for a in args)}"
    elem = resolve_type(func, args, kwargs, what)
    return build(func, args, kwargs, elem, False, True, preserves_lengths, prefix)


def map_partitions(func: Callable[..., Any], *args: Any, type: Any = None, **kwargs: Any) -> Array:  # noqa: A002
    """``func(*args, **kwargs)`` once per partition, each collection argument
    replaced by its partition: any function of dynd arrays, a ``@dynd.kernel``
    or a ``dynd.callable_from_cfunc`` callable included. The collections need
    the same number of partitions. The output's element type is ``type`` when
    given (checked on every partition when computed), else resolved by calling
    ``func`` on empty partitions. Partition lengths are unknown afterwards."""
    if not _collections(args):
        raise dynd.InvalidArgumentError("map_partitions needs at least one dynd.dask collection argument")
    fname = getattr(func, "__name__", "func")
    if type is not None:
        elem = canonical(type)
        return build(func, args, kwargs, elem, True, False, False, f"map-{fname}")
    elem = resolve_type(func, args, kwargs, f"map_partitions({fname})")
    return build(func, args, kwargs, elem, True, False, False, f"map-{fname}")


def from_dynd(a: Any, npartitions: int | None = None, chunksize: int | None = None) -> Array:
    """``a`` split along its outermost dim into ``npartitions`` near-equal
    partitions (or partitions of ``chunksize`` rows); the partitions are views
    of ``a``, their lengths known."""
    if not isinstance(a, dynd.Array):
        a = dynd.array(a)
    if a.ndim < 1:
        raise dynd.InvalidArgumentError(f"from_dynd needs an array with an outer dim, not {a.type}")
    n = len(a)
    if npartitions is not None and chunksize is not None:
        raise dynd.InvalidArgumentError("from_dynd takes npartitions or chunksize, not both")
    if chunksize is not None:
        if chunksize < 1:
            raise dynd.InvalidArgumentError(f"chunksize must be at least 1, not {chunksize}")
        bounds = list(range(0, n, chunksize)) + [n]
        if n == 0:
            bounds = [0, 0]
    else:
        k = 1 if npartitions is None else npartitions
        if k < 1:
            raise dynd.InvalidArgumentError(f"npartitions must be at least 1, not {k}")
        bounds = [i * n // k for i in range(k)] + [n]
    return from_bounds(a, bounds)


def from_bounds(a: dynd.Array, bounds: Sequence[int]) -> Array:
    """``a`` split at the given row boundaries (partitions may be empty)."""
    elem = element_type(a.type)
    name = new_name("from-dynd")
    dsk = {}
    for i, (s, e) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        dsk[(name, i)] = (Literal(a[s:e]),)
    lengths = [e - s for s, e in zip(bounds[:-1], bounds[1:], strict=True)]
    return Array(dsk, name, len(lengths), elem, lengths)


def from_delayed(parts: Sequence[Any], type: Any, lengths: Sequence[int] | None = None) -> Array:  # noqa: A002
    """A collection of ``dask.delayed`` objects, each computing a partition
    ``n_i * type`` (checked when computed: a mismatch is a TypeMismatchError
    naming the partition)."""
    from dask.delayed import Delayed

    elem = canonical(type)
    parts = list(parts)
    if not parts:
        raise dynd.InvalidArgumentError("from_delayed needs at least one partition")
    name = new_name("from-delayed")
    dsk: dict[Any, Any] = {}
    for i, d in enumerate(parts):
        if not isinstance(d, Delayed):
            raise dynd.InvalidArgumentError(
                f"from_delayed: partition {i} is a {d.__class__.__name__}, not a dask.delayed object"
            )
        dsk.update(d.__dask_graph__())
        dsk[(name, i)] = (Call(_identity, [_SLOT], {}, i, elem, False), d.key)
    return Array(dsk, name, len(parts), elem, lengths)


def concatenate(*colls: Any) -> Array:
    """The collections' partitions one after another (the same element type)."""
    if len(colls) == 1 and isinstance(colls[0], (list, tuple)):
        colls = tuple(colls[0])
    if not colls or not all(isinstance(c, Array) for c in colls):
        return dynd.concatenate(*colls)
    elem = colls[0]._elem
    for c in colls[1:]:
        if c._elem != elem:
            raise dynd.TypeMismatchError(f"concatenate: element types {elem} and {c._elem} differ")
    name = new_name("concatenate")
    dsk: dict[Any, Any] = {}
    out = 0
    for c in colls:
        dsk.update(c._dask)
        for i in range(c.npartitions):
            dsk[(name, out)] = (_identity, (c._name, i))
            out += 1
    known = all(c._lengths is not None for c in colls)
    lengths = [n for c in colls for n in c._lengths] if known else None  # type: ignore[union-attr]
    return Array(dsk, name, out, elem, lengths)


# --------------------------------------------------------------------------
# dask.sizeof: the bytes of a partition's data (its Arrow buffers), so that
# distributed's memory accounting and spilling see ragged and string data.


def _register_sizeof() -> None:
    from dask.sizeof import sizeof

    from dynd._pickle import nbytes

    @sizeof.register(dynd.Array)
    def _sizeof_dynd(a: dynd.Array) -> int:
        return nbytes(a)


_register_sizeof()


def _reduce_callable(c: dynd.Callable) -> Any:
    """dynd callables travel to worker processes by their registry name; a
    callable made from a compiled function pointer has none and cannot."""
    if c.name in dynd.callable_names() and dynd.callable(c.name).signature == c.signature:
        return (dynd.callable, (c.name,))
    raise dynd.InvalidArgumentError(
        f"{c!r} wraps a compiled function pointer, which cannot travel to another process: "
        "use @dynd.kernel (it compiles again on the worker), or build the callable inside the partition function"
    )


copyreg.pickle(dynd.Callable, _reduce_callable)
copyreg.pickle(dynd.Type, lambda t: (dynd.type, (str(t),)))


def _arithmetic(op: Callable[[Any, Any], Any], reflected: bool) -> Callable[[Array, Any], Array]:
    """The operator method ``x <op> o`` (``o <op> x`` when reflected)."""

    def method(self: Array, o: Any) -> Array:
        return self._binary(op, o, reflected)

    method.__name__ = f"__{'r' if reflected else ''}{op.__name__.strip('_')}__"
    return method


# x + y, y + x, ... for the arithmetic and bitwise operators, both ways.
for _op in (
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
    operator.and_,
    operator.or_,
):
    for _reflected in (False, True):
        _m = _arithmetic(_op, _reflected)
        setattr(Array, _m.__name__, _m)
