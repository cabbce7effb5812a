use super::cursor::scan_number;
#[cfg(target_arch = "x86_64")]
use super::number::Avx2Classifier;
use super::number::{
    Classify, QuickNumber, QuickValue, WINDOW, classify_bytes, store_float, store_int,
    window_tokens,
};
use super::parse::{NumberRuns, parse_str_with};
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
        tok in number_token("(0|[1-9][0-9]{0,18})", "[0-9]{1,19}", "[eE][+-]?[0-9]{1,3}"),
    ) {
        agrees(&tok, ", ");
    }
}

/// A number token: an optional minus, digits `int`, an optional fraction
/// (a point and digits `frac`) and an optional exponent `exp` (regexes).
fn number_token(
    int: &'static str,
    frac: &'static str,
    exp: &'static str,
) -> impl Strategy<Value = String> {
    let parts = (
        any::<bool>(),
        int,
        proptest::option::of(frac),
        proptest::option::of(exp),
    );
    parts.prop_map(|(neg, int, frac, exp)| {
        format!(
            "{}{int}{}{}",
            if neg { "-" } else { "" },
            frac.map(|f| format!(".{f}")).unwrap_or_default(),
            exp.unwrap_or_default()
        )
    })
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
        tok in number_token("(0|[1-9][0-9]{0,9}|[0-9]{1,3})", "[0-9]{0,9}", "[eE][+-]?[0-9]{0,4}"),
        after in after_token(),
    ) {
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

/// Each way of reading number runs, the general path alone (the
/// reference) first.
fn all_runs() -> Vec<(&'static str, NumberRuns)> {
    let mut runs = vec![
        ("general", NumberRuns::Off),
        ("serial", NumberRuns::Serial),
        ("bytes", NumberRuns::Bytes),
    ];
    #[cfg(target_arch = "x86_64")]
    if let Some(k) = Avx2Classifier::detect() {
        runs.push(("avx2", NumberRuns::Avx2(k)));
    }
    runs
}

/// `text` parsed as `tp` with each way of reading number runs: all give
/// the general path's array (compared as JSON) or its error, message and
/// kind. Returns that.
fn runs_agree(tp: &str, text: &str) -> std::result::Result<String, String> {
    let mut want = None;
    for (name, runs) in all_runs() {
        let a = Array::empty(tp).expect(tp);
        let got = parse_str_with(&a, text, runs)
            .map(|()| a.to_json())
            .map_err(|e| format!("{:?}: {}", e.kind(), e.message()));
        match &want {
            None => want = Some(got),
            Some(w) => assert_eq!(&got, w, "{tp} from {text:?}: {name} differs from general"),
        }
    }
    want.expect("at least one way")
}

/// Numbers of the run shapes and others, with every separator the loops
/// see: `count` of them, from `seed`.
fn number_list(count: usize, seed: usize) -> Vec<String> {
    const TOKENS: [&str; 16] = [
        "0",
        "-0",
        "7",
        "-12",
        "123.456",
        "-999.993",
        "0.5",
        "12345678",
        "-1234567",
        "1.25e3",
        "-2E-2",
        "98765432109",
        "3.14159265358979",
        "0.000001",
        "4.5",
        "-88.0",
    ];
    (0..count)
        .map(|i| TOKENS[(i * 7 + seed) % TOKENS.len()].to_string())
        .collect()
}

/// Separators between numbers, white space of every kind around one comma.
const SEPARATORS: [&str; 8] = [
    ",",
    ", ",
    " ,",
    ",\n",
    "\t,\t",
    " \r\n, ",
    ",  \n\t  ",
    ",\n        ",
];

/// A JSON array of `tokens`, separator `k` of [`SEPARATORS`] (and its
/// neighbours in turn) between them.
fn array_text(tokens: &[String], k: usize) -> String {
    let mut s = String::from("[");
    for (i, t) in tokens.iter().enumerate() {
        if i > 0 {
            s.push_str(SEPARATORS[(k + i % 3) % SEPARATORS.len()]);
        }
        s.push_str(t);
    }
    s.push(']');
    s
}

/// The window loop takes numbers across window boundaries, after every
/// kind of white space, up to the text's end (all text lengths up to
/// 200), and its values are the general path's and `str::parse`'s.
#[test]
fn number_runs_across_windows_and_text_ends() {
    for count in [0, 1, 2, 7, 8, 9, 30, 100, 257] {
        for k in 0..SEPARATORS.len() {
            let tokens = number_list(count, k);
            let text = array_text(&tokens, k);
            let json = runs_agree("var * float64", &text).expect("valid numbers");
            let want: Vec<f64> = tokens.iter().map(|t| t.parse().expect("f64")).collect();
            let a = Array::from_json("var * float64", &json).expect("its own JSON");
            for (i, w) in want.iter().enumerate() {
                let got = a.index(&[i.into()]).and_then(|e| e.as_scalar::<f64>());
                assert_eq!(
                    got.expect("element").to_bits(),
                    w.to_bits(),
                    "{text:?} [{i}]"
                );
            }
            runs_agree(&format!("{count} * float64"), &text).expect("valid numbers");
            runs_agree(&format!("{count} * float32"), &text).expect("valid numbers");
            // Integer types take some and fail on the first fraction (or
            // the first out of range), the same way on every path.
            for tp in ["var * int64", "var * int32", "var * int8", "var * uint16"] {
                let _ = runs_agree(tp, &text);
            }
        }
    }
    // Every text length from 0 to 200: prefixes of a long text (mostly
    // unterminated), and whole arrays ending at each length.
    let tokens = number_list(40, 3);
    let text = array_text(&tokens, 2);
    for len in 0..=200.min(text.len()) {
        let _ = runs_agree("var * float64", &text[..len]);
    }
    for len in 2..=200 {
        let mut tokens: Vec<String> = Vec::new();
        let mut body = array_text(&tokens, len);
        loop {
            let mut more = tokens.clone();
            more.push(format!("{}.{}", body.len() * 37 % 1000, len % 10));
            let next = array_text(&more, len);
            if next.len() > len {
                break;
            }
            (tokens, body) = (more, next);
        }
        let text = format!("{body:<len$}");
        assert_eq!(text.len(), len);
        runs_agree("var * float64", &text).expect("valid numbers");
    }
}

/// Where the window loop hands over to the general path: exponents it
/// does not read, long mantissas, specials, `null`, brackets, malformed
/// tokens and separators, numbers out of range; each in the middle of
/// long runs, so windows meet it at every offset.
#[test]
fn number_runs_hand_over() {
    let odd = [
        "1e400",
        "1e-400",
        "1.5e3",
        "2E+5",
        "123456789012345678901234",
        "0.1234567890123456789",
        "NaN",
        "Infinity",
        "-Infinity",
        "null",
        "true",
        "\"1\"",
        "[1]",
        "01",
        "-",
        "--1",
        "+1",
        "1.",
        ".5",
        "1.2.3",
        "1-2",
        "1e",
        "1e+",
        "1x",
        "1.5x",
        "1_0",
        "é",
        "1é",
        "-0.0",
        "00.5",
        "1 2",
        "1,,2",
        "1, ,2",
        ",",
        "",
        "]",
        "300",
        "-129",
        "1e2",
        "18446744073709551616",
    ];
    let types = [
        "var * float64",
        "var * float32",
        "var * int64",
        "var * int8",
        "var * uint8",
        "var * ?float64",
        "2 * var * float64",
    ];
    for (j, bad) in odd.iter().enumerate() {
        for at in [0, 1, 5, 6, 7, 8, 13, 20] {
            let mut tokens = number_list(24, j);
            tokens.insert(at.min(tokens.len()), (*bad).to_string());
            for k in [0, 3, 5] {
                let text = array_text(&tokens, k);
                for tp in types {
                    let text = if tp.starts_with("2 *") {
                        format!("[{text}, {text}]")
                    } else {
                        text.clone()
                    };
                    let _ = runs_agree(tp, &text);
                }
                let n = tokens.len();
                let _ = runs_agree(&format!("{n} * float64"), &text);
                let _ = runs_agree(&format!("{} * float64", n - 1), &text);
            }
        }
    }
}

/// The AVX2 classifier marks every byte value as the byte-at-a-time one
/// does, at every position; and that one follows JSON's white space and
/// number characters.
#[test]
fn classifiers_agree_on_every_byte() {
    for b in 0..=255u8 {
        let c = classify_bytes(&[b; WINDOW]);
        let ws = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        let num = b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E');
        let all = |yes: bool| if yes { !0u64 } else { 0 };
        assert_eq!(
            (c.ws, c.comma, c.num),
            (all(ws), all(b == b','), all(num)),
            "{b:#x}"
        );
        #[cfg(target_arch = "x86_64")]
        if let Some(k) = Avx2Classifier::detect() {
            for at in 0..WINDOW {
                let mut w = [b'7'; WINDOW];
                w[at] = b;
                assert_eq!(k.classify(&w), classify_bytes(&w), "{b:#x} at {at}");
            }
        }
    }
}

/// [`window_tokens`] by walking the window byte by byte: after the start
/// (the end of a number), white space, one comma, white space, a token
/// ending inside the window at a byte that may follow a number; again
/// from its end. Returns each token's start and end.
fn window_tokens_walk(w: &[u8; WINDOW]) -> Vec<(usize, usize)> {
    let c = classify_bytes(w);
    let class = |k: usize, m: u64| k < WINDOW && m >> k & 1 != 0;
    let mut tokens = Vec::new();
    let mut i = 0;
    loop {
        while class(i, c.ws) {
            i += 1;
        }
        if !class(i, c.comma) {
            return tokens;
        }
        i += 1;
        while class(i, c.ws) {
            i += 1;
        }
        if !class(i, c.num) {
            return tokens;
        }
        let start = i;
        while class(i, c.num) {
            i += 1;
        }
        let ends_well = class(i, c.ws | c.comma)
            || (i < WINDOW && super::cursor::may_follow_number(Some(&w[i])));
        if !ends_well {
            return tokens;
        }
        tokens.push((start, i));
    }
}

/// Window bytes for the proptests: mostly separators and number bytes.
fn window_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        8 => prop::sample::select(b"0123456789".to_vec()),
        4 => prop::sample::select(b", \t\n\r".to_vec()),
        1 => prop::sample::select(b"-+.eE]}x\"\x00\xc3\xff".to_vec()),
        1 => any::<u8>(),
    ]
}

