//! Arrays over memory that someone else owns (DESIGN §1.2, §12): strided
//! data held by an external memory block whose release runs exactly once,
//! when the last array or view over the data is gone; and arrays built from
//! Rust vectors (zero-copy, the `Vec` becomes the owner) and slices (one
//! `memcpy`).
//!
//! Every constructor that takes an owner takes it first: when validation
//! fails afterwards, the owner is released before the error is returned, so
//! a caller never has to release it on the error path (as
//! `dynd_array_from_dlpack` and the Arrow importers require).

use super::{Array, flags};
use crate::error::{Error, Result};
use crate::layout::{FixedDimMeta, arrmeta};
use crate::memblock::MemBlock;
use crate::types::NativeType;
use crate::types::Type;
use std::ffi::c_void;
use std::mem::{ManuallyDrop, size_of};

impl Array {
    /// An array of `shape` elements of type `tp` over `data`, which someone
    /// else owns: `owner` is called once, when the last array or view over
    /// the data is dropped — also when this call fails (then before it
    /// returns). `strides` are in bytes, one per dim, and may be negative
    /// or zero; `data` is the address of element `[0, 0, …]`. The array's
    /// type is `shape[0] * … * tp`. When `writable` is false the array (and
    /// every view of it) refuses assignment.
    ///
    /// # Errors
    /// - [`Type`](crate::ErrorKind::Type): `tp` is symbolic, a dim, has no
    ///   size (`void`) or holds memory block references (strings, var
    ///   dims, pointers): only fixed-size plain data can live in foreign
    ///   memory.
    /// - [`InvalidArgument`](crate::ErrorKind::InvalidArgument): `shape`
    ///   and `strides` differ in length; `data` is null for a non-empty
    ///   array, or it or a stride is not a multiple of `tp`'s alignment; a
    ///   dim is larger than `isize::MAX`; the bytes the array spans do not
    ///   fit the address space.
    ///
    /// # Safety
    /// 1. For every index `i` with `0 <= i[k] < shape[k]`, the
    ///    `tp.data_size()` bytes at `data + Σ i[k] * strides[k]` are
    ///    readable and hold a valid value of `tp`, for as long as `owner`
    ///    has not been called.
    /// 2. When `writable` is true, those bytes are also writable, and
    ///    nothing else reads or writes them while dynd writes them (as for
    ///    any shared buffer: see the [module docs](super#sharing-and-threads)).
    ///
    /// ```
    /// use dynd::{Array, Type};
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// // Someone else's buffer of 2 × 3 int32, read in reverse row order.
    /// let mut buf: Box<[i32]> = vec![1, 2, 3, 4, 5, 6].into_boxed_slice();
    /// let ptr = buf.as_mut_ptr();
    /// let released = Arc::new(AtomicUsize::new(0));
    /// let r = released.clone();
    /// let owner = move || {
    ///     drop(buf);
    ///     r.fetch_add(1, Ordering::SeqCst);
    /// };
    /// // SAFETY: the last row starts 12 bytes in; rows are 12 bytes apart
    /// // (walked backwards), elements 4; the box lives until `owner` runs.
    /// let a = unsafe {
    ///     Array::from_external(Type::int32(), ptr.cast::<u8>().add(12), &[2, 3], &[-12, 4], owner, false)
    /// }
    /// .unwrap();
    /// assert_eq!(a.to_json(), "[[4,5,6],[1,2,3]]");
    /// assert!(!a.is_writable());
    /// drop(a);
    /// assert_eq!(released.load(Ordering::SeqCst), 1);
    /// ```
    pub unsafe fn from_external(
        tp: Type,
        data: *mut u8,
        shape: &[usize],
        strides: &[isize],
        owner: impl FnOnce() + Send + 'static,
        writable: bool,
    ) -> Result<Array> {
        let block = MemBlock::new_external(owner);
        // SAFETY: the caller's (1) and (2); `block` releases the owner.
        unsafe { from_external_block(tp, data, shape, strides, block, writable) }
    }

    /// [`Array::from_external`] for an owner given as a C callback (the C
    /// ABI's `dynd_array_from_external`): `release(object)` runs once, when
    /// the last array or view over the data is dropped, or before this call
    /// returns an error. `release` may be `None` for memory that outlives
    /// every array made over it.
    ///
    /// # Errors
    /// As [`Array::from_external`].
    ///
    /// # Safety
    /// 1. and 2. as [`Array::from_external`], with "until `release(object)`
    ///    is called" (for ever, when `release` is `None`).
    /// 3. `release`, when given, may be called with `object` once, from any
    ///    thread.
    pub unsafe fn from_external_c(
        tp: Type,
        data: *mut u8,
        shape: &[usize],
        strides: &[isize],
        object: *mut c_void,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
        writable: bool,
    ) -> Result<Array> {
        let block = MemBlock::new_external_c(object, release);
        // SAFETY: the caller's (1) and (2); (3) lets the block call
        // `release(object)` once, from whichever thread drops it last.
        unsafe { from_external_block(tp, data, shape, strides, block, writable) }
    }

