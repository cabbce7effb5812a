//! Tensors: an owned, contiguous [`Tensor`], and borrowed views with any
//! strides ([`TensorView`], [`TensorViewMut`]; negative strides walk
//! backwards).

use crate::element::Element;
use crate::operator::{MemRegion, Operator, leaf_hooks};
use crate::rank::{Shape, c_strides, checked_numel, fmt_shape, ravel};
use dynd::{Error, Result};
use std::marker::PhantomData;

/// A strided block of elements: the part every view shares.
///
/// Invariant (established by the constructors of the types that hold one):
/// for every index inside `sizes`, `ptr + sum(idx[d] * strides[d])` is a
/// valid, aligned `T` for as long as the holder lives (and writable when the
/// holder is a mutable view).
pub(crate) struct Strided<T, S: Shape> {
    pub(crate) ptr: *mut T,
    pub(crate) sizes: S,
    pub(crate) strides: S::Strides,
}

impl<T, S: Shape> Clone for Strided<T, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, S: Shape> Copy for Strided<T, S> {}

#[cold]
#[inline(never)]
fn out_of_bounds(what: &str, idx: &[usize], sizes: &[usize]) -> ! {
    panic!(
        "{what}: index {} is outside an operator of shape {}",
        fmt_shape(idx),
        fmt_shape(sizes)
    )
}

/// Panics (naming `what`) unless `idx` is inside `sizes`.
#[inline(always)]
fn check_inside<S: Shape>(what: &str, idx: &S, sizes: &S) {
    for d in 0..S::RANK {
        if idx[d] >= sizes[d] {
            out_of_bounds(what, idx.as_ref(), sizes.as_ref());
        }
    }
}

impl<T: Element, S: Shape> Strided<T, S> {
    /// Checks that every element `sizes`/`strides` reach, counted from
    /// `offset`, lies inside a buffer of `len` elements.
    pub(crate) fn check_in(
        len: usize,
        offset: usize,
        sizes: &S,
        strides: &S::Strides,
    ) -> Result<()> {
        let n = checked_numel(sizes)?;
        if n == 0 {
            return if offset <= len {
                Ok(())
            } else {
                Err(Error::index(format!(
                    "offset {offset} is past a buffer of {len} elements"
                )))
            };
        }
        let (lo, hi) = Self::extent(sizes, strides);
        let lo = offset as i128 + lo as i128;
        let hi = offset as i128 + hi as i128;
        if lo < 0 || hi >= len as i128 {
            return Err(Error::index(format!(
                "a view of shape {} with strides {:?} at offset {offset} reaches elements {lo}..={hi}, \
                 outside a buffer of {len} elements",
                fmt_shape(sizes.as_ref()),
                strides.as_ref()
            )));
        }
        Ok(())
    }

    /// The block of `sizes`/`strides` at `base + offset`, checked (as
    /// [`check_in`](Self::check_in)) to lie inside the `len` elements from
    /// `base`.
    pub(crate) fn within(
        base: *mut T,
        len: usize,
        offset: usize,
        sizes: S,
        strides: S::Strides,
    ) -> Result<Self> {
        Self::check_in(len, offset, &sizes, &strides)?;
        Ok(Strided {
            ptr: base.wrapping_add(offset),
            sizes,
            strides,
        })
    }

    /// The lowest and highest element offsets reached (sizes all non-zero).
    fn extent(sizes: &S, strides: &S::Strides) -> (isize, isize) {
        let (mut lo, mut hi) = (0isize, 0isize);
        for d in 0..S::RANK {
            let reach = (sizes[d] as isize - 1).saturating_mul(strides[d]);
            if reach < 0 {
                lo = lo.saturating_add(reach);
            } else {
                hi = hi.saturating_add(reach);
            }
        }
        (lo, hi)
    }

    /// `true` when distinct indices reach distinct elements (a sufficient
    /// test: sorted by stride, each stride steps over everything inside it).
    pub(crate) fn is_injective(sizes: &S, strides: &S::Strides) -> bool {
        if sizes.as_ref().contains(&0) {
            return true;
        }
        let mut dims: Vec<(usize, usize)> = (0..S::RANK)
            .filter(|&d| sizes[d] > 1)
            .map(|d| (strides[d].unsigned_abs(), sizes[d]))
            .collect();
        dims.sort_unstable();
        let mut span = 0usize; // highest offset reached by the dims so far
        for (stride, size) in dims {
            if stride <= span {
                return false;
            }
            span = match stride
                .checked_mul(size - 1)
                .and_then(|r| r.checked_add(span))
            {
                Some(s) => s,
                None => return false,
            };
        }
        true
    }

