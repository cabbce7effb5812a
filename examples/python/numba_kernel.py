#!/usr/bin/env python3
"""numba_kernel.py -- a Numba-compiled kernel handed to dynd (the seeds' story).

A `numba.cfunc` with dynd's strided prototype (and one with the single
prototype) becomes the kernel of a deferred ckernel. Its instantiate
function is a `numba.cfunc` too: it calls dynd_ckernel_builder_ensure_
capacity_leaf through ctypes from compiled code and writes the kernel
(prefix + factor) into the builder. dynd then lifts the kernel over a
var-dim array, broadcasts it, and runs large inputs on its worker threads --
compiled code, so no GIL is involved.

Kernel: dst = src * factor on float64; NaN is refused with
dynd_error_set(DYND_ERR_EXTERNAL, ...), which comes back as an exception.

Exits non-zero on any mismatch.
"""

import ctypes
import sys
from ctypes import POINTER, c_double, c_int, c_ssize_t, c_void_p

import numpy as np
from numba import cfunc, types

from dynd_capi import (
    DYND_ERR_EXTERNAL,
    DYND_ERR_INVALID_ARGUMENT,
    DYND_KERNEL_REQUEST_SINGLE,
    DYND_KERNEL_REQUEST_STRIDED,
    FLOAT64,
    FREE_FN,
    INSTANTIATE_FN,
    Array,
    Callable,
    DyndError,
    lib,
    make_deferred,
)

# ---- C functions the compiled code calls (through ctypes pointers) ----------

_addr = lambda f: ctypes.cast(f, c_void_p).value  # noqa: E731
# int dynd_ckernel_builder_ensure_capacity_leaf(dynd_ckernel_builder *, intptr_t);
# the builder typed as intptr_t ** (its first word is `data`).
ensure_capacity_leaf = ctypes.CFUNCTYPE(c_int, POINTER(POINTER(c_ssize_t)), c_ssize_t)(
    _addr(lib.dynd_ckernel_builder_ensure_capacity_leaf)
)
# void dynd_error_set(int, const char *)
error_set = ctypes.CFUNCTYPE(None, c_int, c_void_p)(_addr(lib.dynd_error_set))
NAN_MESSAGE = ctypes.create_string_buffer(b"numba scale kernel: NaN refused")
NAN_MESSAGE_ADDR = ctypes.addressof(NAN_MESSAGE)
STRIDE_MESSAGE = ctypes.create_string_buffer(b"numba scale kernel: float64 strides must be multiples of 8")
STRIDE_MESSAGE_ADDR = ctypes.addressof(STRIDE_MESSAGE)
REQUEST_MESSAGE = ctypes.create_string_buffer(b"numba scale kernel: unknown kernel request")
REQUEST_MESSAGE_ADDR = ctypes.addressof(REQUEST_MESSAGE)

f64p = types.CPointer(types.float64)

# ---- the kernel: {prefix (2 words); double factor;} --------------------------


# int (*)(char *dst, const char *const *src, dynd_ckernel_prefix *self)
@cfunc(types.int32(f64p, types.CPointer(f64p), f64p), nopython=True)
def scale_single(dst, src, self):
    v = src[0][0]
    if v != v:
        error_set(DYND_ERR_EXTERNAL, NAN_MESSAGE_ADDR)
        return -1
    dst[0] = v * self[2]  # the factor, two words past the prefix start
    return 0


# int (*)(char *dst, intptr_t dst_stride, const char *const *src,
#         const intptr_t *src_stride, size_t count, dynd_ckernel_prefix *self)
@cfunc(
    types.int32(f64p, types.intp, types.CPointer(f64p), types.CPointer(types.intp), types.uintp, f64p),
    nopython=True,
)
def scale_strided(dst, dst_stride, src, src_stride, count, self):
    if dst_stride % 8 != 0 or src_stride[0] % 8 != 0:
        error_set(DYND_ERR_EXTERNAL, STRIDE_MESSAGE_ADDR)
        return -1
    factor = self[2]
    s = src[0]
    ds = dst_stride // 8
    ss = src_stride[0] // 8  # 0 when dynd broadcasts the source
    for i in range(count):
        v = s[i * ss]
        if v != v:
            error_set(DYND_ERR_EXTERNAL, NAN_MESSAGE_ADDR)
            return -1
        dst[i * ds] = v * factor
    return 0


