//! Typed values of reductions: conversions between source, accumulator
//! and result types.
//!
//! Every conversion is the assignment family's `nocheck` conversion
//! ([`Conv::cast`]), so a reduction converts exactly as an assignment
//! would; all and any accumulate [`Truth`], the truthiness the logical
//! functions use (a complex number is true when either part is non-zero).

use super::*;
use crate::callable::arith::Truthy;
use crate::kernels::assign::numeric::Conv;
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
