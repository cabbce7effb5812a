//! dynd's functions on CUDA arrays: the [`DeviceCalls`] dynd hands a call
//! to when its arrays are on a CUDA device (DESIGN §14).
//!
//! On the device so far: the arithmetic family — `add`, `subtract`,
//! `multiply`, `divide`, `modulo`, `floor_divide`, `remainder`,
//! `negative`, `abs`, the six comparisons, `logical_and`, `logical_or`,
//! `logical_not`, `sqrt`, `exp`, `log`, `sin`, `cos`, `tan`, `pow` — and
//! `where`, over
//! fixed dims of bool, integers of 8 to 64 bits, float32 and float64 and
//! their option types, with broadcasting and 0-d host scalars; and the
//! built-in reductions (`sum`, `prod`, `min`, `max`, `mean`, `var`, `std`,
//! `argmin`, `argmax`, `count`, `any`, `all`) over any axes, with
//! keepdims, of the same types ([`crate::reduce`]); on ragged arrays
//! (`[fixed dims] * var * T`), the arithmetic family with host scalars
//! ([`crate::ragged`]) and the reductions over the var dim. Assignments
//! and casts of device arrays come here too ([`DeviceAssign`]). Any other
//! callable on device arrays is a `Type` error saying it runs on the host
//! only (third-party ckernels always do): copy the arrays to the host.

use crate::kernel::Elementwise;
use crate::launch;
use crate::reduce::{RaggedReduce, Reduce};
use dynd::array::DeviceAssign;
use dynd::callable::device::{DeviceCall, DeviceCalls};
use dynd::callable::reduce::Reduction;
use dynd::callable::sort::RowOp;
use dynd::callable::{Callable, arith};
use dynd::kernels::assign::ErrorMode;
use dynd::memblock::DeviceId;
use dynd::types::Type;
use dynd::{Array, Error, Result};

/// A selection on ragged device arrays ([`crate::select`]).
type Selection = fn(&Callable, u32, &[&Array]) -> Result<Array>;

/// The device calls of the CUDA runtime.
pub struct CudaCalls;

impl DeviceCalls for CudaCalls {
    fn run(&self, call: DeviceCall<'_>) -> Result<Array> {
        let DeviceCall {
            f,
            device,
            out,
            args,
        } = call;
        let DeviceId::Cuda(ordinal) = device else {
            return Err(Error::invalid_argument(format!(
                "the CUDA runtime was given a call on {device}"
            )));
        };
        if args
            .iter()
            .any(|a| !a.device().is_cpu() && a.nested_layout().is_ok())
        {
            return crate::nested::call(f, ordinal, out, args);
        }
        if let Some(reduction) = Reduction::of(f) {
            return reduce(f, reduction, ordinal, out, args);
        }
        let ragged = |a: &&Array| !a.device().is_cpu() && a.ragged_layout().is_ok();
        // An output given for a result computed whole: its type is checked
        // first, then the result given to it as the host fills one
        // ([`crate::outputs`]).
        let checked = |o: &Array| -> Result<()> {
            let tps: Vec<Type> = args.iter().map(|a| a.tp().clone()).collect();
            crate::outputs::check_type(f, o, &f.resolve(&tps)?)
        };
        if let Some(op) = RowOp::of(f) {
            return match out {
                None => crate::rows::call(f, op, ordinal, args),
                Some(o) => {
                    checked(o)?;
                    let r = crate::rows::call(f, op, ordinal, args)?;
                    crate::outputs::rows(f, o, r)
                }
            };
        }
        if own(f, "concatenate") {
            let options = args.iter().any(|a| a.option_rows().is_ok());
            let run = || {
                if options {
                    crate::option_rows::concatenate(f, ordinal, args)
                } else {
                    crate::concat::call(f, ordinal, args)
                }
            };
            return match out {
                None => run(),
                Some(o) => {
                    checked(o)?;
                    let r = run()?;
                    crate::outputs::lifted(f, o, args, r)
                }
            };
        }
        for (name, run) in [
            ("filter", crate::select::filter as Selection),
            ("take", crate::select::take),
        ] {
            if own(f, name) && args.iter().any(ragged) {
                return match out {
                    None => run(f, ordinal, args),
                    Some(o) => {
                        checked(o)?;
                        let r = run(f, ordinal, args)?;
                        crate::outputs::rows(f, o, r)
                    }
                };
            }
        }
        // Which kernel: known before any allocation.
        let function = if own(f, "where") {
            None
        } else {
            Some(device_function(f)?)
        };
        if args.iter().any(ragged) {
            use crate::broadcast::{self, Body};
            let arrays = args.iter().filter(|a| !a.device().is_cpu()).count();
            return match function {
                Some(function) if arrays == 1 && out.is_none() => {
                    crate::ragged::call(f, function, ordinal, args)
                }
                Some(function) => broadcast::call(f, Body::Call(function), ordinal, out, args),
                None => broadcast::call(f, Body::Where, ordinal, out, args),
            };
        }
        let tps: Vec<Type> = args.iter().map(|a| a.tp().clone()).collect();
        let out_tp = f.resolve(&tps)?;
        let out = match out {
            Some(o) if *o.tp() == out_tp => o.clone(),
            Some(o) => {
                return Err(Error::type_error(format!(
                    "{} on {device} computes {out_tp}, and the output is {} (on the device, \
                     the output's type must be the result's)",
                    f.name(),
                    o.tp()
                )));
            }
            None => Array::empty_on(device, out_tp)?,
        };
        let backend = launch::backend(ordinal)?;
        // An argument overlapping the output in another layout is read
        // from a copy, as on the host.
        let owned = launch::unaliased(&*backend, &out, args)?;
        let args: Vec<&Array> = owned.iter().collect();
        let k = match function {
            Some(function) => Elementwise::for_call(function, &out, &args)?,
            None => Elementwise::for_where(&out, &args)?,
        };
        launch::elementwise(&*backend, &k, &out, &args, &|idx| {
            launch::explain_call(f, &out, &args, idx)
        })?;
        Ok(out)
    }
}

