//! Callables: `dynd_callable` handles, third-party deferred ckernels
//! (`dynd_deferred_ckernel`), lookup by name, calls and instantiation.
//!
//! A `dynd_callable` is the data pointer of an `Arc<CallableHandle>`
//! ([`Arc::into_raw`]): its reference count is that `Arc`'s strong count,
//! so `dynd_callable_incref`/`decref` are `Arc::increment_strong_count` /
//! `decrement_strong_count`. The handle starts with a magic word, so that a
//! different kind of handle passed by mistake (an array, a type) is an
//! `InvalidArgument` error rather than a crash.
//!
//! A callable made from a deferred ckernel is the dynd crate's
//! [`Callable::from_deferred`]: a scalar callable that `dynd_callable_call`
//! lifts over every dim, with broadcasting, running large outer loops on
//! several threads.

use crate::array::{array_out, borrow_array, dynd_array};
use crate::kernels::{arrmeta_arg, builder_arg, dynd_ckernel_builder};
use crate::types::{borrow_type, dynd_type, str_arg};
use crate::{entry, non_null, null_argument, release};
use dynd::callable::deferred::{Deferred, FreeFn, InstantiateFn};
use dynd::callable::{Callable, lookup};
use dynd::kernels::{CKernelBuilder, KernelArgs, KernelRequest};
use dynd::{Array, Error, Result, Type};
use std::ffi::{c_char, c_void};
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// `dynd_instantiate_fn`: builds a kernel of a deferred ckernel's family
/// into `ckb` at `ckb_offset`, for the concrete arrmeta (destination first,
/// then the sources) and `kernreq`; returns the offset just past it, or -1
/// after `dynd_error_set`.
pub type dynd_instantiate_fn = InstantiateFn;

/// The `free_func` of a deferred ckernel: frees its `data_ptr`.
pub type dynd_free_fn = FreeFn;

/// The only `ckernel_funcproto` there is: the expr prototypes
/// (`dynd_expr_single_t` / `dynd_expr_strided_t`).
const FUNCPROTO_EXPR: usize = 0;

/// `dynd_deferred_ckernel`: how a third party hands a kernel family to
/// dynd (DESIGN §5). Six words.
#[repr(C)]
#[derive(Debug)]
pub struct dynd_deferred_ckernel {
    /// 0: expr (`dynd_expr_single_t` / `dynd_expr_strided_t`), the only
    /// prototype family today.
    pub ckernel_funcproto: usize,
    /// 1 + the number of sources.
    pub data_types_size: usize,
    /// The destination type, then the source types (`data_types_size` of
    /// them).
    pub data_dynd_types: *const dynd_type,
    /// The family's own data, passed to `instantiate_func` and `free_func`.
    pub data_ptr: *mut c_void,
    /// Builds a kernel.
    pub instantiate_func: Option<dynd_instantiate_fn>,
    /// Frees `data_ptr` (NULL: nothing to free).
    pub free_func: Option<dynd_free_fn>,
}

/// The opaque target of `dynd_callable` (C's `struct dynd_callable_s`).
#[repr(C)]
pub struct dynd_callable_s {
    _opaque: [u8; 0],
}

/// A callable handle.
pub type dynd_callable = *mut dynd_callable_s;

/// "dyndcall" in ASCII: the first word of every live callable handle.
const MAGIC: u64 = u64::from_be_bytes(*b"dyndcall");
/// What the first word becomes when the handle is freed.
const DEAD: u64 = u64::from_be_bytes(*b"deadcall");

/// What a `dynd_callable` points at (inside an `Arc`).
#[repr(C)]
pub(crate) struct CallableHandle {
    magic: u64,
    f: Callable,
}

impl Drop for CallableHandle {
    fn drop(&mut self) {
        self.magic = DEAD;
    }
}

/// Hands a callable to C as a new reference.
fn callable_out(f: Callable) -> dynd_callable {
    Arc::into_raw(Arc::new(CallableHandle { magic: MAGIC, f }))
        .cast_mut()
        .cast()
}

