//! `dynd.Array`: views and indexing, conversions, operators.

use crate::convert::{as_array, to_list, weak_scalar, with_dims_of};
use crate::errors::{OrRaise, index_error, invalid, type_error};
use crate::pyarray::PyArray;
use crate::types::{PyDType, type_arg};
use dynd::compute;
use dynd::kernels::assign::ErrorMode;
use dynd::memblock::DeviceId;
use dynd::types::BuiltinType;
use dynd::{Array, Index, Type};
use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::{PyEllipsis, PyInt, PyList, PySlice, PyString, PyTuple};
use std::ffi::c_int;

/// The error mode named `name` (`nocheck`, `overflow`, `fractional`,
/// `inexact`, `default`).
pub fn errmode(py: Python<'_>, name: &str) -> PyResult<ErrorMode> {
    ErrorMode::ALL
        .into_iter()
        .find(|m| m.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = ErrorMode::ALL.iter().map(|m| m.name()).collect();
            invalid(
                py,
                format!("unknown errmode '{name}' (known: {})", names.join(", ")),
            )
        })
}

/// What a key of `a[key]` asks for.
enum Key {
    /// Integers and slices, then maybe a field name.
    Indices(Vec<Index>, Option<String>),
    /// A boolean mask (filter) or integer positions (take).
    Select(Array),
}

fn one_index(py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<Option<Index>> {
    if item.is_instance_of::<pyo3::types::PyBool>() {
        return Err(index_error(
            py,
            "a bool is not an index; use a list or array of bools as a mask",
        ));
    }
    if item.is_instance_of::<PyInt>() || item.hasattr("__index__")? && !item.hasattr("__len__")? {
        let i: isize = item.call_method0("__index__")?.extract().map_err(|_| {
            index_error(
                py,
                format!(
                    "index {} is out of range of isize",
                    item.repr().map(|r| r.to_string()).unwrap_or_default()
                ),
            )
        })?;
        return Ok(Some(Index::At(i)));
    }
    if let Ok(s) = item.cast::<PySlice>() {
        let part = |name: &str| -> PyResult<Option<isize>> {
            let v = s.getattr(name)?;
            if v.is_none() {
                Ok(None)
            } else {
                v.extract::<isize>().map(Some).map_err(|_| {
                    index_error(
                        py,
                        format!(
                            "slice {name} must be an int or None, not {}",
                            v.repr().map(|r| r.to_string()).unwrap_or_default()
                        ),
                    )
                })
            }
        };
        let step = part("step")?.unwrap_or(1);
        return Ok(Some(Index::slice(part("start")?, part("stop")?, step)));
    }
    Ok(None)
}

fn parse_key(py: Python<'_>, a: &Array, key: &Bound<'_, PyAny>) -> PyResult<Key> {
    if let Ok(s) = key.cast::<PyString>() {
        return Ok(Key::Indices(Vec::new(), Some(s.to_str()?.to_string())));
    }
    if let Some(i) = one_index(py, key)? {
        return Ok(Key::Indices(vec![i], None));
    }
    if key.is_instance_of::<PyEllipsis>() {
        return Ok(Key::Indices(Vec::new(), None));
    }
    if let Ok(t) = key.cast::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = t.iter().collect();
        let mut indices = Vec::new();
        let mut field = None;
        let mut ellipsis_at = None;
        for (n, item) in items.iter().enumerate() {
            if let Ok(s) = item.cast::<PyString>() {
                if n + 1 != items.len() {
                    return Err(index_error(
                        py,
                        "a field name may only come last in an index tuple",
                    ));
                }
                field = Some(s.to_str()?.to_string());
            } else if item.is_instance_of::<PyEllipsis>() {
                if ellipsis_at.is_some() {
                    return Err(index_error(
                        py,
                        "an index can only have a single ellipsis ('...')",
                    ));
                }
                ellipsis_at = Some(indices.len());
            } else if let Some(i) = one_index(py, item)? {
                indices.push(i);
            } else {
                return Err(index_error(
                    py,
                    format!(
                        "index tuple item {n} is {}: only ints, slices, '...' and a final field name go in a tuple",
                        item.repr()?
                    ),
                ));
            }
        }
        if let Some(at) = ellipsis_at {
            let fill = a.ndim().saturating_sub(indices.len());
            indices.splice(at..at, std::iter::repeat_n(Index::ALL, fill));
        }
        return Ok(Key::Indices(indices, field));
    }
    if key.is_none() {
        return Err(index_error(
            py,
            "None (np.newaxis) is not supported as an index; use reshape",
        ));
    }
    // Lists, dynd arrays, NumPy arrays: a mask or positions.
    if key.is_instance_of::<PyList>()
        || key.is_instance_of::<PyArray>()
        || key.hasattr("__array_interface__")?
        || key.hasattr("__buffer__")?
    {
        return Ok(Key::Select(as_array(py, key)?));
    }
    Err(index_error(
        py,
        format!(
            "cannot index with {} ({}); use ints, slices, field names, masks or position arrays",
            key.get_type().name()?,
            key.repr()?
        ),
    ))
}

