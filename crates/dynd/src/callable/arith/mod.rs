//! Arithmetic, comparison, logical and math functions: `add`, `subtract`,
//! `multiply`, `divide`, `modulo`, `negative`, `abs`; `less`,
//! `less_equal`, `equal`, `not_equal`, `greater`, `greater_equal`;
//! `logical_and`, `logical_or`, `logical_not`; `sqrt`, `exp`, `log`,
//! `sin`, `cos`, `tan`, `pow`. Each is registered under that name
//! ([`crate::callable::lookup`]); [`crate::compute`] has them as Rust
//! functions and operators.
//!
//! All are scalar callables: calls lift them over fixed and var dims with
//! broadcasting (see [`crate::callable::elementwise`]).
//!
//! # Type promotion
//!
//! Two numbers are computed in their common type, [`promote`]: the first
//! type, in the order bool < u8 < i8 < u16 < i16 < u32 < i32 < u64 < i64 <
//! u128 < i128 < f16 < f32 < f64 < c64 < c128, that both convert to safely
//! (NumPy's "safe" casting, with int128 and uint128 added). Like NumPy:
//! widths are kept (int8 + int8 is int8); signed with unsigned of the same
//! width goes to the next wider signed type (int8 + uint8 → int16); an
//! integer with a float goes to a float twice the integer's width, at most
//! float64 (int8 + float16 → float16, int16 + float16 → float32, int32 +
//! float32 → float64); any integer with complex\[float32\] of more than two
//! bytes gives complex\[float64\]. **Unlike NumPy**, int64 + uint64 is int128
//! (NumPy has no int128 and gives float64): the result stays exact and
//! integer. int128 + uint128 and uint128 + any signed type, having no wider
//! integer, give float64. As in NumPy, promotion is pairwise and not
//! associative: (int8 + uint8) + float16 is float32, int8 + (uint8 +
//! float16) is float16.
//!
//! Rows are the left argument, columns the right (`b` bool, `c64`
//! complex\[float32\], `c128` complex\[float64\], `bf16` bfloat16:
//! with float16 it gives float32, neither holding the other); printed by
//! [`promotion_table`]:
//!
//! ```text
//!      b    i8   i16  i32  i64  i128 u8   u16  u32  u64  u128 f16  f32  f64  c64  c128 bf16
//! b    b    i8   i16  i32  i64  i128 u8   u16  u32  u64  u128 f16  f32  f64  c64  c128 bf16
//! i8   i8   i8   i16  i32  i64  i128 i16  i32  i64  i128 f64  f16  f32  f64  c64  c128 bf16
//! i16  i16  i16  i16  i32  i64  i128 i16  i32  i64  i128 f64  f32  f32  f64  c64  c128 f32
//! i32  i32  i32  i32  i32  i64  i128 i32  i32  i64  i128 f64  f64  f64  f64  c128 c128 f64
//! i64  i64  i64  i64  i64  i64  i128 i64  i64  i64  i128 f64  f64  f64  f64  c128 c128 f64
//! i128 i128 i128 i128 i128 i128 i128 i128 i128 i128 i128 f64  f64  f64  f64  c128 c128 f64
//! u8   u8   i16  i16  i32  i64  i128 u8   u16  u32  u64  u128 f16  f32  f64  c64  c128 bf16
//! u16  u16  i32  i32  i32  i64  i128 u16  u16  u32  u64  u128 f32  f32  f64  c64  c128 f32
//! u32  u32  i64  i64  i64  i64  i128 u32  u32  u32  u64  u128 f64  f64  f64  c128 c128 f64
//! u64  u64  i128 i128 i128 i128 i128 u64  u64  u64  u64  u128 f64  f64  f64  c128 c128 f64
//! u128 u128 f64  f64  f64  f64  f64  u128 u128 u128 u128 u128 f64  f64  f64  c128 c128 f64
//! f16  f16  f16  f32  f64  f64  f64  f16  f32  f64  f64  f64  f16  f32  f64  c64  c128 f32
//! f32  f32  f32  f32  f64  f64  f64  f32  f32  f64  f64  f64  f32  f32  f64  c64  c128 f32
//! f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  c128 c128 f64
//! c64  c64  c64  c64  c128 c128 c128 c64  c64  c128 c128 c128 c64  c64  c128 c64  c128 c64
//! c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128
//! bf16 bf16 bf16 f32  f64  f64  f64  bf16 f32  f64  f64  f64  f32  f32  f64  c64  c128 bf16
//! ```
//!
//! # Results
//!
//! | function | computes in | result |
//! |---|---|---|
//! | add, subtract, multiply, divide, modulo | the common type | the common type |
//! | negative | the argument's type | the same |
//! | abs | the argument's type | the same; a complex gives its part type (c64 → float32) |
//! | less ... greater_equal | the common type | bool |
//! | logical_and, logical_or | the common type (for truthiness) | bool |
//! | logical_not | the argument's type | bool |
//! | sqrt, exp, log, sin, cos, tan | floats and complex: their type; bool and integers: float64 | the same |
//! | pow | the common type, made float64 when it is bool or an integer | the same |
//!
//! NumPy differences, on purpose: `divide` on integers truncates (it is
//! C's and libdynd's division, not NumPy's true division); `sqrt` and the
//! other math functions give float64 for every integer type (NumPy picks
//! float16 for int8); `pow` on integers gives float64 (NumPy keeps them
//! integers).
//!
//! Per compute type:
//! - **Integers wrap** on overflow in add, subtract, multiply, negative
//!   and abs (two's complement, like NumPy: `int8 127 + 1` is `-128`).
//! - **Integer division** truncates toward zero. Division or modulo by
//!   zero is an `InvalidArgument` error (there is no "division" error kind;
//!   the argument is what is wrong), and `MIN / -1`, whose result does not
//!   fit, an `Overflow` error. `MIN % -1` is 0 (the true remainder).
//! - **modulo** takes the sign of the dividend (C's `%` and `fmod`, as
//!   libdynd), so that `divide(a, b) * b + modulo(a, b) == a` for integers:
//!   `-7 % 3` is `-1`, `7 % -3` is `1`. (NumPy's `%` floors instead.)
//!   Complex modulo is a `Type` error.
//! - **Floats** follow IEEE 754 (division by zero gives ±inf or NaN, no
//!   error); float16 computes in float32 and rounds once.
//! - **bool**: add is logical or and multiply logical and (as NumPy);
//!   subtract, divide, modulo and negative are `Type` errors (NumPy rejects
//!   subtract and negative too); abs is the identity.
//! - Comparisons and logical functions: see [below](self#comparisons).
//! - Not supported (a `Type` error): option types (`?int32`; no missing
//!   value propagation yet), `fixed_string`, `char` and structs — cast to a
//!   supported type first.
//!
//! An error stops the call. The output is then partly written: integer
//! division checks a chunk of 256 elements before computing it, so the
//! chunks before the failing one hold results and it does not (and when
//! the call ran in parallel, other threads' rows may hold results too).
//!
//! # Comparisons
//!
//! Numbers compare in their common type: false < true, IEEE 754 for floats
//! (NaN is unordered), complex numbers only for `equal`/`not_equal`.
//! `string` with `string` and `bytes` with `bytes` compare lexicographically
//! by bytes — code point order for utf-8 — so `"abcd" < "abcde"`. The
//! comparisons are overload sets ([`DispatchBuilder`]): numbers, strings,
//! bytes; [`comparison_overloads`] gives one to extend with more.
//!
//! # How it runs
//!
//! There is one same-type kernel per function and compute type, never one
//! per pair of argument types. When an argument's type is not the compute
//! type, one generic wrapper kernel converts it in chunks of 256 elements
//! into a buffer on its own stack, through a child assignment kernel, and
//! calls the same-type kernel on the buffers. Same-type kernels take a
//! plain slice loop when the data is contiguous and aligned (or an operand
//! is broadcast), which LLVM vectorises.

