//! Selection callables: `filter` of the ragged array of [`crate::ragged`]
//! (1M rows, mean length 10; 200K with `--quick`) by a per-element mask
//! (`x > 12.0`, about half kept), `take` of n float64 (10M; 2M with
//! `--quick`) at pseudo-random int64 indices, `take` of the ragged array by
//! per-row indices (each row reversed), and `where(cond, x, y)` over n
//! float64 with a pseudo-random bool condition. `take` of float64 and
//! `where` run on one thread and on two, the others on one; with
//! `--threads`, all of them on each count of the list.
//!
//! The index and condition patterns are the multiplicative hash
//! `(i * 2654435761 + 12345) mod n` (and its bit 7), which `bench/compare.py`
//! builds the same way for NumPy and awkward.

use crate::callables::{f64_array, named};
use crate::harness::{Ctx, Measurement, median_times_threads, or_skip};
use crate::ragged::{build, build_rows, row_len};
use dynd::{Array, Result, Type, compute};
use std::hint::black_box;

/// The pseudo-random index of element `i` among `n`.
pub fn hashed(i: usize, n: usize) -> usize {
    ((i as u64).wrapping_mul(2_654_435_761).wrapping_add(12_345) % n as u64) as usize
}

/// `rows * var * int64` with row `i` of `row_len(i)` elements, element `j`
/// of it `f(len, j)`.
fn ragged_i64(rows: usize, f: impl Fn(usize, usize) -> i64) -> Result<Array> {
    build_rows(rows, row_len, Type::int64(), |_, len, j| f(len, j))
}

pub fn run(ctx: &Ctx) {
    let rows = if ctx.quick { 200_000 } else { 1_000_000 };
    let total: usize = (0..rows).map(row_len).sum();
    let n = ctx.n();

    let name = "filter ragged by per-element mask";
    if let (Some(x), Some(_)) = (or_skip(ctx, name, build(rows)), named(ctx, "filter")) {
        let mask = compute::greater(&x, &Array::from(12.0f64));
        if let Some(mask) = or_skip(ctx, name, mask) {
            match compute::filter(&x, &mask) {
                Err(e) => ctx.skipped(name, &e.to_string()),
                Ok(r) => {
                    let kept: usize = (0..total).filter(|&k| (k % 100) > 48).count();
                    let got = compute::count(&r, None, false)
                        .and_then(|c| c.as_scalar::<i64>())
                        .expect("count");
                    assert_eq!(got as usize, kept);
                    let counts = ctx.counts(&[1]);
                    let t = median_times_threads(ctx.runs, &counts, || {
                        black_box(compute::filter(&x, &mask).expect("filter"));
                    });
                    let note = format!("{total} elements, {kept} kept");
                    ctx.scaling_rows(name, &counts, &t, &note, |name, t| {
                        Measurement::new(name, rows, t, total * 9 + rows * 32 + kept * 8)
                    });
                }
            }
        }
    }

    let name = "take 10M float64, random int64 idx";
    let x = f64_array(n, |i| i as f64 * 0.5);
    let idx: Vec<i64> = (0..n).map(|i| hashed(i, n) as i64).collect();
    let idx = Array::from(idx.as_slice());
    match compute::take(&x, &idx) {
        Err(e) => ctx.skipped(name, &e.to_string()),
        Ok(r) => {
            for i in [0, 1, n / 2, n - 1] {
                let got = r.index(&[i.into()]).and_then(|v| v.as_scalar::<f64>());
                assert_eq!(got.expect("element"), hashed(i, n) as f64 * 0.5, "[{i}]");
            }
            let counts = ctx.counts(&[1, 2]);
            let t = median_times_threads(ctx.runs, &counts, || {
                black_box(compute::take(&x, &idx).expect("take"));
            });
            let note = "bytes: indices + gathered + output";
            ctx.scaling_rows(name, &counts, &t, note, |name, t| {
                Measurement::new(name, n, t, n * 24)
            });
        }
    }

    let name = "take jagged (per-row idx, rows reversed)";
    let jagged =
        build(rows).and_then(|x| Ok((x, ragged_i64(rows, |len, j| (len - 1 - j) as i64)?)));
    if let Some((x, jidx)) = or_skip(ctx, name, jagged) {
        match compute::take(&x, &jidx) {
            Err(e) => ctx.skipped(name, &e.to_string()),
            Ok(r) => {
                let row3 = r.index(&[3.into()]).expect("row").to_json();
                let start: usize = (0..3).map(row_len).sum();
                let want: Vec<String> = (start..start + row_len(3))
                    .rev()
                    .map(|k| format!("{:?}", crate::ragged::value(k)))
                    .collect();
                assert_eq!(row3, format!("[{}]", want.join(",")));
                let counts = ctx.counts(&[1]);
                let t = median_times_threads(ctx.runs, &counts, || {
                    black_box(compute::take(&x, &jidx).expect("take"));
                });
                ctx.scaling_rows(
                    name,
                    &counts,
                    &t,
                    &format!("{total} elements"),
                    |name, t| Measurement::new(name, rows, t, total * 24 + rows * 48),
                );
            }
        }
    }

    let name = "where 10M float64";
    let cond: Vec<bool> = (0..n).map(|i| (hashed(i, n) >> 7) & 1 == 1).collect();
    let cond = Array::from(cond.as_slice());
    let y = f64_array(n, |i| -(i as f64));
    match compute::where_(&cond, &x, &y) {
        Err(e) => ctx.skipped(name, &e.to_string()),
        Ok(r) => {
            for i in [0, 1, 2, n - 1] {
                let c = (hashed(i, n) >> 7) & 1 == 1;
                let want = if c { i as f64 * 0.5 } else { -(i as f64) };
                let got = r.index(&[i.into()]).and_then(|v| v.as_scalar::<f64>());
                assert_eq!(got.expect("element"), want, "[{i}]");
            }
            let counts = ctx.counts(&[1, 2]);
            let t = median_times_threads(ctx.runs, &counts, || {
                black_box(compute::where_(&cond, &x, &y).expect("where"));
            });
            ctx.scaling_rows(name, &counts, &t, "", |name, t| {
                Measurement::new(name, n, t, n * 25)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_builder_matches_json() {
        let a = ragged_i64(5, |len, j| (len - 1 - j) as i64).unwrap();
        let text: Vec<String> = (0..5)
            .map(|i| {
                let r: Vec<String> = (0..row_len(i)).rev().map(|j| j.to_string()).collect();
                format!("[{}]", r.join(","))
            })
            .collect();
        assert_eq!(a.to_json(), format!("[{}]", text.join(",")));
    }
}
