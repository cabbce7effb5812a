//! `out = a * b + c` on n float64: through callables (two kernel calls,
//! multiply into a temporary then add) and through dynd-ops lazy operators
//! (one pass over dynd arrays), on one thread and on two (the callables:
//! on each count of `--threads`).
//!
//! Every row counts the same logical bytes, 32 per element (a, b, c read,
//! out written), so their GB/s compare as times do; the two-call rows
//! really move 56 per element (the temporary is written and read again).

use crate::callables::{f64_array, named};
use crate::harness::{Ctx, Measurement, median_time, median_times_threads, or_skip};
use dynd::{Array, Type};
use dynd_ops::{ArrayView, ArrayViewMut, Executor, LvalueOp, Parallel, Serial, to_array};
use std::hint::black_box;

type View = ArrayView<f64, [usize; 1]>;

const NOTE: &str = "bytes: a, b, c read + out written";

fn check(out: &Array, a: &Array, b: &Array, c: &Array) {
    let n = out.shape()[0].expect("fixed dim");
    for i in (0..n).step_by(n / 97 + 1) {
        let at = |x: &Array| {
            x.index(&[i.into()])
                .and_then(|v| v.as_scalar::<f64>())
                .expect("element")
        };
        assert_eq!(at(out), at(a) * at(b) + at(c), "a*b+c at {i}");
    }
}

fn callables(ctx: &Ctx, abc: (&Array, &Array, &Array)) {
    let (a, b, c) = abc;
    let n = ctx.n();
    let (Some(mul), Some(add)) = (named(ctx, "multiply"), named(ctx, "add")) else {
        return;
    };
    let alloc = || Array::empty(Type::fixed_dim(n, Type::float64()));
    let (Some(tmp), Some(out)) = (
        or_skip(ctx, "fused a*b+c callables", alloc()),
        or_skip(ctx, "fused a*b+c callables", alloc()),
    ) else {
        return;
    };
    let counts = ctx.counts(&[1, 2]);
    let make = |name: String, t| Measurement::new(name, n, t, 32 * n);
    let t = median_times_threads(ctx.runs, &counts, || {
        let ab = mul.call(&[a, b]).expect("multiply");
        black_box(add.call(&[&ab, c]).expect("add"));
    });
    let name = "fused a*b+c callables, new temp + new output";
    ctx.scaling_rows(name, &counts, &t, NOTE, make);
    let t = median_times_threads(ctx.runs, &counts, || {
        mul.call_into(&tmp, &[a, b]).expect("multiply");
        add.call_into(&out, &[&tmp, c]).expect("add");
    });
    check(&out, a, b, c);
    let name = "fused a*b+c callables, preallocated temp + output";
    ctx.scaling_rows(name, &counts, &t, NOTE, make);
}

fn lazy(ctx: &Ctx, abc: (&Array, &Array, &Array)) {
    let (a, b, c) = abc;
    let n = ctx.n();
    let name = "fused a*b+c lazy ops";
    let views = View::new(a).and_then(|va| Ok((va, View::new(b)?, View::new(c)?)));
    let Some((va, vb, vc)) = or_skip(ctx, name, views) else {
        return;
    };
    let Some(out) = or_skip(ctx, name, Array::empty(Type::fixed_dim(n, Type::float64()))) else {
        return;
    };
    let Some(par) = or_skip(ctx, name, Parallel::new(2)) else {
        return;
    };
    let executors: [(&str, &dyn Executor); 2] = [("Serial", &Serial), ("Parallel(2)", &par)];
    for (ex_name, ex) in executors {
        let t = median_time(ctx.runs, || {
            let o = ArrayViewMut::<f64, [usize; 1]>::new(&out).expect("view");
            o.set(va.clone() * vb.clone() + vc.clone())
                .run(ex)
                .expect("run");
        });
        check(&out, a, b, c);
        ctx.row(
            &Measurement::new(
                format!("{name} {ex_name}, preallocated output"),
                n,
                t,
                32 * n,
            ),
            NOTE,
        );
    }
    let t = median_time(ctx.runs, || {
        black_box(to_array(va.clone() * vb.clone() + vc.clone(), &Serial).expect("run"));
    });
    ctx.row(
        &Measurement::new(format!("{name} Serial, new output"), n, t, 32 * n),
        NOTE,
    );
}

pub fn run(ctx: &Ctx) {
    let n = ctx.n();
    let a = f64_array(n, |i| (i % 1000) as f64 * 0.001);
    let b = f64_array(n, |i| (i % 7) as f64 + 0.5);
    let c = f64_array(n, |i| -((i % 13) as f64));
    callables(ctx, (&a, &b, &c));
    lazy(ctx, (&a, &b, &c));
}
