"""dynd_capi.py -- thin ctypes bindings for libdynd_capi.so (include/dynd.h).

Used by ctypes_demo.py and numba_kernel.py. Pure ctypes, no dependencies.

The library is found through the environment variable DYND_CAPI_LIB (a path
to libdynd_capi.so), else in target/release or target/debug of this
repository (build it with `cargo build -p dynd-capi`).

Ownership follows the header: every handle a function returns is a new
reference, released here by the wrapper objects (Type, Array, Callable) when
they are garbage collected.
"""

import ctypes
import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_int,
    c_size_t,
    c_ssize_t,
    c_uint32,
    c_void_p,
)
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def find_library():
    """The path of libdynd_capi.so: $DYND_CAPI_LIB, else target/{release,debug}."""
    env = os.environ.get("DYND_CAPI_LIB")
    if env:
        if not Path(env).is_file():
            raise FileNotFoundError(f"DYND_CAPI_LIB={env} is not a file")
        return env
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / "libdynd_capi.so"
        if p.is_file():
            return str(p)
    raise FileNotFoundError(
        "libdynd_capi.so not found: set DYND_CAPI_LIB or run `cargo build -p dynd-capi`"
    )


# ---- the header's constants -------------------------------------------------

DYND_OK = 0
DYND_ERR_INVALID_ARGUMENT = 1
DYND_ERR_TYPE = 2
DYND_ERR_OVERFLOW = 3
DYND_ERR_FRACTIONAL = 4
DYND_ERR_INEXACT = 5
DYND_ERR_INDEX = 6
DYND_ERR_BROADCAST = 7
DYND_ERR_PARSE = 8
DYND_ERR_ALLOC = 9
DYND_ERR_EXTERNAL = 10

DYND_KERNEL_REQUEST_SINGLE = 0
DYND_KERNEL_REQUEST_STRIDED = 1

# Builtin type ids (DESIGN section 3): a dynd_type below 64 is one of these.
INT32 = 4
INT64 = 5
FLOAT64 = 14

# ---- the header's structs and function types --------------------------------


class CKernelPrefix(Structure):
    """dynd_ckernel_prefix: {void *function; void (*destructor)(self);}"""

    _fields_ = [("function", c_void_p), ("destructor", c_void_p)]


class CKernelBuilder(Structure):
    """dynd_ckernel_builder: 18 words; never moved while constructed."""

    _fields_ = [("data", c_void_p), ("capacity", c_ssize_t), ("static_data", c_ssize_t * 16)]


# int (*)(char *dst, const char *const *src, dynd_ckernel_prefix *self)
EXPR_SINGLE = CFUNCTYPE(c_int, c_void_p, POINTER(c_void_p), c_void_p)
# int (*)(char *dst, intptr_t dst_stride, const char *const *src,
#         const intptr_t *src_stride, size_t count, dynd_ckernel_prefix *self)
EXPR_STRIDED = CFUNCTYPE(
    c_int, c_void_p, c_ssize_t, POINTER(c_void_p), POINTER(c_ssize_t), c_size_t, c_void_p
)
# intptr_t (*)(void *self_data, dynd_ckernel_builder *ckb, intptr_t ckb_offset,
#              const char *const *arrmeta, uint32_t kernreq)
INSTANTIATE_FN = CFUNCTYPE(
    c_ssize_t, c_void_p, POINTER(CKernelBuilder), c_ssize_t, POINTER(c_void_p), c_uint32
)
FREE_FN = CFUNCTYPE(None, c_void_p)


class DeferredCKernel(Structure):
    """dynd_deferred_ckernel: six words."""

    _fields_ = [
        ("ckernel_funcproto", c_size_t),
        ("data_types_size", c_size_t),
        ("data_dynd_types", POINTER(c_void_p)),
        ("data_ptr", c_void_p),
        ("instantiate_func", INSTANTIATE_FN),
        ("free_func", FREE_FN),
    ]


assert ctypes.sizeof(CKernelBuilder) == 18 * ctypes.sizeof(c_void_p)
assert ctypes.sizeof(DeferredCKernel) == 6 * ctypes.sizeof(c_void_p)

# ---- the library -------------------------------------------------------------

# CDLL (not PyDLL): the GIL is released during each call, so kernels written
# in Python that dynd runs on its worker threads can take it.
lib = ctypes.CDLL(find_library())

