//! Execution: the one place that decides where and how work runs
//! (DESIGN §13).
//!
//! Kernels and callables never start threads. They **describe** their work
//! in one of three shapes and hand it here; the current [`Executor`] decides
//! whether and how to split it:
//!
//! - a *flat run* of `n` elements ([`flat`]): elementwise calls, casts,
//!   `where`, a filter's count, each pass of a scan;
//! - *rows* ([`rows`]): `n` rows of a var dim, cut into tasks of about
//!   [`TASK_ELEMENTS`] elements: row reductions, per-row sort, filter, take;
//! - *outer tasks* ([`tasks`], [`map_tasks`]): independent slices of the
//!   outermost dims, or pieces of an input (JSON Lines).
//!
//! Work smaller than two tasks runs serially, on the calling thread, with
//! no thread pool touched. Work inside a task runs serially too: the outer
//! split already uses every thread, and nesting would only add overhead.
//!
//! ## Choosing the executor
//!
//! The process default is [`Executor::Threads`] with the count from
//! [`set_num_threads`], else `DYND_NUM_THREADS`, else `RAYON_NUM_THREADS`,
//! else the number of cores. A scope overrides it on the calling thread:
//!
//! ```
//! use dynd::{Array, compute, exec};
//! let a = Array::from((0..1_000_000).map(|i| i as f64).collect::<Vec<_>>());
//! let one = exec::with_threads(1, || compute::sum(&a, None, false)).unwrap();
//! let two = exec::with_threads(2, || compute::sum(&a, None, false)).unwrap();
//! assert_eq!(one.to_json(), two.to_json());
//! assert_eq!(exec::with_threads(3, exec::num_threads), 3);
//! ```
//!
//! ## What may change with the executor
//!
//! Nothing but the last bits of floating sums and means, where a
//! reduction's doc says so: every split keeps each element's computation,
//! every selection and sort gives the same result, and an error reported
//! by a split call is the one a serial run reports first (the failing task
//! with the lowest index wins; tasks after it may have written their part
//! of a preallocated output, which a serial run would have left untouched).
//!
//! ## Devices
//!
//! [`Executor::Device`] holds a [`Device`] (the CUDA device of DESIGN §14
//! implements it in `dynd-cuda`). Work on host memory under a device
//! executor runs on the host, on [`Device::host_threads`] threads; work on
//! the device's own memory is the device's to run.

mod device;
mod pool;
mod split;

#[cfg(any(test, feature = "test-device"))]
pub use device::testing;
pub use device::{Device, device, devices, register};
pub use split::{Shared, flat, map_tasks, rows, tasks};

use crate::error::{Error, Result};
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Elements per task of a split flat run or row range: large enough that a
/// task's start costs nothing next to its work, small enough that two
/// threads split a 1M-element call evenly (DESIGN §10: ~64K elements).
pub const TASK_ELEMENTS: usize = 1 << 16;

/// Runs shorter than this are not split: below it the threads' start-up and
/// the combine cost more than the second core gives (two tasks' worth).
pub const SPLIT_MIN: usize = 2 * TASK_ELEMENTS;

/// Text shorter than this (JSON Lines) is parsed by one thread: its pieces'
/// start-up and the join of their arenas cost more than a second thread
/// gives below about a megabyte.
pub const TEXT_SPLIT_MIN: usize = 1 << 20;

/// The most threads an executor may be given: more is a mistake in the
/// caller's arithmetic, not a machine.
pub const MAX_THREADS: usize = 4096;

/// Where and how work runs.
#[derive(Clone, Debug)]
pub enum Executor {
    /// On the calling thread.
    Serial,
    /// On a pool of this many threads (the caller's thread among them while
    /// it waits); `Threads(0)` is the process default's count, `Threads(1)`
    /// is [`Executor::Serial`].
    Threads(usize),
    /// A device (DESIGN §14); host work runs on [`Device::host_threads`].
    Device(Arc<dyn Device>),
}

