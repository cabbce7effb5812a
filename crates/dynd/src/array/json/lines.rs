//! JSON Lines in and out: one element of the outermost dim per line.
//!
//! Reading is streaming, as for one JSON value: each line is parsed by the
//! type-directed reader straight into its element of the output (no value
//! tree, no copy of the line). Blank lines (spaces, tabs, a `\r` before the
//! `\n`) are skipped; a value may not continue on the next line. Errors
//! give the line (1-based) and column in the whole text.
//!
//! Large inputs are read in parallel: the text is cut at line ends into one
//! piece per thread of the executor; the lines of each piece are counted, which fixes
//! where each piece's elements go in the output, and then every piece is
//! parsed on its own thread straight into its part of the output's data.
//! Variable-sized data (strings, var dims) is allocated from arenas of the
//! piece's own (one per blockref of the element type: arenas are not shared
//! between threads), and at the end each piece's arenas hand their memory
//! chunks over to the output's arenas ([`PodAllocator::absorb`]): nothing
//! parsed is copied again.
//!
//! ```
//! use dynd::Array;
//! let text = "{\"x\": 1, \"s\": \"a\"}\n\n{\"x\": 2, \"s\": \"b\"}\r\n";
//! let a = Array::from_json_lines("var * {x: int32, s: string}", text).unwrap();
//! assert_eq!(a.to_json(), r#"[{"x":1,"s":"a"},{"x":2,"s":"b"}]"#);
//! assert_eq!(a.to_json_lines().unwrap(), "{\"x\":1,\"s\":\"a\"}\n{\"x\":2,\"s\":\"b\"}\n");
//! ```
//!
//! [`PodAllocator::absorb`]: crate::memblock::PodAllocator::absorb

use super::cursor::line_col;
use super::parse::parse_values_at;
use crate::array::{Array, TypeArg};
use crate::error::{Error, Result};
use crate::exec::{self, TEXT_SPLIT_MIN};
use crate::layout::arrmeta::{self, FixedDimMeta, VarDimData, VarDimMeta};
use crate::types::{Type, TypeKind};
use std::mem::size_of;

/// The position of the first `\n` in `b` (`memchr`: vector instructions
/// where the CPU has them).
#[inline]
pub(super) fn find_newline(b: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', b)
}

/// Whitespace that may surround a value on its line.
#[inline]
fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r')
}

/// Calls `each(first, end)` for every non-blank line of `text[start..end]`:
/// `first` is the line's first non-blank byte, `end` the position of its
/// `\n` (or of `end`).
#[inline]
pub(super) fn for_each_line(
    text: &[u8],
    start: usize,
    end: usize,
    mut each: impl FnMut(usize, usize) -> Result<()>,
) -> Result<()> {
    let mut pos = start;
    while pos < end {
        let line_end = find_newline(&text[pos..end]).map_or(end, |k| pos + k);
        let mut first = pos;
        while first < line_end && is_blank(text[first]) {
            first += 1;
        }
        if first < line_end {
            each(first, line_end)?;
        }
        pos = line_end + 1;
    }
    Ok(())
}

/// The error for text after a line's value.
fn trailing_text(text: &[u8], pos: usize) -> Error {
    let (line, col) = line_col(text, pos);
    Error::parse(format!(
        "JSON line {line}, column {col}: unexpected text after the JSON value \
         (JSON Lines hold one value per line)"
    ))
}

/// Splits `text` at line ends into at most `pieces` ranges of similar size.
fn split_at_lines(text: &[u8], pieces: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(pieces);
    let mut start = 0;
    for j in 1..pieces {
        let target = (text.len() / pieces * j).max(start);
        let cut = match find_newline(&text[target..]) {
            Some(k) => target + k + 1,
            None => text.len(),
        };
        out.push((start, cut));
        start = cut;
    }
    out.push((start, text.len()));
    out.retain(|(s, e)| s < e);
    if out.is_empty() {
        out.push((0, text.len()));
    }
    out
}

/// Element arrmeta that the reader owns: default arrmeta of `tp` (fresh
/// arenas), dropped with its references.
struct OwnedMeta {
    tp: Type,
    buf: Vec<u64>,
}

