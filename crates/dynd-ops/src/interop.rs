//! dynd arrays as operators, and operators evaluated into dynd arrays.
//!
//! A view reads (or writes) a dynd array of matching type in place: an
//! array of type `3 * 4 * float64` is a rank-2 `f64` view, with the strides
//! of its arrmeta. The view holds a clone of the array, so the data stays
//! alive as long as the view does. A [`DeviceView`] is the same for a
//! device array, read only by a device executor (see `device`).
//!
//! ```
//! use dynd::Array;
//! use dynd_ops::{ArrayView, ArrayViewMut, LvalueOp, Serial, to_array, transpose};
//! let a = Array::from_json("2 * 3 * float64", "[[1, 2, 3], [4, 5, 6]]").unwrap();
//! let v = ArrayView::<f64, [usize; 2]>::new(&a).unwrap();
//! let t = to_array(transpose(v.clone()) * 10.0, &Serial).unwrap();
//! assert_eq!(t.tp().to_string(), "3 * 2 * float64");
//! assert_eq!(t.to_json(), "[[10.0,40.0],[20.0,50.0],[30.0,60.0]]");
//!
//! // Writing into an existing array in place:
//! let out = Array::empty("2 * 3 * float64").unwrap();
//! ArrayViewMut::<f64, [usize; 2]>::new(&out).unwrap().set(v.clone() + v).run(&Serial).unwrap();
//! assert_eq!(out.to_json(), "[[2.0,4.0,6.0],[8.0,10.0,12.0]]");
//! ```

use crate::device::DeviceExpr;
use crate::element::Element;
use crate::executor::{Executor, Serial};
use crate::operator::{Expr, LvalueOp, MemRegion, Operator};
use crate::rank::{Shape, checked_numel};
use crate::tensor::{Strided, Tensor, strided_debug, strided_lvalue, strided_operator};
use dynd::array::FixedDimMeta;
use dynd::types::NativeType;
use dynd::types::{Type, TypeKind};
use dynd::{Array, Error, Result};
use std::marker::PhantomData;

/// An element type that can be viewed in place in a dynd array.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes is a valid `Self` (data
/// written by C code is read as is). `bool` is not one: evaluate into a
/// `bool` array with [`to_array`], or view it as `uint8`.
pub unsafe trait ArrayElement: Element + NativeType {}

macro_rules! array_elements {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive integer or float: every bit pattern of its
        // size is a valid value.
        unsafe impl ArrayElement for $t {}
    )*};
}
dynd::for_each_native!(signed unsigned ieee => array_elements);

/// The dynd type `s0 * s1 * ... * T`.
pub fn array_type<T: NativeType, S: Shape>(sizes: &S) -> Type {
    let mut tp = Type::builtin(T::TYPE);
    for &n in sizes.as_ref().iter().rev() {
        tp = Type::fixed_dim(n, tp);
    }
    tp
}

/// Reads the shape and element strides of `a` as `RANK` fixed dims of `T`.
fn strided_of<T: Element + NativeType, S: Shape>(a: &Array) -> Result<Strided<T, S>> {
    let want = || format!("{} fixed dims of {}", S::RANK, T::TYPE);
    let mut tp = a.tp();
    for d in 0..S::RANK {
        match tp.kind() {
            TypeKind::FixedDim { elem, .. } => tp = elem,
            TypeKind::VarDim { .. } => {
                return Err(Error::type_error(format!(
                    "cannot view an array of type {} as {}: dim {d} is a var dim",
                    a.tp(),
                    want()
                )));
            }
            _ => {
                return Err(Error::type_error(format!(
                    "cannot view an array of type {} as {}: it has only {d} dims",
                    a.tp(),
                    want()
                )));
            }
        }
    }
    if tp.as_builtin() != Some(T::TYPE) {
        return Err(Error::type_error(format!(
            "cannot view an array of type {} as {}: {}",
            a.tp(),
            want(),
            if tp.is_dim() {
                format!("it has more than {} dims", S::RANK)
            } else {
                format!("its element type is {tp}")
            }
        )));
    }
    let size = std::mem::size_of::<T>();
    let mut sizes = S::zeros();
    let mut strides = S::filled_strides(0);
    let meta = a.arrmeta_ptr();
    for d in 0..S::RANK {
        // SAFETY: the type's first RANK dims are fixed dims (checked above),
        // so its arrmeta starts with RANK `FixedDimMeta`s (DESIGN §4), and
        // `arrmeta_ptr` is valid for `arrmeta_size()` bytes.
        let m: FixedDimMeta = unsafe {
            std::ptr::read_unaligned(meta.add(d * std::mem::size_of::<FixedDimMeta>()).cast())
        };
        if m.dim_size < 0 || m.stride % size as isize != 0 {
            return Err(Error::invalid_argument(format!(
                "cannot view an array of type {} in place: dim {d} has stride {} bytes, \
                 not a multiple of the {size}-byte element",
                a.tp(),
                m.stride
            )));
        }
        sizes[d] = m.dim_size as usize;
        strides[d] = m.stride / size as isize;
    }
    a.check_host("a dynd-ops view")?;
    let ptr = a.data_ptr().cast::<T>();
    if checked_numel(&sizes)? > 0 && !ptr.is_aligned() {
        return Err(Error::invalid_argument(format!(
            "cannot view an array of type {} in place: its data is not aligned for {}",
            a.tp(),
            T::TYPE
        )));
    }
    Ok(Strided {
        ptr,
        sizes,
        strides,
    })
}

