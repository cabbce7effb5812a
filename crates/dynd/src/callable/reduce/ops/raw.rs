//! Raw access to element data.

use crate::kernels::loops::{Operand, Plan, Run, run_of, select};

/// Reads a `T` at `p` (unaligned).
///
/// # Safety
/// 1. `p` is readable for a `T` holding a valid value.
#[inline(always)]
pub(super) unsafe fn ld<T: Copy>(p: *const u8) -> T {
    // SAFETY: (1).
    unsafe { p.cast::<T>().read_unaligned() }
}

/// Writes a `T` at `p` (unaligned).
///
/// # Safety
/// 1. `p` is writable for a `T`.
#[inline(always)]
pub(super) unsafe fn st<T: Copy>(p: *mut u8, v: T) {
    // SAFETY: (1).
    unsafe { p.cast::<T>().write_unaligned(v) }
}

/// `true` when elements `stride` bytes apart from `p` form an aligned
/// slice of `T` (the loop selector's [`Run::Contiguous`]).
#[inline(always)]
pub(super) fn contiguous<T>(p: *const u8, stride: isize) -> bool {
    run_of(Operand::of::<T>(p, stride)) == Run::Contiguous
}

/// The loop for `n` results of `D` at `dst` from sources of `S` at `src`
/// (the loop selector's [`select`]): a slice loop only when both are
/// contiguous and apart.
#[inline(always)]
pub(super) fn plan<D, S>(dst: *mut u8, ds: isize, src: *const u8, ss: isize, n: usize) -> Plan {
    select(
        Operand::of::<D>(dst.cast_const(), ds),
        &[Operand::of::<S>(src, ss)],
        n,
        false,
    )
}
