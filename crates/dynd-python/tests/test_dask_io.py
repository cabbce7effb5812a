"""dynd.dask readers and writers: JSON Lines (blocks aligned on lines, errors
naming path and line), Parquet (a partition per row group), Arrow, to_json,
to_parquet, to_dask_array; results against dynd on the whole data."""

from __future__ import annotations

import json
import os

import pytest

dask = pytest.importorskip("dask")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
np = pytest.importorskip("numpy")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import dynd  # noqa: E402
import dynd.dask as dd  # noqa: E402

RECS = [{"id": i, "xs": [j * 0.5 for j in range(i % 4)], "s": f"r{i}" * (i % 3)} for i in range(100)]
ELEM = "{id: int64, xs: var * float64, s: string}"


@pytest.fixture(autouse=True)
def threaded():
    with dask.config.set(scheduler="threads"):
        yield


@pytest.fixture
def jsonl(tmp_path):
    cuts = [0, 40, 41, 41, 100]  # files of very different sizes, an empty one included
    for k in range(4):
        with open(tmp_path / f"p{k}.jsonl", "w") as f:
            for r in RECS[cuts[k] : cuts[k + 1]]:
                f.write(json.dumps(r) + "\n")
    return tmp_path


def whole():
    return dynd.array(RECS, type=f"100 * {ELEM}")


@pytest.mark.parametrize("blocksize", [None, 64, 200, 1000, "1 MiB"])
def test_from_json_blocks_on_line_boundaries(jsonl, blocksize):
    x = dd.from_json(str(jsonl / "*.jsonl"), blocksize=blocksize, type=ELEM)
    assert not x.known_lengths and x.type == f"var * {ELEM}"
    assert x.compute().to_list() == RECS
    assert dd.sum(dd.sum(x.xs, axis=-1)).compute().to_list() == dynd.sum(dynd.sum(whole().xs, axis=-1)).to_list()


def test_from_json_infers_the_type_and_takes_lists(jsonl):
    x = dd.from_json([str(jsonl / "p0.jsonl"), str(jsonl / "p3.jsonl")], blocksize=300)
    assert x.element_type == dynd.type(ELEM)
    assert x.compute().to_list() == RECS[:40] + RECS[41:]


@settings(max_examples=15, deadline=None)
@given(blocksize=st.integers(1, 400), drop_last_newline=st.booleans())
def test_any_blocksize_gives_the_same_rows(tmp_path_factory, blocksize, drop_last_newline):
    d = tmp_path_factory.mktemp("j")
    text = "".join(json.dumps(r) + "\n" for r in RECS[:30])
    if drop_last_newline:
        text = text[:-1]
    (d / "a.jsonl").write_text(text)
    x = dd.from_json(str(d / "a.jsonl"), blocksize=blocksize, type=ELEM)
    assert x.compute().to_list() == RECS[:30]


def test_malformed_line_names_path_and_line(jsonl):
    lines = (jsonl / "p3.jsonl").read_text().splitlines(keepends=True)
    lines[36] = '{"id": 5, "xs": [1.0, oops], "s": "bad"}\n'
    bad = jsonl / "bad.jsonl"
    bad.write_text("".join(lines))
    for bs in (None, 300):
        x = dd.from_json(str(bad), blocksize=bs, type=ELEM)
        with pytest.raises(dynd.ParseError, match=f"partition \\d+: {bad}, line 37, column"):
            x.compute()
    wrong = dd.from_json(str(jsonl / "p0.jsonl"), type="{id: string}")
    with pytest.raises(dynd.ParseError, match="p0.jsonl, line 1"):
        wrong.compute()
    with pytest.raises(dynd.InvalidArgumentError, match="no file matches"):
        dd.from_json(str(jsonl / "*.nope"))
    with pytest.raises(dynd.InvalidArgumentError, match="no such file"):
        dd.from_json(str(jsonl / "missing.jsonl"))


def test_json_round_trip(jsonl, tmp_path):
    x = dd.from_json(str(jsonl / "*.jsonl"), blocksize=256, type=ELEM)
    paths = x.to_json(str(tmp_path / "out"))
    assert len(paths) == x.npartitions and all(os.path.exists(p) for p in paths)
    assert dd.from_json(str(tmp_path / "out"), type=ELEM).compute().to_list() == RECS


