//! JSON in and out, for every type (DESIGN §8 conventions).
//!
//! Parsing is streaming and type-directed: the text is read once, straight
//! into the array's memory (no intermediate value tree); var dims grow
//! their allocation geometrically and trim it at the end. Errors name the
//! position (line, column) and the path in the value (`[1][0].x`).
//!
//! Conventions: NaN and infinities are the bare tokens `NaN`, `Infinity`,
//! `-Infinity`; a missing option value is `null`; complex numbers are
//! `[re, im]` (a plain number reads as `[x, 0]`); int128 and uint64
//! extremes are plain integer literals, read exactly; integers may be
//! written as `1.0` or `1e3` when the value is integral (`1.5` into an
//! integer is a `fractional` error); `bytes` and `fixed_bytes` are hex
//! strings (`"00ff"`); structs come from objects (extra keys are ignored, a
//! missing field is an error) or from arrays in field order.

use super::arrmeta::{self, FixedDimMeta, PointerMeta, StringData, VarDimData, VarDimMeta};
use super::{Array, na};
use crate::error::{Error, ErrorKind, Result};
// fixed_string encoding and decoding are shared with the text assignment
// kernels, so JSON and casts validate alike.
use crate::kernels::assign::string::{decode, encode};
use crate::types::{BuiltinType, Type, TypeKind};
use half::f16;
use std::borrow::Cow;
use std::fmt::{self, Write};
use std::mem::size_of;

/// Deepest nesting of JSON arrays and objects accepted while skipping an
/// unknown value (type-directed parsing is bounded by the type's depth).
const MAX_SKIP_DEPTH: usize = 512;

#[derive(Clone, Copy)]
enum Seg<'t> {
    Index(usize),
    Field(&'t str),
}

struct Parser<'j, 't> {
    /// The text as bytes, for scanning; `src` is the same text as `str`,
    /// for slicing tokens and strings out without copying or re-validating.
    text: &'j [u8],
    src: &'j str,
    pos: usize,
    path: Vec<Seg<'t>>,
}

/// Parses utf-8 bytes (checked first) into `a`.
pub(super) fn parse_into(a: &Array, text: &[u8]) -> Result<()> {
    match std::str::from_utf8(text) {
        Ok(s) => parse_str_into(a, s),
        Err(e) => Err(Error::parse(format!(
            "JSON text is not valid utf-8 (byte {})",
            e.valid_up_to()
        ))),
    }
}

/// Parses text into `a`.
pub(super) fn parse_str_into(a: &Array, text: &str) -> Result<()> {
    let tp = a.tp().clone();
    let mut p = Parser {
        text: text.as_bytes(),
        src: text,
        pos: 0,
        path: Vec::new(),
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

fn path_string(path: &[Seg<'_>]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Index(i) => {
                let _ = write!(s, "[{i}]");
            }
            Seg::Field(f) => {
                if crate::types::is_identifier(f) {
                    let _ = write!(s, ".{f}");
                } else {
                    let _ = write!(s, "[{f:?}]");
                }
            }
        }
    }
    s
}

