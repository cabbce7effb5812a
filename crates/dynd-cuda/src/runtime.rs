//! The CUDA runtime of dynd: a [`Cuda`] device per ordinal (device memory,
//! copies, kernel launches, through cudarc's driver API), and
//! [`install`], which registers every device and the device calls with
//! dynd (DESIGN §14).
//!
//! Memory: [`Cuda::alloc`] takes device memory from the device's pool
//! ([`crate::pool`]: freed blocks kept by rounded size), else with
//! `cuMemAlloc` (256-byte aligned); its block goes back to the pool with the
//! last reference ([`Cuda::empty_cache`] frees the pool). Copies return when
//! they are complete. Small ones (under [`STAGED`] bytes) are the driver's
//! synchronous copies; larger ones go through two pinned staging buffers of
//! [`CHUNK`] bytes per device (allocated on the first large copy, so host
//! memory stays bounded): the host copies a chunk into one buffer while the
//! device copies the other's by DMA on a stream of its own, events marking
//! when a buffer is free again — the driver's pageable copies stage through
//! a small buffer one piece at a time. Where pinned memory cannot be had, the
//! copy falls back to the driver's.
//!
//! Kernels: the source of a description ([`crate::codegen`]) is compiled
//! for the device's architecture (`sm_XY`, machine code, when NVRTC knows
//! it; else PTX) once ([`crate::nvrtc`]),
//! loaded once per device, and launched with 256 threads per block and at
//! most 32 blocks per multiprocessor (the grid-stride loop covers the
//! rest). A call synchronises before it returns, and reads the kernel's
//! error record: a failing element is recomputed on the host, which raises
//! the host's own error, with the element's index.

use crate::launch::{self, Backend};
use crate::nvrtc;
use crate::pool::{Pool, Stats};
use crate::probe;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, result, sys};
use dynd::exec::{self, Device, Shared};
use dynd::memblock::{DeviceId, MemBlock};
use dynd::{Error, Result};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

/// Copies of at least this many bytes go through the pinned staging.
pub const STAGED: usize = 8 << 20;
/// The size of each of a device's two pinned staging buffers.
pub const CHUNK: usize = 32 << 20;

/// A device's pinned staging: two buffers, the stream their copies run on,
/// and an event per buffer recorded after its last copy.
struct Staging {
    bufs: [*mut u8; 2],
    events: [sys::CUevent; 2],
    stream: sys::CUstream,
}

// SAFETY: the handles and pinned buffers belong to the device's context,
// which any thread may bind; the Mutex around a Staging gives one thread
// at a time the use of them.
unsafe impl Send for Staging {}

impl Staging {
    /// Allocates the buffers, events and stream in the bound context.
    fn new() -> std::result::Result<Staging, result::DriverError> {
        // SAFETY: the caller bound the context; each allocation is freed
        // by Drop (or here, on a later failure).
        unsafe {
            let a = result::malloc_host(CHUNK, 0)?;
            let b = match result::malloc_host(CHUNK, 0) {
                Ok(b) => b,
                Err(e) => {
                    let _ = result::free_host(a);
                    return Err(e);
                }
            };
            let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
            let made = (|| {
                Ok::<_, result::DriverError>((
                    result::event::create(flags)?,
                    result::event::create(flags)?,
                    result::stream::create(result::stream::StreamKind::NonBlocking)?,
                ))
            })();
            match made {
                Ok((e0, e1, stream)) => Ok(Staging {
                    bufs: [a.cast(), b.cast()],
                    events: [e0, e1],
                    stream,
                }),
                Err(e) => {
                    let _ = result::free_host(a);
                    let _ = result::free_host(b);
                    Err(e)
                }
            }
        }
    }

