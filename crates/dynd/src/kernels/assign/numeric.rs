//! Assignment between builtin scalars: every pair of bool, the integers
//! (128-bit included), float16/32/64 and the complex types, under each
//! error mode.
//!
//! | pair | nocheck | overflow | fractional | inexact |
//! |---|---|---|---|---|
//! | int ← int | wraps (two's complement) | value out of range | = overflow | = overflow |
//! | int ← float | truncates; saturates out of range; NaN → 0 (Rust `as`) | NaN, ±inf, or truncated value out of range | also a non-zero fractional part | = fractional |
//! | float ← int | rounds to nearest | result infinite | = overflow | any rounding |
//! | float ← float | rounds to nearest | finite → infinite | = overflow | any rounding (NaN → NaN is exact) |
//! | bool ← x | `x != 0` | x not 0 or 1 | = overflow | = overflow |
//! | x ← bool | 0 or 1 | never fails | | |
//! | real ← complex | the real part | imaginary part ≠ 0 (an `inexact` error), then as real ← float | | |
//! | complex ← x | each part by the real rules | per part | per part | per part |
//!
//! The same rules in CUDA C, for the device types, are in `device.rs`
//! ([`super::device_conversion`]): change both together.
//!
//! Checked loops work in chunks of up to [`CHUNK`] values: a check pass
//! with no branch per element (so it vectorises), then a conversion pass
//! that may skip what the check proved unneeded (float to integer converts
//! without Rust's clamping). Narrowing float conversions (to float32 and
//! float16) instead convert a chunk into a buffer in L1 and look for
//! infinities among the results, which is cheaper than checking the wider
//! sources; only a chunk with a suspect result checks its sources. Only a
//! chunk with a failure is searched for the first bad value. On error, every chunk before the failing one has been
//! written, and nothing from the failing chunk on is; except that
//! float64 → int32 in `overflow` mode, in the AVX2 build, converts in one
//! pass and may have written the failing chunk's values before the
//! failing one's group of eight (`float_int_avx2`). Either way the failing
//! element and those after it are untouched, as `Array::assign` promises.

use super::ErrorMode;
use crate::error::{Error, ErrorKind, Result};
use crate::kernels::loops::{Operand, Plan, Run, run_of, select};
use crate::kernels::{CKernelBuilder, Kernel, KernelRef, KernelRequest, Strided};
use crate::types::{B8, BuiltinType, NativeType};
use crate::{for_each_native, with_native};
use num_complex::Complex;
use std::marker::PhantomData;
use std::pin::Pin;

pub(crate) use super::CHUNK;

/// Conversion of `S` values into `Self`.
pub(crate) trait Conv<S: NativeType>: NativeType {
    /// The nocheck conversion.
    fn cast(s: S) -> Self;
    /// The conversion of a value that passed [`Conv::ok_overflow`]; may skip
    /// the clamping that [`Conv::cast`] needs.
    ///
    /// # Safety
    /// 1. `Self::ok_overflow(s)` is true.
    #[inline(always)]
    unsafe fn cast_in_range(s: S) -> Self {
        Self::cast(s)
    }
    /// `true` when `s` converts without overflow.
    fn ok_overflow(s: S) -> bool;
    /// `true` when [`Conv::suspect`] is a filter for the overflow check:
    /// if no converted value of a chunk is suspect, every source passed
    /// [`Conv::ok_overflow`] (and [`Conv::ok_fractional`], which must equal
    /// it). Narrowing float conversions check their results this way: an
    /// infinity is rare and cheap to look for, four to a vector register.
    const RESULT_FILTER: bool = false;
    /// `true` when [`Conv::cast`] pays for clamping that
    /// [`Conv::cast_in_range`] skips (float to integer): the nocheck loop
    /// then checks each chunk for range first and converts the unclamped
    /// way when all of it is in range — the same results, faster.
    const CLAMPS: bool = false;
    /// [`Conv::ok_fractional`] where `f64::trunc` is one instruction (the
    /// SSE4.1 `round` of the AVX2 build): float to integer checks
    /// `trunc(s) == s` in the same pass as the range.
    #[inline(always)]
    fn ok_fractional_wide(s: S) -> bool {
        Self::ok_fractional(s)
    }
    /// For [`Conv::CLAMPS`] conversions: `true` when `d`, converted from an
    /// in-range `s`, is exactly `s` (so `s` had no fraction).
    #[inline(always)]
    fn exact_back(_d: Self, _s: S) -> bool {
        true
    }
    /// A converted value that may come from a failing source.
    #[inline(always)]
    fn suspect(_d: Self) -> bool {
        true
    }
    /// `true` when `s` converts without overflow or loss of a fraction.
    fn ok_fractional(s: S) -> bool {
        Self::ok_overflow(s)
    }
    /// `true` when `s` converts exactly.
    fn ok_inexact(s: S) -> bool {
        Self::ok_fractional(s)
    }
    /// The error for a value that failed the check of `mode`.
    fn failure(s: S, mode: ErrorMode) -> Error {
        let (kind, why) = if !Self::ok_overflow(s) {
            (ErrorKind::Overflow, "is out of range for")
        } else if mode != ErrorMode::Overflow && !Self::ok_fractional(s) {
            (
                ErrorKind::Fractional,
                "has a fractional part, so it cannot be assigned to",
            )
        } else {
            (ErrorKind::Inexact, "cannot be represented exactly in")
        };
        Error::new(
            kind,
            format!("{} value {} {why} {}", S::TYPE, s.show(), Self::TYPE),
        )
    }
}

