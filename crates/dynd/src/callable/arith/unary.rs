//! negative, abs, logical_not, and truthiness.
//!
//! | type | negative | abs | truthy (logical functions) |
//! |---|---|---|---|
//! | signed integers | wraps: `-MIN` is `MIN` (NumPy) | wraps: `abs(MIN)` is `MIN` (NumPy) | `x != 0` |
//! | unsigned integers | wraps: `-1` is `MAX` (NumPy) | the value | `x != 0` |
//! | floats | sign flipped (NaN too) | sign cleared | `x != 0` (NaN is true) |
//! | complex | both parts negated | the magnitude `hypot(re, im)`, a real of the part type | `re != 0 or im != 0` |
//! | bool | none (a `Type` error, as NumPy) | the value | the value |

use super::kernels::{CoreKernel, Elem, Unary, UnaryOp, core};
use crate::types::BuiltinType;
use half::f16;
use num_complex::Complex;

/// `-a`.
pub(crate) struct Negative;
/// `|a|`.
pub(crate) struct Abs;
/// `not a` (truthiness).
pub(crate) struct LogicalNot;

/// Truthiness: what the logical functions see of a number.
pub(crate) trait Truthy: Elem {
    /// `true` unless the value is zero (or false).
    fn truthy(self) -> bool;
}

macro_rules! truthy_real {
    ($zero:expr; $($t:ty),*) => {$(
        impl Truthy for $t {
            #[inline(always)]
            fn truthy(self) -> bool { self != $zero }
        }
    )*};
}
truthy_real!(0; i8, i16, i32, i64, i128, u8, u16, u32, u64, u128);
truthy_real!(0.0; f32, f64);

impl Truthy for bool {
    #[inline(always)]
    fn truthy(self) -> bool {
        self
    }
}
impl Truthy for f16 {
    #[inline(always)]
    fn truthy(self) -> bool {
        // Anything but +0 and -0 (NaN included).
        self.to_bits() & 0x7fff != 0
    }
}
impl Truthy for Complex<f32> {
    #[inline(always)]
    fn truthy(self) -> bool {
        (self.re != 0.0) | (self.im != 0.0)
    }
}
impl Truthy for Complex<f64> {
    #[inline(always)]
    fn truthy(self) -> bool {
        (self.re != 0.0) | (self.im != 0.0)
    }
}

impl<T: Truthy> UnaryOp<T> for LogicalNot {
    type Out = bool;
    #[inline(always)]
    fn apply(a: T) -> bool {
        !a.truthy()
    }
}

macro_rules! signed {
    ($($t:ty),*) => {$(
        impl UnaryOp<$t> for Negative {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t) -> $t { a.wrapping_neg() }
        }
        impl UnaryOp<$t> for Abs {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t) -> $t { a.wrapping_abs() }
        }
    )*};
}
signed!(i8, i16, i32, i64, i128);

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl UnaryOp<$t> for Negative {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t) -> $t { a.wrapping_neg() }
        }
        impl UnaryOp<$t> for Abs {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t) -> $t { a }
        }
    )*};
}
unsigned!(u8, u16, u32, u64, u128);

macro_rules! float {
    ($($t:ty),*) => {$(
        impl UnaryOp<$t> for Negative {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t) -> $t { -a }
        }
        impl UnaryOp<$t> for Abs {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t) -> $t { a.abs() }
        }
    )*};
}
float!(f32, f64);

impl UnaryOp<f16> for Negative {
    type Out = f16;
    #[inline(always)]
    fn apply(a: f16) -> f16 {
        f16::from_bits(a.to_bits() ^ 0x8000)
    }
}
impl UnaryOp<f16> for Abs {
    type Out = f16;
    #[inline(always)]
    fn apply(a: f16) -> f16 {
        f16::from_bits(a.to_bits() & 0x7fff)
    }
}

macro_rules! complex {
    ($($t:ty),*) => {$(
        impl UnaryOp<Complex<$t>> for Negative {
            type Out = Complex<$t>;
            #[inline(always)]
            fn apply(a: Complex<$t>) -> Complex<$t> { -a }
        }
        impl UnaryOp<Complex<$t>> for Abs {
            type Out = $t;
            #[inline(always)]
            fn apply(a: Complex<$t>) -> $t { a.re.hypot(a.im) }
        }
    )*};
}
complex!(f32, f64);

impl UnaryOp<bool> for Abs {
    type Out = bool;
    #[inline(always)]
    fn apply(a: bool) -> bool {
        a
    }
}

/// The kernel of `$op` for compute type `$c`, among the listed types.
macro_rules! by_type {
    ($op:ty, $c:expr; $($b:ident => $t:ty),* $(,)?) => {
        match $c {
            $(BuiltinType::$b => Some(core::<Unary<$t, $op>>()),)*
            _ => None,
        }
    };
}

/// `negative`'s kernel for `c`.
pub(crate) fn negative(c: BuiltinType) -> Option<CoreKernel> {
    by_type!(Negative, c; Int8 => i8, Int16 => i16, Int32 => i32, Int64 => i64,
        Int128 => i128, UInt8 => u8, UInt16 => u16, UInt32 => u32, UInt64 => u64,
        UInt128 => u128, Float16 => f16, Float32 => f32, Float64 => f64,
        Complex64 => Complex<f32>, Complex128 => Complex<f64>)
}

/// `abs`'s kernel for `c`.
pub(crate) fn abs(c: BuiltinType) -> Option<CoreKernel> {
    by_type!(Abs, c; Bool => bool, Int8 => i8, Int16 => i16, Int32 => i32, Int64 => i64,
        Int128 => i128, UInt8 => u8, UInt16 => u16, UInt32 => u32, UInt64 => u64,
        UInt128 => u128, Float16 => f16, Float32 => f32, Float64 => f64,
        Complex64 => Complex<f32>, Complex128 => Complex<f64>)
}

/// `logical_not`'s kernel for `c`.
pub(crate) fn logical_not(c: BuiltinType) -> Option<CoreKernel> {
    by_type!(LogicalNot, c; Bool => bool, Int8 => i8, Int16 => i16, Int32 => i32,
        Int64 => i64, Int128 => i128, UInt8 => u8, UInt16 => u16, UInt32 => u32,
        UInt64 => u64, UInt128 => u128, Float16 => f16, Float32 => f32, Float64 => f64,
        Complex64 => Complex<f32>, Complex128 => Complex<f64>)
}
