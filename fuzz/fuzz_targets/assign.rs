//! Assignment between builtin scalars against a plain reference.
//!
//! The input picks a destination and a source type among the 16 numeric
//! builtins, an error mode, a layout (0-d, contiguous, strided, reversed)
//! and up to a few hundred source values (raw bits, integers, values near
//! powers of two, or special values). [`reference`] computes, with exact
//! integer and f64 arithmetic, what DESIGN §6 and the table in
//! `kernels/assign/numeric.rs` say each value becomes:
//!
//! - int ← int: checked modes fail (`overflow`) outside the range; nocheck
//!   wraps.
//! - int ← float: NaN and ±inf are `overflow` errors in every checked mode,
//!   as is a truncated value out of range; `fractional` and `inexact` also
//!   fail on a fraction; nocheck truncates and saturates, NaN → 0.
//! - float ← int or float: `overflow` when a finite value becomes infinite;
//!   `inexact` also when rounding changes the value (NaN → NaN is exact).
//! - bool ← x: checked modes accept only 0 and 1 (`overflow`); nocheck is
//!   `x != 0`. x ← bool: 0 or 1, never fails.
//! - real ← complex: checked modes fail (`inexact`) on a non-zero imaginary
//!   part, then convert the real part; complex ← x converts each part.
//!
//! On success every element must equal the reference (floats bit for bit,
//! NaNs as NaN); on failure the error kind must be that of the first bad
//! element, which and every element after it keep their old value.

#![no_main]

use arbitrary::Arbitrary;
use dynd::kernels::assign::ErrorMode;
use dynd::types::BuiltinType;
use dynd::{Array, ErrorKind, Index, Type};
use half::f16;
use libfuzzer_sys::fuzz_target;
use num_complex::Complex;

/// The numeric builtins (void has no values).
const TYPES: [BuiltinType; 16] = [
    BuiltinType::Bool,
    BuiltinType::Int8,
    BuiltinType::Int16,
    BuiltinType::Int32,
    BuiltinType::Int64,
    BuiltinType::Int128,
    BuiltinType::UInt8,
    BuiltinType::UInt16,
    BuiltinType::UInt32,
    BuiltinType::UInt64,
    BuiltinType::UInt128,
    BuiltinType::Float16,
    BuiltinType::Float32,
    BuiltinType::Float64,
    BuiltinType::Complex64,
    BuiltinType::Complex128,
];

/// Most source values per input: enough for two checked chunks (256 each).
const MAX_VALUES: usize = 600;

