//! Folds of runs with several accumulators, and [`FoldOp`], the
//! built-in reductions.

use super::*;
use crate::exec::{self, SPLIT_MIN, Shared};
use crate::kernels::loops::{ROW_GROUP, stream_fence, stream_store, streams};

/// Combines the lanes, pairwise.
#[inline(always)]
pub(super) fn lanes<K: Combine<A>, A: Copy>(a: [A; LANES]) -> A {
    lanes_by(a, K::combine)
}

/// Combines the lanes pairwise by `c`.
#[inline(always)]
fn lanes_by<A: Copy>(a: [A; LANES], c: impl Fn(A, A) -> A) -> A {
    c(
        c(c(a[0], a[1]), c(a[2], a[3])),
        c(c(a[4], a[5]), c(a[6], a[7])),
    )
}

/// A source value as an accumulator, and whether it is present: with
/// `SKIP`, a missing value reads as the identity (a select, not a branch,
/// so folds stay vectorised) and is not present.
#[inline(always)]
pub(super) fn load<K, S, A, M>(x: S) -> (A, bool)
where
    K: Combine<A>,
    S: NaRaw + Cvt<A>,
    M: Mode,
{
    if M::SKIP {
        let na = x.is_na();
        let v = K::lift(x);
        (if na { K::identity() } else { v }, !na)
    } else {
        (K::lift(x), true)
    }
}

/// Folds `n >= 1` elements (at most a block) `s` bytes apart from `p`:
/// element `j` of the first `n - n % LANES` into lane `j % LANES`, then the
/// combined lanes with the rest, in order. Also returns whether any element
/// was present (always, without `SKIP`).
///
/// # Safety
/// 1. `p + j * s` is a readable `S` for every `j < n`.
#[inline(always)]
pub(super) unsafe fn fold_block<K, S, A, M>(p: *const u8, s: isize, n: usize) -> (A, bool)
where
    K: Combine<A>,
    S: NaRaw + Cvt<A>,
    A: Copy,
    M: Mode,
{
    let ld1 = |j: usize| -> (A, bool) {
        // SAFETY: (1) the callers pass j < n.
        let x: S = unsafe { ld(p.wrapping_offset(j as isize * s)) };
        load::<K, S, A, M>(x)
    };
    if n < LANES {
        // No whole lane group: the lanes would all hold the identity, and
        // combine to it, so this is the same fold without their set-up
        // (short var rows are the common case).
        let mut r = K::identity();
        let mut seen = !M::SKIP;
        for j in 0..n {
            let (x, present) = ld1(j);
            r = K::combine(r, x);
            seen |= present;
        }
        return (r, seen);
    }
    let mut acc = [K::identity(); LANES];
    let mut seen = [!M::SKIP; LANES];
    let body = n - n % LANES;
    if contiguous::<S>(p, s) {
        // SAFETY: (1) with s = size_of::<S>() and alignment checked: n
        // contiguous S, and S is Pod.
        let xs = unsafe { std::slice::from_raw_parts(p.cast::<S>(), n) };
        let (chunks, tail) = xs.as_chunks::<LANES>();
        if K::NAN_CHECK {
            let mut nan = [false; LANES];
            for c in chunks {
                for l in 0..LANES {
                    let (x, present) = load::<K, S, A, M>(c[l]);
                    acc[l] = K::fast(acc[l], x);
                    nan[l] |= K::is_nan(x);
                    if M::SKIP {
                        seen[l] |= present;
                    }
                }
            }
            // Without a NaN, `fast` is `combine`: the lanes and the tail
            // combine with it too (short var rows spend much of their time
            // there), and the result is the same as `combine`'s.
            let mut r = lanes_by(acc, K::fast);
            let mut any = seen.contains(&true);
            let mut had_nan = nan.contains(&true);
            for &x in tail {
                let (x, present) = load::<K, S, A, M>(x);
                r = K::fast(r, x);
                had_nan |= K::is_nan(x);
                any |= present;
            }
            if had_nan {
                acc = [K::identity(); LANES];
                for c in chunks {
                    for l in 0..LANES {
                        acc[l] = K::combine(acc[l], load::<K, S, A, M>(c[l]).0);
                    }
                }
                r = lanes::<K, A>(acc);
                for &x in tail {
                    r = K::combine(r, load::<K, S, A, M>(x).0);
                }
            }
            return (r, any);
        }
        for c in chunks {
            for l in 0..LANES {
                let (x, present) = load::<K, S, A, M>(c[l]);
                acc[l] = K::combine(acc[l], x);
                if M::SKIP {
                    seen[l] |= present;
                }
            }
        }
        let mut r = lanes::<K, A>(acc);
        let mut any = seen.contains(&true);
        for &x in tail {
            let (x, present) = load::<K, S, A, M>(x);
            r = K::combine(r, x);
            any |= present;
        }
        return (r, any);
    }
    let mut j = 0;
    while j < body {
        for (l, a) in acc.iter_mut().enumerate() {
            let (x, present) = ld1(j + l);
            *a = K::combine(*a, x);
            if M::SKIP {
                seen[l] |= present;
            }
        }
        j += LANES;
    }
    let mut r = lanes::<K, A>(acc);
    let mut any = seen.contains(&true);
    for j in body..n {
        let (x, present) = ld1(j);
        r = K::combine(r, x);
        any |= present;
    }
    (r, any)
}

