//! Reductions: sum, prod, min, max, mean, all, any, count, argmin, argmax,
//! var, std, and reductions built from any binary callable (DESIGN §6).
//! Built-in reductions skip missing values.
//!
//! ```
//! use dynd::Array;
//! use dynd::compute as reduce;
//! let a = Array::from_json("2 * 3 * float64", "[[1.5, 2, 7], [-2.25, 7, 2.125]]").unwrap();
//! assert_eq!(reduce::sum(&a, Some(&[1]), false).unwrap().to_json(), "[10.5,6.875]");
//! assert_eq!(reduce::sum(&a, Some(&[-1]), true).unwrap().tp().to_string(), "2 * 1 * float64");
//! let v = Array::from_json("3 * var * int32", "[[1, 2], [3, 4, 5], [6, 7, 8, 9]]").unwrap();
//! assert_eq!(reduce::sum(&v, Some(&[1]), false).unwrap().to_json(), "[3,12,30]");
//! assert_eq!(reduce::max(&v, None, false).unwrap().to_json(), "9");
//! // Missing values are skipped; an extent with nothing left is missing.
//! let m = Array::from_json("3 * var * ?float64", "[[1, null, 3], [], [null]]").unwrap();
//! let r = reduce::max(&m, Some(&[-1]), false).unwrap();
//! assert_eq!((r.tp().to_string(), r.to_json()), ("3 * ?float64".into(), "[3.0,null,null]".into()));
//! assert_eq!(reduce::sum(&m, Some(&[-1]), false).unwrap().to_json(), "[4.0,0.0,0.0]");
//! assert_eq!(reduce::argmax(&m, Some(&[-1]), false).unwrap().to_json(), "[2,null,null]");
//! // Unequal rows combine position by position, for every reduction.
//! let u = Array::from_json("2 * var * int32", "[[1, 2, 3], [4]]").unwrap();
//! assert_eq!(reduce::sum(&u, Some(&[0]), false).unwrap().to_json(), "[5,2,3]");
//! assert_eq!(reduce::mean(&u, Some(&[0]), false).unwrap().to_json(), "[2.5,2.0,3.0]");
//! let w = Array::from_json("3 * var * int32", "[[1, 5, 3], [4], [9, 0]]").unwrap();
//! assert_eq!(reduce::argmax(&w, Some(&[0]), false).unwrap().to_json(), "[2,0,0]");
//! ```
//!
//! # API
//! - Functions on arrays, in [`crate::compute`]: `sum`, `prod`, `min`,
//!   `max`, `mean`, `all`, `any`, `count`, `argmin`, `argmax`, `var`, `std`
//!   take `axes` (`None`: every axis; negative ones count from the
//!   innermost) and `keepdims`.
//! - [`Reduction`]: a reduction with its options; [`Reduction::with`]
//!   gives a [`Callable`] for one configuration (options reach
//!   `instantiate` through it). The registry holds every
//!   [`BuiltinReduction`] by its name (`"sum"`, …, `"argmax"`, `"std"`)
//!   over every axis, without keepdims.
//! - [`reduce_with`]: a reduction from any binary callable `(T, T) -> T`
//!   and an optional identity.
//!
//! Reduction callables are not scalar ([`CallableImpl::is_scalar`] is
//! false): they resolve and instantiate on whole array types.
//!
//! # Result types
//!
//! | source | sum, prod | min, max | mean | all, any | count | argmin, argmax | var, std |
//! |---|---|---|---|---|---|---|---|
//! | bool | int64 | bool | float64 | bool | int64 | int64 | float64 |
//! | int8 … int64 | int64 | same | float64 | bool | int64 | int64 | float64 |
//! | uint8 … uint64 | uint64 | same | float64 | bool | int64 | int64 | float64 |
//! | int128, uint128 | same | same | float64 | bool | int64 | int64 | float64 |
//! | float16 | float16 | float16 | float64 | bool | int64 | int64 | float64 |
//! | float32, float64 | same | same | float64 | bool | int64 | int64 | float64 |
//! | `complex[float32]`, `complex[float64]` | same | a `Type` error | `complex[float64]` | bool | int64 | a `Type` error | a `Type` error |
//!
//! An option source `?T` reduces as `T` with its missing values skipped.
//! min, max, argmin, argmax, mean, var and std give `?R` (the table's `R`)
//! when the source is optional or a reduced dim is var: an output element
//! with nothing left to reduce (an empty var row, only missing values) is
//! missing. sum, prod, count, all and any are never optional: what has
//! nothing left is their identity.
//!
//! Like NumPy: integer sums and products wrap on overflow; float16 sums
//! and products accumulate in float32 within each run and are rounded to
//! float16 when stored; min and max propagate NaN (a NaN in `?float64` is a
//! present value; only the NA payload is missing), and argmin and argmax
//! give the first NaN; all and any test values against zero (NaN is true).
//! argmin and argmax give the position of the first best value within the
//! reduced extent, counting missing values' positions too; over several
//! reduced dims, in C order (NumPy's flat index; see "Var dims" for
//! ragged extents). var and std are the
//! population ones (ddof 0). Other element types (strings, structs,
//! options of those) are a `Type` error naming the type.
//!
//! A source that is not optional but holds the NA bit pattern (a float64
//! NaN with R's NA payload) reads as missing in an optional result.
//!
//! # Identities and empty extents
//! sum 0, prod 1, all true, any false, count 0: an empty extent reduces to
//! them (`sum` of `0 * int32` is 0). min, max, argmin and argmax have none:
//! over fixed dims of size 0 an empty extent is an `InvalidArgument` error
//! naming the axis (as NumPy's ValueError); where a reduced dim is var (or
//! the source optional) it is missing. The mean, var and std of an empty
//! fixed extent are NaN (0/0), as NumPy's (without its warning).
//!
//! # Axes
//! Axes number the dims of the type from 0 at the outermost; var dims
//! count; -1 is the innermost, -ndim the outermost. An axis out of range
//! (naming it and the ndim) or given twice is an `Index` error.
//! `Some(&[])` reduces nothing (the values converted to the result type).
//!
//! With `keepdims`, each reduced dim stays as `1 *` — a reduced var dim
//! too.
//!
//! # Var dims
//! - A reduced var dim gives one result per var element: the sum over axis
//!   1 of `3 * var * int32` `[[1,2],[3,4,5],[6,7,8,9]]` is `3 * int64`
//!   `[3,12,30]`. Var dims reduced together with the dims inside them, or
//!   with fixed dims outside them, work at any nesting: every value under
//!   an output element is combined into it, and empty var elements add
//!   nothing (the min over every axis of `[[],[4,2]]` is 2, as `?int32`).
//! - A kept var dim stays var in the output. When a reduced dim lies
//!   outside it (axis 0 of `3 * var * int32`), its elements combine
//!   position by position, as awkward does: an output element is as long
//!   as the longest element combined into it (`[[1,2,3],[4]]` summed over
//!   axis 0 is `var * int64` `[5,2,3]`). An output var element under an
//!   empty reduced extent is empty. Every built-in reduction does this,
//!   stateful ones too: the mean, var and std of a position take the rows
//!   that reach it (`[[1,2,3],[5]]` over axis 0: mean `[3.0,2.0,3.0]`,
//!   var `[4.0,0.0,0.0]`), and argmin and argmax give a value's index in
//!   the reduced extent — over axis 0, its row (`[[1,5,3],[4],[9,0]]`:
//!   argmax `[2,0,0]`, argmin `[0,2,0]`), as awkward's. Over several
//!   reduced axes the position is the flat index `Σ i_k · W_k`, `W_k` the
//!   product of the sizes of the reduced dims inside axis `k` (a row too
//!   short for a position still counts as that many slots): for
//!   `3 * var * 2 * float64` over axes 0 and 2, `2 * row + column`. Where
//!   a reduced var dim lies inside another reduced dim and a kept dim
//!   lies between them (`2 * var * var * T` over axes 0 and 2), there is
//!   no such product: positions count the values combined into the output
//!   element, in C order (as over the flattened extent). Result types
//!   follow the table: `?R` only when the source is optional or a reduced
//!   dim is var.
//!
//! Not supported (clear errors, not wrong values):
//! - user reductions without identity, when a kept dim lies
//!   between reduced axes and an output element's values would start after
//!   the first row of the outer reduced axis (its first row is an empty var
//!   element): an `InvalidArgument` error saying so. With an identity this
//!   works.
//! - min and max of complex values (no order): a `Type` error.
//! - user reductions over elements with arrmeta (strings, var, pointers):
//!   a `Type` error.
//!
//! # Order and speed
//! A run along a reduced axis is folded with 8 accumulators (element `j`
//! to lane `j % 8`, lanes combined pairwise, the tail after), block by
//! block of 16K elements, so sums run at memory speed. Float sums and
//! products therefore differ from a strictly ordered loop, and from
//! NumPy's pairwise order, in the last bits. Built-in reductions also walk
//! the fixed dims inside the last var dim in memory order (a transposed
//! view is read contiguously), which changes the order again; the result
//! depends only on the shape and strides, never on the thread count.
//! Float min and max compare once per element in the hot loop and fold a
//! block again when it held a NaN. A missing value is read as the
//! identity (min's lane start value: +∞) by a select, not a branch, and a
//! flag per lane records whether any value was present, so folds of `?T`
//! stay vectorised. The mean of an option source, var and std fold each
//! run into a (count, mean, squared deviations) state — two passes over
//! the run — and merge runs with Chan's formula. These stateful
//! reductions (and argmin, argmax) keep one state at a time where their
//! reduced dims lie inside the kept ones; where a reduced dim lies
//! outside a kept one (axis 0 of `3 * var * T`), the walk meets each
//! output element once per row, so it reduces into a tree of states
//! shaped like the output (a kept var dim's states grow as longer rows
//! come), and writes the results from it at the end; a mean whose
//! positions get values from different numbers of rows (a kept var dim
//! inside a reduced dim) counts per output element the same way. They
//! fold a long run on one thread.
//! Reducing the outer axis of a C-order array accumulates row by row into
//! the output. User reductions ([`reduce_with`]) combine in index order,
//! left to right, one element at a time, with no reassociation.
//!
//! Large reductions (128K elements and up, fixed dims) run on the executor's
//! threads: split over a kept dim (each output computed by one task as
//! the serial loop computes it), or, for a long reduced run, block by
//! block with the block results combined in order. Either way the result
//! equals the serial one bit for bit.

