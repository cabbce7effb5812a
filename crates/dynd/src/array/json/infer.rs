//! The type of a JSON text (DESIGN §8's inference rules).
//!
//! A streaming scanner: the text is read once, and each position of the
//! value (the elements of a list, the fields of an object) keeps a summary
//! of what was seen there, merged value by value; no value tree is built.
//! The summary becomes a type at the end:
//!
//! - the outermost list is `N *`; an inner list level is `M *` when every
//!   list there has length M, else `var *`;
//! - integers give `int64`, any float among them `float64` (an integer
//!   beyond int64's range counts as a float); `true`/`false` give `bool`;
//!   strings `string`;
//! - objects give structs, fields in first-seen order; a field absent from
//!   some objects is optional;
//! - `null` makes its position optional (`?int64`; a null where lists
//!   stand makes that list level optional: `[[1,2],null,[3,4]]` gives
//!   `3 * ?2 * int64`);
//! - a position where no value but `null` was seen (or none at all, as in
//!   the elements of empty lists) is `float64` (`?float64` with a null).
//!
//! Two kinds in one position (a string and a number, a list and an
//! object...) are a `Type` error naming the JSON path and both kinds.
//!
//! ```
//! use dynd::{infer_type, infer_type_lines};
//! assert_eq!(infer_type("[[1, 2], null, [3, 4]]").unwrap().to_string(), "3 * ?2 * int64");
//! assert_eq!(infer_type("[1, 2.5, null]").unwrap().to_string(), "3 * ?float64");
//! let t = infer_type_lines("{\"a\": 1}\n{\"a\": 2, \"b\": \"x\"}\n").unwrap();
//! assert_eq!(t.to_string(), "2 * {a: int64, b: ?string}");
//! let e = infer_type(r#"[{"a": 1}, {"a": "x"}]"#).unwrap_err();
//! assert!(e.message().contains("[1].a"), "{e}");
//! ```

use super::cursor::{self, Cursor, error_at, path_string, scan_number};
use super::lines::for_each_line;
use crate::error::{Error, Result};
use crate::types::Type;

/// Deepest nesting of lists and objects accepted.
const MAX_DEPTH: usize = 512;

/// What was seen at one position of the value.
#[derive(Default)]
struct Node {
    /// A `null` was seen here.
    nullable: bool,
    /// The kind of the values that were not null (`None`: none yet).
    kind: Option<Kind>,
}

enum Kind {
    Bool,
    Int,
    Float,
    Str,
    List {
        /// `Some(m)` while every list here had length m.
        len: Option<usize>,
        elem: Box<Node>,
    },
    Object {
        /// How many objects were seen here.
        count: usize,
        fields: Vec<Field>,
    },
}

struct Field {
    name: String,
    /// How many of the objects had this field.
    seen: usize,
    node: Node,
}

/// The kinds of a JSON value that a position can hold.
#[derive(Clone, Copy, PartialEq)]
enum Seen {
    Bool,
    Int,
    Float,
    Str,
    List,
    Object,
}

impl Seen {
    fn describe(self) -> &'static str {
        match self {
            Seen::Bool => "a boolean",
            Seen::Int | Seen::Float => "a number",
            Seen::Str => "a string",
            Seen::List => "a list",
            Seen::Object => "an object",
        }
    }
}

impl Kind {
    fn seen(&self) -> Seen {
        match self {
            Kind::Bool => Seen::Bool,
            Kind::Int => Seen::Int,
            Kind::Float => Seen::Float,
            Kind::Str => Seen::Str,
            Kind::List { .. } => Seen::List,
            Kind::Object { .. } => Seen::Object,
        }
    }
}

/// One step of a JSON path.
enum Seg {
    Index(usize),
    Key(String),
}

/// A failure while scanning: the error's text and kind, and the path from
/// the failing position outwards (segments are added as it returns).
struct Fail {
    error: Error,
    /// Whether the message still needs the path (a kind conflict).
    conflict: Option<(Seen, Seen)>,
    pos: usize,
    path: Vec<Seg>,
}

