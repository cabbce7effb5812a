#!/usr/bin/env python3
"""ctypes_demo.py -- dynd from Python through its C ABI, with ctypes only.

1. Types and arrays from datashape and JSON.
2. The registered callable "add" (looked up by name), or -- while it is not
   registered -- an "add" kernel written in Python.
3. A kernel written in Python handed to dynd: a CFUNCTYPE strided (and
   single) function inside a deferred ckernel, lifted by dynd over a
   var-dim array, with broadcasting; errors it reports with dynd_error_set
   come back as exceptions; its data is freed exactly once.

Exits non-zero on any mismatch. Find the library with DYND_CAPI_LIB or
`cargo build -p dynd-capi` (target/{release,debug}/libdynd_capi.so).

Threads: dynd runs large calls on its worker threads; ctypes callbacks take
the GIL themselves, so Python kernels work there too -- one element at a
time under the GIL, so keep Python kernels for small inputs (the Numba
example shows the fast path).
"""

import ctypes
import math
import os
import sys
import threading
from ctypes import c_double, c_int32, c_void_p

from dynd_capi import (
    DYND_ERR_EXTERNAL,
    DYND_ERR_INVALID_ARGUMENT,
    DYND_ERR_TYPE,
    DYND_KERNEL_REQUEST_SINGLE,
    DYND_KERNEL_REQUEST_STRIDED,
    EXPR_SINGLE,
    EXPR_STRIDED,
    FLOAT64,
    FREE_FN,
    INSTANTIATE_FN,
    INT32,
    Array,
    Callable,
    CKernelPrefix,
    DyndError,
    Type,
    lib,
    make_deferred,
    set_error,
)

failures = 0


def check(what, got, expected):
    global failures
    ok = got == expected
    print(f"  {'ok  ' if ok else 'FAIL'} {what}: {got}" + ("" if ok else f" (expected {expected})"))
    if not ok:
        failures += 1


# ---- a kernel family written in Python: dst = src * factor on float64 -------


class ScaleKernel(ctypes.Structure):
    """The ckernel: the prefix, then the factor it was built with."""

    _fields_ = [("base", CKernelPrefix), ("factor", c_double)]


def scale_value(dst, src, factor):
    v = c_double.from_address(src).value
    if math.isnan(v):
        set_error(DYND_ERR_EXTERNAL, "python scale kernel: NaN refused")
        return -1
    c_double.from_address(dst).value = v * factor
    return 0


@EXPR_SINGLE
def scale_single(dst, src, self):
    try:
        return scale_value(dst, src[0], ScaleKernel.from_address(self).factor)
    except Exception as e:  # never let an exception vanish in a callback
        set_error(DYND_ERR_EXTERNAL, f"python scale kernel: {e!r}")
        return -1


threads_seen = set()


@EXPR_STRIDED
def scale_strided(dst, dst_stride, src, src_stride, count, self):
    threads_seen.add(threading.get_ident())
    try:
        factor = ScaleKernel.from_address(self).factor
        s, ss = src[0], src_stride[0]
        for i in range(count):
            if scale_value(dst + i * dst_stride, s + i * ss, factor) != 0:
                return -1
        return 0
    except Exception as e:
        set_error(DYND_ERR_EXTERNAL, f"python scale kernel: {e!r}")
        return -1


# The family's data: data_ptr is a token for a Python object in this table.
families = {}
next_token = [1]
freed = []


@INSTANTIATE_FN
def scale_instantiate(self_data, ckb, ckb_offset, arrmeta, kernreq):
    try:
        end = ckb_offset + ctypes.sizeof(ScaleKernel)
        # Room first; only then write at ckb->data + offset (it may move).
        if lib.dynd_ckernel_builder_ensure_capacity_leaf(ckb, end) != 0:
            return -1
        k = ScaleKernel.from_address(ckb.contents.data + ckb_offset)
        if kernreq == DYND_KERNEL_REQUEST_SINGLE:
            k.base.function = ctypes.cast(scale_single, c_void_p).value
        elif kernreq == DYND_KERNEL_REQUEST_STRIDED:
            k.base.function = ctypes.cast(scale_strided, c_void_p).value
        else:
            set_error(DYND_ERR_INVALID_ARGUMENT, f"python scale kernel: request {kernreq}")
            return -1
        k.base.destructor = None  # owns nothing
        k.factor = families[self_data]["factor"]
        return end
    except Exception as e:
        set_error(DYND_ERR_EXTERNAL, f"python scale instantiate: {e!r}")
        return -1


@FREE_FN
def scale_free(self_data):
    freed.append(self_data)
    del families[self_data]


def make_scale(factor):
    token = next_token[0]
    next_token[0] += 1
    families[token] = {"factor": float(factor)}
    dck = make_deferred([FLOAT64, FLOAT64], token, scale_instantiate, scale_free)
    f = Callable.from_deferred(dck)
    assert dck.data_ptr is None and not dck.free_func, "from_deferred clears *dck"
    return f, token


# ---- "add" in Python, for while dynd has no "add" registered ----------------


