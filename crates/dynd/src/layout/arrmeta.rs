//! Arrmeta and data layouts of DESIGN §4, and the three arrmeta operations
//! every type needs: construct (default layout), copy (sharing blockrefs)
//! and destroy.
//!
//! Arrmeta is raw bytes: outside kernels (C, Numba) read it by the fixed
//! layouts below. A blockref field holds one owned reference to a memory
//! block (or null).

use crate::error::Result;
use crate::memblock::{self, MemBlock, MemoryBlockHeader};
use crate::types::{Type, TypeKind};
use std::ptr::NonNull;

/// Arrmeta of `N * T`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedDimMeta {
    /// Number of elements.
    pub dim_size: isize,
    /// Bytes from one element to the next (may be 0 or negative).
    pub stride: isize,
}

/// Arrmeta of `var * T`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarDimMeta {
    /// The block the elements live in (an owned reference; may be null).
    pub blockref: *mut MemoryBlockHeader,
    /// Bytes from one element to the next.
    pub stride: isize,
    /// Bytes from `begin` to element 0.
    pub offset: isize,
}

/// Data of `var * T`: element `i` is at `begin + offset + i * stride`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarDimData {
    /// Start of the elements (before the arrmeta offset is added).
    pub begin: *mut u8,
    /// Number of elements.
    pub size: usize,
}

/// Arrmeta of `string` and `bytes`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockrefMeta {
    /// The block the bytes live in (an owned reference; may be null).
    pub blockref: *mut MemoryBlockHeader,
}

/// Data of `string` and `bytes`: the bytes `[begin, end)`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StringData {
    /// First byte.
    pub begin: *mut u8,
    /// One past the last byte.
    pub end: *mut u8,
}

/// Arrmeta of `pointer[T]`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointerMeta {
    /// The block the target lives in (an owned reference; may be null).
    pub blockref: *mut MemoryBlockHeader,
    /// Bytes added to the stored pointer.
    pub offset: isize,
}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<FixedDimMeta>() == crate::types::FIXED_DIM_ARRMETA_SIZE);
    assert!(offset_of!(FixedDimMeta, stride) == 8);
    assert!(size_of::<VarDimMeta>() == crate::types::VAR_DIM_ARRMETA_SIZE);
    assert!(offset_of!(VarDimMeta, stride) == 8);
    assert!(offset_of!(VarDimMeta, offset) == 16);
    assert!(size_of::<VarDimData>() == 16);
    assert!(size_of::<BlockrefMeta>() == crate::types::BLOCKREF_ARRMETA_SIZE);
    assert!(size_of::<StringData>() == 16);
    assert!(size_of::<PointerMeta>() == crate::types::POINTER_ARRMETA_SIZE);
    assert!(offset_of!(PointerMeta, offset) == 8);
};

/// Reads a `T` from possibly unaligned memory.
///
/// # Safety
/// 1. `p` is valid for reading `size_of::<T>()` bytes holding a valid `T`.
#[inline]
pub(crate) unsafe fn read<T: Copy>(p: *const u8) -> T {
    // SAFETY: (1).
    unsafe { std::ptr::read_unaligned(p as *const T) }
}

/// Reads a dim's arrmeta `T` (a [`FixedDimMeta`] or a [`VarDimMeta`]) at
/// `meta`, with where its element's arrmeta starts: just after it.
///
/// # Safety
/// 1. `meta` is a dim's arrmeta of type `T`, followed by its element's.
#[inline]
pub(crate) unsafe fn read_dim<T: Copy>(meta: *const u8) -> (T, *const u8) {
    // SAFETY: (1): a `T` at `meta`, and the element's arrmeta after it.
    unsafe { (read(meta), meta.add(size_of::<T>())) }
}

/// Writes a `T` to possibly unaligned memory.
///
/// # Safety
/// 1. `p` is valid for writing `size_of::<T>()` bytes.
#[inline]
pub(crate) unsafe fn write<T: Copy>(p: *mut u8, value: T) {
    // SAFETY: (1).
    unsafe { std::ptr::write_unaligned(p as *mut T, value) }
}

