//! DLPack 1.x export and import (`Array::to_dlpack`, `Array::from_dlpack`):
//! zero-copy round trips of every numeric builtin in any strides, the
//! read-only flag both ways, byte offsets, and the deleter of an imported
//! tensor run exactly once — after the last view is gone, or when the
//! import fails (wrong device, data type or version); CUDA tensors come in
//! as device arrays.

use crate::common;
use common::assert_error;

use dynd::interop::dlpack::{
    DLDataType, DLDevice, DLManagedTensorVersioned, DLPACK_FLAG_BITMASK_READ_ONLY, DLPackVersion,
    DLTensor, code, device,
};
use dynd::kernels::assign::ErrorMode;
use dynd::types::NativeType;
use dynd::{Array, ErrorKind, Index};
use half::{bf16, f16};
use num_complex::Complex;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Export then import; the imported array has the same type and values
/// over the same bytes.
fn round_trip<T: NativeType>(values: Vec<T>, shape: &[usize]) {
    let a = Array::from_vec(values.clone(), shape).unwrap();
    let t = a.to_dlpack().unwrap();
    // SAFETY: a live tensor from to_dlpack, handed over once.
    let b = unsafe { Array::from_dlpack(t) }.unwrap();
    assert_eq!(b.tp(), a.tp());
    assert_eq!(b.data_ptr(), a.data_ptr(), "no copy");
    assert_eq!(b.to_vec::<T>().unwrap(), values);
    assert!(b.is_writable());
}

#[test]
fn every_numeric_builtin_round_trips_without_a_copy() {
    round_trip(vec![true, false, true, true], &[2, 2]);
    round_trip(vec![1i8, -2, 3], &[3]);
    round_trip(vec![1i16, -2, 3, 4, 5, 6], &[2, 3]);
    round_trip(vec![1i32, -2, 3, 4], &[4]);
    round_trip(vec![1i64, -2, 3, 4], &[2, 1, 2]);
    round_trip(vec![1i128, -2], &[2]);
    round_trip(vec![1u8, 2, 255], &[3]);
    round_trip(vec![1u16, 2], &[2]);
    round_trip(vec![1u32, 2], &[1, 2]);
    round_trip(vec![1u64, u64::MAX], &[2]);
    round_trip(vec![1u128, 2], &[2]);
    round_trip(vec![f16::from_f32(1.5), f16::from_f32(-2.0)], &[2]);
    round_trip(vec![bf16::from_f32(1.5), bf16::from_f32(-2.0)], &[2]);
    round_trip(vec![1.5f32, -2.0], &[2]);
    round_trip(vec![1.5f64, -2.0, 3.25], &[3]);
    round_trip(vec![Complex::new(1.0f32, 2.0)], &[1]);
    round_trip(
        vec![Complex::new(1.0f64, 2.0), Complex::new(-3.0, 4.0)],
        &[2],
    );
    // 0-d and empty arrays.
    round_trip(vec![7.0f64], &[]);
    round_trip(Vec::<i32>::new(), &[0, 3]);
}

#[test]
fn exported_strides_count_elements_and_are_always_filled() {
    let a = Array::from_vec((0..12).collect::<Vec<i32>>(), &[3, 4]).unwrap();
    // Every other column, rows reversed: strides -4 and 2 elements.
    let v = a
        .index(&[Index::slice(None, None, -1), Index::slice(None, None, 2)])
        .unwrap();
    let t = v.to_dlpack().unwrap();
    // SAFETY: a live tensor from to_dlpack.
    let m = unsafe { &*t };
    assert_eq!(m.version.major, 1);
    assert_eq!(m.flags & DLPACK_FLAG_BITMASK_READ_ONLY, 0);
    let dl = &m.dl_tensor;
    assert_eq!(dl.ndim, 2);
    assert_eq!(dl.device.device_type, device::CPU);
    assert_eq!(
        (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes),
        (code::INT, 32, 1)
    );
    // SAFETY: ndim values each, alive until the deleter runs.
    let (shape, strides) = unsafe {
        (
            std::slice::from_raw_parts(dl.shape, 2).to_vec(),
            std::slice::from_raw_parts(dl.strides, 2).to_vec(),
        )
    };
    assert_eq!(shape, [3, 2]);
    assert_eq!(strides, [-4, 2]);
    assert_eq!(dl.data.cast::<u8>(), v.data_ptr());
    // The tensor keeps the data alive after every dynd handle is gone.
    drop((a, v));
    // SAFETY: a live tensor, handed over once.
    let b = unsafe { Array::from_dlpack(t) }.unwrap();
    assert_eq!(b.to_json(), "[[8,10],[4,6],[0,2]]");
}

