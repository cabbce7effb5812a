#!/usr/bin/env python3
"""Compare dynd-rs against NumPy, numexpr, awkward and Python's json.

    python3 bench/compare.py [--quick] [--only GROUP[,GROUP...]] [--threads N[,N...]]

GROUP is a dynd-bench group, or `python` for the rows of the dynd Python
package alone (with `ragged` too, they include the Rust-call comparison).

--only runs only those dynd-bench groups (copies, casts, new_arrays, ...)
and their counterparts. DYND_BENCH=/path/to/dynd-bench runs that binary
instead of building this tree's (to compare two builds side by side).

--threads 1,2,4 passes the thread sweep to dynd-bench (`dynd-bench
--threads`: every row that scales runs once per count; its 1-thread row
keeps the plain name, the others are "..., N threads"). The rows of the
sweep get a table of their own: each count's time, its speed-up over our
1-thread time, and, where numexpr has the operation (a + b, a*b+c, sum,
where), numexpr at the same thread count (numexpr.set_num_threads) and the
ratio to it. Those numexpr ratios count in the worst ratio; a line `worst
speed-up` follows it (the lowest speed-up over 1 thread among rows of more
than one thread). The fixed "2 threads" rows of a plain run are left to
that table.

On first run this creates bench/.venv, installs numpy, numexpr and awkward
into it with pip, and re-executes itself inside it. It then builds and runs
`dynd-bench --json` (passing --quick through), times the same operations on
the same sizes in the Python libraries, and prints a side-by-side table:
operation, dynd ms, their ms, library, and ratio = their time / our time
(above 1: dynd is faster). It ends with the line `worst ratio: X (operation)`.

What is compared (their side):
  - NumPy runs every operation on one thread; dynd's callables run inside a
    one-thread rayon pool unless the row says "2 threads".
  - casts: np.copyto(dst, src, casting='unsafe') into a preallocated array,
    against dynd's nocheck cast kernel. Checked casts have no NumPy
    counterpart: they are measured against our own nocheck ("internal
    targets"), not in the worst ratio.
  - a*b+c: NumPy `a*b+c` (two passes, a temporary), NumPy with out=, and
    numexpr on 1 and 2 threads (one pass, like dynd-ops lazy operators).
  - new arrays (1000x1000 float64): a[::2, ::3].copy(); a.astype(np.int32)
    against Array::cast in nocheck and in overflow mode (astype checks
    nothing, so the overflow row does more work than its counterpart);
    Array::from(Vec<f64>) of 1M (zero-copy) against np.frombuffer over an
    existing buffer (also zero-copy: the honest counterpart of wrapping
    memory, not of copying it); Array::from(&[f64]) (a copy) against
    a.copy().
  - ragged: awkward ak.sum(x, axis=1) and x + 1.0 on the same ragged array;
    ak.sum(x, axis=-1) and x + 1.0 over it as ?float64 with 10% missing, and
    ak.max(x, axis=-1) over it with every tenth row empty.
  - select: NumPy a[idx] (random int64 indices) and np.where(c, x, y) on
    10M float64; awkward x[x > 12.0] and jagged x[idx] (each row reversed)
    on the ragged array.
  - sort: ak.sort(x, axis=-1) on the same ragged array; np.sort,
    np.argsort(kind='stable') and np.cumsum on the same 10M pseudo-random
    float64.
  - JSON: dynd parses into a typed array. Python's json.loads builds Python
    objects (lists, dicts, floats), np.array(json.loads(text)) adds the typed
    conversion for numbers, and ak.from_json parses into typed columnar
    arrays (the closest counterpart). Same text on both sides.
  - arrow: ak.to_arrow(x) (export alone) and ak.from_arrow(ak.to_arrow(x))
    (export + import) on 10M float64 and on the ragged array, against
    dynd's Array::to_arrow and to_arrow + from_arrow through the C Data
    Interface structs (needs pyarrow).
  - python (the `dynd` package, when it imports in bench/.venv: install it
    with `bench/.venv/bin/pip install ./crates/dynd-python`): `a + b` on
    10-element float64 arrays from Python against np.add on the same; and
    dynd.sum(x, axis=-1) on the ragged array from Python against the same
    call from Rust (dynd-bench's "ragged sum inner axis") and ak.sum.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV = os.path.join(HERE, ".venv")
VENV_PY = os.path.join(VENV, "bin", "python")
PACKAGES = ["numpy", "numexpr", "awkward", "pyarrow"]
REEXEC_FLAG = "DYND_COMPARE_IN_VENV"


# ---------------------------------------------------------------------------
# The virtual environment.


def say(msg):
    print(msg, file=sys.stderr, flush=True)


def in_venv():
    return os.path.realpath(sys.prefix) == os.path.realpath(VENV)


def missing_packages(python):
    """The PACKAGES that `python` cannot import."""
    missing = []
    for p in PACKAGES:
        r = subprocess.run(
            [python, "-c", f"import {p}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if r.returncode != 0:
            missing.append(p)
    return missing


def ensure_venv_and_reexec():
    if in_venv() or os.environ.get(REEXEC_FLAG):
        return
    if not os.path.exists(VENV_PY):
        say(f"compare.py: creating the virtual environment {VENV} ...")
        r = subprocess.run([sys.executable, "-m", "venv", VENV])
        if r.returncode != 0 or not os.path.exists(VENV_PY):
            say(
                "compare.py: error: could not create a virtual environment with "
                f"'{sys.executable} -m venv {VENV}'. Install the venv module "
                "(Debian/Ubuntu: apt-get install python3-venv) and run again."
            )
            sys.exit(1)
    missing = missing_packages(VENV_PY)
    if missing:
        say(f"compare.py: installing {' '.join(missing)} into {VENV} with pip ...")
        r = subprocess.run(
            [VENV_PY, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            + missing
        )
        if r.returncode != 0:
            say(
                f"compare.py: warning: pip could not install {' '.join(missing)} "
                "(no network or no PyPI?); rows that need them are reported as "
                "missing."
            )
    env = dict(os.environ)
    env[REEXEC_FLAG] = "1"
    os.execve(VENV_PY, [VENV_PY, os.path.abspath(__file__)] + sys.argv[1:], env)


# ---------------------------------------------------------------------------
# Timing.


def median_time(runs, f):
    """Median seconds of one call of f over `runs` timed calls (after a
    warm-up call), like the Rust harness."""
    import time

    f()
    ts = []
    for _ in range(max(1, runs)):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2]


def median_time_per_call(runs, reps, f):
    def batch():
        for _ in range(reps):
            f()

    return median_time(runs, batch) / reps


def median_times_per_call_interleaved(runs, reps, fs):
    """The median time of one call of each of `fs`, timing batches of
    `reps` calls, one batch of each function per round (after a warm-up
    round), so that the machine's changing speed hits every function
    alike."""
    import time

    times = [[] for _ in fs]
    for rnd in range(max(runs, 1) + 1):
        for f, t in zip(fs, times):
            start = time.perf_counter()
            for _ in range(reps):
                f()
            if rnd > 0:
                t.append(time.perf_counter() - start)
    return [sorted(t)[len(t) // 2] / reps for t in times]


class Missing(Exception):
    """A library or feature the counterpart needs is not there."""


# ---------------------------------------------------------------------------
# The data: the same formulas as crates/dynd-bench.


def need(mod):
    m = LIBS.get(mod)
    if m is None:
        raise Missing(f"{mod} not installed")
    return m


def f64(n, kind):
    np = need("numpy")
    i = np.arange(n, dtype=np.int64)
    if kind == "copy":
        return i * 0.25
    if kind == "cast":
        return (i % 1000).astype(np.float64) - 500.0
    if kind == "a":
        return i * 0.5
    if kind == "b":
        return 1.0 + (i % 7).astype(np.float64)
    if kind == "fa":
        return (i % 1000) * 0.001
    if kind == "fb":
        return (i % 7) + 0.5
    if kind == "fc":
        return -((i % 13).astype(np.float64))
    if kind == "sum":
        return (i % 100) * 0.5
    if kind == "iota":
        return i.astype(np.float64)
    if kind == "mat17":
        return (i % 17).astype(np.float64)
    raise KeyError(kind)


def numbers_text(count):
    items = [f"{i % 1000}.{(7 * i) % 1000:03d}" for i in range(count)]
    return "[" + ", ".join(items) + "]"


def records_text(count):
    items = [
        '{"id": %d, "x": %d.%03d, "name": "r%d"}' % (i, i % 1000, (7 * i) % 1000, i % 100)
        for i in range(count)
    ]
    return "[" + ", ".join(items) + "]"


def records_lines(count):
    """dynd-bench's json_lines text: line i is {"x": <number i>, "y": i, "s": "r<i mod 100>"}."""
    return "".join(
        '{"x": %d.%03d, "y": %d, "s": "r%d"}\n' % (i % 1000, (7 * i) % 1000, i, i % 100)
        for i in range(count)
    )