impl Executor {
    /// The host threads this executor runs host work on.
    pub fn threads(&self) -> usize {
        match self {
            Executor::Serial => 1,
            Executor::Threads(0) => default_threads(),
            Executor::Threads(n) => (*n).min(MAX_THREADS),
            Executor::Device(d) => d.host_threads().clamp(1, MAX_THREADS),
        }
    }

    /// The executor of `n` threads: serial for 1, the default for 0.
    ///
    /// # Errors
    /// `invalid_argument` when `n` exceeds [`MAX_THREADS`].
    pub fn with_threads(n: usize) -> Result<Executor> {
        check_count(n)?;
        Ok(match n {
            1 => Executor::Serial,
            n => Executor::Threads(n),
        })
    }
}

impl Executor {
    /// Runs `f` with this executor as the calling thread's ([`with_executor`]):
    /// `Executor::Threads(2).install(|| compute::sum(&a, None, false))`.
    pub fn install<R>(&self, f: impl FnOnce() -> R) -> R {
        with_executor(self.clone(), f)
    }

    /// Calls `task(i)` once for each `i` in `0..n` on this executor's
    /// threads (in order on the calling thread for a serial one, or inside
    /// a task of another split), returning when all are done. For callers
    /// whose tasks cannot fail (the lazy operators of `dynd-ops`).
    pub fn run_tasks(&self, n: usize, task: &(dyn Fn(usize) + Sync)) {
        let threads = if n >= 2 && !IN_TASK.get() {
            self.threads()
        } else {
            1
        };
        if threads < 2 {
            (0..n).for_each(task);
            return;
        }
        pool::for_each(threads, n, &|i| {
            let _in_task = InTask::enter();
            task(i);
        });
    }
}

impl PartialEq for Executor {
    fn eq(&self, other: &Executor) -> bool {
        match (self, other) {
            (Executor::Device(a), Executor::Device(b)) => Arc::ptr_eq(a, b),
            (Executor::Device(_), _) | (_, Executor::Device(_)) => false,
            (a, b) => a.threads() == b.threads(),
        }
    }
}

/// `n` as a thread count, or an error naming it.
fn check_count(n: usize) -> Result<()> {
    if n > MAX_THREADS {
        return Err(Error::invalid_argument(format!(
            "thread count {n} is more than the {MAX_THREADS} an executor may have"
        )));
    }
    Ok(())
}

/// The count [`set_num_threads`] chose (0: none chosen).
static CHOSEN: AtomicUsize = AtomicUsize::new(0);

/// The process default's count when none is chosen: `DYND_NUM_THREADS`,
/// else `RAYON_NUM_THREADS`, else the cores.
fn environment_threads() -> usize {
    static FROM_ENV: OnceLock<usize> = OnceLock::new();
    *FROM_ENV.get_or_init(|| {
        ["DYND_NUM_THREADS", "RAYON_NUM_THREADS"]
            .iter()
            .find_map(|var| parse_count(&std::env::var(var).ok()?))
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    })
}

/// A thread count from an environment variable: a positive integer up to
/// [`MAX_THREADS`]; anything else (empty, 0, not a number) is no choice.
fn parse_count(text: &str) -> Option<usize> {
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_THREADS).contains(n))
}

/// The process default's thread count: the one [`set_num_threads`] chose,
/// else the environment's, else the cores.
pub fn default_threads() -> usize {
    match CHOSEN.load(Ordering::Relaxed) {
        0 => environment_threads(),
        n => n,
    }
}

/// Sets the process default to `n` threads; 0 goes back to the
/// environment's choice (`DYND_NUM_THREADS`, `RAYON_NUM_THREADS`, the
/// cores). Scopes ([`with_executor`]) still override it on their thread.
///
/// # Errors
/// `invalid_argument` when `n` exceeds [`MAX_THREADS`].
pub fn set_num_threads(n: usize) -> Result<()> {
    check_count(n)?;
    CHOSEN.store(n, Ordering::Relaxed);
    Ok(())
}

/// The threads work started now, on this thread, would use: 1 inside a
/// task of a split, else the scope's executor's, else the default's.
pub fn num_threads() -> usize {
    if IN_TASK.get() {
        return 1;
    }
    SCOPE.with_borrow(|s| s.as_ref().map_or_else(default_threads, Executor::threads))
}

