"""``dynd.Array.__array__``: NumPy views and copies (DESIGN §12).

Fixed dims of a numeric element are viewed, never copied, through the
buffer protocol (the NumPy array's base keeps the dynd array alive).
What has no NumPy view is copied: optional elements become a masked array,
strings a unicode array, structs a structured array. Ragged data (var
dims) has no NumPy form and is refused.
"""

from __future__ import annotations

from typing import Any

from ._errors import InvalidArgumentError, TypeMismatchError


def array_dunder(a: Any, dtype: Any = None, copy: bool | None = None, viewable: bool = True) -> Any:
    import numpy as np

    if viewable:
        arr = np.asarray(memoryview(a))
        if copy:
            arr = arr.copy()
    else:
        if copy is False:
            raise InvalidArgumentError(
                f"a dynd array of type {a.type} has no NumPy view; np.asarray(..., copy=False) cannot be honoured"
            )
        arr = _copy(np, a)
    if dtype is not None:
        dt = np.dtype(dtype)
        if arr.dtype != dt:
            if copy is False:
                raise InvalidArgumentError(f"converting {a.type} to {dt} needs a copy; copy=False cannot be honoured")
            arr = arr.astype(dt)
    return arr


def _copy(np: Any, a: Any) -> Any:
    shape = a.shape
    if any(n is None for n in shape):
        raise TypeMismatchError(
            f"{a.type} has a var dim: ragged data has no NumPy form; use .to_list(), or pyarrow through the Arrow interface"
        )
    names = a.type.fields
    if names is not None:
        cols = [(n, array_dunder(a[n], viewable=_viewable(a[n]))) for n in names]
        nd = len(shape)
        dt = np.dtype([(n, c.dtype, c.shape[nd:]) for n, c in cols])
        out = np.empty(shape, dtype=dt)
        for n, c in cols:
            out[n] = c
        return out
    values = a.to_list()
    mask = _mask(values)
    if mask is None:
        return np.array(values)
    filled = _fill(values)
    return np.ma.masked_array(np.array(filled), mask=np.array(mask, dtype=bool))


def _viewable(a: Any) -> bool:
    try:
        memoryview(a)
    except (BufferError, TypeError):
        return False
    return True


def _mask(values: Any) -> Any:
    """The mask of None values, or None when there are none."""
    found = False

    def walk(v: Any) -> Any:
        nonlocal found
        if isinstance(v, list):
            return [walk(x) for x in v]
        if v is None:
            found = True
            return True
        return False

    m = walk(values)
    return m if found else None


def _fill(values: Any) -> Any:
    first = _first_present(values)
    zero = type(first)() if first is not None else 0

    def walk(v: Any) -> Any:
        if isinstance(v, list):
            return [walk(x) for x in v]
        return zero if v is None else v

    return walk(values)


def _first_present(values: Any) -> Any:
    if isinstance(values, list):
        for v in values:
            f = _first_present(v)
            if f is not None:
                return f
        return None
    return values