mod ops;
mod plan;

use super::{Callable, CallableImpl};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::kernels::assign::ErrorMode;
use crate::kernels::{CKernelBuilder, KernelArgs, KernelRequest, kernel_size};
use crate::types::{Type, TypeKind};
use plan::{DstDim, Finish, Info, ReduceKernel, SrcDim};
use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::LazyLock;

/// The built-in reductions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BuiltinReduction {
    /// The sum (identity 0).
    Sum,
    /// The product (identity 1).
    Prod,
    /// The smallest value (no identity).
    Min,
    /// The largest value (no identity).
    Max,
    /// The arithmetic mean, as float64 or `complex[float64]`.
    Mean,
    /// `true` when every value is non-zero (identity true).
    All,
    /// `true` when some value is non-zero (identity false).
    Any,
    /// The number of present values, as int64 (identity 0).
    Count,
    /// The position of the first smallest value, as int64 (no identity).
    ArgMin,
    /// The position of the first largest value, as int64 (no identity).
    ArgMax,
    /// The population variance (ddof 0), as float64.
    Var,
    /// The population standard deviation (ddof 0), as float64.
    Std,
}

impl BuiltinReduction {
    /// Every built-in reduction.
    pub const ALL: [BuiltinReduction; 12] = [
        BuiltinReduction::Sum,
        BuiltinReduction::Prod,
        BuiltinReduction::Min,
        BuiltinReduction::Max,
        BuiltinReduction::Mean,
        BuiltinReduction::All,
        BuiltinReduction::Any,
        BuiltinReduction::Count,
        BuiltinReduction::ArgMin,
        BuiltinReduction::ArgMax,
        BuiltinReduction::Var,
        BuiltinReduction::Std,
    ];

