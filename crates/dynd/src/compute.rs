//! Functions on arrays: `dynd::compute::add(&a, &b)`, and the operators
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
//! use dynd::{Array, compute};
//! let a = Array::from_json("2 * var * int32", "[[1, 2, 3], [4]]").unwrap();
//! let b = Array::from_json("2 * 3 * int32", "[[5, 6, 7], [8, 9, 10]]").unwrap();
//! let c = (&a + &b).unwrap();
//! assert_eq!(c.tp().to_string(), "2 * 3 * int32");
//! assert_eq!(c.to_json(), "[[6,8,10],[12,13,14]]");
//! assert_eq!(compute::less(&a, &b).unwrap().to_json(), "[[true,true,true],[true,true,true]]");
//! ```
//!
//! | family | functions |
//! |---|---|
//! | arithmetic | [`add`], [`subtract`], [`multiply`], [`divide`], [`modulo`], [`floor_divide`], [`remainder`], [`pow`], [`negative`], [`abs`] |
//! | math | [`sqrt`], [`exp`], [`log`], [`sin`], [`cos`], [`tan`] |
//! | comparison and logic | [`less`], [`less_equal`], [`equal`], [`not_equal`], [`greater`], [`greater_equal`], [`logical_and`], [`logical_or`], [`logical_not`] |
//! | reductions | [`sum`], [`prod`], [`min`], [`max`], [`mean`], [`all`], [`any`], [`count`], [`argmin`], [`argmax`], [`var`], [`std`](fn@std) |
//! | missing values | [`is_null`], [`fill_null`], [`drop_null`] |
//! | selection | [`where_`] (registered as `where`), [`filter`], [`take`] |
//! | sorting and scans | [`sort`], [`argsort`], [`sort_by`], [`argsort_by`], [`cumsum`], [`cumprod`], [`concatenate`] |
//! | strings | [`find`], [`rfind`], [`count_substring`], [`replace`], [`split`], [`startswith`], [`endswith`], [`contains`], [`concat()`] |
//!
//! Any other registered callable is reachable by name through [`call`].

pub use crate::callable::arith::ops as scalar;

use crate::array::Array;
use crate::callable::lookup;
use crate::callable::reduce::{BuiltinReduction, Reduction};
use crate::callable::strings;
use crate::error::Result;

/// Calls the callable registered as `name` on `args`.
///
/// ```
/// use dynd::{Array, compute};
/// let a = Array::from(vec![1.0f64, 4.0]);
/// assert_eq!(compute::call("sqrt", &[&a]).unwrap().to_json(), "[1.0,2.0]");
/// ```
pub fn call(name: &str, args: &[&Array]) -> Result<Array> {
    lookup(name)?.call(args)
}

pub use crate::callable::arith::faces::*;

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

// ---- reductions ----

macro_rules! reduction_fns {
    ($($f:ident => $kind:ident: $what:literal;)*) => {$(
        #[doc = concat!("The ", $what, " of `a` over `axes` (`None`: all; -1 is the innermost), keeping reduced dims as `1 *` with `keepdims`; missing values are skipped. See [`crate::callable::reduce`] for result types.")]
        pub fn $f(a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
            Reduction::builtin(BuiltinReduction::$kind).apply(a, axes, keepdims)
        }
    )*};
}

reduction_fns! {
    sum => Sum: "sum";
    prod => Prod: "product";
    min => Min: "smallest value";
    max => Max: "largest value";
    mean => Mean: "mean";
    all => All: "logical and (every value non-zero)";
    any => Any: "logical or (some value non-zero)";
    count => Count: "number of present values";
    argmin => ArgMin: "position (int64) of the first smallest value";
    argmax => ArgMax: "position (int64) of the first largest value";
    var => Var: "population variance (ddof 0)";
    std => Std: "population standard deviation (ddof 0)";
}

// ---- missing values ----

/// Whether each element of `x` is missing (`bool`, `x`'s dims; all false
/// when `x`'s element is not an option; one per record for `?{...}`).
///
/// ```
/// use dynd::{Array, compute::is_null};
/// let x = Array::from_json("3 * ?int32", "[1, null, 3]").unwrap();
/// assert_eq!(is_null(&x).unwrap().to_json(), "[false,true,false]");
/// ```
pub fn is_null(x: &Array) -> Result<Array> {
    lookup("is_null")?.call(&[x])
}

/// `x` with its missing elements replaced by `v` (cast to `x`'s value type;
/// `v` broadcasts against `x`). The result drops the `?` (unless `v` is
/// optional too). See [`crate::callable::nulls`].
///
/// ```
/// use dynd::{Array, compute::fill_null};
/// let x = Array::from_json("2 * var * ?int32", "[[1, null], [null]]").unwrap();
/// let r = fill_null(&x, &Array::from(-1i64)).unwrap();
/// assert_eq!((r.tp().to_string(), r.to_json()), ("2 * var * int32".into(), "[[1,-1],[-1]]".into()));
/// ```
pub fn fill_null(x: &Array, v: &Array) -> Result<Array> {
    lookup("fill_null")?.call(&[x, v])
}

