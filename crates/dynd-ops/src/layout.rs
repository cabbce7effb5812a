//! Operators that change how an operator is indexed, not its values:
//! permute, transpose, reverse (flipud, fliplr), slice, drop_dim, lcollapse,
//! rcollapse, reshape and flatten. Each is an lvalue when its input is.
//!
//! ```
//! use dynd_ops::{Tensor, Operator, LvalueOp, Serial, permute, lcollapse, rcollapse};
//! let t = Tensor::from_fn([10, 12, 14], |[n, m, k]| (n * 168 + m * 14 + k) as i64);
//! let r = rcollapse::<2, _>(&t);
//! assert_eq!(r.sizes(), [10, 168]);
//! assert_eq!(r.get([3, 5 * 14 + 6]), t.at([3, 5, 6]));
//! let l = lcollapse::<2, _>(permute(&t, [1, 0, 2]).unwrap());
//! assert_eq!(l.name(), "lcollapse<2>(permute(tensor))");
//! assert_eq!(l.sizes(), [120, 14]);
//! ```
//!
//! Rank errors do not compile:
//!
//! ```compile_fail
//! use dynd_ops::{Tensor, lcollapse};
//! let t = Tensor::<f64, [usize; 3]>::zeros([2, 3, 4]);
//! let _ = lcollapse::<4, _>(&t); // cannot collapse 4 dims of `[usize; 3]`
//! ```
//!
//! ```compile_fail
//! use dynd_ops::{Tensor, transpose_matrix};
//! let v = Tensor::<f64, [usize; 1]>::zeros([3]);
//! let _ = transpose_matrix(&v); // needs an operator of rank 2 or more
//! ```
//!
//! ```compile_fail
//! use dynd_ops::{Tensor, permute};
//! let t = Tensor::<f64, [usize; 3]>::zeros([2, 3, 4]);
//! let _ = permute(&t, [1, 0]); // a rank-2 permutation of a rank-3 operator
//! ```

use crate::mapped::{IndexMap, Injective, Line, Mapped};
use crate::operator::{Expr, Operator};
use crate::rank::{
    DropDims, Shape, check_axis, fmt_shape, index_from, numel, rank_at_least, ravel, unravel,
    unravel_into,
};
use dynd::{Error, Result};

// ---------------------------------------------------------------- permute

/// The dims of an operator in another order.
pub type PermuteOp<O> = Mapped<O, PermuteMap<<O as Operator>::Shape>>;

/// [`PermuteOp`]'s map: output dim `d` is input dim `perm[d]`.
#[derive(Clone, Copy, Debug)]
pub struct PermuteMap<S> {
    perm: S,
    sizes: S,
}

impl<S: Shape> IndexMap<S> for PermuteMap<S> {
    type Out = S;
    fn name(&self) -> String {
        "permute".into()
    }
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn map(&self, idx: S) -> S {
        let mut i = idx;
        for d in 0..S::RANK {
            i[self.perm[d]] = idx[d];
        }
        i
    }
    #[inline(always)]
    fn line(&self, idx: S, axis: usize, step: isize) -> Line<S> {
        Line::Run {
            idx: self.map(idx),
            axis: self.perm[axis],
            step,
        }
    }
}

// SAFETY: (1) `perm` is a permutation of the dims (checked by `permuted`'s
// callers) and the sizes are the input's permuted the same way, so distinct
// indices map to distinct indices inside the input; (2) a run along output
// dim `axis` is the run along input dim `perm[axis]` with the same step.
unsafe impl<S: Shape> Injective<S> for PermuteMap<S> {}

/// `op` seen through the permutation `perm` (already checked).
fn permuted<O: Operator>(op: O, perm: O::Shape) -> Expr<PermuteOp<O>> {
    let inner = op.sizes();
    let mut sizes = inner;
    for d in 0..O::Shape::RANK {
        sizes[d] = inner[perm[d]];
    }
    Expr(Mapped::new(op, PermuteMap { perm, sizes }))
}