/// Calls `f` with the address of every blockref field in `tp`'s arrmeta at
/// `meta`, outermost first.
///
/// # Safety
/// 1. `meta` points at `tp.arrmeta_size()` bytes of arrmeta for `tp`.
pub(crate) unsafe fn for_each_blockref(
    tp: &Type,
    meta: *mut u8,
    f: &mut dyn FnMut(*mut *mut MemoryBlockHeader),
) {
    if !tp.has_blockref() {
        return;
    }
    match tp.kind() {
        TypeKind::FixedDim { elem, .. } => {
            // SAFETY: (1) the element's arrmeta follows the fixed dim's.
            unsafe { for_each_blockref(elem, meta.add(size_of::<FixedDimMeta>()), f) }
        }
        TypeKind::VarDim { elem } => {
            f(meta as *mut *mut MemoryBlockHeader);
            // SAFETY: (1) the element's arrmeta follows the var dim's.
            unsafe { for_each_blockref(elem, meta.add(size_of::<VarDimMeta>()), f) }
        }
        TypeKind::String | TypeKind::Bytes => f(meta as *mut *mut MemoryBlockHeader),
        TypeKind::Pointer(target) => {
            f(meta as *mut *mut MemoryBlockHeader);
            // SAFETY: (1) the target's arrmeta follows the pointer's.
            unsafe { for_each_blockref(target, meta.add(size_of::<PointerMeta>()), f) }
        }
        TypeKind::Struct(fields) | TypeKind::Tuple(fields) => {
            for (t, off) in fields.types().iter().zip(fields.arrmeta_offsets()) {
                // SAFETY: (1) each field's arrmeta is at its recorded offset.
                unsafe { for_each_blockref(t, meta.add(*off), f) }
            }
        }
        TypeKind::Option(value) => {
            // SAFETY: (1) an option's arrmeta is its value's.
            unsafe { for_each_blockref(value, meta, f) }
        }
        _ => {}
    }
}

/// Fills zeroed arrmeta with the default layout for `tp`: C-order strides
/// for fixed dims, and a fresh POD allocator block for each var dim,
/// string and bytes field. Pointer blockrefs stay null.
///
/// # Safety
/// 1. `meta` points at `tp.arrmeta_size()` writable, zeroed bytes.
/// 2. `tp` is concrete.
pub(crate) unsafe fn construct_default(tp: &Type, meta: *mut u8) {
    match tp.kind() {
        TypeKind::FixedDim { size, elem } => {
            let m = FixedDimMeta {
                dim_size: *size as isize,
                stride: elem.data_size() as isize,
            };
            // SAFETY: (1) room for the fixed dim's arrmeta, then the element's.
            unsafe {
                write(meta, m);
                construct_default(elem, meta.add(size_of::<FixedDimMeta>()));
            }
        }
        TypeKind::VarDim { elem } => {
            let m = VarDimMeta {
                blockref: MemBlock::new_pod_allocator(0).into_raw().as_ptr(),
                stride: elem.data_size() as isize,
                offset: 0,
            };
            // SAFETY: (1) as above; the new reference moves into the arrmeta.
            unsafe {
                write(meta, m);
                construct_default(elem, meta.add(size_of::<VarDimMeta>()));
            }
        }
        TypeKind::String | TypeKind::Bytes => {
            let m = BlockrefMeta {
                blockref: MemBlock::new_pod_allocator(0).into_raw().as_ptr(),
            };
            // SAFETY: (1).
            unsafe { write(meta, m) }
        }
        TypeKind::Pointer(target) => {
            // SAFETY: (1) a null blockref and zero offset are already there.
            unsafe { construct_default(target, meta.add(size_of::<PointerMeta>())) }
        }
        TypeKind::Struct(fields) | TypeKind::Tuple(fields) => {
            for (t, off) in fields.types().iter().zip(fields.arrmeta_offsets()) {
                // SAFETY: (1) each field's arrmeta is at its offset.
                unsafe { construct_default(t, meta.add(*off)) }
            }
        }
        TypeKind::Option(value) => {
            // SAFETY: (1).
            unsafe { construct_default(value, meta) }
        }
        _ => {}
    }
}

/// Copies arrmeta, taking a new reference to every blockref.
///
/// # Safety
/// 1. `src` is valid arrmeta for `tp`; `dst` is `tp.arrmeta_size()`
///    writable bytes not overlapping it (any content is overwritten).
pub(crate) unsafe fn copy(tp: &Type, dst: *mut u8, src: *const u8) {
    // SAFETY: (1).
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, tp.arrmeta_size());
        for_each_blockref(tp, dst, &mut |slot| {
            if let Some(b) = NonNull::new(*slot) {
                memblock::incref(b);
            }
        });
    }
}

