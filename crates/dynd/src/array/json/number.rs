//! JSON number tokens into every number type.

use crate::error::ErrorKind;
use crate::layout::arrmeta::{self};
// fixed_string encoding and decoding are shared with the text assignment
// kernels, so JSON and casts validate alike.
use crate::types::NativeType;
use crate::types::{BuiltinType, Type, TypeKind};
use crate::with_native;

/// The builtin type of `tp` when it is an integer or real type, whose
/// values are plain JSON numbers.
pub(super) fn plain_number(tp: &Type) -> Option<BuiltinType> {
    match tp.kind() {
        TypeKind::Builtin(b) if b.is_int() || b.is_float() => Some(*b),
        _ => None,
    }
}

/// The common shape of a JSON number, `-?(0|[1-9][0-9]*)(\.[0-9]+)?`
/// with at most 19 digits and an optional exponent of at most 3 digits,
/// read in one pass. It is a shortcut only: whatever it does not take (or
/// cannot store exactly) goes to the general path, which also produces
/// every error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct QuickNumber {
    neg: bool,
    /// The integer and fraction digits as one integer (exact: at most 19
    /// digits); the value is `mantissa * 10^exp10`.
    mantissa: u64,
    exp10: i32,
    /// Written without fraction digits or exponent.
    integral: bool,
}

/// Exact powers of ten in f64 (10^22 is the largest).
const POW10_F64: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Exact powers of ten in f32 (10^10 is the largest).
const POW10_F32: [f32; 11] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];

impl QuickNumber {
    /// Reads a number at the start of `t`; returns it and its length, or
    /// `None` when `t` does not start with a number of the quick shape
    /// followed by a delimiter.
    #[inline]
    pub(super) fn scan(t: &[u8]) -> Option<(QuickNumber, usize)> {
        #[inline(always)]
        fn digits(t: &[u8], mut i: usize, m: &mut u64) -> usize {
            while let Some(&c) = t.get(i) {
                let d = c.wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                *m = m.wrapping_mul(10).wrapping_add(u64::from(d));
                i += 1;
            }
            i
        }
        let neg = t.first() == Some(&b'-');
        let int_start = usize::from(neg);
        let mut mantissa = 0;
        let mut i = digits(t, int_start, &mut mantissa);
        let int_len = i - int_start;
        if int_len == 0 || (int_len > 1 && t[int_start] == b'0') {
            return None;
        }
        let mut frac_len = 0;
        if t.get(i) == Some(&b'.') {
            let frac_start = i + 1;
            i = digits(t, frac_start, &mut mantissa);
            frac_len = i - frac_start;
            if frac_len == 0 {
                return None;
            }
        }
        let mut exp = 0i32;
        let has_exp = matches!(t.get(i), Some(b'e' | b'E'));
        if has_exp {
            i += 1;
            let exp_neg = t.get(i) == Some(&b'-');
            if matches!(t.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let exp_start = i;
            let mut e = 0u64;
            i = digits(t, exp_start, &mut e);
            if !(1..=3).contains(&(i - exp_start)) {
                return None;
            }
            // At most 999: exact in i32.
            exp = if exp_neg { -(e as i32) } else { e as i32 };
        }
        if int_len + frac_len > 19
            || t.get(i)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'.')
        {
            return None;
        }
        Some((
            QuickNumber {
                neg,
                mantissa,
                // frac_len <= 19.
                exp10: exp - frac_len as i32,
                integral: frac_len == 0 && !has_exp,
            },
            i,
        ))
    }

    /// Stores the value into `b` at `data` when that is exact and simple:
    /// an integer without fraction digits or exponent that fits `b`, or a
    /// float64 (float32) by Clinger's fast path — the mantissa at most 2^53
    /// (2^24) and the power of ten exact, so one correctly rounded
    /// multiplication or division gives the correctly rounded value.
    /// Returns whether it stored.
    ///
    /// # Safety
    /// `data` is writable data of `b`.
    #[inline]
    pub(super) unsafe fn store(self, b: BuiltinType, data: *mut u8) -> bool {
        use BuiltinType::*;
        let m = self.mantissa;
        let mag = i128::from(m);
        let int = if self.neg { -mag } else { mag };
        let e = self.exp10.unsigned_abs() as usize;
        match b {
            Float64 if m <= 1 << 53 && e < POW10_F64.len() => {
                let (m, p) = (m as f64, POW10_F64[e]);
                let v = if self.exp10 < 0 { m / p } else { m * p };
                // SAFETY: (caller) `data` holds one f64.
                unsafe { arrmeta::write(data, if self.neg { -v } else { v }) };
                true
            }
            Float32 if m <= 1 << 24 && e < POW10_F32.len() => {
                let (m, p) = (m as f32, POW10_F32[e]);
                let v = if self.exp10 < 0 { m / p } else { m * p };
                // SAFETY: (caller) `data` holds one f32.
                unsafe { arrmeta::write(data, if self.neg { -v } else { v }) };
                true
            }
            _ => with_native!(b, signed unsigned => |T| match T::try_from(int) {
                Ok(v) if self.integral => {
                    // SAFETY: (caller) `data` holds one value of `b`.
                    unsafe { v.store(data) };
                    true
                }
                _ => false,
            })
            .unwrap_or(false),
        }
    }
}

