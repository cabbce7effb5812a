"""``dynd._lowlevel``: dynd's C ABI (DESIGN §5) as ctypes, for building
ckernels by hand and for compiled code (Numba) that calls into dynd.

Every ``dynd_*`` function of the C ABI is here under its name without the
prefix — :data:`ckernel_builder_construct`, :data:`ckernel_builder_destruct`,
:data:`ckernel_builder_reset`, :data:`ckernel_builder_ensure_capacity`,
:data:`ckernel_builder_ensure_capacity_leaf`, :data:`memory_block_incref`,
:data:`memory_block_decref`, :data:`memory_block_pod_allocator_api`,
:data:`make_assignment_kernel`, :data:`callable_from_deferred`,
:data:`callable_lookup`, :data:`callable_call`, ``array_*``, ``type_*``,
``error_*``, ... — as a ctypes function pointer with ``argtypes`` and
``restype`` set, loaded from the shared library that holds ``dynd._dynd``:
Python, ctypes and Numba share one registry and one error slot per thread.
The functions are plain ``CDLL`` ones: the GIL is released while they run.

Pointer arguments are declared ``c_void_p`` (the seeds' ``void *ckb``), so
they take ``ctypes.byref(struct)``, ctypes pointers and arrays, and plain
integer addresses (from Numba or another library) alike; strings are
``bytes``. Strings the library returns (``type_to_datashape``,
``array_to_json``) are addresses to read with ``ctypes.string_at`` and free
with :data:`string_free`; :func:`take_string` does both.

Building dynd's assignment kernel int32 -> float64 and calling it::

    import ctypes
    from dynd import _lowlevel as ll

    ckb = ll.CKernelBuilderStruct()
    ll.ckernel_builder_construct(ctypes.byref(ckb))
    end = ll.make_assignment_kernel(ctypes.byref(ckb), 0, ll.TYPE_ID["float64"], None,
                                    ll.TYPE_ID["int32"], None, ll.KERNEL_REQUEST_SINGLE,
                                    ll.ASSIGN_DEFAULT)
    if end < 0:
        raise ll.last_error()
    kernel = ll.CKernelPrefixStruct.from_address(ckb.data)
    src, dst = ctypes.c_int32(-7), ctypes.c_double()
    ll.ExprSingleFunc(kernel.function)(ctypes.addressof(dst),
                                       (ctypes.c_void_p * 1)(ctypes.addressof(src)), ckb.data)
    assert dst.value == -7.0
    ll.ckernel_builder_destruct(ctypes.byref(ckb))

``examples/python/lowlevel_ckernel.py`` builds a whole deferred ckernel in
pure ctypes and calls it through dynd on ragged data.

Handles (``dynd_type``, ``dynd_array``, ``dynd_callable``) are integers
(``c_void_p`` results); each one a function returns is a new reference, to
release with the matching ``*_decref``. :func:`callable_from_handle` and
:func:`callable_handle` go between a ``dynd_callable`` and
:class:`dynd.Callable`.
"""

from __future__ import annotations

import ctypes
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_int,
    c_int32,
    c_size_t,
    c_ssize_t,
    c_uint32,
    c_void_p,
)
from typing import Any

from . import _dynd
from ._errors import InvalidArgumentError

# ---- constants (DESIGN §5) ---------------------------------------------------

#: A ``dynd_type`` value below this is a builtin type id (DESIGN §3).
BUILTIN_TYPE_ID_LIMIT = 64

OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_TYPE = 2
ERR_OVERFLOW = 3
ERR_FRACTIONAL = 4
ERR_INEXACT = 5
ERR_INDEX = 6
ERR_BROADCAST = 7
ERR_PARSE = 8
ERR_ALLOC = 9
ERR_EXTERNAL = 10

KERNEL_REQUEST_SINGLE = 0
KERNEL_REQUEST_STRIDED = 1

ASSIGN_NOCHECK = 0
ASSIGN_OVERFLOW = 1
ASSIGN_FRACTIONAL = 2
ASSIGN_INEXACT = 3
ASSIGN_DEFAULT = 4

#: The builtin type ids (DESIGN §3): a builtin ``dynd_type`` is its id.
TYPE_ID = {
    "bool": 1,
    "int8": 2,
    "int16": 3,
    "int32": 4,
    "int64": 5,
    "int128": 6,
    "uint8": 7,
    "uint16": 8,
    "uint32": 9,
    "uint64": 10,
    "uint128": 11,
    "float16": 12,
    "float32": 13,
    "float64": 14,
    "complex[float32]": 16,
    "complex[float64]": 17,
    "void": 18,
    "bfloat16": 19,
}

