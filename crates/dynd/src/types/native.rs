//! The one mapping from Rust scalar types to builtin dynd types.

use super::BuiltinType;
use half::f16;
use num_complex::Complex;

/// A Rust type that is the data of a builtin dynd type.
pub trait NativeType: Copy + Send + Sync + 'static {
    /// The builtin type whose data this is.
    const TYPE: BuiltinType;

    /// Reads a value from possibly unaligned data.
    ///
    /// # Safety
    /// 1. `p` is valid for reading `TYPE.data_size()` bytes.
    unsafe fn load(p: *const u8) -> Self;

    /// Writes the value to possibly unaligned data.
    ///
    /// # Safety
    /// 1. `p` is valid for writing `TYPE.data_size()` bytes.
    unsafe fn store(self, p: *mut u8);
}

macro_rules! plain_scalar {
    ($($t:ty => $b:ident),* $(,)?) => {$(
        impl NativeType for $t {
            const TYPE: BuiltinType = BuiltinType::$b;
            unsafe fn load(p: *const u8) -> Self {
                // SAFETY: (1); every bit pattern is a valid $t.
                unsafe { std::ptr::read_unaligned(p.cast::<$t>()) }
            }
            unsafe fn store(self, p: *mut u8) {
                // SAFETY: (1).
                unsafe { std::ptr::write_unaligned(p.cast::<$t>(), self) }
            }
        }
    )*};
}

plain_scalar!(
    i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64, i128 => Int128,
    u8 => UInt8, u16 => UInt16, u32 => UInt32, u64 => UInt64, u128 => UInt128,
    f16 => Float16, f32 => Float32, f64 => Float64,
    Complex<f32> => Complex64, Complex<f64> => Complex128,
);

impl NativeType for bool {
    const TYPE: BuiltinType = BuiltinType::Bool;
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: (1). Read as a byte: any non-zero byte is true, so data
        // written by C code cannot produce an invalid bool.
        unsafe { *p != 0 }
    }
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: (1).
        unsafe { *p = self as u8 }
    }
}
