//! `concatenate(x, y, ...)`: the rows of each argument in turn along the
//! outermost dim.

use super::refuse;
use crate::array::Array;
use crate::callable::CallableImpl;
use crate::callable::rows::{RowIn, RowOut};
use crate::error::{Error, Result};
use crate::exec::{self, SPLIT_MIN, Shared, TASK_ELEMENTS};
use crate::kernels::assign::{ErrorMode, make_assignment_kernel};
use crate::kernels::{CKernelBuilder, Kernel, KernelArgs, KernelRef, KernelRequest, kernel_size};
use crate::types::{Type, TypeKind};
use std::pin::Pin;

/// Most arguments one call of the callable takes (the Rust function takes
/// any number, in groups of this many).
pub(super) const MAX_ARGS: usize = 8;

/// `concatenate`.
pub(super) struct Concatenate {
    pub(super) sig: Type,
}

impl CallableImpl for Concatenate {
    fn name(&self) -> &str {
        "concatenate"
    }

    fn signature(&self) -> &Type {
        &self.sig
    }

    fn is_scalar(&self) -> bool {
        false
    }

    fn resolve(&self, args: &[Type]) -> Result<Type> {
        if args.is_empty() || args.len() > MAX_ARGS {
            return Err(Error::invalid_argument(format!(
                "concatenate takes 1 to {MAX_ARGS} arguments, not {}",
                args.len()
            )));
        }
        let mut total = Some(0usize);
        let mut elem: Option<(&Type, Type)> = None;
        for (i, a) in args.iter().enumerate() {
            a.require_concrete(&format!("concatenate's argument {i}"))?;
            let (size, e) = match a.kind() {
                TypeKind::FixedDim { size, elem } => (Some(*size), elem),
                TypeKind::VarDim { elem } => (None, elem),
                _ if a.is_symbolic() => return Err(refuse("concatenate", &self.sig, args)),
                _ => {
                    return Err(Error::type_error(format!(
                        "concatenate joins arrays along their outermost dim, and argument {i} ({a}) has none"
                    )));
                }
            };
            elem = Some(match elem {
                None => (a, e.clone()),
                Some((first, fe)) => match joined_elem(&fe, e) {
                    Some(j) => (first, j),
                    None => {
                        return Err(Error::type_error(format!(
                            "concatenate: argument 0 ({first}) and argument {i} ({a}) have different elements ({fe} and {e}); cast one first"
                        )));
                    }
                },
            });
            total = match (total, size) {
                (Some(t), Some(s)) => Some(t.checked_add(s).ok_or_else(|| {
                    Error::alloc("concatenate: the total size overflows".to_string())
                })?),
                _ => None,
            };
        }
        let e = elem.map(|p| p.1).unwrap_or_else(Type::any);
        Ok(match total {
            Some(n) => Type::fixed_dim(n, e),
            None => Type::var_dim(e),
        })
    }

    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        macro_rules! build {
            ($($n:literal)*) => {
                match args.nsrc() {
                    // SAFETY: the caller's promises, with N sources.
                    $($n => unsafe { build::<$n>(ckb, offset, args) },)*
                    n => Err(Error::invalid_argument(format!(
                        "concatenate takes 1 to {MAX_ARGS} arguments, not {n}"
                    ))),
                }
            };
        }
        build!(1 2 3 4 5 6 7 8)
    }
}

/// The element of the result when arguments with elements `a` and `b` are
/// joined, as awkward joins them: the same type; or dims over elements
/// that join, fixed when both are fixed of one size and var when a var dim
/// meets a fixed one (`var * int32` and `3 * int32` join as
/// `var * int32`). `None` when they do not join: fixed dims of two sizes
/// (as NumPy refuses them), or other element types (a cast is the
/// caller's).
fn joined_elem(a: &Type, b: &Type) -> Option<Type> {
    if a == b {
        return Some(a.clone());
    }
    let dim = |t: &Type| match t.kind() {
        TypeKind::FixedDim { size, elem } => Some((Some(*size), elem.clone())),
        TypeKind::VarDim { elem } => Some((None, elem.clone())),
        _ => None,
    };
    let ((na, ea), (nb, eb)) = (dim(a)?, dim(b)?);
    let inner = joined_elem(&ea, &eb)?;
    match (na, nb) {
        (Some(x), Some(y)) if x == y => Some(Type::fixed_dim(x, inner)),
        (Some(_), Some(_)) => None,
        _ => Some(Type::var_dim(inner)),
    }
}

