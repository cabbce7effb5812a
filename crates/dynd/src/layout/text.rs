//! Text in and out of element data: reading a source element as validated
//! text ([`Text`]), and storing text into a destination element of any text
//! or bytes type ([`store_text`]), re-encoding on the way.
//!
//! Reading validates the whole value before anything is written, and
//! storing measures before it writes, so a failing element is left
//! untouched. No pass allocates: the one scratch copy is for a source that
//! overlaps its fixed-size destination (see `kernels::assign::string::TextAssign`).
//!
//! `fixed_string` data ends at its first zero code unit (the rest is
//! padding), so a string holding a NUL character reads back cut there.

use crate::error::{Error, Result};
use crate::layout::StringData;
use crate::memblock::MemBlock;
use crate::types::{Encoding, Type, TypeKind};
use std::fmt;

/// The text and bytes types, as the kernels need to know them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextKind {
    /// `string`: utf-8 `{begin, end}` in a blockref.
    String,
    /// `bytes`: `{begin, end}` in a blockref.
    Bytes,
    /// `fixed_string[N, enc]`: N code units, zero padded.
    FixedString(usize, Encoding),
    /// `fixed_bytes[N]`.
    FixedBytes(usize),
    /// `char`: one code point as a `u32`.
    Char,
}

impl TextKind {
    /// The kind of `tp`, when it is text or bytes.
    pub fn of(tp: &Type) -> Option<TextKind> {
        Some(match tp.kind() {
            TypeKind::String => TextKind::String,
            TypeKind::Bytes => TextKind::Bytes,
            TypeKind::FixedString { size, encoding } => TextKind::FixedString(*size, *encoding),
            TypeKind::FixedBytes { size, .. } => TextKind::FixedBytes(*size),
            TypeKind::Char => TextKind::Char,
            _ => return None,
        })
    }

    /// `true` for `bytes` and `fixed_bytes`, whose data is raw bytes.
    pub fn is_raw(self) -> bool {
        matches!(self, TextKind::Bytes | TextKind::FixedBytes(_))
    }

    /// `true` for the kinds whose element is `{begin, end}` into a blockref.
    pub fn is_var(self) -> bool {
        matches!(self, TextKind::String | TextKind::Bytes)
    }

    /// The bytes of one element's data, when they are held in place (the
    /// fixed-size kinds).
    pub fn fixed_size(self) -> Option<usize> {
        match self {
            TextKind::FixedString(n, enc) => Some(n * enc.unit_size()),
            TextKind::FixedBytes(n) => Some(n),
            TextKind::Char => Some(4),
            TextKind::String | TextKind::Bytes => None,
        }
    }
}

/// The bytes of a source element: the `[begin, end)` range of a string or
/// bytes value (empty for a null `begin`), or the element's own bytes.
///
/// # Safety
/// 1. `data` is a readable element of `kind`; a string or bytes element
///    points at bytes that stay alive and unwritten for `'a`.
pub(crate) unsafe fn element_bytes<'a>(kind: TextKind, data: *const u8) -> &'a [u8] {
    match kind.fixed_size() {
        // SAFETY: (1) the element holds `n` bytes; u8 needs no alignment.
        Some(n) => unsafe { std::slice::from_raw_parts(data, n) },
        // SAFETY: (1) a StringData (read unaligned) into live bytes.
        None => unsafe { crate::layout::string_bytes(data.cast::<StringData>().read_unaligned()) },
    }
}

/// Source data that is not valid text for its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Invalid {
    /// A byte that starts no valid utf-8 sequence.
    Utf8 { offset: usize, byte: u8 },
    /// A utf-8 sequence cut short by the end of the data.
    Utf8Truncated { offset: usize },
    /// A byte above 0x7f in ascii data.
    Ascii { offset: usize, byte: u8 },
    /// A surrogate code unit that is unpaired (utf-16) or present at all (ucs2).
    Surrogate { unit: usize, value: u16 },
    /// A utf-32 or char value that is not a unicode scalar value.
    CodePoint { unit: usize, value: u32 },
}

impl Invalid {
    /// What is wrong, in the data of `what` (a type, or an encoding).
    pub fn describe(&self, what: &dyn fmt::Display) -> String {
        match *self {
            Invalid::Utf8 { offset, byte } => {
                format!("invalid utf-8 in {what} data (byte {byte:#04x} at offset {offset})")
            }
            Invalid::Utf8Truncated { offset } => {
                format!("invalid utf-8 in {what} data (a sequence cut short at offset {offset})")
            }
            Invalid::Ascii { offset, byte } => {
                format!("a non-ascii byte in {what} data ({byte:#04x} at offset {offset})")
            }
            Invalid::Surrogate { unit, value } => {
                format!("an unpaired surrogate in {what} data ({value:#06x} at code unit {unit})")
            }
            Invalid::CodePoint { unit, value } => {
                format!("an invalid code point in {what} data ({value:#x} at code unit {unit})")
            }
        }
    }
}

