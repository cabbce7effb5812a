//! Compiling generated CUDA C with NVRTC, once per (source, architecture).
//!
//! Options: `--gpu-architecture=compute_XY` (PTX, which the driver
//! compiles for the device it loads on), `--fmad=false` (no FMA
//! contraction: separate operations round separately, as on the host),
//! `-std=c++17`. `--ftz`, `--prec-div` and `--prec-sqrt` keep NVRTC's
//! defaults (no flush to zero, IEEE division and square root), so `+ - * /`
//! and `sqrt` are correctly rounded, bit for bit the host's.

use crate::probe;
use dynd::{Error, Result};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The architecture CI compiles every kernel for (H100 and H200).
pub const TEST_ARCH: &str = "compute_90";

/// Compiled PTX, shared by every call that generated the same source.
pub type Ptx = Arc<String>;

type Cache = Mutex<HashMap<(String, String), Ptx>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

static COMPILES: AtomicUsize = AtomicUsize::new(0);

/// How many times NVRTC has compiled in this process (cache misses).
pub fn compiles() -> usize {
    COMPILES.load(Ordering::SeqCst)
}

/// `source` compiled to PTX for `arch` (`"compute_90"`), from the cache when
/// it was compiled before.
///
/// # Errors
/// `External`: NVRTC is missing (saying how to provide it), or the source
/// does not compile (with NVRTC's log and the source, numbered).
pub fn compile(source: &str, arch: &str) -> Result<Ptx> {
    let key = (source.to_string(), arch.to_string());
    if let Some(p) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(p.clone());
    }
    probe::nvrtc().map_err(Error::external)?;
    let opts = cudarc::nvrtc::CompileOptions {
        fmad: Some(false),
        arch: Some(arch_static(arch)),
        options: vec!["-std=c++17".into()],
        ..Default::default()
    };
    let ptx = probe::guarded("NVRTC", || {
        cudarc::nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| match e {
            cudarc::nvrtc::CompileError::CompileError { log, .. } => format!(
                "NVRTC could not compile a generated kernel for {arch}:\n{}\n--- source ---\n{}",
                log.to_string_lossy(),
                numbered(source)
            ),
            other => format!("NVRTC failed: {other:?}"),
        })
    })
    .map_err(Error::external)?;
    COMPILES.fetch_add(1, Ordering::SeqCst);
    // When two threads compiled the same source at once, the first one
    // cached wins: one PTX per key lives for the process, so its address
    // names it (the runtime's loaded kernels are keyed by it).
    let mut cached = cache().lock().unwrap_or_else(|e| e.into_inner());
    Ok(cached
        .entry(key)
        .or_insert_with(|| Arc::new(ptx.to_src()))
        .clone())
}

/// cudarc wants the architecture as a `&'static str`: the known ones are
/// constants, others are leaked once each (a handful per process).
fn arch_static(arch: &str) -> &'static str {
    static KNOWN: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(k) = known.iter().find(|k| **k == arch) {
        return k;
    }
    let k: &'static str = Box::leak(arch.to_string().into_boxed_str());
    known.push(k);
    k
}

/// The source with line numbers, as NVRTC's log refers to them.
fn numbered(source: &str) -> String {
    source
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{:4} {l}\n", i + 1))
        .collect()
}
