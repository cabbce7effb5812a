//! Compile-time checks that the Rust side matches `include/dynd.h`: every
//! struct's size, alignment and field offsets, and every constant.
//!
//! The structs the header declares are the dynd crate's own `#[repr(C)]`
//! types. Where their fields are private (the builder, the prefix), a
//! transcription of the C declaration ([`CKernelBuilderC`],
//! [`CKernelPrefixC`]) carries the offsets, and its size and alignment must
//! equal the real type's; the unit tests below then read a real builder
//! through the transcription.

use crate::array::*;
use crate::callable::*;
use crate::error::*;
use crate::kernels::*;
use crate::memblock::*;
use crate::types::*;
use dynd::ErrorKind;
use dynd::kernels::assign::ErrorMode;
use dynd::kernels::{CKernelBuilder, CKernelPrefix, KernelRequest};
use dynd::memblock::{MemoryBlockHeader, PodAllocatorApi};
use std::ffi::c_void;
use std::mem::{align_of, offset_of, size_of};

const WORD: usize = size_of::<usize>();

/// `struct dynd_ckernel_builder` exactly as the header declares it.
#[repr(C)]
pub struct CKernelBuilderC {
    /// Pointer-aligned buffer; `static_data` until it grows.
    pub data: *mut isize,
    /// Bytes in the buffer.
    pub capacity: isize,
    /// The inline buffer.
    pub static_data: [isize; 16],
}

/// `struct dynd_ckernel_prefix` exactly as the header declares it.
#[repr(C)]
pub struct CKernelPrefixC {
    /// The kernel function (single or strided, by request).
    pub function: *mut c_void,
    /// Destroys the kernel and its children.
    pub destructor: Option<unsafe extern "C" fn(*mut CKernelPrefixC)>,
}

// dynd_ckernel_builder: 18 words, {data, capacity, static_data[16]}.
const _: () = assert!(size_of::<CKernelBuilderC>() == 18 * WORD);
const _: () = assert!(offset_of!(CKernelBuilderC, data) == 0);
const _: () = assert!(offset_of!(CKernelBuilderC, capacity) == WORD);
const _: () = assert!(offset_of!(CKernelBuilderC, static_data) == 2 * WORD);
const _: () = assert!(size_of::<dynd_ckernel_builder>() == size_of::<CKernelBuilderC>());
const _: () = assert!(align_of::<dynd_ckernel_builder>() == align_of::<CKernelBuilderC>());
const _: () = assert!(size_of::<CKernelBuilder>() == 18 * WORD);

// dynd_ckernel_prefix: 2 words, {function, destructor}.
const _: () = assert!(size_of::<CKernelPrefixC>() == 2 * WORD);
const _: () = assert!(offset_of!(CKernelPrefixC, function) == 0);
const _: () = assert!(offset_of!(CKernelPrefixC, destructor) == WORD);
const _: () = assert!(size_of::<dynd_ckernel_prefix>() == size_of::<CKernelPrefixC>());
const _: () = assert!(align_of::<dynd_ckernel_prefix>() == align_of::<CKernelPrefixC>());
const _: () = assert!(size_of::<CKernelPrefix>() == 2 * WORD);

// dynd_memory_block: 8 bytes, {int32_t use_count; uint32_t kind;}.
const _: () = assert!(size_of::<dynd_memory_block>() == 8);
const _: () = assert!(align_of::<dynd_memory_block>() == 4);
const _: () = assert!(offset_of!(MemoryBlockHeader, use_count) == 0);
const _: () = assert!(offset_of!(MemoryBlockHeader, kind) == 4);

// dynd_pod_allocator_api: 3 function pointers, {allocate, resize, finalize}.
const _: () = assert!(size_of::<dynd_pod_allocator_api>() == 3 * WORD);
const _: () = assert!(align_of::<dynd_pod_allocator_api>() == WORD);
const _: () = assert!(offset_of!(PodAllocatorApi, allocate) == 0);
const _: () = assert!(offset_of!(PodAllocatorApi, resize) == WORD);
const _: () = assert!(offset_of!(PodAllocatorApi, finalize) == 2 * WORD);

// dynd_deferred_ckernel: 6 words, {ckernel_funcproto, data_types_size,
// data_dynd_types, data_ptr, instantiate_func, free_func}; the function
// pointers are nullable (Option) at one word each.
const _: () = assert!(size_of::<dynd_deferred_ckernel>() == 6 * WORD);
const _: () = assert!(align_of::<dynd_deferred_ckernel>() == WORD);
const _: () = assert!(offset_of!(dynd_deferred_ckernel, ckernel_funcproto) == 0);
const _: () = assert!(offset_of!(dynd_deferred_ckernel, data_types_size) == WORD);
const _: () = assert!(offset_of!(dynd_deferred_ckernel, data_dynd_types) == 2 * WORD);
const _: () = assert!(offset_of!(dynd_deferred_ckernel, data_ptr) == 3 * WORD);
const _: () = assert!(offset_of!(dynd_deferred_ckernel, instantiate_func) == 4 * WORD);
const _: () = assert!(offset_of!(dynd_deferred_ckernel, free_func) == 5 * WORD);
const _: () = assert!(size_of::<Option<dynd_instantiate_fn>>() == WORD);
const _: () = assert!(size_of::<Option<dynd_free_fn>>() == WORD);

