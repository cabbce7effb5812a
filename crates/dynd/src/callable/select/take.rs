//! `take(x, idx)`: the elements of `x` at the given positions, along the
//! dim the indices' innermost dim aligns with, row by row (NumPy's
//! `a[idx]`, awkward's jagged `x[idx]`).

use super::{RowBuilt, RowIn, RowSelect, Rows, arity, by_size, child_slot, plain_width};
use crate::callable::rows::VarAlloc;
use crate::error::{Error, Result};
use crate::exec::{self, SPLIT_MIN, TASK_ELEMENTS};
use crate::kernels::mask::{Bits, CHUNK};
use crate::kernels::{Kernel, KernelRef, Strided};
use crate::layout::{FixedDimMeta, VarDimData, arrmeta, na};
use crate::types::{BuiltinType, Type, TypeKind};
use crate::{for_each_native, with_native};
use std::mem::size_of;

/// `take(x, idx)`: sees whole types, and lifts itself over the outer dims.
pub(super) struct Take {
    pub(super) sig: Type,
}

/// What `take` resolves: the lined-up rows, the index type, whether the
/// indices are optional, and the result row.
pub(super) struct Parts {
    rows: Rows,
    index: BuiltinType,
    optional: bool,
    out_row: Type,
}

impl RowSelect for Take {
    type Parts = Parts;

    const NAME: &'static str = "take";

    fn sig(&self) -> &Type {
        &self.sig
    }

    fn parts(&self, args: &[Type]) -> Result<Parts> {
        let [x, idx] = args else {
            return Err(arity("take", "x, idx", args.len()));
        };
        let rows = Rows::of("take", "indices", x, idx)?;
        let d = idx.dtype();
        let optional = d.option_value().is_some();
        let index = d
            .option_value()
            .unwrap_or(d)
            .as_builtin()
            .filter(|b| b.is_int())
            .ok_or_else(|| {
                Error::type_error(format!(
                    "take: the indices ({idx}) must be integers (or options of them), not {d}"
                ))
            })?;
        if rows.by_row.ndim() != 1 {
            return Err(Error::type_error(format!(
                "take: the indices ({idx}) must have dims matching x's outer dims over integers"
            )));
        }
        let elem = rows.x_row.dim_elem().cloned().unwrap_or_else(Type::bool);
        let elem = if optional && elem.option_value().is_none() {
            Type::option(elem)
                .map_err(|e| e.context("take: optional indices give optional elements"))?
        } else {
            elem
        };
        let out_row = match rows.by_row.kind() {
            TypeKind::FixedDim { size, .. } => Type::fixed_dim(*size, elem),
            _ => Type::var_dim(elem),
        };
        Ok(Parts {
            rows,
            index,
            optional,
            out_row,
        })
    }

    fn rows_of(p: &Parts) -> (&Rows, &Type) {
        (&p.rows, &p.out_row)
    }

    type Kernel = TakeRow;

    unsafe fn row_kernel(
        &self,
        p: &Parts,
        dst_meta: *const u8,
        (x, elem, _): (RowIn, &Type, *const u8),
        idx: RowIn,
    ) -> Result<RowBuilt<TakeRow>> {
        let top = p.rows.dims.is_empty();
        let out_elem = p.out_row.dim_elem().cloned().unwrap_or_else(Type::bool);
        let (out, out_elem_meta) = match p.out_row.kind() {
            TypeKind::FixedDim { .. } => {
                // SAFETY: a fixed dim's arrmeta starts with FixedDimMeta;
                // the element's follows.
                let (m, em) = unsafe { arrmeta::read_dim::<FixedDimMeta>(dst_meta) };
                (OutRow::Fixed { stride: m.stride }, em)
            }
            // SAFETY: a var dim's arrmeta, valid (1);
            // the element's follows.
            _ => {
                // SAFETY: (1) the output row's arrmeta.
                let (alloc, em) = unsafe { VarAlloc::of("take", &p.out_row, dst_meta) }?;
                (OutRow::Var(alloc), em)
            }
        };
        // Bits move when the element and the output element are the same
        // builtin bits (an option of a builtin is its value's bits).
        let width = plain_width(elem).filter(|_| {
            out_elem.option_value().unwrap_or(&out_elem) == elem.option_value().unwrap_or(elem)
        });
        let out_na = match (
            p.optional,
            out_elem.option_value().and_then(Type::as_builtin),
        ) {
            (true, Some(b)) => na::builtin_na(b),
            _ => None,
        };
        let k = TakeRow {
            x,
            idx,
            index: p.index,
            idx_na: p.optional.then(|| Bits::of(p.index)),
            out,
            width,
            out_na,
            out_elem: out_elem.clone(),
            top,
            child: [child_slot::<TakeRow>(width)],
        };
        Ok((k, width, (out_elem, out_elem_meta)))
    }
}

