//! `where`, `filter` and `take` (DESIGN §6, §8): fixed and var dims, ragged
//! and empty rows, negative and out-of-range indices, option masks and
//! indices, records and strings as elements, strided views, long arrays
//! (the fast paths and the threaded gather), and the errors with their
//! messages.

use crate::common;
use common::{a, assert_ok, ok, pair};

use dynd::callable::lookup;
use dynd::{Array, ErrorKind, Index, compute};

fn err(r: dynd::Result<Array>) -> (ErrorKind, String) {
    let e = r.expect_err("an error");
    (e.kind(), e.message().to_string())
}

// ------------------------------------------------------------------ where

#[test]
fn where_picks_and_promotes() {
    let c = a("4 * bool", "[true, false, false, true]");
    let x = a("4 * int32", "[1, 2, 3, 4]");
    let y = a("4 * float32", "[0.5, 1.5, 2.5, 3.5]");
    assert_ok(
        compute::where_(&c, &x, &y),
        "4 * float64",
        "[1.0,1.5,2.5,4.0]",
    );
    assert_ok(compute::where_(&c, &x, &x), "4 * int32", "[1,2,3,4]");
    // Scalars broadcast on either side.
    assert_ok(
        compute::where_(&c, &x, &Array::from(0i32)),
        "4 * int32",
        "[1,0,0,4]",
    );
    assert_ok(
        compute::where_(&c, &Array::from(9u8), &x),
        "4 * int32",
        "[9,2,3,9]",
    );
    // Truthy numbers as conditions.
    let cn = a("4 * float64", "[0.0, 2.0, -0.0, NaN]");
    assert_ok(
        compute::where_(&cn, &Array::from(1i64), &Array::from(0i64)),
        "4 * int64",
        "[0,1,0,1]",
    );
    // Through the registry, as the CLI and the C ABI reach it.
    assert_ok(
        lookup("where").unwrap().call(&[&c, &x, &x]),
        "4 * int32",
        "[1,2,3,4]",
    );
}

#[test]
fn where_broadcasts_over_fixed_and_var_dims() {
    let c = a("2 * var * bool", "[[true, false, true], []]");
    let x = a("2 * 1 * int64", "[[10], [20]]");
    let y = a("3 * int64", "[1, 2, 3]");
    assert_ok(
        compute::where_(
            &a("2 * 3 * bool", "[[true,false,true],[false,false,true]]"),
            &x,
            &y,
        ),
        "2 * 3 * int64",
        "[[10,2,10],[1,2,20]]",
    );
    assert_ok(
        compute::where_(&c, &x, &Array::from(0i64)),
        "2 * var * int64",
        "[[10,0,10],[]]",
    );
    let ragged = a("2 * var * float64", "[[1, 2, 3], [4]]");
    let c2 = a("2 * var * bool", "[[false, true, false], [true]]");
    assert_ok(
        compute::where_(&c2, &ragged, &Array::from(-1.0f64)),
        "2 * var * float64",
        "[[-1.0,2.0,-1.0],[4.0]]",
    );
    let (kind, msg) = err(compute::where_(
        &a("3 * bool", "[true,true,true]"),
        &a("2 * int8", "[1,2]"),
        &Array::from(0i8),
    ));
    assert_eq!(kind, ErrorKind::Broadcast);
    assert!(msg.contains("(3)") && msg.contains("(2)"), "{msg}");
}

