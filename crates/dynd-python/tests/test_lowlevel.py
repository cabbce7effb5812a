"""``dynd._lowlevel``: the C ABI as ctypes, sharing the globals of
``dynd._dynd``."""

from __future__ import annotations

import ctypes
import gc
import os
import threading
import time
from ctypes import byref, c_double, c_void_p

import numpy as np
import pytest

import dynd
from dynd import _lowlevel as ll

SEED_NAMES = [
    "ckernel_builder_construct",
    "ckernel_builder_destruct",
    "ckernel_builder_reset",
    "ckernel_builder_ensure_capacity",
    "ckernel_builder_ensure_capacity_leaf",
    "memory_block_incref",
    "memory_block_decref",
    "memory_block_pod_allocator_api",
    "make_assignment_kernel",
    "callable_from_deferred",
]


def test_every_c_function_is_bound():
    exported = []
    for name in ll.FUNCTIONS:
        f = getattr(ll, name)
        assert isinstance(f, ctypes._CFuncPtr)  # noqa: SLF001
        assert f.argtypes is not None
        exported.append(name)
    for name in SEED_NAMES:
        assert name in exported
    assert len(exported) == 42
    assert dynd._lowlevel is ll


def test_structures():
    w = ctypes.sizeof(c_void_p)
    assert ctypes.sizeof(ll.CKernelBuilderStruct) == 18 * w
    assert ctypes.sizeof(ll.CKernelPrefixStruct) == 2 * w
    assert ctypes.sizeof(ll.DeferredCKernelStruct) == 6 * w
    assert ctypes.sizeof(ll.PodAllocatorApiStruct) == 3 * w
    assert (ll.ERR_EXTERNAL, ll.KERNEL_REQUEST_STRIDED, ll.ASSIGN_DEFAULT) == (10, 1, 4)


def test_builder_lifecycle():
    ckb = ll.CKernelBuilderStruct()
    ll.ckernel_builder_construct(byref(ckb))
    assert ckb.data == ctypes.addressof(ckb) + 2 * ctypes.sizeof(c_void_p)
    assert ckb.capacity == 128
    assert ll.ckernel_builder_ensure_capacity_leaf(byref(ckb), 4096) == 0
    assert ckb.capacity >= 4096
    assert ckb.data != ctypes.addressof(ckb.static_data)
    ll.ckernel_builder_reset(byref(ckb))
    assert ckb.capacity == 128
    assert ll.ckernel_builder_ensure_capacity(byref(ckb), 200) == 0
    assert ckb.capacity >= 200 + 2 * ctypes.sizeof(c_void_p)
    ll.ckernel_builder_destruct(byref(ckb))


def test_builder_errors():
    ckb = ll.CKernelBuilderStruct()
    ll.ckernel_builder_construct(byref(ckb))
    assert ll.ckernel_builder_ensure_capacity_leaf(byref(ckb), -1) == -1
    err = ll.last_error()
    assert isinstance(err, dynd.InvalidArgumentError)
    assert ll.ckernel_builder_ensure_capacity_leaf(None, 8) == -1
    assert ll.error_code() == ll.ERR_INVALID_ARGUMENT
    ll.ckernel_builder_destruct(byref(ckb))
    ll.error_clear()
    assert ll.error_code() == ll.OK


def test_assignment_kernel():
    ckb = ll.CKernelBuilderStruct()
    ll.ckernel_builder_construct(byref(ckb))
    i32, f64 = ll.TYPE_ID["int32"], ll.TYPE_ID["float64"]
    end = ll.make_assignment_kernel(
        byref(ckb), 0, f64, None, i32, None, ll.KERNEL_REQUEST_SINGLE, ll.ASSIGN_DEFAULT
    )
    assert end > 0
    prefix = ll.CKernelPrefixStruct.from_address(ckb.data)
    fn = ll.ExprSingleFunc(prefix.function)
    src = ctypes.c_int32(-7)
    dst = c_double(0.0)
    srcs = (c_void_p * 1)(ctypes.addressof(src))
    assert fn(ctypes.addressof(dst), srcs, ckb.data) == 0
    assert dst.value == -7.0
    ll.ckernel_builder_destruct(byref(ckb))
    # a pair that cannot be assigned
    ckb2 = ll.CKernelBuilderStruct()
    ll.ckernel_builder_construct(byref(ckb2))
    s = ll.type_from_datashape(b"string")
    assert ll.make_assignment_kernel(byref(ckb2), 0, f64, None, s, None, 0, 9) == -1
    assert ll.error_code() in (ll.ERR_INVALID_ARGUMENT, ll.ERR_TYPE)
    ll.type_decref(s)
    ll.ckernel_builder_destruct(byref(ckb2))


