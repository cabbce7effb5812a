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
//! keepdims, of the same types ([`crate::reduce`]). Any other
//! callable on device arrays is a `Type` error saying it runs on the host
//! only (third-party ckernels always do): copy the arrays to the host.

use crate::kernel::Elementwise;
use crate::launch;
use crate::reduce::Reduce;
use dynd::array::DeviceAssign;
use dynd::callable::device::{DeviceCall, DeviceCalls};
use dynd::callable::reduce::Reduction;
use dynd::callable::{Callable, arith};
use dynd::kernels::assign::ErrorMode;
use dynd::memblock::DeviceId;
use dynd::types::Type;
use dynd::{Array, Error, Result};

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
        if let Some(reduction) = Reduction::of(f) {
            return reduce(f, reduction, ordinal, out, args);
        }
        // Which kernel: known before any allocation.
        let function = if own(f, "where") {
            None
        } else {
            Some(device_function(f)?)
        };
        let tps: Vec<Type> = args.iter().map(|a| a.tp().clone()).collect();
        let out_tp = f.resolve(&tps)?;
        let out = match out {
            Some(o) if *o.tp() == out_tp => {
                check_overlap(f, o, args)?;
                o.clone()
            }
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
        let k = match function {
            Some(function) => Elementwise::for_call(function, &out, args)?,
            None => Elementwise::for_where(&out, args)?,
        };
        launch::elementwise(&*launch::backend(ordinal)?, &k, &out, args, &|idx| {
            launch::explain_call(f, &out, args, idx)
        })?;
        Ok(out)
    }
}

impl DeviceAssign for CudaCalls {
    fn assign(&self, dst: &Array, src: &Array, mode: ErrorMode) -> Result<()> {
        let device = dst.device();
        let DeviceId::Cuda(ordinal) = device else {
            return Err(Error::invalid_argument(format!(
                "the CUDA runtime was given an assignment into {device}"
            )));
        };
        let same_layout = |a: &Array| {
            (
                a.data_ptr(),
                a.strided_layout().map(|(s, st, _)| (s, st)).ok(),
            )
        };
        if src.shares_data_with(dst) && same_layout(src) != same_layout(dst) {
            return Err(Error::invalid_argument(format!(
                "assign on {device}: the destination overlaps the source in another layout; \
                 assign from a copy"
            )));
        }
        let k = Elementwise::for_assign(dst, src, mode)?;
        launch::elementwise(&*launch::backend(ordinal)?, &k, dst, &[src], &|idx| {
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
    let out = match out {
        Some(o) if *o.tp() == out_tp => {
            if o.shares_data_with(src) {
                return Err(Error::invalid_argument(format!(
                    "{} on {device}: the output overlaps the source; write into a new array",
                    f.name()
                )));
            }
            Some(o)
        }
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
    let r = Reduce::for_call(reduction, &result, src)?;
    let backend = launch::backend(ordinal)?;
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

/// Refuses an output that shares memory with an argument read in another
/// layout: the device's threads would read elements others have already
/// written (the host copies such arguments first; the device cannot yet).
/// The same layout — `a = a + b` in place — is fine: each element is read,
/// then written, by one thread.
fn check_overlap(f: &Callable, out: &Array, args: &[&Array]) -> Result<()> {
    let layout = |a: &Array| {
        (
            a.data_ptr(),
            a.strided_layout().map(|(s, st, _)| (s, st)).ok(),
        )
    };
    for (i, a) in args.iter().enumerate() {
        if a.shares_data_with(out) && layout(a) != layout(out) {
            return Err(Error::invalid_argument(format!(
                "{} on {}: the output overlaps argument {i} in another layout; on the device \
                 write into a new array instead",
                f.name(),
                out.device()
            )));
        }
    }
    Ok(())
}

/// `true` when `f` is dynd's own callable `name` (the registered one, not
/// a third party's of the same name).
fn own(f: &Callable, name: &str) -> bool {
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
    use dynd::{ErrorKind, Index, compute};
    use std::sync::Arc;

    /// What the device calls decide before they need a GPU, on a pretend
    /// device: which callables run there, and outputs that overlap.
    #[test]
    fn calls_are_checked_before_the_device_is_needed() {
        let _d = HostBackedDevice::install(60);
        dynd::callable::device::register(Arc::new(CudaCalls));
        let dev = DeviceId::Cuda(60);
        let a = Array::from(vec![1.0f64, 2.0, 3.0, 4.0])
            .to_device(dev)
            .unwrap();
        // Not on the device: a Type error naming the callable.
        let e = compute::cumsum(&a).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Type, "{e}");
        assert!(
            e.message()
                .contains("cumsum does not run on the device yet"),
            "{e}"
        );
        // An output overlapping an argument in another layout is refused.
        let head = a.index(&[Index::slice(None, Some(3), 1)]).unwrap();
        let tail = a.index(&[Index::slice(Some(1), None, 1)]).unwrap();
        let add = dynd::callable::lookup("add").unwrap();
        let e = add
            .call_into(&tail, &[&head, &Array::from(1.0f64)])
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.message().contains("overlaps argument 0"), "{e}");
        // In place, in the same layout, passes the checks; here it then
        // needs the real device (pretend cuda:60 has no driver behind it).
        let e = add.call_into(&a, &[&a, &Array::from(1.0f64)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::External, "{e}");
        // A wrong output type is refused by name.
        let ints = Array::from(vec![0i64; 4]).to_device(dev).unwrap();
        let e = add.call_into(&ints, &[&a, &a]).unwrap_err();
        assert!(e.message().contains("computes 4 * float64"), "{e}");
    }
}