impl<'j, 't> Parser<'j, 't> {
    fn err(&self, kind: ErrorKind, msg: impl fmt::Display) -> Error {
        let before = &self.text[..self.pos.min(self.text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let col = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count()
            + 1;
        let path = path_string(&self.path);
        let at = if path.is_empty() {
            String::new()
        } else {
            format!(" at {path}")
        };
        Error::new(kind, format!("JSON line {line}, column {col}{at}: {msg}"))
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(&b) = self.text.get(self.pos) {
            // Every token starts above b' ', which settles most calls in
            // one comparison.
            if b > b' ' || !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            self.pos += 1;
        }
    }

    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.text.get(self.pos).copied()
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

    fn literal(&mut self, word: &str) -> bool {
        self.ws();
        if self.text[self.pos..].starts_with(word.as_bytes()) {
            let end = self.pos + word.len();
            if !self
                .text
                .get(end)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
            {
                self.pos = end;
                return true;
            }
        }
        false
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
                    if self.literal("null") {
                        na::write_na(v, data)
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
                        Ok(())
                    }
                }
                TypeKind::String => {
                    let s = self.string(tp)?;
                    super::scalar::write_string(meta, data, s.as_bytes())
                        .map_err(|e| self.err(e.kind(), e.message()))
                }
                TypeKind::Bytes => {
                    let bytes = self.hex(tp, None)?;
                    super::scalar::write_string(meta, data, &bytes)
                        .map_err(|e| self.err(e.kind(), e.message()))
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
                        p.element(elem, num, emeta, data.offset(i as isize * m.stride))
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
                                self.path.push(Seg::Field(&fields.names()[i]));
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
                    if let Some(i) = seen.first_missing() {
                        self.pos -= 1;
                        return Err(self.err(
                            ErrorKind::Parse,
                            format!("missing field \"{}\" for {tp}", fields.names()[i]),
                        ));
                    }
                    Ok(())
                }
                TypeKind::Tuple(fields) => self.tuple_like(tp, fields, meta, data),
                TypeKind::Pointer(target) => {
                    if self.literal("null") {
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
    /// path extended; returns the count.
    fn sequence(
        &mut self,
        tp: &Type,
        mut each: impl FnMut(&mut Self, usize) -> Result<()>,
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
            each(self, i)?;
            i += 1;
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
                // SAFETY: element i < size of the existing element.
                unsafe {
                    p.element(
                        elem,
                        num,
                        emeta,
                        existing.begin.offset(m.offset + i as isize * m.stride),
                    )
                }
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
                // SAFETY: the arrmeta holds its blockref; `begin` is this
                // block's latest allocation (nested values allocate from
                // their own arrmeta's blocks).
                begin = unsafe {
                    arrmeta::with_allocator(m.blockref, |a| {
                        if cap == 0 {
                            a.allocate(bytes, align)
                        } else {
                            a.resize(begin, bytes)
                        }
                    })
                }
                .map_err(|e| p.err(e.kind(), e.message()))?;
                cap = new_cap;
            }
            // SAFETY: i < cap elements are allocated at `begin`.
            unsafe { p.element(elem, num, emeta, begin.add(i * esize)) }
        })?;
        if cap > 0 {
            // SAFETY: trim the latest allocation of the same block.
            begin = unsafe { arrmeta::with_allocator(m.blockref, |a| a.resize(begin, n * esize)) }
                .map_err(|e| self.err(e.kind(), e.message()))?;
        } else {
            // An empty element still gets a non-null begin, so it reads as
            // allocated (and can be told apart from a never-written one).
            // SAFETY: the arrmeta holds its blockref.
            begin = unsafe { arrmeta::with_allocator(m.blockref, |a| a.allocate(0, align)) }
                .map_err(|e| self.err(e.kind(), e.message()))?;
        }
        // SAFETY: (1) `data` is the var element.
        unsafe { arrmeta::write(data, VarDimData { begin, size: n }) };
        Ok(())
    }

    /// Skips one JSON value (for ignored object keys), checking its syntax.
    fn skip(&mut self, depth: usize) -> Result<()> {
        if depth > MAX_SKIP_DEPTH {
            return Err(self.err(ErrorKind::Parse, "JSON nested too deeply"));
        }
        match self.peek() {
            Some(b'[') => {
                self.pos += 1;
                let mut first = true;
                loop {
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        return Ok(());
                    }
                    if !first {
                        self.expect_byte(b',', "',' or ']' in the array")?;
                    }
                    first = false;
                    self.skip(depth + 1)?;
                }
            }
            Some(b'{') => {
                self.pos += 1;
                let mut first = true;
                loop {
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        return Ok(());
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
                    self.string_raw()?;
                    self.expect_byte(b':', "':' after the object key")?;
                    self.skip(depth + 1)?;
                }
            }
            Some(b'"') => self.string_raw().map(|_| ()),
            _ => {
                if self.literal("true") || self.literal("false") || self.literal("null") {
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
        let digits = self.text.get(self.pos..self.pos + 4).unwrap_or(b"");
        let s = std::str::from_utf8(digits).unwrap_or("");
        match (s.len() == 4, u32::from_str_radix(s, 16)) {
            (true, Ok(v)) if s.bytes().all(|b| b.is_ascii_hexdigit()) => {
                self.pos += 4;
                Ok(v)
            }
            _ => Err(self.err(ErrorKind::Parse, "expected 4 hex digits after \\u")),
        }
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
            if self.literal(special) {
                return Ok(special);
            }
        }
        let t = self.text;
        let mut i = self.pos;
        if t.get(i) == Some(&b'-') {
            i += 1;
        }
        let int_start = i;
        while t.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let int_len = i - int_start;
        let bad = int_len == 0 || (int_len > 1 && t[int_start] == b'0');
        let mut bad_frac = false;
        if t.get(i) == Some(&b'.') {
            i += 1;
            let s = i;
            while t.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            bad_frac = i == s;
        }
        if matches!(t.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(t.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let s = i;
            while t.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            bad_frac |= i == s;
        }
        if bad
            || bad_frac
            || t.get(i)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'.')
        {
            return Err(if int_len == 0 && t.get(self.pos) != Some(&b'-') {
                let found = self.describe_next();
                self.err(
                    ErrorKind::Parse,
                    format!("expected a number, found {found}"),
                )
            } else {
                self.err(ErrorKind::Parse, "malformed number")
            });
        }
        self.pos = i;
        // The token is ASCII, so both ends are character boundaries.
        Ok(&self.src[start..i])
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
        // SAFETY: as above.
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
            // SAFETY: as above.
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
                let v = if self.literal("true") {
                    1u8
                } else if self.literal("false") {
                    0
                } else {
                    return Err(self.mismatch(tp, "true or false"));
                };
                // SAFETY: one byte.
                unsafe { *data = v };
                Ok(())
            }
            Void => {
                if self.literal("null") {
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

/// The builtin type of `tp` when it is an integer or real type, whose
/// values are plain JSON numbers.
fn plain_number(tp: &Type) -> Option<BuiltinType> {
    match tp.kind() {
        TypeKind::Builtin(b) if b.is_int() || b.is_float() => Some(*b),
        _ => None,
    }
}

/// The common shape of a JSON number, `-?(0|[1-9][0-9]*)(\.[0-9]+)?`
/// with at most 19 digits and an optional exponent of at most 3 digits,
/// read in one pass. It is a shortcut only: whatever it does not take (or
/// cannot store exactly) goes to the general path, which also produces
/// every error.
#[derive(Clone, Copy, Debug, PartialEq)]
struct QuickNumber {
    neg: bool,
    /// The integer and fraction digits as one integer (exact: at most 19
    /// digits); the value is `mantissa * 10^exp10`.
    mantissa: u64,
    exp10: i32,
    /// Written without fraction digits or exponent.
    integral: bool,
}

/// Exact powers of ten in f64 (10^22 is the largest).
const POW10_F64: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Exact powers of ten in f32 (10^10 is the largest).
const POW10_F32: [f32; 11] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];

impl QuickNumber {
    /// Reads a number at the start of `t`; returns it and its length, or
    /// `None` when `t` does not start with a number of the quick shape
    /// followed by a delimiter.
    #[inline]
    fn scan(t: &[u8]) -> Option<(QuickNumber, usize)> {
        #[inline(always)]
        fn digits(t: &[u8], mut i: usize, m: &mut u64) -> usize {
            while let Some(&c) = t.get(i) {
                let d = c.wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                *m = m.wrapping_mul(10).wrapping_add(u64::from(d));
                i += 1;
            }
            i
        }
        let neg = t.first() == Some(&b'-');
        let int_start = usize::from(neg);
        let mut mantissa = 0;
        let mut i = digits(t, int_start, &mut mantissa);
        let int_len = i - int_start;
        if int_len == 0 || (int_len > 1 && t[int_start] == b'0') {
            return None;
        }
        let mut frac_len = 0;
        if t.get(i) == Some(&b'.') {
            let frac_start = i + 1;
            i = digits(t, frac_start, &mut mantissa);
            frac_len = i - frac_start;
            if frac_len == 0 {
                return None;
            }
        }
        let mut exp = 0i32;
        let has_exp = matches!(t.get(i), Some(b'e' | b'E'));
        if has_exp {
            i += 1;
            let exp_neg = t.get(i) == Some(&b'-');
            if matches!(t.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let exp_start = i;
            let mut e = 0u64;
            i = digits(t, exp_start, &mut e);
            if !(1..=3).contains(&(i - exp_start)) {
                return None;
            }
            // At most 999: exact in i32.
            exp = if exp_neg { -(e as i32) } else { e as i32 };
        }
        if int_len + frac_len > 19
            || t.get(i)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'.')
        {
            return None;
        }
        Some((
            QuickNumber {
                neg,
                mantissa,
                // frac_len <= 19.
                exp10: exp - frac_len as i32,
                integral: frac_len == 0 && !has_exp,
            },
            i,
        ))
    }

    /// Stores the value into `b` at `data` when that is exact and simple:
    /// an integer without fraction digits or exponent that fits `b`, or a
    /// float64 (float32) by Clinger's fast path — the mantissa at most 2^53
    /// (2^24) and the power of ten exact, so one correctly rounded
    /// multiplication or division gives the correctly rounded value.
    /// Returns whether it stored.
    ///
    /// # Safety
    /// `data` is writable data of `b`.
    #[inline]
    unsafe fn store(self, b: BuiltinType, data: *mut u8) -> bool {
        use BuiltinType::*;
        let m = self.mantissa;
        let mag = i128::from(m);
        let int = if self.neg { -mag } else { mag };
        macro_rules! int {
            ($t:ty) => {
                match <$t>::try_from(int) {
                    Ok(v) if self.integral => {
                        // SAFETY: (caller) `data` holds one value of `b`.
                        unsafe { arrmeta::write(data, v) };
                        true
                    }
                    _ => false,
                }
            };
        }
        let e = self.exp10.unsigned_abs() as usize;
        match b {
            Float64 if m <= 1 << 53 && e < POW10_F64.len() => {
                let (m, p) = (m as f64, POW10_F64[e]);
                let v = if self.exp10 < 0 { m / p } else { m * p };
                // SAFETY: (caller) `data` holds one f64.
                unsafe { arrmeta::write(data, if self.neg { -v } else { v }) };
                true
            }
            Float32 if m <= 1 << 24 && e < POW10_F32.len() => {
                let (m, p) = (m as f32, POW10_F32[e]);
                let v = if self.exp10 < 0 { m / p } else { m * p };
                // SAFETY: (caller) `data` holds one f32.
                unsafe { arrmeta::write(data, if self.neg { -v } else { v }) };
                true
            }
            Int8 => int!(i8),
            Int16 => int!(i16),
            Int32 => int!(i32),
            Int64 => int!(i64),
            Int128 => int!(i128),
            UInt8 => int!(u8),
            UInt16 => int!(u16),
            UInt32 => int!(u32),
            UInt64 => int!(u64),
            UInt128 => int!(u128),
            _ => false,
        }
    }
}

/// Parses a float token into `b` at `data`.
///
/// # Safety
/// `data` is writable data of float type `b`.
unsafe fn store_float(
    b: BuiltinType,
    tok: &str,
    data: *mut u8,
) -> std::result::Result<(), (ErrorKind, String)> {
    let special = match tok {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    };
    let overflow = || {
        (
            ErrorKind::Overflow,
            format!("{tok} is out of range for {b}"),
        )
    };
    // SAFETY: (caller) `data` holds one value of `b`.
    unsafe {
        match b {
            BuiltinType::Float32 => {
                let v = match special {
                    Some(s) => s as f32,
                    None => tok
                        .parse::<f32>()
                        .map_err(|e| (ErrorKind::Parse, e.to_string()))?,
                };
                if special.is_none() && v.is_infinite() {
                    return Err(overflow());
                }
                arrmeta::write(data, v);
            }
            BuiltinType::Float16 => {
                let v = special
                    .map_or_else(|| tok.parse::<f64>(), Ok)
                    .map_err(|e| (ErrorKind::Parse, e.to_string()))?;
                let h = f16::from_f64(v);
                if special.is_none() && h.is_infinite() {
                    return Err(overflow());
                }
                arrmeta::write(data, h);
            }
            _ => {
                let v = special
                    .map_or_else(|| tok.parse::<f64>(), Ok)
                    .map_err(|e| (ErrorKind::Parse, e.to_string()))?;
                if special.is_none() && v.is_infinite() {
                    return Err(overflow());
                }
                arrmeta::write(data, v);
            }
        }
    }
    Ok(())
}

/// The exact integer value of a JSON number token: `(negative, magnitude)`.
fn exact_integer(
    tok: &str,
    b: BuiltinType,
) -> std::result::Result<(bool, u128), (ErrorKind, String)> {
    if matches!(tok, "NaN" | "Infinity" | "-Infinity") {
        return Err((
            ErrorKind::Overflow,
            format!("{tok} cannot be stored in {b}"),
        ));
    }
    let (neg, rest) = match tok.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, tok),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().unwrap_or(i64::MAX)),
        None => (rest, 0),
    };
    let (int_part, frac_part) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, ""),
    };
    let digits: Vec<u8> = int_part
        .bytes()
        .chain(frac_part.bytes())
        .map(|d| d - b'0')
        .collect();
    // value = digits * 10^(exp - frac_len)
    let scale = exp.saturating_sub(frac_part.len() as i64);
    let overflow = || {
        (
            ErrorKind::Overflow,
            format!("{tok} is out of range for {b}"),
        )
    };
    let (keep, dropped): (&[u8], &[u8]) = if scale >= 0 {
        (&digits, &[])
    } else {
        let cut = digits
            .len()
            .saturating_sub(scale.unsigned_abs().min(usize::MAX as u64) as usize);
        digits.split_at(cut)
    };
    if dropped.iter().any(|&d| d != 0) {
        return Err((
            ErrorKind::Fractional,
            format!("{tok} is not an integer, so it cannot be stored in {b}"),
        ));
    }
    let mut v: u128 = 0;
    for &d in keep {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(d as u128))
            .ok_or_else(overflow)?;
    }
    if scale > 0 && v != 0 {
        for _ in 0..scale {
            v = v.checked_mul(10).ok_or_else(overflow)?;
        }
    }
    Ok((neg && v != 0, v))
}