def test_types_and_strings():
    t = ll.type_from_datashape(b"3 * var * int32")
    assert t
    assert ll.take_string(ll.type_to_datashape(t)) == "3 * var * int32"
    assert ll.type_data_size(t) == 3 * ll.type_data_size(ll.type_from_datashape(b"var * int32"))
    assert ll.type_arrmeta_size(t) > 0
    ll.type_decref(t)
    assert ll.type_from_datashape(b"3 * ") is None
    assert isinstance(ll.last_error(), dynd.ParseError)
    assert ll.type_data_alignment(ll.TYPE_ID["float64"]) == 8


def test_arrays_and_memory_blocks():
    tp = ll.type_from_datashape(b"2 * var * float64")
    text = b"[[1.5, 2], [3]]"
    a = ll.array_from_json(tp, text, len(text))
    assert a
    assert ll.take_string(ll.array_to_json(a)) == "[[1.5,2.0],[3.0]]"
    mb = ll.array_data_reference(a)
    assert mb
    api = ll.memory_block_pod_allocator_api(mb)
    if api:
        assert api.contents.allocate
    else:
        assert ll.error_code() != ll.OK
    ll.memory_block_incref(mb)
    ll.memory_block_decref(mb)
    ll.array_decref(a)
    ll.type_decref(tp)


def test_callable_lookup_and_call():
    add = ll.callable_lookup(b"add")
    assert add
    tp = ll.type_from_datashape(b"3 * int32")
    a = ll.array_from_json(tp, b"[1, 2, 3]", 9)
    args = (c_void_p * 2)(a, a)
    r = ll.callable_call(add, 2, args)
    assert ll.take_string(ll.array_to_json(r)) == "[2,4,6]"
    ll.array_decref(r)
    ll.array_decref(a)
    ll.type_decref(tp)
    f = ll.callable_from_handle(add)
    ll.callable_decref(add)
    assert isinstance(f, dynd.Callable)
    assert f([1, 2], [10, 20]).to_list() == [11, 22]
    assert ll.callable_lookup(b"no_such_callable") is None
    assert isinstance(ll.last_error(), dynd.InvalidArgumentError)


def test_callable_handle_round_trip():
    h = ll.callable_handle(dynd.callable("multiply"))
    g = ll.callable_from_handle(h)
    ll.callable_decref(h)
    gc.collect()
    assert g([2, 3], 4).to_list() == [8, 12]


@pytest.mark.parametrize("bad", [0, None, -1, "add", 1.5])
def test_callable_from_handle_refuses(bad):
    with pytest.raises(dynd.InvalidArgumentError):
        ll.callable_from_handle(bad)


def test_callable_from_handle_refuses_non_callable_memory():
    # a readable, aligned object that is not a callable handle
    buf = (ctypes.c_uint64 * 4)(1, 2, 3, 4)
    with pytest.raises(dynd.InvalidArgumentError, match="not a valid dynd_callable"):
        ll.callable_from_handle(ctypes.addressof(buf))


# ---- a deferred ckernel built in pure ctypes -----------------------------------------

KERNEL_WORDS = 3  # prefix (2 words) + the offset to add


@ll.ExprSingleFunc
def _add_offset_single(dst, src, self_):
    offset = c_double.from_address(self_ + 2 * ctypes.sizeof(c_void_p)).value
    x = c_double.from_address(src[0]).value
    if x != x:
        ll.error_set(ll.ERR_EXTERNAL, b"add_offset: NaN refused")
        return -1
    c_double.from_address(dst).value = x + offset
    return 0


@ll.ExprStridedFunc
def _add_offset_strided(dst, dst_stride, src, src_stride, count, self_):
    for i in range(count):
        s = (c_void_p * 1)(src[0] + i * src_stride[0])
        r = _add_offset_single(dst + i * dst_stride, s, self_)
        if r != 0:
            return r
    return 0


def _instantiate(requests):
    @ll.InstantiateFunc
    def instantiate(self_data, ckb, ckb_offset, arrmeta, kernreq):
        if kernreq not in requests:
            ll.error_set(ll.ERR_INVALID_ARGUMENT, b"add_offset: unsupported kernel request")
            return -1
        end = ckb_offset + KERNEL_WORDS * ctypes.sizeof(c_void_p)
        if ll.ckernel_builder_ensure_capacity_leaf(ckb, end) != 0:
            return -1
        base = ckb.contents.data + ckb_offset
        prefix = ll.CKernelPrefixStruct.from_address(base)
        function = _add_offset_single if kernreq == ll.KERNEL_REQUEST_SINGLE else _add_offset_strided
        prefix.function = ctypes.cast(function, c_void_p).value
        prefix.destructor = None
        c_double.from_address(base + 2 * ctypes.sizeof(c_void_p)).value = c_double.from_address(self_data).value
        return end

    return instantiate