/// Whether `t`'s element (under dims and an option) is bool / an integer.
fn elem_builtin(t: &Type) -> Option<BuiltinType> {
    let e = t.dtype();
    e.option_value().unwrap_or(e).as_builtin()
}

fn is_integer(b: BuiltinType) -> bool {
    use BuiltinType::*;
    matches!(
        b,
        Int8 | Int16 | Int32 | Int64 | Int128 | UInt8 | UInt16 | UInt32 | UInt64 | UInt128
    )
}

fn index_array(py: Python<'_>, a: &Array, key: &Bound<'_, PyAny>) -> PyResult<Array> {
    match parse_key(py, a, key)? {
        Key::Indices(indices, field) => {
            let v = if indices.is_empty() {
                a.clone()
            } else {
                a.index(&indices).or_raise(py)?
            };
            match field {
                Some(name) => v.field(&name).or_raise(py),
                None => Ok(v),
            }
        }
        Key::Select(sel) => match elem_builtin(sel.tp()) {
            Some(BuiltinType::Bool) => py.detach(|| compute::filter(a, &sel)).or_raise(py),
            Some(b) if is_integer(b) => py.detach(|| compute::take(a, &sel)).or_raise(py),
            _ => Err(type_error(
                py,
                format!(
                    "an index array must hold bools (a mask) or integers (positions), not {}",
                    sel.tp()
                ),
            )),
        },
    }
}

/// The element type with the array's dims, as float64 (`?float64` for an
/// optional element), for true division of integers.
fn as_float(a: &Array) -> dynd::Result<Array> {
    let e = a.tp().dtype();
    let target = if e.option_value().is_some() {
        Type::option(Type::float64())?
    } else {
        Type::float64()
    };
    a.cast(with_dims_of(a, target), ErrorMode::NoCheck)
}

fn needs_float(a: &Array) -> bool {
    elem_builtin(a.tp()).is_some_and(|b| is_integer(b) || b == BuiltinType::Bool)
}

#[pymethods]
impl PyArray {
    /// The array's type.
    #[getter(r#type)]
    fn get_type(&self) -> PyDType {
        PyDType {
            tp: self.a.tp().clone(),
        }
    }

    /// Number of dims.
    #[getter]
    fn ndim(&self) -> usize {
        self.a.ndim()
    }

