//! The three shapes of work, and how the current executor splits them.
//!
//! Every shape reports the error a serial run reports: tasks stand in the
//! order a serial run would do their work, a failing task records its
//! index, the lowest index wins, and tasks after a known failure are
//! skipped.

use super::{InTask, TASK_ELEMENTS, num_threads, pool};
use crate::error::{Error, Result};
use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A value handed to the pool's threads that Rust cannot prove may cross
/// them: raw pointers into the arrays of one call.
///
/// Whoever wraps a value promises what `Send` and `Sync` need: the memory
/// it addresses outlives the split (the split returns before the call
/// does), tasks write disjoint parts of it, and what they only read does
/// not change while they run.
#[derive(Clone, Copy, Debug)]
pub struct Shared<T>(pub T);

impl<T> Shared<T> {
    /// The value (a method, so that closures capture the whole wrapper
    /// rather than its non-`Send` field).
    pub fn get(&self) -> &T {
        &self.0
    }
}

// SAFETY: see the type's doc: the wrapper's maker promises that the values
// it addresses outlive the split and that tasks touch disjoint parts.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as for Send; what tasks share is only read while they run.
unsafe impl<T> Sync for Shared<T> {}

/// A flat run of `n` elements: `f(start, count)` over pieces of `task`
/// elements (at least 1) on the current executor, or `f(0, n)` once when
/// the run is shorter than two pieces or there is one thread.
///
/// # Errors
/// The first error in element order: the error of the lowest failing piece.
pub fn flat<F>(n: usize, task: usize, f: F) -> Result<()>
where
    F: Fn(usize, usize) -> Result<()> + Sync,
{
    let task = task.max(1);
    let pieces = n.div_ceil(task);
    let threads = if pieces >= 2 { num_threads() } else { 1 };
    if threads < 2 {
        return f(0, n);
    }
    run(threads, pieces, &|i| {
        let start = i * task;
        f(start, task.min(n - start))
    })
}

/// `n_rows` rows holding `elements` elements in all (`n_rows` when the
/// caller does not know): `f(rows)` over ranges of rows of about
/// [`TASK_ELEMENTS`] elements each, or `f(0..n_rows)` once when that makes
/// fewer than two ranges or there is one thread. Ranges are cut by row
/// count; the pool's work stealing evens out rows of unequal length.
///
/// # Errors
/// The first error in row order.
pub fn rows<F>(n_rows: usize, elements: usize, f: F) -> Result<()>
where
    F: Fn(Range<usize>) -> Result<()> + Sync,
{
    let ranges = (elements / TASK_ELEMENTS).min(n_rows);
    let threads = if ranges >= 2 { num_threads() } else { 1 };
    if threads < 2 {
        return f(0..n_rows);
    }
    let per = n_rows.div_ceil(ranges);
    run(threads, n_rows.div_ceil(per), &|i| {
        f(i * per..((i + 1) * per).min(n_rows))
    })
}

/// `count` independent outer tasks: `f(i)` for each, on the current
/// executor when there are two or more, in order on this thread otherwise
/// (the caller decides that its tasks are worth splitting: each should be
/// about [`TASK_ELEMENTS`] elements of work or more).
///
/// # Errors
/// The error of the lowest failing task.
pub fn tasks<F>(count: usize, f: F) -> Result<()>
where
    F: Fn(usize) -> Result<()> + Sync,
{
    let threads = if count >= 2 { num_threads() } else { 1 };
    if threads < 2 {
        return (0..count).try_for_each(f);
    }
    run(threads, count, &f)
}

/// [`tasks`] whose tasks give values: the values in task order.
///
/// # Errors
/// The error of the lowest failing task.
pub fn map_tasks<T, F>(count: usize, f: F) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(usize) -> Result<T> + Sync,
{
    let threads = if count >= 2 { num_threads() } else { 1 };
    if threads < 2 {
        return (0..count).map(f).collect();
    }
    let slots: Vec<Mutex<Option<T>>> = (0..count).map(|_| Mutex::new(None)).collect();
    run(threads, count, &|i| {
        let v = f(i)?;
        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
        Ok(())
    })?;
    slots
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            s.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .ok_or_else(|| Error::invalid_argument(format!("task {i} gave no value")))
        })
        .collect()
}