    /// The built-in reduction registered as `name`, if any.
    ///
    /// ```
    /// use dynd::callable::reduce::BuiltinReduction;
    /// assert_eq!(BuiltinReduction::from_name("argmax"), Some(BuiltinReduction::ArgMax));
    /// assert_eq!(BuiltinReduction::from_name("add"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<BuiltinReduction> {
        BuiltinReduction::ALL.into_iter().find(|k| k.name() == name)
    }

    /// `true` when its result is optional (`?R`) where an extent can be
    /// empty — a reduced var dim — or the input is optional (DESIGN §6):
    /// min, max, argmin, argmax, mean, var, std.
    pub fn optional_result(self) -> bool {
        use BuiltinReduction as R;
        matches!(
            self,
            R::Min | R::Max | R::ArgMin | R::ArgMax | R::Mean | R::Var | R::Std
        )
    }

    /// Its name (`"sum"`), as registered.
    pub fn name(self) -> &'static str {
        match self {
            BuiltinReduction::Sum => "sum",
            BuiltinReduction::Prod => "prod",
            BuiltinReduction::Min => "min",
            BuiltinReduction::Max => "max",
            BuiltinReduction::Mean => "mean",
            BuiltinReduction::All => "all",
            BuiltinReduction::Any => "any",
            BuiltinReduction::Count => "count",
            BuiltinReduction::ArgMin => "argmin",
            BuiltinReduction::ArgMax => "argmax",
            BuiltinReduction::Var => "var",
            BuiltinReduction::Std => "std",
        }
    }

    /// The result element type over elements of type `elem` (a builtin,
    /// or an option of one: `?float64` gives `?float64` for min, `float64`
    /// for sum), when no reduced dim is var; a `Type` error when the
    /// reduction does not take them.
    ///
    /// ```
    /// use dynd::Type;
    /// use dynd::callable::reduce::BuiltinReduction;
    /// let f = |k: BuiltinReduction, t: &str| k.result_type(&Type::parse(t).unwrap()).unwrap().to_string();
    /// assert_eq!(f(BuiltinReduction::Sum, "?int32"), "int64");
    /// assert_eq!(f(BuiltinReduction::ArgMax, "?float64"), "?int64");
    /// assert_eq!(f(BuiltinReduction::Std, "int8"), "float64");
    /// ```
    pub fn result_type(self, elem: &Type) -> Result<Type> {
        self.result_type_of(elem, false)
    }

    /// [`BuiltinReduction::result_type`], optional also when `var_reduced`
    /// (a reduced dim is var).
    fn result_type_of(self, elem: &Type, var_reduced: bool) -> Result<Type> {
        let (b, skip) = builtin_elem(elem);
        let opt = self.optional_result() && (skip || var_reduced);
        b.and_then(|b| ops::builtin(self, b, skip, opt, false))
            .map(|(r, _)| {
                let r = Type::builtin(r);
                if opt {
                    Type::option(r.clone()).unwrap_or(r)
                } else {
                    r
                }
            })
            .ok_or_else(|| {
                use BuiltinReduction as R;
                let takes = match self {
                    R::Min | R::Max | R::ArgMin | R::ArgMax | R::Var | R::Std => {
                        "bool, integers and floats, or options of them (complex values have no order)"
                    }
                    _ => "bool, integers, floats and complex, or options of them",
                };
                Error::type_error(format!(
                    "{} does not take elements of type {elem}: it takes {takes}",
                    self.name()
                ))
            })
    }
}