/// The handle's `Arc`, borrowed (dropping the `ManuallyDrop` does not give
/// up the caller's reference).
///
/// # Safety
/// 1. `f` is NULL or a live handle from this library to which the caller
///    holds a reference for as long as the result is used (a pointer to
///    another readable object is detected by its first word).
unsafe fn borrow_handle(
    f: dynd_callable,
    func: &str,
    arg: &str,
) -> Result<ManuallyDrop<Arc<CallableHandle>>> {
    let ptr = non_null(f, func, arg)?;
    let addr = ptr.as_ptr() as usize;
    if addr < 4096 || !addr.is_multiple_of(std::mem::align_of::<CallableHandle>()) {
        return Err(Error::invalid_argument(format!(
            "{func}: argument '{arg}' is not a valid dynd_callable (address {addr:#x})"
        )));
    }
    // SAFETY: (1) a live handle starts with its magic word; reading the
    // first 8 bytes of another live handle kind is in bounds too (arrays
    // and extended types are larger than 8 bytes and 8-aligned).
    let magic = unsafe { ptr.as_ptr().cast::<u64>().read() };
    if magic != MAGIC {
        let why = if magic == DEAD {
            "it was already released"
        } else {
            "it is not a dynd_callable"
        };
        return Err(Error::invalid_argument(format!(
            "{func}: argument '{arg}' is not a valid dynd_callable: {why}"
        )));
    }
    // SAFETY: (1) made by Arc::into_raw in callable_out and still counted
    // by the caller's reference, which ManuallyDrop leaves in place.
    Ok(ManuallyDrop::new(unsafe {
        Arc::from_raw(ptr.as_ptr().cast::<CallableHandle>())
    }))
}

/// The deferred ckernel's fields, validated, as the Rust [`Deferred`].
///
/// # Safety
/// 1. `d.data_dynd_types` is NULL or readable for `d.data_types_size`
///    handles, each a builtin value or a live type handle.
unsafe fn deferred_from_c(d: &dynd_deferred_ckernel, func: &str) -> Result<Deferred> {
    if d.ckernel_funcproto != FUNCPROTO_EXPR {
        return Err(Error::invalid_argument(format!(
            "{func}: ckernel_funcproto is {}, but only 0 (expr) is supported",
            d.ckernel_funcproto
        )));
    }
    let instantiate = d
        .instantiate_func
        .ok_or_else(|| null_argument(func, "dck->instantiate_func"))?;
    if d.data_types_size < 2 {
        return Err(Error::invalid_argument(format!(
            "{func}: data_types_size is {}, but a kernel needs a destination and at least one source type (2 or more)",
            d.data_types_size
        )));
    }
    if d.data_types_size > isize::MAX as usize / size_of::<dynd_type>() {
        return Err(Error::invalid_argument(format!(
            "{func}: data_types_size ({}) is larger than any array",
            d.data_types_size
        )));
    }
    let tps = non_null(d.data_dynd_types.cast_mut(), func, "dck->data_dynd_types")?;
    // SAFETY: (1) readable for data_types_size handles (size checked above).
    let handles = unsafe { std::slice::from_raw_parts(tps.as_ptr(), d.data_types_size) };
    let mut types = Vec::with_capacity(handles.len());
    for (i, &tp) in handles.iter().enumerate() {
        // SAFETY: (1); cloning takes the callable's own reference.
        let t = unsafe { borrow_type(tp, func, &format!("dck->data_dynd_types[{i}]")) }?;
        types.push(Type::clone(&t));
    }
    Ok(Deferred {
        name: "deferred_ckernel".to_string(),
        types,
        data: d.data_ptr,
        instantiate,
        free: d.free_func,
    })
}

/// Makes a callable from a third party's deferred ckernel, taking ownership
/// of it: `*dck` is cleared (all zero) on return, whatever the outcome, and
/// its `free_func(data_ptr)` is called exactly once — when the callable's
/// last reference goes on success, before returning on failure. The types
/// are copied (the callable takes its own references).
///
/// Returns a new reference, or NULL with the error recorded.
///
/// # Safety
/// 1. `dck` is NULL or points at a readable and writable
///    `dynd_deferred_ckernel` whose `data_dynd_types` is NULL or readable
///    for `data_types_size` valid type handles.
/// 2. Its `instantiate_func`, the kernels it builds and its `free_func`
///    follow DESIGN §5 and may be called from any thread, several at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_callable_from_deferred(
    dck: *mut dynd_deferred_ckernel,
) -> dynd_callable {
    const F: &str = "dynd_callable_from_deferred";
    entry(F, std::ptr::null_mut(), || {
        let dck = non_null(dck, F, "dck")?;
        // Take the deferred ckernel: from here on its data is ours, and the
        // caller's copy is empty so it cannot be freed twice.
        // SAFETY: (1) readable and writable; all-zero is a valid value (the
        // function pointers are Options).
        let d = unsafe {
            let d = dck.as_ptr().read();
            dck.as_ptr().write(std::mem::zeroed());
            d
        };
        // SAFETY: (1).
        let deferred = match unsafe { deferred_from_c(&d, F) } {
            Ok(deferred) => deferred,
            Err(e) => {
                if let Some(free) = d.free_func {
                    // SAFETY: (2) the family's own free function, called
                    // once: nothing else holds `data_ptr` now.
                    unsafe { free(d.data_ptr) };
                }
                return Err(e);
            }
        };
        // SAFETY: (2); from_deferred frees the data itself on failure.
        let f = unsafe { Callable::from_deferred(deferred) }.map_err(|e| e.context(F))?;
        Ok(callable_out(f))
    })
}