/// The dims of `op` in the order `perm`: dim `i` of the result is dim
/// `perm[i]` of `op`, so `permute(a, p).get(i)` is `a.get(j)` with
/// `j[p[k]] = i[k]`.
///
/// # Errors
/// `InvalidArgument` when `perm` is not a permutation of `0..RANK`.
pub fn permute<O: Operator>(op: O, perm: O::Shape) -> Result<Expr<PermuteOp<O>>> {
    let n = O::Shape::RANK;
    let mut seen = vec![false; n];
    for &p in perm.as_ref() {
        if p >= n || std::mem::replace(&mut seen[p], true) {
            return Err(Error::invalid_argument(format!(
                "permute: {:?} is not a permutation of the dims of a rank-{n} operator",
                perm.as_ref()
            )));
        }
    }
    Ok(permuted(op, perm))
}

/// All dims reversed (NumPy's `.T`).
pub fn transpose<O: Operator>(op: O) -> Expr<PermuteOp<O>> {
    let n = O::Shape::RANK;
    let mut perm = O::Shape::zeros();
    for d in 0..n {
        perm[d] = n - 1 - d;
    }
    permuted(op, perm)
}

/// The last two dims swapped (a batch of transposed matrices).
pub fn transpose_matrix<O: Operator>(op: O) -> Expr<PermuteOp<O>> {
    rank_at_least::<O::Shape, 2>();
    let n = O::Shape::RANK;
    let mut perm = O::Shape::zeros();
    for d in 0..n {
        perm[d] = d;
    }
    perm.as_mut().swap(n - 2, n - 1);
    permuted(op, perm)
}

// ---------------------------------------------------------------- reverse

/// One dim walked backwards.
pub type ReverseOp<O> = Mapped<O, ReverseMap<<O as Operator>::Shape>>;

/// [`ReverseOp`]'s map: position `p` of dim `axis` is `n - 1 - p`.
#[derive(Clone, Copy, Debug)]
pub struct ReverseMap<S> {
    axis: usize,
    sizes: S,
}

impl<S: Shape> IndexMap<S> for ReverseMap<S> {
    type Out = S;
    fn name(&self) -> String {
        format!("reverse<{}>", self.axis)
    }
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn map(&self, idx: S) -> S {
        let mut i = idx;
        i[self.axis] = self.sizes[self.axis] - 1 - idx[self.axis];
        i
    }
    #[inline(always)]
    fn line(&self, idx: S, axis: usize, step: isize) -> Line<S> {
        let step = if axis == self.axis { -step } else { step };
        Line::Run {
            idx: self.map(idx),
            axis,
            step,
        }
    }
}

// SAFETY: (1) mirroring one dim of the input's own sizes is a bijection of
// the input's indices; (2) a run along the mirrored dim is the input's run
// with the step negated, along any other dim the same run.
unsafe impl<S: Shape> Injective<S> for ReverseMap<S> {}

/// `op` with dim `axis` (below the rank) walked backwards.
fn reversed<O: Operator>(op: O, axis: usize) -> Expr<ReverseOp<O>> {
    let sizes = op.sizes();
    Expr(Mapped::new(op, ReverseMap { axis, sizes }))
}

/// `op` with dim `axis` walked backwards.
///
/// # Errors
/// `Index` when `axis` is not below the rank.
pub fn reverse<O: Operator>(op: O, axis: usize) -> Result<Expr<ReverseOp<O>>> {
    check_axis::<O::Shape>("reverse", axis)?;
    Ok(reversed(op, axis))
}

/// The rows (dim `RANK - 2`) upside down; for a rank-1 operator, its one
/// dim reversed (as MatX, and as [`fliplr`]).
pub fn flipud<O: Operator>(op: O) -> Expr<ReverseOp<O>> {
    rank_at_least::<O::Shape, 1>();
    reversed(op, O::Shape::RANK.saturating_sub(2))
}

/// The columns (the last dim) left to right.
pub fn fliplr<O: Operator>(op: O) -> Expr<ReverseOp<O>> {
    rank_at_least::<O::Shape, 1>();
    reversed(op, O::Shape::RANK - 1)
}

// ---------------------------------------------------------------- slice

/// `end` that means "through the last element in the step's direction"
/// (Python's omitted end).
pub const END: isize = isize::MAX;

