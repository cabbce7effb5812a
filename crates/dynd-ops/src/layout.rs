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
//! let _ = transpose_matrix(&v); // "transpose_matrix needs an operator of rank 2 or more"
//! ```
//!
//! ```compile_fail
//! use dynd_ops::{Tensor, permute};
//! let t = Tensor::<f64, [usize; 3]>::zeros([2, 3, 4]);
//! let _ = permute(&t, [1, 0]); // a rank-2 permutation of a rank-3 operator
//! ```

use crate::operator::{Expr, LvalueOp, Operator, forward_hooks, read_line};
use crate::rank::{DropDims, Shape, fmt_shape, numel, ravel, unravel};
use dynd::{Error, Result};

/// Calls `f(inner_idx, offset, len)` for the runs that `n` consecutive
/// positions of the flattened dims `lo..hi` of `sizes` make, starting at
/// `start`: each run lies along dim `hi - 1`. Dims outside `lo..hi` stay.
#[inline]
pub(crate) fn for_runs<S: Shape>(
    start: S,
    sizes: &S,
    lo: usize,
    hi: usize,
    n: usize,
    mut f: impl FnMut(S, usize, usize),
) {
    let last = hi - 1;
    let mut idx = start;
    let mut done = 0;
    while done < n {
        let k = (sizes[last] - idx[last]).min(n - done);
        f(idx, done, k);
        done += k;
        if done == n {
            break;
        }
        idx[last] = 0;
        let mut d = last;
        while d > lo {
            d -= 1;
            idx[d] += 1;
            if idx[d] < sizes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Unravels `flat` over dims `lo..hi` of `sizes` into `idx`.
#[inline]
fn unravel_into<S: Shape>(idx: &mut S, mut flat: usize, sizes: &S, lo: usize, hi: usize) {
    for d in (lo..hi).rev() {
        let n = sizes[d].max(1);
        idx[d] = flat % n;
        flat /= n;
    }
}

/// A line of an lvalue, written one element at a time (for runs an
/// operator cannot map to a single run of its input).
///
/// # Safety
/// As [`LvalueOp::write_line`], for `op`.
unsafe fn write_each<O: LvalueOp>(
    op: &O,
    mut map: impl FnMut(usize) -> O::Shape,
    vals: &[O::Elem],
) {
    for (j, v) in vals.iter().enumerate() {
        // SAFETY: element `j` of the caller's run is inside and unshared
        // (the caller's promises), and `map(j)` is that element.
        unsafe {
            op.write_line(
                map(j),
                O::Shape::RANK.saturating_sub(1),
                1,
                std::slice::from_ref(v),
            )
        };
    }
}

// ---------------------------------------------------------------- permute

/// The dims of an operator in another order.
#[derive(Clone)]
pub struct PermuteOp<O: Operator> {
    op: O,
    perm: O::Shape,
    sizes: O::Shape,
}

impl<O: Operator> PermuteOp<O> {
    #[inline(always)]
    fn map(&self, idx: O::Shape) -> O::Shape {
        let mut i = idx;
        for d in 0..O::Shape::RANK {
            i[self.perm[d]] = idx[d];
        }
        i
    }
}

impl<O: Operator> Operator for PermuteOp<O> {
    type Elem = O::Elem;
    type Shape = O::Shape;
    fn sizes(&self) -> O::Shape {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: O::Shape) -> O::Elem {
        self.op.get(self.map(idx))
    }
    #[inline(always)]
    fn fill_line(&self, idx: O::Shape, axis: usize, step: isize, out: &mut [O::Elem]) {
        self.op.fill_line(self.map(idx), self.perm[axis], step, out)
    }
    #[inline(always)]
    fn contiguous_line(
        &self,
        idx: O::Shape,
        axis: usize,
        step: isize,
        len: usize,
    ) -> Option<&[O::Elem]> {
        self.op
            .contiguous_line(self.map(idx), self.perm[axis], step, len)
    }
    fn name(&self) -> String {
        format!("permute({})", self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    forward_hooks!(op);
}

// SAFETY: (1) writes go to the input; (2) a permutation of indices is a
// bijection; (3) forwarded only when the last axis stays last.
unsafe impl<O: LvalueOp> LvalueOp for PermuteOp<O> {
    unsafe fn write_line(&self, idx: O::Shape, axis: usize, step: isize, vals: &[O::Elem]) {
        let a = if O::Shape::RANK == 0 {
            0
        } else {
            self.perm[axis]
        };
        // SAFETY: the permuted run is the same set of elements.
        unsafe { self.op.write_line(self.map(idx), a, step, vals) }
    }
    fn row_ptr(&self, idx: O::Shape, len: usize) -> Option<*mut O::Elem> {
        let last = O::Shape::RANK.checked_sub(1)?;
        if self.perm[last] == last {
            self.op.row_ptr(self.map(idx), len)
        } else {
            None
        }
    }
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
    let inner = op.sizes();
    let mut sizes = inner;
    for d in 0..n {
        sizes[d] = inner[perm[d]];
    }
    Ok(Expr(PermuteOp { op, perm, sizes }))
}

/// All dims reversed (NumPy's `.T`).
pub fn transpose<O: Operator>(op: O) -> Expr<PermuteOp<O>> {
    let mut perm = O::Shape::zeros();
    let n = O::Shape::RANK;
    for d in 0..n {
        perm[d] = n - 1 - d;
    }
    let inner = op.sizes();
    let mut sizes = inner;
    for d in 0..n {
        sizes[d] = inner[perm[d]];
    }
    Expr(PermuteOp { op, perm, sizes })
}

/// The last two dims swapped (a batch of transposed matrices).
pub fn transpose_matrix<O: Operator>(op: O) -> Expr<PermuteOp<O>> {
    const {
        assert!(
            O::Shape::RANK >= 2,
            "transpose_matrix needs an operator of rank 2 or more"
        )
    };
    let n = O::Shape::RANK;
    let mut perm = O::Shape::zeros();
    for d in 0..n {
        perm[d] = d;
    }
    perm.as_mut().swap(n - 2, n - 1);
    let inner = op.sizes();
    let mut sizes = inner;
    sizes.as_mut().swap(n - 2, n - 1);
    Expr(PermuteOp { op, perm, sizes })
}

// ---------------------------------------------------------------- reverse

/// One dim walked backwards.
#[derive(Clone)]
pub struct ReverseOp<O: Operator> {
    op: O,
    axis: usize,
    n: usize,
}

impl<O: Operator> ReverseOp<O> {
    #[inline(always)]
    fn map(&self, idx: O::Shape) -> O::Shape {
        let mut i = idx;
        i[self.axis] = self.n - 1 - idx[self.axis];
        i
    }
    #[inline(always)]
    fn step(&self, axis: usize, step: isize) -> isize {
        if axis == self.axis { -step } else { step }
    }
}

impl<O: Operator> Operator for ReverseOp<O> {
    type Elem = O::Elem;
    type Shape = O::Shape;
    fn sizes(&self) -> O::Shape {
        self.op.sizes()
    }
    #[inline(always)]
    fn get(&self, idx: O::Shape) -> O::Elem {
        self.op.get(self.map(idx))
    }
    #[inline(always)]
    fn fill_line(&self, idx: O::Shape, axis: usize, step: isize, out: &mut [O::Elem]) {
        self.op
            .fill_line(self.map(idx), axis, self.step(axis, step), out)
    }
    #[inline(always)]
    fn contiguous_line(
        &self,
        idx: O::Shape,
        axis: usize,
        step: isize,
        len: usize,
    ) -> Option<&[O::Elem]> {
        self.op
            .contiguous_line(self.map(idx), axis, self.step(axis, step), len)
    }
    fn name(&self) -> String {
        format!("reverse<{}>({})", self.axis, self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    forward_hooks!(op);
}

// SAFETY: (1) writes go to the input; (2) mirroring one dim is a
// bijection; (3) forwarded only when the reversed dim is not the last.
unsafe impl<O: LvalueOp> LvalueOp for ReverseOp<O> {
    unsafe fn write_line(&self, idx: O::Shape, axis: usize, step: isize, vals: &[O::Elem]) {
        // SAFETY: the mirrored run is the same set of elements.
        unsafe {
            self.op
                .write_line(self.map(idx), axis, self.step(axis, step), vals)
        }
    }
    fn row_ptr(&self, idx: O::Shape, len: usize) -> Option<*mut O::Elem> {
        if self.axis + 1 == O::Shape::RANK {
            None
        } else {
            self.op.row_ptr(self.map(idx), len)
        }
    }
}

/// `op` with dim `axis` walked backwards.
///
/// # Errors
/// `Index` when `axis` is not below the rank.
pub fn reverse<O: Operator>(op: O, axis: usize) -> Result<Expr<ReverseOp<O>>> {
    if axis >= O::Shape::RANK {
        return Err(Error::index(format!(
            "reverse: axis {axis} is out of range for an operator of rank {}",
            O::Shape::RANK
        )));
    }
    let n = op.sizes()[axis];
    Ok(Expr(ReverseOp { op, axis, n }))
}

/// The rows (dim `RANK - 2`) upside down.
pub fn flipud<O: Operator>(op: O) -> Expr<ReverseOp<O>> {
    const {
        assert!(
            O::Shape::RANK >= 2,
            "flipud needs an operator of rank 2 or more"
        )
    };
    let axis = O::Shape::RANK - 2;
    let n = op.sizes()[axis];
    Expr(ReverseOp { op, axis, n })
}

/// The columns (the last dim) left to right.
pub fn fliplr<O: Operator>(op: O) -> Expr<ReverseOp<O>> {
    const {
        assert!(
            O::Shape::RANK >= 1,
            "fliplr needs an operator of rank 1 or more"
        )
    };
    let axis = O::Shape::RANK - 1;
    let n = op.sizes()[axis];
    Expr(ReverseOp { op, axis, n })
}

// ---------------------------------------------------------------- slice

/// `end` that means "through the last element in the step's direction"
/// (Python's omitted end).
pub const END: isize = isize::MAX;

/// A strided window of an operator.
#[derive(Clone)]
pub struct SliceOp<O: Operator> {
    op: O,
    start: O::Shape,
    step: <O::Shape as Shape>::Strides,
    sizes: O::Shape,
}

impl<O: Operator> SliceOp<O> {
    #[inline(always)]
    fn map(&self, idx: O::Shape) -> O::Shape {
        let mut i = idx;
        for d in 0..O::Shape::RANK {
            i[d] = (self.start[d] as isize + idx[d] as isize * self.step[d]) as usize;
        }
        i
    }
}

impl<O: Operator> Operator for SliceOp<O> {
    type Elem = O::Elem;
    type Shape = O::Shape;
    fn sizes(&self) -> O::Shape {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: O::Shape) -> O::Elem {
        self.op.get(self.map(idx))
    }
    #[inline(always)]
    fn fill_line(&self, idx: O::Shape, axis: usize, step: isize, out: &mut [O::Elem]) {
        self.op
            .fill_line(self.map(idx), axis, step * self.step[axis], out)
    }
    #[inline(always)]
    fn contiguous_line(
        &self,
        idx: O::Shape,
        axis: usize,
        step: isize,
        len: usize,
    ) -> Option<&[O::Elem]> {
        self.op
            .contiguous_line(self.map(idx), axis, step * self.step[axis], len)
    }
    fn name(&self) -> String {
        format!("slice({})", self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    forward_hooks!(op);
}

// SAFETY: (1) writes go to the input; (2) non-zero steps map distinct
// indices to distinct input indices; (3) forwarded only for a last-dim
// step of 1, where the run is the input's run.
unsafe impl<O: LvalueOp> LvalueOp for SliceOp<O> {
    unsafe fn write_line(&self, idx: O::Shape, axis: usize, step: isize, vals: &[O::Elem]) {
        let s = if O::Shape::RANK == 0 {
            step
        } else {
            step * self.step[axis]
        };
        // SAFETY: the run maps to a run of the input inside its sizes (the
        // slice's bounds were checked when it was made); a non-zero slice
        // step keeps distinct elements distinct.
        unsafe { self.op.write_line(self.map(idx), axis, s, vals) }
    }
    fn row_ptr(&self, idx: O::Shape, len: usize) -> Option<*mut O::Elem> {
        let last = O::Shape::RANK.checked_sub(1)?;
        if self.step[last] == 1 {
            self.op.row_ptr(self.map(idx), len)
        } else {
            None
        }
    }
}

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
    Ok(Expr(SliceOp {
        op,
        start: first,
        step,
        sizes,
    }))
}

// ---------------------------------------------------------------- drop_dim

/// The slice at one index of one dim, that dim dropped.
#[derive(Clone)]
pub struct DropDimOp<O: Operator, S> {
    op: O,
    axis: usize,
    index: usize,
    sizes: S,
}

impl<O: Operator, S: Shape> DropDimOp<O, S> {
    #[inline(always)]
    fn map(&self, idx: S) -> O::Shape {
        let mut i = O::Shape::zeros();
        for d in 0..O::Shape::RANK {
            i[d] = match d.cmp(&self.axis) {
                std::cmp::Ordering::Less => idx[d],
                std::cmp::Ordering::Equal => self.index,
                std::cmp::Ordering::Greater => idx[d - 1],
            };
        }
        i
    }
    #[inline(always)]
    fn axis(&self, axis: usize) -> usize {
        if axis >= self.axis { axis + 1 } else { axis }
    }
}

impl<O: Operator, S: Shape> Operator for DropDimOp<O, S> {
    type Elem = O::Elem;
    type Shape = S;
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: S) -> O::Elem {
        self.op.get(self.map(idx))
    }
    #[inline(always)]
    fn fill_line(&self, idx: S, axis: usize, step: isize, out: &mut [O::Elem]) {
        self.op.fill_line(self.map(idx), self.axis(axis), step, out)
    }
    #[inline(always)]
    fn contiguous_line(&self, idx: S, axis: usize, step: isize, len: usize) -> Option<&[O::Elem]> {
        self.op
            .contiguous_line(self.map(idx), self.axis(axis), step, len)
    }
    fn name(&self) -> String {
        format!("drop_dim<{}>({})", self.axis, self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    forward_hooks!(op);
}

// SAFETY: (1) writes go to the input; (2) inserting a fixed index keeps
// distinct indices distinct; (3) forwarded only when the last dim is kept.
unsafe impl<O: LvalueOp, S: Shape> LvalueOp for DropDimOp<O, S> {
    unsafe fn write_line(&self, idx: S, axis: usize, step: isize, vals: &[O::Elem]) {
        let (a, s) = if S::RANK == 0 {
            (self.axis, 0)
        } else {
            (self.axis(axis), step)
        };
        // SAFETY: the run maps to a run of the input (the dropped index was
        // checked to be inside its dim); distinct elements stay distinct.
        unsafe { self.op.write_line(self.map(idx), a, s, vals) }
    }
    fn row_ptr(&self, idx: S, len: usize) -> Option<*mut O::Elem> {
        if S::RANK == 0 || self.axis + 1 == O::Shape::RANK {
            return None;
        }
        self.op.row_ptr(self.map(idx), len)
    }
}

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
    let inner = op.sizes();
    if axis >= O::Shape::RANK {
        return Err(Error::index(format!(
            "drop_dim: axis {axis} is out of range for an operator of rank {}",
            O::Shape::RANK
        )));
    }
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
    Ok(Expr(DropDimOp {
        op,
        axis,
        index: i as usize,
        sizes,
    }))
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
                Expr(LCollapseOp::new(op, $d))
            }
            fn rcollapse<O: Operator<Shape = Self>>(op: O) -> Self::Right<O> {
                Expr(RCollapseOp::new(op, $d))
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
#[derive(Clone)]
pub struct LCollapseOp<O: Operator, S> {
    op: O,
    d: usize,
    inner: O::Shape,
    sizes: S,
}

impl<O: Operator, S: Shape> LCollapseOp<O, S> {
    fn new(op: O, d: usize) -> Self {
        let inner = op.sizes();
        let mut sizes = S::zeros();
        sizes[0] = inner.as_ref()[..d].iter().product();
        for k in 1..S::RANK {
            sizes[k] = inner[k + d - 1];
        }
        LCollapseOp {
            op,
            d,
            inner,
            sizes,
        }
    }
    #[inline(always)]
    fn map(&self, idx: S) -> O::Shape {
        let mut i = O::Shape::zeros();
        for k in 1..S::RANK {
            i[k + self.d - 1] = idx[k];
        }
        unravel_into(&mut i, idx[0], &self.inner, 0, self.d);
        i
    }
}

impl<O: Operator, S: Shape> Operator for LCollapseOp<O, S> {
    type Elem = O::Elem;
    type Shape = S;
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: S) -> O::Elem {
        self.op.get(self.map(idx))
    }
    fn fill_line(&self, idx: S, axis: usize, step: isize, out: &mut [O::Elem]) {
        if axis > 0 {
            self.op
                .fill_line(self.map(idx), axis + self.d - 1, step, out);
        } else if step == 1 {
            for_runs(
                self.map(idx),
                &self.inner,
                0,
                self.d,
                out.len(),
                |i, at, k| self.op.fill_line(i, self.d - 1, 1, &mut out[at..at + k]),
            );
        } else {
            crate::operator::default_fill_line(self, idx, axis, step, out);
        }
    }
    fn contiguous_line(&self, idx: S, axis: usize, step: isize, len: usize) -> Option<&[O::Elem]> {
        if axis > 0 {
            self.op
                .contiguous_line(self.map(idx), axis + self.d - 1, step, len)
        } else {
            None
        }
    }
    fn name(&self) -> String {
        format!("lcollapse<{}>({})", self.d, self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    forward_hooks!(op);
}

// SAFETY: (1) writes go to the input; (2) unravelling is a bijection;
// (3) forwarded only when the last dim is an input dim.
unsafe impl<O: LvalueOp, S: Shape> LvalueOp for LCollapseOp<O, S> {
    unsafe fn write_line(&self, idx: S, axis: usize, step: isize, vals: &[O::Elem]) {
        if axis > 0 {
            // SAFETY: the run maps to one run of the input.
            unsafe {
                self.op
                    .write_line(self.map(idx), axis + self.d - 1, step, vals)
            }
        } else if step == 1 {
            for_runs(
                self.map(idx),
                &self.inner,
                0,
                self.d,
                vals.len(),
                |i, at, k| {
                    // SAFETY: the pieces partition the caller's run.
                    unsafe { self.op.write_line(i, self.d - 1, 1, &vals[at..at + k]) }
                },
            );
        } else {
            let mut i = idx;
            // SAFETY: element by element, the caller's run.
            unsafe {
                write_each(
                    &self.op,
                    |j| {
                        i[0] = (idx[0] as isize + j as isize * step) as usize;
                        self.map(i)
                    },
                    vals,
                )
            }
        }
    }
    fn row_ptr(&self, idx: S, len: usize) -> Option<*mut O::Elem> {
        if S::RANK >= 2 {
            self.op.row_ptr(self.map(idx), len)
        } else {
            None
        }
    }
}

/// The last `d` dims as one.
#[derive(Clone)]
pub struct RCollapseOp<O: Operator, S> {
    op: O,
    d: usize,
    inner: O::Shape,
    sizes: S,
}

impl<O: Operator, S: Shape> RCollapseOp<O, S> {
    fn new(op: O, d: usize) -> Self {
        let inner = op.sizes();
        let n = O::Shape::RANK;
        let mut sizes = S::zeros();
        for k in 0..S::RANK - 1 {
            sizes[k] = inner[k];
        }
        sizes[S::RANK - 1] = inner.as_ref()[n - d..].iter().product();
        RCollapseOp {
            op,
            d,
            inner,
            sizes,
        }
    }
    #[inline(always)]
    fn map(&self, idx: S) -> O::Shape {
        let n = O::Shape::RANK;
        let mut i = O::Shape::zeros();
        for k in 0..S::RANK - 1 {
            i[k] = idx[k];
        }
        unravel_into(&mut i, idx[S::RANK - 1], &self.inner, n - self.d, n);
        i
    }
    /// `true` when the run of `len` from `i` stays inside one input row.
    #[inline(always)]
    fn in_one_row(&self, i: &O::Shape, len: usize) -> bool {
        let last = O::Shape::RANK - 1;
        i[last] + len <= self.inner[last]
    }
}

impl<O: Operator, S: Shape> Operator for RCollapseOp<O, S> {
    type Elem = O::Elem;
    type Shape = S;
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: S) -> O::Elem {
        self.op.get(self.map(idx))
    }
    fn fill_line(&self, idx: S, axis: usize, step: isize, out: &mut [O::Elem]) {
        let n = O::Shape::RANK;
        if axis + 1 < S::RANK {
            self.op.fill_line(self.map(idx), axis, step, out);
        } else if step == 1 {
            for_runs(
                self.map(idx),
                &self.inner,
                n - self.d,
                n,
                out.len(),
                |i, at, k| self.op.fill_line(i, n - 1, 1, &mut out[at..at + k]),
            );
        } else {
            crate::operator::default_fill_line(self, idx, axis, step, out);
        }
    }
    fn contiguous_line(&self, idx: S, axis: usize, step: isize, len: usize) -> Option<&[O::Elem]> {
        let i = self.map(idx);
        if axis + 1 < S::RANK {
            self.op.contiguous_line(i, axis, step, len)
        } else if step == 1 && self.in_one_row(&i, len) {
            self.op.contiguous_line(i, O::Shape::RANK - 1, 1, len)
        } else {
            None
        }
    }
    fn name(&self) -> String {
        format!("rcollapse<{}>({})", self.d, self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    forward_hooks!(op);
}

// SAFETY: (1) writes go to the input; (2) unravelling is a bijection;
// (3) forwarded only for a run inside one input row.
unsafe impl<O: LvalueOp, S: Shape> LvalueOp for RCollapseOp<O, S> {
    unsafe fn write_line(&self, idx: S, axis: usize, step: isize, vals: &[O::Elem]) {
        let n = O::Shape::RANK;
        if axis + 1 < S::RANK {
            // SAFETY: the run maps to one run of the input.
            unsafe { self.op.write_line(self.map(idx), axis, step, vals) }
        } else if step == 1 {
            for_runs(
                self.map(idx),
                &self.inner,
                n - self.d,
                n,
                vals.len(),
                |i, at, k| {
                    // SAFETY: the pieces partition the caller's run.
                    unsafe { self.op.write_line(i, n - 1, 1, &vals[at..at + k]) }
                },
            );
        } else {
            let mut i = idx;
            let last = S::RANK - 1;
            // SAFETY: element by element, the caller's run.
            unsafe {
                write_each(
                    &self.op,
                    |j| {
                        i[last] = (idx[last] as isize + j as isize * step) as usize;
                        self.map(i)
                    },
                    vals,
                )
            }
        }
    }
    fn row_ptr(&self, idx: S, len: usize) -> Option<*mut O::Elem> {
        let i = self.map(idx);
        if self.in_one_row(&i, len) {
            self.op.row_ptr(i, len)
        } else {
            None
        }
    }
}

// ---------------------------------------------------------------- reshape

/// The same elements in C order under another shape.
#[derive(Clone)]
pub struct ReshapeOp<O: Operator, S> {
    op: O,
    inner: O::Shape,
    sizes: S,
}

impl<O: Operator, S: Shape> ReshapeOp<O, S> {
    #[inline(always)]
    fn map(&self, idx: S) -> O::Shape {
        unravel(ravel(&idx, &self.sizes), &self.inner)
    }
    fn in_one_row(&self, i: &O::Shape, len: usize) -> bool {
        O::Shape::RANK == 0 || i[O::Shape::RANK - 1] + len <= self.inner[O::Shape::RANK - 1]
    }
}

impl<O: Operator, S: Shape> Operator for ReshapeOp<O, S> {
    type Elem = O::Elem;
    type Shape = S;
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: S) -> O::Elem {
        self.op.get(self.map(idx))
    }
    fn fill_line(&self, idx: S, axis: usize, step: isize, out: &mut [O::Elem]) {
        let n = O::Shape::RANK;
        if axis + 1 == S::RANK && step == 1 && n > 0 {
            for_runs(self.map(idx), &self.inner, 0, n, out.len(), |i, at, k| {
                self.op.fill_line(i, n - 1, 1, &mut out[at..at + k])
            });
        } else if n == 0 {
            read_line(&self.op, O::Shape::zeros(), 0, 0, out);
        } else {
            crate::operator::default_fill_line(self, idx, axis, step, out);
        }
    }
    fn contiguous_line(&self, idx: S, axis: usize, step: isize, len: usize) -> Option<&[O::Elem]> {
        let i = self.map(idx);
        if axis + 1 == S::RANK && step == 1 && O::Shape::RANK > 0 && self.in_one_row(&i, len) {
            self.op.contiguous_line(i, O::Shape::RANK - 1, 1, len)
        } else {
            None
        }
    }
    fn name(&self) -> String {
        format!("reshape({})", self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    forward_hooks!(op);
}

// SAFETY: (1) writes go to the input; (2) ravel/unravel is a bijection
// between shapes of equal size; (3) forwarded only for a run inside one
// input row.
unsafe impl<O: LvalueOp, S: Shape> LvalueOp for ReshapeOp<O, S> {
    unsafe fn write_line(&self, idx: S, axis: usize, step: isize, vals: &[O::Elem]) {
        let n = O::Shape::RANK;
        if n > 0 && (S::RANK == 0 || (axis + 1 == S::RANK && step == 1)) {
            for_runs(self.map(idx), &self.inner, 0, n, vals.len(), |i, at, k| {
                // SAFETY: the pieces partition the caller's run.
                unsafe { self.op.write_line(i, n - 1, 1, &vals[at..at + k]) }
            });
        } else {
            let mut i = idx;
            // SAFETY: element by element, the caller's run.
            unsafe {
                write_each(
                    &self.op,
                    |j| {
                        if S::RANK > 0 {
                            i[axis] = (idx[axis] as isize + j as isize * step) as usize;
                        }
                        self.map(i)
                    },
                    vals,
                )
            }
        }
    }
    fn row_ptr(&self, idx: S, len: usize) -> Option<*mut O::Elem> {
        let i = self.map(idx);
        if O::Shape::RANK > 0 && self.in_one_row(&i, len) {
            self.op.row_ptr(i, len)
        } else {
            None
        }
    }
}

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
    Ok(Expr(ReshapeOp { op, inner, sizes }))
}

/// All elements of `op` in C order, as one dim.
pub fn flatten<O: Operator>(op: O) -> Expr<ReshapeOp<O, [usize; 1]>> {
    let inner = op.sizes();
    Expr(ReshapeOp {
        op,
        inner,
        sizes: [numel(&inner)],
    })
}
