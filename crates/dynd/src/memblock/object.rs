//! The object block: variable-sized data whose elements need destructors.
//!
//! Each allocation is `count` zero-filled elements of one size and alignment
//! plus the destructor to run on each; when the block is freed every
//! destructor runs exactly once, in allocation order, before the memory goes.

use super::fixed::Buffer;
use super::{
    BlockPrefix, BlockStruct, BlockVTable, MemBlock, MemoryBlockHeader, MemoryBlockKind, block_as,
    boxed_block,
};
use crate::error::{Error, Result};
use std::ptr::NonNull;
use std::sync::Mutex;

/// Destroys one element in place. It must not unwind.
pub type ElementDestructor = unsafe extern "C" fn(element: *mut u8);

struct Allocation {
    buffer: Buffer,
    count: usize,
    elem_size: usize,
    destructor: ElementDestructor,
}

#[repr(C)]
struct ObjectBlock {
    prefix: BlockPrefix,
    allocations: Mutex<Vec<Allocation>>,
}

// SAFETY: `#[repr(C)]` with its BlockPrefix first, made with this kind by
// the constructor below; the only struct of kind Object.
unsafe impl BlockStruct for ObjectBlock {
    const KIND: MemoryBlockKind = MemoryBlockKind::Object;
}

static OBJECT_VTABLE: BlockVTable = BlockVTable { free: free_object };

/// # Safety
/// See [`BlockVTable::free`].
unsafe fn free_object(block: NonNull<MemoryBlockHeader>) {
    // SAFETY: made by `new` as a Box<ObjectBlock>; ours alone now.
    let block = unsafe { Box::from_raw(block.cast::<ObjectBlock>().as_ptr()) };
    let allocations = block
        .allocations
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    for a in &allocations {
        for i in 0..a.count {
            // SAFETY: element i lies inside the allocation (count * elem_size
            // bytes), was zero-filled or initialised by its owner, and is
            // destroyed exactly once, here.
            unsafe { (a.destructor)(a.buffer.ptr().add(i * a.elem_size)) };
        }
    }
}

pub(super) fn new() -> MemBlock {
    boxed_block(Box::new(ObjectBlock {
        prefix: BlockPrefix::new(MemoryBlockKind::Object, &OBJECT_VTABLE),
        allocations: Mutex::new(Vec::new()),
    }))
}

pub(super) fn allocator(block: &MemBlock) -> Option<ObjectAllocator<'_>> {
    block_as::<ObjectBlock>(block).map(|b| ObjectAllocator { block: b })
}

/// The allocator interface of an object block.
#[derive(Clone, Copy)]
pub struct ObjectAllocator<'a> {
    block: &'a ObjectBlock,
}

impl ObjectAllocator<'_> {
    /// Allocates `count` zero-filled elements of `elem_size` bytes aligned to
    /// `align`; `destructor` runs on each when the block is freed, so each
    /// element must be valid for it from now on (all-zero bytes included).
    pub fn allocate(
        &self,
        count: usize,
        elem_size: usize,
        align: usize,
        destructor: ElementDestructor,
    ) -> Result<*mut u8> {
        let size = count.checked_mul(elem_size).ok_or_else(|| {
            Error::alloc(format!(
                "cannot allocate {count} elements of {elem_size} bytes"
            ))
        })?;
        let buffer = Buffer::zeroed(size, align)?;
        let ptr = buffer.ptr();
        self.block
            .allocations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Allocation {
                buffer,
                count,
                elem_size,
                destructor,
            });
        Ok(ptr)
    }
}
