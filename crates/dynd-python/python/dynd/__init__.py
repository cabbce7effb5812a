"""dynd: typed, possibly ragged, possibly missing n-dimensional data.

The DyND / Blaze array-and-kernel system rebuilt in Rust (DESIGN §11)::

    import dynd
    a = dynd.array([[1, 2], [3]])          # 2 * var * int64, inferred
    dynd.sum(a, axis=-1).to_list()         # [3, 3]
    np.asarray(dynd.array([1.0, 2.0]))     # a zero-copy NumPy view

Every callable of dynd's registry is a function here under its own name;
reductions take ``axis`` (an int, negative from the innermost, or a
tuple) and ``keepdims``. Kernels run with the GIL released.
"""

from __future__ import annotations

from typing import Any

from . import _errors, cuda
from ._dynd import (
    Array,
    Callable,
    Type,
    _call,
    _callable_from_kernel,
    _concatenate,
    _reduce,
    _replace_thread_scope,
    _signature_parts,
    _sort,
    array,
    asarray,
    callable,
    callable_names,
    from_arrow,
    from_dlpack,
    from_json,
    get_num_threads,
    infer_type,
    set_num_threads,
    set_print_threshold,
)
from ._errors import (
    AllocError,
    BroadcastError,
    Error,
    ExternalError,
    FractionalError,
    IndexOutOfBoundsError,
    InexactError,
    InvalidArgumentError,
    ParseError,
    TypeMismatchError,
    ValueOverflowError,
)

#: ``dynd.type("3 * int32")`` makes a :class:`Type`.
type = Type  # noqa: A001 - the §11 name

__version__ = "0.1.0"

_REDUCTIONS = ("sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax", "any", "all", "count")


def _make_reduction(name: str) -> Any:
    def reduction(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
        return _reduce(name, a, axis, keepdims)

    reduction.__name__ = reduction.__qualname__ = name
    reduction.__doc__ = (
        f"The {name} reduction of ``a`` over ``axis`` (None: every axis; an int, negative counting "
        f"from the innermost; or a tuple), keeping reduced dims as ``1 *`` with ``keepdims``. "
        f"Missing values are skipped."
    )
    return reduction


def _make_function(name: str, signature: str) -> Any:
    def function(*args: Any) -> Array:
        return _call(name, *args)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"The registered dynd callable ``{name}``: {signature}. Arguments broadcast over fixed and var dims."
    return function


def sort(x: Any, descending: bool = False) -> Array:
    """``x`` sorted along the innermost dim (row by row for var): stable, NaN then missing last."""
    return _sort(x, descending, False)


def argsort(x: Any, descending: bool = False) -> Array:
    """The positions that sort ``x`` along the innermost dim (as :func:`sort`)."""
    return _sort(x, descending, True)


def concatenate(*arrays: Any) -> Array:
    """The arrays joined along the outermost dim (fixed + fixed: fixed; any var: var)."""
    if len(arrays) == 1 and isinstance(arrays[0], (list, tuple)):
        arrays = tuple(arrays[0])
    return _concatenate(list(arrays))


for _name in _REDUCTIONS:
    globals()[_name] = _make_reduction(_name)
for _name in callable_names():
    if _name not in globals():
        globals()[_name] = _make_function(_name, callable(_name).signature)
del _name


def callable_from_cfunc(cf: Any, signature: str, kind: str | None = None) -> Callable:
    """A callable from a compiled kernel function: a ``numba.cfunc`` or a ctypes
    function pointer of the DESIGN §5 single prototype
    ``int(char *dst, const char *const *src, ckernel_prefix *self)`` or the
    strided one ``int(char *dst, intptr_t dst_stride, const char *const *src,
    const intptr_t *src_stride, size_t count, ckernel_prefix *self)``, for the
    concrete ``signature`` (``"(float64, float64) -> float64"``). The result is
    lifted over fixed and var dims with broadcasting, like dynd's own callables.

    ``kind`` ("single" or "strided") is read from the function's argument count
    when not given (3: single, 6: strided); give it for a plain integer address.
    """
    from ._kernel import function_address

    address, nargs = function_address(cf)
    if kind is None:
        kind = {3: "single", 6: "strided"}.get(nargs) if nargs is not None else None
        if kind is None:
            raise TypeMismatchError(
                f"cannot tell the kernel prototype of {cf!r} ({nargs} arguments): give kind='single' or kind='strided'"
            )
    if kind == "single":
        return _callable_from_kernel(address, 0, signature, cf, "cfunc")
    if kind == "strided":
        return _callable_from_kernel(0, address, signature, cf, "cfunc")
    raise InvalidArgumentError(f"kind must be 'single' or 'strided', not {kind!r}")


def kernel(signature: str) -> Any:
    """``@dynd.kernel("(float64) -> float64")``: compiles a scalar Python function
    with Numba into a dynd callable, lifted over fixed and var dims with
    broadcasting and run on dynd's worker threads for large inputs (dynd
    decides; :func:`set_num_threads`, ``with dynd.threads(n)`` or
    ``DYND_NUM_THREADS`` set how many threads there are). An
    exception raised inside the kernel becomes :class:`ExternalError`."""
    from ._kernel import kernel as _kernel

    return _kernel(signature)


class threads:
    """``with dynd.threads(n): ...``: dynd's calls made by this Python
    thread inside the block use ``n`` threads (1: serially; 0: the process
    default), whatever :func:`set_num_threads` says (DESIGN §13). Blocks
    nest; leaving one puts the enclosing choice back. Other Python threads
    keep their own choice."""

    def __init__(self, n: int) -> None:
        if n is None:
            raise TypeError("dynd.threads takes an int thread count, got None")
        # Checked now, so that a bad count fails where it is written.
        _replace_thread_scope(_replace_thread_scope(n))
        self._n = n
        self._saved: list[int | None] = []

    def __enter__(self) -> threads:
        self._saved.append(_replace_thread_scope(self._n))
        return self

    def __exit__(self, *exc: object) -> None:
        _replace_thread_scope(self._saved.pop())

    def __repr__(self) -> str:
        return f"dynd.threads({self._n})"


def __getattr__(name: str) -> Any:
    if name == "_lowlevel":
        import importlib

        return importlib.import_module("dynd._lowlevel")
    raise AttributeError(f"module 'dynd' has no attribute {name!r}")


__all__ = [
    "AllocError",
    "Array",
    "BroadcastError",
    "Callable",
    "Error",
    "ExternalError",
    "FractionalError",
    "IndexOutOfBoundsError",
    "InexactError",
    "InvalidArgumentError",
    "ParseError",
    "Type",
    "cuda",
    "TypeMismatchError",
    "ValueOverflowError",
    "argsort",
    "array",
    "asarray",
    "callable",
    "callable_from_cfunc",
    "callable_names",
    "concatenate",
    "from_arrow",
    "from_dlpack",
    "from_json",
    "get_num_threads",
    "infer_type",
    "kernel",
    "set_num_threads",
    "set_print_threshold",
    "sort",
    "threads",
    "type",
    *_REDUCTIONS,
]
