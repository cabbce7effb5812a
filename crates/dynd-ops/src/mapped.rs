//! One generic view, [`Mapped`]: an operator read (and, for a one-to-one
//! map, written) through an index map.
//!
//! Every view that changes how an operator is indexed, not its values
//! (permute, slice, reverse, drop_dim, the collapses, reshape, clone,
//! repmat, shift, diag), is a small [`IndexMap`]: output sizes, the input
//! index of each output index, a name, and how a run of the output maps
//! onto the input ([`Line`]). The operator plumbing — element access, the
//! row-wise fast paths (`fill_line`, `contiguous_line`), the hooks and, for
//! one-to-one maps ([`Injective`]), writing — is written once, here.

use crate::operator::{
    Broadcast, LvalueOp, Operator, advance, default_fill_line, forward_hooks, read_line,
};
use crate::rank::{Shape, for_runs};
use dynd::Result;

/// How a run of an output (from an index, along an axis, by a step) lies
/// in the input of an [`IndexMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<In> {
    /// One run of the input: from `idx` along `axis` by `step`.
    Run {
        /// Where the run starts in the input.
        idx: In,
        /// The input axis it runs along.
        axis: usize,
        /// The input step per output step.
        step: isize,
    },
    /// Every element of the run is the input's element at this index (a
    /// broadcast dim).
    Same(In),
    /// For a step of 1: consecutive positions of the flattened input dims
    /// `lo..hi` (of an input of shape `sizes`) from `idx`, that is, runs
    /// along input dim `hi - 1` that carry into the dims before it (and
    /// wrap around at `lo`).
    Split {
        /// Where the run starts in the input.
        idx: In,
        /// The input's sizes.
        sizes: In,
        /// The first flattened dim.
        lo: usize,
        /// One past the last flattened dim.
        hi: usize,
    },
    /// None of these: element by element, through [`IndexMap::map`].
    Each,
}

/// A view as a map from output indices to input indices.
///
/// Implementations give the output sizes, the map, a name and the
/// [`Line`] of a run; [`Mapped`] builds the operator from them.
pub trait IndexMap<In: Shape>: Clone + Send + Sync {
    /// The output shape.
    type Out: Shape;
    /// The name of the view, without its input: `permute`, `reverse<1>`.
    fn name(&self) -> String;
    /// The output sizes.
    fn sizes(&self) -> Self::Out;
    /// The input index of output index `idx` (inside [`sizes`](Self::sizes)).
    fn map(&self, idx: Self::Out) -> In;
    /// How the run from `idx` along `axis` by `step` lies in the input
    /// (called for outputs of rank 1 or more, with `axis` below the rank).
    /// [`Line::Each`] is always correct; the others are fast paths.
    fn line(&self, idx: Self::Out, axis: usize, step: isize) -> Line<In>;
    /// `true` when the view only adds leading dims of size 1 (NumPy's
    /// broadcasting across ranks), which a device's right-aligned
    /// broadcasting does by itself: the view then has its input's device
    /// form. The default is `false`.
    fn adds_leading_dims(&self) -> bool {
        false
    }
}

/// An [`IndexMap`] through which a view may be written.
///
/// # Safety
/// [`Mapped`]'s [`LvalueOp`] implementation writes through the map, from
/// several threads at once, trusting that:
/// 1. distinct output indices inside [`IndexMap::sizes`] map to distinct
///    input indices, all inside the input's sizes;
/// 2. for every run inside the output's sizes, a [`Line::Run`] or
///    [`Line::Split`] that [`IndexMap::line`] returns reaches exactly the
///    input elements that [`IndexMap::map`] gives for the run's elements,
///    in order, all inside the input (so a `Split` only for a step of 1).
pub unsafe trait Injective<In: Shape>: IndexMap<In> {}

/// An operator seen through an [`IndexMap`]: what every view function
/// returns (`PermuteOp`, `SliceOp`, ... are names for its instances).
#[derive(Clone)]
pub struct Mapped<O, M> {
    op: O,
    map: M,
}

impl<O: Operator, M: IndexMap<O::Shape>> Mapped<O, M> {
    pub(crate) fn new(op: O, map: M) -> Self {
        Mapped { op, map }
    }

    /// The map, to change it before the view is read.
    pub(crate) fn map_mut(&mut self) -> &mut M {
        &mut self.map
    }
}

