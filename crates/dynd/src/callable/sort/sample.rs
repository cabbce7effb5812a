//! One long row's `argsort` on the executor's threads, by sample sort
//! (DESIGN §13): every pass but a small sample's sort runs in blocks or
//! buckets on the pool.
//!
//! 1. **Splitters.** A few dozen elements per bucket, taken at evenly
//!    spaced positions, are sorted; every so many of them becomes a
//!    splitter, cutting the values into [`buckets`] ranges of about equal
//!    size (the keys are distinct `(key, position)` pairs, so equal keys
//!    spread over buckets by position and never pile into one).
//! 2. **Count.** Each block of the row finds each element's bucket (a
//!    branch-free search of the splitters; NaN and missing values have a
//!    bucket of their own each) and counts them.
//! 3. **Scatter.** From the counts, each block knows where its elements of
//!    each bucket go, and writes its values' pairs there; NaN and missing
//!    positions go straight to the end of the output, in order.
//! 4. **Sort.** The buckets, largest first, are sorted as independent
//!    tasks by the serial sort.
//! 5. **Write.** The sorted pairs' positions go to the output in blocks.
//!
//! The result is the serial argsort's, position for position, whatever
//! the thread count: the pairs are totally ordered, so any correct sort
//! gives the same order.

use super::sort::Radix;
use crate::error::{Error, Result};
use crate::exec::{self, Shared};
use crate::memblock::Buffer;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};

/// Values for which any bytes are a valid value (integers, and pairs of
/// them), so that a scratch slice of them may start with whatever bytes
/// its buffer holds.
///
/// # Safety
/// Every bit pattern of the type's size (padding aside) is a valid value.
pub(super) unsafe trait Plain: Copy {}
// SAFETY: integers: every bit pattern is a value.
unsafe impl Plain for u16 {}
// SAFETY: a pair of integers (`Radix` is implemented for the unsigned
// integers alone); its padding need not hold anything.
unsafe impl<U: Radix> Plain for (U, usize) {}

/// `n` scratch values from dynd's own buffers rather than the heap: large
/// ones are mapped in huge pages and come back from the cache of freed
/// mappings, where a fresh 160 MB `Vec` of pairs cost a page fault per
/// 4 KiB on every call (a third of a 2-thread argsort of 10⁷ values). The
/// values start as whatever the buffer holds (zeros, or a freed array's
/// bytes): the caller writes each before reading it.
pub(super) struct Scratch<T> {
    buf: Buffer,
    n: usize,
    _t: PhantomData<T>,
}

impl<T: Plain> Scratch<T> {
    pub(super) fn new(n: usize) -> Result<Scratch<T>> {
        let bytes = n
            .checked_mul(size_of::<T>())
            .ok_or_else(|| Error::alloc(format!("argsort: {n} elements are too many")))?;
        Ok(Scratch {
            buf: Buffer::new(bytes, align_of::<T>(), false)?,
            n,
            _t: PhantomData,
        })
    }

    fn as_mut_ptr(&mut self) -> *mut T {
        self.buf.ptr().cast()
    }

    fn as_slice(&self) -> &[T] {
        // SAFETY: the buffer holds `n` values of T, aligned (asked for
        // `align_of::<T>()`), of initialized bytes (zeros or a freed
        // array's), and any bytes are a T (`Plain`).
        unsafe { std::slice::from_raw_parts(self.buf.ptr().cast(), self.n) }
    }

