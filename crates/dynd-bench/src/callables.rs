//! Elementwise callables on n float64 (10M; 2M with `--quick`): add,
//! multiply and less into a preallocated output and into a new output, on
//! one thread; add again on two threads (all three on each count of
//! `--threads`);
//! and add with missing values (`?float64 + float64`, every tenth element
//! missing), whose target is 0.9× the plain add or better.

use crate::harness::{Ctx, Measurement, median_times_interleaved, median_times_threads, or_skip};
use dynd::callable::{Callable, lookup};
use dynd::{Array, Type};
use std::hint::black_box;

/// A 1-d float64 array of `f(i)`, in dynd's own data block (huge pages
/// for large arrays, as NumPy's), not over the vector
/// (`Array::from(Vec)` would keep the vector's 4 KiB pages).
pub fn f64_array(n: usize, f: impl Fn(usize) -> f64) -> Array {
    let v: Vec<f64> = (0..n).map(f).collect();
    Array::from(v.as_slice())
}

/// A 1-d `?float64` array of `i * 0.5` with every tenth element missing.
fn optional_f64(n: usize) -> dynd::Result<Array> {
    let a = Array::empty(Type::fixed_dim(n, Type::parse("?float64")?))?;
    let na = <f64 as dynd::types::NativeType>::NA;
    // SAFETY: a new C-contiguous `n * ?float64` array: n aligned f64 slots
    // (an option of float64 is laid out as a float64), nothing else sees it.
    let data = unsafe { std::slice::from_raw_parts_mut(a.data_ptr().cast::<f64>(), n) };
    for (i, x) in data.iter_mut().enumerate() {
        *x = if i % 10 == 9 { na } else { i as f64 * 0.5 };
    }
    Ok(a)
}

/// The registered callable `name`, or a skipped row.
pub fn named(ctx: &Ctx, name: &str) -> Option<Callable> {
    or_skip(ctx, name, lookup(name))
}

/// Times `f(a, b)` into a preallocated `out_tp` output and into a new
/// output on each of `counts` threads, reporting rows `"{label} into
/// preallocated"` and `"{label} into new output"` (with their thread
/// suffixes, [`crate::harness::thread_suffix`]).
fn time_binary(
    ctx: &Ctx,
    f: &Callable,
    label: &str,
    counts: &[usize],
    (a, b): (&Array, &Array),
    (out_tp, out_size): (&str, usize),
) {
    let n = ctx.n();
    let bytes = n * (16 + out_size);
    let name = format!("{label} into preallocated");
    let Some(out_tp) = or_skip(ctx, &name, Type::parse(out_tp)) else {
        return;
    };
    let Some(out) = or_skip(ctx, &name, Array::empty(Type::fixed_dim(n, out_tp))) else {
        return;
    };
    if let Some(e) = f.call_into(&out, &[a, b]).err() {
        ctx.skipped(&name, &e.to_string());
        return;
    }
    let make = |name: String, t| Measurement::new(name, n, t, bytes);
    let t = median_times_threads(ctx.runs, counts, || {
        f.call_into(&out, &[a, b]).expect("call");
    });
    ctx.scaling_rows(&name, counts, &t, "", make);
    let t = median_times_threads(ctx.runs, counts, || {
        black_box(f.call(&[a, b]).expect("call"));
    });
    ctx.scaling_rows(&format!("{label} into new output"), counts, &t, "", make);
}

/// The option add's two rows (into a preallocated output, into a new
/// one), each timed interleaved with the plain `float64 + float64` add
/// of the same kind, with their ratio (the target: 0.9 or more) as the
/// note.
fn time_option_add(ctx: &Ctx, f: &Callable, label: &str, (a, opt, b): (&Array, &Array, &Array)) {
    let n = ctx.n();
    let bytes = n * 24;
    let name = format!("{label} into preallocated");
    let out_tp = |tp: &str| Type::parse(tp).and_then(|t| Array::empty(Type::fixed_dim(n, t)));
    let (Some(out), Some(opt_out)) = (
        or_skip(ctx, &name, out_tp("float64")),
        or_skip(ctx, &name, out_tp("?float64")),
    ) else {
        return;
    };
    if let Some(e) = f.call_into(&opt_out, &[opt, b]).err() {
        ctx.skipped(&name, &e.to_string());
        return;
    }
    let note = |plain: std::time::Duration, option: std::time::Duration| {
        format!(
            "{:.2}x the plain add timed in the same rounds ({:.3} ms)",
            plain.as_secs_f64() / option.as_secs_f64(),
            plain.as_secs_f64() * 1e3
        )
    };
    let t = median_times_interleaved(
        ctx.runs,
        &mut [
            &mut || f.call_into(&out, &[a, b]).expect("call"),
            &mut || f.call_into(&opt_out, &[opt, b]).expect("call"),
        ],
    );
    ctx.row(&Measurement::new(name, n, t[1], bytes), &note(t[0], t[1]));
    let t = median_times_interleaved(
        ctx.runs,
        &mut [
            &mut || {
                black_box(f.call(&[a, b]).expect("call"));
            },
            &mut || {
                black_box(f.call(&[opt, b]).expect("call"));
            },
        ],
    );
    let name = format!("{label} into new output");
    ctx.row(&Measurement::new(name, n, t[1], bytes), &note(t[0], t[1]));
}

pub fn run(ctx: &Ctx) {
    let n = ctx.n();
    let a = f64_array(n, |i| i as f64 * 0.5);
    let b = f64_array(n, |i| 1.0 + (i % 7) as f64);
    // add on one thread and two, multiply and less on one (each on every
    // count of --threads).
    for (name, out_tp, out_size, counts) in [
        ("add", "float64", 8, ctx.counts(&[1, 2])),
        ("multiply", "float64", 8, ctx.counts(&[1])),
        ("less", "bool", 1, ctx.counts(&[1])),
    ] {
        let Some(f) = named(ctx, name) else { continue };
        time_binary(ctx, &f, name, &counts, (&a, &b), (out_tp, out_size));
    }
    if let Some(f) = named(ctx, "add") {
        let name = "add ?float64 + float64 (10% missing)";
        if let Some(opt) = or_skip(ctx, name, optional_f64(n)) {
            time_option_add(ctx, &f, name, (&a, &opt, &b));
        }
    }
}
