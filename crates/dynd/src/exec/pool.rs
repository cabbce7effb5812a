//! The thread pools: one per thread count asked for, made on first use and
//! kept for the life of the process (a program asks for a handful of counts
//! at most; making a pool costs the threads' start, ~50 µs each).
//!
//! Each pool has `n` worker threads named `dynd-exec-N`. When a pool cannot
//! be made (the system refuses threads), [`pool`] says so with `None` and
//! the work runs serially: slower, with the same result.

use std::sync::Mutex;

/// The pools made so far, by thread count.
static POOLS: Mutex<Vec<(usize, &'static rayon::ThreadPool)>> = Mutex::new(Vec::new());

thread_local! {
    /// The pool this thread used last: most programs use one count, and a
    /// hit spares the lock.
    static LAST: std::cell::Cell<Option<(usize, &'static rayon::ThreadPool)>> =
        const { std::cell::Cell::new(None) };
}

/// The pool of `n >= 2` threads, or `None` when it cannot be made.
pub(super) fn pool(n: usize) -> Option<&'static rayon::ThreadPool> {
    if let Some((m, p)) = LAST.get()
        && m == n
    {
        return Some(p);
    }
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    let p = match pools.iter().find(|(m, _)| *m == n) {
        Some((_, p)) => *p,
        None => {
            let p = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .thread_name(|i| format!("dynd-exec-{i}"))
                .build()
                .ok()?;
            let p: &'static rayon::ThreadPool = Box::leak(Box::new(p));
            pools.push((n, p));
            p
        }
    };
    LAST.set(Some((n, p)));
    Some(p)
}

/// Runs `f` on each index of `0..count` on `n` threads; `f` is called from
/// the pool's threads (and never twice for one index).
pub(super) fn for_each(n: usize, count: usize, f: &(dyn Fn(usize) + Sync)) {
    use rayon::prelude::*;
    match pool(n) {
        Some(p) => p.install(|| (0..count).into_par_iter().for_each(f)),
        None => (0..count).for_each(f),
    }
}
