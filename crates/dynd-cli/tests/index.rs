//! `dynd index` (DESIGN §8) and JSON arguments from stdin and files.

use crate::common;
use common::{assert_errors, dynd, dynd_stdin};

#[test]
fn index_prints_the_datashape_then_the_json() {
    let m = "[[0,1,2,3],[4,5,6,7],[8,9,10,11]]";
    let r = "[[1,2,3],[4],[5,6]]";
    let s = r#"[{"x":[1,2,3],"name":"a"},{"x":[4,5,6],"name":"b"}]"#;
    let o = "[[1,2],null,[3]]";
    let so = r#"[{"x":[1,2,3],"name":"a"},null]"#;
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str, &str)] = &[
        ("3 * 4 * int32", m, "1", "4 * int32\n[4,5,6,7]\n"),
        ("3 * 4 * int32", m, "-1,-1", "int32\n11\n"),
        ("3 * 4 * int32", m, "::-1, 1", "3 * int32\n[9,5,1]\n"),
        ("3 * 4 * int32", m, ":,1:3", "3 * 2 * int32\n[[1,2],[5,6],[9,10]]\n"),
        ("3 * 4 * int32", m, "1:,::2", "2 * 2 * int32\n[[4,6],[8,10]]\n"),
        ("3 * 4 * int32", m, "", "3 * 4 * int32\n[[0,1,2,3],[4,5,6,7],[8,9,10,11]]\n"),
        ("3 * var * int32", r, ":,0", "3 * int32\n[1,4,5]\n"),
        ("3 * var * int32", r, ":,-1", "3 * int32\n[3,4,6]\n"),
        ("3 * var * int32", r, ":,1:3", "3 * var * int32\n[[2,3],[],[6]]\n"),
        ("3 * var * int32", r, "0,1:", "var * int32\n[2,3]\n"),
        ("2 * {x: 3 * int32, name: string}", s, "name", "2 * string\n[\"a\",\"b\"]\n"),
        ("2 * {x: 3 * int32, name: string}", s, "1,x,0", "int32\n4\n"),
        ("2 * {x: 3 * int32, name: string}", s, ":,x,::-1", "2 * 3 * int32\n[[3,2,1],[6,5,4]]\n"),
        ("2 * {x: 3 * int32, name: string}", s, "\"x\",:,2", "2 * int32\n[3,6]\n"),
        // Through option types: a copy, missing where the row or record is.
        ("3 * ?var * int32", o, ":,0", "3 * ?int32\n[1,null,3]\n"),
        ("3 * ?var * int32", o, ":,1:", "3 * ?var * int32\n[[2],null,[]]\n"),
        ("2 * ?{x: 3 * int32, name: string}", so, "name", "2 * ?string\n[\"a\",null]\n"),
        ("2 * ?{x: 3 * int32, name: string}", so, ":,x,-1", "2 * ?int32\n[3,null]\n"),
    ];
    for (tp, json, index, want) in cases {
        let (code, out, err) = dynd(&["index", tp, json, index]);
        assert_eq!((code, err.as_str()), (0, ""), "{tp} {index}");
        assert_eq!(out, *want, "{tp} {index}");
    }
}

#[test]
fn index_errors_have_their_kind_and_exit_1() {
    let r = "[[1,2,3],[4],[5,6]]";
    #[rustfmt::skip]
    let cases: &[(&[&str], &str)] = &[
        (&["index", "3 * var * int32", r, ":,1"],
         "error[index]: index 1 is out of range for axis 1 in row [1], which has length 1"),
        (&["index", "3 * ?var * int32", "[[1,2],null,[3]]", ":,1"],
         "error[index]: index 1 is out of range for axis 1 in row [2], which has length 1"),
        (&["index", "3 * int32", "[1,2,3]", "3"], "error[index]: index 3 is out of range for axis 0 with size 3"),
        (&["index", "3 * int32", "[1,2,3]", "0,0"], "error[index]: too many indices"),
        (&["index", "3 * int32", "[1,2,3]", "::0"], "error[index]: slice step cannot be zero"),
        (&["index", "3 * int32", "[1,2,3]", "1:2:3:4"], "error[invalid_argument]: INDEX '1:2:3:4': item '1:2:3:4' has more than two ':'"),
        (&["index", "3 * int32", "[1,2,3]", "1:x"], "error[invalid_argument]: INDEX '1:x': item '1:x' has 'x' where an integer belongs"),
        (&["index", "3 * int32", "[1,2,3]", "0,,1"], "error[invalid_argument]: INDEX '0,,1': item '' is empty"),
        (&["index", "3 * int32", "[1,2,3]", "1.5"], "error[invalid_argument]: INDEX '1.5': item '1.5' is neither an integer nor a field name"),
        (&["index", "3 * int32", "[1,2,3]", "x"], "error[type]: cannot take field 'x'"),
        (&["index", "{a: int32}", "{\"a\": 1}", "b"], "error[index]: no field named 'b'"),
        (&["index", "3 * int32", "[1,2]", "0"], "error[parse]:"),
        (&["index", "3 * int32", "[1,2,3]"], "error[invalid_argument]: missing INDEX"),
        (&["index", "3 * int32", "[1,2,3]", "0", "1"], "error[invalid_argument]: too many arguments"),
    ];
    assert_errors(&[], cases);
}

#[test]
fn json_arguments_from_stdin_and_files() {
    let (code, out, err) = dynd_stdin(&["index", "3 * int32", "-", "::-1"], b"[1, 2, 3]\n");
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out, "3 * int32\n[3,2,1]\n");
    let (_, out, _) = dynd_stdin(&["parse", "2 * var * int8", "-"], b"[[1], []]");
    assert_eq!(out, "[[1],[]]\n");

    let dir = std::env::temp_dir().join(format!("dynd-cli-index-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x.json");
    std::fs::write(&path, "[1.5, 2.5]").unwrap();
    let at = format!("@{}", path.display());
    let (code, out, _) = dynd(&["parse", "2 * float64", &at]);
    assert_eq!((code, out.as_str()), (0, "[1.5,2.5]\n"));
    let (code, out, _) = dynd(&["assign", "2 * int32", "2 * float64", &at]);
    assert_eq!(
        (code, out.as_str()),
        (1, ""),
        "1.5 into int32 is fractional"
    );
    let (code, out, _) = dynd(&["call", "add", "2 * float64", &at, "float64", "1"]);
    assert_eq!((code, out.as_str()), (0, "2 * float64\n[2.5,3.5]\n"));
    std::fs::remove_dir_all(&dir).unwrap();

    let (code, _, err) = dynd(&["parse", "int32", "@/nonexistent/dynd.json"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("error[invalid_argument]: cannot read JSON from '/nonexistent/dynd.json'"),
        "{err}"
    );
}

#[test]
fn usage_lists_index() {
    let (code, out, _) = dynd(&["help"]);
    assert_eq!(code, 0);
    assert!(out.contains("dynd index DATASHAPE JSON INDEX"), "{out}");
    assert!(out.contains("'-' (read stdin) or '@PATH'"), "{out}");
}
