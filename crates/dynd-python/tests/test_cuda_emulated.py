"""The §14 Python names on device arrays, run on the host emulator of the
CUDA device (``dynd.cuda._emulate``: dynd's generated CUDA C compiled by the
C++ compiler and run on host threads), so the device paths of the Python
package are tested on machines without a GPU. The same calls run on a GPU
in test_cuda.py when scripts/gpu-check.sh has one."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynd

DEV = "cuda:30"


@pytest.fixture(scope="module", autouse=True)
def emulator():
    try:
        dynd.cuda._emulate(30)
    except dynd.ExternalError as e:
        pytest.skip(f"SKIP: no CUDA emulator ({e})")


def test_arrays_move_and_compute_on_the_device():
    h = np.arange(12.0).reshape(3, 4)
    a = dynd.array(h, device=DEV)
    assert a.device == DEV
    assert dynd.array([1, 2]).to(DEV).device == DEV
    np.testing.assert_array_equal(np.asarray((a * a + 1.0).cpu()), h * h + 1.0)
    r = dynd.add(a, a)
    assert r.device == DEV
    # The host never reads device data.
    with pytest.raises(TypeError, match="cuda:30"):
        np.asarray(a)
    cai = a.__cuda_array_interface__
    assert cai["shape"] == (3, 4) and cai["typestr"] == "<f8"


def test_numpy_arrays_onto_the_device_are_copies():
    # The NumPy buffer is read in place (no host copy first), and the
    # device array is a copy: later writes to the NumPy array do not reach it.
    h = np.arange(20.0)
    a = dynd.array(h, device=DEV)
    h[:] = -1.0
    np.testing.assert_array_equal(np.asarray(a.cpu()), np.arange(20.0))
    # Strided and reversed views, other dtypes, 0-d and empty arrays.
    v = np.arange(30, dtype=np.int32).reshape(5, 6)[::-2, 1::2]
    d = dynd.array(v, device=DEV)
    assert str(d.type) == "3 * 3 * int32"
    np.testing.assert_array_equal(np.asarray(d.cpu()), v)
    assert float(np.asarray(dynd.array(np.float32(2.5), device=DEV).cpu())) == 2.5
    assert np.asarray(dynd.array(np.zeros((0, 3)), device=DEV).cpu()).shape == (0, 3)
    # With a type: cast on the host, then moved.
    t = dynd.array(np.arange(4), type="4 * float32", device=DEV)
    assert str(t.type) == "4 * float32" and t.device == DEV


def test_reductions_on_the_device_equal_numpy():
    h = np.arange(24.0).reshape(2, 3, 4) - 7.5
    a = dynd.array(h, device=DEV)
    for name in ["sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax"]:
        for axis in [None, 0, -1, (0, 2)]:
            if name.startswith("arg") and isinstance(axis, tuple):
                continue
            got = getattr(dynd, name)(a, axis=axis)
            assert got.device == DEV, name
            want = getattr(np, name)(h, axis=axis)
            np.testing.assert_allclose(np.asarray(got.cpu()), want, rtol=1e-12, err_msg=f"{name} {axis}")
    k = dynd.sum(a, axis=1, keepdims=True)
    assert str(k.type) == "2 * 1 * 4 * float64"
    # Missing values are skipped; an all-missing extent is missing.
    m = dynd.array([[1.0, None], [None, None]], type="2 * 2 * ?float64").to(DEV)
    assert str(dynd.max(m, axis=-1).cpu()) == str(dynd.max(m.cpu(), axis=-1))


def test_casts_on_the_device_check_as_on_the_host():
    a = dynd.array([1.0, 2.5, 300.0], device=DEV)
    with pytest.raises(dynd.FractionalError, match=r"at index \[1\].*2.5"):
        a.cast("int16")
    with pytest.raises(dynd.ValueOverflowError, match="300"):
        a.cast("int8", errmode="overflow")
    np.testing.assert_array_equal(np.asarray(a.cast("uint8", errmode="nocheck").cpu()), [1, 2, 255])
    assert a.cast("float32").device == DEV


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(0, 5), min_size=1, max_size=3),
    name=st.sampled_from(["sum", "min", "max", "mean", "argmax", "count", "any"]),
    seed=st.integers(0, 1000),
)
def test_random_reductions_equal_the_host(shape, name, seed):
    h = np.random.default_rng(seed).integers(-5, 6, size=shape).astype(np.int32)
    a = dynd.array(h)
    f = getattr(dynd, name)
    try:
        want = f(a, axis=-1)
    except dynd.Error as e:
        with pytest.raises(type(e)):
            f(a.to(DEV), axis=-1)
        return
    got = f(a.to(DEV), axis=-1)
    assert str(got.type) == str(want.type)
    assert str(got.cpu()) == str(want)


def test_ragged_arrays_move_and_reduce_on_the_device():
    x = dynd.array([[1.5, 2.0], [], [3.0, None, 4.0]], type="3 * var * ?float64")
    d = x.to(DEV)
    assert d.device == DEV
    assert str(d.type) == "3 * var * ?float64"
    assert str(d.cpu()) == str(x)
    for name in ["sum", "max", "mean", "argmin", "count"]:
        got = getattr(dynd, name)(d, axis=-1)
        assert got.device == DEV, name
        assert str(got.cpu()) == str(getattr(dynd, name)(x, axis=-1)), name
    # Axis 0 combines the rows position by position; None reduces all.
    for name in ["sum", "max", "argmax", "count"]:
        for axis in [0, None]:
            got = getattr(dynd, name)(d, axis=axis)
            assert got.device == DEV, name
            assert str(got.cpu()) == str(getattr(dynd, name)(x, axis=axis)), (name, axis)
    # Any set of axes of N * M * var: fixed axes position by position, or
    # with the var dim.
    h = dynd.array([[[1], [2, 3]], [[], [4]]], type="2 * 2 * var * int32")
    g = h.to(DEV)
    for name in ("sum", "argmax", "max"):
        for axis in (0, 1, (0, 1), (1, 2), (0, 2)):
            got = getattr(dynd, name)(g, axis=axis)
            assert got.device == DEV, (name, axis)
            assert str(got.cpu()) == str(getattr(dynd, name)(h, axis=axis)), (name, axis)


def test_ragged_rows_select_and_sort_on_the_device():
    x = dynd.array(
        [[3.0, None, -1.0, 3.0], [], [float("nan"), 2.0], [5.0]], type="4 * var * ?float64"
    )
    d = x.to(DEV)

    def same(got, want):
        assert got.device == DEV
        assert str(got.type) == str(want.type)
        assert str(got.cpu()) == str(want)

    # x[:, 0], x[:, -1], x[:, 1:3] of every row, as on the host.
    same(d[2:, -1], x[2:, -1])
    same(d[::2, 0], x[::2, 0])
    same(d[:, 1:3], x[:, 1:3])
    same(d[:, ::-1], x[:, ::-1])
    with pytest.raises(dynd.IndexOutOfBoundsError, match=r"row \[1\]"):
        d[:, 0]
    # filter (awkward's x[mask]) by a mask computed on the device, take.
    same(dynd.filter(d, d > 0.0), dynd.filter(x, x > 0.0))
    i = dynd.array([[0, -1], [], [1], [0, 0]], type="4 * var * int64")
    same(dynd.take(d, i.to(DEV)), dynd.take(x, i))
    with pytest.raises(dynd.IndexOutOfBoundsError, match="take: index 9"):
        dynd.take(d, dynd.array([[9], [], [], []], type="4 * var * int8").to(DEV))
    # Row scans and stable sorts (NaN, then missing, last).
    for name in ["cumsum", "cumprod", "sort", "argsort"]:
        same(getattr(dynd, name)(d), getattr(dynd, name)(x))
    same(dynd.sort(d, descending=True), dynd.sort(x, descending=True))


def test_ragged_broadcasting_concatenate_and_long_sorts_on_the_device():
    x = dynd.array([[1.0, 2.0, 3.0], [], [4.0], [5.0, 6.0]], type="4 * var * float64")
    y = dynd.array([[10.0], [], [20.0], [30.0, 40.0]], type="4 * var * float64")
    dx, dy = x.to(DEV), y.to(DEV)

    def same(got, want):
        assert got.device == DEV
        assert str(got.type) == str(want.type)
        assert str(got.cpu()) == str(want)

    # Two ragged arrays (rows of 1 broadcast), one value per row, where.
    same(dx + dy, x + y)
    m = dynd.max(x, axis=-1, keepdims=True)
    same(dx - m.to(DEV), x - m)
    same(dynd.where(dx > 2.0, dx, dy), dynd.where(x > 2.0, x, y))
    with pytest.raises(dynd.BroadcastError):
        dx + dx[::-1]
    # concatenate along the outermost dim.
    same(dynd.concatenate(dx, dy), dynd.concatenate(x, y))
    # A long 1-D row: the radix sort and the chunked scan.
    h = np.random.default_rng(3).integers(-50, 50, size=6000).astype(np.int64)
    a = dynd.array(h)
    da = a.to(DEV)
    np.testing.assert_array_equal(np.asarray(dynd.sort(da).cpu()), np.sort(h, kind="stable"))
    np.testing.assert_array_equal(np.asarray(dynd.argsort(da).cpu()), np.argsort(h, kind="stable"))
    np.testing.assert_array_equal(np.asarray(dynd.cumsum(da).cpu()), np.cumsum(h))


def test_nested_var_dims_on_the_device():
    x = dynd.array([[[1.0, 2.0], []], [], [[3.0], [4.0, 5.0, 6.0]]], type="3 * var * var * float64")
    d = x.to(DEV)
    assert d.device == DEV and str(d.type) == str(x.type)
    assert str(d.cpu()) == str(x)
    for got, want in [
        (d + 1.0, x + 1.0),
        (dynd.sum(d, axis=-1), dynd.sum(x, axis=-1)),
        (dynd.sort(d[::-1]), dynd.sort(x[::-1])),
        (dynd.cumsum(d), dynd.cumsum(x)),
    ]:
        assert got.device == DEV
        assert str(got.cpu()) == str(want)
    with pytest.raises(dynd.TypeMismatchError, match="nested var dims"):
        dynd.sum(d, axis=0)
    # Indexing within the outer and the inner rows.
    for got, want in [
        (d[:, 1:], x[:, 1:]),
        (d[::-1, :, ::-1], x[::-1, :, ::-1]),
        (d[2, :, -1], x[2, :, -1]),
        (d[::2, 0], x[::2, 0]),
    ]:
        assert got.device == DEV
        assert str(got.type) == str(want.type)
        assert str(got.cpu()) == str(want)
    with pytest.raises(dynd.IndexOutOfBoundsError, match=r"row \[1\]"):
        d[:, 0]
    # Several nested arrays: arithmetic, and a nested mask (awkward's
    # x[x > 2] one level down).
    assert str((d + d).cpu()) == str(x + x)
    assert str(d[d > 2.0].cpu()) == str(x[x > 2.0])
    # Assignments into nested rows: a scalar into the rows a view reaches.
    h, e = x.copy(), x.copy().to(DEV)
    h[1:] = 0.5
    e[1:] = 0.5
    assert str(e.cpu()) == str(h)
    # Mask and index arrays work in Python's indexing on ragged rows.
    r = dynd.array([[1.0, -2.0, 3.0], [], [4.0]], type="3 * var * float64")
    dr = r.to(DEV)
    assert str(dr[dr > 0.0].cpu()) == str(r[r > 0.0])
    i = dynd.array([[0, -1], [], [0]], type="3 * var * int64")
    assert str(dr[i.to(DEV)].cpu()) == str(r[i])


def test_assignments_into_ragged_device_arrays():
    x = dynd.array([[1, 2, 3], [], [4], [5, 6]], type="4 * var * int32")
    src = dynd.array([[1.0, 2.0, 3.0], [], [7.0], [9.0, -1.0]], type="4 * var * float64")
    for key, value in [
        (slice(None), 7),
        (slice(None), src),
        (slice(1, None), dynd.array([[], [8.0], [1.0, 2.0]], type="3 * var * float64")),
        (slice(None), dynd.array([[1.0], [], [2.0], [3.0]], type="4 * var * float64")),
    ]:
        h, d = x.copy(), x.copy().to(DEV)
        h[key] = value
        d[key] = value.to(DEV) if isinstance(value, dynd.Array) else value
        assert d.device == DEV
        assert str(d.cpu()) == str(h)
    # Rows of other lengths, and values the mode refuses: the host's errors.
    d = x.to(DEV)
    with pytest.raises(dynd.BroadcastError):
        d[:] = dynd.array([[1, 2], [], [3], [4, 5]], type="4 * var * int32").to(DEV)
    with pytest.raises(dynd.FractionalError, match="0.5"):
        d[:] = dynd.array([[0.5, 0, 0], [], [0], [0, 0]], type="4 * var * float64").to(DEV)
    with pytest.raises(dynd.ValueOverflowError):
        d[:] = dynd.array([[1e10, 0, 0], [], [0], [0, 0]], type="4 * var * float64").to(DEV)
    # Rows into a fixed device array (a row of 1 repeats).
    f = dynd.array(np.zeros((4, 3), dtype=np.int32)).to(DEV)
    f[:] = dynd.array([[1, 2, 3], [4], [5, 6, 7], [8]], type="4 * var * int32").to(DEV)
    assert str(f.cpu()) == str(dynd.array([[1, 2, 3], [4, 4, 4], [5, 6, 7], [8, 8, 8]], type="4 * 3 * int32"))
    # Host arrays (other than 0-d scalars) do not mix with device ones.
    with pytest.raises(dynd.InvalidArgumentError, match="nothing moves implicitly"):
        d[:] = src


def test_rows_that_may_be_missing_on_the_device():
    x = dynd.array([[1, 2, 3], None, [5, 6], None], type="4 * ?var * int32")
    d = x.to(DEV)
    assert d.device == DEV and str(d.type) == "4 * ?var * int32"
    assert str(d.cpu()) == str(x)
    for got, want in [
        (d[:, 1:], x[:, 1:]),
        (d[:, 0], x[:, 0]),
        (d[::-1, -1], x[::-1, -1]),
        (dynd.concatenate(d, d), dynd.concatenate(x, x)),
    ]:
        assert got.device == DEV
        assert str(got.type) == str(want.type)
        assert str(got.cpu()) == str(want)
    # A present row too short: the host's error. Elementwise and row calls
    # as on the host (missing where a row is); reductions, which the host
    # refuses on ?var, refused alike.
    e = dynd.array([[1], [], None], type="3 * ?var * int32").to(DEV)
    with pytest.raises(dynd.IndexOutOfBoundsError, match=r"row \[1\]"):
        e[:, 0]
    for got, want in [(d + 1, x + 1), (dynd.sort(-d), dynd.sort(-x)), (dynd.cumsum(d), dynd.cumsum(x))]:
        assert got.device == DEV
        assert str(got.type) == str(want.type) and "?var" in str(got.type)
        assert str(got.cpu()) == str(want)
    with pytest.raises(dynd.TypeMismatchError, match=r"\?var"):
        dynd.sum(d, axis=-1)
    # Assignments into them do not run on the device yet, and say so.
    with pytest.raises(dynd.TypeMismatchError, match="does not run on the device yet"):
        d[:] = 0
