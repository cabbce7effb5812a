//! A vectorised quicksort of `u64` keys for long rows (AVX-512, chosen at
//! run time; every other machine, and every row of at most [`SMALL`] keys,
//! uses the standard library's unstable sort).
//!
//! The keys are the order-preserving images of int64, uint64 and float64
//! values (see `SortKey`), so one sort serves all three. Equal keys are
//! equal values, so the sort need not be stable.
//!
//! **Partition.** In place, eight keys per vector: a compare against the
//! pivot gives a mask; the keys below the pivot are compressed to the low
//! lanes and stored at the left write position, the others compressed and
//! expanded to the high lanes and stored ending at the right write
//! position. Only the register forms of compress and expand are used (the
//! memory form of `vpcompressq` is microcoded and slow on AMD Zen 4). The
//! first and last `4 × 8` keys are held in registers before the loop, so
//! the free space on each side is always at least one whole block; each
//! step reads the next block from the side with less free space (as
//! x86-simd-sort and vqsort do), stores whole vectors, and so needs no
//! scratch memory.
//!
//! **Recursion.** Pivot: the median of nine evenly spaced keys. Smaller
//! side first, the larger one iterated. When no key is below the pivot (it
//! is the minimum), the segment is split again into keys equal to the
//! pivot (done) and keys above it, which makes many equal keys linear.
//! After `2 log2 n` levels a segment falls back to the standard library's
//! sort, bounding the worst case by O(n log n).

/// Segments this short (or shorter) go to the standard library's sort.
pub(super) const SMALL: usize = 256;

/// Sorts `v` ascending.
pub(super) fn sort_u64(v: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if v.len() > SMALL && avx512::available() {
        let limit = 2 * (usize::BITS - v.len().leading_zeros()) as usize;
        // SAFETY: the CPU has avx512f and popcnt (just checked).
        unsafe { avx512::quicksort(v, limit) };
        return;
    }
    v.sort_unstable();
}

/// Sorts a long `v` ascending on the executor's threads when the CPU has
/// AVX-512 and there are two or more: the row is partitioned level by level
/// (the first level on one thread, each later one with its segments on
/// their own threads) until there are four segments per thread, and the
/// segments are then sorted as independent tasks. No scratch memory and no
/// merge: the partitions already put every segment in its place. Returns
/// `false`, having done nothing, when it does not apply (short rows, one
/// thread, another CPU): the caller then sorts another way.
pub(super) fn sort_u64_split(v: &mut [u64], threads: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    if threads >= 2 && v.len() >= 2 * crate::exec::TASK_ELEMENTS && avx512::available() {
        // SAFETY: the CPU has avx512f and popcnt (just checked).
        unsafe { avx512::quicksort_split(v, threads) };
        return true;
    }
    let _ = (v, threads);
    false
}

