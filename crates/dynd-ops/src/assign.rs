//! The assignment engine: what [`Set::run`] and [`Expr::eval`] do.
//!
//! An assignment checks both sides, prepares the right side, and fuses it
//! into the output row by row: each task of [`walk_rows`] fills a run of
//! the output in place when the output lies there contiguously
//! ([`LvalueOp::row_ptr`]), else through a stack buffer of
//! [`LINE_CHUNK`] elements written back with [`LvalueOp::write_line`].
//! Evaluating into a new tensor is an assignment into its writable view.

use crate::element::Element;
use crate::executor::{Executor, walk_rows};
use crate::operator::{Broadcast, Expr, LINE_CHUNK, LineBuf, LvalueOp, MemRegion, Operator, Set};
use crate::rank::{Shape, checked_numel, fmt_shape};
use crate::tensor::{Tensor, TensorViewMut};
use dynd::{Error, Result};

impl<L, R> Set<L, R>
where
    L: LvalueOp,
    R: Operator<Elem = L::Elem, Shape = L::Shape>,
{
    /// `set(lhs, rhs)` with both names.
    pub fn name(&self) -> String {
        format!("set({}, {})", self.lhs.name(), self.rhs.name())
    }

    /// Runs the assignment on `ex`: checks both sides, prepares the right
    /// side (transforms compute their temporaries), writes every element of
    /// the output, and finishes. When the output overlaps memory the right
    /// side reads, the right side is evaluated into a temporary first, so
    /// the result is as if it had been read before any write.
    ///
    /// # Errors
    /// `Broadcast` when the two sides' shapes differ (naming both), and what
    /// [`Operator::validate`] or a prepare step reports: then the output is
    /// untouched. An element operation's error (integer division by zero,
    /// as dynd's `divide`) is reported after the output was filled, so the
    /// output holds the total operation's values there (0 for a zero
    /// divisor).
    pub fn run(mut self, ex: &dyn Executor) -> Result<()> {
        let _span =
            tracing::info_span!("dynd_ops.run", op = %self.name(), executor = %ex.name()).entered();
        self.lhs.validate()?;
        self.rhs.validate()?;
        let (ls, rs) = (self.lhs.sizes(), self.rhs.sizes());
        if ls != rs {
            return Err(Error::broadcast(format!(
                "cannot assign an operator of shape {} to an output of shape {}",
                fmt_shape(rs.as_ref()),
                fmt_shape(ls.as_ref())
            )));
        }
        check_output_parts(&self.lhs)?;
        let overlap = overlaps(&self.lhs, &self.rhs);
        let result = self.rhs.prepare(ex).and_then(|()| {
            if overlap {
                let tmp = materialize_prepared(&self.rhs, ex)?;
                assign(&self.lhs, &&tmp, ex);
                Ok(())
            } else {
                assign(&self.lhs, &self.rhs, ex);
                self.rhs.check_errors()
            }
        });
        self.rhs.finish();
        result
    }
}

/// An error when two parts of an output (a concatenation of views of the
/// same memory) overlap: elements would be written twice, maybe at once.
fn check_output_parts<L: LvalueOp>(lhs: &L) -> Result<()> {
    let mut parts = Vec::new();
    lhs.visit_memory(&mut |r| parts.push(r));
    for (i, a) in parts.iter().enumerate() {
        if parts[i + 1..].iter().any(|b| a.overlaps(b)) {
            return Err(Error::invalid_argument(format!(
                "cannot assign to {}: two of its parts share memory",
                lhs.name()
            )));
        }
    }
    Ok(())
}

fn overlaps<L: Operator, R: Operator>(lhs: &L, rhs: &R) -> bool {
    let mut out = Vec::new();
    lhs.visit_memory(&mut |r| out.push(r));
    if out.is_empty() {
        return false;
    }
    let mut hit = false;
    rhs.visit_memory(&mut |r: MemRegion| hit |= out.iter().any(|o| o.overlaps(&r)));
    hit
}

