//! Errors: the codes, the thread-local slot, and library-allocated strings.
//!
//! The slot is dynd's own ([`dynd::error`]): Rust kernels, the POD allocator
//! API and C kernels calling [`dynd_error_set`] all report through it. A
//! failing call records its error there; a successful call may leave an
//! older error in place (as `errno`), so callers test return values and read
//! the slot only after a failure.

use crate::entry;
use dynd::error::{clear_last_error, last_error, set_last_error};
use dynd::{Error, ErrorKind};
use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// No error.
pub const DYND_OK: c_int = 0;
/// A bad argument: NULL, an invalid handle, a wrong count, an unknown mode.
pub const DYND_ERR_INVALID_ARGUMENT: c_int = 1;
/// A type that does not fit the operation.
pub const DYND_ERR_TYPE: c_int = 2;
/// A value out of the destination's range.
pub const DYND_ERR_OVERFLOW: c_int = 3;
/// A float to integer conversion that would drop a fractional part.
pub const DYND_ERR_FRACTIONAL: c_int = 4;
/// A conversion that would change the value.
pub const DYND_ERR_INEXACT: c_int = 5;
/// An index or axis out of range.
pub const DYND_ERR_INDEX: c_int = 6;
/// Shapes that do not broadcast.
pub const DYND_ERR_BROADCAST: c_int = 7;
/// Malformed text (datashape, JSON, utf-8).
pub const DYND_ERR_PARSE: c_int = 8;
/// Memory could not be allocated.
pub const DYND_ERR_ALLOC: c_int = 9;
/// An error reported by code outside dynd.
pub const DYND_ERR_EXTERNAL: c_int = 10;

thread_local! {
    /// The text `dynd_error_message` last handed out on this thread.
    static MESSAGE: RefCell<CString> = RefCell::new(CString::default());
}

/// The code of the error in this thread's slot (`DYND_ERR_*`), or
/// `DYND_OK` (0) when the slot is empty.
#[unsafe(no_mangle)]
pub extern "C" fn dynd_error_code() -> c_int {
    catch_unwind(|| last_error().map_or(DYND_OK, |e| e.kind().code())).unwrap_or(DYND_ERR_EXTERNAL)
}

/// The message of the error in this thread's slot, or `""` when it is
/// empty. Borrowed: valid until the next call into the library on this
/// thread.
#[unsafe(no_mangle)]
pub extern "C" fn dynd_error_message() -> *const c_char {
    catch_unwind(|| {
        let text = last_error()
            .map(|e| e.message().to_string())
            .unwrap_or_default();
        // A message with a NUL byte would be cut short in C; show it instead.
        let text = CString::new(text.replace('\0', "\\0")).unwrap_or_default();
        MESSAGE.with(|m| {
            let mut m = m.borrow_mut();
            *m = text;
            m.as_ptr()
        })
    })
    .unwrap_or(c"".as_ptr())
}

/// Records an error in this thread's slot: how a third-party kernel reports
/// a failure before returning -1. A `code` of `DYND_OK` clears the slot; a
/// code that is not a `DYND_ERR_*` value is recorded as
/// `DYND_ERR_EXTERNAL`, with the code in the message. A NULL `message`
/// records the code with the message `"(no message)"`; invalid utf-8 is
/// replaced.
///
/// # Safety
/// 1. `message` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_error_set(code: c_int, message: *const c_char) {
    entry("dynd_error_set", (), || {
        let text = if message.is_null() {
            "(no message)".to_string()
        } else {
            // SAFETY: (1) non-null, so NUL-terminated.
            unsafe { CStr::from_ptr(message) }
                .to_string_lossy()
                .into_owned()
        };
        match code {
            DYND_OK => clear_last_error(),
            _ => {
                let e = match ErrorKind::from_code(code) {
                    Some(kind) => Error::new(kind, text),
                    None => Error::external(format!("(unknown error code {code}) {text}")),
                };
                set_last_error(&e);
            }
        }
        Ok(())
    })
}

/// Empties this thread's error slot.
#[unsafe(no_mangle)]
pub extern "C" fn dynd_error_clear() {
    let _ = catch_unwind(clear_last_error);
}

/// Frees a string the library returned (`dynd_type_to_datashape`,
/// `dynd_array_to_json`). NULL is a no-op.
///
/// # Safety
/// 1. `s` is NULL or a string returned by this library and not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    // SAFETY: (1) made by `CString::into_raw` in `string_out`, freed once.
    let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { CString::from_raw(s) })));
}

/// A Rust string as a library-allocated C string (freed by
/// [`dynd_string_free`]).
pub(crate) fn string_out(func: &str, s: String) -> dynd::Result<*mut c_char> {
    CString::new(s).map(CString::into_raw).map_err(|_| {
        Error::invalid_argument(format!(
            "{func}: the text contains a NUL byte and cannot be returned as a C string"
        ))
    })
}
