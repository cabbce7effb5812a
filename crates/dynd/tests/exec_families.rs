//! Every family on 1, 2 and 3 threads (DESIGN §13): the same result as a
//! serial run — bit for bit, floating sums and means included, since every
//! split here keeps its blocks whatever the thread count — on sizes that
//! split into odd pieces, with rows longer than a task, empty rows, missing
//! values and NaNs; and a failure in the middle of a split reporting the
//! error a serial run reports.

use crate::segmented::Rng;
use dynd::callable::reduce::{BuiltinReduction, Reduction};
use dynd::exec::with_threads;
use dynd::kernels::assign::ErrorMode;
use dynd::{Array, ErrorKind, Result, compute};
use proptest::prelude::*;

/// Above two tasks of the executor, and not a multiple of a task.
const N: usize = 3 * dynd::exec::TASK_ELEMENTS + 77;

/// `false` under valgrind (`scripts/valgrind-tests.sh` sets
/// `DYND_VALGRIND`): the tests then run a subset of their calls, on sizes
/// that still split, to keep the run to minutes.
fn full() -> bool {
    std::env::var_os("DYND_VALGRIND").is_none()
}

/// A number of a 1/64 grid in [-150, 162.5).
fn float(rng: &mut Rng) -> f64 {
    (rng.next() % 20_000) as f64 / 64.0 - 150.0
}

fn floats(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    (0..n).map(|_| float(&mut rng)).collect()
}

/// `rows` ragged rows as JSON: lengths 0..40 with every 9th row empty and
/// every 1000th row longer than a task; NaNs and (with `opt`) nulls.
fn ragged_json(rows: usize, opt: bool, seed: u64) -> String {
    let mut rng = Rng(seed);
    let mut out = String::with_capacity(rows * 64);
    out.push('[');
    for i in 0..rows {
        if i > 0 {
            out.push(',');
        }
        let len = match i {
            _ if i % 9 == 0 => 0,
            _ if i % 5000 == 1 => dynd::exec::TASK_ELEMENTS + 3,
            _ => (rng.next() % 40) as usize,
        };
        out.push('[');
        for j in 0..len {
            if j > 0 {
                out.push(',');
            }
            match rng.next() % 50 {
                0 => out.push_str("NaN"),
                1 if opt => out.push_str("null"),
                _ => out.push_str(&format!("{}", float(&mut rng))),
            }
        }
        out.push(']');
    }
    out.push(']');
    out
}

/// The built-in reduction `name` over `axes`.
fn reduce(name: &str, x: &Array, axes: Option<&[isize]>) -> Result<Array> {
    let kind = BuiltinReduction::from_name(name).unwrap_or_else(|| panic!("{name}"));
    Reduction::builtin(kind).apply(x, axes, false)
}

/// `f` on 2 and 3 threads gives what it gives on 1: the same type and
/// JSON, or the same error.
fn same_on_every_count(what: &str, f: &dyn Fn() -> Result<Array>) {
    let one = with_threads(1, f);
    for threads in [2, 3] {
        let many = with_threads(threads, f);
        match (&one, &many) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.tp(), b.tp(), "{what}: {threads} threads");
                assert!(
                    a.to_json() == b.to_json(),
                    "{what}: {threads} threads differ"
                );
            }
            (Err(a), Err(b)) => {
                assert_eq!((a.kind(), a.message()), (b.kind(), b.message()), "{what}")
            }
            _ => panic!("{what}: {threads} threads give {many:?}, 1 gives {one:?}"),
        }
    }
}

#[test]
fn flat_families() {
    let x = Array::from(floats(N, 1));
    let y = Array::from(floats(N, 2));
    let ints = Array::from(
        (0..N as i64)
            .map(|i| (i * 7919) % 10007 - 5000)
            .collect::<Vec<_>>(),
    );
    same_on_every_count("add", &|| compute::call("add", &[&x, &y]));
    same_on_every_count("x * 2.5", &|| {
        compute::call("multiply", &[&x, &Array::from(2.5)])
    });
    same_on_every_count("less", &|| compute::call("less", &[&x, &y]));
    let cond = compute::call("less", &[&x, &y]).unwrap();
    same_on_every_count("where", &|| compute::where_(&cond, &x, &y));
    let (f32s, i16s) = (format!("{N} * float32"), format!("{N} * int16"));
    same_on_every_count("cast", &|| x.cast(f32s.as_str(), ErrorMode::Default));
    same_on_every_count("cast nocheck", &|| {
        x.cast(i16s.as_str(), ErrorMode::NoCheck)
    });
    for name in [
        "sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax", "count", "any",
        "all",
    ] {
        let arg = if matches!(name, "any" | "all") {
            &cond
        } else {
            &x
        };
        same_on_every_count(name, &|| compute::call(name, &[arg]));
    }
    same_on_every_count("sort", &|| compute::sort(&x));
    same_on_every_count("argsort", &|| compute::argsort(&ints));
    // A long row with NaNs and missing values (which go last, in order),
    // ascending and descending.
    let mut rng = Rng(3);
    let opt_items: Vec<String> = (0..N)
        .map(|_| match rng.next() % 40 {
            0 => "NaN".to_string(),
            1 => "null".to_string(),
            _ => format!("{}", float(&mut rng)),
        })
        .collect();
    let opt_json = format!("[{}]", opt_items.join(","));
    let opt = Array::from_json(format!("{N} * ?float64").as_str(), &opt_json).unwrap();
    same_on_every_count("argsort with NaN and NA", &|| compute::argsort(&opt));
    same_on_every_count("argsort descending", &|| {
        compute::argsort_by(&opt, compute::SortOptions { descending: true })
    });
    same_on_every_count("cumsum", &|| compute::cumsum(&ints));
    same_on_every_count("filter", &|| compute::filter(&x, &cond));
    let idx = compute::argsort(&ints).unwrap();
    same_on_every_count("take", &|| compute::take(&x, &idx));
    same_on_every_count("concatenate", &|| compute::concatenate(&[&x, &y, &x]));
}

