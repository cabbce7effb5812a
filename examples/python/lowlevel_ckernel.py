#!/usr/bin/env python3
"""lowlevel_ckernel.py -- a ckernel built in pure ctypes with dynd._lowlevel,
handed to dynd as a deferred ckernel and run over ragged data.

The kernel family clamps a float64 into ``[lo, hi]``; ``lo`` and ``hi`` are
the family's data (``self_data``), which the instantiate function copies
into each kernel it builds, after the prefix:

    struct clamp_kernel { dynd_ckernel_prefix prefix; double lo, hi; };

``instantiate`` makes room with ``_lowlevel.ckernel_builder_ensure_capacity_
leaf``, then writes the prefix (the single or the strided function, as
requested; no destructor: the kernel owns nothing) and the bounds into the
builder. ``_lowlevel.callable_from_deferred`` makes a ``dynd_callable`` of
it; ``_lowlevel.callable_from_handle`` turns that into a ``dynd.Callable``,
which dynd lifts over ``var`` dims with broadcasting like its own.

Kernels written in Python run with the GIL (ctypes takes it for each call),
so this is for trying the ABI out; compiled kernels (Numba, C) are the ones
to use for speed -- see numba_ragged_kernel.py.

Exits non-zero on any mismatch.

    python examples/python/lowlevel_ckernel.py
"""

from __future__ import annotations

import ctypes
import gc
import sys
from ctypes import byref, c_double, c_void_p, sizeof

import dynd
from dynd import _lowlevel as ll

WORD = sizeof(c_void_p)
KERNEL_SIZE = 2 * WORD + 2 * sizeof(c_double)  # prefix, lo, hi


class ClampData(ctypes.Structure):
    """The family's data, and the kernel's after the prefix."""

    _fields_ = [("lo", c_double), ("hi", c_double)]


def bounds_of(kernel_address):
    return ClampData.from_address(kernel_address + 2 * WORD)


def clamp_one(dst, src, bounds):
    x = c_double.from_address(src).value
    if x != x:
        ll.error_set(ll.ERR_EXTERNAL, b"clamp: NaN has no place in [lo, hi]")
        return -1
    c_double.from_address(dst).value = min(max(x, bounds.lo), bounds.hi)
    return 0


@ll.ExprSingleFunc
def clamp_single(dst, src, self_):
    return clamp_one(dst, src[0], bounds_of(self_))


@ll.ExprStridedFunc
def clamp_strided(dst, dst_stride, src, src_stride, count, self_):
    bounds = bounds_of(self_)
    s, ss = src[0], src_stride[0]
    for i in range(count):
        if clamp_one(dst + i * dst_stride, s + i * ss, bounds) != 0:
            return -1
    return 0


FUNCTIONS = {
    ll.KERNEL_REQUEST_SINGLE: ctypes.cast(clamp_single, c_void_p).value,
    ll.KERNEL_REQUEST_STRIDED: ctypes.cast(clamp_strided, c_void_p).value,
}


@ll.InstantiateFunc
def clamp_instantiate(self_data, ckb, ckb_offset, arrmeta, kernreq):
    function = FUNCTIONS.get(kernreq)
    if function is None:
        ll.error_set(ll.ERR_INVALID_ARGUMENT, f"clamp: unknown kernel request {kernreq}".encode())
        return -1
    end = ckb_offset + KERNEL_SIZE
    # Room first: growing the builder may move its data.
    if ll.ckernel_builder_ensure_capacity_leaf(ckb, end) != 0:
        return -1
    base = ckb.contents.data + ckb_offset
    prefix = ll.CKernelPrefixStruct.from_address(base)
    prefix.function = function
    prefix.destructor = None
    ctypes.memmove(base + 2 * WORD, self_data, sizeof(ClampData))
    return end


live = {}  # data_ptr -> ClampData, alive until dynd frees it
freed = []


@ll.FreeFunc
def clamp_free(data_ptr):
    freed.append(data_ptr)
    live.pop(data_ptr, None)


def make_clamp(lo, hi):
    data = ClampData(lo, hi)
    ptr = ctypes.addressof(data)
    live[ptr] = data
    f64 = ll.TYPE_ID["float64"]
    types = (c_void_p * 2)(f64, f64)  # the destination, then the source
    dck = ll.DeferredCKernelStruct(0, 2, types, ptr, clamp_instantiate, clamp_free)
    handle = ll.callable_from_deferred(byref(dck))
    if not handle:
        raise ll.last_error()
    f = ll.callable_from_handle(handle)
    ll.callable_decref(handle)  # f holds its own reference
    return f, ptr


failures = 0


def check(what, ok, detail=""):
    global failures
    print(f"  {'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail else ""))
    failures += not ok


def main():
    clamp, ptr = make_clamp(0.0, 10.0)
    print(f"a deferred ckernel from ctypes: {clamp!r}")

    rows = [[-5.0, 3.5, 12.0], [], [7.25], [100.0, -0.5]]
    r = clamp(dynd.array(rows))
    want = [[min(max(x, 0.0), 10.0) for x in row] for row in rows]
    check("lifted over 4 * var * float64", r.to_list() == want, str(r.to_list()))
    check("the result type", str(r.type) == "4 * var * float64", str(r.type))

    nested = [[[1.0, 20.0]], [], [[-3.0], [4.0, 5.0, 11.0]]]
    r = clamp(dynd.array(nested, type="var * var * var * float64"))
    check(
        "lifted over var * var * var * float64",
        r.to_list() == [[[min(max(x, 0.0), 10.0) for x in c] for c in b] for b in nested],
    )

    r = clamp(dynd.array([3.0, -1.0, 42.0])[::-1])
    check("a reversed view (negative stride)", r.to_list() == [10.0, 0.0, 3.0], str(r.to_list()))

    try:
        clamp(dynd.array([[1.0], [float("nan")]]))
        check("NaN refused", False, "no error")
    except dynd.ExternalError as e:
        check("NaN refused by the kernel -> dynd.ExternalError", "NaN has no place" in str(e), str(e))

    # Through the C ABI too: dynd_callable_call on a dynd_array handle.
    h = ll.callable_handle(clamp)
    tp = ll.type_from_datashape(b"var * float64")
    text = b"[-1, 5, 50]"
    arr = ll.array_from_json(tp, text, len(text))
    out = ll.callable_call(h, 1, (c_void_p * 1)(arr))
    check("dynd_callable_call on a dynd_array", out and ll.take_string(ll.array_to_json(out)) == "[0.0,5.0,10.0]")
    for handle, decref in ((out, ll.array_decref), (arr, ll.array_decref), (tp, ll.type_decref), (h, ll.callable_decref)):
        decref(handle)

    check("the family's data is alive while the callable is", ptr not in freed)
    del clamp
    gc.collect()
    check("dynd freed the family's data exactly once", freed.count(ptr) == 1, str(freed))

    print(f"lowlevel ckernel: {'all checks passed' if failures == 0 else f'{failures} FAILED'}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
