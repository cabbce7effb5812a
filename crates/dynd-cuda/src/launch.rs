//! Running generated kernels: the [`Backend`] a device's kernels are
//! launched through, and the launches of each kernel description.
//!
//! Two backends implement it: the CUDA driver ([`crate::runtime::Cuda`]:
//! NVRTC, then the driver's launch) and the host emulator
//! ([`crate::emulator`]: the same CUDA C compiled by the system's C++
//! compiler under a shim, each CUDA thread a host thread), so every line
//! of the generated code — not only its description — runs in the tests
//! of machines without a GPU. The code here is the same for both: what
//! parameters a kernel takes, its grid, its error record and how a failing
//! element is explained.

use crate::codegen;
use crate::kernel::{Elementwise, Place};
use crate::reduce::{self, Plan, RaggedReduce, Reduce};
use dynd::callable::Callable;
use dynd::exec::Device;
use dynd::memblock::MemBlock;
use dynd::{Array, Error, Index, Result};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

/// What runs generated kernels on one device, beside its memory
/// ([`Device`]).
pub trait Backend: Device {
    /// Threads per block of every launch (at most
    /// 256, the kernels' `DYND_MAX_BLOCK`, a multiple of 32 on a GPU).
    fn block(&self) -> u32;

    /// The most blocks a launch uses; grid-stride loops cover the rest.
    fn max_blocks(&self) -> u32;

    /// Compiles `source` (once per source: cached) and runs its kernel
    /// `kernel` on `grid` blocks of [`Backend::block`] threads with
    /// `params`; returns when the kernel is done.
    ///
    /// # Errors
    /// `External` when the source does not compile or the launch fails.
    ///
    /// # Safety
    /// 1. `params` holds one pointer per parameter of `kernel`, in order,
    ///    each to a value of that parameter's type (a `u64` slot holds any
    ///    integer or pointer parameter of up to 8 bytes in its low bytes).
    /// 2. Every device address among them covers every byte the kernel
    ///    reads or writes for those parameters, and stays alive until this
    ///    returns.
    unsafe fn launch(
        &self,
        source: &str,
        kernel: &str,
        grid: u32,
        params: &mut [*mut c_void],
    ) -> Result<()>;
}

thread_local! {
    static LAUNCHES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many kernels this thread has launched (every backend): what tells
/// a fused expression (one launch) from a chain of calls. Per thread, so
/// other threads' calls do not count.
pub fn launches() -> usize {
    LAUNCHES.with(std::cell::Cell::get)
}

/// Launches through `b`, counting the launch.
///
/// # Safety
/// As [`Backend::launch`].
pub unsafe fn counted(
    b: &dyn Backend,
    source: &str,
    kernel: &str,
    grid: u32,
    params: &mut [*mut c_void],
) -> Result<()> {
    LAUNCHES.with(|n| n.set(n.get() + 1));
    // SAFETY: the caller's promises, passed on.
    unsafe { b.launch(source, kernel, grid, params) }
}

/// The backends of the CUDA ordinals that have one.
fn backends() -> &'static Mutex<HashMap<u32, Arc<dyn Backend>>> {
    static BACKENDS: OnceLock<Mutex<HashMap<u32, Arc<dyn Backend>>>> = OnceLock::new();
    BACKENDS.get_or_init(Default::default)
}

/// Makes `backend` the one of `cuda:ordinal` for the rest of the process.
pub fn register(ordinal: u32, backend: Arc<dyn Backend>) {
    backends()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(ordinal, backend);
}

/// The backend of `cuda:ordinal`: the one registered, else the CUDA device
/// of that ordinal, opened once.
///
/// # Errors
/// `External` when there is none (no driver, no such device).
pub fn backend(ordinal: u32) -> Result<Arc<dyn Backend>> {
    if let Some(b) = backends()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&ordinal)
    {
        return Ok(b.clone());
    }
    let d: Arc<dyn Backend> = crate::runtime::device(ordinal)?;
    register(ordinal, d.clone());
    Ok(d)
}

