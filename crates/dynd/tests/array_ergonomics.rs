//! len, iteration, equality, Rust values out, reshape and the summarising
//! repr.

use crate::common;
use common::{a as json, assert_error, pair, show};

use dynd::{Array, ErrorKind, Index};

#[test]
fn len_and_is_empty_measure_the_outermost_dim() {
    assert_eq!(
        json("3 * 2 * int8", "[[1,2],[3,4],[5,6]]").len().unwrap(),
        3
    );
    assert_eq!(json("var * int8", "[1,2]").len().unwrap(), 2);
    assert!(json("0 * int8", "[]").is_empty().unwrap());
    assert!(!json("var * int8", "[1]").is_empty().unwrap());
    let e = json("int32", "1").len().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert!(
        e.message().contains("len() of a 0-d array of type int32"),
        "{e}"
    );
    assert!(json("{x: int32}", r#"{"x": 1}"#).is_empty().is_err());
}

#[test]
fn iteration_yields_views_of_each_element() {
    let a = json("3 * 2 * int32", "[[1,2],[3,4],[5,6]]");
    let rows: Vec<String> = a.iter().map(|r| r.to_json()).collect();
    assert_eq!(rows, ["[1,2]", "[3,4]", "[5,6]"]);
    assert_eq!(a.iter().len(), 3);
    let back: Vec<String> = a.iter().rev().map(|r| r.to_json()).collect();
    assert_eq!(back, ["[5,6]", "[3,4]", "[1,2]"]);
    // Views: a write through a row is seen through the array.
    for row in &a {
        row.index(&[0.into()]).unwrap().set_scalar(0i32).unwrap();
    }
    assert_eq!(a.to_json(), "[[0,2],[0,4],[0,6]]");
    // Var dims, outermost and inner.
    let r = json("2 * var * int32", "[[1,2,3],[]]");
    let rows: Vec<(String, String)> = r
        .iter()
        .map(|x| (x.tp().to_string(), x.to_json()))
        .collect();
    assert_eq!(
        rows,
        [
            ("var * int32".into(), "[1,2,3]".into()),
            ("var * int32".into(), "[]".into())
        ]
    );
    let v = json("var * string", r#"["a","bc"]"#);
    let s: Vec<String> = v.iter().map(|x| x.as_str().unwrap().to_string()).collect();
    assert_eq!(s, ["a", "bc"]);
    // A 0-d array yields nothing.
    assert_eq!(json("int32", "1").iter().count(), 0);
}

#[test]
fn equality_compares_types_and_values() {
    let cases: &[(&str, &str, &str, bool)] = &[
        ("3 * int32", "[1,2,3]", "[1,2,3]", true),
        ("3 * int32", "[1,2,3]", "[1,2,4]", false),
        ("2 * float64", "[0.0, 1]", "[-0.0, 1]", true),
        ("2 * float64", "[NaN, 1]", "[NaN, 1]", false),
        ("2 * ?float64", "[null, 1]", "[null, 1]", true),
        ("2 * ?float64", "[null, 1]", "[1, 1]", false),
        ("2 * ?float64", "[NaN, 1]", "[NaN, 1]", false),
        ("2 * string", r#"["a","b"]"#, r#"["a","b"]"#, true),
        ("2 * string", r#"["a","b"]"#, r#"["a","bb"]"#, false),
        ("2 * var * int32", "[[1],[2,3]]", "[[1],[2,3]]", true),
        ("2 * var * int32", "[[1],[2,3]]", "[[1,2],[3]]", false),
        (
            "2 * ?{x: int32, s: string}",
            r#"[null, {"x":1,"s":"a"}]"#,
            r#"[null, {"x":1,"s":"a"}]"#,
            true,
        ),
        (
            "2 * ?{x: int32, s: string}",
            r#"[null, {"x":1,"s":"a"}]"#,
            r#"[{"x":1,"s":"a"}, null]"#,
            false,
        ),
        ("complex[float64]", "[1, 2]", "[1, 2]", true),
        ("bool", "true", "false", false),
        ("fixed_string[4]", r#""ab""#, r#""ab""#, true),
        ("bytes", r#""00ff""#, r#""00fe""#, false),
    ];
    for (tp, a, b, want) in cases {
        assert_eq!(json(tp, a) == json(tp, b), *want, "{tp}: {a} vs {b}");
    }
    // Different types are never equal, even with equal JSON.
    assert_ne!(json("2 * int32", "[1,2]"), json("2 * int64", "[1,2]"));
    assert_ne!(json("2 * int32", "[1,2]"), json("var * int32", "[1,2]"));
    // Layouts do not matter: a reversed view equals a copy of its values.
    let a = json("2 * 3 * float32", "[[1,2,3],[4,5,6]]");
    let rev = a.index(&[Index::slice(None, None, -1)]).unwrap();
    assert_eq!(rev, json("2 * 3 * float32", "[[4,5,6],[1,2,3]]"));
    assert_eq!(rev, rev.copy().unwrap());
    let t = a.permute(&[1, 0]).unwrap();
    assert_eq!(t, json("3 * 2 * float32", "[[1,4],[2,5],[3,6]]"));
}

#[test]
fn to_vec_and_as_slice() {
    let a = json("2 * 3 * int16", "[[1,2,3],[4,5,6]]");
    assert_eq!(a.to_vec::<i16>().unwrap(), vec![1, 2, 3, 4, 5, 6]);
    let t = a.permute(&[1, 0]).unwrap();
    assert_eq!(t.to_vec::<i16>().unwrap(), vec![1, 4, 2, 5, 3, 6]);
    let step = a
        .index(&[Index::ALL, Index::slice(None, None, -2)])
        .unwrap();
    assert_eq!(step.to_vec::<i16>().unwrap(), vec![3, 1, 6, 4]);
    assert_eq!(json("float32", "2.5").to_vec::<f32>().unwrap(), vec![2.5]);
    assert_eq!(
        json("3 * bool", "[true,false,true]")
            .to_vec::<bool>()
            .unwrap(),
        vec![true, false, true]
    );
    let e = a.to_vec::<f64>().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert!(
        e.message().contains("float64") && e.message().contains("2 * 3 * int16"),
        "{e}"
    );
    assert_eq!(
        json("2 * ?int16", "[1, null]")
            .to_vec::<i16>()
            .unwrap_err()
            .kind(),
        ErrorKind::Type
    );

    // as_slice: immutable, C-contiguous, aligned.
    let e = a.as_slice::<i16>().unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, "immutable");
    drop((t, step));
    let frozen = a.into_immutable().unwrap();
    assert_eq!(frozen.as_slice::<i16>().unwrap(), &[1, 2, 3, 4, 5, 6]);
    let row = frozen.index(&[1.into()]).unwrap();
    assert_eq!(row.as_slice::<i16>().unwrap(), &[4, 5, 6]);
    let col = frozen.index(&[Index::ALL, 0.into()]).unwrap();
    let e = col.as_slice::<i16>().unwrap_err();
    assert!(e.message().contains("C order"), "{e}");
    assert_eq!(
        frozen.as_slice::<u16>().unwrap_err().kind(),
        ErrorKind::Type
    );
}

#[test]
fn reshape_is_a_view_of_contiguous_data_and_a_copy_otherwise() {
    let a = json("2 * 6 * int32", "[[0,1,2,3,4,5],[6,7,8,9,10,11]]");
    let b = a.reshape(&[3, 2, 2]).unwrap();
    assert_eq!(
        show(&b),
        pair(
            "3 * 2 * 2 * int32",
            "[[[0,1],[2,3]],[[4,5],[6,7]],[[8,9],[10,11]]]"
        )
    );
    assert!(b.shares_data_with(&a));
    b.index(&[0.into(), 0.into(), 0.into()])
        .unwrap()
        .set_scalar(-1i32)
        .unwrap();
    assert_eq!(
        a.index(&[0.into(), 0.into()])
            .unwrap()
            .as_scalar::<i32>()
            .unwrap(),
        -1
    );
    assert_eq!(a.reshape(&[-1]).unwrap().tp().to_string(), "12 * int32");
    // A transposed view is copied first.
    let t = a.permute(&[1, 0]).unwrap();
    let c = t.reshape(&[12]).unwrap();
    assert!(!c.shares_data_with(&a));
    assert_eq!(c.to_json(), "[-1,6,1,7,2,8,3,9,4,10,5,11]");
    // Structs as elements, and a 1-element array to 0-d.
    let s = json("2 * {x: int8}", r#"[{"x":1},{"x":2}]"#);
    assert_eq!(
        s.reshape(&[2, 1]).unwrap().to_json(),
        r#"[[{"x":1}],[{"x":2}]]"#
    );
    assert_eq!(
        json("1 * 1 * int8", "[[5]]")
            .reshape(&[])
            .unwrap()
            .to_json(),
        "5"
    );
    for (arr, shape, kind, want) in [
        (
            &a,
            &[5, 2][..],
            ErrorKind::InvalidArgument,
            "cannot reshape 12 elements (shape [2, 6]) to [5, 2], which holds 10",
        ),
        (
            &a,
            &[-1, -1][..],
            ErrorKind::InvalidArgument,
            "only one dim can be -1",
        ),
        (
            &a,
            &[5, -1][..],
            ErrorKind::InvalidArgument,
            "cannot be inferred",
        ),
        (&a, &[-3, 4][..], ErrorKind::InvalidArgument, "dim 0 is -3"),
    ] {
        let e = arr.reshape(shape).unwrap_err();
        assert_eq!(e.kind(), kind, "{shape:?}");
        assert!(e.message().contains(want), "{shape:?}: {e}");
    }
    let e = json("2 * var * int8", "[[1],[2]]")
        .reshape(&[2])
        .unwrap_err();
    assert_error(&e, ErrorKind::Type, "axis 1 is a var dim");
}

#[test]
fn display_summarises_big_arrays_as_numpy_does() {
    let a = Array::from((0..1_000_000i64).collect::<Vec<_>>());
    assert_eq!(
        a.to_string(),
        r#"array([0, 1, 2, ..., 999997, 999998, 999999], type="1000000 * int64")"#
    );
    // At the threshold (1000 elements) nothing is cut.
    let b = Array::from((0..1000i32).collect::<Vec<_>>());
    assert!(!b.to_string().contains("..."));
    assert!(
        Array::from((0..1001i32).collect::<Vec<_>>())
            .to_string()
            .contains("2, ..., 998")
    );
    // Nested dims are cut each on its own.
    let m = Array::from_slice(&(0..2000i32).collect::<Vec<_>>(), &[20, 100]).unwrap();
    assert_eq!(
        m.to_string(),
        "array([[0, 1, 2, ..., 97, 98, 99], [100, 101, 102, ..., 197, 198, 199], \
         [200, 201, 202, ..., 297, 298, 299], ..., [1700, 1701, 1702, ..., 1797, 1798, 1799], \
         [1800, 1801, 1802, ..., 1897, 1898, 1899], [1900, 1901, 1902, ..., 1997, 1998, 1999]], \
         type=\"20 * 100 * int32\")"
    );
    // Ragged: counted by elements (1200 here); short rows print whole.
    let rows: Vec<Vec<i32>> = (0..600).map(|i| vec![i; (i % 5) as usize]).collect();
    let r = Array::from(rows);
    assert_eq!(
        r.display().edge_items(2).to_string(),
        "array([[], [1], ..., [598, 598, 598], [599, 599, 599, 599]], type=\"600 * var * int32\")"
    );
    // Per call settings; JSON never summarises.
    let c = Array::from((0..10i32).collect::<Vec<_>>());
    assert_eq!(
        c.display().threshold(9).edge_items(1).to_string(),
        r#"array([0, ..., 9], type="10 * int32")"#
    );
    assert_eq!(c.display().threshold(10).to_string(), c.to_string());
    assert!(!a.to_json().contains("..."));
    // Small arrays keep the JSON-ish repr.
    assert_eq!(
        json("2 * var * int32", "[[1, 2], [3]]").to_string(),
        r#"array([[1, 2], [3]], type="2 * var * int32")"#
    );
}
