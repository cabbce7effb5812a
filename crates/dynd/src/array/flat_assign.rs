//! The flat path of [`Array::assign`]: when both arrays are C-contiguous
//! with the same shape over builtin scalars, their data are two runs of
//! `n` elements, and one 1-d kernel call converts them all — no per-row
//! calls through the lifted dims, and the leaf's contiguous loop sees whole
//! chunks instead of rows that end in a short one.

use super::Array;
use crate::error::Result;
use crate::exec::{self, SPLIT_MIN, Shared, TASK_ELEMENTS};
use crate::kernels::assign::{ErrorMode, make_assignment_kernel};
use crate::kernels::{CKernelBuilder, KernelRequest};
use crate::layout::FixedDimMeta;
use crate::types::Type;
use std::pin::pin;

/// Rows shorter than this go through the flat path; longer ones gain
/// nothing from it (the per-row cost is spread over enough elements).
const SHORT_ROWS: usize = 1 << 16;

/// `dst ← src` split across the executor's threads as one flat run
/// ([`exec::flat`]), when both are C-contiguous arrays of the same shape
/// (any number of dims) over builtin scalars, large enough to split, and
/// there are threads; `None` otherwise. Each piece converts its own
/// elements with one strided kernel shared by every thread; an error is
/// the one a serial assignment reports (pieces after it may have written).
pub(super) fn try_split_assign(dst: &Array, src: &Array, mode: ErrorMode) -> Option<Result<()>> {
    if dst.ndim() == 0 || dst.tp().has_blockref() || src.tp().has_blockref() {
        return None;
    }
    let (dshape, delem, _) = dst.c_contiguous_parts()?;
    let (sshape, selem, _) = src.c_contiguous_parts()?;
    let n: usize = dshape.iter().product();
    if dshape != sshape || n < SPLIT_MIN || exec::num_threads() < 2 {
        return None;
    }
    let (d, s) = (delem.as_builtin()?, selem.as_builtin()?);
    let (ds, ss) = (d.data_size(), s.data_size());
    // Overlapping data (a shifted view of the same buffer) is converted in
    // the serial order only: pieces would read what others already wrote.
    let (dp, sp) = (dst.data_ptr() as usize, src.data_ptr() as usize);
    if dp < sp + n * ss && sp < dp + n * ds {
        return None;
    }
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: 0 is a free slot of a new builder; builtin elements have no
    // arrmeta, so none is read.
    let built = unsafe {
        make_assignment_kernel(
            ckb.as_mut(),
            0,
            delem,
            std::ptr::null(),
            selem,
            std::ptr::null(),
            KernelRequest::Strided,
            mode,
        )
    };
    if let Err(e) = built {
        return Some(Err(e));
    }
    let ckb: &CKernelBuilder = &ckb;
    let (out, from) = (Shared(dst.data_ptr()), Shared(src.data_ptr() as *const u8));
    Some(exec::flat(n, TASK_ELEMENTS, |start, count| {
        // SAFETY: the kernel was built for Strided on these builtin
        // elements; elements start..start + count lie in both arrays'
        // data (C order, the same shape), each piece writing its own; the
        // destination is writable (the caller checked).
        unsafe {
            ckb.call_strided(
                out.get().add(start * ds),
                ds as isize,
                &[from.get().add(start * ss)],
                &[ss as isize],
                count,
            )
        }
    }))
}

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
