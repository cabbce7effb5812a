//! (being written)
use super::ErrorMode;
use crate::error::Result;
use crate::kernels::{CKernelBuilder, KernelRequest};
use crate::types::Type;
use std::pin::Pin;

/// Builds `dst ← src`.
///
/// # Safety
/// As [`super::make_assignment_kernel`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn make(
    _ckb: Pin<&mut CKernelBuilder>,
    _offset: usize,
    dst_tp: &Type,
    _dst_meta: *const u8,
    src_tp: &Type,
    _src_meta: *const u8,
    _req: KernelRequest,
    _mode: ErrorMode,
) -> Result<usize> {
    Err(super::cannot_assign(dst_tp, src_tp))
}
