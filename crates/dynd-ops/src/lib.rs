//! # dynd-ops
//!
//! Lazy operators over tensors and dynd arrays: MatX's model in Rust
//! (DESIGN §1.6–§1.7).
//!
//! A user-facing function (`add`, `permute`, `lcollapse`, `sum`, `range`,
//! ...) returns an operator value ([`Expr`]); an operator knows its element
//! type, its shape (so its rank, at compile time) and gives the element at
//! an index. Nothing runs until an expression is assigned into an output
//! with [`LvalueOp::set`] and run on an [`Executor`]: [`Serial`], or
//! [`Parallel`] on its own rayon pool. The whole expression is fused into
//! one pass over the output, row by row; only transforms (matmul, sort,
//! argsort, cumsum, reductions, median) make temporaries, in their prepare
//! step.
//!
//! ```
//! use dynd_ops::{LvalueOp, Operator, Parallel, Serial, Tensor, permute, sqrt, sum_axes};
//!
//! let a = Tensor::from_fn([2, 3], |[i, j]| (i * 3 + j) as f64);
//! let b = Tensor::full([2, 3], 2.0);
//! let c = Tensor::full([2, 3], 1.0);
//!
//! // out = a * b + c, fused, on two threads.
//! let mut out = Tensor::zeros([2, 3]);
//! out.set(&a * &b + &c).run(&Parallel::new(2)?)?;
//! assert_eq!(out.as_slice(), &[1.0, 3.0, 5.0, 7.0, 9.0, 11.0]);
//!
//! // Compose: the shape is known before anything runs; names compose.
//! let e = sqrt(permute(&a, [1, 0])?);
//! assert_eq!(e.sizes(), [3, 2]);
//! assert_eq!(e.name(), "sqrt(permute(tensor))");
//!
//! // Reductions over chosen axes; both executors give the same bits.
//! let s = sum_axes(&a, [1])?;
//! assert_eq!(s.clone().eval(&Serial)?.as_slice(), &[3.0, 12.0]);
//! assert_eq!(s.eval(&Parallel::new(2)?)?.as_slice(), &[3.0, 12.0]);
//! # Ok::<(), dynd::Error>(())
//! ```
//!
//! Rank errors are compile errors (`lcollapse::<4>` of a rank-3 operator,
//! an index of the wrong length, `transpose_matrix` of a vector); size
//! errors are `dynd::Error`s naming both shapes, reported when the
//! expression runs ([`Expr::try_sizes`] checks earlier). Tensors convert
//! from and to dynd arrays of matching type ([`ArrayView`],
//! [`ArrayViewMut`], [`to_array`]).
//!
//! Each `run` and `eval` opens a `tracing` span (`dynd_ops.run`) with the
//! expression's name and the executor.
//!
//! Operands of elementwise operators broadcast as in NumPy, beyond MatX:
//! an operand of lower rank gets leading dims of size 1 ([`Broadcast`]),
//! so a rank-0 operator combines with any rank (`&t4 * &t0`, `t4.set(&t0)`),
//! and size-1 dims repeat. Complex elements ([`Complex`]`<f32>`,
//! `Complex<f64>`) go through the arithmetic and math functions, and
//! [`fft`], [`ifft`], [`fft2`], [`ifft2`] transform them (through
//! `rustfft`, with MatX's and NumPy's scaling: forward unscaled, inverse
//! by `1/n`; [`FftNorm`] picks another).
//!
//! # Differences from MatX
//!
//! Deliberate, and kept:
//! - Ranks are type-level, so rank errors are compile errors; sizes are
//!   checked when an expression runs (MatX asserts).
//! - Size-1 and cross-rank broadcasting (MatX requires equal sizes, or a
//!   rank-0 operand). `select` (MatX's `if_else`) still takes operands of
//!   one rank.
//! - [`scalar`] is a rank-0 operator, broadcasting against any rank.
//! - Variadic `concat` and `stack` take operators of one type
//!   ([`concat_n`], [`stack_n`]); operators of different types combine
//!   with nested two-operand [`concat()`]s and [`stack`]s.
//! - [`percentile`] takes `q` as an `f64` from 0 to 100 inclusive (MatX: an
//!   integer below 100) and follows NumPy's definitions of every method
//!   exactly: `Nearest` rounds halves to even, `Midpoint` averages the
//!   floor and ceiling neighbours, and the continuous methods clamp their
//!   virtual index (MatX's own code differs from NumPy for `Midpoint`
//!   and at the ends). Float elements only.
//! - [`shift`] by a rank-0 operator is [`shift_by`]; shifts rotate as
//!   NumPy's `roll` (MatX's convention).
//! - FFTs: [`fft`]/[`ifft`] transform along the last dim, [`fft2`]/[`ifft2`]
//!   the last two, always at the input's length (no `fft_size` padding or
//!   cropping: pad or slice the input first); real input converts with
//!   [`to_complex`] (no real-to-complex half spectrum).
//! - Reductions, sorts, comparisons and `cumsum` take real elements only.
//! - Integer arithmetic wraps; integer division by zero is an error from
//!   `run` (dynd's scalar semantics), not undefined behaviour.
//! - [`round`] rounds halves away from zero (Rust); NumPy rounds to even.
//!
//! # Layers
//!
//! Each module uses only the modules listed before it (`tests/layering.rs`
//! reads the sources and fails on an import from a later module):
//!
//! 1. `rank` — shapes at the type level; index and run helpers.
//! 2. `element` — the element types and their arithmetic (self-contained).
//! 3. `device` — [`DeviceExpr`]: an operator as a device executor runs it.
//! 4. `executor` — [`Executor`], [`Serial`], [`Parallel`]: running tasks
//!    over the rows or ranges of a shape.
//! 5. `operator` — the [`Operator`] and [`LvalueOp`] traits (an operator is
//!    prepared on an executor), [`Expr`], [`Set`], line buffers.
//! 6. `tensor` — [`Tensor`] and strided views: the leaf operators.
//! 7. `assign` — the assignment engine: [`Set::run`], [`Expr::eval`].
//! 8. `mapped` — one generic view, an operator seen through an index map.
//! 9. `layout` — permute, reverse, slice, drop_dim, collapses, reshape.
//! 10. `combine` — concat, stack, clone, repmat, shift, pad, diagonals.
//! 11. `elementwise` — arithmetic, math and logical operators.
//! 12. `generators` — constants, ranges, random numbers.
//! 13. `reduce` — reductions over all dims or chosen axes.
//! 14. `transform` — matmul, sort, cumsum.
//! 15. `interop` — dynd arrays as operators, and back.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
// Operator types are nested generics by design (the expression is the type).
#![allow(clippy::type_complexity)]

