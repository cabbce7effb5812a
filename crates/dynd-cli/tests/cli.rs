//! The `dynd` binary: exact output and error format of DESIGN §8.

use crate::common;
use common::{assert_errors, assert_prints, dynd};
use std::process::Command;

#[test]
fn type_prints_canonical_text_and_layout() {
    let (code, out, err) = dynd(&["type", "3 * var * {x: int32, name: string}"]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        "3 * var * {x: int32, name: string}\ndata_size=48 data_alignment=8 arrmeta_size=48\n"
    );
    let (_, out, _) = dynd(&["type", "option[int]"]);
    assert_eq!(out, "?int32\ndata_size=4 data_alignment=4 arrmeta_size=0\n");
    let (_, out, _) = dynd(&["type", "complex"]);
    assert_eq!(
        out,
        "complex[float64]\ndata_size=16 data_alignment=8 arrmeta_size=0\n"
    );
    let (code, out, _) = dynd(&["type", "N * T"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "N * T\nsymbolic: no data layout\n")
    );
}

#[test]
fn parse_prints_compact_json() {
    let (code, out, err) = dynd(&["parse", "2 * var * ?int32", "[[1, null], [ ]]"]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out, "[[1,null],[]]\n");
    let (_, out, _) = dynd(&[
        "parse",
        "{s: string, f: float64}",
        r#"{"f": 1e300, "s": "a\"é"}"#,
    ]);
    assert_eq!(out, "{\"s\":\"a\\\"é\",\"f\":1e300}\n");
}

#[test]
fn errors_go_to_stderr_with_their_kind_and_exit_1() {
    #[rustfmt::skip]
    let cases: &[(&[&str], &str)] = &[
        (&["type", "float64+"], "error[parse]: line 1, column 8"),
        (&["type", "float65"], "error[parse]: line 1, column 1"),
        (&["parse", "uint8", "256"], "error[overflow]: JSON line 1, column 1: 256 is out of range for uint8"),
        (&["parse", "int32", "1.5"], "error[fractional]:"),
        (&["parse", "3 * int32", "[1, 2]"], "error[parse]:"),
        (&["parse", "int32"], "error[invalid_argument]: missing JSON"),
        (&["parse", "int32", "1", "2"], "error[invalid_argument]: too many arguments"),
        (&["frobnicate"], "error[invalid_argument]: unknown command 'frobnicate'"),
        (&[], "error[invalid_argument]: missing command"),
    ];
    assert_errors(&[], cases);
}

