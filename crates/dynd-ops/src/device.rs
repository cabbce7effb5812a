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
//! What has a device form: [`DeviceView`](crate::DeviceView)s (device arrays), constants
//! ([`scalar`](crate::scalar), [`fill`](crate::fill)), `+ - * / %` and
//! [`neg`](crate::neg), [`abs`](crate::abs), [`sqrt`](crate::sqrt),
//! [`exp`](crate::exp), [`log`](crate::log), [`sin`](crate::sin),
//! [`cos`](crate::cos), [`tan`](crate::tan), [`pow`](crate::pow), the
//! comparisons, [`logical_and`](crate::logical_and),
//! [`logical_or`](crate::logical_or), [`logical_not`](crate::logical_not)
//! and [`cast`](crate::cast), over operands of one rank (size-1 dims
//! broadcast). Everything else — reductions, sorts, FFTs, layout views,
//! closures — has none (`Operator::device_expr` is `None`): a device
//! executor refuses it by name, and such operators are materialisation
//! boundaries, evaluated apart.
//!
//! The host never reads a [`DeviceView`](crate::DeviceView) (in
//! `interop`): its `validate` refuses the host executors, before any
//! element is read.

use dynd::Array;
use dynd::types::BuiltinType;

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
