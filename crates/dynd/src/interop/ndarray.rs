//! `ndarray` arrays and views in and out of dynd arrays, zero-copy both
//! ways, any number of dims and any strides (negative too). Behind the
//! `ndarray` cargo feature.
//!
//! | from | to | how | writable |
//! |---|---|---|---|
//! | `ndarray::Array<T, D>` | [`Array`] | [`Array::from_ndarray`]: its buffer becomes the owner | yes |
//! | `ndarray::ArcArray<T, D>` | [`Array`] | [`Array::from_arc_ndarray`]: a clone of the `ArcArray` is the owner | no |
//! | `ArrayView<T, D>` | `&Array` | [`with_view`]: for the length of a closure | no |
//! | `ArrayViewMut<T, D>` | `&Array` | [`with_view_mut`]: for the length of a closure | yes |
//! | [`Array`] | `ArrayView<T::Raw, IxDyn>` | [`Array::as_ndarray`] (immutable arrays), [`Array::as_ndarray_unchecked`] | — |
//!
//! `T` is any [`NativeType`]; the dynd type is `shape[0] * … * T`'s builtin.
//!
//! # Soundness
//! A dynd [`Array`] is a shared handle with no lifetime: it can be cloned,
//! viewed, sent to another thread or kept in a global. So a *borrowed*
//! ndarray view cannot simply become an `Array` — a clone could outlive the
//! borrow and read freed memory. The constructors that return an `Array`
//! therefore take *owned* data (an `ndarray::Array`, whose buffer dynd then
//! owns, or an `ArcArray`, a clone of which dynd keeps; `ArcArray` copies
//! on write while shared, so its other handles never change dynd's bytes
//! and dynd, which gets a read-only array, never changes theirs). Borrowed
//! views go through [`with_view`] / [`with_view_mut`], which lend the
//! closure an `&Array` and, when it returns (or unwinds), check that every
//! clone and view of that array is gone. If one escaped, the borrowed
//! memory would be reachable after the borrow ends, so the process aborts
//! with a message — a programming error that is never undefined
//! behaviour.
//!
//! The other way, an `ArrayView` borrows the dynd array; ndarray's `&T`
//! access requires that nobody writes the bytes meanwhile, which dynd can
//! only promise for arrays made [`Array::into_immutable`] (as for
//! [`Array::as_slice`]). Other arrays go through the `unsafe`
//! [`Array::as_ndarray_unchecked`]. The element type of the view is
//! `T::Raw`: `T` itself, except `bool`, read through its byte as
//! [`B8`](crate::types::native::B8) (C code may have stored other bytes
//! than 0 and 1).
//!
//! ```
//! use dynd::Array;
//! use ndarray::{Array2, ShapeBuilder, s};
//!
//! // An owned ndarray array: its buffer becomes the dynd array's.
//! let m = Array2::from_shape_vec((2, 3).f(), vec![1.0f64, 4.0, 2.0, 5.0, 3.0, 6.0]).unwrap();
//! let a = Array::from_ndarray(m).unwrap();
//! assert_eq!(a.to_json(), "[[1.0,2.0,3.0],[4.0,5.0,6.0]]");
//!
//! // A borrowed view, reversed: usable for the length of the closure.
//! let v = Array2::from_shape_vec((2, 2), vec![1i32, 2, 3, 4]).unwrap();
//! let json = dynd::interop::ndarray::with_view(v.slice(s![..;-1, ..]), |a| a.to_json()).unwrap();
//! assert_eq!(json, "[[3,4],[1,2]]");
//!
//! // Back to ndarray, strides kept.
//! let frozen = a.into_immutable().unwrap();
//! let view = frozen.as_ndarray::<f64>().unwrap();
//! assert_eq!(view.shape(), &[2, 3]);
//! assert_eq!(view.strides(), &[1, 2]);
//! assert_eq!(view[[1, 2]], 6.0);
//! ```