/// Parses an integer token into `b` at `data`, range checked.
///
/// # Safety
/// `data` is writable data of integer type `b`.
unsafe fn store_int(
    b: BuiltinType,
    tok: &str,
    data: *mut u8,
) -> std::result::Result<(), (ErrorKind, String)> {
    use BuiltinType::*;
    let (neg, mag) = exact_integer(tok, b)?;
    let overflow = || {
        (
            ErrorKind::Overflow,
            format!("{tok} is out of range for {b}"),
        )
    };
    macro_rules! put {
        ($t:ty) => {{
            let v: $t = if neg {
                // Negative: the magnitude must fit as -(mag).
                let m = i128::try_from(mag)
                    .ok()
                    .map(|m| -m)
                    .or((mag == 1u128 << 127).then_some(i128::MIN));
                m.and_then(|m| <$t>::try_from(m).ok())
                    .ok_or_else(overflow)?
            } else {
                <$t>::try_from(mag).map_err(|_| overflow())?
            };
            // SAFETY: (caller) `data` holds one value of this type.
            unsafe { arrmeta::write(data, v) };
        }};
    }
    match b {
        Int8 => put!(i8),
        Int16 => put!(i16),
        Int32 => put!(i32),
        Int64 => put!(i64),
        Int128 => put!(i128),
        UInt8 => put!(u8),
        UInt16 => put!(u16),
        UInt32 => put!(u32),
        UInt64 => put!(u64),
        UInt128 => put!(u128),
        _ => return Err((ErrorKind::Type, format!("{b} is not an integer type"))),
    }
    Ok(())
}

