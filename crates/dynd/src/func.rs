//! Functions on arrays: `dynd::func::add(&a, &b)`, and the operators
//! `&a + &b`, `&a - &b`, `&a * &b`, `&a / &b`, `&a % &b`, `-&a`.
//!
//! Each function calls the callable registered under its name
//! ([`crate::callable::lookup`]), so a program that registers its own
//! `"less"` (say, the built-in overloads plus one of its own, see
//! [`crate::callable::arith::comparison_overloads`]) changes what
//! [`less`] does too. Arguments broadcast against each other over fixed
//! and var dims; numbers are promoted to a common type (the table is in
//! [`crate::callable::arith`]). Operators return `Result<Array>`: shapes
//! that do not broadcast, types that do not fit, and integer division by
//! zero are errors, never panics.
//!
//! ```
//! use dynd::{Array, func};
//! let a = Array::from_json("2 * var * int32", "[[1, 2, 3], [4]]").unwrap();
//! let b = Array::from_json("2 * 3 * int32", "[[5, 6, 7], [8, 9, 10]]").unwrap();
//! let c = (&a + &b).unwrap();
//! assert_eq!(c.tp().to_string(), "2 * 3 * int32");
//! assert_eq!(c.to_json(), "[[6,8,10],[12,13,14]]");
//! assert_eq!(func::less(&a, &b).unwrap().to_json(), "[[true,true,true],[true,true,true]]");
//! ```
//!
//! This module holds the arithmetic, comparison, logical and math faces;
//! other families (reductions, strings) add theirs beside them.

use crate::array::Array;
use crate::callable::lookup;
use crate::error::Result;

/// Calls the callable registered as `name` on `args`.
///
/// ```
/// use dynd::{Array, func};
/// let a = Array::from(vec![1.0f64, 4.0]);
/// assert_eq!(func::call("sqrt", &[&a]).unwrap().to_json(), "[1.0,2.0]");
/// ```
pub fn call(name: &str, args: &[&Array]) -> Result<Array> {
    lookup(name)?.call(args)
}

macro_rules! binary_faces {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        pub fn $name(a: &Array, b: &Array) -> Result<Array> {
            call(stringify!($name), &[a, b])
        }
    )*};
}

macro_rules! unary_faces {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        pub fn $name(a: &Array) -> Result<Array> {
            call(stringify!($name), &[a])
        }
    )*};
}

