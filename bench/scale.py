#!/usr/bin/env python3
"""How dynd's Python package scales with threads: the table of issue #27.

    python bench/scale.py [--threads 1,2,4,8,16] [--size 1e7] [--runs 5]
                          [--ragged-rows N] [--sort-size N] [--json-records N]
                          [--no-peers]

Runs nine operations through the `dynd` package at each thread count
(`with dynd.threads(n):`), in interleaved rounds (each round runs every
count once, after a warm-up round, so that load from other processes hits
every count alike), and prints the median times as a markdown table in the
issue's format: work | 1 thread | N threads ... | speed-up (1 thread / the
largest count) | peer at the largest count.

The work, with --size S (float64 elements; default 1e7, the issue's 16-core
table used --size 1e8):
  - `a + b` into a new array, `a * b + c` (two calls, new outputs), `sum(a)`
    on S float64;
  - ragged `sum(x, axis=-1)`, `x + 1.0`, `sort(x)` (each row) and
    `x[x > 12.0]` on S/10 ragged rows of mean length 10 (--ragged-rows;
    row i has (7 i + 3) mod 21 elements, element k is (k mod 100) / 4, as
    bench/compare.py and dynd-bench build them; made through pyarrow and
    dynd.from_arrow);
  - `sort` of 10^7 pseudo-random float64 (--sort-size);
  - JSON Lines: 10^6 records {x: float64, y: int64, s: string}
    (--json-records), dynd.from_json(text, type=..., lines=True).

Peers (--no-peers leaves them out): numexpr at each thread count
(numexpr.set_num_threads) for `a + b` and `a * b + c` (the table shows the
largest count, and 1 thread in brackets); NumPy on one thread for `sum` and
`sort`; awkward on one thread for ragged `sum` and `x + 1.0` (when
installed). The issue's targets are in the table's notes.

Where dynd comes from: the Python that runs this script must import `dynd`,
numpy and pyarrow (numexpr and awkward are optional). For timing, use a
release build of the package, e.g. in bench/.venv (which bench/compare.py
creates with numpy, numexpr, awkward and pyarrow):

    export CARGO_TARGET_DIR=...   # optional
    bench/.venv/bin/pip install maturin
    bench/.venv/bin/maturin build --release -m crates/dynd-python/Cargo.toml -o /tmp/wheels
    bench/.venv/bin/pip install --force-reinstall --no-deps /tmp/wheels/dynd-*.whl
    bench/.venv/bin/python bench/scale.py --threads 1,2

(`pip install ./crates/dynd-python` builds a release wheel too.) The repo's
.venv made by scripts/python-tests.sh works as well, but it holds a debug
build (`maturin develop`): fine to check the script, not for timing. To run
on another machine, carry the wheel (it is abi3, CPython >= 3.11) and
install it there with numpy, pyarrow and numexpr.
"""

import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def say(msg):
    print(msg, file=sys.stderr, flush=True)


def fail(msg):
    say(f"scale.py: error: {msg}")
    sys.exit(1)


def usage(msg):
    say(f"scale.py: {msg} (usage: python bench/scale.py [--threads N[,N...]] [--size S] "
        "[--runs R] [--ragged-rows N] [--sort-size N] [--json-records N] [--no-peers]; "
        "--help for more)")
    sys.exit(2)


def count_arg(name, value, minimum=1):
    """A positive count, written as an integer or as 1e7."""
    try:
        f = float(value)
        n = int(f)
        if n != f or n < minimum:
            raise ValueError
    except (TypeError, ValueError):
        usage(f"{name} needs a whole number >= {minimum}, not {value!r}")
    return n


