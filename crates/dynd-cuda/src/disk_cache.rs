//! Compiled kernels kept on disk between processes (CuPy's kernel cache):
//! a process that generates a source some earlier process compiled for
//! the same architecture with the same NVRTC reads the image back instead
//! of compiling it (20–80 ms a kernel).
//!
//! The folder is `DYND_CUDA_CACHE_DIR` when set (empty: no disk cache),
//! else `$XDG_CACHE_HOME/dynd/kernels`, else `$HOME/.cache/dynd/kernels`.
//! A file holds the architecture, NVRTC's version, the whole source and the
//! image; it is used only when all three match exactly (the file name is a
//! hash, which may collide: the source decides). Files are written to a
//! temporary name and renamed, so a reader never sees half of one. The
//! cache can never fail a call: a folder or file that cannot be read or
//! written is a miss.

use crate::nvrtc::Image;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &str = "dynd-kernel 1";

/// The cache's folder, or `None` when there is none (`DYND_CUDA_CACHE_DIR`
/// set empty, or no home to put it in).
pub fn dir() -> Option<PathBuf> {
    dir_from(
        std::env::var_os("DYND_CUDA_CACHE_DIR").as_deref(),
        std::env::var_os("XDG_CACHE_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
}

/// [`dir`] from the three variables' values.
fn dir_from(
    own: Option<&std::ffi::OsStr>,
    xdg: Option<&std::ffi::OsStr>,
    home: Option<&std::ffi::OsStr>,
) -> Option<PathBuf> {
    match own {
        Some(d) if d.is_empty() => None,
        Some(d) => Some(PathBuf::from(d)),
        None => match (xdg, home) {
            (Some(x), _) if !x.is_empty() => Some(Path::new(x).join("dynd").join("kernels")),
            (_, Some(h)) if !h.is_empty() => {
                Some(Path::new(h).join(".cache").join("dynd").join("kernels"))
            }
            _ => None,
        },
    }
}

/// The file of `(source, arch, nvrtc)` in `dir`.
fn file(dir: &Path, source: &str, arch: &str, nvrtc: &str) -> PathBuf {
    let mut h = DefaultHasher::new();
    (source, arch, nvrtc).hash(&mut h);
    dir.join(format!("{arch}-{:016x}.kernel", h.finish()))
}

/// The bytes of a cache file.
fn encode(source: &str, arch: &str, nvrtc: &str, image: &Image) -> Vec<u8> {
    let (kind, bytes) = match image {
        Image::Ptx(p) => ("ptx", p.as_bytes()),
        Image::Cubin(c) => ("cubin", c.as_slice()),
    };
    let mut out = format!(
        "{MAGIC}\narch {arch}\nnvrtc {nvrtc}\nsource {}\n",
        source.len()
    )
    .into_bytes();
    out.extend_from_slice(source.as_bytes());
    out.extend_from_slice(format!("\n{kind} {}\n", bytes.len()).as_bytes());
    out.extend_from_slice(bytes);
    out
}

/// The image in `data` when it was made from exactly `(source, arch,
/// nvrtc)`; `None` for anything else (another source, a truncated or
/// foreign file).
fn decode(data: &[u8], source: &str, arch: &str, nvrtc: &str) -> Option<Image> {
    let header = format!(
        "{MAGIC}\narch {arch}\nnvrtc {nvrtc}\nsource {}\n",
        source.len()
    );
    let rest = data.strip_prefix(header.as_bytes())?;
    let rest = rest.strip_prefix(source.as_bytes())?;
    let rest = rest.strip_prefix(b"\n")?;
    let line_end = rest.iter().position(|&b| b == b'\n')?;
    let line = std::str::from_utf8(&rest[..line_end]).ok()?;
    let body = &rest[line_end + 1..];
    let (kind, len) = line.split_once(' ')?;
    if len.parse::<usize>().ok()? != body.len() {
        return None;
    }
    match kind {
        "ptx" => Some(Image::Ptx(String::from_utf8(body.to_vec()).ok()?)),
        "cubin" => Some(Image::Cubin(body.to_vec())),
        _ => None,
    }
}

/// The image of `(source, arch)` compiled by NVRTC `nvrtc` (its version),
/// from the cache in `dir`.
pub fn load(dir: &Path, source: &str, arch: &str, nvrtc: &str) -> Option<Image> {
    let data = std::fs::read(file(dir, source, arch, nvrtc)).ok()?;
    decode(&data, source, arch, nvrtc)
}

/// Keeps `image` in the cache in `dir` (making the folder); a failure is
/// ignored (the next process compiles again).
pub fn store(dir: &Path, source: &str, arch: &str, nvrtc: &str, image: &Image) {
    let _ = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let target = file(dir, source, arch, nvrtc);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let tmp = dir.join(format!(
            ".tmp-{}-{:?}-{nanos}",
            std::process::id(),
            std::thread::current().id()
        ));
        let written = std::fs::File::create(&tmp)
            .and_then(|mut f| f.write_all(&encode(source, arch, nvrtc, image)));
        match written.and_then(|()| std::fs::rename(&tmp, &target)) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    })();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("dynd-disk-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn the_folder_follows_the_environment() {
        let s = |v: &'static str| Some(OsStr::new(v));
        assert_eq!(
            dir_from(s("/k"), s("/x"), s("/h")),
            Some(PathBuf::from("/k"))
        );
        assert_eq!(dir_from(s(""), s("/x"), s("/h")), None);
        assert_eq!(
            dir_from(None, s("/x"), s("/h")),
            Some(PathBuf::from("/x/dynd/kernels"))
        );
        assert_eq!(
            dir_from(None, s(""), s("/h")),
            Some(PathBuf::from("/h/.cache/dynd/kernels"))
        );
        assert_eq!(dir_from(None, None, None), None);
    }

    #[test]
    fn an_image_comes_back_for_its_source_arch_and_nvrtc_only() {
        let d = scratch("round");
        let cubin = Image::Cubin(vec![0x7f, b'E', b'L', b'F', 0, 1, b'\n', 2]);
        let ptx = Image::Ptx(".version 9.0\n.entry k {}\n".to_string());
        store(&d, "src a", "sm_90", "13.0", &cubin);
        store(&d, "src a", "compute_90", "13.0", &ptx);
        assert_eq!(load(&d, "src a", "sm_90", "13.0"), Some(cubin));
        assert_eq!(load(&d, "src a", "compute_90", "13.0"), Some(ptx));
        assert_eq!(load(&d, "src b", "sm_90", "13.0"), None);
        assert_eq!(load(&d, "src a", "sm_80", "13.0"), None);
        assert_eq!(load(&d, "src a", "sm_90", "13.1"), None);
        // Nothing half-written is left behind.
        let names: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.iter().all(|n| n.ends_with(".kernel")), "{names:?}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_damaged_or_colliding_file_is_a_miss() {
        let d = scratch("damaged");
        let img = Image::Cubin(vec![1, 2, 3, 4]);
        store(&d, "the source", "sm_90", "13.0", &img);
        let f = file(&d, "the source", "sm_90", "13.0");
        let good = std::fs::read(&f).unwrap();
        assert_eq!(decode(&good, "the source", "sm_90", "13.0"), Some(img));
        // Truncated, extended, another source under the same name, junk.
        for bad in [
            good[..good.len() - 1].to_vec(),
            [good.clone(), vec![0]].concat(),
            encode("other source", "sm_90", "13.0", &Image::Cubin(vec![9])),
            b"not a kernel".to_vec(),
            Vec::new(),
        ] {
            std::fs::write(&f, &bad).unwrap();
            assert_eq!(load(&d, "the source", "sm_90", "13.0"), None);
        }
        // A folder that cannot be made: the store is ignored.
        let blocked = d.join("file-not-folder");
        std::fs::write(&blocked, b"x").unwrap();
        store(&blocked, "s", "sm_90", "13.0", &Image::Cubin(vec![1]));
        assert_eq!(load(&blocked, "s", "sm_90", "13.0"), None);
        let _ = std::fs::remove_dir_all(&d);
    }
}