    /// A C-order array of `shape` over the elements of `v`, without
    /// copying: the vector becomes the data's owner and is dropped with the
    /// last array or view over it. The array is writable; its type is
    /// `shape[0] * … * T`, for `T` any builtin scalar ([`NativeType`]).
    ///
    /// # Errors
    /// [`InvalidArgument`](crate::ErrorKind::InvalidArgument) when the
    /// product of `shape` is not `v.len()` (the vector is dropped).
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    /// assert_eq!(a.tp().to_string(), "2 * 3 * float64");
    /// assert_eq!(a.to_json(), "[[1.0,2.0,3.0],[4.0,5.0,6.0]]");
    /// assert!(Array::from_vec(vec![1i32, 2, 3], &[2, 2]).is_err());
    /// ```
    pub fn from_vec<T: NativeType>(v: Vec<T>, shape: &[usize]) -> Result<Array> {
        let elem = elem_type::<T>("vector", v.len(), shape)?;
        let strides = c_strides(shape, size_of::<T>())?;
        let mut v = ManuallyDrop::new(v);
        let owner = VecOwner {
            ptr: v.as_mut_ptr(),
            len: v.len(),
            cap: v.capacity(),
        };
        let data = owner.ptr.cast::<u8>();
        let block = MemBlock::new_external(move || owner.release());
        // SAFETY: (1) the vector's elements (as many as `shape` has) lie in C order at
        // `strides` from `data` (a non-null, aligned pointer even when
        // empty), initialized values of T, alive until the block runs the
        // owner; (2) the vector is owned by the block alone, so nothing but
        // arrays over it reaches its elements.
        unsafe { from_external_block(elem, data, shape, &strides, block, true) }
    }

    /// A new C-order array of `shape` holding a copy of `values` (one
    /// `memcpy`).
    ///
    /// # Errors
    /// [`InvalidArgument`](crate::ErrorKind::InvalidArgument) when the
    /// product of `shape` is not `values.len()`.
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_slice(&[1u8, 2, 3, 4], &[2, 2]).unwrap();
    /// assert_eq!(a.to_json(), "[[1,2],[3,4]]");
    /// ```
    pub fn from_slice<T: NativeType>(values: &[T], shape: &[usize]) -> Result<Array> {
        let elem = elem_type::<T>("slice", values.len(), shape)?;
        let tp = shape.iter().rev().fold(elem, |t, &n| Type::fixed_dim(n, t));
        let a = Array::empty_for_overwrite(tp)?;
        // SAFETY: the new array holds `values.len()` contiguous elements of T's
        // type in C order (the same bytes as `values`, whose layout
        // check_rust_layout checked), in its own fresh buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(
                values.as_ptr().cast::<u8>(),
                a.data_ptr(),
                std::mem::size_of_val(values),
            )
        };
        Ok(a)
    }
}

/// A vector given up by [`Array::from_vec`], rebuilt and dropped by the
/// external block's release.
struct VecOwner<T> {
    ptr: *mut T,
    len: usize,
    cap: usize,
}

// SAFETY: a VecOwner owns its vector's buffer alone (the Vec was given up
// with ManuallyDrop), and `T: Send` (NativeType requires it), so the vector may
// be dropped on another thread as a `Vec<T>` could be.
unsafe impl<T: Send> Send for VecOwner<T> {}

impl<T> VecOwner<T> {
    fn release(self) {
        // SAFETY: ptr, len and cap came from one Vec<T> that was never
        // dropped (ManuallyDrop) and are used to rebuild it exactly once:
        // `release` takes `self` by value and the block calls it once.
        drop(unsafe { Vec::from_raw_parts(self.ptr, self.len, self.cap) });
    }
}

/// The builtin type of `T`, for `len` values of it (in a Rust `what`: a
/// vector or a slice) taken as an array of `shape`: an error unless `T` has
/// that type's layout and `shape` has `len` elements.
fn elem_type<T: NativeType>(what: &str, len: usize, shape: &[usize]) -> Result<Type> {
    let elem = Type::builtin(T::TYPE);
    check_rust_layout::<T>(&elem)?;
    let count = element_count(shape)?;
    if count != len {
        return Err(Error::invalid_argument(format!(
            "a {what} of {len} elements cannot have shape {shape:?} ({count} elements)"
        )));
    }
    Ok(elem)
}

