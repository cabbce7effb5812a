use super::*;
use crate::error::{ErrorKind, take_last_error};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

#[test]
fn refcount_counts_clones_and_drops() {
    let a = MemBlock::new_fixed(16, 8).unwrap();
    assert_eq!(a.kind(), MemoryBlockKind::FixedSizePod);
    assert_eq!(a.use_count(), 1);
    let b = a.clone();
    assert!(a.ptr_eq(&b));
    assert_eq!(a.use_count(), 2);
    drop(b);
    assert_eq!(a.use_count(), 1);
    let raw = a.into_raw();
    // SAFETY: `raw` carries the one reference `a` owned.
    let a = unsafe { MemBlock::from_raw(raw) };
    // SAFETY: `a` keeps the block alive during the call.
    let c = unsafe { MemBlock::from_borrowed(a.as_ptr()) };
    assert_eq!(a.use_count(), 2);
    drop(c);
    assert_eq!(a.use_count(), 1);
}

#[test]
fn fixed_blocks_are_zeroed_and_aligned() {
    // 1 KiB and more: at least a cache line; smaller: what was asked for.
    for (size, align, want) in [
        (0, 1, 1),
        (1, 1, 1),
        (100, 8, 8),
        (1023, 8, 8),
        (1024, 8, 64),
        (4096, 64, 64),
        (1000, 256, 256),
        (3 << 20, 8, 2 << 20),
    ] {
        let b = MemBlock::new_fixed(size, align).unwrap();
        let (ptr, len) = b.fixed_data().unwrap();
        assert_eq!(len, size);
        assert_eq!(ptr as usize % want, 0, "size {size} align {align}");
        // SAFETY: the block owns `len` readable bytes at `ptr`.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
        assert!(bytes.iter().all(|&x| x == 0));
    }
    assert_eq!(
        MemBlock::new_fixed(8, 3).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        MemBlock::new_fixed(usize::MAX - 10, 8).unwrap_err().kind(),
        ErrorKind::Alloc
    );
}

#[test]
fn small_fixed_blocks_hold_their_data_inline_zeroed_and_aligned() {
    // Sizes around the inline limit (256 bytes), every small alignment, in
    // both modes; a reused allocation is zeroed again.
    for round in 0..2 {
        for size in [1, 7, 16, 80, 255, 256, 257] {
            for align in [1, 2, 4, 8, 16, 32] {
                for b in [
                    MemBlock::new_fixed(size, align).unwrap(),
                    MemBlock::new_fixed_for_overwrite(size, align).unwrap(),
                ] {
                    let (ptr, len) = b.fixed_data().unwrap();
                    assert_eq!(len, size);
                    assert_eq!(ptr as usize % align, 0, "size {size} align {align}");
                    // SAFETY: the block owns `len` writable bytes at `ptr`.
                    let bytes = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
                    assert!(bytes.iter().all(|&x| x == 0), "round {round}");
                    bytes.fill(0xA5);
                    let c = b.clone();
                    drop(b);
                    assert_eq!(c.use_count(), 1);
                }
            }
        }
    }
}

#[test]
fn large_fixed_blocks_use_huge_page_aligned_mappings() {
    let size = 5 << 20;
    let b = MemBlock::new_fixed(size, 8).unwrap();
    let (ptr, len) = b.fixed_data().unwrap();
    assert_eq!(len, size);
    assert_eq!(ptr as usize % (2 << 20), 0);
    // SAFETY: the block owns `len` writable bytes at `ptr`.
    let bytes = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
    assert!(bytes.iter().step_by(4096).all(|&x| x == 0));
    bytes[len - 1] = 7;
    assert_eq!(bytes[len - 1], 7);
    assert!(b.pod_allocator().is_none());
}