/// What a reduction combines with.
#[derive(Clone)]
enum Op {
    Builtin(BuiltinReduction),
    /// A binary callable `(T, T) -> T`, and an identity (a 0-d array).
    User {
        op: Callable,
        identity: Option<Array>,
    },
}

/// A reduction and its options: the axes (`None`: all) and `keepdims`.
///
/// ```
/// use dynd::Array;
/// use dynd::callable::reduce::{BuiltinReduction, Reduction};
/// let a = Array::from_json("2 * 2 * int32", "[[1, 2], [3, 4]]").unwrap();
/// let f = Reduction::builtin(BuiltinReduction::Prod).with(Some(&[0]), true);
/// let r = f.call(&[&a]).unwrap();
/// assert_eq!((r.tp().to_string(), r.to_json()), ("1 * 2 * int64".into(), "[[3,8]]".into()));
/// ```
#[derive(Clone)]
pub struct Reduction {
    name: String,
    op: Op,
    axes: Option<Vec<isize>>,
    keepdims: bool,
}

impl Reduction {
    /// A built-in reduction over every axis, without keepdims.
    pub fn builtin(kind: BuiltinReduction) -> Reduction {
        Reduction {
            name: kind.name().to_string(),
            op: Op::Builtin(kind),
            axes: None,
            keepdims: false,
        }
    }

