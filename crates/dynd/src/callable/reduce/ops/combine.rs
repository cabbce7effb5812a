//! The built-in operations: associative, commutative combines of
//! accumulators.

use super::*;
use crate::for_each_native;

/// An associative, commutative operation on accumulators `A`, with a lane
/// identity (what a fresh accumulator starts from).
pub(in crate::callable::reduce) trait Combine<A>:
    Send + Sync + 'static
{
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
pub(in crate::callable::reduce) struct SumK;
/// `*` (integers wrap).
pub(in crate::callable::reduce) struct ProdK;
/// The smaller; NaN wins.
pub(in crate::callable::reduce) struct MinK;
/// The larger; NaN wins.
pub(in crate::callable::reduce) struct MaxK;
/// Logical and.
pub(in crate::callable::reduce) struct AllK;
/// Logical or.
pub(in crate::callable::reduce) struct AnyK;

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
for_each_native!(signed unsigned => int_ops);

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
for_each_native!(ieee => float_ops);

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
for_each_native!(signed unsigned => ord_ops);

/// Logical and, or on `bool` (min and max: no identity) and on [`Truth`]
/// (all and any): `(op, type, HAS_IDENTITY, identity, combine)`.
macro_rules! logic_ops {
    ($($k:ty, $t:ty, $has:expr, $id:expr, |$a:ident, $b:ident| $f:expr;)*) => {$(
        impl Combine<$t> for $k {
            const HAS_IDENTITY: bool = $has;
            #[inline(always)]
            fn identity() -> $t {
                $id
            }
            #[inline(always)]
            fn combine($a: $t, $b: $t) -> $t {
                $f
            }
        }
    )*};
}
logic_ops! {
    MinK, bool, false, true, |a, b| a & b;
    MaxK, bool, false, false, |a, b| a | b;
    AllK, Truth, true, Truth(true), |a, b| Truth(a.0 & b.0);
    AnyK, Truth, true, Truth(false), |a, b| Truth(a.0 | b.0);
}
