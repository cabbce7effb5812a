//! CKernels: the builder (`dynd_ckernel_builder` is the dynd crate's
//! [`CKernelBuilder`] itself: 18 words, `data` pointing at `static_data`
//! until it grows) and assignment kernels.

use crate::types::{borrow_type, dynd_type};
use crate::{entry, non_null};
use dynd::kernels::assign::{ErrorMode, make_assignment_kernel};
use dynd::kernels::{
    CKernelBuilder, CKernelPrefix, ExprSingle, ExprStrided, KERNEL_ALIGN, KernelRequest,
};
use dynd::{Error, Result, Type};
use std::ffi::{c_char, c_int};
use std::ptr::NonNull;

/// `dynd_ckernel_builder`: `{intptr_t *data; intptr_t capacity; intptr_t
/// static_data[16];}`.
pub type dynd_ckernel_builder = CKernelBuilder;
/// `dynd_ckernel_prefix`: `{void *function; void (*destructor)(self);}`.
pub type dynd_ckernel_prefix = CKernelPrefix;
/// `dynd_expr_single_t`.
pub type dynd_expr_single_t = ExprSingle;
/// `dynd_expr_strided_t`.
pub type dynd_expr_strided_t = ExprStrided;

/// Build the kernel for one element per call (`dynd_expr_single_t`).
pub const DYND_KERNEL_REQUEST_SINGLE: u32 = 0;
/// Build the kernel for strided runs (`dynd_expr_strided_t`).
pub const DYND_KERNEL_REQUEST_STRIDED: u32 = 1;

/// `ckb` as a non-null, aligned builder pointer.
pub(crate) fn builder_arg(ckb: *mut CKernelBuilder, func: &str) -> Result<NonNull<CKernelBuilder>> {
    let ckb = non_null(ckb, func, "ckb")?;
    if !(ckb.as_ptr() as usize).is_multiple_of(KERNEL_ALIGN) {
        return Err(Error::invalid_argument(format!(
            "{func}: argument 'ckb' is not aligned to {KERNEL_ALIGN} bytes"
        )));
    }
    Ok(ckb)
}

/// [`entry`] for a function of the builder argument `ckb`: `body` gets it
/// checked by [`builder_arg`] (whose errors are reported as any other).
fn builder_entry<T>(
    func: &'static str,
    ckb: *mut CKernelBuilder,
    fail: T,
    body: impl FnOnce(NonNull<CKernelBuilder>) -> Result<T>,
) -> T {
    entry(func, fail, || body(builder_arg(ckb, func)?))
}

fn status(r: Result<()>) -> Result<c_int> {
    r.map(|()| 0)
}

/// Constructs an empty builder in the caller's memory: `data` points at
/// `static_data`, `capacity` is 128 bytes, all zero. The builder must not
/// move until `dynd_ckernel_builder_destruct`.
///
/// # Safety
/// 1. `ckb` is NULL or valid for writes of a `dynd_ckernel_builder` and
///    does not hold a constructed builder (that one would leak).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_ckernel_builder_construct(ckb: *mut dynd_ckernel_builder) {
    builder_entry("dynd_ckernel_builder_construct", ckb, (), |ckb| {
        // SAFETY: (1) valid, aligned (checked), and free.
        unsafe { CKernelBuilder::construct_in_place(ckb.as_ptr()) };
        Ok(())
    })
}

/// Destroys a builder: runs the root kernel's destructor (which destroys
/// its children) and frees the heap buffer. NULL is a no-op.
///
/// # Safety
/// 1. `ckb` is NULL or a builder constructed by
///    `dynd_ckernel_builder_construct` that has not moved, and that is not
///    used afterwards except to construct it again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_ckernel_builder_destruct(ckb: *mut dynd_ckernel_builder) {
    if ckb.is_null() {
        return;
    }
    builder_entry("dynd_ckernel_builder_destruct", ckb, (), |ckb| {
        // SAFETY: (1).
        unsafe { CKernelBuilder::destruct_in_place(ckb.as_ptr()) };
        Ok(())
    })
}

/// Destroys the kernel tree and returns the builder to its constructed
/// state (inline, 128 bytes, all zero).
///
/// # Safety
/// 1. `ckb` is NULL or a constructed builder that has not moved and that no
///    other thread uses during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_ckernel_builder_reset(ckb: *mut dynd_ckernel_builder) {
    builder_entry("dynd_ckernel_builder_reset", ckb, (), |ckb| {
        // SAFETY: (1) is pin_from_raw's (1) and (2).
        unsafe { CKernelBuilder::pin_from_raw(ckb.as_ptr()) }.reset();
        Ok(())
    })
}

