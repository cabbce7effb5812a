//! Arithmetic, comparison, logical and math functions: `add`, `subtract`,
//! `multiply`, `divide`, `modulo`, `floor_divide`, `remainder`,
//! `negative`, `abs`; `less`,
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
//! | add, subtract, multiply, divide, modulo, floor_divide, remainder | the common type | the common type |
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
//! - **Missing values**: `?T` arguments give `?R`, missing where any
//!   argument is missing (`?int32 + int32` is `?int32`; comparisons give
//!   `?bool`); `logical_and` and `logical_or` use Kleene logic (`false and
//!   missing` is false, `true or missing` is true). A missing element never
//!   raises an error (a zero divisor under a missing dividend is not a
//!   division by zero). See [`crate::callable::missing`].
//! - Not supported (a `Type` error): `fixed_string`, `char` and structs —
//!   cast to a supported type first.
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
//!
//! # Adding a function
//!
//! One file: the family's (`binary.rs`, `unary.rs`, `compare.rs`,
//! `math.rs`). Write the scalar operation — a type with a
//! [`BinaryOp<T>`](ops::BinaryOp) or [`UnaryOp<T>`](ops::UnaryOp) impl for
//! each type it takes — and one entry in that file's `functions!` block: its
//! doc, name and arguments, its [`Kind`], and which compute types get a
//! kernel (`with_native!(c, signed unsigned half ieee => |T| ...)`). The
//! registry ([`crate::callable::lookup`], the CLI, `dynd_callable_lookup`),
//! promotion, lifting, broadcasting and the `compute::` function all come
//! from that entry (`floor_divide` and `remainder` were added this way).

/// Declares a family's functions: for each, its doc, name and arguments,
/// its [`Kind`], optionally a note for the types it is not defined for, and
/// the same-type kernel per compute type (`|c| -> Option<CoreKernel>`);
/// comparisons also name their [`compare::Cmp`]. It makes the family's
/// `FUNCTIONS` table (which the registry and [`functions`] read) and its
/// `faces` module, the functions on arrays that [`crate::compute`]
/// re-exports. Adding a function to a family is one entry here, in the
/// family's file, beside its scalar operation.
macro_rules! functions {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident),+) $kind:ident $(($note:expr))? $([$cmp:ty])? $({$missing:ident})? => $core:expr;
    )*) => {
        pub(super) const FUNCTIONS: &[super::Function] = &[$(
            super::Function {
                name: stringify!($name),
                arity: [$(stringify!($arg)),+].len(),
                kind: super::Kind::$kind,
                note: functions!(@note $($note)?),
                core: $core,
                text: functions!(@text $($cmp)?),
                missing: functions!(@missing $($missing)?),
            },
        )*];

        /// This family's functions on arrays ([`crate::compute`] re-exports
        /// them): each calls the callable registered under its name.
        pub mod faces {
            use crate::array::Array;
            use crate::error::Result;
            $(
                $(#[$doc])*
                pub fn $name($($arg: &Array),+) -> Result<Array> {
                    crate::callable::lookup(stringify!($name))?.call(&[$($arg),+])
                }
            )*
        }
    };
    (@note) => { "" };
    (@note $note:expr) => { $note };
    (@missing) => { crate::callable::missing::Missing::Propagate };
    (@missing $m:ident) => { crate::callable::missing::Missing::$m };
    (@text) => { None };
    (@text $cmp:ty) => { Some(super::compare::TextCompare::<$cmp>::callable) };
}

mod binary;
mod compare;
mod kernels;
mod math;
mod promote;
mod unary;

pub use kernels::{CHUNK, DeviceOp};
pub use promote::{
    LATTICE, NUMERIC, inexact, promote, promotion_pairs, promotion_table, promotion_table_by,
    safe_cast, short_name,
};

/// The functions of this family on arrays, re-exported by
/// [`crate::compute`] (`compute::add`, `compute::sqrt`, ...).
pub mod faces {
    pub use super::binary::faces::*;
    pub use super::compare::faces::*;
    pub use super::math::faces::*;
    pub use super::unary::faces::*;
}

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
use super::missing::Missing;
use super::{Callable, CallableImpl, type_list};
use crate::error::{Error, Result};
use crate::kernels::{CKernelBuilder, KernelArgs};
use crate::types::{BuiltinType, CallableSignature, Type};
use kernels::CoreKernel;
use std::collections::BTreeMap;
use std::pin::Pin;

/// How a function's compute and result types follow from its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Computes in the arguments' common type and gives it (`add`, `abs`).
    Arithmetic,
    /// Computes in the common type made inexact ([`inexact`]: float64 for
    /// bool and integers) and gives it (`sqrt`, `pow`).
    Math,
    /// Compares in the common type and gives bool; registered as an
    /// overload set with string and bytes ([`comparison_overloads`]).
    Comparison,
    /// Takes truthiness in the common type and gives bool (`logical_and`).
    Logical,
}

