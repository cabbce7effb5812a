//! The data and arrmeta layouts of DESIGN §4: what kernels and arrays both
//! read, below both of them (kernels never import `array`).
//!
//! - [`arrmeta`]: the `repr(C)` arrmeta and data structs ([`FixedDimMeta`],
//!   [`VarDimMeta`], [`VarDimData`], [`BlockrefMeta`], [`StringData`],
//!   [`PointerMeta`]) and the three arrmeta operations every type needs:
//!   construct (default layout), copy (sharing blockrefs) and destroy.
//! - [`na`]: the missing-value sentinels of option types.
//! - `text`: string bytes in and out of element data, in every encoding.
//!
//! The arrmeta sizes are the type system's (`types::FIXED_DIM_ARRMETA_SIZE`
//! and its siblings: a [`Type`](crate::Type) knows its arrmeta size without
//! knowing these structs); `arrmeta` asserts at compile time that the
//! structs have exactly those sizes and field offsets.
//!
//! ```
//! use dynd::layout::FixedDimMeta;
//! use dynd::Array;
//! let a = Array::from_json("2 * 3 * int32", "[[1, 2, 3], [4, 5, 6]]").unwrap();
//! // SAFETY: a `2 * 3 * int32` array's arrmeta starts with two FixedDimMeta.
//! let outer: FixedDimMeta = unsafe { a.arrmeta_ptr().cast::<FixedDimMeta>().read_unaligned() };
//! assert_eq!((outer.dim_size, outer.stride), (2, 12));
//! ```

pub mod arrmeta;
pub mod na;
pub(crate) mod text;

pub use arrmeta::{BlockrefMeta, FixedDimMeta, PointerMeta, StringData, VarDimData, VarDimMeta};

use crate::error::Result;

/// The bytes of string data.
///
/// # Safety
/// 1. `s` is string data whose bytes are alive for `'a`.
pub(crate) unsafe fn string_bytes<'a>(s: StringData) -> &'a [u8] {
    if s.begin.is_null() || s.end <= s.begin {
        return &[];
    }
    // SAFETY: (1) `[begin, end)` is one allocation.
    unsafe { std::slice::from_raw_parts(s.begin, s.end as usize - s.begin as usize) }
}

/// Copies `bytes` into the string/bytes blockref of `meta` and points the
/// string data at them.
///
/// # Safety
/// 1. `meta` is string or bytes arrmeta; `data` is writable StringData.
pub(crate) unsafe fn write_string(meta: *const u8, data: *mut u8, bytes: &[u8]) -> Result<()> {
    // SAFETY: (1).
    let m: BlockrefMeta = unsafe { arrmeta::read(meta) };
    // SAFETY: (1) the arrmeta's blockref is alive.
    let begin = unsafe { arrmeta::with_allocator(m.blockref, |a| a.allocate(bytes.len(), 1)) }?;
    // SAFETY: `begin` has room for bytes.len() bytes; (1) for `data`.
    unsafe { fill_string(data, begin, bytes) };
    Ok(())
}

/// Copies `bytes` to `begin` and points the string data at them.
///
/// # Safety
/// 1. `begin` has room for `bytes.len()` bytes that nothing else uses;
///    `data` is writable StringData.
pub(crate) unsafe fn fill_string(data: *mut u8, begin: *mut u8, bytes: &[u8]) {
    // SAFETY: (1).
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), begin, bytes.len());
        arrmeta::write(
            data,
            StringData {
                begin,
                end: begin.add(bytes.len()),
            },
        );
    }
}