type Scan<T> = std::result::Result<T, Fail>;

struct Scanner<'j> {
    text: &'j [u8],
    pos: usize,
}

impl Fail {
    /// The user-facing error, with the path and the place in `text`.
    fn finish(self, text: &[u8]) -> Error {
        let path = path_string(self.path.iter().rev().map(|seg| match seg {
            Seg::Index(i) => cursor::Seg::Index(*i),
            Seg::Key(k) => cursor::Seg::Key(k),
        }));
        match self.conflict {
            Some((before, now)) => {
                let (line, col) = cursor::line_col(text, self.pos);
                Error::type_error(format!(
                    "cannot infer a type: at {} {} where earlier values are {} (JSON line {line}, column {col})",
                    if path.is_empty() { "the top" } else { &path },
                    now.describe(),
                    // "a number" reads "numbers" after "earlier values are".
                    plural(before),
                ))
            }
            None => error_at(
                self.error.kind(),
                text,
                self.pos,
                &path,
                self.error.message(),
            ),
        }
    }
}

fn plural(s: Seen) -> &'static str {
    match s {
        Seen::Bool => "booleans",
        Seen::Int | Seen::Float => "numbers",
        Seen::Str => "strings",
        Seen::List => "lists",
        Seen::Object => "objects",
    }
}

/// Adds `seg` to a failure's path on its way out.
fn within<T>(seg: impl FnOnce() -> Seg, r: Scan<T>) -> Scan<T> {
    r.map_err(|mut f| {
        f.path.push(seg());
        f
    })
}

impl Cursor for Scanner<'_> {
    #[inline]
    fn parts(&mut self) -> (&[u8], &mut usize) {
        (self.text, &mut self.pos)
    }
}

impl<'j> Scanner<'j> {
    fn fail(&self, msg: impl Into<String>) -> Fail {
        Fail {
            error: Error::parse(msg),
            conflict: None,
            pos: self.pos,
            path: Vec::new(),
        }
    }

    fn found(&mut self) -> String {
        match self.peek() {
            None => "the end of the text".into(),
            Some(c) if c.is_ascii_graphic() => format!("'{}'", c as char),
            Some(c) => format!("byte 0x{c:02x}"),
        }
    }