/// Runs `f(0..count)` on `threads >= 2` threads; the error of the lowest
/// failing index.
fn run(threads: usize, count: usize, f: &(dyn Fn(usize) -> Result<()> + Sync)) -> Result<()> {
    let first_bad = AtomicUsize::new(usize::MAX);
    let error: Mutex<Option<(usize, Error)>> = Mutex::new(None);
    pool::for_each(threads, count, &|i| {
        // A serial run would have stopped before this task.
        if i > first_bad.load(Ordering::Relaxed) {
            return;
        }
        let _in_task = InTask::enter();
        if let Err(e) = f(i) {
            first_bad.fetch_min(i, Ordering::Relaxed);
            let mut slot = error.lock().unwrap_or_else(|e| e.into_inner());
            if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                *slot = Some((i, e));
            }
        }
    });
    match error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::with_threads;
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn flat_covers_every_element_once_on_every_count() {
        for threads in [1, 2, 3] {
            for n in [0, 1, 7, 2 * TASK_ELEMENTS - 1, 2 * TASK_ELEMENTS + 3] {
                let seen: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
                with_threads(threads, || {
                    flat(n, TASK_ELEMENTS, |s, c| {
                        seen[s..s + c].iter().for_each(|x| {
                            x.fetch_add(1, Ordering::Relaxed);
                        });
                        Ok(())
                    })
                })
                .unwrap();
                assert!(
                    seen.iter().all(|x| x.load(Ordering::Relaxed) == 1),
                    "{threads} {n}"
                );
            }
        }
    }

    #[test]
    fn the_first_error_is_the_serial_one() {
        // Pieces 3 and 7 fail; a serial run stops at 3.
        for threads in [1, 2, 3] {
            let e = with_threads(threads, || {
                flat(10 * 100, 100, |s, c| {
                    for i in s..s + c {
                        if i == 350 || i == 777 {
                            return Err(Error::invalid_argument(format!("bad at {i}")));
                        }
                    }
                    Ok(())
                })
            })
            .unwrap_err();
            assert_eq!(e.message(), "bad at 350", "{threads} threads");
            let e = with_threads(threads, || {
                tasks(9, |i| match i {
                    4 | 8 => Err(Error::invalid_argument(format!("task {i}"))),
                    _ => Ok(()),
                })
            })
            .unwrap_err();
            assert_eq!(e.message(), "task 4");
        }
    }

    #[test]
    fn rows_cut_ranges_in_order_and_cover_every_row() {
        for threads in [1, 2, 3] {
            let n = 1000;
            let seen: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
            with_threads(threads, || {
                rows(n, 7 * TASK_ELEMENTS + 5, |r| {
                    assert!(r.start < r.end && r.end <= n);
                    r.for_each(|i| {
                        seen[i].fetch_add(1, Ordering::Relaxed);
                    });
                    Ok(())
                })
            })
            .unwrap();
            assert!(seen.iter().all(|x| x.load(Ordering::Relaxed) == 1));
        }
        let calls = std::sync::atomic::AtomicUsize::new(0);
        rows(0, 0, |r| {
            assert!(r.is_empty());
            calls.fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
        assert_eq!(calls.into_inner(), 1, "no rows: one call with none");
    }

    #[test]
    fn map_tasks_keeps_task_order_and_nested_work_runs_serially() {
        for threads in [1, 2, 3] {
            let v = with_threads(threads, || {
                map_tasks(17, |i| {
                    // Inside a task, further work is serial.
                    assert!(threads == 1 || num_threads() == 1);
                    Ok(i * i)
                })
            })
            .unwrap();
            assert_eq!(v, (0..17).map(|i| i * i).collect::<Vec<_>>());
        }
    }
}
