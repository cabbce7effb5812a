//! Fixed-size POD blocks, and the zero-filled buffer allocation every block
//! kind uses for its data.

use super::{
    BlockPrefix, BlockStruct, BlockVTable, MemBlock, MemoryBlockHeader, MemoryBlockKind, block_as,
    boxed_block,
};
use crate::error::{Error, Result};
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::Mutex;

/// Buffers at least this large are mapped directly and advised to use
/// transparent huge pages: a fresh 80 MB output otherwise takes ~20,000 page
/// faults (DESIGN §10).
const HUGE_THRESHOLD: usize = 2 << 20;
const HUGE_PAGE: usize = 2 << 20;
/// Buffers at least this large (and below [`HUGE_THRESHOLD`]) are mapped
/// directly too, in ordinary pages, so that freed ones go to the cache
/// below. From the heap, a 64-byte aligned buffer of a megabyte takes
/// glibc's memalign path: a fresh mapping or fresh heap pages on most calls
/// of a loop (a page fault per 4 KiB, then a memset), which made the copy
/// of a 1000×1000 `a[::2, ::3]` view (1.3 MB) cost 0.9 ms instead of 0.1.
const MAPPED_THRESHOLD: usize = 512 << 10;
/// The page size mappings below [`HUGE_THRESHOLD`] are rounded to (the
/// smallest on the platforms we run on; mmap rounds up further if needed).
const PAGE: usize = 4096;
/// Smallest alignment of a data buffer of [`LINE_ALIGNED`] bytes or more:
/// one cache line, so SIMD loads of a contiguous array never straddle one
/// at the start.
const MIN_ALIGN: usize = 64;
/// Buffers smaller than this keep the alignment they ask for: an aligned
/// allocation takes glibc's slow memalign path, which was a third of the
/// cost of a 10-element call.
const LINE_ALIGNED: usize = 1024;

/// A zero-filled buffer owned by a block.
pub(crate) struct Buffer {
    ptr: NonNull<u8>,
    size: usize,
    how: How,
}

enum How {
    /// From the global allocator with this layout.
    Heap(Layout),
    /// From mmap: the whole mapping (for munmap).
    Mapped { base: *mut libc::c_void, len: usize },
    /// Zero bytes: a dangling, aligned pointer.
    Empty,
    /// Inside the allocation of the block that owns the buffer (a small
    /// fixed block's data, see [`INLINE_MAX`]): freed with that block.
    Inline,
}

// SAFETY: a Buffer uniquely owns its allocation; the raw pointers are not
// shared with anything that is not Send/Sync itself.
unsafe impl Send for Buffer {}
// SAFETY: as for Send; a `&Buffer` only hands out the pointer value.
unsafe impl Sync for Buffer {}

/// Freed mappings (huge-page ones, and those of [`MAPPED_THRESHOLD`] and
/// more) kept for reuse, so that a loop making a new large output each
/// time (`c = a + b`) stops paying a page fault and the kernel's zeroing
/// per page on every call; NumPy pays them above glibc's
/// mmap threshold (32 MiB at most). Bounded: [`CACHE_ENTRIES`] mappings,
/// [`CACHE_BYTES`] in all, the oldest leaving first; [`trim_cache`] gives
/// them back to the system.
static CACHE: Mutex<Vec<Mapping>> = Mutex::new(Vec::new());
const CACHE_ENTRIES: usize = 16;
const CACHE_BYTES: usize = 512 << 20;

/// One anonymous mapping `[base, base + len)`.
struct Mapping {
    base: *mut libc::c_void,
    len: usize,
}

// SAFETY: a Mapping is an owned address range; nothing else refers to it
// while it sits in the cache.
unsafe impl Send for Mapping {}

fn cache() -> std::sync::MutexGuard<'static, Vec<Mapping>> {
    // A panic while the lock was held cannot leave the list inconsistent
    // (push and remove are the only writes), so a poisoned lock is usable.
    CACHE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Keeps the freed mapping `m` (of at most [`CACHE_BYTES`]), newest last:
/// the oldest ones leave to make room, so a loop making outputs of one size
/// finds its last one even after other sizes filled the cache. Returns the
/// mappings that left, for the caller to unmap outside the lock.
fn cache_push(m: Mapping) -> Vec<Mapping> {
    push_newest(&mut cache(), m, CACHE_ENTRIES, CACHE_BYTES)
}

