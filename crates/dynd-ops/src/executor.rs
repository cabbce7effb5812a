//! Executors, and assignments that run on them.
//!
//! An executor runs a number of independent tasks; which tasks exist is
//! decided by the assignment alone (rows of the output in pieces of about
//! [`TASK_ELEMS`] elements), never by the executor or its thread count. So
//! the serial and the parallel executor compute every element — reductions
//! included — in exactly the same way, and give bit-identical results.

use crate::operator::{LINE_CHUNK, LineBuf, LvalueOp, MemRegion, Operator};
use crate::rank::{Shape, checked_numel, fmt_shape, next_row, numel, unravel};
use crate::tensor::Tensor;
use dynd::{Error, Result};
use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

/// Elements per task: rows are grouped (or split) into pieces of about this
/// many elements (DESIGN §10: ~64K-element chunks beat half-and-half splits
/// on two cores).
pub const TASK_ELEMS: usize = 1 << 16;

/// Runs independent tasks.
///
/// An executor only schedules: which tasks exist, and what each computes,
/// is fixed by the caller, so every executor gives the same results. (An
/// executor that calls a task twice or not at all gives wrong results, but
/// never undefined behaviour: each task runs its writes at most once.)
pub trait Executor: Sync {
    /// A short name for tracing spans (`serial`, `parallel(2)`).
    fn name(&self) -> String;
    /// How many threads run tasks.
    fn num_threads(&self) -> usize;
    /// Calls `task(i)` once for every `i` in `0..n`, in any order, possibly
    /// on several threads at once; returns when all are done.
    fn run_tasks(&self, n: usize, task: &(dyn Fn(usize) + Sync));
}

/// Runs every task on the calling thread, in order.
///
/// ```
/// use dynd_ops::{Serial, LvalueOp, Tensor, range};
/// let mut t = Tensor::<i64, [usize; 1]>::zeros([4]);
/// t.view_mut().set(range([4], 0, 10, 5).unwrap()).run(&Serial).unwrap();
/// assert_eq!(t.as_slice(), &[10, 15, 20, 25]);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Serial;

impl Executor for Serial {
    fn name(&self) -> String {
        "serial".into()
    }
    fn num_threads(&self) -> usize {
        1
    }
    fn run_tasks(&self, n: usize, task: &(dyn Fn(usize) + Sync)) {
        for i in 0..n {
            task(i);
        }
    }
}

/// Runs tasks on its own rayon thread pool of a chosen size.
///
/// ```
/// use dynd_ops::{Parallel, Serial, Operator, linspace, sum};
/// let par = Parallel::new(2).unwrap();
/// let a = sum(linspace(1.0f64, 100.0, 100)).eval(&par).unwrap();
/// let b = sum(linspace(1.0f64, 100.0, 100)).eval(&Serial).unwrap();
/// assert_eq!(a.as_slice(), &[5050.0]);
/// assert_eq!(a.as_slice(), b.as_slice());
/// ```
pub struct Parallel {
    pool: rayon::ThreadPool,
    threads: usize,
}

impl Parallel {
    /// A pool of `threads` threads (0 means rayon's default: one per core).
    ///
    /// # Errors
    /// `Alloc` when the threads cannot be started.
    pub fn new(threads: usize) -> Result<Parallel> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("dynd-ops-{i}"))
            .build()
            .map_err(|e| Error::alloc(format!("cannot start {threads} executor threads: {e}")))?;
        let threads = pool.current_num_threads();
        Ok(Parallel { pool, threads })
    }
}

impl std::fmt::Debug for Parallel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Parallel({})", self.threads)
    }
}

impl Executor for Parallel {
    fn name(&self) -> String {
        format!("parallel({})", self.threads)
    }
    fn num_threads(&self) -> usize {
        self.threads
    }
    fn run_tasks(&self, n: usize, task: &(dyn Fn(usize) + Sync)) {
        use rayon::prelude::*;
        match n {
            0 => {}
            1 => task(0),
            _ => self.pool.install(|| (0..n).into_par_iter().for_each(task)),
        }
    }
}