def test_parquet_row_groups_and_columns(tmp_path):
    t = pa.table({"a": list(range(10)), "b": [[1.0] * i for i in range(10)], "s": [str(i) for i in range(10)]})
    pq.write_table(t, tmp_path / "t.parquet", row_group_size=3)
    want = dynd.from_arrow(t)
    x = dd.from_parquet(str(tmp_path / "t.parquet"))
    assert x.npartitions == 4 and x.lengths == (3, 3, 3, 1) and x.type == want.type
    assert x.compute().to_list() == want.to_list()
    assert dd.sum(x.a).compute().to_list() == 45
    y = dd.from_parquet(str(tmp_path / "t.parquet"), columns=["s"])
    assert y.element_type == "{s: ?string}" and y.compute().s.to_list() == want.s.to_list()
    with pytest.raises(dynd.InvalidArgumentError, match="no column 'zz'"):
        dd.from_parquet(str(tmp_path / "t.parquet"), columns=["zz"])
    paths = x.to_parquet(str(tmp_path / "pq"))
    assert len(paths) == 4
    assert dd.from_parquet(str(tmp_path / "pq")).compute().to_list() == want.to_list()
    (tmp_path / "junk.parquet").write_text("not parquet")
    with pytest.raises(dynd.ParseError, match="junk.parquet is not a Parquet file"):
        dd.from_parquet(str(tmp_path / "junk.parquet"))


def test_from_arrow_and_to_dask_array():
    t = pa.table({"a": list(range(10)), "s": [str(i) for i in range(10)]})
    x = dd.from_arrow(t, npartitions=3)
    assert x.lengths == (3, 3, 4) and x.compute().to_list() == dynd.from_arrow(t).to_list()
    y = dd.from_arrow(t.to_batches(max_chunksize=4))
    assert y.lengths == (4, 4, 2)
    m = dynd.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    z = dd.from_dynd(m, npartitions=2).to_dask_array()
    assert z.chunks == ((1, 2), (2,))
    np.testing.assert_array_equal(z.compute(), np.asarray(m))
    with pytest.raises(dynd.TypeMismatchError, match="fixed dims of numbers"):
        dd.from_dynd(dynd.array([[1], [2, 3]]), npartitions=2).to_dask_array()


def test_from_delayed_round_trip():
    a = dynd.array([[1, 2], [], [3]])
    x = dd.from_dynd(a, npartitions=2)
    y = dd.from_delayed(x.to_delayed(), type=x.element_type)
    assert y.compute().to_list() == a.to_list()


def test_blank_lines_and_crlf(tmp_path):
    rows = [json.dumps(r) for r in RECS[:12]]
    text = "\n" + "\n".join(rows[:5]) + "\n\n  \n\t\n" + "\r\n".join(rows[5:]) + "\r\n"
    (tmp_path / "b.jsonl").write_text(text)
    for bs in (None, 50, 333):
        x = dd.from_json(str(tmp_path / "b.jsonl"), blocksize=bs, type=ELEM)
        assert x.compute().to_list() == RECS[:12]


@settings(max_examples=40, deadline=None)
@given(
    lens=st.lists(st.integers(0, 90_000), min_size=1, max_size=6),
    blanks=st.lists(st.sampled_from(["", "\n", "  \n", "\r\n"]), min_size=6, max_size=6),
    cuts=st.lists(st.integers(0, 400_000), min_size=2, max_size=2),
    last_newline=st.booleans(),
)
def test_block_reader_cuts_lines_as_read_block_does(tmp_path_factory, lens, blanks, cuts, last_newline):
    """dynd's block reader (a reused buffer; lines longer than its 64 KiB of
    room past the block) against the Python cutter, on any byte range."""
    from dynd import _dynd
    from dynd.dask.io import read_block

    d = tmp_path_factory.mktemp("b")
    text = "".join(blanks[k] + json.dumps("x" * n) + "\n" for k, n in enumerate(lens))
    if not last_newline:
        text = text[:-1]
    path = d / "long.jsonl"
    path.write_text(text)
    start, end = sorted(c % (len(text) + 2) for c in cuts)
    for e in (end, None):
        got = _dynd._read_json_lines(str(path), start, e, "string")
        want = dynd.from_json(read_block(str(path), start, e), type="var * string", lines=True)
        assert got.to_list() == want.to_list(), (start, e)
        assert str(got.type) == f"{len(want)} * string"


def test_block_reader_errors(tmp_path):
    from dynd import _dynd

    with pytest.raises(FileNotFoundError):
        _dynd._read_json_lines(str(tmp_path / "gone.jsonl"), 0, None, "int64")
    (tmp_path / "d").mkdir()
    with pytest.raises(OSError):
        _dynd._read_json_lines(str(tmp_path / "d"), 0, None, "int64")
    (tmp_path / "a.jsonl").write_text("1\n2\nx\n")
    with pytest.raises(dynd.ParseError, match="JSON line 3, column 1"):
        _dynd._read_json_lines(str(tmp_path / "a.jsonl"), 0, None, "int64")
    (tmp_path / "u.jsonl").write_bytes(b'"a"\n"\xff"\n')
    with pytest.raises(dynd.ParseError, match="not valid utf-8"):
        _dynd._read_json_lines(str(tmp_path / "u.jsonl"), 0, None, "string")
    with pytest.raises(dynd.Error):
        _dynd._read_json_lines(str(tmp_path / "a.jsonl"), 0, None, "T")
    # a file removed after the graph was built: the OSError, from the partition
    (tmp_path / "late.jsonl").write_text("1\n")
    x = dd.from_json(str(tmp_path / "late.jsonl"), type="int64")
    os.remove(tmp_path / "late.jsonl")
    with pytest.raises(FileNotFoundError):
        x.compute()


