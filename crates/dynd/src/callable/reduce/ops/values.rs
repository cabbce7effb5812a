//! Typed values of reductions: conversions between source, accumulator
//! and result types.
//!
//! Every conversion is the assignment family's `nocheck` conversion
//! ([`Conv::cast`]), so a reduction converts exactly as an assignment
//! would; all and any accumulate [`Truth`], the truthiness the logical
//! functions use (a complex number is true when either part is non-zero).

use super::*;
use crate::kernels::assign::numeric::Conv;
use crate::kernels::mask::Truthy;
use crate::types::NativeType;

/// Plain data that threads share: every bit pattern is a value, so slices
/// over array data of the matching builtin type are sound.
pub(in crate::callable::reduce) trait Pod:
    bytemuck::Pod + Send + Sync
{
}
impl<T: bytemuck::Pod + Send + Sync> Pod for T {}

/// A value conversion: source to accumulator, accumulator to result.
pub(in crate::callable::reduce) trait Cvt<T> {
    /// The converted value.
    fn cvt(self) -> T;
}

impl<S: NativeType, A: Conv<S>> Cvt<A> for S {
    #[inline(always)]
    fn cvt(self) -> A {
        A::cast(self)
    }
}

/// The accumulator of all and any: a value's truthiness.
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub(in crate::callable::reduce) struct Truth(pub bool);

impl<S: Truthy> Cvt<Truth> for S {
    #[inline(always)]
    fn cvt(self) -> Truth {
        Truth(self.truthy())
    }
}

impl Cvt<B8> for Truth {
    #[inline(always)]
    fn cvt(self) -> B8 {
        B8(self.0 as u8)
    }
}

/// Raw data of a builtin type, which an option of it marks missing with
/// its NA value ([`NativeType::NA`], the table in `layout/na.rs`).
pub(in crate::callable::reduce) trait NaRaw: Pod {
    /// The NA value.
    const NA: Self;
    /// `true` for the NA value (bit for bit: other NaNs are values).
    fn is_na(self) -> bool;
}

/// `NaRaw` for raw types: compared as themselves (`eq`), floats by their
/// bits (`bits`: a NaN that is not the NA is a value), complex numbers of a
/// float NA in both parts (`complex`; none of 16-bit floats).
macro_rules! na_raw {
    (eq: $($t:ty),*) => {$( na_raw!(@impl $t, |x| x == <$t as NaRaw>::NA); )*};
    (bits: $($t:ty),*) => {$( na_raw!(@impl $t, |x| x.to_bits() == <$t as NaRaw>::NA.to_bits()); )*};
    (complex: $($t:ty),*) => {$( na_raw!(@impl Complex<$t>, |x| x.re.is_na() & x.im.is_na()); )*};
    (@impl $t:ty, |$x:ident| $is_na:expr) => {
        impl NaRaw for $t {
            const NA: $t = <$t as NativeType>::NA;
            #[inline(always)]
            fn is_na(self) -> bool {
                let $x = self;
                $is_na
            }
        }
    };
}
na_raw!(eq: i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, B8);
na_raw!(bits: f32, f64, half::f16, half::bf16);
na_raw!(complex: f32, f64);

/// How a reduction treats missing values: whether its source is an option
/// (`SKIP`: NA elements are read as the identity and do not count as
/// seen), and whether its result is (`OPT`: an output element that got no
/// value is NA, and an NA output element is one that has none yet).
pub(in crate::callable::reduce) trait Mode: 'static {
    /// The source is `?T`: missing values are skipped.
    const SKIP: bool;
    /// The result is `?R`: missing where nothing was reduced.
    const OPT: bool;
}

/// The four modes, each a unit type with its two flags.
macro_rules! modes {
    ($($(#[$doc:meta])* $name:ident: $skip:literal, $opt:literal;)*) => {$(
        $(#[$doc])*
        pub(in crate::callable::reduce) struct $name;
        impl Mode for $name {
            const SKIP: bool = $skip;
            const OPT: bool = $opt;
        }
    )*};
}
modes! {
    /// Neither.
    Plain: false, false;
    /// An optional result from plain values (min of a var dim).
    Opt: false, true;
    /// Skips missing values, a plain result (sum of `?T`).
    Skip: true, false;
    /// Skips missing values, an optional result (min of `?T`).
    SkipOpt: true, true;
}
