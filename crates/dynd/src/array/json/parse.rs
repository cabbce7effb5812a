//! The streaming, type-directed JSON reader.

use super::cursor::{Cursor, Seg, error_at, may_follow_number, path_string, scan_number, skip_ws};
#[cfg(target_arch = "x86_64")]
use super::number::Avx2Classifier;
#[cfg(test)]
use super::number::ByteClassifier;
use super::number::{
    Classify, QuickNumber, QuickValue, WINDOW, WINDOW_TEXT, plain_number, store_float, store_int,
    window_tokens,
};
use crate::array::Array;
use crate::error::{Error, ErrorKind, Result};
use crate::layout::arrmeta::{
    self, BlockrefMeta, FixedDimMeta, PointerMeta, VarDimData, VarDimMeta,
};
use crate::layout::na;
use crate::memblock::{Lease, MemoryBlockHeader};
// fixed_string encoding and decoding are shared with the text assignment
// kernels, so JSON and casts validate alike.
use crate::layout::text::encode;
use crate::types::{BuiltinType, Type, TypeKind};
use crate::with_native;
use std::borrow::Cow;
use std::fmt;
use std::mem::size_of;

/// Deepest nesting of JSON arrays and objects accepted while skipping an
/// unknown value (type-directed parsing is bounded by the type's depth).
const MAX_SKIP_DEPTH: usize = 512;

struct Parser<'j, 't> {
    /// The text as bytes, for scanning; `src` is the same text as `str`,
    /// for slicing tokens and strings out without copying or re-validating.
    text: &'j [u8],
    src: &'j str,
    pos: usize,
    path: Vec<Seg<'t>>,
    /// How [`Parser::number_run`] reads.
    runs: NumberRuns,
    /// Room leased from the arenas that rows and strings go to.
    arenas: Arenas,
}

/// The parser's leases of the POD arenas it allocates rows and strings
/// from ([`PodAllocator::lease`]): an allocation per value is a bump, not
/// a lock and an unlock of the arena. Ended (the unused room given back)
/// when the parser is dropped.
///
/// Every blockref here is one of the arrmeta the parser writes through,
/// which its caller keeps alive for the parser's whole life.
///
/// [`PodAllocator::lease`]: crate::memblock::PodAllocator::lease
#[derive(Default)]
struct Arenas {
    leases: Vec<(*mut MemoryBlockHeader, Lease)>,
}

/// The first lease of an arena is at least this big (more when one value
/// needs more); later ones are the arena's next chunk.
const LEASE_MIN: usize = 4096;

impl Arenas {
    /// `size` zero bytes at `align` from the arena `blockref`.
    ///
    /// # Safety
    /// 1. `blockref` is null or a live memory block, alive until this
    ///    `Arenas` is dropped.
    #[inline]
    unsafe fn alloc(
        &mut self,
        blockref: *mut MemoryBlockHeader,
        size: usize,
        align: usize,
    ) -> Result<*mut u8> {
        let k = self.leases.iter().position(|(b, _)| *b == blockref);
        if let Some(k) = k
            && let Some(p) = self.leases[k].1.take(size, align)
        {
            return Ok(p);
        }
        // SAFETY: (1).
        unsafe { self.alloc_slow(k, blockref, size, align) }
    }

    /// A new lease of `blockref`'s arena (ending its old one), then `size`
    /// bytes from it.
    ///
    /// # Safety
    /// As [`Arenas::alloc`].
    #[cold]
    unsafe fn alloc_slow(
        &mut self,
        k: Option<usize>,
        blockref: *mut MemoryBlockHeader,
        size: usize,
        align: usize,
    ) -> Result<*mut u8> {
        let need = size
            .checked_add(align)
            .ok_or_else(|| Error::alloc(format!("cannot allocate {size} bytes")))?;
        let old = k.map(|k| self.leases.swap_remove(k).1);
        // SAFETY: (1) the block is alive.
        let mut lease = unsafe {
            arrmeta::with_allocator(blockref, |a| {
                if let Some(old) = old {
                    a.end_lease(old);
                }
                a.lease(need.max(LEASE_MIN))
            })
        }?;
        let p = lease
            .take(size, align)
            .ok_or_else(|| Error::alloc(format!("cannot allocate {size} bytes")))?;
        self.leases.push((blockref, lease));
        Ok(p)
    }

    /// Resizes the most recent allocation `[begin, begin + old)` of
    /// `blockref` to `new` bytes: in place when it can, else moved (its
    /// bytes copied); returns where it is now.
    ///
    /// # Safety
    /// As [`Arenas::alloc`]; `begin` is the most recent allocation this
    /// `Arenas` made from `blockref`, `old` bytes long.
    #[inline]
    unsafe fn resize(
        &mut self,
        blockref: *mut MemoryBlockHeader,
        begin: *mut u8,
        old: usize,
        new: usize,
        align: usize,
    ) -> Result<*mut u8> {
        if let Some((_, lease)) = self.leases.iter_mut().find(|(b, _)| *b == blockref)
            && lease.resize_latest(begin, old, new)
        {
            return Ok(begin);
        }
        // SAFETY: (1).
        let moved = unsafe { self.alloc(blockref, new, align) }?;
        // SAFETY: the old allocation stays valid (chunks never move) and
        // lies before the new one, which has room for `new` bytes.
        unsafe { std::ptr::copy_nonoverlapping(begin, moved, old.min(new)) };
        Ok(moved)
    }
}

impl Drop for Arenas {
    fn drop(&mut self) {
        for (blockref, lease) in self.leases.drain(..) {
            // SAFETY: (Arenas) the block is still alive.
            let _ = unsafe {
                arrmeta::with_allocator(blockref, |a| {
                    a.end_lease(lease);
                    Ok(())
                })
            };
        }
    }
}

