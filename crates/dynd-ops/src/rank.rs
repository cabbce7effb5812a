//! Shapes and ranks at the type level.
//!
//! An operator's shape is `[usize; N]`: its rank `N` is part of its type, so
//! rank errors (a 2-d index into a 3-d operator, collapsing more dims than an
//! operator has, reducing over more axes than it has) fail to compile.
//! Functions whose output rank differs from their input's look the output
//! shape up in the small tables below ([`DropDims`], [`AddDim`]), written out
//! for ranks up to [`MAX_RANK`].

use dynd::{Error, Result};
use std::fmt::Debug;
use std::ops::{Index, IndexMut};

/// The highest rank the type-level tables cover (rank-changing operators
/// accept inputs up to this rank; rank-keeping ones accept any).
pub const MAX_RANK: usize = 8;

/// The shape of an operator: `[usize; N]` for rank `N`. The same type is used
/// for indices.
pub trait Shape:
    Copy
    + Send
    + Sync
    + Debug
    + Eq
    + 'static
    + AsRef<[usize]>
    + AsMut<[usize]>
    + Index<usize, Output = usize>
    + IndexMut<usize>
{
    /// The rank (number of dims).
    const RANK: usize;
    /// Signed per-dim values of the same rank (strides, slice bounds).
    type Strides: Copy
        + Send
        + Sync
        + Debug
        + Eq
        + 'static
        + AsRef<[isize]>
        + AsMut<[isize]>
        + Index<usize, Output = isize>
        + IndexMut<usize>;

    /// Every entry `v`.
    fn filled(v: usize) -> Self;
    /// Every entry `v`, signed.
    fn filled_strides(v: isize) -> Self::Strides;
    /// The all-zero index.
    fn zeros() -> Self {
        Self::filled(0)
    }
}

impl<const N: usize> Shape for [usize; N] {
    const RANK: usize = N;
    type Strides = [isize; N];
    fn filled(v: usize) -> Self {
        [v; N]
    }
    fn filled_strides(v: isize) -> Self::Strides {
        [v; N]
    }
}

/// Number of elements of a shape (1 for rank 0). Saturates on overflow (such
/// a shape cannot be allocated; [`checked_numel`] reports it).
pub fn numel<S: Shape>(s: &S) -> usize {
    s.as_ref().iter().fold(1usize, |a, &b| a.saturating_mul(b))
}

/// Number of elements, or an `Alloc` error naming the shape on overflow.
pub fn checked_numel<S: Shape>(s: &S) -> Result<usize> {
    s.as_ref()
        .iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b))
        .ok_or_else(|| Error::alloc(format!("shape {s:?} has more elements than fit in memory")))
}

/// C-order (row-major) element strides of a contiguous block of shape `s`.
pub fn c_strides<S: Shape>(s: &S) -> S::Strides {
    let mut st = S::filled_strides(0);
    let mut acc: isize = 1;
    for d in (0..S::RANK).rev() {
        st[d] = acc;
        acc = acc.saturating_mul(s[d] as isize);
    }
    st
}

/// The flat C-order position of `idx` in shape `s`.
pub fn ravel<S: Shape>(idx: &S, s: &S) -> usize {
    let mut flat = 0usize;
    for d in 0..S::RANK {
        flat = flat * s[d] + idx[d];
    }
    flat
}

/// The index at flat C-order position `flat` in shape `s`.
pub fn unravel<S: Shape>(mut flat: usize, s: &S) -> S {
    let mut idx = S::zeros();
    for d in (0..S::RANK).rev() {
        let n = s[d].max(1);
        idx[d] = flat % n;
        flat /= n;
    }
    idx
}

/// Advances `idx` to the next row: the odometer over every dim but the last
/// (whose entry is left alone). Returns `false` after the last row.
pub fn next_row<S: Shape>(idx: &mut S, s: &S) -> bool {
    if S::RANK < 2 {
        return false;
    }
    for d in (0..S::RANK - 1).rev() {
        idx[d] += 1;
        if idx[d] < s[d] {
            return true;
        }
        idx[d] = 0;
    }
    false
}

/// The index whose entry `d` is `f(d)`.
#[inline(always)]
pub(crate) fn index_from<S: Shape>(f: impl Fn(usize) -> usize) -> S {
    let mut i = S::zeros();
    for d in 0..S::RANK {
        i[d] = f(d);
    }
    i
}

