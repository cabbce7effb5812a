//! Property tests of `sort`, `argsort`, `cumsum` and `concatenate` over
//! random ragged data, against plain loops: `?float64` rows with NaNs,
//! missing values, repeated values and signed zeros (short rows take the
//! insertion sort, long ones the radix sort), `int32` rows, and strings.

use dynd::Array;
use dynd::compute::{self, SortOptions};
use proptest::prelude::*;

/// A `?float64` value: `None` missing.
fn arb_value() -> impl Strategy<Value = Option<f64>> + Clone {
    prop_oneof![
        1 => Just(None),
        1 => Just(Some(f64::NAN)),
        1 => Just(Some(-0.0)),
        1 => Just(Some(0.0)),
        6 => (-20i32..20).prop_map(|i| Some(f64::from(i) * 0.5)),
        1 => any::<f64>().prop_map(Some),
    ]
}

/// Rows of up to `max` values each.
fn arb_rows<T: std::fmt::Debug + Clone>(
    v: impl Strategy<Value = T>,
    max: usize,
) -> impl Strategy<Value = Vec<Vec<T>>> {
    prop::collection::vec(prop::collection::vec(v, 0..max), 0..8)
}

fn json_f64(v: Option<f64>) -> String {
    match v {
        None => "null".into(),
        Some(x) if x.is_nan() => "NaN".into(),
        Some(x) if x.is_infinite() => if x > 0.0 { "Infinity" } else { "-Infinity" }.into(),
        Some(x) => format!("{x:?}"),
    }
}

fn json_rows<T>(rows: &[Vec<T>], f: impl Fn(&T) -> String) -> String {
    let rows: Vec<String> = rows
        .iter()
        .map(|r| format!("[{}]", r.iter().map(&f).collect::<Vec<_>>().join(",")))
        .collect();
    format!("[{}]", rows.join(","))
}

/// The plain-loop order of `?float64`: numbers by total order (ascending
/// or descending), then NaNs, then missing; the rank of a value's class.
fn class(v: &Option<f64>) -> u8 {
    match v {
        None => 2,
        Some(x) if x.is_nan() => 1,
        Some(_) => 0,
    }
}

/// Plain-loop stable argsort of one row (the standard library's stable
/// sort on the order written out).
fn plain_argsort(row: &[Option<f64>], desc: bool) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..row.len()).collect();
    idx.sort_by(|&i, &j| {
        let (a, b) = (&row[i], &row[j]);
        match (class(a), class(b)) {
            (0, 0) if desc => b.unwrap().total_cmp(&a.unwrap()),
            (0, 0) => a.unwrap().total_cmp(&b.unwrap()),
            (ca, cb) => ca.cmp(&cb),
        }
    });
    idx
}

fn check_float_rows(rows: &[Vec<Option<f64>>]) -> Result<(), TestCaseError> {
    let x = Array::from_json(
        format!("{} * var * ?float64", rows.len()).as_str(),
        &json_rows(rows, |v| json_f64(*v)),
    )
    .unwrap();
    for desc in [false, true] {
        let o = SortOptions { descending: desc };
        let args: Vec<Vec<usize>> = rows.iter().map(|r| plain_argsort(r, desc)).collect();
        let want_arg = json_rows(&args, |i| i.to_string());
        let got_arg = compute::argsort_by(&x, o).unwrap().to_json();
        prop_assert_eq!(got_arg, want_arg, "argsort desc={}", desc);
        let sorted: Vec<Vec<Option<f64>>> = rows
            .iter()
            .zip(&args)
            .map(|(r, a)| a.iter().map(|&i| r[i]).collect())
            .collect();
        let got = compute::sort_by(&x, o).unwrap().to_json();
        prop_assert_eq!(
            got,
            json_rows(&sorted, |v| json_f64(*v)),
            "sort desc={}",
            desc
        );
    }
    // cumsum skips missing values.
    let sums: Vec<Vec<Option<f64>>> = rows
        .iter()
        .map(|r| {
            let mut acc = 0.0;
            r.iter()
                .map(|v| {
                    v.map(|x| {
                        acc += x;
                        acc
                    })
                })
                .collect()
        })
        .collect();
    prop_assert_eq!(
        compute::cumsum(&x).unwrap().to_json(),
        json_rows(&sums, |v| json_f64(*v))
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn float_rows_match_plain_loops(rows in arb_rows(arb_value(), 40)) {
        check_float_rows(&rows)?;
    }

    #[test]
    fn long_float_rows_match_plain_loops(rows in prop::collection::vec(prop::collection::vec(arb_value(), 500..900), 1..3)) {
        check_float_rows(&rows)?;
    }

    #[test]
    fn int_rows_sort_stably(rows in arb_rows(-5i32..5, 700)) {
        let x = Array::from_json(
            format!("{} * var * int32", rows.len()).as_str(),
            &json_rows(&rows, |v| v.to_string()),
        ).unwrap();
        let args: Vec<Vec<usize>> = rows.iter().map(|r| {
            let mut idx: Vec<usize> = (0..r.len()).collect();
            idx.sort_by_key(|&i| r[i]);
            idx
        }).collect();
        prop_assert_eq!(compute::argsort(&x).unwrap().to_json(), json_rows(&args, |i| i.to_string()));
        let sorted: Vec<Vec<i32>> = rows.iter().map(|r| { let mut r = r.clone(); r.sort(); r }).collect();
        prop_assert_eq!(compute::sort(&x).unwrap().to_json(), json_rows(&sorted, |v| v.to_string()));
        let sums: Vec<Vec<i64>> = rows.iter().map(|r| {
            let mut acc = 0i64;
            r.iter().map(|&v| { acc += i64::from(v); acc }).collect()
        }).collect();
        prop_assert_eq!(compute::cumsum(&x).unwrap().to_json(), json_rows(&sums, |v| v.to_string()));
    }

    #[test]
    fn string_rows_sort_by_bytes(rows in arb_rows("[a-c\u{e9}]{0,3}", 12)) {
        let q = |s: &String| format!("\"{s}\"");
        let x = Array::from_json(
            format!("{} * var * string", rows.len()).as_str(),
            &json_rows(&rows, q),
        ).unwrap();
        let sorted: Vec<Vec<String>> = rows.iter().map(|r| { let mut r = r.clone(); r.sort(); r }).collect();
        prop_assert_eq!(compute::sort(&x).unwrap().to_json(), json_rows(&sorted, q));
    }

    #[test]
    fn concatenate_joins_rows(a in arb_rows(-5i32..5, 5), b in arb_rows(-5i32..5, 5)) {
        let arr = |rows: &Vec<Vec<i32>>| Array::from_json(
            format!("{} * var * int32", rows.len()).as_str(),
            &json_rows(rows, |v| v.to_string()),
        ).unwrap();
        let (x, y) = (arr(&a), arr(&b));
        let mut all = a.clone();
        all.extend(b.iter().cloned());
        let r = compute::concatenate(&[&x, &y]).unwrap();
        prop_assert_eq!(r.tp().to_string(), format!("{} * var * int32", all.len()));
        prop_assert_eq!(r.to_json(), json_rows(&all, |v| v.to_string()));
    }
}
