//! Outer tasks (DESIGN §13): a large call of a callable whose rows along
//! the outermost dim are independent ([`super::CallableImpl::outer_rows`]:
//! per-row sort, argsort, cumsum, cumprod, filter, take, ...) split along
//! that dim on the executor's threads.
//!
//! Each task calls the callable on its slice of the rows (views, no copy)
//! serially. A result without variable-sized data is written in place:
//! each task calls into its slice of the new output; so is a result of
//! var rows of plain elements when the callable allocates a run's rows at
//! once (filter, take, sort, argsort, cumsum, cumprod): the tasks then
//! allocate their rows from the output's own arena. Any other result with
//! variable-sized data (strings, nested var dims, rows allocated one by
//! one) is computed by each task into an array of its own,
//! whose row descriptors the task copies into its slice of the output;
//! the tasks' arenas are then absorbed by the output's without copying
//! the rows (`layout::arrmeta::absorb_blocks`).
//!
//! When a task fails, the call is run again serially, so that the error is
//! word for word the serial one (messages name rows by their index in the
//! whole call, which a task only knows within its slice).

use super::Callable;
use crate::array::{Array, Index};
use crate::error::{Error, Result};
use crate::exec::{self, Shared};
use crate::layout::arrmeta::{self, FixedDimMeta};
use crate::types::{Type, TypeKind};
use std::mem::size_of;

/// Calls with fewer outer rows run as one call.
const SPLIT_ROWS: usize = 1 << 13;
/// Fewest rows per task.
const TASK_ROWS: usize = 1 << 12;

/// `f(args)` into a new array of type `out_tp`, split along the outermost
/// dim; `None` when the call is not split (see the module doc) or a task
/// failed (the caller then runs it serially).
pub(super) fn call_split(
    f: &Callable,
    args: &[&Array],
    out_tp: &Type,
    tps: &[Type],
) -> Option<Array> {
    let TypeKind::FixedDim { size: n, elem } = out_tp.kind() else {
        return None;
    };
    let n = *n;
    let threads = exec::num_threads();
    if n < SPLIT_ROWS || threads < 2 || args.is_empty() {
        return None;
    }
    // Every argument has the result's outermost dim (no broadcasting of it).
    let same_outer =
        |a: &&Array| matches!(a.tp().kind(), TypeKind::FixedDim { size, .. } if *size == n);
    if !args.iter().all(same_outer) {
        return None;
    }
    if f.implementation().outer_rows(tps) == 0 {
        return None;
    }
    let tasks = (threads * 4).min(n / TASK_ROWS).max(2);
    let per = n.div_ceil(tasks);
    let cut = Cut {
        f,
        args,
        n,
        per,
        tasks: n.div_ceil(per),
    };
    let out = if !elem.has_blockref() || shares_arena(f, elem) {
        into_slices(&cut, out_tp)
    } else {
        gather_tasks(&cut, elem, out_tp)
    };
    #[cfg(test)]
    if out.is_ok() {
        tests::SPLITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if elem.has_blockref() && shares_arena(f, elem) {
            tests::SHARED_ARENAS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
    out.ok()
}

/// Whether the tasks of `f` with result rows `elem` may write into slices
/// of one output although its rows are var: `f` allocates a strided run's
/// rows at once ([`super::CallableImpl::allocates_per_run`]), and `elem` is
/// fixed dims over one var dim of plain elements, so that each task takes
/// the output arena's lock a few times (once per run) rather than per row
/// or per element (strings). Rows cut from one allocation are rows in
/// order within a task, and the tasks' allocations follow in task order
/// unless the threads race for the lock (the result's values and layout
/// per row do not depend on which).
fn shares_arena(f: &Callable, elem: &Type) -> bool {
    if !f.implementation().allocates_per_run() {
        return false;
    }
    let mut t = elem;
    loop {
        match t.kind() {
            TypeKind::FixedDim { elem, .. } => t = elem,
            TypeKind::VarDim { elem } => return !elem.has_blockref(),
            _ => return false,
        }
    }
}

/// A call cut into tasks of `per` rows of the `n` outer rows.
struct Cut<'a> {
    f: &'a Callable,
    args: &'a [&'a Array],
    n: usize,
    per: usize,
    tasks: usize,
}

