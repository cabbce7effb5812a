//! Zero-copy data in and out of Python (DESIGN §11, §12): the buffer
//! protocol both ways (NumPy, memoryview), DLPack capsules, and the Arrow
//! PyCapsule interface. The C structs come from `dynd::interop`; what is
//! here is the capsule plumbing of each protocol.

use crate::errors::{OrRaise, invalid, type_error};
use crate::pyarray::PyArray;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_schema::ffi::FFI_ArrowSchema;
use dynd::interop::dlpack::{DLManagedTensorVersioned, DLPackVersion, DLTensor};
use dynd::types::BuiltinType;
use dynd::{Array, Type};
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString, PyTuple};
use std::ffi::{CStr, c_int, c_void};

// ---- the buffer protocol, out ----

/// The buffer format of a builtin (struct module syntax), if it has one.
fn format_of(b: BuiltinType) -> Option<&'static CStr> {
    use BuiltinType::*;
    Some(match b {
        Bool => c"?",
        Int8 => c"b",
        Int16 => c"h",
        Int32 => c"i",
        Int64 => c"q",
        UInt8 => c"B",
        UInt16 => c"H",
        UInt32 => c"I",
        UInt64 => c"Q",
        Float16 => c"e",
        Float32 => c"f",
        Float64 => c"d",
        Complex64 => c"Zf",
        Complex128 => c"Zd",
        _ => return None,
    })
}

/// What a filled `Py_buffer` points at, freed by [`release_buffer`].
struct BufferInfo {
    shape: Vec<ffi::Py_ssize_t>,
    strides: Vec<ffi::Py_ssize_t>,
}

/// Shape, byte strides, element and buffer format of a strided array.
type StridedForm = (Vec<usize>, Vec<isize>, BuiltinType, &'static CStr);

/// The shape, strides and format of an array the buffer protocol can
/// describe: fixed dims over a numeric builtin.
fn strided(a: &Array) -> Result<StridedForm, String> {
    a.check_host("the buffer protocol / NumPy")
        .map_err(|e| e.message().to_string())?;
    let (shape, strides, elem) = a.strided_layout().map_err(|e| e.message().to_string())?;
    let b = elem.as_builtin().filter(|b| format_of(*b).is_some()).ok_or_else(|| {
        format!(
            "{} has no buffer-protocol / NumPy form: the element {elem} is not bool, an integer of 8 to 64 bits, a float or a complex",
            a.tp()
        )
    })?;
    let fmt = format_of(b).unwrap_or(c"B");
    Ok((shape, strides, b, fmt))
}

/// `__getbuffer__`.
///
/// # Safety
/// `view` is a `Py_buffer` for this call to fill (CPython's contract).
pub unsafe fn get_buffer(
    slf: Bound<'_, PyArray>,
    view: *mut ffi::Py_buffer,
    flags: c_int,
) -> PyResult<()> {
    if view.is_null() {
        return Err(PyBufferError::new_err("__getbuffer__ got a null view"));
    }
    let a = &slf.get().a;
    if flags & ffi::PyBUF_WRITABLE != 0 && !a.is_writable() {
        return Err(PyBufferError::new_err(format!(
            "the dynd array ({}) is read-only",
            a.tp()
        )));
    }
    let (shape, strides, b, fmt) = strided(a).map_err(PyBufferError::new_err)?;
    let itemsize = Type::builtin(b).data_size();
    let c_strides = c_order_strides(&shape, itemsize);
    if flags & ffi::PyBUF_STRIDES != ffi::PyBUF_STRIDES && strides != c_strides {
        return Err(PyBufferError::new_err(
            "the dynd array is not C-contiguous and the consumer did not ask for strides",
        ));
    }
    let len: usize = shape.iter().product::<usize>() * itemsize;
    let mut info = Box::new(BufferInfo {
        shape: shape.iter().map(|&n| n as ffi::Py_ssize_t).collect(),
        strides: strides.iter().map(|&s| s as ffi::Py_ssize_t).collect(),
    });
    // SAFETY: `view` is non-null and CPython's to fill; the shape and
    // strides live in `info` until `release_buffer` frees it, and `obj`
    // holds a reference to the array (so its data) until CPython drops it.
    unsafe {
        (*view).buf = a.data_ptr().cast();
        (*view).len = len as ffi::Py_ssize_t;
        (*view).readonly = c_int::from(!a.is_writable());
        (*view).itemsize = itemsize as ffi::Py_ssize_t;
        (*view).format = if flags & ffi::PyBUF_FORMAT != 0 {
            fmt.as_ptr().cast_mut()
        } else {
            std::ptr::null_mut()
        };
        (*view).ndim = shape.len() as c_int;
        (*view).shape = if flags & ffi::PyBUF_ND != 0 {
            info.shape.as_mut_ptr()
        } else {
            std::ptr::null_mut()
        };
        (*view).strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
            info.strides.as_mut_ptr()
        } else {
            std::ptr::null_mut()
        };
        (*view).suboffsets = std::ptr::null_mut();
        (*view).internal = Box::into_raw(info).cast();
        (*view).obj = slf.into_any().into_ptr();
    }
    Ok(())
}

