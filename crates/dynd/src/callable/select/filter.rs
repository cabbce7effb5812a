//! `filter(x, mask)`: the elements of `x` the mask keeps, along the mask's
//! innermost dim, which becomes var (awkward's `x[mask]`).

use super::{RowBuilt, RowIn, RowSelect, Rows, arity, by_size, child_slot, plain_width};
use crate::callable::rows::VarAlloc;
use crate::error::{Error, Result};
use crate::exec::{self, SPLIT_MIN, Shared, TASK_ELEMENTS};
use crate::kernels::{Kernel, KernelRef, Strided};
use crate::layout::VarDimData;
use crate::types::{BuiltinType, Type};
use std::mem::size_of;

/// `filter(x, mask)`: sees whole types, and lifts itself over the outer
/// dims.
pub(super) struct Filter {
    pub(super) sig: Type,
}

impl RowSelect for Filter {
    /// The lined-up rows, the mask's NA byte (0 for a plain bool: no byte
    /// but 0 means false then) and the result row `var * E`.
    type Parts = (Rows, u8, Type);

    const NAME: &'static str = "filter";

    fn sig(&self) -> &Type {
        &self.sig
    }

    fn parts(&self, args: &[Type]) -> Result<(Rows, u8, Type)> {
        let [x, mask] = args else {
            return Err(arity("filter", "x, mask", args.len()));
        };
        let rows = Rows::of("filter", "mask", x, mask)?;
        let m = mask.dtype();
        let na = match (m.as_builtin(), m.option_value().and_then(Type::as_builtin)) {
            (Some(BuiltinType::Bool), _) => 0,
            (_, Some(BuiltinType::Bool)) => 2,
            _ => {
                return Err(Error::type_error(format!(
                    "filter: the mask ({mask}) must hold bool or ?bool, not {m}"
                )));
            }
        };
        if rows.by_row.ndim() != 1 {
            return Err(Error::type_error(format!(
                "filter: the mask ({mask}) must have dims matching x's outer dims over bool"
            )));
        }
        let elem = rows.x_row.dim_elem().cloned().unwrap_or_else(Type::bool);
        Ok((rows, na, Type::var_dim(elem)))
    }

    fn rows_of((rows, _, out_row): &Self::Parts) -> (&Rows, &Type) {
        (rows, out_row)
    }

    type Kernel = FilterRow;

    unsafe fn row_kernel(
        &self,
        (rows, na, out_row): &Self::Parts,
        dst_meta: *const u8,
        (x, elem, _): (RowIn, &Type, *const u8),
        mask: RowIn,
    ) -> Result<RowBuilt<FilterRow>> {
        // SAFETY: (1) `dst_meta` is the result row's arrmeta.
        let out = unsafe { VarAlloc::of("filter", out_row, dst_meta) }?.0;
        let width = plain_width(elem);
        let k = FilterRow {
            x,
            mask,
            na: *na,
            out,
            width,
            top: rows.dims.is_empty(),
            child: [child_slot::<FilterRow>(width)],
        };
        // The output's element arrmeta follows its var dim's.
        let out_elem_meta = dst_meta.wrapping_add(size_of::<crate::layout::VarDimMeta>());
        Ok((k, width, (elem.clone(), out_elem_meta)))
    }
}

/// `true` for a mask byte that keeps its element: nonzero and not the NA
/// byte (`na` is 0 for a plain bool).
#[inline(always)]
fn keeps(b: u8, na: u8) -> bool {
    (b != 0) & (b != na)
}

/// How many of the `n` mask bytes at `stride` from `m` keep.
///
/// # Safety
/// 1. `n` bytes at `stride` from `m` are readable.
unsafe fn count_kept(m: *const u8, stride: isize, n: usize, na: u8) -> usize {
    if stride == 1 {
        // SAFETY: (1), contiguous.
        let s = unsafe { std::slice::from_raw_parts(m, n) };
        s.iter().map(|&b| keeps(b, na) as usize).sum()
    } else {
        (0..n)
            // SAFETY: (1) byte i is readable.
            .map(|i| keeps(unsafe { *m.wrapping_offset(i as isize * stride) }, na) as usize)
            .sum()
    }
}

/// Copies the elements of `x` (`n` of width `U` at `xs`) whose mask byte
/// keeps to `out`, packed; returns how many. Branch-free: each element is
/// stored and the position moves on past a kept one, so `out` needs room
/// for one element more than are kept.
///
/// # Safety
/// 1. `n` elements at `xs` from `x` and `n` bytes at `ms` from `m` are
///    readable; `kept + 1` elements from `out` are writable, apart from them.
#[inline(always)]
unsafe fn compact<U: Copy>(
    x: *const u8,
    xs: isize,
    m: *const u8,
    ms: isize,
    n: usize,
    na: u8,
    out: *mut U,
) -> usize {
    let mut k = 0usize;
    for i in 0..n {
        // SAFETY: (1) element i and mask byte i are readable; `k` is at most
        // the kept count so far, within `out`'s room.
        unsafe {
            let v = x
                .wrapping_offset(i as isize * xs)
                .cast::<U>()
                .read_unaligned();
            let b = *m.wrapping_offset(i as isize * ms);
            out.add(k).write_unaligned(v);
            k += keeps(b, na) as usize;
        }
    }
    k
}