impl<O: Operator, M: IndexMap<O::Shape>> Operator for Mapped<O, M> {
    type Elem = O::Elem;
    type Shape = M::Out;
    #[inline(always)]
    fn sizes(&self) -> M::Out {
        self.map.sizes()
    }
    #[inline(always)]
    fn get(&self, idx: M::Out) -> O::Elem {
        self.op.get(self.map.map(idx))
    }
    #[inline(always)]
    fn fill_line(&self, idx: M::Out, axis: usize, step: isize, out: &mut [O::Elem]) {
        match self.map.line(idx, axis, step) {
            Line::Run { idx, axis, step } => read_line(&self.op, idx, axis, step, out),
            Line::Same(i) => out.fill(self.op.get(i)),
            Line::Split { idx, sizes, lo, hi } => {
                for_runs(idx, &sizes, lo, hi, out.len(), |i, at, k| {
                    self.op.fill_line(i, hi - 1, 1, &mut out[at..at + k])
                })
            }
            Line::Each => default_fill_line(self, idx, axis, step, out),
        }
    }
    #[inline(always)]
    fn contiguous_line(
        &self,
        idx: M::Out,
        axis: usize,
        step: isize,
        len: usize,
    ) -> Option<&[O::Elem]> {
        match self.map.line(idx, axis, step) {
            Line::Run { idx, axis, step } if O::Shape::RANK > 0 => {
                self.op.contiguous_line(idx, axis, step, len)
            }
            Line::Split { idx, sizes, hi, .. } if idx[hi - 1] + len <= sizes[hi - 1] => {
                self.op.contiguous_line(idx, hi - 1, 1, len)
            }
            _ => None,
        }
    }
    fn name(&self) -> String {
        format!("{}({})", self.map.name(), self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    fn device_expr(&self) -> Option<crate::device::DeviceExpr> {
        if self.map.adds_leading_dims() {
            self.op.device_expr()
        } else {
            None
        }
    }
    forward_hooks!(op);
}

impl<O: LvalueOp, M: Injective<O::Shape>> Mapped<O, M> {
    /// Writes the run element by element, each through the map.
    ///
    /// # Safety
    /// As [`LvalueOp::write_line`].
    unsafe fn write_each(&self, idx: M::Out, axis: usize, step: isize, vals: &[O::Elem]) {
        let last = O::Shape::RANK.saturating_sub(1);
        for (j, v) in vals.iter().enumerate() {
            let i = if M::Out::RANK == 0 {
                idx
            } else {
                advance(idx, axis, j, step)
            };
            // SAFETY: element `j` of the caller's run is inside the output
            // and unshared (the caller's promises 1 and 2); the map sends it
            // to one input element inside the input (`Injective` 1), which
            // no other output element reaches.
            unsafe {
                self.op
                    .write_line(self.map.map(i), last, 1, std::slice::from_ref(v))
            };
        }
    }
}

// SAFETY: (1) every write goes to the input through the map and lands
// inside the input's sizes (`Injective` 1 and 2), so inside the memory the
// input reports, which `visit_memory` forwards; (2) the map sends distinct
// output indices to distinct input indices (`Injective` 1), and the input
// is itself an lvalue; (3) `row_ptr` forwards only a run that the map says
// is one step-1 run along the input's last axis (`Injective` 2), for which
// the input's own `row_ptr` answers.
unsafe impl<O: LvalueOp, M: Injective<O::Shape>> LvalueOp for Mapped<O, M> {
    #[inline(always)]
    unsafe fn write_line(&self, idx: M::Out, axis: usize, step: isize, vals: &[O::Elem]) {
        if M::Out::RANK == 0 {
            // SAFETY: the caller's promises, for the one element.
            return unsafe { self.write_each(idx, axis, step, vals) };
        }
        match self.map.line(idx, axis, step) {
            // SAFETY: the run reaches exactly the mapped elements of the
            // caller's run (`Injective` 2): inside the input, and distinct
            // from what other runs reach (`Injective` 1).
            Line::Run { idx, axis, step } => unsafe { self.op.write_line(idx, axis, step, vals) },
            Line::Split { idx, sizes, lo, hi } => {
                for_runs(idx, &sizes, lo, hi, vals.len(), |i, at, k| {
                    // SAFETY: the pieces partition the mapped elements of
                    // the caller's run (`Injective` 2), each a step-1 run of
                    // the input.
                    unsafe { self.op.write_line(i, hi - 1, 1, &vals[at..at + k]) }
                })
            }
            // SAFETY: the caller's promises, element by element.
            Line::Same(_) | Line::Each => unsafe { self.write_each(idx, axis, step, vals) },
        }
    }
    #[inline(always)]
    fn row_ptr(&self, idx: M::Out, len: usize) -> Option<*mut O::Elem> {
        let in_last = O::Shape::RANK.saturating_sub(1);
        let Some(last) = M::Out::RANK.checked_sub(1) else {
            // A 0-d output is one element: the input's run of one there.
            return self.op.row_ptr(self.map.map(idx), len);
        };
        match self.map.line(idx, last, 1) {
            Line::Run { idx, axis, step: 1 } if axis == in_last && O::Shape::RANK > 0 => {
                self.op.row_ptr(idx, len)
            }
            Line::Split { idx, sizes, hi, .. }
                if hi - 1 == in_last && idx[in_last] + len <= sizes[in_last] =>
            {
                self.op.row_ptr(idx, len)
            }
            _ => None,
        }
    }
}

/// An operator of rank `In` seen at the higher rank `Out` (NumPy's
/// broadcasting across ranks): its dims are the trailing ones; the added
/// leading dims, and its own size-1 dims, repeat it.
#[derive(Clone, Copy, Debug)]
pub struct ExpandMap<In, Out> {
    inner: In,
    sizes: Out,
}

impl<In: Shape, Out: Shape> ExpandMap<In, Out> {
    const OFF: usize = Out::RANK - In::RANK;

    /// The map that adds leading size-1 dims.
    fn new(inner: In) -> Self {
        let mut sizes = Out::filled(1);
        for d in 0..In::RANK {
            sizes[d + Self::OFF] = inner[d];
        }
        ExpandMap { inner, sizes }
    }

    /// The map to `target` where the shapes broadcast; where they do not,
    /// the operator keeps its own size there (so the assignment reports the
    /// mismatch, naming both shapes).
    fn to(inner: In, target: Out) -> Self {
        let mut m = Self::new(inner);
        for d in 0..Out::RANK {
            if m.sizes[d] == 1 {
                m.sizes[d] = target[d];
            }
        }
        m
    }
}

impl<In: Shape, Out: Shape> IndexMap<In> for ExpandMap<In, Out> {
    type Out = Out;
    fn name(&self) -> String {
        format!("expand<{}>", Out::RANK)
    }
    fn adds_leading_dims(&self) -> bool {
        true
    }
    fn sizes(&self) -> Out {
        self.sizes
    }
    #[inline(always)]
    fn map(&self, idx: Out) -> In {
        let mut i = In::zeros();
        for d in 0..In::RANK {
            if self.inner[d] != 1 {
                i[d] = idx[d + Self::OFF];
            }
        }
        i
    }
    #[inline(always)]
    fn line(&self, idx: Out, axis: usize, step: isize) -> Line<In> {
        if axis < Self::OFF || self.inner[axis - Self::OFF] == 1 {
            Line::Same(self.map(idx))
        } else {
            Line::Run {
                idx: self.map(idx),
                axis: axis - Self::OFF,
                step,
            }
        }
    }
}

/// An operator broadcast to a higher rank ([`Broadcast`]).
pub type ExpandOp<O, Out> = Mapped<O, ExpandMap<<O as Operator>::Shape, Out>>;

impl<S: Shape> Broadcast<S> for S {
    type Out = S;
    type Left<O: Operator<Shape = S>> = O;
    type Right<O: Operator<Shape = S>> = O;
    #[inline(always)]
    fn left<O: Operator<Shape = S>>(o: O) -> O {
        o
    }
    #[inline(always)]
    fn right<O: Operator<Shape = S>>(o: O) -> O {
        o
    }
    #[inline(always)]
    fn left_to<O: Operator<Shape = S>>(o: O, _sizes: S) -> O {
        o
    }
}

/// `Broadcast` between rank `$m` and each higher rank `$n`, both ways.
macro_rules! broadcast_ranks {
    ($($m:literal: [$($n:literal)*];)*) => {$($(
        impl Broadcast<[usize; $n]> for [usize; $m] {
            type Out = [usize; $n];
            type Left<O: Operator<Shape = [usize; $m]>> = ExpandOp<O, [usize; $n]>;
            type Right<O: Operator<Shape = [usize; $n]>> = O;
            fn left<O: Operator<Shape = [usize; $m]>>(o: O) -> Self::Left<O> {
                let m = ExpandMap::new(o.sizes());
                Mapped::new(o, m)
            }
            fn right<O: Operator<Shape = [usize; $n]>>(o: O) -> O {
                o
            }
            fn left_to<O: Operator<Shape = [usize; $m]>>(o: O, sizes: [usize; $n]) -> Self::Left<O> {
                let m = ExpandMap::to(o.sizes(), sizes);
                Mapped::new(o, m)
            }
        }
        impl Broadcast<[usize; $m]> for [usize; $n] {
            type Out = [usize; $n];
            type Left<O: Operator<Shape = [usize; $n]>> = O;
            type Right<O: Operator<Shape = [usize; $m]>> = ExpandOp<O, [usize; $n]>;
            fn left<O: Operator<Shape = [usize; $n]>>(o: O) -> O {
                o
            }
            fn right<O: Operator<Shape = [usize; $m]>>(o: O) -> Self::Right<O> {
                let m = ExpandMap::new(o.sizes());
                Mapped::new(o, m)
            }
            fn left_to<O: Operator<Shape = [usize; $n]>>(o: O, _sizes: [usize; $n]) -> O {
                o
            }
        }
    )*)*};
}

broadcast_ranks! {
    0: [1 2 3 4 5 6 7 8];
    1: [2 3 4 5 6 7 8];
    2: [3 4 5 6 7 8];
    3: [4 5 6 7 8];
    4: [5 6 7 8];
    5: [6 7 8];
    6: [7 8];
    7: [8];
}
