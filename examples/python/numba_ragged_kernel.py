#!/usr/bin/env python3
"""numba_ragged_kernel.py -- a scalar Python function, compiled by Numba with
``@dynd.kernel``, run by dynd over ragged records.

The data: collision events, each with a different number of particles,
``N * var * {px: float64, py: float64, charge: int8}``. Two kernels:

- ``pt(px, py)``: transverse momentum; its arguments are the field views
  ``events.px`` and ``events.py`` (strided views into the records, no copy);
- ``calibrate(pt, scale)``: broadcasts a scalar over every particle.

dynd lifts both over the ``var`` dim, keeps the rows, and runs large inputs
on its worker threads. An exception raised inside a kernel (here: a negative
scale) comes back as ``dynd.ExternalError``. Each result is compared against
the same computation in plain Python; the script exits non-zero on any
mismatch.

    pip install ./crates/dynd-python numba
    python examples/python/numba_ragged_kernel.py
"""

from __future__ import annotations

import math
import random
import sys

import dynd


@dynd.kernel("(float64, float64) -> float64")
def pt(px, py):
    return math.sqrt(px * px + py * py)


@dynd.kernel("(float64, float64) -> float64")
def calibrate(pt, scale):
    if scale < 0.0:
        raise ValueError("negative scale")
    return pt * scale


@dynd.kernel("(float64, int8) -> bool")
def hard_positive(pt, charge):
    return pt > 1.0 and charge > 0


failures = 0


def check(what, ok, detail=""):
    global failures
    print(f"  {'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail else ""))
    failures += not ok


def close(a, b):
    return all(len(r) == len(s) and all(math.isclose(x, y, rel_tol=1e-12) for x, y in zip(r, s)) for r, s in zip(a, b))


def main():
    rng = random.Random(7)
    events = [
        [{"px": rng.uniform(-3, 3), "py": rng.uniform(-3, 3), "charge": rng.choice([-1, 1])} for _ in range(rng.randrange(6))]
        for _ in range(20_000)
    ]
    a = dynd.array(events, type=f"{len(events)} * var * {{px: float64, py: float64, charge: int8}}")
    print(f"{len(events):,} events, {sum(map(len, events)):,} particles: {a.type}")

    r = pt(a.px, a.py)
    expected = [[math.sqrt(p["px"] ** 2 + p["py"] ** 2) for p in ev] for ev in events]
    check("pt(events.px, events.py) keeps the rows", str(r.type) == f"{len(events)} * var * float64", str(r.type))
    check("pt equals plain Python", close(r.to_list(), expected))

    c = calibrate(r, 1.25)
    check("calibrate(pt, 1.25) broadcasts the scalar", close(c.to_list(), [[v * 1.25 for v in row] for row in expected]))

    h = hard_positive(r, a.charge)
    want = [[v > 1.0 and p["charge"] > 0 for v, p in zip(row, ev)] for row, ev in zip(expected, events)]
    check("hard_positive(pt, events.charge) -> bool", h.to_list() == want)
    n_hard = dynd.sum(h.cast("int64")).to_list()
    check("dynd.sum over the kernel's result", n_hard == sum(map(sum, want)), str(n_hard))

    # A fixed dim and a var dim broadcast together: per-event scales.
    first = dynd.array([[1.0, 2.0], [], [3.0]])
    check("var rows x per-row scale", calibrate(first, dynd.array([[2.0], [0.0], [-0.0]])).to_list() == [[2.0, 4.0], [], [-0.0]])

    try:
        calibrate(r, -1.0)
        check("a raising kernel is refused", False, "no error")
    except dynd.ExternalError as e:
        check("a raising kernel -> dynd.ExternalError", "calibrate" in str(e), str(e))

    print(f"numba ragged kernel: {'all checks passed' if failures == 0 else f'{failures} FAILED'}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
