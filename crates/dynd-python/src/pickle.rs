//! Pickling (`dynd/_pickle.py` drives it): an array as the tree of its
//! Arrow buffers, each a Python object with the buffer protocol, so that
//! pickle protocol 5 sends them out of band (no copy into the stream), and
//! back. The tree is the exported `ArrayData`: per node the Arrow format,
//! the children's names and nullability, length, offset, validity bitmap,
//! buffers and children. What the Arrow export copies (validity bitmaps,
//! packed booleans, list offsets, gathered rows out of order) is built once
//! per pickle; the values of primitives, in-order var rows and strings go
//! out as the array's own memory.

use crate::errors::{OrRaise, invalid};
use crate::pyarray::PyArray;
use arrow_array::Array as _;
use arrow_buffer::{Buffer, NullBuffer};
use arrow_data::ArrayData;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, Fields};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use std::ffi::c_int;
use std::ptr::NonNull;
use std::sync::Arc;

/// One Arrow buffer, read-only, through the buffer protocol.
#[pyclass(name = "_ArrowBuffer", module = "dynd", frozen)]
pub struct ArrowBuffer {
    buf: Buffer,
}

#[pymethods]
impl ArrowBuffer {
    fn __len__(&self) -> usize {
        self.buf.len()
    }

    /// # Safety
    /// `view` is a valid `Py_buffer` to fill, as CPython passes it.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("__getbuffer__ got a null view"));
        }
        if flags & ffi::PyBUF_WRITABLE != 0 {
            return Err(PyBufferError::new_err(
                "an Arrow buffer of a dynd array is read-only",
            ));
        }
        let (ptr, len) = (slf.get().buf.as_ptr(), slf.get().buf.len());
        // SAFETY: `view` is non-null and CPython's to fill; `obj` holds a
        // reference to this object, whose buffer is immutable and lives
        // until CPython drops the reference.
        unsafe {
            (*view).buf = ptr.cast_mut().cast();
            (*view).len = len as ffi::Py_ssize_t;
            (*view).readonly = 1;
            (*view).itemsize = 1;
            (*view).format = if flags & ffi::PyBUF_FORMAT != 0 {
                c"B".as_ptr().cast_mut()
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = 1;
            (*view).shape = if flags & ffi::PyBUF_ND != 0 {
                &mut (*view).len
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
                &mut (*view).itemsize
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
            (*view).obj = slf.into_any().into_ptr();
        }
        Ok(())
    }

    /// # Safety
    /// `view` was filled by `__getbuffer__` (nothing to free).
    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}
}

/// The Arrow format of `dt` and its children's (name, nullable).
fn describe(py: Python<'_>, dt: &DataType) -> PyResult<(String, Vec<(String, bool)>)> {
    let children: Vec<(String, bool)> = match dt {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            vec![(f.name().clone(), f.is_nullable())]
        }
        DataType::Struct(fs) => fs
            .iter()
            .map(|f| (f.name().clone(), f.is_nullable()))
            .collect(),
        _ => Vec::new(),
    };
    let leaf = match dt {
        DataType::List(_)
        | DataType::LargeList(_)
        | DataType::FixedSizeList(..)
        | DataType::Struct(_) => None,
        other => Some(other),
    };
    let format = match (leaf, dt) {
        (Some(d), _) => FFI_ArrowSchema::try_from(d)
            .map_err(|e| invalid(py, format!("no Arrow format for {d}: {e}")))?
            .format()
            .to_owned(),
        (None, DataType::List(_)) => "+l".to_owned(),
        (None, DataType::LargeList(_)) => "+L".to_owned(),
        (None, DataType::FixedSizeList(_, n)) => format!("+w:{n}"),
        (None, _) => "+s".to_owned(),
    };
    Ok((format, children))
}

/// `data` as a tree of tuples (see the module docs).
fn to_node<'py>(py: Python<'py>, data: &ArrayData) -> PyResult<Bound<'py, PyTuple>> {
    let (format, fields) = describe(py, data.data_type())?;
    let nulls = match data.nulls() {
        Some(n) => Some(Py::new(
            py,
            ArrowBuffer {
                buf: n.buffer().clone(),
            },
        )?),
        None => None,
    };
    let null_offset = data.nulls().map_or(0, |n| n.offset());
    let buffers = data
        .buffers()
        .iter()
        .map(|b| Py::new(py, ArrowBuffer { buf: b.clone() }))
        .collect::<PyResult<Vec<_>>>()?;
    let children = data
        .child_data()
        .iter()
        .map(|c| to_node(py, c))
        .collect::<PyResult<Vec<_>>>()?;
    (
        format,
        fields,
        data.len(),
        data.offset(),
        nulls,
        null_offset,
        PyList::new(py, buffers)?,
        PyList::new(py, children)?,
    )
        .into_pyobject(py)
}

/// `a`'s Arrow buffers as a tree (the array needs an outer dim and an
/// element type with an Arrow form).
#[pyfunction]
fn _arrow_parts<'py>(py: Python<'py>, a: &Bound<'py, PyArray>) -> PyResult<Bound<'py, PyTuple>> {
    let arr = a.get().a.clone();
    let exported = py
        .detach(|| dynd::interop::arrow::to_arrow_array(&arr))
        .or_raise(py)?;
    to_node(py, &exported.to_data())
}

/// The bytes `a`'s values take ([`dynd::Array::data_bytes`]): what
/// `dask.sizeof` reports for a partition.
#[pyfunction]
fn _nbytes(py: Python<'_>, a: &Bound<'_, PyArray>) -> PyResult<usize> {
    let arr = a.get().a.clone();
    py.detach(|| arr.data_bytes()).or_raise(py)
}

