//! JSON in and out for every type, DESIGN §8's conventions, and every bad
//! input kind: bad tokens, wrong shapes, out-of-range values, bad paths.

use crate::common;

use common::{assert_error, json_quote};
use dynd::{Array, ErrorKind};
use proptest::prelude::*;

fn rt(tp: &str, text: &str) -> String {
    Array::from_json(tp, text)
        .unwrap_or_else(|e| panic!("{tp} <- {text}: {e}"))
        .to_json()
}

fn err(tp: &str, text: &str) -> dynd::Error {
    match Array::from_json(tp, text) {
        Ok(a) => panic!("{tp} <- {text} should fail, got {}", a.to_json()),
        Err(e) => e,
    }
}

/// Each row's text fails to parse as its type with an error of its kind
/// whose message contains its words (`""`: any message).
fn check_errors(cases: &[(&str, &str, ErrorKind, &str)]) {
    for (tp, text, kind, words) in cases {
        let e = err(tp, text);
        assert_eq!(e.kind(), *kind, "{tp} <- {text}: {e}");
        assert!(e.message().contains(words), "{tp} <- {text}: {e}");
    }
}

#[test]
fn round_trips_of_every_type() {
    // (type, input, canonical output)
    #[rustfmt::skip]
    let cases = [
        ("bool", "true", "true"),
        ("int8", "-128", "-128"),
        ("int16", "32767", "32767"),
        ("int32", " 7 ", "7"),
        ("int64", "-9223372036854775808", "-9223372036854775808"),
        ("int128", "-170141183460469231731687303715884105728", "-170141183460469231731687303715884105728"),
        ("int128", "170141183460469231731687303715884105727", "170141183460469231731687303715884105727"),
        ("uint64", "18446744073709551615", "18446744073709551615"),
        ("uint128", "340282366920938463463374607431768211455", "340282366920938463463374607431768211455"),
        ("uint8", "-0", "0"),
        ("int32", "1e3", "1000"),
        ("int32", "2.0", "2"),
        ("int64", "-12.5e1", "-125"),
        ("float16", "0.5", "0.5"),
        ("float32", "0.1", "0.1"),
        ("float64", "0.1", "0.1"),
        ("float64", "1e300", "1e300"),
        ("float64", "-0.0", "-0.0"),
        ("float64", "5", "5.0"),
        ("float64", "NaN", "NaN"),
        ("float64", "Infinity", "Infinity"),
        ("float32", "-Infinity", "-Infinity"),
        ("complex[float64]", "[1.5, -2]", "[1.5,-2.0]"),
        ("complex[float32]", "3", "[3.0,0.0]"),
        ("complex[float64]", "[NaN, Infinity]", "[NaN,Infinity]"),
        ("string", r#""a\"b\\c\n\t\u00e9\ud83d\ude00""#, "\"a\\\"b\\\\c\\n\\té😀\""),
        ("string", r#""\u0001""#, r#""\u0001""#),
        ("string", r#""héllo wörld""#, r#""héllo wörld""#),
        ("bytes", r#""00ff10""#, r#""00ff10""#),
        ("fixed_bytes[2]", r#""abCD""#, r#""abcd""#),
        ("char", r#""é""#, r#""é""#),
        ("fixed_string[5]", r#""abc""#, r#""abc""#),
        ("fixed_string[3, 'ascii']", r#""abc""#, r#""abc""#),
        ("fixed_string[2, 'utf16']", r#""😀""#, r#""😀""#),
        ("fixed_string[4, 'utf32']", r#""aé😀""#, r#""aé😀""#),
        ("fixed_string[4, 'ucs2']", r#""aé""#, r#""aé""#),
        ("?int32", "null", "null"),
        ("?int32", "5", "5"),
        ("?float64", "NaN", "NaN"),
        ("?string", r#""""#, r#""""#),
        ("?bool", "null", "null"),
        ("3 * ?int8", "[1, null, -1]", "[1,null,-1]"),
        ("pointer[int32]", "42", "42"),
        ("2 * pointer[{a: int8}]", r#"[{"a":1}, null]"#, r#"[{"a":1},null]"#),
        ("void", "null", "null"),
        ("(int32, string)", r#"[1, "x"]"#, r#"[1,"x"]"#),
        ("{x: int32, y: float32}", r#"[1, 2]"#, r#"{"x":1,"y":2.0}"#),
        ("{x: int32, 'a b': bool}", r#"{"a b": true, "x": 3}"#, r#"{"x":3,"a b":true}"#),
        ("{x: int32}", r#"{"x": 1, "extra": [1, {"q": null}], "more": "s"}"#, r#"{"x":1}"#),
        ("0 * int32", "[]", "[]"),
        ("var * int32", "[]", "[]"),
        ("2 * var * int32", "[[1, 2, 3], []]", "[[1,2,3],[]]"),
        ("var * var * string", r#"[["a"], [], ["b", "c"]]"#, r#"[["a"],[],["b","c"]]"#),
        (
            "3 * var * {x: int32, name: ?string}",
            r#"[[{"x": 1, "name": "a"}], [], [{"x": 2, "name": null}, {"x": 3, "name": ""}]]"#,
            r#"[[{"x":1,"name":"a"}],[],[{"x":2,"name":null},{"x":3,"name":""}]]"#,
        ),
        ("var * {v: var * (int8, ?string), t: 2 * complex[float32]}", r#"[{"v": [[1, "a"], [2, null]], "t": [[1, 2], 3]}]"#, r#"[{"v":[[1,"a"],[2,null]],"t":[[1.0,2.0],[3.0,0.0]]}]"#),
    ];
    for (tp, input, want) in cases {
        assert_eq!(rt(tp, input), want, "{tp} <- {input}");
        // Printing is a fixed point: the output parses back to itself.
        assert_eq!(rt(tp, want), want, "{tp} <- {want}");
    }
}

#[test]
fn large_var_dims_grow_and_stay_intact() {
    let n = 10_000;
    let text = format!(
        "[{}]",
        (0..n)
            .map(|i| format!("[{i}, \"s{i}\"]"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let a = Array::from_json("var * (int32, string)", &text).unwrap();
    assert_eq!(a.shape(), vec![Some(n)]);
    assert_eq!(a.to_json().len(), text.replace(", ", ",").len());
    assert_eq!(
        a.index(&[(n as isize - 1).into()]).unwrap().to_json(),
        format!("[{},\"s{}\"]", n - 1, n - 1)
    );
}

#[test]
fn range_checks() {
    use ErrorKind::{Fractional, Overflow};
    // (type, text, kind, words in the message)
    #[rustfmt::skip]
    check_errors(&[
        ("uint8", "256", Overflow, "256 is out of range for uint8"),
        ("uint8", "-1", Overflow, ""),
        ("int8", "128", Overflow, ""),
        ("int8", "-129", Overflow, ""),
        ("int32", "1.5", Fractional, "1.5 is not an integer"),
        ("int32", "1e-3", Fractional, ""),
        ("int64", "9223372036854775808", Overflow, ""),
        ("uint64", "18446744073709551616", Overflow, ""),
        ("int128", "170141183460469231731687303715884105728", Overflow, ""),
        ("uint128", "1e39", Overflow, ""),
        ("int32", "1e999999999999", Overflow, ""),
        ("int32", "NaN", Overflow, ""),
        ("uint16", "Infinity", Overflow, ""),
        ("float64", "1e400", Overflow, ""),
        ("float32", "1e39", Overflow, ""),
        ("float16", "70000", Overflow, ""),
        ("?int8", "-128", Overflow, "missing-value marker"),
        ("fixed_string[2]", r#""abc""#, Overflow, "3 code units does not fit in fixed_string[2]"),
    ]);
}

#[test]
fn errors_name_the_position_and_the_path() {
    let e = err("2 * var * {x: uint8}", r#"[[{"x": 1}], [{"x": 300}]]"#);
    assert_error(&e, ErrorKind::Overflow, "at [1][0].x");
    assert!(e.message().contains("line 1, column 21"), "{e}");
    let e = err(
        "3 * {'a b': int8}",
        "[{\"a b\": 1},\n {\"a b\": 2},\n {\"a b\": \"x\"}]",
    );
    assert!(e.message().contains("JSON line 3, column 10"), "{e}");
    assert!(e.message().contains(r#"at [2]["a b"]"#), "{e}");
    assert!(
        e.message()
            .contains("expected a number for int8, found a string"),
        "{e}"
    );
    let e = err("{x: int32, name: string}", r#"{"x": 1}"#);
    assert_error(&e, ErrorKind::Parse, "missing field \"name\"");
}

#[test]
fn malformed_and_mismatched_json() {
    // (type, text, kind, words in the message)
    #[rustfmt::skip]
    let cases: &[(&str, &str, ErrorKind, &str)] = &[
        ("int32", "", ErrorKind::Parse, "expected a number for int32, found the end of the text"),
        ("int32", "[1]", ErrorKind::Parse, "expected a number for int32, found an array"),
        ("int32", "1 2", ErrorKind::Parse, "unexpected text after the JSON value"),
        ("int32", "01", ErrorKind::Parse, "malformed number"),
        ("int32", "1.", ErrorKind::Parse, "malformed number"),
        ("int32", "-", ErrorKind::Parse, "malformed number"),
        ("int32", "+1", ErrorKind::Parse, "expected a number for int32"),
        ("float64", "nan", ErrorKind::Parse, "expected a number"),
        ("float64", "1e", ErrorKind::Parse, "malformed number"),
        ("bool", "1", ErrorKind::Parse, "expected true or false for bool"),
        ("bool", "truex", ErrorKind::Parse, "expected true or false"),
        ("3 * int32", "[1, 2]", ErrorKind::Parse, "expected 3 elements for 3 * int32, found 2"),
        ("3 * int32", "[1, 2, 3, 4]", ErrorKind::Parse, "too many elements for 3 * int32"),
        ("3 * int32", "[1 2 3]", ErrorKind::Parse, "expected ',' or ']'"),
        ("3 * int32", "[1, 2, 3", ErrorKind::Parse, "expected ',' or ']'"),
        ("var * int32", "{}", ErrorKind::Parse, "expected an array for var * int32, found an object"),
        ("string", "5", ErrorKind::Parse, "expected a string for string, found a number"),
        ("string", "\"abc", ErrorKind::Parse, "unterminated string"),
        ("string", r#""\ud800""#, ErrorKind::Parse, "lone surrogate"),
        ("string", r#""\udc00x""#, ErrorKind::Parse, "lone surrogate"),
        ("string", r#""\ud800\u0041""#, ErrorKind::Parse, "lone surrogate"),
        ("string", r#""\x41""#, ErrorKind::Parse, "invalid escape"),
        ("string", r#""\u12g4""#, ErrorKind::Parse, "4 hex digits"),
        ("string", "\"a\nb\"", ErrorKind::Parse, "control character"),
        ("char", r#""ab""#, ErrorKind::Parse, "exactly one character"),
        ("bytes", r#""abc""#, ErrorKind::Parse, "hex digit pairs"),
        ("fixed_bytes[2]", r#""00""#, ErrorKind::Parse, "expected 2 bytes"),
        ("fixed_string[4, 'ascii']", r#""é""#, ErrorKind::Parse, "cannot be encoded as ascii"),
        ("fixed_string[4, 'ucs2']", r#""😀""#, ErrorKind::Parse, "ucs2"),
        ("{x: int32}", r#"{"x": 1, "x": 2}"#, ErrorKind::Parse, "duplicate key"),
        ("{x: int32}", r#"{x: 1}"#, ErrorKind::Parse, "expected a string key"),
        ("{x: int32}", r#"{"x" 1}"#, ErrorKind::Parse, "expected ':'"),
        ("{x: int32}", r#"{"x": 1, "y": [1, }"#, ErrorKind::Parse, "expected a JSON value, found '}'"),
        ("{x: int32}", r#"{"x": 1, "y": [1 2]}"#, ErrorKind::Parse, "expected ',' or ']' in the array"),
        ("{x: int32}", r#"[1, 2]"#, ErrorKind::Parse, "too many elements"),
        ("(int32, int32)", "[1]", ErrorKind::Parse, "expected 2 elements"),
        ("complex[float64]", "[1, 2, 3]", ErrorKind::Parse, "[real, imag]"),
        ("void", "0", ErrorKind::Parse, "expected null for void"),
        ("?int32", "nul", ErrorKind::Parse, "expected a number"),
    ];
    check_errors(cases);
}

#[test]
fn invalid_utf8_input_is_an_error() {
    let e = Array::from_json_bytes("string", b"\"\xff\"").unwrap_err();
    assert_error(&e, ErrorKind::Parse, "not valid utf-8");
}

#[test]
fn deeply_nested_unknown_values_are_refused_not_overflowed() {
    let text = format!(
        "{{\"x\": 1, \"junk\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let e = err("{x: int32}", &text);
    assert!(e.message().contains("nested too deeply"), "{e}");
}

#[test]
fn assign_json_writes_in_place_and_checks_var_lengths() {
    let a = Array::from_json("2 * var * int32", "[[1, 2], [3]]").unwrap();
    a.assign_json("[[5, 6], [7]]").unwrap();
    assert_eq!(a.to_json(), "[[5,6],[7]]");
    let e = a.assign_json("[[1], [2]]").unwrap_err();
    assert_error(&e, ErrorKind::Broadcast, "has 2 elements");
}

/// A value of `N * var * {x: int32, s: ?string}` as Rust data.
fn value_strategy() -> impl Strategy<Value = Vec<Vec<(i32, Option<String>)>>> {
    let s = proptest::option::of("[a-z\"\\\\é😀\u{1}]{0,6}");
    proptest::collection::vec(proptest::collection::vec((any::<i32>(), s), 0..5), 3)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn nested_values_round_trip(v in value_strategy()) {
        let text = format!(
            "[{}]",
            v.iter()
                .map(|row| format!(
                    "[{}]",
                    row.iter()
                        .map(|(x, s)| format!(
                            "{{\"x\":{x},\"s\":{}}}",
                            s.as_deref().map_or("null".to_string(), json_quote)
                        ))
                        .collect::<Vec<_>>()
                        .join(",")
                ))
                .collect::<Vec<_>>()
                .join(",")
        );
        let a = Array::from_json("3 * var * {x: int32, s: ?string}", &text).unwrap();
        prop_assert_eq!(a.to_json(), text);
        prop_assert_eq!(a.copy().unwrap().to_json(), a.to_json());
    }

    #[test]
    fn floats_print_in_shortest_round_trip_form(x in any::<f64>()) {
        let a = Array::from(x);
        let b = Array::from_json("float64", &a.to_json()).unwrap();
        let y = b.as_scalar::<f64>().unwrap();
        prop_assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
    }

    #[test]
    fn integers_round_trip_exactly(x in any::<i128>(), y in any::<u64>()) {
        prop_assert_eq!(Array::from_json("int128", &x.to_string()).unwrap().as_scalar::<i128>().unwrap(), x);
        prop_assert_eq!(Array::from_json("uint64", &y.to_string()).unwrap().as_scalar::<u64>().unwrap(), y);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,40}|[\\[\\]{},:\"0-9a-z\\\\. -]{0,40}") {
        for tp in ["int32", "var * ?string", "2 * {x: float64, y: var * int8}", "(bool, complex[float32])"] {
            let _ = Array::from_json(tp, &text);
        }
    }
}
