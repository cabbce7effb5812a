//! Compiling generated CUDA C with NVRTC, once per (source, architecture).
//!
//! For a real architecture (`sm_90`: what [`crate::runtime`] asks for
//! when NVRTC knows the device's) NVRTC compiles to a CUBIN, machine code
//! the driver loads as it is; for a virtual one (`compute_90`: the compile
//! tests, or a device newer than NVRTC) to PTX, which the driver compiles
//! when it loads it, one module at a time. Options: `--fmad=false` (no FMA
//! contraction: separate operations round separately, as on the host),
//! `-std=c++17`. `--ftz`, `--prec-div` and `--prec-sqrt` keep NVRTC's
//! defaults (no flush to zero, IEEE division and square root), so `+ - * /`
//! and `sqrt` are correctly rounded, bit for bit the host's.
//!
//! Compiled images are cached for the process, and on disk between
//! processes ([`crate::disk_cache`]: a process reads back what an earlier
//! one compiled with the same NVRTC).

use crate::{disk_cache, probe};
use cudarc::nvrtc::{result, sys};
use dynd::{Error, Result};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The architecture CI compiles every kernel for (H100 and H200).
pub const TEST_ARCH: &str = "compute_90";

/// What NVRTC made of a source.
#[derive(Debug, PartialEq, Eq)]
pub enum Image {
    /// PTX text (a virtual architecture, `compute_XY`).
    Ptx(String),
    /// A CUBIN (a real architecture, `sm_XY`).
    Cubin(Vec<u8>),
}

impl Image {
    /// The PTX text, if this is PTX.
    pub fn ptx(&self) -> Option<&str> {
        match self {
            Image::Ptx(p) => Some(p),
            Image::Cubin(_) => None,
        }
    }
}

/// A compiled source, shared by every call that generated the same source.
pub type Compiled = Arc<Image>;

type Cache = Mutex<HashMap<(String, String), Compiled>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

static COMPILES: AtomicUsize = AtomicUsize::new(0);

/// How many times NVRTC has compiled in this process (cache misses).
pub fn compiles() -> usize {
    COMPILES.load(Ordering::SeqCst)
}

/// `source` compiled for `arch` (`"sm_90"` or `"compute_90"`), from the
/// process's cache when this process compiled it before, else from the
/// disk cache when an earlier process did (then [`compiles`] does not
/// count it).
///
/// # Errors
/// `External`: NVRTC is missing (saying how to provide it), `arch` is not
/// `sm_<digits>` or `compute_<digits>` (with an optional `a` or `f`), or the source does not compile
/// (with NVRTC's log and the source, numbered).
pub fn compile(source: &str, arch: &str) -> Result<Compiled> {
    compile_with(source, arch, disk_cache::dir().as_deref())
}

/// [`compile`] with the disk cache in `disk` (`None`: none).
///
/// # Errors
/// As [`compile`].
pub fn compile_with(source: &str, arch: &str, disk: Option<&std::path::Path>) -> Result<Compiled> {
    let key = (source.to_string(), arch.to_string());
    if let Some(p) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(p.clone());
    }
    let real = arch_kind(arch)?;
    probe::nvrtc().map_err(Error::external)?;
    // Compiled by an earlier process: read back from the disk cache.
    let disk = disk.zip(version());
    let image = match disk
        .as_ref()
        .and_then(|(dir, v)| disk_cache::load(dir, source, arch, v))
    {
        Some(image) => image,
        None => {
            let image =
                probe::guarded("NVRTC", || build(source, arch, real)).map_err(Error::external)?;
            COMPILES.fetch_add(1, Ordering::SeqCst);
            if let Some((dir, v)) = &disk {
                disk_cache::store(dir, source, arch, v, &image);
            }
            image
        }
    };
    // When two threads compiled the same source at once, the first one
    // cached wins: one image per key lives for the process, so its address
    // names it (the runtime's loaded kernels are keyed by it).
    let mut cached = cache().lock().unwrap_or_else(|e| e.into_inner());
    Ok(cached.entry(key).or_insert_with(|| Arc::new(image)).clone())
}

/// `source` compiled for `arch` by NVRTC now, whatever the caches hold
/// (what the compile tests check every kernel with); counted by
/// [`compiles`].
///
/// # Errors
/// As [`compile`].
pub fn compile_uncached(source: &str, arch: &str) -> Result<Image> {
    let real = arch_kind(arch)?;
    probe::nvrtc().map_err(Error::external)?;
    let image = probe::guarded("NVRTC", || build(source, arch, real)).map_err(Error::external)?;
    COMPILES.fetch_add(1, Ordering::SeqCst);
    Ok(image)
}

/// NVRTC's version (`"13.0"`), or `None` when it cannot say.
pub fn version() -> Option<String> {
    static VERSION: OnceLock<Option<String>> = OnceLock::new();
    VERSION
        .get_or_init(|| {
            probe::nvrtc().ok()?;
            probe::guarded("NVRTC", || {
                let (mut major, mut minor) = (0i32, 0i32);
                // SAFETY: NVRTC writes two ints.
                unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
                    .result()
                    .map(|()| format!("{major}.{minor}"))
                    .map_err(|e| format!("{e:?}"))
            })
            .ok()
        })
        .clone()
}

