//! A host emulator of the CUDA device: the generated CUDA C, compiled by
//! the system's C++ compiler (`$CXX`, else `c++`) under a small shim, run
//! with one host thread per CUDA thread.
//!
//! It exists so that the generated code — not only its description
//! ([`crate::interp`]) — runs in the tests of machines without a GPU: an
//! [`Emulator`] is a [`Backend`] and a [`Device`] of its own (its "device
//! memory" is host memory that only its copies touch), installed as
//! `cuda:N`, and every dynd call on its arrays goes through the same
//! launches ([`crate::launch`]) as on a GPU.
//!
//! The shim maps CUDA C onto C++: `threadIdx`, `blockIdx`, `blockDim`
//! and `gridDim` are thread-locals the runner sets; `__syncthreads` waits
//! on the block's barrier (here, in Rust); `__shared__` variables are
//! statics, so the blocks of a launch run one after another (the threads
//! of a block at once, one host thread each); `atomicMin` (and
//! `atomicMax`, and `atomicAdd`, a fetch-and-add) is a
//! compare-and-swap loop; the bit casts (`__int_as_float`, …) copy bytes;
//! math functions are the C library's. It compiles with
//! `-ffp-contract=off`, as NVRTC with `--fmad=false`, so `+ - * /` and
//! `sqrt` round as on the GPU; transcendental functions may differ from
//! CUDA's in the last bits (CUDA documents its own ulps).
//!
//! Launches are small on purpose — [`Emulator::BLOCK`] threads per block
//! and at most [`Emulator::MAX_BLOCKS`] blocks — so small arrays already
//! take the paths large ones take on a GPU: grid-stride loops, groups of
//! threads per output, reductions split over blocks.

use crate::launch::{self, Backend};
use dynd::exec::{self, Device};
use dynd::memblock::{DeviceId, MemBlock};
use dynd::{Error, Result};
use std::collections::HashMap;
use std::ffi::c_void;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// The C++ shim every emulated source is compiled with (precompiled once,
/// kept small: each kernel is compiled on its own).
const SHIM: &str = r#"
#include <cmath>
struct dynd_dim3 { unsigned x, y, z; };
static thread_local dynd_dim3 threadIdx, blockIdx, blockDim, gridDim;
static thread_local void (*dynd_sync)(void*);
static thread_local void* dynd_sync_block;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__
#define __shared__ static
static inline void __syncthreads() { dynd_sync(dynd_sync_block); }
static inline float __int_as_float(int x) { float f; __builtin_memcpy(&f, &x, 4); return f; }
static inline int __float_as_int(float x) { int i; __builtin_memcpy(&i, &x, 4); return i; }
static inline double __longlong_as_double(long long x) { double f; __builtin_memcpy(&f, &x, 8); return f; }
static inline long long __double_as_longlong(double x) { long long i; __builtin_memcpy(&i, &x, 8); return i; }
static inline unsigned long long atomicMin(unsigned long long* p, unsigned long long v) {
  unsigned long long old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
  return old;
}
static inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
  unsigned long long old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (v > old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
  return old;
}
using std::isnan; using std::isinf; using std::isfinite; using std::signbit;
using std::sqrt; using std::exp; using std::log; using std::sin; using std::cos; using std::tan;
using std::pow; using std::floor; using std::ceil; using std::fmod; using std::fabs;
using std::copysign; using std::trunc; using std::round; using std::fmin; using std::fmax;
// What the runner sets before each thread runs a kernel.
static inline void dynd_enter(const unsigned* ids, void (*sync)(void*), void* block) {
  threadIdx = {ids[0], 0, 0}; blockIdx = {ids[1], 0, 0};
  blockDim = {ids[2], 1, 1}; gridDim = {ids[3], 1, 1};
  dynd_sync = sync; dynd_sync_block = block;
}
"#;

/// The barrier of an emulated block (`__syncthreads`): a thread that has
/// returned from the kernel leaves it, so the others do not wait for it
/// (as on devices since Volta).
struct BlockBarrier {
    /// (threads waiting, threads still running the kernel, generation).
    state: Mutex<(usize, usize, u64)>,
    cv: Condvar,
}