use crate::array::{Array, flags};
use crate::error::{Error, Result};
use crate::types::{NativeType, Type};
use ::ndarray::{ArcArray, ArrayView, ArrayViewMut, Axis, Dimension, IxDyn, ShapeBuilder};
use std::mem::{align_of, size_of};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// An error unless `T` has its builtin type's layout (true of every
/// [`NativeType`]; checked so that a wrong impl is an error, not undefined
/// behaviour).
fn check_layout<T: NativeType>() -> Result<Type> {
    let tp = Type::builtin(T::TYPE);
    if size_of::<T>() != tp.data_size() || align_of::<T>() < tp.data_alignment() {
        return Err(Error::type_error(format!(
            "the Rust type {} does not have the layout of {tp}",
            std::any::type_name::<T>()
        )));
    }
    Ok(tp)
}

/// ndarray's element strides as byte strides.
fn byte_strides<T>(strides: &[isize]) -> Result<Vec<isize>> {
    let size = size_of::<T>() as isize;
    strides
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            s.checked_mul(size).ok_or_else(|| {
                Error::invalid_argument(format!("stride {s} of axis {k} overflows in bytes"))
            })
        })
        .collect()
}

impl Array {
    /// A dynd array over an owned `ndarray` array's buffer, without copying:
    /// any dims, any strides (as left by slicing, `.f()` order or
    /// `invert_axis`). The buffer is dropped with the last array or view
    /// over it. The array is writable.
    ///
    /// # Errors
    /// [`Type`](crate::ErrorKind::Type) only for a `NativeType` impl whose
    /// layout is not its builtin's (none in dynd).
    ///
    /// ```
    /// use dynd::Array;
    /// let mut m = ndarray::Array2::from_shape_vec((2, 2), vec![1u8, 2, 3, 4]).unwrap();
    /// m.invert_axis(ndarray::Axis(1));
    /// let a = Array::from_ndarray(m).unwrap();
    /// assert_eq!(a.to_json(), "[[2,1],[4,3]]");
    /// ```
    pub fn from_ndarray<T: NativeType, D: Dimension>(a: ::ndarray::Array<T, D>) -> Result<Array> {
        let tp = check_layout::<T>()?;
        let shape = a.shape().to_vec();
        let strides = byte_strides::<T>(a.strides())?;
        let (mut v, offset) = a.into_raw_vec_and_offset();
        // `offset` is None only for an empty array, which reaches no element.
        let data = v
            .as_mut_ptr()
            .wrapping_add(offset.unwrap_or(0))
            .cast::<u8>();
        // SAFETY: (1) the elements of the ndarray array lie at `strides`
        // from its logical first element `data` inside `v`, initialized
        // values of T (whose layout is its builtin's: checked), and the
        // owner keeps `v` until the block releases it; (2) `v` is owned by
        // the block alone, so only arrays over it reach its elements.
        unsafe { Array::from_external(tp, data, &shape, &strides, move || drop(v), true) }
    }

    /// A read-only dynd array over an `ArcArray`'s buffer, without copying:
    /// the dynd array keeps a clone of the `ArcArray`, so the buffer lives
    /// until both sides are done. Read-only because the buffer is shared:
    /// the other handles may read it at any time (and copy it before they
    /// write it, as `ArcArray` does while shared).
    ///
    /// # Errors
    /// As [`Array::from_ndarray`].
    pub fn from_arc_ndarray<T: NativeType, D: Dimension>(a: ArcArray<T, D>) -> Result<Array> {
        let tp = check_layout::<T>()?;
        // IxDyn: the owner closure must be 'static, which D need not be.
        let a = a.into_dyn();
        let shape = a.shape().to_vec();
        let strides = byte_strides::<T>(a.strides())?;
        let data = a.as_ptr().cast_mut().cast::<u8>();
        // SAFETY: (1) the ArcArray's elements lie at `strides` from its
        // logical first element `data`, initialized values of T, and the
        // clone the owner holds keeps the buffer alive and unchanged
        // (ArcArray copies before writing while another handle exists);
        // (2) does not apply: the array is read-only.
        unsafe { Array::from_external(tp, data, &shape, &strides, move || drop(a), false) }
    }

