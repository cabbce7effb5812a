//! dynd-ops expressions on the device: the [`Cuda`] executor (MatX's CUDA
//! executor, DESIGN §14).
//!
//! An expression of elementwise operators over device arrays
//! ([`DeviceView`](dynd_ops::DeviceView)) assigned into a device array runs as ONE generated
//! kernel: its [`DeviceExpr`] becomes one kernel description whose body is
//! the whole tree (dynd's scalar operations, nested, with the host's
//! promotions and conversions), so `a * b + c` reads `a`, `b` and `c` once
//! and writes the output once — a grid-stride loop, with the contiguous
//! fast path when every operand is contiguous. Reductions, sorts and FFTs
//! have no device form: they are materialisation boundaries (evaluate them
//! apart; dynd's reductions run on device arrays).
//!
//! The values are dynd's (the operators' scalar semantics are dynd's), so
//! the same expression gives the same values on `Serial`, `Parallel(n)`
//! and `Cuda`; an element error (integer division by zero) is the host's,
//! with its index.
//!
//! ```
//! use dynd::memblock::DeviceId;
//! use dynd_ops::{DeviceView, Operator};
//! // Without a device (or the emulator) there is nothing to run on; the
//! // executor says so when it runs.
//! let cuda = dynd_cuda::ops::Cuda::new(0);
//! assert_eq!(cuda.device(), DeviceId::Cuda(0));
//! ```

use crate::kernel::{Elementwise, Expr, Operand, cast, operand};
use crate::launch;
use dynd::callable::arith;
use dynd::kernels::assign::ErrorMode;
use dynd::memblock::DeviceId;
use dynd::types::{BuiltinType, NativeType, Type};
use dynd::{Array, Error, Result, callable};
use dynd_ops::{DeviceExpr, Operator};

/// The executor of dynd-ops expressions on `cuda:N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cuda {
    ordinal: u32,
}

impl Cuda {
    /// The executor of device `cuda:ordinal`.
    pub fn new(ordinal: u32) -> Cuda {
        Cuda { ordinal }
    }

    /// Its device.
    pub fn device(&self) -> DeviceId {
        DeviceId::Cuda(self.ordinal)
    }

    /// Evaluates `op` into a new array on the device, of type
    /// `s0 * … * T` (its sizes and element type).
    ///
    /// # Errors
    /// As [`Cuda::assign`].
    pub fn eval<O: Operator>(&self, op: &O) -> Result<Array>
    where
        O::Elem: NativeType,
    {
        let tp = op
            .sizes()
            .as_ref()
            .iter()
            .rev()
            .fold(Type::builtin(<O::Elem as NativeType>::TYPE), |t, &n| {
                Type::fixed_dim(n, t)
            });
        let out = Array::empty_on(self.device(), tp)?;
        self.assign(&out, op)?;
        Ok(out)
    }

    /// Evaluates `op` into `out`, an array on this device of `op`'s sizes
    /// and element type, as one kernel.
    ///
    /// # Errors
    /// `Type` when a part of `op` has no device form (naming `op`), or the
    /// output's type differs; `InvalidArgument` for arrays on another
    /// device or an output overlapping an input in another layout;
    /// `Broadcast` when operand sizes do not match; an element's error (the
    /// host's, with its index); `External` without the device.
    pub fn assign<O: Operator>(&self, out: &Array, op: &O) -> Result<()>
    where
        O::Elem: NativeType,
    {
        let device = self.device();
        let expr = op.device_expr().ok_or_else(|| {
            Error::type_error(format!(
                "{} has no device form: on {device} run elementwise arithmetic, comparisons, \
                 logic, math and casts of device views (reductions, sorts and FFTs are \
                 evaluated apart)",
                op.name()
            ))
        })?;
        if out.device() != device {
            return Err(Error::invalid_argument(format!(
                "the output ({}) is on {}, and this executor runs on {device}",
                out.tp(),
                out.device()
            )));
        }
        out.check_writable()?;
        let (shape, _, elem) = out.strided_layout()?;
        let want = <O::Elem as NativeType>::TYPE;
        if shape.as_slice() != op.sizes().as_ref() || elem.as_builtin() != Some(want) {
            return Err(Error::type_error(format!(
                "{} gives {:?} * {want}, and the output is {}",
                op.name(),
                op.sizes().as_ref(),
                out.tp()
            )));
        }
        let backend = launch::backend(self.ordinal)?;
        let layout = crate::kernel::strided(out, "the output")?;
        let mut leaves = Leaves {
            device,
            out,
            backend: &*backend,
            inputs: Vec::new(),
            arrays: Vec::new(),
        };
        let (body, tp) = lower(&expr, &layout.0, &mut leaves)?;
        let body = convert(body, tp, want);
        let refs: Vec<&Array> = leaves.arrays.iter().collect();
        let k = Elementwise::build(layout, leaves.inputs, body);
        launch::elementwise(
            &*backend,
            &k,
            out,
            &refs,
            &|idx| match host_value(&expr, idx) {
                Err(e) => e.context(format!("{} on {device} at index {idx:?}", op.name())),
                Ok(_) => Error::external(format!(
                    "{} on {device}: the device reported element {idx:?} as failing, but the \
                     host computes it",
                    op.name()
                )),
            },
        )
    }
}