    /// The dims' sizes, `None` for a var dim.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.a.shape())
    }

    /// Whether the array (and its views) may be written.
    #[getter]
    fn writable(&self) -> bool {
        self.a.is_writable()
    }

    /// Where the data lives (DESIGN §14): `"cpu"` or `"cuda:N"`.
    #[getter]
    fn device(&self) -> String {
        self.a.device().to_string()
    }

    /// The array on `device` (`"cpu"`, `"cuda"`, `"cuda:N"`): itself when
    /// it is there, else a copy. Without a CUDA device, `to("cuda")`
    /// raises `dynd.ExternalError` saying why.
    fn to(&self, py: Python<'_>, device: &str) -> PyResult<Py<PyAny>> {
        let dev = DeviceId::parse(device).or_raise(py)?;
        if !dev.is_cpu() {
            crate::cuda::ensure(dev).or_raise(py)?;
        }
        let a = self.a.clone();
        let moved = py.detach(move || a.to_device(dev)).or_raise(py)?;
        PyArray::wrap(py, moved)
    }

    /// The CUDA array interface (v3) of an array on a CUDA device, for
    /// CuPy, Numba and PyTorch; host arrays have none (`AttributeError`).
    #[getter]
    fn __cuda_array_interface__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        crate::interop::cuda_array_interface(py, &self.a)
    }

    /// The array on the host: itself when it is there, else a copy.
    fn cpu(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let a = self.a.clone();
        let moved = py.detach(move || a.to_host()).or_raise(py)?;
        PyArray::wrap(py, moved)
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.a.len().or_raise(py)
    }

    fn __iter__(slf: Bound<'_, Self>) -> PyResult<ArrayIter> {
        let py = slf.py();
        let n = slf.get().a.len().or_raise(py)?;
        Ok(ArrayIter {
            a: slf.get().a.clone(),
            i: 0,
            n,
        })
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        PyArray::wrap(py, index_array(py, &self.a, key)?)
    }

    /// Assigns `value` (broadcast, converted with the default error mode)
    /// to the elements `key` selects; masks and positions are not
    /// assignable (they select copies).
    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let view = match parse_key(py, &self.a, key)? {
            Key::Indices(indices, field) => {
                let v = if indices.is_empty() {
                    self.a.clone()
                } else {
                    self.a.index(&indices).or_raise(py)?
                };
                match field {
                    Some(name) => v.field(&name).or_raise(py)?,
                    None => v,
                }
            }
            Key::Select(_) => {
                return Err(index_error(
                    py,
                    "assignment through a mask or positions is not supported; index with ints and slices",
                ));
            }
        };
        let src = match weak_scalar(py, value, view.tp())? {
            Some(s) => s,
            None => as_array(py, value)?,
        };
        py.detach(|| view.assign(&src, ErrorMode::Default))
            .or_raise(py)
    }

    /// A struct field by name (`a.x` is `a["x"]`).
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let has_field = self
            .a
            .tp()
            .dtype()
            .fields()
            .is_some_and(|f| f.index_of(name).is_some())
            || self
                .a
                .tp()
                .dtype()
                .option_value()
                .and_then(|t| t.fields())
                .is_some_and(|f| f.index_of(name).is_some());
        if !has_field {
            return Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                "dynd.Array of type {} has no attribute or field '{name}'",
                self.a.tp()
            )));
        }
        PyArray::wrap(py, self.a.field(name).or_raise(py)?)
    }

    /// The values as Python objects: lists for dims, dicts for structs,
    /// tuples for tuples, `None` for missing values; a 0-d array gives its
    /// scalar.
    fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_list(py, &self.a)
    }

    /// The values as JSON text.
    fn to_json(&self) -> String {
        self.a.to_json()
    }

    fn __repr__(&self) -> String {
        self.a.to_string()
    }

    fn __str__(&self) -> String {
        self.a.to_string()
    }

    /// A copy converted to `type` (a type without dims is the element
    /// type; the dims are kept), checked as `errmode` says.
    #[pyo3(signature = (r#type, errmode = "default"))]
    fn cast(
        &self,
        py: Python<'_>,
        r#type: &Bound<'_, PyAny>,
        errmode: &str,
    ) -> PyResult<Py<PyAny>> {
        let mode = self::errmode(py, errmode)?;
        let tp = with_dims_of(&self.a, type_arg(py, r#type)?);
        let out = py.detach(|| self.a.cast(&tp, mode)).or_raise(py)?;
        PyArray::wrap(py, out)
    }

    /// A copy in a fresh C-order layout.
    fn copy(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let out = py.detach(|| self.a.copy()).or_raise(py)?;
        PyArray::wrap(py, out)
    }

    /// A view (or copy) with new fixed dims (`-1` once: inferred).
    #[pyo3(signature = (*shape))]
    fn reshape(&self, py: Python<'_>, shape: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let dims: Vec<isize> = if shape.len() == 1 && shape.get_item(0)?.cast::<PyTuple>().is_ok() {
            shape.get_item(0)?.extract()?
        } else {
            shape.extract()?
        };
        PyArray::wrap(py, self.a.reshape(&dims).or_raise(py)?)
    }

    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        if self.a.ndim() > 0 {
            return Err(invalid(
                py,
                format!(
                    "the truth value of a {} array is ambiguous; use dynd.any or dynd.all",
                    self.a.tp()
                ),
            ));
        }
        to_list(py, &self.a)?.is_truthy()
    }

    fn __int__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.scalar(py, "int")
    }

    fn __index__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if !elem_builtin(self.a.tp()).is_some_and(is_integer) {
            return Err(type_error(
                py,
                format!("only integer arrays are indices, not {}", self.a.tp()),
            ));
        }
        self.scalar(py, "int")
    }

    fn __float__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.scalar(py, "float")
    }

    fn __complex__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.scalar(py, "complex")
    }

    // ---- operators (NumPy's: `/` true division, `//` floor, `%` the divisor's sign) ----

    fn __add__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "add", false)
    }
    fn __radd__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "add", true)
    }
    fn __sub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "subtract", false)
    }
    fn __rsub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "subtract", true)
    }
    fn __mul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "multiply", false)
    }
    fn __rmul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "multiply", true)
    }
    fn __truediv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "true_divide", false)
    }
    fn __rtruediv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "true_divide", true)
    }
    fn __floordiv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "floor_divide", false)
    }
    fn __rfloordiv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "floor_divide", true)
    }
    fn __mod__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "remainder", false)
    }
    fn __rmod__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "remainder", true)
    }
    fn __pow__(
        &self,
        py: Python<'_>,
        o: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if modulo.is_some_and(|m| !m.is_none()) {
            return Err(invalid(
                py,
                "pow() with a modulus is not supported on dynd arrays",
            ));
        }
        self.binary(py, o, "pow", false)
    }
    fn __rpow__(
        &self,
        py: Python<'_>,
        o: &Bound<'_, PyAny>,
        _modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        self.binary(py, o, "pow", true)
    }
    fn __and__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.logical(py, o, "logical_and", "&", false)
    }
    fn __rand__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.logical(py, o, "logical_and", "&", true)
    }
    fn __or__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.logical(py, o, "logical_or", "|", false)
    }
    fn __ror__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.logical(py, o, "logical_or", "|", true)
    }

    fn __neg__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.unary(py, "negative")
    }
    fn __pos__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }
    fn __abs__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.unary(py, "abs")
    }
    fn __invert__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if elem_builtin(self.a.tp()) != Some(BuiltinType::Bool) {
            return Err(type_error(
                py,
                format!("~ is logical not, for bool arrays; this is {}", self.a.tp()),
            ));
        }
        self.unary(py, "logical_not")
    }

    fn __richcmp__(
        &self,
        py: Python<'_>,
        o: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let name = match op {
            CompareOp::Lt => "less",
            CompareOp::Le => "less_equal",
            CompareOp::Eq => "equal",
            CompareOp::Ne => "not_equal",
            CompareOp::Gt => "greater",
            CompareOp::Ge => "greater_equal",
        };
        self.binary(py, o, name, false)
    }

    // ---- interop (crate::interop) ----

    /// NumPy's `__array__`: a zero-copy NumPy view of a fixed-dim numeric
    /// array (its base keeps this array alive); `copy=True` copies,
    /// `copy=False` refuses what would need a copy.
    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::interop::to_numpy(slf, dtype, copy)
    }

    /// Pickling (`dynd/_pickle.py`): with protocol 5 the data buffers go
    /// out of band; ragged and string data included.
    fn __reduce_ex__<'py>(slf: Bound<'py, Self>, protocol: i64) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        py.import("dynd._pickle")?
            .getattr("reduce")?
            .call1((slf, protocol))
    }

    /// The buffer protocol, for fixed-dim numeric arrays.
    ///
    /// # Safety
    /// `view` is a valid `Py_buffer` to fill, as CPython passes it.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut pyo3::ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        // SAFETY: (caller) `view` is CPython's buffer to fill.
        unsafe { crate::interop::get_buffer(slf, view, flags) }
    }

    /// # Safety
    /// `view` was filled by `__getbuffer__`.
    unsafe fn __releasebuffer__(&self, view: *mut pyo3::ffi::Py_buffer) {
        // SAFETY: (caller) `view` was filled by `get_buffer`.
        unsafe { crate::interop::release_buffer(view) }
    }

    /// DLPack export (fixed-dim numeric arrays, CPU).
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::interop::dlpack_capsule(py, &self.a, stream, max_version, dl_device, copy)
    }

    /// `(device type, device id)`: `(1, 0)` for the CPU, `(2, N)` for
    /// `cuda:N` (DLPack's kDLCUDA).
    fn __dlpack_device__(&self) -> (i32, i32) {
        match self.a.device() {
            DeviceId::Cpu => (1, 0),
            DeviceId::Cuda(n) => (2, n as i32),
        }
    }

    /// The Arrow PyCapsule interface: the schema.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::interop::arrow_schema_capsule(py, &self.a)
    }

    /// The Arrow PyCapsule interface: `(schema, array)`.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        crate::interop::arrow_array_capsules(py, &self.a, requested_schema)
    }

    /// The Arrow PyCapsule interface: a stream of one batch.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::interop::arrow_stream_capsule(py, &self.a, requested_schema)
    }
}

