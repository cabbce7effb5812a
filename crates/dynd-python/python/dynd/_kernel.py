"""Kernels from Python: ``dynd.callable_from_cfunc`` and ``@dynd.kernel``.

``@dynd.kernel(signature)`` compiles a scalar Python function with Numba's
public API into a dynd callable::

    import dynd

    @dynd.kernel("(float64, float64) -> float64")
    def hypot(x, y):
        return (x * x + y * y) ** 0.5

    hypot([[3.0, 5.0], [], [8.0]], 4.0).to_list()   # [[5.0, 6.40...], [], [8.94...]]

How it is built:

1. the function is compiled with ``numba.njit`` for the signature's element
   types (exactly: an argument is ``int32`` in the kernel when the signature
   says ``int32``; the result is converted to the signature's return type);
2. a strided kernel of the DESIGN §5 prototype
   ``int(char *dst, intptr_t dst_stride, const char *const *src,
   const intptr_t *src_stride, size_t count, ckernel_prefix *self)``
   is generated for the arity and compiled with ``numba.cfunc``: it loops over
   ``count`` elements at byte strides (0 when dynd broadcasts an argument,
   negative for reversed views, any value for a struct's field), loading and
   storing through a small Numba intrinsic that reads a value of any builtin
   type at any byte offset, and calls the njit function — inlined by LLVM, so
   the loop is as tight as a hand-written one. When each stride is its
   element's size or 0 (the common cases: contiguous data, ragged rows lying
   in order, broadcast scalars), a copy of the loop with those strides as
   constants runs, which LLVM vectorises;
3. its address goes to ``dynd._dynd._callable_from_kernel``, which makes a
   deferred ckernel of it. dynd lifts that over fixed and var dims with
   broadcasting, propagates missing values (``?float64`` arguments), and runs
   large calls on its worker threads (``dynd.set_num_threads``,
   ``with dynd.threads(n)`` or ``DYND_NUM_THREADS`` set how many;
   there is no per-kernel switch).

Errors: an exception raised by the function inside the kernel cannot travel
through C. The generated loop catches it (Numba's ``try/except`` in nopython
mode), records a ``dynd.ExternalError`` through the C ABI's ``dynd_error_set``
and stops: the call raises ``dynd.ExternalError`` naming the kernel. Numba
does not hand the exception's own message to compiled code, so the message
says which kernel failed, not why. Bad declarations (a signature that does
not parse, dims in it, element types Numba cannot take, a function of the
wrong arity or one that does not compile for the types) are refused when the
decorator runs, with the DESIGN §11 exception classes.
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import itertools
import keyword
from typing import Any

from ._errors import InvalidArgumentError, TypeMismatchError
from ._numpy import _DTYPES

#: DYND_ERR_EXTERNAL (DESIGN §5).
_ERR_EXTERNAL = 10

#: Prototype argument counts (DESIGN §5): single, strided.
_SINGLE_NARGS = 3
_STRIDED_NARGS = 6

#: dynd's lifter takes kernels of 1 to 4 sources.
_MAX_SOURCES = 4

#: dynd element type -> Numba type name: NumPy's dtype name (Numba's is the
#: same) but for bool, for every builtin type Numba compiles for the CPU
#: (int128, uint128, float16 and bfloat16 have no Numba type).
_NUMBA_NAMES = {t: "boolean" if t == "bool" else name for t, name in _DTYPES.items() if t != "float16"}


def function_address(cf: Any) -> tuple[int, int | None]:
    """``(address, nargs)`` of a compiled kernel function.

    ``cf`` is a ``numba.cfunc`` (its ``.address``; ``nargs`` from its
    ctypes prototype), a ctypes function pointer (``nargs`` from its
    ``argtypes``, ``None`` when they are not set), or a plain ``int`` address
    (``nargs`` ``None``). Anything else, and a NULL address, raise
    :class:`dynd.TypeMismatchError`.
    """
    if isinstance(cf, bool):
        raise TypeMismatchError(f"a kernel function address is an int, a numba.cfunc or a ctypes function pointer, not {cf!r}")
    if isinstance(cf, int):
        if cf <= 0 or cf >= 1 << (8 * ctypes.sizeof(ctypes.c_void_p)):
            raise TypeMismatchError(f"{cf:#x} is not a function address")
        return cf, None
    if isinstance(cf, ctypes._CFuncPtr):  # noqa: SLF001 - ctypes' public base of function pointers
        address = ctypes.cast(cf, ctypes.c_void_p).value
        if not address:
            raise TypeMismatchError("the ctypes function pointer is NULL")
        argtypes = getattr(cf, "argtypes", None)
        return address, (len(argtypes) if argtypes is not None else None)
    address = getattr(cf, "address", None)
    ctypes_fn = getattr(cf, "ctypes", None)
    if isinstance(address, int) and not isinstance(address, bool) and address > 0 and ctypes_fn is not None:
        # A numba.cfunc (or anything shaped like one): .address, .ctypes.
        argtypes = getattr(ctypes_fn, "argtypes", None)
        return address, (len(argtypes) if argtypes is not None else None)
    raise TypeMismatchError(
        f"a kernel function is a numba.cfunc, a ctypes function pointer or an int address, not {type(cf).__name__} {cf!r:.80}"
    )


# ---------------------------------------------------------------------------
# Numba: loads and stores at byte offsets, the generated strided loop


@functools.cache
def _numba() -> Any:
    """numba and the intrinsic factories, imported on first use (numba is
    optional for the rest of dynd)."""
    try:
        import numba
        from numba.core import types
        from numba.extending import intrinsic
    except ImportError as e:  # pragma: no cover - numba is a test dependency
        raise InvalidArgumentError(f"@dynd.kernel needs Numba (pip install numba): {e}") from e

    def loader(ty: Any) -> Any:
        @intrinsic
        def load(typingctx: Any, base: Any, offset: Any) -> Any:
            # base: char * (CPointer(uint8)), offset: a byte offset.
            if not isinstance(base, types.CPointer) or not isinstance(offset, types.Integer):
                return None

            def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
                ptr, off = args
                off = context.cast(builder, off, sig.args[1], types.intp)
                model = context.data_model_manager[ty]
                at = builder.bitcast(builder.gep(ptr, [off]), model.get_data_type().as_pointer())
                # align 1: a field of a packed struct lies at any offset.
                return model.from_data(builder, builder.load(at, align=1))

            return ty(base, offset), codegen

        return load

    def storer(ty: Any) -> Any:
        @intrinsic
        def store(typingctx: Any, base: Any, offset: Any, value: Any) -> Any:
            if not isinstance(base, types.CPointer) or not isinstance(offset, types.Integer):
                return None
            if typingctx.can_convert(value, ty) is None:
                return None

            def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
                ptr, off, val = args
                off = context.cast(builder, off, sig.args[1], types.intp)
                val = context.cast(builder, val, sig.args[2], ty)
                model = context.data_model_manager[ty]
                at = builder.bitcast(builder.gep(ptr, [off]), model.get_data_type().as_pointer())
                builder.store(model.as_data(builder, val), at, align=1)
                return context.get_dummy_value()

            return types.none(base, offset, value), codegen

        return store

    return numba, types, functools.cache(loader), functools.cache(storer)


def _numba_type(name: str, where: str, signature: str) -> Any:
    """The Numba type of dynd element type ``name``."""
    _, types, _, _ = _numba()
    numba_name = _NUMBA_NAMES.get(name)
    if numba_name is None:
        if name.startswith("?"):
            raise TypeMismatchError(
                f"kernel signature '{signature}': the {where} is the option type '{name}'; declare "
                f"'{name[1:]}' instead (dynd passes missing values through without calling the kernel)"
            )
        if "*" in name:
            raise TypeMismatchError(
                f"kernel signature '{signature}': the {where} is '{name}', which has dims; "
                f"kernels are scalar (dynd lifts them over dims)"
            )
        raise TypeMismatchError(
            f"kernel signature '{signature}': the {where} has type '{name}', which @dynd.kernel "
            f"does not support; element types are bool, int8..int64, uint8..uint64, float32, "
            f"float64, complex[float32] and complex[float64]"
        )
    return getattr(types, numba_name)


# The strided kernel's source, for n sources: `strided` (the cfunc) calls
# `run` (`loops`, compiled with njit) inside Numba's try/except, so that an
# exception raised by `f` becomes DYND_ERR_EXTERNAL and -1. `f`, `load<k>`,
# `store`, `run`, `error_set`, `MESSAGE` and `ERR_EXTERNAL` are globals of
# the exec namespace; `ESIZE<k>` and `DSIZE` are the element sizes.
#
# `loops` has one loop per stride pattern, chosen once per call: the output
# and each source contiguous (stride = element size) or broadcast (stride 0:
# loaded once, before the loop), every mix but all broadcast -- `f(x, 0.5)`,
# `clamp(x, lo, hi)`; then the general loop at any strides (negative,
# a struct field's, a var dim's). Constant strides let LLVM vectorise the
# inlined function. (2**n - 1 loops: about 2 s of compiling for 4 sources.)
_LOOP = """\
{indent}for i in range(count):
{indent}    store(dst, i * {dstride}, f({loads}))
"""


def _strided_source(nsrc: int) -> str:
    lines = [
        "def strided(dst, dst_stride, src, src_stride, count, self_):",
        "    try:",
        "        run(dst, dst_stride, src, src_stride, count)",
        "    except Exception:",
        "        error_set(ERR_EXTERNAL, MESSAGE)",
        "        return -1",
        "    return 0",
        "",
        "",
        "def loops(dst, dst_stride, src, src_stride, count):",
    ]
    for k in range(nsrc):
        lines.append(f"    s{k} = src[{k}]")
        lines.append(f"    t{k} = src_stride[{k}]")
    # Every mix of contiguous and broadcast sources but all broadcast.
    patterns = [frozenset(c) for size in range(nsrc) for c in itertools.combinations(range(nsrc), size)]
    for zero in patterns:
        cond = ["dst_stride == DSIZE"] + [f"t{k} == 0" if k in zero else f"t{k} == ESIZE{k}" for k in range(nsrc)]
        lines.append(f"    if {' and '.join(cond)}:")
        for k in sorted(zero):
            lines.append(f"        v{k} = load{k}(s{k}, 0)")
        loads = ", ".join(f"v{k}" if k in zero else f"load{k}(s{k}, i * ESIZE{k})" for k in range(nsrc))
        lines.append(_LOOP.format(indent="        ", loads=loads, dstride="DSIZE").rstrip("\n"))
        lines.append("        return")
    loads = ", ".join(f"load{k}(s{k}, i * t{k})" for k in range(nsrc))
    lines.append(_LOOP.format(indent="    ", loads=loads, dstride="dst_stride").rstrip("\n"))
    return "\n".join(lines) + "\n"


class _Owner:
    """What a kernel's callable keeps alive: the compiled functions (their
    machine code) and the error message the loop hands to ``dynd_error_set``."""

    __slots__ = ("cfunc", "error_set", "message", "njit")

    def __init__(self, cfunc: Any, njit: Any, message: Any, error_set: Any) -> None:
        self.cfunc = cfunc
        self.njit = njit
        self.message = message
        self.error_set = error_set


@functools.cache
def _error_set_pointer() -> Any:
    """``dynd_error_set`` of the shared library that holds ``dynd._dynd``, as
    a ctypes function pointer Numba can call from compiled code (the message
    is passed as an address)."""
    from . import _dynd

    lib = ctypes.CDLL(_dynd.__file__)
    address = ctypes.cast(lib.dynd_error_set, ctypes.c_void_p).value
    return ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p)(address)


def _parse_signature(signature: str) -> tuple[Any, list[Any]]:
    """The Numba types of ``signature``'s return value and arguments."""
    from . import _dynd

    if not isinstance(signature, str):
        raise TypeMismatchError(f"a kernel signature is a string such as '(float64) -> float64', not {signature!r}")
    ret_name, arg_names = _dynd._signature_parts(signature)
    if not 1 <= len(arg_names) <= _MAX_SOURCES:
        raise TypeMismatchError(
            f"kernel signature '{signature}' has {len(arg_names)} arguments; kernels take 1 to {_MAX_SOURCES}"
        )
    ret = _numba_type(ret_name, "return type", signature)
    return ret, [_numba_type(t, f"argument {k}", signature) for k, t in enumerate(arg_names)]