/// `true` when `s` passes the check of `mode`.
#[inline(always)]
pub(crate) fn passes<D: Conv<S>, S: NativeType>(s: S, mode: ErrorMode) -> bool {
    match mode {
        ErrorMode::NoCheck => true,
        ErrorMode::Overflow => D::ok_overflow(s),
        ErrorMode::Fractional | ErrorMode::Default => D::ok_fractional(s),
        ErrorMode::Inexact => D::ok_inexact(s),
    }
}

/// Converts one value under `mode`.
#[inline]
pub(crate) fn convert<D: Conv<S>, S: NativeType>(s: S, mode: ErrorMode) -> Result<D> {
    if passes::<D, S>(s, mode) {
        Ok(D::cast(s))
    } else {
        Err(D::failure(s, mode))
    }
}

// ---------------------------------------------------------------- int <- int

/// Integer bounds as `(min as i128, max as u128)`.
trait IntBounds {
    const MIN_I: i128;
    const MAX_U: u128;
}
macro_rules! int_bounds {
    ($($t:ty),*) => {$(
        impl IntBounds for $t {
            const MIN_I: i128 = <$t>::MIN as i128;
            const MAX_U: u128 = <$t>::MAX as u128;
        }
    )*};
}
for_each_native!(signed unsigned => int_bounds);

macro_rules! int_from_int {
    ($d:ty; $($s:ty),*) => {$(
        impl Conv<$s> for $d {
            #[inline(always)]
            fn cast(s: $s) -> $d { s as $d }
            #[inline(always)]
            fn ok_overflow(s: $s) -> bool {
                // The part of D's range that S can hold, in S's own type
                // (both bounds lie within S's range by construction).
                const LO: i128 = if <$d>::MIN_I > <$s>::MIN_I { <$d>::MIN_I } else { <$s>::MIN_I };
                const HI: u128 = if <$d>::MAX_U < <$s>::MAX_U { <$d>::MAX_U } else { <$s>::MAX_U };
                s >= LO as $s && s <= HI as $s
            }
        }
    )*};
}
macro_rules! ints_from_ints {
    ($($d:ty),*) => {$( for_each_native!(signed unsigned => int_from_int!($d;)); )*};
}
for_each_native!(signed unsigned => ints_from_ints);

// -------------------------------------------------------------- int <- float

macro_rules! int_from_float {
    ($d:ty; $($s:ty),*) => {$(
        impl Conv<$s> for $d {
            const CLAMPS: bool = true;
            #[inline(always)]
            fn cast(s: $s) -> $d { s as $d }
            #[inline(always)]
            fn exact_back(d: $d, s: $s) -> bool {
                // trunc(s) is a float, so it converts back exactly.
                d as $s == s
            }
            #[inline(always)]
            unsafe fn cast_in_range(s: $s) -> $d {
                // SAFETY: (1) s is not NaN or infinite and truncates into
                // D's range, which is what to_int_unchecked requires.
                unsafe { s.to_int_unchecked::<$d>() }
            }
            #[inline(always)]
            fn ok_overflow(s: $s) -> bool {
                // In range when trunc(s) lies in [MIN, MAX], i.e. MIN - 1 < s
                // < MAX + 1. MIN is 0 or -2^k and MAX + 1 is 2^k: exact in
                // any float (2^128 in f32 is +inf, which still bounds). When
                // MIN - 1 rounds to MIN, no float lies strictly between them,
                // so `s >= MIN` says the same. NaN fails every comparison.
                // No `trunc` here: without SSE4.1 it is a libm call.
                const MIN: $s = <$d>::MIN_I as $s;
                const MIN_M1: $s = MIN - 1.0;
                const MAX_P1: $s = 2.0 * ((<$d>::MAX_U / 2 + 1) as $s);
                let lower = if MIN_M1 == MIN { s >= MIN } else { s > MIN_M1 };
                lower & (s < MAX_P1)
            }
            #[inline(always)]
            fn ok_fractional(s: $s) -> bool { Self::ok_overflow(s) & s.integral() }
            #[inline(always)]
            fn ok_fractional_wide(s: $s) -> bool { Self::ok_overflow(s) & (s.trunc() == s) }
        }
    )*};
}
/// `integral`: whether a finite value has no fraction, without `trunc` (a libm call without SSE4.1): adding and
/// subtracting 2^(mantissa bits) rounds a smaller magnitude to an integer,
/// which equals it exactly when it was one; larger magnitudes all are.
trait Integral {
    fn integral(self) -> bool;
}
impl Integral for f64 {
    #[inline(always)]
    fn integral(self) -> bool {
        const BIG: f64 = 4503599627370496.0; // 2^52
        let a = self.abs();
        (a >= BIG) | ((a + BIG) - BIG == a)
    }
}
impl Integral for f32 {
    #[inline(always)]
    fn integral(self) -> bool {
        const BIG: f32 = 8388608.0; // 2^23
        let a = self.abs();
        (a >= BIG) | ((a + BIG) - BIG == a)
    }
}

macro_rules! ints_from_floats {
    ($($d:ty),*) => {$( for_each_native!(ieee => int_from_float!($d;)); )*};
}
for_each_native!(signed unsigned => ints_from_floats);

// -------------------------------------------------------------- float <- int