# ---- structures ----------------------------------------------------------------


class CKernelPrefixStruct(Structure):
    """``dynd_ckernel_prefix``: the start of every ckernel.

    ``function`` is an :data:`ExprSingleFunc` or :data:`ExprStridedFunc`
    (as the kernel was requested), ``destructor`` a :data:`DestructorFunc`
    or NULL when the kernel owns nothing.
    """

    _fields_ = [("function", c_void_p), ("destructor", c_void_p)]


class CKernelBuilderStruct(Structure):
    """``dynd_ckernel_builder``: 18 words (``data``, ``capacity`` in bytes,
    ``static_data[16]``). Construct it in place with
    :data:`ckernel_builder_construct` and never move it until
    :data:`ckernel_builder_destruct`; the root kernel is at ``data``."""

    _fields_ = [("data", c_void_p), ("capacity", c_ssize_t), ("static_data", c_ssize_t * 16)]


class MemoryBlockStruct(Structure):
    """``dynd_memory_block``'s header: an atomic use count and a kind."""

    _fields_ = [("use_count", c_int32), ("kind", c_uint32)]


#: ``int (*)(char *dst, const char *const *src, dynd_ckernel_prefix *self)``
ExprSingleFunc = CFUNCTYPE(c_int, c_void_p, POINTER(c_void_p), c_void_p)
#: ``int (*)(char *dst, intptr_t dst_stride, const char *const *src,
#: const intptr_t *src_stride, size_t count, dynd_ckernel_prefix *self)``
ExprStridedFunc = CFUNCTYPE(c_int, c_void_p, c_ssize_t, POINTER(c_void_p), POINTER(c_ssize_t), c_size_t, c_void_p)
#: ``intptr_t (*)(void *self_data, dynd_ckernel_builder *ckb, intptr_t
#: ckb_offset, const char *const *arrmeta, uint32_t kernreq)``
InstantiateFunc = CFUNCTYPE(c_ssize_t, c_void_p, POINTER(CKernelBuilderStruct), c_ssize_t, POINTER(c_void_p), c_uint32)
#: ``void (*)(void *data_ptr)``: a deferred ckernel's ``free_func``.
FreeFunc = CFUNCTYPE(None, c_void_p)
#: ``void (*)(dynd_ckernel_prefix *self)``: a ckernel's destructor.
DestructorFunc = CFUNCTYPE(None, c_void_p)
#: ``void (*)(void *owner)``: :data:`array_from_external`'s release.
ReleaseFunc = CFUNCTYPE(None, c_void_p)

#: ``int (*allocate)(dynd_memory_block *self, intptr_t size_bytes, intptr_t
#: alignment, char **out_begin, char **out_end)``
PodAllocateFunc = CFUNCTYPE(c_int, c_void_p, c_ssize_t, c_ssize_t, POINTER(c_void_p), POINTER(c_void_p))
#: ``int (*resize)(dynd_memory_block *self, intptr_t size_bytes, char
#: **inout_begin, char **inout_end)``
PodResizeFunc = CFUNCTYPE(c_int, c_void_p, c_ssize_t, POINTER(c_void_p), POINTER(c_void_p))
#: ``void (*finalize)(dynd_memory_block *self)``
PodFinalizeFunc = CFUNCTYPE(None, c_void_p)


class PodAllocatorApiStruct(Structure):
    """``dynd_pod_allocator_api``: how a kernel allocates variable-sized
    output (var dims, strings) in the destination's memory block."""

    _fields_ = [("allocate", PodAllocateFunc), ("resize", PodResizeFunc), ("finalize", PodFinalizeFunc)]


class DeferredCKernelStruct(Structure):
    """``dynd_deferred_ckernel``: six words, taken over (and zeroed) by
    :data:`callable_from_deferred`."""

    _fields_ = [
        ("ckernel_funcproto", c_size_t),
        ("data_types_size", c_size_t),
        ("data_dynd_types", POINTER(c_void_p)),
        ("data_ptr", c_void_p),
        ("instantiate_func", InstantiateFunc),
        ("free_func", FreeFunc),
    ]


_WORD = ctypes.sizeof(c_void_p)
assert ctypes.sizeof(CKernelPrefixStruct) == 2 * _WORD
assert ctypes.sizeof(CKernelBuilderStruct) == 18 * _WORD
assert ctypes.sizeof(DeferredCKernelStruct) == 6 * _WORD
assert ctypes.sizeof(PodAllocatorApiStruct) == 3 * _WORD

# ---- the functions ---------------------------------------------------------------

