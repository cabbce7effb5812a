//! Casts through the assignment kernels: f64→i32, i32→f64 and f64→f32 in
//! each error mode, against nocheck and against a plain Rust loop. With
//! `--threads` also the same casts through `Array::assign` (the path that
//! may split on the executor; the kernels above are one call on one
//! thread) in nocheck and fractional mode, on each count of the list.

use crate::harness::{Ctx, Measurement, median_times_threads};
use dynd::kernels::assign::{ErrorMode, make_assignment_kernel};
use dynd::kernels::{CKernelBuilder, KernelRequest};
use dynd::{Array, Type};
use std::hint::black_box;
use std::pin::Pin;
use std::time::{Duration, Instant};

const MODES: [ErrorMode; 4] = [
    ErrorMode::NoCheck,
    ErrorMode::Overflow,
    ErrorMode::Fractional,
    ErrorMode::Inexact,
];

/// Builds the kernel `dst ← src` for `KernelRequest::Single` in `mode` at
/// offset 0 of `ckb`, from the arrays' own types and arrmeta.
///
/// # Safety
/// 1. `ckb` is empty: 0 is a free slot of it.
pub(crate) unsafe fn build_assignment(
    ckb: Pin<&mut CKernelBuilder>,
    dst: &Array,
    src: &Array,
    mode: ErrorMode,
) -> dynd::Result<usize> {
    // SAFETY: 0 is free (1); each arrmeta pointer is its array's, valid for
    // its type while the borrowed arrays live, which covers the call.
    unsafe {
        make_assignment_kernel(
            ckb,
            0,
            dst.tp(),
            dst.arrmeta_ptr(),
            src.tp(),
            src.arrmeta_ptr(),
            KernelRequest::Single,
            mode,
        )
    }
}

/// Times the kernels `dst ← src` in each of [`MODES`] (built once),
/// interleaved — one call of each mode per round, so that load from other
/// processes hits every mode alike. Returns each mode's (median, fastest).
/// The plain Rust loop is timed in the same rounds; it comes last.
fn time_modes(
    dst: &Array,
    src: &Array,
    runs: usize,
    mut plain: impl FnMut(),
) -> Vec<(Duration, Duration)> {
    let mut builders: Vec<_> = MODES
        .iter()
        .map(|&mode| {
            let mut ckb = Box::pin(CKernelBuilder::new());
            // SAFETY: a new builder.
            unsafe { build_assignment(ckb.as_mut(), dst, src, mode) }
                .expect("build the cast kernel");
            ckb
        })
        .collect();
    let mut times = vec![Vec::with_capacity(runs); MODES.len() + 1];
    for round in 0..=runs.max(1) {
        for (k, ckb) in builders.iter_mut().enumerate() {
            let t = Instant::now();
            // SAFETY: built for Single on these arrays.
            unsafe { ckb.call_single(dst.data_ptr(), &[src.data_ptr()]) }.expect("cast");
            if round > 0 {
                // Round 0 warms up.
                times[k].push(t.elapsed());
            }
        }
        let t = Instant::now();
        plain();
        if round > 0 {
            times[MODES.len()].push(t.elapsed());
        }
    }
    times
        .into_iter()
        .map(|mut v| {
            v.sort();
            (v[v.len() / 2], v[0])
        })
        .collect()
}

/// Fills a `n * T` array from `f(i)` (a copy in dynd's own data block,
/// as [`crate::callables::f64_array`]).
fn filled<T: dynd::types::NativeType>(n: usize, f: impl Fn(usize) -> T) -> Array {
    let v: Vec<T> = (0..n).map(f).collect();
    Array::from(v.as_slice())
}

