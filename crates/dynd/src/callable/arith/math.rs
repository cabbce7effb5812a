//! sqrt, exp, log, sin, cos, tan, pow on floats and complex numbers.
//!
//! Real arguments use Rust's `f32`/`f64` functions (the platform libm), so
//! the results are IEEE special values where NumPy's are: `sqrt(-1)` and
//! `log(-1)` are NaN, `log(0)` is -inf. Complex arguments use num-complex
//! (principal branches). float16 computes in float32 and rounds. Bool and
//! integer arguments compute in float64 (see [`super::promote::inexact`]).

use super::kernels::{Binary, BinaryOp, Unary, UnaryOp, core};
use crate::{for_each_native, with_native};
use num_complex::Complex;

macro_rules! unary_math {
    ($($name:ident => $real:ident, $cplx:ident, $c:literal);* $(;)?) => {$(
        /// A math function.
        pub(crate) struct $name;
        for_each_native!(ieee => math_impl!($name, same $real, $c;));
        for_each_native!(half => math_impl!($name, half $real, "";));
        for_each_native!(complex => math_impl!($name, same $cplx, "";));
    )*};
}
/// `$name` on each type as the method `$f`: of the type itself (`same`),
/// or for 16-bit floats (`half`) of f32, rounded once; `$c` is the CUDA C
/// (DESIGN §14: CUDA's overloads for float and double).
macro_rules! math_impl {
    ($name:ident, $kind:ident $f:ident, $c:literal; $($t:ty),*) => {$(
        impl UnaryOp<$t> for $name {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t) -> $t { math_impl!(@apply $kind, $t, a, $f) }
            const CUDA: &'static str = $c;
        }
    )*};
    (@apply same, $t:ty, $a:ident, $f:ident) => { $a.$f() };
    (@apply half, $t:ty, $a:ident, $f:ident) => { <$t>::from_f32($a.to_f32().$f()) };
}
/// `pow` of 16-bit floats through f32, rounded once.
macro_rules! half_pow {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for Pow {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                <$t>::from_f32(a.to_f32().powf(b.to_f32()))
            }
        }
    )*};
}
unary_math!(
    Sqrt => sqrt, sqrt, "sqrt(a)";
    Exp => exp, exp, "exp(a)";
    Log => ln, ln, "log(a)";
    Sin => sin, sin, "sin(a)";
    Cos => cos, cos, "cos(a)";
    Tan => tan, tan, "tan(a)";
);

/// `a` to the power `b`.
pub struct Pow;

macro_rules! real_pow {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for Pow {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a.powf(b) }
            const CUDA: &'static str = "pow(a, b)";
        }
    )*};
}
for_each_native!(ieee => real_pow);
for_each_native!(half => half_pow);
impl BinaryOp<Complex<f32>> for Pow {
    type Out = Complex<f32>;
    #[inline(always)]
    fn apply(a: Complex<f32>, b: Complex<f32>) -> Complex<f32> {
        complex_pow32(a, b)
    }
}
impl BinaryOp<Complex<f64>> for Pow {
    type Out = Complex<f64>;
    #[inline(always)]
    fn apply(a: Complex<f64>, b: Complex<f64>) -> Complex<f64> {
        complex_pow64(a, b)
    }
}

macro_rules! complex_pow {
    ($($name:ident: $t:ty),*) => {$(
        /// `a^b` on the principal branch, with `a^0 = 1` (0^0 included, as
        /// NumPy) and `0^b = 0` for real `b > 0`, where `exp(b·ln 0)` would
        /// give NaN.
        #[inline(always)]
        fn $name(a: Complex<$t>, b: Complex<$t>) -> Complex<$t> {
            if b.re == 0.0 && b.im == 0.0 {
                return Complex::new(1.0, 0.0);
            }
            if a.re == 0.0 && a.im == 0.0 && b.im == 0.0 && b.re > 0.0 {
                return Complex::new(0.0, 0.0);
            }
            a.powc(b)
        }
    )*};
}
complex_pow!(complex_pow32: f32, complex_pow64: f64);

/// The kernel of `$op` for a float or complex compute type `$c`.
macro_rules! by_type {
    ($kernel:ident, $op:ty, $c:expr) => {
        with_native!($c, half ieee complex => |T| core::<$kernel<T, $op>>())
    };
}

functions! {
    /// Square root (bool and integers compute in float64; `sqrt(-1.0)` is
    /// NaN, complex arguments take the principal root).
    ///
    /// ```
    /// use dynd::{Array, compute};
    /// let a = Array::from(vec![4i32, 9]);
    /// assert_eq!(compute::sqrt(&a).unwrap().to_json(), "[2.0,3.0]");
    /// ```
    fn sqrt(a) Math => |c| by_type!(Unary, Sqrt, c);
    /// `e^a` (bool and integers compute in float64).
    fn exp(a) Math => |c| by_type!(Unary, Exp, c);
    /// Natural logarithm (bool and integers compute in float64; `log(0.0)`
    /// is -inf).
    fn log(a) Math => |c| by_type!(Unary, Log, c);
    /// Sine (bool and integers compute in float64).
    fn sin(a) Math => |c| by_type!(Unary, Sin, c);
    /// Cosine (bool and integers compute in float64).
    fn cos(a) Math => |c| by_type!(Unary, Cos, c);
    /// Tangent (bool and integers compute in float64).
    fn tan(a) Math => |c| by_type!(Unary, Tan, c);
    /// `a` to the power `b`, in floats: bool and integer arguments compute
    /// in float64.
    ///
    /// ```
    /// use dynd::{Array, compute};
    /// let a = Array::from(vec![2i32, 3]);
    /// let b = Array::from(2i32);
    /// assert_eq!(compute::pow(&a, &b).unwrap().to_json(), "[4.0,9.0]");
    /// ```
    fn pow(a, b) Math => |c| by_type!(Binary, Pow, c);
}