def parse_args(argv):
    opts = {
        "threads": None,
        "size": 10_000_000,
        "runs": 5,
        "ragged_rows": None,
        "sort_size": 10_000_000,
        "json_records": 1_000_000,
        "peers": True,
    }
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        elif a == "--no-peers":
            opts["peers"] = False
        elif a == "--threads":
            v = next(it, None)
            try:
                counts = [int(x) for x in (v or "").split(",")]
                if any(c < 1 for c in counts):
                    raise ValueError
            except ValueError:
                usage(f"--threads needs positive thread counts N[,N...], not {v!r}")
            opts["threads"] = sorted(set(counts) | {1})
        elif a in ("--size", "--runs", "--ragged-rows", "--sort-size", "--json-records"):
            opts[a[2:].replace("-", "_")] = count_arg(a, next(it, None))
        else:
            usage(f"unknown argument {a!r}")
    if opts["threads"] is None:
        opts["threads"] = sorted({1, os.cpu_count() or 1})
    if opts["ragged_rows"] is None:
        opts["ragged_rows"] = max(1, opts["size"] // 10)
    return opts


def import_dynd():
    try:
        import dynd
    except ImportError as e:
        venv = os.path.join(HERE, ".venv")
        venv_py = os.path.join(venv, "bin", "python")
        hint = ""
        if os.path.exists(venv_py) and os.path.realpath(sys.prefix) != os.path.realpath(venv):
            hint = f" If bench/.venv has it, run: {venv_py} {' '.join(sys.argv)}."
        fail(
            f"the dynd package is not importable from {sys.executable} ({type(e).__name__}: {e}). "
            "Build a release wheel and install it into this Python: "
            "maturin build --release -m crates/dynd-python/Cargo.toml -o /tmp/wheels && "
            f"{sys.executable} -m pip install --force-reinstall --no-deps /tmp/wheels/dynd-*.whl "
            "(or pip install ./crates/dynd-python); see --help." + hint
        )
    missing = [f for f in ("threads", "set_num_threads", "get_num_threads") if not hasattr(dynd, f)]
    if missing:
        fail(
            f"the dynd package at {getattr(dynd, '__file__', '?')} has no {', '.join(missing)}: "
            "it predates the execution layer (issue #27); rebuild and reinstall it"
        )
    return dynd


def optional(name):
    try:
        return __import__(name)
    except ImportError:
        return None


# ---------------------------------------------------------------------------
# Timing.


def times_by_threads(dynd, counts, runs, f):
    """The median seconds of f() on each of `counts` threads: a warm-up
    round, then `runs` rounds of one call per count."""
    ts = {c: [] for c in counts}
    for rnd in range(runs + 1):
        for c in counts:
            with dynd.threads(c):
                start = time.perf_counter()
                f()
                d = time.perf_counter() - start
            if rnd > 0:
                ts[c].append(d)
    return {c: sorted(v)[len(v) // 2] for c, v in ts.items()}


def median_time(runs, f):
    f()
    ts = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        ts.append(time.perf_counter() - start)
    return sorted(ts)[len(ts) // 2]


# ---------------------------------------------------------------------------
# The data: the formulas of bench/compare.py and dynd-bench.


def ragged_parts(np, rows):
    lengths = (np.arange(rows, dtype=np.int64) * 7 + 3) % 21
    offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    content = (np.arange(total, dtype=np.int64) % 100) * 0.25
    return offsets, content


def dynd_ragged(dynd, np, pa, offsets, content):
    """`rows * var * float64` through the Arrow C data interface."""
    item = pa.field("item", pa.float64(), nullable=False)
    if offsets[-1] < 2**31:
        arr = pa.ListArray.from_arrays(
            pa.array(offsets.astype(np.int32)), pa.array(content), type=pa.list_(item))
    else:
        arr = pa.LargeListArray.from_arrays(
            pa.array(offsets), pa.array(content), type=pa.large_list(item))

    class NonNullable:
        def __arrow_c_array__(self, requested_schema=None):
            schema = pa.field("x", arr.type, nullable=False).__arrow_c_schema__()
            return schema, arr.__arrow_c_array__()[1]

    return dynd.from_arrow(NonNullable())


def sort_data(np, n):
    i = np.arange(n, dtype=np.uint64)
    return ((i * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(11)).astype(np.float64) / 2.0**53


def records_lines(count):
    return "".join(
        '{"x": %d.%03d, "y": %d, "s": "r%d"}\n' % (i % 1000, (7 * i) % 1000, i, i % 100)
        for i in range(count)
    )


# ---------------------------------------------------------------------------
# The table.


def fmt_ms(s):
    ms = s * 1e3
    if ms >= 100:
        return f"{ms:.0f} ms"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.2f} ms"


def sup(n):
    """10^k in the issue's notation (10⁷), or the number."""
    digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
    k = 0
    m = n
    while m >= 10 and m % 10 == 0:
        m //= 10
        k += 1
    if m == 1 and k > 0:
        return "10" + "".join(digits[int(d)] for d in str(k))
    return f"{n:,}"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main():
    opts = parse_args(sys.argv[1:])
    dynd = import_dynd()
    np = optional("numpy")
    if np is None:
        fail(f"numpy is not importable from {sys.executable}: {sys.executable} -m pip install numpy")
    pa = optional("pyarrow")
    ne = optional("numexpr") if opts["peers"] else None
    ak = optional("awkward") if opts["peers"] else None
    counts, runs = opts["threads"], opts["runs"]
    top = counts[-1]
    size, rows = opts["size"], opts["ragged_rows"]

    rows_out = []  # (work, {count: seconds} or reason, peer text)

    def measure(work, f, peer=""):
        say(f"scale.py: {work} on {', '.join(map(str, counts))} threads ...")
        try:
            f()
        except Exception as e:  # noqa: BLE001 - report the row and go on
            rows_out.append((work, f"failed: {type(e).__name__}: {e}", peer))
            return
        rows_out.append((work, times_by_threads(dynd, counts, runs, f), peer))

    def numexpr_peer(expr, names):
        if ne is None:
            return "" if not opts["peers"] else "numexpr not installed"
        ts = {}
        for c in counts:
            ne.set_num_threads(c)
            ts[c] = median_time(runs, lambda: ne.evaluate(expr, local_dict=names))
        text = f"numexpr {fmt_ms(ts[top])}"
        if top != 1:
            text += f" (1 thread: {fmt_ms(ts[1])})"
        return text

    def one_thread_peer(lib, f):
        return f"{lib} 1 thread: {fmt_ms(median_time(runs, f))}"

    # Flat float64.
    i = np.arange(size, dtype=np.int64)
    na, nb = i * 0.5, 1.0 + (i % 7).astype(np.float64)
    a, b = dynd.asarray(na), dynd.asarray(nb)
    peer = numexpr_peer("a + b", {"a": na, "b": nb}) if opts["peers"] else ""
    measure("`a + b` into a new array", lambda: a + b, peer)
    fa, fb, fc = (i % 1000) * 0.001, (i % 7) + 0.5, -((i % 13).astype(np.float64))
    da, db, dc = dynd.asarray(fa), dynd.asarray(fb), dynd.asarray(fc)
    peer = numexpr_peer("a * b + c", {"a": fa, "b": fb, "c": fc}) if opts["peers"] else ""
    measure("`a * b + c` (two calls)", lambda: da * db + dc, peer)
    del fb, fc, db, dc, nb, b
    ns = (i % 100) * 0.5
    s = dynd.asarray(ns)
    peer = one_thread_peer("NumPy", lambda: ns.sum()) if opts["peers"] else ""
    measure("`sum(a)`", lambda: dynd.sum(s), peer)
    del i, na, a, fa, da, ns, s

    # Ragged.
    ragged_works = [
        "ragged `sum(x, axis=-1)`",
        "ragged `x + 1.0`",
        "ragged `sort(x)` (each row)",
        "ragged `x[x > 12.0]`",
    ]
    if pa is None:
        for w in ragged_works:
            rows_out.append((w, f"needs pyarrow: {sys.executable} -m pip install pyarrow", ""))
    else:
        offsets, content = ragged_parts(np, rows)
        x = dynd_ragged(dynd, np, pa, offsets, content)
        akx = None
        if ak is not None:
            akx = ak.Array(ak.contents.ListOffsetArray(
                ak.index.Index64(offsets), ak.contents.NumpyArray(content)))
        peer = one_thread_peer("awkward", lambda: ak.sum(akx, axis=-1)) if akx is not None else ""
        measure(ragged_works[0], lambda: dynd.sum(x, axis=-1), peer)
        peer = one_thread_peer("awkward", lambda: akx + 1.0) if akx is not None else ""
        measure(ragged_works[1], lambda: x + 1.0, peer)
        measure(ragged_works[2], lambda: dynd.sort(x))
        mask = x > 12.0
        measure(ragged_works[3], lambda: x[mask])
        del x, akx, mask, offsets, content

    # 1-d sort.
    sd = sort_data(np, opts["sort_size"])
    xs = dynd.asarray(sd)
    peer = one_thread_peer("NumPy", lambda: np.sort(sd)) if opts["peers"] else ""
    measure(f"`sort` of {sup(opts['sort_size'])} float64", lambda: dynd.sort(xs), peer)
    del sd, xs

    # JSON Lines.
    nrec = opts["json_records"]
    text = records_lines(nrec)
    tp = "var * {x: float64, y: int64, s: string}"
    measure(f"JSON Lines, {sup(nrec)} records", lambda: dynd.from_json(text, type=tp, lines=True))

    # The table.
    print()
    print(
        f"dynd {getattr(dynd, '__version__', '?')} from {os.path.dirname(dynd.__file__)}; "
        f"python {sys.version.split()[0]}; numpy {np.__version__}"
        + (f"; numexpr {ne.__version__}" if ne else "")
        + (f"; awkward {ak.__version__}" if ak else "")
    )
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; median of {runs} interleaved rounds")
    print()
    head = [f"work ({sup(size)} float64 / {sup(rows)} ragged rows of mean length 10)"]
    head += [f"{c} thread{'s' if c > 1 else ''}" for c in counts]
    head += ["speed-up", f"peer at {top}" if top > 1 else "peer"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for work, ts, peer in rows_out:
        if isinstance(ts, str):
            cells = [work] + [ts] + [""] * (len(counts) - 1) + ["", peer]
        else:
            sp = ts[1] / ts[top]
            cells = [work] + [fmt_ms(ts[c]) for c in counts] + [f"{sp:.1f}×", peer]
        print("| " + " | ".join(cells) + " |")
    print()
    print(
        "speed-up: 1 thread / the largest count. Targets (issue #27): on 2 cores, >= 1.7x on "
        "2 threads where the work is not bound by memory bandwidth (sort, per-row sort, "
        "filter, JSON), memory-bound rows no slower than on 1; on 16 cores, compute-bound rows "
        ">= 8x at 16 threads, memory-bound rows >= 1.0x numexpr at 16."
    )


if __name__ == "__main__":
    main()
