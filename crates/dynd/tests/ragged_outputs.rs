//! Elementwise results over `N * var * T` whose rows lie in order in one
//! buffer share the argument's row descriptors (the var dim's arrmeta
//! offset maps them into the result's values): values, views, assignment,
//! lifetimes and the cases that must not share.

use crate::common;
use common::a;

use dynd::kernels::assign::ErrorMode;
use dynd::{Array, Index, compute};

const ROWS: &str = "[[1, 2, 3], [], [4], [5, 6]]";

#[test]
fn a_packed_result_shares_the_row_descriptors_and_computes_every_value() {
    let x = a("4 * var * float64", ROWS);
    let y = compute::add(&x, &Array::from(0.5f64)).unwrap();
    assert_eq!(y.tp().to_string(), "4 * var * float64");
    assert_eq!(y.to_json(), "[[1.5,2.5,3.5],[],[4.5],[5.5,6.5]]");
    // The descriptors are x's; the values are not.
    assert_eq!(y.data_ptr(), x.data_ptr());
    let row = |arr: &Array, i: usize| arr.index(&[Index::from(i)]).unwrap();
    let elem = |arr: &Array| {
        arr.index(&[Index::from(0), Index::from(0)])
            .unwrap()
            .data_ptr()
    };
    assert_ne!(elem(&y), elem(&x));
    // Rows, elements, reductions and copies of the result read its values.
    assert_eq!(row(&y, 3).to_json(), "[5.5,6.5]");
    assert_eq!(
        y.index(&[Index::from(0), Index::from(-1)])
            .unwrap()
            .to_json(),
        "3.5"
    );
    assert_eq!(
        compute::sum(&y, Some(&[1]), false).unwrap().to_json(),
        "[7.5,0.0,4.5,12.0]"
    );
    assert_eq!(y.copy().unwrap().to_json(), y.to_json());
    // A result of a result shares them too, and reads its own values.
    let z = compute::multiply(&y, &Array::from(2.0f64)).unwrap();
    assert_eq!(z.data_ptr(), x.data_ptr());
    assert_eq!(z.to_json(), "[[3.0,5.0,7.0],[],[9.0],[11.0,13.0]]");
}

#[test]
fn writing_into_a_shared_result_leaves_the_argument_alone() {
    let x = a("4 * var * float64", ROWS);
    let y = compute::negative(&x).unwrap();
    // Assigns `json` into `y`, as `4 * var * float64`.
    let assign = |json| y.assign(&a("4 * var * float64", json), ErrorMode::Default);
    assign("[[7, 7, 7], [], [7], [7, 7]]").unwrap();
    assert_eq!(y.to_json(), "[[7.0,7.0,7.0],[],[7.0],[7.0,7.0]]");
    assert_eq!(x.to_json(), "[[1.0,2.0,3.0],[],[4.0],[5.0,6.0]]");
    // Rows keep their sizes: a row of another size (not 1) is an error, as
    // for any var array with its rows set; a row of 1 broadcasts.
    assert!(assign("[[1, 2], [], [1], [1, 1]]").is_err());
    assign("[[1], [], [2], [3, 4]]").unwrap();
    assert_eq!(y.to_json(), "[[1.0,1.0,1.0],[],[2.0],[3.0,4.0]]");
    assert_eq!(x.to_json(), "[[1.0,2.0,3.0],[],[4.0],[5.0,6.0]]");
}

#[test]
fn the_result_outlives_its_argument() {
    let y = {
        let x = a("4 * var * float64", ROWS);
        compute::add(&x, &x.index(&[Index::from(0), Index::from(0)]).unwrap()).unwrap()
    };
    assert_eq!(y.to_json(), "[[2.0,3.0,4.0],[],[5.0],[6.0,7.0]]");
}

#[test]
fn views_in_order_share_and_others_get_their_own_rows() {
    let x = a("4 * var * float64", ROWS);
    let one = Array::from(1.0f64);
    // Rows 1.. lie in order: shared.
    let tail = x.index(&[Index::slice(Some(1), None, 1)]).unwrap();
    let t = compute::add(&tail, &one).unwrap();
    assert_eq!(t.data_ptr(), tail.data_ptr());
    assert_eq!(t.to_json(), "[[],[5.0],[6.0,7.0]]");
    // Reversed rows are not in order: a new packed output.
    let rev = x.index(&[Index::slice(None, None, -1)]).unwrap();
    let r = compute::add(&rev, &one).unwrap();
    assert_ne!(r.data_ptr(), rev.data_ptr());
    assert_eq!(r.to_json(), "[[6.0,7.0],[5.0],[],[2.0,3.0,4.0]]");
    // A result of another element size cannot map onto the rows.
    let i = a("4 * var * int32", ROWS);
    let f = compute::add(&i, &Array::from(0.5f64)).unwrap();
    assert_ne!(f.data_ptr(), i.data_ptr());
    assert_eq!(f.to_json(), "[[1.5,2.5,3.5],[],[4.5],[5.5,6.5]]");
    // Two var arguments: their own rows.
    let two = compute::add(&x, &x).unwrap();
    assert_ne!(two.data_ptr(), x.data_ptr());
    assert_eq!(two.to_json(), "[[2.0,4.0,6.0],[],[8.0],[10.0,12.0]]");
    // Rows never allocated (an empty array's) are not shared either.
    let e = Array::empty("3 * var * float64").unwrap();
    let s = compute::add(&e, &one).unwrap();
    assert_ne!(s.data_ptr(), e.data_ptr());
    assert_eq!(s.to_json(), "[[],[],[]]");
}
