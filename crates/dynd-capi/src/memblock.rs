//! Memory blocks: reference counts and the POD allocator API, on the very
//! blocks the Rust side uses (arrays, data blocks, the blockrefs in var,
//! string and pointer arrmeta).

use crate::{entry, non_null};
use dynd::Error;
use dynd::memblock::{self, MemoryBlockHeader, PodAllocatorApi};

/// `dynd_memory_block`: `{int32_t use_count; uint32_t kind;}`, the start of
/// every memory block.
pub type dynd_memory_block = MemoryBlockHeader;

/// `dynd_pod_allocator_api`: allocate, resize, finalize.
pub type dynd_pod_allocator_api = PodAllocatorApi;

/// Adds a reference to a memory block.
///
/// # Safety
/// 1. `mb` is NULL or a live memory block made by this library, to which
///    the caller holds a reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_memory_block_incref(mb: *mut dynd_memory_block) {
    const F: &str = "dynd_memory_block_incref";
    entry(F, (), || {
        let mb = non_null(mb, F, "mb")?;
        // SAFETY: (1) live, and the caller's reference keeps it so.
        unsafe { memblock::incref(mb) };
        Ok(())
    })
}

/// Drops a reference to a memory block, freeing it with the last. NULL is a
/// no-op.
///
/// # Safety
/// 1. `mb` is NULL or a live memory block made by this library, whose
///    reference the caller owns and gives up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_memory_block_decref(mb: *mut dynd_memory_block) {
    entry("dynd_memory_block_decref", (), || {
        if let Some(mb) = std::ptr::NonNull::new(mb) {
            // SAFETY: (1) live, and the caller's reference is consumed.
            unsafe { memblock::decref(mb) };
        }
        Ok(())
    })
}

/// The POD allocator API of a POD allocator block (the blockref in var dim,
/// string and bytes arrmeta), or NULL with `DYND_ERR_INVALID_ARGUMENT` for
/// NULL or another kind of block. The table is static: never free it.
///
/// # Safety
/// 1. `mb` is NULL or a live memory block made by this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dynd_memory_block_pod_allocator_api(
    mb: *mut dynd_memory_block,
) -> *const dynd_pod_allocator_api {
    const F: &str = "dynd_memory_block_pod_allocator_api";
    entry(F, std::ptr::null(), || {
        let mb = non_null(mb, F, "mb")?;
        // SAFETY: (1).
        match unsafe { memblock::pod_allocator_api(mb) } {
            Some(api) => Ok(api as *const PodAllocatorApi),
            None => {
                // SAFETY: (1) live.
                let kind = unsafe { mb.as_ref() }.kind;
                Err(Error::invalid_argument(format!(
                    "{F}: the memory block (kind {kind}) is not a POD allocator block"
                )))
            }
        }
    })
}
