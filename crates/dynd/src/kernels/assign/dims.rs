//! Assignment over dimensions, with broadcasting (DESIGN §6), through the
//! one generic lifter ([`crate::kernels::lift`]), whose table gives the
//! rules. For assignment in particular: the destination's extra leading
//! dims repeat the source, and a scalar assigned to a `var *` destination
//! fills the elements it already has.

use super::{ErrorMode, make_assignment_kernel};
use crate::error::Result;
use crate::kernels::lift;
use crate::kernels::{CKernelBuilder, KernelRequest};
use crate::types::Type;
use std::pin::Pin;

/// Builds `dst ← src` when either has a leading dim.
///
/// # Safety
/// As [`super::make_assignment_kernel`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn make(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    dst_tp: &Type,
    dst_meta: *const u8,
    src_tp: &Type,
    src_meta: *const u8,
    req: KernelRequest,
    mode: ErrorMode,
) -> Result<usize> {
    let srcs = [src_tp.clone()];
    lift::check_broadcast(dst_tp, &srcs)?;
    let mut leaf =
        |ckb: Pin<&mut CKernelBuilder>, at, d: &Type, dm, s: &[Type], sm: &[*const u8], r| {
            // SAFETY: make_lifted calls the leaf under make_lifted's promises,
            // which are make_assignment_kernel's.
            unsafe { make_assignment_kernel(ckb, at, d, dm, &s[0], sm[0], r, mode) }
        };
    // SAFETY: the caller's promises are make_lifted's (1) and (2); the leaf
    // builds where it is told (3).
    unsafe {
        lift::make_lifted(
            ckb,
            offset,
            dst_tp,
            dst_meta,
            &srcs,
            &[src_meta],
            req,
            &mut leaf,
        )
    }
}
