//! Reference-counted memory blocks (DESIGN §1.2).
//!
//! Every block starts with the C-visible header `{use_count, kind}`
//! ([`MemoryBlockHeader`], the `dynd_memory_block` of the C ABI), followed
//! by a pointer to a per-kind vtable that knows how to free it. The layout
//! follows the `bytes` crate: a pointer plus a `&'static` vtable, so code that
//! only holds a `*mut MemoryBlockHeader` (arrmeta blockrefs, C callers) can
//! incref, decref and free any kind of block.
//!
//! Kinds:
//! - [`MemoryBlockKind::Array`]: an array's preamble plus arrmeta (see
//!   [`crate::array`]).
//! - [`MemoryBlockKind::FixedSizePod`]: one zero-filled data buffer of a size
//!   known up front; large buffers use transparent huge pages.
//! - [`MemoryBlockKind::PodAllocator`]: an arena for variable-sized data
//!   (strings, var dims) with the allocate / resize-the-latest / finalize API.
//! - [`MemoryBlockKind::Object`]: like the arena, but its allocations hold
//!   elements with destructors, run when the block is freed.
//! - [`MemoryBlockKind::External`]: memory owned by someone else, released by
//!   a callback when the last reference goes (zero-copy import).
//! - [`MemoryBlockKind::Device`]: memory on an accelerator (DESIGN §14),
//!   owned by the device runtime or a foreign producer, released by a
//!   callback; the host never touches its bytes.

mod arena;
mod device;
mod external;
mod fixed;
mod object;

pub use arena::{POD_ALLOCATOR_API, PodAllocatorApi};
pub use device::DeviceId;
pub(crate) use fixed::Buffer;
pub use fixed::trim_cache;
pub use object::ElementDestructor;

use crate::error::Result;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicI32, Ordering, fence};

/// The header every memory block starts with: the C ABI's
/// `dynd_memory_block { int32_t use_count; uint32_t kind; }`.
#[repr(C)]
#[derive(Debug)]
pub struct MemoryBlockHeader {
    /// Number of live references. The block is freed when it drops to 0.
    pub use_count: AtomicI32,
    /// A [`MemoryBlockKind`] value.
    pub kind: u32,
}

const _: () = assert!(std::mem::size_of::<MemoryBlockHeader>() == 8);
const _: () = assert!(std::mem::align_of::<MemoryBlockHeader>() == 4);
const _: () = assert!(std::mem::offset_of!(MemoryBlockHeader, use_count) == 0);
const _: () = assert!(std::mem::offset_of!(MemoryBlockHeader, kind) == 4);

/// The kind of a memory block, as stored in its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum MemoryBlockKind {
    /// An array (preamble + arrmeta).
    Array = 0,
    /// Memory owned elsewhere, released by a callback.
    External = 1,
    /// One fixed-size, zero-filled buffer.
    FixedSizePod = 2,
    /// An arena for variable-sized POD data, with the allocator API.
    PodAllocator = 3,
    /// An arena whose elements have destructors.
    Object = 4,
    /// Memory on an accelerator, released by a callback (DESIGN §14).
    Device = 5,
}

impl MemoryBlockKind {
    /// The kind stored as `raw`, if it is one.
    pub fn from_raw(raw: u32) -> Option<MemoryBlockKind> {
        use MemoryBlockKind::*;
        [Array, External, FixedSizePod, PodAllocator, Object, Device]
            .into_iter()
            .find(|k| *k as u32 == raw)
    }
}

/// Per-kind operations, reached from any block pointer.
pub(crate) struct BlockVTable {
    /// Frees a block whose use count reached zero.
    ///
    /// # Safety
    /// 1. `block` points at a live block of this vtable's kind.
    /// 2. Its use count is zero and no other reference to it exists.
    pub free: unsafe fn(block: NonNull<MemoryBlockHeader>),
}

