//! Assignment over dimensions, with broadcasting (DESIGN §6), through the
//! one generic lifter ([`crate::kernels::lift`]), whose table gives the
//! rules. For assignment in particular: the destination's extra leading
//! dims repeat the source, and a scalar assigned to a `var *` destination
//! fills the elements it already has.

use super::{AssignArgs, make_assign};
use crate::error::Result;
use crate::kernels::lift;
use crate::kernels::{CKernelBuilder, Kernel, KernelArgs, KernelRef};
use crate::layout::FixedDimMeta;
use crate::types::{BuiltinType, Type, TypeKind};
use std::pin::Pin;

/// Builds `dst ← src` when either has a leading dim.
///
/// # Safety
/// As [`super::make_assign`].
pub(crate) unsafe fn make(
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: AssignArgs<'_>,
) -> Result<usize> {
    // SAFETY: the caller's promises.
    if let Some(r) = unsafe { make_tiled(ckb.as_mut(), offset, args) } {
        return r;
    }
    let srcs = [args.src_tp.clone()];
    lift::check_broadcast(args.dst_tp, &srcs)?;
    let mut leaf = |ckb: Pin<&mut CKernelBuilder>, at, el: KernelArgs<'_>| {
        // SAFETY: make_lifted calls the leaf under make_lifted's promises,
        // which are make_assign's.
        unsafe { make_assign(ckb, at, AssignArgs::of_kernel_args(el, args.mode)) }
    };
    // SAFETY: the caller's promises are make_lifted's (1) and (2); the leaf
    // builds where it is told (3).
    unsafe {
        let metas = [args.src_meta];
        let lifted = KernelArgs::new(args.dst_tp, args.dst_meta, &srcs, &metas, args.req);
        lift::make_lifted(ckb, offset, lifted, &mut leaf)
    }
}

// ------------------------------------------------------ strided 2-d copy

/// Rows and columns of one tile: 32 × 32 elements of up to 16 bytes stay in
/// L1 and touch 32 source lines per row of tiles, not one per element.
const TILE: usize = 32;
/// Both dims at least this long before tiling pays.
const TILE_MIN: usize = 64;

/// `N * M * T ← N * M * T` for one builtin `T` into contiguous destination
/// rows from a source whose rows are strided (`a[::2, ::3]`) or transposed.
/// Any error mode is a plain copy between equal types, so the kernel only
/// moves bytes: one loop over all the rows, each a constant-stride inner
/// loop, when the source is read in order (its inner stride is the smaller
/// one), otherwise in tiles.
struct Tiled2d {
    rows: usize,
    cols: usize,
    elem: usize,
    dst: [isize; 2],
    src: [isize; 2],
    /// Tiles (the source's inner stride is larger than its outer one, as in
    /// a transposed view); otherwise row by row.
    tiled: bool,
}

