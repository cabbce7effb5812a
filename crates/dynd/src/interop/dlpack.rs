//! DLPack 1.x (`DLManagedTensorVersioned`): fixed-dim arrays of numeric
//! builtins out to other libraries and in from them, zero-copy both ways
//! (DESIGN §12).
//!
//! - [`Array::to_dlpack`] hands out a `*mut DLManagedTensorVersioned` over
//!   the array's data. The tensor holds a reference to the array (so the
//!   data lives as long as the tensor); its deleter drops that reference.
//!   Shape and strides are always filled, strides in elements; a read-only
//!   array sets [`DLPACK_FLAG_BITMASK_READ_ONLY`].
//! - [`Array::from_dlpack`] takes ownership of a producer's tensor: the
//!   array's data is held by an external memory block whose release runs
//!   the producer's deleter exactly once — when the last array or view over
//!   the data is gone, or before `from_dlpack` returns an error. A tensor
//!   flagged read-only imports as a read-only array, which refuses
//!   assignment.
//!
//! Element types: `bool`, the signed and unsigned integers (8 to 128
//! bits), `float16`, `bfloat16`, `float32`, `float64`,
//! `complex[float32]`, `complex[float64]` — DLPack codes `kDLBool`,
//! `kDLInt`, `kDLUInt`, `kDLFloat`, `kDLBfloat`, `kDLComplex` with one
//! lane. The device must be the CPU (or pinned host memory: `kDLCUDAHost`,
//! `kDLROCMHost`).
//!
//! # Why the ABI by hand
//! The DLPack ABI is five `#[repr(C)]` structs and a few constants, written
//! here from `dlpack.h` 1.1 with compile-time layout checks. The `dlpark`
//! crate wraps the same structs, but its safe tensor and ownership types
//! would sit between dynd's memory blocks and the producer's deleter (which
//! dynd needs to run itself, from an external block), and its optional
//! `pyo3` feature pins a pyo3 version that dynd's Python package would have
//! to follow. The C header `dynd.h` declares the same structs for C
//! callers, so the layouts live in two places that are checked against
//! each other by the C tests.
//!
//! ```
//! use dynd::Array;
//! let a = Array::from_json("2 * 3 * float64", "[[1, 2, 3], [4, 5, 6]]").unwrap();
//! let t = a.to_dlpack().unwrap();
//! // SAFETY: `t` is a live tensor from to_dlpack, handed over once.
//! let b = unsafe { Array::from_dlpack(t) }.unwrap();
//! assert_eq!(b.to_json(), "[[1.0,2.0,3.0],[4.0,5.0,6.0]]");
//! assert_eq!(b.data_ptr(), a.data_ptr()); // the same bytes: no copy
//! ```

use crate::array::Array;
use crate::error::{Error, Result};
use crate::memblock::DeviceId;
use crate::types::{BuiltinType, Type};
use std::ffi::c_void;
use std::mem::{offset_of, size_of};
use std::ptr::NonNull;

/// The DLPack major version this module speaks.
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// The DLPack minor version this module writes.
pub const DLPACK_MINOR_VERSION: u32 = 1;
/// Flag: the tensor's data must not be written.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
/// Flag: the producer made a copy for this tensor.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;