/// `x` without its missing elements along the innermost dim, which
/// becomes var (`N * ?T` → `var * T`, `N * M * ?T` → `N * var * T`).
///
/// ```
/// use dynd::{Array, compute::drop_null};
/// let x = Array::from_json("2 * 3 * ?int32", "[[1, null, 3], [null, null, 6]]").unwrap();
/// let r = drop_null(&x).unwrap();
/// assert_eq!((r.tp().to_string(), r.to_json()), ("2 * var * int32".into(), "[[1,3],[6]]".into()));
/// ```
pub fn drop_null(x: &Array) -> Result<Array> {
    lookup("drop_null")?.call(&[x])
}

// ---- sorting, scans, concatenation ----

pub use crate::callable::sort::{SortOptions, concatenate};

/// Each row of `x` along the innermost dim in ascending order, stably;
/// NaNs, then missing values, last. Keeps `x`'s type. See
/// [`crate::callable::sort`] for the order.
///
/// ```
/// use dynd::{Array, compute::sort};
/// let x = Array::from_json("2 * var * int32", "[[3, 1, 2], [5, -1]]").unwrap();
/// assert_eq!(sort(&x).unwrap().to_json(), "[[1,2,3],[-1,5]]");
/// ```
pub fn sort(x: &Array) -> Result<Array> {
    lookup("sort")?.call(&[x])
}

/// The positions (`int64`, within each row along the innermost dim) that
/// sort `x`; equal values keep their order.
///
/// ```
/// use dynd::{Array, compute::argsort};
/// let x = Array::from_json("4 * float64", "[2, NaN, 1, 2]").unwrap();
/// assert_eq!(argsort(&x).unwrap().to_json(), "[2,0,3,1]");
/// ```
pub fn argsort(x: &Array) -> Result<Array> {
    lookup("argsort")?.call(&[x])
}

/// [`sort`] ordered by `options` (descending: largest first, NaNs and
/// missing values still last, still stable).
///
/// ```
/// use dynd::{Array, compute::{SortOptions, sort_by}};
/// let x = Array::from_json("4 * ?int32", "[2, null, 1, 3]").unwrap();
/// let r = sort_by(&x, SortOptions { descending: true }).unwrap();
/// assert_eq!(r.to_json(), "[3,2,1,null]");
/// ```
pub fn sort_by(x: &Array, options: SortOptions) -> Result<Array> {
    crate::callable::sort::sort(options).call(&[x])
}

/// [`argsort`] ordered by `options`.
pub fn argsort_by(x: &Array, options: SortOptions) -> Result<Array> {
    crate::callable::sort::argsort(options).call(&[x])
}

/// The running sum along the innermost dim, typed as [`sum`] is (signed
/// integers and bool → `int64`, unsigned → `uint64`); a missing element
/// stays missing and does not contribute; integers wrap.
///
/// ```
/// use dynd::{Array, compute::cumsum};
/// let x = Array::from_json("2 * var * int32", "[[1, 2, 3], [4]]").unwrap();
/// let r = cumsum(&x).unwrap();
/// assert_eq!((r.tp().to_string(), r.to_json()), ("2 * var * int64".into(), "[[1,3,6],[4]]".into()));
/// ```
pub fn cumsum(x: &Array) -> Result<Array> {
    lookup("cumsum")?.call(&[x])
}

/// The running product along the innermost dim, typed as [`prod`] is;
/// missing elements as in [`cumsum`].
pub fn cumprod(x: &Array) -> Result<Array> {
    lookup("cumprod")?.call(&[x])
}

// ---- strings ----

/// The code point index of the first `sub` in each `s`, or -1 (`int64`).
///
/// ```
/// use dynd::{Array, compute::find};
/// let s = Array::from(vec!["abc", "ababc", "ababab", "abd"]);
/// let r = find(&s, &Array::from("abc")).unwrap();
/// assert_eq!(r.to_json(), "[0,2,-1,-1]");
/// ```
pub fn find(s: &Array, sub: &Array) -> Result<Array> {
    strings::callable(strings::Op::Find).call(&[s, sub])
}

/// The code point index of the last `sub` in each `s`, or -1 (`int64`).
pub fn rfind(s: &Array, sub: &Array) -> Result<Array> {
    strings::callable(strings::Op::RFind).call(&[s, sub])
}

/// The number of non-overlapping `sub` in each `s` (`int64`); registered
/// as `count_substring` (`count` is the reduction counting present values).
pub fn count_substring(s: &Array, sub: &Array) -> Result<Array> {
    strings::callable(strings::Op::Count).call(&[s, sub])
}

/// Every `old` in each `s` replaced by `new` (`string`).
///
/// ```
/// use dynd::{Array, compute::replace};
/// let r = replace(&Array::from("abc"), &Array::from(""), &Array::from("-")).unwrap();
/// assert_eq!(r.as_str().unwrap(), "-a-b-c-");
/// ```
pub fn replace(s: &Array, old: &Array, new: &Array) -> Result<Array> {
    strings::callable(strings::Op::Replace).call(&[s, old, new])
}

