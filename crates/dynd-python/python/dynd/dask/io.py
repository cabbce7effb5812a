"""Readers and writers of dynd.dask collections.

- :func:`from_json`: JSON Lines files (a path, a glob, or a list of them), cut
  into byte ranges of ``blocksize`` aligned on line boundaries: a partition
  holds the lines that *start* in its range. The element type is inferred by
  dynd from the first block when not given. A line that does not parse is a
  dynd error naming the partition, the file and the file's line number.
- :func:`from_parquet`: one partition per row group, read by pyarrow and
  imported through dynd's Arrow C Data import; lengths known from the
  metadata; ``columns=`` reads only those.
- :func:`from_arrow`: a pyarrow Table, RecordBatch, or a list of batches.
- :func:`to_json`, :func:`to_parquet`: one file per partition.
- :func:`to_dask_array`: fixed dims of numbers as a ``dask.array`` whose
  chunks are the partitions (zero-copy NumPy views).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from typing import Any

import dask
from dask.utils import parse_bytes

import dynd
from dynd import _dynd

from .core import Array, Call, Literal, _SLOT, canonical, element_type, empty, named, new_name

__all__ = ["from_arrow", "from_json", "from_parquet", "to_dask_array", "to_json", "to_parquet"]


# ------------------------------------------------------------------ paths


def expand_paths(paths: Any, what: str) -> list[str]:
    """A path, a glob or a directory, or a list of them, as a sorted list of files."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    out: list[str] = []
    for p in items:
        p = os.fspath(p)
        if any(ch in p for ch in "*?["):
            found = sorted(glob.glob(p))
            if not found:
                raise dynd.InvalidArgumentError(f"{what}: no file matches {p!r}")
            out.extend(found)
        elif os.path.isdir(p):
            found = sorted(os.path.join(p, f) for f in os.listdir(p) if not f.startswith((".", "_")))
            if not found:
                raise dynd.InvalidArgumentError(f"{what}: the directory {p!r} holds no file")
            out.extend(found)
        elif os.path.exists(p):
            out.append(p)
        else:
            raise dynd.InvalidArgumentError(f"{what}: no such file {p!r}")
    if not out:
        raise dynd.InvalidArgumentError(f"{what}: no paths given")
    return out


# ------------------------------------------------------------------ JSON Lines


def read_block(path: str, start: int, end: int | None) -> bytes:
    """The lines of ``path`` that start in ``[start, end)`` (``end`` None: to the end)."""
    with open(path, "rb") as f:
        if start > 0:
            f.seek(start - 1)
            if f.read(1) != b"\n":
                f.readline()  # the rest of a line that started before us
        first = f.tell()
        if end is None:
            return f.read()
        if first >= end:
            return b""
        chunk = f.read(end - first)
        if chunk and not chunk.endswith(b"\n"):
            chunk += f.readline()
        return chunk


def _line_of(path: str, offset: int) -> int:
    """How many lines of ``path`` lie before byte ``offset`` (read only on error)."""
    n = 0
    with open(path, "rb") as f:
        left = offset
        while left > 0:
            b = f.read(min(left, 1 << 20))
            if not b:
                break
            n += b.count(b"\n")
            left -= len(b)
    return n


def _block_start(path: str, start: int) -> int:
    """The byte where the first line of the block at ``start`` begins."""
    if start == 0:
        return 0
    with open(path, "rb") as f:
        f.seek(start - 1)
        if f.read(1) == b"\n":
            return start
        f.readline()
        return f.tell()


_LINE = re.compile(r"JSON line (\d+)")


class ReadJsonBlock:
    """A task: the JSON Lines block ``[start, end)`` of ``path`` as ``n * T``."""

    __slots__ = ("path", "start", "end", "elem", "index")

    def __init__(self, path: str, start: int, end: int | None, elem: str, index: int) -> None:
        self.path, self.start, self.end, self.elem, self.index = path, start, end, elem, index

    def __reduce__(self) -> Any:
        return (ReadJsonBlock, (self.path, self.start, self.end, self.elem, self.index))

    def project(self, fields: Sequence[str], elem: str) -> ReadJsonBlock:
        """The same block read as ``elem``, the record of only ``fields``
        (the others skipped: column projection, dynd.dask.optimize)."""
        return ReadJsonBlock(self.path, self.start, self.end, elem, self.index)

    def __call__(self) -> dynd.Array:
        try:
            # `N * elem`, N the block's non-blank lines: read (the lines
            # that start in the byte range, as read_block cuts them) into a
            # buffer dynd reuses from one block to the next, and parsed
            # there.
            return _dynd._read_json_lines(self.path, self.start, self.end, self.elem)
        except dynd.Error as e:
            msg = str(e)
            base = _line_of(self.path, _block_start(self.path, self.start))
            m = _LINE.search(msg)
            if m:
                where = f"{self.path}, line {base + int(m.group(1))}"
                msg = _LINE.sub(where, msg, count=1)
            else:
                msg = f"{self.path} (lines from {base + 1}): {msg}"
            raise named(type(e)(msg), f"partition {self.index}") from e