/// Validated text, borrowed from element data.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Text<'a> {
    /// utf-8 (from string, bytes, and utf-8 or ascii fixed_string data).
    Str(&'a str),
    /// Validated utf-16, ucs2 or utf-32 code units in native byte order,
    /// without the zero padding.
    Units(&'a [u8], Encoding),
    /// One character.
    Char(char),
}

/// The utf-8 text in `bytes`.
pub(crate) fn utf8(bytes: &[u8]) -> std::result::Result<&str, Invalid> {
    std::str::from_utf8(bytes).map_err(|e| {
        let offset = e.valid_up_to();
        match e.error_len() {
            Some(_) => Invalid::Utf8 {
                offset,
                byte: bytes[offset],
            },
            None => Invalid::Utf8Truncated { offset },
        }
    })
}

/// The text of `bytes`, the data of a `fixed_string[_, enc]` (up to the first
/// zero code unit), validated.
pub(crate) fn fixed_text(bytes: &[u8], enc: Encoding) -> std::result::Result<Text<'_>, Invalid> {
    let unit = enc.unit_size();
    let end = bytes
        .chunks_exact(unit)
        .position(|u| u.iter().all(|&b| b == 0))
        .map_or(bytes.len() - bytes.len() % unit, |i| i * unit);
    let bytes = &bytes[..end];
    match enc {
        Encoding::Utf8 => utf8(bytes).map(Text::Str),
        Encoding::Ascii => match bytes.iter().position(|b| !b.is_ascii()) {
            Some(offset) => Err(Invalid::Ascii {
                offset,
                byte: bytes[offset],
            }),
            // All ascii: valid utf-8.
            None => utf8(bytes).map(Text::Str),
        },
        Encoding::Utf16 => {
            let mut units = u16_units(bytes).enumerate().peekable();
            while let Some((i, u)) = units.next() {
                match u {
                    0xD800..=0xDBFF => match units.peek() {
                        Some((_, 0xDC00..=0xDFFF)) => {
                            units.next();
                        }
                        _ => return Err(Invalid::Surrogate { unit: i, value: u }),
                    },
                    0xDC00..=0xDFFF => return Err(Invalid::Surrogate { unit: i, value: u }),
                    _ => {}
                }
            }
            Ok(Text::Units(bytes, enc))
        }
        Encoding::Ucs2 => match u16_units(bytes)
            .enumerate()
            .find(|(_, u)| (0xD800..=0xDFFF).contains(u))
        {
            Some((unit, value)) => Err(Invalid::Surrogate { unit, value }),
            None => Ok(Text::Units(bytes, enc)),
        },
        Encoding::Utf32 => match u32_units(bytes)
            .enumerate()
            .find(|(_, u)| char::from_u32(*u).is_none())
        {
            Some((unit, value)) => Err(Invalid::CodePoint { unit, value }),
            None => Ok(Text::Units(bytes, enc)),
        },
    }
}

/// The text of a source element's bytes ([`element_bytes`]), validated:
/// string and bytes data as utf-8, fixed_string data in its encoding, a
/// char as one code point.
pub(crate) fn text_of(kind: TextKind, bytes: &[u8]) -> std::result::Result<Text<'_>, Invalid> {
    match kind {
        TextKind::String | TextKind::Bytes | TextKind::FixedBytes(_) => utf8(bytes).map(Text::Str),
        TextKind::FixedString(_, enc) => fixed_text(bytes, enc),
        TextKind::Char => {
            let value = u32_units(bytes).next().unwrap_or(0);
            char::from_u32(value)
                .map(Text::Char)
                .ok_or(Invalid::CodePoint { unit: 0, value })
        }
    }
}

fn u16_units(bytes: &[u8]) -> impl Iterator<Item = u16> + '_ {
    bytes
        .chunks_exact(2)
        .map(|c| u16::from_ne_bytes([c[0], c[1]]))
}

fn u32_units(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
}

/// utf-16 code units read from native-order bytes.
type Units16<'a> = std::iter::Map<std::slice::ChunksExact<'a, u8>, fn(&[u8]) -> u16>;

