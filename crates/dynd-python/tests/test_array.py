"""dynd.Array from Python: construction, views and indexing, conversion,
operators, reductions, casts, selection and sorting (DESIGN §11)."""

import gc
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynd

# ---- construction ----


def test_inferred_types():
    assert dynd.array([[1, 2], [3]]).type == "2 * var * int64"
    assert dynd.array([[1, 2], [3, 4]]).type == "2 * 2 * int64"
    assert dynd.array([1, 2.5]).type == "2 * float64"
    assert dynd.array([True, None]).type == "2 * ?bool"
    assert dynd.array({"x": 1, "s": "a"}).type == "{x: int64, s: string}"
    assert dynd.array([{"x": 1}, {"x": None}]).type == "2 * {x: ?int64}"
    assert dynd.array(3.5).type == "float64"
    assert dynd.array([]).type == "0 * float64"
    assert dynd.array([2**70]).type == "1 * float64"  # beyond int64 (DESIGN §8)


def test_given_types_and_tuples():
    a = dynd.array([[1, 2], [3]], type="2 * var * int32")
    assert a.type == "2 * var * int32" and a.to_list() == [[1, 2], [3]]
    assert dynd.array((1, 2), type="2 * int8").to_list() == [1, 2]
    assert dynd.array([1, 2], type=dynd.type("2 * float32")).to_list() == [1.0, 2.0]
    assert dynd.array(b"\x01\xff", type="bytes").to_list() == b"\x01\xff"
    assert dynd.array("hé", type="string").to_list() == "hé"


def test_from_numpy_and_dynd_arrays_copies():
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    a = dynd.array(x)
    x[0, 0] = 99
    assert a.type == "2 * 3 * int16" and a[0, 0].to_list() == 0
    b = dynd.array(a)
    a[0, 0] = 5
    assert b[0, 0].to_list() == 0
    assert dynd.array(a, type="int64").type == "2 * 3 * int64"
    assert dynd.array([np.int32(3), np.float64(1.5)]).to_list() == [3.0, 1.5]


def test_from_json_and_lines():
    assert dynd.from_json("[1, 2]", type="2 * int8").type == "2 * int8"
    assert dynd.from_json(b'{"a": [1, 2]}').type == "{a: 2 * int64}"
    a = dynd.from_json('{"a": 1}\n{"a": null}\n', lines=True)
    assert a.type == "2 * {a: ?int64}" and a.to_list() == [{"a": 1}, {"a": None}]
    assert dynd.from_json("[1]\n[2, 3]\n", type="var * var * int32", lines=True).to_list() == [[1], [2, 3]]
    assert dynd.infer_type('[{"a": 1.5, "b": null}]') == "1 * {a: float64, b: ?float64}"


def test_from_json_takes_str_bytes_and_buffers():
    for text in ['["é", "b"]', '["é", "b"]'.encode(), bytearray('["é", "b"]'.encode())]:
        assert dynd.from_json(text, type="2 * string").to_list() == ["é", "b"]
    with pytest.raises(dynd.InvalidArgumentError, match="not utf-8"):
        dynd.from_json(b'["\xff"]', type="1 * string")
    with pytest.raises(dynd.InvalidArgumentError, match="not utf-8"):
        dynd.from_json(bytearray(b'["\xff"]'), type="1 * string")
    with pytest.raises(TypeError, match="str, bytes or a bytes-like object, not int"):
        dynd.from_json(12, type="int32")


@pytest.mark.parametrize(
    "bad, cls",
    [
        ([object()], dynd.InvalidArgumentError),
        ({1: 2}, dynd.InvalidArgumentError),
        ([1, "a"], dynd.TypeMismatchError),
    ],
)
def test_bad_values(bad, cls):
    with pytest.raises(cls):
        dynd.array(bad)


def test_a_list_that_contains_itself_is_an_error_not_a_crash():
    x = []
    x.append(x)
    with pytest.raises(dynd.InvalidArgumentError, match="nest deeper"):
        dynd.array(x)


# ---- properties, len, iteration, to_list, repr ----


