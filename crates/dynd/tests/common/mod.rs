//! Helpers shared by several integration tests of this crate: building an
//! assignment or callable kernel by hand, the element arrmeta of a 1-d array, and JSON
//! string literals; table-driven assignment; the end of a bad-input sweep. Each test binary uses a
//! part of them.
#![allow(dead_code)]

pub mod alloc;
pub mod assign;
pub mod sweep;

use dynd::array::FixedDimMeta;
use dynd::callable::Callable;
use dynd::kernels::assign::{ErrorMode, make_assignment_kernel};
use dynd::kernels::{CKernelBuilder, KernelArgs, KernelRequest};
use dynd::types::TypeKind;
use dynd::{Array, Type};
use std::pin::pin;

/// One side of an assignment kernel: a type and its arrmeta, borrowed from
/// where they live for as long as the side is used.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    tp: &'a Type,
    meta: *const u8,
}

/// A type without arrmeta (a builtin type): nothing for a kernel to read.
pub fn scalar(tp: &Type) -> Side<'_> {
    assert_eq!(
        tp.arrmeta_size(),
        0,
        "{tp} has arrmeta: take it from an array"
    );
    Side {
        tp,
        meta: std::ptr::null(),
    }
}

/// A whole array: its type and its arrmeta.
pub fn whole(a: &Array) -> Side<'_> {
    Side {
        tp: a.tp(),
        meta: a.arrmeta_ptr(),
    }
}

/// The elements of a fixed dim array: the element type and the arrmeta
/// that follows the dim's own inside the array's.
pub fn elems(a: &Array) -> Side<'_> {
    let TypeKind::FixedDim { elem, .. } = a.tp().kind() else {
        panic!("{} is not a fixed dim", a.tp());
    };
    Side {
        tp: elem,
        meta: elem_meta(a),
    }
}

/// Builds the assignment kernel `dst ← src` for `req` and `mode` in a new
/// builder and gives it to `f`; the kernel is dropped when `f` returns.
/// Building allocates nothing beyond what the kernel itself does.
pub fn with_assign_kernel<R>(
    dst: Side<'_>,
    src: Side<'_>,
    req: KernelRequest,
    mode: ErrorMode,
    f: impl FnOnce(&CKernelBuilder) -> R,
) -> dynd::Result<R> {
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: offset 0 of a new builder is free; each side's arrmeta is
    // that of its type (none for `scalar`, taken from an array for `whole`
    // and `elems`) and is borrowed past the kernel's life, which ends here.
    unsafe {
        make_assignment_kernel(
            ckb.as_mut(),
            0,
            dst.tp,
            dst.meta,
            src.tp,
            src.meta,
            req,
            mode,
        )
    }?;
    Ok(f(&ckb))
}