/// A strided window of an operator.
pub type SliceOp<O> = Mapped<O, SliceMap<<O as Operator>::Shape>>;

/// [`SliceOp`]'s map: position `p` of dim `d` is `start[d] + p * step[d]`.
#[derive(Clone, Copy, Debug)]
pub struct SliceMap<S: Shape> {
    start: S,
    step: S::Strides,
    sizes: S,
}

impl<S: Shape> IndexMap<S> for SliceMap<S> {
    type Out = S;
    fn name(&self) -> String {
        "slice".into()
    }
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn map(&self, idx: S) -> S {
        index_from(|d| (self.start[d] as isize + idx[d] as isize * self.step[d]) as usize)
    }
    #[inline(always)]
    fn line(&self, idx: S, axis: usize, step: isize) -> Line<S> {
        Line::Run {
            idx: self.map(idx),
            axis,
            step: step * self.step[axis],
        }
    }
}

// SAFETY: (1) every step is non-zero (checked by `slice`), so distinct
// indices map to distinct ones, and `slice_dim` keeps every position of
// each dim inside the input's dim; (2) a run along `axis` is the input's
// run along `axis` with the step multiplied by the slice's.
unsafe impl<S: Shape> Injective<S> for SliceMap<S> {}

/// Python's slice bounds for one dim: `(first index, count)`.
fn slice_dim(n: usize, start: isize, end: isize, step: isize) -> (usize, usize) {
    let n = n as isize;
    if step > 0 {
        let norm = |v: isize| if v < 0 { (v + n).max(0) } else { v.min(n) };
        let (s, e) = (norm(start), if end == END { n } else { norm(end) });
        let len = if e > s { (e - s + step - 1) / step } else { 0 };
        (s.min(n.max(0)) as usize, len as usize)
    } else {
        let norm = |v: isize| if v < 0 { (v + n).max(-1) } else { v.min(n - 1) };
        let (s, e) = (norm(start), if end == END { -1 } else { norm(end) });
        let len = if s > e {
            (s - e + (-step) - 1) / (-step)
        } else {
            0
        };
        (s.max(0) as usize, len as usize)
    }
}

/// The elements `start[d], start[d] + step[d], ...` up to (not including)
/// `end[d]` of every dim, with Python's rules: negative `start`/`end` count
/// from the end, bounds are clamped to the dim, [`END`] as `end` runs to the
/// last element in the step's direction, and a negative step walks
/// backwards.
///
/// # Errors
/// `InvalidArgument` when a step is 0.
pub fn slice<O: Operator>(
    op: O,
    start: <O::Shape as Shape>::Strides,
    end: <O::Shape as Shape>::Strides,
    step: <O::Shape as Shape>::Strides,
) -> Result<Expr<SliceOp<O>>> {
    let inner = op.sizes();
    let mut first = O::Shape::zeros();
    let mut sizes = O::Shape::zeros();
    for d in 0..O::Shape::RANK {
        if step[d] == 0 {
            return Err(Error::invalid_argument(format!(
                "slice: the step of dim {d} is 0"
            )));
        }
        let (f, n) = slice_dim(inner[d], start[d], end[d], step[d]);
        first[d] = f;
        sizes[d] = n;
    }
    let map = SliceMap {
        start: first,
        step,
        sizes,
    };
    Ok(Expr(Mapped::new(op, map)))
}

// ---------------------------------------------------------------- drop_dim

/// The slice at one index of one dim, that dim dropped.
pub type DropDimOp<O, S> = Mapped<O, DropDimMap<<O as Operator>::Shape, S>>;

/// [`DropDimOp`]'s map: the fixed `index` inserted at dim `axis`.
#[derive(Clone, Copy, Debug)]
pub struct DropDimMap<In, Out> {
    axis: usize,
    index: usize,
    sizes: Out,
    _in: std::marker::PhantomData<fn() -> In>,
}

