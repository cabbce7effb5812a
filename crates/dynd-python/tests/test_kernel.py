"""``@dynd.kernel`` and ``dynd.callable_from_cfunc``: Numba-compiled kernels
lifted by dynd over fixed and var dims."""

from __future__ import annotations

import ctypes
import gc
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynd

numba = pytest.importorskip("numba")


@dynd.kernel("(float64, float64) -> float64")
def affine(x, y):
    return 2.0 * x + y


@dynd.kernel("(float64) -> float64")
def refuse_nan(x):
    if x != x:
        raise ValueError("NaN")
    return x + 1.0


def test_ragged_and_broadcast_scalar():
    r = affine([[1.0, 2.0], [], [3.0]], 10.0)
    assert str(r.type) == "3 * var * float64"
    assert r.to_list() == [[12.0, 14.0], [], [16.0]]


def test_two_ragged_arguments_and_fixed_dims():
    a = dynd.array([[1.0, 2.0], [3.0]])
    b = dynd.array([[10.0, 20.0], [30.0]])
    assert affine(a, b).to_list() == [[12.0, 24.0], [36.0]]
    # a fixed 1 dim broadcasts against var rows
    assert affine(a, dynd.array([[5.0]])).to_list() == [[7.0, 9.0], [11.0]]
    m = np.arange(6, dtype=np.float64).reshape(2, 3)
    assert affine(m, 1.0).to_list() == (2 * m + 1).tolist()


def test_strided_negative_and_zero_strides():
    m = np.arange(12, dtype=np.float64).reshape(3, 4)
    v = dynd.asarray(m)
    # column view (stride 32 bytes), reversed view (negative stride)
    assert affine(v[:, 1], 0.0).to_list() == (2 * m[:, 1]).tolist()
    assert affine(v[::-1], v[0]).to_list() == (2 * m[::-1] + m[0]).tolist()
    rev = np.arange(5, dtype=np.float64)[::-2]
    assert affine(rev, rev).to_list() == (3 * rev).tolist()


def test_struct_field_view():
    a = dynd.array([{"tag": 1, "x": 1.5}, {"tag": 2, "x": -2.0}], type="2 * {tag: int8, x: float64}")
    x = a.x
    assert affine(x, 1.0).to_list() == [4.0, -3.0]


def test_missing_values_propagate():
    a = dynd.array([[1.0, None], [None, 3.0]], type="2 * var * ?float64")
    assert affine(a, 1.0).to_list() == [[3.0, None], [None, 7.0]]


def test_large_call_runs_parallel_and_matches():
    n = 1_000_000
    x = np.linspace(-5, 5, n)
    r = np.asarray(affine(x, 0.5))
    assert np.array_equal(r, 2 * x + 0.5)


@pytest.mark.parametrize(
    ("x_type", "y_type", "r_type", "xs", "y", "expected"),
    [
        ("int32", "int32", "int32", [1, -2, 3], 4, [6, 0, 10]),
        ("int8", "int8", "int8", [100, -100], 50, [250 - 256, -150 + 256]),
        ("uint16", "uint16", "uint16", [1, 2], 65535, [1, 3]),
        ("uint64", "uint64", "uint64", [1, 2], 3, [5, 7]),
        ("float32", "float32", "float32", [0.5, 1.5], 1.0, [2.0, 4.0]),
        ("int64", "float64", "float64", [1, 2], 0.5, [2.5, 4.5]),
    ],
)
def test_numeric_types(x_type, y_type, r_type, xs, y, expected):
    k = dynd.kernel(f"({x_type}, {y_type}) -> {r_type}")(lambda x, y: 2 * x + y)
    r = k(dynd.array(xs, type=f"{len(xs)} * {x_type}"), dynd.array(y, type=y_type))
    assert str(r.type) == f"{len(xs)} * {r_type}"
    assert r.to_list() == expected


