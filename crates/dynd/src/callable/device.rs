//! Calls on device arrays (DESIGN §14): where a call's arrays live decides
//! where it runs. A call whose arrays are all on the host runs on the host
//! as always; a call with device arrays runs on their device, through the
//! runtime registered with [`register`] (the CUDA device of `dynd-cuda`);
//! a call mixing devices — or host arrays other than 0-d scalars with
//! device arrays — is refused. Nothing moves implicitly.

use super::Callable;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::memblock::DeviceId;
use std::sync::{Arc, RwLock};

/// One call on device arrays, as dynd hands it to the device runtime.
#[derive(Clone, Copy)]
pub struct DeviceCall<'a> {
    /// The callable.
    pub f: &'a Callable,
    /// The device the arrays are on.
    pub device: DeviceId,
    /// The output the caller gave (on `device`), if any.
    pub out: Option<&'a Array>,
    /// The arguments: arrays on `device`, and 0-d host scalars.
    pub args: &'a [&'a Array],
}

/// What a device runtime does with calls on its arrays.
pub trait DeviceCalls: Send + Sync {
    /// Runs `call` on its device, into its output or a new array there.
    ///
    /// # Errors
    /// The errors the host call would give (the same kinds and messages,
    /// naming positions), and `Type` for a callable the device does not
    /// run (third-party ckernels are host-only), saying so.
    fn run(&self, call: DeviceCall<'_>) -> Result<Array>;
}

static CALLS: RwLock<Option<Arc<dyn DeviceCalls>>> = RwLock::new(None);

/// Makes `calls` the runtime of calls on device arrays, for the rest of the
/// process (replacing the one before).
pub fn register(calls: Arc<dyn DeviceCalls>) {
    *CALLS.write().unwrap_or_else(|e| e.into_inner()) = Some(calls);
}

/// The device a call runs on: `None` for the host.
///
/// # Errors
/// `InvalidArgument` naming both devices when the arrays live on two
/// devices, or when a host array that is not 0-d meets a device array.
pub(crate) fn placement(out: Option<&Array>, args: &[&Array]) -> Result<Option<DeviceId>> {
    let arrays = || out.into_iter().chain(args.iter().copied());
    let Some(device) = arrays().map(Array::device).find(|d| !d.is_cpu()) else {
        return Ok(None);
    };
    let name = |a: &Array| match out {
        Some(o) if std::ptr::eq(o, a) => "the output".to_string(),
        _ => match args.iter().position(|x| std::ptr::eq(*x, a)) {
            Some(i) => format!("argument {i}"),
            None => "an argument".to_string(),
        },
    };
    for a in arrays() {
        let here = a.device();
        let host_scalar = here.is_cpu() && a.ndim() == 0;
        if here != device && !host_scalar {
            return Err(Error::invalid_argument(format!(
                "a call mixes devices: {} ({}) is on {here} and another array is on \
                 {device}; nothing moves implicitly, copy one side first (to_device / to_host)",
                name(a),
                a.tp()
            )));
        }
    }
    Ok(Some(device))
}

/// Runs `f` on `device` through the registered runtime.
///
/// # Errors
/// `External` when no runtime is registered; the runtime's errors.
pub(crate) fn run(
    f: &Callable,
    device: DeviceId,
    out: Option<&Array>,
    args: &[&Array],
) -> Result<Array> {
    let calls = CALLS.read().unwrap_or_else(|e| e.into_inner()).clone();
    match calls {
        Some(calls) => calls.run(DeviceCall {
            f,
            device,
            out,
            args,
        }),
        None => Err(Error::external(format!(
            "{} on {device} arrays needs a device runtime, and none is loaded (dynd_cuda::install() \
             in Rust; `import dynd` loads it in Python when a CUDA driver and device are present)",
            f.name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::testing::HostBackedDevice;
    use crate::{ErrorKind, compute};

    #[test]
    fn calls_on_device_arrays_go_to_the_device_or_are_refused() {
        let _dev = HostBackedDevice::install(21);
        let _other = HostBackedDevice::install(22);
        let host = Array::from(vec![1.0f64, 2.0]);
        let d = host.to_device(DeviceId::Cuda(21)).unwrap();
        let e = host.to_device(DeviceId::Cuda(22)).unwrap();
        // Mixed devices, and a host vector with a device one: refused,
        // naming both devices.
        for (x, y) in [(&d, &e), (&d, &host), (&host, &d)] {
            let err = compute::add(x, y).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
            assert!(err.message().contains("mixes devices"), "{err}");
            assert!(err.message().contains("cuda:21"), "{err}");
        }
        // A host scalar is fine; the call then needs the device runtime,
        // which no test registers (tests of this crate run host-only).
        let one = Array::from(1.0f64);
        if CALLS.read().unwrap().is_none() {
            let err = compute::add(&d, &one).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::External, "{err}");
            assert!(err.message().contains("add on cuda:21"), "{err}");
        }
        // Reductions and selection take the same path.
        assert!(compute::sum(&d, None, false).is_err());
        // Host calls are untouched.
        assert_eq!(compute::add(&host, &one).unwrap().to_json(), "[2.0,3.0]");
    }

    #[test]
    fn no_registered_callable_reads_device_data_on_the_host() {
        // The pretend device's memory is host memory: a call that skipped
        // the placement check would succeed, so every call must fail.
        let _dev = HostBackedDevice::install(23);
        let on = |json: &str, tp: &str| {
            Array::from_json(tp, json)
                .unwrap()
                .to_device(DeviceId::Cuda(23))
                .unwrap()
        };
        let x = on("[1.5, 2.5, 3.5]", "3 * float64");
        let m = on("[true, false, true]", "3 * bool");
        let i = on("[0, 2]", "2 * int64");
        let host = Array::from(vec![1.0f64, 2.0, 3.0]);
        for name in crate::callable::names() {
            let f = crate::callable::lookup(&name).unwrap();
            for args in [
                vec![&x],
                vec![&x, &x],
                vec![&x, &m],
                vec![&x, &i],
                vec![&m, &x, &x],
                vec![&x, &x, &x],
            ] {
                let r = f.call(&args);
                assert!(r.is_err(), "{name} computed on device data on the host");
                let out = Array::empty("3 * float64").unwrap();
                assert!(
                    f.call_into(&out, &args).is_err(),
                    "{name} into a host output"
                );
            }
            let out = x.clone();
            assert!(
                f.call_into(&out, &[&host]).is_err(),
                "{name} into a device output"
            );
        }
    }
}
