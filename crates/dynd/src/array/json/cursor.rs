//! What the two JSON readers (the type-directed parser and the inference
//! scanner) share: a cursor over the text's bytes, and the way an error
//! names its place (line, column and path).

use crate::error::{Error, ErrorKind};
use std::fmt::{self, Write};

/// One step of a path into a JSON value.
#[derive(Clone, Copy)]
pub(super) enum Seg<'k> {
    Index(usize),
    Key(&'k str),
}

/// A reader's place in its text. The scanning methods are written once
/// here; a reader only says where its text and position live.
pub(super) trait Cursor {
    /// The text, and the position of the next unread byte in it.
    fn parts(&mut self) -> (&[u8], &mut usize);

    /// Skips white space.
    #[inline]
    fn ws(&mut self) {
        let (text, pos) = self.parts();
        *pos = skip_ws(text, *pos);
    }

    /// The next byte after white space, not consumed.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        let (text, pos) = self.parts();
        text.get(*pos).copied()
    }

    /// Consumes `word` (after white space) when it stands next as a whole
    /// word, not the start of a longer one.
    fn literal(&mut self, word: &[u8]) -> bool {
        self.ws();
        let (text, pos) = self.parts();
        if text[*pos..].starts_with(word)
            && !text
                .get(*pos + word.len())
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            *pos += word.len();
            true
        } else {
            false
        }
    }

    /// Consumes the 4 hex digits of a `\u` escape; `None` (nothing
    /// consumed) when they are not there.
    fn hex4_digits(&mut self) -> Option<u32> {
        let (text, pos) = self.parts();
        let digits = text.get(*pos..*pos + 4)?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        *pos += 4;
        std::str::from_utf8(digits)
            .ok()
            .and_then(|s| u32::from_str_radix(s, 16).ok())
    }
}

/// The first byte at or after `pos` of `t` that is not white space.
#[inline(always)]
pub(super) fn skip_ws(t: &[u8], mut pos: usize) -> usize {
    while let Some(&b) = t.get(pos) {
        // Every token starts above b' ', which settles most calls in one
        // comparison.
        if b > b' ' || !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        pos += 1;
    }
    pos
}

/// A path as the user reads it: `[1][0].x`, `["not an identifier"]`.
pub(super) fn path_string<'k>(path: impl IntoIterator<Item = Seg<'k>>) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Index(i) => {
                let _ = write!(s, "[{i}]");
            }
            Seg::Key(k) if crate::types::is_identifier(k) => {
                let _ = write!(s, ".{k}");
            }
            Seg::Key(k) => {
                let _ = write!(s, "[{k:?}]");
            }
        }
    }
    s
}

/// The error `msg` at byte `pos` of `text`, at `path` in the value.
pub(super) fn error_at(
    kind: ErrorKind,
    text: &[u8],
    pos: usize,
    path: &str,
    msg: impl fmt::Display,
) -> Error {
    let (line, col) = line_col(text, pos);
    let at = if path.is_empty() {
        String::new()
    } else {
        format!(" at {path}")
    };
    Error::new(kind, format!("JSON line {line}, column {col}{at}: {msg}"))
}

/// The 1-based line and column (in characters) of byte `pos` of `text`.
pub(super) fn line_col(text: &[u8], pos: usize) -> (usize, usize) {
    let before = &text[..pos.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let col = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, col)
}

/// The extent of a JSON number token (RFC 8259's grammar) starting at a
/// byte of a text: what [`scan_number`] finds.
pub(super) struct NumberToken {
    /// The byte after the token.
    pub end: usize,
    /// How many digits the integer part has.
    pub int_len: usize,
    /// It has a fraction or an exponent.
    pub float: bool,
    /// It follows the grammar, and no letter, digit or `.` follows it.
    pub well_formed: bool,
}

/// Reads the number token at byte `start` of `text` (the specials `NaN`,
/// `Infinity` and `-Infinity` are the caller's).
#[inline]
pub(super) fn scan_number(t: &[u8], start: usize) -> NumberToken {
    let digits = |mut i: usize| {
        while t.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut i = start;
    if t.get(i) == Some(&b'-') {
        i += 1;
    }
    let int_start = i;
    i = digits(i);
    let int_len = i - int_start;
    let mut bad = int_len == 0 || (int_len > 1 && t[int_start] == b'0');
    let mut float = false;
    if t.get(i) == Some(&b'.') {
        float = true;
        let s = i + 1;
        i = digits(s);
        bad |= i == s;
    }
    if matches!(t.get(i), Some(b'e' | b'E')) {
        float = true;
        i += 1;
        if matches!(t.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let s = i;
        i = digits(s);
        bad |= i == s;
    }
    bad |= !may_follow_number(t.get(i));
    NumberToken {
        end: i,
        int_len,
        float,
        well_formed: !bad,
    }
}

/// Whether byte `b` (`None`: the end of the text) may follow a number
/// token: anything but a letter, a digit or `.`.
#[inline(always)]
pub(super) fn may_follow_number(b: Option<&u8>) -> bool {
    !b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'.')
}