/// An integer index as a position: saturated to i64 (a value beyond it is
/// out of range of any row anyway).
trait AsIndex: Copy {
    fn as_index(self) -> i64;
}

macro_rules! as_index {
    ($($t:ty),*) => {$(
        impl AsIndex for $t {
            #[inline(always)]
            #[allow(clippy::unnecessary_fallible_conversions, irrefutable_let_patterns)]
            fn as_index(self) -> i64 {
                match i64::try_from(self) {
                    Ok(v) => v,
                    Err(_) if self > (0 as $t) => i64::MAX,
                    Err(_) => i64::MIN,
                }
            }
        }
    )*};
}
for_each_native!(signed unsigned => as_index);

/// Reads `out.len()` indices of type `I` at `stride` from `p` as positions.
///
/// # Safety
/// 1. `out.len()` elements of `I` at `stride` from `p` are readable.
#[inline(always)]
unsafe fn load<I: AsIndex>(p: *const u8, stride: isize, out: &mut [i64]) {
    for (j, o) in out.iter_mut().enumerate() {
        // SAFETY: (1) element j is readable.
        *o = unsafe {
            p.wrapping_offset(j as isize * stride)
                .cast::<I>()
                .read_unaligned()
        }
        .as_index();
    }
}

/// Where an output row goes.
enum OutRow {
    /// In place: the output dim is fixed, elements `stride` apart.
    Fixed { stride: isize },
    /// Allocated: the output dim is var.
    Var(VarAlloc),
}

/// One output row per row of `x` and of the indices.
pub(super) struct TakeRow {
    x: RowIn,
    idx: RowIn,
    index: BuiltinType,
    /// The indices' NA, when they are optional.
    idx_na: Option<Bits>,
    out: OutRow,
    /// The element's width when it moves as bits.
    width: Option<usize>,
    /// The output element's NA bytes (optional indices over builtins).
    out_na: Option<[u8; 16]>,
    out_elem: Type,
    /// No outer dims: one row, named without a number in messages.
    top: bool,
    /// The copy of an element (0 when `width` is set).
    child: [usize; 1],
}

/// One row's operands: `x`'s row (first element, length, stride), the
/// indices (first, stride) and the output (first, stride).
#[derive(Clone, Copy)]
struct RowOps {
    x: *const u8,
    n: usize,
    xs: isize,
    idx: *const u8,
    is: isize,
    out: *mut u8,
    os: isize,
}

// SAFETY: the pointers address one call's arrays, alive while it runs; the
// threads that share a RowOps write disjoint output ranges.
unsafe impl Send for RowOps {}
// SAFETY: as for Send; the pointers are only read through shared references.
unsafe impl Sync for RowOps {}

