//! Assignment over dimensions, with broadcasting (DESIGN §6).
//!
//! Dims align from the right; the destination's extra leading dims repeat
//! the source. Per dim pair:
//!
//! | dst ← src | rule |
//! |---|---|
//! | `N * T ← M * U` | M = N, or M = 1 (repeated); otherwise a broadcast error when the kernel is built |
//! | `N * T ← var * U` | each var element must have N elements, or 1 (repeated); checked per element |
//! | `var * T ← M * U` | an empty (never written) destination element is allocated with M elements; an allocated one must have M elements, or M = 1 |
//! | `var * T ← var * U` | as above, element by element: equal sizes, or a source of size 1 |
//! | `N * T ← U` (no dim) | U repeated N times; a `var * T` destination repeats U over its existing elements |
//!
//! New var elements come from the destination arrmeta's memory block, which
//! the kernel holds a reference to; allocation is thread-safe.

use super::{ErrorMode, make_assignment_kernel};
use crate::array::{FixedDimMeta, VarDimData, VarDimMeta};
use crate::error::{Error, Result};
use crate::kernels::{CKernelBuilder, Kernel, KernelRef, KernelRequest, kernel_size};
use crate::memblock::MemBlock;
use crate::types::{Type, TypeKind};
use std::mem::size_of;
use std::pin::Pin;
use std::ptr::NonNull;

/// Reads a `T` from arrmeta or data.
///
/// # Safety
/// `p` is readable for a `T`.
unsafe fn read<T: Copy>(p: *const u8) -> T {
    // SAFETY: the caller's promise; unaligned is allowed.
    unsafe { std::ptr::read_unaligned(p as *const T) }
}

/// `N * T ← M * U` (src_stride 0 repeats) and `N * T ← U` (src_stride 0).
struct FixedDim {
    size: usize,
    dst_stride: isize,
    src_stride: isize,
    child: [usize; 1],
}

