//! Unit tests of the builder's memory management and the ABI types. The
//! construction patterns, threads and allocation counts are in
//! `tests/kernels_core.rs`.

use super::*;
use crate::error::{ErrorKind, Result, clear_last_error, last_error};
use std::mem::size_of;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A leaf of `N` words that records its drop.
#[derive(Debug)]
struct Words<const N: usize> {
    words: [u64; N],
    drops: Arc<AtomicUsize>,
}

impl<const N: usize> Kernel for Words<N> {
    const NSRC: usize = 0;
    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, _src: &[*const u8]) -> Result<()> {
        // SAFETY: the tests pass a u64 destination (single 1).
        unsafe { dst.cast::<u64>().write(self.words.iter().sum()) };
        Ok(())
    }
}

impl<const N: usize> Drop for Words<N> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

fn words<const N: usize>(drops: &Arc<AtomicUsize>) -> Words<N> {
    Words {
        words: std::array::from_fn(|i| i as u64 + 1),
        drops: drops.clone(),
    }
}

/// A new builder holding one `Words<N>` leaf at 0, built for `request`,
/// that counts its drop in `drops`.
fn with_words<const N: usize>(
    request: KernelRequest,
    drops: &Arc<AtomicUsize>,
) -> Pin<Box<CKernelBuilder>> {
    let mut ckb = Box::pin(CKernelBuilder::new());
    // SAFETY: 0 is a free slot of a new builder; a leaf names no children.
    unsafe { ckb.as_mut().emplace(0, request, words::<N>(drops)) }.unwrap();
    ckb
}

#[test]
fn abi_layouts() {
    let w = size_of::<usize>();
    assert_eq!(size_of::<CKernelPrefix>(), 2 * w);
    assert_eq!(size_of::<CKernelBuilder>(), 18 * w);
    assert_eq!(size_of::<KernelRequest>(), 4);
    assert_eq!(KernelRequest::Single as u32, 0);
    assert_eq!(KernelRequest::Strided as u32, 1);
    assert_eq!(CKernelBuilder::INLINE_CAPACITY, 16 * w);
}

#[test]
fn request_from_raw() {
    assert_eq!(KernelRequest::from_raw(0).unwrap(), KernelRequest::Single);
    assert_eq!(KernelRequest::from_raw(1).unwrap(), KernelRequest::Strided);
    let e = KernelRequest::from_raw(7).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains('7'), "{e}");
}

#[test]
fn new_builder_is_inline_and_zero() {
    let ckb = pin!(CKernelBuilder::new());
    assert!(ckb.is_inline());
    assert_eq!(ckb.capacity(), CKernelBuilder::INLINE_CAPACITY);
    assert!(ckb.root().prefix().is_empty());
    let last = CKernelBuilder::INLINE_CAPACITY - size_of::<CKernelPrefix>();
    // SAFETY: no kernel is built, so the whole buffer is zero.
    let prefix = unsafe { ckb.prefix(last) }.unwrap();
    assert!(prefix.is_empty());
}

#[test]
fn ensure_capacity_reserves_a_child_prefix() {
    let mut ckb = pin!(CKernelBuilder::new());
    ckb.as_mut().ensure_capacity_leaf(128).unwrap();
    assert!(ckb.is_inline(), "128 bytes fit inline");
    ckb.as_mut().ensure_capacity(112).unwrap();
    assert!(ckb.is_inline(), "112 + a 16-byte prefix fit inline");
    ckb.as_mut().ensure_capacity(120).unwrap();
    assert!(!ckb.is_inline());
    assert!(ckb.capacity() >= 120 + size_of::<CKernelPrefix>());
    assert_eq!(ckb.capacity() % KERNEL_ALIGN, 0);
}

