//! `dynd.Type`: a runtime type, spoken as datashape text.

use crate::errors::{OrRaise, type_error};
use dynd::Type;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// A dynd type (`dynd.type("3 * var * {x: int32}")`). `str(t)` is the
/// canonical datashape; `t == "..."` compares with datashape text.
#[pyclass(name = "Type", module = "dynd", frozen)]
pub struct PyDType {
    /// The type.
    pub tp: Type,
}

#[pymethods]
impl PyDType {
    #[new]
    fn py_new(py: Python<'_>, tp: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(PyDType {
            tp: type_arg(py, tp)?,
        })
    }

    fn __str__(&self) -> String {
        self.tp.to_string()
    }

    fn __repr__(&self) -> String {
        format!("dynd.type({:?})", self.tp.to_string())
    }

    /// Equal to another `dynd.Type` of the same type, or to datashape text
    /// that parses to it; never equal to anything else.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if let Ok(t) = other.cast::<PyDType>() {
            return t.get().tp == self.tp;
        }
        if let Ok(s) = other.cast::<PyString>() {
            return s
                .to_str()
                .ok()
                .and_then(|s| Type::parse(s).ok())
                .is_some_and(|t| t == self.tp);
        }
        false
    }

    fn __hash__(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.tp.to_string().hash(&mut h);
        h.finish()
    }

    /// Bytes of one value's data.
    #[getter]
    fn data_size(&self) -> usize {
        self.tp.data_size()
    }

    /// Alignment of the data, in bytes.
    #[getter]
    fn data_alignment(&self) -> usize {
        self.tp.data_alignment()
    }

    /// Bytes of arrmeta (DESIGN §4).
    #[getter]
    fn arrmeta_size(&self) -> usize {
        self.tp.arrmeta_size()
    }

    /// The field names of the struct under the dims (`None` when the
    /// element is no struct).
    #[getter]
    fn fields(&self) -> Option<Vec<String>> {
        let e = self.tp.dtype();
        let e = e.option_value().unwrap_or(e);
        match e.kind() {
            dynd::types::TypeKind::Struct(f) => Some(f.names().to_vec()),
            _ => None,
        }
    }

    /// Number of leading dims.
    #[getter]
    fn ndim(&self) -> usize {
        self.tp.ndim()
    }
}

/// A type from a `dynd.Type` or datashape text; anything else is a
/// `dynd.TypeMismatchError`, bad text a `dynd.ParseError`.
pub fn type_arg(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Type> {
    if let Ok(t) = obj.cast::<PyDType>() {
        return Ok(t.get().tp.clone());
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Type::parse(s.to_str()?).or_raise(py);
    }
    Err(type_error(
        py,
        format!(
            "a type must be a dynd.Type or datashape text, not {}",
            obj.get_type().name()?
        ),
    ))
}
