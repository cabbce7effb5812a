//! The CUDA runtime, loaded on first need (DESIGN §14): what `a.to("cuda")`,
//! `dynd.array(..., device=)` and device imports call first.

use std::sync::OnceLock;

/// Loads the CUDA runtime (once per process; later calls give the first
/// answer): its devices and calls are registered with dynd.
///
/// # Errors
/// `External` saying why there is no device (no driver, none present).
pub(crate) fn install() -> dynd::Result<usize> {
    static INSTALLED: OnceLock<dynd::Result<usize>> = OnceLock::new();
    INSTALLED.get_or_init(dynd_cuda::install).clone()
}

/// Makes `device` ready: nothing when a runtime is already registered for
/// it (a GPU installed before, or the emulator), else [`install`].
///
/// # Errors
/// As [`install`].
pub(crate) fn ensure(device: dynd::memblock::DeviceId) -> dynd::Result<()> {
    if dynd::exec::device(device).is_ok() {
        return Ok(());
    }
    install().map(drop)
}
