//! Ragged runs as segmented loops: `sum`/`prod`/`any` over the var dim of
//! `N * var * T` (one pass over the rows, `kernels::loops::Rows`) and
//! ragged elementwise calls (runs of rows cut by `kernels::loops::RowCutter`)
//! agree bit for bit with the general path — each row reduced or computed
//! on its own — on random ragged data with empty rows, rows shorter than
//! the fold's 8 lanes, rows longer than a fold block, and views whose rows
//! are out of order or apart (reversed, step 2, step -3).

use dynd::compute as reduce;
use dynd::kernels::loops::stream_min_bytes;
use dynd::{Array, Index};

/// A small deterministic generator (xorshift), so failures reproduce
/// (`exec_families` draws from it too).
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Values of mixed magnitudes and signs, so a change of summation
    /// order shows in the last bits.
    fn value(&mut self) -> f64 {
        let m = (self.below(1 << 20) as f64) / 1024.0;
        let e = [1e-3, 1.0, 1e3, 1e7][self.below(4) as usize];
        if self.below(2) == 0 { m * e } else { -m * e }
    }
}

/// `rows` random rows as `rows * var * float64`: lengths 0–20 (a third
/// of them empty or shorter than 8), plus one long row when `long`.
fn ragged(rng: &mut Rng, rows: usize, long: bool) -> Array {
    let text: Vec<String> = (0..rows)
        .map(|i| {
            let n = if long && i == rows / 2 {
                40_000
            } else {
                match rng.below(3) {
                    0 => rng.below(8) as usize,
                    _ => rng.below(21) as usize,
                }
            };
            let xs: Vec<String> = (0..n).map(|_| format!("{:?}", rng.value())).collect();
            format!("[{}]", xs.join(","))
        })
        .collect();
    from_rows("float64", &text)
}

/// `rows` (each a JSON list) as `N * var * elem`.
fn from_rows(elem: &str, rows: &[String]) -> Array {
    let tp = format!("{} * var * {elem}", rows.len());
    Array::from_json(tp.as_str(), &format!("[{}]", rows.join(","))).unwrap()
}

/// The views whose rows the segmented loops must handle.
fn views(x: &Array) -> Vec<(&'static str, Array)> {
    vec![
        ("packed", x.clone()),
        (
            "reversed",
            x.index(&[Index::slice(None, None, -1)]).unwrap(),
        ),
        (
            "step 2",
            x.index(&[Index::slice(Some(1), None, 2)]).unwrap(),
        ),
        ("step -3", x.index(&[Index::slice(None, None, -3)]).unwrap()),
    ]
}

fn rows_of(x: &Array) -> usize {
    x.shape()[0].expect("a fixed outer dim")
}