def test_shape_ndim_len_iter():
    a = dynd.array([[1, 2], [3]])
    assert (a.shape, a.ndim, len(a)) == ((2, None), 2, 2)
    assert [row.to_list() for row in a] == [[1, 2], [3]]
    assert [x.to_list() for x in a[0]] == [1, 2]
    assert dynd.array(1).shape == ()
    with pytest.raises(TypeError):
        len(dynd.array(1))
    with pytest.raises(TypeError):
        iter(dynd.array(1))


def test_to_list_of_every_kind():
    a = dynd.array(
        [{"a": 1, "b": [0.5], "c": "x", "d": None}],
        type="1 * {a: int8, b: var * float32, c: string, d: ?uint64}",
    )
    assert a.to_list() == [{"a": 1, "b": [0.5], "c": "x", "d": None}]
    assert dynd.array([1 + 2j], type="1 * complex[float64]").to_list() == [1 + 2j]
    assert dynd.array([(1, "a")], type="1 * (int32, string)").to_list() == [(1, "a")]
    big = dynd.array([2**64 - 1], type="1 * uint64").to_list()[0]
    assert big == 2**64 - 1 and isinstance(big, int)
    assert dynd.array([True], type="1 * bool").to_list() == [True]


def test_repr_summarises_big_arrays():
    assert repr(dynd.array([1, 2])) == 'array([1, 2], type="2 * int64")'
    r = repr(dynd.array(list(range(2000))))
    assert "..." in r and r.endswith('type="2000 * int64")') and len(r) < 100
    assert str(dynd.array([1.5])) == 'array([1.5], type="1 * float64")'


def test_to_json():
    assert dynd.array([{"x": 1}]).to_json() == '[{"x":1}]'


# ---- views and indexing ----


def test_views_share_memory():
    a = dynd.array([[1, 2, 3], [4, 5, 6]], type="2 * 3 * int32")
    row = a[1]
    row[0] = 40
    assert a.to_list() == [[1, 2, 3], [40, 5, 6]]
    col = a[:, 1]
    col[:] = 0
    assert a.to_list() == [[1, 0, 3], [40, 0, 6]]


def test_indexing_forms():
    a = dynd.array([[1, 2, 3], [4, 5, 6]], type="2 * 3 * int32")
    assert a[-1].to_list() == [4, 5, 6]
    assert a[::-1].to_list() == [[4, 5, 6], [1, 2, 3]]
    assert a[:, ::2].to_list() == [[1, 3], [4, 6]]
    assert a[..., 0].to_list() == [1, 4]
    assert a[0, ...].to_list() == [1, 2, 3]
    assert a[1, -1].to_list() == 6
    assert a[np.int64(1), 0].to_list() == 4


def test_ragged_indexing():
    r = dynd.array([[1, 2, 3], [4], [5, 6]])
    assert r[:, 0].to_list() == [1, 4, 5]
    assert r[:, -1].to_list() == [3, 4, 6]
    assert r[:, 1:3].to_list() == [[2, 3], [], [6]]
    with pytest.raises(dynd.IndexOutOfBoundsError, match=r"row \[1\]"):
        r[:, 1]


def test_fields():
    a = dynd.array([{"x": 1, "s": "a"}, {"x": 2, "s": "b"}])
    assert a["x"].to_list() == [1, 2]
    assert a.x.to_list() == [1, 2]
    assert a[0, "s"].to_list() == "a"
    with pytest.raises(AttributeError, match="no attribute or field 'nope'"):
        a.nope
    with pytest.raises(dynd.TypeMismatchError):
        dynd.array([1])["x"]


def test_indexing_through_missing_records_and_rows():
    recs = dynd.array([{"a": 1, "s": "x"}, None, {"a": 3, "s": "z"}], type="3 * ?{a: int32, s: string}")
    assert recs.a.type == "3 * ?int32"  # a copy: missing where the record is
    assert recs.a.to_list() == [1, None, 3]
    assert recs["s"].to_list() == ["x", None, "z"]
    rows = dynd.array([[1, 2], None, [3]], type="3 * ?var * int32")
    assert rows[:, 0].type == "3 * ?int32"
    assert rows[:, -1].to_list() == [2, None, 3]
    assert rows[:, 1:].to_list() == [[2], None, []]
    with pytest.raises(dynd.IndexOutOfBoundsError, match=r"row \[2\]"):
        rows[:, 1]  # a present row too short; the missing row is no error


