//! The operator traits and the [`Expr`] wrapper that user-facing functions
//! return.
//!
//! An operator knows its element type, its shape (and so its rank) and gives
//! the element at an index. Executors never ask for elements one flat index
//! at a time: they walk the output row by row and ask for a whole run along
//! one axis ([`Operator::fill_line`]). Tensors answer with a contiguous copy
//! or a strided gather; elementwise operators fill each operand's run into a
//! bounded stack buffer and combine whole chunks, so their inner loops
//! vectorise.

use crate::device::DeviceExpr;
use crate::element::Element;
use crate::executor::Executor;
use crate::rank::Shape;

use dynd::Result;
use std::mem::MaybeUninit;

/// Elements per chunk when an operator fills an operand's run into a stack
/// buffer (a few KiB per buffer: the buffers stay in L1).
pub const LINE_CHUNK: usize = 256;

/// A byte range `[start, end)` of memory an operator reads (or an lvalue
/// writes); used to detect an output that overlaps an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemRegion {
    /// First byte address.
    pub start: usize,
    /// One past the last byte address.
    pub end: usize,
}

impl MemRegion {
    /// `true` when the two ranges share a byte.
    pub fn overlaps(&self, other: &MemRegion) -> bool {
        self.start < other.end && other.start < self.end
    }
}

/// A lazy operator: element type, shape and element access.
///
/// Implementations exist for tensors, tensor views, dynd array views and
/// every operator the crate's functions build. Writing one by hand means
/// giving [`sizes`](Operator::sizes), [`get`](Operator::get) and the hooks;
/// [`fill_line`](Operator::fill_line) has a default that calls `get`.
pub trait Operator: Send + Sync {
    /// The element type.
    type Elem: Element;
    /// The shape type, `[usize; RANK]`.
    type Shape: Shape;

    /// The size of each dim.
    fn sizes(&self) -> Self::Shape;

    /// The element at `idx` (each entry less than the matching size).
    fn get(&self, idx: Self::Shape) -> Self::Elem;

    /// Writes `out[j] = self.get(idx + j * step * e_axis)` for every `j`.
    ///
    /// Only called on operators of rank at least 1 (0-d operators are read
    /// with [`get`](Operator::get); use [`read_line`] to handle both), with
    /// `axis < RANK` and every index of the run inside the operator.
    fn fill_line(&self, idx: Self::Shape, axis: usize, step: isize, out: &mut [Self::Elem]) {
        default_fill_line(self, idx, axis, step, out);
    }

    /// The row-wise fill: `out[j] = self.get(idx + j * e_last)`, a run of
    /// the innermost dim from `idx` (for a 0-d operator, its one element).
    /// What executors call for each piece of an output row; it forwards to
    /// [`fill_line`](Operator::fill_line), which is what operators override.
    fn fill_row(&self, idx: Self::Shape, out: &mut [Self::Elem]) {
        read_line(self, idx, Self::Shape::RANK.saturating_sub(1), 1, out);
    }

    /// The same run as [`fill_line`](Operator::fill_line) as a slice of the
    /// operator's own memory, when it lies there contiguously (a tensor whose
    /// `axis` stride times `step` is 1). Lets elementwise operators skip a
    /// copy. The default is `None`.
    fn contiguous_line(
        &self,
        _idx: Self::Shape,
        _axis: usize,
        _step: isize,
        _len: usize,
    ) -> Option<&[Self::Elem]> {
        None
    }

    /// A readable name that composes: `lcollapse<2>(permute(tensor))`.
    fn name(&self) -> String;

    /// Checks what could not be checked when the operator was built (the
    /// shapes of an elementwise operator's operands); errors name the shapes.
    fn validate(&self) -> Result<()>;

    /// Runs before an executor reads the operator (MatX's `PreRun`):
    /// transforms compute their temporaries here. Forward to children.
    fn prepare(&mut self, ex: &dyn Executor) -> Result<()>;

    /// Runs after an executor is done with the operator (MatX's `PostRun`):
    /// transforms free their temporaries. Forward to children.
    fn finish(&mut self);

    /// Reports every range of memory the operator reads (children included),
    /// so an assignment can tell when its output overlaps an input.
    fn visit_memory(&self, f: &mut dyn FnMut(MemRegion));

