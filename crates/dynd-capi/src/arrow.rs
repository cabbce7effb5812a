//! The Arrow C Data Interface (DESIGN §5 wave 2, §12):
//! `dynd_array_to_arrow` fills the standard `ArrowSchema`/`ArrowArray`
//! structs (the consumer calls their release), and `dynd_array_from_arrow`
//! moves from them (their release becomes NULL; the array's runs once,
//! when the last dynd array over its buffers is gone, the schema's before
//! the call returns — on error too).

use crate::array::{array_out, borrow_array, dynd_array};
use crate::{entry, non_null};
use dynd::Array;
use dynd::interop::arrow::{FFI_ArrowArray, FFI_ArrowSchema};
use std::ffi::c_int;

/// Exports `a` into `*schema` and `*array` (both overwritten without being
/// read: they must not hold live structs). Returns 0, or -1 with the error
/// recorded: `DYND_ERR_TYPE` for an array without dims or of a type with
/// no Arrow form, `DYND_ERR_INVALID_ARGUMENT` for NULL arguments (then
/// nothing is written).
///
/// # Safety
/// 1. `a` is NULL or a live array from this library.
/// 2. `schema` and `array` are NULL or writable `struct ArrowSchema` /
///    `struct ArrowArray`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_to_arrow(
    a: dynd_array,
    schema: *mut FFI_ArrowSchema,
    array: *mut FFI_ArrowArray,
) -> c_int {
    const F: &str = "dynd_array_to_arrow";
    entry(F, -1, || {
        // SAFETY: (1).
        let a = unsafe { borrow_array(a, F, "a") }?;
        let schema = non_null(schema, F, "schema")?;
        let array = non_null(array, F, "array")?;
        let (s, arr) = a.to_arrow()?;
        // SAFETY: (2) writable; `write` does not drop what was there.
        unsafe {
            schema.as_ptr().write(s);
            array.as_ptr().write(arr);
        }
        Ok(0)
    })
}

/// Imports the array `*array` described by `*schema`, moving from both
/// (their release is set to NULL, also on error). Returns a new reference,
/// or NULL with the error recorded: `DYND_ERR_TYPE` for a format dynd does
/// not import (the message names it), `DYND_ERR_INVALID_ARGUMENT` for NULL
/// arguments (then nothing is moved), released structs, children counts
/// that disagree or invalid data. Whatever happens after the move, the
/// producer's releases each run exactly once.
///
/// # Safety
/// 1. `schema` and `array` are NULL or live structs of the Arrow C Data
///    Interface (or already released ones: release NULL), which hold what
///    the specification says.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_array_from_arrow(
    schema: *mut FFI_ArrowSchema,
    array: *mut FFI_ArrowArray,
) -> dynd_array {
    const F: &str = "dynd_array_from_arrow";
    entry(F, std::ptr::null_mut(), || {
        let schema = non_null(schema, F, "schema")?;
        let array = non_null(array, F, "array")?;
        // SAFETY: (1); from_raw moves the structs out and leaves released
        // (empty) structs behind, so the caller's copies are inert.
        let (s, arr) = unsafe {
            (
                FFI_ArrowSchema::from_raw(schema.as_ptr()),
                FFI_ArrowArray::from_raw(array.as_ptr()),
            )
        };
        Ok(array_out(Array::from_arrow(s, arr)?))
    })
}