/// The blocks of a launch over `n` work items, one per thread.
pub fn grid(b: &dyn Backend, n: usize) -> u32 {
    let blocks = (n as u64).div_ceil(u64::from(b.block()));
    blocks.clamp(1, u64::from(b.max_blocks())) as u32
}

/// Kernel parameters: the values, each in a slot of its own, and the
/// pointers to them the launch takes.
#[derive(Default)]
pub struct Params {
    /// Scalar slots (addresses, integers, value bits).
    words: Vec<u64>,
    /// Parameter blocks (`long long` arrays passed by value as a struct).
    blocks: Vec<Vec<i64>>,
    /// In order: which store each parameter is in.
    order: Vec<(bool, usize)>,
}

impl Params {
    /// Appends a parameter of up to 8 bytes (an address, an integer, a
    /// scalar's bits).
    pub fn word(&mut self, w: u64) -> &mut Params {
        self.order.push((false, self.words.len()));
        self.words.push(w);
        self
    }

    /// Appends a struct of `long long`s passed by value.
    pub fn block(&mut self, b: Vec<i64>) -> &mut Params {
        self.order.push((true, self.blocks.len()));
        self.blocks.push(b);
        self
    }

    /// The pointers to each parameter, in order; valid while `self` is
    /// neither moved nor changed.
    pub fn pointers(&mut self) -> Vec<*mut c_void> {
        let mut out = Vec::with_capacity(self.order.len());
        for &(is_block, i) in &self.order {
            out.push(if is_block {
                let b = &mut self.blocks[i];
                if b.is_empty() {
                    b.push(0);
                }
                b.as_mut_ptr().cast::<c_void>()
            } else {
                (&mut self.words[i] as *mut u64).cast::<c_void>()
            });
        }
        out
    }
}

/// Device memory for an error record: one `unsigned long long` the kernel
/// lowers with `atomicMin` to the first failing element, `~0` when none.
pub struct ErrorRecord {
    block: MemBlock,
    ptr: *mut u8,
}

impl ErrorRecord {
    /// A fresh record on `b`, set to `~0`.
    ///
    /// # Errors
    /// `External` when the device cannot allocate or copy.
    pub fn new(b: &dyn Backend) -> Result<ErrorRecord> {
        let (block, ptr) = b.alloc(8)?;
        // SAFETY: `ptr` is a fresh allocation of 8 bytes of this device,
        // kept alive by `block`.
        unsafe { b.copy_to_device(ptr, &u64::MAX.to_ne_bytes())? };
        Ok(ErrorRecord { block, ptr })
    }

    /// Its device address.
    pub fn addr(&self) -> u64 {
        self.ptr as u64
    }

    /// The first failing element, if any did.
    ///
    /// # Errors
    /// `External` when the copy fails.
    pub fn first(&self, b: &dyn Backend) -> Result<Option<usize>> {
        let mut first = [0u8; 8];
        // SAFETY: the record is 8 bytes of this device, alive in `block`.
        unsafe { b.copy_to_host(&mut first, self.ptr)? };
        let _ = &self.block;
        let first = u64::from_ne_bytes(first);
        Ok((first != u64::MAX).then_some(first as usize))
    }
}

