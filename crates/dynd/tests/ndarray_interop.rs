//! `ndarray` interop (feature `ndarray`): owned arrays, shared `ArcArray`s
//! and borrowed views into dynd arrays without copying, for every builtin
//! element type and any strides (reversed, transposed, stepped); dynd
//! arrays back out as `ArrayView`s with their strides kept; typed errors
//! for what does not fit; and the abort that keeps borrowed views sound.

#![cfg(feature = "ndarray")]

use crate::common;
use common::assert_error;

use dynd::interop::ndarray::{with_view, with_view_mut};
use dynd::kernels::assign::ErrorMode;
use dynd::types::NativeType;
use dynd::{Array, ErrorKind, Index};
use half::{bf16, f16};
use ndarray::{Array1, Array2, Array3, ArrayD, Axis, IxDyn, ShapeBuilder, s};
use num_complex::Complex;

/// `values` as a 2 × n/2 ndarray, into dynd (owned, zero-copy) and back out
/// as a view: the same values in the same order, over the same bytes.
fn owned_round_trip<T: NativeType>(values: Vec<T>) {
    let n = values.len();
    let m = Array2::from_shape_vec((2, n / 2), values.clone()).unwrap();
    let ptr = m.as_ptr() as *const u8;
    let a = Array::from_ndarray(m).unwrap();
    assert_eq!(a.tp().to_string(), format!("2 * {} * {}", n / 2, T::TYPE));
    assert_eq!(a.data_ptr() as *const u8, ptr, "no copy");
    assert!(a.is_writable());
    assert_eq!(a.to_vec::<T>().unwrap(), values);
    let frozen = a.into_immutable().unwrap();
    let view = frozen.as_ndarray::<T>().unwrap();
    assert_eq!(view.shape(), &[2, n / 2]);
    let back: Vec<T> = view.iter().map(|r| T::from_raw(*r)).collect();
    assert_eq!(back, values);
    assert_eq!(view.as_ptr() as *const u8, ptr, "no copy back either");
}

#[test]
fn every_builtin_goes_in_and_out_without_a_copy() {
    owned_round_trip(vec![true, false, false, true]);
    owned_round_trip(vec![1i8, -2, 3, -4]);
    owned_round_trip(vec![1i16, -2, 3, -4]);
    owned_round_trip(vec![1i32, -2, 3, -4]);
    owned_round_trip(vec![1i64, -2, 3, -4]);
    owned_round_trip(vec![1i128, -2, 3, i128::MIN]);
    owned_round_trip(vec![1u8, 2, 3, 255]);
    owned_round_trip(vec![1u16, 2, 3, 4]);
    owned_round_trip(vec![1u32, 2, 3, 4]);
    owned_round_trip(vec![1u64, 2, 3, u64::MAX]);
    owned_round_trip(vec![1u128, 2, 3, 4]);
    owned_round_trip([1.5f32, -2.0, 0.25, 8.0].map(f16::from_f32).to_vec());
    owned_round_trip([1.5f32, -2.0, 0.25, 8.0].map(bf16::from_f32).to_vec());
    owned_round_trip(vec![1.5f32, -2.0, 0.25, 8.0]);
    owned_round_trip(vec![1.5f64, -2.0, 0.25, 8.0]);
    owned_round_trip(vec![Complex::new(1.0f32, 2.0), Complex::new(3.0, 4.0)]);
    owned_round_trip(vec![Complex::new(1.0f64, 2.0), Complex::new(3.0, 4.0)]);
}

/// 0..24 as a 2 × 3 × 4 array.
fn cube() -> Array3<i32> {
    Array3::from_shape_vec((2, 3, 4), (0..24).collect()).unwrap()
}

/// The values of an ndarray view in logical (C) order.
fn logical<T: Copy>(v: ndarray::ArrayViewD<'_, T>) -> Vec<T> {
    v.iter().copied().collect()
}

#[test]
fn owned_arrays_keep_any_strides() {
    // Stepped and reversed along every axis.
    let m = cube().slice_move(s![..;-1, 1.., ..;-2]);
    let want = logical(m.view().into_dyn());
    let a = Array::from_ndarray(m).unwrap();
    assert_eq!(a.tp().to_string(), "2 * 2 * 2 * int32");
    assert_eq!(a.to_vec::<i32>().unwrap(), want);
    // Fortran order.
    let f = Array2::from_shape_vec((2, 3).f(), vec![1i64, 4, 2, 5, 3, 6]).unwrap();
    assert_eq!(
        Array::from_ndarray(f).unwrap().to_json(),
        "[[1,2,3],[4,5,6]]"
    );
    // Transposed, with an axis inverted.
    let mut t = cube().reversed_axes();
    t.invert_axis(Axis(1));
    let want = logical(t.view().into_dyn());
    let a = Array::from_ndarray(t).unwrap();
    assert_eq!(a.tp().to_string(), "4 * 3 * 2 * int32");
    assert_eq!(a.to_vec::<i32>().unwrap(), want);
    // Dynamic dims, 0-d and empty.
    let d = ArrayD::from_shape_vec(IxDyn(&[]), vec![7.5f64]).unwrap();
    assert_eq!(Array::from_ndarray(d).unwrap().to_json(), "7.5");
    let e = Array2::<u16>::zeros((0, 3));
    assert_eq!(
        Array::from_ndarray(e).unwrap().tp().to_string(),
        "0 * 3 * uint16"
    );
}