impl TakeRow {
    /// The error for index `at` of row `row` (the original value, read
    /// again), out of range for `n` elements.
    fn out_of_range(&self, row: usize, ops: &RowOps, at: usize, n: usize) -> Error {
        let p = ops.idx.wrapping_offset(at as isize * ops.is);
        // SAFETY: index `at` of the row is readable (it was just read).
        let v = with_native!(self.index, signed unsigned => |T| unsafe {
            p.cast::<T>().read_unaligned().to_string()
        })
        .unwrap_or_default();
        let whose = if self.top {
            String::new()
        } else {
            format!("row {row} of ")
        };
        Error::index(format!(
            "take: index {v} is out of range for {whose}length {n}"
        ))
    }

    /// Gathers output elements `[a, b)` of one row.
    ///
    /// # Safety
    /// 1. `ops` is valid: `n` elements of `x`, the row's indices through `b`
    ///    readable and its output elements through `b` writable.
    /// 2. `copy` is this kernel's child, built, when `width` is `None`.
    unsafe fn gather(
        &self,
        copy: Option<KernelRef<'_>>,
        row: usize,
        ops: &RowOps,
        a: usize,
        b: usize,
        (pos, missing): (&mut [i64; CHUNK], &mut [u8; CHUNK]),
    ) -> Result<()> {
        let n = ops.n as i64;
        let mut done = a;
        while done < b {
            let m = (b - done).min(CHUNK);
            let (pos, missing) = (&mut pos[..m], &mut missing[..m]);
            let ip = ops.idx.wrapping_offset(done as isize * ops.is);
            // SAFETY: (1) indices [done, done + m) are readable.
            with_native!(self.index, signed unsigned => |T| unsafe { load::<T>(ip, ops.is, pos) });
            if let Some(bits) = self.idx_na {
                missing.fill(0);
                // SAFETY: as above.
                unsafe { bits.mark(ip, ops.is, missing) };
                for (p, &g) in pos.iter_mut().zip(missing.iter()) {
                    if g != 0 {
                        *p = 0;
                    }
                }
            }
            // Negative positions count from the end; any out of range is
            // found in one branch-free pass, then located for the message.
            let mut bad = false;
            for p in pos.iter_mut() {
                let i = *p + ((*p < 0) as i64) * n;
                bad |= (i as u64) >= (n as u64);
                *p = i;
            }
            if bad {
                let first_bad = pos.iter().zip(missing.iter()).position(|(&i, &g)| {
                    (i as u64) >= (n as u64) && (g == 0 || self.idx_na.is_none())
                });
                // None: only missing indices (read as 0) in an empty row.
                if let Some(j) = first_bad {
                    return Err(self.out_of_range(row, ops, done + j, ops.n));
                }
            }
            let op = ops.out.wrapping_offset(done as isize * ops.os);
            match (self.width, copy) {
                (Some(w), _) => {
                    let any_missing = self.idx_na.is_some() && missing.iter().any(|&g| g != 0);
                    // SAFETY: (1) each position is in range (checked) or the
                    // index is missing and not read; output elements are
                    // writable.
                    by_size!(w, |U| unsafe {
                        gather_as::<U>(
                            ops.x,
                            ops.xs,
                            pos,
                            any_missing.then_some(&*missing),
                            op,
                            ops.os,
                            self.out_na,
                        )
                    });
                }
                (None, Some(copy)) => {
                    for (j, (&i, &g)) in pos.iter().zip(missing.iter()).enumerate() {
                        let to = op.wrapping_offset(j as isize * ops.os);
                        if g != 0 && self.idx_na.is_some() {
                            // SAFETY: output element j is writable, of the
                            // (optional) output element type.
                            unsafe { na::set_missing(&self.out_elem, to) }?;
                            continue;
                        }
                        let from = ops.x.wrapping_offset(i as isize * ops.xs);
                        // SAFETY: (2) the copy of one element, in range.
                        unsafe { copy.call_strided(to, 0, &[from], &[0], 1) }?;
                    }
                }
                (None, None) => {
                    return Err(Error::invalid_argument(
                        "take: the element copy is not built",
                    ));
                }
            }
            done += m;
        }
        Ok(())
    }

