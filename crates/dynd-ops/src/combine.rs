//! Operators that combine or extend operators: concat and stack (of two
//! operators, or of any number of one type: `concat_n`, `stack_n`), clone
//! (broadcast to a shape), repmat, pad, shift (by a number or a rank-0
//! operator), the FFT shifts, and diagonals (`diag`, `diag_embed`).
//!
//! ```
//! use dynd_ops::{concat, ones, zeros, Operator};
//! let c = concat(0, ones::<f64, _>([4, 4]), zeros([3, 4])).unwrap();
//! assert_eq!(c.sizes(), [7, 4]);
//! assert_eq!((c.get([3, 0]), c.get([4, 0])), (1.0, 0.0));
//! ```

use crate::element::Num;
use crate::mapped::{IndexMap, Injective, Line, Mapped};
use crate::operator::{
    Expr, LvalueOp, Operator, default_fill_line, forward_access, forward_hooks, read_line,
};
use crate::rank::{AddDim, Shape, check_axis, fmt_shape, index_from, rank_at_least};
use dynd::{Error, Result};
use std::ops::Range;

/// How many leading elements of the run `p0, p0 + step, ...` (`len` long)
/// satisfy `p < split` (for `step >= 0`) or `p >= split` (for `step < 0`):
/// the length of the first piece when a run crosses `split`.
#[inline]
fn first_piece(p0: usize, step: isize, len: usize, split: usize) -> usize {
    let (p0, split) = (p0 as isize, split as isize);
    let k = if step > 0 {
        if p0 >= split {
            0
        } else {
            (split - p0 + step - 1) / step
        }
    } else if step < 0 {
        if p0 < split {
            0
        } else {
            (p0 - split) / (-step) + 1
        }
    } else if p0 < split {
        len as isize
    } else {
        0
    };
    (k.max(0) as usize).min(len)
}

// ---------------------------------------------------------------- concat

/// `a` followed by `b` along one dim.
#[derive(Clone)]
pub struct ConcatOp<A: Operator, B> {
    a: A,
    b: B,
    axis: usize,
    na: usize,
    sizes: A::Shape,
}

/// One piece of a run of a [`ConcatOp`]: where it starts (in the operand's
/// own indices), whether that operand is `b`, and which part of the run
/// it is.
type Piece<S> = (S, bool, Range<usize>);

impl<A: Operator, B: Operator<Elem = A::Elem, Shape = A::Shape>> ConcatOp<A, B> {
    #[inline(always)]
    fn in_b(&self, idx: &A::Shape) -> bool {
        idx[self.axis] >= self.na
    }
    #[inline(always)]
    fn to_b(&self, idx: A::Shape) -> A::Shape {
        let mut i = idx;
        i[self.axis] -= self.na;
        i
    }
    /// The run from `idx` along `axis` by `step`, `len` long, in (at most)
    /// two pieces, each inside one operand; an empty second piece when the
    /// run does not cross the seam.
    #[inline]
    fn pieces(&self, idx: A::Shape, axis: usize, step: isize, len: usize) -> [Piece<A::Shape>; 2] {
        let first_is_b = self.in_b(&idx);
        let crosses = axis == self.axis && ((step > 0 && !first_is_b) || (step < 0 && first_is_b));
        let k = if crosses {
            first_piece(idx[axis], step, len, self.na)
        } else {
            len
        };
        let own = |i: A::Shape, in_b: bool| if in_b { self.to_b(i) } else { i };
        // The second piece starts past the seam, only when there is one.
        let rest = if k < len {
            let mut i = idx;
            i[axis] = (idx[axis] as isize + k as isize * step) as usize;
            own(i, !first_is_b)
        } else {
            idx
        };
        [
            (own(idx, first_is_b), first_is_b, 0..k),
            (rest, !first_is_b, k..len),
        ]
    }
}

impl<A, B> Operator for ConcatOp<A, B>
where
    A: Operator,
    B: Operator<Elem = A::Elem, Shape = A::Shape>,
{
    type Elem = A::Elem;
    type Shape = A::Shape;
    fn sizes(&self) -> A::Shape {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: A::Shape) -> A::Elem {
        if self.in_b(&idx) {
            self.b.get(self.to_b(idx))
        } else {
            self.a.get(idx)
        }
    }
    fn fill_line(&self, idx: A::Shape, axis: usize, step: isize, out: &mut [A::Elem]) {
        for (i, in_b, r) in self.pieces(idx, axis, step, out.len()) {
            if r.is_empty() {
            } else if in_b {
                self.b.fill_line(i, axis, step, &mut out[r])
            } else {
                self.a.fill_line(i, axis, step, &mut out[r])
            }
        }
    }
    fn contiguous_line(
        &self,
        idx: A::Shape,
        axis: usize,
        step: isize,
        len: usize,
    ) -> Option<&[A::Elem]> {
        match self.pieces(idx, axis, step, len) {
            [(i, true, r), _] if r.len() == len => self.b.contiguous_line(i, axis, step, len),
            [(i, false, r), _] if r.len() == len => self.a.contiguous_line(i, axis, step, len),
            _ => None,
        }
    }
    fn name(&self) -> String {
        format!(
            "concat<{}>({}, {})",
            self.axis,
            self.a.name(),
            self.b.name()
        )
    }
    fn validate(&self) -> Result<()> {
        self.a.validate()?;
        self.b.validate()
    }
    forward_hooks!(a, b);
}

