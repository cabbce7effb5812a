//! Reductions that carry more than their result while they run: the mean
//! of an option (a sum and a count), var and std (count, mean and the sum
//! of squared deviations), argmin and argmax (the best value, its
//! position, the next position).
//!
//! The walk gives such an op one state per output element: where the
//! reduced dims all lie inside the kept ones, it resets the walk's one
//! state where they start, the folds update it, and `finish` writes the
//! result; otherwise [`Staged`] keeps every output element's state in a
//! tree shaped like the output until the walk ends. Each run is folded on its own and merged into the state, so a
//! variance is computed run by run with two passes (mean, then squared
//! deviations) and merged with Chan's formula: as accurate as two passes
//! over all values.

use super::fold::{fold_run, load};
use super::*;
use crate::exec::{self, SPLIT_MIN, Shared};

/// The most bytes of state an op may carry (the walk's state buffer).
pub(in crate::callable::reduce) const STATE_MAX: usize = 64;

/// A state buffer for one walk (one thread).
#[repr(C, align(16))]
pub(in crate::callable::reduce) struct StateBuf(pub [u8; STATE_MAX]);

impl StateBuf {
    /// A zeroed buffer.
    pub fn new() -> StateBuf {
        StateBuf([0; STATE_MAX])
    }
}

/// The state of one stateful reduction.
pub(in crate::callable::reduce) trait Acc:
    Copy + Send + Sync + 'static
{
    /// The raw result.
    type D: NaRaw;
    /// The state of an empty extent.
    fn new() -> Self;
    /// Folds `n` source elements `s` bytes apart from `p` (they follow the
    /// ones folded before, in C order), skipping missing ones under `M`.
    ///
    /// # Safety
    /// 1. `p + j * s` is a readable source element for every `j < n`.
    unsafe fn fold<M: Mode>(&mut self, p: *const u8, s: isize, n: usize);
    /// The values folded next start at position `pos` of the reduced extent
    /// (argmin and argmax count positions; the others ignore them).
    fn seek(&mut self, pos: i64) {
        let _ = pos;
    }
    /// The result, `None` when no value was folded.
    fn result(&self) -> Option<Self::D>;
    /// The result of an empty extent when the result is not optional
    /// (`None`: there is none; the walk reports the empty extent).
    fn empty() -> Option<Self::D>;
}

/// A stateful reduction over `T`, treating missing values by `M`.
pub(in crate::callable::reduce) struct StateOp<T, M>(PhantomData<fn() -> (T, M)>);

impl<T, M> Default for StateOp<T, M> {
    fn default() -> Self {
        StateOp(PhantomData)
    }
}

impl<T: Acc, M: Mode> StateOp<T, M> {
    /// The state at `p`.
    ///
    /// # Safety
    /// 1. `p` holds a `T` (written by `reset` or a fold).
    unsafe fn get(p: *mut u8) -> T {
        // SAFETY: (1).
        unsafe { ld(p) }
    }

    /// The result of `t` as stored: NA when it has none and the result is
    /// optional.
    fn value(t: &T) -> Result<T::D> {
        match t.result() {
            Some(v) => Ok(v),
            None if M::OPT => Ok(T::D::NA),
            None => T::empty().ok_or_else(no_identity),
        }
    }
}

impl<T: Acc, M: Mode> ReduceOp for StateOp<T, M> {
    fn has_identity(&self) -> bool {
        M::OPT || T::empty().is_some()
    }

    fn state_size(&self) -> usize {
        size_of::<T>()
    }

    unsafe fn reset(&self, state: *mut u8) {
        // SAFETY: the caller's promise: the state buffer holds a T.
        unsafe { st(state, T::new()) };
    }

    unsafe fn finish(&self, dst: *mut u8, state: *mut u8) -> Result<()> {
        // SAFETY: the caller's promises: the state holds a T, dst is a
        // writable result.
        unsafe { st(dst, Self::value(&Self::get(state))?) };
        Ok(())
    }

    unsafe fn init(&self, r: Span<'_>) -> Result<()> {
        // Nothing reduced: each result is that of its one value.
        for j in 0..r.n {
            let mut t = T::new();
            // SAFETY: the op's contract: element j of each.
            unsafe {
                t.fold::<M>(r.src_at(j), 0, 1);
                st(r.dst_at(j), Self::value(&t)?);
            }
        }
        Ok(())
    }

