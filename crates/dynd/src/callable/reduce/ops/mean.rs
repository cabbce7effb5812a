//! Means and counts.

use super::*;

/// A mean's accumulator type: divides by a count.
pub(in crate::callable::reduce) trait DivCount: Copy {
    /// `self / count`.
    fn div_count(self, count: f64) -> Self;
}
impl DivCount for f64 {
    fn div_count(self, count: f64) -> f64 {
        self / count
    }
}
impl DivCount for Complex<f64> {
    fn div_count(self, count: f64) -> Complex<f64> {
        self / count
    }
}

/// A mean: the sum of `S` as `A` (`f64` or `Complex<f64>`), divided by the
/// counts afterwards.
pub(in crate::callable::reduce) struct MeanOp<S, A>(FoldOp<SumK, S, A, A>);

impl<S, A> Default for MeanOp<S, A> {
    fn default() -> Self {
        MeanOp(FoldOp::default())
    }
}

impl<S, A> ReduceOp for MeanOp<S, A>
where
    S: Pod + Cvt<A>,
    A: Pod + Cvt<A> + DivCount,
    SumK: Combine<A>,
{
    fn has_identity(&self) -> bool {
        true
    }
    unsafe fn init(
        &self,
        cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        src: *const u8,
        ss: isize,
        n: usize,
    ) -> Result<()> {
        // SAFETY: the caller's promises.
        unsafe { self.0.init(cx, dst, ds, src, ss, n) }
    }
    unsafe fn accumulate(
        &self,
        cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        src: *const u8,
        ss: isize,
        n: usize,
    ) -> Result<()> {
        // SAFETY: the caller's promises.
        unsafe { self.0.accumulate(cx, dst, ds, src, ss, n) }
    }
    unsafe fn fold(
        &self,
        cx: Ctx<'_>,
        dst: *mut u8,
        src: *const u8,
        ss: isize,
        n: usize,
        first: bool,
    ) -> Result<()> {
        // SAFETY: the caller's promises.
        unsafe { self.0.fold(cx, dst, src, ss, n, first) }
    }
    unsafe fn fill(&self, cx: Ctx<'_>, dst: *mut u8, ds: isize, n: usize) -> Result<()> {
        // SAFETY: the caller's promises.
        unsafe { self.0.fill(cx, dst, ds, n) }
    }
    unsafe fn divide(
        &self,
        dst: *mut u8,
        ds: isize,
        counts: *const u8,
        cs: isize,
        n: usize,
    ) -> Result<()> {
        for j in 0..n as isize {
            let p = dst.wrapping_offset(j * ds);
            // SAFETY: element j of dst (holding a sum) and of counts.
            unsafe {
                let c: f64 = ld(counts.wrapping_offset(j * cs));
                st(p, ld::<A>(p).div_count(c));
            }
        }
        Ok(())
    }
}

/// Counts source elements into `f64` results (for means over var dims);
/// never reads the source.
#[derive(Default)]
pub(in crate::callable::reduce) struct CountOp;

impl ReduceOp for CountOp {
    fn has_identity(&self) -> bool {
        true
    }
    unsafe fn init(
        &self,
        _cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        _src: *const u8,
        _ss: isize,
        n: usize,
    ) -> Result<()> {
        for j in 0..n as isize {
            // SAFETY: element j of dst.
            unsafe { st(dst.wrapping_offset(j * ds), 1.0f64) };
        }
        Ok(())
    }
    unsafe fn accumulate(
        &self,
        _cx: Ctx<'_>,
        dst: *mut u8,
        ds: isize,
        _src: *const u8,
        _ss: isize,
        n: usize,
    ) -> Result<()> {
        for j in 0..n as isize {
            let p = dst.wrapping_offset(j * ds);
            // SAFETY: element j of dst, holding a count.
            unsafe { st(p, ld::<f64>(p) + 1.0) };
        }
        Ok(())
    }
    unsafe fn fold(
        &self,
        _cx: Ctx<'_>,
        dst: *mut u8,
        _src: *const u8,
        _ss: isize,
        n: usize,
        first: bool,
    ) -> Result<()> {
        // SAFETY: dst is writable, and holds a count unless `first`.
        unsafe {
            let before = if first { 0.0 } else { ld::<f64>(dst) };
            st(dst, before + n as f64);
        }
        Ok(())
    }
    unsafe fn fill(&self, _cx: Ctx<'_>, dst: *mut u8, ds: isize, n: usize) -> Result<()> {
        for j in 0..n as isize {
            // SAFETY: element j of dst.
            unsafe { st(dst.wrapping_offset(j * ds), 0.0f64) };
        }
        Ok(())
    }
}