/// Runs the elementwise kernel `k` on `b`: `out` and the strided inputs
/// are arrays of `b`'s device, the scalars 0-d host arrays — the operands
/// `k` was made from, in order. `explain` gives the error of a failing
/// element from its index in `out` ([`explain_call`] for a callable's).
///
/// # Errors
/// `explain`'s error for the first failing element; `External` for
/// compile and launch failures.
pub fn elementwise(
    b: &dyn Backend,
    k: &Elementwise,
    out: &Array,
    args: &[&Array],
    explain: &dyn Fn(&[usize]) -> Error,
) -> Result<()> {
    let n = k.len();
    if n == 0 {
        return Ok(());
    }
    let source = codegen::source(k);
    let record = ErrorRecord::new(b)?;
    let mut p = Params::default();
    p.word(out.data_ptr() as u64);
    for (o, a) in k.inputs.iter().zip(args) {
        p.word(match o.place {
            Place::Strided(_) => a.data_ptr() as u64,
            Place::Scalar => scalar_bits(a)?,
        });
    }
    if !k.is_contiguous() {
        let mut block: Vec<i64> = k.shape.iter().map(|&d| d as i64).collect();
        for o in std::iter::once(&k.out).chain(&k.inputs) {
            if let Place::Strided(s) = &o.place {
                block.extend(s.iter().map(|&x| x as i64));
            }
        }
        p.block(block);
    }
    p.word(n as u64).word(record.addr());
    let mut ptrs = p.pointers();
    // SAFETY: (1) the parameters match the generated kernel's signature
    // in order and type (codegen writes them from the same description):
    // the output and strided inputs' addresses, scalars' bits in u64
    // slots, the parameter block of shape then strides as `long long`, n,
    // and the record's address. (2) The output and strided inputs are
    // arrays of this device covering every offset the description
    // computes (it was made from them), kept alive by `out` and `args`;
    // the record by `record`.
    unsafe { counted(b, &source, codegen::KERNEL, grid(b, n), &mut ptrs)? };
    match record.first(b)? {
        None => Ok(()),
        Some(i) => Err(explain(&unravel(out, i))),
    }
}

/// The multi-index of element `i` (C order) of `out`.
fn unravel(out: &Array, i: usize) -> Vec<usize> {
    let shape: Vec<usize> = out.shape().into_iter().map(|d| d.unwrap_or(0)).collect();
    let mut idx = vec![0usize; shape.len()];
    let mut rem = i;
    for k in (0..shape.len()).rev() {
        idx[k] = rem % shape[k].max(1);
        rem /= shape[k].max(1);
    }
    idx
}

/// The element of `a` (a device array, or a 0-d host scalar) at `idx`,
/// an index of an array `a` broadcasts to, copied to the host as a 0-d
/// array.
///
/// # Errors
/// `External` when the copy fails.
pub fn element_at(a: &Array, idx: &[usize]) -> Result<Array> {
    let nd = a.ndim();
    if nd == 0 {
        return if a.device().is_cpu() {
            Ok(a.clone())
        } else {
            a.to_host()
        };
    }
    let lead = idx.len().saturating_sub(nd);
    let shape = a.shape();
    let index: Vec<Index> = (0..nd)
        .map(|k| {
            let j = if shape[k] == Some(1) {
                0
            } else {
                idx.get(lead + k).copied().unwrap_or(0)
            };
            Index::At(j as isize)
        })
        .collect();
    a.index(&index)?.to_host()
}

/// `true` when the device array `a` shares memory with `out` in another
/// layout: a kernel writing `out` while reading `a` would read elements
/// other threads have already written. The same layout (`a = a + b` in
/// place) is fine: each element is read, then written, by one thread.
pub fn overlaps(out: &Array, a: &Array) -> bool {
    !a.device().is_cpu() && out.aliases(a)
}

/// A copy of the device array `a` in a new C-order array on its device,
/// made by one kernel on `b`: what a call reads instead of an argument
/// that overlaps its output ([`overlaps`]), as the host copies one first.
///
/// # Errors
/// `External` when the device cannot allocate or run the copy.
pub fn device_copy(b: &dyn Backend, a: &Array) -> Result<Array> {
    let out = Array::empty_on(a.device(), a.tp().clone())?;
    let k = Elementwise::for_copy(&out, a)?;
    elementwise(b, &k, &out, &[a], &|idx| {
        Error::external(format!("copying element {idx:?} of {} failed", a.tp()))
    })?;
    Ok(out)
}

