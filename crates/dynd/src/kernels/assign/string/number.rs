//! Numbers from text ([`FromText`]) and to text ([`ToText`]).
//!
//! Reading (the text is trimmed of surrounding whitespace first):
//! - integers: `[+-]digits[.digits][e[+-]digits]`, read exactly (no
//!   rounding through a float, whatever the length). Checked modes: a value
//!   outside the type is `Overflow`; a non-zero fractional part is
//!   `Fractional` in the fractional and inexact modes and is dropped
//!   (truncation toward zero) in overflow mode. Nocheck: the value truncated
//!   toward zero, wrapped modulo 2^bits (as int ← int). `nan`, `inf` and
//!   `infinity` (any case, signed) are `Overflow` in checked modes and
//!   convert as float64 → int in nocheck (NaN → 0, saturating).
//! - floats: Rust's `str::parse` (so `nan`, `inf`, `infinity` in any case,
//!   `1.`, `.5`, `1e5`); a finite text whose value overflows the type is
//!   `Overflow` in checked modes and ±inf in nocheck. Inexact mode: error
//!   when the text holds more than the type keeps — when it is not, as a
//!   number, the text the result formats as (its shortest round-trip
//!   digits): `"0.1"` into float32 is exact, `"33554433"` (→ 33554432),
//!   `"3.14159265358979323846"` into float64 and `"1e-400"` (→ 0) are not.
//!   So text written from a value always reads back exactly.
//! - bool: `true` / `false` (any case), else a number by the numeric bool
//!   rule: 0 and 1 in checked modes (anything else is `Overflow`), non-zero
//!   is true in nocheck.
//! - complex: `re`, `imj`, `re+imj`, `re-imj`, each optionally in
//!   parentheses (`"(1+2j)"`, `"3"`, `"-2.5j"`, `"j"`); `J` works too, no
//!   spaces inside; each part is read as a float of the part type.
//!
//! Anything else is a `Parse` error, in every mode.
//!
//! Writing: integers in decimal; floats in the shortest form that reads back
//! to the same value (Rust's `{:?}`, as JSON output), with `NaN`,
//! `Infinity`, `-Infinity`; float16 as its float32 value; bool as
//! `true`/`false`; complex as `(re+imj)` with each part written as a float
//! (`(1.0-2.5j)`, `(0.0+NaNj)`).

use super::super::ErrorMode;
use super::super::numeric::Conv;
use crate::for_each_native;
use crate::types::NativeType;
use num_complex::Complex;
use std::fmt::{self, Write};

/// Why text did not convert to a number under a mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bad {
    /// Not a number of the expected form (`Parse`).
    Syntax,
    /// Out of the type's range (`Overflow`).
    Overflow,
    /// A fractional part an integer cannot hold (`Fractional`).
    Fractional,
    /// The value would change (`Inexact`).
    Inexact,
}

/// Numbers read from text.
pub(crate) trait FromText: NativeType {
    /// The value of `s` (already trimmed) under the resolved `mode`.
    fn from_text(s: &str, mode: ErrorMode) -> Result<Self, Bad>;
}

/// Numbers written as text.
pub(crate) trait ToText: NativeType {
    /// Writes the value.
    fn write_text(self, out: &mut impl Write) -> fmt::Result;
}

// ------------------------------------------------------------- decimals

/// A decimal number read exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decimal {
    /// A minus sign was written.
    neg: bool,
    /// The magnitude truncated toward zero, or `None` above `u128::MAX`.
    exact: Option<u128>,
    /// The magnitude truncated toward zero, modulo 2^128.
    wrapped: u128,
    /// A non-zero digit was dropped by the truncation.
    frac: bool,
}