/// The characters of a [`Text`].
pub(crate) enum Chars<'a> {
    Str(std::str::Chars<'a>),
    Utf16(std::char::DecodeUtf16<Units16<'a>>),
    Utf32(std::slice::ChunksExact<'a, u8>),
    One(Option<char>),
}

impl Iterator for Chars<'_> {
    type Item = char;
    fn next(&mut self) -> Option<char> {
        // The text was validated when it was made, so the replacement
        // character below is never produced.
        match self {
            Chars::Str(c) => c.next(),
            Chars::Utf16(d) => d.next().map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER)),
            Chars::Utf32(u) => u.next().map(|c| {
                char::from_u32(u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                    .unwrap_or(char::REPLACEMENT_CHARACTER)
            }),
            Chars::One(c) => c.take(),
        }
    }
}

fn unit16(c: &[u8]) -> u16 {
    u16::from_ne_bytes([c[0], c[1]])
}

impl<'a> Text<'a> {
    /// Its characters.
    pub fn chars(&self) -> Chars<'a> {
        match *self {
            Text::Str(s) => Chars::Str(s.chars()),
            Text::Units(b, Encoding::Utf32) => Chars::Utf32(b.chunks_exact(4)),
            Text::Units(b, _) => Chars::Utf16(char::decode_utf16(
                b.chunks_exact(2).map(unit16 as fn(&[u8]) -> u16),
            )),
            Text::Char(c) => Chars::One(Some(c)),
        }
    }

    /// Its length in utf-8 bytes.
    pub fn utf8_len(&self) -> usize {
        match self {
            Text::Str(s) => s.len(),
            Text::Char(c) => c.len_utf8(),
            Text::Units(..) => self.chars().map(char::len_utf8).sum(),
        }
    }

    /// Writes its utf-8 bytes to `out`, which is [`Text::utf8_len`] long.
    pub fn write_utf8(&self, out: &mut [u8]) {
        match self {
            Text::Str(s) => out.copy_from_slice(s.as_bytes()),
            _ => {
                let mut at = 0;
                for c in self.chars() {
                    at += c.encode_utf8(&mut out[at..]).len();
                }
            }
        }
    }

    /// Its code units in `enc`, or the first character `enc` cannot
    /// represent (non-ascii in ascii, outside the basic plane in ucs2).
    pub fn units_in(&self, enc: Encoding) -> std::result::Result<usize, char> {
        if let (Text::Str(s), Encoding::Utf8) = (self, enc) {
            return Ok(s.len());
        }
        if let (Text::Str(s), Encoding::Ascii) = (self, enc)
            && s.is_ascii()
        {
            return Ok(s.len());
        }
        let mut n = 0;
        for c in self.chars() {
            n += match enc {
                Encoding::Ascii if c.is_ascii() => 1,
                Encoding::Ucs2 if (c as u32) <= 0xFFFF => 1,
                Encoding::Ascii | Encoding::Ucs2 => return Err(c),
                Encoding::Utf8 => c.len_utf8(),
                Encoding::Utf16 => c.len_utf16(),
                Encoding::Utf32 => 1,
            };
        }
        Ok(n)
    }

    /// Writes its code units in `enc` (native byte order) to the start of
    /// `out`, which has room for [`Text::units_in`] of them (which
    /// succeeded).
    pub fn write_units(&self, enc: Encoding, out: &mut [u8]) {
        if let (Text::Str(s), Encoding::Utf8 | Encoding::Ascii) = (self, enc) {
            out[..s.len()].copy_from_slice(s.as_bytes());
            return;
        }
        let mut at = 0;
        for c in self.chars() {
            match enc {
                Encoding::Ascii | Encoding::Utf8 => {
                    at += c.encode_utf8(&mut out[at..]).len();
                }
                Encoding::Utf16 | Encoding::Ucs2 => {
                    let mut buf = [0u16; 2];
                    for u in c.encode_utf16(&mut buf) {
                        out[at..at + 2].copy_from_slice(&u.to_ne_bytes());
                        at += 2;
                    }
                }
                Encoding::Utf32 => {
                    out[at..at + 4].copy_from_slice(&(c as u32).to_ne_bytes());
                    at += 4;
                }
            }
        }
    }

    /// The text as a `&str`: borrowed when it is utf-8 already, else
    /// decoded into `buf` when it fits, else into a new `String` kept in
    /// `heap`.
    pub fn as_str<'b>(&self, buf: &'b mut [u8], heap: &'b mut String) -> &'b str
    where
        'a: 'b,
    {
        match *self {
            Text::Str(s) => s,
            _ => {
                let len = self.utf8_len();
                if len <= buf.len() {
                    self.write_utf8(&mut buf[..len]);
                    // Encoded from chars just now: always valid.
                    std::str::from_utf8(&buf[..len]).unwrap_or_default()
                } else {
                    heap.extend(self.chars());
                    heap.as_str()
                }
            }
        }
    }

    /// The value for an error message: quoted and escaped like a Rust string
    /// literal, cut after 64 characters.
    pub fn show(&self) -> String {
        const MAX: usize = 64;
        let mut s: String = self.chars().take(MAX).collect();
        let cut = self.chars().nth(MAX).is_some();
        s = format!("{s:?}");
        if cut {
            s.push_str("...");
        }
        s
    }
}