/// How the tight loop for dims of numbers ([`Parser::number_run`]) finds
/// the numbers after its first.
#[derive(Clone, Copy)]
pub(super) enum NumberRuns {
    /// One after another, each found from the end of the one before.
    Serial,
    /// From [`WINDOW`]-byte windows classified with AVX2
    /// ([`window_tokens`]).
    #[cfg(target_arch = "x86_64")]
    Avx2(Avx2Classifier),
    /// From windows classified byte by byte: the window loop on any CPU,
    /// for the tests.
    #[cfg(test)]
    Bytes,
    /// No tight loop: every number by the general path, the reference for
    /// the tests.
    #[cfg(test)]
    Off,
}

impl NumberRuns {
    /// The fastest this CPU has.
    pub(super) fn detect() -> NumberRuns {
        #[cfg(target_arch = "x86_64")]
        if let Some(k) = Avx2Classifier::detect() {
            return NumberRuns::Avx2(k);
        }
        NumberRuns::Serial
    }
}

/// Parses utf-8 bytes (checked first) into `a`.
pub(in crate::array) fn parse_into(a: &Array, text: &[u8]) -> Result<()> {
    match std::str::from_utf8(text) {
        Ok(s) => parse_str_into(a, s),
        Err(e) => Err(Error::parse(format!(
            "JSON text is not valid utf-8 (byte {})",
            e.valid_up_to()
        ))),
    }
}

/// Parses text into `a`.
pub(in crate::array) fn parse_str_into(a: &Array, text: &str) -> Result<()> {
    parse_str_with(a, text, NumberRuns::detect())
}

/// [`parse_str_into`], its number runs read as `runs` says.
pub(super) fn parse_str_with(a: &Array, text: &str, runs: NumberRuns) -> Result<()> {
    let tp = a.tp().clone();
    let mut p = Parser {
        text: text.as_bytes(),
        src: text,
        pos: 0,
        path: Vec::new(),
        runs,
        arenas: Arenas::default(),
    };
    // SAFETY: `a` is a valid array: its data and arrmeta match its type. The
    // arrmeta may be updated in place (pointer blockrefs), which only this
    // array's block holds.
    unsafe { p.value(&tp, a.arrmeta_ptr() as *mut u8, a.data_ptr()) }?;
    p.ws();
    if p.pos < p.text.len() {
        return Err(p.err(ErrorKind::Parse, "unexpected text after the JSON value"));
    }
    Ok(())
}

/// Parses values of `tp` one after another out of `text`, with one reader
/// (and one path buffer) for all: `next(after)` is given the position after
/// the previous value (`None` before the first) and returns where the next
/// one starts, where its line ends (the reader sees the text up to there)
/// and its data, or `None` to stop. Errors count lines and columns from the
/// start of `text`. Used by the JSON Lines reader.
///
/// # Safety
/// 1. Each data pointer `next` returns is writable data of `tp` whose
///    arrmeta is `meta` (which may be updated in place), as for
///    [`parse_str_into`]'s array.
pub(super) unsafe fn parse_values_at(
    tp: &Type,
    meta: *mut u8,
    text: &str,
    mut next: impl FnMut(Option<usize>) -> Result<Option<(usize, usize, *mut u8)>>,
) -> Result<()> {
    let mut p = Parser {
        text: b"",
        src: "",
        pos: 0,
        path: Vec::new(),
        runs: NumberRuns::detect(),
        arenas: Arenas::default(),
    };
    let mut after = None;
    while let Some((start, end, data)) = next(after)? {
        // `end` is a line end: an ASCII byte or the end, a char boundary.
        p.src = text.get(..end).unwrap_or(text);
        p.text = p.src.as_bytes();
        p.pos = start;
        p.path.clear();
        // SAFETY: (1).
        unsafe { p.value(tp, meta, data) }?;
        after = Some(p.pos);
    }
    Ok(())
}

/// Elements of a dim from one of them on: `len` elements at `data`,
/// `stride` bytes apart.
#[derive(Clone, Copy)]
struct Run {
    data: *mut u8,
    stride: isize,
    len: usize,
}

/// The fields of a struct already read from its object: a bit set, with
/// no allocation up to 64 fields.
enum Seen {
    Bits { bits: u64, n: usize },
    Many(Vec<bool>),
}

impl Seen {
    fn new(n: usize) -> Seen {
        if n <= 64 {
            Seen::Bits { bits: 0, n }
        } else {
            Seen::Many(vec![false; n])
        }
    }

    /// Marks field `i`; returns whether it was already marked.
    fn insert(&mut self, i: usize) -> bool {
        match self {
            Seen::Bits { bits, .. } => {
                let was = *bits >> i & 1 != 0;
                *bits |= 1 << i;
                was
            }
            Seen::Many(v) => std::mem::replace(&mut v[i], true),
        }
    }

    fn contains(&self, i: usize) -> bool {
        match self {
            Seen::Bits { bits, .. } => *bits >> i & 1 != 0,
            Seen::Many(v) => v[i],
        }
    }

    fn first_missing(&self) -> Option<usize> {
        match self {
            Seen::Bits { bits, n } => {
                let i = bits.trailing_ones() as usize;
                (i < *n).then_some(i)
            }
            Seen::Many(v) => v.iter().position(|s| !s),
        }
    }
}

impl Cursor for Parser<'_, '_> {
    #[inline]
    fn parts(&mut self) -> (&[u8], &mut usize) {
        (self.text, &mut self.pos)
    }
}

impl<'j, 't> Parser<'j, 't> {
    fn err(&self, kind: ErrorKind, msg: impl fmt::Display) -> Error {
        let path = path_string(self.path.iter().copied());
        error_at(kind, self.text, self.pos, &path, msg)
    }