impl Cut<'_> {
    /// The rows of task `t`.
    fn rows(&self, t: usize) -> (usize, usize) {
        (t * self.per, ((t + 1) * self.per).min(self.n))
    }

    /// Rows `lo..hi` of `a` (a view).
    fn slice(a: &Array, (lo, hi): (usize, usize)) -> Result<Array> {
        a.index(&[Index::slice(Some(lo as isize), Some(hi as isize), 1)])
    }

    /// The callable on task `t`'s rows of every argument: into `dst`, or
    /// into a new array.
    fn call(&self, t: usize, dst: Option<&Array>) -> Result<Option<Array>> {
        let views: Vec<Array> = self
            .args
            .iter()
            .map(|a| Cut::slice(a, self.rows(t)))
            .collect::<Result<_>>()?;
        let refs: Vec<&Array> = views.iter().collect();
        match dst {
            Some(d) => self.f.call_into(d, &refs).map(|()| None),
            None => self.f.call(&refs).map(Some),
        }
    }
}

/// A result without variable-sized data: each task calls into its slice
/// of the new output.
fn into_slices(cut: &Cut<'_>, out_tp: &Type) -> Result<Array> {
    let out = if cut.f.implementation().writes_whole_result() {
        Array::empty_for_overwrite(out_tp.clone())?
    } else {
        Array::empty(out_tp.clone())?
    };
    exec::tasks(cut.tasks, |t| {
        cut.call(t, Some(&Cut::slice(&out, cut.rows(t))?)).map(drop)
    })?;
    Ok(out)
}

/// A result with variable-sized data: each task computes its rows into an
/// array of its own and copies their descriptors into the output; the
/// tasks' arenas then move into the output's.
fn gather_tasks(cut: &Cut<'_>, elem: &Type, out_tp: &Type) -> Result<Array> {
    let out = Array::empty_for_overwrite(out_tp.clone())?;
    let esize = elem.data_size();
    let row_stride = |a: &Array| {
        // SAFETY: the array's type is a fixed dim: its arrmeta starts with
        // the dim's.
        let m: FixedDimMeta = unsafe { arrmeta::read(a.arrmeta_ptr()) };
        m.stride
    };
    if row_stride(&out) != esize as isize {
        return Err(Error::invalid_argument("a new output is not contiguous"));
    }
    let base = Shared(out.data_ptr());
    let parts = exec::map_tasks(cut.tasks, |t| {
        let (lo, hi) = cut.rows(t);
        let part = cut
            .call(t, None)?
            .ok_or_else(|| Error::invalid_argument("a split call gave no array"))?;
        let fits = matches!(part.tp().kind(), TypeKind::FixedDim { size, elem: e } if *size == hi - lo && e == elem);
        if !fits || row_stride(&part) != esize as isize {
            return Err(Error::invalid_argument(format!(
                "{}: a slice's result is {}, not {} rows of {elem}",
                cut.f.name(),
                part.tp(),
                hi - lo
            )));
        }
        // SAFETY: rows lo..hi of the output are this task's alone; the
        // part holds hi - lo contiguous elements of the same type; the
        // output's data is writable (new) and outlives the split.
        unsafe {
            std::ptr::copy_nonoverlapping(
                part.data_ptr() as *const u8,
                base.get().add(lo * esize),
                (hi - lo) * esize,
            )
        };
        Ok(part)
    })?;
    // The element arrmeta follows the outermost dim's.
    let elem_meta =
        |a: &Array| (a.arrmeta_ptr() as *mut u8).wrapping_add(size_of::<FixedDimMeta>());
    for part in &parts {
        // SAFETY: both are valid arrmeta of `elem` (the element of two
        // fixed dims of arrays of that element type), of arrays only this
        // thread holds (new ones: the output, and each part, which is
        // dropped unread below once its rows' blocks have moved).
        unsafe { arrmeta::absorb_blocks(elem, elem_meta(&out), elem_meta(part)) }?;
    }
    Ok(out)
}