def ragged(rows):
    np = need("numpy")
    ak = need("awkward")
    lengths = (np.arange(rows, dtype=np.int64) * 7 + 3) % 21
    offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    content = (np.arange(total, dtype=np.int64) % 100) * 0.25
    layout = ak.contents.ListOffsetArray(
        ak.index.Index64(offsets), ak.contents.NumpyArray(content)
    )
    return ak.Array(layout)


def ragged_missing(rows):
    """The same rows as ragged(), as ?float64 with every element k where
    k % 10 == 3 missing (dynd-bench's ragged ?float64 rows)."""
    np = need("numpy")
    ak = need("awkward")
    lengths = (np.arange(rows, dtype=np.int64) * 7 + 3) % 21
    offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    k = np.arange(total, dtype=np.int64)
    content = (k % 100) * 0.25
    valid = (k % 10 != 3).astype(np.int8)
    layout = ak.contents.ListOffsetArray(
        ak.index.Index64(offsets),
        ak.contents.ByteMaskedArray(
            ak.index.Index8(valid), ak.contents.NumpyArray(content), valid_when=True
        ),
    )
    return ak.Array(layout)


def ragged_gaps(rows):
    """The rows of ragged(), except that every tenth row (i % 10 == 0) is
    empty (dynd-bench's ragged max row)."""
    np = need("numpy")
    ak = need("awkward")
    i = np.arange(rows, dtype=np.int64)
    lengths = np.where(i % 10 == 0, 0, (i * 7 + 3) % 21)
    offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    content = (np.arange(total, dtype=np.int64) % 100) * 0.25
    layout = ak.contents.ListOffsetArray(
        ak.index.Index64(offsets), ak.contents.NumpyArray(content)
    )
    return ak.Array(layout)


# ---------------------------------------------------------------------------
# Their operations. Each factory takes the shape dynd reported and returns
# (function timed, reps per timed batch or None).


def op_memcpy(shape):
    np = need("numpy")
    src = np.ones(shape[0] * 8, dtype=np.uint8)
    dst = np.zeros_like(src)
    return lambda: np.copyto(dst, src)


def op_copyto(shape):
    np = need("numpy")
    a = f64(shape[0], "copy")
    out = np.empty_like(a)
    return lambda: np.copyto(out, a)


def op_copy_new(shape):
    a = f64(shape[0], "copy")
    return lambda: a.copy()


def op_cast(src, dst):
    def make(shape):
        np = need("numpy")
        n = shape[0]
        s = f64(n, "cast").astype(src)
        d = np.empty(n, dtype=dst)
        return lambda: np.copyto(d, s, casting="unsafe")

    return make


def op_astype(src, dst):
    def make(shape):
        s = f64(shape[0], "cast").astype(src)
        return lambda: s.astype(dst)

    return make


def op_astype_shaped(src, dst):
    """astype over the whole shape dynd reported (2-d rows)."""

    def make(shape):
        n = 1
        for d in shape:
            n *= d
        s = f64(n, "cast").astype(src).reshape(shape)
        return lambda: s.astype(dst)

    return make


def op_strided2d_copy(shape):
    rows, cols = shape
    a = f64(rows * cols, "iota").reshape(rows, cols)
    return lambda: a[::2, ::3].copy()


def op_frombuffer(shape):
    np = need("numpy")
    buf = (f64(shape[0], "iota") * 0.5).tobytes()
    return lambda: np.frombuffer(buf, dtype=np.float64)


def op_copy_1d(shape):
    a = f64(shape[0], "iota") * 0.5
    return lambda: a.copy()


