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

/// What a [`FoldOp`] with results `D` does in [`ReduceOp::divide`].
pub(in crate::callable::reduce) trait Divide<D>: 'static {
    /// [`ReduceOp::divide`].
    ///
    /// # Safety
    /// As [`ReduceOp::divide`].
    unsafe fn divide(r: Span<'_>) -> Result<()>;
}

/// Not a mean: refuses to divide.
pub(in crate::callable::reduce) struct Keep;

impl<D> Divide<D> for Keep {
    unsafe fn divide(_: Span<'_>) -> Result<()> {
        Err(only_means())
    }
}

/// A mean: divides each sum by its count; with `OPT` (a mean over a var
/// dim, `?float64`), a count of 0 gives NA rather than NaN.
pub(in crate::callable::reduce) struct ByCount<const OPT: bool>;

impl<D: NaRaw + DivCount, const OPT: bool> Divide<D> for ByCount<OPT> {
    unsafe fn divide(r: Span<'_>) -> Result<()> {
        for j in 0..r.n {
            let p = r.dst_at(j);
            // SAFETY: element j of dst (holding a sum) and of the counts.
            unsafe {
                let c: f64 = ld(r.src_at(j));
                let v = if OPT && c == 0.0 {
                    D::NA
                } else {
                    ld::<D>(p).div_count(c)
                };
                st(p, v);
            }
        }
        Ok(())
    }
}

/// A mean: the sum of `S` as `A` (`f64` or `Complex<f64>`), divided by the
/// counts afterwards (NA for a count of 0 with `OPT`).
pub(in crate::callable::reduce) type MeanOp<S, A, const OPT: bool> =
    FoldOp<SumK, S, A, A, ByCount<OPT>>;

/// Counts source elements into `f64` results (for means over var dims);
/// never reads the source.
#[derive(Default)]
pub(in crate::callable::reduce) struct CountOp;

impl ReduceOp for CountOp {
    fn has_identity(&self) -> bool {
        true
    }
    unsafe fn init(&self, r: Span<'_>) -> Result<()> {
        // SAFETY: the caller's promises (the output elements).
        unsafe { r.set_each(1.0f64) };
        Ok(())
    }
    unsafe fn accumulate(&self, r: Span<'_>) -> Result<()> {
        for j in 0..r.n {
            let p = r.dst_at(j);
            // SAFETY: element j of dst, holding a count.
            unsafe { st(p, ld::<f64>(p) + 1.0) };
        }
        Ok(())
    }
    unsafe fn fold_nonempty(&self, r: Span<'_>, first: bool) -> Result<()> {
        // SAFETY: dst is writable, and holds a count unless `first`.
        unsafe {
            let before = if first { 0.0 } else { ld::<f64>(r.dst) };
            st(r.dst, before + r.n as f64);
        }
        Ok(())
    }
    unsafe fn fill(&self, r: Span<'_>) -> Result<()> {
        // SAFETY: the caller's promises (the output elements).
        unsafe { r.set_each(0.0f64) };
        Ok(())
    }
}