/// `s` as `[+-]digits[.digits][(e|E)[+-]digits]` (at least one mantissa
/// digit), or `None`.
fn decimal(s: &str) -> Option<Decimal> {
    fn sign(b: &[u8]) -> (bool, &[u8]) {
        match b.split_first() {
            Some((b'-', r)) => (true, r),
            Some((b'+', r)) => (false, r),
            _ => (false, b),
        }
    }
    fn digits(b: &[u8]) -> usize {
        b.iter().take_while(|c| c.is_ascii_digit()).count()
    }
    let (neg, b) = sign(s.as_bytes());
    let (int, mut rest) = b.split_at(digits(b));
    let mut fraction: &[u8] = &[];
    if let Some((b'.', r)) = rest.split_first() {
        (fraction, rest) = r.split_at(digits(r));
    }
    if int.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut exp: i64 = 0;
    if let Some((b'e' | b'E', r)) = rest.split_first() {
        let (eneg, r) = sign(r);
        let n = digits(r);
        if n == 0 {
            return None;
        }
        for &d in &r[..n] {
            exp = exp.saturating_mul(10).saturating_add(i64::from(d - b'0'));
        }
        if eneg {
            exp = -exp;
        }
        rest = &r[n..];
    }
    if !rest.is_empty() {
        return None;
    }
    // The first `k` digits of int ++ fraction are the integer part.
    let k = int.len() as i128 + i128::from(exp);
    let mut exact = Some(0u128);
    let mut wrapped = 0u128;
    let mut frac = false;
    for (i, &d) in int.iter().chain(fraction).enumerate() {
        let d = u128::from(d - b'0');
        if (i as i128) < k {
            exact = exact.and_then(|v| v.checked_mul(10)?.checked_add(d));
            wrapped = wrapped.wrapping_mul(10).wrapping_add(d);
        } else if d != 0 {
            frac = true;
        }
    }
    // Trailing zeros of a positive exponent. 10^128 is a multiple of 2^128,
    // so past 128 of them the wrapped value is 0 (and a non-zero exact one
    // has overflowed): the loop stops there.
    let zeros = (k - (int.len() + fraction.len()) as i128).clamp(0, 130);
    for _ in 0..zeros {
        exact = exact.and_then(|v| v.checked_mul(10));
        wrapped = wrapped.wrapping_mul(10);
    }
    Some(Decimal {
        neg,
        exact,
        wrapped,
        frac,
    })
}