// Handles are one pointer; function pointers fit in `void *function`.
const _: () = assert!(size_of::<dynd_type>() == WORD);
const _: () = assert!(size_of::<dynd_array>() == WORD);
const _: () = assert!(size_of::<dynd_callable>() == WORD);
const _: () = assert!(size_of::<dynd_expr_single_t>() == WORD);
const _: () = assert!(size_of::<dynd_expr_strided_t>() == WORD);

// Constants: the header's values are the Rust enums' discriminants.
const _: () = assert!(DYND_BUILTIN_TYPE_ID_LIMIT == 64);
const _: () = assert!(DYND_OK == 0);
const _: () = assert!(DYND_ERR_INVALID_ARGUMENT == ErrorKind::InvalidArgument as i32);
const _: () = assert!(DYND_ERR_TYPE == ErrorKind::Type as i32);
const _: () = assert!(DYND_ERR_OVERFLOW == ErrorKind::Overflow as i32);
const _: () = assert!(DYND_ERR_FRACTIONAL == ErrorKind::Fractional as i32);
const _: () = assert!(DYND_ERR_INEXACT == ErrorKind::Inexact as i32);
const _: () = assert!(DYND_ERR_INDEX == ErrorKind::Index as i32);
const _: () = assert!(DYND_ERR_BROADCAST == ErrorKind::Broadcast as i32);
const _: () = assert!(DYND_ERR_PARSE == ErrorKind::Parse as i32);
const _: () = assert!(DYND_ERR_ALLOC == ErrorKind::Alloc as i32);
const _: () = assert!(DYND_ERR_EXTERNAL == ErrorKind::External as i32);
const _: () = assert!(DYND_ASSIGN_NOCHECK == ErrorMode::NoCheck as i32);
const _: () = assert!(DYND_ASSIGN_OVERFLOW == ErrorMode::Overflow as i32);
const _: () = assert!(DYND_ASSIGN_FRACTIONAL == ErrorMode::Fractional as i32);
const _: () = assert!(DYND_ASSIGN_INEXACT == ErrorMode::Inexact as i32);
const _: () = assert!(DYND_ASSIGN_DEFAULT == ErrorMode::Default as i32);
const _: () = assert!(DYND_KERNEL_REQUEST_SINGLE == KernelRequest::Single as u32);
const _: () = assert!(DYND_KERNEL_REQUEST_STRIDED == KernelRequest::Strided as u32);

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::MaybeUninit;

    /// The real builder, read through the header's declaration.
    #[test]
    fn builder_fields_are_where_the_header_says() {
        let mut slot = MaybeUninit::<CKernelBuilderC>::uninit();
        let ckb = slot.as_mut_ptr();
        // SAFETY: a writable, aligned, unconstructed builder-sized slot.
        unsafe { dynd_ckernel_builder_construct(ckb.cast()) };
        {
            // SAFETY: constructed above; read through the C layout.
            let c = unsafe { &*ckb };
            assert_eq!(c.data, (&raw const c.static_data).cast_mut().cast());
            assert_eq!(c.capacity, 128);
            assert!(c.static_data.iter().all(|w| *w == 0));
        }
        // SAFETY: constructed and not moved.
        let status = unsafe { dynd_ckernel_builder_ensure_capacity_leaf(ckb.cast(), 1000) };
        assert_eq!(status, 0);
        {
            // SAFETY: constructed and not moved.
            let c = unsafe { &*ckb };
            assert!(c.capacity >= 1000);
            assert_ne!(c.data, (&raw const c.static_data).cast_mut().cast());
            // SAFETY: `data` is the heap buffer of `capacity` bytes.
            let bytes =
                unsafe { std::slice::from_raw_parts(c.data.cast::<u8>(), c.capacity as usize) };
            assert!(bytes.iter().all(|b| *b == 0));
        }
        // SAFETY: constructed, not moved, not used again.
        unsafe { dynd_ckernel_builder_destruct(ckb.cast()) };
    }

    /// The real prefix, read through the header's declaration: an
    /// assignment kernel's function and destructor are where C looks.
    #[test]
    fn prefix_fields_are_where_the_header_says() {
        let mut slot = MaybeUninit::<CKernelBuilderC>::uninit();
        let ckb = slot.as_mut_ptr();
        let int32 = 4 as dynd_type;
        let float64 = 14 as dynd_type;
        // SAFETY: construct a fresh slot; build at the root slot 0 with
        // builtin types (no arrmeta); call with one float64 source.
        unsafe {
            dynd_ckernel_builder_construct(ckb.cast());
            let end = dynd_make_assignment_kernel(
                ckb.cast(),
                0,
                int32,
                std::ptr::null(),
                float64,
                std::ptr::null(),
                DYND_KERNEL_REQUEST_SINGLE,
                DYND_ASSIGN_DEFAULT,
            );
            assert!(end > 0);
            let prefix = (*ckb).data.cast::<CKernelPrefixC>();
            assert!(!(*prefix).function.is_null());
            let f: dynd_expr_single_t = std::mem::transmute((*prefix).function);
            let x = 7.0f64;
            let src = [(&raw const x).cast::<u8>()];
            let mut y = 0i32;
            assert_eq!(f((&raw mut y).cast(), src.as_ptr(), prefix.cast()), 0);
            assert_eq!(y, 7);
            dynd_ckernel_builder_destruct(ckb.cast());
        }
    }
}
