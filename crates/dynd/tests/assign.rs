//! Array-level assignment between types: dims with broadcasting, var dims,
//! structs by name, tuples by position, options, pointers, error modes.

use crate::common;

use common::assign::{Message::Contains, assign, check_rows};
use common::{a, assert_error, scalar, with_assign_kernel};
use dynd::kernels::assign::ErrorMode;
use dynd::kernels::{CKernelBuilder, KernelRequest};
use dynd::{Array, ErrorKind, Index, Type};

#[test]
fn the_reference_examples_hold_exactly() {
    use ErrorMode::*;
    #[rustfmt::skip]
    check_rows(Contains, &[
        ("int8", "int32", "128", Default, Err((ErrorKind::Overflow, ""))),
        ("int8", "float64", "1.25", Default, Err((ErrorKind::Fractional, ""))),
        ("int8", "float64", "1.25", Overflow, Ok("1")),
        ("uint16", "int32", "-1", NoCheck, Ok("65535")),
        ("float32", "int64", "33554433", Default, Ok("33554432.0")),
        ("float32", "int64", "33554433", Inexact, Err((ErrorKind::Inexact, ""))),
    ]);
    let dst = a("3 * int32", "[0,0,0]");
    dst.assign(&a("1 * int32", "[9]"), Default).unwrap();
    assert_eq!(dst.to_json(), "[9,9,9]");
    let e = dst.assign(&a("2 * int32", "[9,2]"), Default).unwrap_err();
    assert_error(&e, ErrorKind::Broadcast, "shape (2) into shape (3)");
    assert_eq!(
        assign("2 * 3 * int32", "2 * var * int32", "[[1,2,3],[4]]", Default).unwrap(),
        "[[1,2,3],[4,4,4]]"
    );
}

#[test]
fn broadcasting_over_fixed_dims() {
    use ErrorKind::Broadcast;
    use ErrorMode::Default;
    #[rustfmt::skip]
    check_rows(Contains, &[
        // Missing leading dims and size-1 dims repeat.
        ("2 * 3 * int64", "3 * int8", "[1,2,3]", Default, Ok("[[1,2,3],[1,2,3]]")),
        ("2 * 3 * int64", "2 * 1 * int8", "[[1],[2]]", Default, Ok("[[1,1,1],[2,2,2]]")),
        ("2 * 2 * float32", "int32", "7", Default, Ok("[[7.0,7.0],[7.0,7.0]]")),
        ("3 * int32", "2 * 3 * int32", "[[1,2,3],[4,5,6]]", Default, Err((Broadcast, "more dimensions"))),
        ("2 * 3 * int32", "2 * 2 * int32", "[[1,2],[3,4]]", Default, Err((Broadcast, "shape (2, 2) into shape (2, 3)"))),
    ]);
}

#[test]
fn var_dims_allocate_check_and_broadcast() {
    use ErrorMode::Default;
    #[rustfmt::skip]
    check_rows(Contains, &[
        // var <- var into an empty destination allocates.
        ("2 * var * int16", "2 * var * int64", "[[1,2,3],[]]", Default, Ok("[[1,2,3],[]]")),
        // var <- fixed allocates too.
        ("var * float64", "3 * int32", "[1,2,3]", Default, Ok("[1.0,2.0,3.0]")),
        ("2 * var * int32", "2 * 2 * int32", "[[1,2],[3,4]]", Default, Ok("[[1,2],[3,4]]")),
        // fixed <- var checks each element: N or 1.
        ("2 * 3 * int32", "2 * var * int32", "[[1,2,3],[4,5]]", Default, Err((ErrorKind::Broadcast, "cannot broadcast shape (2, var) into shape (2, 3): a dim of size 2 into size 3 (2 * var * int32 into 2 * 3 * int32)"))),
        // Nested var of strings... of structs.
        ("var * var * {x: int8}", "2 * var * {x: int64}", r#"[[{"x":1}],[{"x":2},{"x":3}]]"#, Default, Ok(r#"[[{"x":1}],[{"x":2},{"x":3}]]"#)),
    ]);
    // An allocated var destination keeps its size: equal sizes or size 1.
    let dst = a("2 * var * int32", "[[0,0],[0]]");
    dst.assign(&a("2 * var * int32", "[[5,6],[7]]"), Default)
        .unwrap();
    assert_eq!(dst.to_json(), "[[5,6],[7]]");
    dst.assign(&a("2 * var * int32", "[[8],[9]]"), Default)
        .unwrap();
    assert_eq!(dst.to_json(), "[[8,8],[9]]");
    let e = dst
        .assign(&a("2 * var * int32", "[[1,2,3],[4]]"), Default)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast);
    // A scalar repeats over existing var elements.
    dst.assign(&Array::from(3i32), Default).unwrap();
    assert_eq!(dst.to_json(), "[[3,3],[3]]");
}