#[test]
fn growth_moves_contents_and_zero_fills() {
    let drops = Arc::new(AtomicUsize::new(0));
    {
        let mut ckb = with_words::<3>(KernelRequest::Single, &drops);
        for requested in [129, 1000, 5000, 100_000] {
            ckb.as_mut().ensure_capacity_leaf(requested).unwrap();
            assert!(ckb.capacity() >= requested);
            assert_eq!(ckb.capacity() % KERNEL_ALIGN, 0);
            // The kernel moved with the buffer and still runs.
            let mut out = 0u64;
            // SAFETY: built for Single with no sources, writing a u64.
            unsafe { ckb.call_single((&raw mut out).cast(), &[]) }.unwrap();
            assert_eq!(out, 6);
            // SAFETY: a Words<3> was emplaced at 0.
            let kernel = unsafe { ckb.kernel::<Words<3>>(0) }.unwrap();
            assert_eq!(kernel.words, [1, 2, 3]);
            // Everything past the kernel is zero.
            let mut offset = kernel_size::<Words<3>>();
            while offset + size_of::<CKernelPrefix>() <= ckb.capacity() {
                // SAFETY: past the only kernel.
                let prefix = unsafe { ckb.prefix(offset) }.unwrap();
                assert!(prefix.is_empty(), "nonzero at {offset}");
                offset += size_of::<CKernelPrefix>();
            }
        }
        assert_eq!(drops.load(Ordering::Relaxed), 0);
    }
    assert_eq!(drops.load(Ordering::Relaxed), 1);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "Miri aborts on allocation failure instead of returning null"
)]
fn growth_errors_are_errors() {
    let mut ckb = pin!(CKernelBuilder::new());
    let e = ckb.as_mut().ensure_capacity(usize::MAX - 8).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = ckb
        .as_mut()
        .ensure_capacity_leaf(isize::MAX as usize + 1)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // Fits isize, but not once rounded to a whole word.
    let e = ckb
        .as_mut()
        .ensure_capacity_leaf(isize::MAX as usize)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Alloc);
    // More than any address space: the allocator says no.
    let e = ckb.as_mut().ensure_capacity_leaf(1 << 50).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Alloc, "{e}");
    assert!(ckb.is_inline(), "a failed growth leaves the buffer alone");
    // From the heap, too.
    ckb.as_mut().ensure_capacity_leaf(4096).unwrap();
    let e = ckb.as_mut().ensure_capacity_leaf(1 << 50).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Alloc, "{e}");
    assert_eq!(ckb.capacity(), 4096);
}

#[test]
fn raw_ensure_capacity_rejects_negative() {
    let mut ckb = pin!(CKernelBuilder::new());
    let raw = ckb.as_mut().as_mut_ptr();
    // SAFETY: `raw` is a pinned, live builder used by nothing else here.
    let e = unsafe { CKernelBuilder::ensure_capacity_leaf_raw(raw, -1) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // SAFETY: `raw` is a pinned, live builder used by nothing else here.
    let e = unsafe { CKernelBuilder::ensure_capacity_raw(raw, -16) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // SAFETY: `raw` is a pinned, live builder used by nothing else here.
    unsafe { CKernelBuilder::ensure_capacity_raw(raw, 200) }.unwrap();
    assert!(ckb.capacity() >= 216);
}

#[test]
fn reset_destroys_and_returns_inline() {
    let drops = Arc::new(AtomicUsize::new(0));
    {
        let mut ckb = with_words::<40>(KernelRequest::Single, &drops);
        assert!(!ckb.is_inline(), "40 words do not fit inline");
        ckb.as_mut().reset();
        assert_eq!(drops.load(Ordering::Relaxed), 1);
        assert!(ckb.is_inline());
        assert_eq!(ckb.capacity(), CKernelBuilder::INLINE_CAPACITY);
        assert!(ckb.root().prefix().is_empty());
        // SAFETY: the reset buffer holds no kernel.
        assert!(unsafe { ckb.prefix(16) }.unwrap().is_empty());
        // Usable again, inline this time.
        // SAFETY: 0 is a free slot of a reset builder.
        unsafe {
            ckb.as_mut()
                .emplace(0, KernelRequest::Single, words::<2>(&drops))
        }
        .unwrap();
        assert!(ckb.is_inline());
        ckb.as_mut().reset();
        ckb.as_mut().reset();
        assert_eq!(drops.load(Ordering::Relaxed), 2);
    }
    assert_eq!(drops.load(Ordering::Relaxed), 2);
}

#[test]
fn construct_and_destruct_in_place() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut slot = std::mem::MaybeUninit::<CKernelBuilder>::uninit();
    let raw = slot.as_mut_ptr();
    // SAFETY: `slot` is valid, aligned, holds no builder, and is not moved
    // until destruct_in_place below.
    unsafe { CKernelBuilder::construct_in_place(raw) };
    // C reads `data` directly: it points at the inline buffer already.
    // SAFETY: `raw` holds a live builder.
    let data = unsafe { raw.cast::<*mut u8>().read() };
    // SAFETY: static_data is at word 2 of the builder.
    assert_eq!(data, unsafe { raw.cast::<usize>().add(2) }.cast());
    {
        // SAFETY: live, never moved, and only used through this pin here.
        let ckb = unsafe { CKernelBuilder::pin_from_raw(raw) };
        // SAFETY: 0 is a free slot; a leaf names no children.
        unsafe { ckb.emplace(0, KernelRequest::Single, words::<30>(&drops)) }.unwrap();
    }
    // SAFETY: live builder; the buffer moved to the heap, and `data` says so.
    let data = unsafe { raw.cast::<*mut u8>().read() };
    // SAFETY: live builder; the buffer moved to the heap, and `data` says so.
    assert_eq!(data, unsafe { CKernelBuilder::raw_data(raw) });
    // SAFETY: constructed above, not moved, not used afterwards.
    unsafe { CKernelBuilder::destruct_in_place(raw) };
    assert_eq!(drops.load(Ordering::Relaxed), 1);
}

#[test]
fn a_new_builder_may_move_until_pinned() {
    let ckb = CKernelBuilder::new();
    let moved = Box::new(ckb);
    let mut ckb = Box::into_pin(moved);
    ckb.as_mut().ensure_capacity_leaf(64).unwrap();
    assert!(ckb.is_inline());
    let raw = ckb.as_mut().as_mut_ptr();
    // SAFETY: `raw` is the live, pinned builder.
    let data = unsafe { raw.cast::<*mut u8>().read() };
    // SAFETY: `raw` is the live, pinned builder.
    assert_eq!(data, unsafe { CKernelBuilder::raw_data(raw) });
    // SAFETY: static_data is at word 2.
    assert_eq!(data, unsafe { raw.cast::<usize>().add(2) }.cast());
}

#[test]
fn emplace_checks_offsets() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: misaligned offsets are refused before anything is written.
    let e = unsafe {
        ckb.as_mut()
            .emplace(4, KernelRequest::Single, words::<1>(&drops))
    }
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        drops.load(Ordering::Relaxed),
        1,
        "the refused kernel was dropped"
    );
    // SAFETY: 0 is a free slot.
    let end = unsafe {
        ckb.as_mut()
            .emplace(0, KernelRequest::Single, words::<1>(&drops))
    }
    .unwrap();
    assert_eq!(end, kernel_size::<Words<1>>());
    assert_eq!(end, 16 + 16);
    // SAFETY: a kernel at 0 is detected and refused, nothing is written.
    let e = unsafe {
        ckb.as_mut()
            .emplace(0, KernelRequest::Single, words::<1>(&drops))
    }
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(drops.load(Ordering::Relaxed), 2);
    // SAFETY: both are refused before anything is read.
    let (e3, e_far) = unsafe { (ckb.prefix(3).unwrap_err(), ckb.prefix(1 << 20).unwrap_err()) };
    assert_eq!(e3.kind(), ErrorKind::Index);
    assert_eq!(e_far.kind(), ErrorKind::Index);
    // SAFETY: a Words<1> is at 0; a Words<40> there would not fit, which
    // is checked before anything is read.
    let e = unsafe { ckb.kernel::<Words<40>>(0) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index);
}