impl DeviceAssign for CudaCalls {
    fn assemble_option_rows(
        &self,
        tp: &dynd::Type,
        rows: &Array,
        present: &Array,
    ) -> Result<Array> {
        let DeviceId::Cuda(ordinal) = rows.device() else {
            return Err(Error::invalid_argument(format!(
                "the CUDA runtime was given rows on {}",
                rows.device()
            )));
        };
        crate::option_rows::assemble(ordinal, tp, rows, present)
    }

    fn assign(&self, dst: &Array, src: &Array, mode: ErrorMode) -> Result<()> {
        let device = dst.device();
        let DeviceId::Cuda(ordinal) = device else {
            return Err(Error::invalid_argument(format!(
                "the CUDA runtime was given an assignment into {device}"
            )));
        };
        if dst.nested_layout().is_ok() {
            return crate::nested::assign(dst, src, mode);
        }
        for (what, a) in [("into", dst), ("from", src)] {
            if !a.device().is_cpu() && (a.nested_layout().is_ok() || a.option_rows().is_ok()) {
                return Err(Error::type_error(format!(
                    "assignment {what} {} on {device} (nested var dims, or rows that may be \
                     missing) does not run on the device yet; assign on host copies \
                     (to_host) and copy the result back",
                    a.tp()
                )));
            }
        }
        if dst.ragged_layout().is_ok() || src.ragged_layout().is_ok() {
            return crate::broadcast::assign(dst, src, mode);
        }
        let backend = launch::backend(ordinal)?;
        // A source overlapping the destination in another layout is read
        // from a copy, as on the host.
        let owned = launch::unaliased(&*backend, dst, &[src])?;
        let src = &owned[0];
        let k = Elementwise::for_assign(dst, src, mode)?;
        launch::elementwise(&*backend, &k, dst, &[src], &|idx| {
            // The host's conversion of that one value gives its error.
            let host = launch::element_at(src, idx)
                .and_then(|v| v.cast(dst.tp().dtype().clone(), mode).map(|_| ()));
            match host {
                Err(e) => e.context(format!("assign on {device} at index {idx:?}")),
                Ok(()) => Error::external(format!(
                    "assign on {device}: the device reported element {idx:?} as failing, but \
                     the host converts it"
                )),
            }
        })
    }

    fn index_rows(
        &self,
        rows: &Array,
        level: usize,
        ix: dynd::Index,
        axis: usize,
    ) -> Result<Array> {
        let DeviceId::Cuda(ordinal) = rows.device() else {
            return Err(Error::invalid_argument(format!(
                "the CUDA runtime was given rows on {}",
                rows.device()
            )));
        };
        if rows.nested_layout().is_ok() {
            return crate::nested::index_rows(ordinal, rows, level, ix, axis);
        }
        if rows.option_rows().is_ok() {
            return crate::option_rows::index_rows(ordinal, rows, ix, axis);
        }
        crate::select::index_rows(ordinal, rows, ix, axis)
    }
}