// ---------------------------------------------------------------- printing

/// Writes `s` as a JSON string.
pub(crate) fn write_json_string(s: &str, out: &mut impl Write) -> fmt::Result {
    out.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => out.write_str("\\\"")?,
            '\\' => out.write_str("\\\\")?,
            '\n' => out.write_str("\\n")?,
            '\r' => out.write_str("\\r")?,
            '\t' => out.write_str("\\t")?,
            '\u{8}' => out.write_str("\\b")?,
            '\u{c}' => out.write_str("\\f")?,
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32)?,
            c => out.write_char(c)?,
        }
    }
    out.write_char('"')
}

fn write_f64(v: f64, out: &mut String) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        let _ = write!(out, "{v:?}");
    }
}

fn write_f32(v: f32, out: &mut String) {
    if v.is_nan() || v.is_infinite() {
        write_f64(v as f64, out);
    } else {
        let _ = write!(out, "{v:?}");
    }
}

pub(super) fn to_json(a: &Array, pretty: bool) -> String {
    let mut out = String::new();
    let w = Writer { pretty };
    // SAFETY: `a` is a valid array: data and arrmeta match its type.
    unsafe { w.value(a.tp(), a.arrmeta_ptr(), a.data_ptr(), &mut out) };
    out
}

struct Writer {
    pretty: bool,
}