def test_bool_and_complex():
    @dynd.kernel("(float64, float64) -> bool")
    def close(x, y):
        return abs(x - y) < 0.5

    assert close([1.0, 2.0, 3.0], 2.2).to_list() == [False, True, False]

    @dynd.kernel("(bool) -> bool")
    def negate(b):
        return not b

    assert negate([True, False]).to_list() == [False, True]

    @dynd.kernel("(complex[float64]) -> float64")
    def modulus(z):
        return abs(z)

    z = dynd.asarray(np.array([3 + 4j, 1j]))
    assert modulus(z).to_list() == [5.0, 1.0]


def test_python_numbers_and_lists_take_the_declared_types():
    @dynd.kernel("(int32, int8) -> int64")
    def add(a, b):
        return a + b

    r = add([[1, 2], [3, 4]], 3)
    assert (str(r.type), r.to_list()) == ("2 * 2 * int64", [[4, 5], [6, 7]])
    with pytest.raises(dynd.ValueOverflowError):
        add([1], 300)
    with pytest.raises(dynd.FractionalError):
        add([1.5], 1)
    # typed arrays are taken as they are
    with pytest.raises(dynd.TypeMismatchError, match="does not accept"):
        add(dynd.array([1, 2]), dynd.array(1, type="int8"))
    assert add(dynd.array([1, 2], type="2 * int32"), dynd.array(1, type="int8")).to_list() == [2, 3]


def test_return_value_is_converted():
    @dynd.kernel("(float64) -> int32")
    def trunc(x):
        return x * 2.0

    assert trunc([1.25, -3.75]).to_list() == [2, -7]


def test_exception_in_kernel_is_external_error():
    assert refuse_nan([1.0, 2.0]).to_list() == [2.0, 3.0]
    with pytest.raises(dynd.ExternalError, match="refuse_nan") as info:
        refuse_nan([[1.0], [2.0, math.nan]])
    assert info.value.kind == "external"
    assert isinstance(info.value, RuntimeError)
    # a NaN far into a large, parallel call
    big = np.ones(500_000)
    big[400_000] = math.nan
    with pytest.raises(dynd.ExternalError):
        refuse_nan(big)
    # the thread's slot does not leak into the next call
    assert refuse_nan([0.0]).to_list() == [1.0]


def test_kernel_object():
    assert isinstance(affine.callable, dynd.Callable)
    assert affine.name == "affine"
    assert "float64" in affine.signature
    assert affine.py_func(1.0, 2.0) == 4.0
    assert affine.__name__ == "affine"
    assert "affine" in repr(affine)


def test_decorating_an_njit_function():
    @numba.njit
    def cube(x):
        return x * x * x

    k = dynd.kernel("(float64) -> float64")(cube)
    assert k([[2.0], [3.0, -1.0]]).to_list() == [[8.0], [27.0, -1.0]]


def test_lifetime_after_del():
    def make():
        @dynd.kernel("(float64) -> float64")
        def shifted(x):
            return x - 1.0

        return shifted.callable

    c = make()
    gc.collect()
    assert c([[1.0, 2.0], [3.0]]).to_list() == [[0.0, 1.0], [2.0]]
    del c
    gc.collect()


# ---- bad inputs --------------------------------------------------------------


def test_bad_signature_text():
    with pytest.raises(dynd.ParseError):
        dynd.kernel("(float64 -> float64")


def test_non_callable_signature():
    with pytest.raises(dynd.TypeMismatchError):
        dynd.kernel("float64")


def test_dims_in_signature():
    with pytest.raises(dynd.TypeMismatchError, match="scalar"):
        dynd.kernel("(var * float64) -> float64")
    with pytest.raises(dynd.TypeMismatchError, match="scalar"):
        dynd.kernel("(float64) -> 3 * float64")


@pytest.mark.parametrize("tp", ["string", "int128", "float16", "{x: int32}", "?float64", "bytes"])
def test_unsupported_types(tp):
    with pytest.raises(dynd.TypeMismatchError):
        dynd.kernel(f"({tp}) -> float64")