// SAFETY: (1) writes go to `a` or `b`, both reported; (2) each index
// reaches one element of `a` or of `b`, distinct within each, and `a`'s
// and `b`'s memory is disjoint when their regions are; (3) from a child,
// for a run that lies inside it.
unsafe impl<A, B> LvalueOp for ConcatOp<A, B>
where
    A: LvalueOp,
    B: LvalueOp<Elem = A::Elem, Shape = A::Shape>,
{
    unsafe fn write_line(&self, idx: A::Shape, axis: usize, step: isize, vals: &[A::Elem]) {
        let ax = if A::Shape::RANK == 0 { self.axis } else { axis };
        for (i, in_b, r) in self.pieces(idx, ax, step, vals.len()) {
            if r.is_empty() {
                continue;
            }
            // SAFETY: the two pieces partition the caller's run, and each
            // lies inside the operand it is written to.
            unsafe {
                if in_b {
                    self.b.write_line(i, ax, step, &vals[r])
                } else {
                    self.a.write_line(i, ax, step, &vals[r])
                }
            }
        }
    }
    fn row_ptr(&self, idx: A::Shape, len: usize) -> Option<*mut A::Elem> {
        let last = A::Shape::RANK.checked_sub(1)?;
        match self.pieces(idx, last, 1, len) {
            [(i, true, r), _] if r.len() == len => self.b.row_ptr(i, len),
            [(i, false, r), _] if r.len() == len => self.a.row_ptr(i, len),
            _ => None,
        }
    }
}

/// `a` then `b` along `axis`; the other dims must match.
///
/// # Errors
/// `Index` for a bad axis; `Broadcast` when the other dims differ (naming
/// both shapes).
pub fn concat<A, B>(axis: usize, a: A, b: B) -> Result<Expr<ConcatOp<A, B>>>
where
    A: Operator,
    B: Operator<Elem = A::Elem, Shape = A::Shape>,
{
    check_axis::<A::Shape>("concat", axis)?;
    let (sa, sb) = (a.sizes(), b.sizes());
    for d in 0..A::Shape::RANK {
        if d != axis && sa[d] != sb[d] {
            return Err(Error::broadcast(format!(
                "concat along axis {axis}: shapes {} and {} differ in dim {d}",
                fmt_shape(sa.as_ref()),
                fmt_shape(sb.as_ref())
            )));
        }
    }
    let mut sizes = sa;
    sizes[axis] = sa[axis] + sb[axis];
    Ok(Expr(ConcatOp {
        a,
        b,
        axis,
        na: sa[axis],
        sizes,
    }))
}

// ---------------------------------------------------------------- stack

/// `a` and `b` along a new dim.
#[derive(Clone)]
pub struct StackOp<A: Operator, B, S> {
    a: A,
    b: B,
    axis: usize,
    sizes: S,
}

impl<A: Operator, B, S: Shape> StackOp<A, B, S> {
    #[inline(always)]
    fn map(&self, idx: S) -> A::Shape {
        index_from(|d| if d < self.axis { idx[d] } else { idx[d + 1] })
    }
}

impl<A, B, S> Operator for StackOp<A, B, S>
where
    A: Operator,
    B: Operator<Elem = A::Elem, Shape = A::Shape>,
    S: Shape,
{
    type Elem = A::Elem;
    type Shape = S;
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: S) -> A::Elem {
        if idx[self.axis] == 0 {
            self.a.get(self.map(idx))
        } else {
            self.b.get(self.map(idx))
        }
    }
    fn fill_line(&self, idx: S, axis: usize, step: isize, out: &mut [A::Elem]) {
        if axis == self.axis {
            return default_fill_line(self, idx, axis, step, out);
        }
        let ax = if axis < self.axis { axis } else { axis - 1 };
        if idx[self.axis] == 0 {
            read_line(&self.a, self.map(idx), ax, step, out)
        } else {
            read_line(&self.b, self.map(idx), ax, step, out)
        }
    }
    fn name(&self) -> String {
        format!("stack<{}>({}, {})", self.axis, self.a.name(), self.b.name())
    }
    fn validate(&self) -> Result<()> {
        self.a.validate()?;
        self.b.validate()
    }
    forward_hooks!(a, b);
}