/// `DLDeviceType` values (`dlpack.h`).
pub mod device {
    /// `kDLCPU`: host memory.
    pub const CPU: i32 = 1;
    /// `kDLCUDA`
    pub const CUDA: i32 = 2;
    /// `kDLCUDAHost`: pinned host memory, readable by the CPU.
    pub const CUDA_HOST: i32 = 3;
    /// `kDLOpenCL`
    pub const OPENCL: i32 = 4;
    /// `kDLVulkan`
    pub const VULKAN: i32 = 7;
    /// `kDLMetal`
    pub const METAL: i32 = 8;
    /// `kDLVPI`
    pub const VPI: i32 = 9;
    /// `kDLROCM`
    pub const ROCM: i32 = 10;
    /// `kDLROCMHost`: pinned host memory, readable by the CPU.
    pub const ROCM_HOST: i32 = 11;
    /// `kDLExtDev`
    pub const EXT_DEV: i32 = 12;
    /// `kDLCUDAManaged`
    pub const CUDA_MANAGED: i32 = 13;
    /// `kDLOneAPI`
    pub const ONE_API: i32 = 14;
    /// `kDLWebGPU`
    pub const WEBGPU: i32 = 15;
    /// `kDLHexagon`
    pub const HEXAGON: i32 = 16;
    /// `kDLMAIA`
    pub const MAIA: i32 = 17;

    /// The `dlpack.h` name of a device type (`"kDLCUDA"`), or `None`.
    pub fn name(device_type: i32) -> Option<&'static str> {
        Some(match device_type {
            CPU => "kDLCPU",
            CUDA => "kDLCUDA",
            CUDA_HOST => "kDLCUDAHost",
            OPENCL => "kDLOpenCL",
            VULKAN => "kDLVulkan",
            METAL => "kDLMetal",
            VPI => "kDLVPI",
            ROCM => "kDLROCM",
            ROCM_HOST => "kDLROCMHost",
            EXT_DEV => "kDLExtDev",
            CUDA_MANAGED => "kDLCUDAManaged",
            ONE_API => "kDLOneAPI",
            WEBGPU => "kDLWebGPU",
            HEXAGON => "kDLHexagon",
            MAIA => "kDLMAIA",
            _ => return None,
        })
    }
}

/// `DLDataTypeCode` values (`dlpack.h`).
pub mod code {
    /// `kDLInt`: signed integers.
    pub const INT: u8 = 0;
    /// `kDLUInt`: unsigned integers.
    pub const UINT: u8 = 1;
    /// `kDLFloat`: IEEE floats.
    pub const FLOAT: u8 = 2;
    /// `kDLOpaqueHandle`
    pub const OPAQUE_HANDLE: u8 = 3;
    /// `kDLBfloat`: bfloat16.
    pub const BFLOAT: u8 = 4;
    /// `kDLComplex`: two floats, real then imaginary.
    pub const COMPLEX: u8 = 5;
    /// `kDLBool`: one byte per value.
    pub const BOOL: u8 = 6;
}

/// `DLPackVersion`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLPackVersion {
    /// Major version: a consumer refuses a tensor of another major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

/// `DLDevice`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLDevice {
    /// A `DLDeviceType` value ([`device`]); a C enum, so an `int`.
    pub device_type: i32,
    /// The device's index among devices of its type.
    pub device_id: i32,
}

/// `DLDataType`: `lanes` values of `bits` bits of kind `code`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLDataType {
    /// A `DLDataTypeCode` value ([`code`]).
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes (1 for scalars; vector types have more).
    pub lanes: u16,
}

/// `DLTensor`: the strided view of the data.
#[repr(C)]
#[derive(Debug)]
pub struct DLTensor {
    /// The data's base pointer; the first element is at `data + byte_offset`.
    pub data: *mut c_void,
    /// Where the data lives.
    pub device: DLDevice,
    /// Number of dims.
    pub ndim: i32,
    /// The element type.
    pub dtype: DLDataType,
    /// `ndim` dim sizes.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or NULL for C order.
    pub strides: *mut i64,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// `DLManagedTensorVersioned`: a tensor with its owner and deleter.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// The DLPack version the producer wrote.
    pub version: DLPackVersion,
    /// The producer's context (for its deleter).
    pub manager_ctx: *mut c_void,
    /// Frees the tensor (called once by its consumer), or NULL.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_BITMASK_*` bits.
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: DLTensor,
}