    /// The array as an `ndarray` view, without copying: the fixed dims with
    /// their strides (negative ones too), over `T`'s stored form
    /// ([`NativeType::Raw`]). Only for arrays nobody can write while the
    /// view lives: those made [`Array::into_immutable`].
    ///
    /// # Errors
    /// - [`Type`](crate::ErrorKind::Type): a dim that is not fixed, or an
    ///   element type other than `T`'s builtin (both types named).
    /// - [`InvalidArgument`](crate::ErrorKind::InvalidArgument): the array
    ///   is not immutable; a stride that is not a whole number of elements
    ///   (a field of a struct array), or misaligned data.
    pub fn as_ndarray<T: NativeType>(&self) -> Result<ArrayView<'_, T::Raw, IxDyn>> {
        if self.flags() & flags::IMMUTABLE == 0 {
            return Err(Error::invalid_argument(format!(
                "as_ndarray of {} needs an immutable array (other handles could write the data \
                 while the view is borrowed): call into_immutable() first, or copy it",
                self.tp()
            )));
        }
        // SAFETY: the array is immutable: nobody writes its data while the
        // view borrows `self`.
        unsafe { self.as_ndarray_unchecked::<T>() }
    }

    /// [`Array::as_ndarray`] for any readable array.
    ///
    /// # Errors
    /// As [`Array::as_ndarray`], but for the immutability check.
    ///
    /// # Safety
    /// 1. Nothing writes the array's data (through any array, view or
    ///    foreign owner) while the returned view lives.
    pub unsafe fn as_ndarray_unchecked<T: NativeType>(
        &self,
    ) -> Result<ArrayView<'_, T::Raw, IxDyn>> {
        let (shape, strides, elem) = self.strided_layout()?;
        if elem.as_builtin() != Some(T::TYPE) {
            return Err(Error::type_error(format!(
                "as_ndarray::<{}> needs elements of type {}, but the array is {}",
                std::any::type_name::<T>(),
                T::TYPE,
                self.tp()
            )));
        }
        let size = size_of::<T::Raw>() as isize;
        if size != elem.data_size() as isize {
            return Err(Error::type_error(format!(
                "the stored form of {} does not have the size of {elem}",
                std::any::type_name::<T>()
            )));
        }
        if shape.contains(&0) {
            return ArrayView::from_shape(IxDyn(&shape), &[])
                .map_err(|e| Error::invalid_argument(format!("as_ndarray of {}: {e}", self.tp())));
        }
        self.check_host("as_ndarray")?;
        let p = self.data_ptr();
        if !(p as usize).is_multiple_of(align_of::<T::Raw>()) {
            return Err(Error::invalid_argument(format!(
                "as_ndarray of {}: the data at {p:p} is not aligned to {} bytes",
                self.tp(),
                align_of::<T::Raw>()
            )));
        }
        // ndarray builds views from non-negative strides: start at the
        // lowest address, then invert the axes whose strides are negative.
        let mut low = p;
        let mut abs = Vec::with_capacity(shape.len());
        for (k, (&n, &s)) in shape.iter().zip(&strides).enumerate() {
            if s % size != 0 {
                return Err(Error::invalid_argument(format!(
                    "as_ndarray of {}: the stride {s} bytes of dim {k} is not a multiple of the \
                     element size {size} (copy() the array first)",
                    self.tp()
                )));
            }
            if s < 0 {
                // n >= 1 (no dim is 0 here); dynd checked that every
                // element offset fits isize when the array was made.
                low = low.wrapping_offset((n as isize - 1) * s);
            }
            abs.push((s / size).unsigned_abs());
        }
        // SAFETY: `low` is the lowest address of an element: aligned (the
        // data and every stride are multiples of the element size, checked),
        // and every element reached from it by the non-negative strides
        // `abs` is one of the array's, inside the one buffer the array's
        // data block keeps alive while `self` is borrowed; the byte span
        // fits isize (checked when the array was made). Their bytes are
        // values of T::Raw (plain data: any bytes are a value). (1): nobody
        // writes them while the view lives.
        let mut view = unsafe {
            ArrayView::from_shape_ptr(IxDyn(&shape).strides(IxDyn(&abs)), low.cast::<T::Raw>())
        };
        for (k, &s) in strides.iter().enumerate() {
            if s < 0 {
                view.invert_axis(Axis(k));
            }
        }
        Ok(view)
    }
}