/// Writes every element of `rhs` into `lhs` (same sizes, no overlap,
/// `rhs` prepared).
fn assign<L, R>(lhs: &L, rhs: &R, ex: &dyn Executor)
where
    L: LvalueOp,
    R: Operator<Elem = L::Elem, Shape = L::Shape>,
{
    let last = L::Shape::RANK.saturating_sub(1);
    walk_rows(ex, lhs.sizes(), &|idx, len| {
        if let Some(p) = lhs.row_ptr(idx, len) {
            // SAFETY: `row_ptr` gave `len` contiguous elements of the output
            // for this run; runs of different tasks are disjoint (distinct
            // indices of an lvalue name distinct elements), and the right
            // side reads no output memory (checked by `overlaps`), so this
            // is the only reference to them while it lives.
            let out = unsafe { std::slice::from_raw_parts_mut(p, len) };
            rhs.fill_row(idx, out);
        } else {
            let mut buf = LineBuf::<L::Elem>::new();
            let mut j = 0;
            while j < len {
                let k = LINE_CHUNK.min(len - j);
                let mut i = idx;
                if L::Shape::RANK > 0 {
                    i[last] += j;
                }
                let b = buf.get(k);
                rhs.fill_row(i, b);
                // SAFETY: (1) the run lies inside the output (walk_rows only
                // makes in-range runs); (2) runs of different tasks are
                // disjoint elements, and the right side does not read them.
                unsafe { lhs.write_line(i, last, 1, b) };
                j += k;
            }
        }
    });
}

/// Evaluates an operator into a new tensor: validate, prepare, fill, finish.
pub(crate) fn eval<O: Operator>(mut op: O, ex: &dyn Executor) -> Result<Tensor<O::Elem, O::Shape>> {
    let _span =
        tracing::info_span!("dynd_ops.eval", op = %op.name(), executor = %ex.name()).entered();
    materialize(&mut op, ex)
}

/// Evaluates a validated and prepared operator into a new tensor.
pub(crate) fn materialize_prepared<O: Operator>(
    op: &O,
    ex: &dyn Executor,
) -> Result<Tensor<O::Elem, O::Shape>> {
    let sizes = op.sizes();
    checked_numel(&sizes)?;
    let mut t = Tensor::<O::Elem, O::Shape>::zeros(sizes);
    assign(&t.view_mut(), op, ex);
    op.check_errors()?;
    Ok(t)
}

/// Validates, prepares and evaluates a child operator into a tensor (a
/// transform's input), leaving it finished.
pub(crate) fn materialize<O: Operator>(
    op: &mut O,
    ex: &dyn Executor,
) -> Result<Tensor<O::Elem, O::Shape>> {
    op.validate()?;
    let r = op.prepare(ex).and_then(|()| materialize_prepared(op, ex));
    op.finish();
    r
}

/// Runs `set` on the executor: `set(lhs, rhs).run(ex)` as a free function.
///
/// # Errors
/// As [`Set::run`].
pub fn run_set<L, R>(lhs: L, rhs: R, ex: &dyn Executor) -> Result<()>
where
    L: LvalueOp,
    R: Operator<Elem = L::Elem, Shape = L::Shape>,
{
    Set::new(lhs, rhs).run(ex)
}

impl<O: Operator> Expr<O> {
    /// Evaluates the expression into a new tensor on `ex`.
    ///
    /// # Errors
    /// What [`Operator::validate`] and the transforms' prepare steps report,
    /// and the first error of an element operation
    /// ([`Operator::check_errors`]).
    pub fn eval(self, ex: &dyn Executor) -> Result<Tensor<O::Elem, O::Shape>> {
        eval(self.0, ex)
    }
}

impl<T: Element, S: Shape> Tensor<T, S> {
    /// The assignment `self = rhs` (run it with [`Set::run`]); `rhs` may
    /// have a lower rank and is then broadcast ([`LvalueOp::set`]).
    pub fn set<R>(
        &mut self,
        rhs: R,
    ) -> Set<TensorViewMut<'_, T, S>, <R::Shape as Broadcast<S>>::Left<R>>
    where
        R: Operator<Elem = T>,
        R::Shape: Broadcast<S, Out = S>,
    {
        self.view_mut().set(rhs)
    }
}
