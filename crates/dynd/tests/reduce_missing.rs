//! Reductions skip missing values (DESIGN §6): every built-in reduction
//! over empty rows, all-missing rows and mixed ones; result types; keepdims;
//! negative axes; unequal var rows combined position by position; errors;
//! and a property test against plain loops that skip missing values.

use crate::common;
use common::a;

use dynd::callable::lookup;
use dynd::callable::reduce::{BuiltinReduction, Reduction};
use dynd::compute as r;
use dynd::{Array, Index, Result};
use proptest::prelude::*;

/// `type json` of a result, or `error[Kind]: message`.
fn show(x: Result<Array>) -> String {
    match x {
        Ok(x) => format!("{} {}", x.tp(), x.to_json()),
        Err(e) => format!("error[{:?}]: {}", e.kind(), e.message()),
    }
}

fn reduce(name: &str, x: &Array, axes: Option<&[isize]>, keepdims: bool) -> String {
    let kind = BuiltinReduction::from_name(name).unwrap_or_else(|| panic!("{name}"));
    show(Reduction::builtin(kind).apply(x, axes, keepdims))
}

#[test]
fn every_reduction_over_empty_all_missing_and_mixed_rows() {
    // Row 0 mixed, row 1 empty, row 2 all missing, row 3 one value.
    let x = a(
        "4 * var * ?float64",
        "[[1.5, null, -2, 4], [], [null, null], [7]]",
    );
    #[rustfmt::skip]
    let cases: &[(&str, &str)] = &[
        ("sum", "4 * float64 [3.5,0.0,0.0,7.0]"),
        ("prod", "4 * float64 [-12.0,1.0,1.0,7.0]"),
        ("count", "4 * int64 [3,0,0,1]"),
        ("all", "4 * bool [true,true,true,true]"),
        ("any", "4 * bool [true,false,false,true]"),
        ("min", "4 * ?float64 [-2.0,null,null,7.0]"),
        ("max", "4 * ?float64 [4.0,null,null,7.0]"),
        ("argmin", "4 * ?int64 [2,null,null,0]"),
        ("argmax", "4 * ?int64 [3,null,null,0]"),
        ("mean", "4 * ?float64 [1.1666666666666667,null,null,7.0]"),
        ("var", "4 * ?float64 [6.055555555555556,null,null,0.0]"),
        ("std", "4 * ?float64 [2.4608038433722337,null,null,0.0]"),
    ];
    for (name, want) in cases {
        assert_eq!(reduce(name, &x, Some(&[-1]), false), *want, "{name}");
        assert_eq!(reduce(name, &x, Some(&[1]), false), *want, "{name}");
    }
    // Over everything: one value each.
    #[rustfmt::skip]
    let all: &[(&str, &str)] = &[
        ("sum", "float64 10.5"),
        ("count", "int64 4"),
        ("min", "?float64 -2.0"),
        ("max", "?float64 7.0"),
        // Positions count every element, missing ones too, in C order.
        ("argmin", "?int64 2"),
        ("argmax", "?int64 6"),
        ("mean", "?float64 2.625"),
    ];
    for (name, want) in all {
        assert_eq!(reduce(name, &x, None, false), *want, "{name}");
    }
    // Nothing at all left: missing, or the identity.
    let none = a("2 * var * ?int32", "[[], [null]]");
    for (name, want) in [
        ("sum", "int64 0"),
        ("prod", "int64 1"),
        ("count", "int64 0"),
        ("all", "bool true"),
        ("any", "bool false"),
        ("min", "?int32 null"),
        ("max", "?int32 null"),
        ("argmin", "?int64 null"),
        ("argmax", "?int64 null"),
        ("mean", "?float64 null"),
        ("var", "?float64 null"),
        ("std", "?float64 null"),
    ] {
        assert_eq!(reduce(name, &none, None, false), want, "{name}");
    }
}

