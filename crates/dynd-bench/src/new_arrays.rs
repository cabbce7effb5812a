//! Operations that make a new array: the copy of a 2-d strided view
//! (`a[::2, ::3]` of a 1000×1000 float64), the cast of a 1000×1000 float64
//! to int32 into a new array, and arrays made from a Rust `Vec` (zero-copy)
//! and slice (a copy), beside a plain `memcpy` of the same bytes. Sizes are
//! the same with `--quick`: they are the sizes the NumPy comparison names.

use crate::copies::f64_matrix;
use crate::harness::{Ctx, Measurement, copy_rows, median_consuming, median_time, or_skip};
use dynd::kernels::assign::ErrorMode;
use dynd::{Array, Index, Type};
use std::hint::black_box;

const SIDE: usize = 1000;
/// Elements of the vectors made into arrays.
const VEC_N: usize = 1_000_000;

fn strided_2d_copy(ctx: &Ctx) {
    let name = "strided 2-d copy a[::2, ::3] (Array::copy, new)";
    let Some(a) = or_skip(ctx, name, f64_matrix(SIDE, SIDE, |i| i as f64)) else {
        return;
    };
    let Some(view) = or_skip(
        ctx,
        name,
        a.index(&[Index::slice(None, None, 2), Index::slice(None, None, 3)]),
    ) else {
        return;
    };
    let (rows, cols) = (SIDE.div_ceil(2), SIDE.div_ceil(3));
    let t = median_time(ctx.runs.max(15), || {
        black_box(view.copy().expect("copy"));
    });
    let c = view.copy().expect("copy");
    let v = c
        .index(&[(rows - 1).into(), (cols - 1).into()])
        .and_then(|v| v.as_scalar::<f64>())
        .expect("element");
    assert_eq!(v, ((rows - 1) * 2 * SIDE + (cols - 1) * 3) as f64);
    ctx.row(
        &Measurement::shaped(name, &[SIDE, SIDE], t, 2 * rows * cols * 8),
        "bytes: the elements read + written",
    );
}

fn cast_new(ctx: &Ctx) {
    let src = match f64_matrix(SIDE, SIDE, |i| (i % 1000) as f64 - 500.0) {
        Ok(a) => a,
        Err(e) => {
            ctx.skipped("cast f64->i32 new output", &e.to_string());
            return;
        }
    };
    let tp = Type::fixed_dim(SIDE, Type::fixed_dim(SIDE, Type::int32()));
    for mode in [ErrorMode::NoCheck, ErrorMode::Overflow] {
        let name = format!("cast f64->i32 new output (Array::cast) {mode}");
        let t = median_time(ctx.runs.max(15), || {
            black_box(src.cast(&tp, mode).expect("cast"));
        });
        ctx.row(
            &Measurement::shaped(name, &[SIDE, SIDE], t, SIDE * SIDE * 12),
            "",
        );
    }
}

fn from_rust(ctx: &Ctx) {
    let src: Vec<f64> = (0..VEC_N).map(|i| i as f64 * 0.5).collect();
    let runs = ctx.runs.max(15);
    let t = median_consuming(runs, || src.clone(), Array::from);
    ctx.row(
        &Measurement::latency("Array::from(Vec<f64>), 1M (zero-copy)", VEC_N, t),
        "the vector becomes the data's owner",
    );
    copy_rows(
        ctx,
        runs,
        &src,
        "Array::from(&[f64]), 1M (copy)",
        (
            "memcpy 1M f64 into a new Vec (to_vec)",
            "the baseline of the two rows above",
        ),
        |s| Array::from(s),
    );
}

pub fn run(ctx: &Ctx) {
    strided_2d_copy(ctx);
    cast_new(ctx);
    from_rust(ctx);
}