/// What every block starts with: the C header, then its vtable.
#[repr(C)]
pub(crate) struct BlockPrefix {
    pub header: MemoryBlockHeader,
    pub vtable: &'static BlockVTable,
}

const _: () = assert!(std::mem::offset_of!(BlockPrefix, header) == 0);

impl BlockPrefix {
    /// A prefix with use count 1.
    pub fn new(kind: MemoryBlockKind, vtable: &'static BlockVTable) -> BlockPrefix {
        BlockPrefix {
            header: MemoryBlockHeader {
                use_count: AtomicI32::new(1),
                kind: kind as u32,
            },
            vtable,
        }
    }
}

/// Adds one reference to a block.
///
/// # Safety
/// 1. `block` points at a live memory block made by this crate (every block
///    starts with a `BlockPrefix`), and the caller holds a reference to it.
pub unsafe fn incref(block: NonNull<MemoryBlockHeader>) {
    // SAFETY: (1) the block is live while the caller holds a reference.
    let header = unsafe { block.as_ref() };
    // Relaxed is enough for an increment: the caller already holds a
    // reference, so the block cannot be freed concurrently, and no data is
    // published by taking a new reference (the same argument as `Arc::clone`).
    let old = header.use_count.fetch_add(1, Ordering::Relaxed);
    if old <= 0 || old >= i32::MAX / 2 {
        // A count this large means leaked references (or a use after free,
        // for a count at or below zero); continuing could wrap the count and
        // free live memory, so stop the process as `Arc` does.
        std::process::abort();
    }
}

/// Drops one reference to a block, freeing it when it was the last one.
///
/// # Safety
/// 1. `block` points at a live memory block made by this crate.
/// 2. The caller owns one reference to it, which this call consumes.
pub unsafe fn decref(block: NonNull<MemoryBlockHeader>) {
    // SAFETY: (1) the block is live until the count reaches zero below.
    let header = unsafe { block.as_ref() };
    // Release: every use of the block's memory by this thread happens before
    // the count is seen to drop; the thread that frees it then synchronises
    // with the acquire fence below, so no other thread's use races the free.
    let old = header.use_count.fetch_sub(1, Ordering::Release);
    if old == 1 {
        fence(Ordering::Acquire);
        // SAFETY: (1) every block starts with a BlockPrefix, so the vtable
        // pointer is right after the header.
        let vtable = unsafe { block.cast::<BlockPrefix>().as_ref().vtable };
        // SAFETY: the count reached zero and we held the last reference, so
        // this thread has the block to itself (vtable free's 1 and 2).
        unsafe { (vtable.free)(block) };
    } else if old <= 0 {
        std::process::abort();
    }
}

/// An owned reference to a memory block. Cloning adds a reference; dropping
/// removes one; the block is freed with the last.
pub struct MemBlock {
    ptr: NonNull<MemoryBlockHeader>,
}

// SAFETY: every block kind is safe to share: the count is atomic, the arena
// and object kinds lock their state, and the fixed and external kinds are
// immutable after construction (the bytes they own are raw data whose
// synchronisation is the user's, as with any shared buffer).
unsafe impl Send for MemBlock {}
// SAFETY: as for Send.
unsafe impl Sync for MemBlock {}

impl MemBlock {
    /// Takes over one reference from a raw pointer.
    ///
    /// # Safety
    /// 1. `ptr` points at a live memory block made by this crate.
    /// 2. The caller owns one reference, which the `MemBlock` now owns.
    pub unsafe fn from_raw(ptr: NonNull<MemoryBlockHeader>) -> MemBlock {
        MemBlock { ptr }
    }

    /// A new reference to the block at `ptr`, which the caller only borrows.
    ///
    /// # Safety
    /// 1. `ptr` points at a live memory block made by this crate, kept alive
    ///    by a reference the caller holds for the duration of this call.
    pub unsafe fn from_borrowed(ptr: NonNull<MemoryBlockHeader>) -> MemBlock {
        // SAFETY: (1) is incref's (1).
        unsafe { incref(ptr) };
        MemBlock { ptr }
    }

