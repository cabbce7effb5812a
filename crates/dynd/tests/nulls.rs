//! `is_null`, `fill_null` and `drop_null` (DESIGN §6, §8): every element
//! kind (sentinel and flag-byte options, and types that are not options),
//! fixed and var outer dims, broadcasting of the fill value, strided and
//! reversed views, empty arrays, long arrays (the fast paths, compared
//! with a plain loop), and the errors.

use crate::common;
use common::{Typed, a, assert_ok, check_binary, ok, pair};

use dynd::callable::lookup;
use dynd::{Array, ErrorKind, Index, compute};

/// `(element type, JSON of 4 elements with nulls at 1 and 3, a fill value
/// type and JSON, the filled JSON, the dropped JSON)`, one per kind.
#[rustfmt::skip]
const KINDS: &[(&str, &str, &str, &str, &str, &str)] = &[
    ("?bool", "[true,null,false,null]", "bool", "true", "[true,true,false,true]", "[true,false]"),
    ("?int8", "[1,null,-3,null]", "int8", "9", "[1,9,-3,9]", "[1,-3]"),
    ("?uint16", "[1,null,65534,null]", "int32", "9", "[1,9,65534,9]", "[1,65534]"),
    ("?int32", "[1,null,-3,null]", "int64", "9", "[1,9,-3,9]", "[1,-3]"),
    ("?int64", "[1,null,-3,null]", "int8", "9", "[1,9,-3,9]", "[1,-3]"),
    ("?float32", "[1.5,null,NaN,null]", "float64", "0.25", "[1.5,0.25,NaN,0.25]", "[1.5,NaN]"),
    ("?float64", "[1.5,null,NaN,null]", "int32", "2", "[1.5,2.0,NaN,2.0]", "[1.5,NaN]"),
    ("?complex[float64]", "[[1,2],null,[3,4],null]", "float64", "5", "[[1.0,2.0],[5.0,0.0],[3.0,4.0],[5.0,0.0]]", "[[1.0,2.0],[3.0,4.0]]"),
    ("?string", r#"["a",null,"",null]"#, "string", r#""zz""#, r#"["a","zz","","zz"]"#, r#"["a",""]"#),
    ("?bytes", r#"["0a",null,"0b",null]"#, "bytes", r#""ff""#, r#"["0a","ff","0b","ff"]"#, r#"["0a","0b"]"#),
    ("?fixed_string[3]", r#"["ab",null,"c",null]"#, "string", r#""zz""#, r#"["ab","zz","c","zz"]"#, r#"["ab","c"]"#),
    ("?{a: int32, b: ?string}", r#"[{"a":1,"b":"x"},null,{"a":2,"b":null},null]"#, "{a: int64, b: string}", r#"{"a":0,"b":"-"}"#,
        r#"[{"a":1,"b":"x"},{"a":0,"b":"-"},{"a":2,"b":null},{"a":0,"b":"-"}]"#, r#"[{"a":1,"b":"x"},{"a":2,"b":null}]"#),
    ("?(int8, float64)", "[[1,2],null,[3,4],null]", "(int8, float64)", "[0,0]", "[[1,2.0],[0,0.0],[3,4.0],[0,0.0]]", "[[1,2.0],[3,4.0]]"),
    // Options of dims: the fill is one row (its dims are the value's).
    ("?2 * int16", "[[1,2],null,[3,4],null]", "2 * int8", "[0,-1]", "[[1,2],[0,-1],[3,4],[0,-1]]", "[[1,2],[3,4]]"),
    ("?var * int32", "[[1],null,[],null]", "var * int64", "[9,8]", "[[1],[9,8],[],[9,8]]", "[[1],[]]"),
];

#[test]
fn every_element_kind() {
    for &(el, json, vt, vj, filled, dropped) in KINDS {
        let x = a(&format!("4 * {el}"), json);
        let value = el.strip_prefix('?').unwrap();
        assert_eq!(
            ok(compute::is_null(&x)),
            pair("4 * bool", "[false,true,false,true]"),
            "{el}"
        );
        if !vt.is_empty() {
            assert_eq!(
                ok(compute::fill_null(&x, &a(vt, vj))),
                pair(&format!("4 * {value}"), filled),
                "{el}"
            );
        }
        assert_eq!(
            ok(compute::drop_null(&x)),
            pair(&format!("var * {value}"), dropped),
            "{el}"
        );
        // The same under a var outer dim, with an empty row after.
        let xv = a(&format!("2 * var * {el}"), &format!("[{json},[]]"));
        assert_eq!(
            ok(compute::is_null(&xv)).1,
            "[[false,true,false,true],[]]",
            "{el}"
        );
        if !vt.is_empty() {
            let fv = ok(compute::fill_null(&xv, &a(vt, vj)));
            assert_eq!(
                fv,
                pair(&format!("2 * var * {value}"), &format!("[{filled},[]]")),
                "{el}"
            );
        }
        let dv = ok(compute::drop_null(&xv));
        assert_eq!(
            dv,
            pair(&format!("2 * var * {value}"), &format!("[{dropped},[]]")),
            "{el}"
        );
    }
}

#[test]
fn types_that_are_not_options() {
    let x = a("2 * var * {a: int32}", r#"[[{"a":1}],[]]"#);
    assert_ok(compute::is_null(&x), "2 * var * bool", "[[false],[]]");
    assert_ok(
        compute::drop_null(&x),
        "2 * var * {a: int32}",
        r#"[[{"a":1}],[]]"#,
    );
    let s = a("3 * float64", "[1, NaN, 3]");
    assert_eq!(ok(compute::is_null(&s)).1, "[false,false,false]");
    assert_ok(compute::is_null(&a("int32", "5")), "bool", "false");
    assert_ok(compute::is_null(&a("?int32", "null")), "bool", "true");
    // Their fill_null: see FILLS.
}

#[test]
fn options_of_records_and_lists_are_one_bool_each() {
    let x = a(
        "3 * ?{a: ?int32, b: var * ?float64}",
        r#"[{"a":null,"b":[null]},null,{"a":1,"b":[]}]"#,
    );
    assert_eq!(ok(compute::is_null(&x)).1, "[false,true,false]");
    let y = a("2 * ?3 * int32", "[null,[1,2,3]]");
    assert_ok(compute::is_null(&y), "2 * bool", "[true,false]");
    assert_ok(compute::drop_null(&y), "var * 3 * int32", "[[1,2,3]]");
}

/// `fill_null(x, v)`, one row each: `(x, v, result)`.
#[rustfmt::skip]
const FILLS: &[(Typed, Typed, Typed)] = &[
    // Types that are not options: x comes back as it is, or cast.
    (("2 * var * {a: int32}", r#"[[{"a":1}],[]]"#), ("{a: int32}", r#"{"a":0}"#), ("2 * var * {a: int32}", r#"[[{"a":1}],[]]"#)),
    (("?int32", "null"), ("int32", "4"), ("int32", "4")),
    // The fill value broadcasts: a scalar, one per row, one per column, one per element.
    (("2 * 3 * ?int32", "[[1,null,3],[null,5,null]]"), ("int32", "0"), ("2 * 3 * int32", "[[1,0,3],[0,5,0]]")),
    (("2 * 3 * ?int32", "[[1,null,3],[null,5,null]]"), ("2 * 1 * int32", "[[10],[20]]"), ("2 * 3 * int32", "[[1,10,3],[20,5,20]]")),
    (("2 * 3 * ?int32", "[[1,null,3],[null,5,null]]"), ("3 * int32", "[7,8,9]"), ("2 * 3 * int32", "[[1,8,3],[7,5,9]]")),
    (("2 * 3 * ?int32", "[[1,null,3],[null,5,null]]"), ("2 * 3 * float64", "[[0,1,2],[3,4,5]]"), ("2 * 3 * int32", "[[1,1,3],[3,5,5]]")),
    (("2 * 3 * ?int32", "[[1,null,3],[null,5,null]]"), ("2 * var * int32", "[[6],[7,8,9]]"), ("2 * 3 * int32", "[[1,6,3],[7,5,9]]")),
    // Over var rows, a fill per row.
    (("3 * var * ?float64", "[[null,2],[],[null]]"), ("3 * 1 * float64", "[[-1],[-2],[-3]]"), ("3 * var * float64", "[[-1.0,2.0],[],[-3.0]]")),
    // The fill may be larger than x, and then x broadcasts.
    (("?int32", "null"), ("3 * int32", "[1,2,3]"), ("3 * int32", "[1,2,3]")),
    // An optional fill coalesces: missing where both are.
    (("4 * ?int32", "[1,null,null,4]"), ("4 * ?int32", "[null,2,null,null]"), ("4 * ?int32", "[1,2,null,4]")),
    // A scalar optional fill: the fast path for numbers.
    (("4 * ?int32", "[1,null,null,4]"), ("?int64", "null"), ("4 * ?int32", "[1,null,null,4]")),
    (("4 * ?int32", "[1,null,null,4]"), ("?int64", "9"), ("4 * ?int32", "[1,9,9,4]")),
    (("3 * ?{a: int8}", r#"[null,{"a":2},null]"#), ("?{a: int8}", r#"{"a":7}"#), ("3 * ?{a: int8}", r#"[{"a":7},{"a":2},{"a":7}]"#)),
    (("3 * ?{a: int8}", r#"[null,{"a":2},null]"#), ("?{a: int8}", "null"), ("3 * ?{a: int8}", r#"[null,{"a":2},null]"#)),
    (("2 * ?string", r#"[null,"b"]"#), ("?string", r#""z""#), ("2 * ?string", r#"["z","b"]"#)),
    // Options of dims: the fill's innermost dims are the option's value's
    // (its core dims), the dims outside them broadcast against x's outer dims.
    // One row for every missing row, cast to the value's type.
    (("2 * ?3 * int32", "[[1,2,3],null]"), ("3 * int32", "[7,8,9]"), ("2 * 3 * int32", "[[1,2,3],[7,8,9]]")),
    (("2 * ?3 * int32", "[[1,2,3],null]"), ("3 * int64", "[7,8,9]"), ("2 * 3 * int32", "[[1,2,3],[7,8,9]]")),
    // A scalar (or a row of 1) fills every slot of a missing fixed row.
    (("2 * ?3 * int32", "[[1,2,3],null]"), ("int32", "0"), ("2 * 3 * int32", "[[1,2,3],[0,0,0]]")),
    (("2 * ?3 * int32", "[[1,2,3],null]"), ("1 * int8", "[5]"), ("2 * 3 * int32", "[[1,2,3],[5,5,5]]")),
    // Dims outside the row broadcast against x's outer dims.
    (("2 * ?3 * int32", "[[1,2,3],null]"), ("2 * 3 * int32", "[[0,0,0],[4,5,6]]"), ("2 * 3 * int32", "[[1,2,3],[4,5,6]]")),
    (("2 * ?3 * int32", "[[1,2,3],null]"), ("2 * 1 * int32", "[[8],[9]]"), ("2 * 3 * int32", "[[1,2,3],[9,9,9]]")),
    (("2 * ?3 * int32", "[[1,2,3],null]"), ("1 * 3 * int32", "[[4,5,6]]"), ("2 * 3 * int32", "[[1,2,3],[4,5,6]]")),
    // An optional fill coalesces: missing where both are.
    (("2 * ?3 * int32", "[[1,2,3],null]"), ("?3 * int32", "null"), ("2 * ?3 * int32", "[[1,2,3],null]")),
    (("2 * ?3 * int32", "[[1,2,3],null]"), ("?3 * int32", "[4,5,6]"), ("2 * ?3 * int32", "[[1,2,3],[4,5,6]]")),
    (("2 * ?3 * int32", "[[1,2,3],null]"), ("2 * ?3 * int32", "[null,[4,5,6]]"), ("2 * ?3 * int32", "[[1,2,3],[4,5,6]]")),
    // Var rows: a var or fixed row fills them.
    (("3 * ?var * int32", "[[1],null,[]]"), ("var * int32", "[9,9]"), ("3 * var * int32", "[[1],[9,9],[]]")),
    (("3 * ?var * int32", "[[1],null,[]]"), ("2 * int32", "[7,8]"), ("3 * var * int32", "[[1],[7,8],[]]")),
    (("3 * ?var * int32", "[[1],null,[]]"), ("0 * int32", "[]"), ("3 * var * int32", "[[1],[],[]]")),
    (("3 * ?var * int32", "[[1],null,[]]"), ("3 * var * int8", "[[],[5],[6]]"), ("3 * var * int32", "[[1],[5],[]]")),
    (("3 * ?var * int32", "[[1],null,[]]"), ("3 * 1 * int8", "[[0],[5],[6]]"), ("3 * var * int32", "[[1],[5],[]]")),
    // A var outer dim; a 0-d x, which broadcasts against the fill's outer
    // dims; a value of two dims filled by one row.
    (("var * ?2 * int16", "[null,[1,2],null]"), ("2 * int16", "[0,-1]"), ("var * 2 * int16", "[[0,-1],[1,2],[0,-1]]")),
    (("?3 * int32", "null"), ("2 * 3 * int32", "[[1,2,3],[4,5,6]]"), ("2 * 3 * int32", "[[1,2,3],[4,5,6]]")),
    (("2 * ?2 * 3 * int8", "[null,[[1,2,3],[4,5,6]]]"), ("3 * int8", "[7,8,9]"), ("2 * 2 * 3 * int8", "[[[7,8,9],[7,8,9]],[[1,2,3],[4,5,6]]]")),
    (("2 * ?2 * var * int8", "[null,[[1],[]]]"), ("var * int8", "[7]"), ("2 * 2 * var * int8", "[[[7],[7]],[[1],[]]]")),
    // A fill with more outer dims than x: x repeats over them.
    (("2 * ?3 * int32", "[[1,2,3],null]"), ("2 * 2 * 3 * int32", "[[[0,0,0],[4,5,6]],[[0,0,0],[7,8,9]]]"), ("2 * 2 * 3 * int32", "[[[1,2,3],[4,5,6]],[[1,2,3],[7,8,9]]]")),
    // Nothing missing: the fill is checked by type, never used.
    (("2 * ?3 * int8", "[[1,2,3],[4,5,6]]"), ("3 * int64", "[300,300,300]"), ("2 * 3 * int8", "[[1,2,3],[4,5,6]]")),
];

#[test]
fn fill_null_table() {
    check_binary("fill_null", compute::fill_null, FILLS);
}

#[test]
fn drop_null_over_fixed_and_var_outer_dims() {
    #[rustfmt::skip]
    let cases = [
        ("4 * ?int32", "[null,2,null,4]", "var * int32", "[2,4]"),
        ("var * ?int32", "[null,2,null,4]", "var * int32", "[2,4]"),
        ("2 * 3 * ?int32", "[[1,null,3],[null,null,null]]", "2 * var * int32", "[[1,3],[]]"),
        ("2 * var * ?int32", "[[1,null],[null,4,5]]", "2 * var * int32", "[[1],[4,5]]"),
        ("var * 2 * ?int32", "[[1,null],[null,null],[3,4]]", "var * var * int32", "[[1],[],[3,4]]"),
        ("var * var * ?string", r#"[["a",null],[],[null,"d"]]"#, "var * var * string", r#"[["a"],[],["d"]]"#),
        ("2 * 2 * var * ?int8", "[[[1,null],[]],[[null],[4]]]", "2 * 2 * var * int8", "[[[1],[]],[[],[4]]]"),
        ("3 * ?float64", "[null,null,null]", "var * float64", "[]"),
        ("0 * ?float64", "[]", "var * float64", "[]"),
        ("2 * 0 * ?float64", "[[],[]]", "2 * var * float64", "[[],[]]"),
        ("0 * var * ?float64", "[]", "0 * var * float64", "[]"),
    ];
    for (tp, json, rt, rj) in cases {
        assert_eq!(ok(compute::drop_null(&a(tp, json))), pair(rt, rj), "{tp}");
    }
}

#[test]
fn empty_arrays() {
    for (tp, json) in [
        ("0 * ?int32", "[]"),
        ("0 * ?{a: int8}", "[]"),
        ("3 * var * ?string", "[[],[],[]]"),
    ] {
        let x = a(tp, json);
        assert_eq!(ok(compute::is_null(&x)).1, json, "{tp}");
        assert_eq!(ok(compute::fill_null(&x, &a("int8", "0"))).1, json, "{tp}");
    }
}

#[test]
fn strided_and_reversed_views() {
    let x = a("6 * ?int64", "[1,null,3,null,5,null]");
    let every_other = x.index(&[Index::slice(None, None, 2)]).unwrap();
    assert_eq!(ok(compute::is_null(&every_other)).1, "[false,false,false]");
    let odd = x.index(&[Index::slice(Some(1), None, 2)]).unwrap();
    assert_eq!(ok(compute::is_null(&odd)).1, "[true,true,true]");
    let rev = x.index(&[Index::slice(None, None, -1)]).unwrap();
    assert_eq!(
        ok(compute::is_null(&rev)).1,
        "[true,false,true,false,true,false]"
    );
    assert_eq!(
        ok(compute::fill_null(&rev, &a("int64", "0"))).1,
        "[0,5,0,3,0,1]"
    );
    assert_eq!(ok(compute::drop_null(&rev)).1, "[5,3,1]");
    let m = a("2 * 3 * ?int32", "[[1,null,3],[null,5,6]]");
    let col = m
        .index(&[Index::slice(None, None, 1), Index::slice(None, None, -2)])
        .unwrap();
    assert_ok(compute::drop_null(&col), "2 * var * int32", "[[3,1],[6]]");
    // A var dim sliced keeps its kind, with an offset and a stride.
    let v = a("var * ?int32", "[1,null,3,null,null,6]");
    let vs = v.index(&[Index::slice(Some(1), None, 2)]).unwrap();
    assert_ok(compute::drop_null(&vs), "var * int32", "[6]");
    assert_eq!(ok(compute::is_null(&vs)).1, "[true,true,false]");
    assert_eq!(ok(compute::fill_null(&vs, &a("int32", "0"))).1, "[0,0,6]");
}

/// Long inputs take the block-wise fast paths; they must equal a plain
/// loop over the values.
#[test]
fn long_arrays_equal_a_plain_loop() {
    let n: usize = 10_007;
    let vals: Vec<Option<f64>> = (0..n)
        .map(|i| (i % 7 != 3 && i % 11 != 0).then_some(i as f64 * 0.5))
        .collect();
    let json = format!(
        "[{}]",
        vals.iter()
            .map(|v| v.map_or("null".to_string(), |v| v.to_string()))
            .collect::<Vec<_>>()
            .join(",")
    );
    let x = a(&format!("{n} * ?float64"), &json);
    let isn = compute::is_null(&x).unwrap();
    let want: Vec<bool> = vals.iter().map(Option::is_none).collect();
    assert_eq!(isn.to_json(), format!("{:?}", want).replace(' ', ""));
    let filled = compute::fill_null(&x, &a("float64", "-1")).unwrap();
    let want: Vec<f64> = vals.iter().map(|v| v.unwrap_or(-1.0)).collect();
    assert_eq!(filled.to_json(), Array::from(want).to_json());
    let dropped = compute::drop_null(&x).unwrap();
    let want: Vec<f64> = vals.iter().flatten().copied().collect();
    assert_eq!(dropped.to_json(), Array::from(want).to_json());
    // The same data as ?int32, and a per-element fill.
    let ints = a(
        &format!("{n} * ?int32"),
        &json.replace(".5", "").replace(".0", ""),
    );
    let fill = Array::from((0..n as i32).map(|i| -i).collect::<Vec<_>>());
    let got = compute::fill_null(&ints, &fill).unwrap();
    let want: Vec<i32> = vals
        .iter()
        .enumerate()
        .map(|(i, v)| v.map_or(-(i as i32), |v| v as i32))
        .collect();
    assert_eq!(got.to_json(), Array::from(want).to_json());
}

#[test]
fn errors_name_what_and_where() {
    let x = a("3 * ?int8", "[1,null,3]");
    // Wrong arity, through the registry.
    let e = lookup("is_null").unwrap().call(&[&x, &x]).unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (
            ErrorKind::InvalidArgument,
            "is_null(x) takes 1 argument, not 2"
        )
    );
    let e = lookup("fill_null").unwrap().call(&[&x]).unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (
            ErrorKind::InvalidArgument,
            "fill_null(x, v) takes 2 arguments, not 1"
        )
    );
    let e = lookup("drop_null").unwrap().call(&[]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // A fill value of a type that does not cast.
    let e = compute::fill_null(&x, &a("{a: int32}", r#"{"a":1}"#)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert!(
        e.message().starts_with(
            "fill_null: the fill value ({a: int32}) does not cast to int8, the value type of ?int8"
        ),
        "{e}"
    );
    // A fill value that does not fit: an error where it is used only.
    let e = compute::fill_null(&x, &a("int64", "300")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow);
    assert!(
        e.message().starts_with("fill_null: the fill value: "),
        "{e}"
    );
    assert!(e.message().contains("300"), "{e}");
    assert_eq!(
        ok(compute::fill_null(
            &a("2 * ?int8", "[1,2]"),
            &a("int64", "300")
        ))
        .1,
        "[1,2]"
    );
    let e = compute::fill_null(&x, &a("float64", "1.5")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Fractional, "{e}");
    // Per-element fills: only the used one is checked.
    let e = compute::fill_null(&x, &a("3 * int64", "[999,300,0]")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow, "{e}");
    assert_eq!(
        ok(compute::fill_null(&x, &a("3 * int64", "[999,5,999]"))).1,
        "[1,5,3]"
    );
    // Shapes that do not broadcast.
    let e = compute::fill_null(&x, &a("2 * int8", "[1,2]")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast);
    // drop_null needs a dim.
    let e = compute::drop_null(&a("?int32", "null")).unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (
            ErrorKind::Type,
            "drop_null drops missing elements along a dim, and ?int32 has none"
        )
    );
}

#[test]
fn results_compute_on() {
    // is_null's bools and fill_null's values feed other callables.
    let x = a("2 * var * ?float64", "[[1,null],[null,4]]");
    let filled = compute::fill_null(&x, &a("float64", "0")).unwrap();
    let plus_one = compute::add(&filled, &a("float64", "1"));
    assert_ok(plus_one, "2 * var * float64", "[[2.0,1.0],[1.0,5.0]]");
    let not_null = compute::logical_not(&compute::is_null(&x).unwrap());
    assert_eq!(ok(not_null).1, "[[true,false],[false,true]]");
    let doubled = compute::multiply(&compute::drop_null(&x).unwrap(), &a("float64", "2"));
    assert_ok(doubled, "2 * var * float64", "[[2.0],[8.0]]");
}

#[test]
fn a_fill_that_does_not_fit_an_option_of_a_dim() {
    let x = a("2 * ?3 * int32", "[[1,2,3],null]");
    let r = a("2 * ?var * int32", "[[1],null]");
    #[rustfmt::skip]
    let cases: &[(&Array, &str, &str, ErrorKind, &str)] = &[
        (&x, "2 * int32", "[1,2]", ErrorKind::Type,
         "fill_null: the fill value (2 * int32) does not fit 3 * int32, the value type of ?3 * int32: \
          cannot broadcast shape (2) into shape (3): a dim of size 2 into size 3 (2 * int32 into 3 * int32)"),
        (&x, "{a: int32}", r#"{"a":1}"#, ErrorKind::Type,
         "fill_null: the fill value ({a: int32}) does not cast to 3 * int32, the value type of ?3 * int32"),
        (&x, "3 * 3 * int32", "[[0,0,0],[0,0,0],[0,0,0]]", ErrorKind::Broadcast,
         "cannot broadcast shapes (2) and (3, 3) together: a dim of size 3 into size 2"),
        (&r, "int32", "0", ErrorKind::Type,
         "fill_null: the fill value (int32) does not fit var * int32, the value type of ?var * int32: \
          dim 0 of the value is var, and the fill has no dim there to give each row a length"),
        // A var fill row of the wrong length: when the kernel meets it.
        (&x, "var * int32", "[1,2]", ErrorKind::Broadcast, "fill_null: the fill value: cannot broadcast"),
        // A fill element that does not fit: where it is used.
        (&a("2 * ?2 * int8", "[null,[1,2]]"), "2 * int64", "[1,300]", ErrorKind::Overflow,
         "fill_null: the fill value: "),
    ];
    for (x, vt, vj, kind, msg) in cases {
        let e = compute::fill_null(x, &a(vt, vj)).unwrap_err();
        assert_eq!(e.kind(), *kind, "{vt}: {e}");
        assert!(e.message().starts_with(msg), "{vt}: {e}");
    }
}

proptest::proptest! {
    /// `fill_null(N * ?M * int32, v)` against a plain loop, for a fill row
    /// (`M * int32`), one row per element (`N * M * int32`) and a scalar.
    #[test]
    fn filling_option_rows_equals_a_plain_loop(
        rows in proptest::collection::vec(
            proptest::option::of(proptest::collection::vec(-99i32..99, 3)), 0..12),
        fills in proptest::collection::vec(proptest::collection::vec(-99i32..99, 3), 12),
        scalar in -99i32..99,
    ) {
        let n = rows.len();
        let show = |r: &[i32]| format!("[{}]", r.iter().map(i32::to_string).collect::<Vec<_>>().join(","));
        let x_json = format!("[{}]", rows.iter()
            .map(|r| r.as_deref().map_or("null".to_string(), show))
            .collect::<Vec<_>>().join(","));
        let x = a(&format!("{n} * ?3 * int32"), &x_json);
        let want = |fill: &dyn Fn(usize) -> Vec<i32>| format!("[{}]", rows.iter().enumerate()
            .map(|(i, r)| show(&r.clone().unwrap_or_else(|| fill(i))))
            .collect::<Vec<_>>().join(","));
        let out = format!("{n} * 3 * int32");
        let row = a("3 * int32", &show(&fills[0]));
        proptest::prop_assert_eq!(ok(compute::fill_null(&x, &row)), pair(&out, &want(&|_| fills[0].clone())));
        let per = a(&out, &format!("[{}]", fills[..n].iter().map(|f| show(f)).collect::<Vec<_>>().join(",")));
        proptest::prop_assert_eq!(ok(compute::fill_null(&x, &per)), pair(&out, &want(&|i| fills[i].clone())));
        let s = a("int32", &scalar.to_string());
        proptest::prop_assert_eq!(ok(compute::fill_null(&x, &s)), pair(&out, &want(&|_| vec![scalar; 3])));
    }
}