/// An error unless the Rust type `T` has the size and alignment of its
/// builtin type (true of every [`NativeType`]; checked so that a wrong impl is
/// an error, not undefined behaviour).
fn check_rust_layout<T: NativeType>(elem: &Type) -> Result<()> {
    if size_of::<T>() != elem.data_size() || std::mem::align_of::<T>() < elem.data_alignment() {
        return Err(Error::type_error(format!(
            "the Rust type {} (size {}, alignment {}) does not have the layout of {elem}",
            std::any::type_name::<T>(),
            size_of::<T>(),
            std::mem::align_of::<T>()
        )));
    }
    Ok(())
}

/// The product of `shape`, or an error when it overflows.
fn element_count(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| {
            Error::invalid_argument(format!("shape {shape:?} has too many elements to address"))
        })
}

/// C-order byte strides for `shape` over elements of `elem_size` bytes.
pub(super) fn c_strides(shape: &[usize], elem_size: usize) -> Result<Vec<isize>> {
    let mut strides = vec![0isize; shape.len()];
    let mut s = isize::try_from(elem_size)
        .map_err(|_| Error::invalid_argument("element size larger than isize::MAX"))?;
    for (k, &n) in shape.iter().enumerate().rev() {
        strides[k] = s;
        // Past the outermost dim the running product is not needed, and
        // the element count was already checked against the vector.
        if k > 0 {
            let n = isize::try_from(n).ok();
            s = n.and_then(|n| s.checked_mul(n)).ok_or_else(|| {
                Error::invalid_argument(format!("shape {shape:?} spans more than isize::MAX bytes"))
            })?;
        }
    }
    Ok(strides)
}

/// An error unless `tp` can be the element type of an array over foreign
/// memory: concrete, not a dim, of non-zero size, without blockrefs.
fn check_element_type(tp: &Type) -> Result<()> {
    tp.require_concrete("an array over external memory")?;
    if tp.is_dim() {
        return Err(Error::type_error(format!(
            "the element type of an array over external memory cannot be a dim ({tp}): give its dims in the shape"
        )));
    }
    if tp.has_blockref() {
        return Err(Error::type_error(format!(
            "the element type {tp} refers to memory blocks (strings, var dims or pointers); an array over external memory needs fixed-size plain data"
        )));
    }
    if tp.data_size() == 0 {
        return Err(Error::type_error(format!(
            "the element type {tp} has no data (size 0)"
        )));
    }
    Ok(())
}

/// Checks shape, strides and `data`, returning the array's type. Every
/// byte offset `Σ i[k] * strides[k]` and the span of the whole array are
/// computed with checked arithmetic, so that an accepted array's offsets
/// fit `isize` and its addresses do not wrap.
fn check_layout(tp: &Type, data: *mut u8, shape: &[usize], strides: &[isize]) -> Result<Type> {
    check_element_type(tp)?;
    if shape.len() != strides.len() {
        return Err(Error::invalid_argument(format!(
            "shape has {} dims but strides has {} (shape {shape:?}, strides {strides:?})",
            shape.len(),
            strides.len()
        )));
    }
    let align = tp.data_alignment();
    for (k, &s) in strides.iter().enumerate() {
        if !s.unsigned_abs().is_multiple_of(align) {
            return Err(Error::invalid_argument(format!(
                "stride {s} of dim {k} is not a multiple of the alignment {align} of {tp}"
            )));
        }
    }
    if let Some((k, &n)) = shape
        .iter()
        .enumerate()
        .find(|(_, n)| isize::try_from(**n).is_err())
    {
        return Err(Error::invalid_argument(format!(
            "dim {k} of size {n} is larger than isize::MAX"
        )));
    }
    let empty = shape.contains(&0);
    if empty {
        // No element is ever reached: any aligned pointer will do.
        return Ok(array_type(tp, shape));
    }
    if data.is_null() {
        return Err(Error::invalid_argument(format!(
            "null data pointer for a non-empty array of shape {shape:?}"
        )));
    }
    if !(data as usize).is_multiple_of(align) {
        return Err(Error::invalid_argument(format!(
            "data pointer {data:p} is not aligned to {align} bytes, the alignment of {tp}"
        )));
    }
    let (lo, hi) = byte_span(tp, shape, strides)?;
    // The whole span [data + lo, data + hi) must not wrap.
    let overflow = || {
        Error::invalid_argument(format!(
            "shape {shape:?} with strides {strides:?} at {data:p} wraps the address space"
        ))
    };
    let base = data as usize;
    base.checked_add_signed(lo).ok_or_else(overflow)?;
    base.checked_add_signed(hi).ok_or_else(overflow)?;
    Ok(array_type(tp, shape))
}