#[cfg(test)]
pub(super) mod tests {
    use crate::exec::with_threads;
    use crate::{Array, compute};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Calls split so far (this test binary).
    pub(in crate::callable) static SPLITS: AtomicUsize = AtomicUsize::new(0);
    /// Split calls of var rows whose tasks shared the output's arena.
    pub(super) static SHARED_ARENAS: AtomicUsize = AtomicUsize::new(0);

    /// `rows` ragged rows of 0..12 elements as JSON, some with missing
    /// values when `opt`.
    fn ragged(rows: usize, opt: bool) -> String {
        let row = |i: usize| {
            let items: Vec<String> = (0..(i * 7) % 13)
                .map(|j| match (i * 31 + j * 17) % 23 {
                    5 if opt => "null".to_string(),
                    v => format!("{}.5", v as i64 - 9),
                })
                .collect();
            format!("[{}]", items.join(","))
        };
        format!("[{}]", (0..rows).map(row).collect::<Vec<_>>().join(","))
    }

    /// Under valgrind (scripts/valgrind-tests.sh sets DYND_VALGRIND): two
    /// threads only, and fewer rows (still enough to split).
    fn light() -> bool {
        std::env::var_os("DYND_VALGRIND").is_some()
    }

    /// `f` on 1 thread, and on 2 and 3 (where it must split), agree.
    fn agrees(what: &str, f: &dyn Fn() -> crate::Result<Array>) {
        let one = with_threads(1, f).unwrap();
        for &threads in if light() { &[2][..] } else { &[2, 3][..] } {
            let before = SPLITS.load(Ordering::Relaxed);
            let many = with_threads(threads, f).unwrap();
            assert!(
                SPLITS.load(Ordering::Relaxed) > before,
                "{what}: not split on {threads} threads"
            );
            check_rows(what, &many);
            assert_eq!(many.tp(), one.tp(), "{what}");
            assert!(
                many.to_json() == one.to_json(),
                "{what}: {threads} threads differ"
            );
        }
    }

    /// Every var row of a split result `a` (`N * var * T`) lies inside the
    /// output's own arena: its chunks hold each row's bytes (nothing points
    /// into a task's array that was dropped).
    fn check_rows(what: &str, a: &Array) {
        use crate::layout::{VarDimData, VarDimMeta, arrmeta};
        let crate::types::TypeKind::FixedDim { size: n, elem } = a.tp().kind() else {
            return;
        };
        let crate::types::TypeKind::VarDim { elem: e } = elem.kind() else {
            return;
        };
        // SAFETY: `N * var * T` arrmeta: the fixed dim's, then the var dim's.
        let (fixed, var): (arrmeta::FixedDimMeta, VarDimMeta) = unsafe {
            (
                arrmeta::read(a.arrmeta_ptr()),
                arrmeta::read(
                    a.arrmeta_ptr()
                        .add(std::mem::size_of::<arrmeta::FixedDimMeta>()),
                ),
            )
        };
        let block = std::ptr::NonNull::new(var.blockref).expect("a var dim's block");
        // SAFETY: the array holds a reference to its var dim's block.
        let block = unsafe { crate::memblock::MemBlock::from_borrowed(block) };
        let ranges = block.pod_allocator().expect("a POD arena").chunk_ranges();
        for i in 0..*n {
            // SAFETY: row i's descriptor, inside the array's data.
            let d: VarDimData = unsafe {
                a.data_ptr()
                    .offset(i as isize * fixed.stride)
                    .cast::<VarDimData>()
                    .read_unaligned()
            };
            let (lo, hi) = (d.begin as usize, d.begin as usize + d.size * e.data_size());
            assert!(
                d.size == 0 || ranges.iter().any(|&(b, l)| lo >= b && hi <= b + l),
                "{what}: row {i} lies outside the output's arena"
            );
        }
    }

