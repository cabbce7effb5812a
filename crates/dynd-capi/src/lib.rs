//! # dynd-capi
//!
//! The C face of dynd (DESIGN §5): `libdynd_capi.so`, `libdynd_capi.a` and
//! the hand-written, normative header `include/dynd.h`.
//!
//! This crate holds no logic of its own. Each entry point
//! 1. checks its arguments (a NULL or invalid handle is a
//!    `DYND_ERR_INVALID_ARGUMENT` error naming the function and argument),
//! 2. converts handles to the Rust values they stand for, borrowing or
//!    taking over references as the header documents,
//! 3. calls the Rust API, and
//! 4. translates a Rust `Err` into a status (`-1`, `NULL`, or a `-1` offset)
//!    plus the thread-local error slot — the same slot Rust kernels report
//!    through — and catches any panic ([`std::panic::catch_unwind`]) so that
//!    no unwinding crosses the ABI.
//!
//! Handles:
//! - `dynd_type`: a builtin id below [`DYND_BUILTIN_TYPE_ID_LIMIT`], or the
//!   address of a type's shared node, reference counted by its `Arc` (see
//!   [`types`]).
//! - `dynd_array`: the array's own memory block header (an array *is* its
//!   memory block, as in libdynd), so the memory block functions work on it.
//! - `dynd_memory_block`, `dynd_pod_allocator_api`, `dynd_ckernel_builder`,
//!   `dynd_ckernel_prefix`: the dynd crate's `#[repr(C)]` structs themselves
//!   (their layouts are asserted at compile time in [`layout`]).
//! - `dynd_callable`: an `Arc` around a [`dynd::callable::Callable`] (see
//!   [`callable`]); `dynd_deferred_ckernel` is a `#[repr(C)]` struct that
//!   [`dynd_callable_from_deferred`] turns into a scalar callable.
//!
//! `docs/capi.md` has the ownership, threading and error rules and a
//! complete C example.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
// The C names are the ABI's.
#![allow(non_camel_case_types)]

pub mod array;
pub mod arrow;
pub mod callable;
pub mod error;
pub mod exec;
pub mod interop;
pub mod kernels;
pub mod layout;
pub mod memblock;
pub mod types;

pub use array::*;
pub use arrow::*;
pub use callable::*;
pub use error::*;
pub use exec::*;
pub use interop::*;
pub use kernels::*;
pub use memblock::*;
pub use types::*;

use dynd::{Error, Result};
use std::any::Any;
use std::mem::ManuallyDrop;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;

/// Runs the body of the entry point `func`: its value on success; on an
/// error or a panic, records the error in this thread's slot and returns
/// `fail`.
pub(crate) fn entry<T>(func: &'static str, fail: T, body: impl FnOnce() -> Result<T>) -> T {
    // AssertUnwindSafe: after a panic the entry point reports an error and
    // touches nothing the body was using; the Rust objects keep their own
    // invariants across panics (locks recover from poisoning).
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(e)) => {
            dynd::error::set_last_error(&e);
            fail
        }
        Err(payload) => {
            report_panic(func, payload);
            fail
        }
    }
}

/// Records a caught panic as an `External` error.
pub(crate) fn report_panic(func: &str, payload: Box<dyn Any + Send>) {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    // The payload may own memory; drop it here, inside the library, and
    // never let a panicking drop escape.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    let e = Error::external(format!("{func}: internal error (panic): {what}"));
    let _ = catch_unwind(AssertUnwindSafe(|| dynd::error::set_last_error(&e)));
}

/// The error for a NULL argument.
pub(crate) fn null_argument(func: &str, arg: &str) -> Error {
    Error::invalid_argument(format!("{func}: argument '{arg}' is NULL"))
}

/// `ptr` as non-null, or the NULL-argument error.
pub(crate) fn non_null<T>(ptr: *mut T, func: &str, arg: &str) -> Result<NonNull<T>> {
    NonNull::new(ptr).ok_or_else(|| null_argument(func, arg))
}

/// The body of a `*_decref`: NULL is a no-op; otherwise `borrow` checks the
/// handle, and the caller's reference, the one the borrowed value holds, is
/// given up with it.
pub(crate) fn release<P, T>(
    handle: *mut P,
    borrow: impl FnOnce(*mut P) -> Result<ManuallyDrop<T>>,
) -> Result<()> {
    if !handle.is_null() {
        drop(ManuallyDrop::into_inner(borrow(handle)?));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use dynd::ErrorKind;
    use dynd::error::{clear_last_error, last_error};

    #[test]
    fn a_panic_becomes_an_external_error() {
        clear_last_error();
        let status = entry("dynd_test", -1, || -> Result<i32> { panic!("boom") });
        assert_eq!(status, -1);
        let e = last_error().expect("an error in the slot");
        assert_eq!(e.kind(), ErrorKind::External);
        assert!(e.message().contains("dynd_test"), "{}", e.message());
        assert!(e.message().contains("boom"), "{}", e.message());
    }

    #[test]
    fn an_error_is_recorded_and_the_failure_value_returned() {
        clear_last_error();
        let p = entry("dynd_test", std::ptr::null_mut::<u8>(), || {
            Err(null_argument("dynd_test", "x"))
        });
        assert!(p.is_null());
        let e = last_error().expect("an error in the slot");
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(e.message(), "dynd_test: argument 'x' is NULL");
    }
}