_add_offset_instantiate = _instantiate((ll.KERNEL_REQUEST_SINGLE, ll.KERNEL_REQUEST_STRIDED))
_single_only_instantiate = _instantiate((ll.KERNEL_REQUEST_SINGLE,))


_freed: list[int] = []
_live: dict[int, c_double] = {}


@ll.FreeFunc
def _free(ptr):
    _freed.append(ptr)
    _live.pop(ptr, None)


def _make_add_offset(offset, instantiate=_add_offset_instantiate):
    data = c_double(offset)
    ptr = ctypes.addressof(data)
    _live[ptr] = data
    # an earlier callable's data may have lived at this address
    _freed[:] = [p for p in _freed if p != ptr]
    f64 = ll.TYPE_ID["float64"]
    tps = (c_void_p * 2)(f64, f64)
    dck = ll.DeferredCKernelStruct(0, 2, tps, ptr, instantiate, _free)
    h = ll.callable_from_deferred(byref(dck))
    assert h, ll.last_error()
    assert dck.data_ptr is None  # taken over
    f = ll.callable_from_handle(h)
    ll.callable_decref(h)
    return f, ptr


def test_deferred_ckernel_in_pure_ctypes():
    f, ptr = _make_add_offset(0.25)
    assert f([[1.0, 2.0], [], [3.0]]).to_list() == [[1.25, 2.25], [], [3.25]]
    assert f(dynd.array([1.0, 2.0])[::-1]).to_list() == [2.25, 1.25]
    assert f(1.0).to_list() == 1.25
    with pytest.raises(dynd.ExternalError, match="NaN refused"):
        f([[1.0], [float("nan")]])
    assert ptr not in _freed
    del f
    gc.collect()
    assert _freed.count(ptr) == 1


def test_instantiate_refusal_reaches_the_caller():
    f, ptr = _make_add_offset(1.0, _single_only_instantiate)
    with pytest.raises(dynd.InvalidArgumentError, match="unsupported kernel request"):
        f([1.0, 2.0])
    del f
    gc.collect()
    assert _freed.count(ptr) == 1


def test_deferred_ckernel_bad_fields():
    f64 = ll.TYPE_ID["float64"]
    tps = (c_void_p * 1)(f64)
    dck = ll.DeferredCKernelStruct(0, 1, tps, None, _add_offset_instantiate, ll.FreeFunc())
    assert ll.callable_from_deferred(byref(dck)) is None
    assert isinstance(ll.last_error(), dynd.InvalidArgumentError)
    assert ll.callable_from_deferred(None) is None


@pytest.mark.skipif(
    (os.cpu_count() or 1) < 2 or os.environ.get("RAYON_NUM_THREADS", "") == "1",
    reason="dynd's worker pool has one thread",
)
def test_large_calls_run_third_party_kernels_on_several_threads():
    """dynd splits a large call into tasks on its worker threads, also for a
    kernel it did not write (each task calls the kernel on its own range)."""
    threads: set[int] = set()
    counts: list[int] = []

    @ll.ExprStridedFunc
    def record(dst, dst_stride, src, src_stride, count, self_):
        threads.add(threading.get_ident())
        counts.append(count)
        time.sleep(0.005)  # lets the other workers take their tasks
        return 0

    @ll.InstantiateFunc
    def instantiate(self_data, ckb, ckb_offset, arrmeta, kernreq):
        end = ckb_offset + 2 * ctypes.sizeof(c_void_p)
        if ll.ckernel_builder_ensure_capacity_leaf(ckb, end) != 0:
            return -1
        prefix = ll.CKernelPrefixStruct.from_address(ckb.contents.data + ckb_offset)
        prefix.function = ctypes.cast(record, c_void_p).value
        prefix.destructor = None
        return end

    f64 = ll.TYPE_ID["float64"]
    dck = ll.DeferredCKernelStruct(0, 2, (c_void_p * 2)(f64, f64), None, instantiate, ll.FreeFunc())
    h = ll.callable_from_deferred(byref(dck))
    f = ll.callable_from_handle(h)
    ll.callable_decref(h)
    f(dynd.asarray(np.zeros(1_000_000)))
    assert sum(counts) == 1_000_000
    assert len(counts) > 1
    assert len(threads) > 1
