//! Sorting and scans: `sort` of each row of the ragged array of
//! [`crate::ragged`] (1M rows of 0–20 float64, 200K with `--quick`;
//! against `ak.sort(x, axis=-1)`), and `sort`, stable `argsort` and
//! `cumsum` of 10M float64 (2M with `--quick`; against `np.sort`,
//! `np.argsort(kind='stable')` and `np.cumsum`), each on one thread into a
//! new output (with `--threads`, on each count of the list).
//!
//! The 1-d data is pseudo-random in [0, 1): element `i` is the top 53
//! bits of `i * 0x9E3779B97F4A7C15` (wrapping) over 2^53, which
//! `bench/compare.py` builds the same way.

use crate::harness::{Ctx, Measurement, median_times_threads, or_skip};
use crate::ragged;
use dynd::compute::{self, SortOptions};
use dynd::{Array, Result};
use std::hint::black_box;

/// Element `i` of the 1-d data.
pub fn value(i: usize) -> f64 {
    ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64
}

/// The `n` elements of a new 1-d contiguous output of `T` (empty when it
/// is not one).
fn elements<T: Copy>(a: &Array, n: usize) -> Vec<T> {
    if a.shape() != [Some(n)] || a.tp().dtype().data_size() != size_of::<T>() {
        return Vec::new();
    }
    // SAFETY: a new `n * T` output is contiguous: n elements of T's size
    // from its data pointer, alive as long as `a`; read unaligned.
    (0..n)
        .map(|i| unsafe { a.data_ptr().cast::<T>().add(i).read_unaligned() })
        .collect()
}

/// One timed row: `f` on one thread (on each count of `--threads`),
/// checked once by `check`.
fn timed(
    ctx: &Ctx,
    name: &str,
    n: usize,
    bytes: usize,
    note: &str,
    f: impl Fn() -> Result<Array> + Sync,
    check: impl FnOnce(&Array) -> bool,
) {
    match f() {
        Err(e) => ctx.skipped(name, &e.to_string()),
        Ok(r) if !check(&r) => ctx.skipped(name, "wrong result"),
        Ok(_) => {
            let counts = ctx.counts(&[1]);
            let t = median_times_threads(ctx.runs.min(5), &counts, || {
                black_box(f().expect(name));
            });
            ctx.scaling_rows(name, &counts, &t, note, |name, t| {
                Measurement::new(name, n, t, bytes)
            });
        }
    }
}

pub fn run(ctx: &Ctx) {
    let rows = if ctx.quick { 200_000 } else { 1_000_000 };
    let total: usize = (0..rows).map(ragged::row_len).sum();
    if let Some(x) = or_skip(ctx, "ragged sort", ragged::build(rows)) {
        timed(
            ctx,
            "ragged sort axis -1 (new output)",
            rows,
            2 * (total * 8 + rows * 16),
            &format!("{total} elements"),
            || compute::sort(&x),
            |r| {
                let row = r.index(&[4.into()]).map(|v| v.to_json());
                let start: usize = (0..4).map(ragged::row_len).sum();
                let mut want: Vec<f64> = (start..start + ragged::row_len(4))
                    .map(ragged::value)
                    .collect();
                want.sort_by(f64::total_cmp);
                row.is_ok_and(|r| r == Array::from(want).to_json())
            },
        );
    }
    let n = ctx.n();
    let data: Vec<f64> = (0..n).map(value).collect();
    let x = Array::from(data.clone());
    let mut sorted = data.clone();
    sorted.sort_by(f64::total_cmp);
    timed(
        ctx,
        "sort float64 (new output)",
        n,
        2 * n * 8,
        "pseudo-random in [0, 1)",
        || compute::sort(&x),
        |r| elements::<f64>(r, n) == sorted,
    );
    timed(
        ctx,
        "argsort float64 stable (new output)",
        n,
        2 * n * 8,
        "int64 positions",
        || compute::argsort_by(&x, SortOptions::default()),
        |r| {
            let v = elements::<i64>(r, n);
            v.len() == n
                && v.windows(2)
                    .all(|w| data[w[0] as usize] <= data[w[1] as usize])
        },
    );
    timed(
        ctx,
        "cumsum float64 (new output)",
        n,
        2 * n * 8,
        "",
        || compute::cumsum(&x),
        |r| {
            let mut acc = 0.0;
            let want: Vec<f64> = data
                .iter()
                .map(|v| {
                    acc += v;
                    acc
                })
                .collect();
            elements::<f64>(r, n) == want
        },
    );
}