#[test]
fn read_only_arrays_export_with_the_flag_and_import_read_only() {
    let a = Array::from_vec(vec![1.0f64, 2.0], &[2])
        .unwrap()
        .read_only();
    let t = a.to_dlpack().unwrap();
    // SAFETY: a live tensor from to_dlpack.
    assert_ne!(unsafe { (*t).flags } & DLPACK_FLAG_BITMASK_READ_ONLY, 0);
    // SAFETY: handed over once.
    let b = unsafe { Array::from_dlpack(t) }.unwrap();
    assert!(!b.is_writable());
    let src = Array::from_vec(vec![5.0f64, 6.0], &[2]).unwrap();
    let e = b.assign(&src, ErrorMode::Default).unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, "read-only");
    assert!(b.assign_json("[7, 8]").is_err());
    assert_eq!(a.to_json(), "[1.0,2.0]");
}

#[test]
fn arrays_dlpack_cannot_express_are_typed_errors() {
    let ragged = Array::from_json("2 * var * int32", "[[1], [2, 3]]").unwrap();
    let e = ragged.to_dlpack().unwrap_err();
    assert_error(&e, ErrorKind::Type, "var");

    let strings = Array::from_json("2 * string", r#"["a", "b"]"#).unwrap();
    let e = strings.to_dlpack().unwrap_err();
    assert_error(&e, ErrorKind::Type, "string");

    // complex[float32] (8 bytes) at a 12-byte stride: not whole elements.
    let c = common::complex_field_at_a_12_byte_stride();
    let e = c.to_dlpack().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(
        e.message().contains("12") && e.message().contains("dim 0"),
        "{e}"
    );
    // A copy exports.
    let t = c.copy().unwrap().to_dlpack().unwrap();
    // SAFETY: handed over once.
    let back = unsafe { Array::from_dlpack(t) }.unwrap();
    assert_eq!(back.to_json(), c.to_json());
}

/// A tensor built by hand, as a foreign producer would: its buffer, shape
/// and strides live in one box, freed by a deleter that counts its calls.
#[repr(C)]
struct Foreign {
    managed: DLManagedTensorVersioned,
    buffer: Vec<f64>,
    dims: [i64; 4],
    deleted: Arc<AtomicUsize>,
}

unsafe extern "C" fn delete_foreign(t: *mut DLManagedTensorVersioned) {
    // SAFETY: `t` is the first field of a leaked Box<Foreign>, freed once.
    let f = unsafe { Box::from_raw(t.cast::<Foreign>()) };
    f.deleted.fetch_add(1, Ordering::SeqCst);
}

/// A 2 × 3 float64 tensor over 0, 1, 2, ... with the given knobs, imported
/// (or refused), and the count of the times its deleter ran.
fn imported(
    edit: impl FnOnce(&mut DLManagedTensorVersioned),
) -> (dynd::Result<Array>, Arc<AtomicUsize>) {
    let deleted = Arc::new(AtomicUsize::new(0));
    let mut f = Box::new(Foreign {
        managed: DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 0 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_foreign),
            flags: 0,
            dl_tensor: DLTensor {
                data: std::ptr::null_mut(),
                device: DLDevice {
                    device_type: device::CPU,
                    device_id: 0,
                },
                ndim: 2,
                dtype: DLDataType {
                    code: code::FLOAT,
                    bits: 64,
                    lanes: 1,
                },
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
        },
        buffer: (0..8).map(f64::from).collect(),
        dims: [2, 3, 3, 1],
        deleted: Arc::clone(&deleted),
    });
    f.managed.dl_tensor.data = f.buffer.as_mut_ptr().cast::<c_void>();
    f.managed.dl_tensor.shape = f.dims.as_mut_ptr();
    // SAFETY: the strides are the last two of the four dims.
    f.managed.dl_tensor.strides = unsafe { f.dims.as_mut_ptr().add(2) };
    edit(&mut f.managed);
    // SAFETY: a live tensor, handed over once.
    let a = unsafe { Array::from_dlpack(Box::into_raw(f).cast()) };
    (a, deleted)
}

/// Imports the tensor [`imported`] makes, hands it to `check` with the
/// deleter's count, and checks that the deleter has run once when `check`
/// is done with the array and its views.
fn accepted(
    edit: impl FnOnce(&mut DLManagedTensorVersioned),
    check: impl FnOnce(Array, &AtomicUsize),
) {
    let (a, deleted) = imported(edit);
    check(a.unwrap(), &deleted);
    assert_eq!(deleted.load(Ordering::SeqCst), 1, "deleted once");
}

