use super::cursor::scan_number;
use super::number::{QuickNumber, store_float, store_int};
use crate::array::Array;
use crate::types::BuiltinType;
use proptest::prelude::*;

/// The number types the quick path stores into: the integers, float32
/// and float64 (not the half-width floats).
fn number_types() -> impl Iterator<Item = BuiltinType> {
    BuiltinType::ALL
        .into_iter()
        .filter(|b| b.is_int() || matches!(b, BuiltinType::Float32 | BuiltinType::Float64))
}

/// Where the quick path takes `tok` (followed by `after`), it reads the
/// whole token and stores the same bytes as the general path.
fn agrees(tok: &str, after: &str) {
    let text = format!("{tok}{after}");
    let Some((q, len)) = QuickNumber::scan(text.as_bytes()) else {
        return;
    };
    assert_eq!(len, tok.len(), "{text:?}");
    for b in number_types() {
        let (mut quick, mut general) = ([0u8; 16], [0u8; 16]);
        // SAFETY: 16 bytes hold any of these types; writes are unaligned.
        let stored = unsafe { q.store(b, quick.as_mut_ptr()) };
        if !stored {
            continue;
        }
        // SAFETY: 16 bytes hold any of these types; writes are unaligned.
        let r = unsafe {
            if b.is_float() {
                store_float(b, tok, general.as_mut_ptr())
            } else {
                store_int(b, tok, general.as_mut_ptr())
            }
        };
        assert!(r.is_ok(), "{tok} into {b}: quick stored, general failed");
        assert_eq!(quick, general, "{tok} into {b}");
    }
}

#[test]
fn quick_number_edges() {
    for tok in [
        "0",
        "-0",
        "0.0",
        "-0.0",
        "127",
        "128",
        "-128",
        "-129",
        "255",
        "256",
        "9007199254740992",
        "9007199254740993",
        "16777216",
        "16777217",
        "0.1",
        "0.3",
        "1.7976931348623157",
        "9999999999999999999",
        "1844674407370955161",
        "-9223372036854775808",
        "9223372036854775807",
        "0.0000000000000000001",
        "123.456",
    ] {
        for after in ["", ",", "]", " ", "}"] {
            agrees(tok, after);
        }
    }
    for tok in [
        "1e5",
        "1E5",
        "1.5e3",
        "2.5e-3",
        "1e+22",
        "1e22",
        "1e23",
        "1e-22",
        "9007199254740993e-3",
        "16777217e1",
        "3e10",
        "3e11",
        "1e0",
        "-0e5",
        "123e-30",
    ] {
        for after in ["", ",", "]"] {
            agrees(tok, after);
        }
    }
    // Not the quick shape: left to the general path.
    for text in [
        "01", "1.", ".5", "1e", "1e+", "1e1000", "1.5e3x", "-", "1x", "1.2.3", "NaN", "+1",
    ] {
        assert!(QuickNumber::scan(text.as_bytes()).is_none(), "{text}");
    }
    assert!(QuickNumber::scan(b"12345678901234567890").is_none());
}