impl OwnedMeta {
    fn new(tp: &Type) -> OwnedMeta {
        let mut buf = vec![0u64; tp.arrmeta_size().div_ceil(8)];
        // SAFETY: `buf` is `arrmeta_size` zeroed, writable bytes (8-aligned)
        // and `tp` is concrete (checked by the caller, which made the output
        // array of a type holding it).
        unsafe { arrmeta::construct_default(tp, buf.as_mut_ptr() as *mut u8) };
        OwnedMeta {
            tp: tp.clone(),
            buf,
        }
    }

    fn ptr(&mut self) -> *mut u8 {
        self.buf.as_mut_ptr() as *mut u8
    }
}

impl Drop for OwnedMeta {
    fn drop(&mut self) {
        let tp = self.tp.clone();
        // SAFETY: the buffer holds valid arrmeta of `tp` (made by
        // construct_default, changed only by the reader), whose references
        // are given up here, once.
        unsafe { arrmeta::destroy(&tp, self.ptr()) };
    }
}

/// Parses the non-blank lines of `text[start..end]` into consecutive
/// elements from `data` on.
///
/// # Safety
/// 1. `meta` is valid arrmeta of `elem`, used by no other thread.
/// 2. `data` is writable data for as many elements of `elem`, `stride`
///    bytes apart, as the range has non-blank lines, written by no other
///    thread.
unsafe fn parse_piece(
    elem: &Type,
    meta: *mut u8,
    data: *mut u8,
    stride: isize,
    text: &str,
    (start, end): (usize, usize),
) -> Result<()> {
    let bytes = text.as_bytes();
    let mut pos = start;
    let mut line_end = start;
    let mut i = 0isize;
    // SAFETY: (1); each data pointer handed out is element i < the count of
    // non-blank lines (2).
    unsafe {
        parse_values_at(elem, meta, text, |after| {
            if let Some(after) = after {
                // Only blanks may follow a value on its line.
                if let Some(k) = bytes[after..line_end].iter().position(|&c| !is_blank(c)) {
                    return Err(trailing_text(bytes, after + k));
                }
                i += 1;
            }
            // The next non-blank line. The reader sees the text up to its
            // end: a value cannot go on to the next line, and errors count
            // lines from the start of the text.
            while pos < end {
                line_end = find_newline(&bytes[pos..end]).map_or(end, |k| pos + k);
                let mut first = pos;
                while first < line_end && is_blank(bytes[first]) {
                    first += 1;
                }
                pos = line_end + 1;
                if first < line_end {
                    return Ok(Some((first, line_end, data.wrapping_offset(i * stride))));
                }
            }
            Ok(None)
        })
    }
}

/// Counts the non-blank lines of `text[start..end]`: the line ends found
/// by `memchr`; a line's first byte is mostly enough to tell it is not
/// blank.
fn count_lines(text: &[u8], (start, end): (usize, usize)) -> usize {
    let t = &text[start..end];
    let filled = |line: &[u8]| line.iter().any(|&c| !is_blank(c));
    let mut n = 0;
    let mut line_start = 0;
    for nl in memchr::memchr_iter(b'\n', t) {
        n += usize::from(filled(&t[line_start..nl]));
        line_start = nl + 1;
    }
    n + usize::from(filled(&t[line_start..]))
}

/// The outer dim of a JSON Lines read.
enum Outer {
    /// `N * T`: the text must have N non-blank lines.
    Fixed(usize),
    /// `var * T`.
    Var,
    /// `N * T` with N the number of non-blank lines, whatever it is.
    Counted,
}

pub(in crate::array) fn from_json_lines(tp: Type, text: &str) -> Result<Array> {
    tp.require_concrete("JSON Lines")?;
    match tp.kind() {
        TypeKind::FixedDim { size, elem } => read_lines(elem, Outer::Fixed(*size), text),
        TypeKind::VarDim { elem } => read_lines(elem, Outer::Var, text),
        _ => Err(Error::type_error(format!(
            "JSON Lines need a type whose outermost dim holds the lines \
             (N * T or var * T), got {tp}"
        ))),
    }
}

