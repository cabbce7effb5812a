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
//!
//! floor_divide and remainder are NumPy's `//` and `%`: the quotient
//! rounded toward negative infinity, and the remainder with the divisor's
//! sign, so that `floor_divide(a, b) * b + remainder(a, b) == a`. On
//! integers a zero divisor is an `InvalidArgument` error and `MIN // -1` an
//! `Overflow` error (NumPy gives 0 and `MIN` with a warning); on floats they
//! follow NumPy's `divmod` exactly (`5.0 // 0.0` is inf, `-2.0 % inf` is
//! inf, signed zeros kept). Not for bool or complex.

use super::kernels::{Binary, BinaryOp, core};
use crate::error::Error;
use crate::types::{BuiltinType, NativeType};
use crate::{for_each_native, with_native};

/// `a + b`.
pub struct Add;
/// `a - b`.
pub struct Subtract;
/// `a * b`.
pub struct Multiply;
/// `a / b`.
pub struct Divide;
/// `a % b`.
pub struct Modulo;
/// `a // b`: the quotient rounded toward negative infinity.
pub struct FloorDivide;
/// `a mod b` with the sign of the divisor (NumPy's `%`).
pub struct Remainder;

fn by_zero(t: BuiltinType, a: impl std::fmt::Display, op: &str) -> Error {
    Error::invalid_argument(format!("{t} division by zero: {a} {op} 0"))
}

/// `impl BinaryOp<$t> for $op` with a same-type result `$e` per operation,
/// and beside it the same operation in CUDA C, `$c` (DESIGN §14).
macro_rules! same_type {
    ($t:ty; $($op:ty => |$a:ident, $b:ident| $e:expr; $c:literal),* $(,)?) => {$(
        impl BinaryOp<$t> for $op {
            type Out = $t;
            #[inline(always)]
            fn apply($a: $t, $b: $t) -> $t { $e }
            const CUDA: &'static str = $c;
        }
    )*};
}

/// CUDA C for the integer operations (DESIGN §14), the device's side of
/// the Rust bodies below. Wrapping arithmetic goes through `unsigned long
/// long`, whose arithmetic is modulo 2^64, and back to `T`, keeping the low
/// bits: two's complement wrapping as `wrapping_add` does, with no signed
/// overflow (undefined in C). A zero divisor and `MIN / -1` give 0, as
/// `checked_div(..).unwrap_or(0)` does; those pairs are errors anyway.
const INT_PRELUDE: &str = r#"
#define DYND_SIGNED(T) ((T)-1 < (T)0)
#define DYND_MIN(T) (DYND_SIGNED(T) ? (T)(1ULL << (8 * sizeof(T) - 1)) : (T)0)
#define DYND_DIV_FAILS(T, a, b) ((b) == (T)0 || (DYND_SIGNED(T) && (a) == DYND_MIN(T) && (b) == (T)-1))
template <typename T> static __device__ __forceinline__ T dynd_idiv(T a, T b) {
  return DYND_DIV_FAILS(T, a, b) ? (T)0 : (T)(a / b);
}
template <typename T> static __device__ __forceinline__ T dynd_irem(T a, T b) {
  return DYND_DIV_FAILS(T, a, b) ? (T)0 : (T)(a % b);
}
template <typename T> static __device__ __forceinline__ T dynd_ifloordiv(T a, T b) {
  T q = dynd_idiv<T>(a, b), r = dynd_irem<T>(a, b);
  bool down = (r != (T)0) && ((r < (T)0) != (b < (T)0));
  return (T)((unsigned long long)q - (unsigned long long)down);
}
template <typename T> static __device__ __forceinline__ T dynd_iremainder(T a, T b) {
  T r = dynd_irem<T>(a, b);
  bool shift = (r != (T)0) && ((r < (T)0) != (b < (T)0));
  return shift ? (T)((unsigned long long)r + (unsigned long long)b) : r;
}
"#;