#[test]
fn destroy_empties_the_prefix() {
    let drops = Arc::new(AtomicUsize::new(0));
    {
        let mut ckb = with_words::<1>(KernelRequest::Strided, &drops);
        let prefix = ckb.root().prefix();
        assert!(!prefix.function().is_null());
        assert!(prefix.destructor().is_some());
        let root = ckb.as_mut().as_mut_ptr();
        // SAFETY: the root prefix of a live builder; we own the root and call
        // destroy twice to check the second call does nothing.
        unsafe {
            let prefix = CKernelBuilder::raw_data(root).cast::<CKernelPrefix>();
            CKernelPrefix::destroy(prefix);
            CKernelPrefix::destroy(prefix);
        }
        assert_eq!(drops.load(Ordering::Relaxed), 1);
        assert!(ckb.root().prefix().is_empty());
    }
    assert_eq!(drops.load(Ordering::Relaxed), 1);
}

#[test]
fn calling_an_empty_builder_is_an_error() {
    let ckb = pin!(CKernelBuilder::new());
    let mut out = 0u64;
    // SAFETY: nothing is built, so no function is called.
    let e = unsafe { ckb.call_single((&raw mut out).cast(), &[]) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // SAFETY: nothing is built, so no function is called.
    let e = unsafe { ckb.call_strided((&raw mut out).cast(), 8, &[], &[], 1) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn strided_checks_source_counts() {
    let drops = Arc::new(AtomicUsize::new(0));
    let ckb = with_words::<1>(KernelRequest::Strided, &drops);
    let mut out = 0u64;
    // SAFETY: refused before the kernel is called.
    let e = unsafe { ckb.call_strided((&raw mut out).cast(), 8, &[], &[8], 1) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn root_calls_clear_a_stale_error() {
    clear_last_error();
    crate::error::set_last_error(&crate::Error::parse("stale"));
    let drops = Arc::new(AtomicUsize::new(0));
    let ckb = with_words::<1>(KernelRequest::Single, &drops);
    let mut out = 0u64;
    // SAFETY: built for Single, no sources, u64 destination.
    unsafe { ckb.call_single((&raw mut out).cast(), &[]) }.unwrap();
    assert_eq!(last_error(), None);
}