#[derive(Arbitrary, Debug)]
struct Input {
    dst: u8,
    src: u8,
    mode: u8,
    layout: Layout,
    values: Vec<SrcVal>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Layout {
    Scalar,
    Contiguous,
    StridedSrc,
    ReversedDst,
    BothStrided,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
struct SrcVal {
    re: Val,
    im: Option<Val>,
}

/// How a source value is made, so that interesting values are close at hand.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Val {
    /// The type's bits, as they are.
    Bits(u128),
    /// An integer, converted as `as` would.
    Int(i64),
    /// ±(2^exp + delta) + quarter/4.
    Pow2 {
        exp: u8,
        neg: bool,
        delta: i8,
        quarter: u8,
    },
    /// One of a few special values.
    Special(u8),
}

// ------------------------------------------------------------------ values

/// A value of one builtin type.
#[derive(Debug, Clone, Copy)]
enum Scal {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    I128(i128),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    U128(u128),
    F16(f16),
    F32(f32),
    F64(f64),
    C64(Complex<f32>),
    C128(Complex<f64>),
}

/// Calls `$body` with `$v` bound to the Rust value of a `Scal`.
macro_rules! with_scal {
    ($s:expr, $v:ident => $body:expr) => {
        match $s {
            Scal::Bool($v) => $body,
            Scal::I8($v) => $body,
            Scal::I16($v) => $body,
            Scal::I32($v) => $body,
            Scal::I64($v) => $body,
            Scal::I128($v) => $body,
            Scal::U8($v) => $body,
            Scal::U16($v) => $body,
            Scal::U32($v) => $body,
            Scal::U64($v) => $body,
            Scal::U128($v) => $body,
            Scal::F16($v) => $body,
            Scal::F32($v) => $body,
            Scal::F64($v) => $body,
            Scal::C64($v) => $body,
            Scal::C128($v) => $body,
        }
    };
}

/// Calls `$body` with the Rust type `$t` of a builtin.
macro_rules! with_type {
    ($b:expr, $t:ident => $body:expr) => {
        match $b {
            BuiltinType::Bool => {
                type $t = bool;
                $body
            }
            BuiltinType::Int8 => {
                type $t = i8;
                $body
            }
            BuiltinType::Int16 => {
                type $t = i16;
                $body
            }
            BuiltinType::Int32 => {
                type $t = i32;
                $body
            }
            BuiltinType::Int64 => {
                type $t = i64;
                $body
            }
            BuiltinType::Int128 => {
                type $t = i128;
                $body
            }
            BuiltinType::UInt8 => {
                type $t = u8;
                $body
            }
            BuiltinType::UInt16 => {
                type $t = u16;
                $body
            }
            BuiltinType::UInt32 => {
                type $t = u32;
                $body
            }
            BuiltinType::UInt64 => {
                type $t = u64;
                $body
            }
            BuiltinType::UInt128 => {
                type $t = u128;
                $body
            }
            BuiltinType::Float16 => {
                type $t = f16;
                $body
            }
            BuiltinType::Float32 => {
                type $t = f32;
                $body
            }
            BuiltinType::Float64 => {
                type $t = f64;
                $body
            }
            BuiltinType::Complex64 => {
                type $t = Complex<f32>;
                $body
            }
            BuiltinType::Complex128 => {
                type $t = Complex<f64>;
                $body
            }
            BuiltinType::Void => unreachable!("void is not in TYPES"),
            // Not in TYPES yet: its reference conversions (double rounding
            // from integers above 2^53) are still to be written.
            BuiltinType::BFloat16 => unreachable!("bfloat16 is not in TYPES"),
        }
    };
}

trait IntoScal: dynd::types::NativeType {
    fn scal(self) -> Scal;
}
macro_rules! into_scal {
    ($($t:ty => $v:ident),*) => {$(
        impl IntoScal for $t { fn scal(self) -> Scal { Scal::$v(self) } }
    )*};
}
into_scal!(
    bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64, i128 => I128,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64, u128 => U128,
    f16 => F16, f32 => F32, f64 => F64, Complex<f32> => C64, Complex<f64> => C128
);

impl Scal {
    fn set(self, a: &Array) {
        with_scal!(self, v => a.set_scalar(v)).expect("set a scalar of its own type");
    }

    fn get(b: BuiltinType, a: &Array) -> Scal {
        with_type!(b, T => a.as_scalar::<T>().expect("read a scalar of its own type").scal())
    }