fn c_order_strides(shape: &[usize], itemsize: usize) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut s = itemsize as isize;
    for i in (0..shape.len()).rev() {
        strides[i] = s;
        s *= shape[i].max(1) as isize;
    }
    strides
}

/// `__releasebuffer__`.
///
/// # Safety
/// `view` was filled by [`get_buffer`].
pub unsafe fn release_buffer(view: *mut ffi::Py_buffer) {
    // SAFETY: (caller) `internal` is the BufferInfo box `get_buffer` made,
    // freed once here (CPython calls release once per get).
    unsafe {
        if !view.is_null() && !(*view).internal.is_null() {
            drop(Box::from_raw((*view).internal.cast::<BufferInfo>()));
            (*view).internal = std::ptr::null_mut();
        }
    }
}

/// `__array__`: delegated to `dynd._numpy`, which views through the buffer
/// protocol and copies what has no NumPy view.
pub fn to_numpy<'py>(
    slf: &Bound<'py, PyArray>,
    dtype: Option<&Bound<'py, PyAny>>,
    copy: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let dev = slf.get().a.device();
    if !dev.is_cpu() {
        // As CuPy: no implicit copy from the device.
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "cannot convert an array on {dev} to NumPy implicitly: copy it to the host \
             first with a.cpu()"
        )));
    }
    let viewable = strided(&slf.get().a).is_ok();
    py.import("dynd._numpy")?
        .getattr("array_dunder")?
        .call1((slf, dtype, copy, viewable))
}

// ---- the buffer protocol, in ----

/// Holds a `Py_buffer` and releases it (with the GIL) when dynd's last
/// array over the data goes.
struct HeldBuffer(Box<ffi::Py_buffer>);

// SAFETY: the buffer is only released, once, with the GIL held (`Drop`).
unsafe impl Send for HeldBuffer {}

impl Drop for HeldBuffer {
    fn drop(&mut self) {
        // SAFETY: a live interpreter is checked first (at exit the buffer's
        // owner is gone with it); the view was filled by PyObject_GetBuffer
        // and is released once, here, with the GIL attached.
        unsafe {
            if ffi::Py_IsInitialized() != 0 {
                Python::attach(|_| ffi::PyBuffer_Release(&mut *self.0));
            }
        }
    }
}

/// The builtin of a buffer format and item size, if dynd has one.
fn builtin_of_format(format: &str, itemsize: usize) -> Option<BuiltinType> {
    use BuiltinType::*;
    let f = format.strip_prefix(['@', '=', '<']).unwrap_or(format);
    if cfg!(target_endian = "big") {
        return None;
    }
    let int = |signed: bool| -> Option<BuiltinType> {
        Some(match (signed, itemsize) {
            (true, 1) => Int8,
            (true, 2) => Int16,
            (true, 4) => Int32,
            (true, 8) => Int64,
            (false, 1) => UInt8,
            (false, 2) => UInt16,
            (false, 4) => UInt32,
            (false, 8) => UInt64,
            _ => return None,
        })
    };
    match f {
        "?" if itemsize == 1 => Some(Bool),
        "b" | "h" | "i" | "l" | "q" | "n" => int(true),
        "B" | "H" | "I" | "L" | "Q" | "N" => int(false),
        "e" if itemsize == 2 => Some(Float16),
        "f" if itemsize == 4 => Some(Float32),
        "d" if itemsize == 8 => Some(Float64),
        "Zf" if itemsize == 8 => Some(Complex64),
        "Zd" if itemsize == 16 => Some(Complex128),
        _ => None,
    }
}

