"""``dynd.Array.__array__``: NumPy views and copies (DESIGN §12).

Fixed dims of a numeric element are viewed, never copied, through the
buffer protocol (the NumPy array's base keeps the dynd array alive).
What has no NumPy view is copied: optional elements become a masked array
(missing floats hold NaN under the mask, so ``np.asarray``, which drops
the mask, still shows them), strings a unicode array, bytes a bytes
array, structs a structured array. Ragged data (var dims) has no NumPy
form and is refused with ``dynd.TypeMismatchError``.

NumPy 2's ``__array__(dtype=None, copy=None)``: ``copy=True`` always
gives a new array, ``copy=False`` refuses (``ValueError``) what needs a
copy, ``copy=None`` copies only when it must.
"""

from __future__ import annotations

from typing import Any

from ._errors import InvalidArgumentError, TypeMismatchError

#: NumPy dtypes of dynd's element types that have one.
_DTYPES = {
    "bool": "bool",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
    "complex[float32]": "complex64",
    "complex[float64]": "complex128",
}


def array_dunder(a: Any, dtype: Any = None, copy: bool | None = None, viewable: bool = True) -> Any:
    import numpy as np

    if viewable:
        arr = np.asarray(memoryview(a))
        want = np.dtype(dtype) if dtype is not None else arr.dtype
        if want != arr.dtype:
            if copy is False:
                raise InvalidArgumentError(
                    f"converting {a.type} to {want} needs a copy; copy=False cannot be honoured"
                )
            return arr.astype(want)
        return arr.copy() if copy else arr
    if copy is False:
        raise InvalidArgumentError(
            f"a dynd array of type {a.type} has no NumPy view; np.asarray(..., copy=False) cannot be honoured"
        )
    arr = _copy(np, a)
    if dtype is not None:
        dt = np.dtype(dtype)
        if arr.dtype != dt:
            arr = arr.astype(dt)
    return arr


def _element(type_text: str) -> str:
    """The element type of a dynd type's text: what follows its dims."""
    depth = 0
    start = 0
    i = 0
    while i < len(type_text):
        c = type_text[i]
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif depth == 0 and type_text.startswith(" * ", i):
            start = i + 3
            i += 2
        i += 1
    return type_text[start:]


def _copy(np: Any, a: Any) -> Any:
    shape = a.shape
    if any(n is None for n in shape):
        raise TypeMismatchError(
            f"{a.type} has a var dim: ragged data has no NumPy form; use .to_list(), or pyarrow through the Arrow interface"
        )
    names = a.type.fields
    if names is not None:
        return _structs(np, a, names, shape)
    elem = _element(str(a.type))
    optional = elem.startswith("?")
    value = elem[1:] if optional else elem
    values = a.to_list()
    mask = _mask(values) if optional else None
    if value in _DTYPES:
        dt = np.dtype(_DTYPES[value])
        fill: Any = np.nan if dt.kind in "fc" else dt.type(0)
    elif value == "string" or value.startswith("fixed_string"):
        dt, fill = None, ""
    elif value == "bytes" or value.startswith("fixed_bytes"):
        dt, fill = None, b""
    else:
        raise TypeMismatchError(f"{a.type} has no NumPy form: its element {value} has no NumPy dtype")
    data = _fill(values, fill) if mask is not None else values
    out = np.array(data, dtype=dt)
    if out.shape != tuple(shape):
        out = out.reshape(shape)
    if mask is None:
        return out
    return np.ma.masked_array(out, mask=np.array(mask, dtype=bool).reshape(shape))


def _structs(np: Any, a: Any, names: Any, shape: Any) -> Any:
    """A structured array (masked when a field has missing values)."""
    nd = len(shape)
    cols = []
    for n in names:
        f = a[n]
        cols.append((n, array_dunder(f, viewable=_viewable(f))))
    dt = np.dtype([(n, c.dtype, c.shape[nd:]) for n, c in cols])
    out = np.empty(shape, dtype=dt)
    masked = False
    for n, c in cols:
        out[n] = np.ma.getdata(c)
        masked = masked or np.ma.isMaskedArray(c)
    if not masked:
        return out
    mask = np.zeros(shape, dtype=np.ma.make_mask_descr(dt))
    for n, c in cols:
        mask[n] = np.ma.getmaskarray(c)
    return np.ma.masked_array(out, mask=mask)


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


def _fill(values: Any, fill: Any) -> Any:
    def walk(v: Any) -> Any:
        if isinstance(v, list):
            return [walk(x) for x in v]
        return fill if v is None else v

    return walk(values)