/// Rows shorter than this, with their elements contiguous, are folded by
/// code compiled for their exact length ([`fold_short`]).
const SHORT_ROW: usize = 3 * LANES;

/// [`fold_block`] of exactly `N` contiguous elements: with the length a
/// constant, the lane loop and the tail unroll into straight-line code.
///
/// # Safety
/// 1. `p` holds `N >= 1` readable `S`, contiguous.
#[inline(always)]
unsafe fn fold_exact<K, S, A, M, const N: usize>(p: *const u8) -> (A, bool)
where
    K: Combine<A>,
    S: NaRaw + Cvt<A>,
    A: Copy,
    M: Mode,
{
    // SAFETY: (1).
    unsafe { fold_block::<K, S, A, M>(p, size_of::<S>() as isize, N) }
}

/// [`fold_block`] of `1 <= n < SHORT_ROW` contiguous elements, by a jump
/// to the code for its length: the same operations in the same order, so
/// the same bits, without a loop's branches for each row.
///
/// # Safety
/// 1. `p` holds `n` readable `S`, contiguous, and `1 <= n`.
#[inline(always)]
unsafe fn fold_short<K, S, A, M>(p: *const u8, n: usize) -> (A, bool)
where
    K: Combine<A>,
    S: NaRaw + Cvt<A>,
    A: Copy,
    M: Mode,
{
    macro_rules! by_len {
        ($($len:literal)*) => {
            match n {
                // SAFETY: (1) n == $len elements.
                $($len => unsafe { fold_exact::<K, S, A, M, $len>(p) },)*
                // SAFETY: (1).
                _ => unsafe { fold_block::<K, S, A, M>(p, size_of::<S>() as isize, n) },
            }
        };
    }
    by_len!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23)
}

/// Folds a run of `n >= 1` elements: block by block, the block results
/// combined in order — on the executor's threads for long runs, with the same
/// blocks and so the same result.
///
/// # Safety
/// 1. `p + j * s` is a readable `S` for every `j < n`.
pub(super) unsafe fn fold_run<K, S, A, M>(p: *const u8, s: isize, n: usize) -> (A, bool)
where
    K: Combine<A>,
    S: NaRaw + Cvt<A>,
    A: Copy + Send,
    M: Mode,
{
    let blocks = n.div_ceil(BLOCK);
    // The source outlives the split and is only read.
    let base = Shared(p);
    let block = move |b: usize| -> (A, bool) {
        let lo = b * BLOCK;
        // SAFETY: (1) elements lo..lo+len of the run.
        unsafe {
            fold_block::<K, S, A, M>(
                base.get().wrapping_offset(lo as isize * s),
                s,
                BLOCK.min(n - lo),
            )
        }
    };
    if n >= SPLIT_MIN && exec::num_threads() > 1 {
        // The same blocks, folded on the executor's threads, combined in
        // order: the same bits as the serial fold.
        if let Ok(parts) = exec::map_tasks(blocks, |b| Ok(block(b))) {
            let mut it = parts.into_iter();
            let first = it.next().unwrap_or((K::identity(), false));
            return it.fold(first, both::<K, A>);
        }
    }
    (1..blocks).fold(block(0), |r, b| both::<K, A>(r, block(b)))
}