// The layouts of dlpack.h on LP64 and 32-bit targets alike.
const _: () = assert!(size_of::<DLPackVersion>() == 8);
const _: () = assert!(size_of::<DLDevice>() == 8);
const _: () = assert!(size_of::<DLDataType>() == 4);
const _: () = assert!(offset_of!(DLTensor, device) == size_of::<usize>());
const _: () = assert!(offset_of!(DLTensor, ndim) == size_of::<usize>() + 8);
const _: () = assert!(offset_of!(DLTensor, dtype) == size_of::<usize>() + 12);
const _: () = assert!(offset_of!(DLTensor, shape) == size_of::<usize>() + 16);
const _: () = assert!(offset_of!(DLManagedTensorVersioned, manager_ctx) == 8);
const _: () = assert!(offset_of!(DLManagedTensorVersioned, flags) == 8 + 2 * size_of::<usize>());
const _: () =
    assert!(offset_of!(DLManagedTensorVersioned, dl_tensor) == 16 + 2 * size_of::<usize>());

/// The DLPack data type of a builtin, or `None` for void.
pub fn dl_data_type(b: BuiltinType) -> Option<DLDataType> {
    let bits = |size: usize| u8::try_from(size * 8).ok();
    let scalar = |code, size| {
        bits(size).map(|bits| DLDataType {
            code,
            bits,
            lanes: 1,
        })
    };
    let size = b.data_size();
    let code = crate::with_native!(b, bool => |T| code::BOOL)
        .or_else(|| crate::with_native!(b, signed => |T| code::INT))
        .or_else(|| crate::with_native!(b, unsigned => |T| code::UINT))
        .or_else(|| crate::with_native!(b, ieee => |T| code::FLOAT))
        .or_else(|| {
            crate::with_native!(b, half => |T| if b == BuiltinType::BFloat16 {
                code::BFLOAT
            } else {
                code::FLOAT
            })
        })
        .or_else(|| crate::with_native!(b, complex => |T| code::COMPLEX))?;
    scalar(code, size)
}

/// The builtin type of a DLPack data type, or `None`.
pub fn builtin_of(dt: DLDataType) -> Option<BuiltinType> {
    BuiltinType::ALL
        .into_iter()
        .find(|&b| dl_data_type(b) == Some(dt))
}

/// How a device shows in messages: `kDLCUDA:1 (device_type 2)`.
fn show_device(d: DLDevice) -> String {
    match device::name(d.device_type) {
        Some(name) => format!("{name}:{} (device_type {})", d.device_id, d.device_type),
        None => format!(
            "unknown device_type {} (device_id {})",
            d.device_type, d.device_id
        ),
    }
}

/// What a tensor exported by [`Array::to_dlpack`] owns. The managed tensor
/// comes first, so the pointer handed out is the pointer to this box.
#[repr(C)]
struct Exported {
    managed: DLManagedTensorVersioned,
    /// The reference that keeps the data alive.
    array: Array,
    /// `ndim` sizes, then `ndim` strides.
    dims: Box<[i64]>,
}

/// The deleter of an exported tensor: drops the box, and so the array
/// reference.
///
/// # Safety
/// 1. `t` is NULL or a tensor made by [`Array::to_dlpack`], not deleted yet.
unsafe extern "C" fn delete_exported(t: *mut DLManagedTensorVersioned) {
    if t.is_null() {
        return;
    }
    // Dropping an array never panics past this point in practice, but no
    // unwinding may cross the C ABI: a panic is caught and dropped.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: (1) `t` is the pointer of a Box<Exported> (managed is
        // its first field, repr(C)) leaked by to_dlpack and freed once here.
        drop(unsafe { Box::from_raw(t.cast::<Exported>()) });
    }));
}

/// Owns an imported tensor until its deleter runs (once, on drop).
struct ImportedTensor(NonNull<DLManagedTensorVersioned>);

// SAFETY: the DLPack contract lets a consumer call the deleter from any
// thread, once; ImportedTensor is the only owner of the pointer.
unsafe impl Send for ImportedTensor {}