impl Kernel for FixedDim {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: the child was built for Strided over this dim's elements
        // (Kernel::single 1 gives the element pointers).
        unsafe { k.child(self.child[0]).call_strided(dst, self.dst_stride, src, &[self.src_stride], self.size) }
    }

    unsafe fn strided(
        &self,
        k: KernelRef<'_>,
        dst: *mut u8,
        dst_stride: isize,
        src: &[*const u8],
        src_stride: &[isize],
        count: usize,
    ) -> Result<()> {
        // SAFETY: the child was built for Strided (see `single`).
        let child = unsafe { k.child(self.child[0]) };
        for i in 0..count as isize {
            let d = dst.wrapping_offset(i * dst_stride);
            let s = src[0].wrapping_offset(i * src_stride[0]);
            // SAFETY: element i of the outer loop (Kernel::strided 1).
            unsafe { child.call_strided(d, self.dst_stride, &[s], &[self.src_stride], self.size) }?;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

/// `N * T ← var * U`.
struct FixedFromVar {
    size: usize,
    dst_stride: isize,
    src_stride: isize,
    src_offset: isize,
    dst_tp: Type,
    src_tp: Type,
    child: [usize; 1],
}

impl Kernel for FixedFromVar {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: the source is a var element (Kernel::single 1).
        let v: VarDimData = unsafe { read(src[0]) };
        let stride = match v.size {
            n if n == self.size => self.src_stride,
            1 => 0,
            n => {
                return Err(Error::broadcast(format!(
                    "cannot broadcast a var element of size {n} into a dim of size {} (assigning {} to {})",
                    self.size, self.src_tp, self.dst_tp
                )));
            }
        };
        let first = v.begin.wrapping_offset(self.src_offset) as *const u8;
        // SAFETY: the child was built for Strided; the var element has
        // `v.size` elements at `stride` from `first`.
        unsafe { k.child(self.child[0]).call_strided(dst, self.dst_stride, &[first], &[stride], self.size) }
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

/// Where a var source's elements come from.
#[derive(Clone, Copy)]
enum VarSource {
    /// A fixed dim: `size` elements at `stride`.
    Fixed { size: usize, stride: isize },
    /// A var dim: the element's own size.
    Var { stride: isize, offset: isize },
    /// No dim: the value repeats over the destination's elements.
    Scalar,
}

/// `var * T ← M * U`, `var * T ← var * U` and `var * T ← U`.
struct VarDim {
    block: Option<MemBlock>,
    dst_stride: isize,
    dst_offset: isize,
    elem_size: usize,
    elem_align: usize,
    source: VarSource,
    dst_tp: Type,
    src_tp: Type,
    child: [usize; 1],
}

impl VarDim {
    /// A new element of `n` values for an empty destination.
    fn allocate(&self, n: usize) -> Result<*mut u8> {
        if self.dst_offset != 0 || self.dst_stride != self.elem_size as isize {
            return Err(Error::invalid_argument(format!(
                "cannot allocate elements of {} through a view with offset {} and stride {}",
                self.dst_tp, self.dst_offset, self.dst_stride
            )));
        }
        let block = self.block.as_ref().ok_or_else(|| {
            Error::invalid_argument(format!("the destination {} has no memory block to allocate from", self.dst_tp))
        })?;
        let alloc = block.pod_allocator().ok_or_else(|| {
            Error::invalid_argument(format!(
                "the memory block of the destination {} is not a POD allocator",
                self.dst_tp
            ))
        })?;
        let bytes = n
            .checked_mul(self.elem_size)
            .ok_or_else(|| Error::alloc(format!("{n} elements of {} are too large", self.dst_tp)))?;
        alloc.allocate(bytes, self.elem_align)
    }
}

impl Kernel for VarDim {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: the destination is a var element (Kernel::single 1).
        let mut d: VarDimData = unsafe { read(dst) };
        let (n, first, stride) = match self.source {
            VarSource::Fixed { size, stride } => (Some(size), src[0], stride),
            VarSource::Var { stride, offset } => {
                // SAFETY: the source is a var element.
                let v: VarDimData = unsafe { read(src[0]) };
                (Some(v.size), v.begin.wrapping_offset(offset) as *const u8, stride)
            }
            VarSource::Scalar => (None, src[0], 0),
        };
        let (count, stride) = match n {
            // A scalar repeats over whatever the destination holds.
            None => (d.size, stride),
            Some(n) if d.begin.is_null() => {
                d = VarDimData {
                    begin: self.allocate(n)?,
                    size: n,
                };
                // SAFETY: the destination is a writable var element.
                unsafe { std::ptr::write_unaligned(dst as *mut VarDimData, d) };
                (n, stride)
            }
            Some(n) if n == d.size => (n, stride),
            Some(1) => (d.size, 0),
            Some(n) => {
                return Err(Error::broadcast(format!(
                    "cannot broadcast a dim of size {n} into a var element of size {} (assigning {} to {})",
                    d.size, self.src_tp, self.dst_tp
                )));
            }
        };
        let out = d.begin.wrapping_offset(self.dst_offset);
        // SAFETY: the child was built for Strided; `count` destination
        // elements at dst_stride from `out`, and the source has `count`
        // elements at `stride` (or one, repeated with stride 0).
        unsafe { k.child(self.child[0]).call_strided(out, self.dst_stride, &[first], &[stride], count) }
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

/// The leading dims of a type: `Some(n)` fixed, `None` var.
fn dims_of(tp: &Type) -> Vec<Option<usize>> {
    let mut dims = Vec::new();
    let mut t = tp;
    loop {
        match t.kind() {
            TypeKind::FixedDim { size, elem } => {
                dims.push(Some(*size));
                t = elem;
            }
            TypeKind::VarDim { elem } => {
                dims.push(None);
                t = elem;
            }
            _ => return dims,
        }
    }
}

/// The shape of a type's leading dims, for broadcast messages: `(2, var, 3)`.
fn dims_text(tp: &Type) -> String {
    let parts: Vec<String> = dims_of(tp)
        .iter()
        .map(|d| d.map_or_else(|| "var".to_string(), |n| n.to_string()))
        .collect();
    format!("({})", parts.join(", "))
}

/// Checks, before anything is built, that the fixed dims broadcast (dims
/// aligned from the right), so the error names both whole shapes.
fn check_fixed_broadcast(dst_tp: &Type, src_tp: &Type) -> Result<()> {
    let (d, s) = (dims_of(dst_tp), dims_of(src_tp));
    if s.len() > d.len() {
        return Err(Error::broadcast(format!(
            "cannot broadcast shape {} into shape {}: the source has more dimensions (assigning {src_tp} to {dst_tp})",
            dims_text(src_tp),
            dims_text(dst_tp)
        )));
    }
    for (dd, sd) in d[d.len() - s.len()..].iter().zip(&s) {
        if let (Some(n), Some(m)) = (dd, sd) {
            if n != m && *m != 1 {
                return Err(Error::broadcast(format!(
                    "cannot broadcast shape {} into shape {}: dim of size {m} into size {n} (assigning {src_tp} to {dst_tp})",
                    dims_text(src_tp),
                    dims_text(dst_tp)
                )));
            }
        }
    }
    Ok(())
}

/// Builds `dst ← src` when either has a leading dim.
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
    check_fixed_broadcast(dst_tp, src_tp)?;
    let (dn, sn) = (dst_tp.ndim(), src_tp.ndim());
    // The child is built right after the parent, for Strided.
    macro_rules! with_child {
        ($kernel:expr, $child_dst:expr, $child_dst_meta:expr, $child_src:expr, $child_src_meta:expr) => {{
            // SAFETY: (1) `offset` is free; the child offset is the slot
            // emplace reserves; (2) the child arrmeta pointers are the
            // element arrmeta inside the valid arrmeta.
            unsafe {
                let at = ckb.as_mut().emplace(offset, req, $kernel)?;
                make_assignment_kernel(
                    ckb,
                    at,
                    $child_dst,
                    $child_dst_meta,
                    $child_src,
                    $child_src_meta,
                    KernelRequest::Strided,
                    mode,
                )
            }
        }};
    }
    match dst_tp.kind() {
        TypeKind::FixedDim { size, elem } => {
            // SAFETY: (2) a fixed dim's arrmeta starts with FixedDimMeta.
            let dm: FixedDimMeta = unsafe { read(dst_meta) };
            // SAFETY: (2) the element's arrmeta follows.
            let elem_meta = unsafe { dst_meta.add(size_of::<FixedDimMeta>()) };
            if dn > sn {
                let k = FixedDim {
                    size: *size,
                    dst_stride: dm.stride,
                    src_stride: 0,
                    child: [kernel_size::<FixedDim>()],
                };
                return with_child!(k, elem, elem_meta, src_tp, src_meta);
            }
            match src_tp.kind() {
                TypeKind::FixedDim { size: ssize, elem: selem } => {
                    // SAFETY: (2) as for the destination.
                    let sm: FixedDimMeta = unsafe { read(src_meta) };
                    let src_stride = if ssize == size {
                        sm.stride
                    } else if *ssize == 1 {
                        0
                    } else {
                        return Err(Error::broadcast(format!(
                            "cannot broadcast shape {} into shape {}: dim of size {ssize} into size {size} (assigning {src_tp} to {dst_tp})",
                            dims_text(src_tp),
                            dims_text(dst_tp)
                        )));
                    };
                    let k = FixedDim {
                        size: *size,
                        dst_stride: dm.stride,
                        src_stride,
                        child: [kernel_size::<FixedDim>()],
                    };
                    // SAFETY: (2) the source element's arrmeta follows.
                    let selem_meta = unsafe { src_meta.add(size_of::<FixedDimMeta>()) };
                    with_child!(k, elem, elem_meta, selem, selem_meta)
                }
                TypeKind::VarDim { elem: selem } => {
                    // SAFETY: (2) a var dim's arrmeta starts with VarDimMeta.
                    let sm: VarDimMeta = unsafe { read(src_meta) };
                    let k = FixedFromVar {
                        size: *size,
                        dst_stride: dm.stride,
                        src_stride: sm.stride,
                        src_offset: sm.offset,
                        dst_tp: dst_tp.clone(),
                        src_tp: src_tp.clone(),
                        child: [kernel_size::<FixedFromVar>()],
                    };
                    // SAFETY: (2) the source element's arrmeta follows.
                    let selem_meta = unsafe { src_meta.add(size_of::<VarDimMeta>()) };
                    with_child!(k, elem, elem_meta, selem, selem_meta)
                }
                _ => Err(super::cannot_assign(dst_tp, src_tp)),
            }
        }
        TypeKind::VarDim { elem } => {
            // SAFETY: (2) a var dim's arrmeta starts with VarDimMeta.
            let dm: VarDimMeta = unsafe { read(dst_meta) };
            // SAFETY: (2) the element's arrmeta follows.
            let elem_meta = unsafe { dst_meta.add(size_of::<VarDimMeta>()) };
            // SAFETY: (2) the arrmeta holds a reference to its block, alive
            // during this call; the kernel takes its own.
            let block = NonNull::new(dm.blockref).map(|b| unsafe { MemBlock::from_borrowed(b) });
            let (source, child_src, child_src_meta) = if dn > sn {
                (VarSource::Scalar, src_tp, src_meta)
            } else {
                match src_tp.kind() {
                    TypeKind::FixedDim { size, elem: selem } => {
                        // SAFETY: (2) as above.
                        let sm: FixedDimMeta = unsafe { read(src_meta) };
                        let source = VarSource::Fixed { size: *size, stride: sm.stride };
                        // SAFETY: (2) the element's arrmeta follows.
                        (source, selem, unsafe { src_meta.add(size_of::<FixedDimMeta>()) })
                    }
                    TypeKind::VarDim { elem: selem } => {
                        // SAFETY: (2) as above.
                        let sm: VarDimMeta = unsafe { read(src_meta) };
                        let source = VarSource::Var { stride: sm.stride, offset: sm.offset };
                        // SAFETY: (2) the element's arrmeta follows.
                        (source, selem, unsafe { src_meta.add(size_of::<VarDimMeta>()) })
                    }
                    _ => return Err(super::cannot_assign(dst_tp, src_tp)),
                }
            };
            let k = VarDim {
                block,
                dst_stride: dm.stride,
                dst_offset: dm.offset,
                elem_size: elem.data_size(),
                elem_align: elem.data_alignment(),
                source,
                dst_tp: dst_tp.clone(),
                src_tp: src_tp.clone(),
                child: [kernel_size::<VarDim>()],
            };
            with_child!(k, elem, elem_meta, child_src, child_src_meta)
        }
        _ => Err(super::cannot_assign(dst_tp, src_tp)),
    }
}