/// `a` and `b` (same shape) stacked along a new dim at `axis` (0 to RANK):
/// the result has rank `RANK + 1` and size 2 at `axis`.
///
/// # Errors
/// `Index` for a bad axis; `Broadcast` when the shapes differ.
pub fn stack<A, B>(
    axis: usize,
    a: A,
    b: B,
) -> Result<Expr<StackOp<A, B, <A::Shape as AddDim>::Out>>>
where
    A: Operator,
    B: Operator<Elem = A::Elem, Shape = A::Shape>,
    A::Shape: AddDim,
{
    check_axis::<<A::Shape as AddDim>::Out>("stack", axis)?;
    let (sa, sb) = (a.sizes(), b.sizes());
    if sa != sb {
        return Err(Error::broadcast(format!(
            "stack: shapes {} and {} differ",
            fmt_shape(sa.as_ref()),
            fmt_shape(sb.as_ref())
        )));
    }
    let mut sizes = <<A::Shape as AddDim>::Out as Shape>::zeros();
    for d in 0..<A::Shape as AddDim>::Out::RANK {
        sizes[d] = match d.cmp(&axis) {
            std::cmp::Ordering::Less => sa[d],
            std::cmp::Ordering::Equal => 2,
            std::cmp::Ordering::Greater => sa[d - 1],
        };
    }
    Ok(Expr(StackOp { a, b, axis, sizes }))
}

// ---------------------------------------------------------------- n-ary

/// Any number of operators of one type, one after another along a dim
/// (MatX's variadic `concat`).
#[derive(Clone)]
pub struct ConcatNOp<O: Operator> {
    ops: Vec<O>,
    axis: usize,
    /// Where each operand starts along `axis`, and (last) the total.
    starts: Vec<usize>,
    sizes: O::Shape,
}

impl<O: Operator> ConcatNOp<O> {
    /// The operand that holds position `p` along the axis.
    #[inline(always)]
    fn part(&self, p: usize) -> usize {
        self.starts.partition_point(|&s| s <= p) - 1
    }

    /// Calls `f(k, idx_in_k, range)` for the pieces of the run from `idx`
    /// along `axis` by `step`, `len` long, each inside operand `k`.
    #[inline]
    fn pieces(
        &self,
        idx: O::Shape,
        axis: usize,
        step: isize,
        len: usize,
        mut f: impl FnMut(usize, O::Shape, Range<usize>),
    ) {
        let mut j = 0;
        while j < len {
            let mut i = idx;
            if O::Shape::RANK > 0 {
                i[axis] = (idx[axis] as isize + j as isize * step) as usize;
            }
            let p = if O::Shape::RANK > 0 { i[self.axis] } else { 0 };
            let k = self.part(p);
            let (lo, hi) = (self.starts[k], self.starts[k + 1]);
            let n = if axis != self.axis || step == 0 {
                len - j
            } else if step > 0 {
                (hi - p).div_ceil(step as usize).min(len - j)
            } else {
                ((p - lo) / step.unsigned_abs() + 1).min(len - j)
            };
            if O::Shape::RANK > 0 {
                i[self.axis] -= lo;
            }
            f(k, i, j..j + n);
            j += n;
        }
    }
}

/// The operator hooks of an operator over `self.ops: Vec<O>` (the n-ary
/// concat and stack): each hook runs on every input in order.
macro_rules! each_op_hooks {
    () => {
        fn validate(&self) -> Result<()> {
            self.ops.iter().try_for_each(|o| o.validate())
        }
        fn prepare(&mut self, ex: &dyn crate::executor::Executor) -> Result<()> {
            self.ops.iter_mut().try_for_each(|o| o.prepare(ex))
        }
        fn finish(&mut self) {
            self.ops.iter_mut().for_each(|o| o.finish());
        }
        fn visit_memory(&self, f: &mut dyn FnMut(crate::operator::MemRegion)) {
            self.ops.iter().for_each(|o| o.visit_memory(f));
        }
        fn check_errors(&self) -> Result<()> {
            self.ops.iter().try_for_each(|o| o.check_errors())
        }
    };
}

impl<O: Operator> Operator for ConcatNOp<O> {
    type Elem = O::Elem;
    type Shape = O::Shape;
    fn sizes(&self) -> O::Shape {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: O::Shape) -> O::Elem {
        let k = self.part(idx[self.axis]);
        let mut i = idx;
        i[self.axis] -= self.starts[k];
        self.ops[k].get(i)
    }
    fn fill_line(&self, idx: O::Shape, axis: usize, step: isize, out: &mut [O::Elem]) {
        self.pieces(idx, axis, step, out.len(), |k, i, r| {
            self.ops[k].fill_line(i, axis, step, &mut out[r])
        });
    }
    fn name(&self) -> String {
        let names: Vec<String> = self.ops.iter().map(|o| o.name()).collect();
        format!("concat<{}>({})", self.axis, names.join(", "))
    }
    each_op_hooks!();
}