#[test]
fn where_with_missing_values() {
    let c = a("4 * ?bool", "[true, null, false, true]");
    let x = a("4 * ?int32", "[1, 2, null, null]");
    let y = a("4 * int32", "[5, 6, 7, 8]");
    // Missing where cond is, and where the chosen value is.
    assert_ok(compute::where_(&c, &x, &y), "4 * ?int32", "[1,null,7,null]");
    let c2 = a("4 * bool", "[false, false, true, false]");
    assert_ok(compute::where_(&c2, &x, &y), "4 * ?int32", "[5,6,null,8]");
    // Promoted through options.
    assert_ok(
        compute::where_(&c, &x, &a("4 * float64", "[0.5, 0.5, 0.5, 0.5]")),
        "4 * ?float64",
        "[1.0,null,0.5,null]",
    );
    // An optional number as the condition.
    let cn = a("3 * ?int8", "[0, null, 3]");
    assert_ok(
        compute::where_(&cn, &Array::from(1.5f64), &Array::from(2.5f64)),
        "3 * ?float64",
        "[2.5,null,1.5]",
    );
}

#[test]
fn where_over_strings_and_records() {
    let c = a("3 * ?bool", "[true, false, null]");
    let x = a("3 * string", r#"["a", "b", "c"]"#);
    let y = a("3 * ?string", r#"["x", null, "z"]"#);
    assert_ok(
        compute::where_(&c, &x, &y),
        "3 * ?string",
        r#"["a",null,null]"#,
    );
    let r1 = a(
        "2 * {a: int32, s: string}",
        r#"[{"a": 1, "s": "p"}, {"a": 2, "s": "q"}]"#,
    );
    let r2 = a("{a: int32, s: string}", r#"{"a": 0, "s": "-"}"#);
    assert_ok(
        compute::where_(&a("2 * bool", "[false, true]"), &r1, &r2),
        "2 * {a: int32, s: string}",
        r#"[{"a":0,"s":"-"},{"a":2,"s":"q"}]"#,
    );
}

#[test]
fn where_on_long_and_strided_arrays_equals_a_loop() {
    let n = 100_003usize;
    let c: Vec<bool> = (0..n).map(|i| (i * 7919) % 3 == 0).collect();
    let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let y: Vec<f64> = (0..n).map(|i| -(i as f64)).collect();
    let r = compute::where_(
        &Array::from(c.clone()),
        &Array::from(x.clone()),
        &Array::from(y.clone()),
    )
    .unwrap();
    let want: Vec<f64> = (0..n).map(|i| if c[i] { x[i] } else { y[i] }).collect();
    assert_eq!(r.to_json(), Array::from(want.clone()).to_json());
    // Every other element of each: strided operands.
    let step = |v: Array| v.index(&[Index::slice(None, None, 2)]).unwrap();
    let r = compute::where_(
        &step(Array::from(c.clone())),
        &step(Array::from(x.clone())),
        &step(Array::from(y.clone())),
    )
    .unwrap();
    let want: Vec<f64> = want.into_iter().step_by(2).collect();
    assert_eq!(r.to_json(), Array::from(want).to_json());
}

#[test]
fn where_bad_inputs() {
    let c = a("2 * bool", "[true, false]");
    let s = a("2 * string", r#"["a", "b"]"#);
    let (kind, msg) = err(compute::where_(&c, &s, &Array::from(1i32)));
    assert_eq!(kind, ErrorKind::Type);
    assert!(msg.contains("no common type"), "{msg}");
    let (kind, msg) = err(compute::where_(&s, &c, &c));
    assert_eq!(kind, ErrorKind::Type);
    assert!(msg.contains("condition"), "{msg}");
    let (kind, msg) = err(lookup("where").unwrap().call(&[&c, &c]));
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(msg.contains("takes 3 arguments"), "{msg}");
}

// ----------------------------------------------------------------- filter

#[test]
fn filter_fixed_and_var() {
    assert_ok(
        compute::filter(
            &a("4 * int32", "[1, 2, 3, 4]"),
            &a("4 * bool", "[true, false, false, true]"),
        ),
        "var * int32",
        "[1,4]",
    );
    let x = a("3 * var * float64", "[[1, 2, 3], [], [4, 5]]");
    let m = a(
        "3 * var * bool",
        "[[true, false, true], [], [false, false]]",
    );
    assert_ok(
        compute::filter(&x, &m),
        "3 * var * float64",
        "[[1.0,3.0],[],[]]",
    );
    // A fixed inner dim against a var mask, and a fixed mask against var x.
    let xf = a("2 * 3 * int8", "[[1, 2, 3], [4, 5, 6]]");
    let mv = a(
        "2 * var * bool",
        "[[true, true, false], [false, true, true]]",
    );
    assert_ok(compute::filter(&xf, &mv), "2 * var * int8", "[[1,2],[5,6]]");
    let mf = a("2 * 2 * bool", "[[true, false], [false, true]]");
    assert_ok(
        compute::filter(&a("2 * var * int8", "[[1, 2], [3, 4]]"), &mf),
        "2 * var * int8",
        "[[1],[4]]",
    );
    // Elements below the filtered dim go whole.
    let x3 = a("3 * 2 * int64", "[[1, 2], [3, 4], [5, 6]]");
    assert_ok(
        compute::filter(&x3, &a("3 * bool", "[false, true, true]")),
        "var * 2 * int64",
        "[[3,4],[5,6]]",
    );
    // Two outer dims.
    let x4 = a("2 * 2 * var * int16", "[[[1, 2], [3]], [[], [4, 5, 6]]]");
    let m4 = a(
        "2 * 2 * var * bool",
        "[[[true, false], [true]], [[], [true, false, true]]]",
    );
    assert_ok(
        compute::filter(&x4, &m4),
        "2 * 2 * var * int16",
        "[[[1],[3]],[[],[4,6]]]",
    );
    // Empty.
    assert_ok(
        compute::filter(&a("0 * int32", "[]"), &a("0 * bool", "[]")),
        "var * int32",
        "[]",
    );
    assert_ok(
        compute::filter(&a("0 * var * int32", "[]"), &a("0 * var * bool", "[]")),
        "0 * var * int32",
        "[]",
    );
}

#[test]
fn filter_option_masks_and_elements() {
    let x = a("2 * var * ?int32", "[[1, null, 3], [4]]");
    let m = a("2 * var * ?bool", "[[true, true, null], [null]]");
    assert_ok(compute::filter(&x, &m), "2 * var * ?int32", "[[1,null],[]]");
    let s = a("3 * ?string", r#"["a", null, "c"]"#);
    assert_ok(
        compute::filter(&s, &a("3 * bool", "[false, true, true]")),
        "var * ?string",
        r#"[null,"c"]"#,
    );
    let recs = a(
        "2 * var * {a: int32, s: string}",
        r#"[[{"a": 1, "s": "x"}, {"a": 2, "s": "y"}], [{"a": 3, "s": "z"}]]"#,
    );
    let rm = a("2 * var * bool", "[[false, true], [true]]");
    assert_ok(
        compute::filter(&recs, &rm),
        "2 * var * {a: int32, s: string}",
        r#"[[{"a":2,"s":"y"}],[{"a":3,"s":"z"}]]"#,
    );
    let orecs = a("3 * ?{a: int8}", r#"[{"a": 1}, null, {"a": 3}]"#);
    assert_ok(
        compute::filter(&orecs, &a("3 * bool", "[true, true, false]")),
        "var * ?{a: int8}",
        r#"[{"a":1},null]"#,
    );
}

#[test]
fn filter_strided_views_and_long_rows() {
    let x = a("6 * int64", "[0, 1, 2, 3, 4, 5]");
    let rev = x.index(&[Index::slice(None, None, -1)]).unwrap();
    let m = a("6 * bool", "[true, false, true, false, true, true]");
    assert_ok(compute::filter(&rev, &m), "var * int64", "[5,3,1,0]");
    let odd = x.index(&[Index::slice(Some(1), None, 2)]).unwrap();
    let m3 = a("6 * bool", "[true, false, true, true, true, true]");
    let m3 = m3.index(&[Index::slice(None, None, 2)]).unwrap();
    assert_ok(compute::filter(&odd, &m3), "var * int64", "[1,3,5]");
    let n = 70_000usize;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let ms: Vec<bool> = (0..n).map(|i| i % 5 != 1).collect();
    let r = compute::filter(&Array::from(xs.clone()), &Array::from(ms.clone())).unwrap();
    let want: Vec<f32> = xs
        .iter()
        .zip(&ms)
        .filter(|(_, m)| **m)
        .map(|(x, _)| *x)
        .collect();
    assert_eq!(r.to_json(), Array::from(want).to_json());
}

#[test]
fn filter_bad_inputs() {
    let x = a("3 * var * int32", "[[1, 2], [3], [4, 5, 6]]");
    let m = a("3 * var * bool", "[[true, true], [true], [true, false]]");
    let (kind, msg) = err(compute::filter(&x, &m));
    assert_eq!(kind, ErrorKind::Broadcast);
    assert_eq!(
        msg,
        "filter: row 2 of the mask has length 2 but row 2 of x has length 3"
    );
    let (kind, msg) = err(compute::filter(
        &a("3 * int32", "[1,2,3]"),
        &a("2 * bool", "[true,true]"),
    ));
    assert_eq!(kind, ErrorKind::Broadcast);
    assert!(
        msg.contains("length 2") && msg.contains("length 3"),
        "{msg}"
    );
    let (kind, msg) = err(compute::filter(
        &a("3 * int32", "[1,2,3]"),
        &a("3 * int32", "[1,0,1]"),
    ));
    assert_eq!(kind, ErrorKind::Type);
    assert!(msg.contains("bool"), "{msg}");
    let (kind, msg) = err(compute::filter(
        &a("3 * int32", "[1,2,3]"),
        &Array::from(true),
    ));
    assert_eq!(kind, ErrorKind::Type);
    assert!(msg.contains("no dim"), "{msg}");
    let (kind, msg) = err(compute::filter(
        &a("3 * int32", "[1,2,3]"),
        &a("3 * 1 * bool", "[[true],[true],[true]]"),
    ));
    assert_eq!(kind, ErrorKind::Type);
    assert!(msg.contains("more than x"), "{msg}");
    let (kind, msg) = err(compute::filter(
        &a("2 * 2 * int32", "[[1,2],[3,4]]"),
        &a("3 * 2 * bool", "[[true,true],[true,true],[true,true]]"),
    ));
    assert_eq!(kind, ErrorKind::Broadcast);
    assert!(msg.starts_with("filter:"), "{msg}");
}

// ------------------------------------------------------------------- take

#[test]
fn take_fixed_and_var() {
    let x = a("5 * int32", "[10, 11, 12, 13, 14]");
    assert_ok(
        compute::take(&x, &a("3 * int64", "[4, -1, 0]")),
        "3 * int32",
        "[14,14,10]",
    );
    assert_ok(
        compute::take(&x, &a("var * uint8", "[1, 1]")),
        "var * int32",
        "[11,11]",
    );
    assert_ok(compute::take(&x, &a("0 * int16", "[]")), "0 * int32", "[]");
    let j = a("3 * var * float64", "[[1, 2, 3], [], [4, 5]]");
    let idx = a("3 * var * int64", "[[2, 0, -3], [], [1, 1, 0, -2]]");
    assert_ok(
        compute::take(&j, &idx),
        "3 * var * float64",
        "[[3.0,1.0,1.0],[],[5.0,5.0,4.0,4.0]]",
    );
    // A fixed index row into var rows keeps the fixed dim.
    let fi = a(
        "3 * 2 * int32",
        "[[0, 0], [], [1, 0]]".replace("[]", "[0, 0]").as_str(),
    );
    let j2 = a("3 * var * float64", "[[1, 2, 3], [7], [4, 5]]");
    assert_ok(
        compute::take(&j2, &fi),
        "3 * 2 * float64",
        "[[1.0,1.0],[7.0,7.0],[5.0,4.0]]",
    );
    // Every integer type indexes.
    for t in [
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "int128",
        "uint128",
    ] {
        assert_eq!(
            ok(compute::take(&x, &a(&format!("2 * {t}"), "[3, 1]"))),
            pair("2 * int32", "[13,11]"),
            "{t}"
        );
    }
    // Rows of a dim below.
    let m = a("3 * 2 * int8", "[[1, 2], [3, 4], [5, 6]]");
    assert_ok(
        compute::take(&m, &a("2 * int64", "[2, 0]")),
        "2 * 2 * int8",
        "[[5,6],[1,2]]",
    );
}

#[test]
fn take_option_indices_and_elements() {
    let x = a("3 * float64", "[1.5, 2.5, 3.5]");
    assert_ok(
        compute::take(&x, &a("4 * ?int64", "[2, null, -3, null]")),
        "4 * ?float64",
        "[3.5,null,1.5,null]",
    );
    // Missing indices into empty rows are fine; present ones are not.
    let j = a("2 * var * int32", "[[], [7]]");
    assert_ok(
        compute::take(&j, &a("2 * var * ?int32", "[[null], [0, null]]")),
        "2 * var * ?int32",
        "[[null],[7,null]]",
    );
    let s = a("3 * string", r#"["a", "bb", "ccc"]"#);
    assert_ok(
        compute::take(&s, &a("4 * ?int8", "[2, null, 0, 2]")),
        "4 * ?string",
        r#"["ccc",null,"a","ccc"]"#,
    );
    let recs = a(
        "2 * var * {a: int32, s: string}",
        r#"[[{"a": 1, "s": "x"}, {"a": 2, "s": "y"}], []]"#,
    );
    assert_ok(
        compute::take(&recs, &a("2 * var * int64", "[[1, 0, 1], []]")),
        "2 * var * {a: int32, s: string}",
        r#"[[{"a":2,"s":"y"},{"a":1,"s":"x"},{"a":2,"s":"y"}],[]]"#,
    );
    assert_ok(
        compute::take(&recs, &a("2 * var * ?int64", "[[null, 0], []]")),
        "2 * var * ?{a: int32, s: string}",
        r#"[[null,{"a":1,"s":"x"}],[]]"#,
    );
    let ox = a("3 * ?int16", "[1, null, 3]");
    assert_ok(
        compute::take(&ox, &a("3 * int64", "[1, 2, 1]")),
        "3 * ?int16",
        "[null,3,null]",
    );
}

#[test]
fn take_long_rows_equal_a_loop() {
    // Long enough for the threaded gather.
    let n = 300_007usize;
    let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    let idx: Vec<i64> = (0..n as i64)
        .map(|i| ((i * 7_919) % n as i64) - (i % 2) * n as i64)
        .collect();
    let r = compute::take(&Array::from(xs.clone()), &Array::from(idx.clone())).unwrap();
    let want: Vec<f64> = idx
        .iter()
        .map(|&i| {
            xs[if i < 0 {
                (i + n as i64) as usize
            } else {
                i as usize
            }]
        })
        .collect();
    assert_eq!(r.to_json(), Array::from(want.clone()).to_json());
    // The first bad index is the one reported, threads or not.
    let mut bad = idx.clone();
    bad[250_000] = n as i64;
    bad[299_000] = -(n as i64) - 5;
    let (kind, msg) = err(compute::take(&Array::from(xs.clone()), &Array::from(bad)));
    assert_eq!(kind, ErrorKind::Index);
    assert_eq!(
        msg,
        format!("take: index {n} is out of range for length {n}")
    );
    // Strided indices.
    let every_other = Array::from(idx.clone())
        .index(&[Index::slice(None, None, 2)])
        .unwrap();
    let r = compute::take(&Array::from(xs.clone()), &every_other).unwrap();
    assert_eq!(r.tp().to_string(), format!("{} * float64", n.div_ceil(2)));
    let want_odd: Vec<f64> = want.iter().step_by(2).copied().collect();
    assert_eq!(r.to_json(), Array::from(want_odd).to_json());
    // A reversed view of x (a negative stride), gathered by the same
    // indices: element i of the view is xs[n - 1 - i].
    let rev = Array::from(xs.clone())
        .index(&[Index::slice(None, None, -1)])
        .unwrap();
    let r = compute::take(&rev, &Array::from(idx.clone())).unwrap();
    let want_rev: Vec<f64> = idx
        .iter()
        .map(|&i| xs[n - 1 - (if i < 0 { i + n as i64 } else { i }) as usize])
        .collect();
    assert_eq!(r.to_json(), Array::from(want_rev).to_json());
    // Narrow unsigned indices, contiguous and long.
    let small: Vec<u16> = (0..n).map(|i| (i * 31 % 65_536) as u16).collect();
    let r = compute::take(&Array::from(xs.clone()), &Array::from(small.clone())).unwrap();
    let want_small: Vec<f64> = small.iter().map(|&i| xs[i as usize]).collect();
    assert_eq!(r.to_json(), Array::from(want_small).to_json());
}

#[test]
fn take_bad_inputs() {
    let x = a("3 * var * int32", "[[1, 2, 3, 4, 5], [], [1]]");
    let (kind, msg) = err(compute::take(&x, &a("3 * var * int64", "[[0], [], [1]]")));
    assert_eq!(kind, ErrorKind::Index);
    assert_eq!(msg, "take: index 1 is out of range for row 2 of length 1");
    let x4 = a("4 * var * int32", "[[], [], [], [1, 2, 3, 4, 5]]");
    let (_, msg) = err(compute::take(
        &x4,
        &a("4 * var * int64", "[[], [], [], [7]]"),
    ));
    assert_eq!(msg, "take: index 7 is out of range for row 3 of length 5");
    let (_, msg) = err(compute::take(
        &x4,
        &a("4 * var * int64", "[[], [], [], [-6]]"),
    ));
    assert_eq!(msg, "take: index -6 is out of range for row 3 of length 5");
    let (_, msg) = err(compute::take(
        &a("2 * int8", "[1, 2]"),
        &a("1 * uint64", "[18446744073709551615]"),
    ));
    assert_eq!(
        msg,
        "take: index 18446744073709551615 is out of range for length 2"
    );
    let (kind, msg) = err(compute::take(
        &a("2 * int8", "[1, 2]"),
        &a("1 * float64", "[0]"),
    ));
    assert_eq!(kind, ErrorKind::Type);
    assert!(msg.contains("integers"), "{msg}");
    let (kind, msg) = err(compute::take(&a("2 * int8", "[1, 2]"), &Array::from(0i64)));
    assert_eq!(kind, ErrorKind::Type);
    assert!(msg.contains("no dim"), "{msg}");
    let (kind, msg) = err(compute::take(&x, &a("2 * var * int64", "[[0], [0]]")));
    assert_eq!(kind, ErrorKind::Broadcast);
    assert!(msg.starts_with("take:"), "{msg}");
    let (kind, _) = err(lookup("take").unwrap().call(&[&x]));
    assert_eq!(kind, ErrorKind::InvalidArgument);
}

#[test]
fn results_compute_on() {
    // Outputs are ordinary arrays: they feed other callables.
    let x = a("2 * var * float64", "[[1, 2, 3], [4, 5]]");
    let f = compute::filter(
        &x,
        &a("2 * var * bool", "[[true, false, true], [false, true]]"),
    )
    .unwrap();
    let t = compute::take(&f, &a("2 * var * int64", "[[1], [0, 0]]")).unwrap();
    assert_ok(
        compute::sum(&t, Some(&[-1]), false),
        "2 * float64",
        "[3.0,10.0]",
    );
    let w = compute::where_(
        &compute::greater(&t, &Array::from(4.0f64)).unwrap(),
        &t,
        &Array::from(0.0f64),
    )
    .unwrap();
    assert_eq!(w.to_json(), "[[0.0],[5.0,5.0]]");
}