#[test]
fn ragged_families() {
    let rows = if full() { 20_000 } else { 9_000 };
    let x = Array::from_json(
        format!("{rows} * var * ?float64").as_str(),
        &ragged_json(rows, true, 3),
    )
    .unwrap();
    let y = Array::from_json(
        format!("{rows} * var * float64").as_str(),
        &ragged_json(rows, false, 3),
    )
    .unwrap();
    same_on_every_count("x + 1.0", &|| {
        compute::call("add", &[&y, &Array::from(1.0)])
    });
    same_on_every_count("?x + 1.0", &|| {
        compute::call("add", &[&x, &Array::from(1.0)])
    });
    same_on_every_count("x + x", &|| compute::call("add", &[&y, &y]));
    for name in [
        "sum", "max", "mean", "var", "std", "argmin", "argmax", "count",
    ] {
        for axes in [Some(&[-1isize][..]), Some(&[0][..]), None] {
            let what = format!("{name} over {axes:?}");
            same_on_every_count(&what, &|| reduce(name, &x, axes));
            same_on_every_count(&what, &|| reduce(name, &y, axes));
        }
    }
    same_on_every_count("sort rows", &|| compute::sort(&x));
    same_on_every_count("argsort rows", &|| compute::argsort(&y));
    same_on_every_count("cumsum rows", &|| compute::cumsum(&x));
    let mask = compute::call("greater", &[&y, &Array::from(12.0)]).unwrap();
    same_on_every_count("x[x > 12]", &|| compute::filter(&y, &mask));
    same_on_every_count("drop_null", &|| compute::drop_null(&x));
    let idx = compute::argsort(&y).unwrap();
    same_on_every_count("take rows", &|| compute::take(&y, &idx));
    same_on_every_count("concatenate rows", &|| compute::concatenate(&[&y, &y]));
}

#[test]
fn json_and_arrow() {
    let rows = 30_000;
    let lines: Vec<String> = (0..rows)
        .map(|i| {
            format!(
                r#"{{"x": {}, "s": "r{}", "v": [{}]}}"#,
                i as f64 * 0.5,
                i % 97,
                "1,".repeat(i % 5) + "2"
            )
        })
        .collect();
    let text = lines.join("\n");
    let tp = "var * {x: float64, s: string, v: var * int64}";
    same_on_every_count("JSON Lines", &|| Array::from_json_lines(tp, &text));
    let whole = format!("[{}]", lines.join(","));
    same_on_every_count("JSON", &|| Array::from_json(tp, &whole));
}

#[test]
fn a_failure_mid_split_is_the_serial_error() {
    let mut v = floats(N, 5);
    v[N / 2 + 13] = f64::NAN;
    v[N - 3] = f64::INFINITY;
    let x = Array::from(v);
    let int32 = format!("{N} * int32");
    same_on_every_count("cast overflow", &|| {
        x.cast(int32.as_str(), ErrorMode::Overflow)
    });
    let e = with_threads(3, || x.cast(int32.as_str(), ErrorMode::Overflow)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow);
    // take with a bad index in the middle of a long row.
    let mut idx: Vec<i64> = (0..N as i64).rev().collect();
    idx[N / 3] = N as i64 + 5;
    let idx = Array::from(idx);
    same_on_every_count("take out of range", &|| compute::take(&x, &idx));
    let e = with_threads(2, || compute::take(&x, &idx)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if full() { 12 } else { 2 }, ..ProptestConfig::default() })]

    /// Any size (around the split thresholds) and thread count gives the
    /// serial result, bit for bit.
    #[test]
    fn every_executor_gives_the_serial_result(
        n in prop_oneof![0usize..100, 131_000usize..135_000, 260_000usize..270_000],
        threads in 2usize..5,
        seed in any::<u64>(),
    ) {
        let x = Array::from(floats(n, seed | 1));
        let ints = Array::from((0..n as i64).map(|i| (i ^ seed as i64) % 1000).collect::<Vec<_>>());
        let run = |t: usize| with_threads(t, || -> Result<Vec<String>> {
            Ok(vec![
                compute::call("multiply", &[&x, &x])?.to_json(),
                compute::call("sum", &[&x])?.to_json(),
                compute::call("var", &[&x])?.to_json(),
                compute::call("argmax", &[&ints])?.to_json(),
                compute::sort(&x)?.to_json(),
                compute::argsort(&ints)?.to_json(),
                x.cast(format!("{n} * float32").as_str(), ErrorMode::NoCheck)?.to_json(),
            ])
        });
        let serial = run(1);
        let split = run(threads);
        prop_assert_eq!(serial.map_err(|e| e.to_string()), split.map_err(|e| e.to_string()));
    }
}
