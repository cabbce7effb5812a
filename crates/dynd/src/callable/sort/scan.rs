//! The row kernels of `cumsum` and `cumprod`: a running sum or product in
//! the type `sum` and `prod` give ([`NativeType::Sum`]).

use super::Rows;
use crate::error::{Error, Result};
use crate::exec::{self, SPLIT_MIN, Shared, TASK_ELEMENTS};
use crate::kernels::assign::numeric::Conv;
use crate::kernels::{CKernelBuilder, Kernel, KernelRef, KernelRequest};
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

/// The arithmetic of a running value.
pub(super) trait Accum: NativeType {
    /// 0.
    fn zero() -> Self;
    /// 1.
    fn one() -> Self;
    /// `a + b` (integers wrap).
    fn add(a: Self, b: Self) -> Self;
    /// `a * b` (integers wrap).
    fn mul(a: Self, b: Self) -> Self;
    /// `true` when `add` and `mul` are associative (wrapping integers): a
    /// long row may then be scanned in blocks on several threads with the
    /// serial result. Floating running values stay serial: a blocked scan
    /// would change their last bits.
    const EXACT: bool = false;
}

macro_rules! int_accum {
    ($($t:ty),*) => {$(
        impl Accum for $t {
            #[inline(always)] fn zero() -> $t { 0 }
            #[inline(always)] fn one() -> $t { 1 }
            #[inline(always)] fn add(a: $t, b: $t) -> $t { a.wrapping_add(b) }
            #[inline(always)] fn mul(a: $t, b: $t) -> $t { a.wrapping_mul(b) }
            const EXACT: bool = true;
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

/// One step of a running value: `add` or `mul`.
type Step<A> = fn(A, A) -> A;

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
    /// A long row scanned in two passes of blocks on the executor's
    /// threads: each block's total, the totals' running values in order,
    /// then each block scanned from its start. Exact for associative
    /// (wrapping integer) arithmetic only.
    ///
    /// # Safety
    /// As [`ScanKernel::scan`] for the `n` elements of `(src, s)` into
    /// `(dst, d)`, from `start` by `op`.
    unsafe fn scan_split(
        &self,
        (src, s): (*const u8, isize),
        (dst, d): (*mut u8, isize),
        n: usize,
        (start, op): (T::Sum, Step<T::Sum>),
    ) -> Result<()> {
        let blocks = n.div_ceil(TASK_ELEMENTS);
        let (src, dst, opt) = (Shared(src), Shared(dst), self.opt);
        let range = |b: usize| (b * TASK_ELEMENTS, ((b + 1) * TASK_ELEMENTS).min(n));
        let totals = exec::map_tasks(blocks, |b| {
            let (lo, hi) = range(b);
            let mut acc = start;
            for j in lo..hi {
                // SAFETY: (1) element j < n.
                let r = unsafe {
                    src.get()
                        .wrapping_offset(j as isize * s)
                        .cast::<T::Raw>()
                        .read_unaligned()
                };
                if !(opt && is_na::<T>(r)) {
                    acc = op(acc, <T::Sum as Conv<T>>::cast(T::from_raw(r)));
                }
            }
            Ok(acc)
        })?;
        let mut starts = Vec::with_capacity(blocks);
        let mut acc = start;
        for t in totals {
            starts.push(acc);
            acc = op(acc, t);
        }
        exec::tasks(blocks, |b| {
            let (lo, hi) = range(b);
            let (from, to) = (
                src.get().wrapping_offset(lo as isize * s),
                dst.get().wrapping_offset(lo as isize * d),
            );
            // SAFETY: (1) elements lo..hi of the row, this block's alone in
            // the output.
            unsafe {
                if opt {
                    Self::scan::<true>(from, s, to, d, hi - lo, starts[b], op);
                } else {
                    Self::scan::<false>(from, s, to, d, hi - lo, starts[b], op);
                }
            }
            Ok(())
        })
    }
}

impl<T> Kernel for ScanKernel<T>
where
    T: NativeType,
    T::Sum: Accum + Conv<T>,
{
    const NSRC: usize = 1;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        let name = if self.prod { "cumprod" } else { "cumsum" };
        // SAFETY: the source is an element of the row's dim.
        let (first, n, s) = unsafe { self.rows.src.row(src[0]) };
        // SAFETY: the destination is an element of the output's dim.
        let (out, d) = unsafe { self.rows.dst.open(name, dst, n) }?;
        let op: fn(T::Sum, T::Sum) -> T::Sum = if self.prod { Accum::mul } else { Accum::add };
        let start = if self.prod {
            Accum::one()
        } else {
            Accum::zero()
        };
        if <T::Sum as Accum>::EXACT && n >= SPLIT_MIN && exec::num_threads() > 1 {
            // SAFETY: as below.
            return unsafe { self.scan_split((first, s), (out, d), n, (start, op)) };
        }
        // SAFETY: the row's n elements are readable, the output row's n
        // results writable.
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