macro_rules! float_from_int {
    ($d:ty; $($s:ty),*) => {$(
        impl Conv<$s> for $d {
            #[inline(always)]
            fn cast(s: $s) -> $d { s as $d }
            #[inline(always)]
            fn ok_overflow(s: $s) -> bool { (s as $d).is_finite() }
            #[inline(always)]
            fn ok_inexact(s: $s) -> bool {
                // Every S fits exactly when its magnitude bits fit the
                // mantissa (int32 in float64, int16 in float32).
                const BITS: u32 = (<$s>::MAX_U).count_ones();
                if BITS <= <$d>::MANTISSA_DIGITS {
                    return true;
                }
                let d = s as $d;
                // `d as S` saturates, so a value rounded up to MAX + 1 would
                // compare equal: bound it first.
                const MAX_P1: $d = 2.0 * ((<$s>::MAX_U / 2 + 1) as $d);
                (d < MAX_P1) & (d as $s == s)
            }
        }
    )*};
}
macro_rules! floats_from_ints {
    ($($d:ty),*) => {$( for_each_native!(signed unsigned => float_from_int!($d;)); )*};
}
for_each_native!(ieee => floats_from_ints);

// ------------------------------------------------------------ float <- float

/// Float conversions every value survives exactly: to the same type, and
/// f32 to f64.
macro_rules! exact_float {
    ($(($d:ty, $s:ty)),*) => {$(
        impl Conv<$s> for $d {
            #[inline(always)]
            fn cast(s: $s) -> $d { s as $d }
            #[inline(always)]
            fn ok_overflow(_: $s) -> bool { true }
        }
    )*};
}
exact_float!((f64, f64), (f32, f32), (f64, f32));
impl Conv<f64> for f32 {
    const RESULT_FILTER: bool = true;
    #[inline(always)]
    fn cast(s: f64) -> f32 {
        s as f32
    }
    #[inline(always)]
    fn suspect(d: f32) -> bool {
        // Overflow turns a finite value into an infinity.
        d.abs() == f32::INFINITY
    }
    #[inline(always)]
    fn ok_overflow(s: f64) -> bool {
        // Finite values must stay finite: |s| below the rounding boundary
        // of f32::MAX (MAX + half an ulp rounds to infinity).
        const LIMIT: f64 = f32::MAX as f64 + (f32::MAX as f64 - f32::MAX.next_down() as f64) / 2.0;
        (s.abs() < LIMIT) | !s.is_finite()
    }
    #[inline(always)]
    fn ok_inexact(s: f64) -> bool {
        ((s as f32) as f64 == s) | s.is_nan()
    }
}

// ------------------------------------------------------- float16, bfloat16

/// 16-bit float sources convert like their (exact) f32 value.
macro_rules! from_half {
    ($h:ty; $($d:ty),*) => {$(
        impl Conv<$h> for $d {
            #[inline(always)]
            fn cast(s: $h) -> $d { <$d as Conv<f32>>::cast(s.to_f32()) }
            #[inline(always)]
            fn ok_overflow(s: $h) -> bool { <$d as Conv<f32>>::ok_overflow(s.to_f32()) }
            #[inline(always)]
            fn ok_fractional(s: $h) -> bool { <$d as Conv<f32>>::ok_fractional(s.to_f32()) }
            #[inline(always)]
            fn ok_inexact(s: $h) -> bool { <$d as Conv<f32>>::ok_inexact(s.to_f32()) }
        }
    )*};
}

/// 16-bit float destinations round from f64 (ints up to 2^53 are exact in
/// f64, and larger ones overflow a 16-bit float's range or are rounded
/// to its 8 or 11 bits anyway) or directly from f32.
macro_rules! half_from {
    ($h:ty; $($s:ty),*) => {$(
        impl Conv<$s> for $h {
            const RESULT_FILTER: bool = true;
            #[inline(always)]
            fn cast(s: $s) -> $h { <$h>::from_f64(s as f64) }
            #[inline(always)]
            fn suspect(d: $h) -> bool { d.is_infinite() }
            #[inline(always)]
            fn ok_overflow(s: $s) -> bool {
                let v = s as f64;
                <$h>::from_f64(v).is_finite() || !v.is_finite()
            }
            #[inline(always)]
            fn ok_inexact(s: $s) -> bool {
                let v = s as f64;
                (<$h>::from_f64(v).to_f64() == v && v as $s == s) || v.is_nan()
            }
        }
    )*};
}

/// Between 16-bit floats (the same type: a copy of the bits, NaN payloads
/// kept; another: through f32, which holds both exactly).
macro_rules! half_half {
    ($d:ty; $($s:ty),*) => {$(
        impl Conv<$s> for $d {
            const RESULT_FILTER: bool = true;
            #[inline(always)]
            fn cast(s: $s) -> $d {
                if <$s as NativeType>::TYPE == <$d as NativeType>::TYPE {
                    <$d>::from_bits(s.to_bits())
                } else {
                    <$d>::from_f32(s.to_f32())
                }
            }
            #[inline(always)]
            fn suspect(d: $d) -> bool { d.is_infinite() }
            #[inline(always)]
            fn ok_overflow(s: $s) -> bool {
                <$d>::from_f32(s.to_f32()).is_finite() || !s.is_finite()
            }
            #[inline(always)]
            fn ok_inexact(s: $s) -> bool {
                let v = s.to_f32();
                <$d>::from_f32(v).to_f32() == v || v.is_nan()
            }
        }
    )*};
}