def from_json(paths: Any, type: Any = None, blocksize: Any = "64 MiB") -> Array:  # noqa: A002
    """JSON Lines files as a collection: a partition per ``blocksize`` bytes
    of each file (``None``: one per file), cut at line boundaries. ``type``
    is the element type (one line); inferred by dynd from the first block
    when None."""
    files = expand_paths(paths, "from_json")
    bs = None if blocksize is None else (parse_bytes(blocksize) if isinstance(blocksize, str) else int(blocksize))
    if bs is not None and bs < 1:
        raise dynd.InvalidArgumentError(f"blocksize must be positive, not {blocksize!r}")
    ranges: list[tuple[str, int, int | None]] = []
    for f in files:
        size = os.path.getsize(f)
        if bs is None or size <= bs:
            ranges.append((f, 0, None))
        else:
            starts = list(range(0, size, bs))
            ranges.extend((f, s, s + bs if s + bs < size else None) for s in starts)
    if type is None:
        f, s, e = ranges[0]
        text = read_block(f, s, e)
        if not text.strip():
            raise dynd.InvalidArgumentError(f"from_json: cannot infer a type from {f}: its first block has no line; give type=")
        try:
            inferred = dynd.infer_type(text.decode("utf-8"), lines=True)
        except dynd.Error as err:
            m = _LINE.search(str(err))
            msg = _LINE.sub(f"{f}, line {m.group(1)}", str(err), count=1) if m else f"{f}: {err}"
            raise err.__class__(msg) from None
        except UnicodeDecodeError as err:
            raise dynd.ParseError(f"{f}: not utf-8 ({err})") from None
        elem = element_type(inferred)
    else:
        elem = canonical(type)
    name = new_name("from-json")
    dsk = {(name, i): (ReadJsonBlock(f, s, e, elem, i),) for i, (f, s, e) in enumerate(ranges)}
    return Array(dsk, name, len(ranges), elem, None)


# ------------------------------------------------------------------ Parquet and Arrow


class ReadRowGroup:
    __slots__ = ("path", "group", "columns", "elem", "index")

    def __init__(self, path: str, group: int, columns: Sequence[str] | None, elem: str, index: int) -> None:
        self.path, self.group, self.columns, self.elem, self.index = path, group, columns, elem, index

    def __reduce__(self) -> Any:
        return (ReadRowGroup, (self.path, self.group, self.columns, self.elem, self.index))

    def project(self, fields: Sequence[str], elem: str) -> ReadRowGroup:
        """The same row group, only the columns ``fields`` read (column
        projection, dynd.dask.optimize)."""
        return ReadRowGroup(self.path, self.group, list(fields), elem, self.index)

    def __call__(self) -> dynd.Array:
        import pyarrow.parquet as pq

        try:
            table = pq.ParquetFile(self.path).read_row_group(self.group, columns=self.columns)
            a = dynd.from_arrow(table)
        except dynd.Error as e:
            raise named(type(e)(f"{self.path}, row group {self.group}: {e}"), f"partition {self.index}") from e
        except Exception as e:  # pyarrow's own errors: a file that does not read
            raise dynd.ParseError(f"partition {self.index}: {self.path}, row group {self.group}: {e}") from e
        got = element_type(a.type)
        if got != self.elem:
            raise dynd.TypeMismatchError(
                f"partition {self.index}: {self.path}, row group {self.group} has type {a.type}, expected n * {self.elem}"
            )
        return a