    /// The first error an element operation met while the operator was read
    /// since it was prepared (integer division by zero, `MIN / -1`), the
    /// lowest index in C order first, children included. Executors call it
    /// after filling an output. Operators with children forward it (the
    /// hook macros do); the default is `Ok(())`.
    fn check_errors(&self) -> Result<()> {
        Ok(())
    }

    /// The operator as a device computes it ([`DeviceExpr`]): device
    /// arrays, scalars, dynd's elementwise functions and conversions, run
    /// by a device executor as one kernel. `None` (the default) when some
    /// part has no device form; wrappers that only forward forward it.
    fn device_expr(&self) -> Option<DeviceExpr> {
        None
    }
}

/// An operator that can be assigned to: tensor views, dynd array views, and
/// permutes, slices, reverses, collapses, reshapes, drop_dims, diagonals and
/// concatenations of them.
///
/// # Safety
/// Executors write through an lvalue from several threads at once, trusting
/// that:
/// 1. [`write_line`](LvalueOp::write_line) and
///    [`row_ptr`](LvalueOp::row_ptr) reach only memory that
///    [`visit_memory`](Operator::visit_memory) reports;
/// 2. when the regions `visit_memory` reports are pairwise disjoint
///    (executors check it), distinct indices reach distinct elements;
/// 3. `row_ptr(idx, len)`, when `Some`, points at the `len` elements of the
///    run from `idx` along the last axis, contiguous and writable.
pub unsafe trait LvalueOp: Operator {
    /// Writes `vals[j]` to the element at `idx + j * step * e_axis`.
    ///
    /// # Safety
    /// 1. Every index of the run lies inside [`sizes`](Operator::sizes)
    ///    (for rank 0: `vals.len() == 1`).
    /// 2. No other thread reads or writes those elements during the call.
    unsafe fn write_line(&self, idx: Self::Shape, axis: usize, step: isize, vals: &[Self::Elem]);

    /// A pointer to `len` contiguous elements along the last axis starting
    /// at `idx`, when the output lies there so; executors then fill the
    /// output in place. The default is `None`.
    fn row_ptr(&self, _idx: Self::Shape, _len: usize) -> Option<*mut Self::Elem> {
        None
    }

    /// The assignment `self = rhs`; nothing runs until
    /// [`Set::run`](crate::Set::run). `rhs` has the output's rank, or a
    /// lower one: then it is broadcast NumPy's way (leading dims added, its
    /// size-1 dims repeated), so a rank-0 operator fills the output.
    fn set<R>(self, rhs: R) -> Set<Self, <R::Shape as Broadcast<Self::Shape>>::Left<R>>
    where
        Self: Sized,
        R: Operator<Elem = Self::Elem>,
        R::Shape: Broadcast<Self::Shape, Out = Self::Shape>,
    {
        let sizes = self.sizes();
        Set::new(
            self,
            <R::Shape as Broadcast<Self::Shape>>::left_to(rhs, sizes),
        )
    }
}

/// NumPy's broadcasting across ranks: an operator of shape `Self` meets
/// one of shape `B`; the result has the higher rank ([`Broadcast::Out`]).
/// The operator of lower rank is seen with leading dims of size 1 added
/// ([`Broadcast::Left`] or [`Broadcast::Right`] wraps it); operators of the
/// same rank are used as they are (no wrapper, no cost). Size-1 dims then
/// broadcast as within one rank. Implemented for all pairs of ranks up to
/// [`MAX_RANK`](crate::MAX_RANK).
pub trait Broadcast<B: Shape>: Shape {
    /// The shape of the result: the higher rank.
    type Out: Shape;
    /// An operator of shape `Self` seen at rank `Out`.
    type Left<O: Operator<Shape = Self>>: Operator<Elem = O::Elem, Shape = Self::Out>;
    /// An operator of shape `B` seen at rank `Out`.
    type Right<O: Operator<Shape = B>>: Operator<Elem = O::Elem, Shape = Self::Out>;
    /// `o` seen at rank `Out` (size 1 in the added dims).
    fn left<O: Operator<Shape = Self>>(o: O) -> Self::Left<O>;
    /// `o` seen at rank `Out` (size 1 in the added dims).
    fn right<O: Operator<Shape = B>>(o: O) -> Self::Right<O>;
    /// `o` seen at rank `Out` with the sizes `sizes` where they broadcast
    /// (its size-1 and added dims repeated); an operator of rank `Out`
    /// itself is returned as it is.
    fn left_to<O: Operator<Shape = Self>>(o: O, sizes: Self::Out) -> Self::Left<O>;
}

