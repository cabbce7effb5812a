//! Executors: what runs the tasks of an assignment.
//!
//! An executor runs a number of independent tasks; which tasks exist is
//! decided by the assignment alone (rows of the output in pieces of about
//! [`TASK_ELEMS`] elements), never by the executor or its thread count. So
//! the serial and the parallel executor compute every element — reductions
//! included — in exactly the same way, and give bit-identical results.

use crate::rank::{Shape, next_row, numel, unravel};
use dynd::Result;
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

/// Runs tasks on `n` threads of dynd's executor ([`dynd::exec`]): the
/// thread pool dynd's own callables use for that count.
///
/// ```
/// use dynd_ops::{Parallel, Serial, Operator, linspace, sum};
/// let par = Parallel::new(2).unwrap();
/// let a = sum(linspace(1.0f64, 100.0, 100)).eval(&par).unwrap();
/// let b = sum(linspace(1.0f64, 100.0, 100)).eval(&Serial).unwrap();
/// assert_eq!(a.as_slice(), &[5050.0]);
/// assert_eq!(a.as_slice(), b.as_slice());
/// ```
#[derive(Clone, Debug)]
pub struct Parallel {
    exec: dynd::exec::Executor,
}

impl Parallel {
    /// An executor of `threads` threads (0: dynd's default count, from
    /// `dynd::exec::set_num_threads`, `DYND_NUM_THREADS`,
    /// `RAYON_NUM_THREADS` or the cores, read when tasks run).
    ///
    /// # Errors
    /// `InvalidArgument` when `threads` is more than
    /// [`dynd::exec::MAX_THREADS`].
    pub fn new(threads: usize) -> Result<Parallel> {
        Ok(Parallel {
            exec: dynd::exec::Executor::with_threads(threads)?,
        })
    }

    /// dynd's executor this one runs on.
    pub fn executor(&self) -> &dynd::exec::Executor {
        &self.exec
    }
}

impl Executor for Parallel {
    fn name(&self) -> String {
        format!("parallel({})", self.exec.threads())
    }
    fn num_threads(&self) -> usize {
        self.exec.threads()
    }
    fn run_tasks(&self, n: usize, task: &(dyn Fn(usize) + Sync)) {
        self.exec.run_tasks(n, task);
    }
}

impl Executor for dynd::exec::Executor {
    fn name(&self) -> String {
        match self {
            dynd::exec::Executor::Serial => "serial".into(),
            dynd::exec::Executor::Device(d) => format!("device({})", d.name()),
            _ => format!("parallel({})", self.threads()),
        }
    }
    fn num_threads(&self) -> usize {
        self.threads()
    }
    fn run_tasks(&self, n: usize, task: &(dyn Fn(usize) + Sync)) {
        dynd::exec::Executor::run_tasks(self, n, task);
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