pub fn run(ctx: &Ctx) {
    let (n, runs) = (ctx.n(), ctx.runs);
    let f64_src = filled(n, |i| (i % 1000) as f64 - 500.0);
    let i32_src = filled(n, |i| (i % 1000) as i32 - 500);
    let i32_dst = Array::empty(Type::fixed_dim(n, Type::int32())).expect("alloc");
    let f64_dst = Array::empty(Type::fixed_dim(n, Type::float64())).expect("alloc");
    let f32_dst =
        Array::empty(Type::fixed_dim(n, Type::parse("float32").expect("type"))).expect("alloc");

    type Plain = fn(&Array, &Array, usize);
    let cases: [(&str, &Array, &Array, usize, Plain); 3] = [
        ("f64->i32", &i32_dst, &f64_src, 12, |d, s, n| {
            // SAFETY: n elements of each type in the arrays' buffers.
            let (d, s) = unsafe {
                (
                    std::slice::from_raw_parts_mut(d.data_ptr() as *mut i32, n),
                    std::slice::from_raw_parts(s.data_ptr() as *const f64, n),
                )
            };
            for (d, s) in d.iter_mut().zip(black_box(s)) {
                *d = *s as i32;
            }
        }),
        ("i32->f64", &f64_dst, &i32_src, 12, |d, s, n| {
            // SAFETY: n elements of each type in the arrays' buffers.
            let (d, s) = unsafe {
                (
                    std::slice::from_raw_parts_mut(d.data_ptr() as *mut f64, n),
                    std::slice::from_raw_parts(s.data_ptr() as *const i32, n),
                )
            };
            for (d, s) in d.iter_mut().zip(black_box(s)) {
                *d = *s as f64;
            }
        }),
        ("f64->f32", &f32_dst, &f64_src, 12, |d, s, n| {
            // SAFETY: n elements of each type in the arrays' buffers.
            let (d, s) = unsafe {
                (
                    std::slice::from_raw_parts_mut(d.data_ptr() as *mut f32, n),
                    std::slice::from_raw_parts(s.data_ptr() as *const f64, n),
                )
            };
            for (d, s) in d.iter_mut().zip(black_box(s)) {
                *d = *s as f32;
            }
        }),
    ];
    if ctx.threads.is_some() {
        let sweep: Vec<_> = cases
            .iter()
            .map(|&(name, dst, src, bytes_per, _)| (name, dst, src, bytes_per))
            .collect();
        assign_sweep(ctx, &sweep);
    }
    for (name, dst, src, bytes_per, plain) in cases {
        let times = time_modes(dst, src, runs, || plain(dst, src, n));
        let (plain_t, plain_min) = times[MODES.len()];
        let plain_m = Measurement::new(
            format!("cast {name} plain Rust loop"),
            n,
            plain_t,
            n * bytes_per,
        );
        ctx.row(&plain_m, "baseline");
        let (nocheck, nocheck_min) = times[0];
        for (&mode, &(t, fastest)) in MODES.iter().zip(&times) {
            let m = Measurement::new(format!("cast {name} {mode}"), n, t, n * bytes_per);
            let note = if mode == ErrorMode::NoCheck {
                format!(
                    "plain/nocheck speed = {:.2} median, {:.2} fastest runs (target >= 0.91)",
                    plain_t.as_secs_f64() / t.as_secs_f64(),
                    plain_min.as_secs_f64() / fastest.as_secs_f64()
                )
            } else {
                format!(
                    "speed vs nocheck = {:.2} median, {:.2} fastest runs (target >= 0.9)",
                    nocheck.as_secs_f64() / t.as_secs_f64(),
                    nocheck_min.as_secs_f64() / fastest.as_secs_f64()
                )
            };
            ctx.row(&m, &note);
        }
    }
}

/// The `--threads` sweep's rows: `dst.assign(src, mode)` for each cast
/// and mode, on each count, named `"assign {cast} {mode}"`.
fn assign_sweep(ctx: &Ctx, cases: &[(&str, &Array, &Array, usize)]) {
    let counts = ctx.counts(&[1]);
    for &(name, dst, src, bytes_per) in cases {
        for mode in [ErrorMode::NoCheck, ErrorMode::Fractional] {
            let name = format!("assign {name} {mode}");
            if let Err(e) = dst.assign(src, mode) {
                ctx.skipped(&name, &e.to_string());
                continue;
            }
            let t = median_times_threads(ctx.runs, &counts, || {
                dst.assign(black_box(src), mode).expect("assign");
            });
            let n = ctx.n();
            ctx.scaling_rows(
                &name,
                &counts,
                &t,
                "Array::assign into preallocated",
                |name, t| Measurement::new(name, n, t, n * bytes_per),
            );
        }
    }
}
