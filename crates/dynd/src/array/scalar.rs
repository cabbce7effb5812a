//! Rust scalar values and arrays built from them.

use super::Array;
use crate::error::{Error, Result};
use crate::types::{NativeType, Type};

pub(super) fn check<T: NativeType>(tp: &Type) -> Result<()> {
    if tp.as_builtin() == Some(T::TYPE) {
        Ok(())
    } else {
        Err(Error::type_error(format!(
            "expected a 0-d array of type {}, got {tp}",
            T::TYPE
        )))
    }
}

impl<T: NativeType> From<T> for Array {
    /// A 0-d array holding `value`.
    fn from(value: T) -> Array {
        let a = Array::empty(Type::builtin(T::TYPE)).unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: a fresh writable array of T's type.
        unsafe { value.store(a.data_ptr()) };
        a
    }
}

impl<T: NativeType> From<&[T]> for Array {
    /// A 1-d array `N * T` holding a copy of `values` (one `memcpy`; see
    /// [`Array::from_slice`]).
    fn from(values: &[T]) -> Array {
        Array::from_slice(values, &[values.len()]).unwrap_or_else(|e| panic!("{e}"))
    }
}

impl<T: NativeType> From<Vec<T>> for Array {
    /// A 1-d array `N * T` over the vector's own buffer, without copying
    /// (see [`Array::from_vec`]).
    fn from(values: Vec<T>) -> Array {
        let n = values.len();
        // Cannot fail: the shape's product is the length.
        Array::from_vec(values, &[n]).unwrap_or_else(|e| panic!("{e}"))
    }
}

impl<T: NativeType> From<Vec<Vec<T>>> for Array {
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
        unsafe { crate::layout::write_string(a.arrmeta_ptr(), a.data_ptr(), s.as_bytes()) }
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
                crate::layout::write_string(meta, a.data_ptr().add(i * 16), s.as_bytes())
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
        a
    }
}