    unsafe fn accumulate(&self, _: Span<'_>) -> Result<()> {
        Err(Error::invalid_argument(
            "a stateful reduction reduces its dims inside the kept ones",
        ))
    }

    unsafe fn fold_nonempty(&self, r: Span<'_>, _first: bool) -> Result<()> {
        // SAFETY: the op's contract: the state is reset where the walk
        // enters the reduced dims, and the run's elements are readable.
        unsafe {
            let mut t = Self::get(r.state);
            t.fold::<M>(r.src, r.ss, r.n);
            st(r.state, t);
        }
        Ok(())
    }

    unsafe fn fold_rows(&self, out: Span<'_>, rows: Rows, _first: bool) -> Result<Option<usize>> {
        if !self.has_identity() {
            return Ok(None);
        }
        let mut total = 0usize;
        for j in 0..rows.n {
            // SAFETY: the method's contract: the row descriptors are
            // readable and address their elements; dst[j] is writable.
            let n = unsafe {
                let (p, n) = rows.row(j);
                let mut t = T::new();
                t.fold::<M>(p, rows.elem_stride, n);
                st(out.dst_at(j), Self::value(&t)?);
                n
            };
            total += n;
        }
        Ok(Some(total))
    }

    unsafe fn fill(&self, _: Span<'_>) -> Result<()> {
        // The state of an empty extent is the reset one; `finish` writes it.
        if self.has_identity() {
            Ok(())
        } else {
            Err(no_identity())
        }
    }

    unsafe fn fold_state(
        &self,
        state: *mut u8,
        src: *const u8,
        ss: isize,
        n: usize,
        pos: Option<i64>,
    ) -> Result<()> {
        // SAFETY: the method's contract: the state holds a T, and the n
        // source elements are readable.
        unsafe {
            let mut t = Self::get(state);
            if let Some(p) = pos {
                t.seek(p);
            }
            t.fold::<M>(src, ss, n);
            st(state, t);
        }
        Ok(())
    }
}

/// A stateful op whose outputs are its states: one per output element,
/// kept in a side tree shaped like the output while the walk runs, for
/// plans where a reduced dim lies outside a kept one (the walk then meets
/// each output element once per row of that dim, so one state at a time
/// does not do). Every output element is first reset (`init`, `fold` with
/// `first`, `fill`), then folded into; the inner op's `finish` turns the
/// states into results afterwards. The span's `pos` places the values in
/// the reduced extent.
pub(in crate::callable::reduce) struct Staged {
    inner: Box<dyn ReduceOp>,
}

impl Staged {
    /// Stages the stateful op `inner`.
    pub fn new(inner: Box<dyn ReduceOp>) -> Staged {
        Staged { inner }
    }
}

impl ReduceOp for Staged {
    fn has_identity(&self) -> bool {
        self.inner.has_identity()
    }

    fn state_size(&self) -> usize {
        self.inner.state_size()
    }

    unsafe fn finish(&self, dst: *mut u8, state: *mut u8) -> Result<()> {
        // SAFETY: the caller's promises.
        unsafe { self.inner.finish(dst, state) }
    }

    unsafe fn init(&self, r: Span<'_>) -> Result<()> {
        for j in 0..r.n {
            // SAFETY: the op's contract: dst[j] is a state, src[j] a source
            // element.
            unsafe {
                self.inner.reset(r.dst_at(j));
                self.inner
                    .fold_state(r.dst_at(j), r.src_at(j), 0, 1, r.pos)?;
            }
        }
        Ok(())
    }

    unsafe fn accumulate(&self, r: Span<'_>) -> Result<()> {
        for j in 0..r.n {
            // SAFETY: the op's contract: dst[j] is a state (reset before),
            // src[j] a source element.
            unsafe { self.inner.fold_state(r.dst_at(j), r.src_at(j), 0, 1, r.pos) }?;
        }
        Ok(())
    }

    unsafe fn fold_nonempty(&self, r: Span<'_>, first: bool) -> Result<()> {
        // SAFETY: the op's contract: dst is one state (reset before unless
        // `first`), the run's n elements are readable.
        unsafe {
            if first {
                self.inner.reset(r.dst);
            }
            self.inner.fold_state(r.dst, r.src, r.ss, r.n, r.pos)
        }
    }

    unsafe fn fill(&self, r: Span<'_>) -> Result<()> {
        if !self.has_identity() {
            return Err(no_identity());
        }
        for j in 0..r.n {
            // SAFETY: the op's contract: dst[j] is a state.
            unsafe { self.inner.reset(r.dst_at(j)) };
        }
        Ok(())
    }
}