    fn describe_next(&mut self) -> String {
        match self.peek() {
            None => "the end of the text".into(),
            Some(b'[') => "an array".into(),
            Some(b'{') => "an object".into(),
            Some(b'"') => "a string".into(),
            Some(b't' | b'f') => "a boolean".into(),
            Some(b'n') => "null".into(),
            Some(b'-' | b'0'..=b'9' | b'N' | b'I') => "a number".into(),
            Some(c) => format!("'{}'", c as char),
        }
    }

    #[inline]
    fn expect_byte(&mut self, c: u8, what: &str) -> Result<()> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    #[cold]
    #[inline(never)]
    fn expected(&mut self, what: &str) -> Error {
        let found = self.describe_next();
        self.err(ErrorKind::Parse, format!("expected {what}, found {found}"))
    }

    fn mismatch(&mut self, tp: &Type, expected: &str) -> Error {
        let found = self.describe_next();
        self.err(
            ErrorKind::Parse,
            format!("expected {expected} for {tp}, found {found}"),
        )
    }

    /// Parses one value of `tp` into `data` (arrmeta `meta`).
    ///
    /// # Safety
    /// 1. `data` is writable data of `tp`, `meta` its valid arrmeta, which
    ///    may be updated in place.
    unsafe fn value(&mut self, tp: &'t Type, meta: *mut u8, data: *mut u8) -> Result<()> {
        // SAFETY: each arm stays within the layouts of DESIGN §4 that (1)
        // promises.
        unsafe {
            match tp.kind() {
                TypeKind::Builtin(b) => self.builtin(tp, *b, data),
                TypeKind::Option(v) => {
                    if self.literal(b"null") {
                        na::set_missing(tp, data)
                    } else {
                        self.value(v, meta, data)?;
                        if let TypeKind::Builtin(b) = v.kind() {
                            let bytes = std::slice::from_raw_parts(data, b.data_size());
                            if na::is_na_value_bytes(*b, bytes) && !b.is_float() && !b.is_complex()
                            {
                                return Err(self.err(
                                    ErrorKind::Overflow,
                                    format!("this value is the missing-value marker of {tp} and cannot be stored in it"),
                                ));
                            }
                        }
                        na::set_present(tp, data);
                        Ok(())
                    }
                }
                TypeKind::String => {
                    let s = self.string(tp)?;
                    self.write_string(meta, data, s.as_bytes())
                }
                TypeKind::Bytes => {
                    let bytes = self.hex(tp, None)?;
                    self.write_string(meta, data, &bytes)
                }
                TypeKind::Char => {
                    let s = self.string(tp)?;
                    let mut chars = s.chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) => {
                            arrmeta::write(data, c as u32);
                            Ok(())
                        }
                        _ => Err(self.err(
                            ErrorKind::Parse,
                            format!(
                                "expected a string of exactly one character for char, got {s:?}"
                            ),
                        )),
                    }
                }
                TypeKind::FixedString { size, encoding } => {
                    let s = self.string(tp)?;
                    let units = encode(&s, *encoding).map_err(|m| self.err(ErrorKind::Parse, m))?;
                    if units.len() > *size * encoding.unit_size() {
                        return Err(self.err(
                            ErrorKind::Overflow,
                            format!(
                                "string of {} code units does not fit in {tp}",
                                units.len() / encoding.unit_size()
                            ),
                        ));
                    }
                    std::ptr::write_bytes(data, 0, tp.data_size());
                    std::ptr::copy_nonoverlapping(units.as_ptr(), data, units.len());
                    Ok(())
                }
                TypeKind::FixedBytes { size, .. } => {
                    let bytes = self.hex(tp, Some(*size))?;
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, *size);
                    Ok(())
                }
                TypeKind::FixedDim { size, elem } => {
                    let m: FixedDimMeta = arrmeta::read(meta);
                    let emeta = meta.add(size_of::<FixedDimMeta>());
                    let num = plain_number(elem);
                    self.sequence(tp, |p, i| {
                        if i >= *size {
                            return Err(p.err(
                                ErrorKind::Parse,
                                format!("too many elements for {tp}: expected {size}"),
                            ));
                        }
                        let run = Run {
                            data: data.offset(i as isize * m.stride),
                            stride: m.stride,
                            len: *size - i,
                        };
                        p.dim_elements(elem, num, emeta, run)
                    })
                    .and_then(|n| {
                        if n == *size {
                            Ok(())
                        } else {
                            Err(self.err(
                                ErrorKind::Parse,
                                format!("expected {size} elements for {tp}, found {n}"),
                            ))
                        }
                    })
                }
                TypeKind::VarDim { elem } => self.var_dim(tp, elem, meta, data),
                TypeKind::Struct(fields) => {
                    if self.peek() == Some(b'[') {
                        return self.tuple_like(tp, fields, meta, data);
                    }
                    if self.peek() != Some(b'{') {
                        let found = self.describe_next();
                        return Err(self.err(
                            ErrorKind::Parse,
                            format!("expected an object for {tp}, found {found}"),
                        ));
                    }
                    self.pos += 1;
                    let mut seen = Seen::new(fields.len());
                    // Keys usually come in field order: try the next field
                    // before searching.
                    let mut next = 0;
                    let mut first = true;
                    loop {
                        if self.peek() == Some(b'}') {
                            self.pos += 1;
                            break;
                        }
                        if !first {
                            self.expect_byte(b',', "',' or '}' in the object")?;
                        }
                        first = false;
                        if self.peek() != Some(b'"') {
                            return Err(
                                self.err(ErrorKind::Parse, "expected a string key in the object")
                            );
                        }
                        let key = self.string_raw()?;
                        self.expect_byte(b':', "':' after the object key")?;
                        let found = if fields
                            .names()
                            .get(next)
                            .is_some_and(|n| short_eq(n.as_bytes(), key.as_bytes()))
                        {
                            Some(next)
                        } else {
                            fields.index_of(&key)
                        };
                        match found {
                            Some(i) => {
                                next = i + 1;
                                if seen.insert(i) {
                                    return Err(self.err(
                                        ErrorKind::Parse,
                                        format!("duplicate key \"{key}\""),
                                    ));
                                }
                                self.path.push(Seg::Key(&fields.names()[i]));
                                let ftp = &fields.types()[i];
                                self.element(
                                    ftp,
                                    plain_number(ftp),
                                    meta.add(fields.arrmeta_offsets()[i]),
                                    data.add(fields.data_offsets()[i]),
                                )?;
                                self.path.pop();
                            }
                            None => self.skip(0)?,
                        }
                    }
                    // A field the object lacks is missing when it is an
                    // option (DESIGN §6), and an error otherwise.
                    if let Some(first) = seen.first_missing() {
                        for i in first..fields.len() {
                            let ftp = &fields.types()[i];
                            if seen.contains(i) {
                                continue;
                            }
                            if ftp.option_value().is_none() {
                                self.pos -= 1;
                                return Err(self.err(
                                    ErrorKind::Parse,
                                    format!("missing field \"{}\" for {tp}", fields.names()[i]),
                                ));
                            }
                            na::set_missing(ftp, data.add(fields.data_offsets()[i]))?;
                        }
                    }
                    Ok(())
                }
                TypeKind::Tuple(fields) => self.tuple_like(tp, fields, meta, data),
                TypeKind::Pointer(target) => {
                    if self.literal(b"null") {
                        arrmeta::write(data, 0usize);
                        return Ok(());
                    }
                    let mut pm: PointerMeta = arrmeta::read(meta);
                    if pm.blockref.is_null() {
                        pm.blockref = crate::memblock::MemBlock::new_pod_allocator(0)
                            .into_raw()
                            .as_ptr();
                        pm.offset = 0;
                        arrmeta::write(meta, pm);
                    }
                    let target_data = arrmeta::with_allocator(pm.blockref, |a| {
                        a.allocate(target.data_size(), target.data_alignment())
                    })
                    .map_err(|e| self.err(e.kind(), e.message()))?;
                    self.value(target, meta.add(size_of::<PointerMeta>()), target_data)?;
                    arrmeta::write(data, target_data.wrapping_offset(-pm.offset));
                    Ok(())
                }
                _ => Err(self.err(ErrorKind::Type, format!("cannot read JSON into {tp}"))),
            }
        }
    }

    /// Parses `[a, b, ...]`, calling `each(parser, i)` for element i with the
    /// path extended; returns the count. `each` reads element i and may go
    /// on through more elements and their separating commas (the tight
    /// loop of numbers): it returns how many elements it read, at least 1.
    fn sequence(
        &mut self,
        tp: &Type,
        mut each: impl FnMut(&mut Self, usize) -> Result<usize>,
    ) -> Result<usize> {
        if self.peek() != Some(b'[') {
            return Err(self.mismatch(tp, "an array"));
        }
        self.pos += 1;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(0);
        }
        // One path slot for the element index, rewritten per element (the
        // nested values leave the path as they found it when they succeed).
        let depth = self.path.len();
        self.path.push(Seg::Index(0));
        let mut i = 0;
        loop {
            self.path[depth] = Seg::Index(i);
            i += each(self, i)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    self.path.truncate(depth);
                    return Ok(i);
                }
                _ => {
                    self.path.truncate(depth);
                    return Err(self.expected("',' or ']' in the array"));
                }
            }
        }
    }

    /// # Safety
    /// As [`Parser::value`] for a struct or tuple.
    unsafe fn tuple_like(
        &mut self,
        tp: &'t Type,
        fields: &'t crate::types::Fields,
        meta: *mut u8,
        data: *mut u8,
    ) -> Result<()> {
        let n = self.sequence(tp, |p, i| {
            if i >= fields.len() {
                return Err(p.err(
                    ErrorKind::Parse,
                    format!("too many elements for {tp}: expected {}", fields.len()),
                ));
            }
            // SAFETY: field i's data and arrmeta are at their offsets.
            unsafe {
                p.value(
                    &fields.types()[i],
                    meta.add(fields.arrmeta_offsets()[i]),
                    data.add(fields.data_offsets()[i]),
                )
            }
            .map(|()| 1)
        })?;
        if n != fields.len() {
            return Err(self.err(
                ErrorKind::Parse,
                format!("expected {} elements for {tp}, found {n}", fields.len()),
            ));
        }
        Ok(())
    }

    /// # Safety
    /// As [`Parser::value`] for a var dim.
    unsafe fn var_dim(
        &mut self,
        tp: &'t Type,
        elem: &'t Type,
        meta: *mut u8,
        data: *mut u8,
    ) -> Result<()> {
        // SAFETY: var dim arrmeta and data (1).
        let (m, existing): (VarDimMeta, VarDimData) =
            unsafe { (arrmeta::read(meta), arrmeta::read(data)) };
        // SAFETY: the element's arrmeta follows.
        let emeta = unsafe { meta.add(size_of::<VarDimMeta>()) };
        let esize = elem.data_size();
        let num = plain_number(elem);
        if !existing.begin.is_null() {
            // Already allocated (assigning into an existing array): the
            // element count must match; write in place.
            let n = self.sequence(tp, |p, i| {
                if i >= existing.size {
                    return Err(p.err(
                        ErrorKind::Broadcast,
                        format!(
                            "the var dim element already has {} elements; cannot write more",
                            existing.size
                        ),
                    ));
                }
                let run = Run {
                    data: existing
                        .begin
                        .wrapping_offset(m.offset + i as isize * m.stride),
                    stride: m.stride,
                    len: existing.size - i,
                };
                // SAFETY: elements i.. < size of the existing element.
                unsafe { p.dim_elements(elem, num, emeta, run) }
            })?;
            if n != existing.size {
                return Err(self.err(
                    ErrorKind::Broadcast,
                    format!(
                        "the var dim element has {} elements, the JSON array {n}",
                        existing.size
                    ),
                ));
            }
            return Ok(());
        }
        if m.offset != 0 || m.stride != esize as isize {
            return Err(self.err(
                ErrorKind::InvalidArgument,
                format!(
                    "cannot allocate elements of {tp} through a view with offset {} and stride {}",
                    m.offset, m.stride
                ),
            ));
        }
        let align = elem.data_alignment();
        let mut cap = 0usize;
        let mut begin: *mut u8 = std::ptr::null_mut();
        let n = self.sequence(tp, |p, i| {
            if i == cap {
                let new_cap = if cap == 0 { 8 } else { cap * 2 };
                let bytes = new_cap
                    .checked_mul(esize)
                    .ok_or_else(|| p.err(ErrorKind::Alloc, "var dim too large"))?;
                // SAFETY: the arrmeta holds its blockref, alive for the
                // parse; `begin` is the latest allocation the parser made
                // from it (nested values allocate from their own arrmeta's
                // blocks).
                begin = unsafe {
                    if cap == 0 {
                        p.arenas.alloc(m.blockref, bytes, align)
                    } else {
                        p.arenas
                            .resize(m.blockref, begin, cap * esize, bytes, align)
                    }
                }
                .map_err(|e| p.err(e.kind(), e.message()))?;
                cap = new_cap;
            }
            let run = Run {
                // SAFETY: i < cap elements are allocated at `begin`.
                data: unsafe { begin.add(i * esize) },
                stride: esize as isize,
                len: cap - i,
            };
            // SAFETY: elements i..cap are allocated at `begin`.
            unsafe { p.dim_elements(elem, num, emeta, run) }
        })?;
        if cap > 0 {
            // SAFETY: trim the latest allocation of the same block.
            begin = unsafe {
                self.arenas
                    .resize(m.blockref, begin, cap * esize, n * esize, align)
            }
            .map_err(|e| self.err(e.kind(), e.message()))?;
        } else {
            // An empty element still gets a non-null begin, so it reads as
            // allocated (and can be told apart from a never-written one).
            // SAFETY: the arrmeta holds its blockref, alive for the parse.
            begin = unsafe { self.arenas.alloc(m.blockref, 0, align) }
                .map_err(|e| self.err(e.kind(), e.message()))?;
        }
        // SAFETY: (1) `data` is the var element.
        unsafe { arrmeta::write(data, VarDimData { begin, size: n }) };
        Ok(())
    }

    /// Copies `bytes` into the string/bytes arena of `meta` and points the
    /// string data at them.
    ///
    /// # Safety
    /// 1. `meta` is string or bytes arrmeta, alive for the parse; `data` is
    ///    writable StringData.
    unsafe fn write_string(&mut self, meta: *const u8, data: *mut u8, bytes: &[u8]) -> Result<()> {
        // SAFETY: (1).
        let m: BlockrefMeta = unsafe { arrmeta::read(meta) };
        // SAFETY: (1) the blockref is alive for the parse.
        let begin = unsafe { self.arenas.alloc(m.blockref, bytes.len(), 1) }
            .map_err(|e| self.err(e.kind(), e.message()))?;
        // SAFETY: `begin` has room for bytes.len() bytes; (1) for `data`.
        unsafe { crate::layout::fill_string(data, begin, bytes) };
        Ok(())
    }

    /// Skips one JSON value (for ignored object keys), checking its syntax.
    fn skip(&mut self, depth: usize) -> Result<()> {
        if depth > MAX_SKIP_DEPTH {
            return Err(self.err(ErrorKind::Parse, "JSON nested too deeply"));
        }
        match self.peek() {
            Some(b'[') => self.skip_items(b']', "',' or ']' in the array", |p| p.skip(depth + 1)),
            Some(b'{') => self.skip_items(b'}', "',' or '}' in the object", |p| {
                if p.peek() != Some(b'"') {
                    return Err(p.err(ErrorKind::Parse, "expected a string key in the object"));
                }
                p.string_raw()?;
                p.expect_byte(b':', "':' after the object key")?;
                p.skip(depth + 1)
            }),
            Some(b'"') => self.string_raw().map(|_| ()),
            _ => {
                if self.literal(b"true") || self.literal(b"false") || self.literal(b"null") {
                    return Ok(());
                }
                if !matches!(self.peek(), Some(b'-' | b'0'..=b'9' | b'N' | b'I')) {
                    let found = self.describe_next();
                    return Err(self.err(
                        ErrorKind::Parse,
                        format!("expected a JSON value, found {found}"),
                    ));
                }
                self.number_token().map(|_| ())
            }
        }
    }

    /// Skips the items of an array or object whose opening bracket is next,
    /// up to `close`: `item` skips one, `sep` says what a separator error
    /// expected.
    fn skip_items(
        &mut self,
        close: u8,
        sep: &str,
        mut item: impl FnMut(&mut Self) -> Result<()>,
    ) -> Result<()> {
        self.pos += 1;
        let mut first = true;
        loop {
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok(());
            }
            if !first {
                self.expect_byte(b',', sep)?;
            }
            first = false;
            item(self)?;
        }
    }

    /// A JSON string value for `tp`.
    fn string(&mut self, tp: &Type) -> Result<Cow<'j, str>> {
        if self.peek() != Some(b'"') {
            return Err(self.mismatch(tp, "a string"));
        }
        self.string_raw()
    }

    /// Reads a JSON string at the cursor (which is at the opening quote);
    /// borrowed from the text unless it has escapes.
    #[inline]
    fn string_raw(&mut self) -> Result<Cow<'j, str>> {
        let start = self.pos + 1;
        let rest = self.text.get(start..).unwrap_or_default();
        let n = plain_run(rest);
        if rest.get(n) == Some(&b'"') {
            self.pos = start + n + 1;
            // The run ends at an ASCII byte, a character boundary.
            return Ok(Cow::Borrowed(&self.src[start..start + n]));
        }
        self.string_escaped()
    }

    /// [`Parser::string_raw`] for strings with escapes, and the errors.
    #[inline(never)]
    fn string_escaped(&mut self) -> Result<Cow<'j, str>> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            // The plain run up to the next quote, backslash or control
            // byte. Runs start and end at ASCII bytes (or the end), so they
            // slice the str on character boundaries.
            let run_start = self.pos;
            self.pos += plain_run(&self.text[run_start..]);
            let run = &self.src[run_start..self.pos];
            match self.text.get(self.pos) {
                None => {
                    self.pos = start;
                    return Err(self.err(ErrorKind::Parse, "unterminated string"));
                }
                Some(b'"') => {
                    self.pos += 1;
                    // Every escape adds a character, so an empty `out`
                    // means there was none.
                    return Ok(if out.is_empty() {
                        Cow::Borrowed(run)
                    } else {
                        out.push_str(run);
                        Cow::Owned(out)
                    });
                }
                Some(b'\\') => {
                    out.push_str(run);
                    self.pos += 1;
                    let esc = self.text.get(self.pos).copied();
                    self.pos += 1;
                    match esc {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => {
                            let hi = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&hi) {
                                if self.text.get(self.pos..self.pos + 2) != Some(b"\\u") {
                                    return Err(self.err(
                                        ErrorKind::Parse,
                                        format!("lone surrogate \\u{hi:04x} in string"),
                                    ));
                                }
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.err(
                                        ErrorKind::Parse,
                                        format!("lone surrogate \\u{hi:04x} in string"),
                                    ));
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return Err(self.err(
                                    ErrorKind::Parse,
                                    format!("lone surrogate \\u{hi:04x} in string"),
                                ));
                            } else {
                                hi
                            };
                            out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                        }
                        _ => {
                            self.pos -= 2;
                            return Err(self.err(ErrorKind::Parse, "invalid escape in string"));
                        }
                    }
                }
                Some(_) => {
                    return Err(self.err(
                        ErrorKind::Parse,
                        "control character in string (must be escaped)",
                    ));
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32> {
        self.hex4_digits()
            .ok_or_else(|| self.err(ErrorKind::Parse, "expected 4 hex digits after \\u"))
    }

    /// A hex string of bytes (exactly `len` bytes when given).
    fn hex(&mut self, tp: &Type, len: Option<usize>) -> Result<Vec<u8>> {
        let s = self.string(tp)?;
        if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(self.err(
                ErrorKind::Parse,
                format!("expected a string of hex digit pairs for {tp}, got {s:?}"),
            ));
        }
        let bytes: Vec<u8> = (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap_or(0))
            .collect();
        if let Some(n) = len
            && bytes.len() != n
        {
            return Err(self.err(
                ErrorKind::Parse,
                format!("expected {n} bytes for {tp}, got {}", bytes.len()),
            ));
        }
        Ok(bytes)
    }

    /// The text of a JSON number (or `NaN`, `Infinity`, `-Infinity`).
    fn number_token(&mut self) -> Result<&'j str> {
        self.ws();
        let start = self.pos;
        for special in ["NaN", "Infinity", "-Infinity"] {
            if self.literal(special.as_bytes()) {
                return Ok(special);
            }
        }
        let n = scan_number(self.text, start);
        if !n.well_formed {
            return Err(if n.int_len == 0 && self.text.get(start) != Some(&b'-') {
                let found = self.describe_next();
                self.err(
                    ErrorKind::Parse,
                    format!("expected a number, found {found}"),
                )
            } else {
                self.err(ErrorKind::Parse, "malformed number")
            });
        }
        self.pos = n.end;
        // The token is ASCII, so both ends are character boundaries.
        Ok(&self.src[start..n.end])
    }

    /// Parses one element of a dim or field of a struct; `num` is
    /// [`plain_number`] of `elem` (found once per dim), so numbers skip the
    /// type dispatch.
    ///
    /// # Safety
    /// As [`Parser::value`].
    #[inline(always)]
    unsafe fn element(
        &mut self,
        elem: &'t Type,
        num: Option<BuiltinType>,
        meta: *mut u8,
        data: *mut u8,
    ) -> Result<()> {
        // SAFETY: (caller) `data` and `meta` belong to `elem`, which is
        // builtin `b` when `num` is `Some(b)`.
        unsafe {
            match num {
                Some(b) => self.number(elem, b, data),
                None => self.value(elem, meta, data),
            }
        }
    }

    /// Parses element `i` of a dim, the start of `run`, and when the
    /// elements are plain numbers (`num`, as for [`Parser::element`]) as
    /// many of the run's next elements as the tight loop of
    /// [`Parser::number_run`] takes; returns how many it read (at least 1).
    ///
    /// # Safety
    /// 1. The elements of `run` are writable data of `elem`, with arrmeta
    ///    `meta` (which may be updated in place).
    #[inline(always)]
    unsafe fn dim_elements(
        &mut self,
        elem: &'t Type,
        num: Option<BuiltinType>,
        meta: *mut u8,
        run: Run,
    ) -> Result<usize> {
        if let Some(b) = num {
            // SAFETY: (1), and `elem` is `b`.
            let n =
                unsafe { with_native!(b, signed unsigned ieee => |T| self.number_run::<T>(run)) };
            if let Some(n @ 1..) = n {
                return Ok(n);
            }
        }
        // SAFETY: (1) for the first element.
        unsafe { self.element(elem, num, meta, run.data) }?;
        Ok(1)
    }

    /// The tight loop for a dim of numbers: reads numbers of the quick shape
    /// that [`QuickValue::from_quick`] converts, each followed by a comma and
    /// the next, into the elements of `run`, and stops before anything else
    /// (or at the run's end) with the cursor after the last number it took.
    /// It takes nothing it is not sure of, so the general path sees what it
    /// leaves (a closing bracket, a number it does not take, an error) as if
    /// the loop had not run. Returns how many numbers it read.
    ///
    /// # Safety
    /// 1. The elements of `run` are writable data of `T`.
    #[inline(never)]
    unsafe fn number_run<T: QuickValue>(&mut self, run: Run) -> usize {
        // SAFETY: (1) for each; the classifier shows (2) of `avx2_run`.
        unsafe {
            match self.runs {
                NumberRuns::Serial => self.serial_run::<T>(run),
                #[cfg(target_arch = "x86_64")]
                NumberRuns::Avx2(k) => self.avx2_run::<T>(k, run),
                #[cfg(test)]
                NumberRuns::Bytes => self.window_run::<T, _>(ByteClassifier, run),
                #[cfg(test)]
                NumberRuns::Off => 0,
            }
        }
    }

    /// [`Parser::window_run`] with the AVX2 classifier, compiled for AVX2
    /// (so that the classifier's code joins the loop) and the bit
    /// instructions of the same CPUs.
    ///
    /// # Safety
    /// 1. As [`Parser::number_run`].
    /// 2. The CPU has AVX2, BMI1, BMI2, POPCNT and LZCNT (as an
    ///    [`Avx2Classifier`] shows).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2,popcnt,lzcnt")]
    unsafe fn avx2_run<T: QuickValue>(&mut self, k: Avx2Classifier, run: Run) -> usize {
        // SAFETY: (1).
        unsafe { self.window_run::<T, _>(k, run) }
    }

    /// [`Parser::number_run`] one number after another: each number's
    /// position comes from the end of the one before.
    ///
    /// # Safety
    /// 1. The elements of `run` are writable data of `T`.
    #[inline(always)]
    unsafe fn serial_run<T: QuickValue>(&mut self, run: Run) -> usize {
        let t = self.text;
        let mut pos = self.pos;
        let mut n = 0;
        let mut out = run.data;
        while n < run.len {
            pos = skip_ws(t, pos);
            let Some((q, len)) = t.get(pos..).and_then(QuickNumber::scan_token) else {
                break;
            };
            let end = pos + len;
            // A comma right after the number (the common case) both ends
            // the token and separates.
            let next = t.get(end);
            let comma = next == Some(&b',');
            if !comma && !may_follow_number(next) {
                break;
            }
            let Some(v) = T::from_quick(q) else {
                break;
            };
            // SAFETY: (1): element n < run.len.
            unsafe { v.store(out) };
            out = out.wrapping_offset(run.stride);
            n += 1;
            self.pos = end;
            pos = if comma { end } else { skip_ws(t, end) };
            if t.get(pos) != Some(&b',') {
                break;
            }
            pos += 1;
        }
        n
    }

    /// [`Parser::number_run`] by windows: the first number as
    /// [`Parser::serial_run`] reads it, then a [`WINDOW`]-byte window of
    /// text at a time, from the end of the last number taken. The
    /// classifier `k` marks the window's bytes, [`window_tokens`] gives the
    /// tokens the run may take, each token is read where it starts, so its
    /// position does not wait on the number before, and it is taken when
    /// [`QuickNumber::token`] and [`QuickValue::from_short`] (or, for other
    /// shapes, [`QuickNumber::whole_token_value`]) convert all of it; at
    /// the first token they do not, the run stops. A window that takes no
    /// number (a gap or a token longer than the window) hands one number to
    /// the serial reader.
    ///
    /// # Safety
    /// 1. The elements of `run` are writable data of `T`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    unsafe fn window_run<T: QuickValue, K: Classify>(&mut self, k: K, run: Run) -> usize {
        let t = self.text;
        // SAFETY: (1): the first element.
        let mut n = unsafe { self.serial_run::<T>(Run { len: 1, ..run }) };
        if n == 0 {
            return 0;
        }
        let mut out = run.data.wrapping_offset(run.stride);
        // The text's last bytes, with zero bytes after them (of no class,
        // and they may follow a number, as the text's end may).
        let mut tail = [0u8; WINDOW_TEXT];
        while n < run.len {
            let p = self.pos;
            let rest = t.get(p..).unwrap_or_default();
            let src: &[u8; WINDOW_TEXT] = match rest.first_chunk() {
                Some(src) => src,
                None => {
                    tail[..rest.len()].copy_from_slice(rest);
                    tail[rest.len()..].fill(0);
                    &tail
                }
            };
            let Some(w) = src.first_chunk::<WINDOW>() else {
                break;
            };
            let (mut starts, mut ends) = window_tokens(k.classify(w), w);
            // No more starts than elements left (a window has at most 32).
            let left = run.len - n;
            if left < WINDOW {
                let mut after = starts;
                for _ in 0..left {
                    after &= after.wrapping_sub(1);
                }
                starts ^= after;
            }
            let count = starts.count_ones() as usize;
            // The end of the last number taken from this window.
            let mut last = 0;
            while starts != 0 {
                // Both below 64: `starts` is not 0, and its token ends.
                let s = (starts.trailing_zeros() % 64) as usize;
                let e = (ends.trailing_zeros() % 64) as usize;
                starts &= starts - 1;
                ends &= ends.wrapping_sub(1);
                // The bytes up to the end and the one after are the text's
                // (or zeros after its end), so the token reads as it would
                // in the text.
                let token = &src[s..];
                let len = e.wrapping_sub(s);
                let v = match token
                    .first_chunk::<9>()
                    .and_then(|t| QuickNumber::token(t, len))
                {
                    Some(q) => T::from_short(q),
                    None => QuickNumber::whole_token_value::<T>(token, len),
                };
                let Some(v) = v else {
                    // Taken: the starts before this one.
                    self.pos = p + last;
                    return n + count - starts.count_ones() as usize - 1;
                };
                // SAFETY: (1): there are no more starts than elements left.
                unsafe { v.store(out) };
                out = out.wrapping_offset(run.stride);
                last = e;
            }
            n += count;
            if last > 0 {
                self.pos = p + last;
                continue;
            }
            // Nothing in this window: the next number, if any, the serial
            // way (after white space and a comma).
            let comma = skip_ws(t, p);
            if t.get(comma) != Some(&b',') {
                break;
            }
            self.pos = comma + 1;
            // SAFETY: (1): element n < run.len.
            let m = unsafe {
                self.serial_run::<T>(Run {
                    data: out,
                    len: 1,
                    ..run
                })
            };
            if m == 0 {
                self.pos = p;
                break;
            }
            out = out.wrapping_offset(run.stride);
            n += 1;
        }
        n
    }

    /// Parses a number into integer or real type `b` (`tp`) at `data`.
    ///
    /// # Safety
    /// `data` is writable data of `b`.
    #[inline]
    unsafe fn number(&mut self, tp: &Type, b: BuiltinType, data: *mut u8) -> Result<()> {
        self.ws();
        let rest = self.text.get(self.pos..).unwrap_or_default();
        if let Some((q, len)) = QuickNumber::scan(rest)
            // SAFETY: (caller) `data` holds one value of `b`.
            && unsafe { q.store(b, data) }
        {
            self.pos += len;
            return Ok(());
        }
        // SAFETY: (caller) `data` holds one value of `b`.
        unsafe { self.number_slow(tp, b, data) }
    }

    /// [`Parser::number`] for what [`QuickNumber`] leaves: exponents,
    /// long mantissas, `NaN` and infinities, narrow types, values out of
    /// range and malformed numbers.
    ///
    /// # Safety
    /// `data` is writable data of `b`.
    #[inline(never)]
    unsafe fn number_slow(&mut self, tp: &Type, b: BuiltinType, data: *mut u8) -> Result<()> {
        if !matches!(self.peek(), Some(b'-' | b'0'..=b'9' | b'N' | b'I')) {
            return Err(self.mismatch(tp, "a number"));
        }
        let save = self.pos;
        let tok = self.number_token()?;
        let r = if b.is_float() {
            // SAFETY: `data` holds one value of b.
            unsafe { store_float(b, tok, data) }
        } else {
            // SAFETY: `data` holds one value of b.
            unsafe { store_int(b, tok, data) }
        };
        r.map_err(|(kind, msg)| {
            self.pos = save;
            self.err(kind, msg)
        })
    }

    /// # Safety
    /// `data` is writable data of `b`.
    unsafe fn builtin(&mut self, tp: &Type, b: BuiltinType, data: *mut u8) -> Result<()> {
        use BuiltinType::*;
        match b {
            Bool => {
                let v = if self.literal(b"true") {
                    1u8
                } else if self.literal(b"false") {
                    0
                } else {
                    return Err(self.mismatch(tp, "true or false"));
                };
                // SAFETY: one byte.
                unsafe { *data = v };
                Ok(())
            }
            Void => {
                if self.literal(b"null") {
                    Ok(())
                } else {
                    Err(self.mismatch(tp, "null"))
                }
            }
            Complex64 | Complex128 => {
                let part = if b == Complex64 {
                    Type::builtin(Float32)
                } else {
                    Type::float64()
                };
                let n = part.data_size();
                if self.peek() == Some(b'[') {
                    let count = self.sequence(tp, |p, i| {
                        if i >= 2 {
                            return Err(
                                p.err(ErrorKind::Parse, format!("expected [real, imag] for {tp}"))
                            );
                        }
                        // SAFETY: part i of the complex number.
                        unsafe {
                            p.builtin(&part, part.as_builtin().unwrap_or(Float64), data.add(i * n))
                        }
                        .map(|()| 1)
                    })?;
                    if count != 2 {
                        return Err(self.err(
                            ErrorKind::Parse,
                            format!("expected [real, imag] for {tp}, found {count} elements"),
                        ));
                    }
                    Ok(())
                } else {
                    // SAFETY: the real part, then a zero imaginary part.
                    unsafe {
                        self.builtin(&part, part.as_builtin().unwrap_or(Float64), data)?;
                        std::ptr::write_bytes(data.add(n), 0, n);
                    }
                    Ok(())
                }
            }
            // SAFETY: (caller) `data` holds one value of `b`.
            _ => unsafe { self.number(tp, b, data) },
        }
    }
}

/// Bytes that end a plain run of a JSON string: quote, backslash and the
/// control characters.
static STRING_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// The length of the plain run at the start of `t`: up to the first quote,
/// backslash or control byte (or the end).
#[inline]
fn plain_run(t: &[u8]) -> usize {
    t.iter()
        .position(|&b| STRING_STOP[usize::from(b)])
        .unwrap_or(t.len())
}

/// `a == b`, inline: field names are short, where a call to `memcmp`
/// costs more than the comparison.
#[inline]
fn short_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}