/// A zero-copy dynd array over `obj`'s buffer (NumPy arrays, memoryviews,
/// `array.array`), writable when the buffer is. `None` when `obj` has no
/// buffer (or is `bytes`/`bytearray`/`str`, which are values, not arrays)
/// or, unless `strict`, when its format has no dynd type; with `strict` an
/// unknown format is a `dynd.TypeMismatchError` naming it.
pub fn from_buffer_strict(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    strict: bool,
) -> PyResult<Option<Array>> {
    if obj.is_instance_of::<PyBytes>()
        || obj.is_instance_of::<PyByteArray>()
        || obj.is_instance_of::<PyString>()
    {
        return Ok(None);
    }
    // SAFETY: `obj` is a live object.
    if unsafe { ffi::PyObject_CheckBuffer(obj.as_ptr()) } == 0 {
        return Ok(None);
    }
    let mut view = Box::new(ffi::Py_buffer::new());
    let mut writable = true;
    // SAFETY: `view` is a fresh Py_buffer; on failure the error is cleared
    // (or taken) and nothing needs releasing.
    let got = unsafe {
        if ffi::PyObject_GetBuffer(obj.as_ptr(), &mut *view, ffi::PyBUF_RECORDS) != 0 {
            drop(PyErr::take(py));
            writable = false;
            ffi::PyObject_GetBuffer(obj.as_ptr(), &mut *view, ffi::PyBUF_RECORDS_RO) == 0
        } else {
            true
        }
    };
    if !got {
        let err = PyErr::fetch(py);
        if !strict {
            return Err(err);
        }
        // NumPy refuses a buffer for datetimes and the like: say which.
        let what = match obj.getattr("dtype") {
            Ok(d) => format!("dtype {}", d.str()?),
            Err(_) => obj.get_type().name()?.to_string(),
        };
        return Err(type_error(
            py,
            format!(
                "{what} has no buffer form dynd can import ({err}); zero-copy import takes bool, 8- to 64-bit integers, float16/32/64 and complex64/128 in native byte order"
            ),
        ));
    }
    let held = HeldBuffer(view);
    let v = &*held.0;
    // SAFETY: a filled view's format is a C string when PyBUF_FORMAT was
    // asked for; shape and strides hold `ndim` values (PyBUF_STRIDES).
    let (format, shape, strides) = unsafe {
        let format = if v.format.is_null() {
            "B".to_string()
        } else {
            CStr::from_ptr(v.format).to_string_lossy().into_owned()
        };
        let nd = v.ndim.max(0) as usize;
        let shape: Vec<usize> = if v.shape.is_null() {
            vec![]
        } else {
            std::slice::from_raw_parts(v.shape, nd)
                .iter()
                .map(|&n| n as usize)
                .collect()
        };
        let strides: Vec<isize> = if v.strides.is_null() {
            c_order_strides(&shape, v.itemsize as usize)
        } else {
            std::slice::from_raw_parts(v.strides, nd).to_vec()
        };
        (format, shape, strides)
    };
    let Some(b) = builtin_of_format(&format, v.itemsize as usize) else {
        if strict {
            let dtype = match obj.getattr("dtype") {
                Ok(d) => format!("dtype {} ", d.str()?),
                Err(_) => String::new(),
            };
            return Err(type_error(
                py,
                format!(
                    "{dtype}(buffer format '{format}', item size {}) has no dynd type; zero-copy import takes bool, 8- to 64-bit integers, float16/32/64 and complex64/128 in native byte order",
                    v.itemsize
                ),
            ));
        }
        return Ok(None);
    };
    let data = v.buf.cast::<u8>();
    // SAFETY: the buffer's owner keeps `shape`/`strides` of valid `b`
    // values readable (and writable when it granted PyBUF_WRITABLE) until
    // the view is released, which `held` does when dynd's last array over
    // the data is dropped.
    unsafe {
        Array::from_external(
            Type::builtin(b),
            data,
            &shape,
            &strides,
            move || drop(held),
            writable,
        )
    }
    .map(Some)
    .or_raise(py)
}

/// [`from_buffer_strict`] without `strict`.
pub fn from_buffer(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Option<Array>> {
    from_buffer_strict(py, obj, false)
}

// ---- DLPack ----

const DLTENSOR_VERSIONED: &CStr = c"dltensor_versioned";
const USED_DLTENSOR_VERSIONED: &CStr = c"used_dltensor_versioned";
const DLTENSOR: &CStr = c"dltensor";
const USED_DLTENSOR: &CStr = c"used_dltensor";

/// DLPack < 1.0's `DLManagedTensor`, for consumers and producers that have
/// no versioned form.
#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// A capsule's destructor: runs the tensor's deleter unless a consumer
/// took it (and renamed the capsule).
unsafe extern "C" fn dlpack_capsule_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: CPython calls this with the capsule, GIL held; the pointer is
    // a tensor this module made and nobody consumed (the name says so).
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, DLTENSOR_VERSIONED.as_ptr()) == 1 {
            let t = ffi::PyCapsule_GetPointer(capsule, DLTENSOR_VERSIONED.as_ptr())
                .cast::<DLManagedTensorVersioned>();
            if let Some(d) = (*t).deleter {
                d(t);
            }
        } else if ffi::PyCapsule_IsValid(capsule, DLTENSOR.as_ptr()) == 1 {
            let t = ffi::PyCapsule_GetPointer(capsule, DLTENSOR.as_ptr()).cast::<DLManagedTensor>();
            if let Some(d) = (*t).deleter {
                d(t);
            }
        }
    }
}

