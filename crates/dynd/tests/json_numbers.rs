//! JSON numbers through every reader path (a lone scalar, the tight loop
//! of `N * T` and `var * T`, a struct field): floats parse to exactly
//! `str::parse`'s correctly rounded value, integers exactly or with an
//! overflow error, and errors name the element as they always have.

use dynd::{Array, ErrorKind};
use proptest::prelude::*;

/// The float64 values of `tok` read as a scalar, as the one element of a
/// var dim, in the middle of a fixed dim, and as a struct field.
fn f64_everywhere(tok: &str) -> [dynd::Result<f64>; 4] {
    let scalar = Array::from_json("float64", tok).and_then(|a| a.as_scalar::<f64>());
    let var = Array::from_json("var * float64", &format!("[{tok}]"))
        .and_then(|a| a.index(&[0.into()])?.as_scalar::<f64>());
    let fixed = Array::from_json("3 * float64", &format!("[1.5,{tok} ,\n2]"))
        .and_then(|a| a.index(&[1.into()])?.as_scalar::<f64>());
    let field = Array::from_json(
        "{a: int8, x: float64}",
        &format!("{{\"a\": 1, \"x\": {tok}}}"),
    )
    .and_then(|a| a.field("x")?.as_scalar::<f64>());
    [scalar, var, fixed, field]
}

/// `tok` reads everywhere as `str::parse::<f64>` does, bit for bit; a
/// token out of range is an overflow error everywhere.
fn check_f64(tok: &str) {
    let want: f64 = tok.parse().expect("a Rust float token");
    for got in f64_everywhere(tok) {
        if want.is_finite() {
            let got = got.unwrap_or_else(|e| panic!("{tok}: {e}"));
            assert_eq!(got.to_bits(), want.to_bits(), "{tok}: {got:e} != {want:e}");
        } else {
            let e = got.expect_err(tok);
            assert_eq!(e.kind(), ErrorKind::Overflow, "{tok}: {e}");
        }
    }
}

/// The same for float32.
fn check_f32(tok: &str) {
    let want: f32 = tok.parse().expect("a Rust float token");
    let got = Array::from_json("var * float32", &format!("[0, {tok}]"))
        .and_then(|a| a.index(&[1.into()])?.as_scalar::<f32>());
    if want.is_finite() {
        let got = got.unwrap_or_else(|e| panic!("{tok}: {e}"));
        assert_eq!(got.to_bits(), want.to_bits(), "{tok}: {got:e} != {want:e}");
    } else {
        assert_eq!(got.expect_err(tok).kind(), ErrorKind::Overflow, "{tok}");
    }
}

#[test]
fn float_edges_are_correctly_rounded() {
    for tok in [
        "0",
        "-0",
        "-0.0",
        "0.1",
        "0.30000000000000004",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "2.2250738585072014e-308",
        "2.2250738585072011e-308",
        "4.9406564584124654e-324",
        "5e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "1e-400",
        "1e308",
        "1e309",
        "9007199254740993",
        "9007199254740992.5",
        "123456789012345678901234567890",
        "0.000000000000000000000000000001",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124",
        "7.2057594037927933e16",
        "12345678.12345678",
        "99999999.99999999",
        "100000000",
        "1.5e-7",
        "-1e22",
        "1e23",
        "8.98846567431158e307",
    ] {
        check_f64(tok);
        check_f32(tok);
    }
}

#[test]
fn integer_boundaries_and_overflow() {
    let i64s = [
        i64::MIN,
        i64::MIN + 1,
        -1,
        0,
        1,
        99_999_999,
        100_000_000,
        i64::MAX - 1,
        i64::MAX,
    ];
    for v in i64s {
        let a = Array::from_json("var * int64", &format!("[{v}, {v}]")).expect("int64");
        assert_eq!(a.to_json(), format!("[{v},{v}]"));
    }
    for v in [0, 1, u64::MAX / 10, u64::MAX - 1, u64::MAX] {
        let a = Array::from_json("2 * uint64", &format!("[{v},{v}]")).expect("uint64");
        assert_eq!(a.to_json(), format!("[{v},{v}]"));
    }
    for (tp, text, at) in [
        ("var * int64", "[0, 9223372036854775808]", "at [1]"),
        ("var * int64", "[-9223372036854775809]", "at [0]"),
        ("3 * uint64", "[1, 2, 18446744073709551616]", "at [2]"),
        ("var * uint64", "[-1]", "at [0]"),
        ("var * int32", "[1, 2, 3, 2147483648]", "at [3]"),
        ("2 * var * int8", "[[1], [2, 128]]", "at [1][1]"),
        ("var * float64", "[1, 2, 1e400]", "at [2]"),
        ("var * float32", "[1, 1e39]", "at [1]"),
    ] {
        let e = Array::from_json(tp, text).expect_err(text);
        assert_eq!(e.kind(), ErrorKind::Overflow, "{tp} <- {text}: {e}");
        assert!(e.message().contains(at), "{tp} <- {text}: {e}");
        assert!(e.message().contains("out of range"), "{tp} <- {text}: {e}");
    }
}