impl Tiled2d {
    /// Copies one 2-d block.
    ///
    /// # Safety
    /// 1. `dst` and `src` address `rows × cols` elements of `elem` bytes at
    ///    the kernel's strides, `dst`'s writable. (Overlapping sides are
    ///    memory-safe but give a mixed result, as any element loop would.)
    unsafe fn copy_block(&self, dst: *mut u8, src: *const u8) {
        /// # Safety
        /// As `copy_block`, with `T` of `elem` bytes.
        unsafe fn rows<T: Copy>(k: &Tiled2d, dst: *mut u8, src: *const u8) {
            let (ss, ds) = (k.src[1], k.dst[1]);
            for i in 0..k.rows as isize {
                let s = src.wrapping_offset(i * k.src[0]);
                let d = dst.wrapping_offset(i * k.dst[0]);
                // One row: `cols` elements at constant strides, without
                // recomputing the row's base per element.
                for j in 0..k.cols as isize {
                    // SAFETY: (1) element (i, j) of each side.
                    unsafe {
                        let v = std::ptr::read_unaligned(s.offset(j * ss) as *const T);
                        std::ptr::write_unaligned(d.offset(j * ds) as *mut T, v);
                    }
                }
            }
        }
        /// # Safety
        /// As `copy_block`, with `T` of `elem` bytes.
        unsafe fn tiles<T: Copy>(k: &Tiled2d, dst: *mut u8, src: *const u8) {
            for i0 in (0..k.rows).step_by(TILE) {
                for j0 in (0..k.cols).step_by(TILE) {
                    for i in i0..(i0 + TILE).min(k.rows) {
                        let (di, si) = (i as isize * k.dst[0], i as isize * k.src[0]);
                        for j in j0..(j0 + TILE).min(k.cols) {
                            // SAFETY: (1) element (i, j) of each side.
                            unsafe {
                                let v = std::ptr::read_unaligned(
                                    src.offset(si + j as isize * k.src[1]) as *const T,
                                );
                                std::ptr::write_unaligned(
                                    dst.offset(di + j as isize * k.dst[1]) as *mut T,
                                    v,
                                );
                            }
                        }
                    }
                }
            }
        }
        let f: unsafe fn(&Tiled2d, *mut u8, *const u8) = match (self.elem, self.tiled) {
            (1, true) => tiles::<u8>,
            (2, true) => tiles::<u16>,
            (4, true) => tiles::<u32>,
            (8, true) => tiles::<u64>,
            (_, true) => tiles::<u128>,
            (1, false) => rows::<u8>,
            (2, false) => rows::<u16>,
            (4, false) => rows::<u32>,
            (8, false) => rows::<u64>,
            (_, false) => rows::<u128>,
        };
        // SAFETY: (1), with an element type of the kernel's size (builtin
        // sizes are 1, 2, 4, 8 or 16).
        unsafe { f(self, dst, src) }
    }
}

impl Kernel for Tiled2d {
    const NSRC: usize = 1;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: (Kernel::single 1) dst and src[0] hold the 2-d arrays the
        // kernel was built for, with the arrmeta it read its strides from.
        unsafe { self.copy_block(dst, src[0]) };
        Ok(())
    }
}

/// Builds the 2-d copy when `dst ← src` is a copy of one builtin type with
/// equal 2-d shapes into contiguous destination rows from a source whose
/// rows are not contiguous (its inner stride is not the element size);
/// tiled when the source is not read in order and both dims are long.
/// `None` otherwise (the lifted loops, whose leaf has a contiguous path).
///
/// # Safety
/// As [`super::make_assign`].
unsafe fn make_tiled(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: AssignArgs<'_>,
) -> Option<Result<usize>> {
    fn two_dims(tp: &Type) -> Option<(usize, usize, BuiltinType)> {
        let TypeKind::FixedDim { size: n, elem } = tp.kind() else {
            return None;
        };
        let TypeKind::FixedDim { size: m, elem } = elem.kind() else {
            return None;
        };
        Some((*n, *m, elem.as_builtin()?))
    }
    let (n, m, t) = two_dims(args.dst_tp)?;
    if two_dims(args.src_tp)? != (n, m, t) || t == BuiltinType::Void {
        return None;
    }
    // SAFETY: (2) two fixed dims of arrmeta each, one after the other.
    let (d, s): ([FixedDimMeta; 2], [FixedDimMeta; 2]) = unsafe {
        (
            std::ptr::read_unaligned(args.dst_meta as *const [FixedDimMeta; 2]),
            std::ptr::read_unaligned(args.src_meta as *const [FixedDimMeta; 2]),
        )
    };
    let elem = t.data_size();
    if s[1].stride == elem as isize || d[1].stride != elem as isize {
        return None;
    }
    // In order: each source row is read forwards or backwards at a stride
    // no larger than the step between rows, so lines are fetched once.
    let in_order = s[1].stride.unsigned_abs() <= s[0].stride.unsigned_abs();
    let tiled = !in_order && n >= TILE_MIN && m >= TILE_MIN;
    if !in_order && !tiled {
        return None;
    }
    let k = Tiled2d {
        rows: n,
        cols: m,
        elem,
        dst: [d[0].stride, d[1].stride],
        src: [s[0].stride, s[1].stride],
        tiled,
    };
    // SAFETY: the caller's promise: `offset` is a free slot.
    Some(unsafe { ckb.emplace(offset, args.req, k) })
}
