"""Zero-copy interop (DESIGN §11, §12): NumPy (``__array__`` and the buffer
protocol, both ways), memoryview, DLPack and the Arrow PyCapsule interface.

Zero-copy is checked by writing through one side and reading the other,
lifetimes by deleting the producer and reading the consumer, and bad
inputs raise the §11 classes (or the builtin a protocol demands) without
crashing the interpreter.
"""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynd

pa = pytest.importorskip("pyarrow")

NUMERIC = [
    ("bool", np.bool_),
    ("int8", np.int8),
    ("int16", np.int16),
    ("int32", np.int32),
    ("int64", np.int64),
    ("uint8", np.uint8),
    ("uint16", np.uint16),
    ("uint32", np.uint32),
    ("uint64", np.uint64),
    ("float16", np.float16),
    ("float32", np.float32),
    ("float64", np.float64),
    ("complex64", np.complex64),
    ("complex128", np.complex128),
]


def values_of(np_dtype, n):
    """n distinct-ish values of the dtype, as Python objects."""
    if np_dtype is np.bool_:
        return [i % 3 == 0 for i in range(n)]
    if np.issubdtype(np_dtype, np.complexfloating):
        return [complex(i, -i) for i in range(n)]
    if np.issubdtype(np_dtype, np.floating):
        return [i + 0.5 for i in range(n)]
    return list(range(n))


def other_value(np_dtype):
    if np_dtype is np.bool_:
        return False
    if np.issubdtype(np_dtype, np.complexfloating):
        return complex(7, 7)
    return 99


def dlpack_data_address(obj):
    """The data address a DLPack producer exports (data + byte_offset), read
    with ctypes from its versioned capsule: the pointer of the producer's
    own memory, independent of the buffer protocol."""
    cap = obj.__dlpack__(max_version=(1, 0))
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    p = get(cap, b"dltensor_versioned")
    # DLManagedTensorVersioned: version (8), manager_ctx (8), deleter (8),
    # flags (8), then the DLTensor: data (8), device (8), ndim (4),
    # dtype (4), shape (8), strides (8), byte_offset (8).
    data = ctypes.c_void_p.from_address(p + 32).value or 0
    byte_offset = ctypes.c_uint64.from_address(p + 32 + 40).value
    return data + byte_offset


def np_address(x):
    return x.__array_interface__["data"][0]


# ---- dynd → NumPy -------------------------------------------------------


@pytest.mark.parametrize(("name", "np_dtype"), NUMERIC)
def test_np_asarray_is_a_writable_view_of_every_numeric_type(name, np_dtype):
    vals = values_of(np_dtype, 6)
    a = dynd.array(vals, type=f"6 * {name}")
    x = np.asarray(a)
    assert x.dtype == np.dtype(np_dtype)
    assert x.shape == (6,)
    assert x.tolist() == a.to_list()
    assert x.flags.writeable
    # Writing through NumPy is seen by dynd and the other way round.
    x[1] = other_value(np_dtype)
    assert a[1].to_list() == x[1].item()
    a[2] = dynd.array([vals[0]], type=f"1 * {name}")[0]
    assert x[2].item() == vals[0]
    assert np_address(x) == dlpack_data_address(a)


@pytest.mark.parametrize(("name", "np_dtype"), NUMERIC)
def test_views_with_negative_and_strided_steps(name, np_dtype):
    vals = values_of(np_dtype, 12)
    a = dynd.array(vals, type=f"12 * {name}").reshape(3, 4)
    expected = np.array(vals, dtype=np_dtype).reshape(3, 4)
    for key in [(slice(None, None, -1), slice(None, None, 2)), (slice(1, None), slice(None, None, -3)), (0,), (-1, 2)]:
        v = a[key]
        x = np.asarray(v)
        assert np.array_equal(x, expected[key])
        # The view shares memory: dynd's own data pointer is NumPy's.
        assert np_address(x) == dlpack_data_address(v)


def test_zero_d_and_empty_arrays():
    a = dynd.array([[1.5, 2.5], [3.5, 4.5]])
    x = np.asarray(a[1, 0])
    assert x.shape == () and x.item() == 3.5
    x[()] = 9.0
    assert a[1, 0].to_list() == 9.0
    e = np.asarray(dynd.array([], type="0 * int32"))
    assert e.shape == (0,) and e.dtype == np.int32


def test_numpy_base_keeps_dynd_memory_alive():
    a = dynd.array(list(range(1000)), type="1000 * int64")
    x = np.asarray(a[::-7])
    expected = list(range(999, -1, -7))
    del a
    gc.collect()
    for _ in range(3):
        junk = [dynd.array(list(range(1000, 2000))) for _ in range(10)]
        del junk
        gc.collect()
    assert x.tolist() == expected
    assert x.base is not None


