//! Raw access to element data.

use super::*;

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
/// slice of `T`.
#[inline(always)]
pub(super) fn contiguous<T>(p: *const u8, stride: isize) -> bool {
    stride == size_of::<T>() as isize && (p as usize).is_multiple_of(align_of::<T>())
}

/// `true` when two byte ranges share memory.
pub(super) fn overlaps(a: *const u8, a_len: usize, b: *const u8, b_len: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    a < b.saturating_add(b_len) && b < a.saturating_add(a_len)
}

/// A raw pointer handed to rayon's threads.
#[derive(Clone, Copy)]
pub(super) struct SendPtr(pub(super) *const u8);
// SAFETY: the pointer addresses source data that outlives the parallel
// loop and is only read.
unsafe impl Send for SendPtr {}
// SAFETY: as for Send.
unsafe impl Sync for SendPtr {}
impl SendPtr {
    /// The pointer (a method, so closures capture the wrapper).
    pub(super) fn get(self) -> *const u8 {
        self.0
    }
}