#[test]
fn arena_allocates_zeroed_aligned_memory_and_grows_geometrically() {
    let b = MemBlock::new_pod_allocator(64);
    assert_eq!(b.kind(), MemoryBlockKind::PodAllocator);
    let a = b.pod_allocator().unwrap();
    let mut ptrs = Vec::new();
    for i in 0..200usize {
        let align = 1 << (i % 5);
        let p = a.allocate(i + 1, align).unwrap();
        assert_eq!(p as usize % align, 0);
        // SAFETY: the arena gave us i + 1 bytes at p.
        let s = unsafe { std::slice::from_raw_parts_mut(p, i + 1) };
        assert!(s.iter().all(|&x| x == 0), "allocation {i} is not zeroed");
        s.fill(i as u8);
        ptrs.push((p, i + 1));
    }
    // Earlier allocations never move or get overwritten.
    for (i, (p, n)) in ptrs.iter().enumerate() {
        // SAFETY: still owned by the arena, which is alive.
        let s = unsafe { std::slice::from_raw_parts(*p, *n) };
        assert!(s.iter().all(|&x| x == i as u8));
    }
    // 200 allocations of up to 200 bytes: ~20 KB in a few doubling chunks.
    let cap = a.capacity();
    assert!((20_000..200_000).contains(&cap), "capacity {cap}");
}