    /// Equal values: floats bit for bit, any NaN equals any NaN.
    fn same(self, other: Scal) -> bool {
        fn f(a: f64, b: f64) -> bool {
            (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
        }
        fn f32s(a: f32, b: f32) -> bool {
            (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
        }
        match (self, other) {
            (Scal::Bool(a), Scal::Bool(b)) => a == b,
            (Scal::I8(a), Scal::I8(b)) => a == b,
            (Scal::I16(a), Scal::I16(b)) => a == b,
            (Scal::I32(a), Scal::I32(b)) => a == b,
            (Scal::I64(a), Scal::I64(b)) => a == b,
            (Scal::I128(a), Scal::I128(b)) => a == b,
            (Scal::U8(a), Scal::U8(b)) => a == b,
            (Scal::U16(a), Scal::U16(b)) => a == b,
            (Scal::U32(a), Scal::U32(b)) => a == b,
            (Scal::U64(a), Scal::U64(b)) => a == b,
            (Scal::U128(a), Scal::U128(b)) => a == b,
            (Scal::F16(a), Scal::F16(b)) => {
                (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
            }
            (Scal::F32(a), Scal::F32(b)) => f32s(a, b),
            (Scal::F64(a), Scal::F64(b)) => f(a, b),
            (Scal::C64(a), Scal::C64(b)) => f32s(a.re, b.re) && f32s(a.im, b.im),
            (Scal::C128(a), Scal::C128(b)) => f(a.re, b.re) && f(a.im, b.im),
            _ => false,
        }
    }

    /// The value as the reference sees it.
    fn num(self) -> Num {
        let r = match self {
            Scal::Bool(v) => Real::Int(Big::from_u128(v as u128)),
            Scal::I8(v) => Real::Int(Big::from_i128(v as i128)),
            Scal::I16(v) => Real::Int(Big::from_i128(v as i128)),
            Scal::I32(v) => Real::Int(Big::from_i128(v as i128)),
            Scal::I64(v) => Real::Int(Big::from_i128(v as i128)),
            Scal::I128(v) => Real::Int(Big::from_i128(v)),
            Scal::U8(v) => Real::Int(Big::from_u128(v as u128)),
            Scal::U16(v) => Real::Int(Big::from_u128(v as u128)),
            Scal::U32(v) => Real::Int(Big::from_u128(v as u128)),
            Scal::U64(v) => Real::Int(Big::from_u128(v as u128)),
            Scal::U128(v) => Real::Int(Big::from_u128(v)),
            Scal::F16(v) => Real::Float(v.to_f64()),
            Scal::F32(v) => Real::Float(v as f64),
            Scal::F64(v) => Real::Float(v),
            Scal::C64(v) => return Num::Complex(v.re as f64, v.im as f64),
            Scal::C128(v) => return Num::Complex(v.re, v.im),
        };
        Num::Real(r)
    }
}

/// A source value of type `b` made as `v` says.
fn make(b: BuiltinType, v: SrcVal) -> Scal {
    let re = make_real(b, v.re);
    let im =
        v.im.map_or(0.0, |im| match make_real(BuiltinType::Float64, im) {
            Scal::F64(x) => x,
            _ => unreachable!(),
        });
    match re {
        Scal::C64(z) => Scal::C64(Complex::new(z.re, im as f32)),
        Scal::C128(z) => Scal::C128(Complex::new(z.re, im)),
        s => s,
    }
}

fn make_real(b: BuiltinType, v: Val) -> Scal {
    // The value as bits (for ints: two's complement) and as an f64.
    let (bits, x): (u128, f64) = match v {
        Val::Bits(bits) => {
            return match b {
                BuiltinType::Bool => Scal::Bool(bits & 1 == 1),
                BuiltinType::Float16 => Scal::F16(f16::from_bits(bits as u16)),
                BuiltinType::Float32 | BuiltinType::Complex64 => {
                    let z = Complex::new(f32::from_bits(bits as u32), 0.0);
                    if b == BuiltinType::Float32 {
                        Scal::F32(z.re)
                    } else {
                        Scal::C64(z)
                    }
                }
                BuiltinType::Float64 | BuiltinType::Complex128 => {
                    let z = Complex::new(f64::from_bits(bits as u64), 0.0);
                    if b == BuiltinType::Float64 {
                        Scal::F64(z.re)
                    } else {
                        Scal::C128(z)
                    }
                }
                _ => int_of_bits(b, bits),
            };
        }
        Val::Int(i) => (i as i128 as u128, i as f64),
        Val::Pow2 {
            exp,
            neg,
            delta,
            quarter,
        } => {
            let e = exp % 130;
            let m = if e >= 128 { u128::MAX } else { 1u128 << e };
            let mag = m.wrapping_add(delta as i128 as u128);
            let bits = if neg { mag.wrapping_neg() } else { mag };
            let x = 2f64.powi(e as i32) + delta as f64 + (quarter % 4) as f64 / 4.0;
            (bits, if neg { -x } else { x })
        }
        Val::Special(k) => {
            const F: [f64; 20] = [
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                -0.0,
                0.0,
                0.5,
                -0.5,
                1.0,
                -1.0,
                1.5,
                f32::MAX as f64,
                -(f32::MAX as f64),
                65504.0,
                65520.0,
                f64::MAX,
                f64::MIN_POSITIVE,
                5e-324,
                1e-45,
                9223372036854775807.0,
                -9223372036854775808.0,
            ];
            let x = F[k as usize % F.len()];
            // For ints: the extremes of each width, and small values.
            let ints: [u128; 12] = [
                0,
                1,
                u128::MAX,
                i128::MAX as u128,
                i128::MIN as u128,
                u64::MAX as u128,
                i64::MIN as u128,
                i64::MAX as u128,
                u32::MAX as u128,
                i32::MIN as u128,
                255,
                128,
            ];
            (ints[k as usize % ints.len()], x)
        }
    };
    match b {
        BuiltinType::Bool => Scal::Bool(bits & 1 == 1),
        BuiltinType::Float16 => Scal::F16(f16::from_f64(x)),
        BuiltinType::Float32 => Scal::F32(x as f32),
        BuiltinType::Float64 => Scal::F64(x),
        BuiltinType::Complex64 => Scal::C64(Complex::new(x as f32, 0.0)),
        BuiltinType::Complex128 => Scal::C128(Complex::new(x, 0.0)),
        _ => int_of_bits(b, bits),
    }
}

fn int_of_bits(b: BuiltinType, bits: u128) -> Scal {
    match b {
        BuiltinType::Int8 => Scal::I8(bits as i8),
        BuiltinType::Int16 => Scal::I16(bits as i16),
        BuiltinType::Int32 => Scal::I32(bits as i32),
        BuiltinType::Int64 => Scal::I64(bits as i64),
        BuiltinType::Int128 => Scal::I128(bits as i128),
        BuiltinType::UInt8 => Scal::U8(bits as u8),
        BuiltinType::UInt16 => Scal::U16(bits as u16),
        BuiltinType::UInt32 => Scal::U32(bits as u32),
        BuiltinType::UInt64 => Scal::U64(bits as u64),
        BuiltinType::UInt128 => Scal::U128(bits),
        _ => unreachable!("not an integer type: {b}"),
    }
}

// --------------------------------------------------------------- reference

/// An exact integer: sign and magnitude (zero is never negative).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Big {
    neg: bool,
    mag: u128,
}

impl Big {
    fn from_i128(v: i128) -> Big {
        Big {
            neg: v < 0,
            mag: v.unsigned_abs(),
        }
    }
    fn from_u128(v: u128) -> Big {
        Big { neg: false, mag: v }
    }
    /// An integral f64, when it fits.
    fn from_integral(t: f64) -> Option<Big> {
        (t.abs() < 2f64.powi(128)).then(|| Big {
            neg: t < 0.0,
            mag: t.abs() as u128,
        })
    }
    fn le(self, o: Big) -> bool {
        match (self.neg, o.neg) {
            (false, false) => self.mag <= o.mag,
            (true, true) => self.mag >= o.mag,
            (true, false) => true,
            (false, true) => false,
        }
    }
    /// Two's complement bits, wrapped to 128.
    fn bits(self) -> u128 {
        if self.neg {
            self.mag.wrapping_neg()
        } else {
            self.mag
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Real {
    Int(Big),
    Float(f64),
}

#[derive(Debug, Clone, Copy)]
enum Num {
    Real(Real),
    Complex(f64, f64),
}

fn int_range(b: BuiltinType) -> (Big, Big) {
    let bits = 8 * b.data_size() as u32;
    let signed = matches!(
        b,
        BuiltinType::Int8
            | BuiltinType::Int16
            | BuiltinType::Int32
            | BuiltinType::Int64
            | BuiltinType::Int128
    );
    if signed {
        let half = 1u128 << (bits - 1);
        (
            Big {
                neg: true,
                mag: half,
            },
            Big::from_u128(half - 1),
        )
    } else {
        let max = if bits == 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        (Big::from_u128(0), Big::from_u128(max))
    }
}

fn is_float(b: BuiltinType) -> bool {
    matches!(
        b,
        BuiltinType::Float16 | BuiltinType::Float32 | BuiltinType::Float64
    )
}

/// `x` rounded to the float type `b`, as an f64 (exact for every type).
fn round_float(b: BuiltinType, x: f64) -> f64 {
    match b {
        BuiltinType::Float16 => f16::from_f64(x).to_f64(),
        BuiltinType::Float32 => x as f32 as f64,
        BuiltinType::Float64 => x,
        _ => unreachable!(),
    }
}

fn float_scal(b: BuiltinType, r: f64) -> Scal {
    match b {
        BuiltinType::Float16 => Scal::F16(f16::from_f64(r)),
        BuiltinType::Float32 => Scal::F32(r as f32),
        BuiltinType::Float64 => Scal::F64(r),
        _ => unreachable!(),
    }
}

/// A real value into the real float type `b`: the rounded value (exact in
/// an f64), or the error of a checked mode.
fn real_to_float(b: BuiltinType, v: Real, mode: ErrorMode) -> Result<f64, ErrorKind> {
    let (r, exact) = match v {
        Real::Int(i) => {
            // The magnitude rounds once (u128 → f64 and u128 → f32 round to
            // nearest; below 2^53 the f64 is exact, so f16 rounds once too;
            // at or above 2^53 f16 overflows anyway).
            let m = match b {
                BuiltinType::Float32 => i.mag as f32 as f64,
                BuiltinType::Float16 if i.mag >= 1 << 53 => f64::INFINITY,
                _ => round_float(b, i.mag as f64),
            };
            let r = if i.neg { -m } else { m };
            (r, r.is_finite() && Big::from_integral(r) == Some(i))
        }
        Real::Float(x) => {
            let r = round_float(b, x);
            (r, r.to_bits() == x.to_bits() || x.is_nan())
        }
    };
    let finite_in = match v {
        Real::Int(_) => true,
        Real::Float(x) => x.is_finite(),
    };
    if mode != ErrorMode::NoCheck {
        if finite_in && !r.is_finite() {
            return Err(ErrorKind::Overflow);
        }
        if mode == ErrorMode::Inexact && !exact {
            return Err(ErrorKind::Inexact);
        }
    }
    Ok(r)
}

/// A real value into the real (non-complex) type `b`.
fn real_to(b: BuiltinType, v: Real, mode: ErrorMode) -> Result<Scal, ErrorKind> {
    let checked = mode != ErrorMode::NoCheck;
    if b == BuiltinType::Bool {
        let (zero, one) = match v {
            Real::Int(i) => (i.mag == 0, i == Big::from_u128(1)),
            Real::Float(x) => (x == 0.0, x == 1.0),
        };
        if checked && !zero && !one {
            return Err(ErrorKind::Overflow);
        }
        return Ok(Scal::Bool(!zero));
    }
    if is_float(b) {
        return real_to_float(b, v, mode).map(|r| float_scal(b, r));
    }
    let (lo, hi) = int_range(b);
    let value = match v {
        Real::Int(i) => {
            if checked && !(lo.le(i) && i.le(hi)) {
                return Err(ErrorKind::Overflow);
            }
            i
        }
        Real::Float(x) => {
            let t = x.trunc();
            let inr = x.is_finite() && Big::from_integral(t).is_some_and(|t| lo.le(t) && t.le(hi));
            if checked {
                if !inr {
                    return Err(ErrorKind::Overflow);
                }
                if mode != ErrorMode::Overflow && t != x {
                    return Err(ErrorKind::Fractional);
                }
            }
            if x.is_nan() {
                Big::from_u128(0)
            } else if inr {
                Big::from_integral(t).expect("in range")
            } else if x < 0.0 {
                lo
            } else {
                hi
            }
        }
    };
    Ok(int_of_bits(b, value.bits()))
}

/// What `src` becomes in type `b` under `mode` (never `Default`).
fn reference(b: BuiltinType, src: Num, mode: ErrorMode) -> Result<Scal, ErrorKind> {
    let checked = mode != ErrorMode::NoCheck;
    let complex_dst = matches!(b, BuiltinType::Complex64 | BuiltinType::Complex128);
    let part = if b == BuiltinType::Complex64 {
        BuiltinType::Float32
    } else {
        BuiltinType::Float64
    };
    let make_c = |re: f64, im: f64| {
        if b == BuiltinType::Complex64 {
            Scal::C64(Complex::new(re as f32, im as f32))
        } else {
            Scal::C128(Complex::new(re, im))
        }
    };
    match src {
        Num::Real(v) if complex_dst => real_to_float(part, v, mode).map(|r| make_c(r, 0.0)),
        Num::Real(v) => real_to(b, v, mode),
        Num::Complex(re, im) if complex_dst => {
            // Overflow in either part is reported before inexactness.
            let check = if mode == ErrorMode::Inexact {
                ErrorMode::Overflow
            } else {
                mode
            };
            let r = real_to_float(part, Real::Float(re), check)?;
            let i = real_to_float(part, Real::Float(im), check)?;
            if mode == ErrorMode::Inexact {
                real_to_float(part, Real::Float(re), mode)?;
                real_to_float(part, Real::Float(im), mode)?;
            }
            Ok(make_c(r, i))
        }
        Num::Complex(re, im) => {
            if checked && im != 0.0 {
                return Err(ErrorKind::Inexact);
            }
            real_to(b, Real::Float(re), mode)
        }
    }
}

// ------------------------------------------------------------------ target

/// A value for the destination's untouched elements.
fn sentinel(b: BuiltinType) -> Scal {
    make_real(b, Val::Bits(0x5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a))
}

fn elem(a: &Array, i: usize) -> Array {
    a.index(&[Index::At(i as isize)]).expect("index in range")
}

fuzz_target!(|input: Input| {
    let dst = TYPES[input.dst as usize % TYPES.len()];
    let src = TYPES[input.src as usize % TYPES.len()];
    let mode = ErrorMode::ALL[input.mode as usize % ErrorMode::ALL.len()];
    let values: Vec<Scal> = input
        .values
        .iter()
        .take(MAX_VALUES)
        .map(|&v| make(src, v))
        .collect();
    if values.is_empty() {
        return;
    }
    let expected: Vec<Result<Scal, ErrorKind>> = values
        .iter()
        .map(|v| reference(dst, v.num(), mode.resolve()))
        .collect();

    if let Layout::Scalar = input.layout {
        let s = Array::empty(Type::builtin(src)).expect("scalar array");
        values[0].set(&s);
        let d = Array::empty(Type::builtin(dst)).expect("scalar array");
        sentinel(dst).set(&d);
        match (d.assign(&s, mode), expected[0]) {
            (Ok(()), Ok(want)) => {
                let got = Scal::get(dst, &d);
                assert!(
                    got.same(want),
                    "{src} {:?} → {dst} under {mode}: got {got:?}, want {want:?}",
                    values[0]
                );
            }
            (Err(e), Err(kind)) => {
                assert_eq!(
                    e.kind(),
                    kind,
                    "{src} {:?} → {dst} under {mode}: {e}",
                    values[0]
                );
                assert!(
                    Scal::get(dst, &d).same(sentinel(dst)),
                    "failed scalar assign wrote"
                );
            }
            (got, want) => panic!(
                "{src} {:?} → {dst} under {mode}: got {got:?}, want {want:?}",
                values[0]
            ),
        }
        return;
    }

    // 1-d arrays: the strided kernel, chunked in checked modes.
    let n = values.len();
    let (src_step, dst_step) = match input.layout {
        Layout::Contiguous | Layout::Scalar => (1, 1),
        Layout::StridedSrc => (2, 1),
        Layout::ReversedDst => (1, -1),
        Layout::BothStrided => (3, -2),
    };
    let view = |b: BuiltinType, step: isize| {
        let len = n * step.unsigned_abs();
        let whole = Array::empty(Type::fixed_dim(len, Type::builtin(b))).expect("1-d array");
        whole
            .index(&[Index::slice(None, None, step)])
            .expect("a strided view")
    };
    let s = view(src, src_step);
    let d = view(dst, dst_step);
    for (i, v) in values.iter().enumerate() {
        v.set(&elem(&s, i));
        sentinel(dst).set(&elem(&d, i));
    }
    let first_bad = expected.iter().position(|e| e.is_err());
    let what = |i: usize| {
        format!(
            "{src} {:?} → {dst} under {mode} (element {i} of {n})",
            values[i]
        )
    };
    match (d.assign(&s, mode), first_bad) {
        (Ok(()), None) => {
            for (i, want) in expected.iter().enumerate() {
                let want = want.expect("no error expected");
                let got = Scal::get(dst, &elem(&d, i));
                assert!(got.same(want), "{}: got {got:?}, want {want:?}", what(i));
            }
        }
        (Err(e), Some(bad)) => {
            assert_eq!(
                Err(e.kind()),
                expected[bad].map(|_| ()),
                "{}: {e}",
                what(bad)
            );
            // Elements before the bad one hold their new value or the old
            // one; it and those after it keep the old one.
            for (i, want) in expected.iter().enumerate() {
                let got = Scal::get(dst, &elem(&d, i));
                if i < bad {
                    let want = want.expect("before the first error");
                    assert!(
                        got.same(want) || got.same(sentinel(dst)),
                        "{}: got {got:?}, want {want:?} or the old value",
                        what(i)
                    );
                } else {
                    assert!(
                        got.same(sentinel(dst)),
                        "{}: failed assign wrote {got:?}",
                        what(i)
                    );
                }
            }
        }
        (Ok(()), Some(bad)) => panic!("{}: assigned, want {:?}", what(bad), expected[bad]),
        (Err(e), None) => panic!("{src} → {dst} under {mode}: failed with {e}, want success"),
    }
});