def test_argument_count_limits():
    with pytest.raises(dynd.TypeMismatchError, match="1 to 4"):
        dynd.kernel("() -> float64")
    with pytest.raises(dynd.TypeMismatchError, match="1 to 4"):
        dynd.kernel("(float64, float64, float64, float64, float64) -> float64")


def test_signature_not_a_string():
    with pytest.raises(dynd.TypeMismatchError, match="needs a signature"):

        @dynd.kernel
        def f(x):
            return x

    with pytest.raises(dynd.TypeMismatchError):
        dynd.kernel(42)


@pytest.mark.parametrize("obj", [42, "f", None, np.sin, [lambda x: x]])
def test_non_function_objects(obj):
    with pytest.raises(dynd.TypeMismatchError):
        dynd.kernel("(float64) -> float64")(obj)


def test_function_arity_mismatch():
    with pytest.raises(dynd.TypeMismatchError, match="2 arguments"):
        dynd.kernel("(float64, float64) -> float64")(lambda x: x)


def test_function_that_does_not_compile():
    def uses_python(x):
        return {"a": x}[object()]

    with pytest.raises(dynd.TypeMismatchError, match="does not compile"):
        dynd.kernel("(float64) -> float64")(uses_python)


def test_wrong_argument_count_at_call():
    with pytest.raises(dynd.TypeMismatchError):
        affine([1.0])
    with pytest.raises(dynd.TypeMismatchError):
        affine([1.0], [2.0], [3.0])


def test_argument_types_at_call():
    with pytest.raises(dynd.Error):
        affine(["a", "b"], 1.0)
    with pytest.raises(dynd.BroadcastError):
        affine([1.0, 2.0], [1.0, 2.0, 3.0])


# ---- callable_from_cfunc and function_address -------------------------------


def _scale_cfunc():
    from numba import cfunc, types

    f64p = types.CPointer(types.float64)

    @cfunc(types.int32(f64p, types.CPointer(f64p), types.voidptr), nopython=True)
    def triple(dst, src, self_):
        dst[0] = 3.0 * src[0][0]
        return 0

    return triple


def test_callable_from_cfunc_single():
    f = dynd.callable_from_cfunc(_scale_cfunc(), "(float64) -> float64")
    assert f([[1.0, 2.0], []]).to_list() == [[3.0, 6.0], []]
    gc.collect()
    assert f(np.arange(200_000.0)).to_list()[-1] == 3 * 199_999.0