    /// A reduction by the binary callable `op`, which must compute
    /// `(T, T) -> T` for the element type `T` it is used on (checked when
    /// it is), with an optional identity: a 0-d array, converted to `T`
    /// (under the default error mode) where it is used. Without one, an
    /// empty extent is an error. `T` must be plain data (no arrmeta: a
    /// builtin, fixed string or struct of such).
    ///
    /// The op is called in place (its destination is also its first
    /// source), in index order, left to right; it should be associative
    /// for the result to mean "the reduction".
    ///
    /// Errors: `InvalidArgument` when the identity is not 0-d.
    pub fn user(name: &str, op: &Callable, identity: Option<&Array>) -> Result<Reduction> {
        if let Some(id) = identity
            && id.ndim() != 0
        {
            return Err(Error::invalid_argument(format!(
                "the identity of {name} must be a single value (0-d), not an array of type {}",
                id.tp()
            )));
        }
        Ok(Reduction {
            name: name.to_string(),
            op: Op::User {
                op: op.clone(),
                identity: identity.cloned(),
            },
            axes: None,
            keepdims: false,
        })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The axes it reduces (`None`: all; negative ones count from the
    /// innermost, -1).
    pub fn axes(&self) -> Option<&[isize]> {
        self.axes.as_deref()
    }

    /// Whether reduced dims stay as `1 *`.
    pub fn keepdims(&self) -> bool {
        self.keepdims
    }

    /// The built-in reduction it is; `None` for a user reduction.
    pub fn kind(&self) -> Option<BuiltinReduction> {
        match self.op {
            Op::Builtin(k) => Some(k),
            Op::User { .. } => None,
        }
    }

    /// The reduction `f` is, when `f` is one (made by [`Reduction::with`]
    /// or [`Reduction::callable`], or a registered built-in reduction): how
    /// a device runtime recognises the reductions it runs itself.
    ///
    /// ```
    /// use dynd::callable::{self, reduce::{BuiltinReduction, Reduction}};
    /// let f = callable::lookup("argmax").unwrap();
    /// assert_eq!(Reduction::of(&f).and_then(Reduction::kind), Some(BuiltinReduction::ArgMax));
    /// assert!(Reduction::of(&callable::lookup("add").unwrap()).is_none());
    /// ```
    pub fn of(f: &Callable) -> Option<&Reduction> {
        f.implementation().as_reduction()
    }

    /// Which axes of a source of type `tp` it reduces, one flag per axis
    /// (outermost first).
    ///
    /// # Errors
    /// `Index` for an axis out of range or given twice, naming it.
    pub fn reduced_axes(&self, tp: &Type) -> Result<Vec<bool>> {
        self.reduced(tp)
    }

    /// The same reduction over `axes` (`None`: all; -1 is the innermost),
    /// with `keepdims`, as a callable. Bad axes are an `Index` error when
    /// it is resolved.
    pub fn with(&self, axes: Option<&[isize]>, keepdims: bool) -> Callable {
        Callable::new(Reduction {
            axes: axes.map(<[isize]>::to_vec),
            keepdims,
            ..self.clone()
        })
    }

    /// The reduction with its own options, as a callable.
    pub fn callable(&self) -> Callable {
        Callable::new(self.clone())
    }

    /// Reduces `a` over `axes` (`None`: all; -1 is the innermost), with
    /// `keepdims`.
    pub fn apply(&self, a: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
        self.with(axes, keepdims).call(&[a])
    }

    /// The reduced flag of each axis of `tp`.
    fn reduced(&self, tp: &Type) -> Result<Vec<bool>> {
        let ndim = tp.ndim();
        let Some(axes) = &self.axes else {
            return Ok(vec![true; ndim]);
        };
        let mut reduced = vec![false; ndim];
        for &axis in axes {
            let at = if axis < 0 {
                axis.checked_add_unsigned(ndim)
            } else {
                Some(axis)
            };
            let Some(r) = at
                .and_then(|a| usize::try_from(a).ok())
                .and_then(|a| reduced.get_mut(a))
            else {
                return Err(Error::index(format!(
                    "{}: axis {axis} is out of range for {tp}, which has {ndim} dimension{} (axes -{ndim}..{ndim})",
                    self.name,
                    if ndim == 1 { "" } else { "s" }
                )));
            };
            if std::mem::replace(r, true) {
                return Err(Error::index(format!(
                    "{}: axis {axis} is given twice in {axes:?}",
                    self.name
                )));
            }
        }
        Ok(reduced)
    }

    /// The result element type over `elem`, when `var_reduced` (a reduced
    /// dim is var) or not.
    fn result_elem(&self, elem: &Type, var_reduced: bool) -> Result<Type> {
        match &self.op {
            Op::Builtin(kind) => kind.result_type_of(elem, var_reduced),
            Op::User { op, .. } => {
                if elem.is_symbolic() || elem.arrmeta_size() != 0 || elem.has_blockref() {
                    return Err(Error::type_error(format!(
                        "{}: a user reduction needs plain data elements (builtins, fixed strings, structs of those), not {elem}",
                        self.name
                    )));
                }
                let pair = [elem.clone(), elem.clone()];
                let r = op.resolve(&pair).map_err(|e| {
                    e.context(format!(
                        "{}: the operation {} must take ({elem}, {elem})",
                        self.name,
                        op.name()
                    ))
                })?;
                if &r != elem {
                    return Err(Error::type_error(format!(
                        "{}: the operation {} must compute ({elem}, {elem}) -> {elem}, but gives {r}",
                        self.name,
                        op.name()
                    )));
                }
                Ok(r)
            }
        }
    }

    /// The output type for a source of type `src`, and the reduced flags.
    fn resolve_one(&self, src: &Type) -> Result<(Type, Vec<bool>)> {
        src.require_concrete("a reduction")?;
        let reduced = self.reduced(src)?;
        let elem = self.result_elem(src.dtype(), var_reduced(src, &reduced))?;
        let out = self.out_type(src, &reduced, elem)?;
        Ok((out, reduced))
    }

    /// The output type under the dims of `t`, whose reduced flags are
    /// `reduced`, over result elements `elem`.
    fn out_type(&self, t: &Type, reduced: &[bool], elem: Type) -> Result<Type> {
        let Some((&red, rest)) = reduced.split_first() else {
            return Ok(elem);
        };
        let inner = match t.dim_elem() {
            Some(e) => self.out_type(e, rest, elem)?,
            None => return Err(Error::type_error(format!("cannot reduce over {t}"))),
        };
        Ok(match (t.kind(), red) {
            (_, true) if self.keepdims => Type::fixed_dim(1, inner),
            (_, true) => inner,
            (TypeKind::FixedDim { size, .. }, false) => Type::fixed_dim(*size, inner),
            (_, false) => Type::var_dim(inner),
        })
    }

    /// The only argument's type.
    fn one<'a>(&self, args: &'a [Type]) -> Result<&'a Type> {
        match args {
            [a] => Ok(a),
            _ => Err(Error::invalid_argument(format!(
                "{} takes one argument, got {}",
                self.name,
                args.len()
            ))),
        }
    }
}

