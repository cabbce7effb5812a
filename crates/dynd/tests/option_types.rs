//! Options of every type (DESIGN §4, §6): `?T` for types without an NA
//! sentinel (struct, tuple, fixed and var dims, fixed_string) carries a
//! flag byte after T's data. Their layout, datashape, JSON in and out,
//! display, copies, views and assignment in every direction.

use crate::common;
use common::assign::{Message::Exact, assign, check_rows};
use common::{a, assert_error, assert_ok, ok, pair};

use dynd::kernels::assign::ErrorMode;
use dynd::layout::na;
use dynd::{Array, ErrorKind, Index, Type};
use proptest::prelude::*;

fn t(ds: &str) -> Type {
    Type::parse(ds).unwrap_or_else(|e| panic!("{ds}: {e}"))
}

// ------------------------------------------------------------------ types

#[test]
fn layouts_follow_design_section_4() {
    // (datashape, data size, alignment, arrmeta size, flag offset)
    #[rustfmt::skip]
    let rows: &[(&str, usize, usize, usize, Option<usize>)] = &[
        ("?int32", 4, 4, 0, None),
        ("?string", 16, 8, 8, None),
        ("?{a: int32, b: int8}", 12, 4, 0, Some(8)),
        ("?{a: int64}", 16, 8, 0, Some(8)),
        ("?{a: ?string, b: var * ?float64}", 40, 8, 8 + 24, Some(32)),
        ("?(int8, int8)", 3, 1, 0, Some(2)),
        ("?3 * int32", 16, 4, 16, Some(12)),
        ("?var * int32", 24, 8, 24, Some(16)),
        ("?fixed_string[5]", 6, 1, 0, Some(5)),
        ("?fixed_string[2, 'utf32']", 12, 4, 0, Some(8)),
        ("2 * ?{a: ?string, b: var * ?float64}", 80, 8, 16 + 32, None),
    ];
    for &(ds, size, align, meta, flag) in rows {
        let tp = t(ds);
        assert_eq!(
            (
                tp.data_size(),
                tp.data_alignment(),
                tp.arrmeta_size(),
                tp.option_flag_offset()
            ),
            (size, align, meta, flag),
            "{ds}"
        );
    }
}

#[test]
fn datashapes_round_trip() {
    for ds in [
        "2 * ?{a: ?string, b: var * ?float64}",
        "?var * int32",
        "?3 * int32",
        "?var * ?var * ?int8",
        "?{x: ?{y: ?(int32, ?3 * float64)}}",
        "?fixed_string[4, 'utf16']",
        "?fixed_bytes[8, align=4]",
        "var * ?(int32, string)",
        "?0 * int64",
    ] {
        let tp = t(ds);
        assert_eq!(tp.to_string(), ds);
        assert_eq!(t(&tp.to_string()), tp);
    }
    // `option[...]` is the same type.
    assert_eq!(t("option[3 * int32]"), t("?3 * int32"));
    assert_eq!(t("option[{a: int8}]").to_string(), "?{a: int8}");
}

#[test]
fn bad_datashapes_are_parse_errors_naming_the_place() {
    // (datashape, message parts)
    #[rustfmt::skip]
    let rows: &[(&str, &[&str])] = &[
        ("??int32", &["line 1, column 2", "option", "not supported", "optional again"]),
        ("?", &["line 1, column 2", "expected a type"]),
        ("?void", &["not supported", "void"]),
        ("?Fixed * int32", &["not supported", "symbolic dim"]),
        ("?{a: int32", &["expected"]),
        ("?3 *", &["expected a type"]),
        ("3 * ?", &["expected a type"]),
        ("?int32 * int32", &["'int32' is not a dimension"]),
    ];
    for &(ds, parts) in rows {
        let e = Type::parse(ds).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Parse, "{ds}: {e}");
        for p in parts {
            assert!(e.message().contains(p), "{ds}: {e} lacks {p:?}");
        }
    }
}

// ------------------------------------------------------------------- JSON

/// JSON text → array → JSON text gives the text back.
fn round_trip(ds: &str, json: &str) {
    let x = a(ds, json);
    assert_eq!(x.to_json(), json, "{ds}");
    // A copy keeps every missing value missing.
    assert_eq!(x.copy().unwrap().to_json(), json, "{ds} copied");
}