def _check_arity(fn: Any, nsrc: int, name: str, signature: str) -> None:
    try:
        params = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # no introspectable signature: Numba's typing will say
    try:
        params.bind(*range(nsrc))
    except TypeError as e:
        s = "" if nsrc == 1 else "s"
        raise TypeMismatchError(
            f"kernel '{name}' cannot take the {nsrc} argument{s} of signature '{signature}': {e}"
        ) from None


_PY_SCALARS = (int, float, bool, complex)


def _typed(value: Any, element_type: str) -> Any:
    """A Python number or list as an array of ``element_type``; anything
    else as it is."""
    from . import _dynd

    if type(value) in _PY_SCALARS:
        return _dynd.array(value, type=element_type)
    if type(value) in (list, tuple):
        return _dynd.array(value).cast(element_type)
    return value


class Kernel:
    """A scalar Python function compiled by :func:`dynd.kernel`: calling it
    runs the dynd callable (:attr:`callable`) on arrays, lists or NumPy
    arrays, lifted over their dims with broadcasting.

    Python numbers (``int``, ``float``, ``bool``, ``complex``) and lists,
    which have no element type of their own, become arrays of the argument's
    declared element type (so ``k([1, 2], 3)`` works for ``int32``
    arguments; a value out of range raises :class:`dynd.ValueOverflowError`,
    a fraction for an integer :class:`dynd.FractionalError`). dynd and NumPy
    arrays go to the callable as they are, and must have the declared
    element types.

    ``py_func`` is the original Python function, ``signature`` the dynd
    signature, ``name`` the function's name.
    """

    def __init__(self, callable_: Any, py_func: Any, arg_types: list[str]) -> None:
        self.callable = callable_
        self.py_func = py_func
        self._arg_types = arg_types
        self.__wrapped__ = py_func
        functools.update_wrapper(self, py_func, assigned=("__module__", "__name__", "__qualname__", "__doc__"), updated=())

    def __call__(self, *args: Any) -> Any:
        if len(args) == len(self._arg_types):
            args = tuple(_typed(a, t) for a, t in zip(args, self._arg_types, strict=True))
        return self.callable(*args)

    @property
    def name(self) -> str:
        """The kernel's name (the function's)."""
        return self.callable.name

    @property
    def signature(self) -> str:
        """The kernel's signature, as dynd prints it."""
        return self.callable.signature

    def __repr__(self) -> str:
        return f"<dynd.kernel {self.name} : {self.signature}>"

    def __reduce__(self) -> Any:
        # Pickles as its Python function and signature and compiles again
        # where it is loaded (a Dask worker process): compiled code and the
        # dynd callable do not travel.
        return (_recompile, (self.py_func, getattr(self, "_source_signature", self.signature)))


