//! `dynd parse --lines` and `dynd infer [--lines]` (DESIGN §8, wave 2).

use crate::common;
use common::{assert_prints, dynd, dynd_stdin, dynd_with};
use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;

/// A fresh directory under the system's temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dynd-cli-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn infer_examples_from_the_design() {
    for (json, want) in [
        ("[[1,2],null,[3,4]]", "3 * ?2 * int64\n"),
        ("[[1,2],[3]]", "2 * var * int64\n"),
        ("[[1,2],[3,4]]", "2 * 2 * int64\n"),
        ("[1, 2.5, null]", "3 * ?float64\n"),
        (
            r#"[{"a": 1, "b": "x"}, {"a": 2}]"#,
            "2 * {a: int64, b: ?string}\n",
        ),
    ] {
        let (code, out, err) = dynd(&["infer", json]);
        assert_eq!((code, out.as_str(), err.as_str()), (0, want, ""), "{json}");
    }
    let (code, out, _) = dynd(&["infer", "--lines", "{\"a\": 1}\n\n{\"a\": null}\r\n"]);
    assert_eq!((code, out.as_str()), (0, "2 * {a: ?int64}\n"));
    let (code, out, _) = dynd_stdin(&["infer", "--lines", "-"], b"[1]\n[2, 3]\n");
    assert_eq!((code, out.as_str()), (0, "2 * var * int64\n"));
}

#[test]
fn parse_lines_prints_the_array() {
    let records = "{\"x\": 1, \"s\": \"a\"}\n{\"x\": 2}\n";
    let printed = "[{\"x\":1,\"s\":\"a\"},{\"x\":2,\"s\":null}]\n";
    assert_prints(
        &["parse", "--lines"],
        &[(&["var * {x: int32, s: ?string}", records], printed)],
    );
    let (code, out, _) = dynd_stdin(
        &["parse", "--lines", "2 * var * int8", "-"],
        b"[1, 2]\r\n\r\n[]\r\n",
    );
    assert_eq!((code, out.as_str()), (0, "[[1,2],[]]\n"));
    // Without --lines the same text is one value, which it is not.
    let (code, _, err) = dynd(&["parse", "1 * int8", "[1]\n[2]\n"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with(
            "error[parse]: JSON line 2, column 1: unexpected text after the JSON value"
        ),
        "{err}"
    );
}

#[test]
fn errors_and_usage() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["parse", "--lines", "var * int32", "1\n2\nx\n"],
            "error[parse]: JSON line 3, column 1",
        ),
        (
            &["parse", "--lines", "3 * int32", "1\n2\n"],
            "error[parse]: JSON Lines for 3 * int32: the type has 3 elements, the text has 2 non-blank lines",
        ),
        (
            &["parse", "--lines", "int32", "1\n"],
            "error[type]: JSON Lines need a type whose outermost dim",
        ),
        (
            &["infer", r#"[{"name": "a"}, {"name": 1}]"#],
            "error[type]: cannot infer a type: at [1].name a number where earlier values are strings",
        ),
        (
            &["infer", "--lines", "1\n[2]\n"],
            "error[type]: cannot infer a type: at [1] a list",
        ),
        (&["infer", "[1,"], "error[parse]: JSON line 1, column 4"),
        (&["infer"], "error[invalid_argument]: missing JSON"),
        (
            &["infer", "--lines"],
            "error[invalid_argument]: missing JSON",
        ),
        (
            &["infer", "1", "2"],
            "error[invalid_argument]: too many arguments for 'infer': 2",
        ),
        (
            &["infer", "--line", "1"],
            "error[invalid_argument]: unknown option '--line'",
        ),
        (
            &["parse", "--lines", "int32"],
            "error[invalid_argument]: missing JSON",
        ),
        (
            &["parse", "--lines"],
            "error[invalid_argument]: missing DATASHAPE",
        ),
        (
            &["parse", "--lines", "var * int32", "@/nonexistent/x.jsonl"],
            "error[invalid_argument]: cannot read JSON from '/nonexistent/x.jsonl'",
        ),
    ];
    for (args, want) in cases {
        let (code, out, err) = dynd(args);
        assert_eq!((code, out.as_str()), (1, ""), "{args:?}");
        assert!(err.starts_with(want), "{args:?}: {err}");
    }
}

/// About 50 MB of JSON Lines records: `{"x": float, "y": int, "s": string}`.
fn big_jsonl(lines: usize) -> Vec<u8> {
    let mut text = Vec::with_capacity(lines * 56);
    for i in 0..lines {
        writeln!(
            text,
            "{{\"x\": {}.5, \"y\": {}, \"s\": \"name number {i}\"}}",
            i % 1000,
            i as i64 * 7 - 3_000_000
        )
        .unwrap();
    }
    text
}

/// A 50 MB JSON Lines file through `@PATH` and through stdin. Slow in
/// debug builds (a minute or more on two shared cores), hence ignored by
/// default: run it with `cargo test -p dynd-cli --release --test lines --
/// --ignored`.
#[test]
#[ignore = "50 MB through a debug build is slow; run with --release -- --ignored"]
fn fifty_megabytes_through_a_file_and_stdin() {
    let lines = 950_000;
    let text = big_jsonl(lines);
    assert!(text.len() >= 50_000_000, "{}", text.len());
    let dir = TempDir::new("lines");
    let path = dir.0.join("big.jsonl");
    std::fs::write(&path, &text).unwrap();
    let at = format!("@{}", path.display());
    let tp = "var * {x: float64, y: int64, s: string}";

    let (code, out, err) = dynd(&["infer", "--lines", &at]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        format!("{lines} * {{x: float64, y: int64, s: string}}\n")
    );

    let (code, from_file, err) = dynd(&["parse", "--lines", tp, &at]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(from_file.starts_with("[{\"x\":0.5,\"y\":-3000000,\"s\":\"name number 0\"},"));
    let last = lines - 1;
    assert!(from_file.ends_with(&format!(
        "{{\"x\":{}.5,\"y\":{},\"s\":\"name number {last}\"}}]\n",
        last % 1000,
        last as i64 * 7 - 3_000_000
    )));
    assert_eq!(from_file.matches("name number").count(), lines);

    let file = std::fs::File::open(&path).unwrap();
    let (code, from_stdin, err) = dynd_with(&["parse", "--lines", tp, "-"], Stdio::from(file));
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(from_stdin == from_file, "stdin and @PATH read differently");
}

#[test]
fn a_few_megabytes_through_a_file_and_stdin() {
    // The same path as the 50 MB test, at a size a debug build reads fast;
    // big enough for the parallel reader.
    let lines = 40_000;
    let text = big_jsonl(lines);
    let dir = TempDir::new("lines-small");
    let path = dir.0.join("small.jsonl");
    std::fs::write(&path, &text).unwrap();
    let at = format!("@{}", path.display());
    let tp = "var * {x: float64, y: int64, s: string}";
    let (code, from_file, err) = dynd(&["parse", "--lines", tp, &at]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(from_file.matches("name number").count(), lines);
    let (code, from_stdin, _) = dynd_stdin(&["parse", "--lines", tp, "-"], &text);
    assert_eq!(code, 0);
    assert!(from_stdin == from_file);
    let (code, out, _) = dynd_stdin(&["infer", "--lines", "-"], &text);
    assert_eq!(
        (code, out.as_str()),
        (0, "40000 * {x: float64, y: int64, s: string}\n")
    );
}