/// The lowest and the highest-plus-one byte offsets, relative to the
/// element `[0, 0, …]`, that a non-empty array of `shape` and `strides`
/// over `tp` touches; the span fits `isize`.
///
/// # Errors
/// `invalid_argument` when a dim or the span does not fit `isize`.
pub(crate) fn byte_span(tp: &Type, shape: &[usize], strides: &[isize]) -> Result<(isize, isize)> {
    let overflow = || {
        Error::invalid_argument(format!(
            "shape {shape:?} with strides {strides:?} spans more bytes than an address can hold"
        ))
    };
    let (mut lo, mut hi) = (0isize, 0isize);
    for (&n, &s) in shape.iter().zip(strides) {
        let n = isize::try_from(n).map_err(|_| overflow())?;
        let reach = (n - 1).max(0).checked_mul(s).ok_or_else(overflow)?;
        if reach < 0 {
            lo = lo.checked_add(reach).ok_or_else(overflow)?;
        } else {
            hi = hi.checked_add(reach).ok_or_else(overflow)?;
        }
    }
    let elem = isize::try_from(tp.data_size()).map_err(|_| overflow())?;
    hi = hi.checked_add(elem).ok_or_else(overflow)?;
    // The span's size must fit isize, as Rust's pointer offsets require.
    hi.checked_sub(lo).ok_or_else(overflow)?;
    Ok((lo, hi))
}

/// `shape[0] * … * tp`.
fn array_type(tp: &Type, shape: &[usize]) -> Type {
    shape
        .iter()
        .rev()
        .fold(tp.clone(), |t, &n| Type::fixed_dim(n, t))
}

/// The one implementation behind the external constructors. `block` owns
/// the data's owner; on error it is dropped here, which releases the owner.
///
/// # Safety
/// As [`Array::from_external`]'s (1) and (2), with `block` as the owner.
pub(super) unsafe fn from_external_block(
    tp: Type,
    data: *mut u8,
    shape: &[usize],
    strides: &[isize],
    block: MemBlock,
    writable: bool,
) -> Result<Array> {
    let array_tp = check_layout(&tp, data, shape, strides)?;
    // An empty array never reaches its data; give it a non-null, aligned
    // pointer all the same, as a fresh empty array has.
    let data = if data.is_null() {
        tp.data_alignment() as *mut u8
    } else {
        data
    };
    let access = if writable {
        flags::READ | flags::WRITE
    } else {
        flags::READ
    };
    let dims: Vec<FixedDimMeta> = shape
        .iter()
        .zip(strides)
        .map(|(&n, &s)| FixedDimMeta {
            // check_layout checked that every dim fits isize.
            dim_size: n as isize,
            stride: s,
        })
        .collect();
    let init_meta = |meta: *mut u8| {
        for (k, m) in dims.iter().enumerate() {
            // SAFETY: from_parts hands over the array type's arrmeta, zeroed
            // and writable: one FixedDimMeta per dim (the type has exactly
            // these dims), then the element's.
            unsafe { arrmeta::write(meta.add(k * size_of::<FixedDimMeta>()), *m) };
        }
        // SAFETY: the element's zeroed arrmeta follows the dims'; `tp` is
        // concrete (checked).
        unsafe { arrmeta::construct_default(&tp, meta.add(dims.len() * size_of::<FixedDimMeta>())) }
    };
    // SAFETY: (1) `data` holds the elements the caller promised, at the
    // validated strides, kept alive by `block`; (2) `init_meta` writes one
    // FixedDimMeta per dim (DESIGN §4) and then the element's default
    // arrmeta, which for a type without blockrefs only describes layout
    // inside one element.
    Ok(unsafe { Array::from_parts(array_tp, data, block, access, init_meta) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_strides_are_c_order() {
        assert_eq!(c_strides(&[2, 3, 4], 8).unwrap(), vec![96, 32, 8]);
        assert_eq!(c_strides(&[], 8).unwrap(), Vec::<isize>::new());
        assert!(c_strides(&[2, usize::MAX], 8).is_err());
    }

    #[test]
    fn element_counts_overflow_to_an_error() {
        assert_eq!(element_count(&[]).unwrap(), 1);
        assert_eq!(element_count(&[3, 0, usize::MAX]).unwrap(), 0);
        assert!(element_count(&[usize::MAX, 2]).is_err());
    }

    #[test]
    fn layouts_that_wrap_the_address_space_are_refused() {
        let tp = Type::float64();
        let p = 8 as *mut u8;
        let e = check_layout(&tp, p, &[2], &[-16]).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        assert!(check_layout(&tp, p, &[1], &[-16]).is_ok());
        let e = check_layout(&tp, p, &[3, usize::MAX / 16], &[8, 8]).unwrap_err();
        assert!(e.message().contains("spans more bytes"), "{e}");
    }
}
