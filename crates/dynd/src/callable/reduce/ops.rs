//! The inner loops of reductions.
//!
//! The walk over dims ([`super::plan`]) calls one [`ReduceOp`] for every
//! innermost run it meets: `init` (an output element's first value),
//! `accumulate` (elementwise `dst[j] = op(dst[j], x[j])`, the outer-axis
//! pattern), `fold` (a whole run into one output element, the inner-axis
//! pattern) and `fill` (the identity, for empty extents).
//!
//! - [`FoldOp`]: the built-in reductions, typed. `fold` keeps [`LANES`]
//!   accumulators (element `j` of a run goes to lane `j % LANES`, the tail
//!   to the combined lanes), so a sum runs at memory speed rather than at
//!   the latency of one dependent add; runs longer than [`BLOCK`] are folded
//!   block by block and the block results combined in order, which lets a
//!   long run fold on several threads with the serial result, bit for bit.
//!   The lane order is the same for contiguous and strided runs.
//! - [`MeanOp`]: a float64 (or complex[float64]) sum that can divide by
//!   counts afterwards; [`CountOp`] counts, for means over var dims.
//! - [`UserOp`]: any binary ckernel `(T, T) -> T` (the reduction kernel's
//!   children), called in order, left to right, with no reassociation.

use super::BuiltinReduction;
use crate::error::{Error, Result};
use crate::kernels::KernelRef;
use crate::types::BuiltinType;
use half::f16;
use num_complex::Complex;
use rayon::prelude::*;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};

/// Accumulators per contiguous fold (DESIGN §10: 4–8 reach memory speed).
pub(super) const LANES: usize = 8;
/// Elements folded before a block result is combined into the run's.
pub(super) const BLOCK: usize = 1 << 14;
/// Runs at least this long fold their blocks on rayon's threads.
const PAR_FOLD_MIN: usize = 1 << 17;

/// What an op may reach while it runs: the reduction kernel and its
/// children (a user op's binary kernels).
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    /// The reduction kernel.
    pub k: KernelRef<'a>,
    /// Offsets of its children, relative to it.
    pub children: &'a [usize],
}

/// The inner loops of one reduction, for one source and result type.
///
/// Safety contract shared by the methods: (1) for every `j < n`,
/// `dst + j * ds` is a writable result element and `src + j * ss` a
/// readable source element (of the types the op was made for); (2) `cx`
/// is the context of the kernel that owns the op.
pub(super) trait ReduceOp: Send + Sync + 'static {
    /// `true` when an empty extent reduces to an identity.
    fn has_identity(&self) -> bool;

    /// `dst[j] = x[j]`, converted to the result type.
    ///
    /// # Safety
    /// The trait's contract.
    unsafe fn init(
        &self,
        cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        src: *const u8,
        ss: isize,
        n: usize,
    ) -> Result<()>;

    /// `dst[j] = op(dst[j], x[j])`.
    ///
    /// # Safety
    /// The trait's contract, and every `dst[j]` holds a result value.
    unsafe fn accumulate(
        &self,
        cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        src: *const u8,
        ss: isize,
        n: usize,
    ) -> Result<()>;

    /// `*dst = op(x[0], …, x[n-1])` when `first`, else
    /// `*dst = op(*dst, x[0], …, x[n-1])`. With `n == 0`: the identity when
    /// `first` (an error without one), else nothing.
    ///
    /// # Safety
    /// The trait's contract for `src` (with `ds` = 0: one `dst`), and
    /// `*dst` holds a result value unless `first`.
    unsafe fn fold(
        &self,
        cx: Ctx<'_>,
        dst: *mut u8,
        src: *const u8,
        ss: isize,
        n: usize,
        first: bool,
    ) -> Result<()>;

    /// `dst[j] = identity` (an error for an op without one).
    ///
    /// # Safety
    /// The trait's contract for `dst`.
    unsafe fn fill(&self, cx: Ctx<'_>, dst: *mut u8, ds: isize, n: usize) -> Result<()>;

    /// `dst[j] /= counts[j]`, `counts` being `f64`s `cs` bytes apart (means
    /// only; other ops refuse).
    ///
    /// # Safety
    /// The trait's contract for `dst`; `counts + j * cs` is a readable
    /// `f64` for every `j < n`.
    unsafe fn divide(
        &self,
        dst: *mut u8,
        ds: isize,
        counts: *const u8,
        cs: isize,
        n: usize,
    ) -> Result<()> {
        let _ = (dst, ds, counts, cs, n);
        Err(Error::invalid_argument("only a mean divides by counts"))
    }
}

// ---- typed values ----

/// Plain data: every bit pattern is a value, so slices over array data of
/// the matching builtin type are sound.
///
/// # Safety
/// Implementors are `Copy` types without padding or invalid bit patterns.
pub(super) unsafe trait Pod: Copy + Send + Sync + 'static {}