macro_rules! integer {
    ($($t:ty),*) => {$(
        same_type!($t;
            Add => |a, b| a.wrapping_add(b);
                "(T)((unsigned long long)a + (unsigned long long)b)",
            Subtract => |a, b| a.wrapping_sub(b);
                "(T)((unsigned long long)a - (unsigned long long)b)",
            Multiply => |a, b| a.wrapping_mul(b);
                "(T)((unsigned long long)a * (unsigned long long)b)",
        );
        impl BinaryOp<$t> for Modulo {
            type Out = $t;
            const CHECKED: bool = true;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a.checked_rem(b).unwrap_or(0) }
            #[inline(always)]
            fn bad(_a: $t, b: $t) -> bool { b == 0 }
            fn error(a: $t, _b: $t) -> Error { by_zero(<$t as NativeType>::TYPE, a, "%") }
            const CUDA: &'static str = "dynd_irem<T>(a, b)";
            const CUDA_BAD: &'static str = "b == (T)0";
            const CUDA_PRELUDE: &'static str = INT_PRELUDE;
        }
    )*};
}
for_each_native!(signed unsigned => integer);

/// Integer division: a zero divisor, and `MIN / -1` for the signed types
/// (an unsigned `MIN` is 0, so the second test is constant false there).
macro_rules! int_divide {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for Divide {
            type Out = $t;
            const CHECKED: bool = true;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a.checked_div(b).unwrap_or(0) }
            #[inline(always)]
            fn bad(a: $t, b: $t) -> bool {
                const SIGNED: bool = <$t>::MIN != 0;
                (b == 0) | (SIGNED & (a == <$t>::MIN) & (b == (0 as $t).wrapping_sub(1)))
            }
            const CUDA: &'static str = "dynd_idiv<T>(a, b)";
            const CUDA_BAD: &'static str = "DYND_DIV_FAILS(T, a, b)";
            const CUDA_PRELUDE: &'static str = INT_PRELUDE;
            fn error(a: $t, b: $t) -> Error {
                let t = <$t as NativeType>::TYPE;
                if b == 0 {
                    by_zero(t, a, "/")
                } else {
                    Error::overflow(format!("{t} division overflows: {a} / {b} is out of range for {t}"))
                }
            }
        }
    )*};
}
for_each_native!(signed unsigned => int_divide);

macro_rules! ieee {
    ($($t:ty),*) => {$(
        same_type!($t; Add => |a, b| a + b; "a + b", Subtract => |a, b| a - b; "a - b",
            Multiply => |a, b| a * b; "a * b", Divide => |a, b| a / b; "a / b");
    )*};
}
for_each_native!(ieee complex => ieee);

macro_rules! fmod {
    ($($t:ty),*) => {$( same_type!($t; Modulo => |a, b| a % b; "fmod(a, b)"); )*};
}
for_each_native!(ieee => fmod);

/// Floor division and the divisor-signed remainder of integers: the
/// truncating result, moved one step down (or by one divisor) when the
/// remainder is non-zero and its sign differs from the divisor's.
macro_rules! int_floor {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for FloorDivide {
            type Out = $t;
            const CHECKED: bool = true;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                let (q, r) = (a.checked_div(b).unwrap_or(0), a.checked_rem(b).unwrap_or(0));
                #[allow(unused_comparisons)]
                let down = (r != 0) & ((r < 0) != (b < 0));
                q.wrapping_sub(down as $t)
            }
            #[inline(always)]
            fn bad(a: $t, b: $t) -> bool {
                <Divide as BinaryOp<$t>>::bad(a, b)
            }
            const CUDA: &'static str = "dynd_ifloordiv<T>(a, b)";
            const CUDA_BAD: &'static str = "DYND_DIV_FAILS(T, a, b)";
            const CUDA_PRELUDE: &'static str = INT_PRELUDE;
            fn error(a: $t, b: $t) -> Error {
                let t = <$t as NativeType>::TYPE;
                if b == 0 {
                    by_zero(t, a, "//")
                } else {
                    Error::overflow(format!("{t} floor division overflows: {a} // {b} is out of range for {t}"))
                }
            }
        }
        impl BinaryOp<$t> for Remainder {
            type Out = $t;
            const CHECKED: bool = true;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                let r = a.checked_rem(b).unwrap_or(0);
                #[allow(unused_comparisons)]
                let shift = (r != 0) & ((r < 0) != (b < 0));
                if shift { r.wrapping_add(b) } else { r }
            }
            #[inline(always)]
            fn bad(_a: $t, b: $t) -> bool { b == 0 }
            fn error(a: $t, _b: $t) -> Error { by_zero(<$t as NativeType>::TYPE, a, "%") }
            const CUDA: &'static str = "dynd_iremainder<T>(a, b)";
            const CUDA_BAD: &'static str = "b == (T)0";
            const CUDA_PRELUDE: &'static str = INT_PRELUDE;
        }
    )*};
}
for_each_native!(signed unsigned => int_floor);