    /// Copies `src` to the device address `dst`, chunk by chunk.
    ///
    /// # Safety
    /// 1. `dst .. dst + src.len()` is writable memory of the device whose
    ///    context is bound, and these staging resources are that
    ///    context's.
    unsafe fn to_device(
        &self,
        dst: u64,
        src: &[u8],
    ) -> std::result::Result<(), result::DriverError> {
        for (k, chunk) in src.chunks(CHUNK).enumerate() {
            let b = k % 2;
            // SAFETY: the buffer's event was recorded after its last copy
            // (k >= 2); waiting on it makes the buffer free. The chunk fits
            // the buffer (CHUNK bytes); the async copy reads the pinned
            // buffer and writes (1)'s memory at its offset.
            unsafe {
                if k >= 2 {
                    result::event::synchronize(self.events[b])?;
                }
                parallel_copy(self.bufs[b], chunk.as_ptr(), chunk.len());
                let staged = std::slice::from_raw_parts(self.bufs[b], chunk.len());
                result::memcpy_htod_async(dst + (k * CHUNK) as u64, staged, self.stream)?;
                result::event::record(self.events[b], self.stream)?;
            }
        }
        // SAFETY: the stream is this staging's.
        unsafe { result::stream::synchronize(self.stream) }
    }

    /// Copies `dst.len()` bytes from the device address `src`, chunk by
    /// chunk: the device fills one buffer while the host empties the other.
    ///
    /// # Safety
    /// 1. `src .. src + dst.len()` is readable memory of the device whose
    ///    context is bound, and these staging resources are that
    ///    context's.
    unsafe fn to_host(
        &self,
        dst: &mut [u8],
        src: u64,
    ) -> std::result::Result<(), result::DriverError> {
        let n = dst.len();
        let chunks = n.div_ceil(CHUNK);
        let len = |k: usize| CHUNK.min(n - k * CHUNK);
        for k in 0..=chunks {
            // SAFETY: chunk k goes into buffer k % 2, which the host
            // emptied at step k - 1 (chunk k - 2); chunk k - 1 is copied
            // out once its event says the device has written it. Offsets
            // stay inside (1)'s memory and `dst`.
            unsafe {
                if k < chunks {
                    let b = k % 2;
                    let staged = std::slice::from_raw_parts_mut(self.bufs[b], len(k));
                    result::memcpy_dtoh_async(staged, src + (k * CHUNK) as u64, self.stream)?;
                    result::event::record(self.events[b], self.stream)?;
                }
                if k >= 1 {
                    let j = k - 1;
                    let b = j % 2;
                    result::event::synchronize(self.events[b])?;
                    parallel_copy(dst.as_mut_ptr().add(j * CHUNK), self.bufs[b], len(j));
                }
            }
        }
        Ok(())
    }
}

/// Host bytes copied between pageable memory and a pinned buffer, in
/// pieces of [`COPY_PIECE`] on the current executor's threads: one thread's
/// `memcpy` (about 10 GB/s, less where the pages are touched for the first
/// time) would bound the staged copy below the link's speed.
///
/// # Safety
/// 1. `src` is readable and `dst` writable for `len` bytes, they do not
///    overlap, and nothing else touches them during the call.
unsafe fn parallel_copy(dst: *mut u8, src: *const u8, len: usize) {
    let (d, s) = (Shared(dst), Shared(src));
    // Copies cannot fail: the split's error path is never taken.
    let _ = exec::flat(len, COPY_PIECE, |start, count| {
        // SAFETY: (1); pieces are disjoint ranges inside `len`.
        unsafe { std::ptr::copy_nonoverlapping(s.get().add(start), d.get().add(start), count) };
        Ok(())
    });
}

/// The piece of a staged copy one thread takes.
const COPY_PIECE: usize = 1 << 20;

impl Drop for Staging {
    fn drop(&mut self) {
        // SAFETY: each handle was made once by Staging::new and is freed
        // once here; no copy is in flight (every copy synchronised).
        unsafe {
            let _ = result::stream::destroy(self.stream);
            for e in self.events {
                let _ = result::event::destroy(e);
            }
            for b in self.bufs {
                let _ = result::free_host(b.cast());
            }
        }
    }
}

/// Threads per block of every launch.
const BLOCK: u32 = 256;

/// One CUDA device.
pub struct Cuda {
    ctx: Arc<CudaContext>,
    ordinal: u32,
    name: String,
    arch: String,
    multiprocessors: u32,
    /// Loaded kernels, by the address of their image in the compile cache
    /// (which keeps every image for the process, so an address names one)
    /// and their name.
    functions: Mutex<HashMap<(usize, String), CudaFunction>>,
    /// Loaded modules, by the address of their image.
    modules: Mutex<HashMap<usize, Arc<CudaModule>>>,
    /// Freed device memory kept for the next allocation of its size.
    pool: Arc<Pool>,
    /// The pinned staging of large copies: made on the first one; `Err`
    /// once it could not be (large copies then take the driver's path).
    staging: Mutex<Option<std::result::Result<Staging, String>>>,
}