@EXPR_STRIDED
def add_strided(dst, dst_stride, src, src_stride, count, self):
    a, b, sa, sb = src[0], src[1], src_stride[0], src_stride[1]
    for i in range(count):
        x = c_int32.from_address(a + i * sa).value
        y = c_int32.from_address(b + i * sb).value
        c_int32.from_address(dst + i * dst_stride).value = x + y
    return 0


@EXPR_SINGLE
def add_single(dst, src, self):
    return add_strided(dst, 0, src, (ctypes.c_ssize_t * 2)(0, 0), 1, self)


@INSTANTIATE_FN
def add_instantiate(self_data, ckb, ckb_offset, arrmeta, kernreq):
    end = ckb_offset + ctypes.sizeof(CKernelPrefix)
    if lib.dynd_ckernel_builder_ensure_capacity_leaf(ckb, end) != 0:
        return -1
    k = CKernelPrefix.from_address(ckb.contents.data + ckb_offset)
    fn = add_single if kernreq == DYND_KERNEL_REQUEST_SINGLE else add_strided
    k.function = ctypes.cast(fn, c_void_p).value
    return end


def get_add():
    try:
        return Callable.lookup("add"), "dynd's registered 'add'"
    except DyndError as e:
        print(f"  (dynd has no 'add' registered yet -- {e.message.split(' (known')[0]};")
        print("   using an add kernel written in Python instead)")
        dck = make_deferred([INT32, INT32, INT32], None, add_instantiate, FREE_FN())
        return Callable.from_deferred(dck), "a Python ctypes 'add' kernel"


def main():
    print("types and arrays:")
    tp = Type.parse("3 * var * {x: int32, name: string}")
    check("datashape round trip", str(tp), "3 * var * {x: int32, name: string}")
    a = Array.from_json("2 * var * float64", "[[1, 2.5], [-3]]")
    check("array from JSON", (a.to_json(), str(a.type)), ("[[1.0,2.5],[-3.0]]", "2 * var * float64"))
    try:
        Array.from_json("int8", "300")
        check("int8 <- 300 refused", "accepted", "an overflow error")
    except DyndError as e:
        check("int8 <- 300 refused", (e.code, e.message), (3, "JSON line 1, column 1: 300 is out of range for int8"))

    print("add:")
    add, which = get_add()
    print(f"  using {which}")
    x = Array.from_json("3 * var * int32", "[[1, 2, 3], [], [4, 5]]")
    ten = Array.from_json("int32", "10")
    r = add(x, ten)
    check("[[1,2,3],[],[4,5]] + 10", (r.to_json(), str(r.type)), ("[[11,12,13],[],[14,15]]", "3 * var * int32"))
    r = add(x, Array.from_json("3 * 1 * int32", "[[100], [200], [300]]"))
    check("broadcast against 3 * 1", r.to_json(), "[[101,102,103],[],[304,305]]")
    del add, r

    print("a kernel written in Python, lifted by dynd:")
    scale, token = make_scale(3)
    v = Array.from_json("3 * var * float64", "[[1, 2, 3], [], [0.5, -4]]")
    r = scale(v)
    check("scale3 over 3 * var * float64", (r.to_json(), str(r.type)), ("[[3.0,6.0,9.0],[],[1.5,-12.0]]", "3 * var * float64"))
    r = scale(Array.from_json("float64", "2.25"))
    check("scale3 of a scalar", r.to_json(), "6.75")
    try:
        scale(Array.from_json("2 * var * float64", "[[1], [NaN]]"))
        check("NaN refused", "accepted", "an error")
    except DyndError as e:
        check("NaN refused by the Python kernel", (e.code, e.message), (DYND_ERR_EXTERNAL, "python scale kernel: NaN refused"))
    try:
        scale(Array.from_json("2 * int32", "[1, 2]"))
        check("int32 refused", "accepted", "a type error")
    except DyndError as e:
        check("int32 arguments refused", e.code, DYND_ERR_TYPE)

    # Large enough for dynd's parallel outer loop: the Python kernel is then
    # called from dynd's worker threads (ctypes takes the GIL for it).
    n = 140_000
    big = Array.empty(f"{n} * float64")
    buf = (c_double * n).from_address(big.data)
    for i in range(n):
        buf[i] = i
    threads_seen.clear()
    r = scale(big)
    out = (c_double * n).from_address(r.data)
    check(f"scale3 over {n} elements (parallel outer loop)", all(out[i] == 3 * i for i in range(n)), True)
    workers = threads_seen - {threading.get_ident()}
    print(f"  (the Python kernel ran on {len(workers)} dynd worker thread(s))")
    if (os.cpu_count() or 1) > 1:
        check("ran on dynd's worker threads", len(workers) > 0, True)
    del out, buf, r, big

    check("data not freed while the callable lives", token in freed, False)
    del scale
    check("data freed exactly once after the last reference", freed.count(token), 1)

    print(f"ctypes demo: {'all checks passed' if failures == 0 else f'{failures} FAILED'}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
