//! What this machine has: the NVRTC library, the CUDA driver, devices.
//!
//! cudarc loads libcuda and libnvrtc on first use and panics when one is
//! missing, so every entry point of this crate asks here first. The
//! answers are computed once per process. A library is looked for under
//! cudarc's names (`libnvrtc.so.13`, `libcuda.so.1`, ...) on the loader's
//! path: set `LD_LIBRARY_PATH` to the directory of a pip-installed
//! `nvidia-cuda-nvrtc` (`site-packages/nvidia/cu13/lib`) to compile
//! without a CUDA installation.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

/// Runs `f`, turning a panic inside cudarc (a missing library or symbol)
/// into an error message.
pub(crate) fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(format!("{what} failed inside cudarc: {msg}"))
        }
    }
}

/// `Ok` when NVRTC can be loaded, else why not.
///
/// # Errors
/// The reason, naming the library and how to provide it.
pub fn nvrtc() -> Result<(), String> {
    static NVRTC: OnceLock<Result<(), String>> = OnceLock::new();
    NVRTC
        .get_or_init(|| {
            guarded("loading NVRTC", || {
                // SAFETY: probing only opens and closes the library.
                if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                    Ok(())
                } else {
                    Err(
                        "libnvrtc not found (install CUDA 13's NVRTC, e.g. `pip install \
                         nvidia-cuda-nvrtc`, and put its lib directory on LD_LIBRARY_PATH)"
                            .to_string(),
                    )
                }
            })
        })
        .clone()
}

/// The number of CUDA devices, or why there are none usable.
///
/// # Errors
/// The reason: no driver library, the driver failed to initialise, or it
/// sees no device.
pub fn devices() -> Result<usize, String> {
    static DEVICES: OnceLock<Result<usize, String>> = OnceLock::new();
    DEVICES
        .get_or_init(|| {
            guarded("loading the CUDA driver", || {
                // SAFETY: probing only opens and closes the library.
                if !unsafe { cudarc::driver::sys::is_culib_present() } {
                    return Err("no CUDA driver (libcuda.so.1 not found)".to_string());
                }
                cudarc::driver::result::init()
                    .map_err(|e| format!("the CUDA driver did not initialise: {e:?}"))?;
                let n = cudarc::driver::result::device::get_count()
                    .map_err(|e| format!("the CUDA driver cannot count devices: {e:?}"))?;
                match usize::try_from(n) {
                    Ok(0) | Err(_) => Err("the CUDA driver sees no device".to_string()),
                    Ok(n) => Ok(n),
                }
            })
        })
        .clone()
}

/// For GPU tests: `Some(reason)` when they must skip (printing
/// `SKIP: no CUDA device (<reason>)`), `None` when a device is present.
///
/// # Panics
/// When `DYND_REQUIRE_GPU=1` and there is no device: the test fails
/// instead of skipping (DESIGN §14).
pub fn skip_without_device() -> Option<String> {
    skip(devices().map(drop), "no CUDA device", "DYND_REQUIRE_GPU")
}

/// For compile tests: `Some(reason)` when NVRTC is missing (printing
/// `SKIP: no NVRTC (<reason>)`), `None` when it is present.
///
/// # Panics
/// When `DYND_REQUIRE_NVRTC=1` (CI sets it) and NVRTC is missing.
pub fn skip_without_nvrtc() -> Option<String> {
    skip(nvrtc(), "no NVRTC", "DYND_REQUIRE_NVRTC")
}

/// `None` when `found`; else prints `SKIP: <missing> (<reason>)` and
/// returns the reason, or panics when the variable `require` is `1`.
fn skip(found: Result<(), String>, missing: &str, require: &str) -> Option<String> {
    let reason = found.err()?;
    assert!(
        std::env::var(require).as_deref() != Ok("1"),
        "{require}=1 but there is {missing} ({reason})"
    );
    println!("SKIP: {missing} ({reason})");
    Some(reason)
}