/// The legacy tensor's deleter: drops the versioned tensor it wraps.
unsafe extern "C" fn delete_legacy(t: *mut DLManagedTensor) {
    // SAFETY: `t` was made by `legacy_of` (a Box); its context is the
    // versioned tensor, deleted once here.
    unsafe {
        let t = Box::from_raw(t);
        let inner = t.manager_ctx.cast::<DLManagedTensorVersioned>();
        if let Some(d) = (*inner).deleter {
            d(inner);
        }
    }
}

/// `__dlpack__`: a `dltensor_versioned` capsule (or, for a consumer that
/// gives no `max_version` or one below 1.0, a legacy `dltensor`).
pub fn dlpack_capsule<'py>(
    py: Python<'py>,
    a: &Array,
    stream: Option<&Bound<'py, PyAny>>,
    max_version: Option<(u32, u32)>,
    dl_device: Option<(i32, i32)>,
    copy: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    let here = match a.device() {
        dynd::memblock::DeviceId::Cpu => (1, 0),
        dynd::memblock::DeviceId::Cuda(n) => (2, n as i32),
    };
    // A CUDA consumer names its stream; dynd's device work has finished when
    // its calls return, so there is nothing to order on any stream.
    if here.0 == 1 && stream.is_some_and(|s| !s.is_none()) {
        return Err(invalid(
            py,
            "this dynd array lives on the CPU: __dlpack__ takes stream=None only",
        ));
    }
    if let Some((dev, id)) = dl_device
        && (dev, id) != here
    {
        return Err(PyBufferError::new_err(format!(
            "this dynd array lives on device {here:?}; cannot export to device ({dev}, {id})"
        )));
    }
    let a = if copy == Some(true) {
        a.copy().or_raise(py)?
    } else {
        a.clone()
    };
    let t = a
        .to_dlpack()
        .map_err(|e| PyBufferError::new_err(e.message().to_string()))?;
    let versioned = max_version.is_some_and(|(major, _)| major >= 1);
    let (ptr, name): (*mut c_void, &CStr) = if versioned {
        (t.cast(), DLTENSOR_VERSIONED)
    } else {
        // SAFETY: `t` is the live tensor just made; the legacy form takes
        // it over (its deleter deletes `t`).
        unsafe {
            if (*t).flags & dynd::interop::dlpack::DLPACK_FLAG_BITMASK_READ_ONLY != 0 {
                if let Some(d) = (*t).deleter {
                    d(t);
                }
                return Err(PyBufferError::new_err(
                    "a read-only dynd array cannot export as a legacy (unversioned) DLPack tensor; the consumer must ask for max_version >= (1, 0)",
                ));
            }
            let legacy = Box::new(DLManagedTensor {
                dl_tensor: std::ptr::read(&(*t).dl_tensor),
                manager_ctx: t.cast(),
                deleter: Some(delete_legacy),
            });
            (Box::into_raw(legacy).cast(), DLTENSOR)
        }
    };
    // SAFETY: `ptr` is a live tensor of the kind `name` says; the capsule's
    // destructor deletes it unless a consumer renames the capsule.
    let cap = unsafe { ffi::PyCapsule_New(ptr, name.as_ptr(), Some(dlpack_capsule_destructor)) };
    if cap.is_null() {
        // SAFETY: the capsule was not made, so the tensor is still ours.
        unsafe { delete_tensor(ptr, versioned) };
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `cap` is a new reference.
    Ok(unsafe { Bound::from_owned_ptr(py, cap) })
}

/// # Safety
/// `ptr` is a live tensor of the kind `versioned` says, deleted here once.
unsafe fn delete_tensor(ptr: *mut c_void, versioned: bool) {
    // SAFETY: (caller).
    unsafe {
        if versioned {
            let t = ptr.cast::<DLManagedTensorVersioned>();
            if let Some(d) = (*t).deleter {
                d(t);
            }
        } else {
            delete_legacy(ptr.cast());
        }
    }
}

/// A versioned tensor over a legacy one, for `Array::from_dlpack`.
struct LegacyHolder(*mut DLManagedTensor);

