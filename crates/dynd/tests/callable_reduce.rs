//! Reductions: sum, prod, min, max, mean, all, any and user reductions,
//! over fixed and var dims, checked against a plain Rust reference;
//! parallel and serial runs agree bit for bit.

use crate::common;
use common::{a, assert_error, ok};

use dynd::callable::reduce::{BuiltinReduction, Reduction, reduce_with};
use dynd::callable::{Callable, lookup};
use dynd::compute as reduce;
use dynd::kernels::assign::ErrorMode;
use dynd::{Array, ErrorKind, Index, Type};
use proptest::prelude::*;

fn err(r: dynd::Result<Array>) -> dynd::Error {
    match r {
        Ok(v) => panic!("expected an error, got {v}"),
        Err(e) => e,
    }
}

// ---- the reference cases: fixed, var and mixed dims, keepdims ----

#[test]
fn sum_over_fixed_var_and_mixed_dims() {
    let x = a("2 * 3 * float64", "[[1.5,2,7],[-2.25,7,2.125]]");
    assert_eq!(
        ok(reduce::sum(&x, Some(&[1]), false)),
        ("2 * float64".into(), "[10.5,6.875]".into())
    );
    assert_eq!(
        ok(reduce::sum(&x, Some(&[1]), true)),
        ("2 * 1 * float64".into(), "[[10.5],[6.875]]".into())
    );
    let v = a("3 * var * int32", "[[1,2],[3,4,5],[6,7,8,9]]");
    assert_eq!(
        ok(reduce::sum(&v, Some(&[1]), false)),
        ("3 * int64".into(), "[3,12,30]".into())
    );
}

#[test]
fn fixed_dims_axis_by_axis() {
    let x = a("2 * 3 * int32", "[[1,2,3],[4,5,6]]");
    let cases: &[(Option<&[isize]>, bool, &str, &str)] = &[
        (None, false, "int64", "21"),
        (None, true, "1 * 1 * int64", "[[21]]"),
        (Some(&[0]), false, "3 * int64", "[5,7,9]"),
        (Some(&[0]), true, "1 * 3 * int64", "[[5,7,9]]"),
        (Some(&[1]), false, "2 * int64", "[6,15]"),
        (Some(&[0, 1]), false, "int64", "21"),
        (Some(&[1, 0]), false, "int64", "21"),
        (Some(&[]), false, "2 * 3 * int64", "[[1,2,3],[4,5,6]]"),
    ];
    for &(axes, keep, tp, json) in cases {
        assert_eq!(
            ok(reduce::sum(&x, axes, keep)),
            (tp.to_string(), json.to_string()),
            "sum over {axes:?} keepdims={keep}"
        );
    }
    assert_eq!(
        ok(reduce::prod(&x, Some(&[0]), false)),
        ("3 * int64".into(), "[4,10,18]".into())
    );
    assert_eq!(
        ok(reduce::min(&x, Some(&[1]), false)),
        ("2 * int32".into(), "[1,4]".into())
    );
    assert_eq!(
        ok(reduce::max(&x, Some(&[0]), true)),
        ("1 * 3 * int32".into(), "[[4,5,6]]".into())
    );
}

#[test]
fn three_d_cases() {
    // x[i][j][k] = 100 i + 10 j + k, shape 2 × 3 × 4.
    let mut rows = Vec::new();
    for i in 0..2 {
        let mut m = Vec::new();
        for j in 0..3 {
            let r: Vec<String> = (0..4).map(|k| (100 * i + 10 * j + k).to_string()).collect();
            m.push(format!("[{}]", r.join(",")));
        }
        rows.push(format!("[{}]", m.join(",")));
    }
    let x = a("2 * 3 * 4 * int32", &format!("[{}]", rows.join(",")));
    let cases: &[(&[isize], &str, &str)] = &[
        (
            &[0],
            "3 * 4 * int64",
            "[[100,102,104,106],[120,122,124,126],[140,142,144,146]]",
        ),
        (&[1], "2 * 4 * int64", "[[30,33,36,39],[330,333,336,339]]"),
        (&[2], "2 * 3 * int64", "[[6,46,86],[406,446,486]]"),
        (&[0, 2], "3 * int64", "[412,492,572]"),
        (&[0, 1], "4 * int64", "[360,366,372,378]"),
        (&[1, 2], "2 * int64", "[138,1338]"),
        (&[0, 1, 2], "int64", "1476"),
    ];
    for &(axes, tp, json) in cases {
        assert_eq!(
            ok(reduce::sum(&x, Some(axes), false)),
            (tp.to_string(), json.to_string()),
            "sum over {axes:?}"
        );
    }
    assert_eq!(
        ok(reduce::max(&x, Some(&[0, 2]), true)),
        ("1 * 3 * 1 * int32".into(), "[[[103],[113],[123]]]".into())
    );
}

// ---- result types ----

