//! Element types of operators.
//!
//! [`Element`] is what any operator can hold: a dynd
//! [`NativeType`] (numbers and `bool`) with a total order. [`Num`] adds the
//! arithmetic the generators and reductions use (integers wrap); the
//! elementwise `+ - * / %` are dynd's own scalar operations
//! ([`dynd::compute::scalar`]), so they give the same values and the same
//! errors as the dynd callables. [`Float`] adds the math functions.
//!
//! Complex numbers (`Complex<f32>`, `Complex<f64>` from `num-complex`) are
//! elements too, but not [`Num`]s (they have no order): the elementwise
//! `+ - * /`, negation, equality, and the functions of [`Math`] (roots,
//! exponentials, logarithms, trigonometry, powers) take them; comparisons,
//! reductions and sorts by value do not.

use dynd::for_each_native;
use dynd::types::NativeType;
use num_complex::Complex;
use std::cmp::Ordering;

/// A value an operator can produce: a dynd scalar type.
pub trait Element: NativeType + Default + PartialEq + std::fmt::Debug {
    /// The dynd name of the type (`float64`, `int32`, `bool`).
    const NAME: &'static str = <Self as NativeType>::TYPE.name();
    /// A total order for sorting: the usual order, with NaNs last.
    fn total_order(a: &Self, b: &Self) -> Ordering;
    /// `true` for a floating-point NaN.
    fn is_nan_value(self) -> bool {
        false
    }
}

/// A number with the arithmetic the elementwise operators use.
///
/// Integer arithmetic wraps on overflow. [`Num::over`] and [`Num::modulo`]
/// are total (0 for a zero divisor) for the generators and reductions that
/// use them; the elementwise `div` and `rem` are dynd's checked operations
/// and report a zero divisor as an error.
pub trait Num: Element + PartialOrd {
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// `a + b`.
    fn plus(self, b: Self) -> Self;
    /// `a - b`.
    fn minus(self, b: Self) -> Self;
    /// `a * b`.
    fn times(self, b: Self) -> Self;
    /// `a / b`.
    fn over(self, b: Self) -> Self;
    /// `a % b` (the sign of `a`, like C's `fmod` and Rust's `%`).
    fn modulo(self, b: Self) -> Self;
    /// `-a`.
    fn negate(self) -> Self;
    /// `|a|`.
    fn magnitude(self) -> Self;
    /// -1, 0 or 1 (NaN for NaN).
    fn sign(self) -> Self;
    /// The value `v` converted as by `as`.
    fn of_f64(v: f64) -> Self;
    /// The value converted to `f64` as by `as`.
    fn as_f64(self) -> f64;
    /// The value `v` converted as by `as`.
    fn of_usize(v: usize) -> Self;
}

/// A floating-point number: a [`Num`] with `num_traits`' math functions.
pub trait Float: Num + num_traits::Float {}
impl<T: Num + num_traits::Float> Float for T {}

impl Element for bool {
    fn total_order(a: &Self, b: &Self) -> Ordering {
        a.cmp(b)
    }
}

/// The `as` conversions of [`Num`] (`of_f64`, `as_f64`, `of_usize`) for
/// the number type `$t`, inside its `impl Num`.
macro_rules! as_conversions {
    ($t:ty) => {
        #[inline(always)]
        fn of_f64(v: f64) -> Self {
            v as $t
        }
        #[inline(always)]
        fn as_f64(self) -> f64 {
            self as f64
        }
        #[inline(always)]
        fn of_usize(v: usize) -> Self {
            v as $t
        }
    };
}

macro_rules! int_elements {
    ($signed:tt; $($t:ty),*) => {$(
        impl Element for $t {
            fn total_order(a: &Self, b: &Self) -> Ordering {
                a.cmp(b)
            }
        }
        impl Num for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn plus(self, b: Self) -> Self { self.wrapping_add(b) }
            #[inline(always)]
            fn minus(self, b: Self) -> Self { self.wrapping_sub(b) }
            #[inline(always)]
            fn times(self, b: Self) -> Self { self.wrapping_mul(b) }
            #[inline(always)]
            fn over(self, b: Self) -> Self { self.checked_div(b).unwrap_or(0) }
            #[inline(always)]
            fn modulo(self, b: Self) -> Self { self.checked_rem(b).unwrap_or(0) }
            #[inline(always)]
            fn negate(self) -> Self { self.wrapping_neg() }
            #[inline(always)]
            fn magnitude(self) -> Self { int_elements!(@abs $signed self) }
            #[inline(always)]
            fn sign(self) -> Self { int_elements!(@sign $signed self) }
            as_conversions!($t);
        }
    )*};
    (@abs signed $x:ident) => { $x.wrapping_abs() };
    (@abs unsigned $x:ident) => { $x };
    (@sign signed $x:ident) => { $x.signum() };
    (@sign unsigned $x:ident) => { if $x > 0 { 1 } else { 0 } };
}

for_each_native!(signed => int_elements!(signed;));
for_each_native!(unsigned => int_elements!(unsigned;));