#[test]
fn segmented_sums_equal_row_by_row_sums_bit_for_bit() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (rows, long) in [(1, false), (7, false), (300, false), (64, true)] {
        let x = ragged(&mut rng, rows, long);
        for (what, v) in views(&x) {
            let n = rows_of(&v);
            let got = reduce::sum(&v, Some(&[1]), false).unwrap();
            let kept = reduce::sum(&v, Some(&[1]), true).unwrap();
            for i in 0..n {
                let row = v.index(&[i.into()]).unwrap();
                // The general path: one row, reduced on its own.
                let want = reduce::sum(&row, None, false)
                    .unwrap()
                    .as_scalar::<f64>()
                    .unwrap();
                for (r, idx) in [
                    (&got, vec![Index::from(i)]),
                    (&kept, vec![Index::from(i), Index::from(0usize)]),
                ] {
                    let g = r.index(&idx).unwrap().as_scalar::<f64>().unwrap();
                    assert_eq!(
                        g.to_bits(),
                        want.to_bits(),
                        "{what}, {rows} rows, row {i}: {g} vs {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn other_folds_and_types_agree_with_the_general_path() {
    let mut rng = Rng(12345);
    let x = ragged(&mut rng, 200, false);
    for (what, v) in views(&x) {
        let n = rows_of(&v);
        for name in ["prod", "any", "all", "max", "min", "mean"] {
            let f = |a: &Array, axes: Option<&[isize]>| -> dynd::Result<Array> {
                match name {
                    "prod" => reduce::prod(a, axes, false),
                    "any" => reduce::any(a, axes, false),
                    "all" => reduce::all(a, axes, false),
                    "max" => reduce::max(a, axes, false),
                    "min" => reduce::min(a, axes, false),
                    _ => reduce::mean(a, axes, false),
                }
            };
            let rows: Vec<dynd::Result<String>> = (0..n)
                .map(|i| f(&v.index(&[i.into()]).unwrap(), None).map(|r| r.to_json()))
                .collect();
            match f(&v, Some(&[1])) {
                // An op without identity over an empty row fails as a
                // whole, as that row alone does.
                Err(e) => assert!(rows.iter().any(|r| r.is_err()), "{name} {what}: {e}"),
                Ok(got) => {
                    for (i, want) in rows.into_iter().enumerate() {
                        let g = got.index(&[i.into()]).unwrap().to_json();
                        match want {
                            Ok(w) => assert_eq!(g, w, "{name} {what} row {i}"),
                            Err(_) => assert_eq!(g, "null", "{name} {what} row {i}"),
                        }
                    }
                }
            }
        }
    }
    // Integer rows (int32 sums to int64) and a source with an offset.
    let ints = Array::from_json(
        "5 * var * int32",
        "[[1,2,3,4,5,6,7,8,9,10],[],[2147483647,1],[-5],[3,3,3]]",
    )
    .unwrap();
    for (what, v) in views(&ints) {
        let got = reduce::sum(&v, Some(&[1]), false).unwrap();
        for i in 0..rows_of(&v) {
            let row = v.index(&[i.into()]).unwrap();
            let want = reduce::sum(&row, None, false).unwrap().to_json();
            assert_eq!(
                got.index(&[i.into()]).unwrap().to_json(),
                want,
                "{what} row {i}"
            );
        }
    }
}

#[test]
fn ragged_elementwise_runs_equal_row_by_row_results() {
    let mut rng = Rng(777);
    let x = ragged(&mut rng, 150, false);
    let one = Array::from(1.5f64);
    for (what, v) in views(&x) {
        let got = reduce::add(&v, &one).unwrap();
        let twice = reduce::add(&v, &v).unwrap();
        for i in 0..rows_of(&v) {
            let row = v.index(&[i.into()]).unwrap();
            assert_eq!(
                got.index(&[i.into()]).unwrap().to_json(),
                reduce::add(&row, &one).unwrap().to_json(),
                "{what} row {i}"
            );
            assert_eq!(
                twice.index(&[i.into()]).unwrap().to_json(),
                reduce::add(&row, &row).unwrap().to_json(),
                "{what} row {i}"
            );
        }
    }
}

#[test]
fn a_large_ragged_sum_splits_across_threads_with_the_serial_bits() {
    // Enough rows for the reduction to split its outer dim into tasks.
    let rows = 200_000;
    let mut rng = Rng(4242);
    let x = ragged(&mut rng, rows, false);
    let pool = |n| dynd::exec::Executor::Threads(n);
    let run = |n: usize, v: &Array| pool(n).install(|| reduce::sum(v, Some(&[1]), false).unwrap());
    for (what, v) in views(&x) {
        let serial = run(1, &v);
        let parallel = run(2, &v);
        let bits = |a: &Array| -> Vec<u64> {
            (0..rows_of(a))
                .map(|i| {
                    a.index(&[i.into()])
                        .unwrap()
                        .as_scalar::<f64>()
                        .unwrap()
                        .to_bits()
                })
                .collect()
        };
        let serial = bits(&serial);
        assert_eq!(serial, bits(&parallel), "{what}");
        // And row by row, for a sample of rows.
        for i in (0..rows_of(&v)).step_by(997) {
            let row = v.index(&[i.into()]).unwrap();
            let want = reduce::sum(&row, None, false)
                .unwrap()
                .as_scalar::<f64>()
                .unwrap();
            assert_eq!(serial[i], want.to_bits(), "{what} row {i}");
        }
    }
}

#[test]
fn folds_over_a_large_output_stream_it_with_the_same_bits() {
    // Rows for an 8-byte output past `kernels::loops::stream_min_bytes()`
    // (540,000 by default, 4.3 MB): on one thread the fold writes it with
    // streaming stores; on two the reduction splits into tasks of 64K rows
    // whose outputs are written as usual. Both must give the same bits,
    // for empty rows, rows of missing values only, and each kind of fold
    // (a sum, a max with its NaN check, a mean that divides afterwards),
    // and sampled rows those of the row's own reduction. Rows are short
    // (0–2 values); under valgrind the threshold is set low
    // (scripts/valgrind-tests.sh), and so is the count.
    let rows = stream_min_bytes().div_ceil(8) * 27 / 26;
    let step = (rows / 12).max(1);
    let mut rng = Rng(777);
    let pool = |n| dynd::exec::Executor::Threads(n);
    for (elem, opt) in [("float64", false), ("?float64", true)] {
        let text: Vec<String> = (0..rows)
            .map(|i| {
                let xs: Vec<String> = (0..i % 3)
                    .map(|_| match rng.below(3) {
                        0 if opt => "null".to_string(),
                        _ => format!("{:?}", (rng.below(2000) as f64 - 1000.0) / 8.0),
                    })
                    .collect();
                format!("[{}]", xs.join(","))
            })
            .collect();
        let x = from_rows(elem, &text);
        type Fold = fn(&Array, Option<&[isize]>, bool) -> dynd::Result<Array>;
        let folds: [(&str, Fold); 3] = [
            ("sum", reduce::sum),
            ("max", reduce::max),
            ("mean", reduce::mean),
        ];
        for (name, f) in folds {
            let serial = pool(1).install(|| f(&x, Some(&[1]), false));
            let parallel = pool(2).install(|| f(&x, Some(&[1]), false));
            let (serial, parallel) = match (serial, parallel) {
                (Ok(s), Ok(p)) => (s, p),
                // max of plain float64 refuses the empty rows, on either
                // path with the same message.
                (Err(a), Err(b)) => {
                    assert!(!opt && name == "max", "{name} over {elem}: {a}");
                    assert_eq!(a.to_string(), b.to_string(), "{name} over {elem}");
                    continue;
                }
                (s, p) => panic!("{name} over {elem}: {s:?} vs {p:?}"),
            };
            assert_eq!(serial.to_json(), parallel.to_json(), "{name} over {elem}");
            for i in (0..rows).step_by(step).chain([1, 2, rows - 1]) {
                let r = x.index(&[i.into()]).unwrap();
                let want = f(&r, None, false).unwrap().to_json();
                let got = serial.index(&[i.into()]).unwrap().to_json();
                assert_eq!(got, want, "{name} over {elem}, row {i}");
            }
        }
    }
}

#[test]
fn a_large_ragged_call_streams_its_new_values_with_the_same_bits() {
    // Rows of 0–3 values (400,000 by default: about 600K float64, 4.8 MB):
    // the new output's values pass `kernels::loops::stream_min_bytes()`,
    // so the runs of packed rows are computed in pieces and copied out past
    // the cache; a reversed view's rows are runs of their own, written as
    // usual. Every value must be the plain `x + 1.5` (and `NA` where `x`
    // is), on one thread and on two: the whole output against the
    // expected text.
    let rows = stream_min_bytes().div_ceil(8) * 4 / 5;
    let mut rng = Rng(31337);
    let (mut text, mut want) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
    for i in 0..rows {
        let row: Vec<Option<f64>> = (0..i % 4)
            .map(|_| (rng.below(9) != 0).then(|| rng.value()))
            .collect();
        let json = |f: &dyn Fn(f64) -> f64| -> String {
            let vs: Vec<String> = row
                .iter()
                .map(|v| v.map_or("null".to_string(), |v| format!("{:?}", f(v))))
                .collect();
            format!("[{}]", vs.join(","))
        };
        text.push(json(&|v| v));
        want.push(json(&|v| v + 1.5));
    }
    let x = from_rows("?float64", &text);
    let want = from_rows("?float64", &want).to_json();
    let reversed = x.index(&[Index::slice(None, None, -1)]).unwrap();
    let one_and_half = Array::from_json("float64", "1.5").unwrap();
    for threads in [1, 2] {
        let pool = dynd::exec::Executor::Threads(threads);
        let got = pool.install(|| reduce::add(&x, &one_and_half)).unwrap();
        assert!(got.to_json() == want, "packed, {threads} threads");
        // The reversed view, reversed back, is the packed result.
        let back = pool
            .install(|| reduce::add(&reversed, &one_and_half))
            .unwrap()
            .index(&[Index::slice(None, None, -1)])
            .unwrap();
        assert!(back.to_json() == want, "reversed, {threads} threads");
    }
}

/// Rows of every length from 0 to past the fold's short-row code (which
/// folds rows of 1 to 23 packed elements with code for their exact
/// length) agree with each row reduced on its own, for every built-in
/// fold family and several element types, with NaNs and a missing value.
#[test]
fn rows_of_every_short_length_fold_as_their_own_row() {
    let mut rng = Rng(0x5eed);
    for elem in ["float64", "float32", "int64", "int32", "int8", "uint16"] {
        let float = elem.starts_with("float");
        let rows: Vec<String> = (0..=34usize)
            .map(|n| {
                let xs: Vec<String> = (0..n)
                    .map(|j| {
                        if float && n % 5 == 1 && j == n / 2 {
                            "NaN".to_string()
                        } else if float {
                            format!("{:?}", rng.value() as f32 as f64)
                        } else {
                            let signed = !elem.starts_with('u');
                            (rng.below(100) as i64 - if signed { 50 } else { 0 }).to_string()
                        }
                    })
                    .collect();
                format!("[{}]", xs.join(","))
            })
            .collect();
        let x = from_rows(elem, &rows);
        for name in ["sum", "prod", "max", "min", "mean", "any", "all"] {
            let f = |a: &Array, axes: Option<&[isize]>| -> dynd::Result<Array> {
                match name {
                    "sum" => reduce::sum(a, axes, false),
                    "prod" => reduce::prod(a, axes, false),
                    "max" => reduce::max(a, axes, false),
                    "min" => reduce::min(a, axes, false),
                    "mean" => reduce::mean(a, axes, false),
                    "any" => reduce::any(a, axes, false),
                    _ => reduce::all(a, axes, false),
                }
            };
            for (what, v) in views(&x) {
                // max and min have no identity: without the empty row.
                let v = if matches!(name, "max" | "min") {
                    let n = rows_of(&v);
                    let keep: Vec<String> = (0..n)
                        .map(|i| v.index(&[i.into()]).unwrap().to_json())
                        .filter(|r| r != "[]")
                        .collect();
                    from_rows(elem, &keep)
                } else {
                    v
                };
                let got = f(&v, Some(&[1])).unwrap();
                for i in 0..rows_of(&v) {
                    let row = v.index(&[i.into()]).unwrap();
                    let want = f(&row, None).unwrap().to_json();
                    let g = got.index(&[i.into()]).unwrap().to_json();
                    assert_eq!(g, want, "{name} over {elem}, {what}, row {i}: {row:?}");
                }
            }
        }
    }
    // Optional elements: the folds that skip missing values.
    let x = from_rows(
        "?float64",
        &(0..=30usize)
            .map(|n| {
                let xs: Vec<String> = (0..n)
                    .map(|j| {
                        if j % 4 == 3 {
                            "null".into()
                        } else {
                            format!("{:?}", rng.value())
                        }
                    })
                    .collect();
                format!("[{}]", xs.join(","))
            })
            .collect::<Vec<_>>(),
    );
    let got = reduce::sum(&x, Some(&[1]), false).unwrap();
    for i in 0..rows_of(&x) {
        let want = reduce::sum(&x.index(&[i.into()]).unwrap(), None, false).unwrap();
        assert_eq!(
            got.index(&[i.into()]).unwrap().to_json(),
            want.to_json(),
            "?float64 row {i}"
        );
    }
}