#[test]
fn result_types_follow_the_table() {
    let table: &[(&str, [&str; 7])] = &[
        // source: sum, prod, min, max, mean, all, any
        (
            "bool",
            ["int64", "int64", "bool", "bool", "float64", "bool", "bool"],
        ),
        (
            "int8",
            ["int64", "int64", "int8", "int8", "float64", "bool", "bool"],
        ),
        (
            "int16",
            [
                "int64", "int64", "int16", "int16", "float64", "bool", "bool",
            ],
        ),
        (
            "int32",
            [
                "int64", "int64", "int32", "int32", "float64", "bool", "bool",
            ],
        ),
        (
            "int64",
            [
                "int64", "int64", "int64", "int64", "float64", "bool", "bool",
            ],
        ),
        (
            "int128",
            [
                "int128", "int128", "int128", "int128", "float64", "bool", "bool",
            ],
        ),
        (
            "uint8",
            [
                "uint64", "uint64", "uint8", "uint8", "float64", "bool", "bool",
            ],
        ),
        (
            "uint32",
            [
                "uint64", "uint64", "uint32", "uint32", "float64", "bool", "bool",
            ],
        ),
        (
            "uint64",
            [
                "uint64", "uint64", "uint64", "uint64", "float64", "bool", "bool",
            ],
        ),
        (
            "uint128",
            [
                "uint128", "uint128", "uint128", "uint128", "float64", "bool", "bool",
            ],
        ),
        (
            "float16",
            [
                "float16", "float16", "float16", "float16", "float64", "bool", "bool",
            ],
        ),
        (
            "float32",
            [
                "float32", "float32", "float32", "float32", "float64", "bool", "bool",
            ],
        ),
        (
            "float64",
            [
                "float64", "float64", "float64", "float64", "float64", "bool", "bool",
            ],
        ),
        (
            "complex[float32]",
            [
                "complex[float32]",
                "complex[float32]",
                "-",
                "-",
                "complex[float64]",
                "bool",
                "bool",
            ],
        ),
        (
            "complex[float64]",
            [
                "complex[float64]",
                "complex[float64]",
                "-",
                "-",
                "complex[float64]",
                "bool",
                "bool",
            ],
        ),
    ];
    for (src, results) in table {
        let x = Array::empty(format!("3 * {src}").as_str()).unwrap();
        for (kind, want) in BuiltinReduction::ALL.into_iter().zip(results) {
            let r = Reduction::builtin(kind).apply(&x, None, false);
            if *want == "-" {
                let e = err(r);
                assert_eq!(e.kind(), ErrorKind::Type, "{kind:?} of {src}: {e}");
                assert!(e.message().contains("order"), "{e}");
            } else {
                let r = r.unwrap_or_else(|e| panic!("{kind:?} of {src}: {e}"));
                assert_eq!(r.tp().to_string(), *want, "{kind:?} of {src}");
            }
        }
    }
    let e = err(reduce::sum(&a("2 * string", r#"["a","b"]"#), None, false));
    assert_error(&e, ErrorKind::Type, "string");
}

#[test]
fn values_of_each_kind() {
    let b = a("5 * bool", "[true,false,true,true,false]");
    assert_eq!(ok(reduce::sum(&b, None, false)).1, "3");
    assert_eq!(ok(reduce::prod(&b, None, false)).1, "0");
    assert_eq!(ok(reduce::min(&b, None, false)).1, "false");
    assert_eq!(ok(reduce::max(&b, None, false)).1, "true");
    assert_eq!(ok(reduce::mean(&b, None, false)).1, "0.6");
    let f16 = a("4 * float16", "[0.5,1.5,2.25,-1]");
    assert_eq!(
        ok(reduce::sum(&f16, None, false)),
        ("float16".into(), "3.25".into())
    );
    let u = a("3 * uint8", "[200,100,255]");
    assert_eq!(
        ok(reduce::sum(&u, None, false)),
        ("uint64".into(), "555".into())
    );
    let big = a("2 * int64", "[9223372036854775807,1]");
    assert_eq!(ok(reduce::sum(&big, None, false)).1, "-9223372036854775808");
    let c = a("2 * complex[float64]", "[[1,2],[3,-1]]");
    assert_eq!(ok(reduce::sum(&c, None, false)).1, "[4.0,1.0]");
    assert_eq!(ok(reduce::prod(&c, None, false)).1, "[5.0,5.0]");
    assert_eq!(ok(reduce::mean(&c, None, false)).1, "[2.0,0.5]");
    assert_eq!(ok(reduce::any(&c, None, false)).1, "true");
    let n = a("4 * float64", "[1,NaN,-3,2]");
    assert_eq!(ok(reduce::min(&n, None, false)).1, "NaN");
    assert_eq!(ok(reduce::max(&n, None, false)).1, "NaN");
    assert_eq!(ok(reduce::all(&n, None, false)).1, "true");
    let z = a("3 * float32", "[0,-0.0,0]");
    assert_eq!(ok(reduce::any(&z, None, false)).1, "false");
    let s = a("int32", "7");
    assert_eq!(
        ok(reduce::sum(&s, None, false)),
        ("int64".into(), "7".into())
    );
}

// ---- var dims ----

#[test]
fn var_dims() {
    let v = a("3 * var * int32", "[[1,2],[3,4,5],[6,7,8,9]]");
    let cases: &[(Option<&[isize]>, bool, &str, &str)] = &[
        (None, false, "int64", "45"),
        (Some(&[0, 1]), false, "int64", "45"),
        (Some(&[1]), true, "3 * 1 * int64", "[[3],[12],[30]]"),
        (
            Some(&[]),
            false,
            "3 * var * int64",
            "[[1,2],[3,4,5],[6,7,8,9]]",
        ),
    ];
    for &(axes, keep, tp, json) in cases {
        assert_eq!(
            ok(reduce::sum(&v, axes, keep)),
            (tp.to_string(), json.to_string()),
            "sum over {axes:?}"
        );
    }
    assert_eq!(ok(reduce::max(&v, Some(&[1]), false)).1, "[2,5,9]");
    assert_eq!(ok(reduce::mean(&v, Some(&[1]), false)).1, "[1.5,4.0,7.5]");
    assert_eq!(ok(reduce::mean(&v, None, false)).1, "5.0");

    // A fixed dim inside a var dim, reduced either way.
    let w = a("2 * var * 3 * int32", "[[[1,2,3],[4,5,6]],[[7,8,9]]]");
    let cases: &[(&[isize], &str, &str)] = &[
        (&[1], "2 * 3 * int64", "[[5,7,9],[7,8,9]]"),
        (&[2], "2 * var * int64", "[[6,15],[24]]"),
        (&[1, 2], "2 * int64", "[21,24]"),
        (&[0, 1], "3 * int64", "[12,15,18]"),
        (&[0, 1, 2], "int64", "45"),
    ];
    for &(axes, tp, json) in cases {
        assert_eq!(
            ok(reduce::sum(&w, Some(axes), false)),
            (tp.to_string(), json.to_string()),
            "sum over {axes:?}"
        );
    }
    // Empty var elements: identities, and missing values for mean/min/max.
    let e = a("3 * var * int32", "[[1,2],[],[5]]");
    assert_eq!(ok(reduce::sum(&e, Some(&[1]), false)).1, "[3,0,5]");
    assert_eq!(ok(reduce::prod(&e, Some(&[1]), false)).1, "[2,1,5]");
    assert_eq!(ok(reduce::all(&e, Some(&[1]), false)).1, "[true,true,true]");
    assert_eq!(
        ok(reduce::any(&e, Some(&[1]), false)).1,
        "[true,false,true]"
    );
    assert_eq!(
        ok(reduce::mean(&e, Some(&[1]), false)),
        ("3 * ?float64".into(), "[1.5,null,5.0]".into())
    );
    assert_eq!(
        ok(reduce::min(&e, Some(&[1]), false)),
        ("3 * ?int32".into(), "[1,null,5]".into())
    );
    assert_eq!(
        ok(reduce::max(&e, None, false)),
        ("?int32".into(), "5".into())
    );
    // An output element's values may start in any row.
    let late = a("3 * var * int32", "[[],[],[4,2]]");
    assert_eq!(ok(reduce::min(&late, None, false)).1, "2");
    let none = a("2 * var * int32", "[[],[]]");
    assert_eq!(ok(reduce::min(&none, None, false)).1, "null");
    let rows = a("2 * 2 * var * int32", "[[[1],[2,3]],[[4],[]]]");
    assert_eq!(ok(reduce::max(&rows, Some(&[0, 2]), false)).1, "[4,3]");
    // ... also across a kept dim between reduced axes: an empty first row
    // leaves the output missing until a later row gives it a value.
    let rows = a("2 * 2 * var * int32", "[[[1],[]],[[4],[5]]]");
    assert_eq!(ok(reduce::max(&rows, Some(&[0, 2]), false)).1, "[4,5]");
    assert_eq!(ok(reduce::sum(&rows, Some(&[0, 2]), false)).1, "[5,5]");
}

#[test]
fn reducing_across_var_rows() {
    let same = a("3 * var * int32", "[[1,2],[3,4],[5,6]]");
    assert_eq!(
        ok(reduce::sum(&same, Some(&[0]), false)),
        ("var * int64".into(), "[9,12]".into())
    );
    assert_eq!(
        ok(reduce::min(&same, Some(&[0]), true)),
        ("1 * var * int32".into(), "[[1,2]]".into())
    );
    // Unequal rows combine position by position, as awkward does.
    let ragged = a("3 * var * int32", "[[1,2],[3,4,5],[6,7,8,9]]");
    assert_eq!(
        ok(reduce::sum(&ragged, Some(&[0]), false)),
        ("var * int64".into(), "[10,13,13,9]".into())
    );
    assert_eq!(
        ok(reduce::max(&ragged, Some(&[0]), false)),
        ("var * int32".into(), "[6,7,8,9]".into())
    );
    // Nested: reduce the outer var dim across equal inner var rows.
    let n = a("2 * var * var * int32", "[[[1],[2,3]],[[4],[5,6]]]");
    assert_eq!(
        ok(reduce::sum(&n, Some(&[0]), false)),
        ("var * var * int64".into(), "[[5],[7,9]]".into())
    );
    assert_eq!(
        ok(reduce::sum(&n, Some(&[2]), false)),
        ("2 * var * int64".into(), "[[1,5],[4,11]]".into())
    );
    assert_eq!(
        ok(reduce::sum(&n, Some(&[1, 2]), false)),
        ("2 * int64".into(), "[6,15]".into())
    );
    // A mean over var dims into fixed outputs counts per output.
    let c = a("2 * 2 * var * int32", "[[[1,2],[3]],[[4],[5,6,7]]]");
    assert_eq!(
        ok(reduce::mean(&c, Some(&[0, 2]), false)),
        ("2 * ?float64".into(), "[2.3333333333333335,5.25]".into())
    );
    // ... and into var outputs, position by position (a count per output
    // element): [1] and [4], then [2,3] and [5,6].
    assert_eq!(
        ok(reduce::mean(&n, Some(&[0, 2]), false)),
        ("var * ?float64".into(), "[2.5,4.0]".into())
    );
}

// ---- empty extents ----

#[test]
fn empty_extents() {
    let z = a("0 * int32", "[]");
    assert_eq!(ok(reduce::sum(&z, None, false)).1, "0");
    assert_eq!(ok(reduce::prod(&z, None, false)).1, "1");
    assert_eq!(ok(reduce::all(&z, None, false)).1, "true");
    assert_eq!(ok(reduce::any(&z, None, false)).1, "false");
    assert_eq!(ok(reduce::mean(&z, None, false)).1, "NaN");
    for f in [reduce::min, reduce::max] {
        let e = err(f(&z, None, false));
        assert_error(&e, ErrorKind::InvalidArgument, "no identity");
    }
    let z2 = Array::empty("0 * 3 * float64").unwrap();
    assert_eq!(
        ok(reduce::sum(&z2, Some(&[0]), false)),
        ("3 * float64".into(), "[0.0,0.0,0.0]".into())
    );
    assert_eq!(
        ok(reduce::sum(&z2, Some(&[1]), false)),
        ("0 * float64".into(), "[]".into())
    );
    // No output element is left without a value: no error.
    assert_eq!(ok(reduce::max(&z2, Some(&[1]), false)).1, "[]");
    assert_eq!(
        err(reduce::max(&z2, Some(&[0]), false)).kind(),
        ErrorKind::InvalidArgument
    );
}

// ---- axes ----

#[test]
fn bad_axes_are_index_errors() {
    let x = a("2 * 3 * float64", "[[1,2,3],[4,5,6]]");
    let e = err(reduce::sum(&x, Some(&[2]), false));
    assert_error(&e, ErrorKind::Index, "axis 2");
    assert!(e.message().contains("2 * 3 * float64"), "{e}");
    let e = err(reduce::max(&x, Some(&[1, 0, 1]), false));
    assert_error(&e, ErrorKind::Index, "axis 1 is given twice");
    // Negative axes count from the innermost; out of range names the axis
    // and the ndim.
    assert_eq!(
        ok(reduce::max(&x, Some(&[-1, 0]), false)),
        ok(reduce::max(&x, Some(&[1, 0]), false))
    );
    let e = err(reduce::sum(&x, Some(&[-3]), false));
    assert_error(&e, ErrorKind::Index, "axis -3");
    assert!(e.message().contains("2 dimensions"), "{e}");
    let e = err(reduce::sum(&x, Some(&[-1, 1]), false));
    assert!(e.message().contains("given twice"), "{e}");
    let e = err(reduce::sum(&a("int32", "1"), Some(&[0]), false));
    assert_eq!(e.kind(), ErrorKind::Index);
}

// ---- views ----

#[test]
fn strided_reversed_and_permuted_views() {
    let data: Vec<String> = (0..6)
        .map(|i| {
            let r: Vec<String> = (0..8).map(|j| (i * 8 + j * 3 - 7).to_string()).collect();
            format!("[{}]", r.join(","))
        })
        .collect();
    let x = a("6 * 8 * int64", &format!("[{}]", data.join(",")));
    let views = [
        x.index(&[Index::slice(None, None, -1), Index::slice(None, None, 2)])
            .unwrap(),
        x.index(&[
            Index::slice(Some(1), Some(5), 3),
            Index::slice(None, None, -3),
        ])
        .unwrap(),
        x.permute(&[1, 0]).unwrap(),
        x.index(&[Index::ALL, Index::slice(Some(2), Some(3), 1)])
            .unwrap(),
    ];
    for v in &views {
        let dense = v.copy().unwrap();
        for axes in [None, Some(&[0][..]), Some(&[1][..]), Some(&[0, 1][..])] {
            for kind in BuiltinReduction::ALL {
                for keep in [false, true] {
                    let r = Reduction::builtin(kind);
                    assert_eq!(
                        ok(r.apply(v, axes, keep)),
                        ok(r.apply(&dense, axes, keep)),
                        "{kind:?} over {axes:?} of {v}"
                    );
                }
            }
        }
    }
}

#[test]
fn call_into_a_strided_output() {
    let x = a("2 * 3 * float64", "[[1.5,2,7],[-2.25,7,2.125]]");
    let out = Array::empty("2 * 2 * float64").unwrap();
    let col = out.index(&[Index::ALL, Index::At(1)]).unwrap();
    let f = Reduction::builtin(BuiltinReduction::Sum).with(Some(&[1]), false);
    f.call_into(&col, &[&x]).unwrap();
    assert_eq!(out.to_json(), "[[0.0,10.5],[0.0,6.875]]");
    let bad = Array::empty("2 * float32").unwrap();
    assert_eq!(
        f.call_into(&bad, &[&x]).unwrap_err().kind(),
        ErrorKind::Type
    );
}

// ---- callables ----

#[test]
fn registered_callables_reduce_everything() {
    let x = a("2 * 3 * int32", "[[1,2,3],[4,5,6]]");
    let cases = [
        ("sum", "21"),
        ("prod", "720"),
        ("min", "1"),
        ("max", "6"),
        ("mean", "3.5"),
        ("all", "true"),
        ("any", "true"),
    ];
    for (name, want) in cases {
        let f = lookup(name).unwrap();
        assert!(!f.is_scalar(), "{name}");
        assert_eq!(f.name(), name);
        assert_eq!(f.call(&[&x]).unwrap().to_json(), want, "{name}");
    }
    let f = lookup("sum").unwrap();
    assert_eq!(
        f.call(&[&x, &x]).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let g = Reduction::builtin(BuiltinReduction::Mean).with(Some(&[0]), true);
    assert_eq!(
        g.resolve(&[Type::parse("2 * 3 * int32").unwrap()])
            .unwrap()
            .to_string(),
        "1 * 3 * float64"
    );
}

#[test]
fn user_reductions() {
    let max2 = Callable::from_fn2("max2", |a: i32, b: i32| a.max(b));
    let r = reduce_with(&max2, None).unwrap();
    let v = a("3 * var * int32", "[[1,20],[3,4,5],[-6,-7]]");
    // The same values (a user reduction's result is never optional).
    assert_eq!(
        ok(r.apply(&v, Some(&[1]), false)).1,
        ok(reduce::max(&v, Some(&[1]), false)).1
    );
    assert_eq!(ok(r.apply(&v, None, false)), ("int32".into(), "20".into()));
    let x = a("2 * 3 * int32", "[[1,9,3],[7,5,6]]");
    for axes in [None, Some(&[0][..]), Some(&[1][..])] {
        for keep in [false, true] {
            assert_eq!(
                ok(r.apply(&x, axes, keep)),
                ok(reduce::max(&x, axes, keep)),
                "{axes:?}"
            );
        }
    }
    // No identity: an empty extent is an error; an identity fills it,
    // converted to the element type.
    let e = a("2 * var * int32", "[[1,2],[]]");
    assert_eq!(
        err(r.apply(&e, Some(&[1]), false)).kind(),
        ErrorKind::InvalidArgument
    );
    let with_id = reduce_with(&max2, Some(&Array::from(i64::from(i32::MIN)))).unwrap();
    assert_eq!(
        ok(with_id.apply(&e, Some(&[1]), false)).1,
        "[2,-2147483648]"
    );
    let bad_id = reduce_with(&max2, Some(&Array::from(1.5f64))).unwrap();
    assert_eq!(
        err(bad_id.apply(&e, Some(&[1]), false)).kind(),
        ErrorKind::Fractional
    );
    assert_eq!(
        Reduction::user("r", &max2, Some(&a("2 * int32", "[0,0]")))
            .err()
            .map(|e| e.kind()),
        Some(ErrorKind::InvalidArgument)
    );
    // Ops that do not compute (T, T) -> T for the elements are refused.
    let e = err(r.apply(&a("2 * float64", "[1,2]"), None, false));
    assert_eq!(e.kind(), ErrorKind::Type);
    let widen = Callable::from_fn2("widen", |a: i32, b: i32| a as i64 + b as i64);
    let e = err(reduce_with(&widen, None).unwrap().apply(&x, None, false));
    assert_error(&e, ErrorKind::Type, "int64");
    // The order is left to right: a non-commutative op shows it.
    let concat = Callable::from_fn2("digits", |a: i64, b: i64| a * 10 + b);
    let d = a("2 * 3 * int64", "[[1,2,3],[4,5,6]]");
    let r = reduce_with(&concat, None).unwrap();
    assert_eq!(ok(r.apply(&d, Some(&[1]), false)).1, "[123,456]");
    assert_eq!(ok(r.apply(&d, None, false)).1, "123456");
    assert_eq!(
        ok(r.apply(&d.permute(&[1, 0]).unwrap(), None, false)).1,
        "142536"
    );
    // Errors from the op stop the reduction.
    let checked = Callable::try_from_fn2("checked_add", |a: i32, b: i32| {
        a.checked_add(b)
            .ok_or_else(|| dynd::Error::overflow(format!("{a} + {b} overflows int32")))
    });
    let big = a("2 * int32", "[2147483647,1]");
    let e = err(reduce_with(&checked, None)
        .unwrap()
        .apply(&big, None, false));
    assert_eq!(e.kind(), ErrorKind::Overflow);
}

// ---- a plain Rust reference ----

/// The reduction of a C-order array of `shape` over `axes` (sorted
/// flags), as a C-order output of the kept dims; `None` when an output
/// element has an empty extent and `first` must start it (no identity).
fn reference<T: Copy>(
    shape: &[usize],
    data: &[T],
    reduced: &[bool],
    identity: Option<T>,
    op: impl Fn(T, T) -> T,
) -> Option<Vec<T>> {
    let out_shape: Vec<usize> = shape
        .iter()
        .zip(reduced)
        .filter(|(_, r)| !**r)
        .map(|(s, _)| *s)
        .collect();
    let out_len: usize = out_shape.iter().product();
    let mut out: Vec<Option<T>> = vec![identity; out_len];
    let mut idx = vec![0usize; shape.len()];
    for &x in data {
        let mut o = 0;
        for (d, (&i, &r)) in idx.iter().zip(reduced).enumerate() {
            if !r {
                o = o * shape[d] + i;
            }
        }
        out[o] = Some(match out[o] {
            None => x,
            Some(acc) => op(acc, x),
        });
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out.into_iter().collect()
}

/// A C-order array of `shape` holding `data`, of element type `dtype`.
fn array_of(shape: &[usize], data: &[i64], dtype: &str) -> Array {
    fn nest(shape: &[usize], data: &[i64]) -> String {
        match shape.split_first() {
            None => data[0].to_string(),
            Some((&n, rest)) => {
                let step: usize = rest.iter().product();
                let parts: Vec<String> = (0..n)
                    .map(|i| nest(rest, &data[i * step..(i + 1) * step]))
                    .collect();
                format!("[{}]", parts.join(","))
            }
        }
    }
    let tp: String = shape.iter().map(|n| format!("{n} * ")).collect::<String>() + dtype;
    a(&tp, &nest(shape, data))
}

/// The values of a fixed-dims result, C order, converted to `T`'s type.
fn values<T: dynd::types::NativeType>(r: &Array) -> Vec<T> {
    let dtype = r.tp().dtype().to_string();
    let target = Type::builtin(T::TYPE).to_string();
    let tp = Type::parse(&r.tp().to_string().replace(&dtype, &target)).unwrap();
    let c = r.cast(tp, ErrorMode::NoCheck).unwrap();
    let n: usize = c.shape().iter().map(|d| d.unwrap()).product();
    if n == 0 {
        return Vec::new();
    }
    // SAFETY: a fresh C-order array of n T.
    unsafe { std::slice::from_raw_parts(c.data_ptr().cast::<T>(), n) }.to_vec()
}

fn shape_and_data() -> impl Strategy<Value = (Vec<usize>, Vec<i64>, Vec<bool>)> {
    proptest::collection::vec(0usize..5, 0..5).prop_flat_map(|shape| {
        let n: usize = shape.iter().product();
        let nd = shape.len();
        (
            Just(shape),
            proptest::collection::vec(-50i64..50, n),
            proptest::collection::vec(any::<bool>(), nd),
        )
    })
}

fn check_against_reference(shape: &[usize], data: &[i64], reduced: &[bool], dtype: &str) {
    let x = array_of(shape, data, dtype);
    let axes: Vec<isize> = (0..shape.len())
        .filter(|&i| reduced[i])
        .map(|i| i as isize)
        .collect();
    let float = dtype.starts_with("float");
    let fdata: Vec<f64> = data.iter().map(|&v| v as f64).collect();
    type Case = (
        BuiltinReduction,
        Option<i64>,
        fn(i64, i64) -> i64,
        fn(f64, f64) -> f64,
    );
    let cases: [Case; 4] = [
        (
            BuiltinReduction::Sum,
            Some(0),
            |a, b| a.wrapping_add(b),
            |a, b| a + b,
        ),
        (
            BuiltinReduction::Prod,
            Some(1),
            |a, b| a.wrapping_mul(b),
            |a, b| a * b,
        ),
        (BuiltinReduction::Min, None, |a, b| a.min(b), f64::min),
        (BuiltinReduction::Max, None, |a, b| a.max(b), f64::max),
    ];
    for (kind, id, op, fop) in cases {
        let got = Reduction::builtin(kind).apply(&x, Some(&axes), false);
        let what = format!("{kind:?} over {axes:?} of {}", x.tp());
        if float {
            let want = reference(shape, &fdata, reduced, id.map(|v| v as f64), fop);
            match (got, want) {
                (Ok(r), Some(w)) => {
                    let g = values::<f64>(&r);
                    assert_eq!(g.len(), w.len(), "{what}");
                    for (g, w) in g.iter().zip(&w) {
                        assert!((g - w).abs() <= 1e-12 * w.abs(), "{what}: {g} vs {w}");
                    }
                }
                (Err(e), None) => assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}"),
                (got, want) => panic!("{what}: got {got:?}, want {want:?}"),
            }
        } else {
            let want = reference(shape, data, reduced, id, op);
            match (got, want) {
                (Ok(r), Some(w)) => assert_eq!(values::<i64>(&r), w, "{what}"),
                (Err(e), None) => assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}"),
                (got, want) => panic!("{what}: got {got:?}, want {want:?}"),
            }
        }
        // The same through keepdims: reduced dims stay, as 1.
        if let Ok(r) = Reduction::builtin(kind).apply(&x, Some(&axes), true) {
            let kept: Vec<Option<usize>> = shape
                .iter()
                .zip(reduced)
                .map(|(&n, &r)| Some(if r { 1 } else { n }))
                .collect();
            assert_eq!(r.shape(), kept, "{what}");
        }
    }
}

#[test]
fn table_against_the_reference() {
    let shapes: &[&[usize]] = &[
        &[7],
        &[3, 4],
        &[4, 1, 5],
        &[2, 3, 2, 3],
        &[0, 3],
        &[3, 0],
        &[1],
    ];
    for &shape in shapes {
        let n: usize = shape.iter().product();
        let data: Vec<i64> = (0..n as i64).map(|i| (i * 37 % 23) - 11).collect();
        for mask in 0..(1u32 << shape.len()) {
            let reduced: Vec<bool> = (0..shape.len()).map(|i| mask & (1 << i) != 0).collect();
            for dtype in ["int32", "int64", "float64", "int16"] {
                check_against_reference(shape, &data, &reduced, dtype);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_fixed_shapes_match_the_reference((shape, data, reduced) in shape_and_data()) {
        check_against_reference(&shape, &data, &reduced, "int32");
        check_against_reference(&shape, &data, &reduced, "float64");
    }
}

/// JSON of a list of integers.
fn list(v: &[i64]) -> String {
    let parts: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", parts.join(","))
}

/// The expected JSON (or `None`: an error of `kind`) of `kind` over
/// `axes` (a mask of {0, 1}) of the ragged rows.
fn ragged_reference(rows: &[Vec<i64>], mask: u8, max: bool) -> Result<String, ErrorKind> {
    // Max of nothing (over a var dim) is missing; the sum of nothing 0.
    let fold = |v: &[i64]| -> String {
        if max {
            v.iter()
                .copied()
                .max()
                .map_or("null".into(), |m| m.to_string())
        } else {
            v.iter().sum::<i64>().to_string()
        }
    };
    let join = |v: Vec<String>| format!("[{}]", v.join(","));
    match mask {
        0 => Ok(join(rows.iter().map(|r| list(r)).collect())),
        1 => {
            // Unequal rows combine position by position.
            let len = rows.iter().map(Vec::len).max().unwrap_or(0);
            Ok(join(
                (0..len)
                    .map(|j| {
                        fold(
                            &rows
                                .iter()
                                .filter_map(|r| r.get(j).copied())
                                .collect::<Vec<_>>(),
                        )
                    })
                    .collect(),
            ))
        }
        2 => Ok(join(rows.iter().map(|r| fold(r)).collect())),
        _ => Ok(fold(&rows.concat())),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_ragged_arrays_match_the_reference(
        rows in proptest::collection::vec(proptest::collection::vec(-20i64..20, 0..5), 0..6),
        mask in 0u8..4,
    ) {
        let json = format!("[{}]", rows.iter().map(|r| list(r)).collect::<Vec<_>>().join(","));
        let x = a(&format!("{} * var * int32", rows.len()), &json);
        let axes: Vec<isize> = (0..2).filter(|i| mask & (1 << i) != 0).collect();
        for (max, f) in [(false, reduce::sum as fn(&Array, Option<&[isize]>, bool) -> dynd::Result<Array>), (true, reduce::max)] {
            let got = f(&x, Some(&axes), false).map(|r| r.to_json()).map_err(|e| e.kind());
            prop_assert_eq!(got, ragged_reference(&rows, mask, max), "max={} over {:?} of {}", max, axes, json);
        }
    }
}

#[test]
fn float_sums_are_close_to_an_ordered_sum() {
    let n = 100_003usize;
    let vals: Vec<f64> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f64 * 0.001 + 0.1)
        .collect();
    let x = Array::from(vals.clone());
    let got = reduce::sum(&x, None, false)
        .unwrap()
        .as_scalar::<f64>()
        .unwrap();
    let want: f64 = vals.iter().sum();
    assert!((got - want).abs() <= 1e-9 * want.abs(), "{got} vs {want}");
    let got = reduce::mean(&x, None, false)
        .unwrap()
        .as_scalar::<f64>()
        .unwrap();
    assert!((got - want / n as f64).abs() <= 1e-12, "{got}");
}

// ---- parallel and serial agree ----

fn bits(r: &Array) -> Vec<u64> {
    let c = r.copy().unwrap();
    let n: usize = c.shape().iter().map(|d| d.unwrap()).product();
    // SAFETY: a fresh C-order float64 array of n elements.
    unsafe { std::slice::from_raw_parts(c.data_ptr().cast::<u64>(), n) }.to_vec()
}

#[test]
fn parallel_results_equal_serial_ones_bit_for_bit() {
    let (rows, cols) = (300usize, 1000usize);
    let mut seed = 0x9e3779b97f4a7c15u64;
    let vals: Vec<f64> = (0..rows * cols)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.3
        })
        .collect();
    let flat = Array::from(vals.clone());
    let x = Array::from(vals.chunks(cols).map(<[f64]>::to_vec).collect::<Vec<_>>());
    let xt = x.permute(&[1, 0]).unwrap();
    let user = reduce_with(&Callable::from_fn2("add", |a: f64, b: f64| a + b), None).unwrap();
    let run = |threads: usize| -> Vec<Vec<u64>> {
        let pool = dynd::exec::Executor::Threads(threads);
        pool.install(|| {
            let mut out = Vec::new();
            for kind in [
                BuiltinReduction::Sum,
                BuiltinReduction::Max,
                BuiltinReduction::Mean,
            ] {
                let r = Reduction::builtin(kind);
                out.push(bits(&r.apply(&flat, None, false).unwrap()));
                for arr in [&x, &xt] {
                    for axes in [None, Some(&[0][..]), Some(&[1][..])] {
                        out.push(bits(&r.apply(arr, axes, false).unwrap()));
                    }
                }
            }
            out.push(bits(&user.apply(&x, Some(&[0]), false).unwrap()));
            out.push(bits(&user.apply(&x, Some(&[1]), false).unwrap()));
            out
        })
    };
    let serial = run(1);
    let parallel = run(4);
    assert_eq!(serial.len(), parallel.len());
    for (i, (s, p)) in serial.iter().zip(&parallel).enumerate() {
        assert_eq!(s, p, "case {i}");
    }
    // And both are right: the sum over axis 1 against an ordered sum.
    let want: Vec<f64> = vals.chunks(cols).map(|r| r.iter().sum()).collect();
    let got = reduce::sum(&x, Some(&[1]), false).unwrap();
    for (g, w) in bits(&got).iter().zip(&want) {
        assert!((f64::from_bits(*g) - w).abs() < 1e-9);
    }
}

#[test]
fn all_and_any_over_bools() {
    let b = a(
        "3 * var * bool",
        "[[true,true],[true,false,true],[false,false]]",
    );
    assert_eq!(
        ok(reduce::all(&b, Some(&[1]), false)).1,
        "[true,false,false]"
    );
    assert_eq!(
        ok(reduce::any(&b, Some(&[1]), false)).1,
        "[true,true,false]"
    );
    assert_eq!(ok(reduce::all(&b, None, false)).1, "false");
    assert_eq!(
        ok(reduce::any(&b, None, true)),
        ("1 * 1 * bool".into(), "[[true]]".into())
    );
    let f = a("2 * 2 * int32", "[[0,3],[4,5]]");
    assert_eq!(ok(reduce::all(&f, Some(&[0]), false)).1, "[false,true]");
    assert_eq!(ok(reduce::any(&f, Some(&[1]), false)).1, "[true,true]");
}

#[test]
fn means() {
    let x = a("2 * 3 * float64", "[[1.5,2,7],[-2.25,7,2.125]]");
    assert_eq!(
        ok(reduce::mean(&x, Some(&[1]), false)).1,
        "[3.5,2.2916666666666665]"
    );
    assert_eq!(
        ok(reduce::mean(&x, Some(&[0]), false)).1,
        "[-0.375,4.5,4.5625]"
    );
    let i = a("2 * 2 * int32", "[[1,2],[3,5]]");
    assert_eq!(
        ok(reduce::mean(&i, None, true)),
        ("1 * 1 * float64".into(), "[[2.75]]".into())
    );
    let w = a("2 * var * 2 * int32", "[[[1,2],[3,4]],[[5,7]]]");
    assert_eq!(
        ok(reduce::mean(&w, Some(&[1]), false)).1,
        "[[2.0,3.0],[5.0,7.0]]"
    );
    assert_eq!(
        ok(reduce::mean(&w, Some(&[2]), false)).1,
        "[[1.5,3.5],[6.0]]"
    );
    assert_eq!(
        ok(reduce::mean(&w, Some(&[0, 1]), false)).1,
        "[3.0,4.333333333333333]"
    );
    // Var outputs over reduced var dims: each output divided as it completes.
    let n = a("2 * var * var * int32", "[[[1],[2,3]],[[4],[],[5,6]]]");
    assert_eq!(
        ok(reduce::mean(&n, Some(&[2]), false)),
        (
            "2 * var * ?float64".into(),
            "[[1.0,2.5],[4.0,null,5.5]]".into()
        )
    );
    assert_eq!(ok(reduce::mean(&n, Some(&[1, 2]), false)).1, "[2.0,5.0]");
    assert_eq!(ok(reduce::mean(&n, None, true)).1, "[[[3.5]]]");
    let f = a("2 * 3 * float32", "[[1,2,3],[4,5,6]]");
    assert_eq!(
        ok(reduce::mean(&f, Some(&[0]), false)),
        ("3 * float64".into(), "[2.5,3.5,4.5]".into())
    );
}

#[test]
fn a_float_sum_starts_from_zero_as_numpys_does() {
    // -0.0 alone sums to 0.0 (0.0 + -0.0), whether the plan folds the run
    // or copies the first row and adds the rest.
    let x = Array::from(vec![-0.0f64]);
    assert_eq!(
        dynd::compute::sum(&x, None, false).unwrap().to_json(),
        "0.0"
    );
    assert_eq!(
        dynd::compute::mean(&x, None, false).unwrap().to_json(),
        "0.0"
    );
    let m = Array::from_json("1 * 2 * float32", "[[-0.0, -0.0]]").unwrap();
    assert_eq!(
        dynd::compute::sum(&m, Some(&[0]), false).unwrap().to_json(),
        "[0.0,0.0]"
    );
    assert_eq!(
        dynd::compute::sum(&m, Some(&[1]), false).unwrap().to_json(),
        "[0.0]"
    );
    // Products and extremes keep the sign: 1.0 * -0.0 is -0.0.
    assert_eq!(
        dynd::compute::prod(&x, None, false).unwrap().to_json(),
        "-0.0"
    );
    assert_eq!(
        dynd::compute::max(&x, None, false).unwrap().to_json(),
        "-0.0"
    );
}
