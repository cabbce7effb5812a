//! JSON number tokens into every number type.

use super::cursor::may_follow_number;
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
static POW10_F64: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Exact powers of ten in f32 (10^10 is the largest).
static POW10_F32: [f32; 11] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];

/// 10^0 to 10^7 in f64, then the same negated: a quotient by the second
/// half is the negated quotient (`-0.0` for 0), as rounding to nearest is
/// symmetric, so one division gives a signed number.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
static SIGNED_POW10_F64: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, -1e0, -1e1, -1e2, -1e3, -1e4, -1e5, -1e6, -1e7,
];

/// [`SIGNED_POW10_F64`] in f32.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
static SIGNED_POW10_F32: [f32; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, -1e0, -1e1, -1e2, -1e3, -1e4, -1e5, -1e6, -1e7,
];

/// `10^n` for the digit runs of [`QuickNumber::scan`] (at most 8 digits a
/// step).
static POW10_U64: [u64; 9] = [
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

/// Eight `b'0'` bytes: a word of text xor this holds each digit's value in
/// its byte (byte k of the little-endian word is byte k of the text).
const ZEROS: u64 = u64::from_le_bytes([b'0'; 8]);

/// The high bit of each byte of `d` (a word of text xor [`ZEROS`]) that is
/// not a digit (not below 10). A flag is wrong only through a carry out of
/// the byte below, and only a byte of `d` at or above 0x8a carries: a text
/// byte at or above 0xba, never a digit or ASCII punctuation. So the flags
/// are exact up to and including the first such byte.
#[inline(always)]
fn non_digits(d: u64) -> u64 {
    (d.wrapping_add(u64::from_le_bytes([0x76; 8])) | d) & u64::from_le_bytes([0x80; 8])
}

/// The index of the byte of the lowest flag in a [`non_digits`] mask; 8
/// when there is none.
#[inline(always)]
fn first_flag(m: u64) -> usize {
    m.trailing_zeros() as usize / 8
}

/// The value of the 8 digits of `d` (text bytes xor [`ZEROS`], the first
/// in the lowest byte): pairs, then fours, then all eight, each a multiply
/// (the method of simdjson and fast_float).
#[inline(always)]
fn eight_digits(d: u64) -> u64 {
    const MASK: u64 = 0x0000_00ff_0000_00ff;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    let d = d.wrapping_mul(10).wrapping_add(d >> 8);
    ((d & MASK)
        .wrapping_mul(MUL1)
        .wrapping_add((d >> 16 & MASK).wrapping_mul(MUL2)))
        >> 32
}

/// Reads the digits at byte `i` of `t` into `m` (`m * 10 + digit` each,
/// wrapping: the caller rejects more than 19 digits); returns the byte
/// after them. Eight bytes at a time while the text has them.
#[inline(always)]
fn digits(t: &[u8], mut i: usize, m: &mut u64) -> usize {
    while let Some(word) = t.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let d = u64::from_le_bytes(*word) ^ ZEROS;
        let n = first_flag(non_digits(d));
        if n == 0 {
            return i;
        }
        // The n digits move to the top bytes; the zero bytes below them
        // are leading zeros. n is 1..=8, so the shift is 0..=56.
        *m = m
            .wrapping_mul(POW10_U64[n])
            .wrapping_add(eight_digits(d << (64 - 8 * n)));
        i += n;
        if n < 8 {
            return i;
        }
    }
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

impl QuickNumber {
    /// Reads a number at the start of `t`; returns it and its length, or
    /// `None` when `t` does not start with a number of the quick shape
    /// followed by a delimiter.
    #[inline(always)]
    pub(super) fn scan(t: &[u8]) -> Option<(QuickNumber, usize)> {
        QuickNumber::scan_token(t).filter(|&(_, len)| may_follow_number(t.get(len)))
    }

    /// [`QuickNumber::scan`] without the look at the byte after the token,
    /// for callers that look at it themselves.
    #[inline(always)]
    pub(super) fn scan_token(t: &[u8]) -> Option<(QuickNumber, usize)> {
        if let Some(short) = QuickNumber::short(t) {
            return Some(short);
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
        if int_len + frac_len > 19 {
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

    /// The commonest shapes on their own, read from one 8-byte word after
    /// the sign (the text has 9 bytes left): an integer, or integer digits,
    /// `.` and fraction digits, ending before the word's last byte (at most
    /// 7 digits), with no exponent. Both ends
    /// come from one mask, so the next number's position waits on few
    /// instructions. `None` leaves the number to the rest of
    /// [`QuickNumber::scan_token`].
    #[inline(always)]
    fn short(t: &[u8]) -> Option<(QuickNumber, usize)> {
        // Both words are loaded and one picked, rather than loading at a
        // position that waits on the sign byte: the next number's position
        // depends on this word.
        let w = t.first_chunk::<9>()?;
        let neg = w[0] == b'-';
        let int_start = usize::from(neg);
        let x0 = <[u8; 8]>::try_from(&w[..8]).ok()?;
        let x1 = <[u8; 8]>::try_from(&w[1..]).ok()?;
        let x = u64::from_le_bytes(if neg { x1 } else { x0 });
        let d = x ^ ZEROS;
        // Exact through the second byte that is not a digit when the first
        // is the point (see `non_digits`).
        let flags = non_digits(d);
        let int_len = first_flag(flags);
        // The first byte is a digit, and no integer part starts with 0
        // unless it is just "0"; int_len == 8: no flag, the digits may go
        // on past the word.
        if int_len == 0 || int_len == 8 || (int_len > 1 && x as u8 == b'0') {
            return None;
        }
        let byte = |k: usize| (x >> (8 * k)) as u8;
        let (end, digits) = if byte(int_len) == b'.' {
            // end == 8: no second flag, the fraction may go on past the
            // word.
            let end = first_flag(flags & flags.wrapping_sub(1));
            if end == 8 || end < int_len + 2 {
                return None;
            }
            // The digits without the point, in text order from the
            // lowest byte. 2 <= end <= 7, so the shifts stay below 64.
            let low = |k: usize| (1u64 << (8 * k)) - 1;
            (
                end,
                (d & low(int_len)) | (d >> 8 & low(end - 1) & !low(int_len)),
            )
        } else {
            (int_len, d)
        };
        if byte(end) | 0x20 == b'e' {
            return None;
        }
        // At most 7 digits (1 <= n <= 7), moved to the top for
        // `eight_digits`; the bytes below them are leading zeros.
        let n = end - usize::from(end > int_len);
        Some((
            QuickNumber {
                neg,
                mantissa: eight_digits(digits << (64 - 8 * n)),
                // At most 6 fraction digits.
                exp10: (int_len as i32) - (n as i32),
                integral: end == int_len,
            },
            int_start + end,
        ))
    }

    /// The value of the number token of `len` bytes at the start of `t`,
    /// followed by a byte that is not part of a number, for the shapes that
    /// [`QuickNumber::token`] leaves: [`QuickNumber::scan_token`]'s when it
    /// reads the whole token and [`QuickValue::from_quick`] converts it.
    /// Out of the loops' way.
    #[inline(never)]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(super) fn whole_token_value<T: QuickValue>(t: &[u8], len: usize) -> Option<T> {
        QuickNumber::scan_token(t)
            .filter(|&(_, l)| l == len)
            .and_then(|(q, _)| T::from_quick(q))
    }

    /// The number token of `len` bytes at the start of `t` (followed by a
    /// byte that is not part of a number; `t` holds at least 9 bytes), in
    /// the shapes [`QuickValue::from_short`] takes: after an optional sign,
    /// 1 to 8 bytes of digits with at most one point between two digits.
    /// As the token's end is known, it is moved to the top of a word, the
    /// bytes below it zeros (leading zeros for [`eight_digits`]), and one
    /// mask of its non-digit bytes checks the shape. `None` leaves the
    /// token to [`QuickNumber::scan_token`] (exponents, longer tokens) or
    /// to the general path.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(super) fn token(t: &[u8; 9], len: usize) -> Option<QuickNumber> {
        let neg = t[0] == b'-';
        // The 8 bytes after the sign, the first in the lowest byte.
        let x = match t[usize::from(neg)..].first_chunk::<8>() {
            Some(w) => u64::from_le_bytes(*w),
            None => return None,
        };
        let n = len.wrapping_sub(usize::from(neg));
        if n.wrapping_sub(1) >= 8 {
            return None;
        }
        // The n bytes of the token (1 <= n <= 8) at the top; the flags of
        // its non-digit bytes are exact (see `non_digits`: they are all
        // ASCII), the zeros below it are digits.
        let top = (x ^ ZEROS) << (64 - 8 * n);
        let flags = non_digits(top);
        let first_zero = x as u8 == b'0';
        if flags == 0 {
            // No integer of more than one digit starts with 0.
            if first_zero && n > 1 {
                return None;
            }
            return Some(QuickNumber {
                neg,
                mantissa: eight_digits(top),
                exp10: 0,
                integral: true,
            });
        }
        // Only a point at byte j (j <= 6: a digit above it), with
        // int_len = j + n - 8 >= 1 digits below it, none a leading 0.
        let j = first_flag(flags);
        let int_len = (j + n).wrapping_sub(8);
        if flags & (flags - 1) != 0
            || (top >> (8 * j)) as u8 != (b'.' ^ b'0')
            || j > 6
            || int_len == 0
            || (int_len > 1 && first_zero)
        {
            return None;
        }
        // The digits below the point move up over it.
        let below = (1u64 << (8 * j)) - 1;
        let above = !((0x100u64 << (8 * j)) - 1);
        Some(QuickNumber {
            neg,
            mantissa: eight_digits((top & above) | (top & below) << 8),
            // 1 to 6 fraction digits.
            exp10: j as i32 - 7,
            integral: false,
        })
    }

    /// Stores the value into `b` at `data` when [`QuickValue::from_quick`]
    /// gives it. Returns whether it stored.
    ///
    /// # Safety
    /// `data` is writable data of `b`.
    #[inline]
    pub(super) unsafe fn store(self, b: BuiltinType, data: *mut u8) -> bool {
        with_native!(b, signed unsigned ieee => |T| match T::from_quick(self) {
            Some(v) => {
                // SAFETY: (caller) `data` holds one value of `b`.
                unsafe { v.store(data) };
                true
            }
            None => false,
        })
        .unwrap_or(false)
    }
}

/// The number types a [`QuickNumber`] converts to without the general
/// path: the integers and float32/float64.
pub(super) trait QuickValue: NativeType {
    /// The value when that is exact and simple: an integer without fraction
    /// digits or exponent that fits, or a float64 (float32) by Clinger's
    /// fast path — the mantissa at most 2^53 (2^24) and the power of ten
    /// exact, so one correctly rounded multiplication or division gives the
    /// correctly rounded value. `None` leaves the number to the general
    /// path.
    fn from_quick(q: QuickNumber) -> Option<Self>;

    /// [`QuickValue::from_quick`] for what [`QuickNumber::token`] gives: a
    /// mantissa below 10^8 and an exponent of -6 to 0.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn from_short(q: QuickNumber) -> Option<Self> {
        Self::from_quick(q)
    }
}

impl QuickValue for f64 {
    #[inline(always)]
    fn from_quick(q: QuickNumber) -> Option<f64> {
        let e = q.exp10.unsigned_abs() as usize;
        if q.mantissa > 1 << 53 || e >= POW10_F64.len() {
            return None;
        }
        let (m, p) = (q.mantissa as f64, POW10_F64[e]);
        let v = if q.exp10 < 0 { m / p } else { m * p };
        Some(if q.neg { -v } else { v })
    }

    /// The mantissa is below 2^53, so Clinger's fast path always applies
    /// (dividing by 10^0 = 1 is exact); the sign is the divisor's.
    #[inline(always)]
    fn from_short(q: QuickNumber) -> Option<f64> {
        debug_assert!(q.mantissa < 100_000_000 && (-6..=0).contains(&q.exp10));
        let k = usize::from(q.neg) << 3 | (q.exp10.unsigned_abs() & 7) as usize;
        Some(q.mantissa as f64 / SIGNED_POW10_F64[k])
    }
}

impl QuickValue for f32 {
    #[inline(always)]
    fn from_quick(q: QuickNumber) -> Option<f32> {
        let e = q.exp10.unsigned_abs() as usize;
        if q.mantissa > 1 << 24 || e >= POW10_F32.len() {
            return None;
        }
        let (m, p) = (q.mantissa as f32, POW10_F32[e]);
        let v = if q.exp10 < 0 { m / p } else { m * p };
        Some(if q.neg { -v } else { v })
    }

    /// As for float64, when the mantissa is at most 2^24.
    #[inline(always)]
    fn from_short(q: QuickNumber) -> Option<f32> {
        debug_assert!(q.mantissa < 100_000_000 && (-6..=0).contains(&q.exp10));
        if q.mantissa > 1 << 24 {
            return None;
        }
        let k = usize::from(q.neg) << 3 | (q.exp10.unsigned_abs() & 7) as usize;
        Some(q.mantissa as f32 / SIGNED_POW10_F32[k])
    }
}

macro_rules! quick_int {
    ($($t:ty),*) => {$(
        impl QuickValue for $t {
            #[inline(always)]
            fn from_quick(q: QuickNumber) -> Option<$t> {
                if !q.integral {
                    return None;
                }
                let mag = i128::from(q.mantissa);
                <$t>::try_from(if q.neg { -mag } else { mag }).ok()
            }
        }
    )*};
}
crate::for_each_native!(signed unsigned => quick_int);

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

/// The bytes of a [`Classes`] window.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) const WINDOW: usize = 64;

/// How many bytes a window's text must have: the window, and the 9 bytes
/// [`QuickNumber::token`] reads at once from a token starting in its
/// last byte.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) const WINDOW_TEXT: usize = WINDOW + 9;

/// The classes of the bytes of a [`WINDOW`]-byte window of text, one bit
/// per byte (bit k: byte k): JSON white space, commas, and the bytes of
/// number tokens (digits, `-`, `+`, `.`, `e`, `E`). Every other byte is in
/// none of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) struct Classes {
    pub ws: u64,
    pub comma: u64,
    pub num: u64,
}