/// Two block results combined: the values, and whether either saw one.
#[inline(always)]
fn both<K: Combine<A>, A>(a: (A, bool), b: (A, bool)) -> (A, bool) {
    (K::combine(a.0, b.0), a.1 | b.1)
}

/// A built-in reduction: source `S`, accumulator `A`, result `D`, under
/// the operation `K`; `V` says whether it divides by counts (a mean), `M`
/// how it treats missing values.
pub(in crate::callable::reduce) struct FoldOp<K, S, A, D, V = Keep, M = Plain>(
    PhantomData<Types<K, S, A, D, V, M>>,
);

/// The type parameters of a [`FoldOp`] (a function pointer: `Send`,
/// `Sync` and covariant whatever they are).
pub(super) type Types<K, S, A, D, V, M> = fn() -> (K, S, A, D, V, M);

impl<K, S, A, D, V, M> Default for FoldOp<K, S, A, D, V, M> {
    fn default() -> Self {
        FoldOp(PhantomData)
    }
}

/// `dst[j] = f(dst[j], src[j])` for every `j < r.n` (a slice loop when
/// both are contiguous and apart); `dst[j]` is read only when `READ`, and
/// `f` gets zeroes in its place otherwise.
///
/// # Safety
/// 1. The op's contract for `r`, with sources of `S` and results of `D`.
/// 2. Every `dst[j]` holds a `D` when `READ`.
#[inline(always)]
unsafe fn zip_run<D: Pod, S: Pod, const READ: bool>(r: Span<'_>, f: impl Fn(D, S) -> D) {
    let Span {
        dst,
        ds,
        src,
        ss,
        n,
        ..
    } = r;
    if n == 0 {
        // Nothing to touch (and an empty array's data may be null).
        return;
    }
    let old = |d: &D| if READ { *d } else { D::zeroed() };
    if plan::<D, S>(dst, ds, src, ss, n) == Plan::Contiguous {
        // SAFETY: (1) n contiguous, aligned elements each, not overlapping
        // (checked), of Pod types.
        let (d, s) = unsafe {
            (
                std::slice::from_raw_parts_mut(dst.cast::<D>(), n),
                std::slice::from_raw_parts(src.cast::<S>(), n),
            )
        };
        for (d, &s) in d.iter_mut().zip(s) {
            *d = f(old(d), s);
        }
        return;
    }
    for j in 0..n {
        let (dp, sp) = (r.dst_at(j), r.src_at(j));
        // SAFETY: (1) element j of each range; (2) dst holds a result when
        // it is read.
        unsafe {
            let d: D = if READ { ld(dp) } else { D::zeroed() };
            st(dp, f(d, ld(sp)));
        }
    }
}

