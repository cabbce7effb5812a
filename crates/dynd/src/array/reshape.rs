//! [`Array::reshape`]: new fixed dims over the same elements.

use super::{Array, flags};
use crate::error::{Error, Result};
use crate::layout::arrmeta::{self, FixedDimMeta};
use crate::types::{Type, TypeKind};
use std::mem::size_of;

impl Array {
    /// The array with its fixed dims replaced by `shape` (in C order, as
    /// NumPy's `reshape`), over the same element type. One entry may be
    /// `-1`: that dim is whatever the element count leaves.
    ///
    /// A **view** of the same data when the array is C-contiguous (as a
    /// fresh array, or a slice of leading rows, is); otherwise a **copy**
    /// in C order first, so a write through the result reaches `self` only
    /// in the first case ([`Array::shares_data_with`] tells which).
    ///
    /// Errors: `Type` when the array has a var dim (its rows have their own
    /// lengths); `InvalidArgument` when the element counts differ, for a
    /// negative entry other than one `-1`, or when `-1` cannot be inferred.
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_json("2 * 3 * int32", "[[0,1,2],[3,4,5]]").unwrap();
    /// let b = a.reshape(&[3, -1]).unwrap();
    /// assert_eq!((b.tp().to_string(), b.to_json()), ("3 * 2 * int32".into(), "[[0,1],[2,3],[4,5]]".into()));
    /// assert!(b.shares_data_with(&a));
    /// assert!(a.reshape(&[4, 2]).unwrap_err().message().contains("6 elements"));
    /// ```
    pub fn reshape(&self, shape: &[isize]) -> Result<Array> {
        let mut tp = self.tp();
        let mut count: usize = 1;
        let mut old = Vec::new();
        while let TypeKind::FixedDim { size, elem } = tp.kind() {
            count = count.saturating_mul(*size);
            old.push(*size);
            tp = elem;
        }
        if let TypeKind::VarDim { .. } = tp.kind() {
            return Err(Error::type_error(format!(
                "cannot reshape {}: axis {} is a var dim, whose rows have their own lengths",
                self.tp(),
                old.len()
            )));
        }
        let dtype = tp.clone();
        let shape = infer(shape, count, &old)?;
        let src = if self.c_contiguous_parts().is_some() {
            self.clone()
        } else {
            self.copy()?
        };
        let Some((_, _, elem_meta)) = src.c_contiguous_parts() else {
            return Err(Error::invalid_argument(format!(
                "cannot reshape {}: its copy is not C-contiguous",
                self.tp()
            )));
        };
        let new_tp = shape
            .iter()
            .rev()
            .fold(dtype.clone(), |t, &n| Type::fixed_dim(n, t));
        let mut strides = vec![0isize; shape.len()];
        let mut s = dtype.data_size() as isize;
        for (k, &n) in shape.iter().enumerate().rev() {
            strides[k] = s;
            s *= n as isize;
        }
        // SAFETY: `src`'s data is `count` elements of `dtype` in C order
        // (c_contiguous_parts), which the new C-order fixed dims of the same
        // element count describe; the element arrmeta is copied with new
        // references.
        Ok(unsafe {
            Array::from_parts(
                new_tp,
                src.data_ptr(),
                src.data_ref().clone(),
                src.flags() & (flags::READ | flags::WRITE | flags::IMMUTABLE),
                |mut m| {
                    for (&n, &stride) in shape.iter().zip(&strides) {
                        arrmeta::write(
                            m,
                            FixedDimMeta {
                                dim_size: n as isize,
                                stride,
                            },
                        );
                        m = m.add(size_of::<FixedDimMeta>());
                    }
                    arrmeta::copy(&dtype, m, elem_meta);
                },
            )
        })
    }
}

/// The new shape, with a `-1` entry worked out.
fn infer(shape: &[isize], count: usize, old: &[usize]) -> Result<Vec<usize>> {
    let show = || format!("{shape:?}");
    let mut known: usize = 1;
    let mut free = None;
    for (k, &n) in shape.iter().enumerate() {
        match n {
            -1 if free.is_none() => free = Some(k),
            -1 => {
                return Err(Error::invalid_argument(format!(
                    "reshape to {}: only one dim can be -1",
                    show()
                )));
            }
            n if n < 0 => {
                return Err(Error::invalid_argument(format!(
                    "reshape to {}: dim {k} is {n}; sizes are >= 0, or -1 for one inferred dim",
                    show()
                )));
            }
            n => {
                known = known.checked_mul(n as usize).ok_or_else(|| {
                    Error::invalid_argument(format!("reshape to {}: too many elements", show()))
                })?
            }
        }
    }
    let mut out: Vec<usize> = shape.iter().map(|&n| n.max(0) as usize).collect();
    if let Some(k) = free {
        if known == 0 || !count.is_multiple_of(known) {
            return Err(Error::invalid_argument(format!(
                "cannot reshape {count} elements (shape {old:?}) to {}: the -1 dim cannot be inferred",
                show()
            )));
        }
        out[k] = count / known;
    } else if known != count {
        return Err(Error::invalid_argument(format!(
            "cannot reshape {count} elements (shape {old:?}) to {}, which holds {known}",
            show()
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infer_fills_one_free_dim() {
        assert_eq!(infer(&[2, -1], 6, &[6]).unwrap(), vec![2, 3]);
        assert_eq!(infer(&[-1], 0, &[0]).unwrap(), vec![0]);
        assert_eq!(infer(&[], 1, &[1]).unwrap(), Vec::<usize>::new());
        assert!(infer(&[-1, -1], 6, &[6]).is_err());
        assert!(infer(&[4, -1], 6, &[6]).is_err());
        assert!(infer(&[0, -1], 0, &[0]).is_err());
        assert!(infer(&[-2, 3], 6, &[6]).is_err());
        let e = infer(&[4, 2], 6, &[2, 3]).unwrap_err();
        assert!(e.message().contains("6 elements (shape [2, 3])"), "{e}");
    }
}