#[test]
fn errors_in_number_loops_name_the_element() {
    for (tp, text, kind, msg) in [
        (
            "var * float64",
            "[1.5, 2.5,\n 3.x]",
            ErrorKind::Parse,
            "JSON line 2, column 2 at [2]: malformed number",
        ),
        (
            "2 * float64",
            "[1, 2, 3]",
            ErrorKind::Parse,
            "JSON line 1, column 7 at [2]: too many elements for 2 * float64: expected 2",
        ),
        (
            "3 * float64",
            "[1, 2]",
            ErrorKind::Parse,
            "JSON line 1, column 7: expected 3 elements for 3 * float64, found 2",
        ),
        (
            "var * int64",
            "[1, \"2\"]",
            ErrorKind::Parse,
            "JSON line 1, column 5 at [1]: expected a number for int64, found a string",
        ),
        (
            "var * int64",
            "[1, 2.5]",
            ErrorKind::Fractional,
            "JSON line 1, column 5 at [1]: 2.5 is not an integer, so it cannot be stored in int64",
        ),
        (
            "var * float64",
            "[1, 2",
            ErrorKind::Parse,
            "JSON line 1, column 6: expected ',' or ']' in the array, found the end of the text",
        ),
        (
            "var * float64",
            "1",
            ErrorKind::Parse,
            "JSON line 1, column 1: expected an array for var * float64, found a number",
        ),
    ] {
        let e = Array::from_json(tp, text).expect_err(text);
        assert_eq!(e.kind(), kind, "{tp} <- {text}: {e}");
        assert_eq!(e.message(), msg, "{tp} <- {text}");
    }
}

#[test]
fn specials_and_long_arrays_in_the_loop() {
    let a = Array::from_json("var * float64", "[NaN, Infinity, -Infinity, 1e5, -0.0]")
        .expect("specials");
    assert_eq!(a.to_json(), "[NaN,Infinity,-Infinity,100000.0,-0.0]");
    // Past the first allocation's growth, with the last number at the end
    // of the text (no byte after the closing bracket).
    let items: Vec<String> = (0..1000).map(|i| format!("{i}.{}", i % 7)).collect();
    let text = format!("[{}]", items.join(","));
    let a = Array::from_json("var * float64", &text).expect("long");
    for (i, item) in items.iter().enumerate() {
        let v = a.index(&[i.into()]).and_then(|x| x.as_scalar::<f64>());
        assert_eq!(v.expect("element"), item.parse::<f64>().expect("float"));
    }
    let a = Array::from_json("float64", "12345678.5").expect("scalar at the end");
    assert_eq!(a.as_scalar::<f64>().expect("f64"), 12345678.5);
}

