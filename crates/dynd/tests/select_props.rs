//! `where`, `filter` and `take` against plain loops over random ragged
//! data: rows of random lengths (empty ones included), optional elements,
//! masks and indices, strings as elements, and indices out of range.

use dynd::{Array, ErrorKind, compute};
use proptest::prelude::*;

/// A JSON list of `items`.
fn list<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    format!("[{}]", items.iter().map(f).collect::<Vec<_>>().join(","))
}

fn opt(v: &Option<i64>) -> String {
    v.map_or("null".to_string(), |x| x.to_string())
}

/// Rows of optional values.
type Rows<T> = Vec<Vec<Option<T>>>;

/// Rows of optional int64 values.
fn rows() -> impl Strategy<Value = Vec<Vec<Option<i64>>>> {
    proptest::collection::vec(
        proptest::collection::vec(proptest::option::weighted(0.8, -100i64..100), 0..8),
        0..7,
    )
}

/// `x` with, per element, a mask value (`None` missing) and an index in
/// `-2 * len .. 2 * len` (`None` missing).
fn rows_with_masks() -> impl Strategy<Value = (Rows<i64>, Rows<bool>)> {
    rows().prop_flat_map(|x| {
        let masks: Vec<_> = x
            .iter()
            .map(|r| {
                proptest::collection::vec(proptest::option::weighted(0.8, any::<bool>()), r.len())
            })
            .collect();
        (Just(x), masks)
    })
}

fn rows_with_indices() -> impl Strategy<Value = (Rows<i64>, Rows<i64>)> {
    rows().prop_flat_map(|x| {
        let idx: Vec<_> = x
            .iter()
            .map(|r| {
                let n = r.len() as i64;
                let span = (2 * n).max(1);
                proptest::collection::vec(proptest::option::weighted(0.9, -span..span), 0..6)
            })
            .collect();
        (Just(x), idx)
    })
}

fn ragged(rows: &[Vec<Option<i64>>]) -> String {
    list(rows, |r| list(r, opt))
}

/// The rows as `n * var * ?int64` and the masks as `n * var * ?bool`.
fn arrays(x: &Rows<i64>, masks: &Rows<bool>) -> (Array, Array) {
    let n = x.len();
    let xa = Array::from_json(format!("{n} * var * ?int64").as_str(), &ragged(x)).unwrap();
    let ma = Array::from_json(
        format!("{n} * var * ?bool").as_str(),
        &list(masks, |r| {
            list(r, |m| m.map_or("null".into(), |b| b.to_string()))
        }),
    )
    .unwrap();
    (xa, ma)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn filter_agrees_with_a_loop((x, masks) in rows_with_masks()) {
        let n = x.len();
        let (xa, ma) = arrays(&x, &masks);
        let want: Vec<Vec<Option<i64>>> = x
            .iter()
            .zip(&masks)
            .map(|(r, m)| r.iter().zip(m).filter(|(_, m)| **m == Some(true)).map(|(v, _)| *v).collect())
            .collect();
        let got = compute::filter(&xa, &ma).unwrap();
        prop_assert_eq!(got.tp().to_string(), format!("{n} * var * ?int64"));
        prop_assert_eq!(got.to_json(), ragged(&want));
        // Strings as elements: the assignment kernel path.
        let sx: Vec<Vec<Option<String>>> = x.iter().map(|r| r.iter().map(|v| v.map(|v| format!("s{v}"))).collect()).collect();
        let text = |rows: &[Vec<Option<String>>]| list(rows, |r| list(r, |v| v.as_ref().map_or("null".into(), |s| format!("\"{s}\""))));
        let sa = Array::from_json(format!("{n} * var * ?string").as_str(), &text(&sx)).unwrap();
        let swant: Vec<Vec<Option<String>>> = sx
            .iter()
            .zip(&masks)
            .map(|(r, m)| r.iter().zip(m).filter(|(_, m)| **m == Some(true)).map(|(v, _)| v.clone()).collect())
            .collect();
        prop_assert_eq!(compute::filter(&sa, &ma).unwrap().to_json(), text(&swant));
    }

    #[test]
    fn take_agrees_with_a_loop((x, idx) in rows_with_indices()) {
        let n = x.len();
        let xa = Array::from_json(format!("{n} * var * ?int64").as_str(), &ragged(&x)).unwrap();
        let ia = Array::from_json(format!("{n} * var * ?int32").as_str(), &ragged(&idx)).unwrap();
        // The loop: the first bad index, row by row, else the gathered rows.
        let mut want = Vec::new();
        let mut bad = None;
        'rows: for (row, (r, ix)) in x.iter().zip(&idx).enumerate() {
            let len = r.len() as i64;
            let mut out = Vec::new();
            for i in ix {
                match i {
                    None => out.push(None),
                    Some(i) => {
                        let p = if *i < 0 { i + len } else { *i };
                        if p < 0 || p >= len {
                            bad = Some(format!("take: index {i} is out of range for row {row} of length {len}"));
                            break 'rows;
                        }
                        out.push(r[p as usize]);
                    }
                }
            }
            want.push(out);
        }
        match (compute::take(&xa, &ia), bad) {
            (Ok(got), None) => {
                prop_assert_eq!(got.tp().to_string(), format!("{n} * var * ?int64"));
                prop_assert_eq!(got.to_json(), ragged(&want));
            }
            (Err(e), Some(msg)) => {
                prop_assert_eq!(e.kind(), ErrorKind::Index);
                prop_assert_eq!(e.message(), msg.as_str());
            }
            (got, want) => prop_assert!(false, "got {:?}, want error {:?}", got.map(|a| a.to_json()), want),
        }
    }

    #[test]
    fn where_agrees_with_a_loop((x, masks) in rows_with_masks(), fill in -5i64..5) {
        let n = x.len();
        let (xa, ma) = arrays(&x, &masks);
        let want: Vec<Vec<Option<f64>>> = x
            .iter()
            .zip(&masks)
            .map(|(r, m)| {
                r.iter()
                    .zip(m)
                    .map(|(v, c)| match c {
                        None => None,
                        Some(true) => v.map(|v| v as f64),
                        Some(false) => Some(fill as f64 + 0.5),
                    })
                    .collect()
            })
            .collect();
        let got = compute::where_(&ma, &xa, &Array::from(fill as f64 + 0.5)).unwrap();
        prop_assert_eq!(got.tp().to_string(), format!("{n} * var * ?float64"));
        prop_assert_eq!(
            got.to_json(),
            list(&want, |r| list(r, |v| v.map_or("null".into(), |v| format!("{v:?}"))))
        );
    }
}