impl<In: Shape, Out: Shape> IndexMap<In> for DropDimMap<In, Out> {
    type Out = Out;
    fn name(&self) -> String {
        format!("drop_dim<{}>", self.axis)
    }
    fn sizes(&self) -> Out {
        self.sizes
    }
    #[inline(always)]
    fn map(&self, idx: Out) -> In {
        index_from(|d| match d.cmp(&self.axis) {
            std::cmp::Ordering::Less => idx[d],
            std::cmp::Ordering::Equal => self.index,
            std::cmp::Ordering::Greater => idx[d - 1],
        })
    }
    #[inline(always)]
    fn line(&self, idx: Out, axis: usize, step: isize) -> Line<In> {
        let axis = if axis >= self.axis { axis + 1 } else { axis };
        Line::Run {
            idx: self.map(idx),
            axis,
            step,
        }
    }
}

// SAFETY: (1) inserting a fixed index (checked inside its dim by
// `drop_dim`) keeps distinct indices distinct, and the other dims are the
// input's; (2) a run along an output dim is the run along the matching
// input dim (the dims after `axis` shifted by one), same step.
unsafe impl<In: Shape, Out: Shape> Injective<In> for DropDimMap<In, Out> {}

/// The slice of `op` at `index` along `axis`, that dim dropped (MatX's
/// `matxDropDim`; NumPy's `a[:, i]`). A negative `index` counts from the end.
///
/// # Errors
/// `Index` when `axis` or `index` is out of range.
pub fn drop_dim<O>(
    op: O,
    axis: usize,
    index: isize,
) -> Result<Expr<DropDimOp<O, <O::Shape as DropDims<1>>::Out>>>
where
    O: Operator,
    O::Shape: DropDims<1>,
{
    check_axis::<O::Shape>("drop_dim", axis)?;
    let inner = op.sizes();
    let n = inner[axis] as isize;
    let i = if index < 0 { index + n } else { index };
    if i < 0 || i >= n {
        return Err(Error::index(format!(
            "drop_dim: index {index} is out of range for dim {axis} of shape {}",
            fmt_shape(inner.as_ref())
        )));
    }
    let mut sizes = <<O::Shape as DropDims<1>>::Out as Shape>::zeros();
    let mut k = 0;
    for d in 0..O::Shape::RANK {
        if d != axis {
            sizes[k] = inner[d];
            k += 1;
        }
    }
    let map = DropDimMap {
        axis,
        index: i as usize,
        sizes,
        _in: std::marker::PhantomData,
    };
    Ok(Expr(Mapped::new(op, map)))
}

// ---------------------------------------------------------------- collapse

/// Collapsing `D` dims of an operator of this shape: the output shape, and
/// the operators [`lcollapse`] and [`rcollapse`] return (the input itself
/// for `D == 1`: collapsing one dim does nothing).
#[diagnostic::on_unimplemented(
    message = "cannot collapse {D} dims of an operator of shape `{Self}`",
    label = "collapse needs 1 <= D <= RANK (and RANK <= 8)"
)]
pub trait Collapse<const D: usize>: Shape {
    /// The shape after collapsing.
    type Out: Shape;
    /// What [`lcollapse`] returns.
    type Left<O: Operator<Shape = Self>>: Operator<Elem = O::Elem, Shape = Self::Out>;
    /// What [`rcollapse`] returns.
    type Right<O: Operator<Shape = Self>>: Operator<Elem = O::Elem, Shape = Self::Out>;
    /// Builds the [`lcollapse`] operator.
    fn lcollapse<O: Operator<Shape = Self>>(op: O) -> Self::Left<O>;
    /// Builds the [`rcollapse`] operator.
    fn rcollapse<O: Operator<Shape = Self>>(op: O) -> Self::Right<O>;
}

impl<const N: usize> Collapse<1> for [usize; N] {
    type Out = [usize; N];
    type Left<O: Operator<Shape = Self>> = O;
    type Right<O: Operator<Shape = Self>> = O;
    fn lcollapse<O: Operator<Shape = Self>>(op: O) -> O {
        op
    }
    fn rcollapse<O: Operator<Shape = Self>>(op: O) -> O {
        op
    }
}