/// `e` converted from `from` to `to` as Rust's `as` (dynd's nocheck).
fn convert(e: Expr, from: BuiltinType, to: BuiltinType) -> Expr {
    if from == to {
        return e;
    }
    Expr::Convert {
        to,
        mode: ErrorMode::NoCheck,
        to_option: false,
        nan_missing: false,
        value: Box::new(e),
    }
}

/// The leaves of an expression as kernel inputs, as they are lowered.
struct Leaves<'a> {
    device: DeviceId,
    /// The output, which an operand may alias.
    out: &'a Array,
    backend: &'a dyn launch::Backend,
    /// Each leaf's operand.
    inputs: Vec<Operand>,
    /// Each leaf's array: device arrays (copies of those that alias the
    /// output) and 0-d host scalars.
    arrays: Vec<Array>,
}

/// The kernel body of `e` and its type; the leaves become inputs (device
/// arrays broadcast to `shape`, scalars by value). An operand overlapping
/// the output in another layout is read from a copy (the host executors
/// evaluate into a temporary then).
fn lower(e: &DeviceExpr, shape: &[usize], leaves: &mut Leaves<'_>) -> Result<(Expr, BuiltinType)> {
    let device = leaves.device;
    match e {
        DeviceExpr::Array(a) | DeviceExpr::Scalar(a) => {
            if !a.device().is_cpu() && a.device() != device {
                return Err(Error::invalid_argument(format!(
                    "an operand ({}) is on {}, and this executor runs on {device}",
                    a.tp(),
                    a.device()
                )));
            }
            let a = if launch::overlaps(leaves.out, a) {
                launch::device_copy(leaves.backend, a)?
            } else {
                a.clone()
            };
            let o = operand(&a, &format!("operand {}", leaves.arrays.len()), shape)?;
            let tp = o.elem;
            leaves.inputs.push(o);
            leaves.arrays.push(a);
            Ok((Expr::Arg(leaves.inputs.len() - 1), tp))
        }
        DeviceExpr::Cast { to, arg } => {
            let (v, from) = lower(arg, shape, leaves)?;
            Ok((convert(v, from, *to), *to))
        }
        DeviceExpr::Call { name, out, args } => {
            let f = arith::function(name)
                .ok_or_else(|| Error::type_error(format!("{name} has no device form")))?;
            let lowered = args
                .iter()
                .map(|a| lower(a, shape, leaves))
                .collect::<Result<Vec<_>>>()?;
            let types: Vec<Type> = lowered.iter().map(|(_, t)| Type::builtin(*t)).collect();
            let op = f.device_op(&types)?;
            let args = lowered
                .into_iter()
                .map(|(v, t)| cast(v, t, op.compute))
                .collect();
            let node = Expr::Op {
                name: f.name(),
                op,
                missing: f.missing(),
                args,
            };
            Ok((convert(node, op.out, *out), *out))
        }
    }
}

/// `e`'s value at element `idx` computed on the host with dynd's
/// callables (what explains a failing element).
fn host_value(e: &DeviceExpr, idx: &[usize]) -> Result<Array> {
    match e {
        DeviceExpr::Array(a) | DeviceExpr::Scalar(a) => launch::element_at(a, idx),
        DeviceExpr::Cast { to, arg } => {
            host_value(arg, idx)?.cast(Type::builtin(*to), ErrorMode::NoCheck)
        }
        DeviceExpr::Call { name, out, args } => {
            let vals = args
                .iter()
                .map(|a| host_value(a, idx))
                .collect::<Result<Vec<_>>>()?;
            let refs: Vec<&Array> = vals.iter().collect();
            callable::lookup(name)?
                .call(&refs)?
                .cast(Type::builtin(*out), ErrorMode::NoCheck)
        }
    }
}
