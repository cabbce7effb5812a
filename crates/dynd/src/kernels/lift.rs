//! Lifting a kernel over dimensions, with broadcasting — written once, for
//! assignment and for every elementwise callable (DESIGN §1.5, §6).
//!
//! [`make_lifted`] peels the destination's leading dims one at a time; each
//! becomes a [`Lift`] kernel whose child handles the element types, and the
//! innermost child is whatever `leaf` builds (an assignment kernel, a scalar
//! callable's kernel). Dims align from the right; a source with fewer dims
//! repeats (stride 0).
//!
//! | destination dim | a source dim of | rule |
//! |---|---|---|
//! | `N *` | `N *` or `1 *` | stride, or repeated; other sizes are a broadcast error when built |
//! | `N *` | `var *` | each element must have N elements, or 1 (repeated) |
//! | `var *` | any | an unwritten (null) destination element is allocated with the sources' common size; a written one keeps its size, and sources must match it or have size 1 |
//!
//! The innermost loop is one strided call of the leaf per row; leaves ask
//! the loop selector ([`super::loops`]) once per call and take a plain
//! slice loop when it says contiguous. Sizes are checked, and mismatches
//! worded, by [`super::broadcast`].

use super::broadcast::{Mismatch, broadcast_error, dims_through_options, fits};
use super::{CKernelBuilder, Kernel, KernelArgs, KernelRef, KernelRequest, Strided, kernel_size};
use crate::error::{Error, Result};
use crate::layout::{FixedDimMeta, VarDimData, VarDimMeta};
use crate::memblock::MemBlock;
use crate::types::{Type, TypeKind};
use smallvec::SmallVec;
use std::mem::size_of;
use std::pin::Pin;
use std::ptr::NonNull;

/// Most sources a lifted kernel takes.
pub const MAX_SOURCES: usize = 4;

/// Reads a `T` from arrmeta or data.
///
/// # Safety
/// `p` is readable for a `T`.
unsafe fn read<T: Copy>(p: *const u8) -> T {
    // SAFETY: the caller's promise; unaligned is allowed.
    unsafe { std::ptr::read_unaligned(p as *const T) }
}

/// One source's view of the dim being lifted.
#[derive(Clone, Copy, Debug)]
enum SrcDim {
    /// The source has fewer dims: it repeats over this one.
    Missing,
    /// A fixed dim.
    Fixed { size: usize, stride: isize },
    /// A var dim: the size is in each element.
    Var { stride: isize, offset: isize },
}

/// The destination's dim being lifted.
enum DstDim {
    Fixed {
        size: usize,
        stride: isize,
    },
    Var {
        block: Option<MemBlock>,
        stride: isize,
        offset: isize,
        elem_size: usize,
        elem_align: usize,
    },
}

/// A lifted dim over `N` sources.
struct Lift<const N: usize> {
    dst: DstDim,
    srcs: [SrcDim; N],
    /// The whole types, for error messages (cloning a type allocates nothing).
    dst_tp: Type,
    src_tps: [Type; N],
    child: [usize; 1],
}

impl<const N: usize> Lift<N> {
    /// A var element (or dim) of size `from` met size `into` at run time.
    fn mismatch(&self, from: usize, into: usize) -> Error {
        let srcs: SmallVec<[&Type; MAX_SOURCES]> = self.src_tps.iter().collect();
        broadcast_error(&srcs, Some(&self.dst_tp), Mismatch::Size { from, into })
    }

    /// Allocates `n` elements for an unwritten var destination element.
    fn allocate(&self, n: usize) -> Result<*mut u8> {
        let DstDim::Var {
            block,
            stride,
            offset,
            elem_size,
            elem_align,
        } = &self.dst
        else {
            return Err(Error::invalid_argument("not a var destination"));
        };
        if *offset != 0 || *stride != *elem_size as isize {
            return Err(Error::invalid_argument(format!(
                "cannot allocate elements of {} through a view with offset {offset} and stride {stride}",
                self.dst_tp
            )));
        }
        let alloc = block
            .as_ref()
            .and_then(MemBlock::pod_allocator)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "the destination {} has no POD allocator block to allocate from",
                    self.dst_tp
                ))
            })?;
        let bytes = n.checked_mul(*elem_size).ok_or_else(|| {
            Error::alloc(format!("{n} elements of {} are too large", self.dst_tp))
        })?;
        alloc.allocate(bytes, *elem_align)
    }
}