macro_rules! pod {
    ($($t:ty),*) => {$(
        // SAFETY: an integer, float or pair of floats: no padding, and every
        // bit pattern is a value.
        unsafe impl Pod for $t {}
    )*};
}
pod!(
    i8,
    i16,
    i32,
    i64,
    i128,
    u8,
    u16,
    u32,
    u64,
    u128,
    f16,
    f32,
    f64,
    Complex<f32>,
    Complex<f64>,
    B8
);

/// `bool` data read as its byte (any non-zero byte is true), so data
/// written by C code holding 2 is still sound to slice.
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub(super) struct B8(u8);

/// A value conversion: source to accumulator, accumulator to result.
pub(super) trait Cvt<T> {
    /// The converted value.
    fn cvt(self) -> T;
}

macro_rules! cvt {
    ($($from:ty => $to:ty, |$x:ident| $e:expr;)*) => {$(
        impl Cvt<$to> for $from {
            #[inline(always)]
            fn cvt(self) -> $to {
                let $x = self;
                $e
            }
        }
    )*};
}
macro_rules! cvt_same {
    ($($t:ty),*) => { cvt!($($t => $t, |x| x;)*); };
}
cvt_same!(
    i8,
    i16,
    i32,
    i64,
    i128,
    u8,
    u16,
    u32,
    u64,
    u128,
    f32,
    f64,
    Complex<f32>,
    Complex<f64>,
    bool
);
cvt!(
    B8 => i64, |x| (x.0 != 0) as i64;
    i8 => i64, |x| x as i64;
    i16 => i64, |x| x as i64;
    i32 => i64, |x| x as i64;
    u8 => u64, |x| x as u64;
    u16 => u64, |x| x as u64;
    u32 => u64, |x| x as u64;
    f16 => f32, |x| x.to_f32();
    f32 => f16, |x| f16::from_f32(x);
    B8 => bool, |x| x.0 != 0;
    bool => B8, |x| B8(x as u8);
    B8 => f64, |x| (x.0 != 0) as u8 as f64;
    i8 => f64, |x| x as f64;
    i16 => f64, |x| x as f64;
    i32 => f64, |x| x as f64;
    i64 => f64, |x| x as f64;
    i128 => f64, |x| x as f64;
    u8 => f64, |x| x as f64;
    u16 => f64, |x| x as f64;
    u32 => f64, |x| x as f64;
    u64 => f64, |x| x as f64;
    u128 => f64, |x| x as f64;
    f16 => f64, |x| x.to_f64();
    f32 => f64, |x| x as f64;
    Complex<f32> => Complex<f64>, |x| Complex::new(x.re as f64, x.im as f64);
);
macro_rules! cvt_nonzero {
    ($($t:ty),*) => { cvt!($($t => bool, |x| x != (0 as $t);)*); };
}
cvt_nonzero!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, f32, f64);
cvt!(
    f16 => bool, |x| x.to_f32() != 0.0;
    Complex<f32> => bool, |x| x.re != 0.0 || x.im != 0.0;
    Complex<f64> => bool, |x| x.re != 0.0 || x.im != 0.0;
);

// ---- the operations ----

/// An associative, commutative operation on accumulators `A`, with a lane
/// identity (what a fresh accumulator starts from).
pub(super) trait Combine<A>: Send + Sync + 'static {
    /// `true` when the identity is also the value of an empty reduction
    /// (min and max have none: their lane identity is only a start value).
    const HAS_IDENTITY: bool;
    /// The start value of an accumulator.
    fn identity() -> A;
    /// `op(a, b)`, `a` holding the earlier elements.
    fn combine(a: A, b: A) -> A;
    /// `true` when [`Combine::fast`] may drop a NaN: a contiguous fold then
    /// uses it, flags the NaNs it reads, and folds a block that had one
    /// again with `combine` (float min and max: one compare instead of two
    /// in the hot loop).
    const NAN_CHECK: bool = false;
    /// `combine`, except perhaps for NaN arguments.
    #[inline(always)]
    fn fast(a: A, b: A) -> A {
        Self::combine(a, b)
    }
    /// `true` for a NaN (when `NAN_CHECK`).
    #[inline(always)]
    fn is_nan(a: A) -> bool {
        let _ = a;
        false
    }
}

/// `+` (integers wrap, like NumPy).
pub(super) struct SumK;
/// `*` (integers wrap).
pub(super) struct ProdK;
/// The smaller; NaN wins.
pub(super) struct MinK;
/// The larger; NaN wins.
pub(super) struct MaxK;
/// Logical and.
pub(super) struct AllK;
/// Logical or.
pub(super) struct AnyK;

macro_rules! int_ops {
    ($($t:ty),*) => {$(
        impl Combine<$t> for SumK {
            const HAS_IDENTITY: bool = true;
            #[inline(always)]
            fn identity() -> $t { 0 }
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { a.wrapping_add(b) }
        }
        impl Combine<$t> for ProdK {
            const HAS_IDENTITY: bool = true;
            #[inline(always)]
            fn identity() -> $t { 1 }
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { a.wrapping_mul(b) }
        }
    )*};
}
int_ops!(i64, u64, i128, u128);

