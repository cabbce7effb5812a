//! The one mapping from Rust scalar types to builtin dynd types.
//!
//! [`NativeType`] says everything generic code needs about a builtin
//! scalar: its id, how it lies in memory ([`NativeType::Raw`], plain data),
//! its NA value, how error messages show it, and the types its reductions
//! give. [`with_native!`](crate::with_native) turns a [`BuiltinType`] known
//! only at run time into a call of generic code on the matching Rust type,
//! and [`for_each_native!`](crate::for_each_native) hands a list of the
//! Rust types to a macro that writes impls. The list of builtin scalars is
//! written once, here (`__native_group!`): adding a builtin scalar type
//! means adding it to that list and implementing [`NativeType`] for it.
//!
//! | group | types |
//! |---|---|
//! | `bool` | `bool` |
//! | `signed` | `i8`, `i16`, `i32`, `i64`, `i128` |
//! | `unsigned` | `u8`, `u16`, `u32`, `u64`, `u128` |
//! | `half` | `f16`, `bf16` (compute in `f32`) |
//! | `ieee` | `f32`, `f64` |
//! | `complex` | `Complex<f32>`, `Complex<f64>` |
//!
//! Dispatch happens once, when a kernel is built; the kernel itself is
//! monomorphic.

use super::BuiltinType;
use bytemuck::{Pod, Zeroable};
use half::{bf16, f16};
use num_complex::Complex;
use std::fmt;

impl BuiltinType {
    /// The CUDA C type this builtin computes in on a device (DESIGN §14),
    /// or `None` when the device does not compute in it (the 128-bit
    /// integers, the 16-bit floats and complex, so far). A `bool` element
    /// is stored as a byte, any non-zero byte true: device code loads it as
    /// `unsigned char` and compares with zero, as the host does.
    ///
    /// ```
    /// use dynd::types::BuiltinType;
    /// assert_eq!(BuiltinType::Int64.cuda_c(), Some("long long"));
    /// assert_eq!(BuiltinType::Float16.cuda_c(), None);
    /// ```
    pub const fn cuda_c(self) -> Option<&'static str> {
        use BuiltinType::*;
        Some(match self {
            Bool => "bool",
            Int8 => "signed char",
            Int16 => "short",
            Int32 => "int",
            Int64 => "long long",
            UInt8 => "unsigned char",
            UInt16 => "unsigned short",
            UInt32 => "unsigned int",
            UInt64 => "unsigned long long",
            Float32 => "float",
            Float64 => "double",
            _ => return None,
        })
    }
}

/// A Rust type that is the data of a builtin dynd type.
///
/// ```
/// use dynd::types::{BuiltinType, NativeType};
/// assert_eq!(<i16 as NativeType>::TYPE, BuiltinType::Int16);
/// // int8 sums give int64, as in NumPy; means give float64.
/// assert_eq!(<<i8 as NativeType>::Sum as NativeType>::TYPE, BuiltinType::Int64);
/// assert_eq!(<<u8 as NativeType>::Mean as NativeType>::TYPE, BuiltinType::Float64);
/// // A bool is read through its byte: any non-zero byte is true.
/// let byte = [7u8];
/// // SAFETY: one readable byte, the size of a bool.
/// assert!(unsafe { bool::load(byte.as_ptr()) });
/// assert_eq!(1.5e300f64.show(), "1.5e300");
/// ```
pub trait NativeType: Copy + PartialEq + Default + fmt::Debug + Send + Sync + 'static {
    /// The builtin type whose data this is.
    const TYPE: BuiltinType;
    /// How a value lies in memory: plain data, every bit pattern a value
    /// (for `bool`, [`B8`]: data written by C code may hold any byte). A
    /// slice of `Raw` over array data of type [`NativeType::TYPE`] is sound
    /// when it is aligned.
    type Raw: Pod + Default + Send + Sync;
    /// The stored NA value of `?T` (DESIGN §4; the table in
    /// `layout/na.rs`).
    const NA: Self::Raw;
    /// The result type of `sum` and `prod` (NumPy's: small signed integers
    /// and bool give int64, small unsigned integers uint64, others
    /// themselves).
    type Sum: NativeType;
    /// The type arithmetic computes in: `f32` for the 16-bit floats
    /// (rounded once at the end), the type itself otherwise.
    type Compute: NativeType;
    /// The result type of `mean`: float64, or complex\[float64\].
    type Mean: NativeType;
    /// The value of a stored element.
    fn from_raw(r: Self::Raw) -> Self;
    /// The stored form of a value.
    fn to_raw(self) -> Self::Raw;
    /// Writes the value as JSON output and error messages show it: floats
    /// in shortest round-trip form (of their own width: `0.1` for a float32
    /// 0.1) with JSON's `NaN`/`Infinity` tokens (`1e300`, not `Display`'s
    /// 301-digit expansion); bool as `true`/`false`; complex as
    /// `[re, im]`.
    fn write_value<W: fmt::Write + ?Sized>(self, out: &mut W) -> fmt::Result;

    /// [`NativeType::write_value`] into a new string.
    fn show(self) -> String {
        let mut s = String::new();
        // Writing into a String cannot fail.
        let _ = self.write_value(&mut s);
        s
    }

    /// Reads a value from possibly unaligned data.
    ///
    /// # Safety
    /// 1. `p` is valid for reading `TYPE.data_size()` bytes.
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: (1); `Raw` is plain data, so any bytes are a value.
        Self::from_raw(unsafe { std::ptr::read_unaligned(p.cast::<Self::Raw>()) })
    }

    /// Writes the value to possibly unaligned data.
    ///
    /// # Safety
    /// 1. `p` is valid for writing `TYPE.data_size()` bytes.
    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: (1).
        unsafe { std::ptr::write_unaligned(p.cast::<Self::Raw>(), self.to_raw()) }
    }
}