macro_rules! collapse_impls {
    ($($n:literal: [$($d:literal)*];)*) => {$($(
        impl Collapse<$d> for [usize; $n] {
            type Out = [usize; $n - $d + 1];
            type Left<O: Operator<Shape = Self>> = Expr<LCollapseOp<O, [usize; $n - $d + 1]>>;
            type Right<O: Operator<Shape = Self>> = Expr<RCollapseOp<O, [usize; $n - $d + 1]>>;
            fn lcollapse<O: Operator<Shape = Self>>(op: O) -> Self::Left<O> {
                let map = CollapseMap::new(op.sizes(), $d);
                Expr(Mapped::new(op, map))
            }
            fn rcollapse<O: Operator<Shape = Self>>(op: O) -> Self::Right<O> {
                let map = CollapseMap::new(op.sizes(), $d);
                Expr(Mapped::new(op, map))
            }
        }
    )*)*};
}
collapse_impls! {
    2: [2];
    3: [2 3];
    4: [2 3 4];
    5: [2 3 4 5];
    6: [2 3 4 5 6];
    7: [2 3 4 5 6 7];
    8: [2 3 4 5 6 7 8];
}

/// The first `D` dims of `op` as one (C order): `lcollapse<2>` of a
/// `[10, 12, 14]` operator is `[120, 14]`. `D == 1` returns `op` itself.
pub fn lcollapse<const D: usize, O>(op: O) -> <O::Shape as Collapse<D>>::Left<O>
where
    O: Operator,
    O::Shape: Collapse<D>,
{
    <O::Shape as Collapse<D>>::lcollapse(op)
}

/// The last `D` dims of `op` as one (C order): `rcollapse<2>` of a
/// `[10, 12, 14]` operator is `[10, 168]`. `D == 1` returns `op` itself.
pub fn rcollapse<const D: usize, O>(op: O) -> <O::Shape as Collapse<D>>::Right<O>
where
    O: Operator,
    O::Shape: Collapse<D>,
{
    <O::Shape as Collapse<D>>::rcollapse(op)
}

/// The first `d` dims as one.
pub type LCollapseOp<O, S> = Mapped<O, CollapseMap<<O as Operator>::Shape, S, false>>;
/// The last `d` dims as one.
pub type RCollapseOp<O, S> = Mapped<O, CollapseMap<<O as Operator>::Shape, S, true>>;

/// The map of [`LCollapseOp`] (`RIGHT == false`: the first `d` input dims
/// are output dim 0) and [`RCollapseOp`] (`RIGHT == true`: the last `d`
/// input dims are the last output dim).
#[derive(Clone, Copy, Debug)]
pub struct CollapseMap<In, Out, const RIGHT: bool> {
    d: usize,
    inner: In,
    sizes: Out,
}

impl<In: Shape, Out: Shape, const RIGHT: bool> CollapseMap<In, Out, RIGHT> {
    /// The output dim that stands for several input dims.
    const JOINED: usize = if RIGHT { Out::RANK - 1 } else { 0 };

    fn new(inner: In, d: usize) -> Self {
        // The input dims the joined output dim covers.
        let (lo, hi) = if RIGHT {
            (In::RANK - d, In::RANK)
        } else {
            (0, d)
        };
        let mut sizes = Out::zeros();
        for k in 0..Out::RANK {
            sizes[k] = if k == Self::JOINED {
                inner.as_ref()[lo..hi].iter().product()
            } else {
                inner[Self::input_dim(d, k)]
            };
        }
        CollapseMap { d, inner, sizes }
    }

    /// The input dim of output dim `k` (not the joined one).
    #[inline(always)]
    fn input_dim(d: usize, k: usize) -> usize {
        if RIGHT { k } else { k + d - 1 }
    }

    /// The input dims the joined output dim covers.
    #[inline(always)]
    fn joined(&self) -> (usize, usize) {
        if RIGHT {
            (In::RANK - self.d, In::RANK)
        } else {
            (0, self.d)
        }
    }
}