/// [`FloatDivmod::divmod`] in CUDA C, step for step (`which` 0 gives the
/// quotient, 1 the remainder); compiled without FMA contraction, so each
/// step rounds as the Rust one does.
const FLOAT_DIVMOD: &str = r#"
template <typename T> static __device__ __forceinline__ T dynd_fdivmod(T a, T b, int which) {
  T m = fmod(a, b);
  if (b == (T)0) return which ? m : a / b;
  T div = (a - m) / b;
  if (m != (T)0) {
    if ((b < (T)0) != (m < (T)0)) { m += b; div -= (T)1; }
  } else {
    m = copysign((T)0, b);
  }
  if (which) return m;
  if (div != (T)0) {
    T f = floor(div);
    return (div - f > (T)0.5) ? f + (T)1 : f;
  }
  return copysign((T)0, a / b);
}
"#;

/// NumPy's `divmod` of two floats: `(floor quotient, divisor-signed
/// remainder)`, special values and signed zeros as NumPy gives them.
macro_rules! float_divmod {
    ($($t:ty),*) => {$(
        impl FloatDivmod for $t {
            #[inline(always)]
            fn divmod(a: $t, b: $t) -> ($t, $t) {
                let mut m = a % b;
                if b == 0.0 {
                    return (a / b, m);
                }
                let mut div = (a - m) / b;
                if m != 0.0 {
                    if (b < 0.0) != (m < 0.0) {
                        m += b;
                        div -= 1.0;
                    }
                } else {
                    m = (0.0 as $t).copysign(b);
                }
                let floor = if div != 0.0 {
                    let f = div.floor();
                    if div - f > 0.5 { f + 1.0 } else { f }
                } else {
                    (0.0 as $t).copysign(a / b)
                };
                (floor, m)
            }
        }
        divmod_part!($t; FloorDivide => 0, Remainder => 1);
    )*};
}

/// `$op` on floats as part `$part` of [`FloatDivmod::divmod`], on the host
/// and in CUDA C (`dynd_fdivmod`'s `which`).
macro_rules! divmod_part {
    ($t:ty; $($op:ty => $part:tt),*) => {$(
        impl BinaryOp<$t> for $op {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { <$t>::divmod(a, b).$part }
            const CUDA: &'static str = concat!("dynd_fdivmod<T>(a, b, ", stringify!($part), ")");
            const CUDA_PRELUDE: &'static str = FLOAT_DIVMOD;
        }
    )*};
}

/// Floats with NumPy's `divmod`.
trait FloatDivmod: Sized {
    fn divmod(a: Self, b: Self) -> (Self, Self);
}
for_each_native!(ieee => float_divmod);

/// The 16-bit floats through float32, rounded once.
macro_rules! half_via_f32 {
    ($($t:ty),*) => {$(
        half_via_f32!(@ $t; Add => +, Subtract => -, Multiply => *, Divide => /, Modulo => %);
        impl BinaryOp<$t> for FloorDivide {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                <$t>::from_f32(f32::divmod(a.to_f32(), b.to_f32()).0)
            }
        }
        impl BinaryOp<$t> for Remainder {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                <$t>::from_f32(f32::divmod(a.to_f32(), b.to_f32()).1)
            }
        }
    )*};
    (@ $t:ty; $($op:ty => $e:tt),*) => {$(
        impl BinaryOp<$t> for $op {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                <$t>::from_f32(a.to_f32() $e b.to_f32())
            }
        }
    )*};
}
for_each_native!(half => half_via_f32);

impl BinaryOp<bool> for Add {
    type Out = bool;
    #[inline(always)]
    fn apply(a: bool, b: bool) -> bool {
        a | b
    }
    const CUDA: &'static str = "a || b";
}
impl BinaryOp<bool> for Multiply {
    type Out = bool;
    #[inline(always)]
    fn apply(a: bool, b: bool) -> bool {
        a & b
    }
    const CUDA: &'static str = "a && b";
}