/// One function of this family: what the registry, the callable and the
/// `compute` face are made from (each family's file declares its own).
#[derive(Debug)]
pub struct Function {
    name: &'static str,
    arity: usize,
    kind: Kind,
    /// What the "not defined" error adds for non-bool types without a
    /// kernel (`": complex numbers have no remainder"`).
    note: &'static str,
    /// The same-type kernel for a compute type, if the function has one.
    core: fn(BuiltinType) -> Option<CoreKernel>,
    /// Comparisons: the callable comparing two `string`s (or `bytes`).
    text: Option<fn(&str, Type) -> Callable>,
    /// Its result where an argument is missing.
    missing: Missing,
}

/// Every function of this family, family by family.
pub fn functions() -> impl Iterator<Item = &'static Function> {
    [
        binary::FUNCTIONS,
        unary::FUNCTIONS,
        compare::FUNCTIONS,
        math::FUNCTIONS,
    ]
    .into_iter()
    .flatten()
}

/// The function registered as `name`, if it is one of these.
pub fn function(name: &str) -> Option<&'static Function> {
    functions().find(|f| f.name == name)
}

impl Function {
    /// Its registered name (`"add"`, `"less_equal"`, ...).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Its number of arguments.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// How its types follow from its arguments.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// `true` for the six comparisons.
    pub fn is_comparison(&self) -> bool {
        self.kind == Kind::Comparison
    }

    /// `true` for the functions that compute in a float or complex type.
    pub fn is_math(&self) -> bool {
        self.kind == Kind::Math
    }

    /// The device form of this function for element types `args` (DESIGN
    /// §14): the compute type the host would use (the same promotion), and
    /// the operation's CUDA C for it, written beside its Rust body.
    ///
    /// # Errors
    /// The host's `Type` errors for `args`, and a `Type` error when the
    /// compute type or the operation has no CUDA C yet.
    ///
    /// ```
    /// use dynd::callable::arith::function;
    /// use dynd::types::{BuiltinType, Type};
    /// let add = function("add").unwrap();
    /// let t = |b| Type::builtin(b);
    /// let op = add.device_op(&[t(BuiltinType::Int32), t(BuiltinType::Float32)]).unwrap();
    /// assert_eq!((op.compute, op.expr), (BuiltinType::Float64, "a + b"));
    /// assert!(add.device_op(&[t(BuiltinType::Float16), t(BuiltinType::Float16)]).is_err());
    /// ```
    pub fn device_op(&'static self, args: &[Type]) -> Result<DeviceOp> {
        let (c, k) = Arith::new(self).plan(args)?;
        k.device.ok_or_else(|| {
            Error::type_error(format!(
                "{self} in {c} does not run on the device yet: the device computes in bool, \
                 integers of 8 to 64 bits, float32 and float64"
            ))
        })
    }

    /// What the function gives where an argument is missing.
    pub fn missing(&self) -> Missing {
        self.missing
    }

    /// Why this function has no kernel for `c`.
    fn undefined(&self, c: BuiltinType) -> Error {
        let why = match c {
            BuiltinType::Bool => {
                "; NumPy rejects it too — cast to an integer type, or use a logical function"
            }
            _ => self.note,
        };
        Error::type_error(format!(
            "{} is not defined for {c} arguments{why}",
            self.name
        ))
    }
}

impl std::fmt::Display for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// One function of this family on numbers.
struct Arith {
    op: &'static Function,
    sig: Type,
}

impl Arith {
    fn new(op: &'static Function) -> Arith {
        let ret = match op.kind {
            Kind::Comparison | Kind::Logical => Type::bool(),
            Kind::Arithmetic | Kind::Math => Type::any(),
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
        let k = (op.core)(c).ok_or_else(|| op.undefined(c))?;
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

    fn missing(&self) -> Missing {
        self.op.missing
    }

    /// Its kernels are plain functions of the element types.
    fn reuses_kernels(&self) -> bool {
        true
    }

    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        let (c, k) = self.plan(args.src_tps)?;
        // SAFETY: (1) and (2) of CallableImpl::instantiate are build's.
        unsafe { build(ckb, offset, &args, c, k) }
    }

    /// The binary operations that cannot fail, on two arguments of their
    /// compute type: the kernel writes NA where an optional argument is
    /// NA, in its own loop.
    unsafe fn instantiate_propagating(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
        optional: &[bool],
    ) -> Result<Option<usize>> {
        let (c, k) = self.plan(args.src_tps)?;
        let (Some(emplace_na), &[a, b]) = (k.emplace_na, optional) else {
            return Ok(None);
        };
        if args.src_tps.iter().any(|t| t.as_builtin() != Some(c)) {
            // A promotion first: the generic wrapper.
            return Ok(None);
        }
        // SAFETY: (1) of CallableImpl::instantiate: `offset` is free; the
        // kernel reads two `c` values per element (an option of `c` lies
        // as a `c`) and writes one of its result type.
        unsafe { emplace_na(ckb, offset, args.req, [a, b]) }.map(Some)
    }

    /// The check and the build from one plan (a small call's time is
    /// mostly this bookkeeping): refuses what `check_args` refuses, with
    /// its errors — the plan's, then a result other than `dst_tp`.
    unsafe fn check_and_instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        args.check_counts(self.name())?;
        let (c, k) = self.plan(args.src_tps)?;
        super::check_result(self.name(), &args, &Type::builtin(k.out))?;
        // SAFETY: (1) and (2) of CallableImpl::instantiate are the caller's;
        // the types are ones resolve accepts (the plan succeeded, and gives
        // `dst_tp`).
        unsafe { build(ckb, offset, &args, c, k) }
    }
}