#: The shared library of ``dynd._dynd``: it exports the C ABI too.
library = ctypes.CDLL(_dynd.__file__)

_p = c_void_p
_PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {
    # errors
    "error_code": (c_int, []),
    "error_message": (c_char_p, []),
    "error_set": (None, [c_int, c_char_p]),
    "error_clear": (None, []),
    "string_free": (None, [_p]),
    # types
    "type_from_datashape": (_p, [c_char_p]),
    "type_to_datashape": (_p, [_p]),
    "type_incref": (None, [_p]),
    "type_decref": (None, [_p]),
    "type_data_size": (c_size_t, [_p]),
    "type_data_alignment": (c_size_t, [_p]),
    "type_arrmeta_size": (c_size_t, [_p]),
    # memory blocks
    "memory_block_incref": (None, [_p]),
    "memory_block_decref": (None, [_p]),
    "memory_block_pod_allocator_api": (POINTER(PodAllocatorApiStruct), [_p]),
    # arrays
    "array_empty": (_p, [_p]),
    "array_from_json": (_p, [_p, c_char_p, c_size_t]),
    "array_to_json": (_p, [_p]),
    "array_type": (_p, [_p]),
    "array_data": (_p, [_p]),
    "array_arrmeta": (_p, [_p]),
    "array_data_reference": (_p, [_p]),
    "array_assign": (c_int, [_p, _p, c_int]),
    "array_incref": (None, [_p]),
    "array_decref": (None, [_p]),
    # ckernel builders and kernels
    "ckernel_builder_construct": (None, [_p]),
    "ckernel_builder_destruct": (None, [_p]),
    "ckernel_builder_reset": (None, [_p]),
    "ckernel_builder_ensure_capacity_leaf": (c_int, [_p, c_ssize_t]),
    "ckernel_builder_ensure_capacity": (c_int, [_p, c_ssize_t]),
    "make_assignment_kernel": (c_ssize_t, [_p, c_ssize_t, _p, _p, _p, _p, c_uint32, c_int]),
    # callables
    "callable_from_deferred": (_p, [_p]),
    "callable_lookup": (_p, [c_char_p]),
    "callable_call": (_p, [_p, c_size_t, _p]),
    "callable_instantiate": (c_ssize_t, [_p, _p, c_ssize_t, _p, _p, c_size_t, _p, _p, c_uint32]),
    "callable_incref": (None, [_p]),
    "callable_decref": (None, [_p]),
    # interop (wave 2)
    "array_from_external": (_p, [_p, _p, c_size_t, _p, _p, _p, ReleaseFunc, c_int]),
    "array_to_arrow": (c_int, [_p, _p, _p]),
    "array_from_arrow": (_p, [_p, _p]),
    "array_to_dlpack": (_p, [_p]),
    "array_from_dlpack": (_p, [_p]),
}


def _bind(name: str) -> Any:
    f = getattr(library, "dynd_" + name)
    restype, argtypes = _PROTOTYPES[name]
    f.restype = restype
    f.argtypes = argtypes
    return f


error_code = _bind("error_code")
error_message = _bind("error_message")
error_set = _bind("error_set")
error_clear = _bind("error_clear")
string_free = _bind("string_free")
type_from_datashape = _bind("type_from_datashape")
type_to_datashape = _bind("type_to_datashape")
type_incref = _bind("type_incref")
type_decref = _bind("type_decref")
type_data_size = _bind("type_data_size")
type_data_alignment = _bind("type_data_alignment")
type_arrmeta_size = _bind("type_arrmeta_size")
memory_block_incref = _bind("memory_block_incref")
memory_block_decref = _bind("memory_block_decref")
memory_block_pod_allocator_api = _bind("memory_block_pod_allocator_api")
array_empty = _bind("array_empty")
array_from_json = _bind("array_from_json")
array_to_json = _bind("array_to_json")
array_type = _bind("array_type")
array_data = _bind("array_data")
array_arrmeta = _bind("array_arrmeta")
array_data_reference = _bind("array_data_reference")
array_assign = _bind("array_assign")
array_incref = _bind("array_incref")
array_decref = _bind("array_decref")
ckernel_builder_construct = _bind("ckernel_builder_construct")
ckernel_builder_destruct = _bind("ckernel_builder_destruct")
ckernel_builder_reset = _bind("ckernel_builder_reset")
ckernel_builder_ensure_capacity_leaf = _bind("ckernel_builder_ensure_capacity_leaf")
ckernel_builder_ensure_capacity = _bind("ckernel_builder_ensure_capacity")
make_assignment_kernel = _bind("make_assignment_kernel")
callable_from_deferred = _bind("callable_from_deferred")
callable_lookup = _bind("callable_lookup")
callable_call = _bind("callable_call")
callable_instantiate = _bind("callable_instantiate")
callable_incref = _bind("callable_incref")
callable_decref = _bind("callable_decref")
array_from_external = _bind("array_from_external")
array_to_arrow = _bind("array_to_arrow")
array_from_arrow = _bind("array_from_arrow")
array_to_dlpack = _bind("array_to_dlpack")
array_from_dlpack = _bind("array_from_dlpack")

