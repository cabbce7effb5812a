//! One long row sorted on the executor's threads (DESIGN §13): the row is
//! cut into one piece per thread (rounded up to a power of two), each piece
//! sorted on its own by the serial sort, and the sorted runs merged
//! pairwise, round by round, between the row and a scratch buffer. Every
//! round's output is cut into equal ranges, each merged by its own task: a
//! range finds where it starts in both runs by a binary search (the "merge
//! path"), so a merge of two long runs uses every thread too. When the
//! number of rounds is odd the pieces are sorted in the scratch buffer, so
//! the last round writes the row and nothing is copied back.
//!
//! Elements are totally ordered values (keys, or distinct `(key, position)`
//! pairs), so the result is the serial sort's, element for element,
//! whatever the thread count.

use crate::exec::{self, Shared, TASK_ELEMENTS};
use std::ops::Range;

/// Rows shorter than this are sorted serially: below it the merge passes
/// and the threads' start cost more than a second core gives.
pub(super) const SPLIT_SORT_MIN: usize = 1 << 17;

/// Sorts `v` ascending with `sort` (the serial sort of a piece), split on
/// the current executor when `v` is long and there are threads.
pub(super) fn sort_split<E>(v: &mut [E], sort: fn(&mut [E]))
where
    E: Copy + Ord + Default + Send + Sync,
{
    let n = v.len();
    // The length first: short rows (most rows of a ragged sort) never ask
    // for the thread count.
    let threads = if n < SPLIT_SORT_MIN {
        1
    } else {
        exec::num_threads()
    };
    if threads < 2 {
        sort(v);
        return;
    }
    let pieces = threads.next_power_of_two().min(n / TASK_ELEMENTS).max(2);
    let width = n.div_ceil(pieces);
    // The merge rounds: runs of `width` doubled until one covers the row.
    let rounds = std::iter::successors(Some(width), |r| Some(r.saturating_mul(2)))
        .take_while(|&r| r < n)
        .count();
    // The rounds alternate between the row and the scratch buffer and the
    // last must write the row: with an odd number of rounds the pieces are
    // sorted in the scratch buffer (each task copies its own piece there
    // first, which also touches the buffer's pages on every thread), so no
    // round ends with a copy back.
    let mut scratch: Vec<E> = Vec::with_capacity(n);
    let start_in_scratch = rounds % 2 == 1;
    {
        let data = Shared(v.as_mut_ptr());
        let spare = Shared(scratch.as_mut_ptr());
        let sorted = exec::tasks(pieces, |i| {
            let r = (i * width).min(n)..((i + 1) * width).min(n);
            // SAFETY: the pieces are disjoint ranges of `v` and of the
            // scratch buffer (capacity `n`), which outlive the split; each
            // task has its own. A piece of the buffer is written whole
            // (from `v`'s) before it is read.
            let piece = unsafe {
                let from = std::slice::from_raw_parts_mut(data.get().add(r.start), r.len());
                if start_in_scratch {
                    let to = spare.get().add(r.start);
                    std::ptr::copy_nonoverlapping(from.as_ptr(), to, r.len());
                    std::slice::from_raw_parts_mut(to, r.len())
                } else {
                    from
                }
            };
            sort(piece);
            Ok(())
        });
        debug_assert!(sorted.is_ok(), "sorting a piece cannot fail");
    }
    if start_in_scratch {
        // SAFETY: every element of the buffer was written by its piece's
        // task (the pieces cover 0..n), and E is Copy.
        unsafe { scratch.set_len(n) };
    } else {
        // Written whole by the first round before it is read.
        scratch.resize(n, E::default());
    }
    let mut run = width;
    let mut in_scratch = start_in_scratch;
    while run < n {
        {
            let (src, dst): (&[E], &mut [E]) = if in_scratch {
                (&scratch, &mut *v)
            } else {
                (&*v, &mut scratch)
            };
            merge_round(src, dst, run, threads);
        }
        in_scratch = !in_scratch;
        run = run.saturating_mul(2);
    }
    debug_assert!(!in_scratch, "the last round writes the row");
}

/// One round: the runs of `run` elements of `src`, merged in pairs into
/// `dst` (a last run without a partner is copied), by ranges of `dst`.
fn merge_round<E>(src: &[E], dst: &mut [E], run: usize, threads: usize)
where
    E: Copy + Ord + Send + Sync,
{
    let n = src.len();
    let ranges = (threads * 4).min(n.div_ceil(TASK_ELEMENTS)).max(1);
    let per = n.div_ceil(ranges);
    let out = Shared(dst.as_mut_ptr());
    let merged = exec::tasks(ranges, |t| {
        let span = (t * per).min(n)..((t + 1) * per).min(n);
        // SAFETY: the ranges are disjoint parts of `dst`, which outlives the
        // split; each task writes only its own.
        let dst = unsafe { std::slice::from_raw_parts_mut(out.get().add(span.start), span.len()) };
        merge_span(src, dst, span.start, run);
        Ok::<(), crate::Error>(())
    });
    debug_assert!(merged.is_ok(), "merging cannot fail");
}