def op_binary(fn, out_dtype, prealloc):
    def make(shape):
        np = need("numpy")
        n = shape[0]
        a, b = f64(n, "a"), f64(n, "b")
        f = getattr(np, fn)
        if prealloc:
            out = np.empty(n, dtype=out_dtype)
            return lambda: f(a, b, out=out)
        return lambda: f(a, b)

    return make


def with_threads(threads, f):
    """f, with numexpr set to `threads` threads (set once here, just
    before f is timed: set_num_threads itself is not free)."""
    need("numexpr").set_num_threads(threads)
    return f


def op_ne_add(threads, prealloc):
    def make(shape):
        np = need("numpy")
        ne = need("numexpr")
        n = shape[0]
        names = {"a": f64(n, "a"), "b": f64(n, "b")}
        if prealloc:
            out = np.empty(n)
            return with_threads(
                threads, lambda: ne.evaluate("a + b", local_dict=names, out=out)
            )
        return with_threads(threads, lambda: ne.evaluate("a + b", local_dict=names))

    return make


def fused_inputs(n):
    return f64(n, "fa"), f64(n, "fb"), f64(n, "fc")


def op_np_fused_new(shape):
    a, b, c = fused_inputs(shape[0])
    return lambda: a * b + c


def op_np_fused_out(shape):
    np = need("numpy")
    a, b, c = fused_inputs(shape[0])
    out = np.empty_like(a)

    def f():
        np.multiply(a, b, out=out)
        np.add(out, c, out=out)

    return f


def op_ne_fused(threads, prealloc):
    def make(shape):
        np = need("numpy")
        ne = need("numexpr")
        a, b, c = fused_inputs(shape[0])
        names = {"a": a, "b": b, "c": c}
        if prealloc:
            out = np.empty_like(a)
            return with_threads(
                threads, lambda: ne.evaluate("a * b + c", local_dict=names, out=out)
            )
        return with_threads(threads, lambda: ne.evaluate("a * b + c", local_dict=names))

    return make


def op_sum(shape):
    a = f64(shape[0], "sum")
    return lambda: a.sum()


def op_sum_axis(axis):
    def make(shape):
        rows, cols = shape
        a = f64(rows * cols, "mat17").reshape(rows, cols)
        return lambda: a.sum(axis=axis)

    return make


def op_strided(shape):
    np = need("numpy")
    a = f64(shape[0], "iota")
    v = a[::2]
    out = np.empty(v.shape[0])
    return lambda: np.copyto(out, v)


def op_transpose_copyto(shape):
    np = need("numpy")
    rows, cols = shape
    a = f64(rows * cols, "iota").reshape(rows, cols)
    out = np.empty((cols, rows))
    return lambda: np.copyto(out, a.T)


def op_transpose_ascontig(shape):
    np = need("numpy")
    rows, cols = shape
    a = f64(rows * cols, "iota").reshape(rows, cols)
    return lambda: np.ascontiguousarray(a.T)


def ak_f64(n):
    ak = need("awkward")
    return ak.Array(f64(n, "a"))


def op_ak_to_arrow(make):
    def op(shape):
        ak = need("awkward")
        need("pyarrow")
        x = make(shape[0])
        return lambda: ak.to_arrow(x)

    return op


def op_ak_arrow_round_trip(make):
    def op(shape):
        ak = need("awkward")
        need("pyarrow")
        x = make(shape[0])
        return lambda: ak.from_arrow(ak.to_arrow(x))

    return op


def op_ak_sum(shape):
    ak = need("awkward")
    x = ragged(shape[0])
    return lambda: ak.sum(x, axis=1)


def op_ak_sum_missing(shape):
    ak = need("awkward")
    x = ragged_missing(shape[0])
    return lambda: ak.sum(x, axis=-1)


def op_ak_add_missing(shape):
    need("awkward")
    x = ragged_missing(shape[0])
    return lambda: x + 1.0


def op_ak_max_gaps(shape):
    ak = need("awkward")
    x = ragged_gaps(shape[0])
    return lambda: ak.max(x, axis=-1)


def op_ak_add(shape):
    x = ragged(shape[0])
    return lambda: x + 1.0


def hashed_idx(n):
    """dynd-bench's select indices: (i * 2654435761 + 12345) mod n."""
    np = need("numpy")
    return (np.arange(n, dtype=np.int64) * 2654435761 + 12345) % n


def op_np_take(shape):
    np = need("numpy")
    n = shape[0]
    a = np.arange(n, dtype=np.float64) * 0.5
    idx = hashed_idx(n)
    return lambda: a[idx]


def op_np_where(shape):
    np = need("numpy")
    n = shape[0]
    c = ((hashed_idx(n) >> 7) & 1) == 1
    x = np.arange(n, dtype=np.float64) * 0.5
    y = -np.arange(n, dtype=np.float64)
    return lambda: np.where(c, x, y)


def op_ak_filter(shape):
    x = ragged(shape[0])
    mask = x > 12.0
    return lambda: x[mask]


def op_ak_take_jagged(shape):
    ak = need("awkward")
    x = ragged(shape[0])
    idx = ak.num(x)[:, None] - 1 - ak.local_index(x)
    return lambda: x[idx]


def sort_data(n):
    """dynd-bench's sort data: element i is the top 53 bits of
    i * 0x9E3779B97F4A7C15 (wrapping) over 2**53."""
    np = need("numpy")
    i = np.arange(n, dtype=np.uint64)
    return ((i * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(11)).astype(np.float64) / 2.0**53


def op_np_sort(shape):
    np = need("numpy")
    x = sort_data(shape[0])
    return lambda: np.sort(x)


def op_np_argsort(shape):
    np = need("numpy")
    x = sort_data(shape[0])
    return lambda: np.argsort(x, kind="stable")


def op_np_cumsum(shape):
    np = need("numpy")
    x = sort_data(shape[0])
    return lambda: np.cumsum(x)


def op_ak_sort(shape):
    ak = need("awkward")
    x = ragged(shape[0])
    return lambda: ak.sort(x, axis=-1)


def op_json_loads(textf):
    def make(shape):
        import json

        text = textf(shape[0])
        return lambda: json.loads(text)

    return make


def op_json_np(shape):
    import json

    np = need("numpy")
    text = numbers_text(shape[0])
    return lambda: np.array(json.loads(text), dtype=np.float64)


def op_ak_json(textf):
    def make(shape):
        ak = need("awkward")
        text = textf(shape[0])
        return lambda: ak.from_json(text)

    return make


def op_ak_json_lines(shape):
    ak = need("awkward")
    text = records_lines(shape[0])
    # awkward's JSON-schema form of {x: float64, y: int64, s: string}, one
    # object per line.
    schema = {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "integer"}, "s": {"type": "string"}},
        "required": ["x", "y", "s"],
    }
    return lambda: ak.from_json(text, line_delimited=True, schema=schema)


