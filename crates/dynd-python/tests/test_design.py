"""DESIGN §11, line by line: a script written only from the contract runs
unchanged (the names are fixed: programs outside this repo use them)."""

import numpy as np
import pyarrow
import pytest

import dynd
from test_lowlevel import SEED_NAMES  # the §11 names, listed once


def test_the_section_11_example_runs_unchanged():
    t = dynd.type("3 * var * {x: int32, s: string}")
    assert str(t) == "3 * var * {x: int32, s: string}"
    assert (t.data_size, t.data_alignment, t.arrmeta_size) == (48, 8, 48)
    assert t == "3 * var * {x: int32, s: string}"
    a = dynd.array([[1, 2], [3]])
    assert a.type == "2 * var * int64"
    a = dynd.array([[1, 2], [3]], type="2 * var * int32")
    b = dynd.from_json("[1, 2]", type="2 * int8")
    lines = dynd.from_json('{"x": 1}\n{"x": 2}\n', type="var * {x: int32}", lines=True)
    assert lines.to_list() == [{"x": 1}, {"x": 2}]
    assert (a.type, a.ndim, a.shape) == ("2 * var * int32", 2, (2, None))
    assert (len(a), a.to_list(), a.to_json()) == (2, [[1, 2], [3]], "[[1,2],[3]]")
    assert repr(a).startswith("array(")
    r = dynd.array([{"x": 1, "s": "a"}, {"x": 2, "s": "b"}])
    for view in (a[0], a[-1], a[:, 0], a[::-1], r["x"], r.x):
        assert isinstance(view, dynd.Array)
    assert a[[True, False]].to_list() == [[1, 2]] and a[[1]].to_list() == [[3]]
    x = dynd.array([3.0, 4.0])
    y = dynd.array([2.0, 8.0])
    for expr in (x + y, x - y, x * 2, x / y, x // y, x % y, x**2, -x, abs(x), x < y, x == y):
        assert isinstance(expr, dynd.Array)
    m = x < y
    assert (m & m).to_list() == [False, True] and (~m).to_list() == [True, False]
    assert dynd.add(x, y).to_list() == [5.0, 12.0]
    assert dynd.sum(a, axis=None, keepdims=False).to_list() == 6
    for name in ("prod", "min", "max", "mean", "var", "std", "argmin", "argmax", "any", "all", "count"):
        assert isinstance(getattr(dynd, name)(x, axis=-1, keepdims=True), dynd.Array)
    assert a.cast("int8", errmode="overflow").type == "2 * var * int8"
    for mode in ("nocheck", "overflow", "fractional", "inexact", "default"):
        x.cast("float32", errmode=mode)
    n = np.asarray(b)
    assert n.dtype == np.int8 and n.base is not None
    d = dynd.asarray(np.arange(3.0))
    assert np.from_dlpack(x).tolist() == [3.0, 4.0]
    assert dynd.from_dlpack(np.arange(2)).to_list() == [0, 1]
    assert d.__dlpack_device__() == (1, 0)
    x.__dlpack__(stream=None, max_version=None, dl_device=None, copy=None)
    assert pyarrow.array(a).to_pylist() == [[1, 2], [3]]
    assert dynd.from_arrow(pyarrow.array([1, 2])).to_list() == [1, 2]
    for method in ("__arrow_c_schema__", "__arrow_c_array__", "__arrow_c_stream__"):
        assert callable(getattr(a, method))
    f = dynd.callable("add")
    assert f(x, y).to_list() == [5.0, 12.0]
    assert all(hasattr(dynd, n) for n in ("callable_from_cfunc", "kernel", "_lowlevel"))
    ll = dynd._lowlevel
    for fn in SEED_NAMES:
        assert callable(getattr(ll, fn)), fn
    for struct in ("CKernelPrefixStruct", "CKernelBuilderStruct", "DeferredCKernelStruct", "PodAllocatorApiStruct"):
        assert hasattr(ll, struct), struct


def test_the_section_11_kernel_example():
    pytest.importorskip("numba")

    @dynd.kernel("(float64) -> float64")
    def f(x):
        return x * 3.0

    assert f(dynd.array([[1.0], [2.0, 3.0]])).to_list() == [[3.0], [6.0, 9.0]]