/// Parses a float token into `b` at `data`.
///
/// # Safety
/// `data` is writable data of float type `b`.
pub(super) unsafe fn store_float(
    b: BuiltinType,
    tok: &str,
    data: *mut u8,
) -> std::result::Result<(), (ErrorKind, String)> {
    let special = match tok {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    };
    let overflow = || {
        (
            ErrorKind::Overflow,
            format!("{tok} is out of range for {b}"),
        )
    };
    // SAFETY: (caller) `data` holds one value of `b`.
    unsafe {
        match b {
            BuiltinType::Float32 => {
                let v = match special {
                    Some(s) => s as f32,
                    None => tok
                        .parse::<f32>()
                        .map_err(|e| (ErrorKind::Parse, e.to_string()))?,
                };
                if special.is_none() && v.is_infinite() {
                    return Err(overflow());
                }
                arrmeta::write(data, v);
            }
            BuiltinType::Float64 => {
                let v = special
                    .map_or_else(|| tok.parse::<f64>(), Ok)
                    .map_err(|e| (ErrorKind::Parse, e.to_string()))?;
                if special.is_none() && v.is_infinite() {
                    return Err(overflow());
                }
                arrmeta::write(data, v);
            }
            // The 16-bit floats round once from the f64 value.
            _ => {
                let v = special
                    .map_or_else(|| tok.parse::<f64>(), Ok)
                    .map_err(|e| (ErrorKind::Parse, e.to_string()))?;
                with_native!(b, half => |T| {
                    let h = T::from_f64(v);
                    if special.is_none() && h.is_infinite() {
                        return Err(overflow());
                    }
                    h.store(data);
                })
                .ok_or_else(|| (ErrorKind::Type, format!("{b} is not a float type")))?;
            }
        }
    }
    Ok(())
}

/// The exact integer value of a JSON number token: `(negative, magnitude)`.
fn exact_integer(
    tok: &str,
    b: BuiltinType,
) -> std::result::Result<(bool, u128), (ErrorKind, String)> {
    if matches!(tok, "NaN" | "Infinity" | "-Infinity") {
        return Err((
            ErrorKind::Overflow,
            format!("{tok} cannot be stored in {b}"),
        ));
    }
    let (neg, rest) = match tok.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, tok),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().unwrap_or(i64::MAX)),
        None => (rest, 0),
    };
    let (int_part, frac_part) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, ""),
    };
    let digits: Vec<u8> = int_part
        .bytes()
        .chain(frac_part.bytes())
        .map(|d| d - b'0')
        .collect();
    // value = digits * 10^(exp - frac_len)
    let scale = exp.saturating_sub(frac_part.len() as i64);
    let overflow = || {
        (
            ErrorKind::Overflow,
            format!("{tok} is out of range for {b}"),
        )
    };
    let (keep, dropped): (&[u8], &[u8]) = if scale >= 0 {
        (&digits, &[])
    } else {
        let cut = digits
            .len()
            .saturating_sub(scale.unsigned_abs().min(usize::MAX as u64) as usize);
        digits.split_at(cut)
    };
    if dropped.iter().any(|&d| d != 0) {
        return Err((
            ErrorKind::Fractional,
            format!("{tok} is not an integer, so it cannot be stored in {b}"),
        ));
    }
    let mut v: u128 = 0;
    for &d in keep {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(d as u128))
            .ok_or_else(overflow)?;
    }
    if scale > 0 && v != 0 {
        for _ in 0..scale {
            v = v.checked_mul(10).ok_or_else(overflow)?;
        }
    }
    Ok((neg && v != 0, v))
}

/// Parses an integer token into `b` at `data`, range checked.
///
/// # Safety
/// `data` is writable data of integer type `b`.
pub(super) unsafe fn store_int(
    b: BuiltinType,
    tok: &str,
    data: *mut u8,
) -> std::result::Result<(), (ErrorKind, String)> {
    let (neg, mag) = exact_integer(tok, b)?;
    let overflow = || {
        (
            ErrorKind::Overflow,
            format!("{tok} is out of range for {b}"),
        )
    };
    with_native!(b, signed unsigned => |T| {
        let v = if neg {
            // Negative: the magnitude must fit as -(mag).
            let m = i128::try_from(mag)
                .ok()
                .map(|m| -m)
                .or((mag == 1u128 << 127).then_some(i128::MIN));
            m.and_then(|m| T::try_from(m).ok()).ok_or_else(overflow)?
        } else {
            T::try_from(mag).map_err(|_| overflow())?
        };
        // SAFETY: (caller) `data` holds one value of this type.
        unsafe { v.store(data) };
    })
    .ok_or_else(|| (ErrorKind::Type, format!("{b} is not an integer type")))
}