def _reader_types(coll):
    """The element type each reader task of ``coll``'s optimized graph reads."""
    g = coll.__dask_optimize__(coll.__dask_graph__(), coll.__dask_keys__())
    return {v[0].elem for v in g.values() if isinstance(v, tuple) and len(v) == 1 and hasattr(v[0], "project")}


def test_column_projection_reads_only_the_fields_used(jsonl, tmp_path):
    x = dd.from_json(str(jsonl / "*.jsonl"), blocksize=300, type=ELEM)
    total = dd.sum(dd.sum(x[x.id % 3 != 0].xs, axis=-1))
    assert _reader_types(total) == {"{id: int64, xs: var * float64}"}
    ids = x.id[x.id > 50]
    assert _reader_types(ids) == {"{id: int64}"}
    want = dynd.sum(dynd.sum(whole().xs[whole().id % 3 != 0], axis=-1)).to_list()
    assert total.compute().to_list() == want
    with dask.config.set({"dynd.dask.project-columns": False}):
        assert _reader_types(total) == {ELEM}
        assert total.compute().to_list() == want
    # used whole (computed, filtered as records, mapped): every field read
    assert _reader_types(x) == {ELEM}
    assert _reader_types(x[x.id > 3]) == {ELEM}
    assert _reader_types(dd.map_partitions(lambda p: p, x)) == {ELEM}
    # computed together: the union of what each uses
    both = dask.compute(dd.sum(x.id), dd.sum(dd.count(x.xs, axis=-1)), optimize_graph=True)
    assert [b.to_list() for b in both] == [sum(range(100)), sum(i % 4 for i in range(100))]
    # tasks of other collections in the same graph (tuples holding lists
    # are not keys) leave the projection alone
    from dynd.dask.optimize import project_columns

    g = dict(ids.__dask_graph__())
    g[("other", 0)] = (sum, [1, 2])
    out = project_columns(g, ids.__dask_keys__() + [("other", 0)])
    assert {v[0].elem for v in out.values() if isinstance(v, tuple) and len(v) == 1 and hasattr(v[0], "project")} == {
        "{id: int64}"
    }
    # a skipped field is checked for JSON syntax, not against its type
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "xs": [], "s": 5}\n{"id": 2, "xs": [1.5], "s": "b"}\n')
    y = dd.from_json(str(bad), type=ELEM)
    assert dd.sum(y.id).compute().to_list() == 3
    with pytest.raises(dynd.ParseError, match="bad.jsonl, line 1"):
        y.compute()
    bad.write_text('{"id": 1, "xs": [], "s": [1, }\n')
    with pytest.raises(dynd.ParseError, match="bad.jsonl, line 1"):
        dd.sum(dd.from_json(str(bad), type=ELEM).id).compute()


def test_column_projection_of_parquet_reads_only_those_columns(tmp_path):
    schema = pa.schema(
        [
            pa.field("a", pa.int64(), nullable=False),
            pa.field("b", pa.list_(pa.field("item", pa.float64(), nullable=False)), nullable=False),
            pa.field("s", pa.string(), nullable=False),
        ]
    )
    t = pa.table({"a": list(range(10)), "b": [[1.0] * i for i in range(10)], "s": [str(i) for i in range(10)]}, schema=schema)
    pq.write_table(t, tmp_path / "t.parquet", row_group_size=3)
    x = dd.from_parquet(str(tmp_path / "t.parquet"))
    for y, cols, want in [
        (dd.sum(x.a), ["a"], 45),
        (dd.sum(x.a[x.a > 4]), ["a"], 35),
        (dd.sum(x.a[x.s != "3"]), ["a", "s"], 42),
        (dd.sum(dd.sum(x.b, axis=-1)), ["b"], 45.0),
    ]:
        g = y.__dask_optimize__(y.__dask_graph__(), y.__dask_keys__())
        readers = [v[0] for v in g.values() if isinstance(v, tuple) and len(v) == 1 and hasattr(v[0], "project")]
        assert len(readers) == 4 and all(r.columns == cols for r in readers), [r.columns for r in readers]
        assert y.compute().to_list() == want
