//! Rust scalar values and arrays built from them.

use super::{Array, StringData, arrmeta};
use crate::error::{Error, Result};
use crate::types::{BuiltinType, Type};
use half::f16;
use num_complex::Complex;

/// A Rust type that is the data of a builtin dynd type.
pub trait Scalar: Copy + Send + Sync + 'static {
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
        impl Scalar for $t {
            const TYPE: BuiltinType = BuiltinType::$b;
            unsafe fn load(p: *const u8) -> Self {
                // SAFETY: (1); every bit pattern is a valid $t.
                unsafe { arrmeta::read(p) }
            }
            unsafe fn store(self, p: *mut u8) {
                // SAFETY: (1).
                unsafe { arrmeta::write(p, self) }
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

impl Scalar for bool {
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

pub(super) fn check<T: Scalar>(tp: &Type) -> Result<()> {
    if tp.as_builtin() == Some(T::TYPE) {
        Ok(())
    } else {
        Err(Error::type_error(format!(
            "expected a 0-d array of type {}, got {tp}",
            T::TYPE
        )))
    }
}

impl<T: Scalar> From<T> for Array {
    /// A 0-d array holding `value`.
    fn from(value: T) -> Array {
        let a = Array::empty(Type::builtin(T::TYPE)).unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: a fresh writable array of T's type.
        unsafe { value.store(a.data_ptr()) };
        a
    }
}

impl<T: Scalar> From<&[T]> for Array {
    /// A 1-d array `N * T` holding a copy of `values` (one `memcpy`; see
    /// [`Array::from_slice`]).
    fn from(values: &[T]) -> Array {
        Array::from_slice(values, &[values.len()]).unwrap_or_else(|e| panic!("{e}"))
    }
}

impl<T: Scalar> From<Vec<T>> for Array {
    /// A 1-d array `N * T` over the vector's own buffer, without copying
    /// (see [`Array::from_vec`]).
    fn from(values: Vec<T>) -> Array {
        let n = values.len();
        // Cannot fail: the shape's product is the length.
        Array::from_vec(values, &[n]).unwrap_or_else(|e| panic!("{e}"))
    }
}

impl<T: Scalar> From<Vec<Vec<T>>> for Array {
    /// A 2-d array: `M * N * T` when every row has length N, otherwise
    /// ragged, `M * var * T`.
    fn from(rows: Vec<Vec<T>>) -> Array {
        let elem = Type::builtin(T::TYPE);
        let n = rows.first().map_or(0, Vec::len);
        let rectangular = rows.iter().all(|r| r.len() == n);
        let inner = if rectangular {
            Type::fixed_dim(n, elem)
        } else {
            Type::var_dim(elem)
        };
        let a = Array::empty(Type::fixed_dim(rows.len(), inner)).unwrap_or_else(|e| panic!("{e}"));
        for (i, row) in rows.iter().enumerate() {
            let r = a
                .index(&[(i as isize).into()])
                .unwrap_or_else(|e| panic!("{e}"));
            super::copy::fill_row(&r, row).unwrap_or_else(|e| panic!("{e}"));
        }
        a
    }
}

impl From<&str> for Array {
    /// A 0-d `string` array.
    fn from(s: &str) -> Array {
        let a = Array::empty(Type::string()).unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: a fresh string array: its arrmeta holds a POD allocator
        // block and its data is one StringData.
        unsafe { write_string(a.arrmeta_ptr(), a.data_ptr(), s.as_bytes()) }
            .unwrap_or_else(|e| panic!("{e}"));
        a
    }
}

impl From<Vec<&str>> for Array {
    /// A 1-d `N * string` array.
    fn from(values: Vec<&str>) -> Array {
        let a = Array::empty(Type::fixed_dim(values.len(), Type::string()))
            .unwrap_or_else(|e| panic!("{e}"));
        // The string arrmeta follows the fixed dim's.
        // SAFETY: a fresh `N * string` array: N contiguous StringData and a
        // string arrmeta after the fixed dim's.
        unsafe {
            let meta = a
                .arrmeta_ptr()
                .add(std::mem::size_of::<super::FixedDimMeta>());
            for (i, s) in values.iter().enumerate() {
                write_string(meta, a.data_ptr().add(i * 16), s.as_bytes())
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
        a
    }
}

/// Copies `bytes` into the string/bytes blockref of `meta` and points the
/// string data at them.
///
/// # Safety
/// 1. `meta` is string or bytes arrmeta; `data` is writable StringData.
pub(crate) unsafe fn write_string(meta: *const u8, data: *mut u8, bytes: &[u8]) -> Result<()> {
    // SAFETY: (1).
    let m: super::BlockrefMeta = unsafe { arrmeta::read(meta) };
    // SAFETY: (1) the arrmeta's blockref is alive.
    let begin = unsafe { arrmeta::with_allocator(m.blockref, |a| a.allocate(bytes.len(), 1)) }?;
    // SAFETY: `begin` has room for bytes.len() bytes; (1) for `data`.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), begin, bytes.len());
        arrmeta::write(
            data,
            StringData {
                begin,
                end: begin.add(bytes.len()),
            },
        );
    }
    Ok(())
}