/// The median of nine keys evenly spaced over `v` (at least nine long).
fn pivot(v: &[u64]) -> u64 {
    let step = v.len() / 9;
    let mut s: [u64; 9] = std::array::from_fn(|i| v[i * step + step / 2]);
    s.sort_unstable();
    s[4]
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{SMALL, pivot};
    use crate::exec::{self, Shared, TASK_ELEMENTS};
    use std::arch::x86_64::*;

    /// Vectors per block of the partition's main loop.
    const UNROLL: usize = 4;
    /// Keys per block.
    const BLOCK: usize = 8 * UNROLL;

    /// `true` when the CPU has what [`quicksort`] uses.
    pub(super) fn available() -> bool {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("popcnt")
    }

    /// Sorts `v`; after `limit` more levels a segment goes to the standard
    /// library's sort.
    ///
    /// # Safety
    /// 1. The CPU has avx512f and popcnt.
    #[target_feature(enable = "avx512f,popcnt")]
    pub(super) unsafe fn quicksort(mut v: &mut [u64], mut limit: usize) {
        loop {
            if v.len() <= SMALL || limit == 0 {
                v.sort_unstable();
                return;
            }
            limit -= 1;
            let p = pivot(v);
            // SAFETY: (1); v is longer than SMALL > 2 BLOCK + 8.
            let mut mid = unsafe { partition(v, p, false) };
            if mid == 0 {
                // No key is below p, so p is the minimum: the keys equal
                // to it go first and are in place.
                // SAFETY: as above.
                mid = unsafe { partition(v, p, true) };
                v = &mut v[mid..];
                continue;
            }
            let (lo, hi) = v.split_at_mut(mid);
            if lo.len() < hi.len() {
                // SAFETY: (1).
                unsafe { quicksort(lo, limit) };
                v = hi;
            } else {
                // SAFETY: (1).
                unsafe { quicksort(hi, limit) };
                v = lo;
            }
        }
    }

    /// [`super::sort_u64_split`]'s work: partitions by levels, then one
    /// task per segment.
    ///
    /// # Safety
    /// 1. The CPU has avx512f and popcnt.
    pub(super) unsafe fn quicksort_split(v: &mut [u64], threads: usize) {
        let n = v.len();
        let base = Shared(v.as_mut_ptr());
        // Segments as (start, len, sorted): disjoint ranges covering `v`.
        let mut segs = vec![(0usize, n, false)];
        let want = 4 * threads;
        let limit = 2 * (usize::BITS - n.leading_zeros()) as usize;
        for _level in 0..limit {
            let big = |&(_, len, done): &(usize, usize, bool)| !done && len >= 2 * TASK_ELEMENTS;
            if segs.len() >= want || !segs.iter().any(big) {
                break;
            }
            let cut = exec::map_tasks(segs.len(), |i| {
                let seg = segs[i];
                if !big(&seg) {
                    return Ok(vec![seg]);
                }
                let (start, len, _) = seg;
                // SAFETY: the segments are disjoint ranges of `v`, each
                // task's alone, and `v` outlives the split.
                let s = unsafe { std::slice::from_raw_parts_mut(base.get().add(start), len) };
                let p = pivot(s);
                // SAFETY: (1); the segment is longer than 2 BLOCK + 8.
                let mid = unsafe { partition(s, p, false) };
                if mid > 0 {
                    return Ok(vec![(start, mid, false), (start + mid, len - mid, false)]);
                }
                // p is the minimum: the keys equal to it are in place.
                // SAFETY: as above.
                let eq = unsafe { partition(s, p, true) };
                Ok(vec![(start, eq, true), (start + eq, len - eq, false)])
            });
            // Partitioning cannot fail; the tasks only return Ok.
            let Ok(cut) = cut else { break };
            segs = cut
                .into_iter()
                .flatten()
                .filter(|&(_, len, _)| len > 0)
                .collect();
        }
        // Largest first, so that the pool's threads end together.
        segs.sort_unstable_by_key(|&(_, len, _)| std::cmp::Reverse(len));
        let sorted = exec::tasks(segs.len(), |i| {
            let (start, len, done) = segs[i];
            if !done {
                // SAFETY: as above.
                let s = unsafe { std::slice::from_raw_parts_mut(base.get().add(start), len) };
                let limit = 2 * (usize::BITS - len.leading_zeros()) as usize;
                // SAFETY: (1).
                unsafe { quicksort(s, limit) };
            }
            Ok(())
        });
        debug_assert!(sorted.is_ok(), "sorting a segment cannot fail");
    }

    /// Reorders `v` so that the keys below `p` (at most `p` when `le`)
    /// come first; returns how many they are.
    ///
    /// # Safety
    /// 1. The CPU has avx512f and popcnt.
    /// 2. `v.len() >= 2 * BLOCK + 8`.
    #[target_feature(enable = "avx512f,popcnt")]
    unsafe fn partition(v: &mut [u64], p: u64, le: bool) -> usize {
        let n = v.len();
        debug_assert!(n >= 2 * BLOCK + 8);
        let base = v.as_mut_ptr();
        let pv = _mm512_set1_epi64(p as i64);
        // Positions: keys in [read_l, read_r) are unread; keys before
        // write_l and from write_r on are placed. The free space is
        // [write_l, read_l) and [read_r, write_r); together it is always
        // `2 BLOCK + r` keys: one vector read, one vector written.
        let r = n % 8;
        let rmask = low_lanes(r);
        // SAFETY: every load below reads 8 keys (or the r masked ones)
        // inside [0, n): the head and tail blocks fit by (2), and the loop
        // reads whole vectors of the unread range, whose length stays a
        // multiple of 8.
        let load = |at: usize| unsafe { _mm512_loadu_epi64(base.add(at).cast::<i64>()) };
        // SAFETY: as above.
        let head = unsafe { _mm512_maskz_loadu_epi64(rmask, base.cast::<i64>()) };
        let mut read_l = r;
        let mut read_r = n;
        let mut held = [_mm512_setzero_si512(); 2 * UNROLL];
        for k in 0..UNROLL {
            held[2 * k] = load(read_l);
            read_l += 8;
            read_r -= 8;
            held[2 * k + 1] = load(read_r);
        }
        let mut w = Writes {
            base,
            left: 0,
            right: n,
        };
        while read_r - read_l >= BLOCK {
            // Read from the side with less free space: afterwards both
            // sides have at least BLOCK free, enough for BLOCK keys.
            let at = if read_l - w.left <= w.right - read_r {
                read_l += BLOCK;
                read_l - BLOCK
            } else {
                read_r -= BLOCK;
                read_r
            };
            let block: [__m512i; UNROLL] = std::array::from_fn(|k| load(at + 8 * k));
            for x in block {
                // SAFETY: (1); both sides have at least 8 free, and the
                // free ranges, if they meet, hold at least 16 together.
                unsafe { w.put_whole(x, goes_right(x, pv, le)) };
            }
        }
        while read_l < read_r {
            let at = if read_l - w.left <= w.right - read_r {
                read_l += 8;
                read_l - 8
            } else {
                read_r -= 8;
                read_r
            };
            let x = load(at);
            // SAFETY: as above (at least 8 free on each side).
            unsafe { w.put_whole(x, goes_right(x, pv, le)) };
        }
        // Every key is read: the free space is one range of `2 BLOCK + r`,
        // filled exactly by the held vectors, with masked stores.
        // SAFETY: (1); each masked store writes only the keys it places,
        // inside the free range.
        unsafe { w.put_masked(head, rmask, goes_right(head, pv, le) & rmask) };
        for x in held {
            // SAFETY: as above.
            unsafe { w.put_masked(x, 0xff, goes_right(x, pv, le)) };
        }
        debug_assert_eq!(w.left, w.right);
        w.left
    }

    /// The lanes of `x` that belong right of the pivot.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn goes_right(x: __m512i, pv: __m512i, le: bool) -> __mmask8 {
        if le {
            _mm512_cmpgt_epu64_mask(x, pv)
        } else {
            _mm512_cmpge_epu64_mask(x, pv)
        }
    }

    /// The mask of the lowest `k` (at most 8) lanes.
    #[inline(always)]
    fn low_lanes(k: usize) -> __mmask8 {
        ((1u32 << k) - 1) as __mmask8
    }

    /// The write positions of a partition.
    struct Writes {
        base: *mut u64,
        /// The next key placed left goes here.
        left: usize,
        /// The next key placed right goes just before here.
        right: usize,
    }

    impl Writes {
        /// Places the lanes of `x` (`right` set: right of the pivot) with
        /// two whole-vector stores.
        ///
        /// # Safety
        /// 1. The CPU has avx512f and popcnt.
        /// 2. `[left, left + 8)` and `[right - 8, right)` lie in free space
        ///    and do not overlap.
        #[target_feature(enable = "avx512f,popcnt")]
        #[inline]
        unsafe fn put_whole(&mut self, x: __m512i, right: __mmask8) {
            let nr = right.count_ones() as usize;
            let lo = _mm512_maskz_compress_epi64(!right, x);
            let hi = _mm512_maskz_expand_epi64(
                !low_lanes(8 - nr),
                _mm512_maskz_compress_epi64(right, x),
            );
            // SAFETY: (2).
            unsafe {
                _mm512_storeu_epi64(self.base.add(self.left).cast::<i64>(), lo);
                _mm512_storeu_epi64(self.base.add(self.right - 8).cast::<i64>(), hi);
            }
            self.left += 8 - nr;
            self.right -= nr;
        }

        /// Places the lanes of `x` in `valid` (`right` ⊆ `valid`: right of
        /// the pivot), storing only those.
        ///
        /// # Safety
        /// 1. The CPU has avx512f and popcnt.
        /// 2. `[left, right)` is free and holds at least the valid lanes.
        #[target_feature(enable = "avx512f,popcnt")]
        #[inline]
        unsafe fn put_masked(&mut self, x: __m512i, valid: __mmask8, right: __mmask8) {
            let nr = right.count_ones() as usize;
            let nl = valid.count_ones() as usize - nr;
            let lo = _mm512_maskz_compress_epi64(valid & !right, x);
            let hi = _mm512_maskz_compress_epi64(right, x);
            // SAFETY: (2): nl keys from left and nr keys ending at right.
            unsafe {
                _mm512_mask_storeu_epi64(self.base.add(self.left).cast::<i64>(), low_lanes(nl), lo);
                _mm512_mask_storeu_epi64(
                    self.base.add(self.right - nr).cast::<i64>(),
                    low_lanes(nr),
                    hi,
                );
            }
            self.left += nl;
            self.right -= nr;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` pseudo-random keys below `modulo`, the same for the same seed
    /// (proptest's deterministic generator).
    fn keys(n: usize, seed: u64, modulo: u64) -> Vec<u64> {
        use proptest::prelude::RngCore;
        use proptest::test_runner::{RngAlgorithm, TestRng};
        let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed.to_le_bytes(); 4].concat());
        (0..n).map(|_| rng.next_u64() % modulo).collect()
    }

    fn check(mut v: Vec<u64>) {
        let mut want = v.clone();
        want.sort();
        sort_u64(&mut v);
        assert_eq!(v, want);
    }

    #[test]
    fn sorts_every_length_around_the_thresholds() {
        for n in (0..600).chain([1000, 4097, 65_537]) {
            check(keys(n, n as u64, u64::MAX));
        }
    }

    #[test]
    fn sorts_many_equal_keys_and_extremes() {
        for n in [300, 1000, 10_000] {
            check(keys(n, 7, 3));
            check(vec![42; n]);
            let mut v = keys(n, 9, 2);
            v.iter_mut()
                .for_each(|k| *k = if *k == 0 { 0 } else { u64::MAX });
            check(v);
        }
    }

    #[test]
    fn the_split_sort_sorts_on_every_count() {
        let n = 5 * crate::exec::TASK_ELEMENTS + 13;
        let inputs = [
            keys(n, 3, u64::MAX),
            keys(n, 4, 5),
            vec![7; n],
            (0..n as u64).rev().collect(),
            (0..n as u64)
                .map(|i| if i % 3 == 0 { 0 } else { i })
                .collect(),
        ];
        for v in inputs {
            let mut want = v.clone();
            want.sort_unstable();
            for threads in [2, 3, 16] {
                let mut got = v.clone();
                let split =
                    crate::exec::with_threads(threads, || sort_u64_split(&mut got, threads));
                if !split {
                    // No AVX-512 here: nothing was done.
                    assert_eq!(got, v);
                    continue;
                }
                assert!(got == want, "{threads} threads");
            }
        }
        let mut short = keys(1000, 1, 100);
        assert!(!sort_u64_split(&mut short, 2), "short rows are not split");
    }

    #[test]
    fn sorts_ordered_reversed_and_organ_pipe_rows() {
        let n = 5000u64;
        check((0..n).collect());
        check((0..n).rev().collect());
        check((0..n).map(|i| i.min(n - i)).collect());
        // A bad pivot every level still ends (the depth limit).
        check((0..n).map(|i| if i % 2 == 0 { i } else { n - i }).collect());
    }
}