// SAFETY: (1) writes go to the operands, all reported; (2) each index
// reaches one element of one operand (the operands partition the axis),
// distinct within each, and the operands' memory is disjoint when their
// regions are; (3) `row_ptr` forwards only a run that lies inside one
// operand.
unsafe impl<O: LvalueOp> LvalueOp for ConcatNOp<O> {
    unsafe fn write_line(&self, idx: O::Shape, axis: usize, step: isize, vals: &[O::Elem]) {
        self.pieces(idx, axis, step, vals.len(), |k, i, r| {
            // SAFETY: the pieces partition the caller's run, and each lies
            // inside the operand it is written to.
            unsafe { self.ops[k].write_line(i, axis, step, &vals[r]) }
        });
    }
    fn row_ptr(&self, idx: O::Shape, len: usize) -> Option<*mut O::Elem> {
        let last = O::Shape::RANK.checked_sub(1)?;
        let mut one = None;
        let mut count = 0;
        self.pieces(idx, last, 1, len, |k, i, _| {
            count += 1;
            one = Some((k, i));
        });
        match (count, one) {
            (1, Some((k, i))) => self.ops[k].row_ptr(i, len),
            _ => None,
        }
    }
}

/// The operators `ops` (at least one, all of one type) one after another
/// along `axis` (MatX's variadic `concat`); the other dims must match.
/// Operators of different types concatenate with nested [`concat()`]s.
///
/// # Errors
/// `InvalidArgument` for no operators; `Index` for a bad axis; `Broadcast`
/// when the other dims differ (naming the operand and both shapes).
pub fn concat_n<O: Operator>(
    axis: usize,
    ops: impl IntoIterator<Item = O>,
) -> Result<Expr<ConcatNOp<O>>> {
    check_axis::<O::Shape>("concat", axis)?;
    let ops: Vec<O> = ops.into_iter().collect();
    let Some(first) = ops.first() else {
        return Err(Error::invalid_argument(
            "concat: no operators to concatenate",
        ));
    };
    let s0 = first.sizes();
    let mut starts = vec![0];
    for (k, o) in ops.iter().enumerate() {
        let s = o.sizes();
        if let Some(d) = (0..O::Shape::RANK).find(|&d| d != axis && s[d] != s0[d]) {
            return Err(Error::broadcast(format!(
                "concat along axis {axis}: operand {k} has shape {}, operand 0 {} (dim {d} differs)",
                fmt_shape(s.as_ref()),
                fmt_shape(s0.as_ref())
            )));
        }
        starts.push(starts[k] + s[axis]);
    }
    let mut sizes = s0;
    sizes[axis] = starts[ops.len()];
    Ok(Expr(ConcatNOp {
        ops,
        axis,
        starts,
        sizes,
    }))
}

/// Any number of operators of one type and shape along a new dim (MatX's
/// variadic `stack`).
#[derive(Clone)]
pub struct StackNOp<O, S> {
    ops: Vec<O>,
    axis: usize,
    sizes: S,
}

impl<O: Operator, S: Shape> StackNOp<O, S> {
    #[inline(always)]
    fn map(&self, idx: S) -> O::Shape {
        index_from(|d| if d < self.axis { idx[d] } else { idx[d + 1] })
    }
}

impl<O: Operator, S: Shape> Operator for StackNOp<O, S> {
    type Elem = O::Elem;
    type Shape = S;
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: S) -> O::Elem {
        self.ops[idx[self.axis]].get(self.map(idx))
    }
    fn fill_line(&self, idx: S, axis: usize, step: isize, out: &mut [O::Elem]) {
        if axis == self.axis {
            return default_fill_line(self, idx, axis, step, out);
        }
        let ax = if axis < self.axis { axis } else { axis - 1 };
        read_line(&self.ops[idx[self.axis]], self.map(idx), ax, step, out)
    }
    fn name(&self) -> String {
        let names: Vec<String> = self.ops.iter().map(|o| o.name()).collect();
        format!("stack<{}>({})", self.axis, names.join(", "))
    }
    each_op_hooks!();
}

/// The operators `ops` (at least one, all of one type and shape) stacked
/// along a new dim at `axis` (0 to RANK; MatX's variadic `stack`): the
/// result has rank `RANK + 1` and size `ops.len()` at `axis`.
///
/// # Errors
/// `InvalidArgument` for no operators; `Index` for a bad axis; `Broadcast`
/// when the shapes differ (naming the operand and both shapes).
pub fn stack_n<O>(
    axis: usize,
    ops: impl IntoIterator<Item = O>,
) -> Result<Expr<StackNOp<O, <O::Shape as AddDim>::Out>>>
where
    O: Operator,
    O::Shape: AddDim,
{
    check_axis::<<O::Shape as AddDim>::Out>("stack", axis)?;
    let ops: Vec<O> = ops.into_iter().collect();
    let Some(first) = ops.first() else {
        return Err(Error::invalid_argument("stack: no operators to stack"));
    };
    let s0 = first.sizes();
    for (k, o) in ops.iter().enumerate() {
        if o.sizes() != s0 {
            return Err(Error::broadcast(format!(
                "stack: operand {k} has shape {}, operand 0 {}",
                fmt_shape(o.sizes().as_ref()),
                fmt_shape(s0.as_ref())
            )));
        }
    }
    let mut sizes = <<O::Shape as AddDim>::Out as Shape>::zeros();
    for d in 0..<O::Shape as AddDim>::Out::RANK {
        sizes[d] = match d.cmp(&axis) {
            std::cmp::Ordering::Less => s0[d],
            std::cmp::Ordering::Equal => ops.len(),
            std::cmp::Ordering::Greater => s0[d - 1],
        };
    }
    Ok(Expr(StackNOp { ops, axis, sizes }))
}

