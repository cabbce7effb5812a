"""Choosing threads from Python (DESIGN §13): dynd.set_num_threads,
dynd.get_num_threads and ``with dynd.threads(n)``; bad counts refused with
typed errors; results that do not depend on the count."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynd


@pytest.fixture(autouse=True)
def _default_threads():
    yield
    dynd.set_num_threads(0)


def test_set_and_get_the_process_default():
    dynd.set_num_threads(3)
    assert dynd.get_num_threads() == 3
    dynd.set_num_threads(1)
    assert dynd.get_num_threads() == 1
    dynd.set_num_threads(0)
    assert dynd.get_num_threads() >= 1


def test_threads_blocks_nest_and_restore_also_on_errors():
    dynd.set_num_threads(2)
    with dynd.threads(3) as t:
        assert dynd.get_num_threads() == 3
        assert repr(t) == "dynd.threads(3)"
        with dynd.threads(1):
            assert dynd.get_num_threads() == 1
        assert dynd.get_num_threads() == 3
    assert dynd.get_num_threads() == 2
    with pytest.raises(ZeroDivisionError):
        with dynd.threads(4):
            1 / 0  # noqa: B018
    assert dynd.get_num_threads() == 2
    # A block overrides the process default while it lasts.
    with dynd.threads(0):
        dynd.set_num_threads(2)
        assert dynd.get_num_threads() == 2


def test_a_block_is_the_calling_threads_alone():
    seen = {}

    def other():
        seen["other"] = dynd.get_num_threads()

    dynd.set_num_threads(2)
    with dynd.threads(3):
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert dynd.get_num_threads() == 3
    assert seen["other"] == 2


@pytest.mark.parametrize("bad", [-1, 4097, 10**30])
def test_bad_counts_are_invalid_argument_errors(bad):
    with pytest.raises(dynd.InvalidArgumentError, match=str(bad)):
        dynd.set_num_threads(bad)
    with pytest.raises(dynd.InvalidArgumentError, match=str(bad)):
        dynd.threads(bad)
    assert isinstance(dynd.InvalidArgumentError("x"), ValueError)


@pytest.mark.parametrize("bad", ["2", 2.0, None, True])
def test_counts_that_are_not_ints_are_type_errors(bad):
    with pytest.raises(TypeError, match="int thread count"):
        dynd.threads(bad)
    with pytest.raises(TypeError, match="int thread count"):
        dynd.set_num_threads(bad)


def _every_family(x: np.ndarray, ragged: dynd.Array) -> list[object]:
    a = dynd.asarray(x)
    return [
        np.asarray(a + a * 2.0).tobytes(),
        np.asarray(a * a).tobytes(),
        dynd.max(a).to_list(),
        dynd.argmin(a).to_list(),
        dynd.sum(ragged, axis=-1).to_list(),
        dynd.max(ragged, axis=-1).to_list(),
        (ragged + 1.0).to_list(),
        dynd.sort(ragged).to_list(),
        ragged[ragged > 12.0].to_list(),
        np.asarray(dynd.sort(a)).tobytes(),
        np.asarray(dynd.cumsum(dynd.asarray(x.astype(np.int64)))).tobytes(),
    ]


def test_results_do_not_depend_on_the_thread_count():
    rng = np.random.default_rng(7)
    x = rng.integers(-1000, 1000, 300_001).astype(np.float64) / 8
    rows = [list(rng.uniform(0, 25, rng.integers(0, 20))) for _ in range(20_000)]
    ragged = dynd.array(rows, type="20000 * var * float64")
    with dynd.threads(1):
        serial = _every_family(x, ragged)
    for n in (2, 3):
        with dynd.threads(n):
            assert _every_family(x, ragged) == serial, f"{n} threads"


def test_a_failure_inside_a_split_is_the_serial_error():
    x = np.arange(400_000, dtype=np.float64)
    x[250_000] = np.nan
    x[390_000] = np.inf
    a = dynd.asarray(x)
    messages = []
    for n in (1, 2, 3):
        with dynd.threads(n):
            with pytest.raises(dynd.ValueOverflowError) as e:
                a.cast("int32", errmode="overflow")
            messages.append(str(e.value))
    assert messages[0] == messages[1] == messages[2]
    assert "nan" in messages[0].lower()


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(0, 300_000),
    threads=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
)
def test_integer_calls_are_the_same_on_any_count(n, threads, seed):
    x = np.random.default_rng(seed).integers(-(2**40), 2**40, n)
    a = dynd.asarray(x)
    with dynd.threads(1):
        want = (np.asarray(a * 3 - a).tobytes(), dynd.sum(a).to_list(), np.asarray(dynd.sort(a)).tobytes())
    with dynd.threads(threads):
        got = (np.asarray(a * 3 - a).tobytes(), dynd.sum(a).to_list(), np.asarray(dynd.sort(a)).tobytes())
    assert got == want