/// The signature reductions show: any array in, any array out.
static SIGNATURE: LazyLock<Type> =
    LazyLock::new(|| Type::parse("(Dims... * T) -> Any").unwrap_or_else(|_| Type::any()));

impl CallableImpl for Reduction {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Type {
        &SIGNATURE
    }

    fn is_scalar(&self) -> bool {
        false
    }

    fn as_reduction(&self) -> Option<&Reduction> {
        Some(self)
    }

    fn resolve(&self, args: &[Type]) -> Result<Type> {
        Ok(self.resolve_one(self.one(args)?)?.0)
    }

    unsafe fn instantiate(
        &self,
        mut ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        let (dst_tp, dst_meta, req) = (args.dst_tp, args.dst_meta, args.req);
        args.check_counts(&self.name)?;
        let (src_tp, src_meta) = (self.one(args.src_tps)?, args.src_metas[0]);
        // The caller's promise: `dst_tp` is what resolve gives for
        // `src_tp` (checked by check_args, or resolved by the caller), so
        // only the reduced flags are needed here.
        let reduced = self.reduced(src_tp)?;
        // SAFETY: the caller's promise (2): valid arrmeta of both types.
        let dims = unsafe {
            plan::build_dims(src_tp, src_meta, dst_tp, dst_meta, &reduced, self.keepdims)
        }?;
        let elem = src_tp.dtype();
        let out_elem = dst_tp.dtype();
        let (op, finish, user, dims, tail) = match &self.op {
            Op::Builtin(kind) => {
                let (b, skip) = builtin_elem(elem);
                let opt = kind.optional_result() && (skip || var_reduced(src_tp, &reduced));
                let make = |counted: bool| {
                    b.and_then(|b| ops::builtin(*kind, b, skip, opt, counted))
                        .map(|(_, make)| make())
                        .ok_or_else(|| Error::type_error(format!("{} of {src_tp}", self.name)))
                };
                let op = make(false)?;
                // A stateless mean where its finishing passes can count.
                let mean = if op.state_size() == 0 && *kind == BuiltinReduction::Mean {
                    let mut dims = plan::simplify(dims.clone(), plan::Order::Memory);
                    self.mean_finish(src_tp, &mut dims)?.map(|f| (dims, f))
                } else {
                    None
                };
                if let Some((dims, finish)) = mean {
                    (op, finish, None, dims, None)
                } else if op.state_size() > 0 || *kind == BuiltinReduction::Mean {
                    // Stateful (a mean then keeps its own counts): the
                    // reduced dims in C order (argmin's positions count in
                    // it), after the kept ones where they are fixed.
                    let op = if op.state_size() > 0 { op } else { make(true)? };
                    if op.state_size() > ops::STATE_MAX {
                        return Err(Error::type_error(format!("{} of {src_tp}", self.name)));
                    }
                    let dims = plan::simplify(dims, plan::Order::KeptFirst);
                    match plan::tail(&dims) {
                        // Reduced dims inside the kept ones: one state at a
                        // time, in the walk's buffer.
                        Some(tail) => (op, Finish::None, None, dims, tail),
                        // A reduced dim outside a kept one: a tree of
                        // states shaped like the output.
                        None => {
                            let states = plan::States::new(&dims, op.state_size());
                            let op = Box::new(ops::Staged::new(op)) as Box<dyn ops::ReduceOp>;
                            (op, Finish::States(Box::new(states)), None, dims, None)
                        }
                    }
                } else {
                    (
                        op,
                        Finish::None,
                        None,
                        plan::simplify(dims, plan::Order::Memory),
                        None,
                    )
                }
            }
            Op::User { op, identity } => {
                let identity = match identity {
                    Some(id) => Some(self.identity_bytes(id, elem)?),
                    None => None,
                };
                let user = ops::UserOp {
                    size: elem.data_size(),
                    identity,
                };
                (
                    Box::new(user) as Box<dyn ops::ReduceOp>,
                    Finish::None,
                    Some(op),
                    plan::simplify(dims, plan::Order::Given),
                    None,
                )
            }
        };
        let split = match finish {
            // The states' tree is filled by one walk.
            Finish::States(_) => plan::Split::NONE,
            _ => plan::split(&dims, out_elem.data_size()),
        };
        let first_child = kernel_size::<ReduceKernel>();
        let kernel = ReduceKernel {
            dims: dims.into_boxed_slice(),
            op,
            finish,
            split,
            children: [if user.is_some() { first_child } else { 0 }, 0],
            info: Box::new(Info {
                name: self.name.clone(),
                src_tp: src_tp.clone(),
                dst_tp: dst_tp.clone(),
                tail,
            }),
        };
        // SAFETY: (1) `offset` is a free slot; the first child goes in the
        // slot emplace reserves, the second where the first ends.
        let at = unsafe { ckb.as_mut().emplace(offset, req, kernel) }?;
        let Some(f) = user else {
            return Ok(at);
        };
        // The elements have no arrmeta (checked by resolve): any pointer
        // into the arrays' arrmeta is theirs.
        let em = src_meta.wrapping_add(src_tp.arrmeta_size());
        let dm = dst_meta.wrapping_add(dst_tp.arrmeta_size());
        let pair = [elem.clone(), elem.clone()];
        // SAFETY: `at` is the slot reserved for the first child; the types
        // are ones the op resolved to (T, T) -> T, with empty arrmeta.
        let end = unsafe {
            let metas = [em, em];
            let args = KernelArgs::new(out_elem, dm, &pair, &metas, KernelRequest::Single);
            f.instantiate(ckb.as_mut(), at, args)
        }?;
        // SAFETY: a ReduceKernel was emplaced at `offset`; its second child
        // offset now names the free slot at `end`, where it is built next.
        unsafe { ckb.as_mut().kernel_mut::<ReduceKernel>(offset) }?.children[1] = end - offset;
        // SAFETY: `end` is the free slot just past the first child.
        unsafe {
            let metas = [em, em];
            let args = KernelArgs::new(out_elem, dm, &pair, &metas, KernelRequest::Strided);
            f.instantiate(ckb, end, args)
        }
    }
}

