//! Text assignment end to end (the `string` family of the assignment
//! kernels): string, bytes, fixed_string in every encoding, fixed_bytes and
//! char, between themselves and to and from numbers, under every error mode;
//! invalid source data; strided, reversed and unaligned data; one kernel
//! called from several threads at once; and property tests for round trips.

use crate::common;

use common::{elems, json_quote, scalar, whole, with_assign_kernel};
use dynd::array::StringData;
use dynd::kernels::KernelRequest::{Single, Strided};
use dynd::kernels::assign::ErrorMode;
use dynd::{Array, ErrorKind, Index, Type};
use proptest::prelude::*;
use std::mem::size_of;

/// What one assignment should give: the destination's JSON, or an error kind.
type Want = std::result::Result<&'static str, ErrorKind>;

const OVF: Want = Err(ErrorKind::Overflow);
const FRAC: Want = Err(ErrorKind::Fractional);
const INEX: Want = Err(ErrorKind::Inexact);
const PARSE: Want = Err(ErrorKind::Parse);
const TYPE: Want = Err(ErrorKind::Type);

/// The same result in every mode.
fn all(w: Want) -> [Want; 5] {
    [w; 5]
}

/// `src` (type, JSON) cast to `dst` under `mode`: the JSON of the result or
/// the error kind.
fn cast(src_tp: &str, src_json: &str, dst_tp: &str, mode: ErrorMode) -> Result<String, ErrorKind> {
    let src =
        Array::from_json(src_tp, src_json).unwrap_or_else(|e| panic!("{src_tp} {src_json}: {e}"));
    src.cast(dst_tp, mode)
        .map(|a| a.to_json())
        .map_err(|e| e.kind())
}

