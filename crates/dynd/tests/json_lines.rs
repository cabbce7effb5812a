//! JSON Lines in and out: round trips, blank lines and `\r\n`, errors with
//! line numbers, and the parallel reader against the serial one.

use dynd::{Array, ErrorKind};

/// Runs `f` on `threads` threads of dynd's executor.
fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    dynd::exec::Executor::Threads(threads).install(f)
}

/// `n` lines of records with a float, an int, a string (some with escapes
/// and non-ASCII), a var dim and an optional field.
fn records(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let tag = match i % 4 {
            0 => format!("r{i}"),
            1 => format!("quote \\\" {i}"),
            2 => format!("ünï {i}"),
            _ => String::new(),
        };
        let xs: Vec<String> = (0..i % 5).map(|k| (i * k).to_string()).collect();
        let opt = if i % 3 == 0 {
            "null".to_string()
        } else {
            format!("{}", i as f64 / 4.0)
        };
        s.push_str(&format!(
            "{{\"x\": {}, \"y\": {i}, \"s\": \"{tag}\", \"v\": [{}], \"o\": {opt}}}\n",
            i as f64 * 0.5,
            xs.join(", ")
        ));
    }
    s
}

const RECORD: &str = "{x: float64, y: int64, s: string, v: var * int32, o: ?float64}";

#[test]
fn round_trips_through_json_lines() {
    let text = records(50);
    let a = Array::from_json_lines(format!("var * {RECORD}").as_str(), &text).unwrap();
    assert_eq!(a.len().unwrap(), 50);
    let out = a.to_json_lines().unwrap();
    let b = Array::from_json_lines(format!("50 * {RECORD}").as_str(), &out).unwrap();
    assert_eq!(b.to_json_lines().unwrap(), out);
    assert_eq!(a.to_json(), b.to_json());
    // Each output line is the element's own JSON.
    let first = a.index(&[0.into()]).unwrap();
    assert_eq!(out.lines().next().unwrap(), first.to_json());
    let mut w = Vec::new();
    b.write_json_lines(&mut w).unwrap();
    assert_eq!(String::from_utf8(w).unwrap(), out);
}

#[test]
fn blank_lines_crlf_and_surrounding_whitespace() {
    let text = "\n  \r\n[1, 2]\r\n\t[3] \n\n\n[]\r\n   \n";
    let a = Array::from_json_lines("var * var * int64", text).unwrap();
    assert_eq!(a.to_json(), "[[1,2],[3],[]]");
    let a = Array::from_json_lines("3 * var * int64", text).unwrap();
    assert_eq!(a.to_json(), "[[1,2],[3],[]]");
    // No final newline; an empty text is no lines.
    assert_eq!(
        Array::from_json_lines("var * int8", "1\n2")
            .unwrap()
            .to_json(),
        "[1,2]"
    );
    assert_eq!(
        Array::from_json_lines("var * int8", "").unwrap().to_json(),
        "[]"
    );
    assert_eq!(
        Array::from_json_lines("0 * int8", " \n\r\n")
            .unwrap()
            .to_json(),
        "[]"
    );
}

#[test]
fn options_and_missing_fields() {
    let text = "{\"a\": 1}\n{\"a\": null, \"b\": \"x\"}\nnull\n";
    let a = Array::from_json_lines("var * ?{a: ?int32, b: ?string}", text).unwrap();
    assert_eq!(
        a.to_json_lines().unwrap(),
        "{\"a\":1,\"b\":null}\n{\"a\":null,\"b\":\"x\"}\nnull\n"
    );
}

#[test]
fn errors_name_line_and_column() {
    let cases: &[(&str, &str, ErrorKind, &str)] = &[
        (
            "var * int32",
            "1\n2\n\n  x\n",
            ErrorKind::Parse,
            "JSON line 4, column 3",
        ),
        (
            "var * {a: int32}",
            "{\"a\": 1}\r\n{\"a\": 2.5}\r\n",
            ErrorKind::Fractional,
            "JSON line 2, column 7 at .a",
        ),
        (
            "var * int8",
            "1\n300\n",
            ErrorKind::Overflow,
            "JSON line 2, column 1",
        ),
        (
            "var * int32",
            "1\n2 3\n",
            ErrorKind::Parse,
            "JSON line 2, column 3: unexpected text after the JSON value",
        ),
        // A value cannot continue on the next line.
        (
            "var * var * int32",
            "[1,\n2]\n",
            ErrorKind::Parse,
            "JSON line 1, column 4",
        ),
        (
            "3 * int32",
            "1\n2\n",
            ErrorKind::Parse,
            "the type has 3 elements, the text has 2 non-blank lines",
        ),
        (
            "int32",
            "1\n",
            ErrorKind::Type,
            "outermost dim holds the lines",
        ),
        (
            "var * string",
            "\"a\"\n\"b\n",
            ErrorKind::Parse,
            "JSON line 2",
        ),
    ];
    for (tp, text, kind, want) in cases {
        let e = Array::from_json_lines(*tp, text).unwrap_err();
        assert_eq!(e.kind(), *kind, "{tp} {text:?}: {e}");
        assert!(e.message().contains(want), "{tp} {text:?}: {e}");
    }
    let e = Array::from_json_lines_bytes("var * int32", b"1\n\xff\n").unwrap_err();
    assert!(e.message().contains("JSON line 2, column 1"), "{e}");
    let e = Array::from_json("int32", "1")
        .unwrap()
        .to_json_lines()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
}