def test_callable_from_cfunc_strided():
    from numba import cfunc, types

    f64p = types.CPointer(types.float64)

    @cfunc(
        types.int32(f64p, types.intp, types.CPointer(f64p), types.CPointer(types.intp), types.intp, types.voidptr),
        nopython=True,
    )
    def negate(dst, dst_stride, src, src_stride, count, self_):
        s = src[0]
        for i in range(count):
            dst[i * (dst_stride // 8)] = -s[i * (src_stride[0] // 8)]
        return 0

    assert dynd._kernel.function_address(negate) == (negate.address, 6)
    f = dynd.callable_from_cfunc(negate, "(float64) -> float64")
    del negate
    gc.collect()
    assert f([[1.0, -2.0], [], [3.0]]).to_list() == [[-1.0, 2.0], [], [-3.0]]
    # a single element goes through dynd's single-from-strided adapter
    assert f(4.0).to_list() == -4.0


def test_callable_from_ctypes_pointer_and_int():
    cf = _scale_cfunc()
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    ptr = proto(cf.address)
    assert dynd._kernel.function_address(ptr) == (cf.address, 3)
    f = dynd.callable_from_cfunc(ptr, "(float64) -> float64")
    assert f([1.0]).to_list() == [3.0]
    with pytest.raises(dynd.TypeMismatchError, match="kind="):
        dynd.callable_from_cfunc(cf.address, "(float64) -> float64")
    g = dynd.callable_from_cfunc(cf.address, "(float64) -> float64", kind="single")
    assert g([2.0]).to_list() == [6.0]
    with pytest.raises(dynd.InvalidArgumentError):
        dynd.callable_from_cfunc(cf.address, "(float64) -> float64", kind="vector")
    del cf


@pytest.mark.parametrize("obj", ["0x1234", 1.5, None, object(), 0, -8, True])
def test_function_address_refuses(obj):
    with pytest.raises(dynd.TypeMismatchError):
        dynd._kernel.function_address(obj)
    with pytest.raises(dynd.TypeMismatchError):
        dynd.callable_from_cfunc(obj, "(float64) -> float64")


def test_callable_from_cfunc_bad_signature():
    cf = _scale_cfunc()
    with pytest.raises(dynd.ParseError):
        dynd.callable_from_cfunc(cf, "(float64 -> float64")
    with pytest.raises(dynd.TypeMismatchError):
        dynd.callable_from_cfunc(cf, "(var * float64) -> float64")


# ---- every loop of the generated kernel ---------------------------------------


@dynd.kernel("(float64, float64, float64) -> float64")
def mix3(x, y, z):
    return x * 100.0 + y * 10.0 + z


def _mix3(x, y, z):
    return x * 100.0 + y * 10.0 + z


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=0, max_value=40),
    st.lists(st.sampled_from(["contiguous", "scalar", "reversed", "step2", "length1"]), min_size=3, max_size=3),
)
def test_three_sources_any_strides(n, kinds):
    """Contiguous, broadcast (stride 0 or a length-1 dim) and strided
    sources in every combination: each stride pattern picks one of the
    generated loops, and all must agree with plain Python."""
    rng = np.random.default_rng(n)
    args = []
    for kind in kinds:
        base = rng.uniform(-9, 9, size=2 * n + 1).round(3)
        args.append(
            {
                "contiguous": base[:n],
                "reversed": base[:n][::-1],
                "step2": base[: 2 * n : 2],
                "length1": base[:1],
                "scalar": float(base[0]),
            }[kind]
        )
    got = mix3(*[dynd.asarray(a) if isinstance(a, np.ndarray) else a for a in args]).to_list()
    if all(k == "scalar" for k in kinds):
        assert got == _mix3(*args)
        return
    size = n if any(k in ("contiguous", "reversed", "step2") for k in kinds) else 1
    cols = [np.broadcast_to(np.asarray(a, dtype=np.float64), (size,)) for a in args]
    assert got == [_mix3(*(float(c[i]) for c in cols)) for i in range(size)]


def test_clamp_like_pattern_and_four_sources():
    @dynd.kernel("(float64, float64, float64) -> float64")
    def clamp(x, lo, hi):
        return min(max(x, lo), hi)

    assert clamp([[-5.0, 0.5], [], [7.0]], 0.0, 1.0).to_list() == [[0.0, 0.5], [], [1.0]]

    @dynd.kernel("(int32, int32, int32, int32) -> int64")
    def weighted(a, b, c, d):
        return a * 1000 + b * 100 + c * 10 + d

    x = np.arange(6, dtype=np.int32)
    assert weighted(x, 1, x[::-1].copy(), 2).to_list() == [i * 1000 + 100 + (5 - i) * 10 + 2 for i in range(6)]
    assert weighted(x, x, x, x).to_list() == [1111 * i for i in range(6)]
    assert weighted(x[::2], 0, 0, 0).to_list() == [0, 2000, 4000]


# ---- property: equals the plain-Python map -----------------------------------

ragged = st.lists(
    st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-1e6, max_value=1e6), max_size=8),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(ragged, st.floats(min_value=-100, max_value=100, allow_nan=False))
def test_kernel_equals_python_map(rows, c):
    got = affine(dynd.array(rows, type=f"{len(rows)} * var * float64"), c).to_list()
    assert got == [[affine.py_func(x, c) for x in row] for row in rows]
