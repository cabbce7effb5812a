//! Fixed-size POD blocks, and the zero-filled buffer allocation every block
//! kind uses for its data.

use super::{
    BlockPrefix, BlockVTable, MemBlock, MemoryBlockHeader, MemoryBlockKind, block_as, boxed_block,
};
use crate::error::{Error, Result};
use std::alloc::Layout;
use std::ptr::NonNull;

/// Buffers at least this large are mapped directly and advised to use
/// transparent huge pages: a fresh 80 MB output otherwise takes ~20,000 page
/// faults (DESIGN §10).
const HUGE_THRESHOLD: usize = 2 << 20;
const HUGE_PAGE: usize = 2 << 20;
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
}

// SAFETY: a Buffer uniquely owns its allocation; the raw pointers are not
// shared with anything that is not Send/Sync itself.
unsafe impl Send for Buffer {}
// SAFETY: as for Send; a `&Buffer` only hands out the pointer value.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// `size` zero bytes aligned to at least `align` (a power of two).
    pub fn zeroed(size: usize, align: usize) -> Result<Buffer> {
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
        if size >= HUGE_THRESHOLD
            && align <= HUGE_PAGE
            && let Some(b) = Self::mapped(size)
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

    /// An anonymous mapping (zero-filled by the kernel), aligned to a huge
    /// page and advised to use huge pages. `None` when mmap fails; the caller
    /// falls back to the heap.
    fn mapped(size: usize) -> Option<Buffer> {
        let len = size.checked_add(HUGE_PAGE)?;
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
        let start = crate::types::align_up(base as usize, HUGE_PAGE);
        // SAFETY: [start, start + size) lies inside the mapping, which is
        // HUGE_PAGE bytes longer than `size`. madvise is only advice; its
        // failure (no THP support) leaves ordinary pages, which is fine.
        unsafe {
            libc::madvise(start as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
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
                // SAFETY: the mapping [base, base+len) was made by mmap and is
                // unmapped exactly once, here.
                unsafe { libc::munmap(base, len) };
            }
            How::Empty => {}
        }
    }
}

#[repr(C)]
struct FixedBlock {
    prefix: BlockPrefix,
    buffer: Buffer,
}

static FIXED_VTABLE: BlockVTable = BlockVTable { free: free_fixed };

/// # Safety
/// See [`BlockVTable::free`].
unsafe fn free_fixed(block: NonNull<MemoryBlockHeader>) {
    // SAFETY: (1) the block was made by `new` as a Box<FixedBlock>; (2) it is
    // ours alone now.
    drop(unsafe { Box::from_raw(block.cast::<FixedBlock>().as_ptr()) });
}

pub(super) fn new(size: usize, align: usize) -> Result<MemBlock> {
    let buffer = Buffer::zeroed(size, align)?;
    Ok(boxed_block(Box::new(FixedBlock {
        prefix: BlockPrefix::new(MemoryBlockKind::FixedSizePod, &FIXED_VTABLE),
        buffer,
    })))
}

pub(super) fn data(block: &MemBlock) -> Option<(*mut u8, usize)> {
    block_as::<FixedBlock>(block, MemoryBlockKind::FixedSizePod)
        .map(|b| (b.buffer.ptr(), b.buffer.size()))
}