macro_rules! float_ops {
    ($($t:ty),*) => {$(
        impl Combine<$t> for SumK {
            const HAS_IDENTITY: bool = true;
            #[inline(always)]
            fn identity() -> $t { 0.0 }
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { a + b }
        }
        impl Combine<$t> for ProdK {
            const HAS_IDENTITY: bool = true;
            #[inline(always)]
            fn identity() -> $t { 1.0 }
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { a * b }
        }
        impl Combine<$t> for MinK {
            const HAS_IDENTITY: bool = false;
            #[inline(always)]
            fn identity() -> $t { <$t>::INFINITY }
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { if (b < a) | b.is_nan() { b } else { a } }
            const NAN_CHECK: bool = true;
            #[inline(always)]
            fn fast(a: $t, b: $t) -> $t { if b < a { b } else { a } }
            #[inline(always)]
            fn is_nan(a: $t) -> bool { a.is_nan() }
        }
        impl Combine<$t> for MaxK {
            const HAS_IDENTITY: bool = false;
            #[inline(always)]
            fn identity() -> $t { <$t>::NEG_INFINITY }
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { if (b > a) | b.is_nan() { b } else { a } }
            const NAN_CHECK: bool = true;
            #[inline(always)]
            fn fast(a: $t, b: $t) -> $t { if b > a { b } else { a } }
            #[inline(always)]
            fn is_nan(a: $t) -> bool { a.is_nan() }
        }
        impl Combine<Complex<$t>> for SumK {
            const HAS_IDENTITY: bool = true;
            #[inline(always)]
            fn identity() -> Complex<$t> { Complex::new(0.0, 0.0) }
            #[inline(always)]
            fn combine(a: Complex<$t>, b: Complex<$t>) -> Complex<$t> { a + b }
        }
        impl Combine<Complex<$t>> for ProdK {
            const HAS_IDENTITY: bool = true;
            #[inline(always)]
            fn identity() -> Complex<$t> { Complex::new(1.0, 0.0) }
            #[inline(always)]
            fn combine(a: Complex<$t>, b: Complex<$t>) -> Complex<$t> { a * b }
        }
    )*};
}
float_ops!(f32, f64);

macro_rules! ord_ops {
    ($($t:ty),*) => {$(
        impl Combine<$t> for MinK {
            const HAS_IDENTITY: bool = false;
            #[inline(always)]
            fn identity() -> $t { <$t>::MAX }
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { a.min(b) }
        }
        impl Combine<$t> for MaxK {
            const HAS_IDENTITY: bool = false;
            #[inline(always)]
            fn identity() -> $t { <$t>::MIN }
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { a.max(b) }
        }
    )*};
}
ord_ops!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128);

impl Combine<bool> for MinK {
    const HAS_IDENTITY: bool = false;
    #[inline(always)]
    fn identity() -> bool {
        true
    }
    #[inline(always)]
    fn combine(a: bool, b: bool) -> bool {
        a & b
    }
}
impl Combine<bool> for MaxK {
    const HAS_IDENTITY: bool = false;
    #[inline(always)]
    fn identity() -> bool {
        false
    }
    #[inline(always)]
    fn combine(a: bool, b: bool) -> bool {
        a | b
    }
}
impl Combine<bool> for AllK {
    const HAS_IDENTITY: bool = true;
    #[inline(always)]
    fn identity() -> bool {
        true
    }
    #[inline(always)]
    fn combine(a: bool, b: bool) -> bool {
        a & b
    }
}
impl Combine<bool> for AnyK {
    const HAS_IDENTITY: bool = true;
    #[inline(always)]
    fn identity() -> bool {
        false
    }
    #[inline(always)]
    fn combine(a: bool, b: bool) -> bool {
        a | b
    }
}

// ---- raw access ----

/// Reads a `T` at `p` (unaligned).
///
/// # Safety
/// 1. `p` is readable for a `T` holding a valid value.
#[inline(always)]
unsafe fn ld<T: Copy>(p: *const u8) -> T {
    // SAFETY: (1).
    unsafe { p.cast::<T>().read_unaligned() }
}

/// Writes a `T` at `p` (unaligned).
///
/// # Safety
/// 1. `p` is writable for a `T`.
#[inline(always)]
unsafe fn st<T: Copy>(p: *mut u8, v: T) {
    // SAFETY: (1).
    unsafe { p.cast::<T>().write_unaligned(v) }
}

/// `true` when elements `stride` bytes apart from `p` form an aligned
/// slice of `T`.
#[inline(always)]
fn contiguous<T>(p: *const u8, stride: isize) -> bool {
    stride == size_of::<T>() as isize && (p as usize).is_multiple_of(align_of::<T>())
}

/// `true` when two byte ranges share memory.
fn overlaps(a: *const u8, a_len: usize, b: *const u8, b_len: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    a < b.saturating_add(b_len) && b < a.saturating_add(a_len)
}

