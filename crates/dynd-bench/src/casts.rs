//! Casts through the assignment kernels: f64→i32, i32→f64 and f64→f32 in
//! each error mode, against nocheck and against a plain Rust loop.

use crate::harness::{Ctx, Measurement, median_time};
use dynd::kernels::assign::{ErrorMode, make_assignment_kernel};
use dynd::kernels::{CKernelBuilder, KernelRequest};
use dynd::{Array, Type};
use std::hint::black_box;
use std::pin::pin;

/// Times the kernel `dst ← src` over whole arrays (built once).
fn time_kernel(dst: &Array, src: &Array, mode: ErrorMode, runs: usize) -> std::time::Duration {
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: a new builder; the arrays' own types and arrmeta.
    unsafe {
        make_assignment_kernel(
            ckb.as_mut(),
            0,
            dst.tp(),
            dst.arrmeta_ptr(),
            src.tp(),
            src.arrmeta_ptr(),
            KernelRequest::Single,
            mode,
        )
    }
    .expect("build the cast kernel");
    median_time(runs, || {
        // SAFETY: built for Single on these arrays.
        unsafe { ckb.call_single(dst.data_ptr(), &[src.data_ptr()]) }.expect("cast");
    })
}

/// Fills a `n * T` array from `f(i)`.
fn filled<T: dynd::array::Scalar>(n: usize, f: impl Fn(usize) -> T) -> Array {
    let v: Vec<T> = (0..n).map(f).collect();
    Array::from(v)
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
            // SAFETY: as above.
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
            // SAFETY: as above.
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
    for (name, dst, src, bytes_per, plain) in cases {
        let plain_t = median_time(runs, || plain(dst, src, n));
        let plain_m = Measurement::new(
            format!("cast {name} plain Rust loop"),
            n,
            plain_t,
            n * bytes_per,
        );
        ctx.row(&plain_m, "baseline");
        let nocheck = time_kernel(dst, src, ErrorMode::NoCheck, runs);
        for mode in [
            ErrorMode::NoCheck,
            ErrorMode::Overflow,
            ErrorMode::Fractional,
            ErrorMode::Inexact,
        ] {
            let t = if mode == ErrorMode::NoCheck {
                nocheck
            } else {
                time_kernel(dst, src, mode, runs)
            };
            let m = Measurement::new(format!("cast {name} {mode}"), n, t, n * bytes_per);
            let note = if mode == ErrorMode::NoCheck {
                format!(
                    "plain/nocheck speed = {:.2} (target >= 0.91)",
                    plain_t.as_secs_f64() / t.as_secs_f64()
                )
            } else {
                format!(
                    "speed vs nocheck = {:.2} (target >= 0.9)",
                    nocheck.as_secs_f64() / t.as_secs_f64()
                )
            };
            ctx.row(&m, &note);
        }
    }
}
