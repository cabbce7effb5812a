//! Indexing var dims row by row (`x[:, i]`, `x[:, a:b]`) and permuting
//! over var dims: checked against plain loops over random ragged data.

use crate::common;
use common::{a as json, assert_error, pair, show};

use dynd::{ErrorKind, Index};
use proptest::prelude::*;

fn rows_json(rows: &[Vec<i32>]) -> String {
    let parts: Vec<String> = rows
        .iter()
        .map(|r| {
            let v: Vec<String> = r.iter().map(i32::to_string).collect();
            format!("[{}]", v.join(","))
        })
        .collect();
    format!("[{}]", parts.join(","))
}

/// NumPy's slice of one row, by a plain loop.
fn slice_row(row: &[i32], start: Option<isize>, stop: Option<isize>, step: isize) -> Vec<i32> {
    let n = row.len() as isize;
    let norm = |v: isize, lo: isize, hi: isize| (if v < 0 { v + n } else { v }).clamp(lo, hi);
    let mut out = Vec::new();
    if step > 0 {
        let mut i = start.map_or(0, |v| norm(v, 0, n));
        let e = stop.map_or(n, |v| norm(v, 0, n));
        while i < e {
            out.push(row[i as usize]);
            i += step;
        }
    } else {
        let mut i = start.map_or(n - 1, |v| norm(v, -1, n - 1));
        let e = stop.map_or(-1, |v| norm(v, -1, n - 1));
        while i > e {
            out.push(row[i as usize]);
            i += step;
        }
    }
    out
}

#[test]
fn integer_under_a_fixed_dim_picks_each_rows_element_as_a_copy() {
    let x = json("3 * var * int32", "[[1,2,3],[4],[5,6]]");
    let first = x.index(&[Index::ALL, 0.into()]).unwrap();
    assert_eq!(show(&first), pair("3 * int32", "[1,4,5]"));
    let last = x.index(&[Index::ALL, (-1).into()]).unwrap();
    assert_eq!(last.to_json(), "[3,4,6]");
    // A copy: writing to it leaves x alone.
    last.assign_json("[0,0,0]").unwrap();
    assert_eq!(x.to_json(), "[[1,2,3],[4],[5,6]]");
    // An outer slice first, then per row.
    let v = x
        .index(&[Index::slice(None, None, -2), (-1).into()])
        .unwrap();
    assert_eq!(v.to_json(), "[6,3]");
}

#[test]
fn past_the_end_names_the_row_and_its_length() {
    let x = json("3 * var * int32", "[[1,2,3],[4],[5,6]]");
    for (i, want) in [
        (
            1,
            "index 1 is out of range for axis 1 in row [1], which has length 1",
        ),
        (
            -2,
            "index -2 is out of range for axis 1 in row [1], which has length 1",
        ),
    ] {
        let e = x.index(&[Index::ALL, Index::At(i)]).unwrap_err();
        assert_error(&e, ErrorKind::Index, want);
    }
    let e = json("2 * 2 * var * int32", "[[[1],[2]],[[3],[]]]")
        .index(&[Index::ALL, Index::ALL, 0.into()])
        .unwrap_err();
    assert!(
        e.message().contains("in row [1, 1], which has length 0"),
        "{e}"
    );
    let e = x
        .index(&[Index::ALL, Index::slice(None, None, 0)])
        .unwrap_err();
    assert_error(&e, ErrorKind::Index, "step cannot be zero (axis 1)");
}

#[test]
fn slices_under_a_fixed_dim_are_views_with_new_rows() {
    let x = json("3 * var * int32", "[[1,2,3],[4],[5,6]]");
    let v = x.index(&[Index::ALL, (1..3).into()]).unwrap();
    assert_eq!(show(&v), pair("3 * var * int32", "[[2,3],[],[6]]"));
    let rev = x
        .index(&[Index::ALL, Index::slice(None, None, -1)])
        .unwrap();
    assert_eq!(rev.to_json(), "[[3,2,1],[4],[6,5]]");
    // A view of the values: a write through it is seen through x.
    rev.index(&[0.into(), 0.into()])
        .unwrap()
        .set_scalar(30i32)
        .unwrap();
    assert_eq!(x.to_json(), "[[1,2,30],[4],[5,6]]");
    // A read-only array gives a read-only view.
    let ro = x.read_only().index(&[Index::ALL, (..1).into()]).unwrap();
    assert!(!ro.is_writable());
    // A slice of a slice.
    let vv = rev
        .index(&[Index::ALL, Index::slice(Some(1), None, 1)])
        .unwrap();
    assert_eq!(vv.to_json(), "[[2,1],[],[5]]");
}