def _recompile(py_func: Any, signature: str) -> Kernel:
    return kernel(signature)(py_func)


def _compile(fn: Any, signature: str) -> Kernel:
    from . import _dynd

    numba, types, loader, storer = _numba()
    if isinstance(fn, numba.core.registry.CPUDispatcher):
        py_func = fn.py_func
    elif inspect.isfunction(fn):
        py_func = fn
    else:
        raise TypeMismatchError(
            f"@dynd.kernel decorates a Python function (or a numba.njit one), not {type(fn).__name__} {fn!r:.80}"
        )
    name = py_func.__name__
    if not name.isidentifier() or keyword.iskeyword(name):
        name = "kernel"
    ret, args = _parse_signature(signature)
    _, arg_names = _dynd._signature_parts(signature)
    nsrc = len(args)
    _check_arity(py_func, nsrc, name, signature)

    try:
        scalar = numba.njit(ret(*args))(py_func) if fn is py_func else fn
    except numba.core.errors.NumbaError as e:
        raise TypeMismatchError(
            f"kernel '{name}' does not compile for '{signature}' with Numba: {_first_lines(e)}"
        ) from e

    message = ctypes.create_string_buffer(
        f"dynd.kernel {name}: the function raised an exception (Numba does not pass its message on)".encode()
    )
    error_set = _error_set_pointer()
    namespace: dict[str, Any] = {
        "f": scalar,
        "store": storer(ret),
        "error_set": error_set,
        "MESSAGE": ctypes.addressof(message),
        "ERR_EXTERNAL": _ERR_EXTERNAL,
        "DSIZE": _size_of(ret),
    }
    for k, a in enumerate(args):
        namespace[f"load{k}"] = loader(a)
        namespace[f"ESIZE{k}"] = _size_of(a)
    exec(compile(_strided_source(nsrc), f"<dynd.kernel {name}>", "exec"), namespace)  # noqa: S102 - our template
    namespace["run"] = numba.njit(namespace["loops"])
    char_p = types.CPointer(types.uint8)
    prototype = types.int32(
        char_p, types.intp, types.CPointer(char_p), types.CPointer(types.intp), types.intp, types.voidptr
    )
    try:
        strided = numba.cfunc(prototype, nopython=True)(namespace["strided"])
    except numba.core.errors.NumbaError as e:
        raise TypeMismatchError(
            f"kernel '{name}' does not compile for '{signature}' with Numba: {_first_lines(e)}"
        ) from e
    owner = _Owner(strided, scalar, message, error_set)
    c = _dynd._callable_from_kernel(0, strided.address, signature, owner, name)
    k = Kernel(c, py_func, arg_names)
    k._source_signature = signature
    return k


