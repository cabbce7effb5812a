//! Arrays over external memory (`Array::from_external`, `from_external_c`)
//! and from Rust vectors and slices (`from_vec`, `from_slice`, `From`):
//! the owner is released exactly once — after every view and clone is
//! gone, or when construction fails — and bad layouts are typed errors.
//! These run under valgrind in CI (`scripts/valgrind-tests.sh`).

use crate::common;
use common::assert_error;

use dynd::kernels::assign::ErrorMode;
use dynd::{Array, ErrorKind, Index, Type};
use half::f16;
use num_complex::Complex;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A buffer handed to dynd as someone else's memory: its data pointer, an
/// owner closure that frees it and counts the release, and the counter.
struct Foreign {
    data: *mut u8,
    owner: Box<dyn FnOnce() + Send>,
    released: Arc<AtomicUsize>,
}

fn foreign<T: Send + 'static>(values: Vec<T>) -> Foreign {
    let mut buf = values.into_boxed_slice();
    let data = buf.as_mut_ptr().cast::<u8>();
    owned_by(data, buf)
}

/// `data`, with an owner that drops `keep` and counts its release.
fn owned_by<K: Send + 'static>(data: *mut u8, keep: K) -> Foreign {
    let released = Arc::new(AtomicUsize::new(0));
    let r = released.clone();
    Foreign {
        data,
        owner: Box::new(move || {
            drop(keep);
            r.fetch_add(1, Ordering::SeqCst);
        }),
        released,
    }
}

impl Foreign {
    /// `from_external` over this buffer, with `offset` bytes added to the
    /// data pointer. Safe to call as long as every layout the tests pass
    /// stays inside the buffer (or is rejected before it is read).
    fn array(
        self,
        tp: Type,
        offset: usize,
        shape: &[usize],
        strides: &[isize],
        writable: bool,
    ) -> (dynd::Result<Array>, Arc<AtomicUsize>) {
        // SAFETY: each test's shape and strides reach only elements inside
        // the boxed slice (or are refused by validation before any read);
        // the slice lives until the owner runs.
        let a = unsafe {
            Array::from_external(
                tp,
                self.data.wrapping_add(offset),
                shape,
                strides,
                self.owner,
                writable,
            )
        };
        (a, self.released)
    }
}

fn count(c: &AtomicUsize) -> usize {
    c.load(Ordering::SeqCst)
}

#[test]
fn release_runs_once_after_views_and_clones() {
    let (a, released) = foreign((0..12).map(f64::from).collect::<Vec<_>>()).array(
        Type::float64(),
        0,
        &[3, 4],
        &[32, 8],
        true,
    );
    let a = a.unwrap();
    assert_eq!(a.tp().to_string(), "3 * 4 * float64");
    assert_eq!(
        a.to_json(),
        "[[0.0,1.0,2.0,3.0],[4.0,5.0,6.0,7.0],[8.0,9.0,10.0,11.0]]"
    );
    let clone = a.clone();
    let row = a.index(&[1.into()]).unwrap();
    let col = a.index(&[Index::from(..), 2.into()]).unwrap();
    let t = a.permute(&[1, 0]).unwrap();
    let ro = a.read_only();
    drop(a);
    assert_eq!(count(&released), 0);
    assert_eq!(row.to_json(), "[4.0,5.0,6.0,7.0]");
    assert_eq!(col.to_json(), "[2.0,6.0,10.0]");
    assert_eq!(
        t.index(&[3.into(), 2.into()])
            .unwrap()
            .as_scalar::<f64>()
            .unwrap(),
        11.0
    );
    drop((clone, row, col, ro));
    assert_eq!(count(&released), 0);
    drop(t);
    assert_eq!(count(&released), 1);
}

#[test]
fn release_runs_once_when_the_last_view_dies_on_another_thread() {
    let (a, released) = foreign(vec![1i32, 2, 3]).array(Type::int32(), 0, &[3], &[4], false);
    let view = a.unwrap().index(&[Index::slice(None, None, -1)]).unwrap();
    std::thread::spawn(move || {
        assert_eq!(view.to_json(), "[3,2,1]");
    })
    .join()
    .unwrap();
    assert_eq!(count(&released), 1);
}

