//! The row kernels of `cumsum` and `cumprod`: a running sum or product in
//! the type `sum` and `prod` give ([`NativeType::Sum`]).

use super::Rows;
use crate::error::{Error, Result};
use crate::exec::{self, SPLIT_MIN, Shared, TASK_ELEMENTS};
use crate::kernels::assign::numeric::Conv;
use crate::kernels::{CKernelBuilder, Kernel, KernelRef, KernelRequest, Strided};
use crate::types::{BuiltinType, NativeType, Type};
use crate::{for_each_native, with_native};
use num_complex::Complex;
use std::marker::PhantomData;
use std::pin::Pin;

/// The type a running sum or product of `b` is kept in; `None` for the
/// types that have none (void).
pub(super) fn sum_type(b: BuiltinType) -> Option<BuiltinType> {
    with_native!(b, |T| <<T as NativeType>::Sum as NativeType>::TYPE)
}

/// The arithmetic of a running value. Integer steps wrap, so they are
/// associative and a row scanned in blocks on several threads gives the
/// serial result exactly; floating ones are not, and a blocked scan may
/// change their last bits (the module doc of `callable::sort` says how).
pub(super) trait Accum: NativeType {
    /// 0.
    fn zero() -> Self;
    /// 1.
    fn one() -> Self;
    /// `a + b` (integers wrap).
    fn add(a: Self, b: Self) -> Self;
    /// `a * b` (integers wrap).
    fn mul(a: Self, b: Self) -> Self;
}

macro_rules! int_accum {
    ($($t:ty),*) => {$(
        impl Accum for $t {
            #[inline(always)] fn zero() -> $t { 0 }
            #[inline(always)] fn one() -> $t { 1 }
            #[inline(always)] fn add(a: $t, b: $t) -> $t { a.wrapping_add(b) }
            #[inline(always)] fn mul(a: $t, b: $t) -> $t { a.wrapping_mul(b) }
        }
    )*};
}
for_each_native!(signed unsigned => int_accum);

macro_rules! float_accum {
    ($($t:ty),*) => {$(
        impl Accum for $t {
            #[inline(always)] fn zero() -> $t { 0.0 }
            #[inline(always)] fn one() -> $t { 1.0 }
            #[inline(always)] fn add(a: $t, b: $t) -> $t { a + b }
            #[inline(always)] fn mul(a: $t, b: $t) -> $t { a * b }
        }
        impl Accum for Complex<$t> {
            #[inline(always)] fn zero() -> Self { Complex::new(0.0, 0.0) }
            #[inline(always)] fn one() -> Self { Complex::new(1.0, 0.0) }
            #[inline(always)] fn add(a: Self, b: Self) -> Self { a + b }
            #[inline(always)] fn mul(a: Self, b: Self) -> Self { a * b }
        }
    )*};
}
for_each_native!(ieee => float_accum);

/// 16-bit floats: each step computed in f32 and rounded to the type.
macro_rules! half_accum {
    ($($t:ty),*) => {$(
        impl Accum for $t {
            #[inline(always)] fn zero() -> $t { <$t>::ZERO }
            #[inline(always)] fn one() -> $t { <$t>::ONE }
            #[inline(always)] fn add(a: $t, b: $t) -> $t { <$t>::from_f32(a.to_f32() + b.to_f32()) }
            #[inline(always)] fn mul(a: $t, b: $t) -> $t { <$t>::from_f32(a.to_f32() * b.to_f32()) }
        }
    )*};
}
for_each_native!(half => half_accum);

/// One row of `cumsum` (or `cumprod`, `prod`) from `T` (or `?T`) into
/// `T::Sum` (or `?T::Sum`).
struct ScanKernel<T> {
    rows: Rows,
    prod: bool,
    opt: bool,
    _t: PhantomData<fn() -> T>,
}

/// An NA test of raw values, bit for bit.
#[inline(always)]
fn is_na<T: NativeType>(r: T::Raw) -> bool {
    bytemuck::bytes_of(&r) == bytemuck::bytes_of(&T::NA)
}

