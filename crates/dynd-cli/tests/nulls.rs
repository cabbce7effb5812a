//! `dynd call` of `is_null`, `fill_null` and `drop_null` (DESIGN §8):
//! exact output, and the error lines.

use crate::common;
use common::{assert_error_lines, assert_prints};

#[test]
fn null_callables_print_their_results() {
    // (arguments after `call`, the whole of stdout)
    #[rustfmt::skip]
    let ok: &[(&[&str], &str)] = &[
        (&["is_null", "3 * ?int32", "[1,null,3]"], "3 * bool\n[false,true,false]\n"),
        (&["is_null", "3 * int32", "[1,2,3]"], "3 * bool\n[false,false,false]\n"),
        (&["is_null", "2 * ?{a: int32, b: string}", r#"[{"a":1,"b":"x"},null]"#], "2 * bool\n[false,true]\n"),
        (&["is_null", "3 * var * ?string", r#"[["a",null],[],[null]]"#], "3 * var * bool\n[[false,true],[],[true]]\n"),
        (&["is_null", "?float64", "null"], "bool\ntrue\n"),
        (&["fill_null", "4 * ?float64", "[1.5,null,3,null]", "int32", "0"], "4 * float64\n[1.5,0.0,3.0,0.0]\n"),
        (&["fill_null", "2 * var * ?string", r#"[["a",null],[null]]"#, "string", r#""z""#], "2 * var * string\n[[\"a\",\"z\"],[\"z\"]]\n"),
        (&["fill_null", "2 * 3 * ?int32", "[[1,null,3],[null,5,null]]", "2 * 1 * int32", "[[10],[20]]"], "2 * 3 * int32\n[[1,10,3],[20,5,20]]\n"),
        (&["fill_null", "2 * ?{a: int32}", r#"[{"a":1},null]"#, "{a: int64}", r#"{"a":7}"#], "2 * {a: int32}\n[{\"a\":1},{\"a\":7}]\n"),
        (&["fill_null", "3 * ?int8", "[1,2,3]", "int64", "300"], "3 * int8\n[1,2,3]\n"),
        (&["drop_null", "4 * ?float64", "[1.5,null,3,null]"], "var * float64\n[1.5,3.0]\n"),
        (&["drop_null", "2 * 3 * ?int32", "[[1,null,3],[null,null,6]]"], "2 * var * int32\n[[1,3],[6]]\n"),
        (&["drop_null", "2 * var * ?string", r#"[["a",null,"b"],[null]]"#], "2 * var * string\n[[\"a\",\"b\"],[]]\n"),
        (&["drop_null", "3 * ?{a: int32}", r#"[{"a":1},null,{"a":3}]"#], "var * {a: int32}\n[{\"a\":1},{\"a\":3}]\n"),
        (&["drop_null", "0 * ?int32", "[]"], "var * int32\n[]\n"),
    ];
    assert_prints(&["call"], ok);
}

#[test]
fn null_callable_errors_are_one_line_with_their_kind() {
    #[rustfmt::skip]
    let cases: &[(&[&str], &str)] = &[
        (&["is_null", "3 * int32", "[1,2,3]", "int32", "1"], "error[invalid_argument]: is_null(x) takes 1 argument, not 2\n"),
        (&["fill_null", "3 * ?int32", "[1,null,3]"], "error[invalid_argument]: fill_null(x, v) takes 2 arguments, not 1\n"),
        (&["fill_null", "3 * ?int8", "[1,null,3]", "int64", "300"], "error[overflow]: fill_null: the fill value: "),
        (&["fill_null", "3 * ?int8", "[1,null,3]", "{a: int32}", r#"{"a":1}"#], "error[type]: fill_null: the fill value ({a: int32}) does not cast to int8"),
        (&["fill_null", "3 * ?int32", "[1,null,3]", "2 * int32", "[1,2]"], "error[broadcast]:"),
        (&["drop_null", "int32", "1"], "error[type]: drop_null drops missing elements along a dim, and int32 has none\n"),
    ];
    assert_error_lines(&["call"], cases);
}