functions! {
    /// `a + b` elementwise (integers wrap; bool + bool is logical or).
    ///
    /// ```
    /// use dynd::{Array, compute};
    /// let a = Array::from(vec![1i32, 2]);
    /// let b = Array::from(0.5f64);
    /// let c = compute::add(&a, &b).unwrap();
    /// assert_eq!(c.tp().to_string(), "2 * float64");
    /// assert_eq!(c.to_json(), "[1.5,2.5]");
    /// ```
    fn add(a, b) Arithmetic => |c| with_native!(c, |T| core::<Binary<T, Add>>());
    /// `a - b` elementwise (integers wrap; not bool: NumPy has no boolean
    /// subtract).
    fn subtract(a, b) Arithmetic => |c| {
        with_native!(c, signed unsigned half ieee complex => |T| core::<Binary<T, Subtract>>())
    };
    /// `a * b` elementwise (integers wrap; bool * bool is logical and).
    fn multiply(a, b) Arithmetic => |c| with_native!(c, |T| core::<Binary<T, Multiply>>());
    /// `a / b` elementwise. Integers truncate toward zero; integer division
    /// by zero is an `InvalidArgument` error and `MIN / -1` an `Overflow`
    /// error. Floats follow IEEE 754.
    ///
    /// ```
    /// use dynd::{Array, ErrorKind, compute};
    /// let a = Array::from(vec![7i32, -7]);
    /// let b = Array::from(vec![2i32, 2]);
    /// assert_eq!(compute::divide(&a, &b).unwrap().to_json(), "[3,-3]");
    /// let zero = Array::from(0i32);
    /// assert_eq!(compute::divide(&a, &zero).unwrap_err().kind(), ErrorKind::InvalidArgument);
    /// ```
    fn divide(a, b) Arithmetic => |c| {
        with_native!(c, signed unsigned half ieee complex => |T| core::<Binary<T, Divide>>())
    };
    /// `a % b` elementwise, with the sign of the dividend (C's `%`, so
    /// `divide(a, b) * b + modulo(a, b) == a`); integer modulo by zero is an
    /// `InvalidArgument` error. Real numbers only (not bool, not complex).
    ///
    /// ```
    /// use dynd::{Array, compute};
    /// let a = Array::from(vec![7i32, -7, 7]);
    /// let b = Array::from(vec![3i32, 3, -3]);
    /// assert_eq!(compute::modulo(&a, &b).unwrap().to_json(), "[1,-1,1]");
    /// ```
    fn modulo(a, b) Arithmetic (": complex numbers have no remainder") => |c| {
        with_native!(c, signed unsigned half ieee => |T| core::<Binary<T, Modulo>>())
    };
    /// `a // b` elementwise (NumPy's `floor_divide`): the quotient rounded
    /// toward negative infinity. Integer division by zero is an
    /// `InvalidArgument` error and `MIN // -1` an `Overflow` error; floats
    /// follow NumPy (`5.0 // 0.0` is inf). Real numbers only.
    ///
    /// ```
    /// use dynd::{Array, compute};
    /// let a = Array::from(vec![7i32, -7, 7]);
    /// let b = Array::from(vec![2i32, 2, -2]);
    /// assert_eq!(compute::floor_divide(&a, &b).unwrap().to_json(), "[3,-4,-4]");
    /// ```
    fn floor_divide(a, b) Arithmetic (": complex numbers have no floor") => |c| {
        with_native!(c, signed unsigned half ieee => |T| core::<Binary<T, FloorDivide>>())
    };
    /// `a % b` elementwise with the divisor's sign (NumPy's `remainder`),
    /// so `floor_divide(a, b) * b + remainder(a, b) == a`; integer
    /// remainder by zero is an `InvalidArgument` error. Real numbers only.
    ///
    /// ```
    /// use dynd::{Array, compute};
    /// let a = Array::from(vec![7i32, -7, 7]);
    /// let b = Array::from(vec![3i32, 3, -3]);
    /// assert_eq!(compute::remainder(&a, &b).unwrap().to_json(), "[1,2,-2]");
    /// ```
    fn remainder(a, b) Arithmetic (": complex numbers have no remainder") => |c| {
        with_native!(c, signed unsigned half ieee => |T| core::<Binary<T, Remainder>>())
    };
}