/// Drops the references arrmeta holds.
///
/// # Safety
/// 1. `meta` is valid arrmeta for `tp`, whose references are given up here
///    (the bytes must not be used as arrmeta afterwards).
pub(crate) unsafe fn destroy(tp: &Type, meta: *mut u8) {
    // SAFETY: (1): each non-null blockref is an owned reference.
    unsafe {
        for_each_blockref(tp, meta, &mut |slot| {
            if let Some(b) = NonNull::new(*slot) {
                *slot = std::ptr::null_mut();
                memblock::decref(b);
            }
        });
    }
}

/// A new reference to a blockref stored in arrmeta, or `None` when null.
///
/// # Safety
/// 1. `blockref` is null or a live block the arrmeta holds a reference to.
pub(crate) unsafe fn blockref_clone(blockref: *mut MemoryBlockHeader) -> Option<MemBlock> {
    // SAFETY: (1) the arrmeta's reference keeps it alive during the call.
    NonNull::new(blockref).map(|b| unsafe { MemBlock::from_borrowed(b) })
}

/// Runs `f` with the POD allocator of the block `blockref` (from arrmeta),
/// without touching its reference count; errors when it is null or not an
/// allocator.
///
/// # Safety
/// 1. `blockref` is null or a live block the arrmeta holds a reference to,
///    for the whole call.
pub(crate) unsafe fn with_allocator<R>(
    blockref: *mut MemoryBlockHeader,
    f: impl FnOnce(crate::memblock::PodAllocator<'_>) -> Result<R>,
) -> Result<R> {
    let ptr = NonNull::new(blockref).ok_or_else(|| {
        crate::Error::invalid_argument(
            "cannot allocate variable-sized data: the arrmeta has no memory block",
        )
    })?;
    // SAFETY: (1) the arrmeta's reference keeps the block alive; ManuallyDrop
    // borrows that reference without giving it up.
    let block = std::mem::ManuallyDrop::new(unsafe { MemBlock::from_raw(ptr) });
    let alloc = block.pod_allocator().ok_or_else(|| {
        crate::Error::invalid_argument(
            "cannot allocate variable-sized data: the arrmeta's memory block is not a POD allocator",
        )
    })?;
    f(alloc)
}

/// The blockref slots of `tp`'s arrmeta at `meta`, outermost first.
///
/// # Safety
/// 1. `meta` is valid arrmeta of `tp`.
unsafe fn blockref_slots(tp: &Type, meta: *mut u8) -> Vec<*mut *mut MemoryBlockHeader> {
    let mut slots = Vec::new();
    // SAFETY: (1).
    unsafe { for_each_blockref(tp, meta, &mut |s| slots.push(s)) };
    slots
}

/// Moves the variable-sized data that the arrmeta `from` owns into the
/// blocks of `into` (both arrmeta of `tp`), without copying it: each POD
/// arena of `from` gives its chunks to the matching one of `into` (a block
/// `into` lacks moves over whole). How pieces computed on several threads,
/// each into arenas of its own, become one array (JSON Lines, split row
/// callables).
///
/// # Safety
/// 1. `into` and `from` are valid arrmeta of `tp`, not used by any other
///    thread during the call.
pub(crate) unsafe fn absorb_blocks(tp: &Type, into: *mut u8, from: *mut u8) -> Result<()> {
    // SAFETY: (1).
    let (dst, src) = unsafe { (blockref_slots(tp, into), blockref_slots(tp, from)) };
    for (d, s) in dst.into_iter().zip(src) {
        // SAFETY: (1) each slot is a blockref field of valid arrmeta: null
        // or an owned reference to a live block.
        unsafe {
            if (*s).is_null() {
                continue;
            }
            if (*d).is_null() {
                // A block `into` lacks (a pointer target made while
                // parsing): the reference moves over.
                *d = *s;
                *s = std::ptr::null_mut();
                continue;
            }
            with_allocator(*d, |into| with_allocator(*s, |from| into.absorb(&from)))?;
        }
    }
    Ok(())
}