/// Builds the kernel of plan `(c, k)` for `args`.
///
/// # Safety
/// As [`CallableImpl::instantiate`], with `(c, k)` the plan of
/// `args.src_tps`.
unsafe fn build(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: &KernelArgs<'_>,
    c: BuiltinType,
    k: CoreKernel,
) -> Result<usize> {
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

/// The callable of `op` on numbers alone (no string overloads): what
/// [`crate::callable::lookup`] gives for the functions that are not
/// comparisons, and the numeric overload of the comparisons.
pub fn numeric(op: &'static Function) -> Callable {
    Callable::new(Arith::new(op))
}

/// The overload set of comparison `op`: numbers `(Any, Any) -> bool`,
/// `(string, string) -> bool` and `(bytes, bytes) -> bool`. Add overloads
/// and register the result to extend the built-in function; a more
/// specific overload wins, and an ambiguous one is refused by `add`.
///
/// ```
/// use dynd::Array;
/// use dynd::callable::{Callable, arith::{comparison_overloads, function}};
///
/// // Compare int32 values by absolute value.
/// let mut set = comparison_overloads(function("less").unwrap()).unwrap();
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
pub fn comparison_overloads(op: &'static Function) -> Result<DispatchBuilder> {
    let Some(text) = op.text.filter(|_| op.is_comparison()) else {
        return Err(Error::invalid_argument(format!(
            "{op} is not a comparison (less, less_equal, equal, not_equal, greater, greater_equal)"
        )));
    };
    let mut set = DispatchBuilder::new(op.name);
    set.add(numeric(op))?
        .add(text(op.name, Type::string()))?
        .add(text(op.name, Type::bytes()))?;
    Ok(set)
}

/// The callable registered for `op`: [`comparison_overloads`] built for
/// the comparisons, [`numeric`] for the rest.
pub fn callable(op: &'static Function) -> Callable {
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
    for op in functions() {
        map.insert(op.name.to_string(), callable(op));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_overload_sets_build() {
        let comparisons: Vec<_> = functions().filter(|op| op.is_comparison()).collect();
        assert_eq!(comparisons.len(), 6);
        for op in comparisons {
            comparison_overloads(op).unwrap();
        }
        assert!(comparison_overloads(function("add").unwrap()).is_err());
    }

    #[test]
    fn names_are_unique_and_found() {
        let names: Vec<&str> = functions().map(|f| f.name()).collect();
        for (i, name) in names.iter().enumerate() {
            assert!(!names[..i].contains(name), "{name} twice");
            assert!(std::ptr::eq(
                function(name).unwrap(),
                functions().nth(i).unwrap()
            ));
        }
        assert!(function("hypot").is_none());
    }

    #[test]
    fn every_op_has_kernels_for_its_compute_types() {
        // Every (op, type) the resolver can reach has a kernel or a Type
        // error; math functions always have one.
        for op in functions() {
            for &a in NUMERIC.iter() {
                let args: Vec<Type> = vec![Type::builtin(a); op.arity()];
                let r = Arith::new(op).plan(&args);
                if op.is_math() || ["add", "multiply", "abs"].contains(&op.name()) {
                    assert!(r.is_ok(), "{op} {a}");
                }
                if let Err(e) = r {
                    assert_eq!(e.kind(), crate::ErrorKind::Type, "{op} {a}");
                }
            }
        }
    }

    #[test]
    fn every_host_kernel_of_a_device_type_has_its_cuda_c() {
        // One home per operation (DESIGN §14): where the host has a kernel
        // for a compute type the device computes in, the device has the
        // operation's CUDA C too, and nowhere else.
        let mut count = 0;
        for op in functions() {
            for &c in NUMERIC.iter() {
                let Some(k) = (op.core)(c) else { continue };
                match (c.cuda_c(), k.device) {
                    (Some(_), Some(d)) => {
                        assert_eq!((d.compute, d.out), (c, k.out), "{op} {c}");
                        assert!(!d.expr.is_empty(), "{op} {c}");
                        count += 1;
                    }
                    (None, None) => {}
                    (Some(_), None) => panic!("{op} has a host kernel for {c} but no CUDA C"),
                    (None, Some(_)) => panic!("{op} has CUDA C for {c}, which the device lacks"),
                }
            }
        }
        assert!(count > 200, "{count}");
        let e = function("sqrt")
            .unwrap()
            .device_op(&[Type::builtin(BuiltinType::Complex64)])
            .unwrap_err();
        assert!(e.message().contains("does not run on the device"), "{e}");
    }
}
