//! Typed values of reductions: plain data and conversions between
//! source, accumulator and result types.

use super::*;

/// Plain data: every bit pattern is a value, so slices over array data of
/// the matching builtin type are sound.
///
/// # Safety
/// Implementors are `Copy` types without padding or invalid bit patterns.
pub(in crate::callable::reduce) unsafe trait Pod:
    Copy + Send + Sync + 'static
{
}

macro_rules! pod {
    ($($t:ty),*) => {$(
        // SAFETY: an integer, float or pair of floats: no padding, and every
        // bit pattern is a value.
        unsafe impl Pod for $t {}
    )*};
}
pod!(
    i8,
    i16,
    i32,
    i64,
    i128,
    u8,
    u16,
    u32,
    u64,
    u128,
    f16,
    f32,
    f64,
    Complex<f32>,
    Complex<f64>,
    B8
);

/// `bool` data read as its byte (any non-zero byte is true), so data
/// written by C code holding 2 is still sound to slice.
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub(in crate::callable::reduce) struct B8(u8);

/// A value conversion: source to accumulator, accumulator to result.
pub(in crate::callable::reduce) trait Cvt<T> {
    /// The converted value.
    fn cvt(self) -> T;
}

macro_rules! cvt {
    ($($from:ty => $to:ty, |$x:ident| $e:expr;)*) => {$(
        impl Cvt<$to> for $from {
            #[inline(always)]
            fn cvt(self) -> $to {
                let $x = self;
                $e
            }
        }
    )*};
}
macro_rules! cvt_same {
    ($($t:ty),*) => { cvt!($($t => $t, |x| x;)*); };
}
cvt_same!(
    i8,
    i16,
    i32,
    i64,
    i128,
    u8,
    u16,
    u32,
    u64,
    u128,
    f32,
    f64,
    Complex<f32>,
    Complex<f64>,
    bool
);
cvt!(
    B8 => i64, |x| (x.0 != 0) as i64;
    i8 => i64, |x| x as i64;
    i16 => i64, |x| x as i64;
    i32 => i64, |x| x as i64;
    u8 => u64, |x| x as u64;
    u16 => u64, |x| x as u64;
    u32 => u64, |x| x as u64;
    f16 => f32, |x| x.to_f32();
    f32 => f16, |x| f16::from_f32(x);
    B8 => bool, |x| x.0 != 0;
    bool => B8, |x| B8(x as u8);
    B8 => f64, |x| (x.0 != 0) as u8 as f64;
    i8 => f64, |x| x as f64;
    i16 => f64, |x| x as f64;
    i32 => f64, |x| x as f64;
    i64 => f64, |x| x as f64;
    i128 => f64, |x| x as f64;
    u8 => f64, |x| x as f64;
    u16 => f64, |x| x as f64;
    u32 => f64, |x| x as f64;
    u64 => f64, |x| x as f64;
    u128 => f64, |x| x as f64;
    f16 => f64, |x| x.to_f64();
    f32 => f64, |x| x as f64;
    Complex<f32> => Complex<f64>, |x| Complex::new(x.re as f64, x.im as f64);
);
macro_rules! cvt_nonzero {
    ($($t:ty),*) => { cvt!($($t => bool, |x| x != (0 as $t);)*); };
}
cvt_nonzero!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, f32, f64);
cvt!(
    f16 => bool, |x| x.to_f32() != 0.0;
    Complex<f32> => bool, |x| x.re != 0.0 || x.im != 0.0;
    Complex<f64> => bool, |x| x.re != 0.0 || x.im != 0.0;
);
