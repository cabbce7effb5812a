//! Sums: over all of n float64 (one and two threads), and over axis 0 and
//! axis 1 of a 1000×10000 float64 array (200×10000 with `--quick`).

use crate::callables::{f64_array, named};
use crate::copies::f64_matrix;
use crate::harness::{Ctx, Measurement, median_time, or_skip};
use dynd::compute as reduce;
use std::hint::black_box;

fn whole(ctx: &Ctx) {
    let n = ctx.n();
    let a = f64_array(n, |i| (i % 100) as f64 * 0.5);
    let Some(sum) = named(ctx, "sum") else { return };
    for (suffix, pool) in [("", &ctx.one), (", 2 threads", &ctx.two)] {
        pool.install(|| {
            let t = median_time(ctx.runs, || {
                black_box(sum.call(&[&a]).expect("sum"));
            });
            let s = sum
                .call(&[&a])
                .expect("sum")
                .as_scalar::<f64>()
                .expect("f64");
            let want: f64 = (0..n).map(|i| (i % 100) as f64 * 0.5).sum();
            assert!((s - want).abs() <= 1e-9 * want.abs(), "sum {s} != {want}");
            ctx.row(&Measurement::new(format!("sum{suffix}"), n, t, n * 8), "");
        });
    }
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
        let t = median_time(ctx.runs, || {
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
        ctx.row(
            &Measurement::shaped(name, &[rows, cols], t, (rows * cols + out_len) * 8),
            "",
        );
    }
}

pub fn run(ctx: &Ctx) {
    whole(ctx);
    axes(ctx);
}