impl Reduction {
    /// How a mean divides its sums by the counts, for this plan (setting
    /// the plan's side-buffer strides when it counts into one); `None`
    /// when output elements get different counts in a way none of these
    /// follows (a kept var dim inside a reduced dim: its positions get
    /// values from different numbers of rows): the mean then keeps a count
    /// per output element.
    fn mean_finish(&self, src_tp: &Type, dims: &mut [plan::Dim]) -> Result<Option<Finish>> {
        let reduced_var = dims
            .iter()
            .any(|d| matches!(d.dst, DstDim::Reduced) && matches!(d.src, SrcDim::Var { .. }));
        let outer = dims.iter().position(|d| matches!(d.dst, DstDim::Reduced));
        let kept_var_inside =
            outer.is_some_and(|r| dims[r..].iter().any(|d| matches!(d.dst, DstDim::Var(_))));
        if kept_var_inside {
            return Ok(None);
        }
        if !reduced_var {
            // The same count everywhere: the reduced dims are fixed.
            let mut count = 1f64;
            for d in dims.iter() {
                if let (DstDim::Reduced, SrcDim::Fixed { size, .. }) = (&d.dst, d.src) {
                    count *= size as f64;
                }
            }
            return Ok(Some(Finish::Divide(count)));
        }
        if dims.iter().all(|d| !matches!(d.dst, DstDim::Var(_))) {
            // Fixed outputs: count into a C-order side buffer.
            let mut len = 1usize;
            for d in dims.iter_mut().rev() {
                if let (DstDim::Fixed { .. }, SrcDim::Fixed { size, .. }) = (&d.dst, d.src) {
                    d.aux = (len * size_of::<f64>()) as isize;
                    len = len.checked_mul(size).ok_or_else(|| {
                        Error::alloc(format!("the counts of a mean of {src_tp} are too large"))
                    })?;
                }
            }
            let counting = dims
                .iter()
                .map(|d| {
                    let mut c = d.clone();
                    if let DstDim::Fixed { .. } = c.dst {
                        c.dst = DstDim::Fixed { stride: d.aux };
                    }
                    c
                })
                .collect();
            return Ok(Some(Finish::Counts(Box::new(plan::Counts {
                dims: counting,
                len,
            }))));
        }
        Ok(match outer {
            Some(b) if dims[b..].iter().all(|d| matches!(d.dst, DstDim::Reduced)) => {
                Some(Finish::AtLevel(b))
            }
            _ => None,
        })
    }

