//! `_dynd._read_json_lines(path, start, end, elem)`: one block of a JSON
//! Lines file, the lines that start in the byte range `[start, end)`, as
//! `N * elem` (the partitions of `dynd.dask.from_json`).
//!
//! The block is read into a buffer from dynd's cache of freed mappings: a
//! partition after the first reuses the pages of the one before instead of
//! faulting in fresh ones (a Python `bytes` of 28 MB cost 14-16 ms to read
//! on a worker, most of it page faults), and the text is dropped as soon as
//! it is parsed.

use crate::errors::OrRaise;
use crate::pyarray::PyArray;
use crate::types::type_arg;
use dynd::Array;
use dynd::memblock::MemBlock;
use pyo3::prelude::*;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

/// Room after the block for the rest of its last line; a longer rest makes
/// the text move once into a buffer of its own.
const TAIL_ROOM: usize = 64 << 10;

/// A block's text: in a buffer from the mapping cache, or (when the last
/// line ran past the room left for it) in a vector.
enum Text {
    Empty,
    Block {
        block: MemBlock,
        first: usize,
        len: usize,
    },
    Owned(Vec<u8>),
}

impl Text {
    fn bytes(&self) -> &[u8] {
        match self {
            Text::Empty => &[],
            Text::Block { block, first, len } => &whole(block)[*first..*len],
            Text::Owned(v) => v,
        }
    }
}

/// All the bytes of a fixed block.
fn whole(block: &MemBlock) -> &[u8] {
    match block.fixed_data() {
        // SAFETY: a fixed block's data is `size` initialized bytes (zero or
        // those of a freed block, never uninitialized), owned by the block,
        // which the returned borrow keeps alive; only `whole_mut` writes
        // them, through `&mut`.
        Some((ptr, size)) if size > 0 => unsafe { std::slice::from_raw_parts(ptr, size) },
        _ => &[],
    }
}

/// All the bytes of a fixed block, to write.
fn whole_mut(block: &mut MemBlock) -> &mut [u8] {
    match block.fixed_data() {
        // SAFETY: as in `whole`; the block was made here and is not shared
        // (no other reference to it exists), so `&mut` is exclusive.
        Some((ptr, size)) if size > 0 => unsafe { std::slice::from_raw_parts_mut(ptr, size) },
        _ => &mut [],
    }
}

/// Fills `buf` from `f`; the bytes read (fewer only at the end of the file).
fn read_full(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The lines of `path` that start in `[start, end)` (`end` None: to the
/// end of the file), each with its `\n`.
fn read_block(path: &str, start: u64, end: Option<u64>) -> io::Result<Text> {
    let mut f = File::open(path)?;
    let size = f.metadata()?.len();
    let stop = end.map_or(size, |e| e.min(size));
    // From the byte before `start`: a line starts at `start` when that
    // byte is a line end.
    if start >= stop {
        return Ok(Text::Empty);
    }
    let from = start.saturating_sub(1);
    let body = usize::try_from(stop - from).map_err(|_| io::Error::other("block too large"))?;
    let room = if stop < size { TAIL_ROOM } else { 0 };
    let mut block = MemBlock::new_fixed_for_overwrite(body + room, 64)
        .map_err(|e| io::Error::other(e.message()))?;
    f.seek(SeekFrom::Start(from))?;
    let buf = whole_mut(&mut block);
    let got = read_full(&mut f, &mut buf[..body])?;
    let first = if start == 0 {
        0
    } else {
        match memchr::memchr(b'\n', &buf[..got]) {
            Some(p) if p + 1 < got => p + 1,
            // No line starts in the range.
            _ => return Ok(Text::Empty),
        }
    };
    if got < body || stop >= size || buf[got - 1] == b'\n' {
        return Ok(Text::Block {
            block,
            first,
            len: got,
        });
    }
    // The last line goes on past `end`: read up to its `\n`.
    let mut len = got;
    let cap = buf.len();
    while len < cap {
        let k = read_full(&mut f, &mut buf[len..(len + 4096).min(cap)])?;
        if k == 0 {
            return Ok(Text::Block { block, first, len });
        }
        if let Some(p) = memchr::memchr(b'\n', &buf[len..len + k]) {
            return Ok(Text::Block {
                block,
                first,
                len: len + p + 1,
            });
        }
        len += k;
    }
    // A last line longer than the room: the text moves into a vector.
    let mut v = buf[first..len].to_vec();
    let mut chunk = [0u8; 4096];
    loop {
        let k = read_full(&mut f, &mut chunk)?;
        if k == 0 {
            break;
        }
        if let Some(p) = memchr::memchr(b'\n', &chunk[..k]) {
            v.extend_from_slice(&chunk[..=p]);
            break;
        }
        v.extend_from_slice(&chunk[..k]);
    }
    Ok(Text::Owned(v))
}

/// `_dynd._read_json_lines(path, start, end, elem)`: the lines of the file
/// `path` that start in the byte range `[start, end)` (`end` None: to the
/// end of the file) as `N * elem`, N the number of non-blank lines. The
/// file's errors are `OSError`s; a bad line is a `dynd.ParseError` whose
/// line counts from the block's first line.
#[pyfunction]
#[pyo3(signature = (path, start, end, elem))]
fn _read_json_lines(
    py: Python<'_>,
    path: &str,
    start: u64,
    end: Option<u64>,
    elem: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let elem = type_arg(py, elem)?;
    let text = py.detach(|| read_block(path, start, end))?;
    let a = py
        .detach(|| Array::from_json_lines_counted(elem, text.bytes()))
        .or_raise(py)?;
    PyArray::wrap(py, a)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_read_json_lines, m)?)?;
    Ok(())
}