/// [`cache_push`]'s rule on list `c`, for `entries` mappings and `bytes`
/// in all: the oldest (first) leave until `m` fits, then `m` goes last.
fn push_newest(c: &mut Vec<Mapping>, m: Mapping, entries: usize, bytes: usize) -> Vec<Mapping> {
    let mut held: usize = c.iter().map(|m| m.len).sum();
    let mut out = Vec::new();
    while !c.is_empty() && (c.len() >= entries || held + m.len > bytes) {
        let old = c.remove(0);
        held -= old.len;
        out.push(old);
    }
    c.push(m);
    out
}

/// Unmaps every cached mapping (memory kept for reuse by freed large
/// arrays); returns the bytes given back to the system.
pub fn trim_cache() -> usize {
    let all = std::mem::take(&mut *cache());
    all.iter()
        .map(|m| {
            // SAFETY: the mapping was made by mmap, and the cache owned it.
            unsafe { libc::munmap(m.base, m.len) };
            m.len
        })
        .sum()
}

/// The mapping length for a buffer of `size` bytes: for huge-page buffers
/// whole huge pages, plus one for alignment; below [`HUGE_THRESHOLD`],
/// whole pages. Equal lengths are interchangeable in the cache (the two
/// kinds never share a length: huge ones are at least 4 MiB, others at
/// most 2 MiB).
fn mapping_len(size: usize) -> Option<usize> {
    if size < HUGE_THRESHOLD {
        return size.checked_next_multiple_of(PAGE);
    }
    size.checked_next_multiple_of(HUGE_PAGE)?
        .checked_add(HUGE_PAGE)
}

/// Whether a cached mapping of `have` bytes may serve a buffer whose own
/// mapping would be `want` bytes: it holds it (a buffer starts at the same
/// place in any mapping at least `want` long, see [`mapping_start`]) and
/// wastes at most a quarter of `want`.
fn fits_reused(have: usize, want: usize) -> bool {
    have >= want && have - want <= want / 4
}

/// Where a buffer of `size` bytes starts in the mapping at `base`: the
/// first huge page boundary for huge-page buffers, else `base`.
fn mapping_start(base: usize, size: usize) -> usize {
    if size < HUGE_THRESHOLD {
        base
    } else {
        crate::types::align_up(base, HUGE_PAGE)
    }
}

impl Buffer {
    /// `size` zero bytes aligned to at least `align` (a power of two).
    pub fn zeroed(size: usize, align: usize) -> Result<Buffer> {
        Self::new(size, align, true)
    }

