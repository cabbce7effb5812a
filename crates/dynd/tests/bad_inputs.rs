//! The bad-input sweep: malformed datashape text, JSON that does
//! not fit its type, bad index expressions, shapes that do not broadcast and
//! values that do not fit under each checked error mode.
//!
//! Each row gives the input, the exact [`ErrorKind`] expected and a piece of
//! text the message must contain, naming the problem. Every case runs under
//! `catch_unwind`: a panic is a failure of the row, never of the sweep, so one
//! run reports every row that is wrong.

use crate::common;

use common::sweep;
use dynd::kernels::assign::ErrorMode;
use dynd::{Array, Error, ErrorKind, Index, Type};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// One malformed input.
struct Case {
    /// Which family of inputs it belongs to.
    category: &'static str,
    /// The input, as shown in a failure.
    input: String,
    /// The kind the error must have.
    kind: ErrorKind,
    /// Text the message must contain.
    needle: &'static str,
    /// Runs the case; `Ok` carries a rendering of an unexpected success.
    run: Box<dyn Fn() -> Result<String, Error>>,
}

fn case(
    category: &'static str,
    input: impl Into<String>,
    kind: ErrorKind,
    needle: &'static str,
    run: impl Fn() -> Result<String, Error> + 'static,
) -> Case {
    Case {
        category,
        input: input.into(),
        kind,
        needle,
        run: Box::new(run),
    }
}

fn datashape(text: impl Into<String>, kind: ErrorKind, needle: &'static str) -> Case {
    let text = text.into();
    case(
        "datashape",
        format!("type {text:?}"),
        kind,
        needle,
        move || Type::parse(&text).map(|t| t.to_string()),
    )
}

fn json(tp: &'static str, text: impl Into<String>, kind: ErrorKind, needle: &'static str) -> Case {
    let text = text.into();
    case(
        "json",
        format!("{tp} <- {text:?}"),
        kind,
        needle,
        move || Array::from_json(tp, &text).map(|a| a.to_json()),
    )
}

fn json_bytes(
    tp: &'static str,
    text: &'static [u8],
    kind: ErrorKind,
    needle: &'static str,
) -> Case {
    case(
        "json",
        format!("{tp} <- {text:?}"),
        kind,
        needle,
        move || Array::from_json_bytes(tp, text).map(|a| a.to_json()),
    )
}

fn index(
    tp: &'static str,
    value: &'static str,
    indices: Vec<Index>,
    kind: ErrorKind,
    needle: &'static str,
) -> Case {
    case(
        "index",
        format!("{tp} {value} [{indices:?}]"),
        kind,
        needle,
        move || {
            let a = Array::from_json(tp, value)?;
            a.index(&indices).map(|v| v.to_json())
        },
    )
}

fn broadcast(
    a: (&'static str, &'static str),
    b: (&'static str, &'static str),
    kind: ErrorKind,
    needle: &'static str,
) -> Case {
    case(
        "broadcast",
        format!("add({} {}, {} {})", a.0, a.1, b.0, b.1),
        kind,
        needle,
        move || {
            let x = Array::from_json(a.0, a.1)?;
            let y = Array::from_json(b.0, b.1)?;
            dynd::compute::add(&x, &y).map(|r| r.to_json())
        },
    )
}

fn cast(
    src: (&'static str, &'static str),
    dst: &'static str,
    mode: ErrorMode,
    kind: ErrorKind,
    needle: &'static str,
) -> Case {
    case(
        "cast",
        format!("{} {} as {dst} ({mode})", src.0, src.1),
        kind,
        needle,
        move || {
            let a = Array::from_json(src.0, src.1)?;
            a.cast(dst, mode).map(|r| r.to_json())
        },
    )
}

