//! The bad-input sweep of the `dynd` binary: unknown commands
//! and options, missing and extra arguments, bad types, JSON and error
//! modes. Each row states the error kind printed in `error[KIND]: ` and
//! text the message must contain; every row must exit 1 with nothing on
//! stdout and no panic (a panic would exit 101).

#[path = "../../dynd/tests/common/sweep.rs"]
mod sweep;

use std::process::Command;

fn dynd(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dynd"))
        .args(args)
        .output()
        .expect("run dynd");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// (arguments, error kind, text the message contains)
#[rustfmt::skip]
const CASES: &[(&[&str], &str, &str)] = &[
    // commands and options
    (&[], "invalid_argument", "missing command"),
    (&["frobnicate"], "invalid_argument", "unknown command 'frobnicate'"),
    (&["--frob"], "invalid_argument", "unknown command '--frob'"),
    (&["call", "sum", "3 * int32", "[1,2,3]", "--threads"], "invalid_argument", "--threads needs a count"),
    (&["--threads", "two", "type", "int32"], "invalid_argument", "--threads takes a count (0 for the default, 1 for serial), got 'two'"),
    (&["--threads=-1", "type", "int32"], "invalid_argument", "got '-1'"),
    (&["--threads", "99999", "type", "int32"], "invalid_argument", "--threads: thread count 99999 is more than the 4096"),
    (&["TYPE", "int32"], "invalid_argument", "unknown command 'TYPE'"),
    (&["type"], "invalid_argument", "missing DATASHAPE"),
    (&["type", "int32", "extra"], "invalid_argument", "too many arguments for 'type': extra"),
    (&["parse", "int32"], "invalid_argument", "missing JSON"),
    (&["parse"], "invalid_argument", "missing DATASHAPE"),
    (&["assign", "--fast", "int8", "int32", "1"], "invalid_argument", "unknown option '--fast'"),
    (&["assign", "--errmode"], "invalid_argument", "--errmode needs a value"),
    (&["assign", "--errmode", "strict", "int8", "int32", "1"], "invalid_argument", "unknown error mode 'strict'"),
    (&["assign", "--errmode=", "int8", "int32", "1"], "invalid_argument", "unknown error mode ''"),
    (&["assign", "--errmode", "OVERFLOW", "int8", "int32", "1"], "invalid_argument", "unknown error mode 'OVERFLOW'"),
    (&["assign", "int8", "int32"], "invalid_argument", "got 2 arguments"),
    (&["assign", "int8", "int32", "1", "2"], "invalid_argument", "got 4 arguments"),
    (&["call"], "invalid_argument", "missing FUNC"),
    (&["call", "frobnicate", "int32", "1"], "invalid_argument", "no callable named 'frobnicate'"),
    (&["call", "add", "int32"], "invalid_argument", "DATASHAPE JSON pairs"),
    (&["call", "sum", "--axes", "3 * int32", "[1,2,3]"], "invalid_argument", "--axes takes comma-separated integers"),
    (&["call", "sum", "--axes"], "invalid_argument", "--axes needs a value"),
    (&["call", "sum", "--axes=x", "3 * int32", "[1,2,3]"], "invalid_argument", "--axes takes comma-separated integers"),
    (&["call", "sum", "--axes", "5", "3 * int32", "[1,2,3]"], "index", "5"),
    (&["call", "add", "--keepdims", "int32", "1", "int32", "2"], "invalid_argument", "--axes and --keepdims apply to reductions"),
    // bad types
    (&["type", "float64+"], "parse", "line 1, column 8"),
    (&["type", "float65"], "parse", "float65"),
    (&["type", "3 * int32 * float64"], "parse", "'int32' is not a dimension"),
    (&["type", "fixed_string[0]"], "parse", "at least 1"),
    (&["type", "{x: }"], "parse", "expected"),
    (&["type", "99999999999999999999 * int32"], "parse", "99999999999999999999"),
    (&["type", ""], "parse", "expected a type"),
    (&["parse", "N * int32", "[1]"], "type", "N * int32"),
    (&["assign", "int8", "3 *", "[1]"], "parse", "expected"),
    // bad JSON and values
    (&["parse", "int8", "300"], "overflow", "300 is out of range for int8"),
    (&["parse", "3 * int32", "[1, 2]"], "parse", "3"),
    (&["parse", "int32", "\"12\""], "parse", "found a string"),
    (&["parse", "int32", "1 2"], "parse", "unexpected text after the JSON value"),
    (&["parse", "string", "null"], "parse", "found null"),
    (&["parse", "{x: int32, y: int32}", "{\"x\": 1}"], "parse", "y"),
    (&["assign", "--errmode", "overflow", "int8", "int32", "128"], "overflow", "int32 value 128 is out of range for int8"),
    (&["assign", "--errmode", "fractional", "int32", "float64", "1.5"], "fractional", "1.5"),
    (&["assign", "--errmode", "inexact", "float32", "float64", "0.1"], "inexact", "0.1"),
    (&["assign", "--errmode", "overflow", "float32", "float64", "1e300"], "overflow", "float64 value 1e300"),
    (&["assign", "int32", "float64", "NaN"], "overflow", "NaN"),
    (&["assign", "3 * int32", "2 * int32", "[1, 2]"], "broadcast", "(2)"),
    (&["call", "add", "3 * int32", "[1,2,3]", "2 * int32", "[1,2]"], "broadcast", "(3)"),
    (&["call", "add", "int32", "1", "string", "\"a\""], "type", "string"),
    (&["call", "divide", "int32", "1", "int32", "0"], "invalid_argument", "division by zero"),
];

#[test]
fn every_bad_argument_list_is_a_typed_error() {
    let mut failures = Vec::new();
    for (args, kind, needle) in CASES {
        let (code, out, err) = dynd(args);
        let prefix = format!("error[{kind}]: ");
        let problem = if code != Some(1) {
            Some(format!("exit {code:?} (want 1): {err}"))
        } else if !out.is_empty() {
            Some(format!("stdout not empty: {out}"))
        } else if !err.starts_with(&prefix) {
            Some(format!("stderr does not start with {prefix:?}: {err}"))
        } else if !err.contains(needle) {
            Some(format!("message lacks {needle:?}: {err}"))
        } else if err.contains("panicked") {
            Some(format!("panicked: {err}"))
        } else {
            None
        };
        if let Some(p) = problem {
            failures.push(format!("{args:?}: {p}"));
        }
    }
    let summary = format!("{} CLI bad-argument cases", CASES.len());
    sweep::finish(&summary, CASES.len(), 40, &failures);
}