/// Runs a table of `(src type, src JSON, dst type, result per mode in
/// `ErrorMode::ALL` order)`.
fn check_table(table: &[(&str, &str, &str, [Want; 5])]) {
    let mut failures = Vec::new();
    for (src_tp, src_json, dst_tp, wants) in table {
        for (mode, want) in ErrorMode::ALL.into_iter().zip(wants) {
            let got = cast(src_tp, src_json, dst_tp, mode);
            if got.as_deref().map_err(|k| *k) != *want {
                failures.push(format!(
                    "{dst_tp} <- {src_tp} {src_json} ({mode}): got {got:?}, want {want:?}"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The message of the error of a cast (in default mode).
fn message(src_tp: &str, src_json: &str, dst_tp: &str) -> String {
    let src = Array::from_json(src_tp, src_json).unwrap();
    src.cast(dst_tp, ErrorMode::Default)
        .unwrap_err()
        .message()
        .to_owned()
}

// ------------------------------------------------------------- text <- text

#[test]
fn text_to_text_in_every_mode() {
    #[rustfmt::skip]
    check_table(&[
        ("string", r#""hello""#, "string", all(Ok(r#""hello""#))),
        ("string", r#""héllo😀""#, "string", all(Ok(r#""héllo😀""#))),
        ("string", r#""""#, "string", all(Ok(r#""""#))),
        ("string", r#""abc""#, "fixed_string[5]", all(Ok(r#""abc""#))),
        ("string", r#""abcde""#, "fixed_string[5]", all(Ok(r#""abcde""#))),
        ("string", r#""abcdef""#, "fixed_string[5]", all(OVF)),
        ("string", r#""aé😀""#, "fixed_string[7]", all(Ok(r#""aé😀""#))),
        ("string", r#""aé😀""#, "fixed_string[6]", all(OVF)),
        ("string", r#""hello""#, "fixed_string[5, 'ascii']", all(Ok(r#""hello""#))),
        ("string", r#""héllo""#, "fixed_string[5, 'ascii']", all(OVF)),
        ("string", r#""aé""#, "fixed_string[2, 'ucs2']", all(Ok(r#""aé""#))),
        ("string", r#""😀""#, "fixed_string[4, 'ucs2']", all(OVF)),
        ("string", r#""😀""#, "fixed_string[2, 'utf16']", all(Ok(r#""😀""#))),
        ("string", r#""😀""#, "fixed_string[1, 'utf16']", all(OVF)),
        ("string", r#""aé😀""#, "fixed_string[3, 'utf32']", all(Ok(r#""aé😀""#))),
        ("string", r#""aé😀""#, "fixed_string[2, 'utf32']", all(OVF)),
        ("fixed_string[4, 'utf16']", r#""aé""#, "fixed_string[4, 'utf32']", all(Ok(r#""aé""#))),
        ("fixed_string[4, 'utf32']", r#""😀""#, "fixed_string[4, 'ucs2']", all(OVF)),
        ("fixed_string[4, 'utf32']", r#""😀x""#, "fixed_string[3, 'utf16']", all(Ok(r#""😀x""#))),
        ("fixed_string[3, 'ascii']", r#""abc""#, "string", all(Ok(r#""abc""#))),
        ("fixed_string[8]", r#""é""#, "fixed_string[1, 'ucs2']", all(Ok(r#""é""#))),
        ("char", r#""x""#, "string", all(Ok(r#""x""#))),
        ("string", r#""x""#, "char", all(Ok(r#""x""#))),
        ("string", r#""😀""#, "char", all(Ok(r#""😀""#))),
        ("string", r#""xy""#, "char", all(OVF)),
        ("string", r#""""#, "char", all(OVF)),
        ("char", r#""😀""#, "fixed_string[2, 'utf16']", all(Ok(r#""😀""#))),
        ("char", r#""😀""#, "fixed_string[1, 'utf16']", all(OVF)),
        ("char", r#""é""#, "fixed_string[1, 'ascii']", all(OVF)),
        ("fixed_string[4]", r#""é""#, "char", all(Ok(r#""é""#))),
        ("char", r#""q""#, "char", all(Ok(r#""q""#))),
    ]);
}

#[test]
fn bytes_in_every_mode() {
    #[rustfmt::skip]
    check_table(&[
        ("bytes", r#""0102""#, "bytes", all(Ok(r#""0102""#))),
        ("bytes", r#""""#, "bytes", all(Ok(r#""""#))),
        ("fixed_bytes[2]", r#""0102""#, "bytes", all(Ok(r#""0102""#))),
        ("bytes", r#""0102""#, "fixed_bytes[2]", all(Ok(r#""0102""#))),
        ("bytes", r#""010203""#, "fixed_bytes[2]", all(OVF)),
        ("bytes", r#""01""#, "fixed_bytes[2]", all(OVF)),
        ("fixed_bytes[4, align=4]", r#""01020304""#, "fixed_bytes[4]", all(Ok(r#""01020304""#))),
        ("fixed_bytes[2]", r#""0102""#, "fixed_bytes[4]", all(TYPE)),
        // bytes <-> text: the utf-8 bytes, validated when read as text.
        ("bytes", r#""68c3a9""#, "string", all(Ok(r#""hé""#))),
        ("bytes", r#""ff""#, "string", all(PARSE)),
        ("bytes", r#""68c3""#, "string", all(PARSE)),
        ("bytes", r#""68c3a9""#, "fixed_string[2, 'utf16']", all(Ok(r#""hé""#))),
        ("bytes", r#""c3a9""#, "char", all(Ok(r#""é""#))),
        ("fixed_bytes[2]", r#""6869""#, "string", all(Ok(r#""hi""#))),
        ("string", r#""hé""#, "bytes", all(Ok(r#""68c3a9""#))),
        ("fixed_string[4, 'utf16']", r#""hé""#, "bytes", all(Ok(r#""68c3a9""#))),
        ("char", r#""é""#, "bytes", all(Ok(r#""c3a9""#))),
        ("string", r#""hi""#, "fixed_bytes[2]", all(Ok(r#""6869""#))),
        ("string", r#""hi""#, "fixed_bytes[3]", all(OVF)),
        // bytes and numbers do not convert.
        ("bytes", r#""01""#, "int32", all(TYPE)),
        ("int32", "1", "bytes", all(TYPE)),
        ("fixed_bytes[4]", r#""01020304""#, "float32", all(TYPE)),
        ("float64", "1", "fixed_bytes[8]", all(TYPE)),
    ]);
}

// ---------------------------------------------------------- number <- text

#[test]
fn integers_from_text_in_every_mode() {
    use ErrorKind::Overflow;
    let ovf_checked = |nocheck: &'static str| {
        [
            Ok(nocheck),
            Err(Overflow),
            Err(Overflow),
            Err(Overflow),
            Err(Overflow),
        ]
    };
    #[rustfmt::skip]
    check_table(&[
        ("string", r#""127""#, "int8", all(Ok("127"))),
        ("string", r#""128""#, "int8", ovf_checked("-128")),
        ("string", r#""-129""#, "int8", ovf_checked("127")),
        ("string", r#""300""#, "uint8", ovf_checked("44")),
        ("string", r#""-1""#, "uint16", ovf_checked("65535")),
        ("string", r#""12x""#, "int8", all(PARSE)),
        ("string", r#""""#, "int32", all(PARSE)),
        ("string", r#""   ""#, "int32", all(PARSE)),
        ("string", r#""0x10""#, "int32", all(PARSE)),
        ("string", r#"" -42 ""#, "int32", all(Ok("-42"))),
        ("string", r#""+7""#, "int32", all(Ok("7"))),
        ("string", r#""1.5""#, "int32", [Ok("1"), Ok("1"), FRAC, FRAC, FRAC]),
        ("string", r#""-1.5""#, "int32", [Ok("-1"), Ok("-1"), FRAC, FRAC, FRAC]),
        ("string", r#""1.0""#, "int32", all(Ok("1"))),
        ("string", r#""1e3""#, "int16", all(Ok("1000"))),
        ("string", r#""2.5e1""#, "int16", all(Ok("25"))),
        ("string", r#""nan""#, "int32", ovf_checked("0")),
        ("string", r#""-inf""#, "int32", ovf_checked("-2147483648")),
        ("string", r#""170141183460469231731687303715884105727""#, "int128", all(Ok("170141183460469231731687303715884105727"))),
        ("string", r#""-170141183460469231731687303715884105728""#, "int128", all(Ok("-170141183460469231731687303715884105728"))),
        ("string", r#""340282366920938463463374607431768211455""#, "uint128", all(Ok("340282366920938463463374607431768211455"))),
        ("string", r#""340282366920938463463374607431768211456""#, "uint128", ovf_checked("0")),
        ("string", r#""9007199254740993""#, "int64", all(Ok("9007199254740993"))),
        ("string", r#""18446744073709551615""#, "uint64", all(Ok("18446744073709551615"))),
        ("fixed_string[8, 'utf16']", r#""-17""#, "int32", all(Ok("-17"))),
        ("fixed_string[8, 'ucs2']", r#""128""#, "int8", ovf_checked("-128")),
        ("char", r#""5""#, "int8", all(Ok("5"))),
        ("char", r#""x""#, "int8", all(PARSE)),
    ]);
}

#[test]
fn bools_from_text_in_every_mode() {
    #[rustfmt::skip]
    check_table(&[
        ("string", r#""true""#, "bool", all(Ok("true"))),
        ("string", r#""FALSE""#, "bool", all(Ok("false"))),
        ("string", r#"" True ""#, "bool", all(Ok("true"))),
        ("string", r#""1""#, "bool", all(Ok("true"))),
        ("string", r#""0""#, "bool", all(Ok("false"))),
        ("string", r#""2""#, "bool", [Ok("true"), OVF, OVF, OVF, OVF]),
        ("string", r#""0.5""#, "bool", [Ok("true"), OVF, OVF, OVF, OVF]),
        ("string", r#""maybe""#, "bool", all(PARSE)),
    ]);
}

#[test]
fn floats_from_text_in_every_mode() {
    #[rustfmt::skip]
    check_table(&[
        ("string", r#""1.5""#, "float64", all(Ok("1.5"))),
        ("string", r#"" -2e-3 ""#, "float64", all(Ok("-0.002"))),
        ("string", r#""NaN""#, "float64", all(Ok("NaN"))),
        ("string", r#""nan""#, "float64", all(Ok("NaN"))),
        ("string", r#""inf""#, "float64", all(Ok("Infinity"))),
        ("string", r#""-inf""#, "float64", all(Ok("-Infinity"))),
        ("string", r#""Infinity""#, "float64", all(Ok("Infinity"))),
        ("string", r#""-Infinity""#, "float64", all(Ok("-Infinity"))),
        ("string", r#""1e400""#, "float64", [Ok("Infinity"), OVF, OVF, OVF, OVF]),
        ("string", r#""-1e400""#, "float64", [Ok("-Infinity"), OVF, OVF, OVF, OVF]),
        ("string", r#""1e39""#, "float32", [Ok("Infinity"), OVF, OVF, OVF, OVF]),
        // Inexact: the text holds more digits than the type keeps.
        ("string", r#""0.1""#, "float32", all(Ok("0.1"))),
        ("string", r#""1e-45""#, "float32", all(Ok("1e-45"))),
        ("string", r#""0.5""#, "float32", all(Ok("0.5"))),
        ("string", r#""0.10000000149""#, "float32", [Ok("0.1"), Ok("0.1"), Ok("0.1"), INEX, Ok("0.1")]),
        ("string", r#""3.14159265358979323846""#, "float64", [Ok("3.141592653589793"), Ok("3.141592653589793"), Ok("3.141592653589793"), INEX, Ok("3.141592653589793")]),
        ("string", r#""1e-400""#, "float64", [Ok("0.0"), Ok("0.0"), Ok("0.0"), INEX, Ok("0.0")]),
        ("string", r#""33554433""#, "float32", [Ok("33554432.0"), Ok("33554432.0"), Ok("33554432.0"), INEX, Ok("33554432.0")]),
        ("string", r#""1e5""#, "float16", [Ok("Infinity"), OVF, OVF, OVF, OVF]),
        ("string", r#""0.25""#, "float16", all(Ok("0.25"))),
        ("string", r#""abc""#, "float64", all(PARSE)),
        ("string", r#""1,5""#, "float64", all(PARSE)),
        ("string", r#""""#, "float32", all(PARSE)),
        ("fixed_string[4, 'utf32']", r#""1.25""#, "float32", all(Ok("1.25"))),
    ]);
}

#[test]
fn complex_from_text_in_every_mode() {
    #[rustfmt::skip]
    check_table(&[
        ("string", r#""1+2j""#, "complex[float64]", all(Ok("[1.0,2.0]"))),
        ("string", r#""(1-2j)""#, "complex[float64]", all(Ok("[1.0,-2.0]"))),
        ("string", r#""3""#, "complex[float64]", all(Ok("[3.0,0.0]"))),
        ("string", r#""-2.5j""#, "complex[float64]", all(Ok("[0.0,-2.5]"))),
        ("string", r#""1e-3+2e+3J""#, "complex[float64]", all(Ok("[0.001,2000.0]"))),
        ("string", r#""(NaN+Infinityj)""#, "complex[float64]", all(Ok("[NaN,Infinity]"))),
        ("string", r#""1+2""#, "complex[float64]", all(PARSE)),
        ("string", r#""1 + 2j""#, "complex[float64]", all(PARSE)),
        ("string", r#""1e400+1j""#, "complex[float64]", [Ok("[Infinity,1.0]"), OVF, OVF, OVF, OVF]),
        ("string", r#""0.1+0.5j""#, "complex[float32]", all(Ok("[0.1,0.5]"))),
        ("string", r#""0.5+33554433j""#, "complex[float32]", [Ok("[0.5,33554432.0]"), Ok("[0.5,33554432.0]"), Ok("[0.5,33554432.0]"), INEX, Ok("[0.5,33554432.0]")]),
    ]);
}

// ---------------------------------------------------------- text <- number

#[test]
fn numbers_to_text_in_every_mode() {
    #[rustfmt::skip]
    check_table(&[
        ("int8", "-128", "string", all(Ok(r#""-128""#))),
        ("uint64", "18446744073709551615", "string", all(Ok(r#""18446744073709551615""#))),
        ("int128", "-170141183460469231731687303715884105728", "string", all(Ok(r#""-170141183460469231731687303715884105728""#))),
        ("bool", "true", "string", all(Ok(r#""true""#))),
        ("float64", "0.1", "string", all(Ok(r#""0.1""#))),
        ("float64", "1", "string", all(Ok(r#""1.0""#))),
        ("float64", "1e300", "string", all(Ok(r#""1e300""#))),
        ("float64", "NaN", "string", all(Ok(r#""NaN""#))),
        ("float64", "-Infinity", "string", all(Ok(r#""-Infinity""#))),
        ("float32", "0.1", "string", all(Ok(r#""0.1""#))),
        ("float16", "0.5", "string", all(Ok(r#""0.5""#))),
        ("complex[float64]", "[1, -2.5]", "string", all(Ok(r#""(1.0-2.5j)""#))),
        ("complex[float32]", "[0, 1]", "string", all(Ok(r#""(0.0+1.0j)""#))),
        ("int32", "12345", "fixed_string[5]", all(Ok(r#""12345""#))),
        ("int32", "12345", "fixed_string[5, 'ascii']", all(Ok(r#""12345""#))),
        ("int32", "12345", "fixed_string[5, 'utf16']", all(Ok(r#""12345""#))),
        ("int32", "12345", "fixed_string[5, 'ucs2']", all(Ok(r#""12345""#))),
        ("int32", "12345", "fixed_string[5, 'utf32']", all(Ok(r#""12345""#))),
        ("int32", "12345", "fixed_string[3]", all(OVF)),
        ("int32", "-1", "fixed_string[2, 'utf32']", all(Ok(r#""-1""#))),
        ("int32", "7", "char", all(Ok(r#""7""#))),
        ("int32", "12", "char", all(OVF)),
        ("float64", "1.5", "char", all(OVF)),
    ]);
}

#[test]
fn void_does_not_convert() {
    let v = Array::empty("void").unwrap();
    assert_eq!(
        v.cast("string", ErrorMode::Default).unwrap_err().kind(),
        ErrorKind::Type
    );
    let s = Array::from_json("string", r#""""#).unwrap();
    assert_eq!(
        s.cast("void", ErrorMode::Default).unwrap_err().kind(),
        ErrorKind::Type
    );
}

#[test]
fn error_messages_name_the_value_and_both_types() {
    assert_eq!(
        message("string", r#""128""#, "int8"),
        r#"string value "128" is out of range for int8"#
    );
    assert_eq!(
        message("string", r#""12x""#, "int8"),
        r#"string value "12x" cannot be parsed as int8"#
    );
    assert_eq!(
        message("string", r#""1.5""#, "int32"),
        r#"string value "1.5" has a fractional part, so it cannot be assigned to int32"#
    );
    assert_eq!(
        message("string", r#""abcdef""#, "fixed_string[5]"),
        r#"string value "abcdef" is too long for fixed_string[5]: it needs 6 code units, and 5 fit"#
    );
    assert_eq!(
        message("string", r#""é""#, "fixed_string[5, 'ascii']"),
        r#"string value "é" holds the character 'é' (U+00E9), which is out of range for fixed_string[5, 'ascii']"#
    );
    assert_eq!(
        message("string", r#""ab""#, "char"),
        r#"string value "ab" has 2 characters, but char holds exactly one"#
    );
    assert_eq!(
        message("bytes", r#""010203""#, "fixed_bytes[2]"),
        r#"bytes value "010203" has 3 bytes, but fixed_bytes[2] holds exactly 2"#
    );
    assert_eq!(
        message("int32", "12345", "fixed_string[3]"),
        "int32 value 12345 is too long for fixed_string[3]: it needs 5 code units, and 3 fit"
    );
    assert_eq!(
        message("bytes", r#""61ff""#, "string"),
        "invalid utf-8 in bytes data (byte 0xff at offset 1); it cannot be assigned to string"
    );
    let long = format!("\"{}\"", "9".repeat(100));
    let m = message("string", &long, "int8");
    assert!(
        m.starts_with(&format!("string value \"{}\"...", "9".repeat(64))),
        "{m}"
    );
}

// --------------------------------------------------------- invalid sources

/// A `tp` array whose data bytes are `bytes` (written raw: JSON cannot make
/// invalid text).
fn raw_array(tp: &str, bytes: &[u8]) -> Array {
    let a = Array::empty(tp).unwrap();
    assert_eq!(a.tp().data_size(), bytes.len());
    // SAFETY: a fresh array whose data is exactly `bytes.len()` writable
    // bytes of a fixed-size type, not shared with anything else.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), a.data_ptr(), bytes.len()) };
    a
}

fn units16(u: &[u16]) -> Vec<u8> {
    u.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn units32(u: &[u32]) -> Vec<u8> {
    u.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

#[test]
fn invalid_source_data_is_a_parse_error_in_every_mode() {
    #[rustfmt::skip]
    let cases: Vec<(Array, &str)> = vec![
        (Array::from_json("bytes", r#""ff""#).unwrap(), "invalid utf-8 in bytes data"),
        (Array::from_json("fixed_bytes[2]", r#""c328""#).unwrap(), "invalid utf-8"),
        (raw_array("fixed_string[2, 'utf16']", &units16(&[0xD800, 0x41])), "unpaired surrogate"),
        (raw_array("fixed_string[2, 'utf16']", &units16(&[0x41, 0xDC00])), "unpaired surrogate"),
        (raw_array("fixed_string[2, 'ucs2']", &units16(&[0xD83D, 0xDE00])), "surrogate"),
        (raw_array("fixed_string[2, 'utf32']", &units32(&[0x41, 0x11_0000])), "invalid code point"),
        (raw_array("fixed_string[2, 'utf32']", &units32(&[0xD800, 0])), "invalid code point"),
        (raw_array("fixed_string[2, 'ascii']", b"a\xe9"), "non-ascii byte"),
        (raw_array("fixed_string[3]", b"a\xff\x00"), "invalid utf-8"),
        (raw_array("char", &units32(&[0xD800])), "invalid code point"),
    ];
    let dsts = [
        "string",
        "fixed_string[8, 'utf32']",
        "fixed_string[8]",
        "bytes",
        "int32",
        "char",
    ];
    for (src, want) in &cases {
        let raw = matches!(src.tp().to_string().as_str(), "bytes" | "fixed_bytes[2]");
        for dst in dsts {
            if raw && dst == "bytes" {
                // Bytes copy bytes: no text is read.
                assert_eq!(
                    src.cast(dst, ErrorMode::Inexact).unwrap().to_json(),
                    src.to_json()
                );
                continue;
            }
            if raw && dst == "int32" {
                // Bytes and numbers do not convert at all.
                assert_eq!(
                    src.cast(dst, ErrorMode::Inexact).unwrap_err().kind(),
                    ErrorKind::Type
                );
                continue;
            }
            for mode in ErrorMode::ALL {
                let e = src
                    .cast(dst, mode)
                    .expect_err(&format!("{} -> {dst}", src.tp()));
                assert_eq!(
                    e.kind(),
                    ErrorKind::Parse,
                    "{} -> {dst} ({mode}): {e}",
                    src.tp()
                );
                assert!(e.message().contains(want), "{}: {e}", src.tp());
            }
        }
    }
    // Garbage after the first zero code unit is padding, not data.
    let padded = raw_array("fixed_string[3, 'utf16']", &units16(&[0x41, 0, 0xD800]));
    assert_eq!(
        padded.cast("string", ErrorMode::Inexact).unwrap().to_json(),
        r#""A""#
    );
}

#[test]
fn a_failing_element_is_left_unchanged() {
    // (destination type and JSON, source type and JSON, mode, the error
    // kind; `None`: any error)
    #[rustfmt::skip]
    let rows = [
        (("fixed_string[3]", r#""xyz""#), ("string", r#""toolong""#), ErrorMode::NoCheck, Some(ErrorKind::Overflow)),
        (("string", r#""keep""#), ("bytes", r#""ff""#), ErrorMode::NoCheck, Some(ErrorKind::Parse)),
        (("int8", "5"), ("string", r#""128""#), ErrorMode::Default, None),
    ];
    for ((dst_tp, before), (src_tp, src), mode, kind) in rows {
        let row = format!("{dst_tp} {before} <- {src_tp} {src} ({mode})");
        let dst = Array::from_json(dst_tp, before).unwrap();
        let src = Array::from_json(src_tp, src).unwrap();
        let e = dst.assign(&src, mode).expect_err(&row);
        if let Some(kind) = kind {
            assert_eq!(e.kind(), kind, "{row}: {e}");
        }
        assert_eq!(dst.to_json(), before, "{row}");
    }
}

#[test]
fn fixed_string_destinations_are_zero_padded() {
    let dst = Array::from_json("fixed_string[4, 'utf16']", r#""abcd""#).unwrap();
    dst.assign(&Array::from("é"), ErrorMode::Default).unwrap();
    // SAFETY: the array's data is 8 readable bytes.
    let data = unsafe { std::slice::from_raw_parts(dst.data_ptr(), 8) };
    assert_eq!(data, units16(&[0xE9, 0, 0, 0]).as_slice());
    let dst = Array::from_json("fixed_string[6]", r#""abcdef""#).unwrap();
    dst.assign(
        &Array::from_json("int32", "42").unwrap(),
        ErrorMode::Default,
    )
    .unwrap();
    // SAFETY: the array's data is 6 readable bytes.
    let data = unsafe { std::slice::from_raw_parts(dst.data_ptr(), 6) };
    assert_eq!(data, b"42\0\0\0\0");
}

#[test]
fn empty_string_results_are_not_missing() {
    // A null `begin` means a missing value; an empty result must not be one.
    for (tp, json) in [
        ("fixed_string[4]", r#""""#),
        ("bytes", r#""""#),
        ("string", r#""""#),
    ] {
        let out = Array::from_json(tp, json)
            .unwrap()
            .cast("string", ErrorMode::Default)
            .unwrap();
        // SAFETY: a string array's data is one StringData.
        let s = unsafe { out.data_ptr().cast::<StringData>().read_unaligned() };
        assert!(!s.begin.is_null(), "{tp}");
        assert_eq!(s.begin, s.end);
    }
}

#[test]
fn every_encoding_round_trips() {
    let encodings = ["ascii", "utf8", "utf16", "ucs2", "utf32"];
    let samples = [
        "",
        "a",
        "hello world",
        "héllo",
        "日本語",
        "😀 emoji",
        "a\u{7f}b",
    ];
    for enc in encodings {
        for s in samples {
            let json = json_quote(s);
            let src = Array::from_json("string", &json).unwrap();
            let fixed_tp = format!("fixed_string[16, '{enc}']");
            let representable = match enc {
                "ascii" => s.is_ascii(),
                "ucs2" => s.chars().all(|c| (c as u32) <= 0xFFFF),
                _ => true,
            };
            for mode in ErrorMode::ALL {
                match src.cast(fixed_tp.as_str(), mode) {
                    Ok(fixed) => {
                        assert!(representable, "{s:?} into {fixed_tp}");
                        let back = fixed.cast("string", mode).unwrap();
                        assert_eq!(back.as_str().unwrap(), s, "{fixed_tp}");
                    }
                    Err(e) => {
                        assert!(!representable, "{s:?} into {fixed_tp}: {e}");
                        assert_eq!(e.kind(), ErrorKind::Overflow);
                    }
                }
            }
        }
    }
}

// ------------------------------------------------- arrays (through dims)

#[test]
fn strided_and_reversed_strings_to_fixed_string_and_back() {
    let a = Array::from_json("5 * string", r#"["a","bb","ccc","dddd","eeeee"]"#).unwrap();
    let v = a.index(&[Index::slice(None, None, -2)]).unwrap();
    assert_eq!(v.to_json(), r#"["eeeee","ccc","a"]"#);
    for mode in ErrorMode::ALL {
        let f = v.cast("3 * fixed_string[8]", mode).unwrap();
        assert_eq!(f.to_json(), r#"["eeeee","ccc","a"]"#);
        let rf = f.index(&[Index::slice(None, None, -1)]).unwrap();
        let back = rf.cast("3 * string", mode).unwrap();
        assert_eq!(back.to_json(), r#"["a","ccc","eeeee"]"#);
    }
}

#[test]
fn string_arrays_to_float64_and_back() {
    let a = Array::from_json("4 * string", r#"["1.5"," -2 ","1e300","NaN"]"#).unwrap();
    let f = a.cast("4 * float64", ErrorMode::Default).unwrap();
    assert_eq!(f.to_json(), "[1.5,-2.0,1e300,NaN]");
    let s = f.cast("4 * string", ErrorMode::Default).unwrap();
    assert_eq!(s.to_json(), r#"["1.5","-2.0","1e300","NaN"]"#);
    let bad = Array::from_json("3 * string", r#"["1","x","3"]"#).unwrap();
    assert_eq!(
        bad.cast("3 * float64", ErrorMode::NoCheck)
            .unwrap_err()
            .kind(),
        ErrorKind::Parse
    );
}

// ------------------------------------------- kernels called directly

/// Builds `dst_elem ← src_elem` for the elements of two 1-d arrays, as a
/// strided kernel, and runs it over `count` elements with the given
/// starting element and strides (in elements, may be negative).
fn run_strided(
    dst: &Array,
    (dst_start, dst_step): (isize, isize),
    src: &Array,
    (src_start, src_step): (isize, isize),
    count: usize,
    mode: ErrorMode,
) -> dynd::Result<()> {
    let (dst_elem, src_elem) = (dst.tp().dim_elem().unwrap(), src.tp().dim_elem().unwrap());
    let (dsz, ssz) = (dst_elem.data_size() as isize, src_elem.data_size() as isize);
    with_assign_kernel(elems(dst), elems(src), Strided, mode, |kernel| {
        // SAFETY: built for Strided on these element types; the callers keep
        // every element index `start + i * step` for i < count in range of
        // contiguous arrays of those types.
        unsafe {
            kernel.call_strided(
                dst.data_ptr().offset(dst_start * dsz),
                dst_step * dsz,
                &[src.data_ptr().offset(src_start * ssz).cast_const()],
                &[src_step * ssz],
                count,
            )
        }
    })?
}

#[test]
fn strided_kernels_with_negative_strides() {
    let src = Array::from_json("5 * string", r#"["1","2.5","-3","4e2","5"]"#).unwrap();
    let dst = Array::from_json("5 * float64", "[0,0,0,0,0]").unwrap();
    // Every other source element, backwards, into every destination element.
    run_strided(&dst, (0, 1), &src, (4, -2), 3, ErrorMode::Default).unwrap();
    assert_eq!(dst.to_json(), "[5.0,-3.0,1.0,0.0,0.0]");
    // Backwards into the destination too.
    let out = Array::from_json("3 * fixed_string[4, 'utf16']", r#"["","",""]"#).unwrap();
    run_strided(&out, (2, -1), &src, (0, 2), 3, ErrorMode::Default).unwrap();
    assert_eq!(out.to_json(), r#"["5","-3","1"]"#);
    let s = Array::from_json("3 * string", r#"["x","y","z"]"#).unwrap();
    run_strided(&s, (2, -1), &out, (0, 1), 3, ErrorMode::Default).unwrap();
    assert_eq!(s.to_json(), r#"["1","-3","5"]"#);
    // An error stops at the failing element; those before it are written.
    let ints = Array::from_json("5 * int8", "[0,0,0,0,0]").unwrap();
    let texts = Array::from_json("5 * string", r#"["1","2","300","4","5"]"#).unwrap();
    let e = run_strided(&ints, (0, 1), &texts, (0, 1), 5, ErrorMode::Overflow).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow);
    assert_eq!(ints.to_json(), "[1,2,0,0,0]");
    run_strided(&ints, (0, 1), &texts, (0, 1), 5, ErrorMode::NoCheck).unwrap();
    assert_eq!(ints.to_json(), "[1,2,44,4,5]");
}

#[test]
fn unaligned_elements() {
    // A buffer of bytes with elements placed at odd offsets, converted
    // through kernels built for the scalar types.
    let string_meta = Array::from_json("string", r#""""#).unwrap();
    let utf32 = Type::parse("fixed_string[3, 'utf32']").unwrap();
    let (f64_t, string) = (Type::float64(), whole(&string_meta));
    let mut buf = [0u8; 64];
    let text = units32(&[u32::from(b'-'), u32::from(b'7'), u32::from(b'5')]);
    buf[1..13].copy_from_slice(&text);
    let base = buf.as_mut_ptr();
    with_assign_kernel(
        scalar(&f64_t),
        scalar(&utf32),
        Single,
        ErrorMode::Default,
        |k| {
            // SAFETY: built for Single; the source is 12 bytes at offset 1, the
            // destination 8 bytes at offset 17, both inside `buf`.
            unsafe { k.call_single(base.add(17), &[base.add(1).cast_const()]) }.unwrap();
        },
    )
    .unwrap();
    assert_eq!(f64::from_ne_bytes(buf[17..25].try_into().unwrap()), -75.0);

    // float64 at offset 17 -> string element at offset 33, allocated in the
    // POD allocator block of `string_meta`, alive past the kernel's use.
    with_assign_kernel(string, scalar(&f64_t), Single, ErrorMode::Default, |k| {
        // SAFETY: built for Single; 8 bytes at 17, 16 bytes at 33, inside `buf`.
        unsafe { k.call_single(base.add(33), &[base.add(17).cast_const()]) }.unwrap();
    })
    .unwrap();
    // SAFETY: the kernel wrote a StringData at offset 33 (unaligned).
    let s = unsafe { base.add(33).cast::<StringData>().read_unaligned() };
    // SAFETY: [begin, end) are the bytes the kernel allocated in the block
    // that `string_meta` (and the dropped kernel's reference) kept alive.
    let bytes = unsafe { std::slice::from_raw_parts(s.begin, s.end as usize - s.begin as usize) };
    assert_eq!(bytes, b"-75.0");

    // string at offset 33 -> fixed_string[3, 'utf32'] at offset 50.
    let e = with_assign_kernel(scalar(&utf32), string, Single, ErrorMode::Default, |k| {
        // SAFETY: 16 bytes at 33 and 12 bytes at 50, inside `buf`; the string
        // bytes are alive in `string_meta`'s block.
        unsafe { k.call_single(base.add(50), &[base.add(33).cast_const()]) }.unwrap_err()
    })
    .unwrap();
    assert_eq!(e.kind(), ErrorKind::Overflow, "{e}");
    assert!(e.message().contains("needs 5 code units, and 3 fit"), "{e}");
}

#[test]
fn one_strided_kernel_on_four_threads() {
    const N: usize = 4 * 250;
    const THREADS: usize = 4;
    let words: Vec<String> = (0..N)
        .map(|i| format!("w{i}-é{}", "😀".repeat(i % 5)))
        .collect();
    let json = format!(
        "[{}]",
        words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(",")
    );
    let src = Array::from_json(format!("{N} * string").as_str(), &json).unwrap();
    let dst = Array::empty(format!("{N} * string").as_str()).unwrap();
    let (dst_base, src_base) = (dst.data_ptr() as usize, src.data_ptr() as usize);
    let esize = size_of::<StringData>();
    with_assign_kernel(
        elems(&dst),
        elems(&src),
        Strided,
        ErrorMode::Default,
        |kernel| {
            for _round in 0..20 {
                std::thread::scope(|s| {
                    for t in 0..THREADS {
                        s.spawn(move || {
                            // Thread t writes elements t, t + 4, t + 8, ...: disjoint
                            // from every other thread's.
                            let stride = (THREADS * esize) as isize;
                            // SAFETY: built for Strided, string ← string; N / 4
                            // elements from element t at a stride of 4 elements stay
                            // inside both arrays; no other thread writes them.
                            unsafe {
                                kernel.call_strided(
                                    (dst_base + t * esize) as *mut u8,
                                    stride,
                                    &[(src_base + t * esize) as *const u8],
                                    &[stride],
                                    N / THREADS,
                                )
                            }
                            .unwrap();
                        });
                    }
                });
                assert_eq!(dst.to_json(), src.to_json());
            }
        },
    )
    .unwrap();
    for (i, w) in words.iter().enumerate() {
        let e = dst.index(&[i.into()]).unwrap();
        assert_eq!(e.as_str().unwrap(), w);
    }
}

#[test]
fn formatting_kernel_on_four_threads() {
    const N: usize = 4 * 100;
    let values: Vec<f64> = (0..N).map(|i| (i as f64 - 200.0) * 0.37).collect();
    let src = Array::from(values.clone());
    let dst = Array::empty(format!("{N} * string").as_str()).unwrap();
    let f64_t = Type::float64();
    let (dst_base, src_base) = (dst.data_ptr() as usize, src.data_ptr() as usize);
    with_assign_kernel(
        elems(&dst),
        scalar(&f64_t),
        Strided,
        ErrorMode::Default,
        |kernel| {
            std::thread::scope(|s| {
                for t in 0..4 {
                    s.spawn(move || {
                        let n = N / 4;
                        // SAFETY: built for Strided; each thread converts its own
                        // contiguous quarter of both arrays.
                        unsafe {
                            kernel.call_strided(
                                (dst_base + t * n * 16) as *mut u8,
                                16,
                                &[(src_base + t * n * 8) as *const u8],
                                &[8],
                                n,
                            )
                        }
                        .unwrap();
                    });
                }
            });
        },
    )
    .unwrap();
    for (i, v) in values.iter().enumerate() {
        let e = dst.index(&[i.into()]).unwrap();
        assert_eq!(e.as_str().unwrap(), format!("{v:?}"));
    }
}

// ------------------------------------------------------------ properties

fn arb_text() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>().prop_filter("no NUL", |c| *c != '\0'), 0..24)
        .prop_map(|cs| cs.into_iter().collect())
}

proptest! {
    #[test]
    fn prop_text_round_trips_through_every_encoding(s in arb_text()) {
        let src = Array::from(s.as_str());
        let sizes = [
            ("ascii", s.is_ascii().then_some(s.len())),
            ("utf8", Some(s.len())),
            ("utf16", Some(s.encode_utf16().count())),
            ("ucs2", s.chars().all(|c| (c as u32) <= 0xFFFF).then(|| s.chars().count())),
            ("utf32", Some(s.chars().count())),
        ];
        for (enc, size) in sizes {
            // A fixed_string holds at least one code unit.
            let n = size.unwrap_or(s.len()).max(1);
            let tp = format!("fixed_string[{n}, '{enc}']");
            match (src.cast(tp.as_str(), ErrorMode::Default), size) {
                (Ok(fixed), Some(_)) => {
                    let back = fixed.cast("string", ErrorMode::Default).unwrap();
                    prop_assert_eq!(back.as_str().unwrap(), s.as_str());
                    let to_utf32 = fixed.cast("fixed_string[32, 'utf32']", ErrorMode::Default).unwrap();
                    let back = to_utf32.cast("string", ErrorMode::Default).unwrap();
                    prop_assert_eq!(back.as_str().unwrap(), s.as_str());
                }
                (Err(e), None) => prop_assert_eq!(e.kind(), ErrorKind::Overflow),
                (got, size) => prop_assert!(false, "{} into {}: {:?} (size {:?})", s.escape_debug(), tp, got.map(|a| a.to_json()), size),
            }
            if n > 1 && size == Some(n) {
                let smaller = format!("fixed_string[{}, '{enc}']", n - 1);
                let e = src.cast(smaller.as_str(), ErrorMode::NoCheck).unwrap_err();
                prop_assert_eq!(e.kind(), ErrorKind::Overflow);
            }
        }
        let bytes = src.cast("bytes", ErrorMode::Default).unwrap();
        let back = bytes.cast("string", ErrorMode::Default).unwrap();
        prop_assert_eq!(back.as_str().unwrap(), s.as_str());
    }

    #[test]
    fn prop_i64_round_trips_through_string(v in any::<i64>()) {
        let s = Array::from(v).cast("string", ErrorMode::Default).unwrap();
        prop_assert_eq!(s.as_str().unwrap(), v.to_string());
        for mode in ErrorMode::ALL {
            let back = s.cast("int64", mode).unwrap();
            prop_assert_eq!(back.as_scalar::<i64>().unwrap(), v);
        }
        let back = s.cast("float64", ErrorMode::NoCheck).unwrap();
        prop_assert_eq!(back.as_scalar::<f64>().unwrap(), v as f64);
    }

    #[test]
    fn prop_f64_round_trips_through_string(bits in any::<u64>()) {
        let v = f64::from_bits(bits);
        let s = Array::from(v).cast("string", ErrorMode::Default).unwrap();
        for mode in ErrorMode::ALL {
            let back = s.cast("float64", mode).unwrap().as_scalar::<f64>().unwrap();
            if v.is_nan() {
                prop_assert!(back.is_nan());
            } else {
                prop_assert_eq!(back.to_bits(), v.to_bits(), "{}", s.as_str().unwrap());
            }
        }
        // Written values read back exactly, even in inexact mode.
        let f32v = v as f32;
        let s = Array::from(f32v).cast("string", ErrorMode::Default).unwrap();
        let back = s.cast("float32", ErrorMode::Inexact).unwrap().as_scalar::<f32>().unwrap();
        prop_assert!(back.to_bits() == f32v.to_bits() || (back.is_nan() && f32v.is_nan()));
        let f16v = half::f16::from_f64(v);
        let s = Array::from(f16v).cast("string", ErrorMode::Default).unwrap();
        let back = s.cast("float16", ErrorMode::Inexact).unwrap().as_scalar::<half::f16>().unwrap();
        prop_assert!(back.to_bits() == f16v.to_bits() || (back.is_nan() && f16v.is_nan()));
    }
}