/// `args`, each copied on the device first when it overlaps `out`
/// ([`overlaps`], [`device_copy`]).
///
/// # Errors
/// As [`device_copy`].
pub fn unaliased(b: &dyn Backend, out: &Array, args: &[&Array]) -> Result<Vec<Array>> {
    args.iter()
        .map(|a| {
            if overlaps(out, a) {
                device_copy(b, a)
            } else {
                Ok((*a).clone())
            }
        })
        .collect()
}

/// Runs the reduction `r` on `b`, from `src` into `out` (arrays of `b`'s
/// device, those `r` was made from), when it has outputs and a non-empty
/// extent (the caller computes empty extents on the host, which has the
/// identities and the errors).
///
/// # Errors
/// `InvalidArgument` for an empty extent; `External` for compile and
/// launch failures.
pub fn reduce(b: &dyn Backend, r: &Reduce, out: &Array, src: &Array) -> Result<()> {
    let (outputs, extent) = (r.outputs(), r.extent());
    if outputs == 0 {
        return Ok(());
    }
    if extent == 0 {
        return Err(Error::invalid_argument(format!(
            "{} of an empty extent is computed on the host",
            r.kind.name()
        )));
    }
    let plan = Plan::new(outputs, extent, b.block(), b.max_blocks());
    let source = reduce::source(r);
    // The states of the parts, when the extents are split.
    let parts = if plan.parts > 1 {
        Some(b.alloc(outputs * plan.parts * reduce::STATE_BYTES)?)
    } else {
        None
    };
    let parts_addr = parts.as_ref().map_or(0, |(_, at)| *at as u64);
    let mut p = Params::default();
    p.word(src.data_ptr() as u64)
        .word(out.data_ptr() as u64)
        .word(parts_addr)
        .block(r.params())
        .word(outputs as u64)
        .word(extent as u64)
        .word(plan.parts as u64)
        .word(u64::from(plan.lanes));
    // SAFETY: (1) the parameters are dynd_reduce's, in order: the source,
    // the output and the parts' addresses, the parameter block (kept dims,
    // their source and output strides, reduced dims, their source strides,
    // as `long long`s, Reduce::params), the output count, the extent, the
    // parts per output and the lanes (an int in the low bytes of its
    // slot). (2) The source and output are arrays of this device that the
    // description's offsets stay inside (it was made from them), alive in
    // `src` and `out`; the parts hold outputs * parts states of at most
    // STATE_BYTES (checked by a static_assert in the source), alive in
    // `parts`.
    unsafe { counted(b, &source, reduce::KERNEL, plan.grid, &mut p.pointers())? };
    if plan.parts > 1 {
        let mut q = Params::default();
        q.word(out.data_ptr() as u64)
            .word(parts_addr)
            .block(r.params())
            .word(outputs as u64)
            .word(plan.parts as u64);
        // A block per output: each thread merges a run of its parts in
        // order, then the block merges the runs as a tree (a thread alone
        // merging thousands of parts was most of a large sum's time).
        // SAFETY: (1) dynd_reduce_finish's parameters, in order: the
        // output and the parts' addresses, the parameter block, the output
        // count, the parts per output. (2) As for the first kernel; the
        // parts were all written by it (each item is one part).
        unsafe {
            counted(
                b,
                &source,
                reduce::FINISH,
                outputs.clamp(1, b.max_blocks() as usize) as u32,
                &mut q.pointers(),
            )?
        };
    }
    drop(parts);
    Ok(())
}