/// Writes outputs `start..start + dst.len()` of the round whose runs are
/// `run` long: for each pair of runs it overlaps, the part of their merge
/// that falls in the span.
fn merge_span<E: Copy + Ord>(src: &[E], dst: &mut [E], start: usize, run: usize) {
    let n = src.len();
    let end = start + dst.len();
    let mut at = start;
    while at < end {
        // The pair of runs output `at` belongs to.
        let lo = at / (2 * run) * (2 * run);
        let mid = (lo + run).min(n);
        let hi = (lo + 2 * run).min(n);
        let (a, b) = (&src[lo..mid], &src[mid..hi]);
        let stop = end.min(hi);
        let (i, j) = co_rank(at - lo, a, b);
        let (i_end, j_end) = co_rank(stop - lo, a, b);
        merge_into(
            &a[i..i_end],
            &b[j..j_end],
            &mut dst[at - start..stop - start],
        );
        at = stop;
    }
}

/// How many elements of `a` and of `b` come before output `k` of their
/// merge (ties: `a`'s first), by a binary search on `a`'s count.
fn co_rank<E: Ord>(k: usize, a: &[E], b: &[E]) -> (usize, usize) {
    let mut range: Range<usize> = k.saturating_sub(b.len())..k.min(a.len());
    // Find the smallest i in range with a[i] > b[k - i - 1] (the merge
    // takes b's element before a's), or range.end.
    while range.start < range.end {
        let i = range.start + (range.end - range.start) / 2;
        if a[i] > b[k - i - 1] {
            range.end = i;
        } else {
            range.start = i + 1;
        }
    }
    (range.start, k - range.start)
}

/// `a` and `b` (sorted) merged into `out` (`a.len() + b.len()` long);
/// ties take `a`'s element first. The loop over both runs chooses by a
/// select, not a branch: on unordered data a branch mispredicts about half
/// the time, which made the merge the larger part of a parallel sort.
fn merge_into<E: Copy + Ord>(a: &[E], b: &[E], out: &mut [E]) {
    let (mut i, mut j, mut k) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        let take_a = x <= y;
        out[k] = if take_a { x } else { y };
        i += usize::from(take_a);
        j += usize::from(!take_a);
        k += 1;
    }
    out[k..k + a.len() - i].copy_from_slice(&a[i..]);
    out[k + a.len() - i..].copy_from_slice(&b[j..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::with_threads;
    use proptest::prelude::*;

    fn check(mut v: Vec<u64>, threads: usize) {
        let mut want = v.clone();
        want.sort_unstable();
        with_threads(threads, || sort_split(&mut v, |p| p.sort_unstable()));
        assert!(v == want, "{threads} threads, {} keys", v.len());
    }

    #[test]
    fn long_rows_sort_as_serially_on_every_count() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut keys = |n: usize, m: u64| -> Vec<u64> {
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % m
                })
                .collect()
        };
        // Under valgrind (scripts/valgrind-tests.sh sets DYND_VALGRIND):
        // one split count and the sizes that split, to keep it to seconds.
        let light = std::env::var_os("DYND_VALGRIND").is_some();
        let counts: &[usize] = if light { &[3] } else { &[1, 2, 3, 5] };
        let sizes: &[usize] = if light {
            &[SPLIT_SORT_MIN + 1]
        } else {
            &[SPLIT_SORT_MIN - 1, SPLIT_SORT_MIN, 3 * SPLIT_SORT_MIN + 17]
        };
        for &threads in counts {
            for &n in sizes {
                check(keys(n, u64::MAX), threads);
                check(keys(n, 7), threads); // many equal keys
            }
            check((0..SPLIT_SORT_MIN as u64 * 2).rev().collect(), threads);
        }
    }

    #[test]
    fn pairs_keep_positions_in_order_among_equal_keys() {
        let n = 2 * SPLIT_SORT_MIN + 5;
        let mut v: Vec<(u8, usize)> = (0..n).map(|i| ((i * 7919 % 13) as u8, i)).collect();
        with_threads(3, || sort_split(&mut v, |p| p.sort_unstable()));
        assert!(v.windows(2).all(|w| w[0] < w[1]));
    }

    proptest! {
        #[test]
        fn co_rank_splits_a_merge_where_it_is_taken(
            mut a in proptest::collection::vec(0u8..8, 0..40),
            mut b in proptest::collection::vec(0u8..8, 0..40),
        ) {
            a.sort_unstable();
            b.sort_unstable();
            let mut whole = vec![0u8; a.len() + b.len()];
            merge_into(&a, &b, &mut whole);
            for k in 0..=whole.len() {
                let (i, j) = co_rank(k, &a, &b);
                prop_assert_eq!(i + j, k);
                let mut head = vec![0u8; k];
                merge_into(&a[..i], &b[..j], &mut head);
                prop_assert_eq!(&head[..], &whole[..k]);
            }
        }
    }
}