    pub(super) fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as `as_slice`; `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.buf.ptr().cast(), self.n) }
    }
}

/// What the row holds at a position, as the sort sees it.
#[derive(Clone, Copy)]
pub(super) enum Slot<U> {
    /// A value's key (already flipped for a descending sort).
    Value(U),
    /// A NaN: after every value.
    NaN,
    /// A missing value: after every NaN.
    Missing,
}

/// Elements per block of the count and scatter passes.
const BLOCK: usize = 1 << 18;
/// Sample elements per bucket.
const OVERSAMPLE: usize = 16;
/// Pairs per bucket aimed at: 2 MiB of 16-byte pairs, about a core's L2
/// cache, so that most of a bucket's sort runs inside it (a search step
/// more per element for each halving; 2^15 and 2^20 measured alike).
const BUCKET_PAIRS: usize = 1 << 17;
/// The most buckets (their ids and the two classes' fit in a `u16`).
const MAX_BUCKETS: usize = 1 << 12;

/// How many buckets `n` elements get on `threads` threads: a power of two,
/// of about [`BUCKET_PAIRS`] each, and at least four per thread (so that
/// unequal buckets still end together) while each holds a block.
fn buckets(n: usize, threads: usize) -> usize {
    let by_size = (n / BUCKET_PAIRS).next_power_of_two();
    let by_threads = (4 * threads).next_power_of_two().min((n / BLOCK).max(1));
    by_size.max(by_threads).clamp(1, MAX_BUCKETS)
}

/// Elements whose bucket searches run side by side.
const LANES: usize = 8;

/// The bucket of each pair of `es` among `splitters` (sorted; one fewer
/// than a power of two of buckets): how many splitters are below it. The
/// searches have no branch (a mispredicted branch per step made this pass
/// cost more than the sorts), and step together, so that the dependent
/// loads of one search overlap those of the others.
#[inline(always)]
fn buckets_of<U: Ord, const L: usize>(
    es: &[(U, usize); L],
    splitters: &[(U, usize)],
) -> [usize; L] {
    let mut b = [0usize; L];
    let mut step = splitters.len().div_ceil(2);
    while step > 0 {
        for (b, e) in b.iter_mut().zip(es) {
            // *b + step - 1 < splitters.len(): *b is a multiple of twice
            // `step` below the bucket count.
            let s = &splitters[*b + step - 1];
            let above = (e.0 > s.0) | ((e.0 == s.0) & (e.1 > s.1));
            *b += step * above as usize;
        }
        step /= 2;
    }
    b
}

/// Sorts the `n` elements of a row by `slot(j)` — values by `(key, j)`,
/// then NaNs, then missing values, each group by position — and calls
/// `put(w, j)` for output position `w` and row position `j`, every `w` in
/// `0..n` once. `sort` is the serial sort of a bucket of pairs.
///
/// `slot` and `put` are called from the pool's threads; `put`'s calls
/// for different `w` may run at once.
pub(super) fn argsort_split<U>(
    n: usize,
    slot: impl Fn(usize) -> Slot<U> + Sync,
    put: impl Fn(usize, usize) + Sync,
    sort: fn(&mut [(U, usize)]),
) -> Result<()>
where
    U: Radix,
{
    if n == 0 {
        return Ok(());
    }
    let threads = exec::num_threads();
    let blocks = n.div_ceil(BLOCK).max(1);
    let range = |b: usize| b * BLOCK..((b + 1) * BLOCK).min(n);

    // 1. Splitters from an evenly spaced sample of the values.
    let want = buckets(n, threads);
    let picks = want * OVERSAMPLE;
    let mut sample: Vec<(U, usize)> = (0..picks)
        .map(|i| i * n / picks)
        .filter_map(|j| match slot(j) {
            Slot::Value(k) => Some((k, j)),
            _ => None,
        })
        .collect();
    sample.sort_unstable();
    let mut nb = want;
    while nb > 1 && sample.len() < nb * OVERSAMPLE / 2 {
        nb /= 2;
    }
    let splitters: Vec<(U, usize)> = (1..nb).map(|k| sample[k * sample.len() / nb]).collect();
    let (nan_id, na_id) = (nb, nb + 1);

    // 2. Each element's bucket, and each block's counts.
    let mut ids = Scratch::<u16>::new(n)?;
    let ids_at = Shared(ids.as_mut_ptr());
    let counts = exec::map_tasks(blocks, |b| {
        let mut c = vec![0usize; nb + 2];
        let mut put = |j: usize, id: usize| {
            c[id] += 1;
            // SAFETY: j < n, the length of `ids`, which outlives the split;
            // each block writes its own positions.
            unsafe { *ids_at.get().add(j) = id as u16 };
        };
        let r = range(b);
        let mut j = r.start;
        // LANES elements at a time, their searches step by step together:
        // one element's search is a chain of dependent loads, and the
        // chains of several overlap.
        while j + LANES <= r.end {
            let mut pairs = [(U::default(), 0usize); LANES];
            let mut class = [0usize; LANES];
            for (l, (p, c)) in pairs.iter_mut().zip(&mut class).enumerate() {
                match slot(j + l) {
                    Slot::Value(k) => *p = (k, j + l),
                    Slot::NaN => *c = nan_id,
                    Slot::Missing => *c = na_id,
                }
            }
            let ids = buckets_of(&pairs, &splitters);
            for l in 0..LANES {
                // A value's class is 0; the classes' ids are nb and up.
                put(j + l, if class[l] == 0 { ids[l] } else { class[l] });
            }
            j += LANES;
        }
        for j in j..r.end {
            let id = match slot(j) {
                Slot::Value(k) => buckets_of(&[(k, j)], &splitters)[0],
                Slot::NaN => nan_id,
                Slot::Missing => na_id,
            };
            put(j, id);
        }
        Ok(c)
    })?;

    // Where each block's elements of each bucket start: the buckets in
    // order over the values, then the NaNs, then the missing values.
    let mut starts = vec![vec![0usize; nb + 2]; blocks];
    let mut at = 0usize;
    for id in 0..nb + 2 {
        for b in 0..blocks {
            starts[b][id] = at;
            at += counts[b][id];
        }
    }
    let values: usize = (0..blocks)
        .map(|b| counts[b][..nb].iter().sum::<usize>())
        .sum();
    let bucket_range = |k: usize| {
        let end = if k + 1 < nb { starts[0][k + 1] } else { values };
        starts[0][k]..end
    };

    // 3. The values' pairs into their buckets; NaN and missing positions
    // straight to the output.
    let mut pairs = Scratch::<(U, usize)>::new(values)?;
    let pairs_at = Shared(pairs.as_mut_ptr());
    let ids = ids.as_slice();
    exec::tasks(blocks, |b| {
        let mut cursor = starts[b].clone();
        for j in range(b) {
            let id = ids[j] as usize;
            let w = cursor[id];
            cursor[id] += 1;
            if id < nb {
                let Slot::Value(k) = slot(j) else {
                    return Err(Error::invalid_argument(format!(
                        "argsort: element {j} changed while it was sorted"
                    )));
                };
                // SAFETY: w < values (the counts place every value below
                // them), within the capacity; the cursors of the blocks
                // and buckets are disjoint ranges.
                unsafe { pairs_at.get().add(w).write((k, j)) };
            } else {
                put(w, j);
            }
        }
        Ok(())
    })?;

    // 4. The buckets, largest first, each by the serial sort.
    let mut order: Vec<usize> = (0..nb).collect();
    order.sort_unstable_by_key(|&k| std::cmp::Reverse(bucket_range(k).len()));
    let pairs_at = Shared(pairs.as_mut_ptr());
    exec::tasks(nb, |i| {
        let r = bucket_range(order[i]);
        // SAFETY: the buckets are disjoint ranges of `pairs`, each task's
        // alone, and `pairs` outlives the split.
        sort(unsafe { std::slice::from_raw_parts_mut(pairs_at.get().add(r.start), r.len()) });
        Ok(())
    })?;

    // 5. The positions, in order.
    exec::flat(values, BLOCK, |s, c| {
        for (w, &(_, j)) in pairs.as_slice()[s..s + c].iter().enumerate() {
            put(s + w, j);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::with_threads;

    /// The sort's key of a float that is not NaN (-0.0 before 0.0, as
    /// the kernels' keys order them).
    fn key(x: f64) -> u64 {
        let b = x.to_bits();
        if b >> 63 == 1 { !b } else { b | 1 << 63 }
    }

    /// The serial order of `row` (None = missing), by a plain stable sort.
    fn serial(row: &[Option<f64>]) -> Vec<usize> {
        let mut js: Vec<usize> = (0..row.len()).collect();
        let rank = |v: Option<f64>| match v {
            None => (2, 0),
            Some(x) if x.is_nan() => (1, 0),
            Some(x) => (0, key(x)),
        };
        js.sort_by_key(|&j| rank(row[j]));
        js
    }

    fn split(row: &[Option<f64>], threads: usize) -> Vec<usize> {
        let out: Vec<std::sync::atomic::AtomicUsize> = (0..row.len())
            .map(|_| std::sync::atomic::AtomicUsize::new(usize::MAX))
            .collect();
        with_threads(threads, || {
            argsort_split(
                row.len(),
                |j| match row[j] {
                    None => Slot::Missing,
                    Some(x) if x.is_nan() => Slot::NaN,
                    // Order-keeping key of a non-NaN float.
                    Some(x) => Slot::Value(key(x)),
                },
                |w, j| {
                    let was = out[w].swap(j, std::sync::atomic::Ordering::Relaxed);
                    assert_eq!(was, usize::MAX, "output {w} written twice");
                },
                |p| p.sort_unstable(),
            )
        })
        .unwrap();
        out.into_iter().map(|a| a.into_inner()).collect()
    }

    fn check(row: &[Option<f64>]) {
        let want = serial(row);
        for threads in [1, 2, 3, 8] {
            let got = split(row, threads);
            let first = (0..row.len()).find(|&w| got[w] != want[w]);
            assert!(
                first.is_none(),
                "{threads} threads, {} elements: output {first:?} differs",
                row.len()
            );
        }
    }

    /// A xorshift stream.
    fn stream(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    #[test]
    fn sample_sort_gives_the_serial_order() {
        let n = 3 * BLOCK + 777;
        let mut r = stream(7);
        // Distinct-ish values, with NaNs and missing ones sprinkled.
        let row: Vec<Option<f64>> = (0..n)
            .map(|_| match r() % 50 {
                0 => None,
                1 => Some(f64::NAN),
                v => Some((v as f64 - 25.0) * (r() % 1000) as f64),
            })
            .collect();
        check(&row);
        // Many equal keys: the buckets split them by position.
        let row: Vec<Option<f64>> = (0..n).map(|j| Some((j % 3) as f64)).collect();
        check(&row);
        // Already sorted, and reversed.
        let row: Vec<Option<f64>> = (0..n).map(|j| Some(j as f64)).collect();
        check(&row);
        let row: Vec<Option<f64>> = (0..n).rev().map(|j| Some(j as f64)).collect();
        check(&row);
    }

    #[test]
    fn rows_of_few_values_still_sort() {
        let n = 2 * BLOCK + 5;
        // Nothing but NaN and missing values.
        let row: Vec<Option<f64>> = (0..n)
            .map(|j| if j % 2 == 0 { None } else { Some(f64::NAN) })
            .collect();
        check(&row);
        // A handful of values among missing ones (fewer than the sample
        // needs for its buckets).
        let row: Vec<Option<f64>> = (0..n)
            .map(|j| (j % 100_003 == 0).then_some(-(j as f64)))
            .collect();
        check(&row);
        // One element, and none.
        check(&[Some(1.0)]);
        check(&[]);
    }

    #[test]
    fn the_bucket_search_counts_the_splitters_below() {
        let s: Vec<(u32, usize)> = [10, 20, 30, 30, 50, 60, 70]
            .iter()
            .enumerate()
            .map(|(j, &k)| (k, j))
            .collect();
        for k in 0..80 {
            for j in 0..8 {
                let want = s.iter().filter(|&&x| x < (k, j)).count();
                assert_eq!(buckets_of(&[(k, j)], &s)[0], want, "{k} at {j}");
            }
        }
        assert_eq!(buckets_of(&[(5u32, 0), (3, 1)], &[]), [0, 0]);
        assert_eq!(buckets(10, 8), 1);
        // About BUCKET_PAIRS each, at least four a thread while each holds
        // a block, at most MAX_BUCKETS.
        assert_eq!(buckets(10_000_000, 2), 128);
        assert_eq!(buckets(4 * BLOCK, 2), 8);
        assert_eq!(buckets(BLOCK, 16), 2);
        assert_eq!(buckets(usize::MAX / 2, 2), MAX_BUCKETS);
    }
}
