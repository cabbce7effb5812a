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