#[test]
fn arena_resizes_the_latest_allocation_in_place_then_by_moving() {
    let b = MemBlock::new_pod_allocator(1024);
    let a = b.pod_allocator().unwrap();
    let p = a.allocate(8, 8).unwrap();
    // SAFETY: 8 bytes at p are ours.
    unsafe { std::ptr::copy_nonoverlapping(b"abcdefgh".as_ptr(), p, 8) };
    let q = a.resize(p, 100).unwrap();
    assert_eq!(p, q, "room in the chunk: resize in place");
    // SAFETY: 100 bytes at q are ours; the grown part is zero.
    let s = unsafe { std::slice::from_raw_parts(q, 100) };
    assert_eq!(&s[..8], b"abcdefgh");
    assert!(s[8..].iter().all(|&x| x == 0));
    let r = a.resize(q, 1 << 20).unwrap();
    assert_ne!(q, r, "no room: the allocation moves");
    // SAFETY: 1 MiB at r is ours.
    let s = unsafe { std::slice::from_raw_parts(r, 1 << 20) };
    assert_eq!(&s[..8], b"abcdefgh");
    assert!(s[8..].iter().all(|&x| x == 0));
    // Shrink, then the next allocation starts zeroed right after.
    let r2 = a.resize(r, 4).unwrap();
    assert_eq!(r, r2);
    let n = a.allocate(16, 1).unwrap();
    // SAFETY: 16 bytes at n are ours.
    let fresh = unsafe { std::slice::from_raw_parts(n, 16) };
    assert!(fresh.iter().all(|&x| x == 0));
    // Only the latest allocation can be resized.
    let e = a.resize(r2, 8).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("most recent"), "{e}");
    a.finalize();
    assert!(
        a.allocate(1, 1)
            .unwrap_err()
            .message()
            .contains("finalized")
    );
    assert_eq!(
        a.allocate(1, 3).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn c_allocator_api_reports_errors_in_the_slot() {
    let b = MemBlock::new_pod_allocator(0);
    let raw = b.as_ptr().as_ptr();
    // SAFETY: `b` is live.
    let api = unsafe { pod_allocator_api(b.as_ptr()) }.unwrap();
    let (mut begin, mut end) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: a live arena block and valid out pointers.
    let status = unsafe { (api.allocate)(raw, 10, 4, &mut begin, &mut end) };
    assert_eq!(status, 0);
    assert_eq!(end as usize - begin as usize, 10);
    // SAFETY: a live arena block and valid out pointers.
    assert_eq!(unsafe { (api.resize)(raw, 3, &mut begin, &mut end) }, 0);
    assert_eq!(end as usize - begin as usize, 3);
    // SAFETY: a live arena block and valid out pointers; a negative size is reported, not
    // acted on.
    let status = unsafe { (api.allocate)(raw, -1, 4, &mut begin, &mut end) };
    assert_eq!(status, -1);
    assert_eq!(
        take_last_error().unwrap().kind(),
        ErrorKind::InvalidArgument
    );
    // SAFETY: NULL is checked.
    let status = unsafe { (api.allocate)(std::ptr::null_mut(), 1, 1, &mut begin, &mut end) };
    assert_eq!(status, -1);
    assert!(take_last_error().unwrap().message().contains("NULL"));
    // SAFETY: NULL is checked.
    unsafe { (api.finalize)(raw) };
    // SAFETY: NULL is checked.
    let status = unsafe { (api.allocate)(raw, 1, 1, &mut begin, &mut end) };
    assert_eq!(status, -1);
    assert!(take_last_error().unwrap().message().contains("finalized"));
    let fixed = MemBlock::new_fixed(8, 8).unwrap();
    // SAFETY: `fixed` is live.
    assert!(unsafe { pod_allocator_api(fixed.as_ptr()) }.is_none());
    // SAFETY: a live block of the wrong kind is rejected, not misused.
    let status = unsafe { (api.allocate)(fixed.as_ptr().as_ptr(), 1, 1, &mut begin, &mut end) };
    assert_eq!(status, -1);
    assert!(
        take_last_error()
            .unwrap()
            .message()
            .contains("not a POD allocator")
    );
}

static DESTROYED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_destroy(elem: *mut u8) {
    // SAFETY: the element is a u64 slot of the allocation.
    let v = unsafe { *(elem as *const u64) };
    DESTROYED.fetch_add(v as usize, Ordering::SeqCst);
}

#[test]
fn object_blocks_run_each_destructor_once() {
    let b = MemBlock::new_object();
    assert_eq!(b.kind(), MemoryBlockKind::Object);
    let o = b.object_allocator().unwrap();
    let p = o.allocate(5, 8, 8, count_destroy).unwrap() as *mut u64;
    for i in 0..5 {
        // SAFETY: 5 u64 slots at p.
        unsafe { *p.add(i) = 1 << (i * 4) };
    }
    o.allocate(3, 8, 8, count_destroy).unwrap();
    let c = b.clone();
    drop(b);
    assert_eq!(DESTROYED.load(Ordering::SeqCst), 0);
    drop(c);
    assert_eq!(DESTROYED.load(Ordering::SeqCst), 0x11111);
    assert!(
        MemBlock::new_object()
            .object_allocator()
            .unwrap()
            .allocate(usize::MAX, 2, 1, count_destroy)
            .is_err()
    );
}

#[test]
fn external_blocks_release_exactly_once() {
    let released = Arc::new(AtomicUsize::new(0));
    let r = released.clone();
    let b = MemBlock::new_external(move || {
        r.fetch_add(1, Ordering::SeqCst);
    });
    assert_eq!(b.kind(), MemoryBlockKind::External);
    let clones: Vec<_> = (0..10).map(|_| b.clone()).collect();
    drop(b);
    assert_eq!(released.load(Ordering::SeqCst), 0);
    drop(clones);
    assert_eq!(released.load(Ordering::SeqCst), 1);
}

unsafe extern "C" fn c_release(obj: *mut std::ffi::c_void) {
    // SAFETY: the test passes a pointer to an AtomicUsize that outlives the block.
    unsafe { &*(obj as *const AtomicUsize) }.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn external_c_blocks_call_the_release_callback_once() {
    let count = AtomicUsize::new(0);
    let b = MemBlock::new_external_c(&count as *const _ as *mut _, Some(c_release));
    let c = b.clone();
    drop(b);
    drop(c);
    assert_eq!(count.load(Ordering::SeqCst), 1);
    drop(MemBlock::new_external_c(std::ptr::null_mut(), None));
}

#[test]
fn refcounts_are_exact_under_concurrent_clones() {
    let b = MemBlock::new_pod_allocator(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..10_000 {
                    let c = b.clone();
                    let d = c.clone();
                    drop(c);
                    d.pod_allocator().unwrap().allocate(8, 8).unwrap();
                }
            });
        }
    });
    assert_eq!(b.use_count(), 1);
}