    /// `size` bytes aligned to at least `align`, zero unless `zero` is
    /// false: then they may hold the bytes of a freed array (never
    /// uninitialized memory), for callers that overwrite all of them.
    pub fn new(size: usize, align: usize, zero: bool) -> Result<Buffer> {
        if !align.is_power_of_two() {
            return Err(Error::invalid_argument(format!(
                "alignment {align} is not a power of two"
            )));
        }
        let align = if size >= LINE_ALIGNED {
            align.max(MIN_ALIGN)
        } else {
            align
        };
        if size == 0 {
            // SAFETY: `align` is a non-zero power of two, so it is a valid,
            // non-null, aligned dangling pointer for a zero-size buffer.
            let ptr = unsafe { NonNull::new_unchecked(align as *mut u8) };
            return Ok(Buffer {
                ptr,
                size,
                how: How::Empty,
            });
        }
        if size >= MAPPED_THRESHOLD
            && align
                <= if size >= HUGE_THRESHOLD {
                    HUGE_PAGE
                } else {
                    PAGE
                }
            && let Some(b) = Self::mapped(size, zero)
        {
            return Ok(b);
        }
        let layout = Layout::from_size_align(size, align)
            .map_err(|_| Error::alloc(format!("cannot allocate {size} bytes: size too large")))?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw)
            .ok_or_else(|| Error::alloc(format!("out of memory allocating {size} bytes")))?;
        Ok(Buffer {
            ptr,
            size,
            how: How::Heap(layout),
        })
    }

    /// An anonymous mapping (zero-filled by the kernel); from
    /// [`HUGE_THRESHOLD`] on aligned to a huge page and advised to use huge
    /// pages, below it page-aligned. `None` when mmap fails; the caller
    /// falls back to the heap.
    fn mapped(size: usize, zero: bool) -> Option<Buffer> {
        let len = mapping_len(size)?;
        let reused = {
            let mut c = cache();
            // The newest that holds `len` bytes and is at most a quarter
            // longer (order kept for `cache_push`): a split call's tasks
            // ask for sizes that differ a little from call to call.
            c.iter()
                .rposition(|m| fits_reused(m.len, len))
                .map(|i| c.remove(i))
        };
        if let Some(m) = reused {
            let start = mapping_start(m.base as usize, size);
            if zero {
                // SAFETY: [start, start + size) lies inside the mapping,
                // which is ours alone now: its length is mapping_len(size)
                // (the cache matched it), which has room for `size` bytes
                // from mapping_start (whole pages from `base`, or a spare
                // huge page for the step to the first boundary).
                unsafe { std::ptr::write_bytes(start as *mut u8, 0, size) };
            }
            return Some(Buffer {
                ptr: NonNull::new(start as *mut u8)?,
                size,
                how: How::Mapped {
                    base: m.base,
                    len: m.len,
                },
            });
        }
        // SAFETY: an anonymous private mapping with no address hint has no
        // preconditions; failure is reported as MAP_FAILED.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        let start = mapping_start(base as usize, size);
        if size >= HUGE_THRESHOLD {
            // Whole huge pages, the last one included: advising only `size`
            // bytes would leave the tail past the last 2 MiB boundary in
            // 4 KiB pages (1.7 MB of an 8 MB array).
            let advised = size.next_multiple_of(HUGE_PAGE);
            // SAFETY: [start, start + advised) lies inside the mapping:
            // `start` is less than HUGE_PAGE past `base` and the mapping is
            // `advised + HUGE_PAGE` bytes long (mapping_len, which did not
            // overflow). madvise is only advice; its failure (no THP
            // support) leaves ordinary pages, which is fine.
            unsafe {
                libc::madvise(start as *mut libc::c_void, advised, libc::MADV_HUGEPAGE);
            }
        }
        Some(Buffer {
            ptr: NonNull::new(start as *mut u8)?,
            size,
            how: How::Mapped { base, len },
        })
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn size(&self) -> usize {
        self.size
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        match self.how {
            // SAFETY: allocated by alloc_zeroed with exactly this layout.
            How::Heap(layout) => unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) },
            How::Mapped { base, len } => {
                let evicted = if len <= CACHE_BYTES {
                    cache_push(Mapping { base, len })
                } else {
                    vec![Mapping { base, len }]
                };
                for m in evicted {
                    // SAFETY: each mapping was made by mmap and left the cache
                    // (or never entered it): it is unmapped exactly once, here.
                    unsafe { libc::munmap(m.base, m.len) };
                }
            }
            How::Empty | How::Inline => {}
        }
    }
}

#[repr(C)]
struct FixedBlock {
    prefix: BlockPrefix,
    buffer: Buffer,
}

// SAFETY: `#[repr(C)]` with its BlockPrefix first, made with this kind by
// the constructor below; the only struct of kind FixedSizePod.
unsafe impl BlockStruct for FixedBlock {
    const KIND: MemoryBlockKind = MemoryBlockKind::FixedSizePod;
}

static FIXED_VTABLE: BlockVTable = BlockVTable { free: free_fixed };

/// Data of at most this many bytes (aligned to at most [`INLINE_ALIGN`])
/// lies in the block's own allocation, right after the struct: a small
/// array's data then costs no allocation of its own (and no calloc, which
/// glibc does not serve from its per-thread cache).
const INLINE_MAX: usize = 256;
/// The alignment of inline data (malloc's own).
const INLINE_ALIGN: usize = 16;
/// Where inline data starts in the block's allocation.
const INLINE_OFFSET: usize = std::mem::size_of::<FixedBlock>().next_multiple_of(INLINE_ALIGN);
const _: () = assert!(std::mem::align_of::<FixedBlock>() <= INLINE_ALIGN);

/// The allocation of a block with `size` (at most [`INLINE_MAX`]) bytes of
/// inline data.
fn inline_layout(size: usize) -> Layout {
    debug_assert!(size <= INLINE_MAX);
    // SAFETY: INLINE_ALIGN is a power of two, and INLINE_OFFSET + size (at
    // most a few hundred bytes) does not overflow isize when rounded up.
    unsafe { Layout::from_size_align_unchecked(INLINE_OFFSET + size, INLINE_ALIGN) }
}

