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

/// `10^n` for the digit counts of one eight-byte chunk.
const POW10_U64: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The eight bytes of `t` from `i` as a little-endian word (the first byte
/// lowest), padded with zero bytes (not digits) past the end.
#[inline(always)]
fn load8(t: &[u8], i: usize) -> u64 {
    match t.get(i..i + 8) {
        Some(b) => u64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
        None => {
            let mut buf = [0u8; 8];
            let rest = t.get(i..).unwrap_or_default();
            buf[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(buf)
        }
    }
}

/// How many of the bytes of `chunk` (from the first) are ASCII digits,
/// without a branch per byte.
#[inline(always)]
fn leading_digits(chunk: u64) -> usize {
    const LO: u64 = 0x0f0f_0f0f_0f0f_0f0f;
    // Digits become 0..=9 with a clear high nibble.
    let a = chunk ^ 0x3030_3030_3030_3030;
    // A byte is not a digit when its high nibble is set, or its low nibble
    // is 10 or more (+6 carries into bit 4, never out of the byte).
    let not_digit = (a & !LO) | (((a & LO) + 0x0606_0606_0606_0606) & 0x1010_1010_1010_1010);
    // Bit 7 of each byte that is not zero (no carry between bytes).
    let mask = (((not_digit & 0x7f7f_7f7f_7f7f_7f7f) + 0x7f7f_7f7f_7f7f_7f7f) | not_digit)
        & 0x8080_8080_8080_8080;
    (mask.trailing_zeros() / 8) as usize
}

/// The value of the first `n` (1..=8) bytes of `chunk`, all digits.
#[inline(always)]
fn digit_value(chunk: u64, n: usize) -> u64 {
    // The digits' values moved to the top bytes: the bytes below are zero,
    // which reads as leading zeros.
    let v = (chunk ^ 0x3030_3030_3030_3030) << (8 * (8 - n));
    // Pairs, then fours, then all eight (the first byte is the most
    // significant digit).
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    const MASK: u64 = 0x0000_00ff_0000_00ff;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    let v1 = (v & MASK).wrapping_mul(MUL1);
    let v2 = ((v >> 16) & MASK).wrapping_mul(MUL2);
    u64::from((v1.wrapping_add(v2) >> 32) as u32)
}

impl QuickNumber {
    /// Reads a number at the start of `t`; returns it and its length, or
    /// `None` when `t` does not start with a number of the quick shape
    /// followed by a delimiter.
    #[inline(always)]
    pub(super) fn scan(t: &[u8]) -> Option<(QuickNumber, usize)> {
        /// The run of digits from `i`, appended to `m` (wrapping: the
        /// caller refuses runs too long to be exact), read eight bytes at
        /// a time; returns where the run ends.
        #[inline(always)]
        fn digits(t: &[u8], mut i: usize, m: &mut u64) -> usize {
            loop {
                let chunk = load8(t, i);
                let n = leading_digits(chunk);
                if n == 0 {
                    return i;
                }
                *m = m
                    .wrapping_mul(POW10_U64[n])
                    .wrapping_add(digit_value(chunk, n));
                i += n;
                if n < 8 {
                    return i;
                }
            }
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
            while let Some(d) = t.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
                e = e * 10 + u64::from(d);
                i += 1;
                if i - exp_start > 3 {
                    return None;
                }
            }
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

    /// [`QuickNumber::store`] for float64, without the dispatch on the
    /// type (for loops over many float64 elements).
    ///
    /// # Safety
    /// `data` is writable data of float64.
    #[inline(always)]
    pub(super) unsafe fn store_f64(self, data: *mut u8) -> bool {
        let m = self.mantissa;
        let e = self.exp10.unsigned_abs() as usize;
        match POW10_F64.get(e) {
            Some(&p) if m <= 1 << 53 => {
                let m = m as f64;
                let v = if self.exp10 < 0 { m / p } else { m * p };
                // SAFETY: (caller) `data` holds one f64.
                unsafe { arrmeta::write(data, if self.neg { -v } else { v }) };
                true
            }
            _ => false,
        }
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
    #[inline(always)]
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