/// The value of `nan`, `inf` or `infinity` (any case, optionally signed).
fn special(s: &str) -> Option<f64> {
    let (neg, word) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let v = if word.eq_ignore_ascii_case("nan") {
        f64::NAN
    } else if word.eq_ignore_ascii_case("inf") || word.eq_ignore_ascii_case("infinity") {
        f64::INFINITY
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

// ------------------------------------------------------------- integers

/// Integers built from a [`Decimal`].
trait IntText: Conv<f64> {
    /// `±mag`, when it is in range.
    fn exact(neg: bool, mag: u128) -> Option<Self>;
    /// `±wrapped` modulo 2^bits.
    fn wrapped(neg: bool, wrapped: u128) -> Self;
}

macro_rules! int_text {
    ($($t:ty),*) => {$(
        impl IntText for $t {
            fn exact(neg: bool, mag: u128) -> Option<$t> {
                if neg && mag != 0 {
                    if mag > 1u128 << 127 {
                        return None;
                    }
                    // 2^127 becomes i128::MIN, which is right.
                    <$t>::try_from((mag as i128).wrapping_neg()).ok()
                } else {
                    <$t>::try_from(mag).ok()
                }
            }
            fn wrapped(neg: bool, wrapped: u128) -> $t {
                (if neg { wrapped.wrapping_neg() } else { wrapped }) as $t
            }
        }
        impl FromText for $t {
            fn from_text(s: &str, mode: ErrorMode) -> Result<$t, Bad> {
                int_from_text(s, mode)
            }
        }
    )*};
}
for_each_native!(signed unsigned => int_text);

fn int_from_text<T: IntText>(s: &str, mode: ErrorMode) -> Result<T, Bad> {
    if let Some(d) = decimal(s) {
        if mode == ErrorMode::NoCheck {
            return Ok(T::wrapped(d.neg, d.wrapped));
        }
        let v = d
            .exact
            .and_then(|m| T::exact(d.neg, m))
            .ok_or(Bad::Overflow)?;
        if d.frac && matches!(mode, ErrorMode::Fractional | ErrorMode::Inexact) {
            return Err(Bad::Fractional);
        }
        return Ok(v);
    }
    match special(s) {
        Some(v) if mode == ErrorMode::NoCheck => Ok(T::cast(v)),
        Some(_) => Err(Bad::Overflow),
        None => Err(Bad::Syntax),
    }
}

impl FromText for bool {
    fn from_text(s: &str, mode: ErrorMode) -> Result<bool, Bad> {
        if s.eq_ignore_ascii_case("true") {
            return Ok(true);
        }
        if s.eq_ignore_ascii_case("false") {
            return Ok(false);
        }
        let nocheck = mode == ErrorMode::NoCheck;
        if let Some(d) = decimal(s) {
            let zero = d.exact == Some(0) && !d.frac;
            let one = d.exact == Some(1) && !d.frac && !d.neg;
            return match (zero, one) {
                (true, _) => Ok(false),
                (_, true) => Ok(true),
                _ if nocheck => Ok(true),
                _ => Err(Bad::Overflow),
            };
        }
        match special(s) {
            // NaN and infinities are non-zero.
            Some(_) if nocheck => Ok(true),
            Some(_) => Err(Bad::Overflow),
            None => Err(Bad::Syntax),
        }
    }
}

// --------------------------------------------------------------- floats

/// A decimal text's sign, the power of ten of its first significant digit,
/// and its significant digits (none for zero); `None` when `s` is not
/// `[+-]digits[.digits][(e|E)[+-]digits]`.
fn significant(s: &str) -> Option<(bool, i64, impl Iterator<Item = u8> + '_)> {
    let b = s.as_bytes();
    let (neg, b) = match b.split_first() {
        Some((b'-', r)) => (true, r),
        Some((b'+', r)) => (false, r),
        _ => (false, b),
    };
    let mantissa_end = b
        .iter()
        .position(|c| matches!(c, b'e' | b'E'))
        .unwrap_or(b.len());
    let (mantissa, exp) = b.split_at(mantissa_end);
    let exp: i64 = match exp.split_first() {
        None => 0,
        Some((_, e)) => std::str::from_utf8(e).ok()?.parse().ok()?,
    };
    let (int, frac) = match mantissa.iter().position(|&c| c == b'.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, &[][..]),
    };
    if !int.iter().chain(frac).all(u8::is_ascii_digit) || int.len() + frac.len() == 0 {
        return None;
    }
    let all = || int.iter().chain(frac).copied();
    let first = all().position(|d| d != b'0');
    let last = all()
        .enumerate()
        .filter(|&(_, d)| d != b'0')
        .last()
        .map(|(i, _)| i);
    Some(match (first, last) {
        (Some(first), Some(last)) => {
            let power = (int.len() as i64 - 1 - first as i64).saturating_add(exp);
            (neg, power, all().skip(first).take(last + 1 - first))
        }
        _ => (neg, 0, all().skip(int.len() + frac.len()).take(0)),
    })
}

/// `true` when the text `s` is, as a number, what `shortest` writes for a
/// finite value (its shortest round-trip digits).
fn is_exact_text(s: &str, shortest: impl FnOnce(&mut StackBuf) -> fmt::Result) -> bool {
    let mut buf = StackBuf::new();
    if shortest(&mut buf).is_err() {
        return false;
    }
    match (significant(s), significant(buf.as_str())) {
        (Some((n1, p1, d1)), Some((n2, p2, d2))) => n1 == n2 && p1 == p2 && d1.eq(d2),
        _ => false,
    }
}

/// The float checks of a checked `mode` on `v`, read from `s`: a finite
/// text that became infinite overflowed; in inexact mode, a finite text
/// must be the text of its value (`shortest` writes it).
fn check_float(
    s: &str,
    mode: ErrorMode,
    infinite: bool,
    shortest: impl FnOnce(&mut StackBuf) -> fmt::Result,
) -> Result<(), Bad> {
    if mode == ErrorMode::NoCheck || special(s).is_some() {
        return Ok(());
    }
    if infinite {
        return Err(Bad::Overflow);
    }
    if mode == ErrorMode::Inexact && !is_exact_text(s, shortest) {
        return Err(Bad::Inexact);
    }
    Ok(())
}

impl FromText for f64 {
    fn from_text(s: &str, mode: ErrorMode) -> Result<f64, Bad> {
        let v: f64 = s.parse().map_err(|_| Bad::Syntax)?;
        check_float(s, mode, v.is_infinite(), |b| write!(b, "{v:e}"))?;
        Ok(v)
    }
}

impl FromText for f32 {
    fn from_text(s: &str, mode: ErrorMode) -> Result<f32, Bad> {
        // Parsed directly: one rounding.
        let v: f32 = s.parse().map_err(|_| Bad::Syntax)?;
        check_float(s, mode, v.is_infinite(), |b| write!(b, "{v:e}"))?;
        Ok(v)
    }
}

/// The 16-bit floats: rounded once from the f64 value of the text.
macro_rules! half_text {
    ($($t:ty),*) => {$(
        impl FromText for $t {
            fn from_text(s: &str, mode: ErrorMode) -> Result<$t, Bad> {
                let v = <$t>::from_f64(s.parse().map_err(|_| Bad::Syntax)?);
                // The text of a 16-bit float is what it writes.
                check_float(s, mode, v.is_infinite(), |b| v.write_value(b))?;
                Ok(v)
            }
        }
        impl ToText for $t {
            fn write_text(self, out: &mut impl Write) -> fmt::Result {
                self.write_value(out)
            }
        }
    )*};
}
for_each_native!(half => half_text);

/// The real and imaginary texts of a complex number; an imaginary text of
/// `""`, `"+"` or `"-"` stands for ±1.
fn complex_parts(s: &str) -> (&str, &str) {
    let s = match s.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        Some(inner) => inner.trim(),
        None => s,
    };
    let Some(body) = s.strip_suffix(['j', 'J']) else {
        return (s, "0");
    };
    // The sign that starts the imaginary part: the last + or - that is not
    // the first character and does not follow an exponent's e.
    let b = body.as_bytes();
    let split = (1..b.len())
        .rev()
        .find(|&i| matches!(b[i], b'+' | b'-') && !matches!(b[i - 1], b'e' | b'E'));
    match split {
        Some(i) => (&body[..i], &body[i..]),
        None => ("0", body),
    }
}

fn complex_from_text<T: FromText + std::ops::Neg<Output = T> + From<u8>>(
    s: &str,
    mode: ErrorMode,
) -> Result<Complex<T>, Bad> {
    let (re, im) = complex_parts(s);
    let re = T::from_text(re, mode);
    let im = match im {
        "" | "+" => Ok(T::from(1)),
        "-" => Ok(-T::from(1)),
        im => T::from_text(im, mode),
    };
    match (re, im) {
        (Ok(re), Ok(im)) => Ok(Complex::new(re, im)),
        (Err(Bad::Syntax), _) | (_, Err(Bad::Syntax)) => Err(Bad::Syntax),
        (Err(Bad::Overflow), _) | (_, Err(Bad::Overflow)) => Err(Bad::Overflow),
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

impl FromText for Complex<f32> {
    fn from_text(s: &str, mode: ErrorMode) -> Result<Self, Bad> {
        complex_from_text(s, mode)
    }
}

impl FromText for Complex<f64> {
    fn from_text(s: &str, mode: ErrorMode) -> Result<Self, Bad> {
        complex_from_text(s, mode)
    }
}

// -------------------------------------------------------------- writing

macro_rules! display_text {
    ($($t:ty),*) => {$(
        impl ToText for $t {
            fn write_text(self, out: &mut impl Write) -> fmt::Result {
                write!(out, "{self}")
            }
        }
    )*};
}
for_each_native!(bool signed unsigned => display_text);

/// A float64 as JSON output writes it.
fn write_f64(v: f64, out: &mut impl Write) -> fmt::Result {
    if v.is_nan() {
        out.write_str("NaN")
    } else if v.is_infinite() {
        out.write_str(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        write!(out, "{v:?}")
    }
}

/// A float32 as JSON output writes it (shortest for float32, not float64).
fn write_f32(v: f32, out: &mut impl Write) -> fmt::Result {
    if v.is_finite() {
        write!(out, "{v:?}")
    } else {
        write_f64(f64::from(v), out)
    }
}

impl ToText for f64 {
    fn write_text(self, out: &mut impl Write) -> fmt::Result {
        write_f64(self, out)
    }
}

impl ToText for f32 {
    fn write_text(self, out: &mut impl Write) -> fmt::Result {
        write_f32(self, out)
    }
}

macro_rules! complex_text {
    ($($t:ty),*) => {$(
        impl ToText for Complex<$t> {
            fn write_text(self, out: &mut impl Write) -> fmt::Result {
                out.write_char('(')?;
                self.re.write_text(out)?;
                // A negative part writes its own sign.
                if !(self.im.is_sign_negative() && !self.im.is_nan()) {
                    out.write_char('+')?;
                }
                self.im.write_text(out)?;
                out.write_str("j)")
            }
        }
    )*};
}
complex_text!(f32, f64);

/// A small text buffer on the stack, for formatting one number (the longest,
/// a complex128, takes 51 bytes).
pub(crate) struct StackBuf {
    buf: [u8; 96],
    len: usize,
}

impl StackBuf {
    pub(crate) fn new() -> StackBuf {
        StackBuf {
            buf: [0; 96],
            len: 0,
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only whole `&str`s are ever copied in: always valid.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

impl Write for StackBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let slot = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ErrorMode::*;
    use half::f16;

    fn text<T: ToText>(v: T) -> String {
        let mut b = StackBuf::new();
        v.write_text(&mut b).unwrap();
        b.as_str().to_owned()
    }

    #[test]
    fn decimals_are_exact() {
        let d = decimal("-12.50e1").unwrap();
        assert_eq!((d.neg, d.exact, d.frac), (true, Some(125), false));
        let d = decimal("1.5").unwrap();
        assert_eq!((d.exact, d.frac), (Some(1), true));
        let d = decimal("1e40").unwrap();
        assert_eq!(d.exact, None);
        assert_eq!(d.wrapped, 10u128.pow(38).wrapping_mul(100));
        assert_eq!(decimal("7e999999999999999999999").unwrap().wrapped, 0);
        assert_eq!(decimal("5e-999999999999").unwrap().exact, Some(0));
        assert!(decimal(".5").unwrap().frac);
        assert_eq!(decimal("5.").unwrap().exact, Some(5));
        for bad in [
            "", "+", ".", "e5", "1e", "1e+", "12x", "1.2.3", "0x10", "1_000", " 1",
        ] {
            assert_eq!(decimal(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn integers() {
        assert_eq!(i8::from_text("127", Fractional), Ok(127));
        assert_eq!(i8::from_text("128", Overflow), Err(Bad::Overflow));
        assert_eq!(i8::from_text("128", NoCheck), Ok(-128));
        assert_eq!(i8::from_text("-129", NoCheck), Ok(127));
        assert_eq!(u8::from_text("-1", NoCheck), Ok(255));
        assert_eq!(i8::from_text("12x", NoCheck), Err(Bad::Syntax));
        assert_eq!(i32::from_text("1.5", Fractional), Err(Bad::Fractional));
        assert_eq!(i32::from_text("1.5", Inexact), Err(Bad::Fractional));
        assert_eq!(i32::from_text("1.5", Overflow), Ok(1));
        assert_eq!(i32::from_text("-1.5", NoCheck), Ok(-1));
        assert_eq!(i32::from_text("1e3", Inexact), Ok(1000));
        assert_eq!(u8::from_text("-0.5", Overflow), Ok(0));
        assert_eq!(
            i128::from_text("-170141183460469231731687303715884105728", Inexact),
            Ok(i128::MIN)
        );
        assert_eq!(
            u128::from_text("340282366920938463463374607431768211455", Inexact),
            Ok(u128::MAX)
        );
        assert_eq!(
            u128::from_text("340282366920938463463374607431768211456", Inexact),
            Err(Bad::Overflow)
        );
        assert_eq!(
            i64::from_text("9007199254740993", Inexact),
            Ok(9007199254740993)
        );
        assert_eq!(i32::from_text("nan", Overflow), Err(Bad::Overflow));
        assert_eq!(i32::from_text("NaN", NoCheck), Ok(0));
        assert_eq!(i32::from_text("-inf", NoCheck), Ok(i32::MIN));
        assert_eq!(i32::from_text("1e400", NoCheck), Ok(0));
    }

    #[test]
    fn bools() {
        assert_eq!(bool::from_text("TRUE", Inexact), Ok(true));
        assert_eq!(bool::from_text("false", Inexact), Ok(false));
        assert_eq!(bool::from_text("1", Inexact), Ok(true));
        assert_eq!(bool::from_text("0.0", Inexact), Ok(false));
        assert_eq!(bool::from_text("2", Overflow), Err(Bad::Overflow));
        assert_eq!(bool::from_text("2", NoCheck), Ok(true));
        assert_eq!(bool::from_text("-1", Overflow), Err(Bad::Overflow));
        assert_eq!(bool::from_text("yes", NoCheck), Err(Bad::Syntax));
    }

    #[test]
    fn floats() {
        assert_eq!(f64::from_text("1.5", Inexact), Ok(1.5));
        assert_eq!(f64::from_text("-Infinity", Inexact), Ok(f64::NEG_INFINITY));
        assert_eq!(f64::from_text("inf", Inexact), Ok(f64::INFINITY));
        assert!(f64::from_text("NaN", Inexact).unwrap().is_nan());
        assert_eq!(f64::from_text("1e400", Overflow), Err(Bad::Overflow));
        assert_eq!(f64::from_text("1e400", NoCheck), Ok(f64::INFINITY));
        assert_eq!(f64::from_text("1.5x", NoCheck), Err(Bad::Syntax));
        assert_eq!(f32::from_text("0.1", Inexact), Ok(0.1));
        assert_eq!(f32::from_text("1e-45", Inexact), Ok(1e-45));
        assert_eq!(f32::from_text("0.10000000149", Inexact), Err(Bad::Inexact));
        assert_eq!(f32::from_text("0.10000000149", Fractional), Ok(0.1));
        assert_eq!(
            f64::from_text("3.14159265358979323846", Inexact),
            Err(Bad::Inexact)
        );
        assert_eq!(
            f64::from_text("3.141592653589793", Inexact),
            Ok(std::f64::consts::PI)
        );
        assert_eq!(f64::from_text("1e-400", Inexact), Err(Bad::Inexact));
        assert_eq!(f64::from_text("-0.0e5", Inexact), Ok(-0.0));
        assert_eq!(f64::from_text("+1000.000", Inexact), Ok(1000.0));
        assert_eq!(f64::from_text("000.00120", Inexact), Ok(0.0012));
        assert_eq!(f32::from_text("1e39", Overflow), Err(Bad::Overflow));
        assert_eq!(f32::from_text("33554433", Overflow), Ok(33554432.0));
        assert_eq!(f32::from_text("33554433", Inexact), Err(Bad::Inexact));
        assert_eq!(f16::from_text("65504", Inexact), Ok(f16::MAX));
        assert_eq!(f16::from_text("1e5", Overflow), Err(Bad::Overflow));
        assert_eq!(f16::from_text("0.1", Inexact), Err(Bad::Inexact));
        assert_eq!(
            f16::from_text("0.099975586", Inexact),
            Ok(f16::from_f32(0.1))
        );
    }

    #[test]
    fn complexes() {
        let c = |s: &str| Complex::<f64>::from_text(s, Inexact);
        assert_eq!(c("3"), Ok(Complex::new(3.0, 0.0)));
        assert_eq!(c("1+2j"), Ok(Complex::new(1.0, 2.0)));
        assert_eq!(c("(1-2J)"), Ok(Complex::new(1.0, -2.0)));
        assert_eq!(c("( 1e-3+2e+3j )"), Ok(Complex::new(1e-3, 2e3)));
        assert_eq!(c("-2.5j"), Ok(Complex::new(0.0, -2.5)));
        assert_eq!(c("-1e-5j"), Ok(Complex::new(0.0, -1e-5)));
        assert_eq!(c("j"), Ok(Complex::new(0.0, 1.0)));
        assert_eq!(c("2-j"), Ok(Complex::new(2.0, -1.0)));
        assert_eq!(
            c("(1.0-Infinityj)"),
            Ok(Complex::new(1.0, f64::NEG_INFINITY))
        );
        assert_eq!(c("1 + 2j"), Err(Bad::Syntax));
        assert_eq!(c("1+2"), Err(Bad::Syntax));
        assert_eq!(c("1e400+xj"), Err(Bad::Syntax));
        assert_eq!(c("1e400+1j"), Err(Bad::Overflow));
        assert_eq!(
            Complex::<f32>::from_text("0.1+33554433j", Inexact),
            Err(Bad::Inexact)
        );
        assert_eq!(
            Complex::<f32>::from_text("0.1+33554433j", Fractional),
            Ok(Complex::new(0.1, 33554432.0))
        );
    }

    #[test]
    fn writing() {
        assert_eq!(text(true), "true");
        assert_eq!(text(i128::MIN), "-170141183460469231731687303715884105728");
        assert_eq!(text(1.0f64), "1.0");
        assert_eq!(text(0.1f32), "0.1");
        assert_eq!(text(1e300f64), "1e300");
        assert_eq!(text(f64::NAN), "NaN");
        assert_eq!(text(f32::NEG_INFINITY), "-Infinity");
        assert_eq!(text(f16::from_f32(0.5)), "0.5");
        assert_eq!(text(Complex::new(1.0f64, -2.5)), "(1.0-2.5j)");
        assert_eq!(text(Complex::new(0.0f32, f32::NAN)), "(0.0+NaNj)");
        assert_eq!(text(Complex::new(-0.0f64, -0.0)), "(-0.0-0.0j)");
        let worst = Complex::new(-f64::MIN_POSITIVE, -f64::MIN_POSITIVE);
        assert_eq!(text(worst).len(), 51);
        for v in [
            worst,
            Complex::new(1.0, -0.0),
            Complex::new(f64::INFINITY, f64::NEG_INFINITY),
        ] {
            assert_eq!(
                Complex::<f64>::from_text(&text(v), Inexact)
                    .map(|c| (c.re.to_bits(), c.im.to_bits())),
                Ok((v.re.to_bits(), v.im.to_bits()))
            );
        }
    }
}