/// What keeps a Python buffer alive under an Arrow buffer.
struct PyOwner(#[allow(dead_code)] PyBuffer<u8>);

/// An Arrow buffer over the bytes of `obj` (any buffer-protocol object):
/// zero-copy when they are aligned for `align`, else copied (pickle's
/// out-of-band frames carry no alignment promise).
fn buffer_of(py: Python<'_>, obj: &Bound<'_, PyAny>, align: usize) -> PyResult<Buffer> {
    let pb: PyBuffer<u8> = PyBuffer::get(obj)?;
    if !pb.is_c_contiguous() {
        return Err(invalid(py, "a pickled dynd buffer is not contiguous"));
    }
    let (ptr, len) = (pb.buf_ptr().cast::<u8>(), pb.len_bytes());
    if len == 0 {
        return Ok(Buffer::from_vec(Vec::<u8>::new()));
    }
    if !(ptr as usize).is_multiple_of(align.max(1)) {
        // SAFETY: the buffer is `len` readable bytes while `pb` lives.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
        return Ok(Buffer::from_slice_ref(bytes));
    }
    let nn = NonNull::new(ptr).ok_or_else(|| invalid(py, "a null buffer"))?;
    // SAFETY: `ptr` points at `len` bytes that stay valid and unchanged
    // while the owner (the Python buffer view) is alive, and the Arrow
    // buffer keeps the owner.
    Ok(unsafe { Buffer::from_custom_allocation(nn, len, Arc::new(PyOwner(pb))) })
}

/// The alignment Arrow wants for a node's buffers of `format`.
fn align_of(format: &str) -> usize {
    match format {
        "c" | "C" | "b" => 1,
        "s" | "S" | "e" => 2,
        "i" | "I" | "f" | "u" | "z" | "+l" => 4,
        _ => 8,
    }
}

/// The data type of a node from its format, its children's fields and
/// their types.
fn data_type(py: Python<'_>, format: &str, fields: Vec<Field>) -> PyResult<DataType> {
    let one = |fields: Vec<Field>| -> PyResult<Arc<Field>> {
        let mut it = fields.into_iter();
        match (it.next(), it.next()) {
            (Some(f), None) => Ok(Arc::new(f)),
            _ => Err(invalid(
                py,
                format!("Arrow format {format} needs one child"),
            )),
        }
    };
    Ok(match format {
        "+l" => DataType::List(one(fields)?),
        "+L" => DataType::LargeList(one(fields)?),
        "+s" => DataType::Struct(Fields::from(fields)),
        f if f.starts_with("+w:") => {
            let n: i32 = f[3..]
                .parse()
                .map_err(|_| invalid(py, format!("bad Arrow format {f}")))?;
            DataType::FixedSizeList(one(fields)?, n)
        }
        f => {
            let schema = FFI_ArrowSchema::try_new(f, vec![], None)
                .map_err(|e| invalid(py, format!("bad Arrow format {f}: {e}")))?;
            DataType::try_from(&schema)
                .map_err(|e| invalid(py, format!("bad Arrow format {f}: {e}")))?
        }
    })
}

type Node<'py> = (
    String,
    Vec<(String, bool)>,
    usize,
    usize,
    Option<Bound<'py, PyAny>>,
    usize,
    Vec<Bound<'py, PyAny>>,
    Vec<Bound<'py, PyAny>>,
);

/// A node back as `ArrayData` (unchecked here; validated on import).
fn from_node(py: Python<'_>, node: &Bound<'_, PyAny>) -> PyResult<ArrayData> {
    let (format, names, len, offset, nulls, null_offset, buffers, children): Node<'_> =
        node.extract()?;
    let kids = children
        .iter()
        .map(|c| from_node(py, c))
        .collect::<PyResult<Vec<_>>>()?;
    if kids.len() != names.len() {
        return Err(invalid(
            py,
            "a pickled dynd node has children that disagree with its type",
        ));
    }
    let fields = names
        .into_iter()
        .zip(&kids)
        .map(|((name, nullable), k)| Field::new(name, k.data_type().clone(), nullable))
        .collect();
    let dt = data_type(py, &format, fields)?;
    let align = align_of(&format);
    let bufs = buffers
        .iter()
        .map(|b| buffer_of(py, b, align))
        .collect::<PyResult<Vec<_>>>()?;
    let nulls = match nulls {
        Some(n) => {
            let b = buffer_of(py, &n, 1)?;
            Some(NullBuffer::new(arrow_buffer::BooleanBuffer::new(
                b,
                null_offset,
                len,
            )))
        }
        None => None,
    };
    ArrayData::builder(dt)
        .len(len)
        .offset(offset)
        .nulls(nulls)
        .buffers(bufs)
        .child_data(kids)
        .build()
        .map_err(|e| invalid(py, format!("a pickled dynd array does not rebuild: {e}")))
}

/// The array whose Arrow buffers `node` holds (see `_arrow_parts`).
#[pyfunction]
fn _from_arrow_parts(py: Python<'_>, node: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let data = from_node(py, node)?;
    let arr = arrow_array::make_array(data);
    let a = py
        .detach(|| dynd::interop::arrow::from_arrow_array(arr.as_ref()))
        .or_raise(py)?;
    PyArray::wrap(py, a)
}

/// Adds the pickling helpers to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ArrowBuffer>()?;
    m.add_function(wrap_pyfunction!(_arrow_parts, m)?)?;
    m.add_function(wrap_pyfunction!(_nbytes, m)?)?;
    m.add_function(wrap_pyfunction!(_from_arrow_parts, m)?)?;
    Ok(())
}