mod binary;
mod compare;
mod kernels;
mod math;
mod promote;
mod unary;

pub use kernels::CHUNK;
pub use promote::{
    LATTICE, NUMERIC, inexact, promote, promotion_pairs, promotion_table, promotion_table_by,
    safe_cast, short_name,
};
pub(crate) use unary::Truthy;

/// The scalar operations behind the arithmetic callables, for code that
/// computes on Rust values with the same semantics (dynd-ops does): one
/// scalar kernel, two faces. Re-exported as [`crate::compute::scalar`].
///
/// An operation is a type; [`BinaryOp::apply`](kernels::BinaryOp::apply) is total (never panics) and
/// [`BinaryOp::bad`](kernels::BinaryOp::bad) says, branch-free, which pairs are errors, with
/// [`BinaryOp::error`](kernels::BinaryOp::error) the error for such a pair: integer division or
/// remainder by zero is `InvalidArgument`, `MIN / -1` is `Overflow`;
/// integers otherwise wrap. Which types an operation takes is which
/// `BinaryOp<T>` impls it has (no `Subtract` on bool, no `Modulo` on complex).
/// Reduction result types are [`NativeType::Sum`](crate::types::NativeType::Sum)
/// and [`NativeType::Mean`](crate::types::NativeType::Mean).
///
/// ```
/// use dynd::compute::scalar::{BinaryOp, Divide};
/// use dynd::ErrorKind;
/// assert_eq!(<Divide as BinaryOp<i32>>::apply(7, 2), 3);
/// assert!(<Divide as BinaryOp<i32>>::bad(7, 0));
/// assert_eq!(<Divide as BinaryOp<i8>>::error(i8::MIN, -1).kind(), ErrorKind::Overflow);
/// assert!(!<Divide as BinaryOp<f64>>::bad(1.0, 0.0));
/// ```
pub mod ops {
    pub use super::binary::{Add, Divide, Modulo, Multiply, Subtract};
    pub use super::kernels::{BinaryOp, UnaryOp};
    pub use super::math::Pow;
    pub use super::unary::{Abs, Negative};
}