def op_add10(shape):
    np = need("numpy")
    x = np.arange(10, dtype=np.float64)
    return lambda: np.add(x, x)


# key: (library, what it runs, factory, reps per call or None)
THEIRS = {
    "np memcpy": ("NumPy", "np.copyto of uint8 buffers", op_memcpy, None),
    "np copyto": ("NumPy", "np.copyto(out, a)", op_copyto, None),
    "np copy": ("NumPy", "a.copy()", op_copy_new, None),
    "np cast f64->i32": ("NumPy", "np.copyto(i32, f64, casting='unsafe')", op_cast("float64", "int32"), None),
    "np cast i32->f64": ("NumPy", "np.copyto(f64, i32, casting='unsafe')", op_cast("int32", "float64"), None),
    "np cast f64->f32": ("NumPy", "np.copyto(f32, f64, casting='unsafe')", op_cast("float64", "float32"), None),
    "np astype f64->i32": ("NumPy", "a.astype(int32) (new)", op_astype("float64", "int32"), None),
    "np astype i32->f64": ("NumPy", "a.astype(float64) (new)", op_astype("int32", "float64"), None),
    "np astype f64->f32": ("NumPy", "a.astype(float32) (new)", op_astype("float64", "float32"), None),
    "np strided2d copy": ("NumPy", "a[::2, ::3].copy()", op_strided2d_copy, None),
    "np astype f64->i32 2d": ("NumPy", "a.astype(np.int32) (new, unchecked)", op_astype_shaped("float64", "int32"), None),
    "np frombuffer": ("NumPy", "np.frombuffer(buf, float64) (zero-copy)", op_frombuffer, None),
    "np copy 1d": ("NumPy", "a.copy()", op_copy_1d, None),
    "np add out": ("NumPy", "np.add(a, b, out=out)", op_binary("add", "float64", True), None),
    "np add": ("NumPy", "np.add(a, b)", op_binary("add", "float64", False), None),
    "np multiply out": ("NumPy", "np.multiply(a, b, out=out)", op_binary("multiply", "float64", True), None),
    "np multiply": ("NumPy", "np.multiply(a, b)", op_binary("multiply", "float64", False), None),
    "np less out": ("NumPy", "np.less(a, b, out=out)", op_binary("less", "bool", True), None),
    "np less": ("NumPy", "np.less(a, b)", op_binary("less", "bool", False), None),
    "ne add out 2t": ("numexpr", "evaluate('a + b', out=out), 2 threads", op_ne_add(2, True), None),
    "ne add 2t": ("numexpr", "evaluate('a + b'), 2 threads", op_ne_add(2, False), None),
    "np fused": ("NumPy", "a * b + c", op_np_fused_new, None),
    "np fused out": ("NumPy", "multiply(a, b, out=o); add(o, c, out=o)", op_np_fused_out, None),
    "ne fused out 1t": ("numexpr", "evaluate('a*b+c', out=out), 1 thread", op_ne_fused(1, True), None),
    "ne fused out 2t": ("numexpr", "evaluate('a*b+c', out=out), 2 threads", op_ne_fused(2, True), None),
    "ne fused 1t": ("numexpr", "evaluate('a*b+c'), 1 thread", op_ne_fused(1, False), None),
    "np sum": ("NumPy", "a.sum()", op_sum, None),
    "np sum axis 0": ("NumPy", "a.sum(axis=0)", op_sum_axis(0), None),
    "np sum axis 1": ("NumPy", "a.sum(axis=1)", op_sum_axis(1), None),
    "np strided": ("NumPy", "np.copyto(out, a[::2])", op_strided, None),
    "np transpose copyto": ("NumPy", "np.copyto(out, a.T)", op_transpose_copyto, None),
    "np transpose ascontig": ("NumPy", "np.ascontiguousarray(a.T)", op_transpose_ascontig, None),
    "ak sum": ("awkward", "ak.sum(x, axis=1)", op_ak_sum, None),
    "ak add": ("awkward", "x + 1.0", op_ak_add, None),
    "ak sum missing": ("awkward", "ak.sum(x, axis=-1), var * ?float64, 10% missing", op_ak_sum_missing, None),
    "ak add missing": ("awkward", "x + 1.0, var * ?float64, 10% missing", op_ak_add_missing, None),
    "ak max gaps": ("awkward", "ak.max(x, axis=-1), 10% empty rows", op_ak_max_gaps, None),
    "np take": ("NumPy", "a[idx] (random int64 idx)", op_np_take, None),
    "np where": ("NumPy", "np.where(c, x, y)", op_np_where, None),
    "ak filter": ("awkward", "x[x > 12.0] (per-element var mask)", op_ak_filter, None),
    "ak take jagged": ("awkward", "x[idx] (jagged int64 idx, rows reversed)", op_ak_take_jagged, None),
    "np sort": ("NumPy", "np.sort(x)", op_np_sort, None),
    "np argsort": ("NumPy", "np.argsort(x, kind='stable')", op_np_argsort, None),
    "np cumsum": ("NumPy", "np.cumsum(x)", op_np_cumsum, None),
    "ak sort": ("awkward", "ak.sort(x, axis=-1)", op_ak_sort, None),
    "json numbers loads": ("Python json", "json.loads(text) (list of floats)", op_json_loads(numbers_text), None),
    "json numbers np": ("NumPy+json", "np.array(json.loads(text))", op_json_np, None),
    "ak json numbers": ("awkward", "ak.from_json(text)", op_ak_json(numbers_text), None),
    "json records loads": ("Python json", "json.loads(text) (list of dicts)", op_json_loads(records_text), None),
    "ak json records": ("awkward", "ak.from_json(text) (typed records)", op_ak_json(records_text), None),
    "ak json lines records": (
        "awkward",
        "ak.from_json(text, line_delimited=True, schema=...) (typed records)",
        op_ak_json_lines,
        None,
    ),
    "np add10": ("NumPy", "np.add(x, x), 10 elements, per call", op_add10, 10_000),
    "ak to_arrow f64": ("awkward", "ak.to_arrow(x), float64", op_ak_to_arrow(ak_f64), None),
    "ak arrow round trip f64": ("awkward", "ak.from_arrow(ak.to_arrow(x)), float64", op_ak_arrow_round_trip(ak_f64), None),
    "ak to_arrow ragged": ("awkward", "ak.to_arrow(x), var * float64", op_ak_to_arrow(ragged), None),
    "ak arrow round trip ragged": ("awkward", "ak.from_arrow(ak.to_arrow(x)), var * float64", op_ak_arrow_round_trip(ragged), None),
}

