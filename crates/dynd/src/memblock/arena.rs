//! The POD allocator block: an arena for variable-sized data (strings, var
//! dims), with the allocate / resize-the-latest / finalize API of the seeds.
//!
//! Memory comes in chunks that never move (data pointers into them stay
//! valid for the block's life); each new chunk is at least twice the
//! previous one. Bytes past the arena's cursor are always zero, so every
//! allocation starts zero-filled (an empty string or var dim, a null blockref).
//!
//! The state sits behind a mutex: kernels running on several threads may
//! allocate output from the same block. "The latest allocation" is tracked
//! per block; two threads growing their own latest allocations in the same
//! block at once will see an error from `resize` rather than corrupt memory.

use super::fixed::Buffer;
use super::{
    BlockPrefix, BlockStruct, BlockVTable, MemBlock, MemoryBlockHeader, MemoryBlockKind, block_as,
    boxed_block,
};
use crate::error::{Error, Result};
use crate::types::align_up;
use std::ptr::NonNull;
use std::sync::Mutex;

const MIN_CHUNK: usize = 256;
const MAX_GROWTH_CHUNK: usize = 64 << 20;

struct State {
    chunks: Vec<Buffer>,
    /// Bytes used in the last chunk.
    cursor: usize,
    /// The most recent allocation: (begin, size).
    latest: Option<(usize, usize)>,
    next_chunk: usize,
    finalized: bool,
}

#[repr(C)]
struct ArenaBlock {
    prefix: BlockPrefix,
    state: Mutex<State>,
}

// SAFETY: `#[repr(C)]` with its BlockPrefix first, made with this kind by
// the constructor below; the only struct of kind PodAllocator.
unsafe impl BlockStruct for ArenaBlock {
    const KIND: MemoryBlockKind = MemoryBlockKind::PodAllocator;
}

static ARENA_VTABLE: BlockVTable = BlockVTable { free: free_arena };

/// # Safety
/// See [`BlockVTable::free`].
unsafe fn free_arena(block: NonNull<MemoryBlockHeader>) {
    // SAFETY: made by `new` as a Box<ArenaBlock>; ours alone now.
    drop(unsafe { Box::from_raw(block.cast::<ArenaBlock>().as_ptr()) });
}

pub(super) fn new(initial_capacity: usize) -> MemBlock {
    boxed_block(Box::new(ArenaBlock {
        prefix: BlockPrefix::new(MemoryBlockKind::PodAllocator, &ARENA_VTABLE),
        state: Mutex::new(State {
            chunks: Vec::new(),
            cursor: 0,
            latest: None,
            next_chunk: initial_capacity.max(MIN_CHUNK),
            finalized: false,
        }),
    }))
}

pub(super) fn allocator(block: &MemBlock) -> Option<PodAllocator<'_>> {
    block_as::<ArenaBlock>(block).map(|b| PodAllocator { block: b })
}

/// The allocator interface of a POD allocator block.
#[derive(Clone, Copy)]
pub struct PodAllocator<'a> {
    block: &'a ArenaBlock,
}

impl State {
    fn last_range(&self) -> Option<(usize, usize)> {
        self.chunks.last().map(|c| (c.ptr() as usize, c.size()))
    }

    /// Room for `size` bytes at `align` in a new chunk.
    fn new_chunk(&mut self, size: usize, align: usize) -> Result<()> {
        let need = size
            .checked_add(align)
            .ok_or_else(|| Error::alloc(format!("cannot allocate {size} bytes")))?;
        let chunk_size = self.next_chunk.max(need);
        let chunk = Buffer::zeroed(chunk_size, 16)?;
        self.next_chunk = chunk_size
            .saturating_mul(2)
            .min(MAX_GROWTH_CHUNK)
            .max(self.next_chunk);
        self.chunks.push(chunk);
        self.cursor = 0;
        Ok(())
    }