impl Writer {
    fn sep(&self, out: &mut String) {
        out.push_str(if self.pretty { ", " } else { "," });
    }

    /// # Safety
    /// 1. `data` / `meta` are valid data and arrmeta of `tp`.
    unsafe fn value(&self, tp: &Type, meta: *const u8, data: *const u8, out: &mut String) {
        // SAFETY: each arm reads within the layouts (1) promises.
        unsafe {
            match tp.kind() {
                TypeKind::Builtin(b) => {
                    write_builtin(*b, data, if self.pretty { ", " } else { "," }, out)
                }
                TypeKind::Option(v) => {
                    if na::is_na(v, data) {
                        out.push_str("null");
                    } else {
                        self.value(v, meta, data, out);
                    }
                }
                TypeKind::String => {
                    let s = super::string_bytes(arrmeta::read::<StringData>(data));
                    let _ = write_json_string(&String::from_utf8_lossy(s), out);
                }
                TypeKind::Bytes => {
                    write_hex(super::string_bytes(arrmeta::read::<StringData>(data)), out)
                }
                TypeKind::Char => {
                    let c = char::from_u32(arrmeta::read::<u32>(data)).unwrap_or('\u{fffd}');
                    let _ = write_json_string(c.encode_utf8(&mut [0; 4]), out);
                }
                TypeKind::FixedString { size, encoding } => {
                    let bytes = std::slice::from_raw_parts(data, size * encoding.unit_size());
                    let s = decode(bytes, *encoding)
                        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned());
                    let _ = write_json_string(&s, out);
                }
                TypeKind::FixedBytes { size, .. } => {
                    write_hex(std::slice::from_raw_parts(data, *size), out)
                }
                TypeKind::FixedDim { elem, .. } => {
                    let m: FixedDimMeta = arrmeta::read(meta);
                    out.push('[');
                    for i in 0..m.dim_size {
                        if i > 0 {
                            self.sep(out);
                        }
                        self.value(
                            elem,
                            meta.add(size_of::<FixedDimMeta>()),
                            data.offset(i * m.stride),
                            out,
                        );
                    }
                    out.push(']');
                }
                TypeKind::VarDim { elem } => {
                    let m: VarDimMeta = arrmeta::read(meta);
                    let d: VarDimData = arrmeta::read(data);
                    out.push('[');
                    for i in 0..d.size as isize {
                        if i > 0 {
                            self.sep(out);
                        }
                        self.value(
                            elem,
                            meta.add(size_of::<VarDimMeta>()),
                            d.begin.offset(m.offset + i * m.stride),
                            out,
                        );
                    }
                    out.push(']');
                }
                TypeKind::Struct(fields) => {
                    out.push('{');
                    for i in 0..fields.len() {
                        if i > 0 {
                            self.sep(out);
                        }
                        let _ = write_json_string(&fields.names()[i], out);
                        out.push_str(if self.pretty { ": " } else { ":" });
                        self.value(
                            &fields.types()[i],
                            meta.add(fields.arrmeta_offsets()[i]),
                            data.add(fields.data_offsets()[i]),
                            out,
                        );
                    }
                    out.push('}');
                }
                TypeKind::Tuple(fields) => {
                    out.push('[');
                    for i in 0..fields.len() {
                        if i > 0 {
                            self.sep(out);
                        }
                        self.value(
                            &fields.types()[i],
                            meta.add(fields.arrmeta_offsets()[i]),
                            data.add(fields.data_offsets()[i]),
                            out,
                        );
                    }
                    out.push(']');
                }
                TypeKind::Pointer(target) => {
                    let p: usize = arrmeta::read(data);
                    if p == 0 {
                        out.push_str("null");
                    } else {
                        let pm: PointerMeta = arrmeta::read(meta);
                        self.value(
                            target,
                            meta.add(size_of::<PointerMeta>()),
                            (p as *const u8).wrapping_offset(pm.offset),
                            out,
                        );
                    }
                }
                _ => out.push_str("null"),
            }
        }
    }
}