#[test]
fn option_sources_over_fixed_dims() {
    let x = a("2 * 3 * ?int32", "[[1, null, 3], [null, null, -6]]");
    assert_eq!(reduce("sum", &x, Some(&[0]), false), "3 * int64 [1,0,-3]");
    assert_eq!(
        reduce("min", &x, Some(&[0]), false),
        "3 * ?int32 [1,null,-6]"
    );
    assert_eq!(
        reduce("max", &x, Some(&[-1]), true),
        "2 * 1 * ?int32 [[3],[-6]]"
    );
    assert_eq!(
        reduce("argmax", &x, Some(&[0]), false),
        "3 * ?int64 [0,null,0]"
    );
    // Several reduced dims: NumPy's flat index, in C order.
    assert_eq!(reduce("argmin", &x, None, false), "?int64 5");
    assert_eq!(reduce("argmax", &x, Some(&[0, 1]), false), "?int64 2");
    assert_eq!(
        reduce("mean", &x, Some(&[0]), false),
        "3 * ?float64 [1.0,null,-1.5]"
    );
    assert_eq!(
        reduce("count", &x, Some(&[0]), true),
        "1 * 3 * int64 [[1,0,2]]"
    );
    // The outer axis of a transposed view: a kept dim inside a reduced one.
    let t = x.index(&[Index::slice(None, None, -1)]).unwrap();
    assert_eq!(
        reduce("argmax", &t, Some(&[0]), false),
        "3 * ?int64 [1,null,1]"
    );
    assert_eq!(
        reduce("var", &t, Some(&[0]), false),
        "3 * ?float64 [0.0,null,20.25]"
    );
    // bool options.
    let b = a("4 * ?bool", "[true, null, false, null]");
    assert_eq!(reduce("all", &b, None, false), "bool false");
    assert_eq!(reduce("any", &b, None, false), "bool true");
    assert_eq!(reduce("count", &b, None, false), "int64 2");
    assert_eq!(reduce("sum", &b, None, false), "int64 1");
    assert_eq!(reduce("min", &b, None, false), "?bool false");
    assert_eq!(reduce("argmin", &b, None, false), "?int64 2");
    // A NaN in ?float64 is a value (only the NA payload is missing).
    let n = a("4 * ?float64", "[1, null, NaN, 2]");
    assert_eq!(reduce("max", &n, None, false), "?float64 NaN");
    assert_eq!(reduce("argmax", &n, None, false), "?int64 2");
    assert_eq!(reduce("count", &n, None, false), "int64 3");
    // Plain sources over fixed dims are not optional.
    let p = a("2 * 2 * float64", "[[1, 4], [3, 2]]");
    assert_eq!(reduce("argmax", &p, None, false), "int64 1");
    assert_eq!(reduce("argmin", &p, Some(&[0]), false), "2 * int64 [0,1]");
    assert_eq!(
        reduce("var", &p, Some(&[-1]), false),
        "2 * float64 [2.25,0.25]"
    );
    assert_eq!(reduce("std", &p, None, false), "float64 1.118033988749895");
    assert_eq!(reduce("count", &p, Some(&[1]), false), "2 * int64 [2,2]");
}

#[test]
fn result_types_follow_design_6() {
    let f = |name: &str, t: &str| {
        let kind = BuiltinReduction::from_name(name).unwrap();
        kind.result_type(&dynd::Type::parse(t).unwrap())
            .map(|t| t.to_string())
            .unwrap_or_else(|e| format!("error[{:?}]", e.kind()))
    };
    #[rustfmt::skip]
    let table: &[(&str, [&str; 4])] = &[
        // name, over: int32, ?int32, ?float32, complex[float64]
        ("sum", ["int64", "int64", "float32", "complex[float64]"]),
        ("prod", ["int64", "int64", "float32", "complex[float64]"]),
        ("count", ["int64", "int64", "int64", "int64"]),
        ("all", ["bool", "bool", "bool", "bool"]),
        ("any", ["bool", "bool", "bool", "bool"]),
        ("min", ["int32", "?int32", "?float32", "error[Type]"]),
        ("max", ["int32", "?int32", "?float32", "error[Type]"]),
        ("argmin", ["int64", "?int64", "?int64", "error[Type]"]),
        ("argmax", ["int64", "?int64", "?int64", "error[Type]"]),
        ("mean", ["float64", "?float64", "?float64", "complex[float64]"]),
        ("var", ["float64", "?float64", "?float64", "error[Type]"]),
        ("std", ["float64", "?float64", "?float64", "error[Type]"]),
    ];
    for (name, want) in table {
        for (t, w) in ["int32", "?int32", "?float32", "complex[float64]"]
            .iter()
            .zip(want)
        {
            assert_eq!(f(name, t), *w, "{name} of {t}");
        }
    }
    // A reduced var dim makes min ... std optional; a reduced fixed dim does not.
    let v = a("2 * var * int16", "[[1, 2], []]");
    let fx = a("2 * 2 * int16", "[[1, 2], [3, 4]]");
    for kind in BuiltinReduction::ALL {
        let name = kind.name();
        let on_var = reduce(name, &v, Some(&[-1]), false);
        let on_fixed = reduce(name, &fx, Some(&[-1]), false);
        assert_eq!(
            on_var.contains('?'),
            kind.optional_result(),
            "{name}: {on_var}"
        );
        assert!(!on_fixed.contains('?'), "{name}: {on_fixed}");
        // Reducing the fixed dim outside the var one keeps the var dim.
        assert!(!reduce(name, &v, Some(&[0]), false).contains('?') || kind.optional_result());
    }
}