#[test]
fn json_round_trips() {
    #[rustfmt::skip]
    let rows = [
        ("?{a: int32, b: float64}", r#"{"a":1,"b":2.5}"#),
        ("?{a: int32, b: float64}", "null"),
        ("4 * ?{a: int32, b: ?string}", r#"[{"a":1,"b":"x"},null,{"a":3,"b":null},null]"#),
        ("?var * int32", "[1,2,3]"),
        ("?var * int32", "null"),
        ("?var * int32", "[]"),
        ("3 * ?var * int32", "[[1],null,[]]"),
        ("var * ?var * ?int32", "[[1,null],null,[null],[]]"),
        ("2 * ?{a: ?string, b: var * ?float64}", r#"[{"a":null,"b":[1.5,null]},null]"#),
        ("?3 * int32", "[1,2,3]"),
        ("2 * ?3 * int32", "[null,[4,5,6]]"),
        ("?(int8, ?3 * ?int16)", "[1,[null,2,null]]"),
        ("?(int8, ?3 * ?int16)", "[1,null]"),
        ("3 * ?fixed_string[4]", r#"["ab",null,"abcd"]"#),
        ("?{x: ?{y: ?{z: int8}}}", r#"{"x":{"y":null}}"#),
        ("?{x: ?{y: ?{z: int8}}}", r#"{"x":null}"#),
        ("?{x: ?{y: ?{z: int8}}}", r#"{"x":{"y":{"z":7}}}"#),
        ("var * ?{s: string, v: var * string}", r#"[{"s":"a","v":["b","c"]},null,{"s":"","v":[]}]"#),
    ];
    for (ds, json) in rows {
        round_trip(ds, json);
    }
}

#[test]
fn a_fresh_array_of_a_flag_option_is_missing() {
    assert_eq!(
        Array::empty("3 * ?{a: int32}").unwrap().to_json(),
        "[null,null,null]"
    );
    assert_eq!(Array::empty("?var * int8").unwrap().to_json(), "null");
}

#[test]
fn an_object_lacking_an_optional_field_reads_it_as_missing() {
    // The libdynd case.
    let x = a("{x: ?int32, y: ?float64}", r#"{"x":7}"#);
    assert_eq!(x.to_json(), r#"{"x":7,"y":null}"#);
    #[rustfmt::skip]
    let rows = [
        ("{x: ?int32, y: ?float64}", "{}", r#"{"x":null,"y":null}"#),
        ("{x: ?int32, y: ?float64}", r#"{"y":1.5}"#, r#"{"x":null,"y":1.5}"#),
        ("{a: int8, b: ?{c: int8}, d: ?var * int8}", r#"{"a":1}"#, r#"{"a":1,"b":null,"d":null}"#),
        ("2 * {a: int8, s: ?string}", r#"[{"a":1},{"s":"x","a":2}]"#, r#"[{"a":1,"s":null},{"a":2,"s":"x"}]"#),
    ];
    for (ds, json, want) in rows {
        assert_eq!(a(ds, json).to_json(), want, "{ds} <- {json}");
    }
    // A lacking field that is not optional is still an error naming it.
    let e = Array::from_json("2 * {x: ?int32, y: float64}", r#"[{"y":1},{"x":7}]"#).unwrap_err();
    assert_error(&e, ErrorKind::Parse, r#"missing field "y""#);
    assert!(e.message().contains("at [1]"), "{e}");
    // Assigning into an existing array: a lacking option field becomes
    // missing there too.
    let x = a("{x: ?int32, y: ?int32}", r#"{"x":1,"y":2}"#);
    x.assign_json(r#"{"x":3}"#).unwrap();
    assert_eq!(x.to_json(), r#"{"x":3,"y":null}"#);
}

#[test]
fn bad_json_names_the_place() {
    #[rustfmt::skip]
    let rows: &[(&str, &str, ErrorKind, &[&str])] = &[
        ("?{a: int32}", "nul", ErrorKind::Parse, &["expected an object"]),
        ("3 * ?{a: int32}", r#"[null,{"a":"x"},null]"#, ErrorKind::Parse, &["[1].a", "a number"]),
        ("?3 * int32", "[1,2]", ErrorKind::Parse, &["expected 3 elements"]),
        ("?var * int8", "[1,300]", ErrorKind::Overflow, &["[1]"]),
        ("?fixed_string[2]", r#""abc""#, ErrorKind::Overflow, &["does not fit"]),
    ];
    for &(ds, json, kind, parts) in rows {
        let e = Array::from_json(ds, json).unwrap_err();
        assert_eq!(e.kind(), kind, "{ds} <- {json}: {e}");
        for p in parts {
            assert!(e.message().contains(p), "{ds} <- {json}: {e} lacks {p:?}");
        }
    }
}

#[test]
fn display_shows_null_for_missing() {
    let x = a("3 * ?{a: int32}", r#"[{"a":1},null,{"a":3}]"#);
    assert_eq!(
        x.to_string(),
        r#"array([{"a": 1}, null, {"a": 3}], type="3 * ?{a: int32}")"#
    );
    let v = a("?var * int32", "null");
    assert_eq!(format!("{v:?}"), r#"array(null, type="?var * int32")"#);
}

#[test]
fn the_flag_byte_is_where_design_section_4_puts_it() {
    let x = a("2 * ?{a: int32, b: int8}", r#"[{"a":-1,"b":2},null]"#);
    // SAFETY: two elements of 12 bytes: the struct's 8, the flag, padding.
    let bytes = unsafe { std::slice::from_raw_parts(x.data_ptr(), 24) };
    assert_eq!(
        (&bytes[..5], bytes[8]),
        (&[0xff, 0xff, 0xff, 0xff, 2][..], 1)
    );
    assert_eq!(
        (&bytes[12..20], bytes[20]),
        (&[0; 8][..], 0),
        "a missing value's bytes are zero"
    );
    let tp = t("?{a: int32, b: int8}");
    // SAFETY: the two elements of `x`.
    unsafe {
        assert!(!na::is_missing(&tp, x.data_ptr()));
        assert!(na::is_missing(&tp, x.data_ptr().add(12)));
    }
}

// ------------------------------------------------------------------ views

#[test]
fn strided_and_reversed_views_over_option_structs() {
    let x = a(
        "5 * ?{a: int32, s: ?string}",
        r#"[{"a":0,"s":"z"},null,{"a":2,"s":null},null,{"a":4,"s":"w"}]"#,
    );
    let rev = x.index(&[Index::slice(None, None, -1)]).unwrap();
    assert_eq!(
        rev.to_json(),
        r#"[{"a":4,"s":"w"},null,{"a":2,"s":null},null,{"a":0,"s":"z"}]"#
    );
    let step2 = x.index(&[Index::slice(None, None, 2)]).unwrap();
    assert_eq!(
        step2.to_json(),
        r#"[{"a":0,"s":"z"},{"a":2,"s":null},{"a":4,"s":"w"}]"#
    );
    let odd = x.index(&[Index::slice(Some(1), None, 2)]).unwrap();
    assert_eq!(odd.to_json(), "[null,null]");
    // Copies and assignments read through the views' strides.
    assert_eq!(rev.copy().unwrap().to_json(), rev.to_json());
    let dst = Array::empty("5 * ?{s: ?string, a: int64}").unwrap();
    dst.assign(&rev, ErrorMode::Default).unwrap();
    assert_eq!(
        dst.to_json(),
        r#"[{"s":"w","a":4},null,{"s":null,"a":2},null,{"s":"z","a":0}]"#
    );
    // Into a reversed view of a destination.
    let out = Array::empty("3 * ?{a: int32, s: ?string}").unwrap();
    let out_rev = out.index(&[Index::slice(None, None, -1)]).unwrap();
    out_rev.assign(&step2, ErrorMode::Default).unwrap();
    assert_eq!(
        out.to_json(),
        r#"[{"a":4,"s":"w"},{"a":2,"s":null},{"a":0,"s":"z"}]"#
    );
    // A plain struct destination from a view holding missing values names
    // the first missing one in the view's own positions.
    let plain = Array::empty("3 * {a: int32, s: ?string}").unwrap();
    let e = plain
        .assign(
            &rev.index(&[Index::slice(Some(1), Some(4), 1)]).unwrap(),
            ErrorMode::Default,
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        e.message(),
        "[0]: a missing value cannot be assigned to {a: int32, s: ?string}"
    );
}

#[test]
fn fixed_dims_of_option_structs() {
    let x = a(
        "2 * 2 * ?{p: (int8, int8), q: ?3 * float32}",
        r#"[[{"p":[1,2],"q":[1.5,2.5,3.5]},null],[null,{"p":[3,4],"q":null}]]"#,
    );
    let col = x.index(&[Index::ALL, 1.into()]).unwrap();
    assert_eq!(col.to_json(), r#"[null,{"p":[3,4],"q":null}]"#);
    let tr = x.permute(&[1, 0]).unwrap();
    assert_eq!(
        tr.to_json(),
        r#"[[{"p":[1,2],"q":[1.5,2.5,3.5]},null],[null,{"p":[3,4],"q":null}]]"#
    );
    let back = Array::empty("2 * 2 * ?{p: (int16, int16), q: ?3 * float64}").unwrap();
    back.assign(&tr, ErrorMode::Default).unwrap();
    assert_eq!(
        back.to_json(),
        r#"[[{"p":[1,2],"q":[1.5,2.5,3.5]},null],[null,{"p":[3,4],"q":null}]]"#
    );
}

// ------------------------------------------------------------- assignment

#[test]
fn assignment_with_options_table() {
    use ErrorKind::InvalidArgument as IA;
    use ErrorMode::*;
    #[rustfmt::skip]
    check_rows(Exact, &[
        // ---- ?T ← ?U: between options.
        ("?{a: int64}", "?{a: int8}", r#"{"a":3}"#, Default, Ok(r#"{"a":3}"#)),
        ("?{a: int64}", "?{a: int8}", "null", Default, Ok("null")),
        ("3 * ?{a: ?int64, b: string}", "3 * ?{b: string, a: ?int8}", r#"[{"b":"x","a":null},null,{"b":"","a":1}]"#, Default, Ok(r#"[{"a":null,"b":"x"},null,{"a":1,"b":""}]"#)),
        ("?var * float64", "?var * int32", "[1,2]", Default, Ok("[1.0,2.0]")),
        ("?var * float64", "?var * int32", "null", Default, Ok("null")),
        ("2 * ?var * ?int8", "2 * ?var * ?int64", "[[1,null],null]", Default, Ok("[[1,null],null]")),
        ("?3 * int8", "?3 * int32", "[1,2,3]", Default, Ok("[1,2,3]")),
        ("?fixed_string[3]", "?string", r#""abc""#, Default, Ok(r#""abc""#)),
        ("?fixed_string[3]", "?string", "null", Default, Ok("null")),
        ("?string", "?fixed_string[3]", "null", Default, Ok("null")),
        ("?(int8, float32)", "?{a: int16, b: float64}", r#"{"a":1,"b":0.5}"#, Default, Ok("[1,0.5]")),
        // a value that does not fit is an error of its own kind, not "missing"
        ("?{a: int8}", "?{a: int32}", r#"{"a":300}"#, Default, Err((ErrorKind::Overflow, "int32 value 300 is out of range for int8"))),
        ("?var * int8", "?var * int32", "[1,300]", Overflow, Err((ErrorKind::Overflow, "int32 value 300 is out of range for int8"))),
        // ---- T → ?T never fails for missing.
        ("?{a: int32}", "{a: int32}", r#"{"a":-2147483648}"#, Default, Ok(r#"{"a":-2147483648}"#)),
        ("?3 * int32", "3 * int32", "[1,2,3]", Default, Ok("[1,2,3]")),
        ("?3 * int32", "int32", "7", Default, Ok("[7,7,7]")),
        ("?var * int32", "var * int8", "[1,2]", Default, Ok("[1,2]")),
        ("?var * int32", "var * int8", "[]", Default, Ok("[]")),
        ("2 * ?{a: int8}", "2 * {a: int8}", r#"[{"a":1},{"a":2}]"#, NoCheck, Ok(r#"[{"a":1},{"a":2}]"#)),
        ("2 * ?{a: int8}", "{a: int8}", r#"{"a":5}"#, Default, Ok(r#"[{"a":5},{"a":5}]"#)),
        ("?fixed_string[2]", "string", r#""hi""#, Default, Ok(r#""hi""#)),
        // the value's own conversion errors still apply
        ("?3 * int8", "3 * int32", "[1,2,300]", Default, Err((ErrorKind::Overflow, "int32 value 300 is out of range for int8"))),
        // ---- ?T → T names the missing position.
        ("{a: int32}", "?{a: int32}", r#"{"a":1}"#, Default, Ok(r#"{"a":1}"#)),
        ("3 * int32", "?3 * int32", "[1,2,3]", Default, Ok("[1,2,3]")),
        ("var * int32", "?var * int8", "[1,2]", Default, Ok("[1,2]")),
        ("{a: int32}", "?{a: int32}", "null", Default, Err((IA, "a missing value cannot be assigned to {a: int32}"))),
        ("3 * int32", "?3 * int32", "null", NoCheck, Err((IA, "a missing value cannot be assigned to 3 * int32"))),
        ("var * int32", "?var * int32", "null", Inexact, Err((IA, "a missing value cannot be assigned to var * int32"))),
        ("int32", "?int32", "null", NoCheck, Err((IA, "a missing value cannot be assigned to int32"))),
        // positions, as the JSON reader writes them
        ("4 * int32", "4 * ?int32", "[1,2,3,null]", Default, Err((IA, "[3]: a missing value cannot be assigned to int32"))),
        ("5 * {name: string, age: int32}", "5 * {name: string, age: ?int32}",
            r#"[{"name":"a","age":1},{"name":"b","age":2},{"name":"c","age":3},{"name":"d","age":null},{"name":"e","age":5}]"#,
            Default, Err((IA, "[3].age: a missing value cannot be assigned to int32"))),
        ("var * {age: int32}", "var * {age: ?int32}", r#"[{"age":1},{"age":null}]"#, NoCheck,
            Err((IA, "[1].age: a missing value cannot be assigned to int32"))),
        ("3 * var * int8", "3 * var * ?int8", "[[1],[2,3],[4,null]]", Default, Err((IA, "[2][1]: a missing value cannot be assigned to int8"))),
        ("2 * 2 * int8", "2 * 2 * ?int8", "[[1,2],[null,3]]", Default, Err((IA, "[1][0]: a missing value cannot be assigned to int8"))),
        ("2 * {p: (int8, int8)}", "2 * {p: (int8, ?int8)}", r#"[{"p":[1,2]},{"p":[3,null]}]"#, Default, Err((IA, "[1].p[1]: a missing value cannot be assigned to int8"))),
        ("2 * {'a b': int8}", "2 * {'a b': ?int8}", r#"[{"a b":1},{"a b":null}]"#, Default, Err((IA, r#"[1]["a b"]: a missing value cannot be assigned to int8"#))),
        ("2 * {a: int8}", "2 * ?{a: int8}", r#"[{"a":1},null]"#, Default, Err((IA, "[1]: a missing value cannot be assigned to {a: int8}"))),
        ("2 * var * int8", "2 * ?var * int8", "[[1],null]", Default, Err((IA, "[1]: a missing value cannot be assigned to var * int8"))),
        // ---- Options broadcast over dims.
        // an option source repeated over the destination's extra dims
        ("2 * ?{a: int8}", "?{a: int8}", "null", Default, Ok("[null,null]")),
        ("2 * ?3 * int8", "?3 * int8", "[1,2,3]", Default, Ok("[[1,2,3],[1,2,3]]")),
        ("2 * ?var * int8", "?var * int8", "null", Default, Ok("[null,null]")),
        ("2 * ?int8", "?int8", "null", Default, Ok("[null,null]")),
        // a scalar into an option of a dim fills it; a missing one makes
        // the whole value missing (`?T ← ?U`)
        ("?2 * ?int8", "?int8", "3", Default, Ok("[3,3]")),
        ("?2 * ?int8", "?int8", "null", Default, Ok("null")),
        // T → ?T inside dims, and back
        ("2 * ?3 * int32", "2 * 3 * int8", "[[1,2,3],[4,5,6]]", Default, Ok("[[1,2,3],[4,5,6]]")),
        ("2 * ?var * int32", "2 * var * int8", "[[1],[]]", Default, Ok("[[1],[]]")),
        ("2 * 3 * int32", "2 * ?3 * int8", "[[1,2,3],[4,5,6]]", Default, Ok("[[1,2,3],[4,5,6]]")),
        ("2 * 3 * int32", "?3 * int8", "[1,2,3]", Default, Ok("[[1,2,3],[1,2,3]]")),
        ("var * ?2 * int32", "var * 2 * int32", "[[1,2]]", Default, Ok("[[1,2]]")),
    ]);
}

#[test]
fn a_missing_scalar_into_a_plain_dim_is_an_error() {
    use ErrorMode::*;
    // A missing scalar into a non-option dim is still an error.
    let e = assign("2 * int8", "?int8", "null", Default).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn type_errors_name_both_types() {
    for (dst, src, json) in [
        ("?{a: int8}", "?{b: int8}", "null"),
        ("?3 * int8", "?{a: int8}", "null"),
        ("?{a: int8}", "int8", "1"),
    ] {
        let e = assign(dst, src, json, ErrorMode::Default).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Type, "{dst} <- {src}: {e}");
    }
}

// --------------------------------------------------------------- proptest

/// `v`'s JSON text, or `null` about half the time: the value of an option.
fn or_null(v: impl Strategy<Value = String> + 'static) -> BoxedStrategy<String> {
    (v, any::<bool>())
        .prop_map(|(x, missing)| if missing { "null".to_string() } else { x })
        .boxed()
}

/// A JSON value for a type built from a few option-of-compound shapes:
/// (datashape, strategy for its JSON text).
fn option_value(depth: u32) -> BoxedStrategy<(String, BoxedStrategy<String>)> {
    let leaf = prop_oneof![
        Just((
            "?int32".to_string(),
            prop_oneof![
                Just("null".to_string()),
                any::<i32>()
                    .prop_filter("NA", |v| *v != i32::MIN)
                    .prop_map(|v| v.to_string())
            ]
            .boxed()
        )),
        Just((
            "?string".to_string(),
            prop_oneof![
                Just("null".to_string()),
                "[a-z]{0,4}".prop_map(|s| format!("{s:?}"))
            ]
            .boxed()
        )),
        Just((
            "float64".to_string(),
            (-1000i32..1000).prop_map(|v| format!("{}.5", v)).boxed()
        )),
    ];
    leaf.prop_recursive(depth, 16, 3, |inner| {
        prop_oneof![
            // ?{a: A, b: B}
            (inner.clone(), inner.clone()).prop_map(|((ta, va), (tb, vb))| {
                let v = (va, vb).prop_map(|(x, y)| format!(r#"{{"a":{x},"b":{y}}}"#));
                (format!("?{{a: {ta}, b: {tb}}}"), or_null(v))
            }),
            // ?var * A
            inner.clone().prop_map(|(ta, va)| {
                let v =
                    prop::collection::vec(va, 0..4).prop_map(|xs| format!("[{}]", xs.join(",")));
                (format!("?var * {ta}"), or_null(v))
            }),
            // ?2 * A
            inner.clone().prop_map(|(ta, va)| {
                let v = (va.clone(), va).prop_map(|(x, y)| format!("[{x},{y}]"));
                (format!("?2 * {ta}"), or_null(v))
            }),
            // ?(A, B)
            (inner.clone(), inner).prop_map(|((ta, va), (tb, vb))| {
                let v = (va, vb).prop_map(|(x, y)| format!("[{x},{y}]"));
                (format!("?({ta}, {tb})"), or_null(v))
            }),
        ]
    })
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn json_to_array_to_json_round_trips((ds, json) in option_value(3).prop_flat_map(|(ds, v)| (Just(ds), v))) {
        let tp = Type::parse(&ds).unwrap();
        prop_assert_eq!(Type::parse(&tp.to_string()).unwrap(), tp.clone());
        let x = Array::from_json(&*ds, &json).unwrap();
        prop_assert_eq!(x.to_json(), json.clone());
        // Through a copy, and through an assignment to the same type.
        prop_assert_eq!(x.copy().unwrap().to_json(), json.clone());
        let y = Array::empty(&*ds).unwrap();
        y.assign(&x, ErrorMode::Default).unwrap();
        prop_assert_eq!(y.to_json(), json);
    }
}

// ------------------------------------------------ indexing through options

#[test]
fn fields_through_options_are_missing_where_the_record_is() {
    let x = a(
        "3 * ?{a: int32, s: string, n: ?int8, p: {q: int16}}",
        r#"[{"a":1,"s":"x","n":null,"p":{"q":5}},null,{"a":3,"s":"z","n":7,"p":{"q":6}}]"#,
    );
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str)] = &[
        ("a", "3 * ?int32", "[1,null,3]"),
        ("s", "3 * ?string", r#"["x",null,"z"]"#),
        // A field that is optional itself stays `?int8`, not `??int8`.
        ("n", "3 * ?int8", "[null,null,7]"),
        ("p", "3 * ?{q: int16}", r#"[{"q":5},null,{"q":6}]"#),
    ];
    for (name, tp, json) in cases {
        assert_eq!(ok(x.field(name)), pair(tp, json), "{name}");
    }
    // Chained: a field of the optional record just made.
    let q = x.field("p").and_then(|p| p.field("q"));
    assert_ok(q, "3 * ?int16", "[5,null,6]");
    // Nested options, var dims outside, a 0-d option, an option of a dim.
    let n = a(
        "2 * var * ?{b: ?{c: int8}}",
        r#"[[{"b":{"c":1}},{"b":null},null],[]]"#,
    );
    assert_ok(
        n.field("b").and_then(|b| b.field("c")),
        "2 * var * ?int8",
        "[[1,null,null],[]]",
    );
    assert_ok(a("?{a: int32}", "null").field("a"), "?int32", "null");
    assert_ok(a("?{a: int32}", r#"{"a":4}"#).field("a"), "?int32", "4");
    let rows = a("3 * ?var * {a: int32}", r#"[[{"a":1},{"a":2}],null,[]]"#);
    assert_ok(rows.field("a"), "3 * ?var * int32", "[[1,2],null,[]]");
    // A view stays a view where no option is crossed.
    let plain = a("2 * {a: int32}", r#"[{"a":1},{"a":2}]"#);
    assert_eq!(
        plain.field("a").unwrap().data_ptr(),
        plain.data_ptr(),
        "a view"
    );
    // Through an option, a copy: writing to it leaves x alone.
    let f = x.field("a").unwrap();
    f.index(&[0.into()])
        .unwrap()
        .assign(&Array::from(9i32), ErrorMode::Default)
        .unwrap();
    assert_eq!(f.to_json(), "[9,null,3]");
    assert_eq!(x.field("a").unwrap().to_json(), "[1,null,3]");
}

#[test]
fn indexing_rows_through_options() {
    let r = a("3 * ?var * int32", "[[1,2],null,[3]]");
    let f = a("2 * ?3 * int32", "[[1,2,3],null]");
    #[rustfmt::skip]
    let cases: &[(&Array, Vec<Index>, &str, &str)] = &[
        (&r, vec![Index::ALL, 0.into()], "3 * ?int32", "[1,null,3]"),
        (&r, vec![Index::ALL, (-1).into()], "3 * ?int32", "[2,null,3]"),
        (&r, vec![Index::ALL, (1..).into()], "3 * ?var * int32", "[[2],null,[]]"),
        (&r, vec![Index::ALL, Index::slice(None, None, -1)], "3 * ?var * int32", "[[2,1],null,[3]]"),
        (&r, vec![Index::slice(None, None, -2), 0.into()], "2 * ?int32", "[3,1]"),
        (&r, vec![1.into(), 0.into()], "?int32", "null"),
        (&r, vec![0.into(), 1.into()], "?int32", "2"),
        (&f, vec![Index::ALL, 1.into()], "2 * ?int32", "[2,null]"),
        (&f, vec![Index::ALL, (..2).into()], "2 * ?2 * int32", "[[1,2],null]"),
        // An index that crosses no option is the usual view.
        (&f, vec![1.into()], "?3 * int32", "null"),
    ];
    for (x, ix, tp, json) in cases {
        assert_eq!(ok(x.index(ix)), pair(tp, json), "{} {ix:?}", x.tp());
    }
    // Options inside, strings, dims under the option, a 0-d option.
    #[rustfmt::skip]
    let more: &[(&str, &str, Vec<Index>, &str, &str)] = &[
        ("2 * ?var * ?int32", "[[null,1],null]", vec![Index::ALL, 0.into()], "2 * ?int32", "[null,null]"),
        ("2 * ?var * ?int32", "[[null,1],null]", vec![Index::ALL, 1.into()], "2 * ?int32", "[1,null]"),
        ("3 * ?var * string", r#"[["a","b"],null,["c"]]"#, vec![Index::ALL, 0.into()], "3 * ?string", r#"["a",null,"c"]"#),
        ("2 * ?2 * var * int32", "[[[1],[2,3]],null]", vec![Index::ALL, 1.into(), 0.into()], "2 * ?int32", "[2,null]"),
        ("2 * ?2 * var * int32", "[[[1],[2,3]],null]", vec![Index::ALL, Index::ALL, 0.into()], "2 * ?2 * int32", "[[1,2],null]"),
        ("?3 * int32", "[4,5,6]", vec![(-1).into()], "?int32", "6"),
        ("?3 * int32", "null", vec![0.into()], "?int32", "null"),
        ("var * ?var * int8", "[[1],null,[2,3]]", vec![Index::ALL, (-1).into()], "var * ?int8", "[1,null,3]"),
        // A ragged step first, then through the option.
        ("2 * var * ?2 * int32", "[[[1,2],null],[[3,4]]]", vec![Index::ALL, Index::ALL, 1.into()], "2 * var * ?int32", "[[2,null],[4]]"),
        ("2 * var * ?2 * int32", "[[[1,2],null],[[3,4]]]", vec![Index::ALL, 0.into(), 1.into()], "2 * ?int32", "[2,4]"),
        // An empty outer dim.
        ("0 * ?var * int32", "[]", vec![Index::ALL, 5.into()], "0 * ?int32", "[]"),
    ];
    for (tp, json, ix, rt, rj) in more {
        assert_eq!(ok(a(tp, json).index(ix)), pair(rt, rj), "{tp} {ix:?}");
    }
}

#[test]
fn bad_indices_through_options_name_what_and_where() {
    let r = a("3 * ?var * int32", "[[1,2],null,[3]]");
    let f = a("2 * ?3 * int32", "[null,null]");
    let deep = a("2 * ?var * var * int32", "[[[1],[]],null]");
    let s = a("3 * ?{a: int32}", r#"[{"a":1},null,{"a":3}]"#);
    #[rustfmt::skip]
    let cases: Vec<(dynd::Result<Array>, ErrorKind, &str)> = vec![
        // Past the end of a present row; the missing row is no error.
        (r.index(&[Index::ALL, 1.into()]), ErrorKind::Index,
         "index 1 is out of range for axis 1 in row [2], which has length 1"),
        (r.index(&[Index::ALL, (-3).into()]), ErrorKind::Index,
         "index -3 is out of range for axis 1 in row [0], which has length 2"),
        // A fixed row's range is the type's: an error even where all are missing.
        (a("?var * int32", "[1,2]").index(&[5.into()]), ErrorKind::Index,
         "index 5 is out of range for axis 0 with size 2"),
        (f.index(&[Index::ALL, 3.into()]), ErrorKind::Index,
         "index 3 is out of range for axis 1 with size 3"),
        (r.index(&[Index::ALL, Index::slice(None, None, 0)]), ErrorKind::Index,
         "slice step cannot be zero (axis 1)"),
        (r.index(&[Index::ALL, 0.into(), 0.into()]), ErrorKind::Index,
         "too many indices: 3 given for an array of type 3 * ?var * int32 with 2 dimensions"),
        (deep.index(&[Index::ALL, Index::ALL, 0.into()]), ErrorKind::Index,
         "in row [0]: index 0 is out of range for axis 2 in row [1], which has length 0"),
        (s.field("b"), ErrorKind::Index, "no field named 'b' in {a: int32} (fields: a)"),
        (a("3 * ?int32", "[1,null,3]").field("a"), ErrorKind::Type,
         "cannot take field 'a' of 3 * ?int32: ?int32 is not a struct"),
        (a("2 * ?var * int32", "[[1],null]").field("a"), ErrorKind::Type,
         "cannot take field 'a' of 2 * ?var * int32: int32 is not a struct"),
    ];
    for (got, kind, msg) in cases {
        let e = got.unwrap_err();
        assert_eq!((e.kind(), e.message()), (kind, msg));
    }
}

proptest! {
    /// `x[:, i]` of `N * ?var * int32` and field `a` of
    /// `N * ?{a: int32, s: string}` against plain loops.
    #[test]
    fn indexing_through_options_equals_a_plain_loop(
        rows in proptest::collection::vec(
            proptest::option::of(proptest::collection::vec(-99i32..99, 0..4)), 0..10),
        i in -4isize..4,
    ) {
        let show = |r: &[i32]| format!("[{}]", r.iter().map(i32::to_string).collect::<Vec<_>>().join(","));
        let n = rows.len();
        let x_json = format!("[{}]", rows.iter()
            .map(|r| r.as_deref().map_or("null".to_string(), show))
            .collect::<Vec<_>>().join(","));
        let x = a(&format!("{n} * ?var * int32"), &x_json);
        // The plain loop: the first present row too short is the error.
        let mut out = Vec::new();
        let mut bad = None;
        for (k, r) in rows.iter().enumerate() {
            match r {
                None => out.push("null".to_string()),
                Some(r) => {
                    let j = if i < 0 { i + r.len() as isize } else { i };
                    if j < 0 || j >= r.len() as isize {
                        bad.get_or_insert(format!(
                            "index {i} is out of range for axis 1 in row [{k}], which has length {}", r.len()));
                    } else {
                        out.push(r[j as usize].to_string());
                    }
                }
            }
        }
        match (x.index(&[Index::ALL, i.into()]), bad) {
            (Ok(got), None) => {
                prop_assert_eq!(got.tp().to_string(), format!("{n} * ?int32"));
                prop_assert_eq!(got.to_json(), format!("[{}]", out.join(",")));
            }
            (Err(e), Some(msg)) => prop_assert_eq!(e.message(), msg.as_str()),
            (got, bad) => prop_assert!(false, "{:?} vs {:?}", got.map(|g| g.to_json()), bad),
        }
        // The records: a = the row's length, s = its first value.
        let recs = format!("[{}]", rows.iter().map(|r| match r {
            None => "null".to_string(),
            Some(r) => format!(r#"{{"a":{},"s":"{}"}}"#, r.len(), r.first().copied().unwrap_or(0)),
        }).collect::<Vec<_>>().join(","));
        let s = a(&format!("{n} * ?{{a: int32, s: string}}"), &recs);
        let want_a: Vec<String> = rows.iter()
            .map(|r| r.as_ref().map_or("null".to_string(), |r| r.len().to_string())).collect();
        prop_assert_eq!(ok(s.field("a")), pair(&format!("{n} * ?int32"), &format!("[{}]", want_a.join(","))));
        let want_s: Vec<String> = rows.iter().map(|r| r.as_ref().map_or("null".to_string(),
            |r| format!(r#""{}""#, r.first().copied().unwrap_or(0)))).collect();
        prop_assert_eq!(ok(s.field("s")), pair(&format!("{n} * ?string"), &format!("[{}]", want_s.join(","))));
    }
}