/// `f(b)` for each block `b` of [`BLOCK`] elements of a run of `n`, in
/// block order: on the executor's threads when the run is long enough to
/// split (the blocks are the same either way).
fn in_blocks<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let blocks = n.div_ceil(BLOCK);
    if n >= SPLIT_MIN
        && exec::num_threads() > 1
        && let Ok(v) = exec::map_tasks(blocks, |b| Ok(f(b)))
    {
        return v;
    }
    (0..blocks).map(f).collect()
}

/// A mean skipping missing values: a sum and a count.
pub(in crate::callable::reduce) struct MeanAcc<S, A> {
    sum: A,
    count: i64,
    _s: PhantomData<fn() -> S>,
}

impl<S, A> Acc for MeanAcc<S, A>
where
    S: NaRaw + Cvt<A> + Cvt<i64>,
    A: NaRaw + DivCount + Send + Sync + 'static,
    SumK: Combine<A>,
{
    type D = A;
    fn new() -> Self {
        MeanAcc {
            sum: <SumK as Combine<A>>::identity(),
            count: 0,
            _s: PhantomData,
        }
    }
    unsafe fn fold<M: Mode>(&mut self, p: *const u8, s: isize, n: usize) {
        // SAFETY: (1) n readable elements.
        let Some((sum, count)) = (unsafe { sum_and_count::<S, A, M>(p, s, n) }) else {
            return;
        };
        self.sum = <SumK as Combine<A>>::combine(self.sum, sum);
        self.count += count;
    }
    fn result(&self) -> Option<A> {
        (self.count > 0).then(|| self.sum.div_count(self.count as f64))
    }
    fn empty() -> Option<A> {
        // NumPy's mean of nothing: 0/0.
        Some(self_nan::<A>())
    }
}

/// The sum (as `A`) and the count of the present values of a run of `n`
/// elements, as mean and variance fold them; `None` for an empty run.
///
/// # Safety
/// 1. `p + j * s` is a readable `S` for every `j < n`.
unsafe fn sum_and_count<S, A, M>(p: *const u8, s: isize, n: usize) -> Option<(A, i64)>
where
    S: NaRaw + Cvt<A> + Cvt<i64>,
    A: Copy + Send,
    M: Mode,
    SumK: Combine<A>,
{
    if n == 0 {
        return None;
    }
    // SAFETY: (1), and n >= 1.
    let (sum, _) = unsafe { fold_run::<SumK, S, A, M>(p, s, n) };
    // SAFETY: (1), and n >= 1.
    let (count, _) = unsafe { fold_run::<CountK, S, i64, M>(p, s, n) };
    Some((sum, count))
}

/// 0/0 of a mean's accumulator.
fn self_nan<A: DivCount>() -> A
where
    SumK: Combine<A>,
{
    <SumK as Combine<A>>::identity().div_count(0.0)
}

/// Population variance (`STD`: its square root), as float64.
pub(in crate::callable::reduce) struct VarAcc<S, const STD: bool> {
    count: f64,
    mean: f64,
    m2: f64,
    _s: PhantomData<fn() -> S>,
}

impl<S, const STD: bool> Acc for VarAcc<S, STD>
where
    S: NaRaw + Cvt<f64> + Cvt<i64>,
{
    type D = f64;
    fn new() -> Self {
        VarAcc {
            count: 0.0,
            mean: 0.0,
            m2: 0.0,
            _s: PhantomData,
        }
    }
    unsafe fn fold<M: Mode>(&mut self, p: *const u8, s: isize, n: usize) {
        // SAFETY: (1) n readable elements.
        let Some((sum, count)) = (unsafe { sum_and_count::<S, f64, M>(p, s, n) }) else {
            return;
        };
        if count == 0 {
            return;
        }
        let c = count as f64;
        let mean = sum / c;
        // The squared deviations block by block (BLOCK elements each, a
        // plain sum within a block), the blocks' sums added in order: the
        // same bits on any number of threads.
        let base = Shared(p);
        let deviations = move |b: usize| -> f64 {
            let mut m2 = 0.0;
            for j in b * BLOCK..((b + 1) * BLOCK).min(n) {
                // SAFETY: (1) j < n.
                let x: S = unsafe { ld(base.get().wrapping_offset(j as isize * s)) };
                let (v, present) = load::<SumK, S, f64, M>(x);
                let d = if present { v - mean } else { 0.0 };
                m2 += d * d;
            }
            m2
        };
        let m2: f64 = in_blocks(n, deviations).into_iter().sum();
        // Chan et al.: merge (count, mean, m2) of two parts.
        let total = self.count + c;
        let delta = mean - self.mean;
        self.mean += delta * c / total;
        self.m2 += m2 + delta * delta * self.count * c / total;
        self.count = total;
    }
    fn result(&self) -> Option<f64> {
        (self.count > 0.0).then(|| {
            let v = self.m2 / self.count;
            if STD { v.sqrt() } else { v }
        })
    }
    fn empty() -> Option<f64> {
        Some(f64::NAN)
    }
}