impl<T> ScanKernel<T>
where
    T: NativeType,
    T::Sum: Accum + Conv<T>,
{
    /// The scan of `n` elements with `op`.
    ///
    /// # Safety
    /// 1. `n` elements `s` apart from `src` are readable, `n` results `d`
    ///    apart from `dst` writable.
    #[inline(always)]
    unsafe fn scan<const OPT: bool>(
        src: *const u8,
        s: isize,
        dst: *mut u8,
        d: isize,
        n: usize,
        start: T::Sum,
        op: impl Fn(T::Sum, T::Sum) -> T::Sum,
    ) {
        let mut acc = start;
        for j in 0..n {
            // SAFETY: (1) element j of each.
            unsafe {
                let r = src
                    .wrapping_offset(j as isize * s)
                    .cast::<T::Raw>()
                    .read_unaligned();
                let out = dst
                    .wrapping_offset(j as isize * d)
                    .cast::<<T::Sum as NativeType>::Raw>();
                if OPT && is_na::<T>(r) {
                    out.write_unaligned(<T::Sum as NativeType>::NA);
                } else {
                    acc = op(acc, <T::Sum as Conv<T>>::cast(T::from_raw(r)));
                    out.write_unaligned(acc.to_raw());
                }
            }
        }
    }
}

impl<T> ScanKernel<T>
where
    T: NativeType,
    T::Sum: Accum + Conv<T>,
{
    /// A long row scanned in blocks on the executor's threads, a round of
    /// one block per thread at a time: each block's total, the totals'
    /// running values in order, then each block scanned from its start. Exact for associative
    /// (wrapping integer) arithmetic; for floats each element groups the
    /// same terms differently. Blocks are [`TASK_ELEMENTS`] long whatever
    /// the thread count, so every count of two or more gives the same bits.
    ///
    /// # Safety
    /// As [`ScanKernel::scan`] for the `n` elements of `(src, s)` into
    /// `(dst, d)`, from `start` by `op`.
    unsafe fn scan_split<F>(
        &self,
        (src, s): (*const u8, isize),
        (dst, d): (*mut u8, isize),
        n: usize,
        (start, op): (T::Sum, F),
    ) -> Result<()>
    where
        F: Fn(T::Sum, T::Sum) -> T::Sum + Copy + Sync,
    {
        let blocks = n.div_ceil(TASK_ELEMENTS);
        let (src, dst, opt) = (Shared(src), Shared(dst), self.opt);
        let range = |b: usize| (b * TASK_ELEMENTS, ((b + 1) * TASK_ELEMENTS).min(n));
        // SAFETY: (1) element j < n.
        let value = |j: usize| unsafe {
            src.get()
                .wrapping_offset(j as isize * s)
                .cast::<T::Raw>()
                .read_unaligned()
        };
        let total = |b: usize| {
            let (lo, hi) = range(b);
            if opt {
                let mut acc = start;
                for j in lo..hi {
                    let r = value(j);
                    if !is_na::<T>(r) {
                        acc = op(acc, <T::Sum as Conv<T>>::cast(T::from_raw(r)));
                    }
                }
                return Ok(acc);
            }
            // Four running values (`start` is op's identity), so that a
            // floating total is not one chain of dependent steps; the
            // grouping is fixed by the block, not by the thread count.
            let mut acc = [start; 4];
            let whole = lo + (hi - lo) / 4 * 4;
            for j in (lo..whole).step_by(4) {
                for (k, a) in acc.iter_mut().enumerate() {
                    *a = op(*a, <T::Sum as Conv<T>>::cast(T::from_raw(value(j + k))));
                }
            }
            for j in whole..hi {
                acc[0] = op(acc[0], <T::Sum as Conv<T>>::cast(T::from_raw(value(j))));
            }
            Ok(op(op(acc[0], acc[1]), op(acc[2], acc[3])))
        };
        let scan_block = |b: usize, from_value: T::Sum| {
            let (lo, hi) = range(b);
            let (from, to) = (
                src.get().wrapping_offset(lo as isize * s),
                dst.get().wrapping_offset(lo as isize * d),
            );
            // SAFETY: (1) elements lo..hi of the row, this block's alone in
            // the output.
            unsafe {
                if opt {
                    Self::scan::<true>(from, s, to, d, hi - lo, from_value, op);
                } else {
                    Self::scan::<false>(from, s, to, d, hi - lo, from_value, op);
                }
            }
        };
        // One round per thread's worth of blocks: their totals, then each
        // scanned from the running value, while the round's elements are
        // still in the cores' caches (the row is read from memory once, as
        // by a serial scan). The running value folds the totals in block
        // order, so the rounds' size does not change the result.
        let round = exec::num_threads().max(1);
        let mut acc = start;
        for first in (0..blocks).step_by(round) {
            let count = round.min(blocks - first);
            let totals = exec::map_tasks(count, |i| total(first + i))?;
            let mut starts = Vec::with_capacity(count);
            for t in totals {
                starts.push(acc);
                acc = op(acc, t);
            }
            exec::tasks(count, |i| {
                scan_block(first + i, starts[i]);
                Ok(())
            })?;
        }
        Ok(())
    }
}

