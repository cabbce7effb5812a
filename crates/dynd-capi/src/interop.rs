//! Zero-copy exchange with other libraries (DESIGN §5 wave 2, §12):
//! strided memory someone else owns (`dynd_array_from_external`) and
//! DLPack 1.x tensors (`dynd_array_to_dlpack`, `dynd_array_from_dlpack`).
//!
//! Ownership that is handed over is taken at once, before any argument is
//! checked: `release(owner)` and a tensor's deleter run exactly once, also
//! when the call fails (then before it returns), so a C caller never
//! releases anything on the error path.

use crate::array::{array_out, borrow_array, dynd_array};
use crate::types::{borrow_type, dynd_type};
use crate::{entry, null_argument};
use dynd::interop::dlpack::DLManagedTensorVersioned;
use dynd::{Array, Error};
use std::ffi::{c_int, c_void};

/// A C owner and its release callback, released on drop unless handed on
/// with [`COwner::into_parts`].
struct COwner {
    owner: *mut c_void,
    release: Option<unsafe extern "C" fn(*mut c_void)>,
}

impl COwner {
    /// The owner and callback, no longer released by this guard.
    fn into_parts(self) -> (*mut c_void, Option<unsafe extern "C" fn(*mut c_void)>) {
        let parts = (self.owner, self.release);
        std::mem::forget(self);
        parts
    }
}

impl Drop for COwner {
    fn drop(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: the caller of dynd_array_from_external lets us call
            // release(owner) once; this guard is dropped once and only when
            // the owner was not handed on.
            unsafe { release(self.owner) };
        }
    }
}

/// An array over `ndim` fixed dims of `tp` elements at `data`, memory that
/// someone else owns, without copying. `shape` and `strides` hold `ndim`
/// values each (they may be NULL when `ndim` is 0); strides are in bytes and
/// may be negative or zero; `data` is the address of element `[0, 0, ...]`.
/// `release(owner)` runs once, when the last array or view over the data is
/// gone — or before this call returns NULL. `release` may be NULL for
/// memory that outlives every array. When `writable` is 0 the array and its
/// views refuse assignment.
///
/// Returns a new reference, or NULL with the error recorded:
/// `DYND_ERR_TYPE` for an element type that is symbolic, a dim, void, or
/// holds references (strings, var dims, pointers);
/// `DYND_ERR_INVALID_ARGUMENT` for a NULL `shape`/`strides`, a negative dim
/// size, a misaligned `data` or stride, or a layout that does not fit the
/// address space.
///
/// # Safety
/// 1. `tp` is a builtin value or a live type handle from this library.
/// 2. `shape` and `strides` are NULL or readable for `ndim` values.
/// 3. Every element the shape and strides reach is readable (and writable
///    when `writable` is non-zero) and holds a valid `tp` value until
///    `release(owner)` is called.
/// 4. `release`, when not NULL, may be called with `owner` once, from any
///    thread.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn dynd_array_from_external(
    tp: dynd_type,
    data: *mut std::ffi::c_char,
    ndim: usize,
    shape: *const isize,
    strides: *const isize,
    owner: *mut c_void,
    release: Option<unsafe extern "C" fn(*mut c_void)>,
    writable: c_int,
) -> dynd_array {
    const F: &str = "dynd_array_from_external";
    // Taken first: every failure below releases it by dropping the guard
    // (also when a panic unwinds to `entry`).
    let guard = COwner { owner, release };
    entry(F, std::ptr::null_mut(), move || {
        // SAFETY: (1).
        let tp = unsafe { borrow_type(tp, F, "tp") }?;
        let read = |p: *const isize, arg: &str| -> dynd::Result<&[isize]> {
            if ndim == 0 {
                return Ok(&[]);
            }
            if p.is_null() {
                return Err(null_argument(F, arg));
            }
            if ndim > isize::MAX as usize / size_of::<isize>() {
                return Err(Error::invalid_argument(format!(
                    "{F}: argument 'ndim' ({ndim}) is larger than any array"
                )));
            }
            // SAFETY: (2) non-null and readable for ndim values.
            Ok(unsafe { std::slice::from_raw_parts(p, ndim) })
        };
        let dims = read(shape, "shape")?;
        let strides = read(strides, "strides")?;
        let mut shape = Vec::with_capacity(ndim);
        for (k, &n) in dims.iter().enumerate() {
            shape.push(usize::try_from(n).map_err(|_| {
                Error::invalid_argument(format!("{F}: shape[{k}] is negative ({n})"))
            })?);
        }
        let (owner, release) = guard.into_parts();
        // SAFETY: (3) is from_external_c's (1) and (2); (4) its (3). It
        // takes the owner over: it releases it on failure itself.
        let a = unsafe {
            Array::from_external_c(
                (*tp).clone(),
                data.cast(),
                &shape,
                strides,
                owner,
                release,
                writable != 0,
            )
        }?;
        Ok(array_out(a))
    })
}

/// A DLPack 1.x tensor over the array's data, without copying: fixed dims
/// of a numeric builtin (bool, integers, float16, bfloat16, float32,
/// float64, complex). Strides are in elements and always filled; a read-only
/// array sets `DLPACK_FLAG_BITMASK_READ_ONLY`. The tensor holds a reference
/// to the array; the consumer calls `t->deleter(t)` once.
///
/// Returns NULL with the error recorded: `DYND_ERR_TYPE` for a var dim or a
/// non-numeric element type, `DYND_ERR_INVALID_ARGUMENT` for NULL or a
/// byte stride that is not a whole number of elements.
///
/// # Safety
/// 1. `a` is NULL or a live array from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_to_dlpack(a: dynd_array) -> *mut DLManagedTensorVersioned {
    const F: &str = "dynd_array_to_dlpack";
    entry(F, std::ptr::null_mut(), || {
        // SAFETY: (1).
        let a = unsafe { borrow_array(a, F, "a") }?;
        a.to_dlpack()
    })
}

/// An array over a DLPack 1.x tensor's data, without copying. Takes
/// ownership of `t` always: its deleter runs once, when the last array or
/// view over the data is gone, or before this returns NULL. A tensor
/// flagged read-only gives a read-only array; `byte_offset` is honoured;
/// NULL strides mean C order.
///
/// Returns a new reference, or NULL with the error recorded:
/// `DYND_ERR_INVALID_ARGUMENT` for NULL, a major version other than 1, a
/// device other than the CPU (named in the message), a bad shape or a
/// misaligned pointer; `DYND_ERR_TYPE` for a data type dynd does not have
/// (its code, bits and lanes in the message).
///
/// # Safety
/// 1. `t` is NULL or a live tensor whose ownership passes to this call.
/// 2. Its data, shape and strides are valid as DLPack says until its
///    deleter runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_from_dlpack(t: *mut DLManagedTensorVersioned) -> dynd_array {
    const F: &str = "dynd_array_from_dlpack";
    entry(F, std::ptr::null_mut(), || {
        // SAFETY: (1) and (2) are from_dlpack's; it owns `t` from its first
        // step, so the deleter runs once on every path.
        Ok(array_out(unsafe { Array::from_dlpack(t) }?))
    })
}
