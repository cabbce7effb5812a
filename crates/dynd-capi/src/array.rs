//! Arrays: a `dynd_array` is the array's own memory block (kind 0, the
//! array kind), so `dynd_array_incref`/`decref` and
//! `dynd_memory_block_incref`/`decref` on the same pointer are one and the
//! same reference count.

use crate::error::string_out;
use crate::types::{borrow_type, dynd_type};
use crate::{entry, non_null, release};
use dynd::kernels::assign::ErrorMode;
use dynd::memblock::{self, MemBlock, MemoryBlockHeader};
use dynd::{Array, Error, Result};
use std::ffi::{c_char, c_int};
use std::mem::ManuallyDrop;

/// The opaque target of `dynd_array` (C's `struct dynd_array_s`).
#[repr(C)]
pub struct dynd_array_s {
    _opaque: [u8; 0],
}

/// An array handle: the array's memory block.
pub type dynd_array = *mut dynd_array_s;

/// No checking: plain conversion, as C would.
pub const DYND_ASSIGN_NOCHECK: c_int = 0;
/// Error when a value is out of the destination's range.
pub const DYND_ASSIGN_OVERFLOW: c_int = 1;
/// Also error when a float to integer conversion drops a fraction.
pub const DYND_ASSIGN_FRACTIONAL: c_int = 2;
/// Also error when any value would change.
pub const DYND_ASSIGN_INEXACT: c_int = 3;
/// The default: fractional.
pub const DYND_ASSIGN_DEFAULT: c_int = 4;

/// The array behind a handle, borrowed (dropping the `ManuallyDrop` does
/// not give up the caller's reference). A block that is not an array is an
/// `InvalidArgument` error.
///
/// # Safety
/// 1. `a` is NULL or a live memory block made by this library, to which the
///    caller holds a reference for as long as the result is used.
pub(crate) unsafe fn borrow_array(
    a: dynd_array,
    func: &str,
    arg: &str,
) -> Result<ManuallyDrop<Array>> {
    let ptr = non_null(a.cast::<MemoryBlockHeader>(), func, arg)?;
    // SAFETY: (1) a live block. The caller's reference is only borrowed:
    // both outcomes below keep it from being dropped (ManuallyDrop, forget).
    let block = unsafe { MemBlock::from_raw(ptr) };
    match Array::from_memblock(block) {
        Ok(array) => Ok(ManuallyDrop::new(array)),
        Err(block) => {
            let kind = block.kind();
            std::mem::forget(block);
            Err(Error::invalid_argument(format!(
                "{func}: argument '{arg}' is not an array (it is a memory block of kind {kind:?})"
            )))
        }
    }
}

/// Hands an owned array to C as a new reference.
pub(crate) fn array_out(a: Array) -> dynd_array {
    let block = a.memblock().clone();
    drop(a);
    block.into_raw().as_ptr().cast()
}

/// A new array of type `tp` with the default layout, zero-filled (numbers
/// 0, strings and var dims empty). Returns a new reference, or NULL with the
/// error recorded (`DYND_ERR_TYPE` for a symbolic type, `DYND_ERR_ALLOC`).
///
/// # Safety
/// 1. `tp` is a builtin value or a live type handle from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_empty(tp: dynd_type) -> dynd_array {
    const F: &str = "dynd_array_empty";
    entry(F, std::ptr::null_mut(), || {
        // SAFETY: (1).
        let tp = unsafe { borrow_type(tp, F, "tp") }?;
        Ok(array_out(Array::empty(&*tp)?))
    })
}

/// Parses `len` bytes of utf-8 JSON as an array of type `tp`. Returns a new
/// reference, or NULL with the error recorded.
///
/// # Safety
/// 1. `tp` is a builtin value or a live type handle from this library.
/// 2. `json` is NULL or readable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_from_json(
    tp: dynd_type,
    json: *const c_char,
    len: usize,
) -> dynd_array {
    const F: &str = "dynd_array_from_json";
    entry(F, std::ptr::null_mut(), || {
        // SAFETY: (1).
        let tp = unsafe { borrow_type(tp, F, "tp") }?;
        let json = non_null(json.cast_mut(), F, "json")?;
        if len > isize::MAX as usize {
            return Err(Error::invalid_argument(format!(
                "{F}: argument 'len' ({len}) is larger than any buffer"
            )));
        }
        // SAFETY: (2) non-null and readable for `len` bytes (<= isize::MAX).
        let bytes = unsafe { std::slice::from_raw_parts(json.as_ptr().cast::<u8>(), len) };
        Ok(array_out(Array::from_json_bytes(&*tp, bytes)?))
    })
}