    /// The byte range this block reaches, if any element.
    pub(crate) fn region(&self) -> Option<MemRegion> {
        if self.sizes.as_ref().contains(&0) || std::mem::size_of::<T>() == 0 {
            return None;
        }
        let (lo, hi) = Self::extent(&self.sizes, &self.strides);
        let size = std::mem::size_of::<T>() as isize;
        let base = self.ptr as isize;
        Some(MemRegion {
            start: (base + lo * size) as usize,
            end: (base + hi * size + size) as usize,
        })
    }

    #[inline(always)]
    fn offset(&self, idx: &S) -> isize {
        let mut off = 0isize;
        for d in 0..S::RANK {
            off += idx[d] as isize * self.strides[d];
        }
        off
    }

    #[inline(always)]
    fn check_index(&self, idx: &S) {
        check_inside("tensor", idx, &self.sizes);
    }

    /// Checks that the run `idx + j * step * e_axis`, `j < len`, is inside.
    #[inline(always)]
    fn check_run(&self, idx: &S, axis: usize, step: isize, len: usize) {
        self.check_index(idx);
        if len > 1 {
            let end = idx[axis] as isize + (len as isize - 1) * step;
            if end < 0 || end >= self.sizes[axis] as isize {
                out_of_bounds("tensor run", idx.as_ref(), self.sizes.as_ref());
            }
        }
    }

    #[inline(always)]
    pub(crate) fn get(&self, idx: S) -> T {
        self.check_index(&idx);
        // SAFETY: `idx` is inside `sizes` (checked), so by the invariant the
        // element is a valid T.
        unsafe { *self.ptr.offset(self.offset(&idx)) }
    }

    #[inline(always)]
    pub(crate) fn fill_line(&self, idx: S, axis: usize, step: isize, out: &mut [T]) {
        if out.is_empty() {
            return;
        }
        self.check_run(&idx, axis, step, out.len());
        let s = self.strides[axis] * step;
        // SAFETY: the whole run is inside `sizes` (checked), so each element
        // read is valid by the invariant; `wrapping_offset` never asserts
        // anything about the pointer after the last element.
        unsafe {
            let p = self.ptr.offset(self.offset(&idx));
            if s == 1 {
                std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len());
            } else {
                let mut q = p as *const T;
                for o in out.iter_mut() {
                    *o = *q;
                    q = q.wrapping_offset(s);
                }
            }
        }
    }

    #[inline(always)]
    pub(crate) fn contiguous_line(
        &self,
        idx: S,
        axis: usize,
        step: isize,
        len: usize,
    ) -> Option<&[T]> {
        if self.strides[axis] * step != 1 || len == 0 {
            return None;
        }
        self.check_run(&idx, axis, step, len);
        // SAFETY: the `len` elements from `idx` along `axis` are inside
        // `sizes` (checked) and consecutive in memory (stride 1), valid for
        // as long as the holder (and so `&self`) lives.
        Some(unsafe { std::slice::from_raw_parts(self.ptr.offset(self.offset(&idx)), len) })
    }

    /// # Safety
    /// 1. The holder is writable (the invariant's "writable" case).
    /// 2. The run is inside `sizes`.
    /// 3. No other thread reads or writes those elements during the call.
    #[inline(always)]
    pub(crate) unsafe fn write_line(&self, idx: S, axis: usize, step: isize, vals: &[T]) {
        debug_assert!(
            vals.is_empty() || {
                self.check_run(&idx, axis, step, vals.len());
                true
            }
        );
        let s = if S::RANK == 0 {
            0
        } else {
            self.strides[axis] * step
        };
        // SAFETY: (1) and (2) make every element written valid and writable;
        // (3) rules out a data race.
        unsafe {
            let mut p = self.ptr.offset(self.offset(&idx));
            if s == 1 {
                std::ptr::copy_nonoverlapping(vals.as_ptr(), p, vals.len());
            } else {
                for &v in vals {
                    *p = v;
                    p = p.wrapping_offset(s);
                }
            }
        }
    }

    #[inline(always)]
    pub(crate) fn row_ptr(&self, idx: S, len: usize) -> Option<*mut T> {
        if S::RANK == 0 {
            return (len == 1).then_some(self.ptr);
        }
        let last = S::RANK - 1;
        if self.strides[last] != 1 || len == 0 {
            return None;
        }
        self.check_run(&idx, last, 1, len);
        Some(self.ptr.wrapping_offset(self.offset(&idx)))
    }
}

