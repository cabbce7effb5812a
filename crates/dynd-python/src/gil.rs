//! When a call releases the GIL.
//!
//! Releasing and re-taking the GIL costs about 0.1-0.2 µs, as much as
//! adding two 10-element arrays. As NumPy does (it keeps the GIL for loops
//! of 500 elements or fewer), a call whose work is provably tiny keeps it:
//! every argument has only fixed dims over builtin scalars (no var dims,
//! strings or pointers, whose size the type does not bound) and the
//! product of the arguments' element counts — an upper bound of the
//! broadcast output's count — is at most [`SMALL_ELEMENTS`]. Such a call
//! runs for a few microseconds at most, on this thread only (dynd splits a
//! call across threads from 2^17 output elements), so holding the GIL
//! cannot deadlock a kernel that takes it (a ctypes callback) and never
//! stalls other Python threads for long. Every other call releases it.

use dynd::Array;
use dynd::types::TypeKind;
use pyo3::prelude::*;

/// The largest product of argument element counts run with the GIL held.
pub const SMALL_ELEMENTS: usize = 4096;

/// The element count of `a` when its type bounds the work: fixed dims
/// over a builtin scalar; `None` otherwise.
fn bounded_count(a: &Array) -> Option<usize> {
    let mut t = a.tp();
    let mut n: usize = 1;
    loop {
        match t.kind() {
            TypeKind::FixedDim { size, elem } => {
                n = n.checked_mul(*size)?;
                t = elem;
            }
            _ => return t.as_builtin().map(|_| n),
        }
    }
}

/// `true` when a call on `args` is tiny enough to keep the GIL.
pub fn is_small(args: &[&Array]) -> bool {
    let mut product: usize = 1;
    for a in args {
        match bounded_count(a).and_then(|n| product.checked_mul(n)) {
            Some(p) if p <= SMALL_ELEMENTS => product = p,
            _ => return false,
        }
    }
    true
}

/// Runs `f`, releasing the GIL unless the call is `small` ([`is_small`]
/// of its arguments).
pub fn run<T: Send>(py: Python<'_>, small: bool, f: impl FnOnce() -> T + Send) -> T {
    if small { f() } else { py.detach(f) }
}