#[test]
fn parallel_read_equals_serial_read() {
    // Several MB, so the reader splits it; strings and var dims land in
    // every piece, and the pieces' arenas are joined into the output's.
    let text = records(30_000);
    assert!(text.len() > 3 << 19);
    let tp = format!("var * {RECORD}");
    let serial = on_threads(1, || Array::from_json_lines(tp.as_str(), &text).unwrap());
    let parallel = on_threads(2, || Array::from_json_lines(tp.as_str(), &text).unwrap());
    let four = on_threads(4, || Array::from_json_lines(tp.as_str(), &text).unwrap());
    assert_eq!(serial.len().unwrap(), 30_000);
    assert_eq!(serial, parallel);
    assert_eq!(serial, four);
    assert_eq!(
        parallel.to_json_lines().unwrap(),
        serial.to_json_lines().unwrap()
    );
    // A fixed outer dim reads the same.
    let fixed = on_threads(2, || {
        Array::from_json_lines(format!("30000 * {RECORD}").as_str(), &text).unwrap()
    });
    assert_eq!(fixed.to_json(), serial.to_json());
    // The parsed data outlives everything but the array itself.
    let last = parallel.index(&[(-1).into()]).unwrap();
    drop(parallel);
    assert_eq!(last, serial.index(&[(-1).into()]).unwrap());
}

#[test]
fn parallel_errors_report_the_global_line() {
    let mut text = records(30_000);
    // Break line 25,001 (in the second half) and line 29,999.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[25_000] = lines[25_000].replace("\"y\": 25000", "\"y\": \"oops\"");
    lines[29_998] = "{".into();
    text = lines.join("\n");
    for threads in [1, 2, 4] {
        let e = on_threads(threads, || {
            Array::from_json_lines(format!("var * {RECORD}").as_str(), &text).unwrap_err()
        });
        assert!(
            e.message().starts_with("JSON line 25001, column "),
            "{threads} threads: {e}"
        );
        assert!(e.message().contains("at .y"), "{e}");
    }
}

#[test]
fn long_strings_and_rows_in_every_piece() {
    // Few, long lines: a piece boundary falls inside none of them.
    let mut text = String::new();
    for i in 0..40 {
        let s: String =
            std::iter::repeat_n(char::from(b'a' + (i % 26) as u8), 50_000 + i).collect();
        let v: Vec<String> = (0..20_000 + i).map(|k| (k % 100).to_string()).collect();
        text.push_str(&format!("[\"{s}\",[{}]]\n", v.join(",")));
    }
    let tp = "var * (string, var * int8)";
    let serial = on_threads(1, || Array::from_json_lines(tp, &text).unwrap());
    let parallel = on_threads(2, || Array::from_json_lines(tp, &text).unwrap());
    assert_eq!(serial, parallel);
    let out = parallel.to_json_lines().unwrap();
    let diff = out.bytes().zip(text.bytes()).position(|(a, b)| a != b);
    assert!(
        diff.is_none() && out.len() == text.len(),
        "output differs from the input at byte {diff:?}: {:?}",
        diff.map(|d| &out[d.saturating_sub(20)..(d + 20).min(out.len())])
    );
}

#[test]
fn counted_lines_give_a_fixed_dim_of_the_line_count() {
    let text = records(30_000);
    let want = Array::from_json_lines(format!("30000 * {RECORD}").as_str(), &text).unwrap();
    for threads in [1, 2, 3] {
        let got = on_threads(threads, || {
            Array::from_json_lines_counted(RECORD, text.as_bytes()).unwrap()
        });
        assert_eq!(got.tp().to_string(), format!("30000 * {RECORD}"));
        assert_eq!(got, want, "{threads} threads");
    }
    // Blank lines are not elements; an empty text is `0 * T`.
    let a = Array::from_json_lines_counted("int32", b"1\n\n  \r\n2\n").unwrap();
    assert_eq!(a.to_json(), "[1,2]");
    assert_eq!(a.tp().to_string(), "2 * int32");
    let e = Array::from_json_lines_counted("int32", b"").unwrap();
    assert_eq!(e.tp().to_string(), "0 * int32");
    // Bad input: the line of a bad value, bytes that are not utf-8, a
    // symbolic element type.
    let err = Array::from_json_lines_counted("int32", b"1\n2\nx\n").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Parse);
    assert!(err.message().contains("JSON line 3, column 1"), "{err}");
    let err = Array::from_json_lines_counted("string", b"\"a\"\n\"\xff\"\n").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Parse);
    assert!(
        err.message().contains("line 2, column 2") && err.message().contains("utf-8"),
        "{err}"
    );
    let err = Array::from_json_lines_counted("T", b"1\n").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Type, "{err}");
}