#[test]
fn reused_large_mappings_come_back_zeroed() {
    // 3 MiB buffers are mapped; a freed one is cached and handed out again.
    // Whether or not this one is reused (tests run in parallel), a zeroed
    // block must read as zeros.
    for round in 0..4 {
        let b = MemBlock::new_fixed(3 << 20, 8).unwrap();
        let (ptr, len) = b.fixed_data().unwrap();
        // SAFETY: the block owns `len` bytes at `ptr`.
        let bytes = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        assert!(bytes.iter().all(|&x| x == 0), "round {round}");
        bytes.fill(0xAB);
        drop(b);
        let o = MemBlock::new_fixed_for_overwrite(3 << 20, 8).unwrap();
        let (_, olen) = o.fixed_data().unwrap();
        assert_eq!(olen, 3 << 20);
    }
    let _ = crate::memblock::trim_cache();
    let b = MemBlock::new_fixed(3 << 20, 8).unwrap();
    let (ptr, len) = b.fixed_data().unwrap();
    // SAFETY: the block owns `len` bytes at `ptr`.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    assert!(bytes.iter().all(|&x| x == 0));
}

#[test]
fn dedicated_overwrite_chunks_keep_later_allocations_zeroed() {
    let block = MemBlock::new_pod_allocator(64);
    let alloc = block.pod_allocator().unwrap();
    let small = alloc.allocate(16, 8).unwrap();
    let big = alloc.allocate_for_overwrite(1 << 20, 64).unwrap();
    assert_eq!(big as usize % 64, 0);
    // SAFETY: the arena owns 1 MiB at `big`, ours to write.
    unsafe { std::ptr::write_bytes(big, 0xEE, 1 << 20) };
    // The dedicated chunk is not "the latest": resizing it is refused.
    assert_eq!(
        alloc.resize(big, 2 << 20).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    // Later allocations come from a fresh, zeroed chunk.
    for _ in 0..100 {
        let p = alloc.allocate(1000, 8).unwrap();
        // SAFETY: the arena owns 1000 bytes at `p`.
        let bytes = unsafe { std::slice::from_raw_parts(p, 1000) };
        assert!(bytes.iter().all(|&x| x == 0));
        assert!((p as usize) < big as usize || p as usize >= big as usize + (1 << 20));
    }
    // Small requests are ordinary zeroed allocations.
    let s2 = alloc.allocate_for_overwrite(100, 8).unwrap();
    // SAFETY: the arena owns 1000 bytes at `p`.
    let bytes = unsafe { std::slice::from_raw_parts(s2, 100) };
    assert!(bytes.iter().all(|&x| x == 0));
    assert!(!small.is_null());
    alloc.finalize();
    assert!(alloc.allocate_for_overwrite(1 << 20, 8).is_err());
}

#[test]
fn arena_absorbs_another_arenas_chunks_without_moving_them() {
    let mine = MemBlock::new_pod_allocator(64);
    let other = MemBlock::new_pod_allocator(64);
    let (a, o) = (
        mine.pod_allocator().unwrap(),
        other.pod_allocator().unwrap(),
    );
    let before = a.allocate(8, 8).unwrap();
    // SAFETY: 8 bytes at `before` are ours.
    unsafe { std::ptr::copy_nonoverlapping(b"mine....".as_ptr(), before, 8) };
    // Several chunks in the other arena, each written.
    let theirs: Vec<*mut u8> = (0..4).map(|_| o.allocate(1000, 8).unwrap()).collect();
    for (i, p) in theirs.iter().enumerate() {
        // SAFETY: 1000 bytes at p are ours.
        unsafe { std::ptr::write_bytes(*p, i as u8 + 1, 1000) };
    }
    let cap = o.capacity();
    a.absorb(&o).unwrap();
    assert_eq!(o.capacity(), 0, "the other arena is left empty");
    assert!(a.capacity() >= cap);
    drop(other);
    // The absorbed data is where it was, owned by this block now.
    for (i, p) in theirs.iter().enumerate() {
        // SAFETY: the chunks live as long as `mine`.
        let s = unsafe { std::slice::from_raw_parts(*p, 1000) };
        assert!(s.iter().all(|&x| x == i as u8 + 1), "chunk {i}");
    }
    // This block's latest allocation is still the latest: it resizes in
    // place, and later allocations come zeroed.
    assert_eq!(a.resize(before, 16).unwrap(), before);
    // SAFETY: 16 bytes at `before` are ours.
    let kept = unsafe { std::slice::from_raw_parts(before, 8) };
    assert_eq!(kept, b"mine....");
    let n = a.allocate(32, 1).unwrap();
    // SAFETY: 32 bytes at n are ours.
    let fresh = unsafe { std::slice::from_raw_parts(n, 32) };
    assert!(fresh.iter().all(|&x| x == 0));
    // A block cannot absorb itself.
    let e = a.absorb(&mine.pod_allocator().unwrap()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

/// `n` bytes at `p`, which the test's arena owns.
fn bytes_at<'a>(p: *mut u8, n: usize) -> &'a mut [u8] {
    // SAFETY: every caller passes an allocation of at least `n` bytes from
    // an arena that outlives the slice's use.
    unsafe { std::slice::from_raw_parts_mut(p, n) }
}

#[test]
fn leases_carve_zeroed_allocations_and_give_the_tail_back() {
    let b = MemBlock::new_pod_allocator(1024);
    let a = b.pod_allocator().unwrap();
    let first = a.allocate(10, 1).unwrap();
    let mut lease = a.lease(100).unwrap();
    let room = lease.room();
    assert!((100..=1024).contains(&room), "room {room}");
    // Allocations are bumps, aligned, zero, one after another.
    let p = lease.take(3, 1).unwrap();
    assert!(bytes_at(p, 3).iter().all(|&x| x == 0));
    bytes_at(p, 3).copy_from_slice(b"abc");
    let q = lease.take(16, 8).unwrap();
    assert_eq!(q as usize % 8, 0);
    assert!(q as usize >= p as usize + 3);
    // The latest grows and shrinks in place; what a shrink gives back is
    // zero again, and the next allocation starts there.
    bytes_at(q, 16).fill(7);
    assert!(lease.resize_latest(q, 16, 40));
    assert!(bytes_at(q, 40)[16..].iter().all(|&x| x == 0));
    bytes_at(q, 40).fill(9);
    assert!(lease.resize_latest(q, 40, 4));
    let r = lease.take(36, 1).unwrap();
    assert_eq!(r as usize, q as usize + 4);
    assert!(
        bytes_at(r, 36).iter().all(|&x| x == 0),
        "a shrink zeroes what it gives back"
    );
    // Not the latest, or past the room: refused, nothing changed.
    assert!(!lease.resize_latest(q, 4, 8));
    assert!(!lease.resize_latest(r, 36, lease.room() + 37));
    assert!(lease.take(lease.room() + 1, 1).is_none());
    // The arena's own latest allocation is none while leased.
    assert_eq!(
        a.resize(first, 20).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    // Ending the lease gives the tail back: the next allocation follows r.
    a.end_lease(lease);
    let s = a.allocate(5, 1).unwrap();
    assert_eq!(s as usize, r as usize + 36);
    assert!(bytes_at(s, 5).iter().all(|&x| x == 0));
    assert_eq!(bytes_at(p, 3), b"abc", "leased data stays where it is");
}

#[test]
fn allocations_during_a_lease_go_elsewhere_and_keep_the_tail() {
    let b = MemBlock::new_pod_allocator(256);
    let a = b.pod_allocator().unwrap();
    let mut lease = a.lease(64).unwrap();
    let p = lease.take(8, 8).unwrap();
    let before = a.capacity();
    // Another writer allocates meanwhile: a new chunk, not the leased room.
    let o = a.allocate(16, 8).unwrap();
    assert!(a.capacity() > before);
    assert!(o as usize >= p as usize + 8 + lease.room() || (o as usize) < p as usize);
    a.end_lease(lease);
    // The lease's tail stays unused; allocation continues after `o`.
    let n = a.allocate(4, 1).unwrap();
    assert_eq!(n as usize, o as usize + 16);
    // A lease bigger than the last chunk's room takes a new chunk.
    let big = a.lease(1 << 16).unwrap();
    assert!(big.room() >= 1 << 16);
    a.end_lease(big);
    // A finalized block leases nothing.
    a.finalize();
    assert_eq!(a.lease(8).unwrap_err().kind(), ErrorKind::InvalidArgument);
}