    /// The errors of an allocation at `align`, before any size: a
    /// finalized block, an alignment that is not a power of two up to 4096.
    fn check_allocation(&self, align: usize) -> Result<()> {
        if self.finalized {
            return Err(Error::invalid_argument(
                "cannot allocate from a finalized memory block",
            ));
        }
        if !align.is_power_of_two() || align > 4096 {
            return Err(Error::invalid_argument(format!(
                "allocation alignment {align} is not a power of two up to 4096"
            )));
        }
        Ok(())
    }

    fn allocate(&mut self, size: usize, align: usize) -> Result<usize> {
        self.check_allocation(align)?;
        let fits = |s: &State| {
            s.last_range().and_then(|(base, len)| {
                let begin = align_up(base + s.cursor, align);
                (begin.checked_add(size)? <= base + len).then_some(begin)
            })
        };
        let begin = match fits(self) {
            Some(b) => b,
            None => {
                self.new_chunk(size, align)?;
                fits(self).ok_or_else(|| Error::alloc(format!("cannot allocate {size} bytes")))?
            }
        };
        let (base, _) = self.last_range().unwrap_or((0, 0));
        self.cursor = begin + size - base;
        self.latest = Some((begin, size));
        Ok(begin)
    }

    fn resize(&mut self, begin: usize, new_size: usize) -> Result<usize> {
        let Some((latest, old_size)) = self.latest else {
            return Err(Error::invalid_argument(
                "resize called on a memory block with no allocation to resize",
            ));
        };
        if latest != begin {
            return Err(Error::invalid_argument(
                "resize must be given the most recent allocation of the memory block",
            ));
        }
        if self.finalized {
            return Err(Error::invalid_argument(
                "cannot resize in a finalized memory block",
            ));
        }
        let (base, len) = self.last_range().unwrap_or((0, 0));
        if begin
            .checked_add(new_size)
            .is_some_and(|end| end <= base + len)
        {
            if new_size < old_size {
                // Keep the invariant: everything past the cursor is zero.
                // SAFETY: [begin+new_size, begin+old_size) lies in the last
                // chunk, inside the latest allocation that we own here.
                unsafe {
                    std::ptr::write_bytes((begin + new_size) as *mut u8, 0, old_size - new_size)
                };
            }
            self.cursor = begin + new_size - base;
            self.latest = Some((begin, new_size));
            return Ok(begin);
        }
        // Move to a new chunk: copy, then zero the old bytes so the old
        // chunk's tail stays zero (its cursor is rolled back to `begin`).
        self.new_chunk(new_size, 16)?;
        let (nbase, _) = self.last_range().unwrap_or((0, 0));
        let nbegin = align_up(nbase, 16);
        // SAFETY: the old allocation [begin, begin+old_size) and the new one
        // [nbegin, nbegin+new_size) are in different chunks, so they do not
        // overlap; both are owned by this arena, under the lock.
        unsafe {
            std::ptr::copy_nonoverlapping(
                begin as *const u8,
                nbegin as *mut u8,
                old_size.min(new_size),
            );
            std::ptr::write_bytes(begin as *mut u8, 0, old_size);
        }
        self.cursor = nbegin + new_size - nbase;
        self.latest = Some((nbegin, new_size));
        Ok(nbegin)
    }
}