/// Instantiates `f` for `dst ← srcs` as a `req` kernel in a new builder
/// and gives it to `body`; the kernel is dropped when `body` returns.
pub fn with_callable_kernel<R>(
    f: &Callable,
    dst: Side<'_>,
    srcs: &[Side<'_>],
    req: KernelRequest,
    body: impl FnOnce(&CKernelBuilder) -> R,
) -> dynd::Result<R> {
    let tps: Vec<Type> = srcs.iter().map(|s| s.tp.clone()).collect();
    let metas: Vec<*const u8> = srcs.iter().map(|s| s.meta).collect();
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: offset 0 of a new builder is free; each side's arrmeta is
    // that of its type and is borrowed past the kernel's life, which ends
    // here.
    unsafe {
        let args = KernelArgs::new(dst.tp, dst.meta, &tps, &metas, req);
        f.instantiate(ckb.as_mut(), 0, args)
    }?;
    Ok(body(&ckb))
}

/// The arrmeta of the elements of a fixed dim array.
pub fn elem_meta(a: &Array) -> *const u8 {
    assert!(
        matches!(a.tp().kind(), TypeKind::FixedDim { .. }),
        "{} is not a fixed dim",
        a.tp()
    );
    // SAFETY: a fixed dim array: the element's arrmeta follows the
    // FixedDimMeta.
    unsafe { a.arrmeta_ptr().add(size_of::<FixedDimMeta>()) }
}

/// `s` as a JSON string literal: quotes, backslashes and control characters
/// escaped, everything else as it is.
pub fn json_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// An array of type `tp` from JSON; panics naming both when it fails.
pub fn a(tp: &str, json: &str) -> Array {
    Array::from_json(tp, json).unwrap_or_else(|e| panic!("{tp} <- {json}: {e}"))
}

/// Checks that `e` is of `kind` and that its message contains `needle`.
#[track_caller]
pub fn assert_error(e: &dynd::Error, kind: dynd::ErrorKind, needle: &str) {
    assert_eq!(e.kind(), kind, "{e}");
    assert!(e.message().contains(needle), "{e}");
}

/// `(type, json)` of a result.
pub fn show(r: &Array) -> (String, String) {
    (r.tp().to_string(), r.to_json())
}

/// `(type, json)` of a result that must not be an error.
pub fn ok(r: dynd::Result<Array>) -> (String, String) {
    show(&r.unwrap_or_else(|e| panic!("{e}")))
}

/// `(type, json)` as [`ok`] gives it, from text.
pub fn pair(tp: &str, json: &str) -> (String, String) {
    (tp.to_string(), json.to_string())
}

/// Checks that `r` is an array of type `tp` holding `json` (compared as
/// [`ok`] and [`pair`] give them).
#[track_caller]
pub fn assert_ok(r: dynd::Result<Array>, tp: &str, json: &str) {
    assert_eq!(ok(r), pair(tp, json));
}

/// An array in a table of cases, as `(type, JSON)`.
pub type Typed = (&'static str, &'static str);

/// Checks `f(x, y)` for each row `(x, y, result)` of a table of cases; a
/// failure names the function `name` and the row's arguments.
#[track_caller]
pub fn check_binary(
    name: &str,
    f: impl Fn(&Array, &Array) -> dynd::Result<Array>,
    cases: &[(Typed, Typed, Typed)],
) {
    for &((xt, xj), (yt, yj), (rt, rj)) in cases {
        let call = format!("{name}({xt} {xj}, {yt} {yj})");
        let got = f(&a(xt, xj), &a(yt, yj)).unwrap_or_else(|e| panic!("{call}: {e}"));
        assert_eq!(show(&got), pair(rt, rj), "{call}");
    }
}

/// A row of a table of calls: `(callable name, arguments, result)`.
pub type Call = (&'static str, &'static [Typed], Typed);

/// Checks each row of a table of calls: its callable, looked up by name
/// (as the CLI and the C ABI reach it), applied to its arguments; a failure
/// names the row.
#[track_caller]
pub fn check_calls(cases: &[Call]) {
    for &(name, args, (rt, rj)) in cases {
        let arrays: Vec<Array> = args.iter().map(|&(t, j)| a(t, j)).collect();
        let refs: Vec<&Array> = arrays.iter().collect();
        let call = format!("{name}{args:?}");
        let got = dynd::callable::lookup(name)
            .and_then(|f| f.call(&refs))
            .unwrap_or_else(|e| panic!("{call}: {e}"));
        assert_eq!(show(&got), pair(rt, rj), "{call}");
    }
}

/// Field `c` of a `2 * {a: int32, c: complex[float32]}`, `[[1,2],[3,4]]`:
/// 8-byte elements at the struct's 12-byte stride, which is not a whole
/// number of elements. The struct itself is dropped; the view keeps its
/// data.
pub fn complex_field_at_a_12_byte_stride() -> Array {
    let s = a(
        "2 * {a: int32, c: complex[float32]}",
        "[[1, [1, 2]], [2, [3, 4]]]",
    );
    s.field("c").unwrap()
}

/// A function of two arrays, as `compute` has them, for tables of cases.
pub type BinaryFn = fn(&Array, &Array) -> dynd::Result<Array>;