    fn expect(&mut self, c: u8, what: &str) -> Scan<()> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            let found = self.found();
            Err(self.fail(format!("expected {what}, found {found}")))
        }
    }

    /// Merges the kind `seen` into `node`, making its summary when it is
    /// the first; a conflict fails at the value's start `at`.
    fn merge<'n>(&self, node: &'n mut Node, seen: Seen, at: usize) -> Scan<&'n mut Kind> {
        let kind = node.kind.get_or_insert_with(|| match seen {
            Seen::Bool => Kind::Bool,
            Seen::Int => Kind::Int,
            Seen::Float => Kind::Float,
            Seen::Str => Kind::Str,
            Seen::List => Kind::List {
                len: None,
                elem: Box::default(),
            },
            Seen::Object => Kind::Object {
                count: 0,
                fields: Vec::new(),
            },
        });
        let before = kind.seen();
        match (before, seen) {
            (a, b) if a == b => {}
            (Seen::Int, Seen::Float) => *kind = Kind::Float,
            (Seen::Float, Seen::Int) => {}
            _ => {
                return Err(Fail {
                    error: Error::type_error("conflicting kinds"),
                    conflict: Some((before, seen)),
                    pos: at,
                    path: Vec::new(),
                });
            }
        }
        Ok(kind)
    }

    /// Scans one value, merging what it is into `node`.
    fn value(&mut self, node: &mut Node, depth: usize) -> Scan<()> {
        if depth > MAX_DEPTH {
            return Err(self.fail("JSON nested too deeply"));
        }
        let at = match self.peek() {
            None => return Err(self.fail("expected a JSON value, found the end of the text")),
            Some(_) => self.pos,
        };
        let first = self.text[at];
        match first {
            b'n' if self.literal(b"null") => {
                node.nullable = true;
                Ok(())
            }
            b't' | b'f' if self.literal(b"true") || self.literal(b"false") => {
                self.merge(node, Seen::Bool, at).map(|_| ())
            }
            b'"' => {
                self.string(false)?;
                self.merge(node, Seen::Str, at).map(|_| ())
            }
            b'[' => {
                self.pos += 1;
                let Kind::List { len, elem } = self.merge(node, Seen::List, at)? else {
                    return Ok(());
                };
                let n = self.items(elem, depth)?;
                // A list's summary: the first one's length, kept while the
                // others agree.
                match len {
                    None => *len = Some(n),
                    Some(m) if *m == n => {}
                    _ => *len = Some(usize::MAX),
                }
                Ok(())
            }
            b'{' => {
                self.pos += 1;
                let Kind::Object { count, fields } = self.merge(node, Seen::Object, at)? else {
                    return Ok(());
                };
                *count += 1;
                self.object(fields, depth)
            }
            b'-' | b'0'..=b'9' | b'N' | b'I' => {
                let seen = self.number()?;
                self.merge(node, seen, at).map(|_| ())
            }
            _ => {
                let found = self.found();
                Err(self.fail(format!("expected a JSON value, found {found}")))
            }
        }
    }

    /// The items of a list whose `[` was read, merged into `elem`; returns
    /// their count.
    fn items(&mut self, elem: &mut Node, depth: usize) -> Scan<usize> {
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(0);
        }
        let mut i = 0;
        loop {
            within(|| Seg::Index(i), self.value(elem, depth + 1))?;
            i += 1;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(i);
                }
                _ => {
                    let found = self.found();
                    return Err(
                        self.fail(format!("expected ',' or ']' in the list, found {found}"))
                    );
                }
            }
        }
    }

    /// The members of an object whose `{` was read, merged into `fields`.
    fn object(&mut self, fields: &mut Vec<Field>, depth: usize) -> Scan<()> {
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        // Keys usually come in the same order: try the next field first.
        let mut next = 0;
        // The fields this object has had, to refuse a duplicate key.
        let mut had: Vec<usize> = Vec::new();
        loop {
            if self.peek() != Some(b'"') {
                let found = self.found();
                return Err(self.fail(format!(
                    "expected a string key in the object, found {found}"
                )));
            }
            let key_at = self.pos;
            let key = self.string(true)?;
            self.expect(b':', "':' after the object key")?;
            let i = match fields.get(next) {
                Some(f) if f.name == key => next,
                _ => match fields.iter().position(|f| f.name == key) {
                    Some(i) => i,
                    None => {
                        fields.push(Field {
                            name: key.clone(),
                            seen: 0,
                            node: Node::default(),
                        });
                        fields.len() - 1
                    }
                },
            };
            if had.contains(&i) {
                self.pos = key_at;
                return Err(self.fail(format!("duplicate key {key:?}")));
            }
            had.push(i);
            next = i + 1;
            fields[i].seen += 1;
            within(|| Seg::Key(key), self.value(&mut fields[i].node, depth + 1))?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    let found = self.found();
                    return Err(
                        self.fail(format!("expected ',' or '}}' in the object, found {found}"))
                    );
                }
            }
        }
    }

    /// Reads a string at its opening quote; returns its value when `keep`
    /// (object keys), else an empty string.
    fn string(&mut self, keep: bool) -> Scan<String> {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let run = self.text[self.pos..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .map_or(self.text.len(), |k| self.pos + k);
            if keep {
                out.extend_from_slice(&self.text[self.pos..run]);
            }
            self.pos = run;
            match self.text.get(run) {
                None => {
                    self.pos = start;
                    return Err(self.fail("unterminated string"));
                }
                Some(b'"') => {
                    self.pos += 1;
                    // Runs end at ASCII bytes of valid utf-8 text, and
                    // escapes push whole characters.
                    return Ok(String::from_utf8(out).unwrap_or_default());
                }
                Some(b'\\') => {
                    let esc = self.text.get(run + 1).copied();
                    let c = match esc {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.pos = run + 2;
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                if self.text.get(self.pos..self.pos + 2) != Some(b"\\u") {
                                    return Err(
                                        self.fail(format!("lone surrogate \\u{hi:04x} in string"))
                                    );
                                }
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(
                                        self.fail(format!("lone surrogate \\u{hi:04x} in string"))
                                    );
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return Err(
                                    self.fail(format!("lone surrogate \\u{hi:04x} in string"))
                                );
                            } else {
                                hi
                            };
                            if keep {
                                let c = char::from_u32(code).unwrap_or('\u{fffd}');
                                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                            }
                            continue;
                        }
                        _ => return Err(self.fail("invalid escape in string")),
                    };
                    if keep {
                        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                    self.pos = run + 2;
                }
                Some(_) => {
                    return Err(self.fail("control character in string (must be escaped)"));
                }
            }
        }
    }

    fn hex4(&mut self) -> Scan<u32> {
        self.hex4_digits()
            .ok_or_else(|| self.fail("expected 4 hex digits after \\u"))
    }

    /// Reads a number (or `NaN`, `Infinity`, `-Infinity`): an integer in
    /// int64's range, or a float.
    fn number(&mut self) -> Scan<Seen> {
        for special in [&b"NaN"[..], b"Infinity", b"-Infinity"] {
            if self.literal(special) {
                return Ok(Seen::Float);
            }
        }
        let start = self.pos;
        let n = scan_number(self.text, start);
        if !n.well_formed {
            return Err(self.fail("malformed number"));
        }
        self.pos = n.end;
        if n.float {
            return Ok(Seen::Float);
        }
        // Up to 18 digits always fit; longer ones are checked.
        let fits = n.int_len <= 18
            || std::str::from_utf8(&self.text[start..n.end])
                .ok()
                .and_then(|s| s.parse::<i64>().ok())
                .is_some();
        Ok(if fits { Seen::Int } else { Seen::Float })
    }

    /// After the value: nothing but whitespace up to the end.
    fn end(&mut self) -> Scan<()> {
        if self.peek().is_some() {
            return Err(self.fail("unexpected text after the JSON value"));
        }
        Ok(())
    }
}