/// Runs the ragged reduction `r` on `b`, from the ragged device array
/// `src` into `out` (the arrays `r` was made from): a group of lanes per
/// row, the lanes picked from the mean row length (read from the first
/// and last rows' descriptors when the rows lie in order); when those are
/// fewer than a block, rows of [`reduce::LONG_REDUCE_ROW`] values or more
/// (and 32 times the lanes) take a block each, in a second launch.
///
/// # Errors
/// `External` for copy, compile and launch failures.
pub fn ragged_reduce(b: &dyn Backend, r: &RaggedReduce, out: &Array, src: &Array) -> Result<()> {
    let rows = r.outputs();
    if rows == 0 {
        return Ok(());
    }
    let layout = src.ragged_layout()?;
    let stride = r.stride.unsigned_abs() as u64;
    let mean = match end_rows(b, src, &layout)? {
        Some((first, end)) if r.stride > 0 && end >= first && stride > 0 => {
            ((end - first) / stride) as usize / rows
        }
        _ => 64,
    };
    let lanes = reduce::ragged_lanes(mean, b.block());
    let groups = (b.block() / lanes) as usize;
    let grid = rows.div_ceil(groups).clamp(1, b.max_blocks() as usize) as u32;
    let source = reduce::ragged_source(r);
    // Long rows: as many as the values block holds apart.
    let long = reduce::LONG_REDUCE_ROW.max(32 * lanes as usize);
    let values = src
        .ragged_values_span()
        .map_or(0, |(_, bytes)| bytes / layout.elem.data_size().max(1));
    let cap = if lanes < b.block() {
        (values / long).min(rows)
    } else {
        0
    };
    let listed = if cap > 0 {
        let (count_block, count) = b.alloc(8)?;
        // SAFETY: `count` is a fresh allocation of 8 bytes.
        unsafe { b.copy_to_device(count, &[0u8; 8])? };
        let (list_block, list) = b.alloc(cap * 8)?;
        Some((count_block, count, list_block, list))
    } else {
        None
    };
    let (count, list) = listed.as_ref().map_or((0, 0), |l| (l.1 as u64, l.3 as u64));
    let skip = if cap > 0 { long as i64 } else { i64::MAX };
    let mut p = Params::default();
    p.word(src.data_ptr() as u64)
        .word(out.data_ptr() as u64)
        .block(r.params())
        .word(rows as u64)
        .word(r.offset as u64)
        .word(r.stride as u64)
        .word(u64::from(lanes))
        .word(skip as u64)
        .word(count)
        .word(list)
        .word(cap as u64);
    // SAFETY: (1) dynd_ragged_reduce's parameters, in order: the
    // descriptors' and the output's addresses, the parameter block (kept
    // dims, descriptor and output strides, an unused reduced dim), the row
    // count, the var dim's offset and stride (two's complement in their
    // slots), the lanes, the least length of a listed row, the count and
    // list of long rows (8 and `cap * 8` bytes; unused when `skip` is
    // never reached) and the list's room. (2) The descriptors and the
    // output are arrays of this device laid out as the description says
    // (it was made from them); every descriptor reaches values of the var
    // dim's block on this device, alive in `src`.
    unsafe { counted(b, &source, reduce::RAGGED_KERNEL, grid, &mut p.pointers())? };
    if cap > 0 {
        let mut p = Params::default();
        p.word(src.data_ptr() as u64)
            .word(out.data_ptr() as u64)
            .block(r.params())
            .word(r.offset as u64)
            .word(r.stride as u64)
            .word(count)
            .word(list)
            .word(cap as u64);
        // SAFETY: (1) dynd_ragged_reduce_long's parameters, in order: as
        // the first kernel's, less the row count, the lanes and the least
        // length; (2) it reduces the rows the first kernel listed (at most
        // `cap`), each into its output, as that kernel would have.
        unsafe {
            counted(
                b,
                &source,
                reduce::RAGGED_LONG_KERNEL,
                cap.min(b.max_blocks() as usize) as u32,
                &mut p.pointers(),
            )?
        };
    }
    Ok(())
}