def test_read_only_dynd_arrays_give_read_only_numpy_arrays():
    ro = np.arange(5.0)
    ro.flags.writeable = False
    a = dynd.asarray(ro)
    assert not a.writable
    x = np.asarray(a)
    assert not x.flags.writeable
    with pytest.raises(ValueError):
        x[0] = 1.0
    mv = memoryview(a)
    assert mv.readonly
    with pytest.raises(TypeError):
        mv[0] = 1.0


def test_array_dunder_dtype_and_copy():
    a = dynd.array([1, 2, 3], type="3 * int32")
    view = a.__array__()
    assert np_address(view) == dlpack_data_address(a)
    same = a.__array__(copy=False)
    assert np_address(same) == dlpack_data_address(a)
    copied = a.__array__(copy=True)
    assert np_address(copied) != dlpack_data_address(a)
    copied[0] = 100
    assert a[0].to_list() == 1
    # A dtype change is a copy; copy=False refuses it (ValueError, NumPy's rule).
    f = a.__array__(dtype="float64")
    assert f.dtype == np.float64 and f.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(dynd.InvalidArgumentError) as e:
        a.__array__(dtype="float64", copy=False)
    assert isinstance(e.value, ValueError)
    assert a.__array__(dtype="int32", copy=False).tolist() == [1, 2, 3]
    # NumPy's own entry points.
    assert np.asarray(a, dtype=np.int64).dtype == np.int64
    assert np.array(a, copy=True).tolist() == [1, 2, 3]
    assert np_address(np.asarray(a, copy=False)) == dlpack_data_address(a)
    with pytest.raises(ValueError):
        np.asarray(a, dtype=np.float32, copy=False)


def test_copies_for_options_strings_and_structs():
    # Options: a masked array; NaN under the mask for floats.
    m = dynd.array([1.5, None, 3.5]).__array__()
    assert isinstance(m, np.ma.MaskedArray)
    assert m.mask.tolist() == [False, True, False]
    assert m.dtype == np.float64
    plain = np.asarray(dynd.array([1.5, None, 3.5]))
    assert plain[0] == 1.5 and np.isnan(plain[1])
    mi = dynd.array([[1, None], [None, 4]], type="2 * 2 * ?int16").__array__()
    assert mi.dtype == np.int16 and mi.mask.tolist() == [[False, True], [True, False]]
    assert mi.compressed().tolist() == [1, 4]
    # All missing keeps the element's dtype.
    assert dynd.array([None, None], type="2 * ?int32").__array__().dtype == np.int32
    # No missing values: a plain (copied) array.
    full = dynd.array([1, 2], type="2 * ?int8").__array__()
    assert not isinstance(full, np.ma.MaskedArray) and full.dtype == np.int8
    # Strings.
    s = np.asarray(dynd.array(["a", "bcd", ""]))
    assert s.dtype.kind == "U" and s.tolist() == ["a", "bcd", ""]
    sm = dynd.array(["x", None]).__array__()
    assert sm.mask.tolist() == [False, True]
    # Structs: a structured dtype, a copy (writes do not go back).
    a = dynd.array([{"x": 1, "y": 2.5}, {"x": 3, "y": 4.0}], type="2 * {x: int32, y: float64}")
    r = np.asarray(a)
    assert r.dtype.names == ("x", "y")
    assert r.dtype["x"] == np.int32 and r.dtype["y"] == np.float64
    assert r["x"].tolist() == [1, 3] and r["y"].tolist() == [2.5, 4.0]
    r["x"][0] = 50
    assert a[0].x.to_list() == 1
    # Structs with fixed-dim fields and missing values.
    b = dynd.array([{"v": [1, 2], "o": None}], type="1 * {v: 2 * int64, o: ?float32}")
    rb = b.__array__()
    assert rb["v"].tolist() == [[1, 2]]
    assert isinstance(rb, np.ma.MaskedArray) and bool(rb.mask["o"][0])
    # What needs a copy refuses copy=False.
    for x in [dynd.array(["a"]), dynd.array([1, None]), a]:
        with pytest.raises(ValueError):
            np.asarray(x, copy=False)


def test_ragged_has_no_numpy_form():
    a = dynd.array([[1, 2], [3]])
    with pytest.raises(dynd.TypeMismatchError, match="var dim"):
        np.asarray(a)
    with pytest.raises(dynd.TypeMismatchError):
        a.__array__(copy=True)
    with pytest.raises((BufferError, TypeError)):
        memoryview(a)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=40),
    st.integers(1, 4),
    st.booleans(),
)
def test_np_view_matches_to_list_property(values, step, reverse):
    a = dynd.array(values, type=f"{len(values)} * int32")
    s = slice(None, None, -step if reverse else step)
    v = a[s]
    x = np.asarray(v)
    assert x.tolist() == v.to_list() == values[s]
    if len(x):
        x[0] = 12345
        assert v[0].to_list() == 12345
        assert a.to_list()[s][0] == 12345


# ---- NumPy → dynd -------------------------------------------------------


