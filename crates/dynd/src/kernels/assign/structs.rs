//! Structs and tuples: struct ← struct matches fields **by name** (the
//! source may list them in any order; a missing or extra field is a type
//! error naming it); tuple ← tuple, and struct ↔ tuple, match by position
//! (the counts must agree). Each field gets its own child kernel.

use super::{AssignArgs, make_assign};
use crate::error::Result;
use crate::kernels::{CKernelBuilder, Kernel, KernelRef, kernel_size};
use crate::types::TypeKind;
use std::pin::Pin;

/// One child per field: `(dst data offset, src data offset)`.
struct StructAssign {
    offsets: Vec<(usize, usize)>,
    children: Vec<usize>,
    /// The destination's field names (empty for a tuple), for naming the
    /// field a missing value was in.
    names: std::sync::Arc<[String]>,
}

impl Kernel for StructAssign {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        for (i, (&(d, s), &child)) in self.offsets.iter().zip(&self.children).enumerate() {
            // SAFETY: field i of the destination and source structs
            // (Kernel::single 1); child i was built for Single on them.
            unsafe { k.child(child).call_single(dst.add(d), &[src[0].add(s)]) }.map_err(|e| {
                let name = self.names.get(i).map_or("", String::as_str);
                super::option::at_field(e, name, i)
            })?;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.children
    }
}

/// Builds `dst ← src` for structs and tuples.
///
/// # Safety
/// As [`super::make_assign`].
pub(crate) unsafe fn make(
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: AssignArgs<'_>,
) -> Result<usize> {
    let (Some(df), Some(sf)) = (args.dst_tp.fields(), args.src_tp.fields()) else {
        return Err(args.cannot_assign());
    };
    let by_name = matches!(
        (args.dst_tp.kind(), args.src_tp.kind()),
        (TypeKind::Struct(_), TypeKind::Struct(_))
    );
    // For each destination field, the source field that fills it.
    let pairing: Vec<usize> = if by_name {
        let mut v = Vec::with_capacity(df.len());
        for name in df.names() {
            let i = sf
                .index_of(name)
                .ok_or_else(|| args.type_error(format_args!("the source has no field '{name}'")))?;
            v.push(i);
        }
        if let Some(extra) = sf.names().iter().find(|n| df.index_of(n).is_none()) {
            return Err(args.type_error(format_args!("the destination has no field '{extra}'")));
        }
        v
    } else {
        if df.len() != sf.len() {
            return Err(args.type_error(format_args!("{} fields into {}", sf.len(), df.len())));
        }
        (0..df.len()).collect()
    };
    let kernel = StructAssign {
        offsets: pairing
            .iter()
            .enumerate()
            .map(|(d, &s)| (df.data_offsets()[d], sf.data_offsets()[s]))
            .collect(),
        children: vec![0; df.len()],
        names: df.names().into(),
    };
    // SAFETY: (1) `offset` is free; the children are all 0 (not built) now,
    // and each is set below to the slot its child is built in.
    let mut at = unsafe { ckb.as_mut().emplace(offset, args.req, kernel) }?;
    debug_assert_eq!(at, offset + kernel_size::<StructAssign>());
    for (d, &s) in pairing.iter().enumerate() {
        let child_at = at;
        // Name the child's slot before building in it: if building fails
        // part way, what was built there is destroyed with this kernel.
        // SAFETY: the kernel at `offset` is a StructAssign; `child_at` is the
        // free slot the last build reserved (zeroed: an empty prefix), which
        // only this child will use (emplace 2).
        unsafe { ckb.as_mut().kernel_mut::<StructAssign>(offset) }?.children[d] = child_at - offset;
        // SAFETY: (1) `at` is the free slot past everything built so far;
        // (2) each field's arrmeta is at its recorded offset.
        at = unsafe {
            let field = args.child(
                &df.types()[d],
                args.dst_meta.add(df.arrmeta_offsets()[d]),
                &sf.types()[s],
                args.src_meta.add(sf.arrmeta_offsets()[s]),
            );
            make_assign(ckb.as_mut(), child_at, field)
        }?;
    }
    Ok(at)
}