/// Implements [`Operator`] for a type with a `raw: Strided` field.
macro_rules! strided_operator {
    ([$($gen:tt)*] $ty:ty) => {
        impl<$($gen)*> $crate::operator::Operator for $ty {
            type Elem = T;
            type Shape = S;
            #[inline(always)]
            fn sizes(&self) -> S {
                self.raw.sizes
            }
            #[inline(always)]
            fn get(&self, idx: S) -> T {
                self.raw.get(idx)
            }
            #[inline(always)]
            fn fill_line(&self, idx: S, axis: usize, step: isize, out: &mut [T]) {
                self.raw.fill_line(idx, axis, step, out)
            }
            #[inline(always)]
            fn contiguous_line(&self, idx: S, axis: usize, step: isize, len: usize) -> Option<&[T]> {
                self.raw.contiguous_line(idx, axis, step, len)
            }
            fn name(&self) -> String {
                "tensor".into()
            }
            fn validate(&self) -> dynd::Result<()> {
                Ok(())
            }
            $crate::operator::leaf_hooks!();
            fn visit_memory(&self, f: &mut dyn FnMut($crate::operator::MemRegion)) {
                if let Some(r) = self.raw.region() {
                    f(r);
                }
            }
        }
    };
}
pub(crate) use strided_operator;

/// Implements `Debug` (shape and strides) for a type with a `raw: Strided`
/// field.
macro_rules! strided_debug {
    ([$($gen:tt)*] $ty:ty, $name:literal) => {
        impl<$($gen)*> std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct($name)
                    .field("sizes", &self.raw.sizes)
                    .field("strides", &self.raw.strides)
                    .finish()
            }
        }
    };
}
pub(crate) use strided_debug;

/// Implements [`LvalueOp`](crate::LvalueOp) for a writable type with a `raw: Strided` field.
macro_rules! strided_lvalue {
    ([$($gen:tt)*] $ty:ty) => {
        // SAFETY: (1) writes stay inside the view's extent, which
        // `visit_memory` reports; (2) writable views are made only with
        // injective strides; (3) `row_ptr` needs a last stride of 1 and
        // checks the run's bounds.
        unsafe impl<$($gen)*> $crate::operator::LvalueOp for $ty {
            #[inline(always)]
            unsafe fn write_line(&self, idx: S, axis: usize, step: isize, vals: &[T]) {
                // SAFETY: (1) the type is a writable view; (2) and (3) are the
                // caller's promises.
                unsafe { self.raw.write_line(idx, axis, step, vals) }
            }
            #[inline(always)]
            fn row_ptr(&self, idx: S, len: usize) -> Option<*mut T> {
                self.raw.row_ptr(idx, len)
            }
        }
    };
}
pub(crate) use strided_lvalue;

/// An owned, C-contiguous (row-major) tensor.
///
/// `&Tensor` is an operator; [`Tensor::view_mut`] gives the lvalue to assign
/// into.
///
/// ```
/// use dynd_ops::{Tensor, Serial, Operator};
/// let a = Tensor::from_vec([2, 3], vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
/// let b = (&a * 2.0 + &a).eval(&Serial).unwrap();
/// assert_eq!(b.as_slice(), &[3.0, 6.0, 9.0, 12.0, 15.0, 18.0]);
/// assert_eq!(b.at([1, 2]), 18.0);
/// ```
#[derive(Clone, PartialEq)]
pub struct Tensor<T, S: Shape> {
    data: Vec<T>,
    sizes: S,
}

impl<T: Element, S: Shape> std::fmt::Debug for Tensor<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("sizes", &self.sizes)
            .field("data", &self.data)
            .finish()
    }
}

impl<T: Element, S: Shape> Tensor<T, S> {
    /// A tensor of `sizes` filled with `T::default()` (0, `false`).
    ///
    /// # Panics
    /// When the number of elements overflows `usize` (as `vec!` does).
    pub fn zeros(sizes: S) -> Self {
        Self::full(sizes, T::default())
    }

    /// A tensor of `sizes` filled with `value`.
    ///
    /// # Panics
    /// When the number of elements overflows `usize`.
    pub fn full(sizes: S, value: T) -> Self {
        let n = checked_numel(&sizes).unwrap_or_else(|e| panic!("{e}"));
        Tensor {
            data: vec![value; n],
            sizes,
        }
    }

    /// A tensor over `data` in C order.
    ///
    /// # Errors
    /// `InvalidArgument` when `data.len()` is not the number of elements.
    pub fn from_vec(sizes: S, data: Vec<T>) -> Result<Self> {
        let n = checked_numel(&sizes)?;
        if n != data.len() {
            return Err(Error::invalid_argument(format!(
                "a tensor of shape {} needs {n} elements, got {}",
                fmt_shape(sizes.as_ref()),
                data.len()
            )));
        }
        Ok(Tensor { data, sizes })
    }