/// # Safety
/// See [`BlockVTable::free`].
unsafe fn free_fixed(block: NonNull<MemoryBlockHeader>) {
    let p = block.cast::<FixedBlock>().as_ptr();
    // SAFETY: (1) the block was made by `new`: by `new_inline` when its
    // buffer is inline (an allocation of inline_layout(size)), otherwise as
    // a Box<FixedBlock>; (2) it is ours alone now, so it is dropped once.
    unsafe {
        if matches!((*p).buffer.how, How::Inline) {
            let layout = inline_layout((*p).buffer.size);
            std::ptr::drop_in_place(p);
            std::alloc::dealloc(p as *mut u8, layout);
        } else {
            drop(Box::from_raw(p));
        }
    }
}

/// A fixed block of `size` (1 to [`INLINE_MAX`]) zero bytes in its own
/// allocation, aligned to [`INLINE_ALIGN`].
fn new_inline(size: usize) -> Result<MemBlock> {
    let layout = inline_layout(size);
    // SAFETY: the layout has a non-zero size (the struct).
    let raw = unsafe { std::alloc::alloc(layout) };
    let block = NonNull::new(raw)
        .ok_or_else(|| Error::alloc(format!("out of memory allocating {size} bytes")))?;
    // SAFETY: the allocation holds a FixedBlock (aligned: INLINE_ALIGN is at
    // least its alignment) and then `size` bytes from INLINE_OFFSET, which
    // are zeroed before the buffer hands them out.
    unsafe {
        let data = raw.add(INLINE_OFFSET);
        std::ptr::write_bytes(data, 0, size);
        std::ptr::write(
            raw as *mut FixedBlock,
            FixedBlock {
                prefix: BlockPrefix::new(MemoryBlockKind::FixedSizePod, &FIXED_VTABLE),
                buffer: Buffer {
                    ptr: NonNull::new_unchecked(data),
                    size,
                    how: How::Inline,
                },
            },
        );
        // The struct starts with its header (BlockStruct 1) and holds the
        // one reference BlockPrefix::new counts.
        Ok(MemBlock::from_raw(block.cast()))
    }
}

pub(super) fn new(size: usize, align: usize, zero: bool) -> Result<MemBlock> {
    if (1..=INLINE_MAX).contains(&size) && align.is_power_of_two() && align <= INLINE_ALIGN {
        return new_inline(size);
    }
    let buffer = Buffer::new(size, align, zero)?;
    Ok(boxed_block(Box::new(FixedBlock {
        prefix: BlockPrefix::new(MemoryBlockKind::FixedSizePod, &FIXED_VTABLE),
        buffer,
    })))
}

pub(super) fn data(block: &MemBlock) -> Option<(*mut u8, usize)> {
    block_as::<FixedBlock>(block).map(|b| (b.buffer.ptr(), b.buffer.size()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_mapping_serves_sizes_up_to_a_quarter_smaller() {
        assert!(fits_reused(8 << 20, 8 << 20));
        assert!(fits_reused(10 << 20, 8 << 20));
        assert!(
            !fits_reused(10 << 20 | 4096, 8 << 20),
            "more than a quarter wasted"
        );
        assert!(!fits_reused(6 << 20, 8 << 20), "too small");
        // A reused huge-page mapping still holds the buffer after the step
        // to its first huge page boundary.
        for size in [HUGE_THRESHOLD, 5 << 20, (7 << 20) + 1] {
            let want = mapping_len(size).unwrap();
            let have = want + want / 4;
            let base = 4096 * 3;
            assert!(mapping_start(base, size) + size <= base + have);
        }
    }

    #[test]
    fn the_cache_keeps_the_newest_mappings() {
        // Fake mappings (never unmapped: only their lengths matter here).
        let m = |len: usize| Mapping {
            base: std::ptr::without_provenance_mut(len),
            len,
        };
        let lens = |c: &[Mapping]| c.iter().map(|m| m.len).collect::<Vec<_>>();
        let mut c = Vec::new();
        for len in [10, 20, 30] {
            assert!(push_newest(&mut c, m(len), 3, 100).is_empty());
        }
        // Full by count: the oldest leaves.
        assert_eq!(lens(&push_newest(&mut c, m(40), 3, 100)), [10]);
        assert_eq!(lens(&c), [20, 30, 40]);
        // Full by bytes: as many of the oldest as it takes.
        assert_eq!(lens(&push_newest(&mut c, m(60), 5, 100)), [20, 30]);
        assert_eq!(lens(&c), [40, 60]);
        // One that needs the whole room empties the list.
        assert_eq!(lens(&push_newest(&mut c, m(100), 5, 100)), [40, 60]);
        assert_eq!(lens(&c), [100]);
    }
}
