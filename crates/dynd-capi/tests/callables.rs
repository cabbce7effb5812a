//! Callables seen from Rust through the C face: a callable registered on
//! the Rust side is found by `dynd_callable_lookup` and called with
//! `dynd_callable_call`; handles and Rust `Callable`s convert both ways.

use dynd::callable::{Callable, register};
use dynd::{Array, ErrorKind};
use dynd_capi::*;
use std::ffi::CStr;

/// The array behind a new C reference, as JSON, releasing the reference.
///
/// # Safety
/// `a` is a live array handle whose reference the caller gives up.
unsafe fn json_of(a: dynd_array) -> String {
    if a.is_null() {
        // SAFETY: the message is a NUL-terminated string, valid until the
        // next call on this thread.
        let msg = unsafe { CStr::from_ptr(dynd_error_message()) };
        panic!("error {}: {}", dynd_error_code(), msg.to_string_lossy());
    }
    // SAFETY: the caller's promise; the string is freed once.
    unsafe {
        let s = dynd_array_to_json(a);
        let out = CStr::from_ptr(s).to_str().unwrap().to_string();
        dynd_string_free(s);
        dynd_array_decref(a);
        out
    }
}

/// A C handle for a Rust array (a new reference).
fn handle(a: &Array) -> dynd_array {
    let h = a.memblock().as_ptr().as_ptr().cast::<dynd_array_s>();
    // SAFETY: the block is live (`a` holds it); the new reference is the
    // caller's.
    unsafe { dynd_array_incref(h) };
    h
}

#[test]
fn a_callable_registered_in_rust_is_found_and_called_from_c() {
    register(
        "capi_test_add",
        Callable::from_fn2("capi_test_add", |x: i32, y: i32| x.wrapping_add(y)),
    );
    let x = Array::from_json("3 * var * int32", "[[1,2,3],[],[4,5]]").unwrap();
    let y = Array::from_json("int32", "10").unwrap();
    // SAFETY: NUL-terminated names; live handles, each released once.
    unsafe {
        let f = dynd_callable_lookup(c"capi_test_add".as_ptr());
        assert!(!f.is_null());
        let args = [handle(&x), handle(&y)];
        let r = dynd_callable_call(f, 2, args.as_ptr());
        assert_eq!(json_of(r), "[[11,12,13],[],[14,15]]");
        // The same Callable behind the handle.
        let back = callable_from_handle(f).unwrap();
        assert_eq!(back.name(), "capi_test_add");
        dynd_callable_decref(f);
        for a in args {
            dynd_array_decref(a);
        }

        // An unknown name lists the known ones.
        dynd_error_clear();
        assert!(dynd_callable_lookup(c"capi_test_nothing".as_ptr()).is_null());
        assert_eq!(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
        let msg = CStr::from_ptr(dynd_error_message()).to_str().unwrap();
        assert!(msg.contains("capi_test_add"), "{msg}");
    }
}

#[test]
fn rust_callables_become_handles() {
    let f = Callable::from_fn1("capi_test_neg", |x: f64| -x);
    let h = callable_to_handle(f);
    let x = Array::from_json("2 * var * float64", "[[1.5],[2,-3]]").unwrap();
    // SAFETY: live handles, each released once.
    unsafe {
        let a = handle(&x);
        dynd_callable_incref(h);
        dynd_callable_decref(h);
        assert_eq!(json_of(dynd_callable_call(h, 1, &a)), "[[-1.5],[-2.0,3.0]]");
        // A wrong type is a type error naming the callable.
        let i = handle(&Array::from_json("int32", "1").unwrap());
        assert!(dynd_callable_call(h, 1, &i).is_null());
        assert_eq!(dynd_error_code(), ErrorKind::Type.code());
        dynd_array_decref(i);
        dynd_array_decref(a);
        dynd_callable_decref(h);
    }
}

/// The error a kernel raises on one of dynd's worker threads reaches the
/// thread that called, with its kind and message: a Rust kernel failing on
/// one element of 300 000 (the parallel path).
#[test]
fn a_kernel_error_on_a_worker_thread_reaches_the_caller() {
    let f = Callable::try_from_fn1("capi_test_picky", |x: i32| {
        if x == 123_456 {
            Err(dynd::Error::inexact("picky: 123456 is not welcome"))
        } else {
            Ok(x)
        }
    });
    let n = 300_000;
    let x = Array::empty(format!("{n} * int32").as_str()).unwrap();
    // SAFETY: a new, contiguous, writable array of n int32s.
    let data = unsafe { std::slice::from_raw_parts_mut(x.data_ptr().cast::<i32>(), n) };
    for (i, v) in data.iter_mut().enumerate() {
        *v = i as i32;
    }
    let h = callable_to_handle(f);
    let caller = std::thread::current().id();
    // SAFETY: live handles, each released once.
    unsafe {
        let a = handle(&x);
        dynd_error_clear();
        assert!(dynd_callable_call(h, 1, &a).is_null());
        assert_eq!(std::thread::current().id(), caller);
        assert_eq!(dynd_error_code(), ErrorKind::Inexact.code());
        let msg = CStr::from_ptr(dynd_error_message()).to_str().unwrap();
        assert_eq!(msg, "picky: 123456 is not welcome");
        dynd_array_decref(a);
        dynd_callable_decref(h);
    }
}