    /// Gathers one row, on several threads when it is long and moves bits.
    ///
    /// # Safety
    /// As [`TakeRow::gather`] over the whole row (`m` output elements).
    unsafe fn gather_row(
        &self,
        copy: Option<KernelRef<'_>>,
        row: usize,
        ops: &RowOps,
        m: usize,
        bufs: (&mut [i64; CHUNK], &mut [u8; CHUNK]),
    ) -> Result<()> {
        if self.width.is_some() && m >= SPLIT_MIN && exec::num_threads() > 1 {
            // Each piece gathers its own output range of the row; bits move
            // without the child. The first error in index order is the one
            // reported, as the serial loop does.
            return exec::flat(m, TASK_ELEMENTS, |a, count| {
                let bufs = (&mut [0i64; CHUNK], &mut [0u8; CHUNK]);
                // SAFETY: the caller's promises, for this piece's range.
                unsafe { self.gather(None, row, ops, a, a + count, bufs) }
            });
        }
        // SAFETY: the caller's promises.
        unsafe { self.gather(copy, row, ops, 0, m, bufs) }
    }
}

/// `out[j] = x[pos[j]]` for elements of width `U`, or the NA bytes where
/// `missing[j]` is set.
///
/// # Safety
/// 1. Every `pos[j]` not missing is a readable element of `x` (`xs` apart);
///    `pos.len()` output elements at `os` are writable.
#[inline(always)]
unsafe fn gather_as<U: Copy>(
    x: *const u8,
    xs: isize,
    pos: &[i64],
    missing: Option<&[u8]>,
    out: *mut u8,
    os: isize,
    na: Option<[u8; 16]>,
) {
    if let (Some(missing), Some(na)) = (missing, na) {
        // SAFETY: the NA bytes hold a U (at least its width).
        let na = unsafe { na.as_ptr().cast::<U>().read_unaligned() };
        for (j, (&i, &g)) in pos.iter().zip(missing).enumerate() {
            // SAFETY: (1) output element j is writable; a present index is
            // in range (a missing one is not read).
            unsafe {
                let v = if g != 0 {
                    na
                } else {
                    x.wrapping_offset(i as isize * xs)
                        .cast::<U>()
                        .read_unaligned()
                };
                out.wrapping_offset(j as isize * os)
                    .cast::<U>()
                    .write_unaligned(v);
            }
        }
    } else if os == size_of::<U>() as isize && xs == size_of::<U>() as isize {
        let (x, out) = (x.cast::<U>(), out.cast::<U>());
        for (j, &i) in pos.iter().enumerate() {
            // SAFETY: (1) in range; contiguous.
            unsafe {
                out.add(j)
                    .write_unaligned(x.add(i as usize).read_unaligned())
            };
        }
    } else {
        for (j, &i) in pos.iter().enumerate() {
            // SAFETY: (1) in range.
            unsafe {
                let v = x
                    .wrapping_offset(i as isize * xs)
                    .cast::<U>()
                    .read_unaligned();
                out.wrapping_offset(j as isize * os)
                    .cast::<U>()
                    .write_unaligned(v);
            }
        }
    }
}

/// Indices checked (then gathered) per block of the plain gather: a block's
/// indices stay in L1 between the check and the gather.
const BLOCK: usize = 512;
/// How many elements ahead the plain gather prefetches (random gathers are
/// bound by memory latency, and hardware prefetchers cannot guess them).
const PREFETCH: usize = 32;

/// Hints that the cache line at `p` is read soon; nothing where there is no
/// prefetch instruction to hand. Any address is fine: a prefetch never
/// faults.
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86_64; a prefetch reads nothing and never
    // faults, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `out[j] = x[idx[j]]` for output elements `[a, b)` of one row, indices