/// The callable registered under `name` (`"add"`, `"multiply"`, `"sum"`,
/// ...), as a new reference, or NULL with `DYND_ERR_INVALID_ARGUMENT` (an
/// unknown name, listing the known ones; NULL) or `DYND_ERR_PARSE` (a name
/// that is not utf-8).
///
/// # Safety
/// 1. `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_callable_lookup(name: *const c_char) -> dynd_callable {
    const F: &str = "dynd_callable_lookup";
    entry(F, std::ptr::null_mut(), || {
        // SAFETY: (1).
        let name = unsafe { str_arg(name, F, "name") }?;
        Ok(callable_out(lookup(name).map_err(|e| e.context(F))?))
    })
}

/// Calls `f` on `nargs` arrays: resolves the result type (for a scalar
/// callable, the broadcast of the arguments' dims over its element
/// result), allocates the result and runs the kernel, the outer loop on
/// several threads when the result is large. Returns a new reference, or
/// NULL with the error recorded — an error a kernel reported (a third
/// party's `dynd_error_set` included, on whichever thread it ran) comes back
/// with its code and message.
///
/// # Safety
/// 1. `f` is NULL or a live callable handle from this library.
/// 2. `args` is NULL or readable for `nargs` handles, each NULL or a live
///    array from this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_callable_call(
    f: dynd_callable,
    nargs: usize,
    args: *const dynd_array,
) -> dynd_array {
    const F: &str = "dynd_callable_call";
    entry(F, std::ptr::null_mut(), || {
        // SAFETY: (1).
        let f = unsafe { borrow_handle(f, F, "f") }?;
        // SAFETY: (2).
        let arrays = unsafe { borrow_args(args, nargs, F) }?;
        let refs: Vec<&Array> = arrays.iter().map(|a| &**a).collect();
        Ok(array_out(f.f.call(&refs)?))
    })
}

/// The `n` arrays at `args`, borrowed.
///
/// # Safety
/// As `dynd_callable_call`'s (2).
unsafe fn borrow_args(
    args: *const dynd_array,
    n: usize,
    func: &str,
) -> Result<Vec<ManuallyDrop<Array>>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let args = non_null(args.cast_mut(), func, "args")?;
    if n > isize::MAX as usize / size_of::<dynd_array>() {
        return Err(Error::invalid_argument(format!(
            "{func}: argument 'nargs' ({n}) is larger than any array"
        )));
    }
    // SAFETY: (2) readable for n handles.
    let handles = unsafe { std::slice::from_raw_parts(args.as_ptr(), n) };
    handles
        .iter()
        .enumerate()
        // SAFETY: (2) each NULL or a live array.
        .map(|(i, &a)| unsafe { borrow_array(a, func, &format!("args[{i}]")) })
        .collect()
}