/// A read-only operator view of a dynd array (which it keeps alive).
#[derive(Clone)]
pub struct ArrayView<T, S: Shape> {
    raw: Strided<T, S>,
    array: Array,
}

// SAFETY: the view reads the array's data; arrays may be shared between
// threads (dynd's `Array` docs), and reading from many threads is fine.
unsafe impl<T: Sync, S: Shape> Send for ArrayView<T, S> {}
// SAFETY: shared access reads the array's data (`T: Sync`, and arrays
// may be shared between threads); nothing is written through an ArrayView.
unsafe impl<T: Sync, S: Shape> Sync for ArrayView<T, S> {}

impl<T: ArrayElement, S: Shape> ArrayView<T, S> {
    /// A view of `a`, whose type must be `RANK` fixed dims of `T`.
    ///
    /// # Errors
    /// `Type` for a var dim, a different number of dims or another element
    /// type; `InvalidArgument` for misaligned data or strides.
    pub fn new(a: &Array) -> Result<Self> {
        Ok(ArrayView {
            raw: strided_of(a)?,
            array: a.clone(),
        })
    }
}

/// What both views have: the array accessor, the operator over the
/// strided data, and `Debug`.
macro_rules! array_view {
    ($view:ident, $name:literal) => {
        impl<T, S: Shape> $view<T, S> {
            /// The array viewed.
            pub fn array(&self) -> &Array {
                &self.array
            }
        }

        strided_operator!([T: Element, S: Shape] $view<T, S>);
        strided_debug!([T, S: Shape] $view<T, S>, $name);
    };
}

array_view!(ArrayView, "ArrayView");
crate::elementwise::std_ops!([T: Element, S: Shape] ArrayView<T, S>);

/// A writable operator view of a dynd array (which it keeps alive): the
/// lvalue for writing results into an existing array.
pub struct ArrayViewMut<T, S: Shape> {
    raw: Strided<T, S>,
    array: Array,
}

// SAFETY: as for ArrayView; writes happen only through the `unsafe`
// `write_line`/`row_ptr` paths, whose callers promise no data race.
unsafe impl<T: Send + Sync, S: Shape> Send for ArrayViewMut<T, S> {}
// SAFETY: shared access only reads (`T: Sync`), except through the
// `unsafe` `write_line`/`row_ptr` paths, whose callers promise that no two
// threads touch the same element.
unsafe impl<T: Send + Sync, S: Shape> Sync for ArrayViewMut<T, S> {}

impl<T: ArrayElement, S: Shape> ArrayViewMut<T, S> {
    /// A writable view of `a`, whose type must be `RANK` fixed dims of `T`.
    ///
    /// # Errors
    /// As [`ArrayView::new`], and `InvalidArgument` when `a` is read-only
    /// or two of its indices reach the same element (a zero stride).
    pub fn new(a: &Array) -> Result<Self> {
        // SAFETY: ArrayElement types are valid for any bytes.
        unsafe { Self::new_any(a) }
    }
}

impl<T: Element + NativeType, S: Shape> ArrayViewMut<T, S> {
    /// # Safety
    /// 1. The array's data holds valid `T`s (for any `T` but `bool`, always
    ///    true; for `bool`, true of a fresh `Array::empty`).
    unsafe fn new_any(a: &Array) -> Result<Self> {
        a.check_writable()?;
        let raw = strided_of::<T, S>(a)?;
        if !Strided::<T, S>::is_injective(&raw.sizes, &raw.strides) {
            return Err(Error::invalid_argument(format!(
                "cannot write into an array of type {} whose strides {:?} reach some elements twice",
                a.tp(),
                raw.strides.as_ref()
            )));
        }
        Ok(ArrayViewMut {
            raw,
            array: a.clone(),
        })
    }
}

array_view!(ArrayViewMut, "ArrayViewMut");
strided_lvalue!([T: Element, S: Shape] ArrayViewMut<T, S>);

/// Evaluates `op` into a new dynd array of type `s0 * ... * T` (C order).
///
/// # Errors
/// What the evaluation reports ([`Set::run`](crate::Set::run)), or `Alloc`.
pub fn to_array<O: Operator>(op: O, ex: &dyn Executor) -> Result<Array>
where
    O::Elem: NativeType,
{
    op.validate()?;
    let sizes = op.sizes();
    checked_numel(&sizes)?;
    let a = Array::empty(array_type::<O::Elem, O::Shape>(&sizes))?;
    // SAFETY: a fresh array is zero-filled, and zero bytes are a valid
    // value of every Element type (0, 0.0, false).
    let view = unsafe { ArrayViewMut::<O::Elem, O::Shape>::new_any(&a)? };
    view.set(op).run(ex)?;
    Ok(a)
}