/// A raw pointer handed to rayon's threads.
#[derive(Clone, Copy)]
struct SendPtr(*const u8);
// SAFETY: the pointer addresses source data that outlives the parallel
// loop and is only read.
unsafe impl Send for SendPtr {}
// SAFETY: as for Send.
unsafe impl Sync for SendPtr {}
impl SendPtr {
    /// The pointer (a method, so closures capture the wrapper).
    fn get(self) -> *const u8 {
        self.0
    }
}

// ---- folds ----

/// Combines the lanes, pairwise.
#[inline(always)]
fn lanes<K: Combine<A>, A: Copy>(a: [A; LANES]) -> A {
    let c = K::combine;
    c(
        c(c(a[0], a[1]), c(a[2], a[3])),
        c(c(a[4], a[5]), c(a[6], a[7])),
    )
}

/// Folds `n >= 1` elements (at most a block) `s` bytes apart from `p`:
/// element `j` of the first `n - n % LANES` into lane `j % LANES`, then the
/// combined lanes with the rest, in order.
///
/// # Safety
/// 1. `p + j * s` is a readable `S` for every `j < n`.
#[inline(always)]
unsafe fn fold_block<K, S, A>(p: *const u8, s: isize, n: usize) -> A
where
    K: Combine<A>,
    S: Pod + Cvt<A>,
    A: Copy,
{
    if n < LANES {
        // No whole lane group: the lanes would all hold the identity, and
        // combine to it, so this is the same fold without their set-up
        // (short var rows are the common case).
        let mut r = K::identity();
        for j in 0..n {
            // SAFETY: (1) j < n.
            let x: S = unsafe { ld(p.wrapping_offset(j as isize * s)) };
            r = K::combine(r, x.cvt());
        }
        return r;
    }
    let mut acc = [K::identity(); LANES];
    let body = n - n % LANES;
    if contiguous::<S>(p, s) {
        // SAFETY: (1) with s = size_of::<S>() and alignment checked: n
        // contiguous S, and S is Pod.
        let xs = unsafe { std::slice::from_raw_parts(p.cast::<S>(), n) };
        let (chunks, tail) = xs.as_chunks::<LANES>();
        if K::NAN_CHECK {
            let mut nan = [false; LANES];
            for c in chunks {
                for l in 0..LANES {
                    let x: A = c[l].cvt();
                    acc[l] = K::fast(acc[l], x);
                    nan[l] |= K::is_nan(x);
                }
            }
            if nan.contains(&true) {
                acc = [K::identity(); LANES];
                for c in chunks {
                    for l in 0..LANES {
                        acc[l] = K::combine(acc[l], c[l].cvt());
                    }
                }
            }
        } else {
            for c in chunks {
                for l in 0..LANES {
                    acc[l] = K::combine(acc[l], c[l].cvt());
                }
            }
        }
        let mut r = lanes::<K, A>(acc);
        for &x in tail {
            r = K::combine(r, x.cvt());
        }
        return r;
    }
    let at = |j: usize| -> A {
        // SAFETY: (1) j < n.
        let x: S = unsafe { ld(p.wrapping_offset(j as isize * s)) };
        x.cvt()
    };
    let mut j = 0;
    while j < body {
        for (l, a) in acc.iter_mut().enumerate() {
            *a = K::combine(*a, at(j + l));
        }
        j += LANES;
    }
    let mut r = lanes::<K, A>(acc);
    for j in body..n {
        r = K::combine(r, at(j));
    }
    r
}

/// Folds a run of `n >= 1` elements: block by block, the block results
/// combined in order — on rayon's threads for long runs, with the same
/// blocks and so the same result.
///
/// # Safety
/// 1. `p + j * s` is a readable `S` for every `j < n`.
unsafe fn fold_run<K, S, A>(p: *const u8, s: isize, n: usize) -> A
where
    K: Combine<A>,
    S: Pod + Cvt<A>,
    A: Copy + Send,
{
    let blocks = n.div_ceil(BLOCK);
    let base = SendPtr(p);
    let block = move |b: usize| -> A {
        let lo = b * BLOCK;
        // SAFETY: (1) elements lo..lo+len of the run.
        unsafe {
            fold_block::<K, S, A>(
                base.get().wrapping_offset(lo as isize * s),
                s,
                BLOCK.min(n - lo),
            )
        }
    };
    if n >= PAR_FOLD_MIN && rayon::current_num_threads() > 1 {
        let parts: Vec<A> = (0..blocks).into_par_iter().map(block).collect();
        let mut it = parts.into_iter();
        let first = it.next().unwrap_or_else(K::identity);
        return it.fold(first, K::combine);
    }
    (1..blocks).fold(block(0), |r, b| K::combine(r, block(b)))
}

/// A built-in reduction: source `S`, accumulator `A`, result `D`, under
/// the operation `K`.
pub(super) struct FoldOp<K, S, A, D>(PhantomData<Types<K, S, A, D>>);

/// The type parameters of a [`FoldOp`] (a function pointer: `Send`,
/// `Sync` and covariant whatever they are).
type Types<K, S, A, D> = fn() -> (K, S, A, D);