impl PodAllocator<'_> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock means a panic while the state was locked; the
        // state is only changed after every fallible step, so it is intact.
        self.block.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Allocates `size` zero bytes aligned to `align`; returns `begin` (the
    /// end is `begin + size`).
    pub fn allocate(&self, size: usize, align: usize) -> Result<*mut u8> {
        self.lock().allocate(size, align).map(|p| p as *mut u8)
    }

    /// Allocates `size` bytes aligned to `align` that the caller overwrites
    /// in full before anyone reads them: bytes that are zero or those of a
    /// freed block, never uninitialized memory. Large requests (64 KiB and
    /// more) get a chunk of their own that skips zeroing (a reused mapping
    /// need not be cleared first), and are not "the latest allocation":
    /// [`PodAllocator::resize`] refuses them. Smaller ones are
    /// [`PodAllocator::allocate`]'s.
    pub fn allocate_for_overwrite(&self, size: usize, align: usize) -> Result<*mut u8> {
        const DEDICATED: usize = 64 << 10;
        if size < DEDICATED {
            return self.allocate(size, align);
        }
        let mut state = self.lock();
        state.check_allocation(align)?;
        let chunk = Buffer::new(size, align.max(16), false)?;
        let begin = chunk.ptr();
        // The chunk is full: the next allocation starts a new (zeroed)
        // chunk, so "everything past the cursor is zero" still holds.
        state.cursor = chunk.size();
        state.chunks.push(chunk);
        state.latest = None;
        Ok(begin)
    }

    /// Resizes the most recent allocation (which must start at `begin`) to
    /// `new_size` bytes, in place when it can, else by moving it; returns
    /// the (possibly new) begin. Growth is zero-filled.
    pub fn resize(&self, begin: *mut u8, new_size: usize) -> Result<*mut u8> {
        self.lock()
            .resize(begin as usize, new_size)
            .map(|p| p as *mut u8)
    }

    /// Moves every chunk of `other` (another POD allocator block) into this
    /// block, without copying: the data `other` handed out stays where it
    /// is and is from now on owned (and freed) by this block. `other` is
    /// left empty, as if new. This block's latest allocation and cursor are
    /// kept (the chunks go before its last one). Joins arenas filled in
    /// parallel (the JSON Lines reader) into one block.
    ///
    /// Errors: `InvalidArgument` when `other` is this block.
    pub fn absorb(&self, other: &PodAllocator<'_>) -> Result<()> {
        if std::ptr::eq(self.block, other.block) {
            return Err(Error::invalid_argument(
                "a memory block cannot absorb itself",
            ));
        }
        // One lock at a time: no lock order to get wrong.
        let taken = {
            let mut o = other.lock();
            o.cursor = 0;
            o.latest = None;
            std::mem::take(&mut o.chunks)
        };
        let mut state = self.lock();
        if state.chunks.is_empty() {
            state.cursor = taken.last().map_or(0, Buffer::size);
            state.chunks = taken;
        } else {
            let at = state.chunks.len() - 1;
            state.chunks.splice(at..at, taken);
        }
        Ok(())
    }

    /// Leases the free room of the last chunk (or of a new chunk, when
    /// that room is under `min` bytes) to one writer, who carves
    /// allocations from it with [`Lease::take`] without taking the block's
    /// lock; a parser allocating a row or a string per value pays a bump
    /// of a cursor instead of a lock and an unlock. Until
    /// [`PodAllocator::end_lease`], other allocations go to a new chunk,
    /// and nothing is "the latest allocation" for [`PodAllocator::resize`].
    ///
    /// Errors: those of [`PodAllocator::allocate`].
    pub fn lease(&self, min: usize) -> Result<Lease> {
        let mut state = self.lock();
        state.check_allocation(16)?;
        let room = |s: &State| {
            s.last_range().map(|(base, len)| {
                let begin = align_up(base + s.cursor, 16).min(base + len);
                (begin, base + len)
            })
        };
        let (begin, end) = match room(&state) {
            Some((b, e)) if e - b >= min => (b, e),
            _ => {
                state.new_chunk(min, 16)?;
                room(&state).ok_or_else(|| Error::alloc(format!("cannot allocate {min} bytes")))?
            }
        };
        let (base, len) = state.last_range().unwrap_or((0, 0));
        state.cursor = len;
        state.latest = None;
        Ok(Lease {
            chunk: base,
            next: begin,
            end,
        })
    }

    /// Ends `lease`: its unused tail (still zero) goes back to the block
    /// when nothing was allocated from the block since the lease began;
    /// else it stays unused.
    pub fn end_lease(&self, lease: Lease) {
        let mut state = self.lock();
        if let Some((base, len)) = state.last_range()
            && base == lease.chunk
            && state.cursor == len
            && lease.end == base + len
            && !state.finalized
        {
            state.cursor = lease.next - base;
        }
    }

    /// Marks the block finished: later allocate and resize calls fail.
    pub fn finalize(&self) {
        self.lock().finalized = true;
    }

    /// Total bytes reserved in chunks (for tests and diagnostics).
    pub fn capacity(&self) -> usize {
        self.lock().chunks.iter().map(Buffer::size).sum()
    }

    /// Each chunk's `(address, bytes)`, for tests that check where data
    /// lies.
    #[cfg(test)]
    pub(crate) fn chunk_ranges(&self) -> Vec<(usize, usize)> {
        let s = self.lock();
        s.chunks
            .iter()
            .map(|c| (c.ptr() as usize, c.size()))
            .collect()
    }
}