/// Builds `f`'s kernel for concrete types and arrmeta into `ckb` at
/// `offset` (0 for the root, or the child slot of a kernel being built),
/// for `kernreq`; a scalar callable is lifted over the dims. Returns the
/// offset just past the kernel, or -1 with the error recorded.
///
/// # Safety
/// 1. `f` is NULL or a live callable handle.
/// 2. `ckb` is NULL or a constructed builder that has not moved and that no
///    other thread uses during the call; `offset` is a free slot of it.
/// 3. The types are builtin values or live type handles; `dst_arrmeta` and
///    each `src_arrmeta[i]` are valid arrmeta for them (NULL for a type
///    without arrmeta); `src_tp` and `src_arrmeta` are NULL or readable for
///    `nsrc` entries.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn dynd_callable_instantiate(
    f: dynd_callable,
    ckb: *mut dynd_ckernel_builder,
    offset: isize,
    dst_tp: dynd_type,
    dst_arrmeta: *const c_char,
    nsrc: usize,
    src_tp: *const dynd_type,
    src_arrmeta: *const *const c_char,
    kernreq: u32,
) -> isize {
    const F: &str = "dynd_callable_instantiate";
    entry(F, -1, || {
        // SAFETY: (1).
        let f = unsafe { borrow_handle(f, F, "f") }?;
        let ckb = builder_arg(ckb, F)?;
        let offset = usize::try_from(offset).map_err(|_| {
            Error::invalid_argument(format!("{F}: argument 'offset' ({offset}) is negative"))
        })?;
        // SAFETY: (3).
        let dst_tp = unsafe { borrow_type(dst_tp, F, "dst_tp") }?;
        let dst_meta = arrmeta_arg(dst_arrmeta, &dst_tp, F, "dst_arrmeta")?;
        let (src_tps, src_metas) = if nsrc == 0 {
            (Vec::new(), Vec::new())
        } else {
            if nsrc > isize::MAX as usize / size_of::<usize>() {
                return Err(Error::invalid_argument(format!(
                    "{F}: argument 'nsrc' ({nsrc}) is larger than any array"
                )));
            }
            let tps = non_null(src_tp.cast_mut(), F, "src_tp")?;
            // SAFETY: (3) readable for nsrc handles.
            let tps = unsafe { std::slice::from_raw_parts(tps.as_ptr(), nsrc) };
            let mut types = Vec::with_capacity(nsrc);
            for (i, &tp) in tps.iter().enumerate() {
                // SAFETY: (3).
                let t = unsafe { borrow_type(tp, F, &format!("src_tp[{i}]")) }?;
                types.push(Type::clone(&t));
            }
            let metas: Vec<*const u8> = if src_arrmeta.is_null() {
                // Allowed when no source has arrmeta.
                types
                    .iter()
                    .enumerate()
                    .map(|(i, t)| arrmeta_arg(std::ptr::null(), t, F, &format!("src_arrmeta[{i}]")))
                    .collect::<Result<_>>()?
            } else {
                // SAFETY: (3) readable for nsrc pointers.
                let metas = unsafe { std::slice::from_raw_parts(src_arrmeta, nsrc) };
                types
                    .iter()
                    .zip(metas)
                    .enumerate()
                    .map(|(i, (t, &m))| arrmeta_arg(m, t, F, &format!("src_arrmeta[{i}]")))
                    .collect::<Result<_>>()?
            };
            (types, metas)
        };
        let req = KernelRequest::from_raw(kernreq).map_err(|e| e.context(F))?;
        // SAFETY: (2) is pin_from_raw's and instantiate's (1); (3) is
        // instantiate's (2) — the callable checks the types against its
        // signature itself.
        let end = unsafe {
            let args = KernelArgs::new(&dst_tp, dst_meta, &src_tps, &src_metas, req);
            f.f.instantiate(CKernelBuilder::pin_from_raw(ckb.as_ptr()), offset, args)
        }?;
        isize::try_from(end)
            .map_err(|_| Error::alloc(format!("{F}: kernel end offset {end} overflows intptr_t")))
    })
}

/// Adds a reference to a callable. `DYND_ERR_INVALID_ARGUMENT` (nothing
/// done) for NULL or a handle that is not a callable.
///
/// # Safety
/// 1. `f` is NULL or a live callable handle to which the caller holds a
///    reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_callable_incref(f: dynd_callable) {
    const F: &str = "dynd_callable_incref";
    entry(F, (), || {
        // SAFETY: (1).
        let h = unsafe { borrow_handle(f, F, "f") }?;
        // SAFETY: the pointer came from Arc::into_raw and is live (the
        // caller's reference).
        unsafe { Arc::increment_strong_count(Arc::as_ptr(&h)) };
        Ok(())
    })
}

/// Releases a reference to a callable, freeing it with the last (a deferred
/// ckernel's `free_func` runs then, on this thread). NULL is a no-op.
///
/// # Safety
/// 1. `f` is NULL or a live callable handle whose reference the caller owns
///    and gives up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_callable_decref(f: dynd_callable) {
    const F: &str = "dynd_callable_decref";
    entry(F, (), || {
        // SAFETY: (1).
        release(f, |f| unsafe { borrow_handle(f, F, "f") })
    })
}

/// The Rust callable behind a handle, as a new `Callable` value (for Rust
/// code that mixes the C face with the Rust API).
///
/// # Safety
/// 1. `f` is NULL or a live callable handle from this library.
pub unsafe fn callable_from_handle(f: dynd_callable) -> Result<Callable> {
    // SAFETY: (1).
    let h = unsafe { borrow_handle(f, "callable_from_handle", "f") }?;
    Ok(h.f.clone())
}

/// A Rust callable as a new `dynd_callable` reference (release it with
/// [`dynd_callable_decref`]).
pub fn callable_to_handle(f: Callable) -> dynd_callable {
    callable_out(f)
}
