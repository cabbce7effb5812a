//! `dynd call` of `where`, `filter` and `take` (DESIGN §8): exact output,
//! and the error lines.

use crate::common;
use common::{assert_prints, call};

#[test]
fn selection_callables_print_their_results() {
    // (arguments after `call`, the whole of stdout)
    #[rustfmt::skip]
    let ok: &[(&[&str], &str)] = &[
        (&["where", "3 * bool", "[true,false,true]", "3 * int32", "[1,2,3]", "float64", "0.5"], "3 * float64\n[1.0,0.5,3.0]\n"),
        (&["where", "2 * var * ?bool", "[[true,null],[false]]", "int8", "1", "int8", "2"], "2 * var * ?int8\n[[1,null],[2]]\n"),
        (&["filter", "2 * var * float64", "[[1,2,3],[4]]", "2 * var * bool", "[[true,false,true],[false]]"], "2 * var * float64\n[[1.0,3.0],[]]\n"),
        (&["filter", "3 * string", r#"["a","b","c"]"#, "3 * ?bool", "[true,null,true]"], "var * string\n[\"a\",\"c\"]\n"),
        (&["take", "4 * int32", "[10,11,12,13]", "3 * int64", "[3,-4,1]"], "3 * int32\n[13,10,11]\n"),
        (&["take", "2 * var * int32", "[[1,2,3],[4]]", "2 * var * ?int64", "[[2,null],[0]]"], "2 * var * ?int32\n[[3,null],[4]]\n"),
    ];
    assert_prints(&["call"], ok);
}

#[test]
fn selection_errors_are_typed_lines() {
    #[rustfmt::skip]
    let bad: &[(&[&str], &str)] = &[
        (&["take", "4 * var * int32", "[[],[],[],[1,2,3,4,5]]", "4 * var * int64", "[[],[],[],[7]]"],
            "error[index]: take: index 7 is out of range for row 3 of length 5\n"),
        (&["filter", "2 * var * int32", "[[1,2],[3]]", "2 * var * bool", "[[true,true],[]]"],
            "error[broadcast]: filter: row 1 of the mask has length 0 but row 1 of x has length 1\n"),
    ];
    for (args, want) in bad {
        let (code, out, err) = call(args);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (1, "", *want),
            "{args:?}"
        );
    }
}