impl std::fmt::Debug for Cuda {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cuda")
            .field("ordinal", &self.ordinal)
            .field("name", &self.name)
            .field("arch", &self.arch)
            .finish()
    }
}

/// Frees device memory from `cuMemAlloc` in the bound context (a pool's
/// trim, or a block the pool cannot take).
fn free_device(ptr: u64) {
    // SAFETY: every caller passes an address malloc_sync returned in the
    // context bound to this thread, which is freed once (the pool hands
    // each address out to one owner, and takes it back once).
    let _ = unsafe { result::free_sync(ptr) };
}

/// A driver error as dynd's `External` error, naming what failed.
fn driver(what: &str, e: result::DriverError) -> Error {
    Error::external(format!("CUDA: {what} failed: {e:?}"))
}

impl Cuda {
    /// Opens device `ordinal` (its primary context).
    ///
    /// # Errors
    /// `External` when there is no driver or no such device, saying why;
    /// `InvalidArgument` when `DYND_CUDA_POOL_LIMIT` is not a number.
    pub fn open(ordinal: u32) -> Result<Arc<Cuda>> {
        let count = probe::devices().map_err(Error::external)?;
        if ordinal as usize >= count {
            return Err(Error::external(format!(
                "no CUDA device {ordinal}: the driver sees {count}"
            )));
        }
        let opened = probe::guarded("opening a CUDA device", || {
            let ctx = CudaContext::new(ordinal as usize).map_err(|e| format!("{e:?}"))?;
            let attr = |a| ctx.attribute(a).map_err(|e| format!("{e:?}"));
            use sys::CUdevice_attribute::*;
            let major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
            let minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
            let sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
            let name = ctx.name().map_err(|e| format!("{e:?}"))?;
            Ok((ctx, major, minor, sms, name))
        })
        .map_err(Error::external)?;
        let (ctx, major, minor, sms, name) = opened;
        Ok(Arc::new(Cuda {
            ctx,
            ordinal,
            name,
            arch: nvrtc::arch_for(major, minor),
            multiprocessors: sms.max(1) as u32,
            functions: Mutex::new(HashMap::new()),
            modules: Mutex::new(HashMap::new()),
            pool: Arc::new(Pool::from_env()?),
            staging: Mutex::new(None),
        }))
    }

    /// The architecture kernels are compiled for: the device's own
    /// (`"sm_90"`, a CUBIN) when NVRTC knows it, else PTX
    /// ([`nvrtc::arch_for`]).
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// The kernel `kernel` of `image`, loaded into this device once.
    ///
    /// No lock is held while the driver loads a module (a CUBIN is
    /// relocated; PTX is compiled first), so threads load theirs at once;
    /// when two loaded the same one, the first kept wins.
    fn function(&self, image: &nvrtc::Compiled, kernel: &str) -> Result<CudaFunction> {
        let key = (Arc::as_ptr(image) as usize, kernel.to_string());
        if let Some(f) = self
            .functions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(f.clone());
        }
        // A module holds every kernel of its source: loaded once.
        let known = self
            .modules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key.0)
            .cloned();
        let module = match known {
            Some(m) => m,
            None => {
                let loadable = match &**image {
                    nvrtc::Image::Ptx(p) => cudarc::nvrtc::Ptx::from_src(p.as_str()),
                    nvrtc::Image::Cubin(c) => cudarc::nvrtc::Ptx::from_binary(c.clone()),
                };
                let m = self
                    .ctx
                    .load_module(loadable)
                    .map_err(|e| driver("loading a module", e))?;
                let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
                modules.entry(key.0).or_insert(m).clone()
            }
        };
        let f = module
            .load_function(kernel)
            .map_err(|e| driver("finding the kernel", e))?;
        let mut fns = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        Ok(fns.entry(key).or_insert(f).clone())
    }
}

impl Backend for Cuda {
    fn block(&self) -> u32 {
        BLOCK
    }

    fn max_blocks(&self) -> u32 {
        self.multiprocessors * 32
    }