/// Makes the buffer at least `requested` bytes, moving it to the heap when
/// it grows; new memory is zero-filled. Returns 0, or -1 with the error
/// recorded.
///
/// # Safety
/// As for [`dynd_ckernel_builder_reset`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_ckernel_builder_ensure_capacity_leaf(
    ckb: *mut dynd_ckernel_builder,
    requested: isize,
) -> c_int {
    const F: &str = "dynd_ckernel_builder_ensure_capacity_leaf";
    builder_entry(F, ckb, -1, |ckb| {
        // SAFETY: the caller's guarantees are ensure_capacity_leaf_raw's.
        status(unsafe { CKernelBuilder::ensure_capacity_leaf_raw(ckb.as_ptr(), requested) })
    })
}

/// Makes the buffer at least `requested` bytes plus one
/// `dynd_ckernel_prefix` (room for a child). Otherwise as
/// [`dynd_ckernel_builder_ensure_capacity_leaf`].
///
/// # Safety
/// As for [`dynd_ckernel_builder_reset`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_ckernel_builder_ensure_capacity(
    ckb: *mut dynd_ckernel_builder,
    requested: isize,
) -> c_int {
    builder_entry("dynd_ckernel_builder_ensure_capacity", ckb, -1, |ckb| {
        // SAFETY: the caller's guarantees are ensure_capacity_raw's.
        status(unsafe { CKernelBuilder::ensure_capacity_raw(ckb.as_ptr(), requested) })
    })
}

/// A type argument's arrmeta pointer: may be NULL only for a type with no
/// arrmeta.
pub(crate) fn arrmeta_arg(
    meta: *const c_char,
    tp: &Type,
    func: &str,
    arg: &str,
) -> Result<*const u8> {
    if meta.is_null() && tp.arrmeta_size() != 0 {
        return Err(Error::invalid_argument(format!(
            "{func}: argument '{arg}' is NULL, but {tp} has {} bytes of arrmeta",
            tp.arrmeta_size()
        )));
    }
    Ok(meta.cast())
}

/// Builds the assignment kernel `dst ← src` at `offset` of `ckb`, for
/// `kernreq` (`DYND_KERNEL_REQUEST_*`) under `errmode` (`DYND_ASSIGN_*`).
/// Returns the offset just past the kernel, or -1 with the error recorded
/// (what was built before the failure is destroyed with the builder).
///
/// # Safety
/// 1. `ckb` is NULL or a constructed builder that has not moved and that no
///    other thread uses during the call.
/// 2. `offset` is a free slot of it: 0 for a root kernel, or the child slot
///    of a kernel the caller is building.
/// 3. `dst_tp` and `src_tp` are builtin values or live type handles;
///    `dst_arrmeta` and `src_arrmeta` are valid arrmeta for them (NULL is
///    allowed for a type with no arrmeta).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn dynd_make_assignment_kernel(
    ckb: *mut dynd_ckernel_builder,
    offset: isize,
    dst_tp: dynd_type,
    dst_arrmeta: *const c_char,
    src_tp: dynd_type,
    src_arrmeta: *const c_char,
    kernreq: u32,
    errmode: c_int,
) -> isize {
    const F: &str = "dynd_make_assignment_kernel";
    builder_entry(F, ckb, -1, |ckb| {
        let offset = usize::try_from(offset).map_err(|_| {
            Error::invalid_argument(format!("{F}: argument 'offset' ({offset}) is negative"))
        })?;
        // SAFETY: (3).
        let dst_tp = unsafe { borrow_type(dst_tp, F, "dst_tp") }?;
        // SAFETY: (3).
        let src_tp = unsafe { borrow_type(src_tp, F, "src_tp") }?;
        let dst_meta = arrmeta_arg(dst_arrmeta, &dst_tp, F, "dst_arrmeta")?;
        let src_meta = arrmeta_arg(src_arrmeta, &src_tp, F, "src_arrmeta")?;
        let req = KernelRequest::from_raw(kernreq).map_err(|e| e.context(F))?;
        let mode = ErrorMode::from_raw(errmode).map_err(|e| e.context(F))?;
        // SAFETY: (1) is pin_from_raw's; (2) and (3) are
        // make_assignment_kernel's (1) and (2).
        let end = unsafe {
            make_assignment_kernel(
                CKernelBuilder::pin_from_raw(ckb.as_ptr()),
                offset,
                &dst_tp,
                dst_meta,
                &src_tp,
                src_meta,
                req,
                mode,
            )
        }?;
        isize::try_from(end)
            .map_err(|_| Error::alloc(format!("{F}: kernel end offset {end} overflows intptr_t")))
    })
}