/// The fast paths (quick numbers, the dim and field loops, borrowed
/// strings) keep the values and the error messages of the general ones.
#[test]
fn fast_paths_keep_values_and_errors() {
    let cases: &[(&str, &str, std::result::Result<&str, &str>)] = &[
        (
            "var * float64",
            "[1.5, -0.0, 300, 1e2]",
            Ok("[1.5,-0.0,300.0,100.0]"),
        ),
        ("float64", "9007199254740993", Ok("9007199254740992.0")),
        ("float32", "16777217", Ok("16777216.0")),
        ("int8", "-0.0", Ok("0")),
        ("var * int8", "[-128, 127]", Ok("[-128,127]")),
        (
            "var * int8",
            "[300]",
            Err("JSON line 1, column 2 at [0]: 300 is out of range for int8"),
        ),
        (
            "3 * int32",
            "[1.5, 2]",
            Err(
                "JSON line 1, column 2 at [0]: 1.5 is not an integer, so it cannot be stored in int32",
            ),
        ),
        (
            "var * float64",
            "[1 2]",
            Err("JSON line 1, column 4: expected ',' or ']' in the array, found a number"),
        ),
        (
            "var * float64",
            "[1,2,]",
            Err("JSON line 1, column 6 at [2]: expected a number for float64, found ']'"),
        ),
        (
            "3 * int32",
            "[1,2,3,4]",
            Err("JSON line 1, column 8 at [3]: too many elements for 3 * int32: expected 3"),
        ),
        (
            "var * float64",
            "[01]",
            Err("JSON line 1, column 2 at [0]: malformed number"),
        ),
        (
            "var * {id: int64, x: float64, name: string}",
            r#"[{"id": 1, "x": 2.5, "name": "r\"1"}, {"name": "r2", "x": -1, "id": 2}]"#,
            Ok(r#"[{"id":1,"x":2.5,"name":"r\"1"},{"id":2,"x":-1.0,"name":"r2"}]"#),
        ),
        (
            "var * {id: int64, x: float64, name: string}",
            r#"[{"id": 2.5, "x": 1, "name": "a"}]"#,
            Err(
                "JSON line 1, column 9 at [0].id: 2.5 is not an integer, so it cannot be stored in int64",
            ),
        ),
        (
            "{a: int32, b: string}",
            r#"{"a": 1, "a": 2, "b": ""}"#,
            Err(r#"JSON line 1, column 14: duplicate key "a""#),
        ),
        (
            "{a: int32, b: string}",
            r#"{"a": 1, "b": "x"#,
            Err("JSON line 1, column 15 at .b: unterminated string"),
        ),
    ];
    for &(tp, text, want) in cases {
        let got = Array::from_json(tp, text).map(|a| a.to_json());
        match (got, want) {
            (Ok(json), Ok(w)) => assert_eq!(json, w, "{tp} from {text}"),
            (Err(e), Err(w)) => assert_eq!(e.message(), w, "{tp} from {text}"),
            (got, _) => panic!("{tp} from {text}: got {got:?}, want {want:?}"),
        }
    }
}

proptest! {
    #[test]
    fn quick_number_matches_general(
        neg in any::<bool>(),
        int in "(0|[1-9][0-9]{0,18})",
        frac in proptest::option::of("[0-9]{1,19}"),
        exp in proptest::option::of("[eE][+-]?[0-9]{1,3}"),
    ) {
        let tok = format!(
            "{}{int}{}{}",
            if neg { "-" } else { "" },
            frac.map(|f| format!(".{f}")).unwrap_or_default(),
            exp.unwrap_or_default()
        );
        agrees(&tok, ", ");
    }
}

/// Text after a number token: delimiters, and bytes that make the token
/// malformed or longer (a point, an exponent, letters, non-ASCII).
fn after_token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[,\\] }:/ \t\n][0-9a-z,. ]{0,10}",
        "[.eE][0-9+-]{0,4}",
        "[a-zA-Z_:/é€][0-9]{0,3}",
        "[0-9]{1,12}",
    ]
}

proptest! {
    /// Wherever the quick scan takes a number (the one-word shapes, the
    /// digit runs, whatever follows), the general grammar agrees on the
    /// token's extent, and both store the same bytes.
    #[test]
    fn quick_scan_agrees_with_the_grammar(
        neg in any::<bool>(),
        int in "(0|[1-9][0-9]{0,9}|[0-9]{1,3})",
        frac in proptest::option::of("[0-9]{0,9}"),
        exp in proptest::option::of("[eE][+-]?[0-9]{0,4}"),
        after in after_token(),
    ) {
        let tok = format!(
            "{}{int}{}{}",
            if neg { "-" } else { "" },
            frac.map(|f| format!(".{f}")).unwrap_or_default(),
            exp.unwrap_or_default()
        );
        let text = format!("{tok}{after}");
        let general = scan_number(text.as_bytes(), 0);
        // The quick path may leave any well-formed number to the general
        // path, but must leave every malformed one.
        if let Some((_, len)) = QuickNumber::scan(text.as_bytes()) {
            prop_assert!(general.well_formed, "{:?}: quick took {}", text, len);
            prop_assert_eq!(len, general.end, "{:?}", text);
            agrees(&text[..len], &text[len..]);
        }
    }
}