@pytest.mark.parametrize(("name", "np_dtype"), NUMERIC)
def test_dynd_asarray_is_a_view_of_every_numeric_dtype(name, np_dtype):
    x = np.array(values_of(np_dtype, 8), dtype=np_dtype).reshape(2, 4)
    a = dynd.asarray(x)
    assert str(a.type).endswith(name) or (name.startswith("complex") and "complex" in str(a.type))
    assert a.shape == (2, 4)
    assert a.writable
    assert a.to_list() == x.tolist()
    x[1, 2] = other_value(np_dtype)
    assert a[1, 2].to_list() == x[1, 2].item()
    a[0, 0] = dynd.asarray(x[1, 2:3])[0]
    assert x[0, 0] == x[1, 2]
    assert dlpack_data_address(a) == np_address(x)
    # And back to NumPy: the same memory.
    assert np_address(np.asarray(a)) == np_address(x)


def test_dynd_asarray_of_numpy_views():
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    for view in [base[::-1], base[:, ::-2], base[1:3, 5:0:-2], base.T, base[2], base[3, 4:5]]:
        a = dynd.asarray(view)
        assert a.to_list() == view.tolist()
        assert dlpack_data_address(a) == np_address(view)
    v = base[::-1, ::2]
    a = dynd.asarray(v)
    v[0, 0] = -1.0
    assert a[0, 0].to_list() == -1.0
    a[1, 1] = -2.0
    assert base[2, 2] == -2.0


def test_read_only_numpy_arrays_import_read_only():
    x = np.arange(4, dtype=np.int32)
    x.flags.writeable = False
    a = dynd.asarray(x)
    assert not a.writable
    with pytest.raises(dynd.Error):
        a[0] = 5
    assert x.tolist() == [0, 1, 2, 3]


def test_dynd_asarray_keeps_numpy_memory_alive():
    x = np.arange(10_000, dtype=np.int64)[::3]
    expected = x.tolist()
    a = dynd.asarray(x)
    del x
    gc.collect()
    junk = [np.full(10_000, 7, dtype=np.int64) for _ in range(20)]
    del junk
    assert a.to_list() == expected
    assert int(dynd.sum(a)) == sum(expected)


@pytest.mark.parametrize(
    ("dtype", "named"),
    [
        (object, "object"),
        ("<U3", "<U3"),
        ("datetime64[s]", "datetime64"),
        ("timedelta64[ms]", "timedelta64"),
        (">i4", ">i4"),
        ([("a", "<i4"), ("b", "<f8")], "'a'"),
        ("S4", "|S4"),
    ],
)
def test_dynd_asarray_refuses_unsupported_dtypes(dtype, named):
    x = np.zeros(3, dtype=dtype)
    with pytest.raises(dynd.TypeMismatchError) as e:
        dynd.asarray(x)
    assert named in str(e.value)
    assert isinstance(e.value, TypeError)
    assert e.value.kind == "type"


def test_dynd_array_copies_numpy_arrays():
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    a = dynd.array(x)
    assert a.to_list() == x.tolist()
    x[0, 0] = 100
    assert a[0, 0].to_list() == 0
    a2 = dynd.asarray(x)
    b = dynd.array(a2)
    x[0, 1] = 77
    assert b[0, 1].to_list() == 1
    assert a2[0, 1].to_list() == 77


def test_asarray_of_a_dynd_array_is_itself():
    a = dynd.array([1, 2])
    assert dynd.asarray(a) is a


def test_asarray_of_other_buffers_and_python_objects():
    import array as pyarray

    buf = pyarray.array("d", [1.0, 2.0, 3.0])
    a = dynd.asarray(buf)
    buf[0] = 10.0
    assert a.to_list() == [10.0, 2.0, 3.0]
    mv = memoryview(bytearray(4)).cast("i")
    assert dynd.asarray(mv).to_list() == [0]
    assert dynd.asarray([[1, 2], [3]]).to_list() == [[1, 2], [3]]
    assert dynd.asarray(np.float32(2.5)).to_list() == 2.5


# ---- memoryview -----------------------------------------------------------


def test_memoryview_of_dynd_arrays():
    a = dynd.array([[1, 2, 3], [4, 5, 6]], type="2 * 3 * int16")
    mv = memoryview(a)
    assert mv.format == "h" and mv.shape == (2, 3) and mv.itemsize == 2
    assert mv.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert not mv.readonly
    assert mv.c_contiguous
    r = memoryview(a[::-1])
    assert r.strides == (-6, 2)
    assert r.tolist() == [[4, 5, 6], [1, 2, 3]]
    mv.release()
    with pytest.raises((BufferError, TypeError)):
        memoryview(dynd.array(["a"]))
    with pytest.raises((BufferError, TypeError)):
        memoryview(dynd.array([1, None]))
    # A read-only array's view is read-only.
    x = np.arange(3.0)
    x.flags.writeable = False
    assert memoryview(dynd.asarray(x)).readonly
    # A scalar (0-d) works too.
    z = memoryview(dynd.array(3.5))
    assert z.shape == () and z.tolist() == 3.5