use super::dispatch::DispatchBuilder;
use super::{Callable, CallableImpl, type_list};
use crate::error::{Error, Result};
use crate::kernels::{CKernelBuilder, KernelArgs};
use crate::types::{BuiltinType, CallableSignature, Type};
use kernels::CoreKernel;
use std::collections::BTreeMap;
use std::pin::Pin;

/// The functions of this family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `a + b`.
    Add,
    /// `a - b`.
    Subtract,
    /// `a * b`.
    Multiply,
    /// `a / b` (integers truncate).
    Divide,
    /// `a % b` (sign of the dividend).
    Modulo,
    /// `-a`.
    Negative,
    /// `|a|`.
    Abs,
    /// `a < b`.
    Less,
    /// `a <= b`.
    LessEqual,
    /// `a == b`.
    Equal,
    /// `a != b`.
    NotEqual,
    /// `a > b`.
    Greater,
    /// `a >= b`.
    GreaterEqual,
    /// `a and b` (truthiness).
    LogicalAnd,
    /// `a or b` (truthiness).
    LogicalOr,
    /// `not a` (truthiness).
    LogicalNot,
    /// Square root.
    Sqrt,
    /// `e^a`.
    Exp,
    /// Natural logarithm.
    Log,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Tangent.
    Tan,
    /// `a^b`.
    Pow,
}

impl Op {
    /// Every function, in registration order.
    pub const ALL: [Op; 23] = [
        Op::Add,
        Op::Subtract,
        Op::Multiply,
        Op::Divide,
        Op::Modulo,
        Op::Negative,
        Op::Abs,
        Op::Less,
        Op::LessEqual,
        Op::Equal,
        Op::NotEqual,
        Op::Greater,
        Op::GreaterEqual,
        Op::LogicalAnd,
        Op::LogicalOr,
        Op::LogicalNot,
        Op::Sqrt,
        Op::Exp,
        Op::Log,
        Op::Sin,
        Op::Cos,
        Op::Tan,
        Op::Pow,
    ];