@pytest.mark.parametrize(
    "key, cls",
    [
        (5, dynd.IndexOutOfBoundsError),
        (-6, dynd.IndexOutOfBoundsError),
        ((0, 0, 0), dynd.IndexOutOfBoundsError),
        (1.5, dynd.IndexOutOfBoundsError),
        (None, dynd.IndexOutOfBoundsError),
        (True, dynd.IndexOutOfBoundsError),
        (slice(None, None, 0), dynd.Error),
        ((Ellipsis, Ellipsis), dynd.IndexOutOfBoundsError),
        (2**80, dynd.IndexOutOfBoundsError),
    ],
)
def test_bad_indices(key, cls):
    a = dynd.array([[1, 2], [3, 4]], type="2 * 2 * int32")
    with pytest.raises(cls):
        a[key]


def test_mask_and_positions():
    x = dynd.array([10, 20, 30, 40])
    assert x[[True, False, True, False]].to_list() == [10, 30]
    assert x[np.array([True, True, False, False])].to_list() == [10, 20]
    assert x[dynd.array([3, -4])].to_list() == [40, 10]
    assert x[[1, 1]].to_list() == [20, 20]
    r = dynd.array([[1, 2], [3, 4, 5]])
    assert r[dynd.array([[True, False], [False, True, True]])].to_list() == [[1], [4, 5]]
    with pytest.raises(dynd.IndexOutOfBoundsError):
        x[[7]]
    with pytest.raises(dynd.TypeMismatchError):
        x[[0.5]]


def test_setitem():
    a = dynd.array([[1, 2], [3, 4]], type="2 * 2 * int32")
    a[0] = [7, 8]
    a[1, 1] = 9
    a[:, 0] = 0
    assert a.to_list() == [[0, 8], [0, 9]]
    with pytest.raises(dynd.ValueOverflowError):
        a[0, 0] = 1e20
    with pytest.raises(dynd.IndexOutOfBoundsError):
        a[[True, False]] = 1


# ---- scalars ----


def test_0d_conversions():
    a = dynd.array([3, 4])
    assert int(a[1]) == 4 and float(a[0]) == 3.0 and [0, 1, 2, 3][a[0]] == 3
    assert bool(a[0] == 3) is True
    with pytest.raises(dynd.InvalidArgumentError, match="ambiguous"):
        bool(a)
    with pytest.raises(dynd.TypeMismatchError):
        int(a)
    with pytest.raises(dynd.InvalidArgumentError, match="missing"):
        float(dynd.array(None, type="?float64"))
    with pytest.raises(dynd.TypeMismatchError):
        [1][dynd.array(0.0)]


# ---- operators ----