impl Drop for ImportedTensor {
    fn drop(&mut self) {
        // SAFETY: the tensor is live until its deleter runs, which happens
        // here, once (this value owns the pointer and is dropped once).
        unsafe {
            if let Some(deleter) = (*self.0.as_ptr()).deleter {
                deleter(self.0.as_ptr());
            }
        }
    }
}

impl Array {
    /// A DLPack tensor over this array's data, without copying (see the
    /// [module docs](crate::interop::dlpack)). The tensor holds a reference
    /// to the array; the consumer calls its deleter once, which drops it.
    ///
    /// # Errors
    /// - [`Type`](crate::ErrorKind::Type): a dim that is not fixed, or an
    ///   element type that is not a numeric builtin (strings, options,
    ///   structs, void).
    /// - [`InvalidArgument`](crate::ErrorKind::InvalidArgument): a byte
    ///   stride that is not a multiple of the element size (DLPack strides
    ///   count elements), or more dims than DLPack's `int32` holds.
    pub fn to_dlpack(&self) -> Result<*mut DLManagedTensorVersioned> {
        let (shape, byte_strides, elem) = Array::strided_layout(self)?;
        let b = elem.as_builtin().ok_or_else(|| {
            Error::type_error(format!(
                "to_dlpack: the element type {elem} of {} is not a numeric builtin",
                self.tp()
            ))
        })?;
        let dtype = dl_data_type(b).ok_or_else(|| {
            Error::type_error(format!(
                "to_dlpack: {b:?} has no DLPack data type (array {})",
                self.tp()
            ))
        })?;
        let size = b.data_size() as isize;
        let ndim = shape.len();
        let mut dims = Vec::with_capacity(2 * ndim);
        dims.extend(shape.iter().map(|&n| n as i64));
        for (k, &s) in byte_strides.iter().enumerate() {
            if s % size != 0 {
                return Err(Error::invalid_argument(format!(
                    "to_dlpack: the stride {s} bytes of dim {k} of {} is not a multiple of the \
                     element size {size}; DLPack strides count elements (copy() the array first)",
                    self.tp()
                )));
            }
            dims.push((s / size) as i64);
        }
        let ndim32 = i32::try_from(ndim).map_err(|_| {
            Error::invalid_argument(format!("to_dlpack: {ndim} dims do not fit DLPack's int32"))
        })?;
        let flags = if self.is_writable() {
            0
        } else {
            DLPACK_FLAG_BITMASK_READ_ONLY
        };
        let mut dims = dims.into_boxed_slice();
        let shape_ptr = dims.as_mut_ptr();
        // SAFETY: `ndim <= dims.len()`: the strides start there (for ndim 0
        // this is the slice's own dangling-but-aligned end, never read).
        let strides_ptr = unsafe { shape_ptr.add(ndim) };
        let boxed = Box::new(Exported {
            managed: DLManagedTensorVersioned {
                version: DLPackVersion {
                    major: DLPACK_MAJOR_VERSION,
                    minor: DLPACK_MINOR_VERSION,
                },
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_exported),
                flags,
                dl_tensor: DLTensor {
                    data: self.data_ptr().cast(),
                    device: match self.device() {
                        DeviceId::Cpu => DLDevice {
                            device_type: device::CPU,
                            device_id: 0,
                        },
                        DeviceId::Cuda(n) => DLDevice {
                            device_type: device::CUDA,
                            device_id: n as i32,
                        },
                    },
                    ndim: ndim32,
                    dtype,
                    shape: shape_ptr,
                    strides: strides_ptr,
                    byte_offset: 0,
                },
            },
            array: self.clone(),
            // Moving the box does not move its heap slice: the pointers stay.
            dims,
        });
        let raw = Box::into_raw(boxed);
        // SAFETY: `raw` is the fresh box; manager_ctx names it for anyone
        // who looks (our deleter does not need it).
        unsafe { (*raw).managed.manager_ctx = raw.cast() };
        Ok(raw.cast::<DLManagedTensorVersioned>())
    }

    /// An array over a DLPack tensor's data, taking ownership of the
    /// tensor: its deleter runs exactly once — when the last array or view
    /// over the data is gone, or before this returns an error. A tensor
    /// flagged read-only gives a read-only array.
    ///
    /// # Errors
    /// - [`InvalidArgument`](crate::ErrorKind::InvalidArgument): `t` is
    ///   null; a major version other than 1; a device other than host
    ///   memory or a CUDA device (named in the message); a negative `ndim` or dim size; a null
    ///   shape; strides that overflow in bytes or a misaligned data pointer.
    /// - [`Type`](crate::ErrorKind::Type): a data type dynd does not have
    ///   (the message names its code, bits and lanes).
    ///
    /// # Safety
    /// 1. `t` is null or a live `DLManagedTensorVersioned` whose ownership
    ///    passes to this call: nobody else calls its deleter.
    /// 2. Its data, shape and strides are valid as DLPack says until its
    ///    deleter runs (and writable, unless flagged read-only).
    pub unsafe fn from_dlpack(t: *mut DLManagedTensorVersioned) -> Result<Array> {
        let t = NonNull::new(t)
            .ok_or_else(|| Error::invalid_argument("from_dlpack: the tensor pointer is NULL"))?;
        // From here on, the tensor is ours: dropping `owner` deletes it.
        let owner = ImportedTensor(t);
        // SAFETY: (1) live until its deleter runs, which `owner` does later.
        let m = unsafe { &*t.as_ptr() };
        if m.version.major != DLPACK_MAJOR_VERSION {
            return Err(Error::invalid_argument(format!(
                "from_dlpack: DLPack version {}.{} is not supported (major version {} only)",
                m.version.major, m.version.minor, DLPACK_MAJOR_VERSION
            )));
        }
        let dl = &m.dl_tensor;
        let on = match dl.device.device_type {
            device::CPU | device::CUDA_HOST | device::ROCM_HOST => DeviceId::Cpu,
            device::CUDA => DeviceId::Cuda(u32::try_from(dl.device.device_id).map_err(|_| {
                Error::invalid_argument(format!(
                    "from_dlpack: negative CUDA device id {}",
                    dl.device.device_id
                ))
            })?),
            _ => {
                return Err(Error::invalid_argument(format!(
                    "from_dlpack: the tensor is on device {}; only host memory (kDLCPU, \
                     kDLCUDAHost) and CUDA device memory (kDLCUDA) can be imported",
                    show_device(dl.device)
                )));
            }
        };
        let b = builtin_of(dl.dtype).ok_or_else(|| {
            Error::type_error(format!(
                "from_dlpack: unsupported DLPack data type (code {}, bits {}, lanes {})",
                dl.dtype.code, dl.dtype.bits, dl.dtype.lanes
            ))
        })?;
        let ndim = usize::try_from(dl.ndim).map_err(|_| {
            Error::invalid_argument(format!("from_dlpack: negative ndim {}", dl.ndim))
        })?;
        if ndim > 0 && dl.shape.is_null() {
            return Err(Error::invalid_argument(format!(
                "from_dlpack: the shape pointer is NULL for {ndim} dims"
            )));
        }
        let read = |p: *const i64| -> &[i64] {
            if ndim == 0 {
                &[]
            } else {
                // SAFETY: (2) a non-null shape or strides array of ndim
                // values, alive while `owner` is.
                unsafe { std::slice::from_raw_parts(p, ndim) }
            }
        };
        let dims = read(dl.shape);
        let mut shape = Vec::with_capacity(ndim);
        for (k, &n) in dims.iter().enumerate() {
            shape.push(usize::try_from(n).map_err(|_| {
                Error::invalid_argument(format!("from_dlpack: dim {k} has negative size {n}"))
            })?);
        }
        let size = b.data_size() as i64;
        let overflow = |k: usize, s: i64| {
            Error::invalid_argument(format!(
                "from_dlpack: stride {s} of dim {k} overflows in bytes"
            ))
        };
        let mut strides = vec![0isize; ndim];
        if dl.strides.is_null() {
            // NULL strides (DLPack < 1.2): C order.
            let mut s: isize = size as isize;
            for k in (0..ndim).rev() {
                strides[k] = s;
                s = isize::try_from(shape[k])
                    .ok()
                    .and_then(|n| s.checked_mul(n.max(1)))
                    .ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "from_dlpack: shape {shape:?} spans more bytes than an address holds"
                        ))
                    })?;
            }
        } else {
            for (k, &s) in read(dl.strides).iter().enumerate() {
                strides[k] = s
                    .checked_mul(size)
                    .and_then(|v| isize::try_from(v).ok())
                    .ok_or_else(|| overflow(k, s))?;
            }
        }
        let offset = usize::try_from(dl.byte_offset).map_err(|_| {
            Error::invalid_argument(format!(
                "from_dlpack: byte_offset {} does not fit an address",
                dl.byte_offset
            ))
        })?;
        let data = dl.data.cast::<u8>().wrapping_add(offset);
        let writable = m.flags & DLPACK_FLAG_BITMASK_READ_ONLY == 0;
        // SAFETY: (2) the tensor's elements are valid at these byte strides
        // from `data` (its byte_offset applied), in the memory of `on`,
        // writable unless flagged read-only, until `owner` runs the deleter
        // — which the block does once, when the last array over the data is
        // gone; a device block keeps the host from reading device memory.
        unsafe {
            Array::from_foreign(
                on,
                Type::builtin(b),
                data,
                &shape,
                &strides,
                move || drop(owner),
                writable,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_numeric_builtin_round_trips_its_data_type() {
        for b in BuiltinType::ALL {
            match dl_data_type(b) {
                Some(dt) => {
                    assert_eq!(builtin_of(dt), Some(b), "{b:?}");
                    assert_eq!(dt.bits as usize, 8 * b.data_size(), "{b:?}");
                    assert_eq!(dt.lanes, 1);
                }
                None => assert_eq!(b, BuiltinType::Void),
            }
        }
        let bf = dl_data_type(BuiltinType::BFloat16).unwrap();
        assert_eq!((bf.code, bf.bits), (code::BFLOAT, 16));
        let c = dl_data_type(BuiltinType::Complex64).unwrap();
        assert_eq!((c.code, c.bits), (code::COMPLEX, 64));
        let dt = DLDataType {
            code: code::FLOAT,
            bits: 32,
            lanes: 4,
        };
        assert_eq!(builtin_of(dt), None);
    }

    #[test]
    fn devices_show_their_dlpack_names() {
        let d = DLDevice {
            device_type: device::CUDA,
            device_id: 1,
        };
        assert_eq!(show_device(d), "kDLCUDA:1 (device_type 2)");
        let d = DLDevice {
            device_type: 99,
            device_id: 0,
        };
        assert!(show_device(d).contains("99"));
    }

    #[test]
    fn a_device_array_exports_its_device() {
        let _dev = crate::exec::testing::HostBackedDevice::install(31);
        let d = Array::from(vec![1i64, 2, 3])
            .to_device(DeviceId::Cuda(31))
            .unwrap();
        let t = d.to_dlpack().unwrap();
        // SAFETY: `t` is a live tensor made by to_dlpack, deleted once below.
        unsafe {
            let dev = (*t).dl_tensor.device;
            assert_eq!((dev.device_type, dev.device_id), (device::CUDA, 31));
            assert_eq!((*t).dl_tensor.data, d.data_ptr().cast());
            delete_exported(t);
        }
    }
}