impl<In: Shape, Out: Shape, const RIGHT: bool> IndexMap<In> for CollapseMap<In, Out, RIGHT> {
    type Out = Out;
    fn name(&self) -> String {
        let side = if RIGHT { "rcollapse" } else { "lcollapse" };
        format!("{side}<{}>", self.d)
    }
    fn sizes(&self) -> Out {
        self.sizes
    }
    #[inline(always)]
    fn map(&self, idx: Out) -> In {
        let mut i = In::zeros();
        for k in 0..Out::RANK {
            if k != Self::JOINED {
                i[Self::input_dim(self.d, k)] = idx[k];
            }
        }
        let (lo, hi) = self.joined();
        unravel_into(&mut i, idx[Self::JOINED], &self.inner, lo, hi);
        i
    }
    #[inline(always)]
    fn line(&self, idx: Out, axis: usize, step: isize) -> Line<In> {
        if axis != Self::JOINED {
            Line::Run {
                idx: self.map(idx),
                axis: Self::input_dim(self.d, axis),
                step,
            }
        } else if step == 1 {
            let (lo, hi) = self.joined();
            Line::Split {
                idx: self.map(idx),
                sizes: self.inner,
                lo,
                hi,
            }
        } else {
            Line::Each
        }
    }
}

// SAFETY: (1) the joined output dim unravels (C order) over the input's own
// sizes of the dims it covers, a bijection onto them, and the other dims
// are the input's; (2) a run along another dim is the input's run along
// its dim; a step-1 run along the joined dim is consecutive C-order
// positions of the covered dims, which `Split` names.
unsafe impl<In: Shape, Out: Shape, const RIGHT: bool> Injective<In>
    for CollapseMap<In, Out, RIGHT>
{
}

// ---------------------------------------------------------------- reshape

/// The same elements in C order under another shape.
pub type ReshapeOp<O, S> = Mapped<O, ReshapeMap<<O as Operator>::Shape, S>>;

/// [`ReshapeOp`]'s map: the same flat C-order position.
#[derive(Clone, Copy, Debug)]
pub struct ReshapeMap<In, Out> {
    inner: In,
    sizes: Out,
}

impl<In: Shape, Out: Shape> IndexMap<In> for ReshapeMap<In, Out> {
    type Out = Out;
    fn name(&self) -> String {
        "reshape".into()
    }
    fn sizes(&self) -> Out {
        self.sizes
    }
    #[inline(always)]
    fn map(&self, idx: Out) -> In {
        unravel(ravel(&idx, &self.sizes), &self.inner)
    }
    #[inline(always)]
    fn line(&self, idx: Out, axis: usize, step: isize) -> Line<In> {
        if In::RANK == 0 {
            // One element, which every output index names.
            Line::Same(In::zeros())
        } else if axis + 1 == Out::RANK && step == 1 {
            Line::Split {
                idx: self.map(idx),
                sizes: self.inner,
                lo: 0,
                hi: In::RANK,
            }
        } else {
            Line::Each
        }
    }
}

// SAFETY: (1) the two shapes have the same number of elements (checked by
// `reshape`), so ravel then unravel is a bijection between their indices;
// (2) a step-1 run along the last output dim is consecutive C-order
// positions of the whole input, which `Split` over all its dims names.
unsafe impl<In: Shape, Out: Shape> Injective<In> for ReshapeMap<In, Out> {}

/// The elements of `op` in C order under the shape `sizes`.
///
/// # Errors
/// `InvalidArgument` when the element counts differ (naming both shapes).
pub fn reshape<O: Operator, S: Shape>(op: O, sizes: S) -> Result<Expr<ReshapeOp<O, S>>> {
    let inner = op.sizes();
    if numel(&inner) != numel(&sizes) {
        return Err(Error::invalid_argument(format!(
            "reshape: cannot view an operator of shape {} as shape {}",
            fmt_shape(inner.as_ref()),
            fmt_shape(sizes.as_ref())
        )));
    }
    Ok(Expr(Mapped::new(op, ReshapeMap { inner, sizes })))
}

/// All elements of `op` in C order, as one dim.
pub fn flatten<O: Operator>(op: O) -> Expr<ReshapeOp<O, [usize; 1]>> {
    let inner = op.sizes();
    let map = ReshapeMap {
        inner,
        sizes: [numel(&inner)],
    };
    Expr(Mapped::new(op, map))
}