binary_faces! {
    /// `a + b` elementwise (integers wrap; bool + bool is logical or).
    ///
    /// ```
    /// use dynd::{Array, func};
    /// let a = Array::from(vec![1i32, 2]);
    /// let b = Array::from(0.5f64);
    /// let c = func::add(&a, &b).unwrap();
    /// assert_eq!(c.tp().to_string(), "2 * float64");
    /// assert_eq!(c.to_json(), "[1.5,2.5]");
    /// ```
    add;
    /// `a - b` elementwise (integers wrap).
    subtract;
    /// `a * b` elementwise (integers wrap; bool * bool is logical and).
    multiply;
    /// `a / b` elementwise. Integers truncate toward zero; integer division
    /// by zero is an `InvalidArgument` error and `MIN / -1` an `Overflow`
    /// error. Floats follow IEEE 754.
    ///
    /// ```
    /// use dynd::{Array, ErrorKind, func};
    /// let a = Array::from(vec![7i32, -7]);
    /// let b = Array::from(vec![2i32, 2]);
    /// assert_eq!(func::divide(&a, &b).unwrap().to_json(), "[3,-3]");
    /// let zero = Array::from(0i32);
    /// assert_eq!(func::divide(&a, &zero).unwrap_err().kind(), ErrorKind::InvalidArgument);
    /// ```
    divide;
    /// `a % b` elementwise, with the sign of the dividend (C's `%`, so
    /// `divide(a, b) * b + modulo(a, b) == a`); integer modulo by zero is an
    /// `InvalidArgument` error.
    ///
    /// ```
    /// use dynd::{Array, func};
    /// let a = Array::from(vec![7i32, -7, 7]);
    /// let b = Array::from(vec![3i32, 3, -3]);
    /// assert_eq!(func::modulo(&a, &b).unwrap().to_json(), "[1,-1,1]");
    /// ```
    modulo;
    /// `a < b` elementwise: numbers in their common type, strings and
    /// bytes lexicographically (`"abcd" < "abcde"`).
    ///
    /// ```
    /// use dynd::{Array, func};
    /// let a = Array::from(vec!["abcd", "b"]);
    /// let b = Array::from(vec!["abcde", "a"]);
    /// assert_eq!(func::less(&a, &b).unwrap().to_json(), "[true,false]");
    /// ```
    less;
    /// `a <= b` elementwise (as [`less`]).
    less_equal;
    /// `a == b` elementwise (as [`less`]; complex numbers too).
    equal;
    /// `a != b` elementwise (as [`equal`]; NaN is not equal to itself).
    not_equal;
    /// `a > b` elementwise (as [`less`]).
    greater;
    /// `a >= b` elementwise (as [`less`]).
    greater_equal;
    /// `a and b` elementwise, on truthiness (non-zero is true); a bool
    /// result.
    ///
    /// ```
    /// use dynd::{Array, func};
    /// let a = Array::from(vec![0i32, 2, 3]);
    /// let b = Array::from(vec![1.5f64, 0.0, -1.0]);
    /// assert_eq!(func::logical_and(&a, &b).unwrap().to_json(), "[false,false,true]");
    /// ```
    logical_and;
    /// `a or b` elementwise, on truthiness; a bool result.
    logical_or;
    /// `a` to the power `b`, in floats: bool and integer arguments compute
    /// in float64.
    ///
    /// ```
    /// use dynd::{Array, func};
    /// let a = Array::from(vec![2i32, 3]);
    /// let b = Array::from(2i32);
    /// assert_eq!(func::pow(&a, &b).unwrap().to_json(), "[4.0,9.0]");
    /// ```
    pow;
}

unary_faces! {
    /// `-a` elementwise (integers wrap: `-MIN` is `MIN`).
    negative;
    /// `|a|` elementwise (integers wrap: `abs(MIN)` is `MIN`); a complex
    /// number gives its magnitude as a real of its part type.
    ///
    /// ```
    /// use dynd::{Array, func};
    /// let a = Array::from_json("2 * complex[float64]", "[[3, 4], [0, -2]]").unwrap();
    /// let m = func::abs(&a).unwrap();
    /// assert_eq!(m.tp().to_string(), "2 * float64");
    /// assert_eq!(m.to_json(), "[5.0,2.0]");
    /// ```
    abs;
    /// `not a` elementwise, on truthiness; a bool result.
    logical_not;
    /// Square root (bool and integers compute in float64; `sqrt(-1.0)` is
    /// NaN, complex arguments take the principal root).
    ///
    /// ```
    /// use dynd::{Array, func};
    /// let a = Array::from(vec![4i32, 9]);
    /// assert_eq!(func::sqrt(&a).unwrap().to_json(), "[2.0,3.0]");
    /// ```
    sqrt;
    /// `e^a` (bool and integers compute in float64).
    exp;
    /// Natural logarithm (bool and integers compute in float64; `log(0.0)`
    /// is -inf).
    log;
    /// Sine (bool and integers compute in float64).
    sin;
    /// Cosine (bool and integers compute in float64).
    cos;
    /// Tangent (bool and integers compute in float64).
    tan;
}

macro_rules! operators {
    ($($trait:ident $method:ident => $func:ident),*) => {$(
        impl std::ops::$trait<&Array> for &Array {
            type Output = Result<Array>;
            /// Elementwise, through the registered callable of the same name.
            fn $method(self, rhs: &Array) -> Result<Array> {
                $func(self, rhs)
            }
        }
    )*};
}

operators!(
    Add add => add,
    Sub sub => subtract,
    Mul mul => multiply,
    Div div => divide,
    Rem rem => modulo
);

impl std::ops::Neg for &Array {
    type Output = Result<Array>;
    /// Elementwise [`negative`].
    fn neg(self) -> Result<Array> {
        negative(self)
    }
}
