//! Sums: over all of n float64 (one and two threads), and over axis 0 and
//! axis 1 of a 1000×10000 float64 array (200×10000 with `--quick`; one
//! thread); argmax, argmin and mean over all of n float64 (one and two
//! threads). With `--threads`, each runs on every count of the list.

use crate::callables::{f64_array, named};
use crate::copies::f64_matrix;
use crate::harness::{Ctx, Measurement, median_times_threads, or_skip};
use dynd::compute as reduce;
use std::hint::black_box;

fn whole(ctx: &Ctx) {
    let n = ctx.n();
    let a = f64_array(n, |i| (i % 100) as f64 * 0.5);
    let Some(sum) = named(ctx, "sum") else { return };
    let s = sum
        .call(&[&a])
        .expect("sum")
        .as_scalar::<f64>()
        .expect("f64");
    let want: f64 = (0..n).map(|i| (i % 100) as f64 * 0.5).sum();
    assert!((s - want).abs() <= 1e-9 * want.abs(), "sum {s} != {want}");
    let counts = ctx.counts(&[1, 2]);
    let t = median_times_threads(ctx.runs, &counts, || {
        black_box(sum.call(&[&a]).expect("sum"));
    });
    ctx.scaling_rows("sum", &counts, &t, "", |name, t| {
        Measurement::new(name, n, t, n * 8)
    });
}

fn axes(ctx: &Ctx) {
    let (rows, cols) = if ctx.quick {
        (200, 10_000)
    } else {
        (1000, 10_000)
    };
    let name = "sum axis";
    let Some(a) = or_skip(ctx, name, f64_matrix(rows, cols, |i| (i % 17) as f64)) else {
        return;
    };
    for (axis, out_len) in [(0isize, cols), (1, rows)] {
        let name = format!("sum axis {axis}");
        if let Some(e) = reduce::sum(&a, Some(&[axis]), false).err() {
            ctx.skipped(&name, &e.to_string());
            continue;
        }
        let counts = ctx.counts(&[1]);
        let t = median_times_threads(ctx.runs, &counts, || {
            black_box(reduce::sum(&a, Some(&[axis]), false).expect("sum"));
        });
        let r = reduce::sum(&a, Some(&[axis]), false).expect("sum");
        assert_eq!(r.shape(), vec![Some(out_len)]);
        let first = r
            .index(&[0.into()])
            .and_then(|v| v.as_scalar::<f64>())
            .expect("element");
        let want: f64 = if axis == 0 {
            (0..rows).map(|i| ((i * cols) % 17) as f64).sum()
        } else {
            (0..cols).map(|j| (j % 17) as f64).sum()
        };
        assert_eq!(first, want, "{name}[0]");
        ctx.scaling_rows(&name, &counts, &t, "", |name, t| {
            Measurement::shaped(name, &[rows, cols], t, (rows * cols + out_len) * 8)
        });
    }
}

/// argmax, argmin and mean over one long run (the stateful argmin and
/// argmax keep a best value and its position).
fn stateful(ctx: &Ctx) {
    let n = ctx.n();
    let a = f64_array(n, |i| (i % 100) as f64 * 0.5);
    for (name, want) in [("argmax", "99"), ("argmin", "0"), ("mean", "24.75")] {
        let Some(f) = named(ctx, name) else { continue };
        let got = f.call(&[&a]).expect(name).to_json();
        if name == "mean" {
            let v: f64 = got.parse().expect("a float");
            assert!((v - 24.75).abs() < 1e-9, "mean {v}");
        } else {
            assert_eq!(got, want, "{name}");
        }
        let counts = ctx.counts(&[1, 2]);
        let t = median_times_threads(ctx.runs, &counts, || {
            black_box(f.call(&[&a]).expect(name));
        });
        ctx.scaling_rows(name, &counts, &t, "", |name, t| {
            Measurement::new(name, n, t, n * 8)
        });
    }
}

pub fn run(ctx: &Ctx) {
    whole(ctx);
    axes(ctx);
    stateful(ctx);
}