/// An assignment `lhs = rhs`, built by [`LvalueOp::set`]; nothing happens
/// until [`run`](crate::Set::run) (the assignment engine, which lives
/// above the executors).
pub struct Set<L, R> {
    pub(crate) lhs: L,
    pub(crate) rhs: R,
}

impl<L, R> Set<L, R>
where
    L: LvalueOp,
    R: Operator<Elem = L::Elem, Shape = L::Shape>,
{
    pub(crate) fn new(lhs: L, rhs: R) -> Self {
        Set { lhs, rhs }
    }
}

/// The default [`Operator::fill_line`]: one `get` per element.
pub fn default_fill_line<O: Operator + ?Sized>(
    op: &O,
    idx: O::Shape,
    axis: usize,
    step: isize,
    out: &mut [O::Elem],
) {
    if O::Shape::RANK == 0 {
        out.fill(op.get(idx));
        return;
    }
    let mut i = idx;
    let start = idx[axis] as isize;
    for (j, o) in out.iter_mut().enumerate() {
        i[axis] = (start + j as isize * step) as usize;
        *o = op.get(i);
    }
}

/// [`Operator::fill_line`] for operators of any rank: a 0-d operator fills
/// `out` with its one element.
#[inline]
pub fn read_line<O: Operator + ?Sized>(
    op: &O,
    idx: O::Shape,
    axis: usize,
    step: isize,
    out: &mut [O::Elem],
) {
    if O::Shape::RANK == 0 {
        out.fill(op.get(idx));
    } else {
        op.fill_line(idx, axis, step, out);
    }
}

/// The run of `len` elements of `op` as a slice: its own memory when
/// contiguous there, else filled into `buf`.
#[inline]
pub(crate) fn line_slice<'a, O: Operator + ?Sized>(
    op: &'a O,
    idx: O::Shape,
    axis: usize,
    step: isize,
    len: usize,
    buf: &'a mut LineBuf<O::Elem>,
) -> &'a [O::Elem] {
    let direct = if O::Shape::RANK > 0 {
        op.contiguous_line(idx, axis, step, len)
    } else {
        None
    };
    if let Some(s) = direct {
        return s;
    }
    let b = buf.get(len);
    read_line(op, idx, axis, step, b);
    b
}

/// A stack buffer of up to [`LINE_CHUNK`] elements, initialised lazily (only
/// as far as it has been used), so short rows do not pay for the whole
/// buffer.
pub(crate) struct LineBuf<T> {
    data: [MaybeUninit<T>; LINE_CHUNK],
    init: usize,
}

impl<T: Element> LineBuf<T> {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        LineBuf {
            data: [const { MaybeUninit::uninit() }; LINE_CHUNK],
            init: 0,
        }
    }

    /// The first `n` (at most [`LINE_CHUNK`]) elements.
    #[inline(always)]
    pub(crate) fn get(&mut self, n: usize) -> &mut [T] {
        let n = n.min(LINE_CHUNK);
        while self.init < n {
            self.data[self.init].write(T::default());
            self.init += 1;
        }
        // SAFETY: the first `init >= n` entries have been written above (or
        // by an earlier call), and `MaybeUninit<T>` has `T`'s layout.
        unsafe { std::slice::from_raw_parts_mut(self.data.as_mut_ptr().cast::<T>(), n) }
    }
}

/// Moves `idx[axis]` by `j * step` (the caller keeps it in range).
#[inline(always)]
pub(crate) fn advance<S: Shape>(idx: S, axis: usize, j: usize, step: isize) -> S {
    let mut i = idx;
    i[axis] = (idx[axis] as isize + j as isize * step) as usize;
    i
}

/// Implements `prepare`, `finish` and `visit_memory` by forwarding to the
/// named child fields.
macro_rules! forward_hooks {
    ($($child:tt),*) => {
        fn prepare(&mut self, _ex: &dyn $crate::executor::Executor) -> dynd::Result<()> {
            $( self.$child.prepare(_ex)?; )*
            Ok(())
        }
        fn finish(&mut self) {
            $( self.$child.finish(); )*
        }
        fn visit_memory(&self, _f: &mut dyn FnMut($crate::operator::MemRegion)) {
            $( self.$child.visit_memory(_f); )*
        }
        fn check_errors(&self) -> dynd::Result<()> {
            $( self.$child.check_errors()?; )*
            Ok(())
        }
    };
}
pub(crate) use forward_hooks;

