"""What the dask tests share: a Numba cfunc callable that triples float64."""

from __future__ import annotations

import pytest

import dynd


def tripling_cfunc() -> dynd.Callable:
    """``callable_from_cfunc`` of a Numba cfunc computing ``3 * x``
    (skips the test when Numba is missing)."""
    pytest.importorskip("numba")
    from numba import cfunc, types

    f64p = types.CPointer(types.float64)

    @cfunc(types.int32(f64p, types.CPointer(f64p), types.voidptr), nopython=True)
    def triple(dst, src, self_):  # noqa: ARG001
        dst[0] = 3.0 * src[0][0]
        return 0

    return dynd.callable_from_cfunc(triple, "(float64) -> float64")
