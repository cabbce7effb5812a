//! Devices (DESIGN §14): the hook a device runtime implements, and the
//! process-wide table of loaded ones.
//!
//! dynd itself has no device. A runtime (the CUDA device of `dynd-cuda`)
//! implements [`Device`] and [`register`]s itself; from then on arrays on
//! that device can be copied to and from the host ([`crate::Array::to_host`],
//! [`crate::Array::to_device`]) and callables can run there. Without one,
//! everything that would touch a device is an `External` error saying which
//! device is missing and why.

use super::default_threads;
use crate::error::{Error, Result};
use crate::memblock::{DeviceId, MemBlock};
use std::fmt;
use std::sync::{Arc, RwLock};

/// A device that holds memory and can run work: the hook the CUDA device
/// implements. Host work under [`super::Executor::Device`] runs on
/// [`Device::host_threads`] threads; work on the device's memory is the
/// device's to run.
pub trait Device: Send + Sync + fmt::Debug {
    /// The device's name, for messages (`"cuda:0 (NVIDIA H200)"`).
    fn name(&self) -> String;

    /// Which device this is; never [`DeviceId::Cpu`].
    fn id(&self) -> DeviceId;

    /// Threads for host work while this device is the executor.
    fn host_threads(&self) -> usize {
        default_threads()
    }

    /// `bytes` of new, uninitialised device memory aligned to at least 256
    /// bytes: its block (kind `Device`, releasing the memory with its last
    /// reference, recording its span: [`MemBlock::new_device_span`]) and
    /// its address.
    ///
    /// # Errors
    /// `External` when the device cannot allocate (out of memory), naming
    /// the size and the device.
    fn alloc(&self, bytes: usize) -> Result<(MemBlock, *mut u8)>;

    /// Copies `src` from the host to the device address `dst`, and returns
    /// when the copy is complete.
    ///
    /// # Safety
    /// 1. `dst .. dst + src.len()` is memory of this device, writable and
    ///    kept alive by the caller for the duration of the call.
    unsafe fn copy_to_device(&self, dst: *mut u8, src: &[u8]) -> Result<()>;

    /// Copies `dst.len()` bytes from the device address `src` to the host,
    /// and returns when the copy is complete.
    ///
    /// # Safety
    /// 1. `src .. src + dst.len()` is memory of this device, readable and
    ///    kept alive by the caller for the duration of the call.
    unsafe fn copy_to_host(&self, dst: &mut [u8], src: *const u8) -> Result<()>;

    /// Writes `offsets.len() - 1` row descriptors (`{begin, size}`, 16
    /// bytes each) at the device address `descs` from Arrow-style offsets
    /// (on the host): row `k` is elements `offsets[k] .. offsets[k + 1]`,
    /// of `esize` bytes, from `values`. How a ragged array whose rows lie
    /// in order goes to the device with 8 bytes per row rather than 16: the
    /// runtime copies the offsets and builds the descriptors there.
    /// `Ok(false)` when the device does not (the default): the caller
    /// copies descriptors built on the host instead.
    ///
    /// # Errors
    /// `External` when the device fails.
    ///
    /// # Safety
    /// 1. `descs` holds `offsets.len() - 1` descriptors, memory of this
    ///    device alive for the call; `offsets` are nondecreasing from 0;
    ///    `values` holds at least `offsets[last]` elements.
    unsafe fn descriptors_from_offsets(
        &self,
        descs: *mut u8,
        offsets: &[u64],
        values: *mut u8,
        esize: usize,
    ) -> Result<bool> {
        let _ = (descs, offsets, values, esize);
        Ok(false)
    }
}

static DEVICES: RwLock<Vec<Arc<dyn Device>>> = RwLock::new(Vec::new());

/// Makes `device` the runtime of its [`Device::id`] for the rest of the
/// process (replacing one registered before for the same id).
pub fn register(device: Arc<dyn Device>) {
    let mut all = DEVICES.write().unwrap_or_else(|e| e.into_inner());
    let id = device.id();
    all.retain(|d| d.id() != id);
    all.push(device);
}

/// The registered runtime of `id`.
///
/// # Errors
/// `External` for [`DeviceId::Cpu`] (the host is not a device) and for a
/// device no runtime was registered for, saying how to get one.
pub fn device(id: DeviceId) -> Result<Arc<dyn Device>> {
    if id.is_cpu() {
        return Err(Error::external("the cpu is the host, not a device"));
    }
    let all = DEVICES.read().unwrap_or_else(|e| e.into_inner());
    all.iter().find(|d| d.id() == id).cloned().ok_or_else(|| {
        Error::external(format!(
            "no runtime for {id} is loaded: device support comes from dynd-cuda \
             (dynd_cuda::install() in Rust; `import dynd` loads it in Python when a \
             CUDA driver and device are present)"
        ))
    })
}

/// The registered devices, in registration order.
pub fn devices() -> Vec<Arc<dyn Device>> {
    DEVICES.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// A pretend device for tests: "device memory" is host memory that only
/// [`Device`]'s copies touch, so the host paths that must not read device
/// data can be checked without a GPU (a missed check reads memory that is
/// valid, but the tests compare what went through the device's copies).
#[cfg(any(test, feature = "test-device"))]
pub mod testing {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Host memory posing as device `Cuda(ordinal)`; counts its copies.
    #[derive(Debug)]
    pub struct HostBackedDevice {
        ordinal: u32,
        /// Copies made to the host so far.
        pub to_host: AtomicUsize,
        /// Copies made to the device so far.
        pub to_device: AtomicUsize,
    }

    impl HostBackedDevice {
        /// Registers a pretend `cuda:ordinal` and returns it.
        pub fn install(ordinal: u32) -> Arc<HostBackedDevice> {
            let d = Arc::new(HostBackedDevice {
                ordinal,
                to_host: AtomicUsize::new(0),
                to_device: AtomicUsize::new(0),
            });
            register(d.clone());
            d
        }
    }

    impl Device for HostBackedDevice {
        fn name(&self) -> String {
            format!("cuda:{} (host-backed test device)", self.ordinal)
        }
        fn id(&self) -> DeviceId {
            DeviceId::Cuda(self.ordinal)
        }
        fn alloc(&self, bytes: usize) -> Result<(MemBlock, *mut u8)> {
            let host = MemBlock::new_fixed(bytes.max(1), 256)?;
            let (ptr, _) = host
                .fixed_data()
                .ok_or_else(|| Error::external("test device: no buffer"))?;
            let block = MemBlock::new_device_span(self.id(), ptr, bytes.max(1), move || drop(host));
            Ok((block, ptr))
        }
        unsafe fn copy_to_device(&self, dst: *mut u8, src: &[u8]) -> Result<()> {
            self.to_device.fetch_add(1, Ordering::SeqCst);
            // SAFETY: (1) `dst` is writable host memory of this pretend
            // device, at least src.len() bytes; a fresh buffer never
            // overlaps the caller's slice.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
            Ok(())
        }
        unsafe fn copy_to_host(&self, dst: &mut [u8], src: *const u8) -> Result<()> {
            self.to_host.fetch_add(1, Ordering::SeqCst);
            // SAFETY: (1) `src` is readable host memory of this pretend
            // device, at least dst.len() bytes.
            unsafe { std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len()) };
            Ok(())
        }
    }
}