    #[test]
    fn plain_var_rows_share_the_output_arena_and_others_do_not() {
        let n = super::SPLIT_ROWS + 11;
        let y =
            Array::from_json(format!("{n} * var * float64").as_str(), &ragged(n, false)).unwrap();
        let x =
            Array::from_json(format!("{n} * var * ?float64").as_str(), &ragged(n, true)).unwrap();
        let mask = compute::call("greater", &[&y, &Array::from(2.0)]).unwrap();
        let shared = |f: &dyn Fn() -> crate::Result<Array>| {
            let before = SHARED_ARENAS.load(Ordering::Relaxed);
            let out = with_threads(2, f).unwrap();
            check_rows("shared", &out);
            SHARED_ARENAS.load(Ordering::Relaxed) > before
        };
        assert!(shared(&|| compute::filter(&y, &mask)));
        assert!(shared(&|| compute::sort(&x)));
        assert!(shared(&|| compute::cumsum(&y)));
        // drop_null allocates row by row: arrays of its own per task.
        assert!(!shared(&|| compute::drop_null(&x)));
    }

    #[test]
    fn row_callables_split_their_outer_rows_with_the_serial_result() {
        let n = if light() {
            super::SPLIT_ROWS + 11
        } else {
            3 * super::SPLIT_ROWS + 11
        };
        let x =
            Array::from_json(format!("{n} * var * ?float64").as_str(), &ragged(n, true)).unwrap();
        let y =
            Array::from_json(format!("{n} * var * float64").as_str(), &ragged(n, false)).unwrap();
        agrees("sort", &|| compute::sort(&x));
        agrees("argsort", &|| compute::argsort(&y));
        agrees("cumsum", &|| compute::cumsum(&x));
        agrees("drop_null", &|| compute::drop_null(&x));
        let mask = compute::call("greater", &[&y, &Array::from(2.0)]).unwrap();
        agrees("filter", &|| compute::filter(&y, &mask));
        let idx = compute::argsort(&y).unwrap();
        agrees("take", &|| compute::take(&y, &idx));
        // Fixed rows: written in place, no arenas.
        let z = Array::from_json(
            format!("{n} * 3 * int32").as_str(),
            &format!(
                "[{}]",
                (0..n)
                    .map(|i| format!("[{},{},{}]", i % 7, (i * 5) % 3, -(i as i64 % 11)))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        )
        .unwrap();
        agrees("sort fixed rows", &|| compute::sort(&z));
        agrees("cumprod fixed rows", &|| compute::cumprod(&z));
    }

    #[test]
    fn rows_of_strings_move_both_arenas() {
        let n = 2 * super::SPLIT_ROWS + 3;
        let rows: Vec<String> = (0..n)
            .map(|i| {
                let words: Vec<String> = (0..i % 4)
                    .map(|j| format!("\"w{}-{}\"", (i * 13 + j) % 97, "x".repeat(j * 9)))
                    .collect();
                format!("[{}]", words.join(","))
            })
            .collect();
        let x = Array::from_json(
            format!("{n} * var * string").as_str(),
            &format!("[{}]", rows.join(",")),
        )
        .unwrap();
        agrees("sort strings", &|| compute::sort(&x));
        // The result outlives the input and the tasks' arrays.
        let sorted = with_threads(2, || compute::sort(&x)).unwrap();
        let want = with_threads(1, || compute::sort(&x)).unwrap().to_json();
        drop(x);
        assert!(sorted.to_json() == want);
    }

    #[test]
    fn a_failing_task_reports_the_serial_error() {
        let n = 2 * super::SPLIT_ROWS;
        let x =
            Array::from_json(format!("{n} * var * float64").as_str(), &ragged(n, false)).unwrap();
        let idx: Vec<String> = (0..n)
            .map(|i| {
                if i == n - 5 || i == 9000 {
                    "[99]".into()
                } else {
                    "[]".into()
                }
            })
            .collect();
        let idx = Array::from_json(
            format!("{n} * var * int64").as_str(),
            &format!("[{}]", idx.join(",")),
        )
        .unwrap();
        let one = with_threads(1, || compute::take(&x, &idx)).unwrap_err();
        let two = with_threads(2, || compute::take(&x, &idx)).unwrap_err();
        assert_eq!(one.kind(), crate::ErrorKind::Index);
        assert_eq!(one.message(), two.message());
        assert!(one.message().contains("9000"), "{}", one.message());
    }
}