macro_rules! half_convs {
    ($($h:ty),*) => {$(
        for_each_native!(signed unsigned ieee => from_half!($h;));
        for_each_native!(signed unsigned => half_from!($h;));
        half_from!($h; f64);
        for_each_native!(half => half_half!($h;));
        impl Conv<f32> for $h {
            const RESULT_FILTER: bool = true;
            #[inline(always)]
            fn cast(s: f32) -> $h {
                <$h>::from_f32(s)
            }
            #[inline(always)]
            fn suspect(d: $h) -> bool {
                d.is_infinite()
            }
            #[inline(always)]
            fn ok_overflow(s: f32) -> bool {
                <$h>::from_f32(s).is_finite() || !s.is_finite()
            }
            #[inline(always)]
            fn ok_inexact(s: f32) -> bool {
                <$h>::from_f32(s).to_f32() == s || s.is_nan()
            }
        }
        impl Conv<$h> for bool {
            #[inline(always)]
            fn cast(s: $h) -> bool {
                s.to_f32() != 0.0
            }
            #[inline(always)]
            fn ok_overflow(s: $h) -> bool {
                let v = s.to_f32();
                v == 0.0 || v == 1.0
            }
        }
    )*};
}
for_each_native!(half => half_convs);

// ---------------------------------------------------------------------- bool

/// A `bool` source read as its byte ([`B8`]): any non-zero byte is true.
impl<D: Conv<bool>> Conv<B8> for D {
    const RESULT_FILTER: bool = <D as Conv<bool>>::RESULT_FILTER;
    const CLAMPS: bool = <D as Conv<bool>>::CLAMPS;
    #[inline(always)]
    fn cast(s: B8) -> D {
        <D as Conv<bool>>::cast(s.0 != 0)
    }
    #[inline(always)]
    unsafe fn cast_in_range(s: B8) -> D {
        // SAFETY: (1) ok_overflow(s) is ok_overflow(s.0 != 0).
        unsafe { <D as Conv<bool>>::cast_in_range(s.0 != 0) }
    }
    #[inline(always)]
    fn ok_overflow(s: B8) -> bool {
        <D as Conv<bool>>::ok_overflow(s.0 != 0)
    }
    #[inline(always)]
    fn ok_fractional(s: B8) -> bool {
        <D as Conv<bool>>::ok_fractional(s.0 != 0)
    }
    #[inline(always)]
    fn ok_inexact(s: B8) -> bool {
        <D as Conv<bool>>::ok_inexact(s.0 != 0)
    }
    #[inline(always)]
    fn exact_back(d: D, s: B8) -> bool {
        <D as Conv<bool>>::exact_back(d, s.0 != 0)
    }
    #[inline(always)]
    fn suspect(d: D) -> bool {
        <D as Conv<bool>>::suspect(d)
    }
    fn failure(s: B8, mode: ErrorMode) -> Error {
        <D as Conv<bool>>::failure(s.0 != 0, mode)
    }
}

macro_rules! bool_from_real {
    ($zero:expr, $one:expr; $($s:ty),*) => {$(
        impl Conv<$s> for bool {
            #[inline(always)]
            fn cast(s: $s) -> bool { s != $zero }
            #[inline(always)]
            fn ok_overflow(s: $s) -> bool { s == $zero || s == $one }
        }
    )*};
}
for_each_native!(signed unsigned => bool_from_real!(0, 1;));
for_each_native!(ieee => bool_from_real!(0.0, 1.0;));

impl Conv<bool> for bool {
    #[inline(always)]
    fn cast(s: bool) -> bool {
        s
    }
    #[inline(always)]
    fn ok_overflow(_: bool) -> bool {
        true
    }
}
/// The stored form of a bool (reductions keep results as bytes).
impl Conv<bool> for B8 {
    #[inline(always)]
    fn cast(s: bool) -> B8 {
        B8(s as u8)
    }
    #[inline(always)]
    fn ok_overflow(_: bool) -> bool {
        true
    }
}

macro_rules! from_bool {
    ($($d:ty),*) => {$(
        impl Conv<bool> for $d {
            #[inline(always)]
            fn cast(s: bool) -> $d { <$d as Conv<u8>>::cast(s as u8) }
            #[inline(always)]
            fn ok_overflow(_: bool) -> bool { true }
        }
    )*};
}
for_each_native!(signed unsigned half ieee => from_bool);

// ------------------------------------------------------------------- complex

/// Complex destinations: each part by the real rules.
macro_rules! complex_from_real {
    ($t:ty; $($s:ty),*) => {$(
        impl Conv<$s> for Complex<$t> {
            #[inline(always)]
            fn cast(s: $s) -> Complex<$t> { Complex::new(<$t as Conv<$s>>::cast(s), 0.0) }
            #[inline(always)]
            fn ok_overflow(s: $s) -> bool { <$t as Conv<$s>>::ok_overflow(s) }
            #[inline(always)]
            fn ok_fractional(s: $s) -> bool { <$t as Conv<$s>>::ok_fractional(s) }
            #[inline(always)]
            fn ok_inexact(s: $s) -> bool { <$t as Conv<$s>>::ok_inexact(s) }
        }
    )*};
}
for_each_native!(bool signed unsigned half ieee => complex_from_real!(f32;));
for_each_native!(bool signed unsigned half ieee => complex_from_real!(f64;));

macro_rules! complex_from_complex {
    ($($t:ty => $u:ty),*) => {$(
        impl Conv<Complex<$u>> for Complex<$t> {
            #[inline(always)]
            fn cast(s: Complex<$u>) -> Complex<$t> {
                Complex::new(<$t as Conv<$u>>::cast(s.re), <$t as Conv<$u>>::cast(s.im))
            }
            #[inline(always)]
            fn ok_overflow(s: Complex<$u>) -> bool {
                <$t as Conv<$u>>::ok_overflow(s.re) & <$t as Conv<$u>>::ok_overflow(s.im)
            }
            #[inline(always)]
            fn ok_inexact(s: Complex<$u>) -> bool {
                <$t as Conv<$u>>::ok_inexact(s.re) & <$t as Conv<$u>>::ok_inexact(s.im)
            }
        }
    )*};
}
complex_from_complex!(f32 => f32, f32 => f64, f64 => f32, f64 => f64);