impl<K, S, A, D, V, M> FoldOp<K, S, A, D, V, M>
where
    K: Combine<A>,
    D: NaRaw + Cvt<A>,
    A: Copy + Cvt<D>,
    M: Mode,
{
    /// Stores a folded value `r` into the output element `dst`, combined
    /// with the value there unless `first` (or, with an optional result,
    /// unless it is NA: nothing yet). `seen`: `r` folded a present value;
    /// if not, a first store writes the empty value (NA, or the identity)
    /// and a later one leaves `dst` alone.
    ///
    /// # Safety
    /// 1. `dst` is writable for a `D`, and holds one unless `first`.
    #[inline(always)]
    unsafe fn store(dst: *mut u8, r: A, seen: bool, first: bool) {
        if M::SKIP && !seen {
            if first {
                // SAFETY: (1) dst is writable.
                unsafe { st::<D>(dst, Self::empty()) };
            }
            return;
        }
        let r = if first {
            r
        } else {
            // SAFETY: (1) dst holds a result value.
            let d: D = unsafe { ld(dst) };
            if M::OPT && d.is_na() {
                r
            } else {
                K::combine(d.cvt(), r)
            }
        };
        // SAFETY: (1) dst is writable.
        unsafe { st::<D>(dst, r.cvt()) };
    }

    /// [`ReduceOp::fold_rows`]'s loop: one pass, each row folded straight
    /// into its output, with the same lanes and blocks as `fold` (so the
    /// same bits). Rows packed in order in one block make this one forward
    /// sweep over the values. Returns the values read.
    ///
    /// - Without missing values, the folds are cheap enough per element
    ///   that the loop waits on memory: it reads each group of
    ///   [`ROW_GROUP`] row descriptors ahead ([`Rows::touch`]), and folds
    ///   rows shorter than [`SHORT_ROW`] with code for their exact length
    ///   ([`fold_short`]). Either alone gained little; together they took
    ///   the bench's ragged sum from 4.2 to 2.8-3.1 ms (docs/performance.md,
    ///   "Ragged folds: descriptors by the group, short rows by length").
    ///   With missing values the per-element selects dominate and both
    ///   made the loop slower (5.4 to 5.9 ms), so it runs as before.
    /// - With `STREAM` (first results into a large contiguous output, see
    ///   [`streams`]) the results bypass the cache. (As a run-time flag it
    ///   made the `?float64` sum 4% slower.)
    ///
    /// # Safety
    /// 1. As [`ReduceOp::fold_rows`].
    /// 2. With `STREAM`: `first`, and [`streams`] said yes for the output.
    #[inline(always)]
    unsafe fn rows<const STREAM: bool>(out: Span<'_>, rows: Rows, first: bool) -> usize
    where
        S: NaRaw + Cvt<A>,
        A: Send,
    {
        let s = rows.elem_stride;
        let packed = s == size_of::<S>() as isize;
        let mut total = 0usize;
        for j in 0..rows.n {
            if !M::SKIP && j % ROW_GROUP == 0 {
                // SAFETY: the method's contract: every row descriptor of
                // `rows` is readable, and j < hi <= rows.n.
                unsafe { rows.touch(j, (j + ROW_GROUP).min(rows.n)) };
            }
            // SAFETY: the method's contract: j < rows.n, and every row
            // descriptor of `rows` is readable.
            let (p, n) = unsafe { rows.row(j) };
            let dst = out.dst_at(j);
            let (r, seen) = if n == 0 {
                (K::identity(), !M::SKIP)
            } else if !M::SKIP && packed && n < SHORT_ROW {
                // SAFETY: the method's contract: the row descriptor
                // addresses its n readable elements, contiguous (`packed`).
                unsafe { fold_short::<K, S, A, M>(p, n) }
            } else if n <= BLOCK {
                // SAFETY: the method's contract: the row descriptor
                // addresses its n readable elements, s bytes apart.
                unsafe { fold_block::<K, S, A, M>(p, s, n) }
            } else {
                // SAFETY: the method's contract: the row descriptor
                // addresses its n readable elements, s bytes apart.
                unsafe { fold_run::<K, S, A, M>(p, s, n) }
            };
            if STREAM {
                // SAFETY: (2) dst[j] is an aligned element of a run that
                // `streams` accepted.
                unsafe { stream_store::<D>(dst, Self::first_result(r, seen, n)) };
            } else if n == 0 {
                if first {
                    // SAFETY: the method's contract: dst[j] is writable.
                    unsafe { st::<D>(dst, Self::empty()) };
                }
            } else {
                // SAFETY: the method's contract: dst[j] is writable, and
                // holds a result unless `first`.
                unsafe { Self::store(dst, r, seen, first) };
            }
            total += n;
        }
        if STREAM {
            stream_fence();
        }
        total
    }

    /// A first store's value for a row of `n` values folded to `r`
    /// (`seen`: one of them was present): what [`Self::store`] writes
    /// when `first`.
    #[inline(always)]
    fn first_result(r: A, seen: bool, n: usize) -> D {
        if n == 0 || (M::SKIP && !seen) {
            Self::empty()
        } else {
            r.cvt()
        }
    }

    /// [`Self::rows`], streaming its results when [`streams`] allows.
    ///
    /// # Safety
    /// As [`ReduceOp::fold_rows`].
    #[inline(always)]
    unsafe fn rows_any(out: Span<'_>, rows: Rows, first: bool) -> usize
    where
        S: NaRaw + Cvt<A>,
        A: Send,
    {
        if first && streams::<D>(out.dst, out.ds, rows.n) {
            // SAFETY: the method's contract; `first`, and `streams` said yes.
            unsafe { Self::rows::<true>(out, rows, first) }
        } else {
            // SAFETY: the method's contract.
            unsafe { Self::rows::<false>(out, rows, first) }
        }
    }

    /// [`Self::rows_any`] compiled for AVX2 (picked at run time, as the
    /// arithmetic loops are): wider loads, compares and blends for the
    /// lanes of each row, and for short rows fewer instructions each.
    /// Nothing contracts into FMA, so the bits are those of the baseline
    /// build.
    ///
    /// # Safety
    /// 1. The CPU supports AVX2.
    /// 2. As [`ReduceOp::fold_rows`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn rows_avx2(out: Span<'_>, rows: Rows, first: bool) -> usize
    where
        S: NaRaw + Cvt<A>,
        A: Send,
    {
        // SAFETY: (2).
        unsafe { Self::rows_any(out, rows, first) }
    }

    /// What an output element that got no value holds.
    #[inline(always)]
    fn empty() -> D {
        if M::OPT { D::NA } else { K::identity().cvt() }
    }
}

impl<K, S, A, D, V, M> ReduceOp for FoldOp<K, S, A, D, V, M>
where
    K: Combine<A>,
    S: NaRaw + Cvt<A>,
    D: NaRaw + Cvt<A>,
    A: Copy + Send + Sync + 'static + Cvt<D>,
    V: Divide<D>,
    M: Mode,
{
    fn has_identity(&self) -> bool {
        // An optional result has one: NA.
        K::HAS_IDENTITY || M::OPT
    }

    unsafe fn init(&self, r: Span<'_>) -> Result<()> {
        // SAFETY: the caller's promises (the op's contract).
        unsafe {
            zip_run::<D, S, false>(r, |_, x| {
                let (a, present) = load::<K, S, A, M>(x);
                if M::SKIP && M::OPT && !present {
                    D::NA
                } else {
                    // From the identity, as a fold is: a float sum of -0.0
                    // alone is 0.0 (NumPy's too), not the -0.0 copied.
                    K::combine(K::identity(), a).cvt()
                }
            })
        };
        Ok(())
    }

    unsafe fn accumulate(&self, r: Span<'_>) -> Result<()> {
        // SAFETY: the caller's promises (the op's contract; every dst[j]
        // holds a result).
        unsafe {
            zip_run::<D, S, true>(r, |d, x| {
                let (v, present) = load::<K, S, A, M>(x);
                if M::OPT && d.is_na() {
                    if present { v.cvt() } else { d }
                } else {
                    let a: A = d.cvt();
                    K::combine(a, v).cvt()
                }
            })
        };
        Ok(())
    }

    unsafe fn fold_nonempty(&self, r: Span<'_>, first: bool) -> Result<()> {
        // SAFETY: (1) the run's n >= 1 elements.
        let (v, seen) = unsafe { fold_run::<K, S, A, M>(r.src, r.ss, r.n) };
        // SAFETY: (1) dst is writable, and holds a result unless `first`.
        unsafe { Self::store(r.dst, v, seen, first) };
        Ok(())
    }

    unsafe fn fold_rows(&self, out: Span<'_>, rows: Rows, first: bool) -> Result<Option<usize>> {
        if !self.has_identity() {
            // An empty row is an error the walk words.
            return Ok(None);
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (the AVX2 build's only requirement);
            // the method's contract is passed on.
            return Ok(Some(unsafe { Self::rows_avx2(out, rows, first) }));
        }
        // SAFETY: the method's contract.
        Ok(Some(unsafe { Self::rows_any(out, rows, first) }))
    }

    unsafe fn fill(&self, r: Span<'_>) -> Result<()> {
        if !self.has_identity() {
            return Err(no_identity());
        }
        let v: D = Self::empty();
        // SAFETY: (1) the output elements.
        unsafe { r.set_each(v) };
        Ok(())
    }

    unsafe fn divide(&self, r: Span<'_>) -> Result<()> {
        // SAFETY: the caller's promises.
        unsafe { V::divide(r) }
    }
}