unsafe extern "C" fn delete_versioned_wrapper(t: *mut DLManagedTensorVersioned) {
    // SAFETY: `t` was made by `versioned_of` (a Box) with the legacy tensor
    // as its context; each is deleted once here.
    unsafe {
        let t = Box::from_raw(t);
        let legacy = Box::from_raw(t.manager_ctx.cast::<LegacyHolder>());
        if let Some(d) = (*legacy.0).deleter {
            d(legacy.0);
        }
    }
}

/// `dynd.from_dlpack(x)`: takes `x.__dlpack__()`'s tensor, zero-copy.
#[pyfunction]
pub fn from_dlpack(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if !x.hasattr("__dlpack__")? {
        return Err(type_error(
            py,
            format!(
                "from_dlpack needs an object with __dlpack__, not {}",
                x.get_type().name()?
            ),
        ));
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item("max_version", (1, 1))?;
    let cap = match x.call_method("__dlpack__", (), Some(&kwargs)) {
        Ok(c) => c,
        // A producer from before DLPack 1.0 takes no max_version.
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => {
            x.call_method0("__dlpack__")?
        }
        Err(e) => return Err(e),
    };
    let c = cap.as_ptr();
    // SAFETY: `c` is a live object; a capsule's pointer is read under the
    // name it has, and the capsule is renamed before dynd takes ownership,
    // so its destructor no longer deletes the tensor.
    let t = unsafe {
        if ffi::PyCapsule_IsValid(c, DLTENSOR_VERSIONED.as_ptr()) == 1 {
            let t = ffi::PyCapsule_GetPointer(c, DLTENSOR_VERSIONED.as_ptr())
                .cast::<DLManagedTensorVersioned>();
            if ffi::PyCapsule_SetName(c, USED_DLTENSOR_VERSIONED.as_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
            t
        } else if ffi::PyCapsule_IsValid(c, DLTENSOR.as_ptr()) == 1 {
            let legacy = ffi::PyCapsule_GetPointer(c, DLTENSOR.as_ptr()).cast::<DLManagedTensor>();
            if ffi::PyCapsule_SetName(c, USED_DLTENSOR.as_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
            Box::into_raw(Box::new(DLManagedTensorVersioned {
                version: DLPackVersion { major: 1, minor: 0 },
                manager_ctx: Box::into_raw(Box::new(LegacyHolder(legacy))).cast(),
                deleter: Some(delete_versioned_wrapper),
                flags: 0,
                dl_tensor: std::ptr::read(&(*legacy).dl_tensor),
            }))
        } else {
            return Err(type_error(
                py,
                "__dlpack__ returned something that is not an unused DLPack capsule",
            ));
        }
    };
    // SAFETY: `t` is a live tensor that dynd now owns (from_dlpack runs
    // its deleter once, also on failure).
    let a = unsafe { Array::from_dlpack(t) }.or_raise(py)?;
    if !a.device().is_cpu() {
        // A CUDA tensor: calls on it need the runtime (when there is no
        // device, they say so).
        let _ = crate::cuda::install();
    }
    PyArray::wrap(py, a)
}

// ---- the CUDA array interface (v3) ----

/// NumPy's type string of a builtin (`"<f8"`), for the CUDA array
/// interface.
fn typestr(b: BuiltinType) -> Option<&'static str> {
    use BuiltinType::*;
    Some(match b {
        Bool => "|b1",
        Int8 => "|i1",
        Int16 => "<i2",
        Int32 => "<i4",
        Int64 => "<i8",
        UInt8 => "|u1",
        UInt16 => "<u2",
        UInt32 => "<u4",
        UInt64 => "<u8",
        Float16 => "<f2",
        Float32 => "<f4",
        Float64 => "<f8",
        Complex64 => "<c8",
        Complex128 => "<c16",
        _ => return None,
    })
}

/// `a.__cuda_array_interface__` (version 3) of an array on a CUDA device:
/// shape, typestr, `(pointer, read-only)`, byte strides, `stream: None`
/// (dynd's calls have finished when they return). Host arrays have none:
/// an `AttributeError`, so consumers do not take them for device arrays.
pub fn cuda_array_interface<'py>(py: Python<'py>, a: &Array) -> PyResult<Bound<'py, PyDict>> {
    if !matches!(a.device(), dynd::memblock::DeviceId::Cuda(_)) {
        return Err(pyo3::exceptions::PyAttributeError::new_err(
            "__cuda_array_interface__: the array is on the cpu (only CUDA arrays have one)",
        ));
    }
    let (shape, strides, elem) = a.strided_layout().or_raise(py)?;
    let ts = elem.as_builtin().and_then(typestr).ok_or_else(|| {
        type_error(
            py,
            format!(
                "{} has no CUDA array interface form: the element must be bool, an integer, a \
                 float or a complex number (no missing values)",
                a.tp()
            ),
        )
    })?;
    let d = PyDict::new(py);
    d.set_item("version", 3)?;
    d.set_item("shape", PyTuple::new(py, &shape)?)?;
    d.set_item("typestr", ts)?;
    d.set_item("descr", vec![("", ts)])?;
    d.set_item("data", (a.data_ptr() as usize, !a.is_writable()))?;
    d.set_item("strides", PyTuple::new(py, &strides)?)?;
    d.set_item("stream", py.None())?;
    Ok(d)
}