/// Lends `f` a read-only dynd array over a borrowed `ndarray` view, without
/// copying (any dims, any strides), and returns what `f` returns.
///
/// `f` must not keep any clone or view of the array past its return: the
/// data is only borrowed. When one is still alive as `f` returns (or
/// unwinds), the process aborts, since the memory would be reachable after
/// the borrow ends (see the [module docs](self#soundness)). Results that
/// must outlive the borrow are copies: [`Array::copy`], JSON, `to_vec`, or
/// the result of a computation, which has its own data.
///
/// # Errors
/// As [`Array::from_ndarray`]; `f` is not called then.
///
/// ```
/// use dynd::compute;
/// let m = ndarray::Array2::from_shape_vec((2, 3), (1..=6).map(f64::from).collect()).unwrap();
/// let total = dynd::interop::ndarray::with_view(m.t(), |a| {
///     assert_eq!(a.tp().to_string(), "3 * 2 * float64");
///     compute::sum(a, None, false).unwrap().as_scalar::<f64>().unwrap()
/// })
/// .unwrap();
/// assert_eq!(total, 21.0);
/// ```
pub fn with_view<T: NativeType, D: Dimension, R>(
    view: ArrayView<'_, T, D>,
    f: impl FnOnce(&Array) -> R,
) -> Result<R> {
    let tp = check_layout::<T>()?;
    let strides = byte_strides::<T>(view.strides())?;
    let data = view.as_ptr().cast_mut().cast::<u8>();
    let (released, owner) = release_flag();
    // SAFETY: (1) the view's elements lie at `strides` from `data` and
    // stay valid for the view's lifetime, which the Lent guard does not
    // outlive: it aborts unless the owner has run (every array over the
    // data is gone) when this function returns or unwinds; (2) does not
    // apply: the array is read-only.
    let a = unsafe { Array::from_external(tp, data, view.shape(), &strides, owner, false) }?;
    let lent = Lent {
        array: Some(a),
        released,
    };
    Ok(f(lent.array()))
}

/// [`with_view`] for a mutable view: the array lent to `f` is writable,
/// and what `f` writes is in the ndarray data afterwards.
///
/// # Errors
/// As [`with_view`].
///
/// ```
/// use dynd::Array;
/// let mut m = ndarray::Array1::from(vec![1i64, 2, 3]);
/// dynd::interop::ndarray::with_view_mut(m.view_mut(), |a| {
///     a.assign(&Array::from(10i64), Default::default()).unwrap();
/// })
/// .unwrap();
/// assert_eq!(m.to_vec(), vec![10, 10, 10]);
/// ```
pub fn with_view_mut<T: NativeType, D: Dimension, R>(
    mut view: ArrayViewMut<'_, T, D>,
    f: impl FnOnce(&Array) -> R,
) -> Result<R> {
    let tp = check_layout::<T>()?;
    let strides = byte_strides::<T>(view.strides())?;
    let shape = view.shape().to_vec();
    let data = view.as_mut_ptr().cast::<u8>();
    let (released, owner) = release_flag();
    // SAFETY: (1) as in with_view; (2) the view is a unique borrow, so
    // while the array lives (no longer than this call: the Lent guard)
    // only arrays over it reach the elements, and ndarray's mutable views
    // never alias one element twice. dynd writes only valid values of the
    // element's builtin type (for bool: 0 or 1) through its safe API.
    let a = unsafe { Array::from_external(tp, data, &shape, &strides, owner, true) }?;
    let lent = Lent {
        array: Some(a),
        released,
    };
    Ok(f(lent.array()))
}

/// A flag set by the returned owner when it runs.
fn release_flag() -> (Arc<AtomicBool>, impl FnOnce() + Send + 'static) {
    let released = Arc::new(AtomicBool::new(false));
    let r = released.clone();
    // Release: the last array's drop happens before the flag is read set.
    (released, move || r.store(true, Ordering::Release))
}

/// An array over borrowed memory, lent for one closure call: dropping it
/// drops the array and aborts the process unless that was the last
/// reference to the data.
struct Lent {
    array: Option<Array>,
    released: Arc<AtomicBool>,
}

impl Lent {
    fn array(&self) -> &Array {
        // Some until drop.
        self.array
            .as_ref()
            .expect("a lent array until the guard drops")
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        drop(self.array.take());
        // Acquire: pairs with the owner's Release store.
        if !self.released.load(Ordering::Acquire) {
            eprintln!(
                "dynd: an array over a borrowed ndarray view outlived the closure of \
                 with_view/with_view_mut (a clone or view was kept); aborting, since the \
                 borrowed memory would be reachable after the borrow ends"
            );
            std::process::abort();
        }
    }
}