    /// Gives up ownership of this reference, returning the raw pointer.
    pub fn into_raw(self) -> NonNull<MemoryBlockHeader> {
        let ptr = self.ptr;
        std::mem::forget(self);
        ptr
    }

    /// The raw pointer, still owned by `self`.
    pub fn as_ptr(&self) -> NonNull<MemoryBlockHeader> {
        self.ptr
    }

    fn header(&self) -> &MemoryBlockHeader {
        // SAFETY: `self` owns a reference, so the block is live.
        unsafe { self.ptr.as_ref() }
    }

    /// The block's kind.
    pub fn kind(&self) -> MemoryBlockKind {
        // Every block this crate makes has a valid kind; Array is the
        // harmless answer for an impossible value.
        MemoryBlockKind::from_raw(self.header().kind).unwrap_or(MemoryBlockKind::Array)
    }

    /// The current use count (for tests and diagnostics: other threads may
    /// change it at any time).
    pub fn use_count(&self) -> i32 {
        self.header().use_count.load(Ordering::Acquire)
    }

    /// `true` when both refer to the same block.
    pub fn ptr_eq(&self, other: &MemBlock) -> bool {
        self.ptr == other.ptr
    }
}

impl Clone for MemBlock {
    fn clone(&self) -> MemBlock {
        // SAFETY: `self` owns a reference, so the block is live.
        unsafe { incref(self.ptr) };
        MemBlock { ptr: self.ptr }
    }
}

impl Drop for MemBlock {
    fn drop(&mut self) {
        // SAFETY: `self` owns one reference, given up here.
        unsafe { decref(self.ptr) }
    }
}

impl std::fmt::Debug for MemBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemBlock")
            .field("ptr", &self.ptr)
            .field("kind", &self.kind())
            .field("use_count", &self.use_count())
            .finish()
    }
}

/// A block struct: what each block kind allocates behind its header.
///
/// # Safety
/// 1. `Self` is `#[repr(C)]` and its first field is a [`BlockPrefix`] made
///    with kind [`BlockStruct::KIND`] (so a pointer to it is a pointer to a
///    [`MemoryBlockHeader`], and the header's kind names `Self`).
/// 2. No other type implements this trait with the same `KIND`.
pub(crate) unsafe trait BlockStruct: Sized {
    /// The kind every block of this struct has.
    const KIND: MemoryBlockKind;
}

/// Hands a boxed block struct to a new owned [`MemBlock`] (its one
/// reference).
pub(crate) fn boxed_block<T: BlockStruct>(block: Box<T>) -> MemBlock {
    let raw = Box::into_raw(block);
    // SAFETY: Box::into_raw never returns null; the struct starts with its
    // header (BlockStruct 1).
    let ptr = unsafe { NonNull::new_unchecked(raw) }.cast::<MemoryBlockHeader>();
    MemBlock { ptr }
}

/// The block struct behind `block`, when the block is of `T`'s kind.
pub(crate) fn block_as<T: BlockStruct>(block: &MemBlock) -> Option<&T> {
    if block.kind() != T::KIND {
        return None;
    }
    // SAFETY: a block of kind T::KIND was allocated as a T (BlockStruct 1
    // and 2), and the reference in `block` keeps it alive for the borrow.
    Some(unsafe { block.ptr.cast::<T>().as_ref() })
}

impl MemBlock {
    /// A fixed-size block of `size` zero bytes aligned to `align` (at least
    /// 64 for 1 KiB and more; buffers of 2 MiB and more are backed by
    /// transparent huge pages).
    pub fn new_fixed(size: usize, align: usize) -> Result<MemBlock> {
        fixed::new(size, align, true)
    }