#[test]
fn ragged_indexing_goes_on_into_the_element() {
    let x = json("2 * var * 3 * int32", "[[[1,2,3],[4,5,6]],[[7,8,9]]]");
    // `[:, :, 1]`: the fixed dim inside each row.
    let v = x.index(&[Index::ALL, Index::ALL, 1.into()]).unwrap();
    assert_eq!(
        (v.tp().to_string(), v.to_json()),
        ("2 * var * int32".into(), "[[2,5],[8]]".into())
    );
    // `[:, 0, 1:]`: a per-row integer, then a slice of what it picked.
    let v = x.index(&[Index::ALL, 0.into(), (1..).into()]).unwrap();
    assert_eq!(
        (v.tp().to_string(), v.to_json()),
        ("2 * 2 * int32".into(), "[[2,3],[8,9]]".into())
    );
    // `[:, -1:, 0]`.
    let v = x.index(&[Index::ALL, (-1..).into(), 0.into()]).unwrap();
    assert_eq!(v.to_json(), "[[4],[7]]");
    // Two var dims.
    let y = json("2 * var * var * int32", "[[[1,2],[3]],[[4,5,6]]]");
    let v = y.index(&[Index::ALL, Index::ALL, 0.into()]).unwrap();
    assert_eq!(
        (v.tp().to_string(), v.to_json()),
        ("2 * var * int32".into(), "[[1,3],[4]]".into())
    );
    let v = y.index(&[Index::ALL, (..1).into(), (1..).into()]).unwrap();
    assert_eq!(
        (v.tp().to_string(), v.to_json()),
        ("2 * var * var * int32".into(), "[[[2]],[[5,6]]]".into())
    );
    let v = y.index(&[Index::ALL, (-1).into(), (-1).into()]).unwrap();
    assert_eq!(v.to_json(), "[3,6]");
    // An outermost var dim.
    let z = json("var * var * int32", "[[1,2],[3]]");
    let v = z.index(&[Index::ALL, 0.into()]).unwrap();
    assert_eq!(
        (v.tp().to_string(), v.to_json()),
        ("var * int32".into(), "[1,3]".into())
    );
    let v = z.index(&[(1..).into()]).unwrap();
    assert_eq!(
        (v.tp().to_string(), v.to_json()),
        ("var * var * int32".into(), "[[3]]".into())
    );
}

#[test]
fn strings_and_structs_in_rows() {
    let x = json(
        "2 * var * {x: int32, s: string}",
        r#"[[{"x":1,"s":"a"},{"x":2,"s":"bb"}],[{"x":3,"s":"ccc"}]]"#,
    );
    let v = x.index(&[Index::ALL, (-1).into()]).unwrap();
    assert_eq!(v.to_json(), r#"[{"x":2,"s":"bb"},{"x":3,"s":"ccc"}]"#);
    assert_eq!(v.field("s").unwrap().to_json(), r#"["bb","ccc"]"#);
    let s = json("3 * var * ?string", r#"[["a",null],[null],[]]"#);
    let v = s.index(&[Index::ALL, (..1).into()]).unwrap();
    assert_eq!(v.to_json(), r#"[["a"],[null],[]]"#);
}

#[test]
fn permute_keeps_var_dims_in_place() {
    let a = json("2 * 3 * var * int32", "[[[1],[2,3],[]],[[4],[],[5,6]]]");
    let t = a.permute(&[1, 0, 2]).unwrap();
    assert_eq!(
        show(&t),
        pair("3 * 2 * var * int32", "[[[1],[4]],[[2,3],[]],[[],[5,6]]]")
    );
    let b = json("var * 2 * 3 * int32", "[[[1,2,3],[4,5,6]]]");
    let t = b.permute(&[0, 2, 1]).unwrap();
    assert_eq!(
        show(&t),
        pair("var * 3 * 2 * int32", "[[[1,4],[2,5],[3,6]]]")
    );
    let c = json("2 * var * 2 * int32", "[[[1,2]],[[3,4],[5,6]]]");
    let t = c.permute(&[0, 1, 2]).unwrap();
    assert_eq!(t.to_json(), c.to_json());
    for (arr, axes, want) in [
        (&a, &[2, 0, 1][..], "axis 2 is a var dim"),
        (&a, &[0, 2, 1][..], "axis 2 is a var dim"),
        (&c, &[2, 1, 0][..], "across a var dim"),
    ] {
        let e = arr.permute(axes).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Type, "{axes:?}");
        assert!(e.message().contains(want), "{axes:?}: {e}");
    }
}

fn ragged() -> impl Strategy<Value = Vec<Vec<i32>>> {
    prop::collection::vec(prop::collection::vec(-100i32..100, 0..6), 0..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn per_row_integers_match_a_loop(rows in ragged(), i in -7isize..7) {
        let x = json("var * var * int32", &rows_json(&rows));
        let fixed = json(&format!("{} * var * int32", rows.len()), &rows_json(&rows));
        for a in [&x, &fixed] {
            let got = a.index(&[Index::ALL, Index::At(i)]);
            let want: Option<Vec<i32>> = rows
                .iter()
                .map(|r| {
                    let n = r.len() as isize;
                    let j = if i < 0 { i + n } else { i };
                    (0..n).contains(&j).then(|| r[j as usize])
                })
                .collect();
            match want {
                Some(v) => {
                    let got = got.unwrap();
                    prop_assert_eq!(got.to_json(), format!("{v:?}").replace(' ', ""));
                }
                None => prop_assert_eq!(got.unwrap_err().kind(), ErrorKind::Index),
            }
        }
    }

    #[test]
    fn per_row_slices_match_a_loop(
        rows in ragged(),
        start in prop::option::of(-7isize..7),
        stop in prop::option::of(-7isize..7),
        step in prop::sample::select(vec![-3isize, -2, -1, 1, 2, 3]),
    ) {
        let x = json(&format!("{} * var * int32", rows.len()), &rows_json(&rows));
        let got = x.index(&[Index::ALL, Index::slice(start, stop, step)]).unwrap();
        let want: Vec<Vec<i32>> = rows.iter().map(|r| slice_row(r, start, stop, step)).collect();
        prop_assert_eq!(got.tp().to_string(), format!("{} * var * int32", rows.len()));
        prop_assert_eq!(got.to_json(), rows_json(&want));
        // A view of the same values.
        prop_assert_eq!(got.copy().unwrap().to_json(), rows_json(&want));
    }
}