# Our operation (the `name` dynd-bench prints) -> their counterparts, each
# compared as their time / our time. Operations not listed here, or listed
# with no counterparts, are shown without a ratio.
COUNTERPARTS = {
    "memory copy (copy_from_slice)": ["np memcpy"],
    "copy f64 (assign, same type)": ["np copyto"],
    "copy f64 (Array::copy, new)": ["np copy"],
    "strided copy a[::2] (assign into contiguous)": ["np strided"],
    "transpose copy (permute view, assign)": ["np transpose copyto", "np transpose ascontig"],
    "cast f64->i32 nocheck": ["np cast f64->i32"],
    "cast i32->f64 nocheck": ["np cast i32->f64"],
    "cast f64->f32 nocheck": ["np cast f64->f32"],
    "strided 2-d copy a[::2, ::3] (Array::copy, new)": ["np strided2d copy"],
    "cast f64->i32 new output (Array::cast) nocheck": ["np astype f64->i32 2d"],
    "cast f64->i32 new output (Array::cast) overflow": ["np astype f64->i32 2d"],
    "Array::from(Vec<f64>), 1M (zero-copy)": ["np frombuffer"],
    "Array::from(&[f64]), 1M (copy)": ["np copy 1d"],
    "add into preallocated": ["np add out"],
    "add into new output": ["np add"],
    "multiply into preallocated": ["np multiply out"],
    "multiply into new output": ["np multiply"],
    "less into preallocated": ["np less out"],
    "less into new output": ["np less"],
    "add into preallocated, 2 threads": ["ne add out 2t"],
    "add into new output, 2 threads": ["ne add 2t"],
    "fused a*b+c callables, new temp + new output": ["np fused"],
    "fused a*b+c callables, preallocated temp + output": ["np fused out"],
    "fused a*b+c lazy ops Serial, preallocated output": ["ne fused out 1t", "np fused out", "np fused"],
    "fused a*b+c lazy ops Parallel(2), preallocated output": ["ne fused out 2t"],
    "fused a*b+c lazy ops Serial, new output": ["ne fused 1t", "np fused"],
    "sum": ["np sum"],
    "sum axis 0": ["np sum axis 0"],
    "sum axis 1": ["np sum axis 1"],
    "ragged sum inner axis": ["ak sum"],
    "ragged sum inner axis, 2 threads": ["ak sum"],
    "ragged + scalar (new output)": ["ak add"],
    "ragged + scalar (new output), 2 threads": ["ak add"],
    "ragged ?float64 sum axis -1 (10% missing)": ["ak sum missing"],
    "ragged ?float64 + scalar (new output, 10% missing)": ["ak add missing"],
    "ragged max axis -1 (10% empty rows)": ["ak max gaps"],
    "filter ragged by per-element mask": ["ak filter"],
    "take 10M float64, random int64 idx": ["np take"],
    "take 10M float64, random int64 idx, 2 threads": ["np take"],
    "take jagged (per-row idx, rows reversed)": ["ak take jagged"],
    "where 10M float64": ["np where"],
    "where 10M float64, 2 threads": ["np where"],
    "ragged sort axis -1 (new output)": ["ak sort"],
    "sort float64 (new output)": ["np sort"],
    "argsort float64 stable (new output)": ["np argsort"],
    "cumsum float64 (new output)": ["np cumsum"],
    "json parse numbers": ["ak json numbers", "json numbers np", "json numbers loads"],
    "json parse records": ["ak json records", "json records loads"],
    "json lines records": ["ak json lines records"],
    "json lines records, 2 threads": ["ak json lines records"],
    "add, 10 elements (per call)": ["np add10"],
    "arrow export 10M float64": ["ak to_arrow f64"],
    "arrow export+import 10M float64": ["ak arrow round trip f64"],
    "arrow export 2M float64": ["ak to_arrow f64"],
    "arrow export+import 2M float64": ["ak arrow round trip f64"],
    "arrow export ragged var * float64": ["ak to_arrow ragged"],
    "arrow export+import ragged var * float64": ["ak arrow round trip ragged"],
}

# Rows that are measured beside the others but left out of the worst ratio.
NOT_IN_WORST = {"memory copy (copy_from_slice)"}