// ---------------------------------------------------------------- clone

/// In [`clone`]'s sizes: this dim is one of the input's, in order.
pub const KEEP: usize = usize::MAX;

/// An operator broadcast to a bigger shape.
pub type CloneOp<O, S> = Mapped<O, CloneMap<<O as Operator>::Shape, S>>;

/// [`CloneOp`]'s map: the output dims marked [`KEEP`] are the input's.
#[derive(Clone, Copy, Debug)]
pub struct CloneMap<In, Out> {
    sizes: Out,
    /// Output dim of each input dim.
    from: In,
    /// Input dim of each output dim, or `KEEP` for a new (broadcast) dim.
    to: Out,
}

impl<In: Shape, Out: Shape> IndexMap<In> for CloneMap<In, Out> {
    type Out = Out;
    fn name(&self) -> String {
        format!("clone<{}>", Out::RANK)
    }
    fn sizes(&self) -> Out {
        self.sizes
    }
    #[inline(always)]
    fn map(&self, idx: Out) -> In {
        index_from(|d| idx[self.from[d]])
    }
    #[inline(always)]
    fn line(&self, idx: Out, axis: usize, step: isize) -> Line<In> {
        match self.to[axis] {
            KEEP => Line::Same(self.map(idx)),
            d => Line::Run {
                idx: self.map(idx),
                axis: d,
                step,
            },
        }
    }
}

/// `op` repeated to the shape `sizes` (MatX's `clone`): entries of `sizes`
/// that are [`KEEP`] take the input's dims, in order; the others are new
/// dims along which the input repeats. `clone(v, [5, KEEP])` of a
/// length-3 `v` is a `[5, 3]` operator whose every row is `v`.
///
/// # Errors
/// `InvalidArgument` when the number of `KEEP`s is not the input's rank.
pub fn clone<O: Operator, S: Shape>(op: O, sizes: S) -> Result<Expr<CloneOp<O, S>>> {
    let inner = op.sizes();
    let keeps = sizes.as_ref().iter().filter(|&&s| s == KEEP).count();
    if keeps != O::Shape::RANK {
        return Err(Error::invalid_argument(format!(
            "clone: {keeps} dims marked KEEP, but the operator has rank {}",
            O::Shape::RANK
        )));
    }
    let mut out = sizes;
    let mut from = O::Shape::zeros();
    let mut to = S::filled(KEEP);
    let mut k = 0;
    for d in 0..S::RANK {
        if sizes[d] == KEEP {
            out[d] = inner[k];
            from[k] = d;
            to[d] = k;
            k += 1;
        }
    }
    let map = CloneMap {
        sizes: out,
        from,
        to,
    };
    Ok(Expr(Mapped::new(op, map)))
}

// ---------------------------------------------------------------- repmat

/// An operator tiled a number of times along each dim.
pub type RepmatOp<O> = Mapped<O, RepmatMap<<O as Operator>::Shape>>;

/// [`RepmatOp`]'s map: each position modulo the input's size.
#[derive(Clone, Copy, Debug)]
pub struct RepmatMap<S> {
    inner: S,
    sizes: S,
}

impl<S: Shape> IndexMap<S> for RepmatMap<S> {
    type Out = S;
    fn name(&self) -> String {
        "repmat".into()
    }
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn map(&self, idx: S) -> S {
        index_from(|d| idx[d] % self.inner[d])
    }
    #[inline(always)]
    fn line(&self, idx: S, axis: usize, step: isize) -> Line<S> {
        if step == 1 {
            // Along `axis`, wrapping around to its start.
            Line::Split {
                idx: self.map(idx),
                sizes: self.inner,
                lo: axis,
                hi: axis + 1,
            }
        } else {
            Line::Each
        }
    }
}

/// `op` tiled `reps[d]` times along each dim `d`.
pub fn repmat<O: Operator>(op: O, reps: O::Shape) -> Expr<RepmatOp<O>> {
    let inner = op.sizes();
    let mut sizes = inner;
    for d in 0..O::Shape::RANK {
        sizes[d] = inner[d].saturating_mul(reps[d]);
    }
    Expr(Mapped::new(op, RepmatMap { inner, sizes }))
}

