//! The Arrow C Data Interface: export (`Array::to_arrow`, the consumer
//! then releasing the structs) and export + import back
//! (`Array::from_arrow`) of n float64 (10M; 2M with `--quick`), and of
//! the ragged `R * var * float64` of the ragged group (R = 1M rows of 0–20
//! elements, ~10 on average; 200K with `--quick`).
//!
//! Targets: O(1) for primitives (both ways zero-copy), one pass over the
//! row descriptors for lists (export writes the offsets; import writes the
//! `{begin, size}` rows; the values are shared both ways). `bench/compare.py`
//! times awkward's `ak.to_arrow` / `ak.from_arrow` on the same data.

use crate::callables::f64_array;
use crate::harness::{Ctx, Measurement, median_time, or_skip};
use crate::ragged;
use dynd::Array;
use std::hint::black_box;

/// Times export alone and export + import of `x`, as rows
/// "arrow export {label}" and "arrow export+import {label}".
fn time_both(ctx: &Ctx, x: &Array, label: &str, n: usize, bytes: usize) {
    let name = format!("arrow export+import {label}");
    let Some((s, a)) = or_skip(ctx, &name, x.to_arrow()) else {
        return;
    };
    let Some(back) = or_skip(ctx, &name, Array::from_arrow(s, a)) else {
        return;
    };
    if back.to_json().len() < 4096 && back.to_json() != x.to_json() {
        ctx.skipped(&name, "the round trip changed the values");
        return;
    }
    drop(back);
    let t = median_time(ctx.runs, || {
        black_box(x.to_arrow().expect("export"));
    });
    ctx.row(
        &Measurement::new(format!("arrow export {label}"), n, t, bytes),
        "",
    );
    let t = median_time(ctx.runs, || {
        let (s, a) = x.to_arrow().expect("export");
        black_box(Array::from_arrow(s, a).expect("import"));
    });
    ctx.row(&Measurement::new(name, n, t, bytes), "");
}

pub fn run(ctx: &Ctx) {
    let n = ctx.n();
    let x = f64_array(n, |i| i as f64 * 0.5);
    time_both(ctx, &x, &format!("{}M float64", n / 1_000_000), n, 0);
    let rows = if ctx.quick { 200_000 } else { 1_000_000 };
    let Some(r) = or_skip(ctx, "arrow ragged", ragged::build(rows)) else {
        return;
    };
    // bytes: the row descriptors read and the offsets written
    time_both(ctx, &r, "ragged var * float64", rows, rows * 16 + rows * 4);
}