impl<K, S, A, D> Default for FoldOp<K, S, A, D> {
    fn default() -> Self {
        FoldOp(PhantomData)
    }
}

impl<K, S, A, D> ReduceOp for FoldOp<K, S, A, D>
where
    K: Combine<A>,
    S: Pod + Cvt<A>,
    D: Pod + Cvt<A>,
    A: Copy + Send + Sync + 'static + Cvt<D>,
{
    fn has_identity(&self) -> bool {
        K::HAS_IDENTITY
    }

    unsafe fn init(
        &self,
        _cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        src: *const u8,
        ss: isize,
        n: usize,
    ) -> Result<()> {
        if n == 0 {
            // Nothing to touch (and an empty array's data may be null).
            return Ok(());
        }
        let put = |x: S| -> D {
            let a: A = x.cvt();
            a.cvt()
        };
        if contiguous::<D>(dst, ds)
            && contiguous::<S>(src, ss)
            && !overlaps(dst, n * size_of::<D>(), src, n * size_of::<S>())
        {
            // SAFETY: (1) n contiguous, aligned elements each, not
            // overlapping (checked), of Pod types.
            let (d, s) = unsafe {
                (
                    std::slice::from_raw_parts_mut(dst.cast::<D>(), n),
                    std::slice::from_raw_parts(src.cast::<S>(), n),
                )
            };
            for (d, &s) in d.iter_mut().zip(s) {
                *d = put(s);
            }
            return Ok(());
        }
        for j in 0..n as isize {
            // SAFETY: (1) element j of each range.
            unsafe {
                st(
                    dst.wrapping_offset(j * ds),
                    put(ld(src.wrapping_offset(j * ss))),
                )
            };
        }
        Ok(())
    }

    unsafe fn accumulate(
        &self,
        _cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        src: *const u8,
        ss: isize,
        n: usize,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let step = |d: D, x: S| -> D {
            let a: A = d.cvt();
            K::combine(a, x.cvt()).cvt()
        };
        if contiguous::<D>(dst, ds)
            && contiguous::<S>(src, ss)
            && !overlaps(dst, n * size_of::<D>(), src, n * size_of::<S>())
        {
            // SAFETY: as in `init`.
            let (d, s) = unsafe {
                (
                    std::slice::from_raw_parts_mut(dst.cast::<D>(), n),
                    std::slice::from_raw_parts(src.cast::<S>(), n),
                )
            };
            for (d, &s) in d.iter_mut().zip(s) {
                *d = step(*d, s);
            }
            return Ok(());
        }
        for j in 0..n as isize {
            let (dp, sp) = (dst.wrapping_offset(j * ds), src.wrapping_offset(j * ss));
            // SAFETY: (1) element j of each range; dst holds a result.
            unsafe { st(dp, step(ld(dp), ld(sp))) };
        }
        Ok(())
    }

    unsafe fn fold(
        &self,
        cx: Ctx<'_>,
        dst: *mut u8,
        src: *const u8,
        ss: isize,
        n: usize,
        first: bool,
    ) -> Result<()> {
        if n == 0 {
            if !first {
                return Ok(());
            }
            // SAFETY: (1) dst is writable.
            return unsafe { self.fill(cx, dst, 0, 1) };
        }
        // SAFETY: (1) the run's n elements.
        let r: A = unsafe { fold_run::<K, S, A>(src, ss, n) };
        let r = if first {
            r
        } else {
            // SAFETY: (1) dst holds a result value.
            let d: D = unsafe { ld(dst) };
            K::combine(d.cvt(), r)
        };
        // SAFETY: (1) dst is writable.
        unsafe { st::<D>(dst, r.cvt()) };
        Ok(())
    }

    unsafe fn fill(&self, _cx: Ctx<'_>, dst: *mut u8, ds: isize, n: usize) -> Result<()> {
        if !K::HAS_IDENTITY {
            return Err(Error::invalid_argument(
                "the reduction has no identity for an empty extent",
            ));
        }
        let v: D = K::identity().cvt();
        for j in 0..n as isize {
            // SAFETY: (1) element j of dst.
            unsafe { st(dst.wrapping_offset(j * ds), v) };
        }
        Ok(())
    }
}

/// A mean's accumulator type: divides by a count.
pub(super) trait DivCount: Copy {
    /// `self / count`.
    fn div_count(self, count: f64) -> Self;
}
impl DivCount for f64 {
    fn div_count(self, count: f64) -> f64 {
        self / count
    }
}
impl DivCount for Complex<f64> {
    fn div_count(self, count: f64) -> Complex<f64> {
        self / count
    }
}

/// A mean: the sum of `S` as `A` (`f64` or `Complex<f64>`), divided by the
/// counts afterwards.
pub(super) struct MeanOp<S, A>(FoldOp<SumK, S, A, A>);

impl<S, A> Default for MeanOp<S, A> {
    fn default() -> Self {
        MeanOp(FoldOp::default())
    }
}