// ---------------------------------------------------------------- shift

/// An operator rotated along one dim.
pub type ShiftOp<O> = Mapped<O, ShiftMap<<O as Operator>::Shape>>;

/// [`ShiftOp`]'s map: position `p` of dim `axis` reads position
/// `(p + offset) mod n` of the input (a rotation by `-offset`).
#[derive(Clone, Copy, Debug)]
pub struct ShiftMap<S> {
    axis: usize,
    shift: usize,
    sizes: S,
}

impl<S: Shape> IndexMap<S> for ShiftMap<S> {
    type Out = S;
    fn name(&self) -> String {
        format!("shift<{}>", self.axis)
    }
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn map(&self, idx: S) -> S {
        let mut i = idx;
        i[self.axis] = (idx[self.axis] + self.shift) % self.sizes[self.axis];
        i
    }
    #[inline(always)]
    fn line(&self, idx: S, axis: usize, step: isize) -> Line<S> {
        if axis != self.axis {
            Line::Run {
                idx: self.map(idx),
                axis,
                step,
            }
        } else if step == 1 {
            // Along `axis`, wrapping around to its start.
            Line::Split {
                idx: self.map(idx),
                sizes: self.sizes,
                lo: axis,
                hi: axis + 1,
            }
        } else {
            Line::Each
        }
    }
}

/// `op` rotated along `axis` by `amount` (MatX's `shift`, NumPy's `roll`):
/// element `i` of the result is element `(i - amount) mod n` of `op`, so
/// `shift(x, 0, 1)` of `[0, 1, 2, 3, 4]` is `[4, 0, 1, 2, 3]` and
/// `shift(x, 0, -1)` is `[1, 2, 3, 4, 0]`.
///
/// # Errors
/// `Index` for a bad axis.
pub fn shift<O: Operator>(op: O, axis: usize, amount: isize) -> Result<Expr<ShiftOp<O>>> {
    check_axis::<O::Shape>("shift", axis)?;
    let sizes = op.sizes();
    let shift = read_offset(sizes[axis], amount);
    Ok(Expr(Mapped::new(op, ShiftMap { axis, shift, sizes })))
}

/// The map's offset (`p + offset`) for a rotation by `amount` of a dim of
/// `n`.
fn read_offset(n: usize, amount: isize) -> usize {
    if n == 0 {
        0
    } else {
        // `-amount mod n`, without overflow for `isize::MIN`.
        let r = amount.rem_euclid(n as isize) as usize;
        (n - r) % n
    }
}

/// `op` rotated along `axis` by a step `offset` (element `i` is element
/// `(i + offset) mod n`).
fn rotated<O: Operator>(op: O, axis: usize, offset: usize) -> Expr<ShiftOp<O>> {
    let sizes = op.sizes();
    let shift = if sizes[axis] == 0 {
        0
    } else {
        offset % sizes[axis]
    };
    Expr(Mapped::new(op, ShiftMap { axis, shift, sizes }))
}

/// An operator rotated by an amount that is itself a rank-0 operator.
#[derive(Clone)]
pub struct ShiftByOp<O: Operator, A> {
    inner: ShiftOp<O>,
    amount: A,
    axis: usize,
}

impl<O: Operator, A: Operator<Shape = [usize; 0]>> ShiftByOp<O, A>
where
    A::Elem: Num,
{
    /// Reads the amount and sets the rotation.
    fn update(&mut self) {
        let n = self.inner.sizes()[self.axis];
        let amount = self.amount.get([]).as_f64();
        let amount = if amount.is_finite() {
            amount as isize
        } else {
            0
        };
        self.inner.map_mut().shift = read_offset(n, amount);
    }
}

impl<O: Operator, A: Operator<Shape = [usize; 0]>> Operator for ShiftByOp<O, A>
where
    A::Elem: Num,
{
    type Elem = O::Elem;
    type Shape = O::Shape;
    fn sizes(&self) -> O::Shape {
        self.inner.sizes()
    }
    forward_access!(inner);
    fn name(&self) -> String {
        format!("{}<by {}>", self.inner.name(), self.amount.name())
    }
    fn validate(&self) -> Result<()> {
        self.amount.validate()?;
        self.inner.validate()
    }
    fn prepare(&mut self, ex: &dyn crate::executor::Executor) -> Result<()> {
        self.amount.prepare(ex)?;
        self.update();
        self.inner.prepare(ex)
    }
    fn finish(&mut self) {
        self.amount.finish();
        self.inner.finish();
    }
    fn visit_memory(&self, f: &mut dyn FnMut(crate::operator::MemRegion)) {
        self.amount.visit_memory(f);
        self.inner.visit_memory(f);
    }
    fn check_errors(&self) -> Result<()> {
        self.amount.check_errors()?;
        self.inner.check_errors()
    }
}

