//! `import dynd`: the Python package's native module, `dynd._dynd`
//! (DESIGN §11). The pure-Python parts (exception classes, the Numba
//! kernel decorator, `_lowlevel`, the function per registry callable) are
//! in `python/dynd/`.
//!
//! The same shared library exports the C ABI of `dynd-capi` (DESIGN §5),
//! so Python, ctypes (`dynd._lowlevel`) and Numba kernels share one set of
//! globals: one registry, one error slot per thread.

mod array;
mod callable;
mod convert;
mod cuda;
mod errors;
mod gil;
mod interop;
mod json_block;
mod lowlevel;
mod module;
mod pickle;
mod pyarray;
mod types;

/// The C ABI, linked in so that its `dynd_*` symbols are exported from
/// this library.
pub use dynd_capi;