def test_buffer_consumers_that_need_contiguity():
    a = dynd.array(list(range(10)), type="10 * int32")
    assert bytes(a[:2]) == np.array([0, 1], dtype=np.int32).tobytes()
    # bytes() gathers a strided view into C order.
    assert bytes(a[::-3]) == np.array([9, 6, 3, 0], dtype=np.int32).tobytes()


# ---- DLPack ---------------------------------------------------------------


def test_np_from_dlpack_is_zero_copy_both_ways():
    a = dynd.array([[1.0, 2.0], [3.0, 4.0]])
    x = np.from_dlpack(a)
    assert x.tolist() == a.to_list()
    x[0, 1] = 20.0
    assert a[0, 1].to_list() == 20.0
    a[1, 0] = 30.0
    assert x[1, 0] == 30.0
    v = a[::-1, ::-1]
    xv = np.from_dlpack(v)
    assert xv.tolist() == v.to_list()
    assert np_address(xv) == dlpack_data_address(v)
    del a, v
    gc.collect()
    assert x.tolist() == [[1.0, 20.0], [30.0, 4.0]]


def test_dynd_from_dlpack_is_zero_copy_with_lifetime():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::-2]
    a = dynd.from_dlpack(x)
    assert a.to_list() == x.tolist()
    x[0, 0] = -5
    assert a[0, 0].to_list() == -5
    a[2, 1] = -6
    assert x[2, 1] == -6
    expected = x.tolist()
    del x
    gc.collect()
    assert a.to_list() == expected


def test_dlpack_capsule_versions_and_flags():
    a = dynd.array([1, 2, 3], type="3 * int8")
    legacy = a.__dlpack__()
    assert "dltensor" in repr(legacy) and "versioned" not in repr(legacy)
    v1 = a.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(v1)
    assert a.__dlpack__(max_version=(0, 8)) is not None
    assert a.__dlpack_device__() == (1, 0)
    assert a.__dlpack__(dl_device=(1, 0), max_version=(1, 0)) is not None
    # Unconsumed capsules are freed by their destructors.
    del legacy, v1
    gc.collect()
    # copy=True exports a copy.
    c = np.from_dlpack(a, copy=True)
    c[0] = 9
    assert a[0].to_list() == 1


def test_read_only_arrays_export_read_only():
    x = np.arange(4.0)
    x.flags.writeable = False
    a = dynd.asarray(x)
    y = np.from_dlpack(a)
    assert not y.flags.writeable
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0]
    # The legacy capsule has no read-only flag: refused.
    with pytest.raises(BufferError, match="read-only"):
        a.__dlpack__()
    # And a read-only NumPy tensor imports read-only.
    b = dynd.from_dlpack(x)
    assert not b.writable
    with pytest.raises(dynd.Error):
        b[0] = 1.0


def test_dlpack_bad_requests():
    a = dynd.array([1.0, 2.0])
    with pytest.raises(BufferError, match="device"):
        a.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(1, 1), max_version=(1, 0))
    with pytest.raises(dynd.Error, match="stream"):
        a.__dlpack__(stream=1)
    with pytest.raises(TypeError):
        a.__dlpack__(1)  # stream is keyword-only
    with pytest.raises(BufferError, match="not fixed"):
        dynd.array([[1], [2, 3]]).__dlpack__(max_version=(1, 0))
    with pytest.raises(BufferError):
        np.from_dlpack(dynd.array(["a", "b"]))
    with pytest.raises(BufferError):
        np.from_dlpack(dynd.array([1, None]))


