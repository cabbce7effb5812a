//! Operators on a device (DESIGN §14, MatX's CUDA executor).
//!
//! An expression of elementwise operators over device arrays is not walked
//! on the host: a device executor (`dynd_cuda::ops::Cuda`) asks it for its
//! [`DeviceExpr`] — leaves that are device arrays and scalars, nodes that
//! are dynd's own elementwise functions and `as` conversions — and runs the
//! whole of it as one generated kernel. So `a * b + c` reads each input
//! once and writes the output once, where two dynd calls would write and
//! read a temporary.
//!
//! What has a device form: [`DeviceView`]s (device arrays), constants
//! ([`scalar`](crate::scalar), [`fill`](crate::fill)), `+ - * / %` and
//! [`neg`](crate::neg), [`abs`](crate::abs), [`sqrt`](crate::sqrt),
//! [`exp`](crate::exp), [`log`](crate::log), [`sin`](crate::sin),
//! [`cos`](crate::cos), [`tan`](crate::tan), [`pow`](crate::pow), the
//! comparisons, [`logical_and`](crate::logical_and),
//! [`logical_or`](crate::logical_or), [`logical_not`](crate::logical_not)
//! and [`cast`](crate::cast), over operands of one rank (size-1 dims
//! broadcast). Everything else — reductions, sorts, FFTs, layout views,
//! closures — has none ([`Operator::device_expr`] is `None`): a device
//! executor refuses it by name, and such operators are materialisation
//! boundaries, evaluated apart.
//!
//! The host never reads a [`DeviceView`]: its [`Operator::validate`]
//! refuses the host executors, before any element is read.

use crate::element::Element;
use crate::operator::{MemRegion, Operator};
use crate::rank::Shape;
use dynd::types::{BuiltinType, NativeType};
use dynd::{Array, Error, Result};
use std::marker::PhantomData;

/// An operator as a device computes it.
#[derive(Debug, Clone)]
pub enum DeviceExpr {
    /// The elements of a device array (its dims the operator's; dims of
    /// size 1 broadcast).
    Array(Array),
    /// One value for every element: a 0-d host array.
    Scalar(Array),
    /// dynd's elementwise function `name` (as registered: `"add"`) of the
    /// arguments, its result converted to `out` — the operator's element
    /// type — where dynd's result type differs.
    Call {
        /// The function's name.
        name: &'static str,
        /// The operator's element type.
        out: BuiltinType,
        /// Its arguments.
        args: Vec<DeviceExpr>,
    },
    /// The argument converted to `to` as Rust's `as` does (dynd's
    /// `nocheck` conversion).
    Cast {
        /// The type converted to.
        to: BuiltinType,
        /// The value converted.
        arg: Box<DeviceExpr>,
    },
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

/// dynd's function `name` of `args` as an operator of element type `out`,
/// when every argument has a device form.
pub(crate) fn call(
    name: &'static str,
    out: BuiltinType,
    args: impl IntoIterator<Item = Option<DeviceExpr>>,
) -> Option<DeviceExpr> {
    let args = args.into_iter().collect::<Option<Vec<_>>>()?;
    Some(DeviceExpr::Call { name, out, args })
}

/// dynd's name of the elementwise function dynd-ops calls `fname`, when
/// the device computes it with the same values.
pub(crate) fn dynd_name(fname: &str) -> Option<&'static str> {
    Some(match fname {
        "add" => "add",
        "sub" => "subtract",
        "mul" => "multiply",
        "div" => "divide",
        "rem" => "modulo",
        "neg" => "negative",
        "abs" => "abs",
        "sqrt" => "sqrt",
        "exp" => "exp",
        "log" => "log",
        "sin" => "sin",
        "cos" => "cos",
        "tan" => "tan",
        "pow" => "pow",
        "lt" => "less",
        "le" => "less_equal",
        "gt" => "greater",
        "ge" => "greater_equal",
        "eq" => "equal",
        "ne" => "not_equal",
        "logical_and" => "logical_and",
        "logical_or" => "logical_or",
        "logical_not" => "logical_not",
        _ => return None,
    })
}