def test_arithmetic_operators_follow_numpy():
    a = dynd.array([7, -7])
    assert (a + 1).to_list() == [8, -6]
    assert (1 - a).to_list() == [-6, 8]
    assert (a * 2).to_list() == [14, -14]
    assert (a / 2).to_list() == [3.5, -3.5]  # true division
    assert (a / 2).type == "2 * float64"
    assert (a // 2).to_list() == [3, -4]  # floor
    assert (a % 3).to_list() == [1, 2]  # the divisor's sign
    assert (a % -3).to_list() == [-2, -1]
    assert (-a).to_list() == [-7, 7] and abs(a).to_list() == [7, 7] and (+a) is a
    assert (dynd.array([2.0]) ** 2).to_list() == [4.0]
    assert (2.0 ** dynd.array([3.0])).to_list() == [8.0]


def test_python_scalars_are_weak():
    a = dynd.array([1, 2], type="2 * int8")
    assert (a + 3).type == "2 * int8"
    assert (dynd.array([1.0], type="1 * float32") + 1.5).type == "1 * float32"
    assert (a + 1.5).type == "2 * float64"
    with pytest.raises(dynd.ValueOverflowError, match="Python integer 300 out of bounds for int8"):
        a + 300


def test_comparisons_and_logic():
    a = dynd.array([1, 2, 3])
    assert (a < 2).to_list() == [True, False, False]
    assert (a >= 2).to_list() == [False, True, True]
    assert (a == [1, 0, 3]).to_list() == [True, False, True]
    assert (a != 2).to_list() == [True, False, True]
    m = dynd.array([True, False, None])
    assert (m & True).to_list() == [True, False, None]
    assert (m | True).to_list() == [True, True, True]  # Kleene
    assert (~m).to_list() == [False, True, None]
    with pytest.raises(dynd.TypeMismatchError):
        a & a
    with pytest.raises(dynd.TypeMismatchError):
        ~a


def test_operators_broadcast_over_var_dims():
    r = dynd.array([[1, 2, 3], [4]])
    assert (r * 2).to_list() == [[2, 4, 6], [8]]
    assert (r + dynd.array([[10], [20]])).to_list() == [[11, 12, 13], [24]]
    assert (r + dynd.array([[1, 1, 1], [1, 1, 1]])).to_list() == [[2, 3, 4], [5, 5, 5]]


def test_missing_values_propagate():
    a = dynd.array([1, None, 3])
    assert (a + 1).to_list() == [2, None, 4]
    assert (a / 2).type == "3 * ?float64"


def test_unusable_operands():
    a = dynd.array([1])
    with pytest.raises(TypeError):
        a + object()
    with pytest.raises(dynd.TypeMismatchError):
        a + "x"
    with pytest.raises(dynd.InvalidArgumentError):
        pow(a, 2, 3)
    with pytest.raises(TypeError):
        hash(a)


# ---- functions, reductions, casts ----


def test_every_registry_callable_is_a_function():
    for name in dynd.callable_names():
        assert callable(getattr(dynd, name)), name
    f = dynd.callable("add")
    assert f.name == "add" and "->" in f.signature
    assert f([1, 2], [3, 4]).to_list() == [4, 6]
    assert dynd.sqrt([4.0, 9.0]).to_list() == [2.0, 3.0]
    assert dynd.startswith(["abc", "b"], "a").to_list() == [True, False]


def test_reductions_with_axes():
    a = dynd.array([[1, 2, 3], [4, 5, 6]], type="2 * 3 * int32")
    assert dynd.sum(a).to_list() == 21
    assert dynd.sum(a, axis=0).to_list() == [5, 7, 9]
    assert dynd.sum(a, axis=-1).to_list() == [6, 15]
    assert dynd.sum(a, axis=(0, 1)).to_list() == 21
    assert dynd.sum(a, axis=-1, keepdims=True).type == "2 * 1 * int64"
    assert dynd.mean(a, axis=1).to_list() == [2.0, 5.0]
    assert dynd.argmax(a, axis=-1).to_list() == [2, 2]
    r = dynd.array([[1, 2, 3], [4]])
    assert dynd.sum(r, axis=0).to_list() == [5, 2, 3]  # position by position
    # The stateful reductions combine unequal rows the same way (as awkward).
    q = dynd.array([[1, 5, 3], [4], [9, 0]])
    assert dynd.argmax(q, axis=0).to_list() == [2, 0, 0]
    assert dynd.argmin(q, axis=0).to_list() == [0, 2, 0]
    assert dynd.mean(dynd.array([[1, 2, 3], [5]]), axis=0).to_list() == [3.0, 2.0, 3.0]
    assert dynd.std(dynd.array([[1.0, None], [2.0, None, 7.0]]), axis=0).to_list() == [0.5, None, 0.0]
    assert dynd.max(dynd.array([[1], []]), axis=-1).to_list() == [1, None]
    assert dynd.count(dynd.array([1, None, 3])).to_list() == 2
    with pytest.raises(dynd.IndexOutOfBoundsError):
        dynd.sum(a, axis=2)
    with pytest.raises(dynd.InvalidArgumentError):
        dynd.sum(a, axis="x")


def test_casts():
    a = dynd.array([[1, 2], [3]])
    assert a.cast("int8").type == "2 * var * int8"
    assert a.cast("2 * var * float32").type == "2 * var * float32"
    assert dynd.array([300]).cast("int8", errmode="nocheck").to_list() == [44]
    with pytest.raises(dynd.ValueOverflowError):
        dynd.array([300]).cast("int8", errmode="overflow")
    with pytest.raises(dynd.InvalidArgumentError, match="unknown errmode"):
        a.cast("int8", errmode="sometimes")


def test_selection_and_sorting():
    assert dynd.sort([[3, 1, 2], [9, 8]]).to_list() == [[1, 2, 3], [8, 9]]
    assert dynd.sort([3.0, float("nan"), 1.0], descending=True).to_list()[:2] == [3.0, 1.0]
    assert dynd.argsort([3, 1, 2]).to_list() == [1, 2, 0]
    assert dynd.concatenate([1, 2], [3]).to_list() == [1, 2, 3]
    assert dynd.concatenate([[1], [2, 3]]).to_list() == [1, 2, 3]
    assert dynd.where([True, False], [1, 2], [3, 4]).to_list() == [1, 4]
    assert dynd.filter([1, 2, 3], [True, False, True]).to_list() == [1, 3]
    assert dynd.take([1, 2, 3], [2]).to_list() == [3]
    assert dynd.fill_null([1, None], 0).to_list() == [1, 0]
    holes = dynd.array([[1, 2, 3], None], type="2 * ?3 * int32")
    assert dynd.fill_null(holes, [7, 8, 9]).to_list() == [[1, 2, 3], [7, 8, 9]]  # a row fills a missing row
    assert dynd.cumsum([[1, 2], [3]]).to_list() == [[1, 3], [3]]
    assert dynd.array(list(range(6))).reshape(2, 3).to_list() == [[0, 1, 2], [3, 4, 5]]
    assert dynd.array(list(range(6))).reshape((3, -1)).type == "3 * 2 * int64"


# ---- lifetimes and threads ----


def test_views_keep_their_data():
    a = dynd.array(list(range(1000)))
    v = a[10:20]
    del a
    gc.collect()
    assert v.to_list() == list(range(10, 20))


def test_big_calls_release_the_gil_and_agree_with_numpy():
    import threading

    x = np.random.default_rng(1).random(2_000_000)
    a = dynd.asarray(x)
    results = []
    threads = [threading.Thread(target=lambda: results.append(float(dynd.sum(a * 2.0)))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results and all(math.isclose(r, float(np.sum(x * 2.0)), rel_tol=1e-9) for r in results)


# ---- properties ----

ragged = st.lists(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=6), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(ragged)
def test_ragged_round_trip_and_row_sums(rows):
    a = dynd.array(rows, type="var * var * int64")
    assert a.to_list() == rows
    assert dynd.sum(a, axis=-1).to_list() == [sum(r) for r in rows]
    assert dynd.count(a, axis=-1).to_list() == [len(r) for r in rows]
    assert (a * 2).to_list() == [[2 * v for v in r] for r in rows]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=40))
def test_float_operators_agree_with_numpy(values):
    x = np.array(values)
    a = dynd.array(values)
    np.testing.assert_array_equal(np.asarray(a + 1.5), x + 1.5)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(np.asarray(a * a), x * x)
    np.testing.assert_array_equal(np.asarray(a < 0.0), x < 0.0)
    assert dynd.sort(a).to_list() == sorted(values)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=30), st.integers(-50, 50).filter(lambda d: d != 0))
def test_floor_division_and_modulo_agree_with_python(values, d):
    a = dynd.array(values)
    assert (a // d).to_list() == [v // d for v in values]
    assert (a % d).to_list() == [v % d for v in values]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-100, 100)), min_size=1, max_size=20))
def test_missing_values_are_skipped(values):
    a = dynd.array(values, type=f"{len(values)} * ?int64")
    present = [v for v in values if v is not None]
    assert dynd.sum(a).to_list() == sum(present)
    assert dynd.count(a).to_list() == len(present)
    assert dynd.is_null(a).to_list() == [v is None for v in values]


def test_complex_scalars():
    c = dynd.array([1 + 2j, 3j], type="2 * complex[float64]")
    assert (c * 1j).to_list() == [(-2 + 1j), (-3 + 0j)]
    c[0] = 5 - 1j
    assert c.to_list()[0] == 5 - 1j
    assert (dynd.array([1.0]) + 2j).type == "1 * complex[float64]"