#[test]
fn unequal_var_rows_combine_position_by_position() {
    let x = a("2 * var * int32", "[[1, 2, 3], [4]]");
    assert_eq!(reduce("sum", &x, Some(&[0]), false), "var * int64 [5,2,3]");
    assert_eq!(
        reduce("sum", &x, Some(&[-2]), true),
        "1 * var * int64 [[5,2,3]]"
    );
    assert_eq!(reduce("max", &x, Some(&[0]), false), "var * int32 [4,2,3]");
    assert_eq!(
        reduce("count", &x, Some(&[0]), false),
        "var * int64 [2,1,1]"
    );
    // A longer row later, an empty one, and missing values.
    let y = a("4 * var * ?float64", "[[1], [], [null, 2, 3], [4, null]]");
    assert_eq!(
        reduce("sum", &y, Some(&[0]), false),
        "var * float64 [5.0,2.0,3.0]"
    );
    assert_eq!(
        reduce("min", &y, Some(&[0]), false),
        "var * ?float64 [1.0,2.0,3.0]"
    );
    assert_eq!(
        reduce("prod", &y, Some(&[0]), false),
        "var * float64 [4.0,2.0,3.0]"
    );
    assert_eq!(
        reduce("any", &y, Some(&[0]), false),
        "var * bool [true,true,true]"
    );
    // Nested: rows of rows.
    let n = a("2 * var * var * int32", "[[[1], [2, 3]], [[4, 5, 6]]]");
    assert_eq!(
        reduce("sum", &n, Some(&[0]), false),
        "var * var * int64 [[5,5,6],[2,3]]"
    );
    // All rows empty: an empty output element.
    let e = a("2 * var * int32", "[[], []]");
    assert_eq!(reduce("sum", &e, Some(&[0]), false), "var * int64 []");
    // The stateful reductions too (see the next test).
    assert_eq!(
        reduce("argmax", &x, Some(&[0]), false),
        "var * int64 [1,0,0]"
    );
}

/// A reduction, its source type and JSON, axes, keepdims, and the result
/// (`type json`).
type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static [isize],
    bool,
    &'static str,
);