impl<T> Kernel for ScanKernel<T>
where
    T: NativeType,
    T::Sum: Accum + Conv<T>,
{
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: one row is a strided run of one (Kernel::single 1).
        unsafe { self.strided(k, Strided::one(dst, src, &[0])) }
    }

    unsafe fn strided(&self, _k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        let name = if self.prod { "cumprod" } else { "cumsum" };
        // SAFETY: (Kernel::strided 1) a valid run; each row is scanned into
        // its opened output row.
        unsafe {
            self.rows
                .each_row(name, &run, |row, out, d| self.row(row, (out, d)))
        }
    }
}

impl<T> ScanKernel<T>
where
    T: NativeType,
    T::Sum: Accum + Conv<T>,
{
    /// Scans one row into its output row.
    ///
    /// # Safety
    /// 1. The row's `n` elements (`(first, n, s)`) are readable and `n`
    ///    results `d` apart from `out` writable (an opened output row).
    unsafe fn row(
        &self,
        (first, n, s): (*const u8, usize, isize),
        (out, d): (*mut u8, isize),
    ) -> Result<()> {
        if n >= SPLIT_MIN && exec::num_threads() > 1 {
            // SAFETY: (1). The operation is passed as a function item (not
            // a pointer), so that each step is inlined.
            return unsafe {
                if self.prod {
                    let step = (<T::Sum as Accum>::one(), <T::Sum as Accum>::mul);
                    self.scan_split((first, s), (out, d), n, step)
                } else {
                    let step = (<T::Sum as Accum>::zero(), <T::Sum as Accum>::add);
                    self.scan_split((first, s), (out, d), n, step)
                }
            };
        }
        // SAFETY: (1).
        unsafe {
            match (self.prod, self.opt) {
                (false, false) => {
                    Self::scan::<false>(first, s, out, d, n, Accum::zero(), Accum::add)
                }
                (false, true) => Self::scan::<true>(first, s, out, d, n, Accum::zero(), Accum::add),
                (true, false) => Self::scan::<false>(first, s, out, d, n, Accum::one(), Accum::mul),
                (true, true) => Self::scan::<true>(first, s, out, d, n, Accum::one(), Accum::mul),
            }
        }
        Ok(())
    }
}

/// Builds the row kernel of `cumsum` (or `cumprod`, `prod`) at `offset`
/// for elements of type `elem`.
///
/// # Safety
/// 1. `offset` is a free slot of `ckb`.
/// 2. `rows` reads rows of `elem` and writes rows of its sum type (an
///    option when `elem` is one).
pub(super) unsafe fn instantiate(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    req: KernelRequest,
    rows: Rows,
    elem: &Type,
    prod: bool,
) -> Result<usize> {
    let opt = elem.option_value().is_some();
    let value = elem.option_value().unwrap_or(elem);
    let name = if prod { "cumprod" } else { "cumsum" };
    let b = value
        .as_builtin()
        .ok_or_else(|| Error::type_error(format!("{name} does not take {elem}")))?;
    // The macro writes one arm per type (only one runs): `rows` moves
    // out of the Option in whichever does.
    let mut rows = Some(rows);
    let mut ckb = Some(ckb);
    with_native!(b, |T| {
        match (rows.take(), ckb.take()) {
            (Some(rows), Some(ckb)) => {
                let k = ScanKernel::<T> {
                    rows,
                    prod,
                    opt,
                    _t: PhantomData,
                };
                // SAFETY: (1); no children.
                unsafe { ckb.emplace(offset, req, k) }
            }
            _ => Err(Error::invalid_argument(format!("{name}: built twice"))),
        }
    })
    .unwrap_or_else(|| Err(Error::type_error(format!("{name} does not take {elem}"))))
}
