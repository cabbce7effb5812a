"""Pickling dynd arrays (``Array.__reduce_ex__`` calls :func:`reduce`).

An array with an outer dim and an element type with an Arrow form pickles as
its type and the tree of its Arrow buffers (``_dynd._arrow_parts``). With
protocol 5 each buffer is a :class:`pickle.PickleBuffer`, so
``pickle.dumps(a, protocol=5, buffer_callback=...)`` (what Dask's distributed
does) sends the data out of band with no copy into the stream; ragged rows
and strings included. Older protocols copy the buffers into the stream.

Loading imports the buffers back zero-copy (unaligned out-of-band frames are
copied once). Where the Arrow round trip gives a different dynd type -- an
outer ``var`` dim (Arrow's outer dim is a length), or ``?T`` with no missing
value at the outermost level -- the loaded array is cast to the pickled type
(a copy). Arrays without an Arrow form (0-d arrays, complex, int128, ...)
pickle as their type and JSON text.
"""

from __future__ import annotations

import pickle
from typing import Any

from . import _dynd
from ._errors import Error


def _wrap(node: tuple, protocol: int) -> tuple:
    fmt, fields, n, off, nulls, null_off, bufs, kids = node
    if protocol >= 5:
        conv = pickle.PickleBuffer
    else:
        conv = bytes
    return (
        fmt,
        fields,
        n,
        off,
        None if nulls is None else conv(nulls),
        null_off,
        [conv(b) for b in bufs],
        [_wrap(k, protocol) for k in kids],
    )


def _arrow_node(a: Any) -> Any:
    """The tree of `a`'s Arrow buffers, or None when it has no Arrow form."""
    if a.ndim < 1:
        return None
    try:
        return _dynd._arrow_parts(a)
    except Error:
        return None


def reduce(a: Any, protocol: int) -> tuple:
    t = str(a.type)
    node = _arrow_node(a)
    if node is not None:
        return (_from_arrow, (t, _wrap(node, protocol)))
    return (_from_json, (t, a.to_json()))


def _from_arrow(t: str, node: tuple) -> Any:
    a = _dynd._from_arrow_parts(node)
    if str(a.type) != t:
        a = a.cast(t)
    return a


def _from_json(t: str, text: str) -> Any:
    return _dynd.from_json(text, type=t)


def nbytes(a: Any) -> int:
    """The bytes an array's values take (``dynd::Array::data_bytes``): the
    type's data size when every value lies inline (O(1)); else that plus
    what its var dims, strings and pointers reach, in one pass over the rows
    (plain rows are counted by their length, not walked). A view counts what
    it reaches, not all the memory it shares."""
    return _dynd._nbytes(a)