/// [`shift`] by an amount given as a rank-0 operator (of any number type;
/// floats truncate, NaN and infinities count as 0): the amount is read when
/// the expression is prepared to run (and when it is built, for reads
/// outside an executor).
///
/// # Errors
/// `Index` for a bad axis.
pub fn shift_by<O, A>(op: O, axis: usize, amount: A) -> Result<Expr<ShiftByOp<O, A>>>
where
    O: Operator,
    A: Operator<Shape = [usize; 0]>,
    A::Elem: Num,
{
    check_axis::<O::Shape>("shift", axis)?;
    let mut s = ShiftByOp {
        inner: rotated(op, axis, 0).0,
        amount,
        axis,
    };
    s.update();
    Ok(Expr(s))
}

/// An operator rotated along its last two dims.
pub type Shift2Op<O> = Mapped<ShiftOp<O>, ShiftMap<<O as Operator>::Shape>>;

/// MatX's `fftshift1D`: the last dim rotated so that the zero frequency
/// moves to the middle (element `i` is element `(i + (n + 1) / 2) mod n`;
/// NumPy's `fftshift` along the last axis).
pub fn fftshift1d<O: Operator>(op: O) -> Expr<ShiftOp<O>> {
    rank_at_least::<O::Shape, 1>();
    let last = O::Shape::RANK - 1;
    let n = op.sizes()[last];
    rotated(op, last, n.div_ceil(2))
}

/// MatX's `ifftshift1D`, the inverse of [`fftshift1d`]: element `i` is
/// element `(i + n / 2) mod n` (the same as `fftshift1d` for even `n`).
pub fn ifftshift1d<O: Operator>(op: O) -> Expr<ShiftOp<O>> {
    rank_at_least::<O::Shape, 1>();
    let last = O::Shape::RANK - 1;
    let n = op.sizes()[last];
    rotated(op, last, n / 2)
}

/// MatX's `fftshift2D`: [`fftshift1d`] along each of the last two dims
/// (swaps the quadrants of each matrix).
pub fn fftshift2d<O: Operator>(op: O) -> Expr<Shift2Op<O>> {
    rank_at_least::<O::Shape, 2>();
    let (r, c) = (O::Shape::RANK - 2, O::Shape::RANK - 1);
    let s = op.sizes();
    rotated(rotated(op, c, s[c].div_ceil(2)).0, r, s[r].div_ceil(2))
}

/// MatX's `ifftshift2D`: [`ifftshift1d`] along each of the last two dims.
pub fn ifftshift2d<O: Operator>(op: O) -> Expr<Shift2Op<O>> {
    rank_at_least::<O::Shape, 2>();
    let (r, c) = (O::Shape::RANK - 2, O::Shape::RANK - 1);
    let s = op.sizes();
    rotated(rotated(op, c, s[c] / 2).0, r, s[r] / 2)
}

// ---------------------------------------------------------------- pad

/// What [`pad`] puts outside the input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PadMode<T> {
    /// A constant value.
    Constant(T),
    /// The nearest edge element of the input.
    Edge,
}

/// An operator extended along one dim.
#[derive(Clone)]
pub struct PadOp<O: Operator> {
    op: O,
    axis: usize,
    before: usize,
    n: usize,
    mode: PadMode<O::Elem>,
    sizes: O::Shape,
}

impl<O: Operator> PadOp<O> {
    /// The input index for `idx`, or `None` for a constant element.
    #[inline(always)]
    fn map(&self, idx: O::Shape) -> Option<O::Shape> {
        let p = idx[self.axis];
        let mut i = idx;
        if p >= self.before && p < self.before + self.n {
            i[self.axis] = p - self.before;
            return Some(i);
        }
        match self.mode {
            PadMode::Constant(_) => None,
            PadMode::Edge => {
                i[self.axis] = if p < self.before { 0 } else { self.n - 1 };
                Some(i)
            }
        }
    }
}