fn write_hex(bytes: &[u8], out: &mut String) {
    out.push('"');
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out.push('"');
}

/// # Safety
/// `data` is readable data of `b`.
unsafe fn write_builtin(b: BuiltinType, data: *const u8, sep: &str, out: &mut String) {
    use BuiltinType::*;
    // SAFETY: (caller) one value of `b` at `data`.
    unsafe {
        let _ = match b {
            Bool => write!(out, "{}", *data != 0),
            Int8 => write!(out, "{}", arrmeta::read::<i8>(data)),
            Int16 => write!(out, "{}", arrmeta::read::<i16>(data)),
            Int32 => write!(out, "{}", arrmeta::read::<i32>(data)),
            Int64 => write!(out, "{}", arrmeta::read::<i64>(data)),
            Int128 => write!(out, "{}", arrmeta::read::<i128>(data)),
            UInt8 => write!(out, "{}", *data),
            UInt16 => write!(out, "{}", arrmeta::read::<u16>(data)),
            UInt32 => write!(out, "{}", arrmeta::read::<u32>(data)),
            UInt64 => write!(out, "{}", arrmeta::read::<u64>(data)),
            UInt128 => write!(out, "{}", arrmeta::read::<u128>(data)),
            Float16 => {
                write_f32(arrmeta::read::<f16>(data).to_f32(), out);
                Ok(())
            }
            Float32 => {
                write_f32(arrmeta::read::<f32>(data), out);
                Ok(())
            }
            Float64 => {
                write_f64(arrmeta::read::<f64>(data), out);
                Ok(())
            }
            Complex64 => {
                out.push('[');
                write_f32(arrmeta::read::<f32>(data), out);
                out.push_str(sep);
                write_f32(arrmeta::read::<f32>(data.add(4)), out);
                out.push(']');
                Ok(())
            }
            Complex128 => {
                out.push('[');
                write_f64(arrmeta::read::<f64>(data), out);
                out.push_str(sep);
                write_f64(arrmeta::read::<f64>(data.add(8)), out);
                out.push(']');
                Ok(())
            }
            Void => write!(out, "null"),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NUMBER_TYPES: [BuiltinType; 12] = [
        BuiltinType::Int8,
        BuiltinType::Int16,
        BuiltinType::Int32,
        BuiltinType::Int64,
        BuiltinType::Int128,
        BuiltinType::UInt8,
        BuiltinType::UInt16,
        BuiltinType::UInt32,
        BuiltinType::UInt64,
        BuiltinType::UInt128,
        BuiltinType::Float32,
        BuiltinType::Float64,
    ];

    /// Where the quick path takes `tok` (followed by `after`), it reads the
    /// whole token and stores the same bytes as the general path.
    fn agrees(tok: &str, after: &str) {
        let text = format!("{tok}{after}");
        let Some((q, len)) = QuickNumber::scan(text.as_bytes()) else {
            return;
        };
        assert_eq!(len, tok.len(), "{text:?}");
        for b in NUMBER_TYPES {
            let (mut quick, mut general) = ([0u8; 16], [0u8; 16]);
            // SAFETY: 16 bytes hold any of these types; writes are unaligned.
            let stored = unsafe { q.store(b, quick.as_mut_ptr()) };
            if !stored {
                continue;
            }
            // SAFETY: as above.
            let r = unsafe {
                if b.is_float() {
                    store_float(b, tok, general.as_mut_ptr())
                } else {
                    store_int(b, tok, general.as_mut_ptr())
                }
            };
            assert!(r.is_ok(), "{tok} into {b}: quick stored, general failed");
            assert_eq!(quick, general, "{tok} into {b}");
        }
    }

    #[test]
    fn quick_number_edges() {
        for tok in [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "127",
            "128",
            "-128",
            "-129",
            "255",
            "256",
            "9007199254740992",
            "9007199254740993",
            "16777216",
            "16777217",
            "0.1",
            "0.3",
            "1.7976931348623157",
            "9999999999999999999",
            "1844674407370955161",
            "-9223372036854775808",
            "9223372036854775807",
            "0.0000000000000000001",
            "123.456",
        ] {
            for after in ["", ",", "]", " ", "}"] {
                agrees(tok, after);
            }
        }
        for tok in [
            "1e5",
            "1E5",
            "1.5e3",
            "2.5e-3",
            "1e+22",
            "1e22",
            "1e23",
            "1e-22",
            "9007199254740993e-3",
            "16777217e1",
            "3e10",
            "3e11",
            "1e0",
            "-0e5",
            "123e-30",
        ] {
            for after in ["", ",", "]"] {
                agrees(tok, after);
            }
        }
        // Not the quick shape: left to the general path.
        for text in [
            "01", "1.", ".5", "1e", "1e+", "1e1000", "1.5e3x", "-", "1x", "1.2.3", "NaN", "+1",
        ] {
            assert!(QuickNumber::scan(text.as_bytes()).is_none(), "{text}");
        }
        assert!(QuickNumber::scan(b"12345678901234567890").is_none());
    }

    /// The fast paths (quick numbers, the dim and field loops, borrowed
    /// strings) keep the values and the error messages of the general ones.
    #[test]
    fn fast_paths_keep_values_and_errors() {
        let cases: &[(&str, &str, std::result::Result<&str, &str>)] = &[
            (
                "var * float64",
                "[1.5, -0.0, 300, 1e2]",
                Ok("[1.5,-0.0,300.0,100.0]"),
            ),
            ("float64", "9007199254740993", Ok("9007199254740992.0")),
            ("float32", "16777217", Ok("16777216.0")),
            ("int8", "-0.0", Ok("0")),
            ("var * int8", "[-128, 127]", Ok("[-128,127]")),
            (
                "var * int8",
                "[300]",
                Err("JSON line 1, column 2 at [0]: 300 is out of range for int8"),
            ),
            (
                "3 * int32",
                "[1.5, 2]",
                Err(
                    "JSON line 1, column 2 at [0]: 1.5 is not an integer, so it cannot be stored in int32",
                ),
            ),
            (
                "var * float64",
                "[1 2]",
                Err("JSON line 1, column 4: expected ',' or ']' in the array, found a number"),
            ),
            (
                "var * float64",
                "[1,2,]",
                Err("JSON line 1, column 6 at [2]: expected a number for float64, found ']'"),
            ),
            (
                "3 * int32",
                "[1,2,3,4]",
                Err("JSON line 1, column 8 at [3]: too many elements for 3 * int32: expected 3"),
            ),
            (
                "var * float64",
                "[01]",
                Err("JSON line 1, column 2 at [0]: malformed number"),
            ),
            (
                "var * {id: int64, x: float64, name: string}",
                r#"[{"id": 1, "x": 2.5, "name": "r\"1"}, {"name": "r2", "x": -1, "id": 2}]"#,
                Ok(r#"[{"id":1,"x":2.5,"name":"r\"1"},{"id":2,"x":-1.0,"name":"r2"}]"#),
            ),
            (
                "var * {id: int64, x: float64, name: string}",
                r#"[{"id": 2.5, "x": 1, "name": "a"}]"#,
                Err(
                    "JSON line 1, column 9 at [0].id: 2.5 is not an integer, so it cannot be stored in int64",
                ),
            ),
            (
                "{a: int32, b: string}",
                r#"{"a": 1, "a": 2, "b": ""}"#,
                Err(r#"JSON line 1, column 14: duplicate key "a""#),
            ),
            (
                "{a: int32, b: string}",
                r#"{"a": 1, "b": "x"#,
                Err("JSON line 1, column 15 at .b: unterminated string"),
            ),
        ];
        for &(tp, text, want) in cases {
            let got = Array::from_json(tp, text).map(|a| a.to_json());
            match (got, want) {
                (Ok(json), Ok(w)) => assert_eq!(json, w, "{tp} from {text}"),
                (Err(e), Err(w)) => assert_eq!(e.message(), w, "{tp} from {text}"),
                (got, _) => panic!("{tp} from {text}: got {got:?}, want {want:?}"),
            }
        }
    }

    proptest! {
        #[test]
        fn quick_number_matches_general(
            neg in any::<bool>(),
            int in "(0|[1-9][0-9]{0,18})",
            frac in proptest::option::of("[0-9]{1,19}"),
            exp in proptest::option::of("[eE][+-]?[0-9]{1,3}"),
        ) {
            let tok = format!(
                "{}{int}{}{}",
                if neg { "-" } else { "" },
                frac.map(|f| format!(".{f}")).unwrap_or_default(),
                exp.unwrap_or_default()
            );
            agrees(&tok, ", ");
        }
    }
}