/// An array over the device memory `x.__cuda_array_interface__` (v3)
/// describes, without a copy; `x` is kept alive until the last array over
/// the memory is gone. Waits for the interface's `stream` first, when it
/// names one.
pub fn from_cuda_array_interface(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Array> {
    let cai = x.getattr("__cuda_array_interface__")?;
    let cai = cai
        .cast::<PyDict>()
        .map_err(|_| type_error(py, "__cuda_array_interface__ is not a dict"))?;
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        cai.get_item(k)?
            .ok_or_else(|| invalid(py, format!("__cuda_array_interface__ has no {k:?}")))
    };
    let version: i64 = get("version")?.extract()?;
    if !(0..=3).contains(&version) {
        return Err(invalid(
            py,
            format!("__cuda_array_interface__ version {version} is not supported (3 and older)"),
        ));
    }
    if cai.get_item("mask")?.is_some_and(|m| !m.is_none()) {
        return Err(invalid(
            py,
            "__cuda_array_interface__ with a mask is not supported",
        ));
    }
    let shape: Vec<usize> = get("shape")?.extract()?;
    let ts: String = get("typestr")?.extract()?;
    // Little-endian or native ('=') byte order; one-byte types in any.
    let b = BuiltinType::ALL
        .into_iter()
        .find(|b| {
            typestr(*b).is_some_and(|t| {
                let native = ts.starts_with(['<', '='])
                    || (t.starts_with('|') && ts.starts_with(['|', '>']));
                native && ts.get(1..) == t.get(1..)
            })
        })
        .ok_or_else(|| {
            type_error(
                py,
                format!("__cuda_array_interface__ typestr {ts:?} is not supported"),
            )
        })?;
    let (ptr, readonly): (usize, bool) = get("data")?.extract()?;
    let size = b.data_size();
    let strides: Vec<isize> = match cai.get_item("strides")? {
        Some(s) if !s.is_none() => s.extract()?,
        _ => {
            let mut st = vec![0isize; shape.len()];
            let mut acc = size as isize;
            for k in (0..shape.len()).rev() {
                st[k] = acc;
                acc = acc.saturating_mul(shape[k].max(1) as isize);
            }
            st
        }
    };
    if let Some(stream) = cai.get_item("stream")?
        && !stream.is_none()
    {
        let handle: usize = stream.extract()?;
        if handle == 0 {
            return Err(invalid(
                py,
                "__cuda_array_interface__ stream 0 is disallowed (v3)",
            ));
        }
        // SAFETY: the producer gives a live stream handle of its context
        // (the interface's contract), or 1 / 2 for the default streams.
        unsafe { dynd_cuda::runtime::synchronize_stream(handle) }.or_raise(py)?;
    }
    // The interface does not name the device: the driver knows it from
    // the address (device 0 when there is no driver to ask).
    let ordinal = dynd_cuda::runtime::device_of_pointer(ptr).unwrap_or(0);
    let owner = x.clone().unbind();
    // SAFETY: the interface promises `shape` elements of `typestr` at
    // `ptr` + Σ i·strides in CUDA memory, alive while `x` is (the owner
    // keeps it), writable unless read-only; the device block records the
    // device, so the host never reads it.
    unsafe {
        Array::from_foreign(
            dynd::memblock::DeviceId::Cuda(ordinal),
            Type::builtin(b),
            ptr as *mut u8,
            &shape,
            &strides,
            move || drop(owner),
            !readonly,
        )
    }
    .or_raise(py)
}

// ---- Arrow PyCapsules ----

const ARROW_SCHEMA: &CStr = c"arrow_schema";
const ARROW_ARRAY: &CStr = c"arrow_array";
const ARROW_STREAM: &CStr = c"arrow_array_stream";

/// Drops a boxed C struct of type `T` unless a consumer moved it out (its
/// release is then null and `T`'s `Drop` does nothing).
unsafe extern "C" fn drop_boxed<T>(capsule: *mut ffi::PyObject) {
    // SAFETY: CPython calls this once with the capsule; its pointer is the
    // Box<T> made by `boxed_capsule` (whatever the capsule's name).
    unsafe {
        let name = ffi::PyCapsule_GetName(capsule);
        let p = ffi::PyCapsule_GetPointer(capsule, name);
        if !p.is_null() {
            drop(Box::from_raw(p.cast::<T>()));
        } else {
            ffi::PyErr_Clear();
        }
    }
}