/// Builds the kernel for `N` arguments: one copy child per argument.
///
/// # Safety
/// As [`CallableImpl::instantiate`], with `N` sources.
unsafe fn build<const N: usize>(
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: KernelArgs<'_>,
) -> Result<usize> {
    let name = "concatenate";
    // SAFETY: (2) the destination's arrmeta is of its type.
    let (dst, dst_elem_meta) = unsafe { RowOut::of(name, args.dst_tp, args.dst_meta) }?;
    let dst_elem = args.dst_tp.dim_elem().ok_or_else(|| {
        Error::type_error(format!("concatenate writes a dim, not {}", args.dst_tp))
    })?;
    let mut srcs = [RowIn::Fixed { size: 0, stride: 0 }; N];
    let mut elem_metas = [std::ptr::null(); N];
    for i in 0..N {
        // SAFETY: (2) each source's arrmeta is of its type.
        (srcs[i], elem_metas[i]) = unsafe { RowIn::of(name, &args.src_tps[i], args.src_metas[i]) }?;
    }
    let k = ConcatKernel::<N> {
        srcs,
        dst,
        children: [0; N],
        split: !dst_elem.has_blockref(),
    };
    // SAFETY: (1) `offset` is free; the children go from the slot emplace
    // reserves on, each offset set once it is built.
    let mut at = unsafe { ckb.as_mut().emplace(offset, args.req, k) }?;
    let mut child = kernel_size::<ConcatKernel<N>>();
    for (i, &elem_meta) in elem_metas.iter().enumerate() {
        let src_elem = args.src_tps[i].dim_elem().unwrap_or(&args.src_tps[i]);
        // SAFETY: `at` is free; the elements' arrmeta.
        let next = unsafe {
            make_assignment_kernel(
                ckb.as_mut(),
                at,
                dst_elem,
                dst_elem_meta,
                src_elem,
                elem_meta,
                KernelRequest::Strided,
                ErrorMode::Default,
            )
        }?;
        // SAFETY: a ConcatKernel<N> was emplaced at `offset`; child i is
        // the kernel just built at `at`.
        unsafe { ckb.as_mut().kernel_mut::<ConcatKernel<N>>(offset) }?.children[i] = child;
        child = next - offset;
        at = next;
    }
    Ok(at)
}

/// The rows of `N` sources, one after another into one output row.
struct ConcatKernel<const N: usize> {
    srcs: [RowIn; N],
    dst: RowOut,
    /// The copy of each source's elements.
    children: [usize; N],
    /// Long arguments may be copied in pieces on several threads: the
    /// elements allocate nothing (no strings or var dims, whose arena
    /// every piece would contend for).
    split: bool,
}

impl<const N: usize> Kernel for ConcatKernel<N> {
    const NSRC: usize = N;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        let mut rows = [(std::ptr::null(), 0usize, 0isize); N];
        let mut total = 0usize;
        for i in 0..N {
            // SAFETY: source i is an element of its dim (Kernel::single 1).
            rows[i] = unsafe { self.srcs[i].row(src[i]) };
            total += rows[i].1;
        }
        // SAFETY: the destination is an element of the output's dim.
        let (out, stride) = unsafe { self.dst.open("concatenate", dst, total) }?;
        let mut w = 0usize;
        for (i, &(first, n, s)) in rows.iter().enumerate() {
            // SAFETY: child i was built for Strided.
            // A built kernel is immutable while it runs and may be called
            // from many threads at once (DESIGN §2).
            let child = Shared(unsafe { k.child(self.children[i]) });
            let (to, from) = (
                Shared(out.wrapping_offset(w as isize * stride)),
                Shared(first),
            );
            // A long argument is copied in pieces on the executor's threads.
            let pieces = if self.split && n >= SPLIT_MIN {
                TASK_ELEMENTS
            } else {
                n
            };
            exec::flat(n, pieces, |lo, count| {
                // SAFETY: elements lo..lo + count of the argument go to
                // outputs [w + lo, w + lo + count) of the row of `total`,
                // this piece's alone.
                unsafe {
                    child.get().call_strided(
                        to.get().wrapping_offset(lo as isize * stride),
                        stride,
                        &[from.get().wrapping_offset(lo as isize * s)],
                        &[s],
                        count,
                    )
                }
            })
            .map_err(|e| e.context(format!("concatenate: argument {i}")))?;
            w += n;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.children
    }
}

/// `arrays` joined along their outermost dim (any number, at least one):
/// fixed when every outermost dim is, else var; the element types must be
/// equal. See [`crate::callable::sort`].
pub fn concatenate(arrays: &[&Array]) -> Result<Array> {
    let f = super::concatenate_callable();
    match arrays {
        [] => Err(Error::invalid_argument(
            "concatenate takes at least one array, got none",
        )),
        _ if arrays.len() <= MAX_ARGS => f.call(arrays),
        _ => {
            let mut acc = f.call(&arrays[..MAX_ARGS])?;
            for group in arrays[MAX_ARGS..].chunks(MAX_ARGS - 1) {
                let mut next: Vec<&Array> = vec![&acc];
                next.extend_from_slice(group);
                acc = f.call(&next)?;
            }
            Ok(acc)
        }
    }
}