_PROTOTYPES = {
    "dynd_error_code": (c_int, []),
    "dynd_error_message": (c_char_p, []),
    "dynd_error_set": (None, [c_int, c_char_p]),
    "dynd_error_clear": (None, []),
    "dynd_string_free": (None, [c_void_p]),
    "dynd_type_from_datashape": (c_void_p, [c_char_p]),
    "dynd_type_to_datashape": (c_void_p, [c_void_p]),
    "dynd_type_incref": (None, [c_void_p]),
    "dynd_type_decref": (None, [c_void_p]),
    "dynd_type_data_size": (c_size_t, [c_void_p]),
    "dynd_array_empty": (c_void_p, [c_void_p]),
    "dynd_array_from_json": (c_void_p, [c_void_p, c_char_p, c_size_t]),
    "dynd_array_to_json": (c_void_p, [c_void_p]),
    "dynd_array_type": (c_void_p, [c_void_p]),
    "dynd_array_data": (c_void_p, [c_void_p]),
    "dynd_array_arrmeta": (c_void_p, [c_void_p]),
    "dynd_array_incref": (None, [c_void_p]),
    "dynd_array_decref": (None, [c_void_p]),
    "dynd_ckernel_builder_ensure_capacity_leaf": (c_int, [POINTER(CKernelBuilder), c_ssize_t]),
    "dynd_callable_from_deferred": (c_void_p, [POINTER(DeferredCKernel)]),
    "dynd_callable_lookup": (c_void_p, [c_char_p]),
    "dynd_callable_call": (c_void_p, [c_void_p, c_size_t, POINTER(c_void_p)]),
    "dynd_callable_incref": (None, [c_void_p]),
    "dynd_callable_decref": (None, [c_void_p]),
}
for _name, (_res, _args) in _PROTOTYPES.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args


class DyndError(Exception):
    """An error from the library: its DYND_ERR_* code and message."""

    def __init__(self, code, message):
        super().__init__(f"dynd error {code}: {message}")
        self.code = code
        self.message = message


def last_error():
    return DyndError(lib.dynd_error_code(), lib.dynd_error_message().decode("utf-8", "replace"))


def _checked(handle):
    if not handle:
        raise last_error()
    return handle


def _take_string(ptr):
    """A library string as a Python str, freeing it."""
    ptr = _checked(ptr)
    try:
        return ctypes.string_at(ptr).decode("utf-8")
    finally:
        lib.dynd_string_free(ptr)


class Type:
    """A dynd_type reference (builtins are plain ids and never counted)."""

    def __init__(self, handle, owned=True):
        self.handle = handle
        if not owned:
            lib.dynd_type_incref(handle)

    @classmethod
    def parse(cls, datashape):
        return cls(_checked(lib.dynd_type_from_datashape(datashape.encode())))

    def __str__(self):
        return _take_string(lib.dynd_type_to_datashape(self.handle))

    def __del__(self):
        if lib is not None and getattr(self, "handle", None):
            lib.dynd_type_decref(self.handle)


class Array:
    """A dynd_array reference."""

    def __init__(self, handle):
        self.handle = handle

    @classmethod
    def from_json(cls, datashape, json):
        tp = Type.parse(datashape)
        data = json.encode()
        return cls(_checked(lib.dynd_array_from_json(tp.handle, data, len(data))))

    @classmethod
    def empty(cls, datashape):
        tp = Type.parse(datashape)
        return cls(_checked(lib.dynd_array_empty(tp.handle)))

    @property
    def type(self):
        return Type(_checked(lib.dynd_array_type(self.handle)), owned=False)

    @property
    def data(self):
        """The address of the array's data (valid while the array lives)."""
        return lib.dynd_array_data(self.handle)

    def to_json(self):
        return _take_string(lib.dynd_array_to_json(self.handle))

    def __del__(self):
        if lib is not None and getattr(self, "handle", None):
            lib.dynd_array_decref(self.handle)


class Callable:
    """A dynd_callable reference."""

    def __init__(self, handle):
        self.handle = handle

    @classmethod
    def lookup(cls, name):
        return cls(_checked(lib.dynd_callable_lookup(name.encode())))

    @classmethod
    def from_deferred(cls, dck):
        """Takes over a DeferredCKernel (it is cleared; its free_func runs once)."""
        return cls(_checked(lib.dynd_callable_from_deferred(ctypes.byref(dck))))

    def __call__(self, *args):
        handles = (c_void_p * len(args))(*[a.handle for a in args])
        return Array(_checked(lib.dynd_callable_call(self.handle, len(args), handles)))

    def __del__(self):
        if lib is not None and getattr(self, "handle", None):
            lib.dynd_callable_decref(self.handle)


def make_deferred(types, data_ptr, instantiate, free):
    """A DeferredCKernel for (dst, *srcs) type ids/handles.

    `instantiate` and `free` are INSTANTIATE_FN / FREE_FN objects; keep them
    alive for as long as the callable lives (module globals are simplest).
    The types array is only read by dynd_callable_from_deferred.
    """
    tps = (c_void_p * len(types))(*types)
    dck = DeferredCKernel(0, len(types), tps, data_ptr, instantiate, free)
    dck._keep = tps  # alive until from_deferred has read it
    return dck


def set_error(code, message):
    """dynd_error_set from a kernel written in Python."""
    lib.dynd_error_set(code, message.encode())
