//! Types: `dynd_type` handles.
//!
//! A handle below [`DYND_BUILTIN_TYPE_ID_LIMIT`] is a builtin type id
//! (DESIGN §3: 1–14 and 16–18 are types; 0, 15 and 19–63 are invalid).
//! Any other handle is the address of the type's shared node — the
//! `Arc<Node>` inside a Rust [`Type`] — and its reference count is that
//! `Arc`'s strong count ([`Type::into_raw`], [`Type::as_raw`]). So:
//! - a new reference (`dynd_type_from_datashape`) is `Type::into_raw`;
//! - a borrowed handle (`dynd_array_type`) is `Type::as_raw` of the type the
//!   array holds, valid while the array lives, with no table and no
//!   allocation, and equal to the handle the array was made from;
//! - converting a handle back for a call borrows it (`ManuallyDrop`), so
//!   calls cost no reference count traffic.

use crate::error::string_out;
use crate::{entry, null_argument};
use dynd::types::{BUILTIN_TYPE_ID_LIMIT, FLOAT128_TYPE_ID};
use dynd::{Error, Result, Type};
use std::ffi::{CStr, c_char};
use std::mem::ManuallyDrop;

/// A `dynd_type` below this value is a builtin id.
pub const DYND_BUILTIN_TYPE_ID_LIMIT: usize = BUILTIN_TYPE_ID_LIMIT;

/// The opaque target of `dynd_type` (C's `struct dynd_type_s`).
#[repr(C)]
pub struct dynd_type_s {
    _opaque: [u8; 0],
}

/// A type handle: a builtin id, or a pointer to an extended type.
pub type dynd_type = *const dynd_type_s;

/// The type behind a handle, borrowed (dropping the `ManuallyDrop` does not
/// give up the caller's reference).
///
/// # Safety
/// 1. `tp` is a builtin value (below the limit) or a handle this library
///    handed out whose type is still alive.
pub(crate) unsafe fn borrow_type(
    tp: dynd_type,
    func: &str,
    arg: &str,
) -> Result<ManuallyDrop<Type>> {
    let raw = tp as usize;
    if raw == 0 {
        return Err(null_argument(func, arg));
    }
    // SAFETY: (1) is from_raw's (1); ManuallyDrop keeps the caller's
    // reference where it is (from_raw's 2).
    match unsafe { Type::from_raw(raw) } {
        Some(t) => Ok(ManuallyDrop::new(t)),
        None => Err(invalid_builtin(func, arg, raw)),
    }
}

/// [`entry`] for a function of one type handle, its argument `tp`: `body`
/// gets the type borrowed from it ([`borrow_type`]'s errors are reported as
/// any other).
///
/// # Safety
/// 1. `tp` is a builtin value or a live handle from this library.
unsafe fn type_entry<T>(
    func: &'static str,
    tp: dynd_type,
    fail: T,
    body: impl FnOnce(&Type) -> Result<T>,
) -> T {
    entry(func, fail, || {
        // SAFETY: (1).
        let t = unsafe { borrow_type(tp, func, "tp") }?;
        body(&t)
    })
}

fn invalid_builtin(func: &str, arg: &str, raw: usize) -> Error {
    let why = if raw == FLOAT128_TYPE_ID as usize {
        "float128 (15) is reserved and not supported".to_string()
    } else {
        format!("{raw} is not a builtin type id (valid ids are 1-14 and 16-18)")
    };
    Error::invalid_argument(format!(
        "{func}: argument '{arg}' is not a valid dynd_type: {why}"
    ))
}

/// The C string at `s` as utf-8 (`what` names it in errors).
///
/// # Safety
/// 1. `s` is NULL or a NUL-terminated string alive for `'a`.
pub(crate) unsafe fn str_arg<'a>(s: *const c_char, func: &str, arg: &str) -> Result<&'a str> {
    if s.is_null() {
        return Err(null_argument(func, arg));
    }
    // SAFETY: (1) non-null, so NUL-terminated and alive.
    unsafe { CStr::from_ptr(s) }
        .to_str()
        .map_err(|e| Error::parse(format!("{func}: argument '{arg}' is not valid utf-8: {e}")))
}

/// Parses datashape text into a type. Returns a new reference (release it
/// with `dynd_type_decref`), or NULL with the error recorded.
///
/// # Safety
/// 1. `datashape` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_type_from_datashape(datashape: *const c_char) -> dynd_type {
    const F: &str = "dynd_type_from_datashape";
    entry(F, std::ptr::null(), || {
        // SAFETY: (1).
        let text = unsafe { str_arg(datashape, F, "datashape") }?;
        Ok(Type::parse(text)?.into_raw() as dynd_type)
    })
}

/// The canonical datashape of a type, as a new string (free it with
/// `dynd_string_free`), or NULL with the error recorded.
///
/// # Safety
/// 1. `tp` is a builtin value or a live handle from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_type_to_datashape(tp: dynd_type) -> *mut c_char {
    const F: &str = "dynd_type_to_datashape";
    // SAFETY: (1).
    unsafe {
        type_entry(F, tp, std::ptr::null_mut(), |t| {
            string_out(F, t.to_string())
        })
    }
}

/// Adds a reference to a type (nothing for a builtin id).
///
/// # Safety
/// 1. `tp` is a builtin value or a live handle from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_type_incref(tp: dynd_type) {
    let incref = |t: &Type| {
        // SAFETY: (1) `t` is alive, so is its node.
        unsafe { Type::incref_raw(t.as_raw()) };
        Ok(())
    };
    // SAFETY: (1); validates builtin values, reports NULL.
    unsafe { type_entry("dynd_type_incref", tp, (), incref) }
}

/// Drops a reference to a type, freeing it with the last (nothing for a
/// builtin id or NULL).
///
/// # Safety
/// 1. `tp` is a builtin value, or a live handle from this library whose
///    reference the caller owns and gives up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_type_decref(tp: dynd_type) {
    const F: &str = "dynd_type_decref";
    entry(F, (), || {
        // SAFETY: (1); builtin values, NULL included, are ignored.
        unsafe { Type::decref_raw(tp as usize) };
        Ok(())
    })
}

/// Size of one element's data in bytes; 0 with the error recorded for an
/// invalid handle.
///
/// # Safety
/// 1. `tp` is a builtin value or a live handle from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_type_data_size(tp: dynd_type) -> usize {
    // SAFETY: (1).
    unsafe { type_entry("dynd_type_data_size", tp, 0, |t| Ok(t.data_size())) }
}

/// Alignment of the data in bytes; 0 with the error recorded for an
/// invalid handle.
///
/// # Safety
/// 1. `tp` is a builtin value or a live handle from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_type_data_alignment(tp: dynd_type) -> usize {
    // SAFETY: (1).
    unsafe {
        type_entry(
            "dynd_type_data_alignment",
            tp,
            0,
            |t| Ok(t.data_alignment()),
        )
    }
}

/// Size of the arrmeta in bytes (DESIGN §4); 0 with the error recorded for
/// an invalid handle.
///
/// # Safety
/// 1. `tp` is a builtin value or a live handle from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_type_arrmeta_size(tp: dynd_type) -> usize {
    // SAFETY: (1).
    unsafe { type_entry("dynd_type_arrmeta_size", tp, 0, |t| Ok(t.arrmeta_size())) }
}