/// Real destinations from complex: the imaginary part must be zero in the
/// checked modes (an `inexact` error), then the real part converts.
macro_rules! real_from_complex {
    ($u:ty; $($d:ty),*) => {$(
        impl Conv<Complex<$u>> for $d {
            #[inline(always)]
            fn cast(s: Complex<$u>) -> $d { <$d as Conv<$u>>::cast(s.re) }
            #[inline(always)]
            fn ok_overflow(s: Complex<$u>) -> bool { s.im == 0.0 && <$d as Conv<$u>>::ok_overflow(s.re) }
            #[inline(always)]
            fn ok_fractional(s: Complex<$u>) -> bool { s.im == 0.0 && <$d as Conv<$u>>::ok_fractional(s.re) }
            #[inline(always)]
            fn ok_inexact(s: Complex<$u>) -> bool { s.im == 0.0 && <$d as Conv<$u>>::ok_inexact(s.re) }
            fn failure(s: Complex<$u>, mode: ErrorMode) -> Error {
                if s.im != 0.0 {
                    Error::inexact(format!(
                        "{} value {} has a non-zero imaginary part, so it cannot be assigned to {}",
                        <Complex<$u>>::TYPE,
                        s.show(),
                        <$d>::TYPE
                    ))
                } else {
                    <$d as Conv<$u>>::failure(s.re, mode)
                }
            }
        }
    )*};
}
for_each_native!(bool signed unsigned half ieee => real_from_complex!(f32;));
for_each_native!(bool signed unsigned half ieee => real_from_complex!(f64;));

// -------------------------------------------------------------------- kernel

/// The assignment kernel `D ← S` under one error mode.
pub(crate) struct NumericAssign<D, S> {
    mode: ErrorMode,
    _types: PhantomData<fn(S) -> D>,
}

impl<D: Conv<S>, S: NativeType> NumericAssign<D, S> {
    pub(crate) fn new(mode: ErrorMode) -> Self {
        NumericAssign {
            mode: mode.resolve(),
            _types: PhantomData,
        }
    }

    /// Converts a chunk held in typed slices. Checking passes are
    /// branch-free (`&`, not `&&`) so they vectorise; the slow search for
    /// the bad value runs only when something failed.
    #[inline(always)]
    fn chunk<const WIDE: bool>(&self, dst: &mut [D], src: &[S]) -> Result<()> {
        let mode = self.mode;
        let check = |s: S| match mode {
            ErrorMode::NoCheck => true,
            ErrorMode::Overflow => D::ok_overflow(s),
            ErrorMode::Fractional | ErrorMode::Default => D::ok_fractional(s),
            ErrorMode::Inexact => D::ok_inexact(s),
        };
        if mode == ErrorMode::NoCheck {
            if D::CLAMPS && src.iter().fold(true, |a, &s| a & D::ok_overflow(s)) {
                for (d, &s) in dst.iter_mut().zip(src) {
                    // SAFETY: every value of the chunk passed ok_overflow.
                    *d = unsafe { D::cast_in_range(s) };
                }
                return Ok(());
            }
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = D::cast(s);
            }
            return Ok(());
        }
        if WIDE
            && D::CLAMPS
            && matches!(
                mode,
                ErrorMode::Fractional | ErrorMode::Default | ErrorMode::Inexact
            )
        {
            // Float to integer in the AVX2 build: range and fraction in one
            // vectorised pass (`trunc` is an instruction here), then the
            // unclamped conversion straight into the destination — the
            // nocheck loop plus one compare per value.
            if src.iter().fold(true, |a, &s| a & D::ok_fractional_wide(s)) {
                for (d, &s) in dst.iter_mut().zip(src) {
                    // SAFETY: every value passed ok_fractional, which implies
                    // ok_overflow.
                    *d = unsafe { D::cast_in_range(s) };
                }
                return Ok(());
            }
            let bad = src.iter().copied().find(|&s| !check(s)).unwrap_or_default();
            return Err(D::failure(bad, mode));
        }
        if D::CLAMPS
            && matches!(
                mode,
                ErrorMode::Fractional | ErrorMode::Default | ErrorMode::Inexact
            )
            && src.iter().fold(true, |a, &s| a & D::ok_overflow(s))
        {
            // Float to integer, all in range: convert the unclamped way into
            // a buffer in L1, and compare the results converted back with
            // the sources — cheaper than testing each source for a fraction.
            let mut buf = [D::default(); CHUNK];
            let buf = &mut buf[..src.len()];
            let mut exact = true;
            for (d, &s) in buf.iter_mut().zip(src) {
                // SAFETY: every value of the chunk passed ok_overflow.
                let v = unsafe { D::cast_in_range(s) };
                *d = v;
                exact &= D::exact_back(v, s);
            }
            if exact {
                dst.copy_from_slice(buf);
                return Ok(());
            }
            let bad = src.iter().copied().find(|&s| !check(s)).unwrap_or_default();
            return Err(D::failure(bad, mode));
        }
        // (In the AVX2 build the source check is cheap enough that the plain
        // check-then-convert below is faster than the buffer.)
        if !WIDE
            && D::RESULT_FILTER
            && matches!(
                mode,
                ErrorMode::Overflow | ErrorMode::Fractional | ErrorMode::Default
            )
        {
            // Convert into a buffer in L1, look for suspect results there
            // (cheap), and copy out only a chunk that passed: as fast as the
            // nocheck loop for data in memory.
            let mut buf = [D::default(); CHUNK];
            let buf = &mut buf[..src.len()];
            for (d, &s) in buf.iter_mut().zip(src) {
                *d = D::cast(s);
            }
            let suspect = buf.iter().fold(false, |a, &d| a | D::suspect(d));
            if suspect && let Some(&bad) = src.iter().find(|&&s| !check(s)) {
                return Err(D::failure(bad, mode));
            }
            dst.copy_from_slice(buf);
            return Ok(());
        }
        // Check the whole chunk (it is in L1), then convert it; a fused
        // convert-and-check loop does not vectorise as well.
        // One loop per mode: a `match` inside the loop would not vectorise.
        let ok = match mode {
            ErrorMode::NoCheck => true,
            ErrorMode::Overflow => src.iter().fold(true, |a, &s| a & D::ok_overflow(s)),
            ErrorMode::Fractional | ErrorMode::Default => {
                src.iter().fold(true, |a, &s| a & D::ok_fractional(s))
            }
            ErrorMode::Inexact => src.iter().fold(true, |a, &s| a & D::ok_inexact(s)),
        };
        if ok {
            for (d, &s) in dst.iter_mut().zip(src) {
                // SAFETY: every value of the chunk passed the mode's check,
                // which implies ok_overflow.
                *d = unsafe { D::cast_in_range(s) };
            }
        }
        if !ok {
            let bad = src.iter().copied().find(|&s| !check(s)).unwrap_or_default();
            return Err(D::failure(bad, mode));
        }
        Ok(())
    }
}