impl<S, A> ReduceOp for MeanOp<S, A>
where
    S: Pod + Cvt<A>,
    A: Pod + Cvt<A> + DivCount,
    SumK: Combine<A>,
{
    fn has_identity(&self) -> bool {
        true
    }
    unsafe fn init(
        &self,
        cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        src: *const u8,
        ss: isize,
        n: usize,
    ) -> Result<()> {
        // SAFETY: the caller's promises.
        unsafe { self.0.init(cx, dst, ds, src, ss, n) }
    }
    unsafe fn accumulate(
        &self,
        cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        src: *const u8,
        ss: isize,
        n: usize,
    ) -> Result<()> {
        // SAFETY: the caller's promises.
        unsafe { self.0.accumulate(cx, dst, ds, src, ss, n) }
    }
    unsafe fn fold(
        &self,
        cx: Ctx<'_>,
        dst: *mut u8,
        src: *const u8,
        ss: isize,
        n: usize,
        first: bool,
    ) -> Result<()> {
        // SAFETY: the caller's promises.
        unsafe { self.0.fold(cx, dst, src, ss, n, first) }
    }
    unsafe fn fill(&self, cx: Ctx<'_>, dst: *mut u8, ds: isize, n: usize) -> Result<()> {
        // SAFETY: the caller's promises.
        unsafe { self.0.fill(cx, dst, ds, n) }
    }
    unsafe fn divide(
        &self,
        dst: *mut u8,
        ds: isize,
        counts: *const u8,
        cs: isize,
        n: usize,
    ) -> Result<()> {
        for j in 0..n as isize {
            let p = dst.wrapping_offset(j * ds);
            // SAFETY: element j of dst (holding a sum) and of counts.
            unsafe {
                let c: f64 = ld(counts.wrapping_offset(j * cs));
                st(p, ld::<A>(p).div_count(c));
            }
        }
        Ok(())
    }
}

/// Counts source elements into `f64` results (for means over var dims);
/// never reads the source.
#[derive(Default)]
pub(super) struct CountOp;

impl ReduceOp for CountOp {
    fn has_identity(&self) -> bool {
        true
    }
    unsafe fn init(
        &self,
        _cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        _src: *const u8,
        _ss: isize,
        n: usize,
    ) -> Result<()> {
        for j in 0..n as isize {
            // SAFETY: element j of dst.
            unsafe { st(dst.wrapping_offset(j * ds), 1.0f64) };
        }
        Ok(())
    }
    unsafe fn accumulate(
        &self,
        _cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        _src: *const u8,
        _ss: isize,
        n: usize,
    ) -> Result<()> {
        for j in 0..n as isize {
            let p = dst.wrapping_offset(j * ds);
            // SAFETY: element j of dst, holding a count.
            unsafe { st(p, ld::<f64>(p) + 1.0) };
        }
        Ok(())
    }
    unsafe fn fold(
        &self,
        _cx: Ctx<'_>,
        dst: *mut u8,
        _src: *const u8,
        _ss: isize,
        n: usize,
        first: bool,
    ) -> Result<()> {
        // SAFETY: dst is writable, and holds a count unless `first`.
        unsafe {
            let before = if first { 0.0 } else { ld::<f64>(dst) };
            st(dst, before + n as f64);
        }
        Ok(())
    }
    unsafe fn fill(&self, _cx: Ctx<'_>, dst: *mut u8, ds: isize, n: usize) -> Result<()> {
        for j in 0..n as isize {
            // SAFETY: element j of dst.
            unsafe { st(dst.wrapping_offset(j * ds), 0.0f64) };
        }
        Ok(())
    }
}

/// A user reduction: the reduction kernel's children are the binary
/// kernel `(T, T) -> T`, built for Single (child 0) and for Strided
/// (child 1). Values are copied bytewise (`T` is plain data: no arrmeta,
/// no blockrefs). The kernels are called in place — the destination is
/// also the first source — as NumPy calls a ufunc's loop in a reduction.
pub(super) struct UserOp {
    /// Bytes of one `T`.
    pub size: usize,
    /// The identity's bytes, converted to `T`.
    pub identity: Option<Box<[u8]>>,
}

impl UserOp {
    /// Copies one value.
    ///
    /// # Safety
    /// 1. `src` is readable and `dst` writable for `self.size` bytes.
    unsafe fn copy(&self, dst: *mut u8, src: *const u8) {
        // SAFETY: (1); `copy` allows overlap.
        unsafe { std::ptr::copy(src, dst, self.size) };
    }

    /// The child kernel `i`.
    ///
    /// # Safety
    /// 1. `cx` is the context of the kernel that owns this op (its
    ///    children are the op's two kernels).
    unsafe fn child<'a>(&self, cx: Ctx<'a>, i: usize) -> Result<KernelRef<'a>> {
        let offset = cx.children.get(i).copied().unwrap_or(0);
        // SAFETY: (1) a child offset of the kernel `cx.k` (0 gives an
        // empty kernel whose calls fail).
        Ok(unsafe { cx.k.child(offset) })
    }
}