fn boxed_capsule<'py, T>(
    py: Python<'py>,
    value: T,
    name: &'static CStr,
    destructor: ffi::PyCapsule_Destructor,
) -> PyResult<Bound<'py, PyAny>> {
    let p = Box::into_raw(Box::new(value));
    // SAFETY: `p` is a live Box<T>; the destructor frees it.
    let cap = unsafe { ffi::PyCapsule_New(p.cast(), name.as_ptr(), Some(destructor)) };
    if cap.is_null() {
        // SAFETY: no capsule took `p`.
        drop(unsafe { Box::from_raw(p) });
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference.
    Ok(unsafe { Bound::from_owned_ptr(py, cap) })
}

fn export(
    py: Python<'_>,
    a: &Array,
) -> PyResult<(FFI_ArrowSchema, arrow_data::ffi::FFI_ArrowArray)> {
    py.detach(|| a.to_arrow()).or_raise(py)
}

/// `__arrow_c_schema__`.
pub fn arrow_schema_capsule<'py>(py: Python<'py>, a: &Array) -> PyResult<Bound<'py, PyAny>> {
    let (schema, _) = export(py, a)?;
    boxed_capsule(py, schema, ARROW_SCHEMA, drop_boxed::<FFI_ArrowSchema>)
}

/// The dynd type of the Arrow type `dt` (a type without dims, or with the
/// dims of Arrow lists), through the import of an empty array of it.
fn dynd_type_of(dt: &arrow_schema::DataType) -> dynd::Result<Type> {
    let empty = arrow_array::new_empty_array(dt);
    let b = dynd::interop::arrow::from_arrow_array(&empty)?;
    Ok(b.tp().dim_elem().cloned().unwrap_or_else(|| b.tp().clone()))
}

/// `a` cast to the Arrow type a consumer asked for with
/// `requested_schema` (a capsule named `arrow_schema`), where dynd can
/// cast to it; otherwise `a` as it is (the protocol lets the producer
/// ignore a request it cannot meet: the consumer then casts or refuses).
fn as_requested(
    py: Python<'_>,
    a: &Array,
    requested: Option<&Bound<'_, PyAny>>,
) -> PyResult<Array> {
    let Some(req) = requested.filter(|r| !r.is_none()) else {
        return Ok(a.clone());
    };
    // SAFETY: `req` is a live object; IsValid checks it is a capsule of
    // this name (and sets no error when it is not).
    if unsafe { ffi::PyCapsule_IsValid(req.as_ptr(), ARROW_SCHEMA.as_ptr()) } != 1 {
        return Err(type_error(
            py,
            format!(
                "requested_schema must be a PyCapsule named 'arrow_schema', not {}",
                req.get_type().name()?
            ),
        ));
    }
    // SAFETY: a valid capsule of that name points at an ArrowSchema that
    // its owner (the consumer) keeps alive for this call; it is read, not
    // moved.
    let wanted = unsafe {
        let p = ffi::PyCapsule_GetPointer(req.as_ptr(), ARROW_SCHEMA.as_ptr());
        arrow_schema::DataType::try_from(&*p.cast::<FFI_ArrowSchema>())
    };
    let Ok(wanted) = wanted else {
        return Ok(a.clone());
    };
    let Some(outer) = a.tp().dim_elem() else {
        return Ok(a.clone());
    };
    let cast = |outer: &Type| -> dynd::Result<Option<Array>> {
        let mut elem = dynd_type_of(&wanted)?;
        if *outer == elem {
            return Ok(None);
        }
        if outer.option_value().is_some() && elem.option_value().is_none() && !elem.is_dim() {
            elem = Type::option(elem)?;
            if *outer == elem {
                return Ok(None);
            }
        }
        let tp = match a.tp().kind() {
            dynd::types::TypeKind::FixedDim { size, .. } => Type::fixed_dim(*size, elem),
            _ => Type::var_dim(elem),
        };
        a.cast(&tp, dynd::kernels::assign::ErrorMode::Default)
            .map(Some)
    };
    match py.detach(|| cast(outer)) {
        Ok(Some(b)) => Ok(b),
        _ => Ok(a.clone()),
    }
}