/// One output row `var * E` per row of `x` and of the mask.
pub(super) struct FilterRow {
    x: RowIn,
    mask: RowIn,
    /// The mask's NA byte (0 for a plain bool).
    na: u8,
    out: VarAlloc,
    /// The element's width when it moves as bits.
    width: Option<usize>,
    /// No outer dims: one row, named without a number in messages.
    top: bool,
    /// The copy of an element (0 when `width` is set).
    child: [usize; 1],
}

impl FilterRow {
    fn mismatch(&self, row: usize, m: usize, n: usize) -> Error {
        if self.top {
            Error::broadcast(format!(
                "filter: the mask has length {m} but x has length {n}"
            ))
        } else {
            Error::broadcast(format!(
                "filter: row {row} of the mask has length {m} but row {row} of x has length {n}"
            ))
        }
    }
}

/// Row j of `x` and of the mask: first element, length and stride each.
type RowPair = ((*const u8, usize, isize), (*const u8, usize, isize));

impl FilterRow {
    /// Row j of each source of `run`.
    ///
    /// # Safety
    /// 1. `run` is a valid strided run of this kernel (Kernel::strided 1)
    ///    and `j < run.count`.
    #[inline(always)]
    unsafe fn rows(&self, run: &Strided<'_>, j: usize) -> RowPair {
        let at = |p: *const u8, s: isize| p.wrapping_offset(j as isize * s);
        // SAFETY: (1) row j of each source is readable.
        unsafe {
            (
                self.x.row(at(run.src[0], run.src_stride[0])),
                self.mask.row(at(run.src[1], run.src_stride[1])),
            )
        }
    }

    /// Compacts every row of the run, elements of width `U`, into `base`
    /// (packed one row after another) and writes the output rows.
    ///
    /// # Safety
    /// 1. `run` is a valid strided run of this kernel (Kernel::strided 1),
    ///    its rows' lengths checked equal; `base` has room for every kept
    ///    element of the run and one more.
    #[inline(always)]
    unsafe fn compact_rows<U: Copy>(&self, run: &Strided<'_>, base: *mut u8) {
        let base = base.cast::<U>();
        let mut at = 0usize;
        for j in 0..run.count {
            // SAFETY: (1) a row of the run.
            let ((x, n, xs), (m, _, ms)) = unsafe { self.rows(run, j) };
            let begin = base.wrapping_add(at);
            // SAFETY: (1) the row is readable; `begin` has room for this
            // row's kept elements, then the later rows' (or the slack).
            let kept = unsafe {
                if xs == size_of::<U>() as isize && ms == 1 {
                    compact::<U>(x, size_of::<U>() as isize, m, 1, n, self.na, begin)
                } else {
                    compact::<U>(x, xs, m, ms, n, self.na, begin)
                }
            };
            // SAFETY: (1) a row of the run.
            unsafe { write_row(run, j, begin.cast(), kept) };
            at += kept;
        }
    }
}

impl FilterRow {
    /// One long row of builtins filtered on the executor's threads: each
    /// block's kept count, their running offsets, one allocation, then
    /// each block compacted into its own part of it. Each block compacts
    /// up to its last kept element only, so that the branch-free loop's
    /// store past the end stays inside the block's part.
    ///
    /// # Safety
    /// 1. `run` is a valid strided run of one row of this kernel, `x` and
    ///    `m` that row of `x` and of the mask (`n` elements each, at `xs`
    ///    and `ms`), and `self.width` is set.
    unsafe fn filter_split(
        &self,
        run: &Strided<'_>,
        (x, n, xs): (*const u8, usize, isize),
        (m, ms): (*const u8, isize),
    ) -> Result<()> {
        let Some(w) = self.width else {
            return Err(Error::invalid_argument("filter: a split filter moves bits"));
        };
        let na = self.na;
        let blocks = n.div_ceil(TASK_ELEMENTS);
        let range = |b: usize| (b * TASK_ELEMENTS, ((b + 1) * TASK_ELEMENTS).min(n));
        let (xp, mp) = (Shared(x), Shared(m));
        let mask_at = move |i: usize| mp.get().wrapping_offset(i as isize * ms);
        let counts = exec::map_tasks(blocks, |b| {
            let (lo, hi) = range(b);
            // SAFETY: (1) mask bytes lo..hi.
            Ok(unsafe { count_kept(mask_at(lo), ms, hi - lo, na) })
        })?;
        let mut offsets = Vec::with_capacity(blocks);
        let mut total = 0usize;
        for c in counts {
            offsets.push(total);
            total += c;
        }
        // One slot of slack past the last kept element, as the serial path.
        let base = Shared(self.out.allocate("filter", total + 1, true)?);
        by_size!(w, |U| exec::tasks(blocks, |b| {
            let (lo, hi) = range(b);
            // SAFETY: (1) mask bytes lo..hi; the block ends at its last kept
            // element (none: nothing to copy).
            let end = (lo..hi)
                .rev()
                .find(|&i| keeps(unsafe { *mask_at(i) }, na))
                .map_or(lo, |i| i + 1);
            // SAFETY: (1) elements and mask bytes lo..end; the block's part
            // of the allocation holds its kept elements, and the loop's
            // stores stay below its last kept one.
            unsafe {
                compact::<U>(
                    xp.get().wrapping_offset(lo as isize * xs),
                    xs,
                    mask_at(lo),
                    ms,
                    end - lo,
                    na,
                    base.get().cast::<U>().add(offsets[b]),
                )
            };
            Ok(())
        }))
        .ok_or_else(|| Error::invalid_argument(format!("filter: no width {w}")))??;
        // SAFETY: (1) the run's one row.
        unsafe { write_row(run, 0, *base.get(), total) };
        Ok(())
    }
}