#[test]
fn an_imported_tensor_is_deleted_once_after_the_last_view() {
    accepted(
        |_| {},
        |a, deleted| {
            assert_eq!(a.tp().to_string(), "2 * 3 * float64");
            assert_eq!(a.to_json(), "[[0.0,1.0,2.0],[3.0,4.0,5.0]]");
            let col = a.index(&[Index::ALL, 1.into()]).unwrap();
            drop(a);
            assert_eq!(
                deleted.load(Ordering::SeqCst),
                0,
                "a view still holds the data"
            );
            assert_eq!(col.to_json(), "[1.0,4.0]");
        },
    );
}

#[test]
fn byte_offset_and_null_strides_are_honoured() {
    accepted(
        |m| {
            m.dl_tensor.byte_offset = 16;
            m.dl_tensor.strides = std::ptr::null_mut();
        },
        |a, _| assert_eq!(a.to_json(), "[[2.0,3.0,4.0],[5.0,6.0,7.0]]"),
    );
}

#[test]
fn an_imported_read_only_tensor_refuses_assignment() {
    accepted(
        |m| m.flags = DLPACK_FLAG_BITMASK_READ_ONLY,
        |a, _| {
            assert!(!a.is_writable());
            let e = a.assign_json("[[9,9,9],[9,9,9]]").unwrap_err();
            assert!(e.message().contains("read-only"), "{e}");
            // Views stay read-only.
            let row = a.index(&[0.into()]).unwrap();
            assert!(row.assign_json("[1,2,3]").is_err());
        },
    );
}

/// Imports the tensor [`imported`] makes, which must fail with `kind` and a message containing
/// `needle`, having run the deleter once.
fn refused(edit: impl FnOnce(&mut DLManagedTensorVersioned), kind: ErrorKind, needle: &str) {
    let (a, deleted) = imported(edit);
    assert_error(&a.unwrap_err(), kind, needle);
    assert_eq!(deleted.load(Ordering::SeqCst), 1, "deleted once on failure");
}

#[test]
fn a_tensor_on_another_device_is_refused_and_deleted() {
    refused(
        |m| {
            m.dl_tensor.device = DLDevice {
                device_type: device::VULKAN,
                device_id: 1,
            }
        },
        ErrorKind::InvalidArgument,
        "kDLVulkan:1",
    );
    refused(
        |m| {
            m.dl_tensor.device = DLDevice {
                device_type: device::CUDA,
                device_id: -1,
            }
        },
        ErrorKind::InvalidArgument,
        "negative CUDA device id -1",
    );
}

#[test]
fn a_cuda_tensor_becomes_a_device_array_without_a_copy() {
    // No device is needed to import: the data stays where it is (here a
    // host buffer posing as device memory, which the host must never
    // read), and the array refuses host reads.
    accepted(
        |m| {
            m.dl_tensor.device = DLDevice {
                device_type: device::CUDA,
                device_id: 3,
            }
        },
        |a, deleted| {
            assert_eq!(a.device(), dynd::memblock::DeviceId::Cuda(3));
            assert_eq!(a.tp().to_string(), "2 * 3 * float64");
            assert!(a.to_vec::<f64>().unwrap_err().message().contains("cuda:3"));
            // Exported again, it says where it lives, and shares the data.
            let t = a.to_dlpack().unwrap();
            // SAFETY: a live tensor made by to_dlpack, handed back once.
            let b = unsafe { Array::from_dlpack(t) }.unwrap();
            assert_eq!(b.device(), dynd::memblock::DeviceId::Cuda(3));
            assert_eq!(b.data_ptr(), a.data_ptr());
            drop((a, b));
            assert_eq!(deleted.load(Ordering::SeqCst), 1);
        },
    );
}

#[test]
fn an_unsupported_data_type_is_refused_and_deleted() {
    refused(
        |m| m.dl_tensor.dtype.lanes = 4,
        ErrorKind::Type,
        "code 2, bits 64, lanes 4",
    );
    refused(
        |m| m.dl_tensor.dtype.code = code::OPAQUE_HANDLE,
        ErrorKind::Type,
        "code 3",
    );
}

#[test]
fn a_newer_major_version_is_refused_and_deleted() {
    refused(
        |m| m.version = DLPackVersion { major: 2, minor: 0 },
        ErrorKind::InvalidArgument,
        "version 2.0",
    );
}

#[test]
fn bad_shapes_are_refused_and_deleted() {
    refused(
        |m| m.dl_tensor.ndim = -1,
        ErrorKind::InvalidArgument,
        "negative ndim",
    );
    refused(
        |m| m.dl_tensor.shape = std::ptr::null_mut(),
        ErrorKind::InvalidArgument,
        "shape pointer is NULL",
    );
    refused(
        |m| m.dl_tensor.byte_offset = 3,
        ErrorKind::InvalidArgument,
        "aligned",
    );
}

#[test]
fn a_null_tensor_is_an_error() {
    // SAFETY: null is allowed.
    let e = unsafe { Array::from_dlpack(std::ptr::null_mut()) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}