/// of type `I` and elements of width `U`, with no missing indices: each
/// block of indices is checked in one branch-free pass (a negative index
/// counts from the end), then gathered with plain loads, prefetching
/// [`PREFETCH`] elements ahead. `C`: the indices, `x` and the output are
/// contiguous (their strides the element sizes), so the check vectorises.
/// Returns the position of the first index out of range, if any (nothing
/// of its block is written).
///
/// # Safety
/// 1. `ops` is valid: `ops.n` elements of width `U` at `ops.xs` from
///    `ops.x`; the row's indices through `b` readable and its output
///    elements through `b` writable; with `C`, the strides are the sizes.
#[inline(always)]
unsafe fn gather_plain<I: AsIndex, U: Copy, const C: bool>(
    ops: &RowOps,
    a: usize,
    b: usize,
) -> std::result::Result<(), usize> {
    let (is, xs, os) = if C {
        let u = size_of::<U>() as isize;
        (size_of::<I>() as isize, u, u)
    } else {
        (ops.is, ops.xs, ops.os)
    };
    let (n, len) = (ops.n as i64, ops.n as u64);
    let at = |j: usize| {
        // SAFETY: (1) index j of the row is readable, for j < b.
        unsafe {
            ops.idx
                .wrapping_offset(j as isize * is)
                .cast::<I>()
                .read_unaligned()
        }
        .as_index()
    };
    // A negative position counts from the end; one still negative (or one
    // too large) is out of range, as an unsigned comparison sees.
    let norm = |p: i64| p.wrapping_add((p >> 63) & n);
    let mut s = a;
    while s < b {
        let e = (s + BLOCK).min(b);
        let mut bad = false;
        for j in s..e {
            bad |= (norm(at(j)) as u64) >= len;
        }
        if bad {
            return Err((s..e).find(|&j| (norm(at(j)) as u64) >= len).unwrap_or(s));
        }
        let copy = |j: usize, i: i64| {
            // SAFETY: (1) position i is in range (checked above); output
            // element j is writable.
            unsafe {
                let v = ops
                    .x
                    .wrapping_offset(i as isize * xs)
                    .cast::<U>()
                    .read_unaligned();
                ops.out
                    .wrapping_offset(j as isize * os)
                    .cast::<U>()
                    .write_unaligned(v);
            }
        };
        // Prefetch while an index PREFETCH ahead is in the row (it may be
        // in the next, unchecked block: a prefetch of any address is safe).
        let ahead = e.min(b.saturating_sub(PREFETCH)).max(s);
        for j in s..ahead {
            let k = norm(at(j + PREFETCH));
            prefetch(ops.x.wrapping_offset(k as isize * xs));
            copy(j, norm(at(j)));
        }
        for j in ahead..e {
            copy(j, norm(at(j)));
        }
        s = e;
    }
    Ok(())
}

impl TakeRow {
    /// Gathers one row of plain indices (none missing) into elements that
    /// move as bits, on several threads when it is long.
    ///
    /// # Safety
    /// As [`gather_plain`] over the whole row (`m` output elements).
    #[inline(always)]
    unsafe fn plain_row<I: AsIndex, U: Copy>(
        &self,
        row: usize,
        ops: &RowOps,
        m: usize,
    ) -> Result<()> {
        let contiguous = ops.is == size_of::<I>() as isize
            && ops.xs == size_of::<U>() as isize
            && ops.os == size_of::<U>() as isize;
        let part = |a: usize, b: usize| {
            if contiguous {
                // SAFETY: the caller's promises, for [a, b); contiguous.
                unsafe { gather_plain::<I, U, true>(ops, a, b) }
            } else {
                // SAFETY: the caller's promises, for [a, b).
                unsafe { gather_plain::<I, U, false>(ops, a, b) }
            }
        };
        // Each piece gathers its own output range; the first bad index in
        // index order is the one reported, as the serial loop does.
        let pieces = if m >= SPLIT_MIN { TASK_ELEMENTS } else { m };
        exec::flat(m, pieces, |a, count| {
            part(a, a + count).map_err(|j| self.out_of_range(row, ops, j, ops.n))
        })
    }