def from_parquet(path: Any, columns: Sequence[str] | None = None) -> Array:
    """Parquet files (a path, glob, directory or list) as a collection: one
    partition per row group, lengths known; ``columns`` reads only those."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = expand_paths(path, "from_parquet")
    cols = list(columns) if columns is not None else None
    parts: list[tuple[str, int, int]] = []
    elem = None
    for f in files:
        try:
            pf = pq.ParquetFile(f)
        except Exception as e:
            raise dynd.ParseError(f"from_parquet: {f} is not a Parquet file: {e}") from e
        schema = pf.schema_arrow
        if cols is not None:
            missing = [c for c in cols if c not in schema.names]
            if missing:
                raise dynd.InvalidArgumentError(f"from_parquet: {f} has no column {missing[0]!r} (it has {schema.names})")
            schema = pa.schema([schema.field(c) for c in cols])
        t = element_type(dynd.from_arrow(schema.empty_table()).type)
        if elem is None:
            elem = t
        elif t != elem:
            raise dynd.TypeMismatchError(f"from_parquet: {f} has rows of type {t}, the files before it {elem}")
        md = pf.metadata
        parts.extend((f, g, md.row_group(g).num_rows) for g in range(md.num_row_groups))
    assert elem is not None
    if not parts:
        raise dynd.InvalidArgumentError(f"from_parquet: {files} hold no row group")
    name = new_name("from-parquet")
    dsk = {(name, i): (ReadRowGroup(f, g, cols, elem, i),) for i, (f, g, _) in enumerate(parts)}
    return Array(dsk, name, len(parts), elem, [n for _, _, n in parts])


def from_arrow(data: Any, npartitions: int | None = None) -> Array:
    """A pyarrow Table (a partition per record batch, or ``npartitions``
    slices), a RecordBatch, or a list of batches or arrays; each partition
    imported zero-copy where dynd's Arrow import allows."""
    if isinstance(data, (list, tuple)):
        pieces = list(data)
    elif npartitions is not None and hasattr(data, "slice") and hasattr(data, "num_rows"):
        n = data.num_rows
        if npartitions < 1:
            raise dynd.InvalidArgumentError(f"npartitions must be at least 1, not {npartitions}")
        bounds = [i * n // npartitions for i in range(npartitions)] + [n]
        pieces = [data.slice(s, e - s) for s, e in zip(bounds[:-1], bounds[1:], strict=True)]
    elif hasattr(data, "to_batches"):
        pieces = data.to_batches() or [data]
    else:
        pieces = [data]
    arrays = [p if isinstance(p, dynd.Array) else dynd.from_arrow(p) for p in pieces]
    elem = element_type(arrays[0].type)
    for i, a in enumerate(arrays):
        if element_type(a.type) != elem:
            raise dynd.TypeMismatchError(f"from_arrow: partition {i} has type {a.type}, partition 0 n * {elem}")
    name = new_name("from-arrow")
    dsk = {(name, i): (Literal(a),) for i, a in enumerate(arrays)}
    return Array(dsk, name, len(arrays), elem, [len(a) for a in arrays])


# ------------------------------------------------------------------ writers


def _target(path: str, i: int, n: int, ext: str) -> str:
    """Partition ``i``'s file: numbers zero-padded so that names sort in order."""
    num = f"{i:0{len(str(n - 1))}d}"
    if "*" in path:
        return path.replace("*", num)
    return os.path.join(path, f"part-{num}.{ext}")


def _write_json(part: dynd.Array, target: str) -> str:
    with open(target, "w", encoding="utf-8") as f:
        for row in part:
            f.write(row.to_json())
            f.write("\n")
    return target


def _write_parquet(part: dynd.Array, target: str) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(part), target)
    return target


def _write(x: Array, path: str, ext: str, writer: Any, compute: bool) -> Any:
    path = os.fspath(path)
    if "*" not in path:
        os.makedirs(path, exist_ok=True)
    from dask.delayed import Delayed

    name = new_name(f"to-{ext}")
    dsk = dict(x.dask)
    for i in range(x.npartitions):
        dsk[(name, i)] = (Call(writer, [_SLOT, _target(path, i, x.npartitions, ext)], {}, i, None, False), (x.name, i))
    outs = [Delayed((name, i), dsk) for i in range(x.npartitions)]
    return list(dask.compute(*outs)) if compute else outs


def to_json(x: Array, path: str, compute: bool = True) -> Any:
    """One JSON Lines file per partition: ``path`` a directory (``part-<i>.jsonl``)
    or a pattern whose ``*`` is the partition number. The paths written (or,
    with ``compute=False``, the delayed writes)."""
    return _write(x, path, "jsonl", _write_json, compute)


def to_parquet(x: Array, path: str, compute: bool = True) -> Any:
    """One Parquet file per partition (elements must be records: one column per
    field); ``path`` as for :func:`to_json`."""
    if dynd.type(x._elem).fields is None:
        raise dynd.TypeMismatchError(f"to_parquet needs records (one column per field), not rows of type {x._elem}")
    return _write(x, path, "parquet", _write_parquet, compute)


def _as_numpy(part: dynd.Array) -> Any:
    import numpy as np

    return np.asarray(part)


def to_dask_array(x: Array) -> Any:
    """A ``dask.array`` over the partitions (fixed dims of numbers only): the
    chunks are the partitions, each a zero-copy NumPy view of its dynd array."""
    import dask.array as da
    import numpy as np

    try:
        meta = np.asarray(empty(x._elem))
    except Exception as e:
        raise dynd.TypeMismatchError(
            f"to_dask_array needs fixed dims of numbers, not rows of type {x._elem} ({e})"
        ) from None
    lengths = x.partition_lengths()
    blocks = []
    for i, d in enumerate(x.map_raw(_as_numpy, prefix="to-numpy")):
        blocks.append(da.from_delayed(d, shape=(lengths[i], *meta.shape[1:]), dtype=meta.dtype))
    return da.concatenate(blocks, axis=0)