/// The executor work started now, on this thread, runs on: serial inside
/// a task of a split, else the scope's, else the process default.
pub fn current() -> Executor {
    if IN_TASK.get() {
        return Executor::Serial;
    }
    SCOPE.with_borrow(|s| s.clone().unwrap_or(Executor::Threads(0)))
}

thread_local! {
    /// The executor of the innermost scope on this thread.
    static SCOPE: RefCell<Option<Executor>> = const { RefCell::new(None) };
    /// Whether this thread is running a task of a split.
    static IN_TASK: Cell<bool> = const { Cell::new(false) };
}

/// Sets this thread's scope to `executor` (`None`: the process default)
/// and returns the one it replaces. The low-level form of
/// [`with_executor`], for callers whose scope cannot be a closure (the
/// Python `with dynd.threads(n):` block); they must put the old one back.
pub fn replace_scope(executor: Option<Executor>) -> Option<Executor> {
    SCOPE.replace(executor)
}

/// Runs `f` with `executor` as this thread's executor, then puts the
/// previous one back (also when `f` panics).
pub fn with_executor<R>(executor: Executor, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Executor>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPE.set(self.0.take());
        }
    }
    let _restore = Restore(replace_scope(Some(executor)));
    f()
}

/// Runs `f` on `n` threads (1: serially; 0: the default count; more than
/// [`MAX_THREADS`]: that many).
pub fn with_threads<R>(n: usize, f: impl FnOnce() -> R) -> R {
    with_executor(Executor::Threads(n.min(MAX_THREADS)), f)
}

/// Marks this thread as running a task while it lives.
struct InTask(bool);

impl InTask {
    fn enter() -> InTask {
        InTask(IN_TASK.replace(true))
    }
}

impl Drop for InTask {
    fn drop(&mut self) {
        IN_TASK.set(self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_the_environment_are_positive_integers() {
        assert_eq!(parse_count("4"), Some(4));
        assert_eq!(parse_count(" 2\n"), Some(2));
        for bad in ["", "0", "-1", "two", "1.5", "100000"] {
            assert_eq!(parse_count(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn scopes_nest_and_restore() {
        let outer = num_threads();
        with_threads(3, || {
            assert_eq!(num_threads(), 3);
            with_executor(Executor::Serial, || assert_eq!(num_threads(), 1));
            assert_eq!(num_threads(), 3);
        });
        assert_eq!(num_threads(), outer);
        let caught = std::panic::catch_unwind(|| with_threads(5, || panic!("inside")));
        assert!(caught.is_err());
        assert_eq!(num_threads(), outer, "a panic restores the scope");
    }

    #[test]
    fn too_many_threads_is_an_error_naming_the_count() {
        let e = Executor::with_threads(MAX_THREADS + 1).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        assert!(e.message().contains("4097"), "{}", e.message());
        assert_eq!(Executor::with_threads(1).unwrap(), Executor::Serial);
        assert!(set_num_threads(MAX_THREADS + 1).is_err());
    }

    #[test]
    fn a_device_runs_host_work_on_its_host_threads() {
        #[derive(Debug)]
        struct Fake;
        impl Device for Fake {
            fn name(&self) -> String {
                "fake".into()
            }
            fn host_threads(&self) -> usize {
                2
            }
            fn id(&self) -> crate::memblock::DeviceId {
                crate::memblock::DeviceId::Cuda(7)
            }
            fn alloc(&self, _: usize) -> Result<(crate::memblock::MemBlock, *mut u8)> {
                Err(Error::external("fake"))
            }
            unsafe fn copy_to_device(&self, _: *mut u8, _: &[u8]) -> Result<()> {
                Err(Error::external("fake"))
            }
            unsafe fn copy_to_host(&self, _: &mut [u8], _: *const u8) -> Result<()> {
                Err(Error::external("fake"))
            }
        }
        let d = Executor::Device(Arc::new(Fake));
        assert_eq!(d.threads(), 2);
        assert_ne!(d, Executor::Threads(2));
        assert_eq!(with_executor(d, num_threads), 2);
    }
}
