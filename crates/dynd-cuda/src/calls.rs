//! dynd's functions on CUDA arrays: the [`DeviceCalls`] dynd hands a call
//! to when its arrays are on a CUDA device (DESIGN §14).
//!
//! On the device so far: the arithmetic family — `add`, `subtract`,
//! `multiply`, `divide`, `modulo`, `floor_divide`, `remainder`,
//! `negative`, `abs`, the six comparisons, `logical_and`, `logical_or`,
//! `logical_not`, `sqrt`, `exp`, `log`, `sin`, `cos`, `tan`, `pow` — and
//! `where`, over
//! fixed dims of bool, integers of 8 to 64 bits, float32 and float64 and
//! their option types, with broadcasting and 0-d host scalars. Any other
//! callable on device arrays is a `Type` error saying it runs on the host
//! only (third-party ckernels always do): copy the arrays to the host.

use crate::kernel::Elementwise;
use crate::runtime;
use dynd::callable::device::{DeviceCall, DeviceCalls};
use dynd::callable::{Callable, arith};
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
        // Which kernel: known before any allocation.
        let function = if own(f, "where") {
            None
        } else {
            Some(device_function(f)?)
        };
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
        let k = match function {
            Some(function) => Elementwise::for_call(function, &out, args)?,
            None => Elementwise::for_where(&out, args)?,
        };
        runtime::device(ordinal)?.run(&k, f, &out, args)?;
        Ok(out)
    }
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
             and math functions, and where; third-party callables are host-only): copy the \
             arrays to the host with to_host()",
            f.name()
        ))
    })
}