impl<O: Operator> Operator for PadOp<O> {
    type Elem = O::Elem;
    type Shape = O::Shape;
    fn sizes(&self) -> O::Shape {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: O::Shape) -> O::Elem {
        match (self.map(idx), self.mode) {
            (Some(i), _) => self.op.get(i),
            (None, PadMode::Constant(v)) => v,
            (None, PadMode::Edge) => unreachable!("edge padding always maps to the input"),
        }
    }
    fn fill_line(&self, idx: O::Shape, axis: usize, step: isize, out: &mut [O::Elem]) {
        if axis != self.axis {
            return match (self.map(idx), self.mode) {
                (Some(i), _) => self.op.fill_line(i, axis, step, out),
                (None, PadMode::Constant(v)) => out.fill(v),
                (None, PadMode::Edge) => unreachable!("edge padding always maps to the input"),
            };
        }
        if step != 1 {
            return default_fill_line(self, idx, axis, step, out);
        }
        // Before the input, the input, after it.
        let p = idx[axis];
        let head = self.before.saturating_sub(p).min(out.len());
        let body_start = p.max(self.before);
        let body = (self.before + self.n)
            .saturating_sub(body_start)
            .min(out.len() - head);
        let (h, rest) = out.split_at_mut(head);
        let (b, t) = rest.split_at_mut(body);
        let mut i = idx;
        for (region, pos) in [(h, p), (t, p + head + body)] {
            if !region.is_empty() {
                i[axis] = pos;
                region.fill(self.get(i));
            }
        }
        if !b.is_empty() {
            i[axis] = body_start - self.before;
            self.op.fill_line(i, axis, 1, b);
        }
    }
    fn name(&self) -> String {
        format!("pad<{}>({})", self.axis, self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    forward_hooks!(op);
}

/// `op` with `before` elements added at the start of `axis` and `after` at
/// its end, filled as `mode` says.
///
/// # Errors
/// `Index` for a bad axis; `InvalidArgument` for edge padding of an empty
/// dim.
pub fn pad<O: Operator>(
    op: O,
    axis: usize,
    before: usize,
    after: usize,
    mode: PadMode<O::Elem>,
) -> Result<Expr<PadOp<O>>> {
    check_axis::<O::Shape>("pad", axis)?;
    let mut sizes = op.sizes();
    let n = sizes[axis];
    if n == 0 && mode == PadMode::Edge && before + after > 0 {
        return Err(Error::invalid_argument(
            "pad: an empty dim has no edge to repeat",
        ));
    }
    sizes[axis] = n + before + after;
    Ok(Expr(PadOp {
        op,
        axis,
        before,
        n,
        mode,
        sizes,
    }))
}

// ---------------------------------------------------------------- diag

/// A diagonal of a matrix.
pub type DiagOp<O> = Mapped<O, DiagMap>;

/// [`DiagOp`]'s map: position `i` is `(r0 + i, c0 + i)`.
#[derive(Clone, Copy, Debug)]
pub struct DiagMap {
    r0: usize,
    c0: usize,
    len: usize,
}

impl IndexMap<[usize; 2]> for DiagMap {
    type Out = [usize; 1];
    #[inline(always)]
    fn sizes(&self) -> [usize; 1] {
        [self.len]
    }
    #[inline(always)]
    fn map(&self, [i]: [usize; 1]) -> [usize; 2] {
        [self.r0 + i, self.c0 + i]
    }
    fn line(&self, _idx: [usize; 1], _axis: usize, _step: isize) -> Line<[usize; 2]> {
        Line::Each
    }
    fn name(&self) -> String {
        "diag".into()
    }
}

// SAFETY: (1) distinct positions `i` give distinct rows `r0 + i`, and
// `diag` bounds `len` so that every `(r0 + i, c0 + i)` is inside the
// matrix; (2) `line` never returns a `Run` or a `Split`.
unsafe impl Injective<[usize; 2]> for DiagMap {}

/// Diagonal `k` of a matrix (0 the main one, `k > 0` above it, `k < 0`
/// below); empty when `k` is past the matrix, as in NumPy.
pub fn diag<O: Operator<Shape = [usize; 2]>>(op: O, k: isize) -> Expr<DiagOp<O>> {
    let [r, c] = op.sizes();
    let (r0, c0) = if k >= 0 {
        (0, k as usize)
    } else {
        ((-k) as usize, 0)
    };
    let len = r.saturating_sub(r0).min(c.saturating_sub(c0));
    let map = DiagMap {
        r0: r0.min(r),
        c0: c0.min(c),
        len,
    };
    Expr(Mapped::new(op, map))
}

/// A square matrix with a vector on a diagonal.
#[derive(Clone)]
pub struct DiagEmbedOp<O> {
    op: O,
    k: isize,
    n: usize,
}

impl<O: Operator<Shape = [usize; 1]>> Operator for DiagEmbedOp<O>
where
    O::Elem: Num,
{
    type Elem = O::Elem;
    type Shape = [usize; 2];
    fn sizes(&self) -> [usize; 2] {
        [self.n, self.n]
    }
    #[inline(always)]
    fn get(&self, [i, j]: [usize; 2]) -> O::Elem {
        if j as isize - i as isize == self.k {
            self.op.get([i.min(j)])
        } else {
            O::Elem::ZERO
        }
    }
    fn name(&self) -> String {
        format!("diag_embed({})", self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    forward_hooks!(op);
}

/// The square matrix with `v` on diagonal `k` and 0 elsewhere (NumPy's
/// `diag` of a vector).
pub fn diag_embed<O: Operator<Shape = [usize; 1]>>(v: O, k: isize) -> Expr<DiagEmbedOp<O>>
where
    O::Elem: Num,
{
    let n = v.sizes()[0] + k.unsigned_abs();
    Expr(DiagEmbedOp { op: v, k, n })
}