#[test]
fn var_elements_of_views_are_read_with_their_offsets() {
    // A field view of a var-of-structs has a var offset: assignment reads it.
    let people = a(
        "var * {age: int32, w: float64}",
        r#"[{"age":3,"w":1.5},{"age":40,"w":2.5}]"#,
    );
    let w = people.field("w").unwrap();
    assert_eq!(assign_from(&w, "var * float32"), "[1.5,2.5]");
    let rev = a("6 * int32", "[0,1,2,3,4,5]")
        .index(&[Index::slice(None, None, -2)])
        .unwrap();
    assert_eq!(assign_from(&rev, "var * int64"), "[5,3,1]");
}

fn assign_from(src: &Array, dst_tp: &str) -> String {
    let dst = Array::empty(dst_tp).unwrap();
    dst.assign(src, ErrorMode::Default).unwrap();
    dst.to_json()
}

#[test]
fn structs_match_by_name_and_tuples_by_position() {
    use ErrorKind::{Overflow, Type};
    use ErrorMode::Default;
    #[rustfmt::skip]
    check_rows(Contains, &[
        ("{x: float64, y: int8}", "{y: int32, x: int16}", r#"{"y": 5, "x": 7}"#, Default, Ok(r#"{"x":7.0,"y":5}"#)),
        ("(int8, float32)", "(int64, int64)", "[1, 2]", Default, Ok("[1,2.0]")),
        ("{a: int8, b: int8}", "(int64, int64)", "[1, 2]", Default, Ok(r#"{"a":1,"b":2}"#)),
        ("{x: int32, z: int32}", "{x: int32, y: int32}", r#"{"x":1,"y":2}"#, Default, Err((Type, "no field 'z'"))),
        ("{x: int32}", "{x: int32, y: int32}", r#"{"x":1,"y":2}"#, Default, Err((Type, "destination has no field 'y'"))),
        ("(int8)", "(int8, int8)", "[1, 2]", Default, Err((Type, ""))),
        // Errors inside a field carry their kind.
        ("{x: int8}", "{x: int32}", r#"{"x": 300}"#, Default, Err((Overflow, ""))),
        // Structs inside dims, broadcast.
        ("2 * {x: int8, y: float64}", "{y: int8, x: int8}", r#"{"y": 1, "x": 2}"#, Default, Ok(r#"[{"x":2,"y":1.0},{"x":2,"y":1.0}]"#)),
    ]);
}

#[test]
fn options_and_missing_values() {
    use ErrorKind::Overflow;
    use ErrorMode::*;
    #[rustfmt::skip]
    check_rows(Contains, &[
        ("3 * ?int64", "3 * ?int8", "[1, null, -1]", Default, Ok("[1,null,-1]")),
        ("3 * ?int32", "3 * float64", "[1, NaN, 2]", Default, Ok("[1,null,2]")),
        ("3 * ?float64", "3 * float64", "[1, NaN, 2]", Default, Ok("[1.0,NaN,2.0]")),
        ("2 * ?int16", "2 * int8", "[1, 2]", Default, Ok("[1,2]")),
        ("2 * int16", "2 * ?int8", "[1, 2]", Default, Ok("[1,2]")),
        ("2 * int16", "2 * ?int8", "[1, null]", NoCheck, Err((ErrorKind::InvalidArgument, "[1]: a missing value cannot be assigned to int16"))),
        // The NA marker of the destination is not a storable value.
        ("?int8", "int32", "-128", Default, Err((Overflow, ""))),
        ("?int8", "int32", "-128", NoCheck, Ok("null")),
        ("?bool", "?bool", "null", Default, Ok("null")),
        ("?string", "?string", r#""""#, Default, Ok(r#""""#)),
    ]);
}

#[test]
fn pointers_are_followed() {
    use ErrorMode::Default;
    #[rustfmt::skip]
    check_rows(Contains, &[
        ("int64", "pointer[int32]", "42", Default, Ok("42")),
        ("3 * float64", "pointer[3 * int32]", "[1, 2, 3]", Default, Ok("[1.0,2.0,3.0]")),
        ("2 * int8", "2 * pointer[int16]", "[5, 6]", Default, Ok("[5,6]")),
        ("int8", "pointer[int16]", "null", Default, Err((ErrorKind::InvalidArgument, "null pointer[int16]"))),
        ("pointer[int8]", "int8", "1", Default, Err((ErrorKind::Type, ""))),
    ]);
}

#[test]
fn cast_makes_a_new_array() {
    let x = a("2 * 2 * float64", "[[1.5, 2], [3, 4.25]]");
    let c = x.cast("2 * 2 * int32", ErrorMode::Overflow).unwrap();
    assert_eq!(c.to_json(), "[[1,2],[3,4]]");
    assert!(!c.shares_data_with(&x));
    assert_eq!(
        x.cast("2 * 2 * int32", ErrorMode::Default)
            .unwrap_err()
            .kind(),
        ErrorKind::Fractional
    );
    let t = x
        .permute(&[1, 0])
        .unwrap()
        .cast("2 * 2 * float32", ErrorMode::Inexact)
        .unwrap();
    assert_eq!(t.to_json(), "[[1.5,3.0],[2.0,4.25]]");
    assert_eq!(
        x.cast("int33", ErrorMode::Default).unwrap_err().kind(),
        ErrorKind::Parse
    );
    assert_eq!(
        x.read_only()
            .assign(&x, ErrorMode::Default)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn one_strided_kernel_from_four_threads() {
    let (d, s) = (
        Type::parse("int32").unwrap(),
        Type::parse("float64").unwrap(),
    );
    let (d, s) = (scalar(&d), scalar(&s));
    with_assign_kernel(d, s, KernelRequest::Strided, ErrorMode::Fractional, |ckb| {
        std::thread::scope(|scope| {
            for t in 0..4 {
                scope.spawn(move || one_thread_of_int32_from_float64(ckb, t));
            }
        });
    })
    .unwrap();
}

/// Thread `t`'s calls of a strided `int32 ← float64` kernel in
/// `ErrorMode::Fractional`: 500 rounds of 1000 whole values, and one
/// fractional value that fails.
fn one_thread_of_int32_from_float64(ckb: &CKernelBuilder, t: usize) {
    let call = |dst: &mut [i32], src: &[f64]| {
        assert_eq!(dst.len(), src.len());
        // SAFETY: built for Strided on int32 <- float64; `dst.len()`
        // contiguous elements each side, owned by this thread.
        unsafe {
            ckb.call_strided(
                dst.as_mut_ptr().cast(),
                4,
                &[src.as_ptr().cast()],
                &[8],
                dst.len(),
            )
        }
    };
    for iter in 0..500 {
        let src: Vec<f64> = (0..1000).map(|i| (i * 4 + t + iter) as f64).collect();
        let mut dst = vec![0i32; 1000];
        call(&mut dst, &src).unwrap();
        assert!(
            dst.iter()
                .enumerate()
                .all(|(i, &v)| v == (i * 4 + t + iter) as i32)
        );
        let e = call(&mut [0i32], &[0.5f64]);
        assert_eq!(e.unwrap_err().kind(), ErrorKind::Fractional);
    }
}

/// Copies of transposed and strided 2-d views (the tiled kernel when both
/// dims are long, the element loop when short) equal an element-by-element
/// reference, for every element size and for sizes not a multiple of a tile.
#[test]
fn transposed_copies_match_the_element_loop() {
    for (tp, n, m) in [
        ("int8", 70, 131),
        ("int16", 64, 64),
        ("float32", 100, 65),
        ("float64", 129, 200),
        ("complex[float64]", 65, 70),
        ("float64", 10, 300),
    ] {
        let values: Vec<String> = (0..n * m).map(|i| ((i * 7) % 120).to_string()).collect();
        let rows: Vec<String> = values
            .chunks(m)
            .map(|r| {
                if tp.starts_with("complex") {
                    format!(
                        "[{}]",
                        r.iter()
                            .map(|v| format!("[{v},1]"))
                            .collect::<Vec<_>>()
                            .join(",")
                    )
                } else {
                    format!("[{}]", r.join(","))
                }
            })
            .collect();
        let a = Array::from_json(
            format!("{n} * {m} * {tp}").as_str(),
            &format!("[{}]", rows.join(",")),
        )
        .unwrap();
        let t = a.permute(&[1, 0]).unwrap();
        let out = Array::empty(format!("{m} * {n} * {tp}").as_str()).unwrap();
        out.assign(&t, ErrorMode::Default).unwrap();
        for (i, j) in [
            (0, 0),
            (m - 1, n - 1),
            (m / 2, n / 3),
            (31, 33 % n),
            (m - 1, 0),
        ] {
            let at = |x: &Array, i: usize, j: usize| {
                x.index(&[Index::At(i as isize), Index::At(j as isize)])
                    .unwrap()
                    .to_json()
            };
            assert_eq!(at(&out, i, j), at(&a, j, i), "{tp} {n}x{m} at ({i}, {j})");
        }
        assert_eq!(out.to_json(), t.to_json(), "{tp} {n}x{m}");
        // Every other column of the transpose: strided on both sides.
        let s = t.index(&[Index::ALL, Index::slice(None, None, 2)]).unwrap();
        assert_eq!(
            s.copy().unwrap().to_json(),
            s.to_json(),
            "{tp} {n}x{m} strided"
        );
    }
}

/// Regression (found by `fuzz/` json target): a struct recorded a field's
/// child kernel only once it was fully built, so when building failed part
/// way down (here the `pointer[int8] ← int8` leaf under field `a`'s var
/// dim), the part already built — the var dim kernel with its reference to
/// the destination's block, or an option kernel with its types — was never
/// destroyed.
#[test]
fn a_field_kernel_that_fails_part_way_releases_what_it_built() {
    use dynd::array::VarDimMeta;
    use std::sync::atomic::Ordering;
    let dst = Array::empty("{a: var * pointer[int8]}").unwrap();
    let src = a("{a: var * int8}", r#"{"a": [1]}"#);
    let at = dst.tp().fields().unwrap().arrmeta_offsets()[0];
    // SAFETY: field a's arrmeta, a var dim's, lies at its recorded offset
    // inside the destination's arrmeta.
    let meta: VarDimMeta = unsafe { std::ptr::read_unaligned(dst.arrmeta_ptr().add(at).cast()) };
    // SAFETY: the destination holds this block for as long as it lives.
    let count = || unsafe { (*meta.blockref).use_count.load(Ordering::SeqCst) };
    assert_eq!(count(), 1);
    for mode in ErrorMode::ALL {
        let e = dst.assign(&src, mode).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Type, "{e}");
        assert_eq!(count(), 1, "the failed kernel kept a reference ({mode})");
    }
}