/// Raw bytes for an error message: a quoted hex string (as JSON writes
/// bytes), cut after 32 bytes.
pub(crate) fn show_bytes(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::from("\"");
    for b in bytes.iter().take(32) {
        let _ = write!(s, "{b:02x}");
    }
    s.push('"');
    if bytes.len() > 32 {
        s.push_str("...");
    }
    s
}

/// Why text could not be stored.
#[derive(Debug)]
pub(crate) enum StoreError {
    /// A character the destination's encoding cannot represent.
    Unrepresentable(char),
    /// The value needs this many code units (fixed_string), characters
    /// (char) or bytes (fixed_bytes), and the destination holds another
    /// number (at most N code units; exactly one character; exactly N bytes).
    Length(usize),
    /// Allocating a string or bytes destination failed.
    Alloc(Error),
}

/// Allocates `len` bytes for the string or bytes element at `dst` from
/// `block`, lets `fill` write them, and points the element at them. An
/// empty value still gets a non-null `begin` (a null one means missing).
///
/// # Safety
/// 1. `dst` is a writable string or bytes element.
pub(crate) unsafe fn store_var(
    block: Option<&MemBlock>,
    dst: *mut u8,
    len: usize,
    fill: impl FnOnce(&mut [u8]),
) -> Result<()> {
    let alloc = block.and_then(MemBlock::pod_allocator).ok_or_else(|| {
        Error::invalid_argument(
            "cannot allocate variable-sized data: the destination arrmeta has no POD allocator memory block",
        )
    })?;
    // PodAllocator::allocate locks the block: threads may share it.
    let begin = alloc.allocate(len, 1)?;
    // SAFETY: a fresh allocation of `len` zeroed bytes that nothing else
    // refers to yet (allocate returns a non-null pointer even for 0 bytes).
    fill(unsafe { std::slice::from_raw_parts_mut(begin, len) });
    // SAFETY: (1) a StringData slot, written unaligned; `begin + len` is the
    // end of the allocation.
    unsafe {
        dst.cast::<StringData>().write_unaligned(StringData {
            begin,
            end: begin.add(len),
        })
    };
    Ok(())
}

/// Stores `text` into the element at `dst` of text or bytes kind `kind`:
/// utf-8 for string, bytes and fixed_bytes (exactly N bytes), re-encoded
/// and zero padded for fixed_string (at most N code units), one character
/// for char. Nothing is written when it fails.
///
/// # Safety
/// 1. `dst` is a writable element of `kind`; `block` is the POD allocator
///    of its arrmeta (string and bytes).
/// 2. `text` does not borrow the destination's bytes (for the fixed-size
///    kinds).
pub(crate) unsafe fn store_text(
    kind: TextKind,
    block: Option<&MemBlock>,
    dst: *mut u8,
    text: &Text<'_>,
) -> std::result::Result<(), StoreError> {
    match kind {
        TextKind::String | TextKind::Bytes => {
            let len = text.utf8_len();
            // SAFETY: (1).
            unsafe { store_var(block, dst, len, |out| text.write_utf8(out)) }
                .map_err(StoreError::Alloc)
        }
        TextKind::FixedBytes(n) => {
            let len = text.utf8_len();
            if len != n {
                return Err(StoreError::Length(len));
            }
            // SAFETY: (1) n writable bytes; (2) not borrowed by `text`.
            text.write_utf8(unsafe { std::slice::from_raw_parts_mut(dst, n) });
            Ok(())
        }
        TextKind::FixedString(n, enc) => {
            let units = text.units_in(enc).map_err(StoreError::Unrepresentable)?;
            if units > n {
                return Err(StoreError::Length(units));
            }
            let unit = enc.unit_size();
            // SAFETY: (1) n code units of writable bytes; (2) not borrowed.
            let out = unsafe { std::slice::from_raw_parts_mut(dst, n * unit) };
            text.write_units(enc, out);
            out[units * unit..].fill(0);
            Ok(())
        }
        TextKind::Char => {
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => {
                    // SAFETY: (1) a char element: four bytes, unaligned.
                    unsafe { dst.cast::<u32>().write_unaligned(c as u32) };
                    Ok(())
                }
                (None, _) => Err(StoreError::Length(0)),
                (Some(_), Some(_)) => Err(StoreError::Length(2 + chars.count())),
            }
        }
    }
}