impl<O: Operator> Expr<O>
where
    O::Elem: NativeType,
{
    /// Evaluates the expression into a new dynd array ([`to_array`]).
    ///
    /// # Errors
    /// As [`to_array`].
    pub fn to_array(self, ex: &dyn Executor) -> Result<Array> {
        to_array(self.0, ex)
    }
}

impl<T: ArrayElement, S: Shape> Tensor<T, S> {
    /// A copy of a dynd array of type `RANK` fixed dims of `T`.
    ///
    /// # Errors
    /// As [`ArrayView::new`].
    pub fn from_array(a: &Array) -> Result<Self> {
        crate::assign::eval(ArrayView::<T, S>::new(a)?, &Serial)
    }
}

impl<T: Element + NativeType, S: Shape> Tensor<T, S> {
    /// The tensor as a new dynd array.
    ///
    /// # Errors
    /// `Alloc` when the array cannot be allocated.
    pub fn to_array(&self) -> Result<Array> {
        to_array(self, &Serial)
    }
}

/// A read-only operator over a device array of `RANK` fixed dims of `T`:
/// the leaf of expressions a device executor runs. Host executors refuse it
/// ([`Operator::validate`]).
///
/// ```
/// use dynd::Array;
/// use dynd_ops::{DeviceView, Operator, Serial};
/// // A host array is not a device view.
/// let host = Array::from(vec![1.0f64, 2.0]);
/// assert!(DeviceView::<f64, [usize; 1]>::new(&host).is_err());
/// ```
#[derive(Clone)]
pub struct DeviceView<T, S: Shape> {
    array: Array,
    sizes: S,
    _t: PhantomData<fn() -> T>,
}

impl<T: Element + NativeType, S: Shape> DeviceView<T, S> {
    /// A view of the device array `a`, whose type must be `RANK` fixed dims
    /// of `T`.
    ///
    /// # Errors
    /// `InvalidArgument` for a host array; `Type` for another element type,
    /// a var dim or a different number of dims.
    pub fn new(a: &Array) -> Result<Self> {
        if a.device().is_cpu() {
            return Err(Error::invalid_argument(format!(
                "a DeviceView needs a device array; this {} array is on the host (ArrayView views \
                 host arrays)",
                a.tp()
            )));
        }
        let (shape, _, elem) = a.strided_layout()?;
        if shape.len() != S::RANK || elem.as_builtin() != Some(T::TYPE) {
            return Err(Error::type_error(format!(
                "a DeviceView of rank {} over {} cannot view an array of type {}",
                S::RANK,
                T::TYPE,
                a.tp()
            )));
        }
        let mut sizes = S::zeros();
        for (d, n) in shape.into_iter().enumerate() {
            sizes[d] = n;
        }
        Ok(DeviceView {
            array: a.clone(),
            sizes,
            _t: PhantomData,
        })
    }

    /// The array viewed.
    pub fn array(&self) -> &Array {
        &self.array
    }
}

impl<T: Element + NativeType, S: Shape> Operator for DeviceView<T, S> {
    type Elem = T;
    type Shape = S;
    fn sizes(&self) -> S {
        self.sizes
    }
    /// Never read on the host: [`Operator::validate`] refuses host
    /// executors first. Gives `T::default()`.
    fn get(&self, _idx: S) -> T {
        T::default()
    }
    fn name(&self) -> String {
        format!("device_view({})", self.array.tp())
    }
    fn validate(&self) -> Result<()> {
        Err(Error::invalid_argument(format!(
            "{} is on {}: the host executors do not read device memory; run the expression \
             with a device executor (dynd_cuda::ops::Cuda), or copy the array with to_host()",
            self.name(),
            self.array.device()
        )))
    }
    fn prepare(&mut self, _ex: &dyn crate::executor::Executor) -> Result<()> {
        Ok(())
    }
    fn finish(&mut self) {}
    fn visit_memory(&self, _f: &mut dyn FnMut(MemRegion)) {}
    fn device_expr(&self) -> Option<DeviceExpr> {
        Some(DeviceExpr::Array(self.array.clone()))
    }
}

impl<T: Element + NativeType, S: Shape> Operator for &DeviceView<T, S> {
    type Elem = T;
    type Shape = S;
    fn sizes(&self) -> S {
        self.sizes
    }
    fn get(&self, idx: S) -> T {
        (*self).get(idx)
    }
    fn name(&self) -> String {
        (*self).name()
    }
    fn validate(&self) -> Result<()> {
        (*self).validate()
    }
    fn prepare(&mut self, _ex: &dyn crate::executor::Executor) -> Result<()> {
        Ok(())
    }
    fn finish(&mut self) {}
    fn visit_memory(&self, _f: &mut dyn FnMut(MemRegion)) {}
    fn device_expr(&self) -> Option<DeviceExpr> {
        (*self).device_expr()
    }
}

crate::elementwise::std_ops!([T: Element + NativeType, S: Shape] DeviceView<T, S>);
crate::elementwise::std_ops!(['a, T: Element + NativeType, S: Shape] &'a DeviceView<T, S>);
