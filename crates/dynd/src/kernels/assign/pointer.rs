//! `T ← pointer[U]`: follows the pointer (plus the arrmeta's offset) and
//! assigns the target. A null pointer is an error. Assigning *into* a
//! pointer is not supported (a type error).

use super::{AssignArgs, WithChild, emplace_with_child};
use crate::error::{Error, Result};
use crate::kernels::CKernelBuilder;
use crate::layout::PointerMeta;
use crate::types::{Type, TypeKind};
use std::mem::size_of;
use std::pin::Pin;

/// Reads the pointer and hands its target to the child.
struct Deref {
    offset: isize,
    src_tp: Type,
}

impl WithChild for Deref {
    unsafe fn child_source(&self, _dst: *mut u8, src: *const u8) -> Result<Option<*const u8>> {
        // SAFETY: the source is a pointer (child_source 1).
        let p = unsafe { std::ptr::read_unaligned(src as *const *const u8) };
        if p.is_null() {
            return Err(Error::invalid_argument(format!(
                "cannot assign from a null {}",
                self.src_tp
            )));
        }
        // A non-null pointer of a valid array points (after the arrmeta's
        // offset) at the target type's data, which the child assigns from.
        Ok(Some(p.wrapping_offset(self.offset)))
    }
}

/// Builds `dst ← pointer[U]`.
///
/// # Safety
/// As [`super::make_assign`].
pub(crate) unsafe fn make(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: AssignArgs<'_>,
) -> Result<usize> {
    let TypeKind::Pointer(target) = args.src_tp.kind() else {
        return Err(args.cannot_assign());
    };
    // SAFETY: (2) pointer arrmeta starts with PointerMeta.
    let pm: PointerMeta = unsafe { std::ptr::read_unaligned(args.src_meta as *const PointerMeta) };
    let k = Deref {
        offset: pm.offset,
        src_tp: args.src_tp.clone(),
    };
    // SAFETY: (2) the target's arrmeta follows the pointer's.
    let target_meta = unsafe { args.src_meta.add(size_of::<PointerMeta>()) };
    let child = args.child(args.dst_tp, args.dst_meta, target, target_meta);
    // SAFETY: (1) `offset` is free; (2) the child's arrmeta is the
    // destination's and the target's.
    unsafe { emplace_with_child(ckb, offset, args.req, k, child) }
}