/// `bool` data read as its byte: any non-zero byte is true. Arrays filled
/// by C code may hold other bytes than 0 and 1 in a bool, and reading those
/// as a Rust `bool` would be undefined behaviour; kernels that slice bool
/// data slice `B8`.
#[derive(Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(transparent)]
pub struct B8(pub u8);

impl B8 {
    /// The truth value.
    #[inline(always)]
    pub fn get(self) -> bool {
        self.0 != 0
    }
}

impl fmt::Debug for B8 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.get())
    }
}

impl fmt::Display for B8 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.get())
    }
}

/// A float as JSON writes it (see [`NativeType::write_value`]): `v` is its
/// exact value in f64, `shortest` writes the shortest round-trip text of
/// its own width.
fn write_float<W: fmt::Write + ?Sized>(
    v: f64,
    out: &mut W,
    shortest: impl FnOnce(&mut W) -> fmt::Result,
) -> fmt::Result {
    if v.is_nan() {
        out.write_str("NaN")
    } else if v.is_infinite() {
        out.write_str(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        shortest(out)
    }
}

/// The shortest decimal that reads back as `x` (a finite bfloat16), as the
/// f64 nearest to it (whose `{:?}` is that decimal): `0.1`, not the
/// float32 text of its value, `0.10009766`.
fn shortest_bf16(x: bf16) -> f64 {
    let v = x.to_f64();
    (1..=9)
        .filter_map(|digits| format!("{:.*e}", digits - 1, v).parse::<f64>().ok())
        .find(|d| bf16::from_f64(*d) == x)
        .unwrap_or(v)
}

/// `NativeType` for a type stored as itself.
macro_rules! native {
    ($t:ty => $b:ident, na: $na:expr, sum: $sum:ty, compute: $c:ty, mean: $mean:ty,
     write: |$x:ident, $out:ident| $write:expr) => {
        impl NativeType for $t {
            const TYPE: BuiltinType = BuiltinType::$b;
            type Raw = $t;
            const NA: $t = $na;
            type Sum = $sum;
            type Compute = $c;
            type Mean = $mean;
            #[inline(always)]
            fn from_raw(r: $t) -> $t {
                r
            }
            #[inline(always)]
            fn to_raw(self) -> $t {
                self
            }
            fn write_value<W: fmt::Write + ?Sized>(self, $out: &mut W) -> fmt::Result {
                let $x = self;
                $write
            }
        }
    };
}

macro_rules! native_int {
    ($($t:ty => $b:ident, na: $na:expr, sum: $sum:ty;)*) => {$(
        native!($t => $b, na: $na, sum: $sum, compute: $t, mean: f64,
            write: |x, out| write!(out, "{x}"));
    )*};
}

native_int!(
    i8 => Int8, na: i8::MIN, sum: i64;
    i16 => Int16, na: i16::MIN, sum: i64;
    i32 => Int32, na: i32::MIN, sum: i64;
    i64 => Int64, na: i64::MIN, sum: i64;
    i128 => Int128, na: i128::MIN, sum: i128;
    u8 => UInt8, na: u8::MAX, sum: u64;
    u16 => UInt16, na: u16::MAX, sum: u64;
    u32 => UInt32, na: u32::MAX, sum: u64;
    u64 => UInt64, na: u64::MAX, sum: u64;
    u128 => UInt128, na: u128::MAX, sum: u128;
);

native!(f16 => Float16, na: f16::from_bits(0x7d2a), sum: f16, compute: f32,
    mean: f64, write: |x, out| write_float(x.to_f64(), out, |o| write!(o, "{:?}", x.to_f32())));
native!(bf16 => BFloat16, na: bf16::from_bits(0x7fa2), sum: bf16, compute: f32, mean: f64,
    write: |x, out| write_float(x.to_f64(), out, |o| write!(o, "{:?}", shortest_bf16(x))));
native!(f32 => Float32, na: f32::from_bits(0x7f80_07a2), sum: f32, compute: f32,
    mean: f64, write: |x, out| write_float(f64::from(x), out, |o| write!(o, "{x:?}")));
native!(f64 => Float64, na: f64::from_bits(0x7ff0_0000_0000_07a2), sum: f64, compute: f64,
    mean: f64, write: |x, out| write_float(x, out, |o| write!(o, "{x:?}")));
/// Complex types: the NA in both parts, `[re, im]` as text.
macro_rules! native_complex {
    ($($f:ty => $b:ident),*) => {$(
        native!(Complex<$f> => $b, na: Complex::new(<$f>::NA, <$f>::NA), sum: Complex<$f>,
            compute: Complex<$f>, mean: Complex<f64>, write: |x, out| {
                out.write_char('[')?;
                x.re.write_value(out)?;
                out.write_str(", ")?;
                x.im.write_value(out)?;
                out.write_char(']')
            });
    )*};
}
native_complex!(f32 => Complex64, f64 => Complex128);
native!(B8 => Bool, na: B8(2), sum: i64, compute: bool, mean: f64,
    write: |x, out| write!(out, "{}", x.get()));

impl NativeType for bool {
    const TYPE: BuiltinType = BuiltinType::Bool;
    type Raw = B8;
    const NA: B8 = B8(2);
    type Sum = i64;
    type Compute = bool;
    type Mean = f64;
    #[inline(always)]
    fn from_raw(r: B8) -> bool {
        r.get()
    }
    #[inline(always)]
    fn to_raw(self) -> B8 {
        B8(self as u8)
    }
    fn write_value<W: fmt::Write + ?Sized>(self, out: &mut W) -> fmt::Result {
        write!(out, "{self}")
    }
}

/// Re-exports the macros' expansions name, so that crates using them need
/// not depend on `half` or `num-complex` themselves.
#[doc(hidden)]
pub mod __rt {
    pub use half::{bf16, f16};
    pub use num_complex::Complex;
}

/// The list of builtin scalars, by group: calls `$cb!($($args)* T: Variant, ...)`
/// with the group's Rust types and [`BuiltinType`] variants. The one list
/// in the workspace; everything else dispatches through it.
#[doc(hidden)]
#[macro_export]
macro_rules! __native_group {
    (bool [$($cb:tt)*] [$($a:tt)*]) => { $($cb)*!{$($a)* bool: Bool} };
    (signed [$($cb:tt)*] [$($a:tt)*]) => {
        $($cb)*!{$($a)* i8: Int8, i16: Int16, i32: Int32, i64: Int64, i128: Int128}
    };
    (unsigned [$($cb:tt)*] [$($a:tt)*]) => {
        $($cb)*!{$($a)* u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64, u128: UInt128}
    };
    (half [$($cb:tt)*] [$($a:tt)*]) => {
        $($cb)*!{$($a)* $crate::types::native::__rt::f16: Float16,
            $crate::types::native::__rt::bf16: BFloat16}
    };
    (ieee [$($cb:tt)*] [$($a:tt)*]) => { $($cb)*!{$($a)* f32: Float32, f64: Float64} };
    (complex [$($cb:tt)*] [$($a:tt)*]) => {
        $($cb)*!{$($a)* $crate::types::native::__rt::Complex<f32>: Complex64,
            $crate::types::native::__rt::Complex<f64>: Complex128}
    };
}

/// One `match` arm set of [`with_native!`](crate::with_native).
#[doc(hidden)]
#[macro_export]
macro_rules! __with_native_arm {
    ($b:ident, $T:ident, $e:expr, $($t:ty: $v:ident),*) => {
        match $b {
            $($crate::types::BuiltinType::$v => {
                #[allow(dead_code)]
                type $T = $t;
                ::core::option::Option::Some($e)
            })*
            _ => ::core::option::Option::None,
        }
    };
}

/// The types of a group without their variants, for [`for_each_native!`](crate::for_each_native).
#[doc(hidden)]
#[macro_export]
macro_rules! __native_types {
    ($m:ident, ($($a:tt)*), $($t:ty: $v:ident),*) => { $m! { $($a)* $($t),* } };
}

/// Runs generic code on the Rust type of a builtin known at run time.
///
/// `with_native!(b, |T| expr)` is `Some(expr)` with `T` the [`NativeType`]
/// of `b` (for bool: `bool`; its stored form is `<T as NativeType>::Raw`),
/// or `None` for void. `with_native!(b, group group... => |T| expr)` takes
/// only the named groups (`bool`, `signed`, `unsigned`, `half`, `ieee`,
/// `complex`; see the [module docs](crate::types::native)) and is `None` for
/// every other type: an operation says which kinds of types it takes, and
/// the list of types stays in one place. The match happens where it is
/// written (when a kernel is built), never per element.
///
/// ```
/// use dynd::types::{BuiltinType, NativeType};
/// use dynd::with_native;
/// fn size(b: BuiltinType) -> Option<usize> {
///     with_native!(b, |T| std::mem::size_of::<<T as NativeType>::Raw>())
/// }
/// assert_eq!(size(BuiltinType::Complex64), Some(8));
/// assert_eq!(size(BuiltinType::Void), None);
/// // Only the integers:
/// let max = |b| with_native!(b, signed unsigned => |T| <T as NativeType>::TYPE.data_size() * 8);
/// assert_eq!(max(BuiltinType::UInt16), Some(16));
/// assert_eq!(max(BuiltinType::Float32), None);
/// ```
#[macro_export]
macro_rules! with_native {
    ($b:expr, |$T:ident| $e:expr) => {
        $crate::with_native!($b, bool signed unsigned half ieee complex => |$T| $e)
    };
    ($b:expr, $($g:ident)+ => |$T:ident| $e:expr) => {{
        let b: $crate::types::BuiltinType = $b;
        let mut r = ::core::option::Option::None;
        $(
            if r.is_none() {
                r = $crate::__native_group!($g [$crate::__with_native_arm] [b, $T, $e,]);
            }
        )+
        r
    }};
}

/// Calls the macro `m` once per named group with the group's Rust types:
/// `for_each_native!(signed unsigned => m)` expands to
/// `m!(i8, i16, i32, i64, i128); m!(u8, u16, u32, u64, u128);`, and
/// `for_each_native!(ieee => m!(x;))` to `m!(x; f32, f64);`. For writing
/// impls per type without listing the types.
///
/// ```
/// use dynd::for_each_native;
/// trait Bits { const BITS: usize; }
/// macro_rules! bits {
///     ($($t:ty),*) => {$( impl Bits for $t { const BITS: usize = 8 * size_of::<$t>(); } )*};
/// }
/// for_each_native!(signed unsigned => bits);
/// assert_eq!(<u32 as Bits>::BITS, 32);
/// ```
#[macro_export]
macro_rules! for_each_native {
    ($($g:ident)+ => $m:ident) => {
        $( $crate::__native_group!($g [$crate::__native_types] [$m, (),]); )+
    };
    ($($g:ident)+ => $m:ident!$a:tt) => {
        $( $crate::__native_group!($g [$crate::__native_types] [$m, $a,]); )+
    };
}
