//! `T ← pointer[U]`: follows the pointer (plus the arrmeta's offset) and
//! assigns the target. A null pointer is an error. Assigning *into* a
//! pointer is not supported (a type error).

use super::{ErrorMode, make_assignment_kernel};
use crate::error::{Error, Result};
use crate::kernels::{CKernelBuilder, Kernel, KernelRef, KernelRequest, kernel_size};
use crate::layout::PointerMeta;
use crate::types::{Type, TypeKind};
use std::mem::size_of;
use std::pin::Pin;

struct Deref {
    offset: isize,
    src_tp: Type,
    child: [usize; 1],
}

impl Kernel for Deref {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: the source is a pointer (Kernel::single 1).
        let p = unsafe { std::ptr::read_unaligned(src[0] as *const *const u8) };
        if p.is_null() {
            return Err(Error::invalid_argument(format!(
                "cannot assign from a null {}",
                self.src_tp
            )));
        }
        let target = p.wrapping_offset(self.offset);
        // SAFETY: a non-null pointer of a valid array points (after the
        // arrmeta's offset) at the target type's data; the child was built
        // for Single on it.
        unsafe { k.child(self.child[0]).call_single(dst, &[target]) }
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

/// Builds `dst ← pointer[U]`.
///
/// # Safety
/// As [`super::make_assignment_kernel`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn make(
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    dst_tp: &Type,
    dst_meta: *const u8,
    src_tp: &Type,
    src_meta: *const u8,
    req: KernelRequest,
    mode: ErrorMode,
) -> Result<usize> {
    let TypeKind::Pointer(target) = src_tp.kind() else {
        return Err(super::cannot_assign(dst_tp, src_tp));
    };
    // SAFETY: (2) pointer arrmeta starts with PointerMeta.
    let pm: PointerMeta = unsafe { std::ptr::read_unaligned(src_meta as *const PointerMeta) };
    let k = Deref {
        offset: pm.offset,
        src_tp: src_tp.clone(),
        child: [kernel_size::<Deref>()],
    };
    // SAFETY: (1) `offset` is free and the child goes in the slot emplace
    // reserves; (2) the target's arrmeta follows the pointer's.
    unsafe {
        let at = ckb.as_mut().emplace(offset, req, k)?;
        make_assignment_kernel(
            ckb,
            at,
            dst_tp,
            dst_meta,
            target,
            src_meta.add(size_of::<PointerMeta>()),
            KernelRequest::Single,
            mode,
        )
    }
}