/// The math functions the elementwise operators use, for real and complex
/// floating-point elements (the real ones through `num_traits::Float`, the
/// complex ones through `num_complex`'s principal branches).
pub trait Math: Element {
    /// Square root.
    fn sqrt(self) -> Self;
    /// `e^x`.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Base-2 logarithm.
    fn log2(self) -> Self;
    /// Base-10 logarithm.
    fn log10(self) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// Tangent.
    fn tan(self) -> Self;
    /// Arcsine.
    fn asin(self) -> Self;
    /// Arccosine.
    fn acos(self) -> Self;
    /// Arctangent.
    fn atan(self) -> Self;
    /// Hyperbolic sine.
    fn sinh(self) -> Self;
    /// Hyperbolic cosine.
    fn cosh(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// `self ^ e`.
    fn pow(self, e: Self) -> Self;
    /// `true` for NaN (for complex numbers: either part NaN).
    fn is_nan(self) -> bool;
    /// `true` for an infinity (for complex numbers: either part infinite).
    fn is_infinite(self) -> bool;
}

/// The functions of [`Math`] forwarded to `$via` (a trait or type with the
/// methods), with `pow` as `$pow`.
macro_rules! math_impl {
    ($t:ty, [$($via:tt)+], $pow:ident) => {
        impl Math for $t {
            #[inline(always)]
            fn sqrt(self) -> Self { $($via)+::sqrt(self) }
            #[inline(always)]
            fn exp(self) -> Self { $($via)+::exp(self) }
            #[inline(always)]
            fn ln(self) -> Self { $($via)+::ln(self) }
            #[inline(always)]
            fn log2(self) -> Self { $($via)+::log2(self) }
            #[inline(always)]
            fn log10(self) -> Self { $($via)+::log10(self) }
            #[inline(always)]
            fn sin(self) -> Self { $($via)+::sin(self) }
            #[inline(always)]
            fn cos(self) -> Self { $($via)+::cos(self) }
            #[inline(always)]
            fn tan(self) -> Self { $($via)+::tan(self) }
            #[inline(always)]
            fn asin(self) -> Self { $($via)+::asin(self) }
            #[inline(always)]
            fn acos(self) -> Self { $($via)+::acos(self) }
            #[inline(always)]
            fn atan(self) -> Self { $($via)+::atan(self) }
            #[inline(always)]
            fn sinh(self) -> Self { $($via)+::sinh(self) }
            #[inline(always)]
            fn cosh(self) -> Self { $($via)+::cosh(self) }
            #[inline(always)]
            fn tanh(self) -> Self { $($via)+::tanh(self) }
            #[inline(always)]
            fn pow(self, e: Self) -> Self { $($via)+::$pow(self, e) }
            #[inline(always)]
            fn is_nan(self) -> bool { $($via)+::is_nan(self) }
            #[inline(always)]
            fn is_infinite(self) -> bool { $($via)+::is_infinite(self) }
        }
    };
}

math_impl!(f32, [<f32 as num_traits::Float>], powf);
math_impl!(f64, [<f64 as num_traits::Float>], powf);
math_impl!(Complex<f32>, [Complex::<f32>], powc);
math_impl!(Complex<f64>, [Complex::<f64>], powc);

macro_rules! complex_elements {
    ($($t:ty),*) => {$(
        impl Element for Complex<$t> {
            /// Lexicographic (real part, then imaginary part, as NumPy
            /// sorts complex numbers), with NaNs last.
            fn total_order(a: &Self, b: &Self) -> Ordering {
                <$t>::total_order(&a.re, &b.re).then_with(|| <$t>::total_order(&a.im, &b.im))
            }
            #[inline(always)]
            fn is_nan_value(self) -> bool { self.re.is_nan() || self.im.is_nan() }
        }
    )*};
}

macro_rules! float_elements {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn total_order(a: &Self, b: &Self) -> Ordering {
                match (a.is_nan(), b.is_nan()) {
                    (false, false) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Greater,
                    (false, true) => Ordering::Less,
                }
            }
            #[inline(always)]
            fn is_nan_value(self) -> bool { self.is_nan() }
        }
        impl Num for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn plus(self, b: Self) -> Self { self + b }
            #[inline(always)]
            fn minus(self, b: Self) -> Self { self - b }
            #[inline(always)]
            fn times(self, b: Self) -> Self { self * b }
            #[inline(always)]
            fn over(self, b: Self) -> Self { self / b }
            #[inline(always)]
            fn modulo(self, b: Self) -> Self { self % b }
            #[inline(always)]
            fn negate(self) -> Self { -self }
            #[inline(always)]
            fn magnitude(self) -> Self { self.abs() }
            #[inline(always)]
            fn sign(self) -> Self {
                if self > 0.0 { 1.0 } else if self < 0.0 { -1.0 } else { self }
            }
            as_conversions!($t);
        }
    )*};
}

for_each_native!(ieee => float_elements);
for_each_native!(ieee => complex_elements);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_integer_arithmetic_never_panics() {
        assert_eq!(7i32.over(0), 0);
        assert_eq!(7i32.modulo(0), 0);
        assert_eq!(i32::MIN.over(-1), 0);
        assert_eq!(i8::MAX.plus(1), i8::MIN);
        assert_eq!(i8::MIN.magnitude(), i8::MIN);
        assert_eq!(3u8.minus(4), 255);
        assert_eq!((-2.5f64).sign(), -1.0);
        assert!(f64::NAN.sign().is_nan());
        assert_eq!(f64::total_order(&f64::NAN, &1.0), Ordering::Greater);
        let (a, b) = (Complex::new(1.0f64, 5.0), Complex::new(2.0f64, -1.0));
        assert_eq!(Complex::total_order(&a, &b), Ordering::Less);
        assert!(Complex::new(0.0f64, f64::NAN).is_nan_value());
        assert_eq!(
            Math::pow(Complex::new(0.0f64, 1.0), Complex::new(2.0, 0.0)).re,
            -1.0
        );
    }
}
