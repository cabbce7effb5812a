//! Fixed costs: a 10-element add (resolve, allocate, build, run: the
//! per-call overhead), and building assignment kernels (new builder,
//! `make_assignment_kernel`, drop) for int32→float64 scalars, 1-d arrays,
//! and a pair of structs.

use crate::callables::{f64_array, named};
use crate::casts::build_assignment;
use crate::harness::{Ctx, Measurement, median_time_per_call, or_skip};
use dynd::Array;
use dynd::kernels::CKernelBuilder;
use dynd::kernels::assign::ErrorMode;
use std::hint::black_box;
use std::pin::pin;

fn add10(ctx: &Ctx) {
    let Some(add) = named(ctx, "add") else { return };
    let x = f64_array(10, |i| i as f64);
    let reps = if ctx.quick { 2_000 } else { 10_000 };
    let t = median_time_per_call(ctx.runs, reps, || {
        black_box(add.call(&[&x, &x]).expect("add"));
    });
    ctx.row(
        &Measurement::latency("add, 10 elements (per call)", 10, t),
        &format!(
            "{:.2} µs per call (resolve, allocate, build, run)",
            t.as_secs_f64() * 1e6
        ),
    );
}

/// Builds the kernel `dst ← src` once (new builder, build, drop).
fn build_once(dst: &Array, src: &Array) -> dynd::Result<()> {
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: a new builder.
    unsafe { build_assignment(ckb.as_mut(), dst, src, ErrorMode::Default) }?;
    black_box(&ckb);
    Ok(())
}

fn kernel_builds(ctx: &Ctx) {
    let reps = if ctx.quick { 2_000 } else { 20_000 };
    for (label, dst_tp, src_tp) in [
        ("int32 -> float64", "float64", "int32"),
        (
            "1000 * int32 -> 1000 * float64",
            "1000 * float64",
            "1000 * int32",
        ),
        (
            "struct pair",
            "{a: float64, b: int32, c: string}",
            "{a: int32, b: float64, c: string}",
        ),
    ] {
        let name = format!("make_assignment_kernel {label}");
        let arrays = Array::empty(dst_tp).and_then(|d| Ok((d, Array::empty(src_tp)?)));
        let Some((dst, src)) = or_skip(ctx, &name, arrays) else {
            continue;
        };
        if let Some(e) = build_once(&dst, &src).err() {
            ctx.skipped(&name, &e.to_string());
            continue;
        }
        let t = median_time_per_call(ctx.runs, reps, || build_once(&dst, &src).expect("build"));
        ctx.row(
            &Measurement::latency(name, 1, t),
            &format!(
                "{:.3} µs per build ({src_tp} to {dst_tp})",
                t.as_secs_f64() * 1e6
            ),
        );
    }
}

pub fn run(ctx: &Ctx) {
    add10(ctx);
    kernel_builds(ctx);
}