/// The class bits of one byte, for the byte-at-a-time classifier.
#[cfg(test)]
const WS: u8 = 1;
#[cfg(test)]
const COMMA: u8 = 2;
#[cfg(test)]
const NUM: u8 = 4;

/// [`WS`], [`COMMA`] or [`NUM`] for each byte value (0: another byte).
#[cfg(test)]
static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b' ' as usize] = WS;
    t[b'\t' as usize] = WS;
    t[b'\n' as usize] = WS;
    t[b'\r' as usize] = WS;
    t[b',' as usize] = COMMA;
    let mut d = b'0';
    while d <= b'9' {
        t[d as usize] = NUM;
        d += 1;
    }
    t[b'-' as usize] = NUM;
    t[b'+' as usize] = NUM;
    t[b'.' as usize] = NUM;
    t[b'e' as usize] = NUM;
    t[b'E' as usize] = NUM;
    t
};

/// Classifies a window byte by byte: the reference for the vector
/// classifiers, and the one the tests run the window loop with.
#[cfg(test)]
pub(super) fn classify_bytes(w: &[u8; WINDOW]) -> Classes {
    let mut c = Classes {
        ws: 0,
        comma: 0,
        num: 0,
    };
    for (k, &b) in w.iter().enumerate() {
        let class = BYTE_CLASS[usize::from(b)];
        c.ws |= u64::from(class == WS) << k;
        c.comma |= u64::from(class == COMMA) << k;
        c.num |= u64::from(class == NUM) << k;
    }
    c
}

