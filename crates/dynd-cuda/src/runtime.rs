//! The CUDA runtime of dynd: a [`Cuda`] device per ordinal (device memory,
//! copies, kernel launches, through cudarc's driver API), and
//! [`install`], which registers every device and the device calls with
//! dynd (DESIGN §14).
//!
//! Memory: [`Cuda::alloc`] takes device memory with `cuMemAlloc` (256-byte
//! aligned); its block frees it with the last reference. Copies are
//! synchronous (`cuMemcpyHtoD` / `cuMemcpyDtoH`; the driver stages pageable
//! host memory itself).
//!
//! Kernels: the source of a description ([`crate::codegen`]) is compiled
//! for the device's architecture (`compute_XY`) once ([`crate::nvrtc`]),
//! loaded once per device, and launched with 256 threads per block and at
//! most 32 blocks per multiprocessor (the grid-stride loop covers the
//! rest). A call synchronises before it returns, and reads the kernel's
//! error record: a failing element is recomputed on the host, which raises
//! the host's own error, with the element's index.

use crate::codegen;
use crate::kernel::{Elementwise, Place};
use crate::nvrtc;
use crate::probe;
use cudarc::driver::{CudaContext, CudaFunction, result, sys};
use dynd::callable::Callable;
use dynd::exec::{self, Device};
use dynd::memblock::{DeviceId, MemBlock};
use dynd::{Array, Error, Index, Result};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

/// Threads per block of every launch.
const BLOCK: u32 = 256;

/// One CUDA device.
pub struct Cuda {
    ctx: Arc<CudaContext>,
    ordinal: u32,
    name: String,
    arch: String,
    multiprocessors: u32,
    /// Loaded kernels, by the address of their PTX in the compile cache
    /// (which keeps every PTX for the process, so an address names one).
    functions: Mutex<HashMap<usize, CudaFunction>>,
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

/// A driver error as dynd's `External` error, naming what failed.
fn driver(what: &str, e: result::DriverError) -> Error {
    Error::external(format!("CUDA: {what} failed: {e:?}"))
}

impl Cuda {
    /// Opens device `ordinal` (its primary context).
    ///
    /// # Errors
    /// `External` when there is no driver or no such device, saying why.
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
            arch: format!("compute_{major}{minor}"),
            multiprocessors: sms.max(1) as u32,
            functions: Mutex::new(HashMap::new()),
        }))
    }

    /// The architecture kernels are compiled for (`"compute_90"`).
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// The kernel of `ptx`, loaded into this device once.
    fn function(&self, ptx: &nvrtc::Ptx) -> Result<CudaFunction> {
        let key = Arc::as_ptr(ptx) as usize;
        let mut fns = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = fns.get(&key) {
            return Ok(f.clone());
        }
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(ptx.as_str()))
            .map_err(|e| driver("loading a module", e))?;
        let f = module
            .load_function(codegen::KERNEL)
            .map_err(|e| driver("finding the kernel", e))?;
        fns.insert(key, f.clone());
        Ok(f)
    }

    /// Runs `k` on this device: `out` and the strided inputs are this
    /// device's arrays, the scalars 0-d host arrays — the operands `k`
    /// was made from, in order. `f` is the host callable of the operation,
    /// which explains a failing element.
    ///
    /// # Errors
    /// The host's error for the first failing element (with its index);
    /// `External` for driver and compile failures.
    pub fn run(&self, k: &Elementwise, f: &Callable, out: &Array, args: &[&Array]) -> Result<()> {
        let n = k.len();
        if n == 0 {
            return Ok(());
        }
        let ptx = nvrtc::compile(&codegen::source(k), &self.arch)?;
        let func = self.function(&ptx)?;
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver("binding the context", e))?;
        // The error record: the first failing element, ~0 when none.
        let (err_block, err_ptr) = self.alloc(8)?;
        // SAFETY: `err_ptr` is a fresh allocation of 8 bytes of this
        // device, kept alive by `err_block`.
        unsafe { self.copy_to_device(err_ptr, &u64::MAX.to_ne_bytes())? };
        // Argument storage; each kernel parameter points into it.
        let mut words: Vec<u64> = Vec::with_capacity(args.len() + 3);
        words.push(out.data_ptr() as u64);
        for (o, a) in k.inputs.iter().zip(args) {
            words.push(match o.place {
                Place::Strided(_) => a.data_ptr() as u64,
                Place::Scalar => scalar_bits(a)?,
            });
        }
        let params: Vec<i64> = if k.is_contiguous() {
            Vec::new()
        } else {
            let mut p: Vec<i64> = k.shape.iter().map(|&d| d as i64).collect();
            for o in std::iter::once(&k.out).chain(&k.inputs) {
                if let Place::Strided(s) = &o.place {
                    p.extend(s.iter().map(|&x| x as i64));
                }
            }
            p
        };
        let count = n as i64;
        let err_word = err_ptr as u64;
        let mut kernel_params: Vec<*mut c_void> = words
            .iter_mut()
            .map(|w| (w as *mut u64).cast::<c_void>())
            .collect();
        let mut params = params;
        if !params.is_empty() {
            kernel_params.push(params.as_mut_ptr().cast());
        }
        let mut count = count;
        let mut err_word = err_word;
        kernel_params.push((&mut count as *mut i64).cast());
        kernel_params.push((&mut err_word as *mut u64).cast());
        let blocks = (n as u64).div_ceil(u64::from(BLOCK));
        let blocks = blocks.min(u64::from(self.multiprocessors) * 32).max(1) as u32;
        let stream = self.ctx.default_stream();
        // SAFETY: the parameters match the generated kernel's signature in
        // order and type (codegen writes them from the same description):
        // the output and strided inputs are device addresses of arrays of
        // this device covering every offset the kernel computes, kept
        // alive by `out` and `args`; scalars are their bits in a u64 slot
        // (read as their own width, little-endian); the parameter block is
        // shape then strides as `long long`; `err` is 8 bytes of this
        // device kept alive by `err_block`. Every pointer in
        // `kernel_params` points at storage that outlives the launch, and
        // the stream is synchronised before it is dropped.
        unsafe {
            result::launch_kernel(
                func.cu_function(),
                (blocks, 1, 1),
                (BLOCK, 1, 1),
                0,
                stream.cu_stream(),
                &mut kernel_params,
            )
        }
        .map_err(|e| driver("launching a kernel", e))?;
        stream
            .synchronize()
            .map_err(|e| driver("running a kernel", e))?;
        let mut first = [0u8; 8];
        // SAFETY: the record is 8 bytes of this device, alive in err_block.
        unsafe { self.copy_to_host(&mut first, err_ptr)? };
        drop(err_block);
        let first = u64::from_ne_bytes(first);
        if first == u64::MAX {
            return Ok(());
        }
        Err(explain(f, out, args, first as usize))
    }
}