# Shapes to use when dynd-bench did not report a row (it failed to build or
# run): the same sizes as crates/dynd-bench.
def default_shape(name, quick):
    n = 2_000_000 if quick else 10_000_000
    if name.startswith("strided 2-d") or name.startswith("cast f64->i32 new"):
        return [1000, 1000]
    if name.startswith("Array::from"):
        return [1_000_000]
    if name.startswith("transpose"):
        s = 2000 if quick else 4000
        return [s, s]
    if name.startswith("sum axis"):
        return [200 if quick else 1000, 10_000]
    if name.startswith("ragged") or name.startswith("filter ragged") or name.startswith("take jagged") or (name.startswith("arrow") and "ragged" in name):
        return [200_000 if quick else 1_000_000]
    chars = 2_000_000 if quick else 10_000_000
    if name == "json parse numbers":
        return [chars * 10 // 84]
    if name == "json parse records":
        return [chars // 45]
    if name.startswith("json lines records"):
        return [200_000 if quick else 1_000_000]
    if name.startswith("add, 10"):
        return [10]
    return [n]


# ---------------------------------------------------------------------------
# The thread sweep (--threads).


def thread_count(name):
    """The thread count a dynd-bench row name ends with (", N threads"),
    or 1."""
    import re

    m = re.search(r", (\d+) threads$", name)
    return int(m.group(1)) if m else 1


def base_name(name):
    """A sweep row's name without its thread suffix."""
    import re

    return re.sub(r", \d+ threads$", "", name)


def op_ne_sum(threads):
    def make(shape):
        ne = need("numexpr")
        names = {"a": f64(shape[0], "sum")}
        return with_threads(threads, lambda: ne.evaluate("sum(a)", local_dict=names))

    return make


def op_ne_where(threads):
    def make(shape):
        np = need("numpy")
        ne = need("numexpr")
        n = shape[0]
        names = {
            "c": ((hashed_idx(n) >> 7) & 1) == 1,
            "x": np.arange(n, dtype=np.float64) * 0.5,
            "y": -np.arange(n, dtype=np.float64),
        }
        return with_threads(threads, lambda: ne.evaluate("where(c, x, y)", local_dict=names))

    return make


# The sweep's rows that numexpr can do: our base name -> (what it runs,
# factory of a thread count).
SWEEP_PEERS = {
    "add into preallocated": ("evaluate('a + b', out=out)", lambda t: op_ne_add(t, True)),
    "add into new output": ("evaluate('a + b')", lambda t: op_ne_add(t, False)),
    "fused a*b+c callables, new temp + new output": ("evaluate('a*b+c')", lambda t: op_ne_fused(t, False)),
    "fused a*b+c callables, preallocated temp + output": ("evaluate('a*b+c', out=out)", lambda t: op_ne_fused(t, True)),
    "sum": ("evaluate('sum(a)')", op_ne_sum),
    "where 10M float64": ("evaluate('where(c, x, y)')", op_ne_where),
}

# Base names of the rows dynd-bench ran on more than one count (filled by
# sweep_rows).
SWEPT = set()


def sweep_rows(ours):
    """{base name: {threads: row}} of dynd-bench's sweep rows (those with
    a `threads` field)."""
    out = {}
    for name, row in ours.items():
        if "threads" not in row:
            continue
        out.setdefault(base_name(name), {})[row["threads"]] = row
    # A row on one thread alone is no sweep.
    out = {base: rows for base, rows in out.items() if len(rows) > 1}
    for base, rows in out.items():
        for t in rows:
            SWEPT.add(base + ("" if t == 1 else f", {t} threads"))
    return out


def run_sweep_peers(ours, threads, runs):
    """Times numexpr at each count on the sweep's rows it can do; returns
    {(base name, threads): (seconds or None, message)}."""
    results = {}
    rows = sweep_rows(ours)
    for base, (what, factory) in SWEEP_PEERS.items():
        if base not in rows:
            continue
        shape = next(iter(rows[base].values()))["shape"]
        for t in threads:
            say(f"compare.py: timing numexpr: {what}, {t} thread{'s' if t > 1 else ''} {shape} ...")
            try:
                results[(base, t)] = (median_time(runs, factory(t)(shape)), None)
            except Missing as e:
                results[(base, t)] = (None, str(e))
            except Exception as e:  # noqa: BLE001 - report and go on
                results[(base, t)] = (None, f"failed: {type(e).__name__}: {e}")
    return results


def sweep_report(ours, peers, threads, runs):
    """Prints the sweep's table; returns (numexpr ratios, speed-ups) as
    lists of (value, label)."""
    rows = sweep_rows(ours)
    print()
    print(
        f"thread sweep --threads {','.join(map(str, threads))} ({os.cpu_count()} cores here): "
        "speed-up = our 1-thread time / this time; ratio = numexpr's time at the same "
        "thread count / ours (above 1: dynd is faster); rows numexpr cannot do are "
        "compared with our own 1-thread time alone"
    )
    table_rows = []
    ratios, speedups = [], []
    for base, by_count in rows.items():
        one = by_count.get(1)
        first = True
        for t in sorted(by_count):
            row = by_count[t]
            ms = row["median_ms"]
            sp = one["median_ms"] / ms if one and ms else None
            if sp is not None and t > 1:
                speedups.append((sp, f"{base}, {t} threads"))
            peer = peers.get((base, t))
            if peer is None:
                their, lib, rs = "-", "our 1 thread", "-"
            else:
                secs, msg = peer
                lib = f"numexpr: {SWEEP_PEERS[base][0]}, {t} thread{'s' if t > 1 else ''}"
                if secs is None:
                    their, rs = msg, "-"
                else:
                    their = fmt_ms(secs * 1e3)
                    r = secs * 1e3 / ms
                    rs = f"{r:.2f}"
                    ratios.append((r, f"{base}, {t} thread{'s' if t > 1 else ''} vs numexpr"))
            table_rows.append([
                base if first else "", str(t), fmt_ms(ms),
                f"{sp:.2f}x" if sp is not None else "-", their, lib, rs,
            ])
            first = False
    if table_rows:
        table(["operation", "threads", "dynd ms", "speed-up", "their ms", "peer", "ratio"],
              table_rows, right=(1, 2, 3, 4, 6))
    else:
        print("(dynd-bench reported no sweep rows)")
    return ratios, speedups


# ---------------------------------------------------------------------------
# Running both sides.

LIBS = {}
LIB_ERRORS = {}


def import_libs():
    import importlib

    for p in PACKAGES:
        try:
            LIBS[p] = importlib.import_module(p)
        except Exception as e:  # noqa: BLE001 - report any import failure
            LIB_ERRORS[p] = f"{type(e).__name__}: {e}"
            say(
                f"compare.py: {p} is not available ({LIB_ERRORS[p]}); "
                f"rows that need it are shown as missing. Try: {VENV_PY} -m pip install {p}"
            )


def run_dynd(quick, only=None, threads=None):
    """Builds and runs dynd-bench --json; returns (rows by name, skipped
    rows, an error message or None)."""
    import json
    import shutil

    exe = os.environ.get("DYND_BENCH")
    if exe:
        say(f"compare.py: using DYND_BENCH={exe} (not building)")
    else:
        cargo = shutil.which("cargo")
        if cargo is None:
            return {}, {}, "cargo is not on PATH: cannot build dynd-bench (install Rust from https://rustup.rs)"
        say("compare.py: building dynd-bench (cargo build --release -p dynd-bench) ...")
        r = subprocess.run([cargo, "build", "--release", "-q", "-p", "dynd-bench"], cwd=ROOT)
        if r.returncode != 0:
            return {}, {}, "cargo build --release -p dynd-bench failed (see above)"
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
        exe = os.path.join(target, "release", "dynd-bench")
    args = [exe, "--json"] + (["--quick"] if quick else []) + (["--only", ",".join(only)] if only else [])
    if threads:
        args += ["--threads", ",".join(str(t) for t in threads)]
    say(f"compare.py: running {' '.join(os.path.relpath(a, ROOT) if a == exe else a for a in args)} ...")
    r = subprocess.run(args, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    rows, skipped = {}, {}
    for line in r.stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            say(f"compare.py: ignoring a line dynd-bench printed that is not JSON: {line[:80]}")
            continue
        if "skipped" in obj:
            skipped[obj["name"]] = obj["skipped"]
        else:
            rows[obj["name"]] = obj
    err = None
    if r.returncode != 0:
        err = f"dynd-bench exited with status {r.returncode}; {len(rows)} rows were read before that"
    return rows, skipped, err


def run_theirs(ours, quick, runs, only=None, threads=None):
    """Times every counterpart; returns {key: (seconds or None, shape,
    message)} for the keys some row of ours maps to (with --only, only the
    rows dynd-bench reported; with --threads, not the rows named for a
    thread count, which the sweep's table compares)."""
    results = {}
    for name, keys in COUNTERPARTS.items():
        if only and name not in ours:
            continue
        if threads and thread_count(name) > 1:
            continue
        shape = ours[name]["shape"] if name in ours else default_shape(name, quick)
        for key in keys:
            if key in results:
                continue
            lib, what, factory, reps = THEIRS[key]
            say(f"compare.py: timing {lib}: {what} {shape} ...")
            try:
                f = factory(shape)
                t = median_time_per_call(runs, reps, f) if reps else median_time(runs, f)
                results[key] = (t, shape, None)
            except Missing as e:
                results[key] = (None, shape, str(e))
            except Exception as e:  # noqa: BLE001 - report and go on
                results[key] = (None, shape, f"failed: {type(e).__name__}: {e}")
    return results


# ---------------------------------------------------------------------------
# The report.


def fmt_ms(ms):
    if ms is None:
        return "-"
    if ms < 0.01:
        return f"{ms:.6f}"
    return f"{ms:.3f}"


def table(headers, rows, right=(1, 2, 4)):
    """Prints rows under headers; columns in `right` are right-aligned."""
    widths = [len(h) for h in headers]
    for r in rows:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))

    def line(cells):
        return "  ".join(
            c.rjust(widths[i]) if i in right else c.ljust(widths[i])
            for i, c in enumerate(cells)
        ).rstrip()

    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def report(ours, skipped, dynd_err, theirs, quick, runs, threads=None, sweep=None):
    print()
    print(
        f"dynd-rs vs NumPy / numexpr / awkward / Python json — {'--quick' if quick else 'full'} run, "
        f"median of {runs} runs; ratio = their time / our time (above 1: dynd is faster)"
    )
    if dynd_err:
        print(f"dynd-bench: {dynd_err}")
    versions = ", ".join(
        f"{p} {getattr(LIBS[p], '__version__', '?')}" if p in LIBS else f"{p} missing"
        for p in PACKAGES
    )
    print(f"python {sys.version.split()[0]}; {versions}")
    print()

    rows = []
    ratios = []
    for name, keys in COUNTERPARTS.items():
        if threads and thread_count(name) > 1:
            continue  # in the sweep's table
        if name not in ours and name not in skipped and not all(k in theirs for k in keys):
            continue  # left out by --only
        our = ours.get(name)
        our_ms = our["median_ms"] if our else None
        first = True
        for key in keys:
            lib, what, _, _ = THEIRS[key]
            t, _, msg = theirs.get(key, (None, None, "not run"))
            their_ms = t * 1e3 if t is not None else None
            if our_ms and their_ms:
                ratio = their_ms / our_ms
                rs = f"{ratio:.2f}"
                if name not in NOT_IN_WORST:
                    ratios.append((ratio, f"{name} vs {lib} {what}"))
            else:
                rs = "-"
            label = name if first else ""
            our_cell = (fmt_ms(our_ms) if our else (f"skipped: {skipped[name]}" if name in skipped else "missing")) if first else ""
            their_cell = fmt_ms(their_ms) if their_ms is not None else (msg or "-")
            rows.append([label, our_cell, their_cell, f"{lib}: {what}", rs])
            first = False
    table(["operation", "dynd ms", "their ms", "library", "ratio"], rows)
    print(
        "notes: NumPy and awkward run on one thread, as do our rows unless they say "
        "2 threads. JSON: dynd parses into a typed array; json.loads builds Python "
        "objects (lists, floats, dicts); np.array(json.loads(..)) adds the typed "
        "conversion; ak.from_json parses into typed columnar arrays (the closest "
        "counterpart). Both sides parse the same text."
    )

    # Ours without a counterpart.
    internal_names = set()
    for name in ours:
        if name.startswith("cast ") and not name.endswith(" nocheck"):
            internal_names.add(name)
    solo = [
        n for n in ours
        if n not in COUNTERPARTS and n not in internal_names
        and not (threads and n in SWEPT)
    ]
    if solo:
        print()
        print("dynd only (no counterpart; no ratio)")
        table(
            ["operation", "dynd ms", "GB/s", "note"],
            [
                [
                    n,
                    fmt_ms(ours[n]["median_ms"]),
                    "-" if ours[n].get("gbps") is None else f"{ours[n]['gbps']:.2f}",
                    ours[n].get("note", ""),
                ]
                for n in solo
            ],
            right=(1, 2),
        )

    # Internal targets: checked casts against our own nocheck.
    print()
    print("internal targets (not in the worst ratio): checked casts vs our nocheck, "
          "ratio = nocheck time / checked time; target: fractional >= 0.9; "
          "nocheck vs a plain Rust loop, ratio = loop time / nocheck time, target >= 0.91")
    irows = []
    for conv in ["f64->i32", "i32->f64", "f64->f32"]:
        nocheck = ours.get(f"cast {conv} nocheck")
        plain = ours.get(f"cast {conv} plain Rust loop")
        if nocheck and plain:
            r = plain["median_ms"] / nocheck["median_ms"]
            irows.append([f"cast {conv} nocheck", fmt_ms(nocheck["median_ms"]),
                          fmt_ms(plain["median_ms"]), "plain Rust loop",
                          f"{r:.2f}", "ok" if r >= 0.91 else "BELOW 0.91"])
        for mode in ["overflow", "fractional", "inexact"]:
            checked = ours.get(f"cast {conv} {mode}")
            if not (checked and nocheck):
                continue
            r = nocheck["median_ms"] / checked["median_ms"]
            verdict = ("ok" if r >= 0.9 else "BELOW 0.9") if mode == "fractional" else "(no target)"
            irows.append([f"cast {conv} {mode}", fmt_ms(checked["median_ms"]),
                          fmt_ms(nocheck["median_ms"]), "our nocheck", f"{r:.2f}", verdict])
    if irows:
        table(["operation", "dynd ms", "base ms", "baseline", "ratio", "target"], irows)
    else:
        print("(no cast rows from dynd-bench)")

    if skipped:
        print()
        print("skipped by dynd-bench")
        for n, why in skipped.items():
            print(f"  {n}: {why}")

    speedups = []
    if threads:
        ratios_sweep, speedups = sweep_report(ours, sweep or {}, threads, runs)
        ratios += ratios_sweep

    print()
    if ratios:
        worst = min(ratios, key=lambda r: r[0])
        print(f"worst ratio: {worst[0]:.2f} ({worst[1]})")
    else:
        print("worst ratio: n/a (no operation was measured on both sides)")
    if threads:
        if speedups:
            low = min(speedups, key=lambda r: r[0])
            print(f"worst speed-up: {low[0]:.2f}x ({low[1]})")
        else:
            print("worst speed-up: n/a (no row ran on more than one thread)")


def python_rows(ours, quick, runs):
    """The Python side of dynd (the `dynd` package) against NumPy and
    against dynd's own Rust calls; printed as its own table."""
    print()
    print("python: the dynd package called from Python (ratio = their time / our time)")
    try:
        import dynd
    except ImportError as e:
        print(f"  dynd not importable here ({e}); install it: {VENV_PY} -m pip install ./crates/dynd-python")
        return
    np = need("numpy")
    rows = []
    x = np.arange(10.0)
    y = np.arange(10.0) * 0.5
    a, b = dynd.asarray(x), dynd.asarray(y)
    reps = 2000 if quick else 20000
    # Interleaved: a batch of each per round (the two differ by tenths of
    # a microsecond, less than the machine's drift between two runs).
    ours_call, theirs_call = median_times_per_call_interleaved(
        runs, reps, [lambda: a + b, lambda: np.add(x, y)]
    )
    rows.append(["a + b, 10 float64 (per call)", f"{ours_call * 1e6:.2f} us", f"{theirs_call * 1e6:.2f} us",
                 "numpy: np.add(x, y)", f"{theirs_call / ours_call:.2f}"])
    nrows = 200_000 if quick else 1_000_000
    try:
        pa = need("pyarrow")
        ak = need("awkward")
        r = ragged(nrows)
        layout = r.layout
        item = pa.field("item", pa.float64(), nullable=False)
        arr = pa.ListArray.from_arrays(
            pa.array(np.asarray(layout.offsets)), pa.array(np.asarray(layout.content.data)), type=pa.list_(item)
        )

        class NonNullable:
            def __arrow_c_array__(self, requested_schema=None):
                schema = pa.field("x", arr.type, nullable=False).__arrow_c_schema__()
                return schema, arr.__arrow_c_array__()[1]

        d = dynd.from_arrow(NonNullable())
        t_dynd = median_time(runs, lambda: dynd.sum(d, axis=-1))
        rust = ours.get("ragged sum inner axis")
        if rust:
            rust_ms = rust["median_ms"]
            rows.append([f"dynd.sum(x, axis=-1), {nrows:,} ragged rows", fmt_ms(t_dynd * 1e3), fmt_ms(rust_ms),
                         "dynd from Rust (target: ratio >= 0.91)", f"{rust_ms / (t_dynd * 1e3):.2f}"])
        t_ak = median_time(runs, lambda: ak.sum(r, axis=-1))
        rows.append(["" if rust else f"dynd.sum(x, axis=-1), {nrows:,} ragged rows", fmt_ms(t_dynd * 1e3) if not rust else "",
                     fmt_ms(t_ak * 1e3), "awkward: ak.sum(x, axis=-1)", f"{t_ak / t_dynd:.2f}"])
    except Missing as e:
        rows.append(["dynd.sum(x, axis=-1) ragged", "-", str(e), "-", "-"])
    table(["operation", "dynd", "theirs", "library", "ratio"], rows)


def parse_threads(value):
    """--threads N[,N...]: positive counts; 1 is added (the speed-ups need
    it); ascending, without repeats. Exits with status 2 on a bad list."""
    try:
        counts = [int(v) for v in (value or "").split(",")]
        if not counts or any(c < 1 for c in counts):
            raise ValueError
    except ValueError:
        say(f"compare.py: --threads needs positive thread counts N[,N...], not {value!r}")
        sys.exit(2)
    return sorted(set(counts) | {1})


def main():
    args = sys.argv[1:]
    only = None
    threads = None
    rest = []
    it = iter(args)
    for a in it:
        if a == "--threads":
            threads = parse_threads(next(it, None))
        elif a == "--only":
            v = next(it, None)
            if not v:
                say("compare.py: --only needs GROUP[,GROUP...]")
                sys.exit(2)
            only = v.split(",")
        elif a in ("--quick", "-h", "--help"):
            rest.append(a)
        else:
            say(f"compare.py: unknown argument '{a}' (usage: python3 bench/compare.py [--quick] [--only GROUP[,GROUP...]] [--threads N[,N...]])")
            sys.exit(2)
    args = rest
    if "-h" in args or "--help" in args:
        print(__doc__)
        return
    quick = "--quick" in args
    ensure_venv_and_reexec()
    import_libs()
    runs = 5 if quick else 15
    # "python" is compare.py's own group (the dynd package), not dynd-bench's.
    bench_only = None if only is None else [g for g in only if g != "python"]
    if bench_only == []:
        ours, skipped, dynd_err = {}, {}, None
    else:
        ours, skipped, dynd_err = run_dynd(quick, bench_only, threads)
    if dynd_err:
        say(f"compare.py: {dynd_err}")
    theirs = run_theirs(ours, quick, runs, only, threads)
    sweep = run_sweep_peers(ours, threads, runs) if threads else None
    report(ours, skipped, dynd_err, theirs, quick, runs, threads, sweep)
    if only is None or "python" in only or "ragged" in only:
        python_rows(ours, quick, runs)


if __name__ == "__main__":
    main()