/// Long digit strings, made by hand: up to 40 integer digits, 40 fraction
/// digits and a 3-digit exponent.
fn long_token() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        "(0|[1-9][0-9]{0,39})",
        proptest::option::of("[0-9]{1,40}"),
        proptest::option::of("[eE][+-]?[0-9]{1,3}"),
    )
        .prop_map(|(neg, int, frac, exp)| {
            format!(
                "{}{int}{}{}",
                if neg { "-" } else { "" },
                frac.map(|f| format!(".{f}")).unwrap_or_default(),
                exp.unwrap_or_default()
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_f64_bits_read_back_exactly(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        if x.is_finite() {
            check_f64(&format!("{x}"));
            check_f64(&format!("{x:e}"));
            check_f64(&format!("{x:.17e}"));
        }
    }

    #[test]
    fn subnormals_read_back_exactly(m in 0u64..(1 << 52), neg in any::<bool>()) {
        let x = f64::from_bits(m | (u64::from(neg) << 63));
        check_f64(&format!("{x:e}"));
        check_f64(&format!("{x:.20e}"));
    }

    #[test]
    fn long_digit_strings_are_correctly_rounded(tok in long_token()) {
        check_f64(&tok);
        check_f32(&tok);
    }

    #[test]
    fn random_f32_bits_read_back_exactly(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        if x.is_finite() {
            check_f32(&format!("{x}"));
            check_f32(&format!("{x:e}"));
        }
    }

    #[test]
    fn integers_read_exactly_or_overflow(x in any::<i64>(), y in any::<u64>(), d in 1u64..1000) {
        let a = Array::from_json("var * int64", &format!("[{x}, {y}]"));
        match i64::try_from(y) {
            Ok(_) => prop_assert_eq!(a.expect("ints").to_json(), format!("[{x},{y}]")),
            Err(_) => {
                let e = a.expect_err("overflow");
                prop_assert_eq!(e.kind(), ErrorKind::Overflow);
                prop_assert!(e.message().contains("at [1]"), "{}", e);
            }
        }
        let big = u128::from(u64::MAX) + u128::from(d);
        let e = Array::from_json("2 * uint64", &format!("[{y}, {big}]")).expect_err("overflow");
        prop_assert_eq!(e.kind(), ErrorKind::Overflow);
        let a = Array::from_json("2 * uint64", &format!("[{y}, {y}.0]")).expect("integral");
        prop_assert_eq!(a.to_json(), format!("[{y},{y}]"));
    }
}

/// Tokens for whole arrays: the quick shape (short and up to 19 digits),
/// values near 2^53, negative zero, long mantissas and exponents (which the
/// tight loop leaves to the general path), so runs of quick numbers are
/// broken at random places.
fn array_token() -> impl Strategy<Value = String> {
    prop_oneof![
        "-?(0|[1-9][0-9]{0,2})\\.[0-9]{3}",
        "-?(0|[1-9][0-9]{0,9})(\\.[0-9]{1,9})?",
        "-?(0|[1-9][0-9]{0,18})(\\.[0-9]{1,19})?",
        (0u64..64, any::<bool>()).prop_map(|(d, neg)| {
            let v = (1u64 << 53) - 32 + d;
            format!("{}{v}", if neg { "-" } else { "" })
        }),
        Just("-0".to_string()),
        Just("-0.0".to_string()),
        long_token(),
    ]
}

/// Separators between elements, as people and printers write them.
fn separator() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(","),
        Just(", "),
        Just(" , "),
        Just(",\n  "),
        Just("\t,\r\n")
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A whole array reads element by element as `str::parse` reads each
    /// token alone, in `var * float64`, `N * float64` and `var * float32`;
    /// where a token is out of range, the error names its element.
    #[test]
    fn arrays_of_numbers_read_as_each_token(
        items in proptest::collection::vec((array_token(), separator()), 1..40),
        open in prop_oneof![Just("["), Just("[ "), Just("[\n")],
        close in prop_oneof![Just("]"), Just(" ]"), Just("\n]")],
    ) {
        let mut text = open.to_string();
        for (k, (tok, sep)) in items.iter().enumerate() {
            if k > 0 {
                text.push_str(sep);
            }
            text.push_str(tok);
        }
        text.push_str(close);
        let n = items.len();
        let f64s: Vec<f64> = items.iter().map(|(t, _)| t.parse().expect("token")).collect();
        for tp in ["var * float64".to_string(), format!("{n} * float64")] {
            let got = Array::from_json(tp.as_str(), &text);
            match f64s.iter().position(|v| v.is_infinite()) {
                None => {
                    let a = got.expect(&text);
                    for (k, want) in f64s.iter().enumerate() {
                        let v = a.index(&[k.into()])?.as_scalar::<f64>()?;
                        prop_assert_eq!(v.to_bits(), want.to_bits(), "{} [{}] in {}", tp, k, text);
                    }
                }
                Some(k) => {
                    let e = got.expect_err(&text);
                    prop_assert_eq!(e.kind(), ErrorKind::Overflow);
                    let at = format!(" at [{k}]: ");
                    prop_assert!(e.message().contains(&at), "{}", e);
                }
            }
        }
        let f32s: Vec<f32> = items.iter().map(|(t, _)| t.parse().expect("token")).collect();
        let got = Array::from_json("var * float32", &text);
        if f32s.iter().all(|v| v.is_finite()) {
            let a = got.expect(&text);
            for (k, want) in f32s.iter().enumerate() {
                let v = a.index(&[k.into()])?.as_scalar::<f32>()?;
                prop_assert_eq!(v.to_bits(), want.to_bits(), "float32 [{}] in {}", k, text);
            }
        }
    }

    /// Integer arrays: each element exactly, or the first element that
    /// does not fit (or is not integral) named in the error.
    #[test]
    fn arrays_of_integers_read_exactly(
        items in proptest::collection::vec(
            prop_oneof![
                any::<i64>().prop_map(|v| v.to_string()),
                (-300i64..300).prop_map(|v| v.to_string()),
                any::<u64>().prop_map(|v| v.to_string()),
                Just("1.5".to_string()),
                Just("2.0".to_string()),
                Just("-0".to_string()),
            ],
            1..30,
        ),
    ) {
        let text = format!("[{}]", items.join(", "));
        for (tp, lo, hi) in [
            ("var * int64", i128::from(i64::MIN), i128::from(i64::MAX)),
            ("var * int16", i128::from(i16::MIN), i128::from(i16::MAX)),
            ("var * uint8", 0, i128::from(u8::MAX)),
        ] {
            let vals: Vec<Option<i128>> = items
                .iter()
                .map(|t| match t.as_str() {
                    "1.5" => None,
                    "2.0" => Some(2),
                    t => t.parse::<i128>().ok().filter(|v| (lo..=hi).contains(v)),
                })
                .collect();
            let got = Array::from_json(tp, &text);
            match vals.iter().position(Option::is_none) {
                None => {
                    let want: Vec<String> =
                        vals.iter().map(|v| v.unwrap_or_default().to_string()).collect();
                    prop_assert_eq!(got.expect(&text).to_json(), format!("[{}]", want.join(",")));
                }
                Some(k) => {
                    let e = got.expect_err(&text);
                    let at = format!(" at [{k}]: ");
                    prop_assert!(e.message().contains(&at), "{} <- {}: {}", tp, text, e);
                }
            }
        }
    }
}

/// Errors and specials inside and right after a run of quick numbers
/// (the tight loop stops before them and the general path reads them).
#[test]
fn loop_hands_over_errors_and_specials() {
    for (tp, text, want) in [
        (
            "var * float64",
            "[1.5, 2.5, 3.5 4.5]",
            Err("JSON line 1, column 16: expected ',' or ']' in the array, found a number"),
        ),
        (
            "var * float64",
            "[1.5, 2.5, 3.5x]",
            Err("JSON line 1, column 12 at [2]: malformed number"),
        ),
        (
            "var * float64",
            "[1.5, 2.5,, 3]",
            Err("JSON line 1, column 11 at [2]: expected a number for float64, found ','"),
        ),
        (
            "var * float64",
            "[1.5, 2.5, 3.",
            Err("JSON line 1, column 12 at [2]: malformed number"),
        ),
        (
            "var * float64",
            "[1.5, 2.5, 3.5",
            Err(
                "JSON line 1, column 15: expected ',' or ']' in the array, found the end of the text",
            ),
        ),
        (
            "4 * float64",
            "[1.5, 2.5, 3.5, 4.5, 5.5]",
            Err("JSON line 1, column 21 at [4]: too many elements for 4 * float64: expected 4"),
        ),
        (
            "var * float64",
            "[1, 2, NaN, 4, 1e400]",
            Err("JSON line 1, column 16 at [4]: 1e400 is out of range for float64"),
        ),
        (
            "var * float64",
            "[1, 2, -Infinity, 4.25, 1e300, 0.1e-3, 12345678901234567890, 6]",
            Ok("[1.0,2.0,-Infinity,4.25,1e300,0.0001,1.2345678901234567e19,6.0]"),
        ),
        ("var * int8", "[1, 2, 3, 127, -128]", Ok("[1,2,3,127,-128]")),
        (
            "var * int8",
            "[1, 2, 3, 128]",
            Err("JSON line 1, column 11 at [3]: 128 is out of range for int8"),
        ),
        (
            "var * float16",
            "[1.5, 2.5, 65504]",
            Ok("[1.5,2.5,65504.0]"),
        ),
        (
            "2 * var * float64",
            "[[1.5, 2.5], [3.5, \"4\"]]",
            Err("JSON line 1, column 20 at [1][1]: expected a number for float64, found a string"),
        ),
    ] {
        let got = Array::from_json(tp, text).map(|a| a.to_json());
        match (got, want) {
            (Ok(json), Ok(w)) => assert_eq!(json, w, "{tp} from {text}"),
            (Err(e), Err(w)) => assert_eq!(e.message(), w, "{tp} from {text}"),
            (got, _) => panic!("{tp} from {text}: got {got:?}, want {want:?}"),
        }
    }
}
