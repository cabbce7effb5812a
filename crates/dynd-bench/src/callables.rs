//! Callables on 10M float64: add, multiply and less into a preallocated
//! output and into a new output, sum, and the per-call overhead of a
//! 10-element add.

use crate::harness::{Measurement, median_time, row};
use dynd::callable::{Callable, lookup};
use dynd::{Array, Type};
use std::hint::black_box;

fn f64_array(n: usize, f: impl Fn(usize) -> f64) -> Array {
    Array::from((0..n).map(f).collect::<Vec<f64>>())
}

fn named(name: &str) -> Option<Callable> {
    match lookup(name) {
        Ok(f) => Some(f),
        Err(e) => {
            println!("{name:<44} skipped: {e}");
            None
        }
    }
}

pub fn run(n: usize, runs: usize, bandwidth: f64) {
    let a = f64_array(n, |i| i as f64 * 0.5);
    let b = f64_array(n, |i| 1.0 + (i % 7) as f64);
    for (name, out_tp, out_size) in [
        ("add", "float64", 8),
        ("multiply", "float64", 8),
        ("less", "bool", 1),
    ] {
        let Some(f) = named(name) else { continue };
        let out =
            Array::empty(Type::fixed_dim(n, Type::parse(out_tp).expect("type"))).expect("alloc");
        let t = median_time(runs, || f.call_into(&out, &[&a, &b]).expect("call"));
        let m = Measurement {
            name: format!("{name} into preallocated"),
            n,
            median: t,
            bytes: n * (16 + out_size),
        };
        row(&m, bandwidth, "");
        let t = median_time(runs, || {
            black_box(f.call(&[&a, &b]).expect("call"));
        });
        let m = Measurement {
            name: format!("{name} into new output"),
            n,
            median: t,
            bytes: n * (16 + out_size),
        };
        row(&m, bandwidth, "");
    }
    if let Some(sum) = named("sum") {
        let t = median_time(runs, || {
            black_box(sum.call(&[&a]).expect("sum"));
        });
        row(
            &Measurement {
                name: "sum".into(),
                n,
                median: t,
                bytes: n * 8,
            },
            bandwidth,
            "",
        );
    }
    if let Some(add) = named("add") {
        let x = f64_array(10, |i| i as f64);
        let reps = 10_000;
        let t = median_time(runs, || {
            for _ in 0..reps {
                black_box(add.call(&[&x, &x]).expect("add"));
            }
        });
        println!(
            "{:<44} {:>10} {:>10.3}  per call: {:.2} µs (resolve, allocate, build, run)",
            "add, 10 elements (per-call overhead)",
            10,
            t.as_secs_f64() * 1e3,
            t.as_secs_f64() * 1e6 / reps as f64
        );
    }
}
