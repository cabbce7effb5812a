//! dynd errors as the Python exception classes of DESIGN §11, which live in
//! `dynd/_errors.py` (each derives from `dynd.Error` and the matching
//! builtin, and carries `.kind`).

use dynd::{Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

static CLASSES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

/// The Python class name of each kind.
fn class_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidArgument => "InvalidArgumentError",
        ErrorKind::Type => "TypeMismatchError",
        ErrorKind::Overflow => "ValueOverflowError",
        ErrorKind::Fractional => "FractionalError",
        ErrorKind::Inexact => "InexactError",
        ErrorKind::Index => "IndexOutOfBoundsError",
        ErrorKind::Broadcast => "BroadcastError",
        ErrorKind::Parse => "ParseError",
        ErrorKind::Alloc => "AllocError",
        ErrorKind::External => "ExternalError",
    }
}

/// The dynd error as its Python exception.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let classes = CLASSES.get_or_try_init(py, || -> PyResult<Vec<Py<PyType>>> {
        let m = py.import("dynd._errors")?;
        ErrorKind::ALL
            .iter()
            .map(|k| Ok(m.getattr(class_name(*k))?.cast_into::<PyType>()?.unbind()))
            .collect()
    });
    match classes {
        Ok(classes) => {
            let i = ErrorKind::ALL
                .iter()
                .position(|k| *k == e.kind())
                .unwrap_or(0);
            PyErr::from_type(classes[i].bind(py).clone(), e.message().to_string())
        }
        // `dynd._errors` did not import (a broken install): say both.
        Err(import_error) => pyo3::exceptions::PyRuntimeError::new_err(format!(
            "{} (and dynd._errors failed to import: {import_error})",
            e.message()
        )),
    }
}

/// `?` for dynd results inside functions that return `PyResult`.
pub trait OrRaise<T> {
    /// The value, or the error as its Python exception.
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for dynd::Result<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}

/// A `dynd.InvalidArgumentError` with `message`.
pub fn invalid(py: Python<'_>, message: impl Into<String>) -> PyErr {
    to_py(py, Error::invalid_argument(message.into()))
}

/// A `dynd.TypeMismatchError` with `message`.
pub fn type_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    to_py(py, Error::type_error(message.into()))
}

/// A `dynd.IndexOutOfBoundsError` with `message`.
pub fn index_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    to_py(py, Error::index(message.into()))
}