/// Implements `get`, `fill_line` and `contiguous_line` by forwarding to the
/// named child field, for an operator whose elements are its child's at the
/// same index.
macro_rules! forward_access {
    ($child:tt) => {
        #[inline(always)]
        fn get(&self, idx: Self::Shape) -> Self::Elem {
            self.$child.get(idx)
        }
        #[inline(always)]
        fn fill_line(&self, idx: Self::Shape, axis: usize, step: isize, out: &mut [Self::Elem]) {
            self.$child.fill_line(idx, axis, step, out)
        }
        #[inline(always)]
        fn contiguous_line(
            &self,
            idx: Self::Shape,
            axis: usize,
            step: isize,
            len: usize,
        ) -> Option<&[Self::Elem]> {
            self.$child.contiguous_line(idx, axis, step, len)
        }
    };
}
pub(crate) use forward_access;

/// Implements `prepare` and `finish` for an operator with no children
/// (memory it reads it reports itself, in `visit_memory`).
macro_rules! leaf_hooks {
    () => {
        fn prepare(&mut self, _ex: &dyn $crate::executor::Executor) -> dynd::Result<()> {
            Ok(())
        }
        fn finish(&mut self) {}
    };
}
pub(crate) use leaf_hooks;

/// Implements `finish` (drop the `cache` that `prepare` computed, finish
/// the child) and `visit_memory` (the child's) for an operator that
/// computes its values from one child in `prepare`.
macro_rules! cached_hooks {
    ($child:ident) => {
        fn finish(&mut self) {
            self.cache = None;
            self.$child.finish();
        }
        fn visit_memory(&self, f: &mut dyn FnMut($crate::operator::MemRegion)) {
            self.$child.visit_memory(f);
        }
        fn check_errors(&self) -> dynd::Result<()> {
            self.$child.check_errors()
        }
    };
}
pub(crate) use cached_hooks;

/// What the crate's functions return: an operator, with `+ - * / %` and
/// negation, evaluation into a tensor or a dynd array, and `set` when the
/// operator is an lvalue. The wrapped operator type is an implementation
/// detail ([`detail`](crate::detail)).
#[derive(Clone)]
pub struct Expr<O>(pub(crate) O);

impl<O> Expr<O> {
    /// Wraps an operator (one written outside this crate, say) so it gets
    /// the arithmetic operators.
    pub fn new(op: O) -> Expr<O> {
        Expr(op)
    }

    /// The wrapped operator.
    pub fn into_inner(self) -> O {
        self.0
    }

    /// The wrapped operator, borrowed.
    pub fn inner(&self) -> &O {
        &self.0
    }
}

impl<O: Operator> std::fmt::Debug for Expr<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Expr({}, sizes={:?})", self.0.name(), self.0.sizes())
    }
}

impl<O: Operator> Operator for Expr<O> {
    type Elem = O::Elem;
    type Shape = O::Shape;
    #[inline(always)]
    fn sizes(&self) -> O::Shape {
        self.0.sizes()
    }
    forward_access!(0);
    fn name(&self) -> String {
        self.0.name()
    }
    fn validate(&self) -> Result<()> {
        self.0.validate()
    }
    fn device_expr(&self) -> Option<DeviceExpr> {
        self.0.device_expr()
    }
    forward_hooks!(0);
}

// SAFETY: the same lvalue, wrapped.
unsafe impl<O: LvalueOp> LvalueOp for Expr<O> {
    #[inline(always)]
    unsafe fn write_line(&self, idx: O::Shape, axis: usize, step: isize, vals: &[O::Elem]) {
        // SAFETY: the caller's promises (1) and (2) are passed on unchanged.
        unsafe { self.0.write_line(idx, axis, step, vals) }
    }
    #[inline(always)]
    fn row_ptr(&self, idx: O::Shape, len: usize) -> Option<*mut O::Elem> {
        self.0.row_ptr(idx, len)
    }
}

impl<O: Operator> Expr<O> {
    /// The sizes, after checking the operator ([`Operator::validate`]).
    ///
    /// # Errors
    /// What [`Operator::validate`] reports.
    pub fn try_sizes(&self) -> Result<O::Shape> {
        self.0.validate()?;
        Ok(self.0.sizes())
    }
}