    /// A tensor whose element at `idx` is `f(idx)`.
    pub fn from_fn(sizes: S, mut f: impl FnMut(S) -> T) -> Self {
        let n = checked_numel(&sizes).unwrap_or_else(|e| panic!("{e}"));
        let data = (0..n).map(|i| f(crate::rank::unravel(i, &sizes))).collect();
        Tensor { data, sizes }
    }

    /// The size of each dim.
    pub fn sizes(&self) -> S {
        self.sizes
    }

    /// The elements in C order.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The elements in C order, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// The elements in C order.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// The element at `idx`.
    ///
    /// # Panics
    /// When `idx` is outside the tensor.
    pub fn at(&self, idx: S) -> T {
        check_inside("Tensor::at", &idx, &self.sizes);
        self.data[ravel(&idx, &self.sizes)]
    }

    /// The run of `len` elements from `idx` along the last axis, as a
    /// slice (`None` for another axis or step).
    #[inline(always)]
    pub(crate) fn contiguous_line(
        &self,
        idx: S,
        axis: usize,
        step: isize,
        len: usize,
    ) -> Option<&[T]> {
        if axis + 1 != S::RANK || step != 1 || len == 0 {
            return None;
        }
        check_inside("tensor run", &idx, &self.sizes);
        if idx[axis] + len > self.sizes[axis] {
            out_of_bounds("tensor run", idx.as_ref(), self.sizes.as_ref());
        }
        let start = ravel(&idx, &self.sizes);
        Some(&self.data[start..start + len])
    }

    /// A read-only view.
    pub fn view(&self) -> TensorView<'_, T, S> {
        TensorView {
            raw: Strided {
                ptr: self.data.as_ptr() as *mut T,
                sizes: self.sizes,
                strides: c_strides(&self.sizes),
            },
            _data: PhantomData,
        }
    }

    /// A writable view: the lvalue to assign into.
    pub fn view_mut(&mut self) -> TensorViewMut<'_, T, S> {
        TensorViewMut {
            raw: Strided {
                ptr: self.data.as_mut_ptr(),
                sizes: self.sizes,
                strides: c_strides(&self.sizes),
            },
            _data: PhantomData,
        }
    }
}

impl<T: Element, S: Shape> Operator for &Tensor<T, S> {
    type Elem = T;
    type Shape = S;
    #[inline(always)]
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: S) -> T {
        self.at(idx)
    }
    #[inline(always)]
    fn fill_line(&self, idx: S, axis: usize, step: isize, out: &mut [T]) {
        self.view().raw.fill_line(idx, axis, step, out)
    }
    #[inline(always)]
    fn contiguous_line(&self, idx: S, axis: usize, step: isize, len: usize) -> Option<&[T]> {
        Tensor::contiguous_line(self, idx, axis, step, len)
    }
    fn name(&self) -> String {
        "tensor".into()
    }
    fn validate(&self) -> Result<()> {
        Ok(())
    }
    leaf_hooks!();
    fn visit_memory(&self, f: &mut dyn FnMut(MemRegion)) {
        if let Some(r) = self.view().raw.region() {
            f(r);
        }
    }
}

/// An `InvalidArgument` error unless a C-contiguous view of shape `sizes`
/// has exactly `len` elements.
fn check_len<S: Shape>(len: usize, sizes: &S) -> Result<()> {
    let n = checked_numel(sizes)?;
    if n != len {
        return Err(Error::invalid_argument(format!(
            "a view of shape {} needs {n} elements, got {len}",
            fmt_shape(sizes.as_ref()),
        )));
    }
    Ok(())
}

/// A read-only view of elements with any shape and strides (in elements;
/// negative strides allowed).
pub struct TensorView<'a, T, S: Shape> {
    pub(crate) raw: Strided<T, S>,
    _data: PhantomData<&'a [T]>,
}

impl<T, S: Shape> Clone for TensorView<'_, T, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, S: Shape> Copy for TensorView<'_, T, S> {}

// SAFETY: a TensorView is a shared borrow of `T`s (like `&[T]`): sending or
// sharing it across threads only lets other threads read them.
unsafe impl<T: Sync, S: Shape> Send for TensorView<'_, T, S> {}
// SAFETY: a shared TensorView only lets threads read `T`s (`T: Sync`); no
// method writes through a TensorView.
unsafe impl<T: Sync, S: Shape> Sync for TensorView<'_, T, S> {}