impl ReduceOp for UserOp {
    fn has_identity(&self) -> bool {
        self.identity.is_some()
    }

    unsafe fn init(
        &self,
        _cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        src: *const u8,
        ss: isize,
        n: usize,
    ) -> Result<()> {
        for j in 0..n as isize {
            // SAFETY: element j of each range, `size` bytes each.
            unsafe { self.copy(dst.wrapping_offset(j * ds), src.wrapping_offset(j * ss)) };
        }
        Ok(())
    }

    unsafe fn accumulate(
        &self,
        cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        src: *const u8,
        ss: isize,
        n: usize,
    ) -> Result<()> {
        // SAFETY: child 1 was built for Strided over (T, T) -> T; element j
        // of dst is both the destination and the first source.
        unsafe {
            self.child(cx, 1)?
                .call_strided(dst, ds, &[dst.cast_const(), src], &[ds, ss], n)
        }
    }

    unsafe fn fold(
        &self,
        cx: Ctx<'_>,
        dst: *mut u8,
        src: *const u8,
        ss: isize,
        n: usize,
        first: bool,
    ) -> Result<()> {
        if n == 0 {
            if !first {
                return Ok(());
            }
            // SAFETY: (1) dst is writable.
            return unsafe { self.fill(cx, dst, 0, 1) };
        }
        // SAFETY: the caller's promises.
        let single = unsafe { self.child(cx, 0) }?;
        let mut j = 0;
        if first {
            // SAFETY: element 0 of src; dst is writable.
            unsafe { self.copy(dst, src) };
            j = 1;
        }
        while j < n {
            let x = src.wrapping_offset(j as isize * ss);
            // SAFETY: child 0 was built for Single over (T, T) -> T; dst
            // holds a T and is the destination and the first source.
            unsafe { single.call_single(dst, &[dst.cast_const(), x]) }?;
            j += 1;
        }
        Ok(())
    }

    unsafe fn fill(&self, _cx: Ctx<'_>, dst: *mut u8, ds: isize, n: usize) -> Result<()> {
        let Some(id) = &self.identity else {
            return Err(Error::invalid_argument(
                "the reduction has no identity for an empty extent",
            ));
        };
        for j in 0..n as isize {
            // SAFETY: element j of dst; the identity has `size` bytes.
            unsafe { self.copy(dst.wrapping_offset(j * ds), id.as_ptr()) };
        }
        Ok(())
    }
}

// ---- the built-in table ----

/// Makes a boxed op.
fn make<O: ReduceOp + Default>() -> Box<dyn ReduceOp> {
    Box::new(O::default())
}

/// A constructor of an op.
pub(super) type MakeOp = fn() -> Box<dyn ReduceOp>;