/// Each `s` split at every `sep`: one more var dim (`string` →
/// `var * string`, `N * string` → `N * var * string`).
///
/// ```
/// use dynd::{Array, compute::split};
/// let r = split(&Array::from("xaxxbxxxc"), &Array::from("x")).unwrap();
/// assert_eq!(r.tp().to_string(), "var * string");
/// assert_eq!(r.to_json(), r#"["","a","","b","","","c"]"#);
/// ```
pub fn split(s: &Array, sep: &Array) -> Result<Array> {
    strings::callable(strings::Op::Split).call(&[s, sep])
}

/// Whether each `s` starts with `prefix` (`bool`).
pub fn startswith(s: &Array, prefix: &Array) -> Result<Array> {
    strings::callable(strings::Op::StartsWith).call(&[s, prefix])
}

/// Whether each `s` ends with `suffix` (`bool`).
pub fn endswith(s: &Array, suffix: &Array) -> Result<Array> {
    strings::callable(strings::Op::EndsWith).call(&[s, suffix])
}

/// Whether each `s` contains `sub` (`bool`).
pub fn contains(s: &Array, sub: &Array) -> Result<Array> {
    strings::callable(strings::Op::Contains).call(&[s, sub])
}

/// `a` followed by `b`, elementwise with broadcasting (`string`).
///
/// ```
/// use dynd::{Array, compute::concat};
/// let a = Array::from_json("2 * 1 * string", r#"[["a"], ["b"]]"#).unwrap();
/// let b = Array::from(vec!["x", "y"]);
/// assert_eq!(concat(&a, &b).unwrap().to_json(), r#"[["ax","ay"],["bx","by"]]"#);
/// ```
pub fn concat(a: &Array, b: &Array) -> Result<Array> {
    strings::callable(strings::Op::Concat).call(&[a, b])
}

// ---- selection ----

/// `x` where `cond` is true, else `y`, elementwise with broadcasting over
/// fixed and var dims; registered as `where` (a Rust keyword, hence the
/// underscore). The result is the promotion of `x` and `y` (as arithmetic
/// promotes; other types must agree), optional when an argument is:
/// missing where `cond` is, or where the chosen value is. `cond` is bool,
/// or numbers taken by truthiness. See [`crate::callable::select`].
///
/// ```
/// use dynd::{Array, compute::where_};
/// let cond = Array::from_json("2 * var * ?bool", "[[true, null], [false]]").unwrap();
/// let r = where_(&cond, &Array::from(1i32), &Array::from(2.5f64)).unwrap();
/// assert_eq!((r.tp().to_string(), r.to_json()), ("2 * var * ?float64".into(), "[[1.0,null],[2.5]]".into()));
/// ```
pub fn where_(cond: &Array, x: &Array, y: &Array) -> Result<Array> {
    lookup("where")?.call(&[cond, x, y])
}

/// The elements of `x` that `mask` keeps, along the mask's innermost dim,
/// which becomes var (awkward's `x[mask]`): `mask`'s dims are `x`'s outer
/// dims, row by row for var dims (`N * T` by `N * bool` gives `var * T`,
/// `N * var * T` by `N * var * bool` gives `N * var * T`). A missing mask
/// value (`?bool`) drops its element; a mask row of another length than
/// `x`'s is a `Broadcast` error naming the row and both lengths.
///
/// ```
/// use dynd::{Array, compute::filter};
/// let x = Array::from_json("3 * string", r#"["a", "b", "c"]"#).unwrap();
/// let mask = Array::from_json("3 * ?bool", "[true, null, true]").unwrap();
/// let r = filter(&x, &mask).unwrap();
/// assert_eq!((r.tp().to_string(), r.to_json()), ("var * string".into(), r#"["a","c"]"#.into()));
/// ```
pub fn filter(x: &Array, mask: &Array) -> Result<Array> {
    lookup("filter")?.call(&[x, mask])
}

/// The elements of `x` at `idx`, gathered along the dim `idx`'s innermost
/// dim aligns with, row by row (NumPy's `a[idx]`, awkward's jagged
/// `x[idx]`): `(N * T, M * int64)` gives `M * T`, `(N * var * T, N * var *
/// int64)` gives `N * var * T`. Any integer type indexes; negative indices
/// count from the end; one out of range is an `Index` error naming the
/// index, the row and its length; a missing index (`?int64`) gives a missing
/// element (`?T`).
///
/// ```
/// use dynd::{Array, compute::take};
/// let x = Array::from_json("2 * var * int32", "[[1, 2, 3], [4]]").unwrap();
/// let idx = Array::from_json("2 * var * int8", "[[2, -3], [0, 0]]").unwrap();
/// assert_eq!(take(&x, &idx).unwrap().to_json(), "[[3,1],[4,4]]");
/// let e = take(&x, &Array::from_json("2 * var * int8", "[[], [1]]").unwrap()).unwrap_err();
/// assert_eq!(e.message(), "take: index 1 is out of range for row 1 of length 1");
/// ```
pub fn take(x: &Array, idx: &Array) -> Result<Array> {
    lookup("take")?.call(&[x, idx])
}
