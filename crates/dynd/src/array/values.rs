//! Rust values out of arrays: [`Array::to_vec`] (a copy, any layout) and
//! [`Array::as_slice`] (a borrow of C-contiguous data).
//!
//! ```
//! use dynd::{Array, Index};
//! let a = Array::from_json("2 * 3 * float64", "[[1,2,3],[4,5,6]]").unwrap();
//! // Any strides: a column, a reversed view.
//! let col = a.index(&[Index::ALL, 1.into()]).unwrap();
//! assert_eq!(col.to_vec::<f64>().unwrap(), vec![2.0, 5.0]);
//! drop(col);
//! // Ragged data flattens in order.
//! let r = Array::from_json("var * var * int32", "[[1],[2,3]]").unwrap();
//! assert_eq!(r.to_vec::<i32>().unwrap(), vec![1, 2, 3]);
//! // Type-checked: the message names both types.
//! let e = a.to_vec::<i32>().unwrap_err();
//! assert!(e.message().contains("int32") && e.message().contains("float64"));
//! // A slice of contiguous data that nobody writes.
//! let frozen = a.into_immutable().unwrap();
//! assert_eq!(frozen.as_slice::<f64>().unwrap(), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
//! ```

use super::{Array, flags};
use crate::error::{Error, Result};
use crate::layout::arrmeta::{self, FixedDimMeta, VarDimData, VarDimMeta};
use crate::types::{NativeType, Type, TypeKind};
use std::mem::size_of;

impl Array {
    /// The shape, byte strides and element type of an array whose dims are
    /// all fixed (strides may be negative or zero, as views make them); the
    /// element is the first type under the dims. What the buffer protocol,
    /// DLPack and NumPy need.
    ///
    /// Errors: `Type` for an array with a var dim, naming the dim.
    ///
    /// ```
    /// use dynd::{Array, Index};
    /// let a = Array::from_json("2 * 3 * int16", "[[1,2,3],[4,5,6]]").unwrap();
    /// let v = a.index(&[Index::slice(None, None, -1), Index::ALL]).unwrap();
    /// let (shape, strides, elem) = v.strided_layout().unwrap();
    /// assert_eq!((shape, strides, elem.to_string()), (vec![2, 3], vec![-6, 2], "int16".into()));
    /// assert!(Array::from_json("2 * var * int16", "[[1], []]").unwrap().strided_layout().is_err());
    /// ```
    pub fn strided_layout(&self) -> Result<(Vec<usize>, Vec<isize>, &Type)> {
        let mut shape = Vec::new();
        let mut strides = Vec::new();
        let mut tp = self.tp();
        let mut meta = self.arrmeta_ptr();
        loop {
            match tp.kind() {
                TypeKind::FixedDim { size, elem } => {
                    // SAFETY: a fixed dim's arrmeta starts with its
                    // FixedDimMeta, and the element's arrmeta follows
                    // (DESIGN §4).
                    let m: FixedDimMeta = unsafe { arrmeta::read(meta) };
                    shape.push(*size);
                    strides.push(m.stride);
                    // SAFETY: the element's arrmeta follows the dim's.
                    meta = unsafe { meta.add(size_of::<FixedDimMeta>()) };
                    tp = elem;
                }
                _ if tp.is_dim() => {
                    return Err(Error::type_error(format!(
                        "{} has a dim that is not fixed (dim {}); only fixed dims are strided",
                        self.tp(),
                        shape.len()
                    )));
                }
                _ => return Ok((shape, strides, tp)),
            }
        }
    }

    /// The elements as a `Vec<T>`, in C order, from any layout (strided,
    /// reversed, permuted) and through var dims (flattened row by row);
    /// a 0-d array gives one value.
    ///
    /// Errors: `Type` unless the element type under the dims is `T`'s
    /// builtin type (`int32` for `i32`, ...), naming both types.
    pub fn to_vec<T: NativeType>(&self) -> Result<Vec<T>> {
        self.check_dtype::<T>("to_vec")?;
        self.check_host("to_vec")?;
        let mut out = Vec::new();
        if let Some((shape, _, _)) = self.c_contiguous_parts() {
            let n: usize = shape.iter().product();
            out.reserve_exact(n);
            let size = T::TYPE.data_size();
            for i in 0..n {
                // SAFETY: n contiguous values of T's builtin type.
                out.push(unsafe { T::load(self.data_ptr().add(i * size)) });
            }
            return Ok(out);
        }
        // SAFETY: the array is valid for its type, whose dtype is T's.
        unsafe { collect(self.tp(), self.arrmeta_ptr(), self.data_ptr(), &mut out) };
        Ok(out)
    }