/// Calls `f(idx, len)` for every run of the last axis of `sizes` (for rank
/// 0: once, with `len == 1`), as tasks of about [`TASK_ELEMS`] elements.
/// Long rows are split into pieces; short rows are grouped. The index is
/// unravelled once per task, then advanced row by row.
pub(crate) fn walk_rows<S: Shape>(ex: &dyn Executor, sizes: S, f: &(dyn Fn(S, usize) + Sync)) {
    let n = numel(&sizes);
    if n == 0 {
        return;
    }
    if S::RANK == 0 {
        f(S::zeros(), 1);
        return;
    }
    let last = S::RANK - 1;
    let len = sizes[last];
    let rows = n / len;
    let row_index = |row: usize| {
        let mut outer = sizes;
        outer[last] = 1;
        unravel(row, &outer)
    };
    // Each task runs once even if an executor calls it twice: the writes of
    // a task are only exclusive if no other call does the same task.
    let claim = |claims: &[AtomicBool], t: usize| !claims[t].swap(true, AtomicOrdering::Relaxed);
    if len >= TASK_ELEMS {
        let pieces = len.div_ceil(TASK_ELEMS);
        let claims: Vec<AtomicBool> = (0..rows * pieces).map(|_| AtomicBool::new(false)).collect();
        ex.run_tasks(rows * pieces, &|t| {
            if !claim(&claims, t) {
                return;
            }
            let (row, piece) = (t / pieces, t % pieces);
            let mut idx = row_index(row);
            idx[last] = piece * TASK_ELEMS;
            f(idx, TASK_ELEMS.min(len - idx[last]));
        });
    } else {
        let per_task = TASK_ELEMS / len;
        let claims: Vec<AtomicBool> = (0..rows.div_ceil(per_task))
            .map(|_| AtomicBool::new(false))
            .collect();
        ex.run_tasks(rows.div_ceil(per_task), &|t| {
            if !claim(&claims, t) {
                return;
            }
            let r0 = t * per_task;
            let r1 = rows.min(r0 + per_task);
            let mut idx = row_index(r0);
            for _ in r0..r1 {
                f(idx, len);
                next_row(&mut idx, &sizes);
            }
        });
    }
}

/// Splits `out` at the given consecutive ranges and runs `f(range, piece)`
/// for each as one task. Safe code: each piece sits behind its own
/// (uncontended) mutex.
pub(crate) fn par_pieces<T: Send>(
    ex: &dyn Executor,
    out: &mut [T],
    ranges: &[Range<usize>],
    f: &(dyn Fn(Range<usize>, &mut [T]) + Sync),
) {
    let mut pieces = Vec::with_capacity(ranges.len());
    let mut rest = out;
    let mut at = 0;
    for r in ranges {
        debug_assert_eq!(r.start, at);
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(r.end - r.start);
        pieces.push(Mutex::new(head));
        rest = tail;
        at = r.end;
    }
    ex.run_tasks(pieces.len(), &|t| {
        let mut piece = pieces[t].lock().unwrap_or_else(|e| e.into_inner());
        f(ranges[t].clone(), &mut piece);
    });
}

/// Consecutive ranges of `0..n`, each `grain` long (the last shorter).
pub(crate) fn grain_ranges(n: usize, grain: usize) -> Vec<Range<usize>> {
    let grain = grain.max(1);
    (0..n.div_ceil(grain))
        .map(|i| i * grain..n.min((i + 1) * grain))
        .collect()
}

/// An assignment `lhs = rhs`, built by [`LvalueOp::set`]; nothing happens
/// until [`run`](Set::run).
pub struct Set<L, R> {
    lhs: L,
    rhs: R,
}

impl<L, R> Set<L, R>
where
    L: LvalueOp,
    R: Operator<Elem = L::Elem, Shape = L::Shape>,
{
    pub(crate) fn new(lhs: L, rhs: R) -> Self {
        Set { lhs, rhs }
    }

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
    /// [`Operator::validate`] or a prepare step reports. On error the output
    /// is untouched.
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
            } else {
                assign(&self.lhs, &self.rhs, ex);
            }
            Ok(())
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
    op.validate()?;
    let r = op.prepare(ex).and_then(|()| materialize_prepared(&op, ex));
    op.finish();
    r
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