#: Every C ABI function's name here (without the ``dynd_`` prefix).
FUNCTIONS = tuple(_PROTOTYPES)

# ---- helpers ---------------------------------------------------------------------

_CODE_CLASSES = {
    ERR_INVALID_ARGUMENT: "InvalidArgumentError",
    ERR_TYPE: "TypeMismatchError",
    ERR_OVERFLOW: "ValueOverflowError",
    ERR_FRACTIONAL: "FractionalError",
    ERR_INEXACT: "InexactError",
    ERR_INDEX: "IndexOutOfBoundsError",
    ERR_BROADCAST: "BroadcastError",
    ERR_PARSE: "ParseError",
    ERR_ALLOC: "AllocError",
    ERR_EXTERNAL: "ExternalError",
}


def last_error() -> Exception:
    """The error in this thread's slot as its :class:`dynd.Error` subclass
    (what a function that returned NULL or -1 recorded)."""
    from . import _errors

    code = error_code()
    message = (error_message() or b"").decode("utf-8", "replace")
    if code == OK:
        return _errors.Error("no dynd error is recorded on this thread")
    return getattr(_errors, _CODE_CLASSES.get(code, "ExternalError"))(message)


def take_string(address: int | None) -> str:
    """A string the library returned, as ``str``, freed with
    :data:`string_free`; NULL raises :func:`last_error`."""
    if not address:
        raise last_error()
    try:
        return ctypes.string_at(address).decode("utf-8")
    finally:
        string_free(address)


def callable_from_handle(handle: int) -> Any:
    """The :class:`dynd.Callable` of a ``dynd_callable`` handle (from
    :data:`callable_from_deferred` or :data:`callable_lookup`). The handle
    is borrowed: the caller still releases its reference with
    :data:`callable_decref`; the result holds its own.
    :class:`dynd.InvalidArgumentError` for NULL, a small or misaligned
    address, or readable memory that is not a live callable (dynd checks the
    handle's tag); an address that is not readable memory at all crashes,
    as it would in C."""
    if isinstance(handle, c_void_p):
        handle = handle.value
    if not isinstance(handle, int) or isinstance(handle, bool) or handle <= 0:
        raise InvalidArgumentError(f"a dynd_callable handle is a nonzero int address, not {handle!r}")
    return _dynd._callable_from_handle(handle)


def callable_handle(f: Any) -> int:
    """A new ``dynd_callable`` reference to :class:`dynd.Callable` ``f``
    (or a :func:`dynd.kernel`), for the C functions; release it with
    :data:`callable_decref`."""
    f = getattr(f, "callable", f)
    return _dynd._callable_handle(f)


__all__ = [
    "ASSIGN_DEFAULT",
    "ASSIGN_FRACTIONAL",
    "ASSIGN_INEXACT",
    "ASSIGN_NOCHECK",
    "ASSIGN_OVERFLOW",
    "BUILTIN_TYPE_ID_LIMIT",
    "ERR_ALLOC",
    "ERR_BROADCAST",
    "ERR_EXTERNAL",
    "ERR_FRACTIONAL",
    "ERR_INDEX",
    "ERR_INEXACT",
    "ERR_INVALID_ARGUMENT",
    "ERR_OVERFLOW",
    "ERR_PARSE",
    "ERR_TYPE",
    "FUNCTIONS",
    "KERNEL_REQUEST_SINGLE",
    "KERNEL_REQUEST_STRIDED",
    "OK",
    "TYPE_ID",
    "CKernelBuilderStruct",
    "CKernelPrefixStruct",
    "DeferredCKernelStruct",
    "DestructorFunc",
    "ExprSingleFunc",
    "ExprStridedFunc",
    "FreeFunc",
    "InstantiateFunc",
    "MemoryBlockStruct",
    "PodAllocateFunc",
    "PodAllocatorApiStruct",
    "PodFinalizeFunc",
    "PodResizeFunc",
    "ReleaseFunc",
    "callable_from_handle",
    "callable_handle",
    "last_error",
    "library",
    "take_string",
    *FUNCTIONS,
]
