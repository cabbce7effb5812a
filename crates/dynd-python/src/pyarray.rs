//! The `dynd.Array` class itself: the handle every other module of the
//! package passes around. It names no other module of the crate, so the
//! conversions (`convert`), the protocols (`interop`), pickling and the
//! module functions use it without reaching into `array`, which holds the
//! class's methods and uses all of those.

use dynd::Array;
use pyo3::prelude::*;

/// A dynd array: typed, possibly ragged, possibly missing values, over
/// shared memory. Indexing gives views; operators and the `dynd.*`
/// functions run dynd's kernels with the GIL released.
#[pyclass(name = "Array", module = "dynd", frozen, weakref)]
pub struct PyArray {
    /// The array.
    pub a: Array,
}

impl PyArray {
    /// Wraps `a` as a Python object.
    pub fn wrap(py: Python<'_>, a: Array) -> PyResult<Py<PyAny>> {
        Ok(Bound::new(py, PyArray { a })?.into_any().unbind())
    }
}