proptest! {
    /// The masks of [`window_tokens`] give the walk's tokens, starts and
    /// ends paired in order, with either classifier.
    #[test]
    fn window_tokens_follow_the_walk(bytes in prop::collection::vec(window_byte(), WINDOW)) {
        let w: [u8; WINDOW] = bytes.try_into().expect("a window");
        let want = window_tokens_walk(&w);
        let (mut starts, mut ends) = window_tokens(classify_bytes(&w), &w);
        let mut got = Vec::new();
        while starts != 0 {
            got.push((starts.trailing_zeros() as usize, ends.trailing_zeros() as usize));
            starts &= starts - 1;
            ends &= ends.wrapping_sub(1);
        }
        prop_assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&w));
        #[cfg(target_arch = "x86_64")]
        if let Some(k) = Avx2Classifier::detect() {
            prop_assert_eq!(k.classify(&w), classify_bytes(&w));
        }
    }

    /// Arrays of random tokens (number shapes, with some that are not)
    /// between random separators (mostly well formed): every way of
    /// reading number runs gives the general path's array or error; a
    /// well-formed float64 array holds `str::parse`'s values.
    #[test]
    fn number_runs_match_the_general_path(
        items in prop::collection::vec(
            (
                prop_oneof![
                    6 => "-?(0|[1-9][0-9]{0,3})\\.[0-9]{1,4}",
                    3 => "-?(0|[1-9][0-9]{0,9})",
                    2 => "-?[0-9]{1,3}(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?",
                    1 => "[-+.eE0-9]{1,6}|null|NaN|x|\\]",
                ],
                prop_oneof![
                    8 => "[ \t\n\r]{0,3},[ \t\n\r]{0,12}",
                    1 => "[ \t\n\r,]{0,3}",
                ],
            ),
            0..60,
        ),
        lead in "[ \t\n]{0,3}",
    ) {
        let mut text = format!("[{lead}");
        for (i, (tok, sep)) in items.iter().enumerate() {
            if i > 0 {
                text.push_str(sep);
            }
            text.push_str(tok);
        }
        text.push(']');
        let got = runs_agree("var * float64", &text);
        runs_agree("var * float32", &text).ok();
        runs_agree("var * int64", &text).ok();
        runs_agree(&format!("{} * float64", items.len()), &text).ok();
        // With one comma between each two tokens, each is one element.
        let one_comma = items.iter().skip(1).all(|(_, sep)| sep.matches(',').count() == 1);
        if let Ok(json) = got
            && one_comma
        {
            let a = Array::from_json("var * float64", &json).expect("its own JSON");
            for (i, (tok, _)) in items.iter().enumerate() {
                if let Ok(want) = tok.parse::<f64>()
                    && want.is_finite()
                    && !tok.starts_with(['+', '.'])
                {
                    let got = a.index(&[i.into()]).and_then(|e| e.as_scalar::<f64>());
                    prop_assert_eq!(got.expect("element").to_bits(), want.to_bits(), "{:?}", tok);
                }
            }
        }
    }
}