/// `__arrow_c_array__`: `(schema, array)` capsules, cast to `requested`
/// where dynd can.
pub fn arrow_array_capsules<'py>(
    py: Python<'py>,
    a: &Array,
    requested: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let a = as_requested(py, a, requested)?;
    let (schema, array) = export(py, &a)?;
    let s = boxed_capsule(py, schema, ARROW_SCHEMA, drop_boxed::<FFI_ArrowSchema>)?;
    let arr = boxed_capsule(
        py,
        array,
        ARROW_ARRAY,
        drop_boxed::<arrow_data::ffi::FFI_ArrowArray>,
    )?;
    PyTuple::new(py, [s, arr])
}

/// `__arrow_c_stream__`: a stream of one array (any type, not only
/// record batches), cast to `requested` where dynd can.
pub fn arrow_stream_capsule<'py>(
    py: Python<'py>,
    a: &Array,
    requested: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let a = as_requested(py, a, requested)?;
    let stream = py
        .detach(|| dynd::interop::arrow::to_arrow_stream(&a))
        .or_raise(py)?;
    boxed_capsule(py, stream, ARROW_STREAM, drop_boxed::<FFI_ArrowArrayStream>)
}

/// Moves the `T` out of a capsule named `name`, leaving an empty (released)
/// one behind.
///
/// # Safety
/// A capsule of that name points at a `T` whose released form is `empty`.
unsafe fn take_from_capsule<T>(
    py: Python<'_>,
    cap: &Bound<'_, PyAny>,
    name: &CStr,
    empty: T,
) -> PyResult<T> {
    // SAFETY: `cap` is a live object; IsValid sets no error. (caller) a
    // valid capsule of that name points at a `T`.
    unsafe {
        if ffi::PyCapsule_IsValid(cap.as_ptr(), name.as_ptr()) != 1 {
            let what = if ffi::PyCapsule_CheckExact(cap.as_ptr()) != 0 {
                let n = ffi::PyCapsule_GetName(cap.as_ptr());
                if n.is_null() {
                    ffi::PyErr_Clear();
                    "a capsule without a name".to_string()
                } else {
                    format!("a capsule named '{}'", CStr::from_ptr(n).to_string_lossy())
                }
            } else {
                cap.get_type().name()?.to_string()
            };
            return Err(type_error(
                py,
                format!(
                    "expected a PyCapsule named '{}', got {what}",
                    name.to_string_lossy()
                ),
            ));
        }
        let p = ffi::PyCapsule_GetPointer(cap.as_ptr(), name.as_ptr()).cast::<T>();
        if p.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok(std::ptr::replace(p, empty))
    }
}

/// `dynd.from_arrow(x)`: any object with the Arrow PyCapsule interface
/// (pyarrow, polars, arro3, dynd): `__arrow_c_array__` zero-copy where
/// the layouts allow, else `__arrow_c_stream__` (chunks joined).
#[pyfunction]
pub fn from_arrow(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if x.hasattr("__arrow_c_array__")? {
        let pair = x.call_method0("__arrow_c_array__")?;
        let pair = pair
            .cast::<PyTuple>()
            .map_err(|_| type_error(py, "__arrow_c_array__ must return a tuple"))?;
        if pair.len() != 2 {
            return Err(type_error(
                py,
                "__arrow_c_array__ must return (schema capsule, array capsule)",
            ));
        }
        // SAFETY: the protocol's capsules point at ArrowSchema / ArrowArray
        // structs that the consumer may move out.
        let (schema, array) = unsafe {
            (
                take_from_capsule(
                    py,
                    &pair.get_item(0)?,
                    ARROW_SCHEMA,
                    FFI_ArrowSchema::empty(),
                )?,
                take_from_capsule(
                    py,
                    &pair.get_item(1)?,
                    ARROW_ARRAY,
                    arrow_data::ffi::FFI_ArrowArray::empty(),
                )?,
            )
        };
        let a = py
            .detach(|| Array::from_arrow(schema, array))
            .or_raise(py)?;
        return PyArray::wrap(py, a);
    }
    if x.hasattr("__arrow_c_stream__")? {
        let cap = x.call_method0("__arrow_c_stream__")?;
        // SAFETY: the protocol's capsule points at an ArrowArrayStream the
        // consumer may move out; arrow-rs's stream struct has that layout
        // (and its `empty` is the released form).
        let stream =
            unsafe { take_from_capsule(py, &cap, ARROW_STREAM, FFI_ArrowArrayStream::empty())? };
        let a = py
            .detach(|| dynd::interop::arrow::from_arrow_stream(stream))
            .or_raise(py)?;
        return PyArray::wrap(py, a);
    }
    Err(type_error(
        py,
        format!(
            "from_arrow needs an object with __arrow_c_array__ or __arrow_c_stream__ (pyarrow, polars, arro3), not {}",
            x.get_type().name()?
        ),
    ))
}