/// The result type of built-in reduction `kind` over elements of type `t`,
/// and its op's constructor; `None` when `kind` does not take `t`.
///
/// | source | sum, prod | min, max | mean | all, any |
/// |---|---|---|---|---|
/// | bool | int64 | bool | float64 | bool |
/// | int8 … int64 | int64 | same | float64 | bool |
/// | uint8 … uint64 | uint64 | same | float64 | bool |
/// | int128, uint128 | same | same | float64 | bool |
/// | float16 | float16 (float32 inside a run) | float16 | float64 | bool |
/// | float32, float64 | same | same | float64 | bool |
/// | complex64, complex128 | same | — | complex128 | bool |
pub(super) fn builtin(kind: BuiltinReduction, t: BuiltinType) -> Option<(BuiltinType, MakeOp)> {
    use BuiltinReduction as R;
    use BuiltinType as B;
    macro_rules! e {
        ($op:ty, $res:ident) => {
            Some((B::$res, make::<$op> as MakeOp))
        };
    }
    macro_rules! sum_like {
        ($k:ty) => {
            match t {
                B::Bool => e!(FoldOp<$k, B8, i64, i64>, Int64),
                B::Int8 => e!(FoldOp<$k, i8, i64, i64>, Int64),
                B::Int16 => e!(FoldOp<$k, i16, i64, i64>, Int64),
                B::Int32 => e!(FoldOp<$k, i32, i64, i64>, Int64),
                B::Int64 => e!(FoldOp<$k, i64, i64, i64>, Int64),
                B::Int128 => e!(FoldOp<$k, i128, i128, i128>, Int128),
                B::UInt8 => e!(FoldOp<$k, u8, u64, u64>, UInt64),
                B::UInt16 => e!(FoldOp<$k, u16, u64, u64>, UInt64),
                B::UInt32 => e!(FoldOp<$k, u32, u64, u64>, UInt64),
                B::UInt64 => e!(FoldOp<$k, u64, u64, u64>, UInt64),
                B::UInt128 => e!(FoldOp<$k, u128, u128, u128>, UInt128),
                B::Float16 => e!(FoldOp<$k, f16, f32, f16>, Float16),
                B::Float32 => e!(FoldOp<$k, f32, f32, f32>, Float32),
                B::Float64 => e!(FoldOp<$k, f64, f64, f64>, Float64),
                B::Complex64 => e!(FoldOp<$k, Complex<f32>, Complex<f32>, Complex<f32>>, Complex64),
                B::Complex128 => {
                    e!(FoldOp<$k, Complex<f64>, Complex<f64>, Complex<f64>>, Complex128)
                }
                B::Void => None,
            }
        };
    }
    macro_rules! min_like {
        ($k:ty) => {
            match t {
                B::Bool => e!(FoldOp<$k, B8, bool, B8>, Bool),
                B::Int8 => e!(FoldOp<$k, i8, i8, i8>, Int8),
                B::Int16 => e!(FoldOp<$k, i16, i16, i16>, Int16),
                B::Int32 => e!(FoldOp<$k, i32, i32, i32>, Int32),
                B::Int64 => e!(FoldOp<$k, i64, i64, i64>, Int64),
                B::Int128 => e!(FoldOp<$k, i128, i128, i128>, Int128),
                B::UInt8 => e!(FoldOp<$k, u8, u8, u8>, UInt8),
                B::UInt16 => e!(FoldOp<$k, u16, u16, u16>, UInt16),
                B::UInt32 => e!(FoldOp<$k, u32, u32, u32>, UInt32),
                B::UInt64 => e!(FoldOp<$k, u64, u64, u64>, UInt64),
                B::UInt128 => e!(FoldOp<$k, u128, u128, u128>, UInt128),
                B::Float16 => e!(FoldOp<$k, f16, f32, f16>, Float16),
                B::Float32 => e!(FoldOp<$k, f32, f32, f32>, Float32),
                B::Float64 => e!(FoldOp<$k, f64, f64, f64>, Float64),
                B::Complex64 | B::Complex128 | B::Void => None,
            }
        };
    }
    macro_rules! all_like {
        ($k:ty) => {
            match t {
                B::Bool => e!(FoldOp<$k, B8, bool, B8>, Bool),
                B::Int8 => e!(FoldOp<$k, i8, bool, B8>, Bool),
                B::Int16 => e!(FoldOp<$k, i16, bool, B8>, Bool),
                B::Int32 => e!(FoldOp<$k, i32, bool, B8>, Bool),
                B::Int64 => e!(FoldOp<$k, i64, bool, B8>, Bool),
                B::Int128 => e!(FoldOp<$k, i128, bool, B8>, Bool),
                B::UInt8 => e!(FoldOp<$k, u8, bool, B8>, Bool),
                B::UInt16 => e!(FoldOp<$k, u16, bool, B8>, Bool),
                B::UInt32 => e!(FoldOp<$k, u32, bool, B8>, Bool),
                B::UInt64 => e!(FoldOp<$k, u64, bool, B8>, Bool),
                B::UInt128 => e!(FoldOp<$k, u128, bool, B8>, Bool),
                B::Float16 => e!(FoldOp<$k, f16, bool, B8>, Bool),
                B::Float32 => e!(FoldOp<$k, f32, bool, B8>, Bool),
                B::Float64 => e!(FoldOp<$k, f64, bool, B8>, Bool),
                B::Complex64 => e!(FoldOp<$k, Complex<f32>, bool, B8>, Bool),
                B::Complex128 => e!(FoldOp<$k, Complex<f64>, bool, B8>, Bool),
                B::Void => None,
            }
        };
    }
    match kind {
        R::Sum => sum_like!(SumK),
        R::Prod => sum_like!(ProdK),
        R::Min => min_like!(MinK),
        R::Max => min_like!(MaxK),
        R::All => all_like!(AllK),
        R::Any => all_like!(AnyK),
        R::Mean => match t {
            B::Bool => e!(MeanOp<B8, f64>, Float64),
            B::Int8 => e!(MeanOp<i8, f64>, Float64),
            B::Int16 => e!(MeanOp<i16, f64>, Float64),
            B::Int32 => e!(MeanOp<i32, f64>, Float64),
            B::Int64 => e!(MeanOp<i64, f64>, Float64),
            B::Int128 => e!(MeanOp<i128, f64>, Float64),
            B::UInt8 => e!(MeanOp<u8, f64>, Float64),
            B::UInt16 => e!(MeanOp<u16, f64>, Float64),
            B::UInt32 => e!(MeanOp<u32, f64>, Float64),
            B::UInt64 => e!(MeanOp<u64, f64>, Float64),
            B::UInt128 => e!(MeanOp<u128, f64>, Float64),
            B::Float16 => e!(MeanOp<f16, f64>, Float64),
            B::Float32 => e!(MeanOp<f32, f64>, Float64),
            B::Float64 => e!(MeanOp<f64, f64>, Float64),
            B::Complex64 => e!(MeanOp<Complex<f32>, Complex<f64>>, Complex128),
            B::Complex128 => e!(MeanOp<Complex<f64>, Complex<f64>>, Complex128),
            B::Void => None,
        },
    }
}
