//! The flat path of [`Array::assign`]: when both arrays are C-contiguous
//! with the same shape over builtin scalars, their data are two runs of
//! `n` elements, and one 1-d kernel call converts them all — no per-row
//! calls through the lifted dims, and the leaf's contiguous loop sees whole
//! chunks instead of rows that end in a short one.

use super::Array;
use crate::error::Result;
use crate::kernels::assign::{ErrorMode, make_assignment_kernel};
use crate::kernels::{CKernelBuilder, KernelRequest};
use crate::layout::FixedDimMeta;
use crate::types::Type;
use std::pin::pin;

/// Rows shorter than this go through the flat path; longer ones gain
/// nothing from it (the per-row cost is spread over enough elements).
const SHORT_ROWS: usize = 1 << 16;

/// `dst ← src` as one 1-d call, when both are C-contiguous arrays of the
/// same shape (two or more dims, rows shorter than [`SHORT_ROWS`]) over
/// builtin scalars; `None` when the flat path does not apply.
pub(super) fn try_flat_assign(dst: &Array, src: &Array, mode: ErrorMode) -> Option<Result<()>> {
    if dst.ndim() < 2 || dst.tp().has_blockref() || src.tp().has_blockref() {
        return None;
    }
    let (dshape, delem, _) = dst.c_contiguous_parts()?;
    let (sshape, selem, _) = src.c_contiguous_parts()?;
    if dshape != sshape || dshape.last().is_none_or(|&m| m >= SHORT_ROWS) {
        return None;
    }
    let (d, s) = (delem.as_builtin()?, selem.as_builtin()?);
    let n: usize = dshape.iter().product();
    let flat = |elem: &Type| Type::fixed_dim(n, elem.clone());
    let meta = |size: usize| FixedDimMeta {
        // The array exists, so its byte size (and so n) fits isize.
        dim_size: n as isize,
        stride: size as isize,
    };
    let (dtp, stp) = (flat(delem), flat(selem));
    let (dmeta, smeta) = (meta(d.data_size()), meta(s.data_size()));
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: 0 is a free slot of a new builder; each arrmeta is a valid
    // `n * T` arrmeta for its flat type (a builtin element has none), and
    // both live until the call below returns.
    let built = unsafe {
        make_assignment_kernel(
            ckb.as_mut(),
            0,
            &dtp,
            (&raw const dmeta).cast::<u8>(),
            &stp,
            (&raw const smeta).cast::<u8>(),
            KernelRequest::Single,
            mode,
        )
    };
    if let Err(e) = built {
        return Some(Err(e));
    }
    // SAFETY: the kernel was built for Single over `n` contiguous elements
    // on each side, which is what each array's data holds (C order, same
    // shape); the destination is writable (the caller checked).
    Some(unsafe { ckb.call_single(dst.data_ptr(), &[src.data_ptr() as *const u8]) })
}