    unsafe fn launch(
        &self,
        source: &str,
        kernel: &str,
        grid: u32,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        let image = nvrtc::compile(source, &self.arch)?;
        let func = self.function(&image, kernel)?;
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver("binding the context", e))?;
        let stream = self.ctx.default_stream();
        // SAFETY: (1) and (2) of the caller: `params` matches the
        // kernel's signature and its addresses are this device's, alive
        // until the stream is synchronised below.
        unsafe {
            result::launch_kernel(
                func.cu_function(),
                (grid, 1, 1),
                (BLOCK, 1, 1),
                0,
                stream.cu_stream(),
                params,
            )
        }
        .map_err(|e| driver(&format!("launching {kernel}"), e))?;
        stream
            .synchronize()
            .map_err(|e| driver(&format!("running {kernel}"), e))
    }
}

impl Device for Cuda {
    fn name(&self) -> String {
        format!("cuda:{} ({})", self.ordinal, self.name)
    }

    fn id(&self) -> DeviceId {
        DeviceId::Cuda(self.ordinal)
    }

    fn alloc(&self, bytes: usize) -> Result<(MemBlock, *mut u8)> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver("binding the context", e))?;
        // From the device's pool (crate::pool): a cached block of the
        // rounded size, else the driver's.
        let (ptr, size) = self
            .pool
            .alloc(
                bytes,
                // SAFETY: the context is bound to this thread; the
                // allocation is freed once: by the pool's trim, or by the
                // block's release below when it cannot be cached.
                |n| unsafe { result::malloc_sync(n) },
                free_device,
            )
            .map_err(|e| {
                driver(
                    &format!("allocating {bytes} bytes on {}", Device::name(self)),
                    e,
                )
            })?;
        let (ctx, pool) = (self.ctx.clone(), self.pool.clone());
        let at = ptr as usize as *mut u8;
        let block = MemBlock::new_device_span(self.id(), at, bytes.max(1), move || {
            // A failure cannot be reported from a release; the memory is
            // then the driver's to reclaim with the context. Before the
            // block is cached the device finishes its work (what cuMemFree
            // would wait for), so whoever gets it next is its only user —
            // a consumer of an export (DLPack, CUDA array interface) may
            // have queued work on a stream of its own.
            if ctx.bind_to_thread().is_ok()
                && (result::ctx::synchronize().is_err() || !pool.release(ptr, size))
            {
                free_device(ptr);
            }
        });
        Ok((block, at))
    }

    unsafe fn copy_to_device(&self, dst: *mut u8, src: &[u8]) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver("binding the context", e))?;
        if src.len() >= STAGED {
            let mut staging = self.staging.lock().unwrap_or_else(|e| e.into_inner());
            if let Ok(st) =
                staging.get_or_insert_with(|| Staging::new().map_err(|e| format!("{e:?}")))
            {
                // SAFETY: (1) of the trait; the context is bound and the
                // staging is this device's.
                return unsafe { st.to_device(dst as u64, src) }
                    .map_err(|e| driver("copying to the device (staged)", e));
            }
        }
        // SAFETY: (1) `dst` is src.len() writable bytes of this device.
        unsafe { result::memcpy_htod_sync(dst as u64, src) }
            .map_err(|e| driver("copying to the device", e))
    }

    unsafe fn copy_to_host(&self, dst: &mut [u8], src: *const u8) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver("binding the context", e))?;
        if dst.len() >= STAGED {
            let mut staging = self.staging.lock().unwrap_or_else(|e| e.into_inner());
            if let Ok(st) =
                staging.get_or_insert_with(|| Staging::new().map_err(|e| format!("{e:?}")))
            {
                // SAFETY: (1) of the trait; the context is bound and the
                // staging is this device's.
                return unsafe { st.to_host(dst, src as u64) }
                    .map_err(|e| driver("copying to the host (staged)", e));
            }
        }
        // SAFETY: (1) `src` is dst.len() readable bytes of this device.
        unsafe { result::memcpy_dtoh_sync(dst, src as u64) }
            .map_err(|e| driver("copying to the host", e))
    }

    unsafe fn descriptors_from_offsets(
        &self,
        descs: *mut u8,
        offsets: &[u64],
        values: *mut u8,
        esize: usize,
    ) -> Result<bool> {
        // SAFETY: the trait method's promises, passed on.
        unsafe { crate::launch::descriptors_from_offsets(self, descs, offsets, values, esize) }
    }
}