/// `text`'s non-blank lines as elements of `elem`, under the outer dim
/// `outer`.
fn read_lines(elem: &Type, outer: Outer, text: &str) -> Result<Array> {
    let elem = elem.clone();
    let bytes = text.as_bytes();
    let threads = exec::num_threads();
    let pieces = if threads > 1 && bytes.len() >= TEXT_SPLIT_MIN {
        threads.min(bytes.len() / (TEXT_SPLIT_MIN / 2))
    } else {
        1
    };
    let ranges = split_at_lines(bytes, pieces);
    let counts: Vec<usize> = exec::map_tasks(ranges.len(), |j| Ok(count_lines(bytes, ranges[j])))?;
    let n: usize = counts.iter().sum();
    let (tp, fixed) = match outer {
        Outer::Fixed(size) => {
            let tp = Type::fixed_dim(size, elem.clone());
            if size != n {
                return Err(Error::parse(format!(
                    "JSON Lines for {tp}: the type has {size} elements, the text has {n} non-blank line{}",
                    if n == 1 { "" } else { "s" }
                )));
            }
            (tp, true)
        }
        Outer::Counted => (Type::fixed_dim(n, elem.clone()), true),
        Outer::Var => (Type::var_dim(elem.clone()), false),
    };

    // The output, and where its elements and their arrmeta are.
    let out = if fixed {
        Array::empty_for_overwrite(tp.clone())?
    } else {
        Array::empty(tp.clone())?
    };
    let meta = out.arrmeta_ptr() as *mut u8;
    let (data, stride, emeta) = if fixed {
        // SAFETY: a fixed dim's arrmeta starts with its FixedDimMeta.
        let m: FixedDimMeta = unsafe { arrmeta::read(meta) };
        // SAFETY: the element's arrmeta follows (DESIGN §4).
        (out.data_ptr(), m.stride, unsafe {
            meta.add(size_of::<FixedDimMeta>())
        })
    } else {
        // SAFETY: a var dim's arrmeta starts with its VarDimMeta.
        let m: VarDimMeta = unsafe { arrmeta::read(meta) };
        let esize = elem.data_size();
        let bytes_needed = n
            .checked_mul(esize)
            .ok_or_else(|| Error::alloc(format!("{n} elements of {elem} are too large")))?;
        // SAFETY: the fresh array's arrmeta holds its var dim's block.
        let begin = unsafe {
            arrmeta::with_allocator(m.blockref, |a| {
                if elem.has_blockref() {
                    // The reader needs zeroed var dims and strings.
                    a.allocate(bytes_needed, elem.data_alignment())
                } else {
                    a.allocate_for_overwrite(bytes_needed, elem.data_alignment())
                }
            })
        }?;
        // SAFETY: the data of `var * T` is one VarDimData, this array's own.
        unsafe { arrmeta::write(out.data_ptr(), VarDimData { begin, size: n }) };
        // SAFETY: the element's arrmeta follows (DESIGN §4).
        (begin, esize as isize, unsafe {
            meta.add(size_of::<VarDimMeta>())
        })
    };

    if ranges.len() == 1 {
        // SAFETY: the output's element arrmeta and its n elements, this
        // thread's alone.
        unsafe { parse_piece(&elem, emeta, data, stride, text, ranges[0]) }?;
        return Ok(out);
    }

    // Piece 0 parses through the output's own element arrmeta; the others
    // through arrmeta of their own, absorbed at the end.
    let mut metas: Vec<OwnedMeta> = (1..ranges.len()).map(|_| OwnedMeta::new(&elem)).collect();
    let mut firsts = Vec::with_capacity(ranges.len());
    let mut at = 0usize;
    for c in &counts {
        firsts.push(at);
        at += c;
    }
    // Raw pointers as integers, to cross to the executor's threads.
    let jobs: Vec<(usize, usize, (usize, usize))> = ranges
        .iter()
        .enumerate()
        .map(|(j, r)| {
            let m = if j == 0 {
                emeta as usize
            } else {
                metas[j - 1].ptr() as usize
            };
            let d = data.wrapping_offset(firsts[j] as isize * stride) as usize;
            (m, d, *r)
        })
        .collect();
    // The first error in text order: the one a serial read reports.
    exec::tasks(jobs.len(), |j| {
        let (m, d, r) = jobs[j];
        // SAFETY: each job has its own element arrmeta (the output's for
        // piece 0, an OwnedMeta for the others, alive until after this
        // call) and its own `counts[j]` elements of the output, which
        // start at `firsts[j]`: no two threads share either.
        unsafe { parse_piece(&elem, m as *mut u8, d as *mut u8, stride, text, r) }
    })?;
    for m in &mut metas {
        // SAFETY: both are valid element arrmeta, on this thread alone now.
        unsafe { arrmeta::absorb_blocks(&elem, emeta, m.ptr()) }?;
    }
    Ok(out)
}