impl<const N: usize> Kernel for Lift<N> {
    const NSRC: usize = N;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // Each source: first element, stride, and size (None: repeats).
        let mut ptrs = [std::ptr::null::<u8>(); N];
        let mut strides = [0isize; N];
        let mut sizes = [None::<usize>; N];
        for i in 0..N {
            match self.srcs[i] {
                SrcDim::Missing => ptrs[i] = src[i],
                SrcDim::Fixed { size, stride } => {
                    ptrs[i] = src[i];
                    strides[i] = stride;
                    sizes[i] = Some(size);
                }
                SrcDim::Var { stride, offset } => {
                    // SAFETY: source i is a var element (Kernel::single 1).
                    let v: VarDimData = unsafe { read(src[i]) };
                    ptrs[i] = v.begin.wrapping_offset(offset);
                    strides[i] = stride;
                    sizes[i] = Some(v.size);
                }
            }
        }
        let (out, out_stride, count) = match &self.dst {
            DstDim::Fixed { size, stride } => (dst, *stride, *size),
            DstDim::Var { stride, offset, .. } => {
                // SAFETY: the destination is a var element.
                let mut d: VarDimData = unsafe { read(dst) };
                // The sources' common size: all sizes other than 1 agree.
                let mut common = None;
                for s in sizes.iter().flatten() {
                    match common {
                        None | Some(1) => common = Some(*s),
                        Some(c) if *s == c || *s == 1 => {}
                        Some(c) => return Err(self.mismatch(*s, c)),
                    }
                }
                if d.begin.is_null() {
                    let n = common.unwrap_or(0);
                    d = VarDimData {
                        begin: self.allocate(n)?,
                        size: n,
                    };
                    // SAFETY: the destination is a writable var element.
                    unsafe { std::ptr::write_unaligned(dst as *mut VarDimData, d) };
                }
                (d.begin.wrapping_offset(*offset), *stride, d.size)
            }
        };
        for i in 0..N {
            match sizes[i] {
                Some(s) if s == count => {}
                Some(1) | None => strides[i] = 0,
                Some(s) => return Err(self.mismatch(s, count)),
            }
        }
        // SAFETY: the child was built for Strided over the element types;
        // `count` destination elements at `out_stride` from `out`, and each
        // source has `count` elements at its stride (or one, repeated).
        unsafe {
            k.child(self.child[0])
                .call_strided(out, out_stride, &ptrs, &strides, count)
        }
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

/// A lifted fixed dim whose sources are all fixed or missing: sizes were
/// checked when it was built, so it only loops (and stays small enough
/// for a 1-d kernel to fit the builder's inline words).
struct LiftFixed<const N: usize> {
    size: usize,
    dst_stride: isize,
    src_strides: [isize; N],
    child: [usize; 1],
}

impl<const N: usize> Kernel for LiftFixed<N> {
    const NSRC: usize = N;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: the child was built for Strided over the element types;
        // the sizes were checked when this was built (Kernel::single 1).
        unsafe {
            k.child(self.child[0]).call_strided(
                dst,
                self.dst_stride,
                src,
                &self.src_strides,
                self.size,
            )
        }
    }

    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        let (dst, dst_stride, src, src_stride, count) = run.parts();
        // SAFETY: as in `single`.
        let child = unsafe { k.child(self.child[0]) };
        let mut ptrs = [std::ptr::null::<u8>(); N];
        for j in 0..count as isize {
            for i in 0..N {
                ptrs[i] = src[i].wrapping_offset(j * src_stride[i]);
            }
            // SAFETY: element j of the outer loop (Kernel::strided 1).
            unsafe {
                child.call_strided(
                    dst.wrapping_offset(j * dst_stride),
                    self.dst_stride,
                    &ptrs,
                    &self.src_strides,
                    self.size,
                )
            }
            .map_err(|e| super::assign::option::at_index(e, j as usize))?;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

/// Checks, before anything is built, that every source's dims broadcast to
/// the destination's ([`super::broadcast::check`]).
pub(crate) use super::broadcast::check as check_broadcast;

/// Builds the leaf kernel for element types: `(builder, offset, element
/// operands) -> end offset`.
pub(crate) type Leaf<'a> =
    dyn FnMut(Pin<&mut CKernelBuilder>, usize, KernelArgs<'_>) -> Result<usize> + 'a;

/// Builds `dst ← f(srcs)` lifted over the destination's leading dims, with
/// `leaf` building the kernel for the element types (called with the
/// request it must honour). Run [`check_broadcast`] first for whole-shape
/// messages.
///
/// # Safety
/// 1. `offset` is a free slot of `ckb` (as [`CKernelBuilder::emplace`]).
/// 2. Each arrmeta pointer is valid arrmeta of its type.
/// 3. `leaf` builds at the offset it is given, under the same promises.
pub(crate) unsafe fn make_lifted(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: KernelArgs<'_>,
    leaf: &mut Leaf<'_>,
) -> Result<usize> {
    let top = (args.dst_tp, args.src_tps);
    // SAFETY: the caller's promises.
    unsafe { lifted(ckb, offset, args, leaf, top, None) }
}

/// How many leading dims the lifter peels off the destination and off
/// each source, when the caller has decided it: a callable whose element
/// has dims of its own (per-argument core dims, as `fill_null`'s fill
/// value for an option of a dim) lifts only the dims outside them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Outer {
    /// The destination's outer dims.
    pub dst: usize,
    /// Each source's outer dims, at most `dst` each: a source with fewer
    /// repeats over the destination's leading dims, as dims align from
    /// the right.
    pub srcs: SmallVec<[usize; MAX_SOURCES]>,
}

/// [`make_lifted`] peeling exactly the dims `outer` counts: the leaf gets
/// the rest of every type, dims included. Run [`check_broadcast`] (or an
/// equivalent check of the outer dims) first.
///
/// # Safety
/// As [`make_lifted`], and (4) the destination has at least `outer.dst`
/// leading fixed or var dims, and source `i` at least `outer.srcs[i]`.
pub(crate) unsafe fn make_lifted_outer(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: KernelArgs<'_>,
    outer: &Outer,
    leaf: &mut Leaf<'_>,
) -> Result<usize> {
    if outer.srcs.len() != args.src_tps.len() || outer.srcs.iter().any(|&s| s > outer.dst) {
        return Err(Error::invalid_argument(format!(
            "lifting {} outer dims of the destination over sources with {:?}",
            outer.dst, outer.srcs
        )));
    }
    let top = (args.dst_tp, args.src_tps);
    // SAFETY: the caller's promises.
    unsafe { lifted(ckb, offset, args, leaf, top, Some(outer.clone())) }
}

/// [`make_lifted`] one dim down; `top` names the whole types for messages.
///
/// # Safety
/// As [`make_lifted`].
unsafe fn lifted(
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: KernelArgs<'_>,
    leaf: &mut Leaf<'_>,
    top: (&Type, &[Type]),
    outer: Option<Outer>,
) -> Result<usize> {
    let KernelArgs {
        dst_tp,
        dst_meta,
        src_tps,
        src_metas,
        req,
    } = args;
    // Dims align through options of dims (`2 * ?3 * int32` has two): an
    // option of a dim on either side at this level is the leaf's to take.
    // With `outer` the caller has counted the dims to peel instead.
    let levels = |t: &Type| dims_through_options(t).len();
    let dn = levels(dst_tp);
    let option_dim = |t: &Type| t.option_value().is_some_and(Type::is_dim);
    let at_leaf = match &outer {
        Some(o) => o.dst == 0,
        None => {
            option_dim(dst_tp)
                || (dst_tp.is_dim() && src_tps.iter().any(|s| option_dim(s) && levels(s) >= dn))
        }
    };
    if at_leaf {
        return leaf(ckb, offset, args);
    }
    // This source repeats over the dim being lifted.
    let repeats = |i: usize, s: &Type| match &outer {
        Some(o) => o.srcs[i] < o.dst,
        None => levels(s) < dn,
    };
    // What the next level peels.
    let next = outer.as_ref().map(|o| Outer {
        dst: o.dst - 1,
        srcs: o
            .srcs
            .iter()
            .map(|&s| if s < o.dst { s } else { s - 1 })
            .collect(),
    });
    if !dst_tp.is_dim() {
        if let Some(i) = src_tps.iter().position(|s| s.is_dim()) {
            let whole = top.1.get(i).unwrap_or(&src_tps[i]);
            return Err(broadcast_error(&[whole], Some(top.0), Mismatch::MoreDims));
        }
        return leaf(ckb, offset, args);
    }
    let (dst, elem, elem_meta) = match dst_tp.kind() {
        TypeKind::FixedDim { size, elem } => {
            // SAFETY: (2) a fixed dim's arrmeta starts with FixedDimMeta.
            let m: FixedDimMeta = unsafe { read(dst_meta) };
            // SAFETY: (2) the element's arrmeta follows.
            let em = unsafe { dst_meta.add(size_of::<FixedDimMeta>()) };
            (
                DstDim::Fixed {
                    size: *size,
                    stride: m.stride,
                },
                elem,
                em,
            )
        }
        TypeKind::VarDim { elem } => {
            // SAFETY: (2) a var dim's arrmeta starts with VarDimMeta.
            let m: VarDimMeta = unsafe { read(dst_meta) };
            // SAFETY: (2) the arrmeta holds a reference to its block, alive
            // during this call; the kernel takes its own.
            let block = NonNull::new(m.blockref).map(|b| unsafe { MemBlock::from_borrowed(b) });
            let dim = DstDim::Var {
                block,
                stride: m.stride,
                offset: m.offset,
                elem_size: elem.data_size(),
                elem_align: elem.data_alignment(),
            };
            // SAFETY: (2) the element's arrmeta follows.
            (dim, elem, unsafe { dst_meta.add(size_of::<VarDimMeta>()) })
        }
        _ => return Err(Error::type_error(format!("cannot lift over {dst_tp}"))),
    };
    let n = src_tps.len();
    let mut srcs: SmallVec<[SrcDim; MAX_SOURCES]> = SmallVec::new();
    let mut child_tps: SmallVec<[Type; MAX_SOURCES]> = SmallVec::new();
    let mut child_metas: SmallVec<[*const u8; MAX_SOURCES]> = SmallVec::new();
    for (i, (s_tp, &s_meta)) in src_tps.iter().zip(src_metas).enumerate() {
        if repeats(i, s_tp) {
            srcs.push(SrcDim::Missing);
            child_tps.push(s_tp.clone());
            child_metas.push(s_meta);
            continue;
        }
        match s_tp.kind() {
            TypeKind::FixedDim { size, elem } => {
                // SAFETY: (2) as for the destination.
                let m: FixedDimMeta = unsafe { read(s_meta) };
                if let DstDim::Fixed { size: d, .. } = dst
                    && !fits(*size, d)
                {
                    let whole = top.1.get(i).unwrap_or(s_tp);
                    return Err(broadcast_error(
                        &[whole],
                        Some(top.0),
                        Mismatch::Size {
                            from: *size,
                            into: d,
                        },
                    ));
                }
                srcs.push(SrcDim::Fixed {
                    size: *size,
                    stride: m.stride,
                });
                child_tps.push(elem.clone());
                // SAFETY: (2) the element's arrmeta follows.
                child_metas.push(unsafe { s_meta.add(size_of::<FixedDimMeta>()) });
            }
            TypeKind::VarDim { elem } => {
                // SAFETY: (2) as for the destination.
                let m: VarDimMeta = unsafe { read(s_meta) };
                srcs.push(SrcDim::Var {
                    stride: m.stride,
                    offset: m.offset,
                });
                child_tps.push(elem.clone());
                // SAFETY: (2) the element's arrmeta follows.
                child_metas.push(unsafe { s_meta.add(size_of::<VarDimMeta>()) });
            }
            _ => return Err(Error::type_error(format!("cannot lift over {s_tp}"))),
        }
    }
    // All fixed: the small kernel; sizes 1 repeat with stride 0.
    let all_fixed = matches!(dst, DstDim::Fixed { .. })
        && srcs.iter().all(|s| !matches!(s, SrcDim::Var { .. }));
    // What the child is built for: the elements, strided.
    let inner = KernelArgs::new(
        elem,
        elem_meta,
        &child_tps,
        &child_metas,
        KernelRequest::Strided,
    );
    macro_rules! emplace {
        ($n:literal) => {{
            if let (true, DstDim::Fixed { size, stride }) = (all_fixed, &dst) {
                let k = LiftFixed::<$n> {
                    size: *size,
                    dst_stride: *stride,
                    src_strides: std::array::from_fn(|i| match srcs[i] {
                        SrcDim::Fixed {
                            size: s,
                            stride: st,
                        } if s == *size => st,
                        _ => 0,
                    }),
                    child: [kernel_size::<LiftFixed<$n>>()],
                };
                // SAFETY: (1) `offset` is free; the child goes in the slot
                // emplace reserves.
                return unsafe {
                    let at = ckb.as_mut().emplace(offset, req, k)?;
                    lifted(ckb, at, inner, leaf, top, next)
                };
            }
            let mut src_arr = [SrcDim::Missing; $n];
            src_arr.copy_from_slice(&srcs);
            let k = Lift::<$n> {
                dst,
                srcs: src_arr,
                dst_tp: top.0.clone(),
                src_tps: std::array::from_fn(|i| top.1[i].clone()),
                child: [kernel_size::<Lift<$n>>()],
            };
            // SAFETY: (1) `offset` is free; the child goes in the slot
            // emplace reserves.
            unsafe { ckb.as_mut().emplace(offset, req, k) }?
        }};
    }
    let at = match n {
        1 => emplace!(1),
        2 => emplace!(2),
        3 => emplace!(3),
        4 => emplace!(4),
        _ => {
            return Err(Error::invalid_argument(format!(
                "lifting takes 1 to {MAX_SOURCES} sources, got {n}"
            )));
        }
    };
    // SAFETY: (1) `at` is the reserved child slot; (2) the element arrmeta
    // pointers are inside the valid arrmeta; (3) passes on.
    unsafe { lifted(ckb, at, inner, leaf, top, next) }
}
