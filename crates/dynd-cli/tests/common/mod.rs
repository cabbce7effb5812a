//! Running the `dynd` binary from the integration tests of this crate:
//! its exit code, stdout and stderr, and the two checks most rows make.
//! Each test binary uses a part of them.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `dynd ARGS` with `stdin` as its standard input: `(exit code,
/// stdout, stderr)`, the code -1 when a signal ended it.
pub fn dynd_with(args: &[&str], stdin: Stdio) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dynd"))
        .args(args)
        .stdin(stdin)
        .output()
        .expect("run dynd");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Runs `dynd ARGS` with nothing on its standard input.
pub fn dynd(args: &[&str]) -> (i32, String, String) {
    dynd_with(args, Stdio::null())
}

/// Runs `dynd ARGS` with `input` piped to its standard input, written from
/// a thread of its own (so a large input cannot deadlock against dynd's
/// output).
pub fn dynd_stdin(args: &[&str], input: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dynd"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run dynd");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        // dynd may exit before reading everything (on an error, or a
        // command that does not read stdin).
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for dynd");
    writer.join().expect("the stdin writer");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `dynd call ARGS`.
pub fn call(args: &[&str]) -> (i32, String, String) {
    let args: Vec<&str> = ["call"].iter().chain(args.iter()).copied().collect();
    dynd(&args)
}

/// Each row's arguments (after `prefix`, e.g. `["call"]`) exit 0 with
/// nothing on stderr and exactly the row's text on stdout.
pub fn assert_prints(prefix: &[&str], cases: &[(&[&str], &str)]) {
    for (args, want) in cases {
        let args: Vec<&str> = prefix.iter().chain(args.iter()).copied().collect();
        let (code, out, err) = dynd(&args);
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
        assert_eq!(out, *want, "{args:?}");
    }
}

/// Each row's arguments (after `prefix`) exit 1 with nothing on stdout
/// and stderr that starts with the row's text (a usage error adds the
/// usage after its line).
pub fn assert_errors(prefix: &[&str], cases: &[(&[&str], &str)]) {
    check_errors(prefix, cases, false);
}

/// As [`assert_errors`], and stderr is that one line only.
pub fn assert_error_lines(prefix: &[&str], cases: &[(&[&str], &str)]) {
    check_errors(prefix, cases, true);
}

fn check_errors(prefix: &[&str], cases: &[(&[&str], &str)], one_line: bool) {
    for (args, want) in cases {
        let args: Vec<&str> = prefix.iter().chain(args.iter()).copied().collect();
        let (code, out, err) = dynd(&args);
        assert_eq!((code, out.as_str()), (1, ""), "{args:?}");
        assert!(err.starts_with(want), "{args:?}: {err}");
        assert!(err.ends_with('\n'), "{args:?}: {err}");
        if one_line {
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        }
    }
}