/// `text` as utf-8, or the `Parse` error naming the line and column of the
/// first byte that is not.
fn utf8_lines(text: &[u8]) -> Result<&str> {
    std::str::from_utf8(text).map_err(|e| {
        let (line, col) = line_col(text, e.valid_up_to());
        Error::parse(format!(
            "JSON line {line}, column {col}: the text is not valid utf-8 (byte {})",
            e.valid_up_to()
        ))
    })
}

impl Array {
    /// Parses JSON Lines text: each non-blank line is one element of the
    /// outermost dim of `tp` (`N * T`, where N must be the number of
    /// lines, or `var * T`, any number). Blank lines are skipped and `\r\n`
    /// line ends are accepted; a value cannot span lines. The reading is
    /// streaming (straight into the output's memory) and runs on several
    /// threads for large inputs: the pieces' variable-sized data is joined
    /// without copying.
    ///
    /// Errors: `Type` when `tp` has no outer dim; `Parse` naming both counts
    /// when N is not the number of lines; otherwise the errors of
    /// [`Array::from_json`], with the line (1-based) and column in `text`.
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_json_lines("2 * var * int64", "[1, 2]\n[3]\n").unwrap();
    /// assert_eq!(a.to_json(), "[[1,2],[3]]");
    /// let e = Array::from_json_lines("var * int64", "1\n2\nx\n").unwrap_err();
    /// assert!(e.message().contains("JSON line 3, column 1"), "{e}");
    /// ```
    pub fn from_json_lines(tp: impl TypeArg, text: &str) -> Result<Array> {
        from_json_lines(tp.into_type()?, text)
    }

    /// Like [`Array::from_json_lines`], for bytes (which must be utf-8).
    pub fn from_json_lines_bytes(tp: impl TypeArg, text: &[u8]) -> Result<Array> {
        from_json_lines(tp.into_type()?, utf8_lines(text)?)
    }

    /// Parses JSON Lines bytes into `N * elem`, N being the number of
    /// non-blank lines of the text (counted by the same pass that cuts the
    /// text for the threads): what [`Array::from_json_lines_bytes`] gives
    /// for `N * elem` when the caller does not know N.
    ///
    /// Errors: those of [`Array::from_json_lines_bytes`]; `Type` when
    /// `elem` is not a concrete type.
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_json_lines_counted("{x: int32}", b"{\"x\": 1}\n\n{\"x\": 2}\n").unwrap();
    /// assert_eq!(a.tp().to_string(), "2 * {x: int32}");
    /// ```
    pub fn from_json_lines_counted(elem: impl TypeArg, text: &[u8]) -> Result<Array> {
        let elem = elem.into_type()?;
        elem.require_concrete("JSON Lines")?;
        read_lines(&elem, Outer::Counted, utf8_lines(text)?)
    }