impl<D: Conv<S>, S: NativeType> NumericAssign<D, S> {
    /// Converts contiguous slices chunk by chunk, with the AVX2 build of
    /// the loops when the CPU has it (picked at run time, as NumPy picks
    /// its SIMD loops): the checks and conversions run twice as wide.
    fn chunks(&self, d: &mut [D], s: &[S]) -> Result<()> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, the only requirement of the AVX2 build.
            return unsafe { self.chunks_avx2(d, s) };
        }
        self.chunks_body::<false>(d, s)
    }

    /// # Safety
    /// 1. The CPU supports AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn chunks_avx2(&self, d: &mut [D], s: &[S]) -> Result<()> {
        // SAFETY: (1) the CPU has AVX2. The fallback is this loop's own
        // chunk, for the chunks the one-pass conversion cannot settle.
        if let Some(r) = unsafe {
            super::float_int_avx2::try_chunks(self.mode, d, s, |dc, sc| self.chunk::<true>(dc, sc))
        } {
            return r;
        }
        self.chunks_body::<true>(d, s)
    }

    #[inline(always)]
    fn chunks_body<const WIDE: bool>(&self, d: &mut [D], s: &[S]) -> Result<()> {
        for (dc, sc) in d.chunks_mut(CHUNK).zip(s.chunks(CHUNK)) {
            self.chunk::<WIDE>(dc, sc)?;
        }
        Ok(())
    }
}

impl<D: Conv<S>, S: NativeType> Kernel for NumericAssign<D, S> {
    const NSRC: usize = 1;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: (1) src[0] holds an S and dst has room for a D; unaligned
        // access, as the data may be.
        let s = unsafe { std::ptr::read_unaligned(src[0] as *const S) };
        let d = convert::<D, S>(s, self.mode)?;
        // SAFETY: (1) src[0] holds an S and dst has room for a D; unaligned access, as the
        // data may be.
        unsafe { std::ptr::write_unaligned(dst as *mut D, d) };
        Ok(())
    }

    unsafe fn strided(&self, _k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        let (dst, dst_stride, src, src_stride, count) = run.parts();
        let (src, ss) = (src[0], src_stride[0]);
        // The loop selector decides the walk (`kernels::loops`).
        let contiguous = run_of(Operand::of::<D>(dst.cast_const(), dst_stride)) == Run::Contiguous
            && run_of(Operand::of::<S>(src, ss)) == Run::Contiguous;
        if contiguous && count > 0 && D::TYPE == S::TYPE {
            // Same type: every mode is a plain copy (a move if they overlap).
            // SAFETY: (1) `count` elements of that type on each side.
            unsafe { std::ptr::copy(src, dst, count * size_of::<D>()) };
            return Ok(());
        }
        if select(
            Operand::of::<D>(dst.cast_const(), dst_stride),
            &[Operand::of::<S>(src, ss)],
            count,
            false,
        ) == Plan::Contiguous
        {
            // SAFETY: (1) `count` contiguous, aligned elements on each side,
            // in ranges that do not overlap, so the slices do not alias.
            let (d, s) = unsafe {
                (
                    std::slice::from_raw_parts_mut(dst as *mut D, count),
                    std::slice::from_raw_parts(src as *const S, count),
                )
            };
            return self.chunks(d, s);
        }
        // Strided or unaligned: gather a chunk onto the stack, convert it
        // there, scatter it back.
        let mut sbuf = [S::default(); CHUNK];
        let mut dbuf = [D::default(); CHUNK];
        let mut done = 0usize;
        while done < count {
            let n = (count - done).min(CHUNK);
            for (j, slot) in sbuf[..n].iter_mut().enumerate() {
                let i = (done + j) as isize;
                // SAFETY: (1) element `done + j` < count of the source.
                *slot = unsafe { std::ptr::read_unaligned(src.offset(i * ss) as *const S) };
            }
            self.chunk::<false>(&mut dbuf[..n], &sbuf[..n])?;
            for (j, v) in dbuf[..n].iter().enumerate() {
                let i = (done + j) as isize;
                // SAFETY: (1) element `done + j` < count of the destination.
                unsafe { std::ptr::write_unaligned(dst.offset(i * dst_stride) as *mut D, *v) };
            }
            done += n;
        }
        Ok(())
    }
}

