//! `split` over whole types: its element result `var * string` is a dim,
//! so it lifts itself over the arguments' broadcast dims.
//!
//! The generic lifter ([`crate::kernels::lift`]) peels every dim of the
//! destination it is given. Given the destination with its element
//! `var * string` seen as the one-field tuple `(var * string)` — the same
//! data and arrmeta layout (DESIGN §4: field 0 at offset 0 of both) — it
//! peels exactly the broadcast dims and calls the leaf, the split kernel,
//! with the field's arrmeta. A small root kernel puts the real type back
//! into the lifter's run-time messages.

use super::{Op, StrFn};
use crate::callable::elementwise::broadcast_dims;
use crate::callable::no_match;
use crate::callable::rows::{as_cell, under_dims};
use crate::error::{Error, ErrorKind, Result};
use crate::kernels::broadcast::dims_of;
use crate::kernels::{CKernelBuilder, Kernel, KernelArgs, KernelRef, Strided, kernel_size, lift};
use crate::types::Type;
use std::pin::Pin;

impl StrFn {
    /// `split` over whole argument types: the broadcast dims, then
    /// `var * string`.
    pub(super) fn resolve_split(&self, args: &[Type]) -> Result<Type> {
        let dims = broadcast_dims(args)?;
        let dtypes: Vec<Type> = args.iter().map(|t| t.dtype().clone()).collect();
        let elem = self.resolve_elem(&dtypes).map_err(|e| {
            if e.kind() == ErrorKind::Type && args.iter().any(Type::is_dim) {
                no_match(self.op.name(), &self.sig, args).context(e.message())
            } else {
                e
            }
        })?;
        Ok(under_dims(&dims, elem))
    }

    /// `split` lifted over the destination's dims above its own
    /// `var * string`.
    ///
    /// # Safety
    /// As [`crate::callable::CallableImpl::instantiate`], for whole types.
    pub(super) unsafe fn instantiate_split(
        &self,
        mut ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        let (dst_tp, dst_meta, src_tps, src_metas, req) = (
            args.dst_tp,
            args.dst_meta,
            args.src_tps,
            args.src_metas,
            args.req,
        );
        let elem = Op::Split.result();
        // The broadcast dims: the destination's, less the element's own.
        let mut dims = dims_of(dst_tp);
        dims.truncate(dst_tp.ndim().saturating_sub(elem.ndim()));
        let mut t = dst_tp;
        for _ in 0..dims.len() {
            t = t.dim_elem().unwrap_or(t);
        }
        if *t != elem {
            return Err(Error::type_error(format!(
                "split writes {elem} under the broadcast dims, so it cannot write into {dst_tp}"
            )));
        }
        let cell = as_cell("split", &elem)?;
        let cells = under_dims(&dims, cell.clone());
        let renamer = Renamed {
            from: cells.to_string(),
            to: dst_tp.to_string(),
            child: [kernel_size::<Renamed>()],
        };
        lift::check_broadcast(&cells, src_tps).map_err(|e| renamer.rename(e))?;
        let mut leaf = |ckb: Pin<&mut CKernelBuilder>, at: usize, el: KernelArgs<'_>| {
            if *el.dst_tp != cell {
                return Err(Error::type_error(format!(
                    "split: the lifter reached {}, not {cell}",
                    el.dst_tp
                )));
            }
            let el = KernelArgs {
                dst_tp: &elem,
                ..el
            };
            // SAFETY: make_lifted calls the leaf at a free slot with the
            // element arrmeta of `cells`: the arrmeta of its one field,
            // `var * string`, at offset 0 (checked above).
            unsafe { self.instantiate_elem(ckb, at, el) }
        };
        if dims.is_empty() {
            // No dims: the split kernel itself, with no lifter messages to fix.
            let args = KernelArgs {
                dst_tp: &elem,
                ..args
            };
            // SAFETY: the caller's promises; `dst_tp` is `var * string`.
            return unsafe { self.instantiate_elem(ckb, offset, args) };
        }
        if src_tps.len() != Renamed::NSRC {
            return Err(no_match(self.op.name(), &self.sig, src_tps));
        }
        // SAFETY: `offset` is a free slot (the caller's promise); the
        // child goes in the slot emplace reserves.
        let at = unsafe { ckb.as_mut().emplace(offset, req, renamer) }?;
        // SAFETY: `at` is the renamer's child slot; `cells` has the data
        // and arrmeta layout of `dst_tp` (the same dims over a type laid out
        // as its element), so `dst_meta` is valid arrmeta of `cells`; the
        // sources are the caller's; the leaf builds at the offset it is given.
        unsafe {
            let args = KernelArgs::new(&cells, dst_meta, src_tps, src_metas, req);
            lift::make_lifted(ckb, at, args, &mut leaf)
        }
    }
}

/// Runs its child (the lifted split), naming the real destination type
/// instead of the lifter's view of it in errors.
struct Renamed {
    /// The lifter's view (`2 * var * (var * string)`).
    from: String,
    /// The destination type (`2 * var * var * string`).
    to: String,
    child: [usize; 1],
}

impl Renamed {
    fn rename(&self, e: Error) -> Error {
        if e.message().contains(&self.from) {
            Error::new(e.kind(), e.message().replace(&self.from, &self.to))
        } else {
            e
        }
    }
}

impl Kernel for Renamed {
    const NSRC: usize = 2;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: the child was built for the same request, types and
        // arrmeta (Kernel::single 1).
        unsafe { k.child(self.child[0]).call_single(dst, src) }.map_err(|e| self.rename(e))
    }

    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        let (dst, dst_stride, src, src_stride, count) = run.parts();
        // SAFETY: as in `single` (Kernel::strided 1).
        unsafe {
            k.child(self.child[0])
                .call_strided(dst, dst_stride, src, src_stride, count)
        }
        .map_err(|e| self.rename(e))
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}