impl<'a, T: Element, S: Shape> TensorView<'a, T, S> {
    /// A C-contiguous view of `data`.
    ///
    /// # Errors
    /// `InvalidArgument` when `data.len()` is not the number of elements.
    pub fn new(data: &'a [T], sizes: S) -> Result<Self> {
        check_len(data.len(), &sizes)?;
        Self::strided(data, 0, sizes, c_strides(&sizes))
    }

    /// A view of `data` whose element `idx` is
    /// `data[offset + sum(idx[d] * strides[d])]`.
    ///
    /// # Errors
    /// `Index` when some element would fall outside `data`.
    pub fn strided(data: &'a [T], offset: usize, sizes: S, strides: S::Strides) -> Result<Self> {
        Ok(TensorView {
            raw: Strided::within(data.as_ptr() as *mut T, data.len(), offset, sizes, strides)?,
            _data: PhantomData,
        })
    }

    /// The strides, in elements.
    pub fn strides(&self) -> S::Strides {
        self.raw.strides
    }
}

strided_operator!(['a, T: Element, S: Shape] TensorView<'a, T, S>);
strided_debug!(['a, T, S: Shape] TensorView<'a, T, S>, "TensorView");

/// A writable view of elements with any shape and strides (in elements;
/// negative strides allowed; no two indices may reach the same element).
pub struct TensorViewMut<'a, T, S: Shape> {
    pub(crate) raw: Strided<T, S>,
    _data: PhantomData<&'a mut [T]>,
}

// SAFETY: a TensorViewMut is an exclusive borrow of `T`s (like `&mut [T]`).
unsafe impl<T: Send, S: Shape> Send for TensorViewMut<'_, T, S> {}
// SAFETY: shared access only reads, except through the `unsafe`
// `write_line`, whose callers promise the writes race with nothing.
unsafe impl<T: Sync, S: Shape> Sync for TensorViewMut<'_, T, S> {}

impl<'a, T: Element, S: Shape> TensorViewMut<'a, T, S> {
    /// A C-contiguous writable view of `data`.
    ///
    /// # Errors
    /// `InvalidArgument` when `data.len()` is not the number of elements.
    pub fn new(data: &'a mut [T], sizes: S) -> Result<Self> {
        check_len(data.len(), &sizes)?;
        Self::strided(data, 0, sizes, c_strides(&sizes))
    }

    /// A writable view of `data` whose element `idx` is
    /// `data[offset + sum(idx[d] * strides[d])]`.
    ///
    /// # Errors
    /// `Index` when some element would fall outside `data`;
    /// `InvalidArgument` when two indices would reach the same element.
    pub fn strided(
        data: &'a mut [T],
        offset: usize,
        sizes: S,
        strides: S::Strides,
    ) -> Result<Self> {
        let raw = Strided::within(data.as_mut_ptr(), data.len(), offset, sizes, strides)?;
        if !Strided::<T, S>::is_injective(&sizes, &strides) {
            return Err(Error::invalid_argument(format!(
                "a writable view of shape {} with strides {:?} would reach some elements twice",
                fmt_shape(sizes.as_ref()),
                strides.as_ref()
            )));
        }
        Ok(TensorViewMut {
            raw,
            _data: PhantomData,
        })
    }

    /// The strides, in elements.
    pub fn strides(&self) -> S::Strides {
        self.raw.strides
    }
}

strided_operator!(['a, T: Element, S: Shape] TensorViewMut<'a, T, S>);
strided_debug!(['a, T, S: Shape] TensorViewMut<'a, T, S>, "TensorViewMut");
strided_lvalue!(['a, T: Element, S: Shape] TensorViewMut<'a, T, S>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_views_check_their_bounds_and_aliasing() {
        let data = [0.0f64; 12];
        assert!(TensorView::new(&data, [3, 4]).is_ok());
        assert!(TensorView::new(&data, [3, 5]).is_err());
        assert!(TensorView::strided(&data, 11, [3, 4], [-4, -1]).is_ok());
        assert!(TensorView::strided(&data, 10, [3, 4], [-4, -1]).is_err());
        let mut m = [0.0f64; 12];
        assert!(TensorViewMut::strided(&mut m, 0, [3, 4], [0, 1]).is_err());
        assert!(TensorViewMut::strided(&mut m, 0, [4, 3], [1, 4]).is_ok());
        assert!(TensorViewMut::strided(&mut m, 0, [4, 3], [1, 3]).is_err());
        assert!(Strided::<f64, [usize; 2]>::is_injective(&[1, 5], &[0, 1]));
    }
}