/// The type of a position's summary (`optional`: also when no null was
/// seen, for a field some objects lack).
fn node_type(node: &Node, optional: bool) -> Result<Type> {
    let base = match &node.kind {
        None | Some(Kind::Float) => Type::float64(),
        Some(Kind::Bool) => Type::bool(),
        Some(Kind::Int) => Type::int64(),
        Some(Kind::Str) => Type::string(),
        Some(Kind::List { len, elem }) => {
            let elem = node_type(elem, false)?;
            match len {
                Some(m) if *m != usize::MAX => Type::fixed_dim(*m, elem),
                _ => Type::var_dim(elem),
            }
        }
        Some(Kind::Object { count, fields }) => Type::struct_of(
            fields
                .iter()
                .map(|f| Ok((f.name.clone(), node_type(&f.node, f.seen < *count)?)))
                .collect::<Result<Vec<(String, Type)>>>()?,
        )?,
    };
    if optional || node.nullable {
        Type::option(base)
    } else {
        Ok(base)
    }
}

/// Infers the type of a JSON text by DESIGN §8's rules; the text then
/// reads with [`Array::from_json`](crate::Array::from_json) under that type.
/// A streaming scan: no value tree is built.
///
/// - the outermost list is `N *`; an inner list level is `M *` when every
///   list there has length M, else `var *` (`[[1, 2], [3]]` gives
///   `2 * var * int64`, `[[1, 2], [3, 4]]` gives `2 * 2 * int64`);
/// - integers give `int64`, any float among them `float64` (an integer
///   beyond int64's range counts as a float); `true`/`false` give `bool`;
///   strings `string`;
/// - objects give structs, fields in first-seen order; a field absent from
///   some objects is optional;
/// - `null` makes its position optional (`[1, 2.5, null]` gives
///   `3 * ?float64`); a null where lists stand makes that list level
///   optional (`[[1, 2], null, [3, 4]]` gives `3 * ?2 * int64`);
/// - a position where nothing but `null` was seen (or nothing, as in the
///   items of empty lists) is `float64` (`?float64` with a null).
///
/// Errors: `Parse` for malformed JSON (line and column); `Type` when one
/// position holds two kinds of value, naming the path (`[3].name`) and both
/// kinds.
///
/// ```
/// use dynd::{Array, infer_type};
/// let text = r#"[{"x": 1, "tags": ["a"]}, {"x": 2.5, "tags": []}]"#;
/// let t = infer_type(text).unwrap();
/// assert_eq!(t.to_string(), "2 * {x: float64, tags: var * string}");
/// assert_eq!(Array::from_json(&t, text).unwrap().to_json(),
///            r#"[{"x":1.0,"tags":["a"]},{"x":2.5,"tags":[]}]"#);
/// ```
pub fn infer_type(json: &str) -> Result<Type> {
    let text = json.as_bytes();
    let mut s = Scanner { text, pos: 0 };
    let mut root = Node::default();
    let scanned = (|| {
        if s.peek() == Some(b'[') {
            // The outermost list: its length is N, its items one position.
            s.pos += 1;
            let mut elem = Node::default();
            let n = s.items(&mut elem, 1)?;
            s.end()?;
            Ok(Some((n, elem)))
        } else {
            s.value(&mut root, 0)?;
            s.end()?;
            Ok(None)
        }
    })();
    match scanned.map_err(|f: Fail| f.finish(text))? {
        Some((n, elem)) => Ok(Type::fixed_dim(n, node_type(&elem, false)?)),
        None => node_type(&root, false),
    }
}