#[test]
fn negative_strides_read_a_vector_backwards() {
    let n = 5usize;
    // data points at the last element; each step goes 8 bytes back.
    let (a, released) = foreign((0..n as i64).collect::<Vec<_>>()).array(
        Type::int64(),
        (n - 1) * 8,
        &[n],
        &[-8],
        false,
    );
    let a = a.unwrap();
    assert_eq!(a.to_json(), "[4,3,2,1,0]");
    assert_eq!(a.index(&[0.into()]).unwrap().as_scalar::<i64>().unwrap(), 4);
    assert_eq!(
        a.index(&[(-1).into()]).unwrap().as_scalar::<i64>().unwrap(),
        0
    );
    // A copy is fresh, C-order, writable memory with the same values.
    let c = a.copy().unwrap();
    assert!(c.is_writable());
    assert!(!c.shares_data_with(&a));
    assert_eq!(c.to_json(), "[4,3,2,1,0]");
    drop(a);
    assert_eq!(count(&released), 1);
    assert_eq!(c.to_json(), "[4,3,2,1,0]");

    // 2-d, both dims reversed.
    let (a, released) = foreign((0..6).map(|i| i as f32).collect::<Vec<_>>()).array(
        Type::parse("float32").unwrap(),
        5 * 4,
        &[2, 3],
        &[-12, -4],
        false,
    );
    assert_eq!(a.unwrap().to_json(), "[[5.0,4.0,3.0],[2.0,1.0,0.0]]");
    assert_eq!(count(&released), 1);
}

#[test]
fn stride_zero_repeats_one_element() {
    let (a, released) =
        foreign(vec![7u16]).array(Type::parse("uint16").unwrap(), 0, &[2, 3], &[0, 0], false);
    let a = a.unwrap();
    assert_eq!(a.to_json(), "[[7,7,7],[7,7,7]]");
    let sum = dynd::callable::lookup("sum").unwrap().call(&[&a]).unwrap();
    assert_eq!(sum.to_json(), "42");
    drop((a, sum));
    assert_eq!(count(&released), 1);
}