/// The array as compact JSON (DESIGN §8), as a new string (free it with
/// `dynd_string_free`), or NULL with the error recorded.
///
/// # Safety
/// 1. `a` is NULL or a live array from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_to_json(a: dynd_array) -> *mut c_char {
    const F: &str = "dynd_array_to_json";
    entry(F, std::ptr::null_mut(), || {
        // SAFETY: (1).
        let a = unsafe { borrow_array(a, F, "a") }?;
        string_out(F, a.to_json())
    })
}

/// The array's type, borrowed: valid while the array lives.
///
/// # Safety
/// 1. `a` is NULL or a live array from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_type(a: dynd_array) -> dynd_type {
    const F: &str = "dynd_array_type";
    entry(F, std::ptr::null(), || {
        // SAFETY: (1).
        let a = unsafe { borrow_array(a, F, "a") }?;
        // The node is owned by the array block, which outlives this borrow.
        Ok(a.tp().as_raw() as dynd_type)
    })
}

/// Pointer to the array's data, laid out as DESIGN §4 says for its type and
/// arrmeta. Borrowed: valid while the array lives.
///
/// # Safety
/// 1. `a` is NULL or a live array from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_data(a: dynd_array) -> *mut c_char {
    const F: &str = "dynd_array_data";
    entry(F, std::ptr::null_mut(), || {
        // SAFETY: (1).
        Ok(unsafe { borrow_array(a, F, "a") }?.data_ptr().cast())
    })
}

/// Pointer to the array's arrmeta (`dynd_type_arrmeta_size` bytes).
/// Borrowed: valid while the array lives.
///
/// # Safety
/// 1. `a` is NULL or a live array from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_arrmeta(a: dynd_array) -> *const c_char {
    const F: &str = "dynd_array_arrmeta";
    entry(F, std::ptr::null(), || {
        // SAFETY: (1).
        Ok(unsafe { borrow_array(a, F, "a") }?.arrmeta_ptr().cast())
    })
}

/// The memory block that owns the array's data, borrowed: valid while the
/// array lives (incref it to keep it longer).
///
/// # Safety
/// 1. `a` is NULL or a live array from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_data_reference(a: dynd_array) -> *mut MemoryBlockHeader {
    const F: &str = "dynd_array_data_reference";
    entry(F, std::ptr::null_mut(), || {
        // SAFETY: (1).
        Ok(unsafe { borrow_array(a, F, "a") }?
            .data_ref()
            .as_ptr()
            .as_ptr())
    })
}

/// Assigns `src` into `dst` under `errmode` (`DYND_ASSIGN_*`), converting
/// and broadcasting (DESIGN §6). Returns 0, or -1 with the error recorded;
/// on error `dst` may be partly written.
///
/// # Safety
/// 1. `dst` and `src` are NULL or live arrays from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_assign(
    dst: dynd_array,
    src: dynd_array,
    errmode: c_int,
) -> c_int {
    const F: &str = "dynd_array_assign";
    entry(F, -1, || {
        // SAFETY: (1).
        let dst = unsafe { borrow_array(dst, F, "dst") }?;
        // SAFETY: (1).
        let src = unsafe { borrow_array(src, F, "src") }?;
        let mode = ErrorMode::from_raw(errmode).map_err(|e| e.context(F))?;
        dst.assign(&src, mode)?;
        Ok(0)
    })
}

/// Adds a reference to an array.
///
/// # Safety
/// 1. `a` is NULL or a live array from this library, to which the caller
///    holds a reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_incref(a: dynd_array) {
    const F: &str = "dynd_array_incref";
    entry(F, (), || {
        // SAFETY: (1); checks that it is an array.
        let array = unsafe { borrow_array(a, F, "a") }?;
        // SAFETY: the block is live (the caller's reference).
        unsafe { memblock::incref(array.memblock().as_ptr()) };
        Ok(())
    })
}

/// Drops a reference to an array, freeing it with the last. NULL is a
/// no-op.
///
/// # Safety
/// 1. `a` is NULL or a live array from this library, whose reference the
///    caller owns and gives up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_decref(a: dynd_array) {
    const F: &str = "dynd_array_decref";
    // SAFETY: (1); checks that it is an array.
    entry(F, (), || release(a, |a| unsafe { borrow_array(a, F, "a") }))
}