    /// The elements as a slice of `T`'s stored form ([`NativeType::Raw`]:
    /// `T` itself for every type but `bool`, which reads as
    /// [`B8`](crate::types::native::B8)), borrowed from the array's data.
    ///
    /// Only for an array that nobody can write while the slice lives — one
    /// made [`Array::into_immutable`] — since other handles and views of a
    /// writable array could change the bytes under the borrow; use
    /// [`Array::to_vec`] for a copy otherwise.
    ///
    /// Errors: `Type` unless the element type is `T`'s builtin type;
    /// `InvalidArgument` unless the array is immutable, its dims are fixed
    /// and in C order, and its data is aligned for `T`.
    pub fn as_slice<T: NativeType>(&self) -> Result<&[T::Raw]> {
        self.check_dtype::<T>("as_slice")?;
        self.check_host("as_slice")?;
        if self.flags() & flags::IMMUTABLE == 0 {
            return Err(Error::invalid_argument(format!(
                "as_slice of {} needs an immutable array (other handles could write the data \
                 while the slice is borrowed): call into_immutable() first, or use to_vec()",
                self.tp()
            )));
        }
        let Some((shape, _, _)) = self.c_contiguous_parts() else {
            return Err(Error::invalid_argument(format!(
                "as_slice of {} needs fixed dims in C order; this layout is not \
                 (copy() it, or use to_vec())",
                self.tp()
            )));
        };
        let n: usize = shape.iter().product();
        let p = self.data_ptr();
        if n > 0 && !(p as usize).is_multiple_of(align_of::<T::Raw>()) {
            return Err(Error::invalid_argument(format!(
                "as_slice of {}: the data at {p:p} is not aligned to {} bytes",
                self.tp(),
                align_of::<T::Raw>()
            )));
        }
        if n == 0 {
            return Ok(&[]);
        }
        // SAFETY: n contiguous, aligned values of T's builtin type, whose
        // stored form is T::Raw (plain data: any bytes are a value); the
        // array is immutable, so nobody writes them, and `self` keeps the
        // data alive for the borrow.
        Ok(unsafe { std::slice::from_raw_parts(p as *const T::Raw, n) })
    }

    fn check_dtype<T: NativeType>(&self, what: &str) -> Result<()> {
        if self.tp().dtype().as_builtin() == Some(T::TYPE) {
            Ok(())
        } else {
            Err(Error::type_error(format!(
                "{what}::<{}> needs elements of type {}, but the array is {}",
                std::any::type_name::<T>(),
                T::TYPE,
                self.tp()
            )))
        }
    }
}

/// Pushes the values of `tp` (dims over `T`'s builtin) in C order.
///
/// # Safety
/// 1. `data` / `meta` are valid data and arrmeta of `tp`, whose dtype is
///    `T`'s builtin type.
unsafe fn collect<T: NativeType>(tp: &Type, meta: *const u8, data: *const u8, out: &mut Vec<T>) {
    // SAFETY: (1) and DESIGN §4's layouts.
    unsafe {
        match tp.kind() {
            TypeKind::FixedDim { elem, .. } => {
                let m: FixedDimMeta = arrmeta::read(meta);
                let inner = meta.add(size_of::<FixedDimMeta>());
                for i in 0..m.dim_size {
                    collect(elem, inner, data.wrapping_offset(i * m.stride), out);
                }
            }
            TypeKind::VarDim { elem } => {
                let m: VarDimMeta = arrmeta::read(meta);
                let d: VarDimData = arrmeta::read(data);
                let inner = meta.add(size_of::<VarDimMeta>());
                for i in 0..d.size as isize {
                    collect(
                        elem,
                        inner,
                        d.begin.wrapping_offset(m.offset + i * m.stride),
                        out,
                    );
                }
            }
            _ => out.push(T::load(data)),
        }
    }
}