impl BlockBarrier {
    fn new(threads: usize) -> BlockBarrier {
        BlockBarrier {
            state: Mutex::new((0, threads, 0)),
            cv: Condvar::new(),
        }
    }

    /// Releases the waiting threads when every running one waits.
    fn release_if_complete(&self, s: &mut (usize, usize, u64)) {
        if s.0 > 0 && s.0 == s.1 {
            s.0 = 0;
            s.2 += 1;
            self.cv.notify_all();
        }
    }

    fn wait(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let generation = s.2;
        s.0 += 1;
        self.release_if_complete(&mut s);
        while s.2 == generation {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn leave(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.1 -= 1;
        self.release_if_complete(&mut s);
    }
}

/// `__syncthreads` of the emulated kernels.
extern "C" fn sync(block: *mut c_void) {
    // SAFETY: `block` is the address of the `BlockBarrier` the runner
    // gave this thread, alive until every thread of the block has joined.
    let b = unsafe { &*(block as *const BlockBarrier) };
    b.wait();
}

/// The emulated device `cuda:ordinal`.
pub struct Emulator {
    ordinal: u32,
    /// Compiled sources, by source.
    libraries: Mutex<HashMap<String, Arc<libloading::Library>>>,
    /// One launch at a time: `__shared__` statics are per library.
    launches: Mutex<()>,
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulator")
            .field("ordinal", &self.ordinal)
            .finish()
    }
}

/// The C++ compiler: `$CXX`, else `c++`.
fn compiler() -> String {
    std::env::var("CXX").unwrap_or_else(|_| "c++".to_string())
}

/// The flags every emulated source (and the shim's precompiled header)
/// is compiled with.
const FLAGS: [&str; 5] = ["-std=c++17", "-O1", "-ffp-contract=off", "-fPIC", "-w"];

/// Whether the emulator can compile: the shim, precompiled once
/// (`shim.h.gch` in the scratch directory, shared by the processes of one shim and
/// compiler); `Err` says why not (no C++17 compiler).
pub fn available() -> std::result::Result<(), String> {
    static PROBE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            let dir = scratch().map_err(|e| e.to_string())?;
            let header = dir.join("shim.h");
            let pch = dir.join("shim.h.gch");
            if header.exists() && pch.exists() {
                return Ok(());
            }
            // Written under names of this process, then renamed: another
            // process may be doing the same.
            let pid = std::process::id();
            let tmp_header = dir.join(format!("shim-{pid}.h"));
            let tmp_pch = dir.join(format!("shim-{pid}.h.gch"));
            std::fs::write(&tmp_header, SHIM).map_err(|e| e.to_string())?;
            let out = Command::new(compiler())
                .args(FLAGS)
                .args(["-x", "c++-header", "-o"])
                .arg(&tmp_pch)
                .arg(&tmp_header)
                .output()
                .map_err(|e| format!("no C++ compiler ({}): {e}", compiler()))?;
            if !out.status.success() {
                let _ = std::fs::remove_file(&tmp_header);
                return Err(format!(
                    "{} cannot compile the C++17 shim: {}",
                    compiler(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            std::fs::rename(&tmp_pch, &pch).map_err(|e| e.to_string())?;
            std::fs::rename(&tmp_header, &header).map_err(|e| e.to_string())
        })
        .clone()
}

/// The directory the shim and compiled sources go to: one per shim and
/// compiler, in the temporary directory. Compiled kernels are removed
/// once loaded.
fn scratch() -> Result<PathBuf> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (SHIM, FLAGS, compiler()).hash(&mut h);
    let dir = std::env::temp_dir().join(format!("dynd-cuda-emulator-{:016x}", h.finish()));
    std::fs::create_dir_all(&dir).map_err(|e| {
        Error::external(format!("the emulator cannot create {}: {e}", dir.display()))
    })?;
    Ok(dir)
}

/// The `extern "C" __global__` kernels of `source`: each name with its
/// parameter types.
fn kernels(source: &str) -> Vec<(String, Vec<String>)> {
    const HEAD: &str = "extern \"C\" __global__ void ";
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find(HEAD) {
        rest = &rest[at + HEAD.len()..];
        let Some(open) = rest.find('(') else { break };
        let Some(close) = rest.find(')') else { break };
        let name = rest[..open].trim().to_string();
        let types = rest[open + 1..close]
            .split(',')
            .map(|p| {
                let p = p.trim();
                // The type is what precedes the parameter's name.
                let name_len = p
                    .chars()
                    .rev()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .count();
                p[..p.len() - name_len].trim().to_string()
            })
            .collect();
        out.push((name, types));
        rest = &rest[close..];
    }
    out
}

impl Emulator {
    /// Threads per block.
    pub const BLOCK: u32 = 16;
    /// The most blocks per launch.
    pub const MAX_BLOCKS: u32 = 3;

    /// Installs an emulated `cuda:ordinal`: its memory with dynd
    /// ([`exec::register`]), its launches ([`launch::register`]) and the
    /// device calls, so dynd's calls on its arrays run the generated CUDA
    /// C on the host.
    ///
    /// # Errors
    /// `External` when there is no C++17 compiler, saying so.
    pub fn install(ordinal: u32) -> Result<Arc<Emulator>> {
        available().map_err(|why| Error::external(format!("no CUDA emulator: {why}")))?;
        let e = Arc::new(Emulator {
            ordinal,
            libraries: Mutex::new(HashMap::new()),
            launches: Mutex::new(()),
        });
        exec::register(e.clone());
        launch::register(ordinal, e.clone());
        dynd::callable::device::register(Arc::new(crate::calls::CudaCalls));
        dynd::array::register_assign(Arc::new(crate::calls::CudaCalls));
        Ok(e)
    }

    /// `source` compiled into a loaded library, once per source (two
    /// threads may compile one source at once; the first loaded is kept).
    fn library(&self, source: &str) -> Result<Arc<libloading::Library>> {
        if let Some(l) = self
            .libraries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(source)
        {
            return Ok(l.clone());
        }
        let mut text = String::from(source);
        for (name, types) in kernels(source) {
            let args: Vec<String> = types
                .iter()
                .enumerate()
                .map(|(i, t)| format!("*({t}*)p[{i}]"))
                .collect();
            text.push_str(&format!(
                "extern \"C\" void dynd_host_{name}(void** p, const unsigned* ids, void (*sync)(void*), void* block) {{ dynd_enter(ids, sync, block); {name}({}); }}\n",
                args.join(", ")
            ));
        }
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = scratch()?;
        let stem = format!(
            "k{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let cpp = dir.join(format!("{stem}.cpp"));
        let so = dir.join(format!("{stem}.so"));
        std::fs::write(&cpp, &text).map_err(|e| {
            Error::external(format!("the emulator cannot write {}: {e}", cpp.display()))
        })?;
        let out = Command::new(compiler())
            .args(FLAGS)
            .args(["-shared", "-include"])
            .arg(dir.join("shim.h"))
            .arg("-o")
            .arg(&so)
            .arg(&cpp)
            .output()
            .map_err(|e| Error::external(format!("the emulator cannot run {}: {e}", compiler())))?;
        if !out.status.success() {
            let _ = std::fs::remove_file(&cpp);
            return Err(Error::external(format!(
                "the emulator could not compile a generated kernel:\n{}\n--- source ---\n{source}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        // SAFETY: the library is the one just built from the shim and a
        // generated source: loading it runs no initialisers but the C++
        // runtime's.
        let lib = unsafe { libloading::Library::new(&so) };
        // Loaded (or not), the files are not needed again.
        let _ = std::fs::remove_file(&cpp);
        let _ = std::fs::remove_file(&so);
        let lib = lib.map_err(|e| {
            Error::external(format!("the emulator cannot load {}: {e}", so.display()))
        })?;
        let mut libs = self.libraries.lock().unwrap_or_else(|e| e.into_inner());
        Ok(libs
            .entry(source.to_string())
            .or_insert_with(|| Arc::new(lib))
            .clone())
    }
}

impl Backend for Emulator {
    fn block(&self) -> u32 {
        Emulator::BLOCK
    }

    fn max_blocks(&self) -> u32 {
        Emulator::MAX_BLOCKS
    }

    unsafe fn launch(
        &self,
        source: &str,
        kernel: &str,
        grid: u32,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        let lib = self.library(source)?;
        type Host = unsafe extern "C" fn(
            *mut *mut c_void,
            *const u32,
            extern "C" fn(*mut c_void),
            *mut c_void,
        );
        // SAFETY: the library defines the wrapper of each kernel of the
        // source with this signature.
        let host: Host = unsafe {
            *lib.get::<Host>(format!("dynd_host_{kernel}").as_bytes())
                .map_err(|e| Error::external(format!("the emulator has no kernel {kernel}: {e}")))?
        };
        /// The parameters' address, shared by the threads of a launch.
        #[derive(Clone, Copy)]
        struct Shared(*mut *mut c_void);
        // SAFETY: the kernel's threads only read the parameter pointers
        // (the kernel's own accesses to the memory behind them are the
        // kernel's, as on a GPU).
        unsafe impl Send for Shared {}
        let shared = Shared(params.as_mut_ptr());
        let _one = self.launches.lock().unwrap_or_else(|e| e.into_inner());
        let block = Emulator::BLOCK;
        for b in 0..grid {
            let barrier = BlockBarrier::new(block as usize);
            std::thread::scope(|scope| {
                for t in 0..block {
                    let barrier = &barrier;
                    scope.spawn(move || {
                        let shared = shared;
                        let ids = [t, b, block, grid];
                        let at = barrier as *const BlockBarrier as *mut c_void;
                        // SAFETY: (1) of the caller: the wrapper reads each
                        // parameter as the kernel's type from the pointer
                        // given for it; (2): the addresses are this
                        // emulator's (host) memory, alive until this
                        // returns, after every thread has joined; `ids`
                        // and the barrier outlive the call.
                        unsafe { host(shared.0, ids.as_ptr(), sync, at) };
                        barrier.leave();
                    });
                }
            });
        }
        Ok(())
    }
}

impl Device for Emulator {
    fn name(&self) -> String {
        format!("cuda:{} (host emulator)", self.ordinal)
    }

    fn id(&self) -> DeviceId {
        DeviceId::Cuda(self.ordinal)
    }

    fn alloc(&self, bytes: usize) -> Result<(MemBlock, *mut u8)> {
        let host = MemBlock::new_fixed(bytes.max(1), 256)?;
        let (ptr, _) = host
            .fixed_data()
            .ok_or_else(|| Error::external("the emulator's memory block has no buffer"))?;
        let block = MemBlock::new_device_span(self.id(), ptr, bytes.max(1), move || drop(host));
        Ok((block, ptr))
    }

    unsafe fn copy_to_device(&self, dst: *mut u8, src: &[u8]) -> Result<()> {
        // SAFETY: (1) of the trait: `dst` is src.len() writable bytes of
        // this emulator's (host) memory, which a caller's slice never
        // overlaps.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
        Ok(())
    }

    unsafe fn copy_to_host(&self, dst: &mut [u8], src: *const u8) -> Result<()> {
        // SAFETY: (1) of the trait: `src` is dst.len() readable bytes of
        // this emulator's (host) memory.
        unsafe { std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len()) };
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_signatures_are_read_from_the_source() {
        let k = kernels(
            "struct P { long long a[1]; };\nextern \"C\" __global__ void dynd_x(char* out, const char* in0, unsigned char in1, P p, long long n, unsigned long long* err) {\n}\nextern \"C\" __global__ void dynd_y(long long n) {}",
        );
        assert_eq!(k.len(), 2);
        assert_eq!(k[0].0, "dynd_x");
        assert_eq!(
            k[0].1,
            [
                "char*",
                "const char*",
                "unsigned char",
                "P",
                "long long",
                "unsigned long long*"
            ]
        );
        assert_eq!(k[1], ("dynd_y".to_string(), vec!["long long".to_string()]));
    }
}