/// The bits of a 0-d host array's value, in the low bytes of a u64.
fn scalar_bits(a: &Array) -> Result<u64> {
    a.check_host("a scalar argument")?;
    let size = a.tp().dtype().data_size();
    if a.ndim() != 0 || size > 8 {
        return Err(Error::invalid_argument(format!(
            "a scalar argument must be a 0-d array of at most 8 bytes, got {}",
            a.tp()
        )));
    }
    let mut b = [0u8; 8];
    // SAFETY: a 0-d host array holds `size` readable bytes at data_ptr.
    unsafe { std::ptr::copy_nonoverlapping(a.data_ptr(), b.as_mut_ptr(), size) };
    Ok(u64::from_le_bytes(b))
}

/// The host's error for element `i` (C order over `out`), which the device
/// reported as failing: the arguments at that element are copied to the
/// host and the host callable computes them, raising its own error.
fn explain(f: &Callable, out: &Array, args: &[&Array], i: usize) -> Error {
    let shape: Vec<usize> = out.shape().into_iter().map(|d| d.unwrap_or(0)).collect();
    let mut idx = vec![0usize; shape.len()];
    let mut rem = i;
    for k in (0..shape.len()).rev() {
        idx[k] = rem % shape[k].max(1);
        rem /= shape[k].max(1);
    }
    let at = |a: &Array| -> Result<Array> {
        let nd = a.ndim();
        let lead = idx.len() - nd;
        let a_shape = a.shape();
        let index: Vec<Index> = (0..nd)
            .map(|k| {
                let j = if a_shape[k] == Some(1) {
                    0
                } else {
                    idx[lead + k]
                };
                Index::At(j as isize)
            })
            .collect();
        let v = if nd == 0 { a.clone() } else { a.index(&index)? };
        v.to_host()
    };
    let values: Result<Vec<Array>> = args.iter().map(|a| at(a)).collect();
    match values {
        Ok(values) => {
            let refs: Vec<&Array> = values.iter().collect();
            match f.call(&refs) {
                Err(e) => e.context(format!("{} on {} at index {idx:?}", f.name(), out.device())),
                Ok(_) => Error::external(format!(
                    "{} on {}: the device reported element {idx:?} as failing, but the host \
                     computes it",
                    f.name(),
                    out.device()
                )),
            }
        }
        Err(e) => e,
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
        // SAFETY: the context is bound to this thread; the allocation is
        // freed exactly once, by the block's release below.
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }.map_err(|e| {
            driver(
                &format!("allocating {bytes} bytes on {}", Device::name(self)),
                e,
            )
        })?;
        let ctx = self.ctx.clone();
        let block = MemBlock::new_device(self.id(), move || {
            // A failure to free cannot be reported from a release; the
            // memory is then the driver's to reclaim with the context.
            if ctx.bind_to_thread().is_ok() {
                // SAFETY: `ptr` came from malloc_sync in this context and
                // is freed once, when the last reference goes.
                let _ = unsafe { result::free_sync(ptr) };
            }
        });
        Ok((block, ptr as usize as *mut u8))
    }

    unsafe fn copy_to_device(&self, dst: *mut u8, src: &[u8]) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver("binding the context", e))?;
        // SAFETY: (1) `dst` is src.len() writable bytes of this device.
        unsafe { result::memcpy_htod_sync(dst as u64, src) }
            .map_err(|e| driver("copying to the device", e))
    }

    unsafe fn copy_to_host(&self, dst: &mut [u8], src: *const u8) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver("binding the context", e))?;
        // SAFETY: (1) `src` is dst.len() readable bytes of this device.
        unsafe { result::memcpy_dtoh_sync(dst, src as u64) }
            .map_err(|e| driver("copying to the host", e))
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
/// can move to `cuda:N` ([`Array::to_device`]) and dynd's functions run on
/// them. Returns the number of devices. Calling it again is harmless.
///
/// # Errors
/// `External` saying why there is no device (no driver, or none present).
pub fn install() -> Result<usize> {
    let n = probe::devices().map_err(Error::external)?;
    for ordinal in 0..n as u32 {
        exec::register(device(ordinal)?);
    }
    dynd::callable::device::register(Arc::new(crate::calls::CudaCalls));
    Ok(n)
}