    /// Its registered name (`"add"`, `"less_equal"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Subtract => "subtract",
            Op::Multiply => "multiply",
            Op::Divide => "divide",
            Op::Modulo => "modulo",
            Op::Negative => "negative",
            Op::Abs => "abs",
            Op::Less => "less",
            Op::LessEqual => "less_equal",
            Op::Equal => "equal",
            Op::NotEqual => "not_equal",
            Op::Greater => "greater",
            Op::GreaterEqual => "greater_equal",
            Op::LogicalAnd => "logical_and",
            Op::LogicalOr => "logical_or",
            Op::LogicalNot => "logical_not",
            Op::Sqrt => "sqrt",
            Op::Exp => "exp",
            Op::Log => "log",
            Op::Sin => "sin",
            Op::Cos => "cos",
            Op::Tan => "tan",
            Op::Pow => "pow",
        }
    }

    /// The function named `name`, if it is one of these.
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Its number of arguments.
    pub fn arity(self) -> usize {
        match self {
            Op::Negative
            | Op::Abs
            | Op::LogicalNot
            | Op::Sqrt
            | Op::Exp
            | Op::Log
            | Op::Sin
            | Op::Cos
            | Op::Tan => 1,
            _ => 2,
        }
    }

    /// `true` for the six comparisons.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            Op::Less | Op::LessEqual | Op::Equal | Op::NotEqual | Op::Greater | Op::GreaterEqual
        )
    }

    /// `true` for the functions that compute in a float or complex type
    /// (sqrt, exp, log, sin, cos, tan, pow).
    pub fn is_math(self) -> bool {
        matches!(
            self,
            Op::Sqrt | Op::Exp | Op::Log | Op::Sin | Op::Cos | Op::Tan | Op::Pow
        )
    }

    /// The same-type kernel for compute type `c`, if this function has one.
    fn core(self, c: BuiltinType) -> Option<CoreKernel> {
        use compare::{Equal, Greater, GreaterEqual, Less, LessEqual, NotEqual};
        match self {
            Op::Add => binary::add(c),
            Op::Subtract => binary::subtract(c),
            Op::Multiply => binary::multiply(c),
            Op::Divide => binary::divide(c),
            Op::Modulo => binary::modulo(c),
            Op::Negative => unary::negative(c),
            Op::Abs => unary::abs(c),
            Op::Less => compare::order::<Less>(c),
            Op::LessEqual => compare::order::<LessEqual>(c),
            Op::Equal => compare::equality::<Equal>(c),
            Op::NotEqual => compare::equality::<NotEqual>(c),
            Op::Greater => compare::order::<Greater>(c),
            Op::GreaterEqual => compare::order::<GreaterEqual>(c),
            Op::LogicalAnd => compare::logical_and(c),
            Op::LogicalOr => compare::logical_or(c),
            Op::LogicalNot => unary::logical_not(c),
            Op::Sqrt => math::sqrt(c),
            Op::Exp => math::exp(c),
            Op::Log => math::log(c),
            Op::Sin => math::sin(c),
            Op::Cos => math::cos(c),
            Op::Tan => math::tan(c),
            Op::Pow => math::pow(c),
        }
    }

    /// Why this function has no kernel for `c`.
    fn undefined(self, c: BuiltinType) -> Error {
        let why = match (self, c) {
            (_, BuiltinType::Bool) => {
                "; NumPy rejects it too — cast to an integer type, or use a logical function"
            }
            (Op::Modulo, _) => ": complex numbers have no remainder",
            (_, _) if self.is_comparison() => {
                ": complex numbers have no order (equal and not_equal work)"
            }
            _ => "",
        };
        Error::type_error(format!(
            "{} is not defined for {c} arguments{why}",
            self.name()
        ))
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One function of this family on numbers.
struct Arith {
    op: Op,
    sig: Type,
}

impl Arith {
    fn new(op: Op) -> Arith {
        let ret = if op.is_comparison()
            || matches!(op, Op::LogicalAnd | Op::LogicalOr | Op::LogicalNot)
        {
            Type::bool()
        } else {
            Type::any()
        };
        let sig = Type::callable(CallableSignature {
            positional: vec![Type::any(); op.arity()],
            keywords: Vec::new(),
            ret,
        });
        Arith { op, sig }
    }

    /// The compute type and the same-type kernel for element types `args`.
    fn plan(&self, args: &[Type]) -> Result<(BuiltinType, CoreKernel)> {
        let op = self.op;
        let list = || type_list(args);
        if args.len() != op.arity() {
            return Err(Error::type_error(format!(
                "{op} takes {} argument{}, got {} ({})",
                op.arity(),
                if op.arity() == 1 { "" } else { "s" },
                args.len(),
                list()
            )));
        }
        let mut types = [BuiltinType::Void; 2];
        for (slot, t) in types.iter_mut().zip(args) {
            match t.as_builtin().filter(|b| promote::is_numeric(*b)) {
                Some(b) => *slot = b,
                None => {
                    let what = if op.is_comparison() {
                        "two numbers, two strings or two bytes"
                    } else if op.arity() == 1 {
                        "a number (bool, integer, float or complex)"
                    } else {
                        "numbers (bool, integer, float or complex)"
                    };
                    return Err(Error::type_error(format!(
                        "{op} takes {what}; got ({}): {t} is not supported",
                        list()
                    )));
                }
            }
        }
        let mut c = if op.arity() == 1 {
            types[0]
        } else {
            promote(types[0], types[1]).ok_or_else(|| {
                Error::type_error(format!(
                    "{op}: {} and {} have no common type",
                    types[0], types[1]
                ))
            })?
        };
        if op.is_math() {
            c = inexact(c);
        }
        let k = op.core(c).ok_or_else(|| op.undefined(c))?;
        Ok((c, k))
    }
}

impl CallableImpl for Arith {
    fn name(&self) -> &str {
        self.op.name()
    }

    fn signature(&self) -> &Type {
        &self.sig
    }

    fn resolve(&self, args: &[Type]) -> Result<Type> {
        let (_, k) = self.plan(args)?;
        Ok(Type::builtin(k.out))
    }

    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        self.check_args(&args)?;
        let (c, k) = self.plan(args.src_tps)?;
        // SAFETY: (1) and (2) of CallableImpl::instantiate are build's.
        unsafe {
            kernels::build(
                ckb,
                offset,
                args.req,
                c,
                k.emplace,
                args.src_tps,
                args.src_metas,
            )
        }
    }
}

