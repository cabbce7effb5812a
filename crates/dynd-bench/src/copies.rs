//! Copies through the assignment kernels: same-type assign of n float64,
//! `Array::copy`, a strided `a[::2]` view assigned into a contiguous array,
//! and a transposed 4000×4000 view (2000×2000 with `--quick`) assigned into
//! a contiguous array.

use crate::callables::f64_array;
use crate::harness::{Ctx, Measurement, median_time, or_skip};
use dynd::kernels::assign::ErrorMode;
use dynd::{Array, Index, Type};
use std::hint::black_box;

/// Element `i` of a 1-d float64 array.
fn at(a: &Array, i: usize) -> f64 {
    a.index(&[i.into()])
        .and_then(|v| v.as_scalar::<f64>())
        .expect("element")
}

/// A C-order `rows * cols * float64` array of `f(flat index)`.
pub fn f64_matrix(rows: usize, cols: usize, f: impl Fn(usize) -> f64) -> dynd::Result<Array> {
    let a = Array::empty(Type::fixed_dim(
        rows,
        Type::fixed_dim(cols, Type::float64()),
    ))?;
    // SAFETY: a new C-order array of rows * cols float64 owns that many
    // contiguous, aligned, initialized (zeroed) elements at its data pointer.
    let data = unsafe { std::slice::from_raw_parts_mut(a.data_ptr().cast::<f64>(), rows * cols) };
    for (i, x) in data.iter_mut().enumerate() {
        *x = f(i);
    }
    Ok(a)
}

fn assign_same_type(ctx: &Ctx) {
    let n = ctx.n();
    let src = f64_array(n, |i| i as f64 * 0.25);
    let name = "copy f64 (assign, same type)";
    let Some(dst) = or_skip(ctx, name, Array::empty(Type::fixed_dim(n, Type::float64()))) else {
        return;
    };
    let t = median_time(ctx.runs, || {
        dst.assign(&src, ErrorMode::NoCheck).expect("assign")
    });
    assert_eq!(at(&dst, n - 1), (n - 1) as f64 * 0.25);
    ctx.row(&Measurement::new(name, n, t, 2 * n * 8), "");
    let t = median_time(ctx.runs, || {
        black_box(src.copy().expect("copy"));
    });
    ctx.row(
        &Measurement::new("copy f64 (Array::copy, new)", n, t, 2 * n * 8),
        "",
    );
}

fn strided(ctx: &Ctx) {
    let n = ctx.n();
    let name = "strided copy a[::2] (assign into contiguous)";
    let src = f64_array(n, |i| i as f64);
    let Some(view) = or_skip(ctx, name, src.index(&[Index::slice(None, None, 2)])) else {
        return;
    };
    let half = n.div_ceil(2);
    let Some(dst) = or_skip(
        ctx,
        name,
        Array::empty(Type::fixed_dim(half, Type::float64())),
    ) else {
        return;
    };
    let t = median_time(ctx.runs, || {
        dst.assign(&view, ErrorMode::NoCheck).expect("assign")
    });
    assert_eq!(at(&dst, half - 1), ((half - 1) * 2) as f64);
    ctx.row(
        &Measurement::new(name, n, t, 2 * half * 8),
        "bytes: the n/2 elements read + written",
    );
}

fn transpose(ctx: &Ctx) {
    let side = if ctx.quick { 2000 } else { 4000 };
    let name = "transpose copy (permute view, assign)";
    let n = side * side;
    let Some(src) = or_skip(ctx, name, f64_matrix(side, side, |i| i as f64)) else {
        return;
    };
    let tp = src.tp().clone();
    let Some(view) = or_skip(ctx, name, src.permute(&[1, 0])) else {
        return;
    };
    let Some(dst) = or_skip(ctx, name, Array::empty(&tp)) else {
        return;
    };
    let t = median_time(ctx.runs, || {
        dst.assign(&view, ErrorMode::NoCheck).expect("assign")
    });
    let check = dst
        .index(&[1.into(), 2.into()])
        .and_then(|v| v.as_scalar::<f64>())
        .expect("element");
    assert_eq!(check, (2 * side + 1) as f64);
    ctx.row(&Measurement::shaped(name, &[side, side], t, 2 * n * 8), "");
}

pub fn run(ctx: &Ctx) {
    assign_same_type(ctx);
    strided(ctx);
    transpose(ctx);
}