/// Every case of the sweep, one row each (kept one a line: a table).
#[rustfmt::skip]
fn cases() -> Vec<Case> {
    use ErrorKind::*;
    // Nesting far deeper than any stack allows for recursion per level.
    let deep_array = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_skip = format!(
        "{{\"x\": 1, \"z\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let deep_type = format!("{}int32", "3 * ".repeat(100_000));
    let deep_struct = format!("{}int32{}", "{x: ".repeat(100_000), "}".repeat(100_000));
    vec![
        // ---- datashape text ----
        datashape("float64+", Parse, "column 8"),
        datashape("float65", Parse, "float65"),
        datashape("", Parse, "end of input"),
        datashape("   ", Parse, "column 4: expected a type"),
        datashape("3 * int32 * float64", Parse, "'int32' is not a dimension"),
        datashape("3 *", Parse, "expected"),
        datashape("* int32", Parse, "expected"),
        datashape("fixed_string[0]", Parse, "size must be at least 1, got 0"),
        datashape("fixed_string[]", Parse, "expected"),
        datashape("fixed_string[4, 'klingon']", Parse, "klingon"),
        datashape("fixed_string[3, 'utf-8", Parse, "unterminated quoted string"),
        datashape("{x: }", Parse, "expected"),
        datashape("{x: int32", Parse, "expected"),
        datashape("{x: int32, x: int8}", Parse, "duplicate field name 'x'"),
        datashape("{: int32}", Parse, "expected"),
        datashape("(int32,, int8)", Parse, "expected"),
        datashape("99999999999999999999 * int32", Parse, "99999999999999999999"),
        datashape("9223372036854775807 * 9223372036854775807 * int64", Parse, "type too large"),
        datashape("-3 * int32", Parse, "expected"),
        datashape("option[]", Parse, "expected"),
        datashape("pointer[", Parse, "expected"),
        datashape("int32 int32", Parse, "int32"),
        datashape("var * ", Parse, "expected"),
        datashape("complex[int32]", Parse, "complex[int32] is not supported"),
        datashape("3 * int32 garbage", Parse, "garbage"),
        datashape(deep_type, Parse, "deep"),
        datashape(deep_struct, Parse, "deep"),
        datashape("int32 é", Parse, "é"),
        datashape("ℕ * int32", Parse, "column 1"),
        datashape("fixed_string[99999999999999999999]", Parse, "99999999999999999999"),
        datashape("{x: int32, y}", Parse, "expected"),
        datashape("?", Parse, "end of input"),
        datashape("??int32", Parse, "option"),
        // ---- JSON that does not fit its type ----
        json("3 * int32", "[1, 2]", Parse, "3"),
        json("3 * int32", "[1, 2, 3, 4]", Parse, "3"),
        json("int32", "\"12\"", Parse, "expected a number for int32, found a string"),
        json("int32", "\"abc\"", Parse, "found a string"),
        json("int8", "300", Overflow, "300"),
        json("uint8", "-1", Overflow, "-1"),
        json("int64", "99999999999999999999", Overflow, "99999999999999999999"),
        json("int32", "1.5", Fractional, "1.5"),
        json("float32", "1e999", Overflow, "1e999"),
        json("bool", "1", Parse, "expected true or false for bool"),
        json("int32", "1 2", Parse, "column 3: unexpected text after the JSON value"),
        json("int32", "1,", Parse, "unexpected text after the JSON value"),
        json("int32", "", Parse, "found the end of the text"),
        json("int32", "nul", Parse, "nul"),
        json("int32", "null", Parse, "expected a number for int32, found null"),
        json("string", "null", Parse, "found null"),
        json("string", "\"abc", Parse, "unterminated"),
        json("string", "\"\\q\"", Parse, "escape"),
        json("string", "\"\\ud800\"", Parse, "surrogate"),
        json("3 * int32", "[1, 2, 3", Parse, "found the end of the text"),
        json("3 * int32", "[1 2 3]", Parse, "expected"),
        json("3 * int32", "{}", Parse, "expected an array for 3 * int32, found an object"),
        json("var * int32", "5", Parse, "found a number"),
        json("{x: int32, y: int32}", "{\"x\": 1}", Parse, "y"),
        json("{x: int32}", deep_skip, Parse, "deep"),
        json("{x: int32}", "{\"x\": 1, \"x\": 2}", Parse, "x"),
        json("{x: int32}", "{x: 1}", Parse, "expected"),
        json("(int32, int32)", "[1]", Parse, "2"),
        json("fixed_string[2]", "\"abc\"", Overflow, "fixed_string"),
        json("var * int32", deep_array, Parse, "at [0]: expected a number for int32, found an array"),
        json_bytes("string", b"\"\xff\xfe\"", Parse, "utf-8"),
        json_bytes("int32", b"\xc3", Parse, "utf-8"),
        json("int128", "1e40", Overflow, "int128"),
        json("int32", "NaN", Overflow, "NaN"),
        json("?int32", "\"abc\"", Parse, "expected a number for int32, found a string"),
        json("2 * var * int32", "[[1], [2], [3]]", Parse, "2"),
        json("bytes", "\"0g\"", Parse, "hex"),
        case("json", "empty(1000000000000000 * int64)", Alloc, "bytes", || Array::empty("1000000000000000 * int64").map(|a| a.tp().to_string())),
        // ---- index expressions ----
        index("3 * int32", "[1,2,3]", vec![3.into()], Index, "3"),
        index("3 * int32", "[1,2,3]", vec![(-4).into()], Index, "-4"),
        index("3 * int32", "[1,2,3]", vec![0.into(), 0.into()], Index, "too many indices"),
        index("int32", "7", vec![0.into()], Index, "too many indices"),
        index("3 * int32", "[1,2,3]", vec![dynd::Index::slice(None, None, 0)], Index, "step"),
        index("2 * 2 * int32", "[[1,2],[3,4]]", vec![0.into(), 2.into()], Index, "2"),
        index("var * int32", "[1,2]", vec![5.into()], Index, "5"),
        index("3 * int32", "[1,2,3]", vec![isize::MIN.into()], Index, "out of range"),
        case("index", "field 'y' of {x: int32}", Index, "y", || Array::from_json("{x: int32}", "{\"x\": 1}")?.field("y").map(|v| v.to_json())),
        case("index", "permute([0, 0]) of 2 * 2 * int32", Index, "not a permutation", || Array::from_json("2 * 2 * int32", "[[1,2],[3,4]]")?.permute(&[0, 0]).map(|v| v.to_json())),
        case("index", "permute([0, 5]) of 2 * 2 * int32", Index, "5", || Array::from_json("2 * 2 * int32", "[[1,2],[3,4]]")?.permute(&[0, 5]).map(|v| v.to_json())),
        // ---- broadcasting ----
        broadcast(("3 * int32", "[1,2,3]"), ("2 * int32", "[1,2]"), Broadcast, "(3)"),
        broadcast(("2 * 3 * int32", "[[1,2,3],[4,5,6]]"), ("3 * 2 * int32", "[[1,2],[3,4],[5,6]]"), Broadcast, "(3, 2)"),
        broadcast(("2 * var * int32", "[[1,2],[3]]"), ("3 * int32", "[1,2,3]"), Broadcast, "var"),
        broadcast(("2 * var * int32", "[[1,2],[3,4,5]]"), ("2 * var * int32", "[[1,2,3],[3,4]]"), Broadcast, "var"),
        broadcast(("4 * int32", "[1,2,3,4]"), ("2 * 3 * int32", "[[1,2,3],[4,5,6]]"), Broadcast, "(4)"),
        broadcast(("int32", "1"), ("string", "\"a\""), Type, "string"),
        // A count that does not fit the signature is a `Type` error, like any
        // other argument list the signature refuses.
        case("broadcast", "add with one argument", Type, "takes 2 arguments, got 1", || dynd::compute::call("add", &[&Array::from(1i32)]).map(|r| r.to_json())),
        case("broadcast", "unknown callable", InvalidArgument, "frobnicate", || dynd::compute::call("frobnicate", &[&Array::from(1i32)]).map(|r| r.to_json())),
        case("broadcast", "int32 1 / 0", InvalidArgument, "division by zero", || dynd::compute::divide(&Array::from(1i32), &Array::from(0i32)).map(|r| r.to_json())),
        // ---- checked casts under each error mode ----
        cast(("int32", "300"), "int8", ErrorMode::Overflow, Overflow, "300"),
        cast(("int32", "300"), "int8", ErrorMode::Fractional, Overflow, "300"),
        cast(("int32", "300"), "int8", ErrorMode::Inexact, Overflow, "300"),
        cast(("int32", "300"), "int8", ErrorMode::Default, Overflow, "300"),
        cast(("int32", "-1"), "uint32", ErrorMode::Overflow, Overflow, "-1"),
        cast(("float64", "1e300"), "float32", ErrorMode::Overflow, Overflow, "1e300"),
        cast(("float64", "NaN"), "int32", ErrorMode::Overflow, Overflow, "NaN"),
        cast(("float64", "Infinity"), "int64", ErrorMode::Default, Overflow, "Infinity"),
        cast(("float64", "2.5"), "int32", ErrorMode::Fractional, Fractional, "2.5"),
        cast(("float64", "2.5"), "int32", ErrorMode::Default, Fractional, "2.5"),
        cast(("float64", "0.1"), "float32", ErrorMode::Inexact, Inexact, "0.1"),
        cast(("int64", "9007199254740993"), "float64", ErrorMode::Inexact, Inexact, "9007199254740993"),
        cast(("3 * int32", "[1, 200, 3]"), "3 * int8", ErrorMode::Overflow, Overflow, "200"),
        cast(("string", "\"12x\""), "int32", ErrorMode::Default, Parse, "12x"),
        cast(("string", "\"999\""), "uint8", ErrorMode::Overflow, Overflow, "999"),
        cast(("3 * int32", "[1,2,3]"), "2 * int32", ErrorMode::Default, Broadcast, "(3)"),
        cast(("{x: int32}", "{\"x\": 1}"), "{y: int32}", ErrorMode::Default, Type, "cannot assign"),
        case("cast", "errmode 'strict'", InvalidArgument, "strict", || "strict".parse::<ErrorMode>().map(|m| m.to_string())),
        case("cast", "errmode raw 9", InvalidArgument, "9", || ErrorMode::from_raw(9).map(|m| m.to_string())),
        case("cast", "assign into a read-only view", InvalidArgument, "read-only", || {
            let a = Array::from_json("int32", "1")?.read_only();
            a.assign(&Array::from(2i32), ErrorMode::Default).map(|_| a.to_json())
        }),
    ]
}

#[test]
fn every_bad_input_is_a_typed_error_naming_the_problem() {
    let cases = cases();
    let mut failures = Vec::new();
    let mut per_category = std::collections::BTreeMap::<&str, usize>::new();
    for c in &cases {
        *per_category.entry(c.category).or_default() += 1;
        let outcome = catch_unwind(AssertUnwindSafe(|| (c.run)()));
        let problem = match outcome {
            Err(_) => Some("panicked".to_string()),
            Ok(Ok(v)) => Some(format!("succeeded with {}", truncate(&v))),
            Ok(Err(e)) if e.kind() != c.kind => Some(format!(
                "kind {} (want {}): {}",
                e.kind(),
                c.kind,
                truncate(e.message())
            )),
            Ok(Err(e)) if !e.message().contains(c.needle) => Some(format!(
                "message lacks {:?}: {}",
                c.needle,
                truncate(e.message())
            )),
            Ok(Err(_)) => None,
        };
        if let Some(p) = problem {
            failures.push(format!("[{}] {}: {p}", c.category, truncate(&c.input)));
        }
    }
    let summary = format!("{} bad-input cases: {per_category:?}", cases.len());
    sweep::finish(&summary, cases.len(), 100, &failures);
}

fn truncate(s: &str) -> String {
    if s.len() <= 160 {
        s.to_string()
    } else {
        let mut end = 160;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} bytes)", &s[..end], s.len())
    }
}