/// Builds `dst ← src` for two builtin types.
///
/// # Safety
/// As [`CKernelBuilder::emplace`]: `offset` is a free slot.
pub(crate) unsafe fn make(
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    dst: BuiltinType,
    src: BuiltinType,
    req: KernelRequest,
    mode: ErrorMode,
) -> Result<usize> {
    if dst == BuiltinType::Void && src == BuiltinType::Void {
        // SAFETY: the caller's promise.
        return unsafe { ckb.emplace(offset, req, VoidAssign) };
    }
    // A bool source is read as its byte (`<bool as NativeType>::Raw`).
    with_native!(dst, |D| with_native!(src, |S| {
        // SAFETY: the caller's promise.
        unsafe {
            ckb.as_mut().emplace(
                offset,
                req,
                NumericAssign::<D, <S as NativeType>::Raw>::new(mode),
            )
        }
    }))
    .flatten()
    .unwrap_or_else(|| Err(void_error(dst, src)))
}

fn void_error(dst: BuiltinType, src: BuiltinType) -> Error {
    Error::type_error(format!("cannot assign {src} to {dst}: void holds no value"))
}

/// `void ← void`: nothing to do.
struct VoidAssign;

impl Kernel for VoidAssign {
    const NSRC: usize = 1;
    unsafe fn single(&self, _k: KernelRef<'_>, _dst: *mut u8, _src: &[*const u8]) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn ok<D: Conv<S>, S: NativeType>(s: S, mode: ErrorMode) -> std::result::Result<D, ErrorKind> {
        convert::<D, S>(s, mode.resolve()).map_err(|e| e.kind())
    }

    #[test]
    fn reference_examples() {
        use ErrorMode::*;
        assert_eq!(ok::<i8, i32>(128, Overflow), Err(ErrorKind::Overflow));
        assert_eq!(ok::<i8, f64>(1.25, Default), Err(ErrorKind::Fractional));
        assert_eq!(ok::<i8, f64>(1.25, Overflow), Ok(1));
        assert_eq!(ok::<u16, i32>(-1, NoCheck), Ok(65535));
        assert_eq!(ok::<f32, i64>(33554433, NoCheck), Ok(33554432.0));
        assert_eq!(ok::<f32, i64>(33554433, Overflow), Ok(33554432.0));
        assert_eq!(ok::<f32, i64>(33554433, Inexact), Err(ErrorKind::Inexact));
    }

    #[test]
    fn float_to_int_limits_are_exact() {
        use ErrorMode::Overflow;
        assert_eq!(
            ok::<i64, f64>(-9223372036854775808.0, Overflow),
            Ok(i64::MIN)
        );
        assert_eq!(
            ok::<i64, f64>(9223372036854775808.0, Overflow),
            Err(ErrorKind::Overflow)
        );
        assert_eq!(
            ok::<i64, f64>(9223372036854774784.0, Overflow),
            Ok(9223372036854774784)
        );
        assert_eq!(ok::<u8, f64>(255.9, Overflow), Ok(255));
        assert_eq!(ok::<u8, f64>(256.0, Overflow), Err(ErrorKind::Overflow));
        assert_eq!(ok::<u8, f64>(-0.9, Overflow), Ok(0));
        assert_eq!(ok::<u8, f64>(-1.0, Overflow), Err(ErrorKind::Overflow));
        assert_eq!(ok::<i8, f32>(-128.9, Overflow), Ok(-128));
        assert_eq!(ok::<i8, f32>(-129.0, Overflow), Err(ErrorKind::Overflow));
        assert_eq!(ok::<u128, f32>(f32::MAX, Overflow), Ok(f32::MAX as u128));
        assert_eq!(
            ok::<i128, f32>(f32::MAX, Overflow),
            Err(ErrorKind::Overflow)
        );
        for mode in [Overflow, ErrorMode::Fractional, ErrorMode::Inexact] {
            assert_eq!(ok::<i32, f64>(f64::NAN, mode), Err(ErrorKind::Overflow));
            assert_eq!(
                ok::<i32, f64>(f64::INFINITY, mode),
                Err(ErrorKind::Overflow)
            );
            assert_eq!(
                ok::<u64, f32>(f32::NEG_INFINITY, mode),
                Err(ErrorKind::Overflow)
            );
        }
        assert_eq!(ok::<i32, f64>(f64::NAN, ErrorMode::NoCheck), Ok(0));
        assert_eq!(ok::<i32, f64>(1e300, ErrorMode::NoCheck), Ok(i32::MAX));
    }

    #[test]
    fn int_to_float_inexact_catches_rounding_to_the_limit() {
        use ErrorMode::Inexact;
        assert_eq!(ok::<f32, i32>(i32::MAX, Inexact), Err(ErrorKind::Inexact));
        assert_eq!(ok::<f32, i32>(1 << 24, Inexact), Ok(16777216.0));
        assert_eq!(
            ok::<f32, i32>((1 << 24) + 1, Inexact),
            Err(ErrorKind::Inexact)
        );
        assert_eq!(ok::<f64, u64>(u64::MAX, Inexact), Err(ErrorKind::Inexact));
        assert_eq!(
            ok::<f64, i64>(i64::MIN, Inexact),
            Ok(-9223372036854775808.0)
        );
        assert_eq!(
            ok::<f32, u128>(u128::MAX, ErrorMode::Overflow),
            Err(ErrorKind::Overflow)
        );
        assert_eq!(
            ok::<f32, u128>(u128::MAX, ErrorMode::NoCheck),
            Ok(f32::INFINITY)
        );
        assert_eq!(ok::<f16, i32>(65504, Inexact), Ok(f16::MAX));
        assert_eq!(
            ok::<f16, i32>(65520, ErrorMode::Overflow),
            Err(ErrorKind::Overflow)
        );
        assert_eq!(ok::<f16, i32>(2049, Inexact), Err(ErrorKind::Inexact));
    }