mod assign;
mod combine;
mod device;
mod element;
mod elementwise;
mod executor;
mod generators;
mod interop;
mod layout;
mod mapped;
mod operator;
mod rank;
mod reduce;
mod tensor;
mod transform;

pub use assign::run_set;

pub use combine::{
    KEEP, PadMode, clone, concat, concat_n, diag, diag_embed, fftshift1d, fftshift2d, ifftshift1d,
    ifftshift2d, pad, repmat, shift, shift_by, stack, stack_n,
};
pub use device::DeviceExpr;
pub use element::{Element, Float, Math, Num};
pub use elementwise::{
    abs, acos, add, angle, asin, atan, atan2, cast, ceil, conj, cos, cosh, div, eq, exp, floor, ge,
    gt, imag, isinf, isnan, le, log, log2, log10, logical_and, logical_not, logical_or,
    logical_xor, lt, maximum, minimum, mul, ne, neg, pow, real, rem, round, scalar, select, sign,
    sin, sinh, sqrt, sub, tan, tanh, to_complex,
};
pub use executor::{Executor, Parallel, Serial, TASK_ELEMS};
pub use generators::{
    CounterRng, alternate, diag_const, eye, fill, generate, linspace, linspace_n, logspace, ones,
    random, random_normal, random_uniform, range, zeros,
};
pub use interop::{ArrayElement, ArrayView, ArrayViewMut, DeviceView, array_type, to_array};
pub use layout::{
    Collapse, END, drop_dim, flatten, fliplr, flipud, lcollapse, permute, rcollapse, reshape,
    reverse, slice, transpose, transpose_matrix,
};
pub use num_complex::Complex;
pub use operator::{
    Broadcast, Expr, LINE_CHUNK, LvalueOp, MemRegion, Operator, Set, default_fill_line, read_line,
};
pub use rank::{
    AddDim, DropDims, MAX_RANK, Shape, c_strides, checked_numel, numel, ravel, unravel,
};
pub use reduce::{
    PercentileMethod, REDUCE_BLOCK, Reducer, all, all_axes, any, any_axes, argmax, argmax_axes,
    argmin, argmin_axes, max, max_axes, mean, mean_axes, median, median_axes, min, min_axes,
    percentile, percentile_axes, prod, prod_axes, std, std_axes, sum, sum_axes, var, var_axes,
};
pub use tensor::{Tensor, TensorView, TensorViewMut};
pub use transform::{
    FftFloat, FftNorm, Gemm, SortDir, SortKind, SortPositions, SortValues, argsort, cumsum, fft,
    fft_with, fft2, fft2_with, ifft, ifft_with, ifft2, ifft2_with, matmul, sort,
};

/// The operator types the functions return. They are implementation
/// details — build them through the functions, and name them only when a
/// signature needs to (MatX's `detail` namespace).
pub mod detail {
    pub use crate::combine::{
        CloneMap, CloneOp, ConcatNOp, ConcatOp, DiagEmbedOp, DiagMap, DiagOp, PadOp, RepmatMap,
        RepmatOp, Shift2Op, ShiftByOp, ShiftMap, ShiftOp, StackNOp, StackOp,
    };
    pub use crate::elementwise::{
        AbsF, AcosF, AddF, AndF, AngleF, AsinF, Atan2F, AtanF, BLeft, BRight, Binary, BinaryFn,
        BinaryOp, CastF, CeilF, ConjF, ConstOp, CosF, CoshF, DivF, EqF, ExpF, FloorF, GeF, GtF,
        ImagF, IsInfF, IsNanF, LeF, Log2F, Log10F, LogF, LtF, MaxF, MinF, MulF, NeF, NegF, NotF,
        OrF, PowF, RealF, RemF, RoundF, SelectOp, SignF, SinF, SinhF, SqrtF, SubF, TanF, TanhF,
        ToComplexF, UnaryFn, UnaryOp, XorF,
    };
    pub use crate::generators::{GenOp, RandomOp};
    pub use crate::layout::{
        CollapseMap, DropDimMap, DropDimOp, LCollapseOp, PermuteMap, PermuteOp, RCollapseOp,
        ReshapeMap, ReshapeOp, ReverseMap, ReverseOp, SliceMap, SliceOp,
    };
    pub use crate::mapped::{ExpandMap, ExpandOp, IndexMap, Injective, Line, Mapped};
    pub use crate::reduce::{
        ArgExtremeR, ExtremeR, LogicR, MeanR, MedianOp, OrderOp, PercentileOp, Pick, ProdR,
        ReduceOp, Reduced, ReducedAxes, SumR, VarR,
    };
    pub use crate::transform::{CumsumOp, FftOp, MatmulOp, SortOp};
}