    /// Calls `f(row, ops, m)` for each row of the run (`m` its number of
    /// indices), with its output in place (a fixed output dim) or in one
    /// allocation for all the rows (a var one).
    ///
    /// # Safety
    /// 1. `run` is a valid strided run of this kernel (Kernel::strided 1).
    #[inline(always)]
    unsafe fn each_row(
        &self,
        run: &Strided<'_>,
        mut f: impl FnMut(usize, &RowOps, usize) -> Result<()>,
    ) -> Result<()> {
        let row = |j: usize| {
            let at = |p: *const u8, s: isize| p.wrapping_offset(j as isize * s);
            // SAFETY: (1) row j of each source is readable.
            unsafe {
                (
                    self.x.row(at(run.src[0], run.src_stride[0])),
                    self.idx.row(at(run.src[1], run.src_stride[1])),
                )
            }
        };
        let dst_row = |j: usize| run.dst.wrapping_offset(j as isize * run.dst_stride);
        match &self.out {
            OutRow::Fixed { stride } => {
                for j in 0..run.count {
                    let ((x, n, xs), (idx, m, is)) = row(j);
                    let ops = RowOps {
                        x,
                        n,
                        xs,
                        idx,
                        is,
                        out: dst_row(j),
                        os: *stride,
                    };
                    // Output row j has `m` elements (the fixed dim the
                    // indices' row has).
                    f(j, &ops, m)?;
                }
            }
            OutRow::Var(alloc) => {
                // One allocation for every row.
                let total = (0..run.count).map(|j| row(j).1.1).sum::<usize>();
                let base = alloc.allocate("take", total, self.width.is_some())?;
                let os = alloc.esize() as isize;
                let mut at = 0usize;
                for j in 0..run.count {
                    let ((x, n, xs), (idx, m, is)) = row(j);
                    let begin = base.wrapping_add(at * alloc.esize());
                    let ops = RowOps {
                        x,
                        n,
                        xs,
                        idx,
                        is,
                        out: begin,
                        os,
                    };
                    // `begin` has room for `m` elements.
                    f(j, &ops, m)?;
                    let d = VarDimData { begin, size: m };
                    // SAFETY: (1) output row j is a writable var element.
                    unsafe { dst_row(j).cast::<VarDimData>().write_unaligned(d) };
                    at += m;
                }
            }
        }
        Ok(())
    }
}

impl Kernel for TakeRow {
    const NSRC: usize = 2;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: one row is a strided run of one (Kernel::single 1).
        unsafe { self.strided(k, Strided::one(dst, src, &[0, 0])) }
    }

    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        if let (Some(w), None) = (self.width, self.idx_na) {
            // Plain indices into bits: one dispatch per run, then a tight
            // loop per row.
            return with_native!(self.index, signed unsigned => |I| by_size!(w, |U| {
                // SAFETY: (Kernel::strided 1) the run is valid; each row's
                // operands are as each_row hands them.
                unsafe {
                    self.each_row(&run, |j, ops, m| self.plain_row::<I, U>(j, ops, m))
                }
            }))
            .flatten()
            .unwrap_or_else(|| {
                Err(Error::invalid_argument(format!(
                    "take: no gather for {} indices into elements of width {w}",
                    self.index
                )))
            });
        }
        // SAFETY: the child was built for Strided when bits do not move.
        let copy = self
            .width
            .is_none()
            .then(|| unsafe { k.child(self.child[0]) });
        // Scratch for the loaded indices, set up once per call (not per row).
        let (mut pos, mut missing) = ([0i64; CHUNK], [0u8; CHUNK]);
        // SAFETY: (Kernel::strided 1) the run is valid; the rows are valid
        // and each has room for its `m` output elements.
        unsafe {
            self.each_row(&run, |j, ops, m| {
                self.gather_row(copy, j, ops, m, (&mut pos, &mut missing))
            })
        }
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}