    /// The identity's bytes as a `T`.
    fn identity_bytes(&self, id: &Array, elem: &Type) -> Result<Box<[u8]>> {
        let v = id.cast(elem, ErrorMode::Default).map_err(|e| {
            e.context(format!(
                "{}: the identity {} does not convert to {elem}",
                self.name,
                id.to_json()
            ))
        })?;
        let n = elem.data_size();
        // SAFETY: a fresh array of the plain data type `elem` holds `n` bytes.
        Ok(unsafe { std::slice::from_raw_parts(v.data_ptr().cast_const(), n) }.into())
    }
}

/// A reduction from a binary callable `(T, T) -> T` and an optional
/// identity (a 0-d array); see [`Reduction::user`].
///
/// ```
/// use dynd::Array;
/// use dynd::callable::{Callable, reduce::reduce_with};
/// let gcd = Callable::from_fn2("gcd", |mut a: i64, mut b: i64| {
///     while b != 0 { (a, b) = (b, a % b); }
///     a.abs()
/// });
/// let r = reduce_with(&gcd, Some(&Array::from(0i64))).unwrap();
/// let a = Array::from_json("2 * 3 * int64", "[[12, 18, 24], [7, 14, 21]]").unwrap();
/// assert_eq!(r.apply(&a, Some(&[1]), false).unwrap().to_json(), "[6,7]");
/// ```
pub fn reduce_with(op: &Callable, identity: Option<&Array>) -> Result<Reduction> {
    Reduction::user(&format!("reduce({})", op.name()), op, identity)
}

/// The builtin type of reduction elements `elem` (a builtin, or an option
/// of one), and whether they are optional.
fn builtin_elem(elem: &Type) -> (Option<crate::types::BuiltinType>, bool) {
    match elem.option_value() {
        Some(v) => (v.as_builtin(), true),
        None => (elem.as_builtin(), false),
    }
}

/// `true` when a var dim of `tp` is among the `reduced` ones.
fn var_reduced(tp: &Type, reduced: &[bool]) -> bool {
    let mut t = tp;
    for &r in reduced {
        if r && matches!(t.kind(), TypeKind::VarDim { .. }) {
            return true;
        }
        match t.dim_elem() {
            Some(e) => t = e,
            None => break,
        }
    }
    false
}

/// Registers the built-in reductions, over every axis, without keepdims.
pub(crate) fn register(map: &mut BTreeMap<String, Callable>) {
    for kind in BuiltinReduction::ALL {
        map.insert(kind.name().to_string(), Reduction::builtin(kind).callable());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::BuiltinType;

    fn a(tp: &str, json: &str) -> Array {
        Array::from_json(tp, json).unwrap()
    }

    #[test]
    fn the_plan_merges_contiguous_dims_and_drops_size_one() {
        let x = a("2 * 1 * 3 * int32", "[[[1,2,3]],[[4,5,6]]]");
        let r = Reduction::builtin(BuiltinReduction::Sum)
            .apply(&x, None, false)
            .unwrap();
        assert_eq!(r.to_json(), "21");
        let t = Reduction::builtin(BuiltinReduction::Sum);
        let (out, reduced) = t.resolve_one(x.tp()).unwrap();
        assert_eq!(out.to_string(), "int64");
        let o = Array::empty(out.clone()).unwrap();
        // SAFETY: both arrmeta pointers belong to their arrays.
        let dims = unsafe {
            plan::build_dims(
                x.tp(),
                x.arrmeta_ptr(),
                &out,
                o.arrmeta_ptr(),
                &reduced,
                false,
            )
        }
        .unwrap();
        assert_eq!(dims.len(), 3);
        let dims = plan::simplify(dims, plan::Order::Memory);
        assert_eq!(dims.len(), 1);
        assert!(matches!(dims[0].src, SrcDim::Fixed { size: 6, stride: 4 }));
    }

    #[test]
    fn builtin_table_covers_every_numeric_type() {
        for b in BuiltinType::ALL {
            for kind in BuiltinReduction::ALL {
                use BuiltinReduction as R;
                for (skip, opt) in [(false, false), (false, true), (true, false), (true, true)] {
                    let r = ops::builtin(kind, b, skip, opt, false);
                    let expect_none = b == BuiltinType::Void
                        || (matches!(
                            kind,
                            R::Min | R::Max | R::ArgMin | R::ArgMax | R::Var | R::Std
                        ) && matches!(b, BuiltinType::Complex64 | BuiltinType::Complex128));
                    assert_eq!(r.is_none(), expect_none, "{kind:?} of {b}");
                }
            }
        }
    }
}