#[test]
fn read_only_arrays_refuse_every_write() {
    let (a, released) = foreign(vec![1.0f64, 2.0]).array(Type::float64(), 0, &[2], &[8], false);
    let a = a.unwrap();
    assert!(!a.is_writable());
    assert_eq!(a.flags() & dynd::array::flags::WRITE, 0);
    let src = Array::from(vec![5.0f64, 6.0]);
    let e = a.assign(&src, ErrorMode::NoCheck).unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, "read-only");
    assert_eq!(
        a.assign_json("[3, 4]").unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let elem = a.index(&[0.into()]).unwrap();
    assert!(!elem.is_writable());
    assert_eq!(
        elem.set_scalar(9.0f64).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(a.to_json(), "[1.0,2.0]");
    // Reading from it is fine.
    let dst = Array::empty("2 * int32").unwrap();
    dst.assign(&a, ErrorMode::Default).unwrap();
    assert_eq!(dst.to_json(), "[1,2]");
    drop((a, elem));
    assert_eq!(count(&released), 1);
}

#[test]
fn writable_external_arrays_write_through() {
    let mut buf = vec![0i32; 4].into_boxed_slice();
    let data = buf.as_mut_ptr();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    let owner = move || *s.lock().unwrap() = buf.to_vec();
    // SAFETY: 2 × 2 int32 in C order inside the 4-element box, which lives
    // until the owner runs; nothing else touches it.
    let a =
        unsafe { Array::from_external(Type::int32(), data.cast(), &[2, 2], &[8, 4], owner, true) }
            .unwrap();
    a.assign_json("[[1,2],[3,4]]").unwrap();
    a.index(&[1.into(), 1.into()])
        .unwrap()
        .set_scalar(40i32)
        .unwrap();
    drop(a);
    assert_eq!(*seen.lock().unwrap(), vec![1, 2, 3, 40]);
}

#[test]
fn struct_elements_are_plain_data_too() {
    let tp = Type::parse("{x: int32, y: float64}").unwrap();
    assert_eq!(tp.data_size(), 16);
    // Two records: {1, 0.5}, {2, 1.5} as raw bytes in u64 words.
    let words: Vec<u64> = vec![1, 0.5f64.to_bits(), 2, 1.5f64.to_bits()];
    let (a, released) = foreign(words).array(tp, 0, &[2], &[16], false);
    assert_eq!(a.unwrap().to_json(), r#"[{"x":1,"y":0.5},{"x":2,"y":1.5}]"#);
    assert_eq!(count(&released), 1);
}

#[test]
fn zero_dims_and_empty_arrays() {
    let (a, released) = foreign(vec![2.5f64]).array(Type::float64(), 0, &[], &[], false);
    let a = a.unwrap();
    assert_eq!(a.tp().to_string(), "float64");
    assert_eq!(a.as_scalar::<f64>().unwrap(), 2.5);
    drop(a);
    assert_eq!(count(&released), 1);

    // An empty array never reads its data: null is accepted.
    // No element is reachable (a dim of size 0).
    let (a, released) =
        owned_by(std::ptr::null_mut(), ()).array(Type::int32(), 0, &[3, 0], &[0, 4], true);
    let a = a.unwrap();
    assert_eq!(a.to_json(), "[[],[],[]]");
    assert_eq!(a.copy().unwrap().to_json(), "[[],[],[]]");
    drop(a);
    assert_eq!(count(&released), 1);
}

/// One bad input: the layout given to `from_external`, the error kind and
/// a part of the message.
struct Bad {
    tp: &'static str,
    offset: usize,
    shape: &'static [usize],
    strides: &'static [isize],
    kind: ErrorKind,
    message: &'static str,
}

#[test]
fn bad_layouts_are_typed_errors_and_still_release_once() {
    let table = [
        Bad {
            tp: "string",
            offset: 0,
            shape: &[2],
            strides: &[16],
            kind: ErrorKind::Type,
            message: "refers to memory blocks",
        },
        Bad {
            tp: "{a: int32, b: string}",
            offset: 0,
            shape: &[1],
            strides: &[24],
            kind: ErrorKind::Type,
            message: "refers to memory blocks",
        },
        Bad {
            tp: "3 * int32",
            offset: 0,
            shape: &[1],
            strides: &[12],
            kind: ErrorKind::Type,
            message: "cannot be a dim",
        },
        Bad {
            tp: "var * int32",
            offset: 0,
            shape: &[1],
            strides: &[16],
            kind: ErrorKind::Type,
            message: "cannot be a dim",
        },
        Bad {
            tp: "pointer[int32]",
            offset: 0,
            shape: &[1],
            strides: &[8],
            kind: ErrorKind::Type,
            message: "refers to memory blocks",
        },
        Bad {
            tp: "N * int32",
            offset: 0,
            shape: &[1],
            strides: &[4],
            kind: ErrorKind::Type,
            message: "symbolic",
        },
        Bad {
            tp: "void",
            offset: 0,
            shape: &[1],
            strides: &[8],
            kind: ErrorKind::Type,
            message: "size 0",
        },
        Bad {
            tp: "float64",
            offset: 0,
            shape: &[2, 2],
            strides: &[16],
            kind: ErrorKind::InvalidArgument,
            message: "shape has 2 dims but strides has 1",
        },
        Bad {
            tp: "float64",
            offset: 0,
            shape: &[2],
            strides: &[8, 8],
            kind: ErrorKind::InvalidArgument,
            message: "shape has 1 dims but strides has 2",
        },
        Bad {
            tp: "float64",
            offset: 0,
            shape: &[2],
            strides: &[12],
            kind: ErrorKind::InvalidArgument,
            message: "stride 12 of dim 0",
        },
        Bad {
            tp: "int32",
            offset: 0,
            shape: &[2, 2],
            strides: &[8, -2],
            kind: ErrorKind::InvalidArgument,
            message: "stride -2 of dim 1",
        },
        Bad {
            tp: "float64",
            offset: 4,
            shape: &[2],
            strides: &[8],
            kind: ErrorKind::InvalidArgument,
            message: "not aligned to 8 bytes",
        },
        Bad {
            tp: "float64",
            offset: 0,
            shape: &[usize::MAX],
            strides: &[8],
            kind: ErrorKind::InvalidArgument,
            message: "larger than isize::MAX",
        },
        Bad {
            tp: "float64",
            offset: 0,
            shape: &[1 << 62, 4],
            strides: &[8, 8],
            kind: ErrorKind::InvalidArgument,
            message: "spans more bytes",
        },
        Bad {
            tp: "float64",
            offset: 0,
            shape: &[3, 3],
            strides: &[isize::MIN + 8, 8],
            kind: ErrorKind::InvalidArgument,
            message: "spans more bytes",
        },
        Bad {
            tp: "float64",
            offset: 0,
            shape: &[2, 2],
            strides: &[-(1 << 62), 1 << 62],
            kind: ErrorKind::InvalidArgument,
            message: "spans more bytes",
        },
    ];
    for b in &table {
        let what = format!("{} {:?} {:?} +{}", b.tp, b.shape, b.strides, b.offset);
        let tp = Type::parse(b.tp).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (r, released) = foreign(vec![0u64; 8]).array(tp, b.offset, b.shape, b.strides, false);
        let e = r.err().unwrap_or_else(|| panic!("{what}: accepted"));
        assert_eq!(e.kind(), b.kind, "{what}: {e}");
        assert!(e.message().contains(b.message), "{what}: {e}");
        assert_eq!(
            count(&released),
            1,
            "{what}: owner released {} times",
            count(&released)
        );
    }
}

#[test]
fn null_data_for_a_non_empty_array_is_an_error() {
    // Refused before any element is read.
    let (e, released) =
        owned_by(std::ptr::null_mut(), ()).array(Type::int32(), 0, &[2], &[4], false);
    let e = e.unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, "null data");
    assert_eq!(count(&released), 1);
}

static C_RELEASES: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn c_release(object: *mut c_void) {
    // SAFETY: every object the tests below pass is `Box::into_raw` of a
    // `Box<Vec<i32>>`, and dynd calls this once per object.
    drop(unsafe { Box::from_raw(object.cast::<Vec<i32>>()) });
    C_RELEASES.fetch_add(1, Ordering::SeqCst);
}

/// A read-only int32 array over `values`, moved into a box that dynd
/// owns and releases through [`c_release`].
///
/// # Safety
/// 1. Each element `shape` and (byte) `strides` reach is inside `values`.
unsafe fn c_owned_int32(
    values: Vec<i32>,
    shape: &[usize],
    strides: &[isize],
) -> dynd::Result<Array> {
    let mut v = Box::new(values);
    let data = v.as_mut_ptr().cast::<u8>();
    let object = Box::into_raw(v).cast::<c_void>();
    // SAFETY: `data` is the boxed vector's buffer, which stays put (the
    // vector is not touched again) until c_release(object) frees it; what
    // the array reaches lies inside it (1).
    unsafe {
        Array::from_external_c(
            Type::int32(),
            data,
            shape,
            strides,
            object,
            Some(c_release),
            false,
        )
    }
}

#[test]
fn c_owners_are_released_once_on_success_and_failure() {
    let before = C_RELEASES.load(Ordering::SeqCst);
    // SAFETY: 3 int32 in the vector, 4 bytes apart.
    let a = unsafe { c_owned_int32(vec![10, 20, 30], &[3], &[4]) }.unwrap();
    let v2 = a.index(&[Index::slice(Some(1), None, 1)]).unwrap();
    drop(a);
    assert_eq!(v2.to_json(), "[20,30]");
    drop(v2);
    assert_eq!(C_RELEASES.load(Ordering::SeqCst), before + 1);

    // SAFETY: refused (strides of the wrong length) before any read; the
    // object is released all the same.
    let e = unsafe { c_owned_int32(vec![1], &[1], &[]) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(C_RELEASES.load(Ordering::SeqCst), before + 2);

    // No release callback: borrowed memory that outlives the array.
    let keep = [5i32, 6];
    // SAFETY: `keep` outlives the array; it is never written (read-only).
    let a = unsafe {
        Array::from_external_c(
            Type::int32(),
            keep.as_ptr() as *mut u8,
            &[2],
            &[4],
            std::ptr::null_mut(),
            None,
            false,
        )
    }
    .unwrap();
    assert_eq!(a.to_json(), "[5,6]");
}

#[test]
fn from_vec_is_zero_copy_for_every_builtin_scalar() {
    fn check<T: dynd::types::NativeType + PartialEq + std::fmt::Debug>(v: Vec<T>, json: &str) {
        let n = v.len();
        let first = v.as_ptr() as *mut u8;
        let a = Array::from_vec(v, &[n]).unwrap();
        assert_eq!(a.data_ptr(), first, "{}: the vector's own buffer", T::TYPE);
        assert_eq!(a.tp().to_string(), format!("{n} * {}", T::TYPE));
        assert!(a.is_writable());
        assert_eq!(a.to_json(), json, "{}", T::TYPE);
        let b = Array::from(a.index(&[0.into()]).unwrap().as_scalar::<T>().unwrap());
        assert_eq!(
            b.as_scalar::<T>().unwrap(),
            a.index(&[0.into()]).unwrap().as_scalar::<T>().unwrap()
        );
    }
    check(vec![true, false], "[true,false]");
    check(vec![-1i8, 2], "[-1,2]");
    check(vec![-1i16, 2], "[-1,2]");
    check(vec![-1i32, 2], "[-1,2]");
    check(vec![-1i64, 2], "[-1,2]");
    check(vec![-1i128, i128::MAX], &format!("[-1,{}]", i128::MAX));
    check(vec![1u8, 255], "[1,255]");
    check(vec![1u16, 2], "[1,2]");
    check(vec![1u32, 2], "[1,2]");
    check(vec![1u64, u64::MAX], &format!("[1,{}]", u64::MAX));
    check(vec![1u128, 2], "[1,2]");
    check(vec![f16::from_f32(0.5), f16::from_f32(-2.0)], "[0.5,-2.0]");
    check(vec![0.5f32, -2.0], "[0.5,-2.0]");
    check(vec![0.5f64, -2.0], "[0.5,-2.0]");
    check(vec![Complex::new(1.0f32, -2.0)], "[[1.0,-2.0]]");
    check(vec![Complex::new(1.0f64, -2.0)], "[[1.0,-2.0]]");
}

#[test]
fn from_vec_shapes() {
    let a = Array::from_vec((0..24).collect::<Vec<i32>>(), &[2, 3, 4]).unwrap();
    assert_eq!(a.tp().to_string(), "2 * 3 * 4 * int32");
    assert_eq!(
        a.index(&[1.into(), 2.into(), 3.into()])
            .unwrap()
            .as_scalar::<i32>()
            .unwrap(),
        23
    );
    // Writable, and the vector's memory is what is written.
    a.index(&[0.into(), 0.into(), 0.into()])
        .unwrap()
        .set_scalar(-5i32)
        .unwrap();
    assert_eq!(
        a.index(&[0.into(), 0.into(), 0.into()])
            .unwrap()
            .as_scalar::<i32>()
            .unwrap(),
        -5
    );
    let rev = a.index(&[Index::slice(None, None, -1)]).unwrap();
    assert_eq!(
        rev.index(&[0.into(), 0.into(), 0.into()])
            .unwrap()
            .as_scalar::<i32>()
            .unwrap(),
        12
    );
    drop(a);
    assert_eq!(
        rev.index(&[1.into(), 0.into(), 0.into()])
            .unwrap()
            .as_scalar::<i32>()
            .unwrap(),
        -5
    );

    let s = Array::from_vec(vec![3.5f64], &[]).unwrap();
    assert_eq!(s.tp().to_string(), "float64");
    assert_eq!(s.to_json(), "3.5");
    let e = Array::from_vec(Vec::<f64>::new(), &[0, 5]).unwrap();
    assert_eq!(e.to_json(), "[]");
    assert_eq!(e.tp().to_string(), "0 * 5 * float64");

    for (len, shape) in [
        (3usize, &[2usize, 2][..]),
        (4, &[]),
        (0, &[1]),
        (2, &[usize::MAX, 2]),
    ] {
        let e = Array::from_vec(vec![0u8; len], shape).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{len} {shape:?}: {e}");
        assert!(e.message().contains(&format!("{shape:?}")), "{e}");
    }
}

#[test]
fn from_slice_and_from_impls_copy() {
    let v: Vec<f64> = (0..6).map(f64::from).collect();
    let a = Array::from_slice(&v, &[3, 2]).unwrap();
    assert_ne!(a.data_ptr(), v.as_ptr() as *mut u8);
    assert_eq!(a.to_json(), "[[0.0,1.0],[2.0,3.0],[4.0,5.0]]");
    assert_eq!(
        Array::from_slice(&v, &[4]).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let b = Array::from(&v[1..4]);
    assert_eq!(b.tp().to_string(), "3 * float64");
    assert_eq!(b.to_json(), "[1.0,2.0,3.0]");
    let bools = Array::from(&[true, false, true][..]);
    assert_eq!(bools.to_json(), "[true,false,true]");
    let empty = Array::from(&[] as &[i16]);
    assert_eq!(empty.tp().to_string(), "0 * int16");
    let c = Array::from(v);
    assert_eq!(c.to_json(), "[0.0,1.0,2.0,3.0,4.0,5.0]");
    assert_eq!(
        format!("{c}"),
        r#"array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], type="6 * float64")"#
    );
}
