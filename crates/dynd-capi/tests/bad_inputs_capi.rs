//! The bad-input sweep of the C ABI: NULL handles and pointers,
//! mismatched types and counts, invalid utf-8, unknown modes and requests.
//!
//! Each row calls one entry point the way a careless C caller would and
//! states the `DYND_ERR_*` code the thread's error slot must then hold and
//! text its message must contain. The call must report failure through its
//! return value (`-1`, `NULL`, a `-1` offset) and never unwind.

#[path = "../../dynd/tests/common/sweep.rs"]
mod sweep;

use dynd_capi::*;
use std::ffi::{CStr, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::{null, null_mut};

/// One bad call: `run` returns `true` when the call reported failure.
struct Case {
    input: &'static str,
    code: c_int,
    needle: &'static str,
    run: Box<dyn Fn() -> bool>,
}

fn case(
    input: &'static str,
    code: c_int,
    needle: &'static str,
    run: impl Fn() -> bool + 'static,
) -> Case {
    Case {
        input,
        code,
        needle,
        run: Box::new(run),
    }
}

/// A handle a row made, released after the row ran.
enum Handle {
    Type(dynd_type),
    Array(dynd_array),
    Callable(dynd_callable),
}

thread_local! {
    static MADE: std::cell::RefCell<Vec<Handle>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Releases every handle the last row made.
fn release_made() {
    for h in MADE.with(|m| std::mem::take(&mut *m.borrow_mut())) {
        // SAFETY: each handle is a live reference owned by the list.
        unsafe {
            match h {
                Handle::Type(t) => dynd_type_decref(t),
                Handle::Array(a) => dynd_array_decref(a),
                Handle::Callable(f) => dynd_callable_decref(f),
            }
        }
    }
}

/// A type handle from datashape text (released after the row).
fn tp(ds: &str) -> dynd_type {
    let c = std::ffi::CString::new(ds).unwrap();
    // SAFETY: a NUL-terminated string.
    let t = unsafe { dynd_type_from_datashape(c.as_ptr()) };
    assert!(!t.is_null(), "{ds}");
    MADE.with(|m| m.borrow_mut().push(Handle::Type(t)));
    t
}

/// An array handle from a type and JSON (released after the row).
fn arr(ds: &str, json: &str) -> dynd_array {
    let t = tp(ds);
    // SAFETY: `json` is readable for its length.
    let a = unsafe { dynd_array_from_json(t, json.as_ptr().cast(), json.len()) };
    assert!(!a.is_null(), "{ds} <- {json}");
    MADE.with(|m| m.borrow_mut().push(Handle::Array(a)));
    a
}

/// Releases an array handle and says whether `a` was NULL (a failure).
fn failed_array(a: dynd_array) -> bool {
    if a.is_null() {
        return true;
    }
    // SAFETY: a live handle whose reference we own.
    unsafe { dynd_array_decref(a) };
    false
}

/// Runs `body` with a constructed builder, destructing it after.
fn with_builder<R>(body: impl FnOnce(*mut dynd_ckernel_builder) -> R) -> R {
    let mut ckb = std::mem::MaybeUninit::<dynd_ckernel_builder>::uninit();
    // SAFETY: the builder is constructed in place, not moved, and
    // destructed once.
    unsafe {
        dynd_ckernel_builder_construct(ckb.as_mut_ptr());
        let r = body(ckb.as_mut_ptr());
        dynd_ckernel_builder_destruct(ckb.as_mut_ptr());
        r
    }
}

/// `dynd_make_assignment_kernel` for builtins/extended types without
/// arrmeta (dst ← src), into `ckb` (NULL or a constructed builder) at
/// `offset`.
fn assignment_kernel_at(
    ckb: *mut dynd_ckernel_builder,
    offset: isize,
    dst: dynd_type,
    src: dynd_type,
    kernreq: u32,
    errmode: c_int,
) -> isize {
    // SAFETY: `ckb` is NULL or a constructed builder; arrmeta pointers are
    // only read for types that have arrmeta, which the rows below do not
    // pass.
    unsafe { dynd_make_assignment_kernel(ckb, offset, dst, null(), src, null(), kernreq, errmode) }
}

/// [`assignment_kernel_at`] offset 0 of a fresh builder.
fn assignment_kernel(dst: dynd_type, src: dynd_type, kernreq: u32, errmode: c_int) -> isize {
    with_builder(|ckb| assignment_kernel_at(ckb, 0, dst, src, kernreq, errmode))
}

fn lookup(name: &CStr) -> dynd_callable {
    // SAFETY: a NUL-terminated name.
    let f = unsafe { dynd_callable_lookup(name.as_ptr()) };
    assert!(!f.is_null());
    MADE.with(|m| m.borrow_mut().push(Handle::Callable(f)));
    f
}

/// `dynd_array_assign(dst, src, errmode)`; `true` when it returned -1.
fn assign_failed(dst: dynd_array, src: dynd_array, errmode: c_int) -> bool {
    // SAFETY: `dst` and `src` are NULL or live handles.
    unsafe { dynd_array_assign(dst, src, errmode) == -1 }
}

/// `dynd_callable_call(add, args)`; `true` when it failed.
fn call_add_failed(args: &[dynd_array]) -> bool {
    // SAFETY: `args` is readable for its length; each entry is NULL or a
    // live handle.
    unsafe {
        failed_array(dynd_callable_call(
            lookup(c"add"),
            args.len(),
            args.as_ptr(),
        ))
    }
}

/// `dynd_callable_instantiate(add, ckb, 0, dst_tp, NULL, nsrc, src_tp,
/// {NULL; nsrc}, STRIDED)`; `true` when it returned -1.
fn instantiate_add_failed(
    ckb: *mut dynd_ckernel_builder,
    dst_tp: dynd_type,
    nsrc: usize,
    src_tp: *const dynd_type,
) -> bool {
    let metas = vec![null::<c_char>(); nsrc];
    // SAFETY: `ckb` is NULL or a constructed builder; `src_tp` is NULL or
    // readable for `nsrc` builtin ids; `metas` holds `nsrc` entries.
    unsafe {
        dynd_callable_instantiate(
            lookup(c"add"),
            ckb,
            0,
            dst_tp,
            null(),
            nsrc,
            src_tp,
            metas.as_ptr(),
            DYND_KERNEL_REQUEST_STRIDED,
        ) == -1
    }
}

fn cases() -> Vec<Case> {
    const INT32: dynd_type = 4 as dynd_type;
    const INT8: dynd_type = 2 as dynd_type;
    const FLOAT64: dynd_type = 14 as dynd_type;
    const FLOAT128: dynd_type = 15 as dynd_type;
    const STRIDED: u32 = DYND_KERNEL_REQUEST_STRIDED;
    vec![
        // ---- types ----
        case(
            "dynd_type_from_datashape(NULL)",
            DYND_ERR_INVALID_ARGUMENT,
            "datashape",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_type_from_datashape(null()).is_null() }
            },
        ),
        case(
            "dynd_type_from_datashape(\"float64+\")",
            DYND_ERR_PARSE,
            "column 8",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_type_from_datashape(c"float64+".as_ptr()).is_null() }
            },
        ),
        case(
            "dynd_type_from_datashape(\"3 * int32 * float64\")",
            DYND_ERR_PARSE,
            "not a dimension",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_type_from_datashape(c"3 * int32 * float64".as_ptr()).is_null() }
            },
        ),
        case(
            "dynd_type_from_datashape(invalid utf-8)",
            DYND_ERR_PARSE,
            "utf-8",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_type_from_datashape(c"int32\xff".as_ptr()).is_null() }
            },
        ),
        case(
            "dynd_type_from_datashape(\"\")",
            DYND_ERR_PARSE,
            "expected a type",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_type_from_datashape(c"".as_ptr()).is_null() }
            },
        ),
        case(
            "dynd_type_to_datashape(NULL)",
            DYND_ERR_INVALID_ARGUMENT,
            "tp",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_type_to_datashape(null()).is_null() }
            },
        ),
        case(
            "dynd_type_to_datashape(15 = float128)",
            DYND_ERR_INVALID_ARGUMENT,
            "float128",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_type_to_datashape(FLOAT128).is_null() }
            },
        ),
        case(
            "dynd_type_to_datashape(40, not a type id)",
            DYND_ERR_INVALID_ARGUMENT,
            "40",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_type_to_datashape(40 as dynd_type).is_null() }
            },
        ),
        case(
            "dynd_type_data_size(NULL)",
            DYND_ERR_INVALID_ARGUMENT,
            "tp",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_type_data_size(null()) == 0 }
            },
        ),
        case(
            "dynd_type_arrmeta_size(15)",
            DYND_ERR_INVALID_ARGUMENT,
            "float128",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_type_arrmeta_size(FLOAT128) == 0 }
            },
        ),
        // ---- arrays ----
        case(
            "dynd_array_empty(NULL)",
            DYND_ERR_INVALID_ARGUMENT,
            "tp",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { failed_array(dynd_array_empty(null())) }
            },
        ),
        case(
            "dynd_array_empty(N * int32)",
            DYND_ERR_TYPE,
            "N * int32",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { failed_array(dynd_array_empty(tp("N * int32"))) }
            },
        ),
        case(
            "dynd_array_from_json(int32, NULL, 3)",
            DYND_ERR_INVALID_ARGUMENT,
            "json",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { failed_array(dynd_array_from_json(INT32, null(), 3)) }
            },
        ),
        case(
            "dynd_array_from_json(NULL type)",
            DYND_ERR_INVALID_ARGUMENT,
            "tp",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { failed_array(dynd_array_from_json(null(), c"1".as_ptr(), 1)) }
            },
        ),
        case(
            "dynd_array_from_json(int8, \"300\")",
            DYND_ERR_OVERFLOW,
            "300",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { failed_array(dynd_array_from_json(INT8, c"300".as_ptr(), 3)) }
            },
        ),
        case(
            "dynd_array_from_json(int32, invalid utf-8)",
            DYND_ERR_PARSE,
            "utf-8",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { failed_array(dynd_array_from_json(INT32, c"1\xff".as_ptr(), 2)) }
            },
        ),
        case(
            "dynd_array_from_json(3 * int32, \"[1, 2]\")",
            DYND_ERR_PARSE,
            "3",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe {
                    failed_array(dynd_array_from_json(tp("3 * int32"), c"[1, 2]".as_ptr(), 6))
                }
            },
        ),
        case(
            "dynd_array_from_json(int32, \"1 2\")",
            DYND_ERR_PARSE,
            "unexpected text",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { failed_array(dynd_array_from_json(INT32, c"1 2".as_ptr(), 3)) }
            },
        ),
        case(
            "dynd_array_to_json(NULL)",
            DYND_ERR_INVALID_ARGUMENT,
            "dynd_array_to_json",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_array_to_json(null_mut()).is_null() }
            },
        ),
        case(
            "dynd_array_type(NULL)",
            DYND_ERR_INVALID_ARGUMENT,
            "dynd_array_type",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_array_type(null_mut()).is_null() }
            },
        ),
        case(
            "dynd_array_data(NULL)",
            DYND_ERR_INVALID_ARGUMENT,
            "dynd_array_data",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_array_data(null_mut()).is_null() }
            },
        ),
        case(
            "dynd_array_assign(NULL, src)",
            DYND_ERR_INVALID_ARGUMENT,
            "dst",
            || assign_failed(null_mut(), arr("int32", "1"), DYND_ASSIGN_DEFAULT),
        ),
        case(
            "dynd_array_assign(dst, NULL)",
            DYND_ERR_INVALID_ARGUMENT,
            "src",
            || assign_failed(arr("int32", "1"), null_mut(), DYND_ASSIGN_DEFAULT),
        ),
        case(
            "dynd_array_assign(int8 <- 300, overflow)",
            DYND_ERR_OVERFLOW,
            "300",
            || assign_failed(arr("int8", "0"), arr("int32", "300"), DYND_ASSIGN_OVERFLOW),
        ),
        case(
            "dynd_array_assign(int32 <- 2.5, default)",
            DYND_ERR_FRACTIONAL,
            "2.5",
            || {
                assign_failed(
                    arr("int32", "0"),
                    arr("float64", "2.5"),
                    DYND_ASSIGN_DEFAULT,
                )
            },
        ),
        case(
            "dynd_array_assign(float32 <- 0.1, inexact)",
            DYND_ERR_INEXACT,
            "0.1",
            || {
                assign_failed(
                    arr("float32", "0"),
                    arr("float64", "0.1"),
                    DYND_ASSIGN_INEXACT,
                )
            },
        ),
        case(
            "dynd_array_assign(errmode 99)",
            DYND_ERR_INVALID_ARGUMENT,
            "99",
            || assign_failed(arr("int32", "0"), arr("int32", "1"), 99),
        ),
        case(
            "dynd_array_assign(3 * int32 <- 2 * int32)",
            DYND_ERR_BROADCAST,
            "(2)",
            || {
                assign_failed(
                    arr("3 * int32", "[1,2,3]"),
                    arr("2 * int32", "[1,2]"),
                    DYND_ASSIGN_DEFAULT,
                )
            },
        ),
        case(
            "dynd_array_assign({x: int32} <- int32)",
            DYND_ERR_TYPE,
            "cannot assign",
            || {
                assign_failed(
                    arr("{x: int32}", "[1]"),
                    arr("int32", "1"),
                    DYND_ASSIGN_DEFAULT,
                )
            },
        ),
        // ---- memory blocks ----
        case(
            "dynd_memory_block_pod_allocator_api(NULL)",
            DYND_ERR_INVALID_ARGUMENT,
            "mb",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_memory_block_pod_allocator_api(null_mut()).is_null() }
            },
        ),
        // ---- kernels ----
        case(
            "dynd_ckernel_builder_ensure_capacity(NULL, 16)",
            DYND_ERR_INVALID_ARGUMENT,
            "ckb",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_ckernel_builder_ensure_capacity(null_mut(), 16) == -1 }
            },
        ),
        case(
            "dynd_ckernel_builder_ensure_capacity(ckb, -1)",
            DYND_ERR_INVALID_ARGUMENT,
            "-1",
            || {
                with_builder(|ckb| {
                    // SAFETY: only NULL, builtin ids, live handles, valid strings.
                    unsafe { dynd_ckernel_builder_ensure_capacity(ckb, -1) }
                } as isize)
                    == -1
            },
        ),
        case(
            "dynd_ckernel_builder_ensure_capacity_leaf(ckb, -8)",
            DYND_ERR_INVALID_ARGUMENT,
            "-8",
            || {
                with_builder(|ckb| {
                    // SAFETY: only NULL, builtin ids, live handles, valid strings.
                    unsafe { dynd_ckernel_builder_ensure_capacity_leaf(ckb, -8) }
                } as isize)
                    == -1
            },
        ),
        case(
            "dynd_make_assignment_kernel(NULL ckb)",
            DYND_ERR_INVALID_ARGUMENT,
            "ckb",
            || {
                assignment_kernel_at(null_mut(), 0, INT32, INT32, STRIDED, DYND_ASSIGN_DEFAULT)
                    == -1
            },
        ),
        case(
            "dynd_make_assignment_kernel(NULL dst_tp)",
            DYND_ERR_INVALID_ARGUMENT,
            "dst_tp",
            || assignment_kernel(null(), INT32, STRIDED, DYND_ASSIGN_DEFAULT) == -1,
        ),
        case(
            "dynd_make_assignment_kernel(src_tp 15)",
            DYND_ERR_INVALID_ARGUMENT,
            "float128",
            || assignment_kernel(INT32, FLOAT128, STRIDED, DYND_ASSIGN_DEFAULT) == -1,
        ),
        case(
            "dynd_make_assignment_kernel(kernreq 7)",
            DYND_ERR_INVALID_ARGUMENT,
            "7",
            || assignment_kernel(INT32, FLOAT64, 7, DYND_ASSIGN_DEFAULT) == -1,
        ),
        case(
            "dynd_make_assignment_kernel(errmode -3)",
            DYND_ERR_INVALID_ARGUMENT,
            "-3",
            || assignment_kernel(INT32, FLOAT64, STRIDED, -3) == -1,
        ),
        case(
            "dynd_make_assignment_kernel(offset -8)",
            DYND_ERR_INVALID_ARGUMENT,
            "-8",
            || {
                with_builder(|ckb| {
                    assignment_kernel_at(ckb, -8, INT32, INT32, STRIDED, DYND_ASSIGN_DEFAULT)
                }) == -1
            },
        ),
        case(
            "dynd_make_assignment_kernel(void <- int32)",
            DYND_ERR_TYPE,
            "void",
            || assignment_kernel(18 as dynd_type, INT32, STRIDED, DYND_ASSIGN_DEFAULT) == -1,
        ),
        case(
            "dynd_make_assignment_kernel(3 * int32, NULL arrmeta)",
            DYND_ERR_INVALID_ARGUMENT,
            "arrmeta",
            || {
                assignment_kernel(
                    tp("3 * int32"),
                    tp("3 * int32"),
                    STRIDED,
                    DYND_ASSIGN_DEFAULT,
                ) == -1
            },
        ),
        // ---- callables ----
        case(
            "dynd_callable_lookup(NULL)",
            DYND_ERR_INVALID_ARGUMENT,
            "name",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_callable_lookup(null()).is_null() }
            },
        ),
        case(
            "dynd_callable_lookup(\"frobnicate\")",
            DYND_ERR_INVALID_ARGUMENT,
            "frobnicate",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_callable_lookup(c"frobnicate".as_ptr()).is_null() }
            },
        ),
        case(
            "dynd_callable_lookup(invalid utf-8)",
            DYND_ERR_PARSE,
            "utf-8",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_callable_lookup(c"add\xff".as_ptr()).is_null() }
            },
        ),
        case(
            "dynd_callable_call(NULL, ...)",
            DYND_ERR_INVALID_ARGUMENT,
            "f",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe {
                    let a = arr("int32", "1");
                    failed_array(dynd_callable_call(null_mut(), 1, &a))
                }
            },
        ),
        case(
            "dynd_callable_call(add, 2, NULL)",
            DYND_ERR_INVALID_ARGUMENT,
            "args",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { failed_array(dynd_callable_call(lookup(c"add"), 2, null())) }
            },
        ),
        case(
            "dynd_callable_call(add, 1 argument)",
            DYND_ERR_TYPE,
            "takes 2 arguments, got 1",
            || call_add_failed(&[arr("int32", "1")]),
        ),
        case(
            "dynd_callable_call(add, [x, NULL])",
            DYND_ERR_INVALID_ARGUMENT,
            "args[1]",
            || call_add_failed(&[arr("int32", "1"), null_mut()]),
        ),
        case(
            "dynd_callable_call(add, int32, string)",
            DYND_ERR_TYPE,
            "string",
            || call_add_failed(&[arr("int32", "1"), arr("string", "\"a\"")]),
        ),
        case(
            "dynd_callable_call(add, 3 * int32, 2 * int32)",
            DYND_ERR_BROADCAST,
            "(3)",
            || call_add_failed(&[arr("3 * int32", "[1,2,3]"), arr("2 * int32", "[1,2]")]),
        ),
        case(
            "dynd_callable_instantiate(add, 1 source)",
            DYND_ERR_TYPE,
            "takes 2 arguments",
            || {
                let srcs = [FLOAT64];
                with_builder(|ckb| instantiate_add_failed(ckb, FLOAT64, 1, srcs.as_ptr()))
            },
        ),
        case(
            "dynd_callable_instantiate(add, NULL src_tp)",
            DYND_ERR_INVALID_ARGUMENT,
            "src_tp",
            || with_builder(|ckb| instantiate_add_failed(ckb, FLOAT64, 2, null())),
        ),
        case(
            "dynd_callable_instantiate(add, int8 dst for float64 sources)",
            DYND_ERR_TYPE,
            "int8",
            || {
                let srcs = [FLOAT64, FLOAT64];
                with_builder(|ckb| instantiate_add_failed(ckb, INT8, 2, srcs.as_ptr()))
            },
        ),
        case(
            "dynd_callable_instantiate(NULL ckb)",
            DYND_ERR_INVALID_ARGUMENT,
            "ckb",
            || instantiate_add_failed(null_mut(), FLOAT64, 2, [FLOAT64, FLOAT64].as_ptr()),
        ),
        case(
            "dynd_callable_from_deferred(NULL)",
            DYND_ERR_INVALID_ARGUMENT,
            "dck",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe { dynd_callable_from_deferred(null_mut()).is_null() }
            },
        ),
        case(
            "dynd_callable_from_deferred(data_types_size 1)",
            DYND_ERR_INVALID_ARGUMENT,
            "data_types_size",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe {
                    unsafe extern "C" fn inst(
                        _: *mut std::ffi::c_void,
                        _: *mut dynd_ckernel_builder,
                        _: isize,
                        _: *const *const u8,
                        _: u32,
                    ) -> isize {
                        -1
                    }
                    let tps = [INT32];
                    let mut d = dynd_deferred_ckernel {
                        ckernel_funcproto: 0,
                        data_types_size: 1,
                        data_dynd_types: tps.as_ptr(),
                        data_ptr: null_mut(),
                        instantiate_func: Some(inst),
                        free_func: None,
                    };
                    dynd_callable_from_deferred(&mut d).is_null()
                }
            },
        ),
        case(
            "dynd_callable_from_deferred(no instantiate_func)",
            DYND_ERR_INVALID_ARGUMENT,
            "instantiate_func",
            || {
                // SAFETY: only NULL, builtin ids, live handles, valid strings.
                unsafe {
                    let tps = [INT32, INT32];
                    let mut d = dynd_deferred_ckernel {
                        ckernel_funcproto: 0,
                        data_types_size: 2,
                        data_dynd_types: tps.as_ptr(),
                        data_ptr: null_mut(),
                        instantiate_func: None,
                        free_func: None,
                    };
                    dynd_callable_from_deferred(&mut d).is_null()
                }
            },
        ),
    ]
}

#[test]
fn every_bad_call_reports_a_coded_error_naming_the_problem() {
    let cases = cases();
    let mut failures = Vec::new();
    for c in &cases {
        dynd_error_clear();
        let outcome = catch_unwind(AssertUnwindSafe(|| (c.run)()));
        let problem = match outcome {
            Err(_) => Some("panicked".to_string()),
            Ok(false) => Some("did not report failure".to_string()),
            Ok(true) => {
                let code = dynd_error_code();
                // SAFETY: the message is NUL-terminated and valid until the
                // next call on this thread.
                let msg = unsafe { CStr::from_ptr(dynd_error_message()) }
                    .to_string_lossy()
                    .into_owned();
                if code != c.code {
                    Some(format!("code {code} (want {}): {msg}", c.code))
                } else if !msg.contains(c.needle) {
                    Some(format!("message lacks {:?}: {msg}", c.needle))
                } else {
                    None
                }
            }
        };
        // After reading the slot: releasing may touch it.
        release_made();
        if let Some(p) = problem {
            failures.push(format!("{}: {p}", c.input));
        }
    }
    let summary = format!("{} C ABI bad-input cases", cases.len());
    sweep::finish(&summary, cases.len(), 50, &failures);
}
