//! `dynd._lowlevel`'s bridge between C ABI callable handles and
//! `dynd.Callable` (the rest of `_lowlevel` is ctypes, in
//! `python/dynd/_lowlevel.py`).

use crate::callable::PyCallable;
use crate::errors::OrRaise;
use dynd_capi::{callable_from_handle, callable_to_handle, dynd_callable};
use pyo3::prelude::*;

/// `_callable_from_handle(address)`: the `dynd.Callable` behind a
/// `dynd_callable` handle, which stays the caller's (borrowed).
/// `dynd.InvalidArgumentError` for an address that is not a live handle.
#[pyfunction]
pub fn _callable_from_handle(py: Python<'_>, address: usize) -> PyResult<PyCallable> {
    // SAFETY: `callable_from_handle` checks the handle's magic word before
    // using it (NULL, a misaligned address and a released handle are
    // errors); the caller vouches that a nonzero address is readable, as
    // for every `_lowlevel` handle.
    let c = unsafe { callable_from_handle(address as dynd_callable) }.or_raise(py)?;
    Ok(PyCallable { c })
}

/// `_callable_handle(f)`: a new `dynd_callable` reference to `f`, as an
/// address (release it with `dynd_callable_decref`).
#[pyfunction]
pub fn _callable_handle(f: &PyCallable) -> usize {
    callable_to_handle(f.c.clone()) as usize
}

/// Adds the bridge's functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_callable_from_handle, m)?)?;
    m.add_function(wrap_pyfunction!(_callable_handle, m)?)?;
    Ok(())
}