/// argmin, argmax, mean, var and std over a reduced dim whose kept var
/// elements have unequal lengths: position by position, as awkward does
/// (each value's position is its index in the reduced extent: the row
/// index). Checked against awkward 2.x where it has the case.
#[test]
fn stateful_reductions_combine_unequal_rows_position_by_position() {
    #[rustfmt::skip]
    let cases: &[Case] = &[
        // ak.argmax / ak.argmin(axis=0): [2,0,0] and [0,2,0].
        ("argmax", "3 * var * int32", "[[1,5,3],[4],[9,0]]", &[0], false, "var * int64 [2,0,0]"),
        ("argmin", "3 * var * int32", "[[1,5,3],[4],[9,0]]", &[0], false, "var * int64 [0,2,0]"),
        ("argmax", "3 * var * int32", "[[1,5,3],[4],[9,0]]", &[-2], true, "1 * var * int64 [[2,0,0]]"),
        // A position first seen in a later row counts from that row.
        ("argmax", "2 * var * int32", "[[4],[1,5]]", &[0], false, "var * int64 [0,1]"),
        ("argmin", "2 * var * int32", "[[4],[1,5]]", &[0], false, "var * int64 [1,1]"),
        // ak.mean / ak.var / ak.std(axis=0).
        ("mean", "2 * var * int32", "[[1,2,3],[5]]", &[0], false, "var * float64 [3.0,2.0,3.0]"),
        ("var", "2 * var * int32", "[[1,2,3],[5]]", &[0], false, "var * float64 [4.0,0.0,0.0]"),
        ("std", "2 * var * int32", "[[1,2,3],[5]]", &[0], false, "var * float64 [2.0,0.0,0.0]"),
        ("mean", "2 * var * int32", "[[1,2,3],[5]]", &[0], true, "1 * var * float64 [[3.0,2.0,3.0]]"),
        // Missing values are skipped; a position with none left is missing.
        ("argmax", "3 * var * ?float64", "[[1,null,3],[null],[9,0]]", &[0], false, "var * ?int64 [2,2,0]"),
        ("mean", "3 * var * ?float64", "[[1,null,3],[null],[9,0]]", &[0], false, "var * ?float64 [5.0,0.0,3.0]"),
        ("argmin", "2 * var * ?float64", "[[1,null],[2,null,7]]", &[0], false, "var * ?int64 [0,null,1]"),
        ("mean", "2 * var * ?float64", "[[1,null],[2,null,7]]", &[0], false, "var * ?float64 [1.5,null,7.0]"),
        ("std", "2 * var * ?float64", "[[1,null],[2,null,7]]", &[0], false, "var * ?float64 [0.5,null,0.0]"),
        // A reduced var dim: optional results (DESIGN §6), missing where a
        // kept fixed position got no value.
        ("argmax", "var * 2 * int32", "[[1,5],[4,2],[9,0]]", &[0], false, "2 * ?int64 [2,0]"),
        ("var", "var * 2 * int32", "[]", &[0], false, "2 * ?float64 [null,null]"),
        ("argmax", "var * var * int32", "[[1,5,3],[4],[9,0]]", &[0], false, "var * ?int64 [2,0,0]"),
        // Several reduced axes, fixed and var: positions are NumPy's flat
        // index over the reduced axes (row * 2 + column here).
        ("argmax", "3 * var * 2 * float64", "[[[1,2],[3,4]],[[5,6]],[[0,7],[9,1],[2,2]]]", &[0, 2], false, "var * int64 [5,4,4]"),
        ("mean", "3 * var * 2 * float64", "[[[1,2],[3,4]],[[5,6]],[[0,7],[9,1],[2,2]]]", &[0, 2], false, "var * float64 [3.5,4.25,2.0]"),
        ("var", "3 * var * 2 * float64", "[[[1,2],[3,4]],[[5,6]],[[0,7],[9,1],[2,2]]]", &[0, 2], false, "var * float64 [6.916666666666667,8.6875,0.0]"),
        ("argmin", "3 * var * 2 * float64", "[[[1,2],[3,4]],[[5,6]],[[0,7],[9,1],[2,2]]]", &[0, 2], true, "1 * var * 1 * int64 [[[4],[5],[4]]]"),
        ("argmax", "2 * 2 * var * int32", "[[[1,2],[3]],[[4],[5,6,7]]]", &[0, 1], false, "var * int64 [3,3,3]"),
        ("argmax", "var * 2 * var * int32", "[[[1],[2,3]],[[4,5,6],[]]]", &[0, 1], false, "var * ?int64 [2,2,2]"),
        // Nested rows: ak.argmax(axis=0) [[1,1,1],[0,0]], ak.mean(axis=0).
        ("argmax", "2 * var * var * int32", "[[[1],[2,3]],[[4,5,6]]]", &[0], false, "var * var * int64 [[1,1,1],[0,0]]"),
        ("mean", "2 * var * var * int32", "[[[1],[2,3]],[[4,5,6]]]", &[0], false, "var * var * float64 [[2.5,5.0,6.0],[2.0,3.0]]"),
        // ak.argmax(axis=1) [[1,1],[0,0,0]], ak.mean(axis=1).
        ("argmax", "2 * var * var * int32", "[[[1],[2,3]],[[4,5,6]]]", &[1], false, "2 * var * ?int64 [[1,1],[0,0,0]]"),
        ("mean", "2 * var * var * int32", "[[[1],[2,3]],[[4,5,6]]]", &[1], false, "2 * var * ?float64 [[1.5,3.0],[4.0,5.0,6.0]]"),
        // A reduced var dim inside another reduced one, below a kept dim:
        // the extent has no row size, so positions count the values
        // combined into the output element ([1] then [4,5,6]).
        ("argmax", "2 * var * var * int32", "[[[1],[2,3]],[[4,5,6]]]", &[0, 2], false, "var * ?int64 [3,1]"),
        ("var", "2 * var * var * int32", "[[[1],[2,3]],[[4,5,6]]]", &[0, 2], false, "var * ?float64 [3.5,0.25]"),
        // Empty rows: an empty output element.
        ("argmax", "2 * var * int32", "[[],[]]", &[0], false, "var * int64 []"),
        ("mean", "0 * var * int32", "[]", &[0], false, "var * float64 []"),
    ];
    for (name, tp, json, axes, keepdims, want) in cases {
        let x = a(tp, json);
        let got = reduce(name, &x, Some(axes), *keepdims);
        assert_eq!(&got, want, "{name} over {axes:?} of {tp} {json}");
    }
    // An empty fixed extent inside still has no identity (as NumPy's).
    let z = a("2 * var * 0 * float64", "[[[]],[]]");
    let e = reduce("argmax", &z, Some(&[0, 2]), false);
    assert!(
        e.starts_with("error[InvalidArgument]: argmax of an empty extent"),
        "{e}"
    );
}