impl PyArray {
    /// The 0-d array's value through the Python builtin `conv`.
    fn scalar<'py>(&self, py: Python<'py>, conv: &str) -> PyResult<Bound<'py, PyAny>> {
        if self.a.ndim() > 0 {
            return Err(type_error(
                py,
                format!(
                    "only 0-d arrays convert to Python scalars; this is {}",
                    self.a.tp()
                ),
            ));
        }
        let v = to_list(py, &self.a)?;
        if v.is_none() {
            return Err(invalid(
                py,
                format!("the value is missing (type {})", self.a.tp()),
            ));
        }
        py.import("builtins")?.getattr(conv)?.call1((v,))
    }

    /// The other operand, or `None` when it is nothing dynd can use.
    fn operand(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Option<Array>> {
        if let Ok(a) = o.cast::<PyArray>() {
            return Ok(Some(a.get().a.clone()));
        }
        if let Some(s) = weak_scalar(py, o, self.a.tp())? {
            return Ok(Some(s));
        }
        if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() {
            return as_array(py, o).map(Some);
        }
        crate::interop::from_buffer(py, o)
    }

    fn binary(
        &self,
        py: Python<'_>,
        o: &Bound<'_, PyAny>,
        name: &str,
        reflected: bool,
    ) -> PyResult<Py<PyAny>> {
        // Another dynd array is borrowed, not cloned (a small call's time
        // is mostly such bookkeeping).
        let converted;
        let other: &Array = match o.cast::<PyArray>() {
            Ok(a) => &a.get().a,
            Err(_) => match self.operand(py, o)? {
                Some(a) => {
                    converted = a;
                    &converted
                }
                None => return Ok(py.NotImplemented()),
            },
        };
        let (x, y) = if reflected {
            (other, &self.a)
        } else {
            (&self.a, other)
        };
        let out = crate::gil::run(py, crate::gil::is_small(&[x, y]), || {
            if name == "true_divide" {
                let float = |a: &Array| {
                    if needs_float(a) {
                        as_float(a)
                    } else {
                        Ok(a.clone())
                    }
                };
                compute::divide(&float(x)?, &float(y)?)
            } else {
                compute::call(name, &[x, y])
            }
        })
        .or_raise(py)?;
        PyArray::wrap(py, out)
    }

    fn logical(
        &self,
        py: Python<'_>,
        o: &Bound<'_, PyAny>,
        name: &str,
        op: &str,
        reflected: bool,
    ) -> PyResult<Py<PyAny>> {
        if elem_builtin(self.a.tp()) != Some(BuiltinType::Bool) {
            return Err(type_error(
                py,
                format!("{op} is logical, for bool arrays; this is {}", self.a.tp()),
            ));
        }
        self.binary(py, o, name, reflected)
    }

    fn unary(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let out = crate::gil::run(py, crate::gil::is_small(&[&self.a]), || {
            compute::call(name, &[&self.a])
        })
        .or_raise(py)?;
        PyArray::wrap(py, out)
    }
}

/// Iterates over the outermost dim, giving views.
#[pyclass(module = "dynd")]
pub struct ArrayIter {
    a: Array,
    i: usize,
    n: usize,
}

#[pymethods]
impl ArrayIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        if self.i >= self.n {
            return Ok(None);
        }
        let v = self.a.index(&[Index::At(self.i as isize)]).or_raise(py)?;
        self.i += 1;
        PyArray::wrap(py, v).map(Some)
    }

    fn __length_hint__(&self) -> usize {
        self.n - self.i
    }
}