/// A built-in reduction `f` (`reduction`) on `cuda:ordinal`, into `out`
/// (exactly the result's type) or a new array. Empty extents are computed
/// on the host — they read no data, and the host has the identities and
/// the errors (min of an empty fixed extent) — and their results copied to
/// the device.
fn reduce(
    f: &Callable,
    reduction: &Reduction,
    ordinal: u32,
    out: Option<&Array>,
    args: &[&Array],
) -> Result<Array> {
    let device = DeviceId::Cuda(ordinal);
    let [src] = args else {
        return Err(Error::invalid_argument(format!(
            "{} takes one argument, got {}",
            f.name(),
            args.len()
        )));
    };
    if src.device() != device {
        return Err(Error::invalid_argument(format!(
            "{} on {device}: the source is on {}",
            f.name(),
            src.device()
        )));
    }
    let out_tp = f.resolve(&[src.tp().clone()])?;
    let is_ragged = src.ragged_layout().is_ok();
    if is_ragged && let Some(axes) = crate::ragged_axes::Axes::of(reduction, src)? {
        let Some(o) = out else {
            return crate::ragged_axes::call(reduction, axes, ordinal, src, out_tp);
        };
        // Computed, then assigned into the output (any layout; a ragged
        // result into its rows) on the device.
        crate::outputs::check_type(f, o, &out_tp)?;
        let r = crate::ragged_axes::call(reduction, axes, ordinal, src, out_tp)?;
        return crate::outputs::lifted(f, o, args, r);
    }
    let out = match out {
        Some(o) if *o.tp() == out_tp => Some(o),
        Some(o) => {
            return Err(Error::type_error(format!(
                "{} on {device} computes {out_tp}, and the output is {} (on the device, the \
                 output's type must be the result's)",
                f.name(),
                o.tp()
            )));
        }
        None => None,
    };
    let result = match out {
        Some(o) => o.clone(),
        None => Array::empty_on(device, out_tp)?,
    };
    let backend = launch::backend(ordinal)?;
    // A source sharing memory with the output is read from a copy (the
    // kernels write outputs while other threads still read the source).
    let src = &if src.shares_data_with(&result) {
        launch::device_copy(&*backend, src)?
    } else {
        (*src).clone()
    };
    if is_ragged {
        let r = RaggedReduce::for_call(reduction, &result, src)?;
        launch::ragged_reduce(&*backend, &r, &result, src)?;
        return Ok(result);
    }
    let r = Reduce::for_call(reduction, &result, src)?;
    if r.extent() == 0 && r.outputs() > 0 {
        let host = f.call(&[&src.to_host()?])?.to_device(device)?;
        let Some(o) = out else {
            return Ok(host);
        };
        let k = Elementwise::for_copy(o, &host)?;
        launch::elementwise(&*backend, &k, o, &[&host], &|idx| {
            Error::external(format!("copying element {idx:?} of {} failed", f.name()))
        })?;
        return Ok(o.clone());
    }
    launch::reduce(&*backend, &r, &result, src)?;
    Ok(result)
}

/// `true` when `f` is dynd's own callable `name` (the registered one, not
/// a third party's of the same name).
pub(crate) fn own(f: &Callable, name: &str) -> bool {
    f.name() == name
        && dynd::callable::lookup(name)
            .map(|g| g.same(f))
            .unwrap_or(false)
}

/// dynd's arithmetic function `f` is, when it is one.
fn device_function(f: &Callable) -> Result<&'static arith::Function> {
    let found = arith::function(f.name()).filter(|_| own(f, f.name()));
    found.ok_or_else(|| {
        Error::type_error(format!(
            "{} does not run on the device yet (on the device: arithmetic, comparison, logic \
             and math functions, where, and the built-in reductions; third-party callables \
             are host-only): copy the arrays to the host with to_host()",
            f.name()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dynd::exec::testing::HostBackedDevice;
    use dynd::{ErrorKind, compute};
    use std::sync::Arc;

    /// What the device calls decide before they need a GPU, on a pretend
    /// device: which callables run there, and output types.
    #[test]
    fn calls_are_checked_before_the_device_is_needed() {
        let _d = HostBackedDevice::install(60);
        dynd::callable::device::register(Arc::new(CudaCalls));
        let dev = DeviceId::Cuda(60);
        let a = Array::from(vec![1.0f64, 2.0, 3.0, 4.0])
            .to_device(dev)
            .unwrap();
        // Not on the device: a Type error naming the callable.
        let e = compute::is_null(&a).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Type, "{e}");
        assert!(
            e.message()
                .contains("is_null does not run on the device yet"),
            "{e}"
        );
        // A call passes the checks, then needs the real device (pretend
        // cuda:60 has no driver behind it).
        let add = dynd::callable::lookup("add").unwrap();
        let e = add.call_into(&a, &[&a, &Array::from(1.0f64)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::External, "{e}");
        // A wrong output type is refused by name.
        let ints = Array::from(vec![0i64; 4]).to_device(dev).unwrap();
        let e = add.call_into(&ints, &[&a, &a]).unwrap_err();
        assert!(e.message().contains("computes 4 * float64"), "{e}");
    }
}