    /// The array as JSON Lines: each element of the outermost dim as
    /// compact JSON (DESIGN §8) on a line of its own, each line ended by
    /// `\n`.
    ///
    /// Errors: `Type` when the array has no outer dim.
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_json("2 * {x: ?float64}", r#"[{"x": 1.5}, {"x": null}]"#).unwrap();
    /// assert_eq!(a.to_json_lines().unwrap(), "{\"x\":1.5}\n{\"x\":null}\n");
    /// ```
    pub fn to_json_lines(&self) -> Result<String> {
        let mut out = String::new();
        self.each_json_line(|line| {
            out.push_str(line);
            Ok(())
        })?;
        Ok(out)
    }

    /// Writes the array as JSON Lines (as [`Array::to_json_lines`]) to `w`,
    /// a buffer's worth at a time.
    ///
    /// Errors: `Type` when the array has no outer dim; `External` when
    /// writing fails.
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_json("3 * int32", "[1, 2, 3]").unwrap();
    /// let mut out = Vec::new();
    /// a.write_json_lines(&mut out).unwrap();
    /// assert_eq!(out, b"1\n2\n3\n");
    /// ```
    pub fn write_json_lines(&self, w: &mut impl std::io::Write) -> Result<()> {
        const FLUSH_AT: usize = 1 << 16;
        let mut buf = String::new();
        let io_err = |e: std::io::Error| Error::external(format!("cannot write JSON Lines: {e}"));
        self.each_json_line(|line| {
            buf.push_str(line);
            if buf.len() >= FLUSH_AT {
                w.write_all(buf.as_bytes()).map_err(io_err)?;
                buf.clear();
            }
            Ok(())
        })?;
        w.write_all(buf.as_bytes()).map_err(io_err)
    }

    /// Calls `each` with every element of the outermost dim as one JSON
    /// line (ending in `\n`).
    fn each_json_line(&self, mut each: impl FnMut(&str) -> Result<()>) -> Result<()> {
        let meta = self.arrmeta_ptr();
        // (element type, first element, count, stride, element arrmeta)
        let (elem, data, n, stride, emeta) = match self.tp().kind() {
            TypeKind::FixedDim { elem, .. } => {
                // SAFETY: a fixed dim's arrmeta starts with its FixedDimMeta;
                // the element's follows.
                let m: FixedDimMeta = unsafe { arrmeta::read(meta) };
                (
                    elem,
                    self.data_ptr() as *const u8,
                    m.dim_size as usize,
                    m.stride,
                    // SAFETY: as above.
                    unsafe { meta.add(size_of::<FixedDimMeta>()) },
                )
            }
            TypeKind::VarDim { elem } => {
                // SAFETY: a var dim's arrmeta starts with its VarDimMeta, its
                // data is one VarDimData; the element's arrmeta follows.
                let (m, d): (VarDimMeta, VarDimData) =
                    unsafe { (arrmeta::read(meta), arrmeta::read(self.data_ptr())) };
                (
                    elem,
                    d.begin.wrapping_offset(m.offset) as *const u8,
                    d.size,
                    m.stride,
                    // SAFETY: as above.
                    unsafe { meta.add(size_of::<VarDimMeta>()) },
                )
            }
            _ => {
                return Err(Error::type_error(format!(
                    "JSON Lines need an array with an outer dim, got {}",
                    self.tp()
                )));
            }
        };
        let mut line = String::new();
        for i in 0..n {
            line.clear();
            // SAFETY: element i of the outer dim, with its arrmeta, alive
            // while `self` is.
            unsafe {
                super::write_value(
                    elem,
                    emeta,
                    data.wrapping_offset(i as isize * stride),
                    false,
                    &mut line,
                )
            };
            line.push('\n');
            each(&line)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_count_matches_a_plain_scan() {
        let text: &[u8] = b"abc\n\n  \t\r\n x\n\r\n{}\ny \n\t\tz\n   ";
        for start in 0..text.len() {
            for end in start..=text.len() {
                let plain = text[start..end]
                    .split(|&c| c == b'\n')
                    .filter(|line| line.iter().any(|&c| !is_blank(c)))
                    .count();
                assert_eq!(count_lines(text, (start, end)), plain, "{start}..{end}");
            }
        }
    }

    #[test]
    fn splits_at_line_ends() {
        let text = b"aaa\nbb\ncccc\nd\neeeee\n";
        for pieces in 1..8 {
            let r = split_at_lines(text, pieces);
            assert_eq!(r.first().map(|r| r.0), Some(0));
            assert_eq!(r.last().map(|r| r.1), Some(text.len()));
            for w in r.windows(2) {
                assert_eq!(w[0].1, w[1].0);
                assert_eq!(text[w[0].1 - 1], b'\n');
            }
        }
    }

    #[test]
    fn counts_only_non_blank_lines() {
        let text = b"1\n \t\r\n\n2\r\n  3";
        assert_eq!(count_lines(text, (0, text.len())), 3);
        assert_eq!(line_col(text, 8), (4, 2));
    }
}
