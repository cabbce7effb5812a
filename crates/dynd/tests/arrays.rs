//! Arrays: construction, views without copies, copies, repr, index errors.

use crate::common;
use common::{a as json, assert_error, pair, show};

use dynd::{Array, ErrorKind, Index, Type};

#[test]
fn arrays_from_rust_values() {
    let a = Array::from(5i32);
    assert_eq!(a.tp().to_string(), "int32");
    assert_eq!(a.as_scalar::<i32>().unwrap(), 5);
    assert_eq!(a.as_scalar::<i64>().unwrap_err().kind(), ErrorKind::Type);
    assert_eq!(Array::from(true).to_json(), "true");
    assert_eq!(Array::from(1.5f64).to_json(), "1.5");
    assert_eq!(Array::from(u128::MAX).to_json(), u128::MAX.to_string());
    assert_eq!(Array::from(half::f16::from_f32(0.5)).to_json(), "0.5");
    assert_eq!(
        Array::from(num_complex::Complex::new(1.0f64, -2.0)).to_json(),
        "[1.0,-2.0]"
    );

    let v = Array::from(vec![1i64, 2, 3]);
    assert_eq!(show(&v), pair("3 * int64", "[1,2,3]"));

    let r = Array::from(vec![vec![1i32, 2], vec![3, 4]]);
    assert_eq!(r.tp().to_string(), "2 * 2 * int32");
    let ragged = Array::from(vec![vec![1i32, 2], vec![3]]);
    assert_eq!(show(&ragged), pair("2 * var * int32", "[[1,2],[3]]"));

    let s = Array::from("héllo");
    assert_eq!(s.as_str().unwrap(), "héllo");
    assert_eq!(s.tp().to_string(), "string");
    let ss = Array::from(vec!["a", "", "xyz"]);
    assert_eq!(ss.to_json(), r#"["a","","xyz"]"#);
    assert_eq!(
        Array::from(3i8).as_str().unwrap_err().kind(),
        ErrorKind::Type
    );
}

#[test]
fn empty_arrays_are_zero_filled_defaults() {
    let cases = [
        ("3 * int32", "[0,0,0]"),
        ("2 * var * float64", "[[],[]]"),
        ("{x: int8, s: string, b: bytes}", r#"{"x":0,"s":"","b":""}"#),
        ("(bool, char, fixed_string[3])", r#"[false,"\u0000",""]"#),
        ("pointer[int32]", "null"),
        ("2 * ?int32", "[0,0]"),
        ("?string", "null"),
        ("void", "null"),
    ];
    for (tp, want) in cases {
        assert_eq!(Array::empty(tp).unwrap().to_json(), want, "{tp}");
    }
    let e = Array::empty("N * int32").unwrap_err();
    assert_error(&e, ErrorKind::Type, "symbolic");
    assert_eq!(
        Array::empty("3 * int33").unwrap_err().kind(),
        ErrorKind::Parse
    );
}

#[test]
fn repr_is_readable() {
    let a = json("2 * var * int32", "[[1, 2], [3]]");
    assert_eq!(
        a.to_string(),
        r#"array([[1, 2], [3]], type="2 * var * int32")"#
    );
    let s = json("{x: int32, name: string}", r#"{"x": 1, "name": "a\"b"}"#);
    assert_eq!(
        format!("{s:?}"),
        r#"array({"x": 1, "name": "a\"b"}, type="{x: int32, name: string}")"#
    );
    let c = json("complex[float32]", "[1, 2]");
    assert_eq!(
        c.to_string(),
        r#"array([1.0, 2.0], type="complex[float32]")"#
    );
}

#[test]
fn integer_indexing_and_negative_indices() {
    let a = json("3 * 4 * int32", "[[0,1,2,3],[4,5,6,7],[8,9,10,11]]");
    assert_eq!(a.index(&[1.into()]).unwrap().to_json(), "[4,5,6,7]");
    assert_eq!(a.index(&[(-1).into(), (-4).into()]).unwrap().to_json(), "8");
    assert_eq!(
        a.index(&[2.into(), 3.into()])
            .unwrap()
            .as_scalar::<i32>()
            .unwrap(),
        11
    );
    assert_eq!(a.index(&[]).unwrap().to_json(), a.to_json());
}

#[test]
fn slices_with_steps_negative_steps_and_clamping() {
    let a = json("6 * int32", "[0,1,2,3,4,5]");
    let cases: &[(Index, &str, &str)] = &[
        (Index::slice(Some(1), Some(4), 1), "[1,2,3]", "3 * int32"),
        (Index::slice(None, None, 2), "[0,2,4]", "3 * int32"),
        (Index::slice(None, None, -1), "[5,4,3,2,1,0]", "6 * int32"),
        (Index::slice(Some(-2), None, 1), "[4,5]", "2 * int32"),
        (Index::slice(Some(4), Some(0), -2), "[4,2]", "2 * int32"),
        (Index::slice(Some(10), None, 1), "[]", "0 * int32"),
        (Index::slice(Some(-100), Some(2), 1), "[0,1]", "2 * int32"),
        ((2..5).into(), "[2,3,4]", "3 * int32"),
        ((..2).into(), "[0,1]", "2 * int32"),
        ((3..).into(), "[3,4,5]", "3 * int32"),
    ];
    for (ix, want, tp) in cases {
        let v = a.index(&[*ix]).unwrap();
        assert_eq!(v.to_json(), *want, "{ix:?}");
        assert_eq!(v.tp().to_string(), *tp, "{ix:?}");
    }
    // A slice of a slice.
    let rev = a.index(&[Index::slice(None, None, -1)]).unwrap();
    let v = rev.index(&[Index::slice(Some(1), None, 2)]).unwrap();
    assert_eq!(v.to_json(), "[4,2,0]");
    // 2-d: reverse rows, every other column.
    let m = json("3 * 4 * int32", "[[0,1,2,3],[4,5,6,7],[8,9,10,11]]");
    let v = m
        .index(&[Index::slice(None, None, -1), Index::slice(None, None, 2)])
        .unwrap();
    assert_eq!(v.to_json(), "[[8,10],[4,6],[0,2]]");
    assert_eq!(v.shape(), vec![Some(3), Some(2)]);
}

#[test]
fn index_errors_are_typed_and_name_the_problem() {
    let a = json("3 * 4 * int32", "[[0,1,2,3],[4,5,6,7],[8,9,10,11]]");
    let e = a.index(&[3.into()]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index);
    assert!(
        e.message()
            .contains("index 3 is out of range for axis 0 with size 3"),
        "{e}"
    );
    let e = a.index(&[0.into(), (-5).into()]).unwrap_err();
    assert!(
        e.message()
            .contains("index -5 is out of range for axis 1 with size 4"),
        "{e}"
    );
    let e = a.index(&[0.into(), 0.into(), 0.into()]).unwrap_err();
    assert_error(&e, ErrorKind::Index, "too many indices: 3 given");
    let e = a.index(&[Index::slice(None, None, 0)]).unwrap_err();
    assert!(e.message().contains("step cannot be zero"), "{e}");
    let r = json("2 * var * int32", "[[1,2],[3]]");
    // Per-row indexing under a kept dim: past the end of a row is an
    // index error naming the row and its length.
    let e = r.index(&[Index::ALL, 1.into()]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index);
    assert!(
        e.message()
            .contains("index 1 is out of range for axis 1 in row [1], which has length 1"),
        "{e}"
    );
    let e = r.index(&[1.into(), 1.into()]).unwrap_err();
    assert!(
        e.message()
            .contains("index 1 is out of range for axis 1 with size 1"),
        "{e}"
    );
}

#[test]
fn var_dims_index_when_their_element_is_known() {
    let r = json("3 * var * int32", "[[1,2,3],[4],[5,6]]");
    assert_eq!(r.index(&[0.into(), (-1).into()]).unwrap().to_json(), "3");
    let row = r.index(&[2.into()]).unwrap();
    assert_eq!(row.tp().to_string(), "var * int32");
    assert_eq!(row.shape(), vec![Some(2)]);
    // Slicing keeps a dim's kind (DESIGN §6): a sliced var dim is var.
    let v = r.index(&[0.into(), Index::slice(None, None, -1)]).unwrap();
    assert_eq!(show(&v), pair("var * int32", "[3,2,1]"));
    // ':' over a var dim under a sliced dim keeps it.
    let v = r
        .index(&[Index::slice(Some(1), None, 1), Index::ALL])
        .unwrap();
    assert_eq!(show(&v), pair("2 * var * int32", "[[4],[5,6]]"));
    assert_eq!(r.shape(), vec![Some(3), None]);
}

#[test]
fn views_share_data_and_never_copy() {
    let a = json("2 * 3 * int32", "[[1,2,3],[4,5,6]]");
    let v = a.index(&[1.into(), Index::slice(None, None, -1)]).unwrap();
    assert!(v.shares_data_with(&a));
    // The view points into the original's buffer.
    let base = a.data_ptr() as usize;
    assert_eq!(v.data_ptr() as usize, base + 5 * 4);
    // Write through the view, read through the original.
    v.assign_json("[60, 50, 40]").unwrap();
    assert_eq!(a.to_json(), "[[1,2,3],[40,50,60]]");
    let e = a.index(&[0.into(), 0.into()]).unwrap();
    e.set_scalar(-7i32).unwrap();
    assert_eq!(a.to_json(), "[[-7,2,3],[40,50,60]]");

    // Fields and permutes are views too.
    let s = json(
        "2 * {x: int32, y: float64}",
        r#"[{"x":1,"y":0.5},{"x":2,"y":1.5}]"#,
    );
    let y = s.field("y").unwrap();
    assert_eq!(y.tp().to_string(), "2 * float64");
    assert!(y.shares_data_with(&s));
    y.assign_json("[7, 8]").unwrap();
    assert_eq!(s.to_json(), r#"[{"x":1,"y":7.0},{"x":2,"y":8.0}]"#);

    let t = a.permute(&[1, 0]).unwrap();
    assert_eq!(show(&t), pair("3 * 2 * int32", "[[-7,40],[2,50],[3,60]]"));
    t.index(&[2.into(), 0.into()])
        .unwrap()
        .set_scalar(99i32)
        .unwrap();
    assert_eq!(a.to_json(), "[[-7,2,99],[40,50,60]]");
}

#[test]
fn fields_through_var_dims_use_the_var_offset() {
    let a = json(
        "2 * var * {x: int32, name: string}",
        r#"[[{"x":1,"name":"a"},{"x":2,"name":"bb"}],[{"x":3,"name":"ccc"}]]"#,
    );
    let names = a.field("name").unwrap();
    assert_eq!(names.tp().to_string(), "2 * var * string");
    assert_eq!(names.to_json(), r#"[["a","bb"],["ccc"]]"#);
    let xs = a.field("x").unwrap();
    assert_eq!(xs.to_json(), "[[1,2],[3]]");
    xs.index(&[1.into(), 0.into()])
        .unwrap()
        .set_scalar(30i32)
        .unwrap();
    assert_eq!(
        a.index(&[1.into(), 0.into()])
            .unwrap()
            .field("x")
            .unwrap()
            .to_json(),
        "30"
    );
    let e = a.field("z").unwrap_err();
    assert_error(&e, ErrorKind::Index, "no field named 'z'");
    let e = json("3 * int32", "[1,2,3]").field("x").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
}

#[test]
fn permute_errors() {
    let a = Array::empty("2 * 3 * 4 * int8").unwrap();
    assert_eq!(
        a.permute(&[2, 0, 1]).unwrap().tp().to_string(),
        "4 * 2 * 3 * int8"
    );
    assert_eq!(a.permute(&[0, 0]).unwrap_err().kind(), ErrorKind::Index);
    assert_eq!(
        a.permute(&[0, 1, 2, 3]).unwrap_err().kind(),
        ErrorKind::Index
    );
    let v = Array::empty("2 * var * int8").unwrap();
    let e = v.permute(&[1, 0]).unwrap_err();
    assert_error(&e, ErrorKind::Type, "axis 1");
}

#[test]
fn copy_makes_a_fresh_default_layout() {
    let a = json(
        "3 * {v: var * int16, s: ?string, p: pointer[int32]}",
        r#"[{"v":[1,2],"s":"x","p":5},{"v":[],"s":null,"p":null},{"v":[3],"s":"","p":7}]"#,
    );
    let rev = a.index(&[Index::slice(None, None, -1)]).unwrap();
    let c = rev.copy().unwrap();
    assert!(!c.shares_data_with(&a));
    assert_eq!(c.to_json(), rev.to_json());
    assert_eq!(
        c.to_json(),
        r#"[{"v":[3],"s":"","p":7},{"v":[],"s":null,"p":null},{"v":[1,2],"s":"x","p":5}]"#
    );
    // Writing the copy leaves the original alone.
    c.index(&[0.into()])
        .unwrap()
        .field("v")
        .unwrap()
        .assign_json("[9]")
        .unwrap();
    assert_eq!(
        a.index(&[2.into()]).unwrap().field("v").unwrap().to_json(),
        "[3]"
    );
    assert_eq!(
        c.index(&[0.into()]).unwrap().field("v").unwrap().to_json(),
        "[9]"
    );
}

#[test]
fn read_only_and_immutable_arrays_refuse_writes() {
    let a = json("3 * int32", "[1,2,3]");
    let r = a.read_only();
    assert!(!r.is_writable());
    assert_eq!(
        r.assign_json("[4,5,6]").unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        r.index(&[0.into()])
            .unwrap()
            .set_scalar(1i32)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
    assert!(a.clone().into_immutable().is_err(), "shared: cannot freeze");
    drop(r);
    let frozen = a.into_immutable().unwrap();
    assert_eq!(
        frozen.flags(),
        dynd::array::flags::READ | dynd::array::flags::IMMUTABLE
    );
    assert!(frozen.assign_json("[0,0,0]").is_err());
    assert_eq!(frozen.to_json(), "[1,2,3]");
}

#[test]
fn types_can_be_given_as_values() {
    let tp = Type::fixed_dim(2, Type::string());
    let a = Array::from_json(&tp, r#"["a","b"]"#).unwrap();
    assert_eq!(a.tp(), &tp);
    let b = Array::from_json(tp, r#"["c","d"]"#).unwrap();
    assert_eq!(b.to_json(), r#"["c","d"]"#);
}

#[test]
fn copies_of_every_layout_hold_the_same_values_in_their_own_memory() {
    let base = Array::from_json("2 * 3 * int64", "[[1,2,3],[4,5,6]]").unwrap();
    let views = [
        base.clone(),
        base.permute(&[1, 0]).unwrap(),
        base.index(&[Index::ALL, Index::slice(None, None, 2)])
            .unwrap(),
        base.index(&[Index::slice(None, None, -1)]).unwrap(),
        Array::from_json(
            "2 * {x: int32, y: ?float64}",
            r#"[{"x":1,"y":null},{"x":2,"y":2.5}]"#,
        )
        .unwrap(),
        Array::from_json("2 * var * string", r#"[["a","bc"],[]]"#).unwrap(),
    ];
    for v in &views {
        let c = v.copy().unwrap();
        assert_eq!(c.tp(), v.tp());
        assert_eq!(c.to_json(), v.to_json());
        assert!(!c.shares_data_with(v), "{}", v.tp());
        assert!(c.is_writable());
    }
    assert_eq!(views[1].copy().unwrap().to_json(), "[[1,4],[2,5],[3,6]]");
    // A large copy (mapped memory, maybe reused from a freed array) holds
    // exactly the source's values.
    let big = Array::from((0..1_000_000).map(|i| i as f64).collect::<Vec<f64>>());
    for _ in 0..3 {
        let c = big.copy().unwrap();
        assert_eq!(
            c.index(&[Index::At(999_999)])
                .unwrap()
                .as_scalar::<f64>()
                .unwrap(),
            999_999.0
        );
        drop(c);
    }
}
