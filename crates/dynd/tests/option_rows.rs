//! Elementwise and row calls on rows that may be missing (`[fixed dims] *
//! ?var * T`, what Arrow lists import as): missing where an argument's row
//! is (`dynd::callable::option_rows`), the errors, and the parts
//! (`Array::from_option_rows`, `Array::rows_where`).

use dynd::callable;
use dynd::{Array, ErrorKind, Index, compute};

fn j(tp: &str, json: &str) -> Array {
    Array::from_json(tp, json).unwrap()
}

#[test]
fn elementwise_calls_keep_missing_rows_missing() {
    let x = j(
        "4 * ?var * ?float64",
        "[[1.5, null], null, [], [2.5, 3.5, 4.5]]",
    );
    let r = compute::add(&x, &Array::from(1i32)).unwrap();
    assert_eq!(r.tp().to_string(), "4 * ?var * ?float64");
    assert_eq!(r.to_json(), "[[2.5,null],null,[],[3.5,4.5,5.5]]");
    let g = compute::greater(&x, &Array::from(2.0f64)).unwrap();
    assert_eq!(g.to_json(), "[[false,null],null,[],[true,true,true]]");
    // Two such arrays: missing where either row is; a present row
    // beside a missing one never fails to broadcast.
    let y = j("4 * ?var * int32", "[[1, 2], [5, 6, 7], null, [1]]");
    let r = compute::multiply(&x, &y).unwrap();
    assert_eq!(r.to_json(), "[[1.5,null],null,null,[2.5,3.5,4.5]]");
    // A plain ragged array beside: its row under a missing one is not
    // compared either.
    let p = j("4 * var * int32", "[[1, 1], [9, 9, 9, 9], [], [0, 0, 0]]");
    let r = compute::subtract(&p, &x).unwrap();
    assert_eq!(r.tp().to_string(), "4 * ?var * ?float64");
    assert_eq!(r.to_json(), "[[-0.5,null],null,[],[-2.5,-3.5,-4.5]]");
    // Fixed dims above the rows, and a view.
    let n = j("2 * 2 * ?var * int8", "[[[1], null], [null, [2, 3]]]");
    let r = compute::negative(&n).unwrap();
    assert_eq!(r.to_json(), "[[[-1],null],[null,[-2,-3]]]");
    let rev = n
        .index(&[Index::ALL, Index::slice(None, None, -1)])
        .unwrap();
    assert_eq!(
        compute::negative(&rev).unwrap().to_json(),
        "[[null,[-1]],[[-2,-3],null]]"
    );
}

#[test]
fn row_calls_keep_missing_rows_missing() {
    let x = j("4 * ?var * int32", "[[3, 1, 2], null, [], [5, 4]]");
    let sorted = compute::sort(&x).unwrap();
    assert_eq!(sorted.tp().to_string(), "4 * ?var * int32");
    assert_eq!(sorted.to_json(), "[[1,2,3],null,[],[4,5]]");
    let f = callable::lookup("argsort").unwrap();
    assert_eq!(f.call(&[&x]).unwrap().to_json(), "[[1,2,0],null,[],[1,0]]");
    assert_eq!(
        compute::cumsum(&x).unwrap().to_json(),
        "[[3,4,6],null,[],[5,9]]"
    );
    let m = compute::greater(&x, &Array::from(2i32)).unwrap();
    assert_eq!(
        compute::filter(&x, &m).unwrap().to_json(),
        "[[3],null,[],[5,4]]"
    );
    let i = j("4 * var * int64", "[[-1], [7], [], [0, 0]]");
    assert_eq!(
        compute::take(&x, &i).unwrap().to_json(),
        "[[2],null,[],[5,5]]"
    );
}

#[test]
fn what_does_not_compute_says_so() {
    let x = j("3 * ?var * int32", "[[1, 2], null, [3]]");
    // A present row out of range: the call's own error.
    let i = j("3 * var * int64", "[[5], [], [0]]");
    let e = compute::take(&x, &i).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index, "{e}");
    // Present rows of unequal length: a broadcast error.
    let y = j("3 * ?var * int32", "[[1, 2, 3], [4], [5]]");
    let e = compute::add(&x, &y).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast, "{e}");
    // Types nothing computes: the first error, naming `?var`.
    let e = compute::add(&x, &Array::from("a")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(e.message().contains("?var"), "{e}");
    // Reductions: `?var * T` is an element, not a dim; refused.
    let e = compute::sum(&x, None, false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    // Fixed dims that differ between two such arrays: refused.
    let z = j("2 * ?var * int32", "[[1], null]");
    assert!(compute::add(&x, &z).is_err());
    // The null functions take `?var` themselves, as before: a fill
    // that does not fit is still their error.
    assert_eq!(
        compute::is_null(&x).unwrap().to_json(),
        "[false,true,false]"
    );
    let e = compute::fill_null(&x, &Array::from(0i32)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(e.message().starts_with("fill_null"), "{e}");
    // Kleene logic: rows missing alike propagate; otherwise refused.
    let b = compute::greater(&x, &Array::from(1i32)).unwrap();
    let and = callable::lookup("logical_and").unwrap();
    assert_eq!(
        and.call(&[&b, &b]).unwrap().to_json(),
        "[[false,true],null,[true]]"
    );
    let c = j("3 * ?var * bool", "[[true, true], [false], null]");
    let e = and.call(&[&b, &c]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
}

#[test]
fn from_option_rows_and_rows_where_check_their_parts() {
    let rows = j("3 * var * int32", "[[1], [2, 3], []]");
    let yes = j("3 * bool", "[false, true, true]");
    let a = Array::from_option_rows(&rows, &yes).unwrap();
    assert_eq!(a.to_json(), "[null,[2,3],[]]");
    let (back, present) = a.option_rows().unwrap();
    assert_eq!(back.to_json(), "[[],[2,3],[]]");
    assert_eq!(present.to_json(), "[false,true,true]");
    let emptied = rows.rows_where(&yes).unwrap();
    assert_eq!(emptied.to_json(), "[[],[2,3],[]]");
    for (r, p) in [
        (j("3 * int32", "[1, 2, 3]"), yes.clone()),
        (rows.clone(), j("2 * bool", "[true, false]")),
        (rows.clone(), j("3 * int8", "[1, 0, 1]")),
        (a.clone(), yes.clone()),
    ] {
        let e = Array::from_option_rows(&r, &p).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Type, "{e}");
        let e = r.rows_where(&p).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    }
}