proptest! {
    /// Where [`QuickNumber::token`] takes a token (known to end where a
    /// byte that is not part of a number follows), it reads what
    /// [`QuickNumber::scan_token`] reads, the whole token, and
    /// `from_short` gives `from_quick`'s value; it takes every token of
    /// its shapes.
    #[test]
    fn token_agrees_with_the_scan(
        tok in "-?[0-9.]{0,9}|[-+.eE0-9]{1,9}",
        after in prop::sample::select(b", \t\n\r]}\0x\"".to_vec()),
        pad in "[0-9., ]{0,9}",
    ) {
        let mut bytes = format!("{tok}{}{pad}", after as char).into_bytes();
        bytes.resize(bytes.len().max(9), 0);
        let t9 = bytes.first_chunk::<9>().expect("9 bytes");
        let unsigned = tok.strip_prefix('-').unwrap_or(&tok);
        let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
        let shape = unsigned.len() <= 8
            && !int.is_empty()
            && int.bytes().all(|b| b.is_ascii_digit())
            && (int == "0" || !int.starts_with('0'))
            && (!unsigned.contains('.') || (!frac.is_empty() && frac.bytes().all(|b| b.is_ascii_digit())));
        let got = QuickNumber::token(t9, tok.len());
        prop_assert_eq!(got.is_some(), shape, "{:?}", tok);
        if let Some(q) = got {
            prop_assert_eq!(QuickNumber::scan_token(&bytes), Some((q, tok.len())), "{:?}", tok);
            prop_assert_eq!(f64::from_short(q).map(f64::to_bits), f64::from_quick(q).map(f64::to_bits));
            prop_assert_eq!(f32::from_short(q).map(f32::to_bits), f32::from_quick(q).map(f32::to_bits));
            prop_assert_eq!(f64::from_short(q).map(f64::to_bits), tok.parse::<f64>().ok().map(f64::to_bits));
        }
    }
}