#[test]
fn negative_axes_count_from_the_innermost() {
    let x = a("2 * 3 * float64", "[[1, 2, 3], [4, 5, 6]]");
    for (neg, pos) in [(-1isize, 1isize), (-2, 0)] {
        for name in ["sum", "max", "argmin", "mean", "std", "count"] {
            assert_eq!(
                reduce(name, &x, Some(&[neg]), false),
                reduce(name, &x, Some(&[pos]), false),
                "{name} {neg}"
            );
        }
    }
    assert_eq!(reduce("sum", &x, Some(&[-1, -2]), false), "float64 21.0");
    let e = reduce("sum", &x, Some(&[-3]), false);
    assert!(
        e.starts_with(
            "error[Index]: sum: axis -3 is out of range for 2 * 3 * float64, which has 2 dimensions"
        ),
        "{e}"
    );
    let e = reduce("min", &x, Some(&[2]), false);
    assert!(
        e.starts_with("error[Index]: min: axis 2 is out of range"),
        "{e}"
    );
    let e = reduce("sum", &x, Some(&[1, -1]), false);
    assert!(
        e.starts_with("error[Index]: sum: axis -1 is given twice"),
        "{e}"
    );
    // The registry's callables with options.
    let f = Reduction::builtin(BuiltinReduction::ArgMax).with(Some(&[-1]), true);
    let r = f.call(&[&x]).unwrap();
    assert_eq!(
        (r.tp().to_string(), r.to_json()),
        ("2 * 1 * int64".into(), "[[2],[2]]".into())
    );
}