/// Room in a POD allocator block held by one writer
/// ([`PodAllocator::lease`]): `[next, end)` is free and zero. Allocations
/// are bumps of `next`; the most recent one can grow or shrink in place.
/// Keeps the block's rule that every byte past a cursor is zero: what a
/// shrink gives back is zeroed again.
#[derive(Debug)]
pub struct Lease {
    /// The chunk's start (which chunk the lease is in).
    chunk: usize,
    next: usize,
    end: usize,
}

impl Lease {
    /// `size` zero bytes at `align` (a power of two), or `None` when the
    /// lease has no room for them.
    #[inline]
    pub fn take(&mut self, size: usize, align: usize) -> Option<*mut u8> {
        let begin = align_up(self.next, align);
        let end = begin.checked_add(size)?;
        if end > self.end {
            return None;
        }
        self.next = end;
        Some(begin as *mut u8)
    }

    /// Resizes the most recent allocation `[begin, begin + old)` to `new`
    /// bytes in place: `false` (and nothing changed) when it is not the
    /// most recent one or the lease has no room to grow it. Growth is zero;
    /// bytes given back are zeroed.
    #[inline]
    pub fn resize_latest(&mut self, begin: *mut u8, old: usize, new: usize) -> bool {
        let begin = begin as usize;
        if begin.checked_add(old) != Some(self.next) {
            return false;
        }
        let Some(end) = begin.checked_add(new).filter(|&e| e <= self.end) else {
            return false;
        };
        if new < old {
            // SAFETY: [begin+new, begin+old) is the tail of this lease's
            // latest allocation, inside the leased room.
            unsafe { std::ptr::write_bytes(end as *mut u8, 0, old - new) };
        }
        self.next = end;
        true
    }

    /// Free bytes left.
    pub fn room(&self) -> usize {
        self.end - self.next
    }
}

/// The C allocator API table (the ABI's `dynd_pod_allocator_api`).
#[repr(C)]
pub struct PodAllocatorApi {
    /// Allocates `size_bytes` at `alignment`; writes begin and end.
    pub allocate: unsafe extern "C" fn(
        block: *mut MemoryBlockHeader,
        size_bytes: isize,
        alignment: isize,
        out_begin: *mut *mut u8,
        out_end: *mut *mut u8,
    ) -> i32,
    /// Resizes the latest allocation, updating begin and end.
    pub resize: unsafe extern "C" fn(
        block: *mut MemoryBlockHeader,
        size_bytes: isize,
        inout_begin: *mut *mut u8,
        inout_end: *mut *mut u8,
    ) -> i32,
    /// Finalizes the block.
    pub finalize: unsafe extern "C" fn(block: *mut MemoryBlockHeader),
}

const _: () = assert!(std::mem::size_of::<PodAllocatorApi>() == 3 * std::mem::size_of::<usize>());

/// The one allocator API table.
pub static POD_ALLOCATOR_API: PodAllocatorApi = PodAllocatorApi {
    allocate: c_allocate,
    resize: c_resize,
    finalize: c_finalize,
};