// ------------------------------------------------------- shared with JSON

/// Encodes `s` as code units of `enc`, native byte order (JSON input of
/// fixed_string).
pub(crate) fn encode(s: &str, enc: Encoding) -> std::result::Result<Vec<u8>, String> {
    let text = Text::Str(s);
    let units = text.units_in(enc).map_err(|c| {
        format!(
            "character {c:?} (U+{:04X}) cannot be encoded as {}",
            c as u32,
            enc.name()
        )
    })?;
    let mut out = vec![0u8; units * enc.unit_size()];
    text.write_units(enc, &mut out);
    Ok(out)
}

/// Decodes zero-padded code units of `enc` (stops at the first zero unit;
/// JSON output of fixed_string). Invalid data is an error.
pub(crate) fn decode(bytes: &[u8], enc: Encoding) -> std::result::Result<String, String> {
    let text = fixed_text(bytes, enc).map_err(|e| e.describe(&enc.name()))?;
    Ok(text.chars().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_text_validates_each_encoding() {
        let ne16 = |u: &[u16]| u.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        let ne32 = |u: &[u32]| u.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        assert!(matches!(
            fixed_text(b"ab\0\0", Encoding::Utf8),
            Ok(Text::Str("ab"))
        ));
        let (lone, bad32) = (ne16(&[0x41, 0xD800]), ne32(&[0x41, 0x110000]));
        #[rustfmt::skip]
        let invalid: [(&[u8], Encoding, Invalid); 5] = [
            (b"a\xe9", Encoding::Ascii, Invalid::Ascii { offset: 1, byte: 0xe9 }),
            (b"a\xff", Encoding::Utf8, Invalid::Utf8 { offset: 1, byte: 0xff }),
            (b"a\xc3", Encoding::Utf8, Invalid::Utf8Truncated { offset: 1 }),
            (&lone, Encoding::Utf16, Invalid::Surrogate { unit: 1, value: 0xD800 }),
            (&bad32, Encoding::Utf32, Invalid::CodePoint { unit: 1, value: 0x110000 }),
        ];
        for (bytes, enc, want) in invalid {
            assert_eq!(
                fixed_text(bytes, enc).unwrap_err(),
                want,
                "{bytes:?} as {enc:?}"
            );
        }
        let pair = ne16(&[0xD83D, 0xDE00, 0, 0]);
        assert_eq!(decode(&pair, Encoding::Utf16).unwrap(), "😀");
        assert!(decode(&pair, Encoding::Ucs2).is_err());
        let low_first = ne16(&[0xDC00, 0xD800]);
        assert!(fixed_text(&low_first, Encoding::Utf16).is_err());
        // Everything after the first zero unit is padding, even garbage.
        let padded = ne32(&[0x41, 0, 0xFFFF_FFFF]);
        assert_eq!(decode(&padded, Encoding::Utf32).unwrap(), "A");
    }

    #[test]
    fn encode_measures_and_rejects_unrepresentable() {
        for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
            let s = "aé😀";
            assert_eq!(decode(&encode(s, enc).unwrap(), enc).unwrap(), s);
        }
        assert!(
            encode("é", Encoding::Ascii)
                .unwrap_err()
                .contains("cannot be encoded as ascii")
        );
        assert!(encode("😀", Encoding::Ucs2).unwrap_err().contains("ucs2"));
        assert_eq!(Text::Str("aé😀").units_in(Encoding::Utf16), Ok(4));
        assert_eq!(Text::Str("aé😀").units_in(Encoding::Utf8), Ok(7));
        assert_eq!(Text::Str("aé").units_in(Encoding::Ucs2), Ok(2));
        assert_eq!(Text::Str("aé").units_in(Encoding::Ascii), Err('é'));
    }

    #[test]
    fn show_cuts_long_values() {
        let long = "x".repeat(100);
        let shown = Text::Str(&long).show();
        assert!(shown.ends_with("\"..."), "{shown}");
        assert_eq!(Text::Str("a\"b").show(), "\"a\\\"b\"");
        assert_eq!(show_bytes(&[0, 255]), "\"00ff\"");
    }
}
