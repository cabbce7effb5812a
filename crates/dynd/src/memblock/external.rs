//! External blocks: memory owned by someone else (NumPy, Arrow, a C caller),
//! kept alive by our references and released by the owner's callback once,
//! when the last reference goes.

use super::{
    BlockPrefix, BlockStruct, BlockVTable, MemBlock, MemoryBlockHeader, MemoryBlockKind,
    boxed_block,
};
use std::ffi::c_void;
use std::ptr::NonNull;

enum Release {
    Rust(Box<dyn FnOnce() + Send>),
    C {
        object: *mut c_void,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
    },
}

#[repr(C)]
struct ExternalBlock {
    prefix: BlockPrefix,
    release: Release,
}

// SAFETY: `#[repr(C)]` with its BlockPrefix first, made with this kind by
// the constructor below; the only struct of kind External.
unsafe impl BlockStruct for ExternalBlock {
    const KIND: MemoryBlockKind = MemoryBlockKind::External;
}

static EXTERNAL_VTABLE: BlockVTable = BlockVTable {
    free: free_external,
};

/// # Safety
/// See [`BlockVTable::free`].
unsafe fn free_external(block: NonNull<MemoryBlockHeader>) {
    // SAFETY: made by `new_*` as a Box<ExternalBlock>; ours alone now.
    let block = unsafe { Box::from_raw(block.cast::<ExternalBlock>().as_ptr()) };
    match block.release {
        Release::Rust(f) => f(),
        Release::C {
            object,
            release: Some(release),
        } => {
            // SAFETY: the owner gave this callback and object together when
            // making the block (new_external_c's contract) and it is called
            // exactly once, here.
            unsafe { release(object) }
        }
        Release::C { release: None, .. } => {}
    }
}

pub(super) fn new_rust(release: Box<dyn FnOnce() + Send>) -> MemBlock {
    boxed_block(Box::new(ExternalBlock {
        prefix: BlockPrefix::new(MemoryBlockKind::External, &EXTERNAL_VTABLE),
        release: Release::Rust(release),
    }))
}

pub(super) fn new_c(
    object: *mut c_void,
    release: Option<unsafe extern "C" fn(*mut c_void)>,
) -> MemBlock {
    boxed_block(Box::new(ExternalBlock {
        prefix: BlockPrefix::new(MemoryBlockKind::External, &EXTERNAL_VTABLE),
        release: Release::C { object, release },
    }))
}