impl Cuda {
    /// Frees the device memory this device's pool keeps for reuse (its
    /// arrays are untouched); returns the bytes given back to the driver.
    pub fn empty_cache(&self) -> usize {
        if self.ctx.bind_to_thread().is_err() {
            return 0;
        }
        self.pool.trim(free_device)
    }

    /// What this device's pool keeps for reuse.
    pub fn cached(&self) -> Stats {
        self.pool.stats()
    }
}

/// The opened devices, by ordinal.
fn opened() -> &'static Mutex<HashMap<u32, Arc<Cuda>>> {
    static OPENED: OnceLock<Mutex<HashMap<u32, Arc<Cuda>>>> = OnceLock::new();
    OPENED.get_or_init(Default::default)
}

/// Device `ordinal`, opened once per process.
///
/// # Errors
/// `External` when it cannot be opened (no driver, no such device).
pub fn device(ordinal: u32) -> Result<Arc<Cuda>> {
    let mut all = opened().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = all.get(&ordinal) {
        return Ok(d.clone());
    }
    let d = Cuda::open(ordinal)?;
    all.insert(ordinal, d.clone());
    Ok(d)
}

/// Waits for the work queued on a foreign CUDA stream (the `stream` of a
/// `__cuda_array_interface__`, a `CUstream` handle as an integer; 1 and 2
/// are the legacy and per-thread default streams), so its data can be read.
///
/// # Errors
/// `External` without a driver, or when the stream is not valid.
///
/// # Safety
/// 1. `handle` is a live `CUstream` of a context current on this thread's
///    device, or one of the special values 0, 1, 2.
pub unsafe fn synchronize_stream(handle: usize) -> Result<()> {
    probe::devices().map_err(Error::external)?;
    let stream = handle as sys::CUstream;
    // SAFETY: (1).
    unsafe { result::stream::synchronize(stream) }
        .map_err(|e| driver(&format!("waiting for stream {handle:#x}"), e))
}

/// The ordinal of the CUDA device whose memory `ptr` is in.
///
/// # Errors
/// `External` without a driver, or when `ptr` is not CUDA memory.
pub fn device_of_pointer(ptr: usize) -> Result<u32> {
    probe::devices().map_err(Error::external)?;
    let mut ordinal: i32 = -1;
    // SAFETY: the attribute is an int written into `ordinal`; the driver
    // only inspects the address (an unknown one is an error, not a read).
    unsafe {
        sys::cuPointerGetAttribute(
            (&mut ordinal as *mut i32).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            ptr as sys::CUdeviceptr,
        )
    }
    .result()
    .map_err(|e| driver(&format!("finding the device of address {ptr:#x}"), e))?;
    u32::try_from(ordinal)
        .map_err(|_| Error::external(format!("address {ptr:#x} is not on a CUDA device")))
}

/// `true` when a CUDA driver and at least one device are present.
pub fn is_available() -> bool {
    probe::devices().is_ok()
}

/// The number of CUDA devices (0 without a driver).
pub fn device_count() -> usize {
    probe::devices().unwrap_or(0)
}

/// Registers every CUDA device and the device calls with dynd, so arrays
/// can move to `cuda:N` ([`dynd::Array::to_device`]) and dynd's functions run on
/// them. Returns the number of devices. Calling it again is harmless.
///
/// # Errors
/// `External` saying why there is no device (no driver, or none present).
pub fn install() -> Result<usize> {
    let n = probe::devices().map_err(Error::external)?;
    for ordinal in 0..n as u32 {
        let d = device(ordinal)?;
        exec::register(d.clone());
        launch::register(ordinal, d);
    }
    dynd::callable::device::register(Arc::new(crate::calls::CudaCalls));
    dynd::array::register_assign(Arc::new(crate::calls::CudaCalls));
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parallel_copy_copies_every_byte() {
        for len in [0, 1, COPY_PIECE - 1, 3 * COPY_PIECE + 17] {
            let src: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let mut dst = vec![0u8; len];
            exec::with_threads(4, || {
                // SAFETY: two distinct buffers of `len` bytes.
                unsafe { parallel_copy(dst.as_mut_ptr(), src.as_ptr(), len) }
            });
            assert!(dst == src, "len {len}");
        }
    }
}