/// Infers the type of JSON Lines text: `N * T`, N the number of non-blank
/// lines and T what [`infer_type`]'s rules give for the lines taken as the
/// items of one list. Paths in errors start with the line's index among the
/// values (`[3].name`), and the message gives the line number.
///
/// ```
/// use dynd::{Array, infer_type_lines};
/// let text = "[1, 2]\n\n[3]\n";
/// let t = infer_type_lines(text).unwrap();
/// assert_eq!(t.to_string(), "2 * var * int64");
/// assert_eq!(Array::from_json_lines(&t, text).unwrap().to_json(), "[[1,2],[3]]");
/// ```
pub fn infer_type_lines(text: &str) -> Result<Type> {
    let bytes = text.as_bytes();
    let mut elem = Node::default();
    let mut n = 0usize;
    for_each_line(bytes, 0, bytes.len(), |first, line_end| {
        // The scanner sees the text up to the end of the line, so a value
        // cannot go on to the next one, and positions count from the start.
        let mut s = Scanner {
            text: &bytes[..line_end],
            pos: first,
        };
        let r = within(|| Seg::Index(n), s.value(&mut elem, 1)).and_then(|()| {
            s.end().map_err(|mut f| {
                f.error = Error::parse(
                    "unexpected text after the JSON value (JSON Lines hold one value per line)",
                );
                f
            })
        });
        r.map_err(|f| f.finish(bytes))?;
        n += 1;
        Ok(())
    })?;
    Ok(Type::fixed_dim(n, node_type(&elem, false)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_name_path_and_kinds() {
        let e = infer_type(r#"[{"a": [1]}, {"a": [true]}]"#).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Type);
        assert!(
            e.message()
                .contains("[1].a[0] a boolean where earlier values are numbers"),
            "{e}"
        );
    }
}
