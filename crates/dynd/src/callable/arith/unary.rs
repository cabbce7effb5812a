//! negative, abs, logical_not, and truthiness.
//!
//! | type | negative | abs | truthy (logical functions) |
//! |---|---|---|---|
//! | signed integers | wraps: `-MIN` is `MIN` (NumPy) | wraps: `abs(MIN)` is `MIN` (NumPy) | `x != 0` |
//! | unsigned integers | wraps: `-1` is `MAX` (NumPy) | the value | `x != 0` |
//! | floats | sign flipped (NaN too) | sign cleared | `x != 0` (NaN is true) |
//! | complex | both parts negated | the magnitude `hypot(re, im)`, a real of the part type | `re != 0 or im != 0` |
//! | bool | none (a `Type` error, as NumPy) | the value | the value |

use super::kernels::{Unary, UnaryOp, core};
use crate::kernels::mask::Truthy;
use crate::types::NativeType;
use crate::{for_each_native, with_native};
use num_complex::{Complex, ComplexFloat};

/// `-a`.
pub struct Negative;
/// `|a|`.
pub struct Abs;
/// `not a` (truthiness).
pub(crate) struct LogicalNot;

impl<T: Truthy> UnaryOp<T> for LogicalNot {
    type Out = bool;
    #[inline(always)]
    fn apply(a: T) -> bool {
        !a.truthy()
    }
    const CUDA: &'static str = "!(a != (T)0)";
}

/// `Negative` and `Abs` of `$t`, each a same-type expression of `a`, each
/// with its CUDA C beside it (DESIGN §14; `""` for none).
macro_rules! neg_abs {
    ($t:ty; |$a:ident| $neg:expr, $abs:expr; $cneg:expr, $cabs:expr) => {
        impl UnaryOp<$t> for Negative {
            type Out = $t;
            #[inline(always)]
            fn apply($a: $t) -> $t {
                $neg
            }
            const CUDA: &'static str = $cneg;
        }
        impl UnaryOp<$t> for Abs {
            type Out = $t;
            #[inline(always)]
            fn apply($a: $t) -> $t {
                $abs
            }
            const CUDA: &'static str = $cabs;
        }
    };
}

/// Two's complement negation without signed overflow (C's is undefined).
macro_rules! cuda_neg {
    () => {
        "(T)(0ULL - (unsigned long long)a)"
    };
}

macro_rules! signed {
    ($($t:ty),*) => {$( neg_abs!($t; |a| a.wrapping_neg(), a.wrapping_abs();
        cuda_neg!(), concat!("a < (T)0 ? ", cuda_neg!(), " : a")); )*};
}
for_each_native!(signed => signed);

macro_rules! unsigned {
    ($($t:ty),*) => {$( neg_abs!($t; |a| a.wrapping_neg(), a; cuda_neg!(), "a"); )*};
}
for_each_native!(unsigned => unsigned);

macro_rules! float {
    ($($t:ty),*) => {$( neg_abs!($t; |a| -a, a.abs(); "-a", "fabs(a)"); )*};
}
for_each_native!(ieee => float);

/// The 16-bit floats by their sign bit.
macro_rules! half {
    ($($t:ty),*) => {$(
        neg_abs!($t; |a| <$t>::from_bits(a.to_bits() ^ 0x8000), <$t>::from_bits(a.to_bits() & 0x7fff);
            "", "");
    )*};
}
for_each_native!(half => half);

impl<F: NativeType> UnaryOp<Complex<F>> for Negative
where
    Complex<F>: NativeType + std::ops::Neg<Output = Complex<F>>,
{
    type Out = Complex<F>;
    #[inline(always)]
    fn apply(a: Complex<F>) -> Complex<F> {
        -a
    }
}
impl<F: NativeType> UnaryOp<Complex<F>> for Abs
where
    Complex<F>: NativeType + ComplexFloat<Real = F>,
{
    type Out = F;
    #[inline(always)]
    fn apply(a: Complex<F>) -> F {
        a.abs()
    }
}

impl UnaryOp<bool> for Abs {
    type Out = bool;
    #[inline(always)]
    fn apply(a: bool) -> bool {
        a
    }
    const CUDA: &'static str = "a";
}

functions! {
    /// `-a` elementwise (integers wrap: `-MIN` is `MIN`; not bool).
    fn negative(a) Arithmetic => |c| {
        with_native!(c, signed unsigned half ieee complex => |T| core::<Unary<T, Negative>>())
    };
    /// `|a|` elementwise (integers wrap: `abs(MIN)` is `MIN`); a complex
    /// number gives its magnitude as a real of its part type.
    ///
    /// ```
    /// use dynd::{Array, compute};
    /// let a = Array::from_json("2 * complex[float64]", "[[3, 4], [0, -2]]").unwrap();
    /// let m = compute::abs(&a).unwrap();
    /// assert_eq!(m.tp().to_string(), "2 * float64");
    /// assert_eq!(m.to_json(), "[5.0,2.0]");
    /// ```
    fn abs(a) Arithmetic => |c| with_native!(c, |T| core::<Unary<T, Abs>>());
    /// `not a` elementwise, on truthiness; a bool result.
    fn logical_not(a) Logical => |c| with_native!(c, |T| core::<Unary<T, LogicalNot>>());
}