#[test]
fn empty_fixed_extents() {
    let z = a("0 * float64", "[]");
    for name in ["min", "max", "argmin", "argmax"] {
        let e = reduce(name, &z, None, false);
        assert!(
            e.starts_with(&format!(
                "error[InvalidArgument]: {name} of an empty extent"
            )),
            "{e}"
        );
        assert!(e.contains("axis 0"), "{e}");
    }
    let z2 = a("2 * 0 * int32", "[[], []]");
    let e = reduce("min", &z2, Some(&[-1]), false);
    assert!(e.contains("axis 1"), "{e}");
    assert_eq!(reduce("sum", &z, None, false), "float64 0.0");
    assert_eq!(reduce("count", &z, None, false), "int64 0");
    // NumPy's mean, var and std of nothing: NaN.
    assert_eq!(reduce("mean", &z, None, false), "float64 NaN");
    assert_eq!(reduce("var", &z, None, false), "float64 NaN");
    // An optional source over a size-0 fixed dim: missing, as nothing is left.
    let zo = a("0 * ?float64", "[]");
    assert_eq!(reduce("min", &zo, None, false), "?float64 null");
    // Types that do not reduce.
    let c = a("2 * complex[float64]", "[[1, 2], [3, 4]]");
    assert!(reduce("argmax", &c, None, false).starts_with("error[Type]: argmax does not take"));
    assert_eq!(reduce("count", &c, None, false), "int64 2");
    let s = a("2 * ?string", r#"["a", null]"#);
    assert!(reduce("count", &s, None, false).starts_with("error[Type]"));
}

#[test]
fn reductions_are_registered_by_name() {
    let x = a("3 * ?int64", "[5, null, 9]");
    for (name, want) in [
        ("count", "int64 2"),
        ("argmax", "?int64 2"),
        ("argmin", "?int64 0"),
        ("var", "?float64 4.0"),
        ("std", "?float64 2.0"),
        ("sum", "int64 14"),
    ] {
        let f = lookup(name).unwrap();
        assert_eq!(f.name(), name);
        assert_eq!(show(f.call(&[&x])), want, "{name}");
    }
    // The substring count moved to count_substring.
    let s = lookup("count_substring").unwrap();
    assert_eq!(
        s.call(&[&Array::from("aaaa"), &Array::from("aa")])
            .unwrap()
            .to_json(),
        "2"
    );
}

// ---- property test: plain loops that skip missing values ----

/// The sum as the fold computes it (reduce/ops/fold.rs): a row of 8 or
/// more values puts element `j` of its first `n - n % 8` into lane
/// `j % 8` (a missing one adds nothing), combines the lanes pairwise, then
/// adds the rest in order; shorter rows add in order.
fn lane_sum(row: &[Option<f64>]) -> f64 {
    let v = |x: &Option<f64>| x.unwrap_or(0.0);
    if row.len() < 8 {
        return row.iter().fold(0.0, |s, x| s + v(x));
    }
    let body = row.len() - row.len() % 8;
    let mut lanes = [0.0f64; 8];
    for (j, x) in row[..body].iter().enumerate() {
        lanes[j % 8] += v(x);
    }
    let l = lanes;
    let mut s = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    for x in &row[body..] {
        s += v(x);
    }
    s
}

/// The present values of a row.
fn present(row: &[Option<f64>]) -> Vec<f64> {
    row.iter().flatten().copied().collect()
}

fn json_of(rows: &[Vec<Option<f64>>]) -> String {
    let row = |r: &Vec<Option<f64>>| {
        let v: Vec<String> = r
            .iter()
            .map(|x| x.map_or("null".into(), |x| format!("{x:?}")))
            .collect();
        format!("[{}]", v.join(","))
    };
    format!("[{}]", rows.iter().map(row).collect::<Vec<_>>().join(","))
}

/// A float64 element of a result, `None` for missing.
fn at(x: &Array, i: usize) -> Option<f64> {
    let e = x.index(&[i.into()]).unwrap();
    match e.to_json().as_str() {
        "null" => None,
        s => Some(s.parse().unwrap()),
    }
}

fn close(got: Option<f64>, want: Option<f64>, scale: f64) -> bool {
    match (got, want) {
        (Some(g), Some(w)) => (g - w).abs() <= 1e-12 * (w.abs().max(scale)),
        (g, w) => g.is_none() && w.is_none(),
    }
}

fn rows_strategy() -> impl Strategy<Value = Vec<Vec<Option<f64>>>> {
    let value = prop_oneof![
        1 => Just(None),
        4 => (-1.0e3f64..1.0e3).prop_map(Some),
        1 => (-8i32..8).prop_map(|i| Some(f64::from(i) * 0.25)),
    ];
    proptest::collection::vec(proptest::collection::vec(value, 0..40), 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn var_of_optional_float64_matches_plain_loops(rows in rows_strategy()) {
        let x = a(&format!("{} * var * ?float64", rows.len()), &json_of(&rows));
        let sum = r::sum(&x, Some(&[-1]), false).unwrap();
        let min = r::min(&x, Some(&[-1]), false).unwrap();
        let max = r::max(&x, Some(&[-1]), false).unwrap();
        let mean = r::mean(&x, Some(&[-1]), false).unwrap();
        let count = r::count(&x, Some(&[-1]), false).unwrap();
        let argmax = r::argmax(&x, Some(&[-1]), false).unwrap();
        let var = r::var(&x, Some(&[-1]), false).unwrap();
        let std = r::std(&x, Some(&[-1]), false).unwrap();
        for (i, row) in rows.iter().enumerate() {
            let p = present(row);
            let n = p.len();
            // Sums bit for bit, in the fold's lane order.
            prop_assert_eq!(at(&sum, i).unwrap().to_bits(), lane_sum(row).to_bits(), "sum row {}", i);
            let lo = p.iter().copied().reduce(f64::min);
            let hi = p.iter().copied().reduce(f64::max);
            prop_assert_eq!(at(&min, i), lo, "min row {}", i);
            prop_assert_eq!(at(&max, i), hi, "max row {}", i);
            prop_assert_eq!(at(&count, i), Some(n as f64), "count row {}", i);
            let first_max = hi.and_then(|h| row.iter().position(|x| *x == Some(h)));
            prop_assert_eq!(at(&argmax, i), first_max.map(|j| j as f64), "argmax row {}", i);
            let m = (n > 0).then(|| p.iter().sum::<f64>() / n as f64);
            let scale = p.iter().map(|x| x * x).sum::<f64>() / (n.max(1) as f64);
            prop_assert!(close(at(&mean, i), m, scale.sqrt()), "mean row {}: {:?} vs {:?}", i, at(&mean, i), m);
            let v = m.map(|m| p.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64);
            prop_assert!(close(at(&var, i), v, scale), "var row {}: {:?} vs {:?}", i, at(&var, i), v);
            prop_assert!(close(at(&std, i), v.map(f64::sqrt), scale.sqrt()), "std row {}", i);
        }
        // Over everything: rows in order, each folded in its lanes.
        let all: Vec<Option<f64>> = rows.concat();
        let p = present(&all);
        let total = rows.iter().fold(0.0, |s, r| s + lane_sum(r));
        let got = r::sum(&x, None, false).unwrap().to_json();
        prop_assert_eq!(got.parse::<f64>().unwrap().to_bits(), total.to_bits());
        let hi = p.iter().copied().reduce(f64::max);
        let got = r::argmax(&x, None, false).unwrap().to_json();
        let want = hi.and_then(|h| all.iter().position(|x| *x == Some(h)));
        prop_assert_eq!(got, want.map_or("null".into(), |j| j.to_string()));
        let got = r::mean(&x, None, false).unwrap();
        let m = (!p.is_empty()).then(|| p.iter().sum::<f64>() / p.len() as f64);
        let scale = (p.iter().map(|x| x * x).sum::<f64>() / (p.len().max(1) as f64)).sqrt();
        let g = match got.to_json().as_str() { "null" => None, s => Some(s.parse::<f64>().unwrap()) };
        prop_assert!(close(g, m, scale), "mean {:?} vs {:?}", g, m);
        let got = r::count(&x, None, false).unwrap().to_json();
        prop_assert_eq!(got, p.len().to_string());
    }

    /// Over axis 0 of `N * var * ?float64` the rows combine position by
    /// position: output position `i` reduces `rows[j][i]` for every row
    /// `j` long enough, skipping missing values; argmin and argmax give
    /// the row index `j`. Means compare within 1e-12 of the mean square's
    /// root; var and std (merged value by value with Chan's formula, the
    /// loop's in two passes) within 1e-12 of the mean square.
    #[test]
    fn stateful_reductions_over_axis_0_match_plain_loops(rows in rows_strategy()) {
        let x = a(&format!("{} * var * ?float64", rows.len()), &json_of(&rows));
        let got = |name: &str| {
            let kind = BuiltinReduction::from_name(name).unwrap();
            Reduction::builtin(kind).apply(&x, Some(&[0]), false).unwrap()
        };
        let (argmin, argmax) = (got("argmin"), got("argmax"));
        let (mean, var, std) = (got("mean"), got("var"), got("std"));
        let len = rows.iter().map(Vec::len).max().unwrap_or(0);
        for (r, want) in [(&argmin, "var * ?int64"), (&argmax, "var * ?int64"), (&mean, "var * ?float64"), (&var, "var * ?float64"), (&std, "var * ?float64")] {
            prop_assert_eq!(r.tp().to_string(), want);
            prop_assert_eq!(r.len().unwrap(), len);
        }
        for i in 0..len {
            // (row, value) of the present values at position i.
            let col: Vec<(usize, f64)> = rows
                .iter()
                .enumerate()
                .filter_map(|(j, r)| r.get(i).copied().flatten().map(|v| (j, v)))
                .collect();
            let first = |better: fn(f64, f64) -> bool| {
                col.iter().copied().reduce(|b, c| if better(c.1, b.1) { c } else { b }).map(|(j, _)| j as f64)
            };
            prop_assert_eq!(at(&argmin, i), first(|c, b| c < b), "argmin position {}", i);
            prop_assert_eq!(at(&argmax, i), first(|c, b| c > b), "argmax position {}", i);
            let n = col.len() as f64;
            let m = (!col.is_empty()).then(|| col.iter().map(|c| c.1).sum::<f64>() / n);
            let scale = col.iter().map(|c| c.1 * c.1).sum::<f64>() / n.max(1.0);
            prop_assert!(close(at(&mean, i), m, scale.sqrt()), "mean position {}: {:?} vs {:?}", i, at(&mean, i), m);
            let v = m.map(|m| col.iter().map(|c| (c.1 - m) * (c.1 - m)).sum::<f64>() / n);
            prop_assert!(close(at(&var, i), v, scale), "var position {}: {:?} vs {:?}", i, at(&var, i), v);
            prop_assert!(close(at(&std, i), v.map(f64::sqrt), scale.sqrt()), "std position {}", i);
        }
    }
}

#[test]
fn large_reductions_agree_across_thread_counts() {
    // 400 x 1000 values (past the parallel threshold), every 7th missing.
    let (rows, cols) = (400usize, 1000usize);
    let text: Vec<String> = (0..rows)
        .map(|i| {
            let r: Vec<String> = (0..cols)
                .map(|j| {
                    let k = i * cols + j;
                    if k % 7 == 3 {
                        "null".into()
                    } else {
                        format!("{}", ((k * 37) % 1001) as f64 * 0.5 - 200.0)
                    }
                })
                .collect();
            format!("[{}]", r.join(","))
        })
        .collect();
    let x = a(
        &format!("{rows} * {cols} * ?float64"),
        &format!("[{}]", text.join(",")),
    );
    let pool = |n: usize| dynd::exec::Executor::Threads(n);
    for name in ["sum", "max", "argmax", "argmin", "mean", "var", "count"] {
        for axes in [Some(&[-1isize][..]), Some(&[0][..]), None] {
            let one = pool(1).install(|| reduce(name, &x, axes, false));
            let four = pool(4).install(|| reduce(name, &x, axes, false));
            assert_eq!(one, four, "{name} over {axes:?}");
            assert!(!one.starts_with("error"), "{name}: {one}");
        }
    }
}

#[test]
fn argmin_argmax_of_a_long_run_agree_across_thread_counts() {
    // 300K values in one run: the best values tie (the first wins), and a
    // NaN late in the run wins argmax.
    let n = 300_000usize;
    let mut v: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64).collect();
    let (lo, hi) = (
        v.iter().position(|&x| x == 0.0).unwrap(),
        v.iter().position(|&x| x == 999.0).unwrap(),
    );
    let x = Array::from(v.clone());
    let pool = |t: usize| dynd::exec::Executor::Threads(t);
    for t in [1, 4] {
        let got = pool(t).install(|| {
            (
                r::argmin(&x, None, false).unwrap().to_json(),
                r::argmax(&x, None, false).unwrap().to_json(),
            )
        });
        assert_eq!(got, (lo.to_string(), hi.to_string()), "{t} threads");
    }
    v[250_000] = f64::NAN;
    let x = Array::from(v);
    for t in [1, 4] {
        let got = pool(t).install(|| r::argmax(&x, None, false).unwrap().to_json());
        assert_eq!(got, "250000", "{t} threads");
    }
}

/// Reductions that keep a var dim, into an output given whose rows hold
/// other values and other lengths (longer, shorter, equal): the output
/// ends as the new result does, for every built-in reduction — no position
/// keeps or accumulates onto the value it held (a bug once: positions past
/// the first row's length added onto the output's old values).
#[test]
fn reductions_keeping_a_var_dim_into_an_output_given_equal_a_new_result() {
    // Each source, and outputs' rows (`X` a value) longer than the
    // result's, shorter, and as long.
    let cases: [(&str, &str, [&str; 3]); 3] = [
        (
            "3 * var * int32",
            "[[1, 2], [3, 4, 5], []]",
            ["[X,X,X,X,X]", "[X]", "[X,X,X]"],
        ),
        (
            "3 * 2 * var * ?float64",
            "[[[1, 2], []], [[3, null, 5], [6, 7]], [[], [8, 9, 10]]]",
            ["[[X,X,X,X],[X,X,X,X,X]]", "[[X],[]]", "[[X,X,X],[X,X,X]]"],
        ),
        (
            "2 * var * var * int32",
            "[[[1], [2, 3]], [[4, 5, 6]]]",
            ["[[X,X,X,X],[X,X,X],[X]]", "[[X]]", "[[X,X,X],[X,X]]"],
        ),
    ];
    let mut compared = 0;
    for (tp, json, outs) in cases {
        let x = a(tp, json);
        for kind in BuiltinReduction::ALL {
            let f = Reduction::builtin(kind).with(Some(&[0]), false);
            let expected = f.call(&[&x]).unwrap();
            let t = expected.tp().to_string();
            let value = if t.ends_with("bool") { "true" } else { "7" };
            for out in outs {
                let out_json = out.replace('X', value);
                let given = Array::from_json(t.as_str(), &out_json).unwrap();
                f.call_into(&given, &[&x]).unwrap();
                assert_eq!(
                    given.to_json(),
                    expected.to_json(),
                    "{} of {tp} into {out_json}",
                    kind.name()
                );
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 3 * 12 * 3);
}
