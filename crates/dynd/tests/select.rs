//! `where`, `filter` and `take` (DESIGN §6, §8): fixed and var dims, ragged
//! and empty rows, negative and out-of-range indices, option masks and
//! indices, records and strings as elements, strided views, long arrays
//! (the fast paths and the threaded gather), and the errors with their
//! messages.

use crate::common;
use common::{Call, Typed, a, assert_ok, check_calls, ok, pair};

use dynd::callable::lookup;
use dynd::{Array, ErrorKind, Index, compute};

// ---------------------------------------------- where, filter and take

/// Calls of `where`, `filter` and `take` and their results, one row each.
#[rustfmt::skip]
const CALLS: &[Call] = &[
    // where(cond, x, y): picks and promotes; scalars broadcast on either side.
    ("where", &[("4 * bool", "[true, false, false, true]"), ("4 * int32", "[1, 2, 3, 4]"), ("4 * float32", "[0.5, 1.5, 2.5, 3.5]")], ("4 * float64", "[1.0,1.5,2.5,4.0]")),
    ("where", &[("4 * bool", "[true, false, false, true]"), ("4 * int32", "[1, 2, 3, 4]"), ("4 * int32", "[1, 2, 3, 4]")], ("4 * int32", "[1,2,3,4]")),
    ("where", &[("4 * bool", "[true, false, false, true]"), ("4 * int32", "[1, 2, 3, 4]"), ("int32", "0")], ("4 * int32", "[1,0,0,4]")),
    ("where", &[("4 * bool", "[true, false, false, true]"), ("uint8", "9"), ("4 * int32", "[1, 2, 3, 4]")], ("4 * int32", "[9,2,3,9]")),
    // Truthy numbers as conditions.
    ("where", &[("4 * float64", "[0.0, 2.0, -0.0, NaN]"), ("int64", "1"), ("int64", "0")], ("4 * int64", "[0,1,0,1]")),
    // Broadcasting over fixed and var dims.
    ("where", &[("2 * 3 * bool", "[[true,false,true],[false,false,true]]"), ("2 * 1 * int64", "[[10], [20]]"), ("3 * int64", "[1, 2, 3]")], ("2 * 3 * int64", "[[10,2,10],[1,2,20]]")),
    ("where", &[("2 * var * bool", "[[true, false, true], []]"), ("2 * 1 * int64", "[[10], [20]]"), ("int64", "0")], ("2 * var * int64", "[[10,0,10],[]]")),
    ("where", &[("2 * var * bool", "[[false, true, false], [true]]"), ("2 * var * float64", "[[1, 2, 3], [4]]"), ("float64", "-1")], ("2 * var * float64", "[[-1.0,2.0,-1.0],[4.0]]")),
    // Missing where cond is, and where the chosen value is.
    ("where", &[("4 * ?bool", "[true, null, false, true]"), ("4 * ?int32", "[1, 2, null, null]"), ("4 * int32", "[5, 6, 7, 8]")], ("4 * ?int32", "[1,null,7,null]")),
    ("where", &[("4 * bool", "[false, false, true, false]"), ("4 * ?int32", "[1, 2, null, null]"), ("4 * int32", "[5, 6, 7, 8]")], ("4 * ?int32", "[5,6,null,8]")),
    // Promoted through options.
    ("where", &[("4 * ?bool", "[true, null, false, true]"), ("4 * ?int32", "[1, 2, null, null]"), ("4 * float64", "[0.5, 0.5, 0.5, 0.5]")], ("4 * ?float64", "[1.0,null,0.5,null]")),
    // An optional number as the condition.
    ("where", &[("3 * ?int8", "[0, null, 3]"), ("float64", "1.5"), ("float64", "2.5")], ("3 * ?float64", "[2.5,null,1.5]")),
    // filter(x, mask)
    ("filter", &[("4 * int32", "[1, 2, 3, 4]"), ("4 * bool", "[true, false, false, true]")], ("var * int32", "[1,4]")),
    ("filter", &[("3 * var * float64", "[[1, 2, 3], [], [4, 5]]"), ("3 * var * bool", "[[true, false, true], [], [false, false]]")], ("3 * var * float64", "[[1.0,3.0],[],[]]")),
    // A fixed inner dim against a var mask, and a fixed mask against var x.
    ("filter", &[("2 * 3 * int8", "[[1, 2, 3], [4, 5, 6]]"), ("2 * var * bool", "[[true, true, false], [false, true, true]]")], ("2 * var * int8", "[[1,2],[5,6]]")),
    ("filter", &[("2 * var * int8", "[[1, 2], [3, 4]]"), ("2 * 2 * bool", "[[true, false], [false, true]]")], ("2 * var * int8", "[[1],[4]]")),
    // Elements below the filtered dim go whole.
    ("filter", &[("3 * 2 * int64", "[[1, 2], [3, 4], [5, 6]]"), ("3 * bool", "[false, true, true]")], ("var * 2 * int64", "[[3,4],[5,6]]")),
    // Two outer dims.
    ("filter", &[("2 * 2 * var * int16", "[[[1, 2], [3]], [[], [4, 5, 6]]]"), ("2 * 2 * var * bool", "[[[true, false], [true]], [[], [true, false, true]]]")], ("2 * 2 * var * int16", "[[[1],[3]],[[],[4,6]]]")),
    // Empty.
    ("filter", &[("0 * int32", "[]"), ("0 * bool", "[]")], ("var * int32", "[]")),
    ("filter", &[("0 * var * int32", "[]"), ("0 * var * bool", "[]")], ("0 * var * int32", "[]")),
    // Option masks (missing is false) and option elements.
    ("filter", &[("2 * var * ?int32", "[[1, null, 3], [4]]"), ("2 * var * ?bool", "[[true, true, null], [null]]")], ("2 * var * ?int32", "[[1,null],[]]")),
    // take(x, idx)
    ("take", &[("5 * int32", "[10, 11, 12, 13, 14]"), ("3 * int64", "[4, -1, 0]")], ("3 * int32", "[14,14,10]")),
    ("take", &[("5 * int32", "[10, 11, 12, 13, 14]"), ("var * uint8", "[1, 1]")], ("var * int32", "[11,11]")),
    ("take", &[("5 * int32", "[10, 11, 12, 13, 14]"), ("0 * int16", "[]")], ("0 * int32", "[]")),
    ("take", &[("3 * var * float64", "[[1, 2, 3], [], [4, 5]]"), ("3 * var * int64", "[[2, 0, -3], [], [1, 1, 0, -2]]")], ("3 * var * float64", "[[3.0,1.0,1.0],[],[5.0,5.0,4.0,4.0]]")),
    // A fixed index row into var rows keeps the fixed dim.
    ("take", &[("3 * var * float64", "[[1, 2, 3], [7], [4, 5]]"), ("3 * 2 * int32", "[[0, 0], [0, 0], [1, 0]]")], ("3 * 2 * float64", "[[1.0,1.0],[7.0,7.0],[5.0,4.0]]")),
    // Rows of a dim below.
    ("take", &[("3 * 2 * int8", "[[1, 2], [3, 4], [5, 6]]"), ("2 * int64", "[2, 0]")], ("2 * 2 * int8", "[[5,6],[1,2]]")),
    // Option indices give option elements.
    ("take", &[("3 * float64", "[1.5, 2.5, 3.5]"), ("4 * ?int64", "[2, null, -3, null]")], ("4 * ?float64", "[3.5,null,1.5,null]")),
    // Missing indices into empty rows are fine; present ones are not.
    ("take", &[("2 * var * int32", "[[], [7]]"), ("2 * var * ?int32", "[[null], [0, null]]")], ("2 * var * ?int32", "[[null],[7,null]]")),
    // Option elements.
    ("take", &[("3 * ?int16", "[1, null, 3]"), ("3 * int64", "[1, 2, 1]")], ("3 * ?int16", "[null,3,null]")),
    // Strings and records as elements.
    ("where", &[("3 * ?bool", "[true, false, null]"), ("3 * string", r#"["a", "b", "c"]"#), ("3 * ?string", r#"["x", null, "z"]"#)], ("3 * ?string", r#"["a",null,null]"#)),
    ("where", &[("2 * bool", "[false, true]"), ("2 * {a: int32, s: string}", r#"[{"a": 1, "s": "p"}, {"a": 2, "s": "q"}]"#), ("{a: int32, s: string}", r#"{"a": 0, "s": "-"}"#)], ("2 * {a: int32, s: string}", r#"[{"a":0,"s":"-"},{"a":2,"s":"q"}]"#)),
    ("filter", &[("3 * ?string", r#"["a", null, "c"]"#), ("3 * bool", "[false, true, true]")], ("var * ?string", r#"[null,"c"]"#)),
    ("filter", &[("2 * var * {a: int32, s: string}", r#"[[{"a": 1, "s": "x"}, {"a": 2, "s": "y"}], [{"a": 3, "s": "z"}]]"#), ("2 * var * bool", "[[false, true], [true]]")], ("2 * var * {a: int32, s: string}", r#"[[{"a":2,"s":"y"}],[{"a":3,"s":"z"}]]"#)),
    ("filter", &[("3 * ?{a: int8}", r#"[{"a": 1}, null, {"a": 3}]"#), ("3 * bool", "[true, true, false]")], ("var * ?{a: int8}", r#"[{"a":1},null]"#)),
    ("take", &[("3 * string", r#"["a", "bb", "ccc"]"#), ("4 * ?int8", "[2, null, 0, 2]")], ("4 * ?string", r#"["ccc",null,"a","ccc"]"#)),
    ("take", &[("2 * var * {a: int32, s: string}", r#"[[{"a": 1, "s": "x"}, {"a": 2, "s": "y"}], []]"#), ("2 * var * int64", "[[1, 0, 1], []]")], ("2 * var * {a: int32, s: string}", r#"[[{"a":2,"s":"y"},{"a":1,"s":"x"},{"a":2,"s":"y"}],[]]"#)),
    ("take", &[("2 * var * {a: int32, s: string}", r#"[[{"a": 1, "s": "x"}, {"a": 2, "s": "y"}], []]"#), ("2 * var * ?int64", "[[null, 0], []]")], ("2 * var * ?{a: int32, s: string}", r#"[[null,{"a":1,"s":"x"}],[]]"#)),
];

#[test]
fn where_filter_and_take_table() {
    check_calls(CALLS);
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

/// How a refusal's message is checked.
enum Msg {
    /// The whole message.
    Is(&'static str),
    /// Every fragment appears in it.
    Has(&'static [&'static str]),
    /// It starts so.
    StartsWith(&'static str),
}
use Msg::{Has, Is, StartsWith};

/// Calls of `where`, `filter` and `take` that fail: callable, arguments,
/// the error's kind and what its message says. One row each.
#[rustfmt::skip]
const REFUSED: &[(&str, &[Typed], ErrorKind, Msg)] = &[
    // where: no common type, a string condition, too few arguments, and
    // shapes that do not broadcast (both named).
    ("where", &[("2 * bool", "[true, false]"), ("2 * string", r#"["a", "b"]"#), ("int32", "1")], ErrorKind::Type, Has(&["no common type"])),
    ("where", &[("2 * string", r#"["a", "b"]"#), ("2 * bool", "[true, false]"), ("2 * bool", "[true, false]")], ErrorKind::Type, Has(&["condition"])),
    ("where", &[("2 * bool", "[true, false]"), ("2 * bool", "[true, false]")], ErrorKind::InvalidArgument, Has(&["takes 3 arguments"])),
    ("where", &[("3 * bool", "[true,true,true]"), ("2 * int8", "[1,2]"), ("int8", "0")], ErrorKind::Broadcast, Has(&["(3)", "(2)"])),
    // filter: a ragged row of another length, a fixed dim of another
    // length, a mask that is not bool, has no dim, or more dims than x, and
    // outer dims that do not broadcast.
    ("filter", &[("3 * var * int32", "[[1, 2], [3], [4, 5, 6]]"), ("3 * var * bool", "[[true, true], [true], [true, false]]")], ErrorKind::Broadcast, Is("filter: row 2 of the mask has length 2 but row 2 of x has length 3")),
    ("filter", &[("3 * int32", "[1,2,3]"), ("2 * bool", "[true,true]")], ErrorKind::Broadcast, Has(&["length 2", "length 3"])),
    ("filter", &[("3 * int32", "[1,2,3]"), ("3 * int32", "[1,0,1]")], ErrorKind::Type, Has(&["bool"])),
    ("filter", &[("3 * int32", "[1,2,3]"), ("bool", "true")], ErrorKind::Type, Has(&["no dim"])),
    ("filter", &[("3 * int32", "[1,2,3]"), ("3 * 1 * bool", "[[true],[true],[true]]")], ErrorKind::Type, Has(&["more than x"])),
    ("filter", &[("2 * 2 * int32", "[[1,2],[3,4]]"), ("3 * 2 * bool", "[[true,true],[true,true],[true,true]]")], ErrorKind::Broadcast, StartsWith("filter:")),
    // take: out of range in a short row, past either end of a long row, an
    // index beyond int64, float and 0-d indices, rows that do not
    // broadcast, and too few arguments.
    ("take", &[("3 * var * int32", "[[1, 2, 3, 4, 5], [], [1]]"), ("3 * var * int64", "[[0], [], [1]]")], ErrorKind::Index, Is("take: index 1 is out of range for row 2 of length 1")),
    ("take", &[("4 * var * int32", "[[], [], [], [1, 2, 3, 4, 5]]"), ("4 * var * int64", "[[], [], [], [7]]")], ErrorKind::Index, Is("take: index 7 is out of range for row 3 of length 5")),
    ("take", &[("4 * var * int32", "[[], [], [], [1, 2, 3, 4, 5]]"), ("4 * var * int64", "[[], [], [], [-6]]")], ErrorKind::Index, Is("take: index -6 is out of range for row 3 of length 5")),
    ("take", &[("2 * int8", "[1, 2]"), ("1 * uint64", "[18446744073709551615]")], ErrorKind::Index, Is("take: index 18446744073709551615 is out of range for length 2")),
    ("take", &[("2 * int8", "[1, 2]"), ("1 * float64", "[0]")], ErrorKind::Type, Has(&["integers"])),
    ("take", &[("2 * int8", "[1, 2]"), ("int64", "0")], ErrorKind::Type, Has(&["no dim"])),
    ("take", &[("3 * var * int32", "[[1, 2, 3, 4, 5], [], [1]]"), ("2 * var * int64", "[[0], [0]]")], ErrorKind::Broadcast, StartsWith("take:")),
    ("take", &[("3 * var * int32", "[[1, 2, 3, 4, 5], [], [1]]")], ErrorKind::InvalidArgument, Has(&[])),
];

#[test]
fn where_filter_and_take_refuse_bad_inputs() {
    for (name, args, kind, msg) in REFUSED {
        let arrays: Vec<Array> = args.iter().map(|&(t, j)| a(t, j)).collect();
        let refs: Vec<&Array> = arrays.iter().collect();
        let e = lookup(name)
            .and_then(|f| f.call(&refs))
            .expect_err(&format!("{name}{args:?} should fail"));
        let m = e.message();
        assert_eq!(e.kind(), *kind, "{name}{args:?}: {e}");
        match msg {
            Is(want) => assert_eq!(m, *want, "{name}{args:?}"),
            Has(parts) => assert!(parts.iter().all(|p| m.contains(p)), "{name}{args:?}: {e}"),
            StartsWith(p) => assert!(m.starts_with(p), "{name}{args:?}: {e}"),
        }
    }
}

// ----------------------------------------------------------------- filter

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

// ------------------------------------------------------------------- take

#[test]
fn every_integer_type_indexes() {
    let x = a("5 * int32", "[10, 11, 12, 13, 14]");
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
    let e = compute::take(&Array::from(xs.clone()), &Array::from(bad)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index);
    assert_eq!(
        e.message(),
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