/// Whether `arch` is a real architecture (`sm_XY`: `true`) or a virtual
/// one (`compute_XY`: `false`).
///
/// # Errors
/// `External` for anything else, naming it.
fn arch_kind(arch: &str) -> Result<bool> {
    // Digits, then at most one of NVRTC's suffixes (`sm_90a`).
    let number = |d: &str| {
        let d = d.strip_suffix(['a', 'f']).unwrap_or(d);
        !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
    };
    match arch.split_once('_') {
        Some(("sm", d)) if number(d) => Ok(true),
        Some(("compute", d)) if number(d) => Ok(false),
        _ => Err(Error::external(format!(
            "NVRTC: unknown architecture {arch:?} (expected sm_XY or compute_XY)"
        ))),
    }
}

/// One NVRTC program: created, compiled with dynd's options, its image
/// (or its log) taken, destroyed.
fn build(source: &str, arch: &str, real: bool) -> std::result::Result<Image, String> {
    let src = std::ffi::CString::new(source)
        .map_err(|_| "NVRTC: a generated source holds a NUL byte".to_string())?;
    let prog = result::create_program(&src, None).map_err(|e| format!("NVRTC failed: {e:?}"))?;
    let options = [
        format!("--gpu-architecture={arch}"),
        "--fmad=false".to_string(),
        "-std=c++17".to_string(),
    ];
    // SAFETY: `prog` was created above and is destroyed once, at the end;
    // each buffer handed to NVRTC has the size NVRTC reported for it.
    let made = unsafe {
        match result::compile_program(prog, &options) {
            Err(_) => {
                let log = result::get_program_log(prog)
                    .map(|l| {
                        let bytes: Vec<u8> = l.iter().map(|&c| c as u8).collect();
                        String::from_utf8_lossy(&bytes)
                            .trim_end_matches('\0')
                            .to_string()
                    })
                    .unwrap_or_default();
                Err(format!(
                    "NVRTC could not compile a generated kernel for {arch}:\n{log}\n--- source ---\n{}",
                    numbered(source)
                ))
            }
            Ok(()) if real => {
                let mut size = 0usize;
                sys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .map_err(|e| format!("NVRTC: no CUBIN for {arch}: {e:?}"))
                    .and_then(|()| {
                        let mut cubin = vec![0u8; size];
                        sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast())
                            .result()
                            .map(|()| Image::Cubin(cubin))
                            .map_err(|e| format!("NVRTC: no CUBIN for {arch}: {e:?}"))
                    })
            }
            Ok(()) => result::get_ptx(prog)
                .map(|p| {
                    let bytes: Vec<u8> = p.iter().map(|&c| c as u8).collect();
                    Image::Ptx(
                        String::from_utf8_lossy(&bytes)
                            .trim_end_matches('\0')
                            .to_string(),
                    )
                })
                .map_err(|e| format!("NVRTC: no PTX for {arch}: {e:?}")),
        }
    };
    // SAFETY: created above, destroyed once.
    let _ = unsafe { result::destroy_program(prog) };
    made
}

/// The architectures NVRTC compiles for (`[75, 80, 86, 89, 90, ...]`), or
/// `None` when NVRTC is missing or cannot say.
pub fn supported_archs() -> Option<&'static [i32]> {
    static ARCHS: OnceLock<Option<Vec<i32>>> = OnceLock::new();
    ARCHS
        .get_or_init(|| {
            probe::nvrtc().ok()?;
            probe::guarded("NVRTC", || {
                let mut n = 0i32;
                // SAFETY: NVRTC writes `n` archs into a buffer of `n`.
                unsafe {
                    sys::nvrtcGetNumSupportedArchs(&mut n)
                        .result()
                        .map_err(|e| format!("{e:?}"))?;
                    let mut archs = vec![0i32; n.max(0) as usize];
                    sys::nvrtcGetSupportedArchs(archs.as_mut_ptr())
                        .result()
                        .map_err(|e| format!("{e:?}"))?;
                    Ok(archs)
                }
            })
            .ok()
        })
        .as_deref()
}

/// What to compile for a device of compute capability `major.minor`:
/// its machine code (`sm_XY`) when NVRTC knows it, else PTX for the newest
/// architecture NVRTC has below it (the driver compiles PTX forward), else
/// `compute_XY`.
pub fn arch_for(major: i32, minor: i32) -> String {
    let cc = major * 10 + minor;
    match supported_archs() {
        Some(archs) if archs.contains(&cc) => format!("sm_{cc}"),
        Some(archs) => match archs.iter().filter(|&&a| a < cc).max() {
            Some(a) => format!("compute_{a}"),
            None => format!("compute_{cc}"),
        },
        None => format!("compute_{cc}"),
    }
}

/// The source with line numbers, as NVRTC's log refers to them.
fn numbered(source: &str) -> String {
    source
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{:4} {l}\n", i + 1))
        .collect()
}