/// A way to classify a window, for the window loop of the number runs.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) trait Classify: Copy {
    fn classify(self, w: &[u8; WINDOW]) -> Classes;
}

/// [`classify_bytes`] as a [`Classify`].
#[cfg(test)]
#[derive(Clone, Copy)]
pub(super) struct ByteClassifier;

#[cfg(test)]
impl Classify for ByteClassifier {
    #[inline(always)]
    fn classify(self, w: &[u8; WINDOW]) -> Classes {
        classify_bytes(w)
    }
}

/// The AVX2 classifier; a value exists only where the CPU has AVX2, and
/// the bit instructions the window loop is compiled with beside it (BMI1,
/// BMI2, POPCNT, LZCNT: every AVX2 CPU has them).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(super) struct Avx2Classifier(());

#[cfg(target_arch = "x86_64")]
impl Avx2Classifier {
    /// The classifier, when the CPU has AVX2, BMI1, BMI2, POPCNT and
    /// LZCNT.
    pub(super) fn detect() -> Option<Avx2Classifier> {
        use std::is_x86_feature_detected as has;
        let all = has!("avx2") && has!("bmi1") && has!("bmi2") && has!("popcnt") && has!("lzcnt");
        all.then_some(Avx2Classifier(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Classify for Avx2Classifier {
    #[inline(always)]
    fn classify(self, w: &[u8; WINDOW]) -> Classes {
        // SAFETY: an `Avx2Classifier` is made only by `detect`, where the
        // CPU has AVX2, the only requirement of `classify_avx2`.
        unsafe { classify_avx2(w) }
    }
}

/// [`classify_bytes`] with AVX2, 32 bytes a step: each byte's class bits
/// are the AND of two table lookups (`vpshufb`), one by its low nibble and
/// one by its high nibble (simdjson's method). A class appears under
/// several high nibbles, so it has one bit per high nibble, and a byte has
/// a bit only when both its nibbles belong to one of the class's bytes:
///
/// | bit | bytes | high nibble | low nibbles |
/// |---|---|---|---|
/// | 0x01 | `\t \n \r` | 0 | 9, a, d |
/// | 0x02 | space | 2 | 0 |
/// | 0x04 | `,` | 2 | c |
/// | 0x08 | `+ - .` | 2 | b, d, e |
/// | 0x10 | digits | 3 | 0–9 |
/// | 0x20 | `E e` | 4, 6 | 5 |
///
/// Bytes from 0x80 have high nibbles without bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn classify_avx2(w: &[u8; WINDOW]) -> Classes {
    use std::arch::x86_64::*;
    #[rustfmt::skip]
    const LO: [i8; 16] = [
        0x02 | 0x10, 0x10, 0x10, 0x10, 0x10, 0x10 | 0x20, 0x10, 0x10,
        0x10, 0x01 | 0x10, 0x01, 0x08, 0x04, 0x01 | 0x08, 0x08, 0,
    ];
    #[rustfmt::skip]
    const HI: [i8; 16] = [
        0x01, 0, 0x02 | 0x04 | 0x08, 0x10, 0x20, 0, 0x20, 0,
        0, 0, 0, 0, 0, 0, 0, 0,
    ];
    let table = |t: [i8; 16]| {
        _mm256_setr_epi8(
            t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12], t[13],
            t[14], t[15], t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11],
            t[12], t[13], t[14], t[15],
        )
    };
    let (lo, hi) = (table(LO), table(HI));
    let nibble = _mm256_set1_epi8(0x0f);
    let zero = _mm256_setzero_si256();
    // The bytes of `v` whose class bits meet `bits`, as a mask.
    let any = |v: __m256i, bits: i8| {
        let none = _mm256_cmpeq_epi8(_mm256_and_si256(v, _mm256_set1_epi8(bits)), zero);
        !(_mm256_movemask_epi8(none) as u32)
    };
    let half = |k: usize| {
        // SAFETY: bytes 32k..32k + 32 of the 64 are readable (k is 0 or
        // 1); `loadu` reads unaligned.
        let v = unsafe { _mm256_loadu_si256(w.as_ptr().add(32 * k).cast()) };
        let class = _mm256_and_si256(
            _mm256_shuffle_epi8(lo, _mm256_and_si256(v, nibble)),
            _mm256_shuffle_epi8(hi, _mm256_and_si256(_mm256_srli_epi16::<4>(v), nibble)),
        );
        (any(class, 0x03), any(class, 0x04), any(class, 0x38))
    };
    let (a, b) = (half(0), half(1));
    let join = |x: u32, y: u32| u64::from(x) | u64::from(y) << 32;
    Classes {
        ws: join(a.0, b.0),
        comma: join(a.1, b.1),
        num: join(a.2, b.2),
    }
}

/// The number tokens of a window that a number run may take, in order,
/// when the window starts right after a number the run took: their starts
/// and ends (bit k: byte k; an end is the byte after a token; there may be
/// ends after the last start).
///
/// A token is complete when a byte that may follow a number ends it inside
/// the window. The run may take a token only when it is complete and what
/// lies between the previous token (or the window start) and it is white
/// space around exactly one comma; the starts stop before the first place
/// where that fails (two commas, a token right after another, a token at
/// the window start), and at the first byte of no class. Whether the
/// tokens are numbers of the quick shape is the caller's to check.
///
/// The separators are checked with carries: adding a bit just after a
/// comma to the white space mask carries through the white space after
/// it, landing on the first byte that is not white space; so does adding
/// a token's end.
#[inline(always)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn window_tokens(c: Classes, w: &[u8; WINDOW]) -> (u64, u64) {
    let other = !(c.ws | c.comma | c.num);
    let limit = other.trailing_zeros() as usize;
    let valid = if limit < WINDOW {
        (1u64 << limit) - 1
    } else {
        !0
    };
    let (ws, comma, num) = (c.ws & valid, c.comma & valid, c.num & valid);
    let ends = num << 1 & !num;
    let mut starts = num & !(num << 1);
    // The last token is incomplete when it runs up to `limit` (the
    // window's end, or a byte of no class that may not follow a number).
    let tail_ok = limit < WINDOW && may_follow_number(Some(&w[limit]));
    if limit > 0 && num >> (limit - 1) & 1 != 0 && !tail_ok {
        starts &= !(1u64 << 63 >> starts.leading_zeros());
    }
    // The first byte that is not white space after each token's end and
    // after the window's start (bit 0, the previous number's end) must be
    // a comma, and after each comma a token's start.
    let after_end = ws.wrapping_add(ends | 1) & !ws;
    let after_comma = ws.wrapping_add(comma << 1) & !ws;
    let bad = (after_end & num) | (after_comma & comma);
    // All starts below the lowest bad bit (all when there is none).
    let before_bad = (bad & bad.wrapping_neg()).wrapping_sub(1);
    (starts & before_bad, ends)
}
