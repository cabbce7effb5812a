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
    /// A source value as an accumulator (its conversion; a count's 1).
    #[inline(always)]
    fn lift<S: Cvt<A>>(x: S) -> A {
        x.cvt()
    }
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
/// Counts values: each is 1, summed.
pub(in crate::callable::reduce) struct CountK;
/// Logical or.
pub(in crate::callable::reduce) struct AnyK;

/// `impl Combine<$t> for $k`: whether the identity is also an empty
/// reduction's value, the identity, `combine(a, b)`, and any further items
/// (the NaN-checked fast path of float min and max).
macro_rules! combine {
    ($k:ty, $t:ty, $has:expr, $id:expr, |$a:ident, $b:ident| $f:expr $(, { $($more:tt)* })?) => {
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
            $($($more)*)?
        }
    };
}

macro_rules! int_ops {
    ($($t:ty),*) => {$(
        combine!(SumK, $t, true, 0, |a, b| a.wrapping_add(b));
        combine!(ProdK, $t, true, 1, |a, b| a.wrapping_mul(b));
    )*};
}
for_each_native!(signed unsigned => int_ops);

/// Float min (`<`, from infinity) or max (`>`, from minus infinity): NaN
/// wins; the fast path is one compare.
macro_rules! float_extreme {
    ($k:ty, $t:ty, $id:expr, $cmp:tt) => {
        combine!($k, $t, false, $id, |a, b| if (b $cmp a) | b.is_nan() { b } else { a }, {
            const NAN_CHECK: bool = true;
            #[inline(always)]
            fn fast(a: $t, b: $t) -> $t {
                if b $cmp a { b } else { a }
            }
            #[inline(always)]
            fn is_nan(a: $t) -> bool {
                a.is_nan()
            }
        });
    };
}

macro_rules! float_ops {
    ($($t:ty),*) => {$(
        combine!(SumK, $t, true, 0.0, |a, b| a + b);
        combine!(ProdK, $t, true, 1.0, |a, b| a * b);
        float_extreme!(MinK, $t, <$t>::INFINITY, <);
        float_extreme!(MaxK, $t, <$t>::NEG_INFINITY, >);
        combine!(SumK, Complex<$t>, true, Complex::new(0.0, 0.0), |a, b| a + b);
        combine!(ProdK, Complex<$t>, true, Complex::new(1.0, 0.0), |a, b| a * b);
    )*};
}
for_each_native!(ieee => float_ops);

macro_rules! ord_ops {
    ($($t:ty),*) => {$(
        combine!(MinK, $t, false, <$t>::MAX, |a, b| a.min(b));
        combine!(MaxK, $t, false, <$t>::MIN, |a, b| a.max(b));
    )*};
}
for_each_native!(signed unsigned => ord_ops);

// Logical and, or on `bool` (min and max: no identity) and on [`Truth`]
// (all and any).
combine!(MinK, bool, false, true, |a, b| a & b);
combine!(MaxK, bool, false, false, |a, b| a | b);
combine!(AllK, Truth, true, Truth(true), |a, b| Truth(a.0 & b.0));
combine!(AnyK, Truth, true, Truth(false), |a, b| Truth(a.0 | b.0));

impl Combine<i64> for CountK {
    const HAS_IDENTITY: bool = true;
    #[inline(always)]
    fn identity() -> i64 {
        0
    }
    #[inline(always)]
    fn combine(a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }
    #[inline(always)]
    fn lift<S: Cvt<i64>>(_: S) -> i64 {
        1
    }
}