def _size_of(ty: Any) -> int:
    import numpy as np

    return int(np.dtype(str(ty) if str(ty) != "bool" else "bool").itemsize)


def _first_lines(e: BaseException, n: int = 6) -> str:
    lines = [ln for ln in str(e).splitlines() if ln.strip()]
    text = "\n".join(lines[:n])
    return text + ("\n..." if len(lines) > n else "")


def kernel(signature: str) -> Any:
    """``@dynd.kernel("(float64) -> float64")``: the decorator that compiles a
    scalar function into a :class:`Kernel` (see the module docs).

    Raises :class:`dynd.ParseError` for a signature that does not parse,
    :class:`dynd.TypeMismatchError` for one that is not ``(T, ...) -> R`` of
    1 to 4 scalar element types Numba supports, and, when it decorates,
    :class:`dynd.TypeMismatchError` for an object that is not a function, a
    function of another arity, or one that Numba cannot compile for the
    types.
    """
    if not isinstance(signature, str):
        if callable(signature):
            raise TypeMismatchError(
                "@dynd.kernel needs a signature: write @dynd.kernel(\"(float64) -> float64\")"
            )
        raise TypeMismatchError(f"a kernel signature is a string such as '(float64) -> float64', not {signature!r}")
    # Check the signature now, so that a bad one is reported at the
    # decorator line even before a function is given.
    _parse_signature(signature)

    def decorate(fn: Any) -> Kernel:
        return _compile(fn, signature)

    return decorate


__all__ = ["Kernel", "function_address", "kernel"]