/// The callable of `op` on numbers alone (no string overloads): what
/// [`crate::callable::lookup`] gives for the functions that are not
/// comparisons, and the numeric overload of the comparisons.
pub fn numeric(op: Op) -> Callable {
    Callable::new(Arith::new(op))
}

/// The overload set of comparison `op`: numbers `(Any, Any) -> bool`,
/// `(string, string) -> bool` and `(bytes, bytes) -> bool`. Add overloads
/// and register the result to extend the built-in function; a more
/// specific overload wins, and an ambiguous one is refused by `add`.
///
/// ```
/// use dynd::Array;
/// use dynd::callable::{Callable, arith::{Op, comparison_overloads}};
///
/// // Compare int32 values by absolute value.
/// let mut set = comparison_overloads(Op::Less).unwrap();
/// set.add(Callable::from_fn2("abs_less", |a: i32, b: i32| a.abs() < b.abs())).unwrap();
/// let less = set.build();
/// let a = Array::from(vec![-3i32, 1]);
/// let b = Array::from(vec![2i32, -2]);
/// assert_eq!(less.call(&[&a, &b]).unwrap().to_json(), "[false,true]");
/// // Other types still take the built-in overloads.
/// let s = Array::from(vec!["abcd"]);
/// let t = Array::from(vec!["abcde"]);
/// assert_eq!(less.call(&[&s, &t]).unwrap().to_json(), "[true]");
/// ```
///
/// Errors: `InvalidArgument` when `op` is not a comparison.
pub fn comparison_overloads(op: Op) -> Result<DispatchBuilder> {
    use compare::{Equal, Greater, GreaterEqual, Less, LessEqual, NotEqual, TextCompare};
    if !op.is_comparison() {
        return Err(Error::invalid_argument(format!(
            "{op} is not a comparison (less, less_equal, equal, not_equal, greater, greater_equal)"
        )));
    }
    let name = op.name();
    let text = |tp: Type| -> Callable {
        match op {
            Op::Less => Callable::new(TextCompare::<Less>::new(name, tp)),
            Op::LessEqual => Callable::new(TextCompare::<LessEqual>::new(name, tp)),
            Op::Equal => Callable::new(TextCompare::<Equal>::new(name, tp)),
            Op::NotEqual => Callable::new(TextCompare::<NotEqual>::new(name, tp)),
            Op::Greater => Callable::new(TextCompare::<Greater>::new(name, tp)),
            _ => Callable::new(TextCompare::<GreaterEqual>::new(name, tp)),
        }
    };
    let mut set = DispatchBuilder::new(name);
    set.add(numeric(op))?
        .add(text(Type::string()))?
        .add(text(Type::bytes()))?;
    Ok(set)
}

/// The callable registered for `op`: [`comparison_overloads`] built for
/// the comparisons, [`numeric`] for the rest.
pub fn callable(op: Op) -> Callable {
    if op.is_comparison() {
        // The built-in overloads never overlap ambiguously (a unit test
        // checks); fall back to numbers alone if that were ever broken.
        comparison_overloads(op).map_or_else(|_| numeric(op), |set| set.build())
    } else {
        numeric(op)
    }
}

/// Registers this family's built-in callables.
pub(crate) fn register(map: &mut BTreeMap<String, Callable>) {
    for op in Op::ALL {
        map.insert(op.name().to_string(), callable(op));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_overload_sets_build() {
        for op in Op::ALL.into_iter().filter(|op| op.is_comparison()) {
            comparison_overloads(op).unwrap();
        }
        assert!(comparison_overloads(Op::Add).is_err());
    }

    #[test]
    fn names_round_trip() {
        for op in Op::ALL {
            assert_eq!(Op::from_name(op.name()), Some(op));
        }
    }

    #[test]
    fn every_op_has_kernels_for_its_compute_types() {
        // Every (op, type) the resolver can reach has a kernel or a Type
        // error; math functions always have one.
        for op in Op::ALL {
            for &a in NUMERIC.iter() {
                let args: Vec<Type> = vec![Type::builtin(a); op.arity()];
                let r = Arith::new(op).plan(&args);
                if op.is_math() || matches!(op, Op::Add | Op::Multiply | Op::Abs) {
                    assert!(r.is_ok(), "{op} {a}");
                }
                if let Err(e) = r {
                    assert_eq!(e.kind(), crate::ErrorKind::Type, "{op} {a}");
                }
            }
        }
    }
}
