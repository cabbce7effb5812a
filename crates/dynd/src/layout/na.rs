//! Missing values of option types (`?T`), DESIGN §4, answered in one
//! place for every option type: [`is_missing`], [`set_missing`] and
//! [`set_present`]. There are two kinds:
//!
//! - **sentinel**: `T` has an NA value (the table below); a missing value
//!   is stored as it, and `?T`'s data is `T`'s.
//! - **flag byte**: every other `T` (struct, tuple, fixed and var dims,
//!   fixed_string, fixed_bytes): `T`'s data is followed by one byte, 1
//!   present and 0 missing, at [`Type::option_flag_offset`], the whole
//!   padded to `T`'s alignment. A missing value's `T` bytes are zero (a
//!   null var element, null strings), so nothing reads stale pointers.
//!   Zeroed memory reads as missing.
//!
//! The sentinels:
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

/// The NA bytes of a builtin ([`NativeType::NA`]), or `None` for void:
/// what device code generators write and compare (DESIGN §14).
pub fn builtin_na(b: BuiltinType) -> Option<[u8; 16]> {
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

/// `true` when the element of option type `opt` at `data` is missing
/// (either kind). `false` for a type that is not an option.
///
/// # Safety
/// 1. `data` is readable data of `opt` (`opt.data_size()` bytes).
#[inline]
pub unsafe fn is_missing(opt: &Type, data: *const u8) -> bool {
    match (opt.option_value(), opt.option_flag_offset()) {
        // SAFETY: (1) the flag byte lies inside the option's data.
        (Some(_), Some(flag)) => unsafe { *data.add(flag) == 0 },
        // SAFETY: (1) a sentinel option's data is its value's.
        (Some(v), None) => unsafe { is_na(v, data) },
        (None, _) => false,
    }
}

/// Makes the element of option type `opt` at `data` missing: the NA value,
/// or zeroed value bytes and a 0 flag.
///
/// Errors: `Type` when `opt` is not an option type.
///
/// # Safety
/// 1. `data` is writable data of `opt` (`opt.data_size()` bytes). Whatever
///    the value held (a var element, strings) is dropped without being
///    freed: variable-sized data lives in arrmeta blocks, freed with them.
pub unsafe fn set_missing(opt: &Type, data: *mut u8) -> Result<()> {
    match (opt.option_value(), opt.option_flag_offset()) {
        (Some(_), Some(flag)) => {
            // SAFETY: (1) the value's bytes and the flag byte after them.
            unsafe {
                std::ptr::write_bytes(data, 0, flag);
                *data.add(flag) = 0;
            }
            Ok(())
        }
        // SAFETY: (1) a sentinel option's data is its value's.
        (Some(v), None) => unsafe { write_na(v, data) },
        (None, _) => Err(Error::type_error(format!(
            "{opt} is not an option type, so it has no missing value"
        ))),
    }
}

/// Marks the element of option type `opt` at `data` as present, once its
/// value has been written: sets the flag byte (nothing for a sentinel
/// option, whose value is its own mark, or for a type that is not an
/// option).
///
/// # Safety
/// 1. `data` is writable data of `opt` (`opt.data_size()` bytes).
#[inline]
pub unsafe fn set_present(opt: &Type, data: *mut u8) {
    if let Some(flag) = opt.option_flag_offset() {
        // SAFETY: (1) the flag byte lies inside the option's data.
        unsafe { *data.add(flag) = 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both kinds answer alike through one interface.
    #[test]
    fn missing_and_present_for_both_kinds() {
        for (ds, flag) in [
            ("?int32", None),
            ("?string", None),
            ("?{a: int32, b: int8}", Some(8)),
            ("?(int64, int8)", Some(16)),
            ("?3 * int16", Some(6)),
            ("?var * int32", Some(16)),
            ("?fixed_string[3]", Some(3)),
            ("?fixed_bytes[4, align=4]", Some(4)),
        ] {
            let tp = Type::parse(ds).unwrap();
            assert_eq!(tp.option_flag_offset(), flag, "{ds}");
            let mut buf = vec![0xAAu8; tp.data_size()];
            // SAFETY: `buf` holds one element of `tp`.
            unsafe {
                set_missing(&tp, buf.as_mut_ptr()).unwrap();
                assert!(is_missing(&tp, buf.as_ptr()), "{ds}");
                if let Some(f) = flag {
                    assert!(buf[..f].iter().all(|b| *b == 0), "{ds}: value zeroed");
                    buf[..f].fill(1);
                    set_present(&tp, buf.as_mut_ptr());
                    assert!(!is_missing(&tp, buf.as_ptr()), "{ds}");
                }
            }
        }
    }

    #[test]
    fn a_flag_option_is_padded_to_its_value_alignment() {
        for (ds, size, align) in [
            ("?{a: int32, b: int8}", 12, 4),
            ("?{a: int32}", 8, 4),
            ("?(int8, int8)", 3, 1),
            ("?var * int8", 24, 8),
            ("?0 * int64", 8, 8),
            ("?fixed_string[2, 'utf16']", 6, 2),
        ] {
            let tp = Type::parse(ds).unwrap();
            assert_eq!((tp.data_size(), tp.data_alignment()), (size, align), "{ds}");
            assert_eq!(tp.arrmeta_size(), tp.option_value().unwrap().arrmeta_size());
        }
    }

    #[test]
    fn a_type_that_is_not_an_option_is_never_missing() {
        let tp = Type::int32();
        let mut v = 0i32;
        // SAFETY: `v` is one int32.
        unsafe {
            assert!(!is_missing(&tp, (&raw const v).cast()));
            assert!(set_missing(&tp, (&raw mut v).cast()).is_err());
        }
    }
}