    /// A fixed-size block like [`MemBlock::new_fixed`] whose bytes are zero
    /// or the bytes of a freed block (never uninitialized memory): for data
    /// that the caller overwrites in full before anyone reads it.
    pub fn new_fixed_for_overwrite(size: usize, align: usize) -> Result<MemBlock> {
        fixed::new(size, align, false)
    }

    /// The data of a fixed-size block, or `None` for other kinds.
    pub fn fixed_data(&self) -> Option<(*mut u8, usize)> {
        fixed::data(self)
    }

    /// A POD allocator (arena) block whose first chunk has room for
    /// `initial_capacity` bytes (more chunks are added as needed, each twice
    /// the previous).
    pub fn new_pod_allocator(initial_capacity: usize) -> MemBlock {
        arena::new(initial_capacity)
    }

    /// An object block: an arena whose allocations hold elements with
    /// destructors, run once each when the block is freed.
    pub fn new_object() -> MemBlock {
        object::new()
    }

    /// An external block: releases a foreign owner by calling `release` once
    /// when the last reference goes.
    pub fn new_external(release: impl FnOnce() + Send + 'static) -> MemBlock {
        external::new_rust(Box::new(release))
    }

    /// An external block for a C owner: calls `release(object)` once when
    /// the last reference goes (`release` may be `None`: borrowed memory that
    /// outlives every array made over it).
    pub fn new_external_c(
        object: *mut std::ffi::c_void,
        release: Option<unsafe extern "C" fn(*mut std::ffi::c_void)>,
    ) -> MemBlock {
        external::new_c(object, release)
    }

    /// A device block (DESIGN §14): device memory that `release` gives back
    /// (to the device runtime, or to a foreign producer) once, when the
    /// last reference goes. The block holds no address: arrays over it
    /// carry their data pointer, a device address the host never
    /// dereferences.
    pub fn new_device(device: DeviceId, release: impl FnOnce() + Send + 'static) -> MemBlock {
        device::new(device, None, Box::new(release))
    }

    /// [`MemBlock::new_device`] of an allocation a device runtime made:
    /// `bytes` bytes at device address `addr`, which
    /// [`MemBlock::device_span`] gives back (what a device kernel that
    /// writes a mirror of a block, as ragged results do, allocates).
    pub fn new_device_span(
        device: DeviceId,
        addr: *mut u8,
        bytes: usize,
        release: impl FnOnce() + Send + 'static,
    ) -> MemBlock {
        device::new(device, Some((addr as usize, bytes)), Box::new(release))
    }

    /// The device address and length of a block a device runtime
    /// allocated ([`MemBlock::new_device_span`]); `None` for other blocks.
    pub fn device_span(&self) -> Option<(*mut u8, usize)> {
        device::span_of(self).map(|(a, n)| (a as *mut u8, n))
    }

    /// Where the block's bytes live: the device of a device block,
    /// [`DeviceId::Cpu`] for every other kind.
    pub fn device(&self) -> DeviceId {
        device::device_of(self)
    }
}

pub use arena::{Lease, PodAllocator};
pub use object::ObjectAllocator;

impl MemBlock {
    /// The allocator interface of a POD allocator block.
    pub fn pod_allocator(&self) -> Option<PodAllocator<'_>> {
        arena::allocator(self)
    }

    /// The allocator interface of an object block.
    pub fn object_allocator(&self) -> Option<ObjectAllocator<'_>> {
        object::allocator(self)
    }
}

/// The C allocator API for a block pointer (the ABI's
/// `dynd_memory_block_pod_allocator_api`): `Some` for POD allocator blocks.
///
/// # Safety
/// 1. `block` points at a live memory block made by this crate.
pub unsafe fn pod_allocator_api(
    block: NonNull<MemoryBlockHeader>,
) -> Option<&'static PodAllocatorApi> {
    // SAFETY: (1) the block is live.
    let kind = unsafe { block.as_ref() }.kind;
    (kind == MemoryBlockKind::PodAllocator as u32).then_some(&POD_ALLOCATOR_API)
}

#[cfg(test)]
mod tests;