/// Where the rows of the ragged device array `src` (of layout `layout`)
/// start and end when they lie in order: the first row's `begin` and the
/// last row's `begin + size * |stride|` (C order), read from their two
/// descriptors; `None` without rows. Rows out of order give an end before
/// the start, or a span that says nothing of the rows between.
///
/// # Errors
/// `External` when a copy fails.
pub fn end_rows(
    b: &dyn Backend,
    src: &Array,
    layout: &dynd::array::RaggedLayout,
) -> Result<Option<(u64, u64)>> {
    let rows: usize = layout.shape.iter().product();
    if rows == 0 {
        return Ok(None);
    }
    let desc = |k: usize| -> Result<(u64, u64)> {
        let mut off = 0isize;
        let mut rem = k;
        for (&n, &s) in layout.shape.iter().zip(&layout.strides).rev() {
            off += (rem % n) as isize * s;
            rem /= n;
        }
        let mut buf = [0u8; 16];
        // SAFETY: row k's descriptor (16 bytes) lies at `off` from the
        // data of the device array `src`, alive for the call.
        unsafe { b.copy_to_host(&mut buf, src.data_ptr().wrapping_offset(off))? };
        let word = |i: usize| u64::from_ne_bytes(buf[i..i + 8].try_into().unwrap_or([0; 8]));
        Ok((word(0), word(8)))
    };
    let (first, last) = (desc(0)?, desc(rows - 1)?);
    let stride = layout.stride.unsigned_abs() as u64;
    Ok(Some((
        first.0,
        last.0.wrapping_add(last.1.wrapping_mul(stride)),
    )))
}

/// The kernel building row descriptors from Arrow-style offsets.
pub const OFFSETS_SOURCE: &str = "// dynd-cuda: row descriptors from offsets\n\
extern \"C\" __global__ void dynd_descriptors_from_offsets(char* descs, const long long* offsets, long long rows, unsigned long long values, long long esize) {\n\
  for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < rows;\n\
       row += (long long)gridDim.x * blockDim.x) {\n\
    const long long lo = offsets[row];\n\
    *(unsigned long long*)(descs + row * 16) = values + (unsigned long long)(lo * esize);\n\
    *(long long*)(descs + row * 16 + 8) = offsets[row + 1] - lo;\n\
  }\n\
}\n";

/// [`dynd::exec::Device::descriptors_from_offsets`] on `b`: the offsets
/// copied to the device, then one kernel, a thread per row.
///
/// # Errors
/// `External` when the device cannot allocate, copy or launch.
///
/// # Safety
/// As the trait method's.
pub unsafe fn descriptors_from_offsets(
    b: &dyn Backend,
    descs: *mut u8,
    offsets: &[u64],
    values: *mut u8,
    esize: usize,
) -> Result<bool> {
    let rows = offsets.len().saturating_sub(1);
    if rows == 0 {
        return Ok(true);
    }
    let bytes: Vec<u8> = offsets.iter().flat_map(|o| o.to_ne_bytes()).collect();
    let (_block, at) = b.alloc(bytes.len())?;
    // SAFETY: a fresh allocation of `bytes.len()` bytes of this device.
    unsafe { b.copy_to_device(at, &bytes)? };
    let mut p = Params::default();
    p.word(descs as u64)
        .word(at as u64)
        .word(rows as u64)
        .word(values as u64)
        .word(esize as u64);
    // SAFETY: (1) the kernel's parameters in order: the descriptors, the
    // offsets, the row count, the values' address, the element size; (2)
    // the caller's promise: `descs` holds `rows` descriptors; the offsets
    // (`rows + 1` int64) were just copied.
    unsafe {
        counted(
            b,
            OFFSETS_SOURCE,
            "dynd_descriptors_from_offsets",
            grid(b, rows),
            &mut p.pointers(),
        )?
    };
    Ok(true)
}

/// The bits of a 0-d host array's value, in the low bytes of a u64.
pub fn scalar_bits(a: &Array) -> Result<u64> {
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

/// The host's error for the element at `idx` of `out`, which the device
/// reported as failing in a call of `f`: the arguments at that element are
/// copied to the host and the host callable computes them, raising its
/// own error, with the index and the device as context.
pub fn explain_call(f: &Callable, out: &Array, args: &[&Array], idx: &[usize]) -> Error {
    let values: Result<Vec<Array>> = args.iter().map(|a| element_at(a, idx)).collect();
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