    #[test]
    fn float_to_float() {
        use ErrorMode::*;
        assert_eq!(ok::<f32, f64>(1e300, Overflow), Err(ErrorKind::Overflow));
        assert_eq!(ok::<f32, f64>(1e300, NoCheck), Ok(f32::INFINITY));
        assert_eq!(ok::<f32, f64>(f64::INFINITY, Inexact), Ok(f32::INFINITY));
        assert!(ok::<f32, f64>(f64::NAN, Inexact).unwrap().is_nan());
        assert_eq!(ok::<f32, f64>(0.1, Fractional), Ok(0.1f32));
        assert_eq!(ok::<f32, f64>(0.1, Inexact), Err(ErrorKind::Inexact));
        assert_eq!(ok::<f16, f64>(0.5, Inexact), Ok(f16::from_f32(0.5)));
        assert_eq!(ok::<f16, f32>(1e5, Overflow), Err(ErrorKind::Overflow));
        assert_eq!(
            ok::<f64, f16>(f16::from_f32(0.1), Inexact),
            Ok(f16::from_f32(0.1).to_f64())
        );
    }

    #[test]
    fn bool_rules() {
        use ErrorMode::*;
        assert_eq!(ok::<bool, i32>(2, NoCheck), Ok(true));
        assert_eq!(ok::<bool, i32>(2, Overflow), Err(ErrorKind::Overflow));
        assert_eq!(ok::<bool, f64>(1.0, Inexact), Ok(true));
        assert_eq!(ok::<bool, f64>(0.5, Fractional), Err(ErrorKind::Overflow));
        assert_eq!(ok::<i32, bool>(true, Inexact), Ok(1));
        assert_eq!(ok::<f64, bool>(true, Inexact), Ok(1.0));
        assert_eq!(
            ok::<Complex<f64>, bool>(true, Inexact),
            Ok(Complex::new(1.0, 0.0))
        );
    }

    #[test]
    fn complex_rules() {
        use ErrorMode::*;
        let z = Complex::new(1.5f64, 2.0);
        assert_eq!(ok::<f64, Complex<f64>>(z, NoCheck), Ok(1.5));
        let e = convert::<f64, Complex<f64>>(z, Overflow).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Inexact);
        assert!(e.message().contains("non-zero imaginary part"), "{e}");
        assert_eq!(
            ok::<f64, Complex<f64>>(Complex::new(1.5, 0.0), Inexact),
            Ok(1.5)
        );
        assert_eq!(
            ok::<i32, Complex<f64>>(Complex::new(1.5, 0.0), Default),
            Err(ErrorKind::Fractional)
        );
        assert_eq!(
            ok::<Complex<f64>, i32>(7, Inexact),
            Ok(Complex::new(7.0, 0.0))
        );
        assert_eq!(
            ok::<Complex<f32>, Complex<f64>>(Complex::new(1e300, 0.0), Overflow),
            Err(ErrorKind::Overflow)
        );
        assert_eq!(
            ok::<Complex<f32>, Complex<f64>>(Complex::new(0.5, 0.25), Inexact),
            Ok(Complex::new(0.5, 0.25))
        );
    }

    #[test]
    fn failure_messages_show_floats_in_shortest_form() {
        // Regression (bad-input sweep): Display wrote 1e300 as 301 digits.
        let e = convert::<f32, f64>(1e300, ErrorMode::Overflow).unwrap_err();
        assert_eq!(
            e.message(),
            "float64 value 1e300 is out of range for float32"
        );
        let e = convert::<i64, f64>(f64::NEG_INFINITY, ErrorMode::Overflow).unwrap_err();
        assert_eq!(
            e.message(),
            "float64 value -Infinity is out of range for int64"
        );
        let e = convert::<i8, f32>(f32::NAN, ErrorMode::Overflow).unwrap_err();
        assert_eq!(e.message(), "float32 value NaN is out of range for int8");
        let e = convert::<f16, f64>(1e-30, ErrorMode::Inexact).unwrap_err();
        assert_eq!(
            e.message(),
            "float64 value 1e-30 cannot be represented exactly in float16"
        );
        let e = convert::<f64, Complex<f64>>(Complex::new(1e300, 0.5), ErrorMode::Overflow)
            .unwrap_err();
        assert!(e.message().contains("value [1e300, 0.5] has"), "{e}");
    }

    #[test]
    fn failure_messages_name_value_and_types() {
        let e = convert::<u8, i32>(300, ErrorMode::Overflow).unwrap_err();
        assert_eq!(e.message(), "int32 value 300 is out of range for uint8");
        let e = convert::<i32, f64>(2.5, ErrorMode::Fractional).unwrap_err();
        assert_eq!(
            e.message(),
            "float64 value 2.5 has a fractional part, so it cannot be assigned to int32"
        );
        let e = convert::<f32, f64>(0.1, ErrorMode::Inexact).unwrap_err();
        assert_eq!(
            e.message(),
            "float64 value 0.1 cannot be represented exactly in float32"
        );
    }
}
