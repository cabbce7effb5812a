//! add, subtract, multiply, divide, modulo: the same-type operations.
//!
//! | compute type | add, subtract, multiply | divide | modulo |
//! |---|---|---|---|
//! | integers | wrap (two's complement, like NumPy) | truncates toward zero; by zero: `InvalidArgument`; `MIN / -1`: `Overflow` | sign of the dividend (C's and Rust's `%`); by zero: `InvalidArgument`; `MIN % -1` is 0 |
//! | floats | IEEE 754 | IEEE 754 (`x / 0` is ±inf or NaN) | `fmod`: sign of the dividend, exact |
//! | complex | num-complex | num-complex (`(a·conj b) / \|b\|²`) | none (a `Type` error) |
//! | bool | add is logical or, multiply logical and (NumPy) | none | none |
//!
//! float16 computes in float32 and rounds once; float32's 24 bits are
//! enough for that to be the correctly rounded float16 result.

use super::kernels::{Binary, BinaryOp, CoreKernel, Elem, core};
use crate::error::Error;
use crate::types::BuiltinType;
use half::f16;
use num_complex::Complex;

/// `a + b`.
pub(crate) struct Add;
/// `a - b`.
pub(crate) struct Subtract;
/// `a * b`.
pub(crate) struct Multiply;
/// `a / b`.
pub(crate) struct Divide;
/// `a % b`.
pub(crate) struct Modulo;

fn by_zero(t: BuiltinType, a: impl std::fmt::Display, op: &str) -> Error {
    Error::invalid_argument(format!("{t} division by zero: {a} {op} 0"))
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for Add {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a.wrapping_add(b) }
        }
        impl BinaryOp<$t> for Subtract {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a.wrapping_sub(b) }
        }
        impl BinaryOp<$t> for Multiply {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a.wrapping_mul(b) }
        }
        impl BinaryOp<$t> for Modulo {
            type Out = $t;
            const CHECKED: bool = true;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a.checked_rem(b).unwrap_or(0) }
            #[inline(always)]
            fn bad(_a: $t, b: $t) -> bool { b == 0 }
            fn error(a: $t, _b: $t) -> Error { by_zero(<$t as Elem>::TYPE, a, "%") }
        }
    )*};
}
integer!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128);

macro_rules! signed_divide {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for Divide {
            type Out = $t;
            const CHECKED: bool = true;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a.checked_div(b).unwrap_or(0) }
            #[inline(always)]
            fn bad(a: $t, b: $t) -> bool { (b == 0) | ((a == <$t>::MIN) & (b == -1)) }
            fn error(a: $t, b: $t) -> Error {
                let t = <$t as Elem>::TYPE;
                if b == 0 {
                    by_zero(t, a, "/")
                } else {
                    Error::overflow(format!("{t} division overflows: {a} / {b} is out of range for {t}"))
                }
            }
        }
    )*};
}
signed_divide!(i8, i16, i32, i64, i128);

macro_rules! unsigned_divide {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for Divide {
            type Out = $t;
            const CHECKED: bool = true;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a.checked_div(b).unwrap_or(0) }
            #[inline(always)]
            fn bad(_a: $t, b: $t) -> bool { b == 0 }
            fn error(a: $t, _b: $t) -> Error { by_zero(<$t as Elem>::TYPE, a, "/") }
        }
    )*};
}
unsigned_divide!(u8, u16, u32, u64, u128);

macro_rules! ieee {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for Add {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a + b }
        }
        impl BinaryOp<$t> for Subtract {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a - b }
        }
        impl BinaryOp<$t> for Multiply {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a * b }
        }
        impl BinaryOp<$t> for Divide {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a / b }
        }
    )*};
}
ieee!(f32, f64, Complex<f32>, Complex<f64>);

macro_rules! fmod {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for Modulo {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a % b }
        }
    )*};
}
fmod!(f32, f64);

/// float16 through float32, rounded once.
macro_rules! half_via_f32 {
    ($($op:ty => $e:tt),*) => {$(
        impl BinaryOp<f16> for $op {
            type Out = f16;
            #[inline(always)]
            fn apply(a: f16, b: f16) -> f16 {
                f16::from_f32(a.to_f32() $e b.to_f32())
            }
        }
    )*};
}
half_via_f32!(Add => +, Subtract => -, Multiply => *, Divide => /, Modulo => %);

impl BinaryOp<bool> for Add {
    type Out = bool;
    #[inline(always)]
    fn apply(a: bool, b: bool) -> bool {
        a | b
    }
}
impl BinaryOp<bool> for Multiply {
    type Out = bool;
    #[inline(always)]
    fn apply(a: bool, b: bool) -> bool {
        a & b
    }
}

/// The kernel of `$op` for compute type `$c`, among the listed types.
macro_rules! by_type {
    ($op:ty, $c:expr; $($b:ident => $t:ty),* $(,)?) => {
        match $c {
            $(BuiltinType::$b => Some(core::<Binary<$t, $op>>()),)*
            _ => None,
        }
    };
}

/// `add`'s kernel for `c`.
pub(crate) fn add(c: BuiltinType) -> Option<CoreKernel> {
    by_type!(Add, c; Bool => bool, Int8 => i8, Int16 => i16, Int32 => i32, Int64 => i64,
        Int128 => i128, UInt8 => u8, UInt16 => u16, UInt32 => u32, UInt64 => u64,
        UInt128 => u128, Float16 => f16, Float32 => f32, Float64 => f64,
        Complex64 => Complex<f32>, Complex128 => Complex<f64>)
}

/// `subtract`'s kernel for `c`.
pub(crate) fn subtract(c: BuiltinType) -> Option<CoreKernel> {
    by_type!(Subtract, c; Int8 => i8, Int16 => i16, Int32 => i32, Int64 => i64,
        Int128 => i128, UInt8 => u8, UInt16 => u16, UInt32 => u32, UInt64 => u64,
        UInt128 => u128, Float16 => f16, Float32 => f32, Float64 => f64,
        Complex64 => Complex<f32>, Complex128 => Complex<f64>)
}

/// `multiply`'s kernel for `c`.
pub(crate) fn multiply(c: BuiltinType) -> Option<CoreKernel> {
    by_type!(Multiply, c; Bool => bool, Int8 => i8, Int16 => i16, Int32 => i32, Int64 => i64,
        Int128 => i128, UInt8 => u8, UInt16 => u16, UInt32 => u32, UInt64 => u64,
        UInt128 => u128, Float16 => f16, Float32 => f32, Float64 => f64,
        Complex64 => Complex<f32>, Complex128 => Complex<f64>)
}

/// `divide`'s kernel for `c`.
pub(crate) fn divide(c: BuiltinType) -> Option<CoreKernel> {
    by_type!(Divide, c; Int8 => i8, Int16 => i16, Int32 => i32, Int64 => i64,
        Int128 => i128, UInt8 => u8, UInt16 => u16, UInt32 => u32, UInt64 => u64,
        UInt128 => u128, Float16 => f16, Float32 => f32, Float64 => f64,
        Complex64 => Complex<f32>, Complex128 => Complex<f64>)
}

/// `modulo`'s kernel for `c`.
pub(crate) fn modulo(c: BuiltinType) -> Option<CoreKernel> {
    by_type!(Modulo, c; Int8 => i8, Int16 => i16, Int32 => i32, Int64 => i64,
        Int128 => i128, UInt8 => u8, UInt16 => u16, UInt32 => u32, UInt64 => u64,
        UInt128 => u128, Float16 => f16, Float32 => f32, Float64 => f64)
}
