//! Missing-value sentinels of option types (`?T`): a missing value is
//! stored as `T`'s NA value (DESIGN §4).
//!
//! | type | NA |
//! |---|---|
//! | bool | the byte 2 |
//! | signed integers | the minimum value |
//! | unsigned integers | the maximum value |
//! | float16 / float32 / float64 | the NaN with bits `0x7d2a` / `0x7f8007a2` / `0x7ff00000000007a2` (R's NA payload); other NaNs are values |
//! | bfloat16 | the NaN with bits `0x7fa2` (signalling, payload `0x22`: float32's NA truncated would be an infinity, so the low byte of R's payload instead); other NaNs are values |
//! | complex | both parts the float NA |
//! | char | `0xFFFFFFFF` (not a code point) |
//! | string, bytes, pointer | a null `begin` / pointer (an empty string has a non-null `begin`) |

use super::arrmeta;
use crate::error::{Error, Result};
use crate::types::{BuiltinType, NativeType, Type, TypeKind};
use half::f16;

/// float16 NA bits.
pub const F16_NA: u16 = <f16 as NativeType>::NA.to_bits();
/// float32 NA bits.
pub const F32_NA: u32 = <f32 as NativeType>::NA.to_bits();
/// float64 NA bits.
pub const F64_NA: u64 = <f64 as NativeType>::NA.to_bits();
/// char NA.
pub const CHAR_NA: u32 = 0xFFFF_FFFF;

/// The NA bytes of a builtin ([`NativeType::NA`]), or `None` for void.
pub(crate) fn builtin_na(b: BuiltinType) -> Option<[u8; 16]> {
    crate::with_native!(b, |T| {
        let mut out = [0u8; 16];
        let na = <T as NativeType>::NA;
        let bytes = bytemuck::bytes_of(&na);
        out[..bytes.len()].copy_from_slice(bytes);
        out
    })
}

/// Writes the NA value of option value type `tp` at `data`.
///
/// # Safety
/// 1. `data` is writable data of `tp`.
pub(crate) unsafe fn write_na(tp: &Type, data: *mut u8) -> Result<()> {
    match tp.kind() {
        TypeKind::Builtin(b) => {
            let na =
                builtin_na(*b).ok_or_else(|| Error::type_error("void has no missing value"))?;
            // SAFETY: (1) `data` has b.data_size() bytes.
            unsafe { std::ptr::copy_nonoverlapping(na.as_ptr(), data, b.data_size()) };
        }
        TypeKind::Char => {
            // SAFETY: (1) a char is 4 bytes.
            unsafe { arrmeta::write(data, CHAR_NA) }
        }
        TypeKind::String | TypeKind::Bytes => {
            // SAFETY: (1) string data is 16 bytes.
            unsafe { std::ptr::write_bytes(data, 0, 16) }
        }
        TypeKind::Pointer(_) => {
            // SAFETY: (1) a pointer is 8 bytes.
            unsafe { std::ptr::write_bytes(data, 0, 8) }
        }
        _ => return Err(Error::type_error(format!("{tp} has no missing value"))),
    }
    Ok(())
}

/// `true` when the data of option value type `tp` at `data` is its NA.
///
/// # Safety
/// 1. `data` is readable data of `tp`.
pub(crate) unsafe fn is_na(tp: &Type, data: *const u8) -> bool {
    match tp.kind() {
        TypeKind::Builtin(b) => match builtin_na(*b) {
            Some(na) => {
                // SAFETY: (1) `data` has b.data_size() bytes.
                let bytes = unsafe { std::slice::from_raw_parts(data, b.data_size()) };
                bytes == &na[..b.data_size()]
            }
            None => false,
        },
        TypeKind::Char => {
            // SAFETY: (1) a char is 4 bytes.
            let c = unsafe { arrmeta::read::<u32>(data) };
            c == CHAR_NA
        }
        TypeKind::String | TypeKind::Bytes | TypeKind::Pointer(_) => {
            // SAFETY: (1) string data and pointers start with a pointer.
            let p = unsafe { arrmeta::read::<usize>(data) };
            p == 0
        }
        _ => false,
    }
}

/// `true` when `value` stored as `b` would read back as NA (a value that
/// an option of `b` cannot hold).
pub(crate) fn is_na_value_bytes(b: BuiltinType, bytes: &[u8]) -> bool {
    builtin_na(b).is_some_and(|na| bytes == &na[..b.data_size()])
}