/// A strict order for argmin (`MinK`) and argmax (`MaxK`): `x` is better
/// than `best`. NaN is better than any number (NumPy gives the first NaN).
pub(in crate::callable::reduce) trait Better<A> {
    /// `x` beats `best`.
    fn better(x: A, best: A) -> bool;
}

macro_rules! better_float {
    ($($t:ty),*) => {$(
        impl Better<$t> for MaxK {
            #[inline(always)]
            fn better(x: $t, best: $t) -> bool {
                x > best || (x.is_nan() && !best.is_nan())
            }
        }
        impl Better<$t> for MinK {
            #[inline(always)]
            fn better(x: $t, best: $t) -> bool {
                x < best || (x.is_nan() && !best.is_nan())
            }
        }
    )*};
}
better_float!(f32, f64);

macro_rules! better_ord {
    ($($t:ty),*) => {$(
        impl Better<$t> for MaxK {
            #[inline(always)]
            fn better(x: $t, best: $t) -> bool {
                x > best
            }
        }
        impl Better<$t> for MinK {
            #[inline(always)]
            fn better(x: $t, best: $t) -> bool {
                x < best
            }
        }
    )*};
}
better_ord!(bool, i8, i16, i32, i64, i128, u8, u16, u32, u64, u128);

/// argmin (`K` = `MinK`) or argmax (`MaxK`) of `S` compared as `A`: the
/// position of the first best present value among the values folded
/// (missing ones take their positions too).
pub(in crate::callable::reduce) struct ArgAcc<K, S, A> {
    best: A,
    at: i64,
    next: i64,
    _k: PhantomData<fn() -> (K, S)>,
}

impl<K, S, A> Acc for ArgAcc<K, S, A>
where
    K: Better<A> + Combine<A>,
    S: NaRaw + Cvt<A>,
    A: Copy + Send + Sync + 'static,
{
    type D = i64;
    fn new() -> Self {
        ArgAcc {
            best: K::identity(),
            at: -1,
            next: 0,
            _k: PhantomData,
        }
    }
    unsafe fn fold<M: Mode>(&mut self, p: *const u8, s: isize, n: usize) {
        // Each block's first best, then the blocks in order: a later block
        // wins only with a strictly better value, as a later element does.
        let base = Shared(p);
        let block = move |b: usize| -> Self {
            let mut best = Self::new();
            let (lo, hi) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
            for j in lo..hi {
                // SAFETY: (1) j < n.
                let x: S = unsafe { ld(base.get().wrapping_offset(j as isize * s)) };
                if M::SKIP && x.is_na() {
                    continue;
                }
                let v: A = x.cvt();
                if best.at < 0 || K::better(v, best.best) {
                    best.best = v;
                    best.at = j as i64;
                }
            }
            best
        };
        for b in in_blocks(n, block) {
            if b.at >= 0 && (self.at < 0 || K::better(b.best, self.best)) {
                self.best = b.best;
                self.at = self.next + b.at;
            }
        }
        self.next += n as i64;
    }
    fn seek(&mut self, pos: i64) {
        self.next = pos;
    }
    fn result(&self) -> Option<i64> {
        (self.at >= 0).then_some(self.at)
    }
    fn empty() -> Option<i64> {
        None
    }
}

impl<S, A: Copy> Clone for MeanAcc<S, A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S, A: Copy> Copy for MeanAcc<S, A> {}

impl<S, const STD: bool> Clone for VarAcc<S, STD> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S, const STD: bool> Copy for VarAcc<S, STD> {}

impl<K, S, A: Copy> Clone for ArgAcc<K, S, A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K, S, A: Copy> Copy for ArgAcc<K, S, A> {}