SINGLE_ADDR = scale_single.address
STRIDED_ADDR = scale_strided.address
KERNEL_SIZE = 3 * 8  # prefix + factor


# intptr_t (*)(void *self_data, dynd_ckernel_builder *ckb, intptr_t ckb_offset,
#              const char *const *arrmeta, uint32_t kernreq)
# self_data is the family's data: one double, read here as its 8 bytes.
@cfunc(
    types.intp(types.CPointer(types.intp), types.CPointer(types.CPointer(types.intp)), types.intp, types.voidptr, types.uint32),
    nopython=True,
)
def scale_instantiate(self_data, ckb, ckb_offset, arrmeta, kernreq):
    if kernreq == DYND_KERNEL_REQUEST_SINGLE:
        function = SINGLE_ADDR
    elif kernreq == DYND_KERNEL_REQUEST_STRIDED:
        function = STRIDED_ADDR
    else:
        error_set(DYND_ERR_INVALID_ARGUMENT, REQUEST_MESSAGE_ADDR)
        return -1
    end = ckb_offset + KERNEL_SIZE
    if ensure_capacity_leaf(ckb, end) != 0:
        return -1
    k = ckb[0]  # ckb->data, after the growth
    w = ckb_offset // 8
    k[w] = function  # prefix.function
    k[w + 1] = 0  # prefix.destructor: owns nothing
    k[w + 2] = self_data[0]  # the factor's bits
    return end


# ---- the family's data, freed by dynd exactly once ---------------------------

live_data = {}
freed = []


@FREE_FN
def free_factor(ptr):
    freed.append(ptr)
    del live_data[ptr]


def make_scale(factor):
    data = c_double(factor)
    ptr = ctypes.addressof(data)
    live_data[ptr] = data
    dck = make_deferred([FLOAT64, FLOAT64], ptr, INSTANTIATE_FN(scale_instantiate.address), free_factor)
    return Callable.from_deferred(dck), ptr


failures = 0


def check(what, ok, detail=""):
    global failures
    print(f"  {'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail else ""))
    failures += not ok


def main():
    scale, ptr = make_scale(2.5)

    x = Array.from_json("3 * var * float64", "[[1, 2, 3], [], [4, -0.5]]")
    r = scale(x)
    check("lifted over 3 * var * float64", (r.to_json(), str(r.type)) == ("[[2.5,5.0,7.5],[],[10.0,-1.25]]", "3 * var * float64"), r.to_json())

    r = scale(Array.from_json("var * var * float64", "[[1], [2, 4]]"))
    check("lifted over var * var * float64", r.to_json() == "[[2.5],[5.0,10.0]]", r.to_json())

    try:
        scale(Array.from_json("2 * var * float64", "[[1], [2, NaN]]"))
        check("NaN refused", False, "accepted")
    except DyndError as e:
        check("NaN refused by the compiled kernel", (e.code, e.message) == (DYND_ERR_EXTERNAL, "numba scale kernel: NaN refused"), f"{e.code}: {e.message}")

    # A large call: dynd runs the outer loop on its worker threads.
    n = 1_000_000
    big = Array.empty(f"{n} * float64")
    src = np.ctypeslib.as_array((c_double * n).from_address(big.data))
    src[:] = np.arange(n, dtype=np.float64)
    r = scale(big)
    out = np.ctypeslib.as_array((c_double * n).from_address(r.data))
    check(f"{n:,} elements (parallel outer loop) equal numpy's", bool(np.array_equal(out, src * 2.5)))
    del out, src, r, big

    check("the factor is not freed while the callable lives", ptr not in freed)
    del scale
    check("the factor is freed exactly once with the callable", freed.count(ptr) == 1)

    print(f"numba kernel: {'all checks passed' if failures == 0 else f'{failures} FAILED'}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