/// The arena behind a C block pointer, or an error for anything else.
///
/// # Safety
/// 1. `block` is null or points at a live memory block made by this crate.
unsafe fn c_arena<'a>(block: *mut MemoryBlockHeader) -> Result<&'a ArenaBlock> {
    let Some(ptr) = NonNull::new(block) else {
        return Err(Error::invalid_argument("memory block pointer is NULL"));
    };
    // SAFETY: (1) non-null, so it points at a live block.
    if unsafe { ptr.as_ref() }.kind != MemoryBlockKind::PodAllocator as u32 {
        return Err(Error::invalid_argument(
            "memory block is not a POD allocator block",
        ));
    }
    // SAFETY: its kind says it was allocated as an ArenaBlock.
    Ok(unsafe { ptr.cast::<ArenaBlock>().as_ref() })
}

fn report(r: Result<()>) -> i32 {
    match r {
        Ok(()) => 0,
        Err(e) => {
            crate::error::set_last_error(&e);
            -1
        }
    }
}

/// What the C allocate and resize calls share: checks `block` and the two
/// range pointers (`{ptrs}_begin` and `{ptrs}_end`, for messages), converts `size_bytes`, gets the
/// range's begin from `f` and writes `[begin, begin + size)` out; the
/// status the ABI returns.
///
/// # Safety
/// 1. `block` is null or a memory block from this library; `begin` and
///    `end` are null or readable and writable (ABI contract).
unsafe fn c_range(
    op: &str,
    ptrs: &str,
    block: *mut MemoryBlockHeader,
    size_bytes: isize,
    (begin, end): (*mut *mut u8, *mut *mut u8),
    f: impl FnOnce(PodAllocator<'_>, usize) -> Result<*mut u8>,
) -> i32 {
    report((|| {
        // SAFETY: (1).
        let arena = unsafe { c_arena(block) }?;
        if begin.is_null() || end.is_null() {
            return Err(Error::invalid_argument(format!(
                "{op}: {ptrs}_begin or {ptrs}_end is NULL"
            )));
        }
        let size = usize::try_from(size_bytes)
            .map_err(|_| Error::invalid_argument(format!("{op}: negative size {size_bytes}")))?;
        let first = f(PodAllocator { block: arena }, size)?;
        // SAFETY: both checked non-null; writable (1).
        unsafe {
            *begin = first;
            *end = first.add(size);
        }
        Ok(())
    })())
}

unsafe extern "C" fn c_allocate(
    block: *mut MemoryBlockHeader,
    size_bytes: isize,
    alignment: isize,
    out_begin: *mut *mut u8,
    out_end: *mut *mut u8,
) -> i32 {
    let allocate = |a: PodAllocator<'_>, size| {
        let align = usize::try_from(alignment)
            .map_err(|_| Error::invalid_argument(format!("allocate: bad alignment {alignment}")))?;
        a.allocate(size, align)
    };
    // SAFETY: the C caller passes a block from this library and writable
    // out pointers, or nulls (ABI contract).
    unsafe {
        c_range(
            "allocate",
            "out",
            block,
            size_bytes,
            (out_begin, out_end),
            allocate,
        )
    }
}

unsafe extern "C" fn c_resize(
    block: *mut MemoryBlockHeader,
    size_bytes: isize,
    inout_begin: *mut *mut u8,
    inout_end: *mut *mut u8,
) -> i32 {
    let resize = |a: PodAllocator<'_>, size| {
        // SAFETY: `c_range` checked it non-null; readable (ABI contract).
        a.resize(unsafe { *inout_begin }, size)
    };
    // SAFETY: the C caller passes a block from this library and readable,
    // writable range pointers, or nulls (ABI contract).
    unsafe {
        c_range(
            "resize",
            "inout",
            block,
            size_bytes,
            (inout_begin, inout_end),
            resize,
        )
    }
}

unsafe extern "C" fn c_finalize(block: *mut MemoryBlockHeader) {
    // SAFETY: the C caller passes a block from this library (ABI contract).
    if let Ok(arena) = unsafe { c_arena(block) } {
        PodAllocator { block: arena }.finalize();
    }
}