#[test]
fn assign_converts_under_each_mode() {
    #[rustfmt::skip]
    let converted: &[(&[&str], &str)] = &[
        (&["2 * 3 * int32", "2 * var * float64", "[[1, 2, 3], [4]]"], "[[1,2,3],[4,4,4]]\n"),
        (&["--errmode", "nocheck", "uint16", "int32", "-1"], "65535\n"),
        (&["--errmode=overflow", "int8", "float64", "1.25"], "1\n"),
    ];
    assert_prints(&["assign"], converted);
    #[rustfmt::skip]
    let cases: &[(&[&str], &str)] = &[
        (&["assign", "int8", "float64", "1.25"], "error[fractional]: float64 value 1.25 has a fractional part"),
        (&["assign", "--errmode", "overflow", "int8", "int32", "128"], "error[overflow]: int32 value 128 is out of range for int8"),
        (&["assign", "--errmode", "inexact", "float32", "int64", "33554433"], "error[inexact]:"),
        (&["assign", "3 * int32", "2 * int32", "[9, 2]"], "error[broadcast]: cannot broadcast shape (2) into shape (3)"),
        (&["assign", "--errmode", "strict", "int8", "int8", "1"], "error[invalid_argument]: unknown error mode 'strict'"),
        (&["assign", "--errmode"], "error[invalid_argument]: --errmode needs a value"),
        (&["assign", "--fast", "int8", "int8", "1"], "error[invalid_argument]: unknown option '--fast'"),
        (&["assign", "int8", "int8"], "error[invalid_argument]: assign takes DST_DATASHAPE SRC_DATASHAPE JSON, got 2 arguments"),
        (&["assign", "{x: int8}", "{y: int8}", r#"{"y": 1}"#], "error[type]: cannot assign {y: int8} to {x: int8}"),
    ];
    assert_errors(&[], cases);
}

#[test]
fn non_utf8_arguments_are_an_error_not_a_panic() {
    use std::os::unix::ffi::OsStrExt;
    let out = Command::new(env!("CARGO_BIN_EXE_dynd"))
        .arg("type")
        .arg(std::ffi::OsStr::from_bytes(b"int\xff"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error[invalid_argument]: argument"),
        "{err}"
    );
    assert!(err.contains("not valid utf-8"), "{err}");
}

#[test]
fn call_applies_callables_and_reductions() {
    // (arguments, the whole of stdout)
    #[rustfmt::skip]
    let ok: &[(&[&str], &str)] = &[
        (&["call", "add", "2 * var * int32", "[[1,2,3],[4]]", "2 * 3 * int32", "[[5,6,7],[8,9,10]]"], "2 * 3 * int32\n[[6,8,10],[12,13,14]]\n"),
        (&["call", "sum", "--axes", "1", "2 * 3 * float64", "[[1.5,2,7],[-2.25,7,2.125]]"], "2 * float64\n[10.5,6.875]\n"),
        (&["call", "sum", "--axes=1", "--keepdims", "2 * 3 * float64", "[[1.5,2,7],[-2.25,7,2.125]]"], "2 * 1 * float64\n[[10.5],[6.875]]\n"),
        (&["call", "sum", "--axes", "1", "3 * var * int32", "[[1,2],[3,4,5],[6,7,8,9]]"], "3 * int64\n[3,12,30]\n"),
        // Negative axes count from the innermost.
        (&["call", "sum", "--axes", "-1", "3 * var * int32", "[[1,2],[3,4,5],[6,7,8,9]]"], "3 * int64\n[3,12,30]\n"),
        (&["call", "sum", "--axes=-2", "--keepdims", "2 * 3 * float64", "[[1.5,2,7],[-2.25,7,2.125]]"], "1 * 3 * float64\n[[-0.75,9.0,9.125]]\n"),
        // New reductions, by name, skipping missing values.
        (&["call", "argmax", "--axes", "-1", "3 * var * ?float64", "[[1,null,3],[],[null]]"], "3 * ?int64\n[2,null,null]\n"),
        (&["call", "argmax", "3 * ?float64", "[1,null,3]"], "?int64\n2\n"),
        (&["call", "count", "--axes", "-1", "2 * var * ?int32", "[[1,null,3],[]]"], "2 * int64\n[2,0]\n"),
        (&["call", "max", "--axes", "-1", "2 * var * float64", "[[1,5],[]]"], "2 * ?float64\n[5.0,null]\n"),
        (&["call", "sum", "--axes", "0", "2 * var * int32", "[[1,2,3],[4]]"], "var * int64\n[5,2,3]\n"),
        (&["call", "argmax", "--axes", "0", "var * var * int32", "[[1,5,3],[4],[9,0]]"], "var * ?int64\n[2,0,0]\n"),
        (&["call", "mean", "--axes", "0", "--keepdims", "2 * var * ?float64", "[[1,2,null],[5]]"], "1 * var * ?float64\n[[3.0,2.0,null]]\n"),
        (&["call", "count_substring", "string", "\"aaaa\"", "string", "\"aa\""], "int64\n2\n"),
    ];
    for (args, want) in ok {
        let (code, out, err) = dynd(args);
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
        assert_eq!(out, *want, "{args:?}");
    }
    #[rustfmt::skip]
    let cases: &[(&[&str], &str)] = &[
        (&["call", "frobnicate", "int32", "1"], "error[invalid_argument]: no callable named 'frobnicate'"),
        (&["call", "add", "3 * int32", "[1,2,3]", "2 * int32", "[1,2]"], "error[broadcast]:"),
        (&["call", "add", "int32"], "error[invalid_argument]: call takes DATASHAPE JSON pairs"),
        (&["call", "add", "--axes", "1", "int32", "1"], "error[invalid_argument]: --axes and --keepdims apply to reductions"),
        (&["call", "sum", "--axes", "x", "int32", "1"], "error[invalid_argument]: --axes takes comma-separated integers"),
        (&["call", "sum", "--axes", "-2", "3 * int32", "[1,2,3]"], "error[index]: sum: axis -2 is out of range for 3 * int32, which has 1 dimension"),
        (&["call", "argmin", "0 * int32", "[]"], "error[invalid_argument]: argmin of an empty extent"),
        (&["call", "divide", "int32", "7", "int32", "0"], "error[invalid_argument]: int32 division by zero"),
    ];
    assert_errors(&[], cases);
}

#[test]
fn threads_choose_the_executor_and_never_change_a_result() {
    // 300000 elements: large enough that two and three threads split the
    // calls; the JSON comes from a file.
    let n = 300_000;
    let values: Vec<String> = (0..n)
        .map(|i: u64| format!("{}", (i * 7919) % 1013))
        .collect();
    let path = std::env::temp_dir().join(format!("dynd-cli-threads-{}.json", std::process::id()));
    std::fs::write(&path, format!("[{}]", values.join(","))).unwrap();
    let at = format!("@{}", path.display());
    let tp = format!("{n} * int64");
    let run = |threads: &str, func: &str| {
        let (code, out, err) = dynd(&["call", func, "--threads", threads, &tp, &at]);
        assert_eq!(code, 0, "{func} on {threads} threads: {err}");
        out
    };
    for func in ["sum", "max", "argmax", "cumsum", "sort"] {
        let one = run("1", func);
        for threads in ["2", "3", "0"] {
            assert!(
                run(threads, func) == one,
                "{func}: {threads} threads differ from 1"
            );
        }
    }
    // `--threads=N` anywhere on the line, the last one counting.
    let (code, out, _) = dynd(&["--threads=3", "call", "sum", "--threads=2", &tp, &at]);
    assert_eq!((code, out), (0, run("1", "sum")));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn device_chooses_where_call_computes() {
    // On the cpu: the plain result, with the option before or after FUNC.
    for args in [
        &[
            "call",
            "--device",
            "cpu",
            "add",
            "2 * int32",
            "[1,2]",
            "int32",
            "3",
        ][..],
        &[
            "call",
            "add",
            "--device=cpu",
            "2 * int32",
            "[1,2]",
            "int32",
            "3",
        ][..],
    ] {
        let (code, out, err) = dynd(args);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out, "2 * int32\n[4,5]\n");
    }
    let (code, _, err) = dynd(&["call", "add", "--device", "gpu", "int32", "1", "int32", "2"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("error[invalid_argument]: --device: unknown device \"gpu\""),
        "{err}"
    );
    // cuda: computed there when this machine has a device; otherwise the
    // external error saying why.
    let (code, out, err) = dynd(&[
        "call",
        "--device",
        "cuda",
        "multiply",
        "3 * float64",
        "[1,2,3]",
        "float64",
        "2",
    ]);
    if dynd_cuda::is_available() {
        assert_eq!(code, 0, "{err}");
        assert_eq!(out, "3 * float64\n[2.0,4.0,6.0]\n");
    } else {
        assert_eq!(code, 1);
        assert!(err.starts_with("error[external]: "), "{err}");
    }
}