class _Producer:
    """A DLPack producer that hands out one fixed capsule, or junk."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def test_a_dlpack_capsule_is_consumed_once():
    x = np.arange(3.0)
    cap = x.__dlpack__(max_version=(1, 0))
    p = _Producer(cap)
    a = dynd.from_dlpack(p)
    assert a.to_list() == [0.0, 1.0, 2.0]
    with pytest.raises(dynd.TypeMismatchError, match="unused DLPack capsule"):
        dynd.from_dlpack(p)
    assert a.to_list() == [0.0, 1.0, 2.0]
    # The same with a legacy capsule from dynd itself.
    b = dynd.array([5, 6])
    p2 = _Producer(b.__dlpack__())
    assert dynd.from_dlpack(p2).to_list() == [5, 6]
    with pytest.raises(dynd.TypeMismatchError):
        dynd.from_dlpack(p2)


def test_from_dlpack_bad_inputs():
    for bad in [object(), 42, "text", None, [1, 2]]:
        with pytest.raises(dynd.TypeMismatchError, match="__dlpack__"):
            dynd.from_dlpack(bad)
    for junk in [None, 3, object(), b"bytes"]:
        with pytest.raises(dynd.TypeMismatchError):
            dynd.from_dlpack(_Producer(junk))
    # A capsule with another name.
    cap = dynd.array([1, 2]).__arrow_c_schema__()
    with pytest.raises(dynd.TypeMismatchError):
        dynd.from_dlpack(_Producer(cap))

    class Raises:
        def __dlpack__(self, **kwargs):
            raise BufferError("no")

    with pytest.raises(BufferError):
        dynd.from_dlpack(Raises())


# ---- Arrow ---------------------------------------------------------------


ARROW_CASES = [
    ([1, 2, 3], "3 * int64"),
    ([1.5, None, -2.0], "3 * ?float64"),
    ([True, False, True], "3 * bool"),
    ([True, None, False], "3 * ?bool"),
    (["a", "", "héllo"], "3 * string"),
    (["a", None], "2 * ?string"),
    ([[1, 2], [], [3]], "3 * var * int32"),
    ([[1, None], None, [3]], None),
    ([[1, 2], [3, 4]], "2 * 2 * float32"),
    ([{"x": 1, "s": "a"}, {"x": 2, "s": "bc"}], "2 * {x: int32, s: string}"),
    ([{"x": 1, "s": None}, {"x": None, "s": "b"}], "2 * {x: ?int64, s: ?string}"),
    ([[{"x": 1, "v": [1.5]}], [], [{"x": 2, "v": []}, {"x": 3, "v": [2.5, None]}]], "3 * var * {x: int16, v: var * ?float64}"),
    ([[[1], []], [[2, 3]]], "2 * var * var * uint8"),
]


@pytest.mark.parametrize(("values", "tp"), ARROW_CASES)
def test_pyarrow_reads_dynd_arrays(values, tp):
    a = dynd.array(values, type=tp) if tp else dynd.array(values)
    p = pa.array(a)
    assert p.to_pylist() == a.to_list()
    b = dynd.from_arrow(p)
    assert b.to_list() == a.to_list()
    # Through the stream: a chunked array of one chunk.
    c = pa.chunked_array(a)
    assert c.num_chunks == 1 and c.to_pylist() == a.to_list()
    assert dynd.from_arrow(c).to_list() == a.to_list()
    # The schema capsule alone.
    assert pa.Field._import_from_c_capsule(a.__arrow_c_schema__()).type == p.type


def test_arrow_types_match():
    assert pa.array(dynd.array([1, 2], type="2 * int16")).type == pa.int16()
    lt = pa.array(dynd.array([[1], [2, 3]], type="2 * var * float32")).type
    assert pa.types.is_list(lt) and lt.value_type == pa.float32()
    # Elements that are never missing export as non-nullable children.
    assert not lt.value_field.nullable
    ft = pa.array(dynd.array([[1, 2]], type="1 * 2 * int8")).type
    assert pa.types.is_fixed_size_list(ft) and ft.list_size == 2 and ft.value_type == pa.int8()
    t = pa.array(dynd.array([{"x": 1}], type="1 * {x: uint32}")).type
    assert pa.types.is_struct(t) and t.field("x").type == pa.uint32()


def test_from_arrow_pyarrow_containers():
    p = pa.array([1, None, 3], pa.int32())
    a = dynd.from_arrow(p)
    assert str(a.type) == "3 * ?int32" and a.to_list() == [1, None, 3]
    rb = pa.record_batch({"x": [1, 2, 3], "s": ["a", None, "c"]})
    r = dynd.from_arrow(rb)
    assert r.to_list() == rb.to_pylist()
    assert r.type.fields == ["x", "s"]
    # A table of one batch (this used to come back empty) and of several.
    t1 = pa.table(rb)
    assert dynd.from_arrow(t1).to_list() == rb.to_pylist()
    t3 = pa.concat_tables([t1, t1.slice(1), t1.slice(0, 0)])
    assert dynd.from_arrow(t3).to_list() == t3.to_pylist()
    empty = dynd.from_arrow(t1.slice(0, 0))
    assert empty.to_list() == [] and empty.type.fields == ["x", "s"]
    # Chunked arrays of any type.
    ch = pa.chunked_array([[1, 2], [], [3, None]])
    assert dynd.from_arrow(ch).to_list() == [1, 2, 3, None]
    lists = pa.chunked_array([[[1], [2, 3]], [[4, 5, 6]]])
    assert dynd.from_arrow(lists).to_list() == [[1], [2, 3], [4, 5, 6]]
    strings = pa.chunked_array([["a"], ["bb", None]])
    assert dynd.from_arrow(strings).to_list() == ["a", "bb", None]
    no_chunks = pa.chunked_array([], pa.float64())
    z = dynd.from_arrow(no_chunks)
    assert z.to_list() == [] and "float64" in str(z.type)


def test_arrow_lists_compute_with_missing_rows():
    # A bare Arrow list imports as `N * ?var * ?T` (Arrow arrays are
    # nullable): elementwise and row calls give missing rows where the
    # list had nulls, and go back to Arrow with them.
    x = dynd.from_arrow(pa.array([[1.0, 2.5], None, [], [3.0, None]]))
    assert str(x.type) == "4 * ?var * ?float64"
    assert (x + 1).to_list() == [[2.0, 3.5], None, [], [4.0, None]]
    assert (x > 2.0).to_list() == [[False, True], None, [], [True, None]]
    assert dynd.sort(-x).to_list() == [[-2.5, -1.0], None, [], [-3.0, None]]
    assert dynd.cumsum(x).to_list() == [[1.0, 3.5], None, [], [3.0, None]]
    assert dynd.filter(x, x > 2.0).to_list() == [[2.5], None, [], [3.0]]
    y = dynd.from_arrow(pa.array([[1.0, 1.0], [5.0], None, [2.0, 2.0]]))
    assert (x * y).to_list() == [[1.0, 2.5], None, None, [6.0, None]]
    assert pa.array(x + 1).to_pylist() == [[2.0, 3.5], None, [], [4.0, None]]
    # Present rows of unequal length, and reductions (`?var * T` is an
    # element, not a dim: fill_null(x, []) reads missing rows as empty).
    with pytest.raises(dynd.BroadcastError):
        x + dynd.from_arrow(pa.array([[1.0], None, [], [1.0, 2.0, 3.0]]))
    with pytest.raises(dynd.TypeMismatchError, match=r"\?var"):
        dynd.sum(x, axis=-1)
    assert dynd.sum(dynd.fill_null(x, []), axis=-1).to_list() == [3.5, 0.0, 0.0, 3.0]


def test_from_arrow_sliced_arrays():
    base = pa.array([[1, 2], None, [3], [], [4, 5, 6]])
    for start, stop in [(1, 5), (2, 4), (3, 3), (4, 5)]:
        s = base[start:stop]
        assert dynd.from_arrow(s).to_list() == s.to_pylist()
    strs = pa.array(["aa", None, "b", "cccc"])[1:]
    assert dynd.from_arrow(strs).to_list() == [None, "b", "cccc"]
    structs = pa.array([{"x": 1, "y": "p"}, {"x": 2, "y": None}, {"x": 3, "y": "r"}])[1:]
    assert dynd.from_arrow(structs).to_list() == structs.to_pylist()
    bools = pa.array([True, False, None, True, False, True, True, False, False, True])[3:]
    assert dynd.from_arrow(bools).to_list() == bools.to_pylist()
    ints = pa.array(list(range(100)), pa.int64())[37:61]
    assert dynd.from_arrow(ints).to_list() == list(range(37, 61))


def non_nullable(p):
    """A producer of pyarrow array ``p`` under a non-nullable field (pyarrow
    marks every array it exports nullable, which imports as ``?T``)."""
    schema = pa.field("v", p.type, nullable=False).__arrow_c_schema__()
    return _ArrowProducer(array=(schema, p.__arrow_c_array__()[1]))


def test_arrow_import_is_zero_copy_for_primitive_values():
    p = pa.array(np.arange(1000, dtype=np.float64))
    # pyarrow's arrays are nullable: they import as ?float64, a copy (DESIGN §12).
    assert str(dynd.from_arrow(p).type) == "1000 * ?float64"
    a = dynd.from_arrow(non_nullable(p))
    assert str(a.type) == "1000 * float64"
    # Imported arrays are read-only: the memory is pyarrow's.
    assert not a.writable
    addr = p.buffers()[1].address
    assert dlpack_data_address(a) == addr
    sl = p[100:200]
    b = dynd.from_arrow(non_nullable(sl))
    assert dlpack_data_address(b) == addr + 100 * 8
    assert b.to_list() == list(np.arange(100.0, 200.0))
    assert np_address(np.asarray(b)) == addr + 100 * 8


def test_pandas_style_round_trip_of_a_table():
    t = pa.table({"id": [1, 2, 3], "v": [[1.0, 2.0], [], None], "name": ["a", None, "c"]})
    a = dynd.from_arrow(t)
    back = pa.table(pa.array(a).flatten(), names=["id", "v", "name"])
    assert back.to_pylist() == t.to_pylist()
    # pa.table reads a dynd array of structs through the stream.
    t2 = pa.table(a)
    assert t2.to_pylist() == t.to_pylist()
    assert t2.column_names == ["id", "v", "name"]


def test_arrow_lifetimes_and_release():
    start = pa.total_allocated_bytes()
    p = pa.array(list(range(0, 200_000, 2)), pa.int64())
    r = pa.array([[1, 2], [3]] * 1000, pa.list_(pa.field("item", pa.int64(), nullable=False)))
    s = pa.array(["abc", None, "de"] * 1000)
    assert pa.total_allocated_bytes() > start
    a = dynd.from_arrow(non_nullable(p))
    b = dynd.from_arrow(non_nullable(r))
    c = dynd.from_arrow(s)
    held = pa.total_allocated_bytes()
    del p, r, s
    gc.collect()
    # The pyarrow objects are gone; dynd still holds their buffers.
    assert pa.total_allocated_bytes() == held > start
    assert a[99_999].to_list() == 199_998
    assert b[:3].to_list() == [[1, 2], [3], [1, 2]]
    assert c[-3:].to_list() == ["abc", None, "de"]
    del a, b
    gc.collect()
    assert start < pa.total_allocated_bytes() < held
    del c
    gc.collect()
    # Every release callback ran: pyarrow's allocations are back to the start.
    assert pa.total_allocated_bytes() == start


def test_arrow_export_lifetimes():
    start = pa.total_allocated_bytes()
    a = dynd.array([[1, 2, 3], [4]] * 500)
    p = pa.array(a)
    del a
    gc.collect()
    assert p[1].as_py() == [4] and len(p) == 1000
    q = pa.chunked_array(dynd.array(list(range(100))))
    gc.collect()
    assert q.to_pylist() == list(range(100))
    del p, q
    gc.collect()
    assert pa.total_allocated_bytes() == start


def test_unconsumed_arrow_capsules_are_freed():
    a = dynd.array([[1.0], [2.0, 3.0]])
    for _ in range(50):
        s = a.__arrow_c_schema__()
        arr = a.__arrow_c_array__()
        st_ = a.__arrow_c_stream__()
        del s, arr, st_
    gc.collect()
    assert a.to_list() == [[1.0], [2.0, 3.0]]


def test_requested_schema():
    a = dynd.array([1, 2, 3], type="3 * int64")
    p = pa.array(a, type=pa.int32())
    assert p.type == pa.int32() and p.to_pylist() == [1, 2, 3]
    f = pa.array(dynd.array([1, None], type="2 * ?int16"), type=pa.float64())
    assert f.type == pa.float64() and f.to_pylist() == [1.0, None]
    # Same type: nothing to do.
    assert pa.array(a, type=pa.int64()).to_pylist() == [1, 2, 3]
    schema, _ = pa.array([1], pa.int32()).__arrow_c_array__()
    s2, arr = a.__arrow_c_array__(requested_schema=schema)
    assert pa.Array._import_from_c_capsule(s2, arr).type == pa.int32()
    c = pa.chunked_array(a, type=pa.int32())
    assert c.type == pa.int32() and c.to_pylist() == [1, 2, 3]
    # A request dynd cannot meet returns the array as it is.
    s3, arr3 = a.__arrow_c_array__(requested_schema=pa.string().__arrow_c_schema__())
    got = pa.Array._import_from_c_capsule(s3, arr3)
    assert got.to_pylist() in ([1, 2, 3], ["1", "2", "3"])
    # Not a capsule: a TypeError.
    with pytest.raises(dynd.TypeMismatchError, match="requested_schema"):
        a.__arrow_c_array__(requested_schema=42)
    with pytest.raises(dynd.TypeMismatchError, match="requested_schema"):
        a.__arrow_c_stream__(requested_schema=a.__dlpack__(max_version=(1, 0)))


def test_arrow_export_errors():
    with pytest.raises(dynd.TypeMismatchError):
        pa.array(dynd.array(5))  # no dims
    with pytest.raises(dynd.TypeMismatchError):
        dynd.array(5).__arrow_c_schema__()
    with pytest.raises(dynd.TypeMismatchError):
        dynd.array([1], type="1 * int128").__arrow_c_array__()


class _ArrowProducer:
    def __init__(self, array=None, stream=None):
        self.array = array
        self.stream = stream

    def __arrow_c_array__(self, requested_schema=None):
        return self.array

    def __arrow_c_stream__(self, requested_schema=None):
        return self.stream


class _StreamOnly:
    def __init__(self, stream):
        self.stream = stream

    def __arrow_c_stream__(self, requested_schema=None):
        return self.stream


def test_from_arrow_bad_inputs():
    for bad in [42, None, "x", object(), [1, 2], np.arange(3)]:
        with pytest.raises(dynd.TypeMismatchError, match="__arrow_c_array__"):
            dynd.from_arrow(bad)
    schema, arr = pa.array([1, 2]).__arrow_c_array__()
    dl = dynd.array([1]).__dlpack__(max_version=(1, 0))
    for junk in [None, 5, (schema,), (schema, arr, arr), (arr, schema), (dl, dl), (schema, 3), [schema, arr]]:
        with pytest.raises(dynd.TypeMismatchError):
            dynd.from_arrow(_ArrowProducer(array=junk))
    for junk in [None, 5, schema, dl]:
        with pytest.raises(dynd.TypeMismatchError):
            dynd.from_arrow(_StreamOnly(junk))
    # A consumed pair cannot be read twice.
    pair = pa.array([1, 2]).__arrow_c_array__()
    assert dynd.from_arrow(_ArrowProducer(array=pair)).to_list() == [1, 2]
    with pytest.raises(dynd.Error):
        dynd.from_arrow(_ArrowProducer(array=pair))
    stream = pa.chunked_array([[1]]).__arrow_c_stream__()
    assert dynd.from_arrow(_StreamOnly(stream)).to_list() == [1]
    with pytest.raises(dynd.Error):
        dynd.from_arrow(_StreamOnly(stream))
    # Types dynd does not import name their format.
    with pytest.raises(dynd.TypeMismatchError):
        dynd.from_arrow(pa.array(["a", "b", "a"]).dictionary_encode())
    with pytest.raises(dynd.TypeMismatchError):
        dynd.from_arrow(pa.array([1, 2], pa.timestamp("s")))

    class Raises:
        def __arrow_c_array__(self, requested_schema=None):
            raise RuntimeError("producer failed")

    with pytest.raises(RuntimeError, match="producer failed"):
        dynd.from_arrow(Raises())


def test_asarray_of_weird_objects_never_crashes():
    class Weird:
        __array_interface__ = {"shape": (2,), "typestr": "<f8", "version": 3}

    class HalfDlpack:
        __dlpack__ = 3

    for obj in [object(), Weird(), HalfDlpack(), {1: 2}, {1, 2}, lambda: 0, 1 + 2j, type]:
        try:
            dynd.asarray(obj)
        except (dynd.Error, TypeError, ValueError, BufferError):
            pass


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(-(2**40), 2**40)), max_size=5)),
        min_size=1,
        max_size=20,
    ),
    st.integers(0, 5),
)
def test_arrow_round_trip_property(rows, offset):
    p = pa.array(rows, pa.list_(pa.int64()))[min(offset, len(rows)) :]
    a = dynd.from_arrow(p)
    assert a.to_list() == p.to_pylist()
    q = pa.array(a)
    assert q.to_pylist() == p.to_pylist()
    assert dynd.from_arrow(pa.chunked_array([p, p])).to_list() == p.to_pylist() * 2


def test_polars_reads_and_writes_dynd():
    pl = pytest.importorskip("polars")
    s = pl.Series("v", [[1, 2], None, [3]])
    a = dynd.from_arrow(s)
    assert a.to_list() == [[1, 2], None, [3]]
    df = pl.DataFrame({"x": [1, 2], "s": ["a", None]})
    d = dynd.from_arrow(df)
    assert d.to_list() == [{"x": 1, "s": "a"}, {"x": 2, "s": None}]
    back = pl.DataFrame(dynd.array([{"x": 1, "s": "a"}], type="1 * {x: int32, s: string}"))
    assert back.to_dicts() == [{"x": 1, "s": "a"}]
    ser = pl.Series(dynd.array([[1.5], [], [2.5, 3.5]]))
    assert ser.to_list() == [[1.5], [], [2.5, 3.5]]


def test_arro3_reads_and_writes_dynd():
    arro3 = pytest.importorskip("arro3.core")
    a = dynd.array([[1, None], [3]])
    x = arro3.Array.from_arrow(a)
    assert x.to_numpy is not None
    assert pa.array(x).to_pylist() == [[1, None], [3]]
    back = dynd.from_arrow(x)
    assert back.to_list() == [[1, None], [3]]
    rb = arro3.RecordBatch.from_arrow(pa.record_batch({"x": [1, 2]}))
    assert dynd.from_arrow(rb).to_list() == [{"x": 1}, {"x": 2}]
    t = arro3.Table.from_arrow(pa.table({"x": [1, 2]}))
    assert dynd.from_arrow(t).to_list() == [{"x": 1}, {"x": 2}]
    ch = arro3.ChunkedArray.from_arrow(pa.chunked_array([[1], [2, 3]]))
    assert dynd.from_arrow(ch).to_list() == [1, 2, 3]


# ---- O(1) on large arrays ----------------------------------------------------


def test_80_mb_conversions_share_memory():
    n = 10_000_000  # 80 MB of float64
    a = dynd.array(np.zeros(1, dtype=np.float64)).cast("float64")  # warm up
    x = np.arange(n, dtype=np.float64)
    a = dynd.asarray(x)
    assert dlpack_data_address(a) == np_address(x)
    y = np.asarray(a)
    assert np_address(y) == np_address(x)
    z = np.from_dlpack(a)
    assert np_address(z) == np_address(x)
    w = dynd.from_dlpack(x)
    assert dlpack_data_address(w) == np_address(x)
    p = pa.array(a)
    assert p.buffers()[1].address == np_address(x)
    b = dynd.from_arrow(non_nullable(p))
    assert dlpack_data_address(b) == np_address(x)
    assert np_address(np.asarray(b)) == np_address(x)