#[test]
fn borrowed_views_are_lent_for_a_closure() {
    let m = cube();
    let v = m.slice(s![.., ..;-1, 1..;2]);
    let want = logical(v.into_dyn());
    let got = with_view(v, |a| {
        assert!(!a.is_writable());
        assert_eq!(a.data_ptr() as *const i32, v.as_ptr(), "no copy");
        // Views and clones are fine inside the closure.
        let row = a.index(&[1.into()]).unwrap();
        assert_eq!(row.len().unwrap(), 3);
        a.to_vec::<i32>().unwrap()
    })
    .unwrap();
    assert_eq!(got, want);
    // Read-only: assignment refused.
    let e = with_view(m.view(), |a| a.assign_json("[]").unwrap_err()).unwrap();
    assert!(e.message().contains("read-only"), "{e}");
}

#[test]
fn mutable_views_are_written_through() {
    let mut m = Array2::<f64>::zeros((3, 4));
    // Every other column, rows reversed.
    with_view_mut(m.slice_mut(s![..;-1, ..;2]), |a| {
        assert!(a.is_writable());
        a.assign_json("[[1, 2], [3, 4], [5, 6]]").unwrap();
    })
    .unwrap();
    assert_eq!(
        m,
        ndarray::array![
            [5.0, 0.0, 6.0, 0.0],
            [3.0, 0.0, 4.0, 0.0],
            [1.0, 0.0, 2.0, 0.0]
        ]
    );
}

#[test]
fn shared_arc_arrays_import_read_only() {
    let arc = Array1::from(vec![1i32, 2, 3]).into_shared();
    let mut other = arc.clone();
    let a = Array::from_arc_ndarray(arc).unwrap();
    assert_eq!(a.data_ptr() as *const i32, other.as_ptr(), "no copy");
    assert!(!a.is_writable());
    let src = Array::from_vec(vec![7i32, 8, 9], &[3]).unwrap();
    assert!(a.assign(&src, ErrorMode::Default).is_err());
    // A write through the other handle copies first: dynd's bytes stay.
    other[0] = 100;
    assert_eq!(a.to_json(), "[1,2,3]");
    assert_eq!(other.to_vec(), vec![100, 2, 3]);
}

#[test]
fn dynd_views_come_out_with_their_strides() {
    let a = Array::from_vec((0..12).collect::<Vec<i64>>(), &[3, 4]).unwrap();
    let v = a
        .index(&[Index::slice(None, None, -1), Index::slice(Some(1), None, 2)])
        .unwrap();
    drop(a);
    let v = v.into_immutable().unwrap();
    let nd = v.as_ndarray::<i64>().unwrap();
    assert_eq!(nd.shape(), &[3, 2]);
    assert_eq!(nd.strides(), &[-4, 2]);
    assert_eq!(nd, ndarray::array![[9i64, 11], [5, 7], [1, 3]].into_dyn());
    // Empty arrays too.
    let e = Array::from_vec(Vec::<f32>::new(), &[0, 2]).unwrap();
    let e = e.into_immutable().unwrap();
    assert_eq!(e.as_ndarray::<f32>().unwrap().shape(), &[0, 2]);
    // bool comes out as its byte.
    let b = Array::from_vec(vec![true, false], &[2]).unwrap();
    let b = b.into_immutable().unwrap();
    let bv = b.as_ndarray::<bool>().unwrap();
    assert!(bv[[0]].get() && !bv[[1]].get());
}

#[test]
fn arrays_that_do_not_fit_are_typed_errors() {
    let a = Array::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    // Writable: other handles could write under the borrow.
    let e = a.as_ndarray::<f64>().unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, "immutable");
    let a = a.into_immutable().unwrap();
    // The wrong element type, both named.
    let e = a.as_ndarray::<f32>().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert!(
        e.message().contains("float32") && e.message().contains("float64"),
        "{e}"
    );
    // A var dim.
    let r = Array::from_json("2 * var * int32", "[[1], [2, 3]]").unwrap();
    let r = r.into_immutable().unwrap();
    let e = r.as_ndarray::<i32>().unwrap_err();
    assert_error(&e, ErrorKind::Type, "var");
    // A struct field: strides of the struct's size, not the field's.
    let c = common::complex_field_at_a_12_byte_stride();
    let c = c.into_immutable().unwrap();
    let e = c.as_ndarray::<Complex<f32>>().unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, "dim 0");
}

/// Set in the child process of `an_escaped_clone_aborts`.
const ESCAPE: &str = "DYND_TEST_NDARRAY_ESCAPE";

#[test]
fn an_escaped_clone_aborts() {
    if std::env::var_os(ESCAPE).is_some() {
        // The child: keep a clone past the closure. This must abort.
        let m = Array1::from(vec![1u8, 2, 3]);
        let kept = with_view(m.view(), |a| a.clone()).unwrap();
        // Unreachable when the guard works; printing would read freed
        // memory otherwise.
        println!("escaped: {}", kept.to_json());
        return;
    }
    let exe = std::env::current_exe().unwrap();
    // The test's name in the test binary: its module path without the
    // binary's own name.
    let (_, module) = module_path!().split_once("::").unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            &format!("{module}::an_escaped_clone_aborts"),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ESCAPE, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the child should have aborted");
    assert!(stderr.contains("outlived the closure"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("escaped:"));
}