/// Writes output row j of `run`: `size` elements from `begin`.
///
/// # Safety
/// 1. `run` is a valid strided run of this kernel (Kernel::strided 1) and
///    `j < run.count`.
#[inline(always)]
unsafe fn write_row(run: &Strided<'_>, j: usize, begin: *mut u8, size: usize) {
    // SAFETY: (1) output row j is a writable var element (offset 0,
    // checked when built).
    unsafe {
        run.dst
            .wrapping_offset(j as isize * run.dst_stride)
            .cast::<VarDimData>()
            .write_unaligned(VarDimData { begin, size })
    };
}

impl Kernel for FilterRow {
    const NSRC: usize = 2;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: one row is a strided run of one (Kernel::single 1).
        unsafe { self.strided(k, Strided::one(dst, src, &[0, 0])) }
    }

    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        // SAFETY: (Kernel::strided 1) the run is valid; j is one of its rows.
        let row = |j: usize| unsafe { self.rows(&run, j) };
        if run.count == 1 && self.width.is_some() && exec::num_threads() > 1 {
            let ((x, n, xs), (m, mn, ms)) = row(0);
            if mn == n && n >= SPLIT_MIN {
                // SAFETY: (Kernel::strided 1) the one row of the run.
                return unsafe { self.filter_split(&run, (x, n, xs), (m, ms)) };
            }
        }
        // Pass 1: the lengths agree; how many are kept in all.
        let mut total = 0usize;
        for j in 0..run.count {
            let ((_, n, _), (m, mn, ms)) = row(j);
            if mn != n {
                return Err(self.mismatch(j, mn, n));
            }
            // SAFETY: the mask row's `mn` bytes are readable.
            total += unsafe { count_kept(m, ms, mn, self.na) };
        }
        // One allocation for every row; builtins write one slot past the
        // last kept element (the branch-free compaction).
        let slack = self.width.is_some() as usize;
        let base = self
            .out
            .allocate("filter", total + slack, self.width.is_some())?;
        if let Some(w) = self.width {
            // Builtins: one dispatch per run, then a tight loop per row.
            // SAFETY: (Kernel::strided 1) the run is valid; `base` has room
            // for every kept element and the slack.
            return by_size!(w, |U| unsafe { self.compact_rows::<U>(&run, base) })
                .ok_or_else(|| Error::invalid_argument(format!("filter: no width {w}")));
        }
        let esize = self.out.esize();
        let mut at = 0usize;
        for j in 0..run.count {
            let ((x, n, xs), (m, _, ms)) = row(j);
            let begin = base.wrapping_add(at * esize);
            // SAFETY: the child was built for Strided on the elements.
            let copy = unsafe { k.child(self.child[0]) };
            let mut kept = 0usize;
            let mut i = 0usize;
            while i < n {
                // SAFETY: mask byte i (and on) is readable.
                let mb = |i: usize| unsafe { *m.wrapping_offset(i as isize * ms) };
                if !keeps(mb(i), self.na) {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < n && keeps(mb(i), self.na) {
                    i += 1;
                }
                let from = x.wrapping_offset(start as isize * xs);
                let to = begin.wrapping_add(kept * esize);
                // SAFETY: elements [start, i) of the row, into as many free
                // (zeroed) slots of the new row.
                unsafe { copy.call_strided(to, esize as isize, &[from], &[xs], i - start) }?;
                kept += i - start;
            }
            // SAFETY: (Kernel::strided 1) a row of the run.
            unsafe { write_row(&run, j, begin, kept) };
            at += kept;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}