/// Calls `f(idx, offset, len)` for the runs that `n` consecutive
/// positions of the flattened dims `lo..hi` of `sizes` make, starting at
/// `start`: each run lies along dim `hi - 1`, and past the last position
/// the walk wraps around to the first. Dims outside `lo..hi` stay.
#[inline]
pub(crate) fn for_runs<S: Shape>(
    start: S,
    sizes: &S,
    lo: usize,
    hi: usize,
    n: usize,
    mut f: impl FnMut(S, usize, usize),
) {
    let last = hi - 1;
    let mut idx = start;
    let mut done = 0;
    while done < n {
        let k = (sizes[last] - idx[last]).min(n - done);
        f(idx, done, k);
        done += k;
        if done == n {
            break;
        }
        idx[last] = 0;
        let mut d = last;
        while d > lo {
            d -= 1;
            idx[d] += 1;
            if idx[d] < sizes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Unravels `flat` over dims `lo..hi` of `sizes` into `idx` (C order).
#[inline]
pub(crate) fn unravel_into<S: Shape>(
    idx: &mut S,
    mut flat: usize,
    sizes: &S,
    lo: usize,
    hi: usize,
) {
    for d in (lo..hi).rev() {
        let n = sizes[d].max(1);
        idx[d] = flat % n;
        flat /= n;
    }
}

/// Fails to compile unless `S` has at least `R` dims: the check of the
/// functions that need a rank (`fft2`, `transpose_matrix`, ...). The compiler's
/// note "the above error was encountered while instantiating" names the caller.
#[inline(always)]
pub(crate) fn rank_at_least<S: Shape, const R: usize>() {
    const {
        assert!(
            S::RANK >= R,
            "this function needs an operator of a higher rank (see its docs)"
        )
    }
}

/// An `Index` error unless `axis` is below the rank of `S`; `what` names
/// the function.
pub(crate) fn check_axis<S: Shape>(what: &str, axis: usize) -> Result<()> {
    if axis >= S::RANK {
        return Err(Error::index(format!(
            "{what}: axis {axis} is out of range for an operator of rank {}",
            S::RANK
        )));
    }
    Ok(())
}

/// Drops `D` trailing dims: rank `N` → `N - D` (reductions over `D` axes).
#[diagnostic::on_unimplemented(
    message = "cannot remove {D} dims from an operator of shape `{Self}`",
    label = "the operator has fewer than {D} dims (or more than MAX_RANK = 8)"
)]
pub trait DropDims<const D: usize>: Shape {
    /// The shape with `D` fewer dims.
    type Out: Shape;
}

/// Adds one dim: rank `N` → `N + 1` (stack).
#[diagnostic::on_unimplemented(
    message = "cannot add a dim to an operator of shape `{Self}`",
    label = "the result would have more than MAX_RANK = 8 dims"
)]
pub trait AddDim: Shape {
    /// The shape with one more dim.
    type Out: Shape;
}

macro_rules! drop_dims {
    ($($n:literal: [$($d:literal)*];)*) => {$($(
        impl DropDims<$d> for [usize; $n] {
            type Out = [usize; $n - $d];
        }
    )*)*};
}
drop_dims! {
    0: [0];
    1: [0 1];
    2: [0 1 2];
    3: [0 1 2 3];
    4: [0 1 2 3 4];
    5: [0 1 2 3 4 5];
    6: [0 1 2 3 4 5 6];
    7: [0 1 2 3 4 5 6 7];
    8: [0 1 2 3 4 5 6 7 8];
}

macro_rules! add_dim {
    ($($n:literal)*) => {$(
        impl AddDim for [usize; $n] {
            type Out = [usize; $n + 1];
        }
    )*};
}
add_dim!(0 1 2 3 4 5 6 7);

/// Formats a shape for error messages: `[3, 4]`.
pub(crate) fn fmt_shape(s: &[usize]) -> String {
    format!("{s:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_rank_ravel_unravel_round_trip() {
        let s = [3usize, 4, 5];
        for flat in 0..60 {
            assert_eq!(ravel(&unravel(flat, &s), &s), flat);
        }
        assert_eq!(c_strides(&s), [20, 5, 1]);
        assert_eq!(numel(&s), 60);
        assert_eq!(numel(&[0usize; 0]), 1);
        let mut idx = [0usize, 3, 0];
        assert!(next_row(&mut idx, &s));
        assert_eq!(idx, [1, 0, 0]);
        assert!(checked_numel(&[usize::MAX, 2]).is_err());
    }
}
