#!/usr/bin/env python3
"""tour.py -- the Python face of dynd, in the order of the Rust tour.

    pip install ./crates/dynd-python
    python examples/python/tour.py

Every result is checked; the script exits non-zero on a mismatch.
"""

import sys

import dynd

failures = 0


def section(title):
    print(f"\n== {title} ==")


def show(label, value, expected=None):
    global failures
    text = value.to_list() if isinstance(value, dynd.Array) else value
    ok = expected is None or text == expected
    failures += not ok
    print(f"  {label:<34} {value!r}" + ("" if ok else f"   <-- expected {expected!r}"))


section("Types are values, spoken as datashape")
t = dynd.type("3 * var * {x: int32, s: ?string}")
show("dynd.type(...)", t)
show("t == text", t == "3 * var * {x: int32, s: ?string}", True)
show("data_size, ndim", (t.data_size, t.ndim))

section("Arrays from Python values and JSON (types inferred)")
a = dynd.array([[1, 2, 3], [4], []])
show("dynd.array([[1, 2, 3], [4], []])", a, [[1, 2, 3], [4], []])
show("a.type / a.shape", (str(a.type), a.shape), ("3 * var * int64", (3, None)))
people = dynd.from_json(
    '[{"name": "Ann", "age": 37, "scores": [9.5, 7]},'
    ' {"name": "Bo", "age": null, "scores": []},'
    ' {"name": "Cy", "age": 19, "scores": [8, 6.5, 10]}]'
)
show("from_json(...).type", str(people.type), "3 * {name: string, age: ?int64, scores: var * float64}")

section("Views share data; nothing is copied")
m = dynd.array([[1, 2, 3], [4, 5, 6]], type="2 * 3 * int32")
col = m[:, 1]
col[:] = 0
show("m[:, 1] = 0, then m", m, [[1, 0, 3], [4, 0, 6]])
show("m[::-1, -1]", m[::-1, -1], [6, 3])
show("people.name (a field view)", people.name, ["Ann", "Bo", "Cy"])
show("a[:, 0] on ragged rows", a[:2, 0], [1, 4])

section("Operators and callables: broadcast over fixed and var dims")
show("a * 10", a * 10, [[10, 20, 30], [40], []])
show("a + [[1], [2], [3]]", a + dynd.array([[1], [2], [3]]), [[2, 3, 4], [6], []])
show("m / 2 (true division)", m / 2, [[0.5, 0.0, 1.5], [2.0, 0.0, 3.0]])
show("dynd.sqrt([[4.0, 9.0], []])", dynd.sqrt([[4.0, 9.0], []]), [[2.0, 3.0], []])
show("dynd.startswith(names, 'C')", dynd.startswith(people.name, "C"), [False, False, True])

section("Reductions over axes, keepdims, and var dims")
show("dynd.sum(a, axis=-1)", dynd.sum(a, axis=-1), [6, 4, 0])
show("dynd.sum(a, axis=0) (by position)", dynd.sum(a, axis=0), [5, 2, 3])
show("dynd.max(a, axis=-1) (empty row)", dynd.max(a, axis=-1), [3, 4, None])
show("dynd.mean(m, axis=1, keepdims)", dynd.mean(m, axis=1, keepdims=True), [[4 / 3], [10 / 3]])

section("Missing values: computed on, not around")
show("people.age + 1", people.age + 1, [38, None, 20])
show("dynd.mean(people.age)", dynd.mean(people.age), 28.0)
show("dynd.fill_null(people.age, 0)", dynd.fill_null(people.age, 0), [37, 0, 19])

section("Selecting and sorting records")
adults = people[people.age >= 21]
show("people[people.age >= 21].name", adults.name, ["Ann"])
show("dynd.sort(people.scores)", dynd.sort(people.scores), [[7.0, 9.5], [], [6.5, 8.0, 10.0]])
show("people[[2, 0]].name", people[[2, 0]].name, ["Cy", "Ann"])

section("Zero-copy with NumPy (and DLPack, Arrow)")
try:
    import numpy as np
except ImportError:
    np = None
if np is None:
    print("  (numpy not installed: the NumPy lines are skipped; pip install numpy)")
else:
    x = np.arange(6.0).reshape(2, 3)
    d = dynd.asarray(x)  # a view of NumPy's memory
    x[0, 0] = 42.0
    show("dynd.asarray(x) sees x's writes", d[0, 0], 42.0)
    n = np.asarray(d * 2)  # a view of dynd's memory; its base keeps it alive
    show("np.asarray(d * 2)", n.tolist(), [[84.0, 2.0, 4.0], [6.0, 8.0, 10.0]])
    show("np.from_dlpack(d).sum()", float(np.from_dlpack(d).sum()), 57.0)
try:
    import pyarrow as pa

    show("pyarrow.array(a)", pa.array(a).to_pylist(), [[1, 2, 3], [4], []])
    show("dynd.from_arrow(pa.array(...))", dynd.from_arrow(pa.array([[1, None], [2]])), [[1, None], [2]])
except ImportError:
    print("  (pyarrow not installed: the Arrow lines are skipped)")

section("Kernels from Numba, lifted over ragged data")
try:
    import numba  # noqa: F401
except ImportError:
    numba = None
if numba is None:
    print("  (numba not installed: the kernel lines are skipped)")
else:

    @dynd.kernel("(float64, float64) -> float64")
    def clipped_scale(x, f):
        return min(x * f, 10.0)

    show("clipped_scale(people.scores, 2.0)", clipped_scale(people.scores, 2.0), [[10.0, 10.0], [], [10.0, 10.0, 10.0]])
    show("clipped_scale(people.scores, 0.5)", clipped_scale(people.scores, 0.5), [[4.75, 3.5], [], [4.0, 3.25, 5.0]])

section("Bad input is a typed exception, never a crash")
for label, action in [
    ("a bad datashape", lambda: dynd.type("3 * ")),
    ("an index past a row's end", lambda: a[:, 1]),
    ("shapes that do not broadcast", lambda: m + dynd.array([1, 2])),
    ("a checked cast that overflows", lambda: dynd.array([300]).cast("int8", errmode="overflow")),
]:
    try:
        action()
        print(f"  {label}: no error?!")
        failures += 1
    except dynd.Error as e:
        print(f"  {label:<34} {type(e).__name__} ({e.kind}): {e}")

section("The CUDA device")
if not dynd.cuda.is_available():
    try:
        dynd.array([1.0]).to("cuda")
        print("  no CUDA device, yet to('cuda') worked?!")
        failures += 1
    except dynd.ExternalError as e:
        print(f"  skipped: {e}")
else:
    x = dynd.array([[1, None, 3], [4, 5, 6]], type="2 * 3 * ?float64", device="cuda")
    show("x.device", x.device, "cuda:0")
    show("(x * 2.0).cpu()", (x * 2.0).cpu(), [[2.0, None, 6.0], [8.0, 10.0, 12.0]])
    show("x[::-1].device (a view)", x[::-1].device, "cuda:0")

print(f"\ntour: {'all checks passed' if failures == 0 else f'{failures} FAILED'}")
sys.exit(1 if failures else 0)
