//! The datashape parser: text → [`Type`].
//!
//! A hand-written recursive-descent parser over a small on-demand lexer.
//! Printing a parsed type gives canonical text ([`super::print`]), and
//! parsing canonical text gives back the same type.
//!
//! # Grammar
//!
//! ```text
//! datashape = type END
//! type      = { dim ( "*" | "**" INT "*" ) } dtype
//! dim       = INT | "fixed" "[" INT "]" | "var" | "Fixed" | "Dim" | UPPER_IDENT
//!           | [ UPPER_IDENT ] "..."
//! dtype     = builtin | "string" | "bytes" | "char"
//!           | "complex" [ "[" ( "float32" | "float64" ) "]" ]
//!           | "fixed_string" "[" INT [ "," STRING ] "]"
//!           | "fixed_bytes" "[" INT [ "," "align" "=" INT ] "]"
//!           | "pointer" "[" type "]"
//!           | "option" "[" type "]" | "?" type
//!           | "{" [ name ":" type { "," name ":" type } [ "," ] ] "}"
//!           | "(" [ arg { "," arg } [ "," ] ] ")" [ "->" type ]
//!           | "Any" | UPPER_IDENT
//! arg       = [ name ":" ] type
//! name      = IDENT | STRING
//! ```
//!
//! - `fixed[N] * T` (libdynd's older spelling) is read as `N * T`.
//! - `N ** K * T` repeats the dim `N` K times (K ≥ 1): `7**3 * int32` is
//!   `7 * 7 * 7 * int32`.
//! - An `UPPER_IDENT` (an identifier starting with an upper-case letter)
//!   followed by `*` is a dim variable, followed by `...` a named ellipsis,
//!   and otherwise a type variable.
//! - A parenthesised list followed by `->` is a callable type: positional
//!   arguments first, then keyword arguments. Otherwise it is a tuple, whose
//!   fields have no names.
//! - `STRING` is single- or double-quoted, with the escapes `\'`, `\"`, `\\`,
//!   `\n`, `\t`, `\r` and `\uXXXX` (a surrogate pair for characters beyond the
//!   basic plane).
//! - Spaces, tabs, newlines and `#` comments (to the end of the line) may
//!   appear between any two tokens.
//!
//! # Errors
//!
//! Every error is an [`ErrorKind::Parse`](crate::ErrorKind::Parse) error whose
//! message starts with the position, `line L, column C: ` (1-based, columns
//! counted in characters), followed by what was wrong there. The parser never
//! panics: sizes use checked arithmetic, a type's data may not exceed
//! `isize::MAX` bytes, and types may nest at most [`MAX_DEPTH`] levels.

use super::print::write_quoted;
use super::{BuiltinType, CallableSignature, Encoding, SymbolicDim, Type, TypeKind};
use crate::error::{Error, Result};
use std::collections::HashSet;
use std::fmt;

/// How deeply a type may nest. Each dim and each bracketed or `?` level
/// counts one; deeper input is an error ("nesting too deep") rather than a
/// stack overflow.
pub(crate) const MAX_DEPTH: usize = 256;

/// The largest data size a type may have: sizes and strides are `intptr_t`.
const MAX_DATA_SIZE: usize = isize::MAX as usize;

/// How many characters of the input an error message quotes at most.
const SNIPPET_CHARS: usize = 40;

/// Parses datashape `text` into a [`Type`]. The whole input must be one type.
pub(crate) fn parse(text: &str) -> Result<Type> {
    let mut parser = Parser { text, pos: 0 };
    let tp = parser.parse_type(1)?;
    let next = parser.peek()?;
    if next.tok != Tok::End {
        return Err(parser.error_at(
            next.start,
            format!(
                "unexpected {} after the type; expected end of input",
                parser.describe(&next)
            ),
        ));
    }
    Ok(tp)
}

/// The 1-based line and column (in characters) of byte `offset` in `text`.
/// An offset past the end, or inside a character, is moved back to the
/// nearest character boundary.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = text.get(..offset).unwrap_or_default();
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).unwrap_or_default().chars().count() + 1;
    (line, column)
}

// ---------------------------------------------------------------------------
// Lexer
// ---------------------------------------------------------------------------

/// What a token is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok<'a> {
    /// An identifier: `[A-Za-z_][A-Za-z0-9_]*`.
    Ident(&'a str),
    /// A non-negative integer: `[0-9]+` (not yet converted, so that huge
    /// numbers are reported where they are used).
    Int(&'a str),
    /// A quoted string, escapes decoded.
    Str(String),
    /// `*`
    Star,
    /// `**`
    StarStar,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `=`
    Equals,
    /// `?`
    Question,
    /// `->`
    Arrow,
    /// `...`
    Ellipsis,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// A character that starts no token.
    Unknown(char),
    /// The end of the input.
    End,
}

/// A token and the byte range `start..end` of its text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Token<'a> {
    tok: Tok<'a>,
    start: usize,
    end: usize,
}

/// The byte offset of the first character at or after `pos` that is neither
/// whitespace nor part of a `#` comment.
fn skip_trivia(text: &str, pos: usize) -> usize {
    let mut in_comment = false;
    for (i, c) in text.get(pos..).unwrap_or_default().char_indices() {
        match c {
            '\n' => in_comment = false,
            _ if in_comment => {}
            ' ' | '\t' | '\r' => {}
            '#' => in_comment = true,
            _ => return pos + i,
        }
    }
    text.len()
}

/// Lexes the token that starts at or after byte `pos` of `text`.
fn lex(text: &str, pos: usize) -> Result<Token<'_>> {
    let start = skip_trivia(text, pos);
    let rest = text.get(start..).unwrap_or_default();
    let token = |tok, len: usize| {
        Ok(Token {
            tok,
            start,
            end: start + len,
        })
    };
    let Some(c) = rest.chars().next() else {
        return token(Tok::End, 0);
    };
    match c {
        '*' if rest.starts_with("**") => token(Tok::StarStar, 2),
        '*' => token(Tok::Star, 1),
        '-' if rest.starts_with("->") => token(Tok::Arrow, 2),
        '.' if rest.starts_with("...") => token(Tok::Ellipsis, 3),
        ',' => token(Tok::Comma, 1),
        ':' => token(Tok::Colon, 1),
        '=' => token(Tok::Equals, 1),
        '?' => token(Tok::Question, 1),
        '[' => token(Tok::LBracket, 1),
        ']' => token(Tok::RBracket, 1),
        '(' => token(Tok::LParen, 1),
        ')' => token(Tok::RParen, 1),
        '{' => token(Tok::LBrace, 1),
        '}' => token(Tok::RBrace, 1),
        '\'' | '"' => lex_string(text, start, c),
        '0'..='9' => {
            let len = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            let (digits, _) = rest.split_at(len);
            token(Tok::Int(digits), len)
        }
        c if c.is_ascii_alphabetic() || c == '_' => {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let (ident, _) = rest.split_at(len);
            token(Tok::Ident(ident), len)
        }
        c => token(Tok::Unknown(c), c.len_utf8()),
    }
}

/// Lexes the string whose opening `quote` is at byte `start` of `text`.
fn lex_string(text: &str, start: usize, quote: char) -> Result<Token<'_>> {
    let body_start = start + quote.len_utf8();
    let mut chars = text
        .get(body_start..)
        .unwrap_or_default()
        .char_indices()
        .map(|(i, c)| (body_start + i, c));
    let mut value = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c == quote => {
                return Ok(Token {
                    tok: Tok::Str(value),
                    start,
                    end: i + c.len_utf8(),
                });
            }
            '\\' => {
                let escaped = match chars.next() {
                    Some((_, '\'')) => '\'',
                    Some((_, '"')) => '"',
                    Some((_, '\\')) => '\\',
                    Some((_, 'n')) => '\n',
                    Some((_, 't')) => '\t',
                    Some((_, 'r')) => '\r',
                    Some((_, 'u')) => lex_unicode_escape(text, i, &mut chars)?,
                    Some((_, other)) => {
                        return Err(error_at(
                            text,
                            i,
                            format!(
                                "invalid escape '\\{}' in quoted string; expected one of \\' \\\" \\\\ \\n \\t \\r \\uXXXX",
                                other.escape_debug()
                            ),
                        ));
                    }
                    None => break,
                };
                value.push(escaped);
            }
            c => value.push(c),
        }
    }
    Err(error_at(
        text,
        start,
        "unterminated quoted string: no closing quote before the end of input",
    ))
}

/// Decodes the `XXXX` of a `\uXXXX` escape whose backslash is at byte
/// `backslash`; a high surrogate must be followed by `\u` and a low one.
fn lex_unicode_escape<I: Iterator<Item = (usize, char)>>(
    text: &str,
    backslash: usize,
    chars: &mut I,
) -> Result<char> {
    let invalid = |what: &str| {
        error_at(
            text,
            backslash,
            format!("invalid unicode escape in quoted string: {what}"),
        )
    };
    let hex4 = |chars: &mut I| -> Result<u32> {
        let mut value = 0u32;
        for _ in 0..4 {
            let digit = chars
                .next()
                .and_then(|(_, c)| c.to_digit(16))
                .ok_or_else(|| invalid("expected four hex digits after \\u"))?;
            value = value * 16 + digit;
        }
        Ok(value)
    };
    let first = hex4(chars)?;
    let code = match first {
        0xD800..=0xDBFF => {
            let backslash_u =
                matches!(chars.next(), Some((_, '\\'))) && matches!(chars.next(), Some((_, 'u')));
            let second = if backslash_u { hex4(chars)? } else { 0 };
            if !(0xDC00..=0xDFFF).contains(&second) {
                return Err(invalid(
                    "a high surrogate \\uD800-\\uDBFF must be followed by a low surrogate \\uDC00-\\uDFFF",
                ));
            }
            0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        }
        code => code,
    };
    char::from_u32(code)
        .ok_or_else(|| invalid(&format!("U+{code:04X} is not a unicode scalar value")))
}

/// A parse error at byte `offset` of `text`: `line L, column C: message`.
fn error_at(text: &str, offset: usize, message: impl fmt::Display) -> Error {
    let (line, column) = line_column(text, offset);
    Error::parse(format!("line {line}, column {column}: {message}"))
}

/// `text` cut to at most [`SNIPPET_CHARS`] characters (with `...` when cut).
fn snippet(text: &str) -> String {
    match text.char_indices().nth(SNIPPET_CHARS) {
        Some((cut, _)) => format!("{}...", text.get(..cut).unwrap_or_default()),
        None => text.to_owned(),
    }
}

/// A type for an error message: its canonical text, quoted and shortened.
fn describe_type(tp: &Type) -> String {
    format!("'{}'", snippet(&tp.to_string()))
}

/// A name for an error message, quoted the way datashape quotes it.
fn describe_name(name: &str) -> String {
    let mut quoted = String::new();
    // Writing to a String cannot fail.
    let _ = write_quoted(&snippet(name), &mut quoted);
    quoted
}

/// `true` for an identifier that starts with an upper-case letter: a type
/// variable, a dim variable or an ellipsis name.
fn is_upper_ident(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
}

// ---------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------
//
// The functions that recurse (`parse_type` → `parse_dtype` → `parse_option`,
// `parse_pointer`, `parse_struct` or `parse_tuple_or_callable` →
// `parse_items` → `parse_type`) are kept small on purpose: everything that
// does not recurse (reading a dim list or the first tokens of a data type,
// separators, building the types, every error message) lives in helpers, so
// that one nesting level costs little stack even in a debug build (about
// 2.3 KiB for a tuple level), and input nested `MAX_DEPTH` deep parses well
// within a 2 MiB thread stack.

/// One dimension of a dim list (`3`, `var`, `Fixed`, `N`, `...`), before the
/// element type is known.
#[derive(Debug, Clone)]
enum Dim {
    Fixed(usize),
    Var,
    Symbolic(SymbolicDim),
}

/// A data type after its first tokens: either complete, or the kind of type
/// whose children come next.
enum DtypeStart {
    /// A type without children (a builtin, `string`, `fixed_string[...]`...).
    Leaf(Type),
    /// `?`, or `option[` when `bracket`: the value type comes next.
    Option { bracket: bool },
    /// `pointer[`: the target type comes next.
    Pointer,
    /// `{` at this byte offset: the fields come next.
    Struct(usize),
    /// `(` at this byte offset: a tuple's fields or a callable's arguments
    /// come next.
    Paren(usize),
}

/// A field of a struct, or an argument of a tuple or callable: an optional
/// name, the type, and the byte offsets where the name and type start.
struct Item {
    name: Option<String>,
    name_start: usize,
    tp: Type,
    tp_start: usize,
}

/// The parser state: the input and the byte offset after the last token
/// consumed.
struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    // --- the recursive descent -------------------------------------------

    /// `type = { dim ("*" | "**" INT "*") } dtype`, at nesting `depth`.
    fn parse_type(&mut self, depth: usize) -> Result<Type> {
        let dims = self.parse_dims(depth)?;
        let elem_start = self.next_start();
        let elem = self.parse_dtype(depth + dims.len())?;
        self.apply_dims(dims, elem, elem_start)
    }

    /// A data type (anything but a dimension), at nesting `depth`.
    fn parse_dtype(&mut self, depth: usize) -> Result<Type> {
        match self.parse_dtype_start()? {
            DtypeStart::Leaf(tp) => Ok(tp),
            DtypeStart::Option { bracket } => self.parse_option(depth, bracket),
            DtypeStart::Pointer => self.parse_pointer(depth),
            DtypeStart::Struct(open) => self.parse_struct(depth, open),
            DtypeStart::Paren(open) => self.parse_tuple_or_callable(depth, open),
        }
    }

    /// The value type of `?` or `option[` (`bracket`), and the option.
    fn parse_option(&mut self, depth: usize, bracket: bool) -> Result<Type> {
        let value_start = self.next_start();
        let value = self.parse_type(depth + 1)?;
        if bracket {
            self.close_bracket("option")?;
        }
        self.make_option(value, value_start)
    }

    /// The target type of `pointer[`, and the pointer.
    fn parse_pointer(&mut self, depth: usize) -> Result<Type> {
        let target = self.parse_type(depth + 1)?;
        self.close_bracket("pointer")?;
        Ok(Type::pointer(target))
    }

    /// The fields of a struct whose `{` is at byte `open`, and the struct.
    fn parse_struct(&mut self, depth: usize, open: usize) -> Result<Type> {
        let fields = self.parse_items(depth, true)?;
        self.make_struct(fields, open)
    }

    /// The rest of a tuple or a callable whose `(` is at byte `open`.
    fn parse_tuple_or_callable(&mut self, depth: usize, open: usize) -> Result<Type> {
        let items = self.parse_items(depth, false)?;
        if !self.eat(&Tok::Arrow)? {
            return self.make_tuple(items, open);
        }
        let ret = self.parse_type(depth + 1)?;
        self.make_callable(items, ret)
    }

    /// The comma-separated items of a struct (`is_struct`: `name: type`
    /// each) or of a tuple or callable (`[name:] type` each), up to and
    /// including the closing bracket; a trailing comma is allowed.
    fn parse_items(&mut self, depth: usize, is_struct: bool) -> Result<Vec<Item>> {
        let mut items = Vec::new();
        while let Some((name, name_start)) = self.parse_item_start(is_struct)? {
            let tp_start = self.next_start();
            let tp = self.parse_type(depth + 1)?;
            items.push(Item {
                name,
                name_start,
                tp,
                tp_start,
            });
            if !self.parse_item_end(is_struct)? {
                break;
            }
        }
        Ok(items)
    }

    // --- dims ----------------------------------------------------------------

    /// The dim list at the start of a type at nesting `depth`, each dim with
    /// the byte offset where it starts (repeated dims expanded).
    fn parse_dims(&mut self, depth: usize) -> Result<Vec<(Dim, usize)>> {
        self.check_depth(depth, self.next_start())?;
        let mut dims: Vec<(Dim, usize)> = Vec::new();
        let mut seen_ellipsis = false;
        loop {
            let head = self.peek()?;
            let Some(dim) = self.parse_dim_head(&head)? else {
                return Ok(dims);
            };
            let count = self.parse_dim_star(head.start)?;
            let total = dims.len().saturating_add(count);
            self.check_depth(depth.saturating_add(total), head.start)?;
            if matches!(dim, Dim::Symbolic(SymbolicDim::Ellipsis(_))) {
                if seen_ellipsis || count > 1 {
                    return Err(self.error_at(
                        head.start,
                        "only one ellipsis dimension ('...') is allowed in a list of dimensions",
                    ));
                }
                seen_ellipsis = true;
            }
            dims.extend(std::iter::repeat_n((dim, head.start), count));
        }
    }

    /// If `head` (the next token) starts a dimension, consumes the dimension
    /// (but not the `*` after it) and returns it.
    fn parse_dim_head(&mut self, head: &Token<'a>) -> Result<Option<Dim>> {
        let mut end = head.end;
        let dim = match head.tok {
            Tok::Int(digits) => Dim::Fixed(self.int_value(digits, head.start, "dimension size")?),
            Tok::Ident("var") => Dim::Var,
            // libdynd's older spelling of a fixed dim: `fixed[3] * T`.
            Tok::Ident("fixed") if self.peek_after(head)?.tok == Tok::LBracket => {
                self.pos = head.end;
                self.expect(Tok::LBracket, "'[' after 'fixed'")?;
                let (size, _) = self.expect_int("the size of the fixed dimension")?;
                self.expect(Tok::RBracket, "']' to close 'fixed['")?;
                end = self.pos;
                Dim::Fixed(size)
            }
            Tok::Ident("Fixed") => Dim::Symbolic(SymbolicDim::Fixed),
            Tok::Ident("Dim") => Dim::Symbolic(SymbolicDim::Any),
            Tok::Ellipsis => Dim::Symbolic(SymbolicDim::Ellipsis(None)),
            // `Any` is a type, never a dimension.
            Tok::Ident(name) if is_upper_ident(name) && name != "Any" => {
                let next = self.peek_after(head)?;
                match next.tok {
                    Tok::Star | Tok::StarStar => Dim::Symbolic(SymbolicDim::Named(name.to_owned())),
                    Tok::Ellipsis => {
                        end = next.end;
                        Dim::Symbolic(SymbolicDim::Ellipsis(Some(name.to_owned())))
                    }
                    _ => return Ok(None),
                }
            }
            _ => return Ok(None),
        };
        self.pos = end;
        Ok(Some(dim))
    }

    /// After a dimension that started at byte `dim_start`: consumes `*` or
    /// `** INT *` and returns how many times the dimension repeats.
    fn parse_dim_star(&mut self, dim_start: usize) -> Result<usize> {
        let star = self.peek()?;
        match star.tok {
            Tok::Star => {
                self.advance(&star);
                Ok(1)
            }
            Tok::StarStar => {
                self.advance(&star);
                let (count, token) = self.expect_int("a repeat count after '**'")?;
                if count == 0 {
                    return Err(self.error_at(
                        token.start,
                        "a dimension repeat count must be at least 1, got 0",
                    ));
                }
                self.expect(Tok::Star, "'*' after the repeat count")?;
                Ok(count)
            }
            _ => {
                let dim = self.text.get(dim_start..self.pos).unwrap_or_default();
                Err(self.error_at(
                    star.start,
                    format!(
                        "expected '*' after the dimension '{}', found {}",
                        snippet(dim),
                        self.describe(&star)
                    ),
                ))
            }
        }
    }

    /// Wraps `elem` (which started at byte `elem_start`) in `dims`, checking
    /// that nothing but a dimension is followed by `*` and that the data
    /// size stays in range.
    fn apply_dims(&self, dims: Vec<(Dim, usize)>, elem: Type, elem_start: usize) -> Result<Type> {
        let after = self.peek()?;
        if matches!(after.tok, Tok::Star | Tok::StarStar) {
            return Err(self.error_at(
                elem_start,
                format!(
                    "{} is not a dimension, so it cannot be followed by {}",
                    describe_type(&elem),
                    self.describe(&after)
                ),
            ));
        }
        if !dims.is_empty() && matches!(elem.kind(), TypeKind::Callable(_)) {
            return Err(self.error_at(
                elem_start,
                format!(
                    "the element of a dimension cannot be a callable type, found {}",
                    describe_type(&elem)
                ),
            ));
        }
        dims.into_iter()
            .rev()
            .try_fold(elem, |elem, (dim, offset)| match dim {
                Dim::Fixed(size) => {
                    self.check_data_size(size.checked_mul(elem.data_size()), offset)?;
                    Ok(Type::fixed_dim(size, elem))
                }
                Dim::Var => Ok(Type::var_dim(elem)),
                Dim::Symbolic(dim) => Ok(Type::symbolic_dim(dim, elem)),
            })
    }

    // --- data types ------------------------------------------------------------

    /// Consumes the first tokens of a data type: all of it when it has no
    /// children.
    fn parse_dtype_start(&mut self) -> Result<DtypeStart> {
        let token = self.peek()?;
        let start = match token.tok {
            Tok::Ident(name) => {
                self.advance(&token);
                return self.parse_named(name, token.start);
            }
            Tok::Question => DtypeStart::Option { bracket: false },
            Tok::LBrace => DtypeStart::Struct(token.start),
            Tok::LParen => DtypeStart::Paren(token.start),
            _ => return Err(self.unexpected(&token, "a type")),
        };
        self.advance(&token);
        Ok(start)
    }

    /// The data type named by the identifier `name` (already consumed) that
    /// starts at byte `start`, with its bracketed arguments if it has any.
    fn parse_named(&mut self, name: &str, start: usize) -> Result<DtypeStart> {
        let leaf = match name {
            "string" => Type::string(),
            "bytes" => Type::bytes(),
            "char" => Type::char(),
            "Any" => Type::any(),
            "complex" => self.parse_complex()?,
            "fixed_string" => self.parse_fixed_string()?,
            "fixed_bytes" => self.parse_fixed_bytes()?,
            "pointer" => {
                self.expect(Tok::LBracket, "'[' after 'pointer'")?;
                return Ok(DtypeStart::Pointer);
            }
            "option" => {
                self.expect(Tok::LBracket, "'[' after 'option'")?;
                return Ok(DtypeStart::Option { bracket: true });
            }
            "float128" => {
                return Err(self.error_at(
                    start,
                    "float128 is not supported (type id 15 is reserved for it)",
                ));
            }
            _ if is_upper_ident(name) => {
                Type::type_var(name).map_err(|e| self.relocate(start, e))?
            }
            _ => BuiltinType::from_name(name)
                .map(Type::builtin)
                .ok_or_else(|| {
                    self.error_at(start, format!("unrecognized data type '{}'", snippet(name)))
                })?,
        };
        Ok(DtypeStart::Leaf(leaf))
    }

    /// `complex`, or `complex[float32]` / `complex[float64]`.
    fn parse_complex(&mut self) -> Result<Type> {
        if !self.eat(&Tok::LBracket)? {
            return Ok(Type::builtin(BuiltinType::Complex128));
        }
        let real = self.peek()?;
        let tp = match real.tok {
            Tok::Ident("float32") => BuiltinType::Complex64,
            Tok::Ident("float64") => BuiltinType::Complex128,
            _ => {
                let found = self.text.get(real.start..real.end).unwrap_or_default();
                return Err(self.error_at(
                    real.start,
                    format!(
                        "complex[{}] is not supported; expected complex[float32] or complex[float64]",
                        snippet(found)
                    ),
                ));
            }
        };
        self.advance(&real);
        self.expect(Tok::RBracket, "']' to close 'complex['")?;
        Ok(Type::builtin(tp))
    }

    /// `"[" INT [ "," STRING ] "]"` after `fixed_string`.
    fn parse_fixed_string(&mut self) -> Result<Type> {
        self.expect(Tok::LBracket, "'[' after 'fixed_string'")?;
        let (size, size_token) = self.expect_int("the size of the fixed_string")?;
        let mut encoding = Encoding::Utf8;
        if self.eat(&Tok::Comma)? {
            let enc = self.peek()?;
            let Tok::Str(name) = &enc.tok else {
                return Err(self.unexpected(&enc, "a quoted encoding name such as 'utf8'"));
            };
            encoding = Encoding::from_name(name).ok_or_else(|| {
                self.error_at(
                    enc.start,
                    format!(
                        "unknown string encoding {}; expected 'ascii', 'utf8', 'utf16', 'utf32' or 'ucs2'",
                        describe_name(name)
                    ),
                )
            })?;
            self.advance(&enc);
        }
        self.expect(Tok::RBracket, "']' to close 'fixed_string['")?;
        self.check_data_size(size.checked_mul(encoding.unit_size()), size_token.start)?;
        Type::fixed_string(size, encoding).map_err(|e| self.relocate(size_token.start, e))
    }

    /// `"[" INT [ "," "align" "=" INT ] "]"` after `fixed_bytes`.
    fn parse_fixed_bytes(&mut self) -> Result<Type> {
        self.expect(Tok::LBracket, "'[' after 'fixed_bytes'")?;
        let (size, size_token) = self.expect_int("the size of the fixed_bytes")?;
        let mut align = 1;
        let mut align_start = size_token.start;
        if self.eat(&Tok::Comma)? {
            self.expect(Tok::Ident("align"), "'align=' after the size")?;
            self.expect(Tok::Equals, "'=' after 'align'")?;
            let (value, value_token) = self.expect_int("the alignment")?;
            align = value;
            align_start = value_token.start;
        }
        self.expect(Tok::RBracket, "']' to close 'fixed_bytes['")?;
        // A size of 0 is the size's fault; any other error is the alignment's.
        let at = if size == 0 {
            size_token.start
        } else {
            align_start
        };
        Type::fixed_bytes(size, align).map_err(|e| self.relocate(at, e))
    }

    // --- structs, tuples and callables -----------------------------------------

    /// Before an item of a struct (`is_struct`) or a tuple/callable: consumes
    /// the closing bracket and returns `None`, or consumes the item's
    /// `name:` if it has one and returns the name and where the item starts.
    fn parse_item_start(&mut self, is_struct: bool) -> Result<Option<(Option<String>, usize)>> {
        let token = self.peek()?;
        let close = if is_struct { Tok::RBrace } else { Tok::RParen };
        if token.tok == close {
            self.advance(&token);
            return Ok(None);
        }
        let name = match &token.tok {
            Tok::Ident(name) if is_struct || self.peek_after(&token)?.tok == Tok::Colon => {
                (*name).to_owned()
            }
            Tok::Str(name) => name.clone(),
            _ if is_struct => return Err(self.unexpected(&token, "a field name or '}'")),
            _ => return Ok(Some((None, token.start))),
        };
        self.advance(&token);
        self.expect(
            Tok::Colon,
            &format!("':' after the name {}", describe_name(&name)),
        )?;
        Ok(Some((Some(name), token.start)))
    }

    /// After an item: consumes `,` and returns `true` (more may follow), or
    /// consumes the closing bracket and returns `false`.
    fn parse_item_end(&mut self, is_struct: bool) -> Result<bool> {
        let (close, expected) = if is_struct {
            (Tok::RBrace, "',' or '}'")
        } else {
            (Tok::RParen, "',' or ')'")
        };
        let token = self.peek()?;
        let more = match token.tok {
            Tok::Comma => true,
            ref tok if *tok == close => false,
            _ => return Err(self.unexpected(&token, expected)),
        };
        self.advance(&token);
        Ok(more)
    }

    /// `?value`, with an unsupported value type reported at byte
    /// `value_start`.
    fn make_option(&self, value: Type, value_start: usize) -> Result<Type> {
        Type::option(value).map_err(|e| self.relocate(value_start, e))
    }

    /// The struct of `fields`, whose `{` is at byte `open`.
    fn make_struct(&self, fields: Vec<Item>, open: usize) -> Result<Type> {
        self.check_unique(
            fields
                .iter()
                .filter_map(|f| Some((f.name.as_deref()?, f.name_start))),
            "field",
        )?;
        self.check_data_size(total_data_size(&fields), open)?;
        Type::struct_of(
            fields
                .into_iter()
                .map(|f| (f.name.unwrap_or_default(), f.tp)),
        )
        .map_err(|e| self.relocate(open, e))
    }

    /// The tuple of `items`, whose `(` is at byte `open`.
    fn make_tuple(&self, items: Vec<Item>, open: usize) -> Result<Type> {
        if let Some(named) = items.iter().find(|item| item.name.is_some()) {
            return Err(self.error_at(
                named.name_start,
                "a tuple's fields cannot have names (write a struct with braces, or add '-> type' after ')' for a callable)",
            ));
        }
        self.check_data_size(total_data_size(&items), open)?;
        Ok(Type::tuple_of(items.into_iter().map(|item| item.tp)))
    }

    /// The callable with arguments `items` (positional first, then keyword)
    /// returning `ret`.
    fn make_callable(&self, items: Vec<Item>, ret: Type) -> Result<Type> {
        let mut positional = Vec::new();
        let mut keywords: Vec<(String, Type)> = Vec::new();
        let mut keyword_starts = Vec::new();
        for item in items {
            match item.name {
                Some(name) => {
                    keywords.push((name, item.tp));
                    keyword_starts.push(item.name_start);
                }
                None => {
                    if let Some((first, _)) = keywords.first() {
                        return Err(self.error_at(
                            item.tp_start,
                            format!(
                                "positional argument after the keyword argument {}; positional arguments come first",
                                describe_name(first)
                            ),
                        ));
                    }
                    positional.push(item.tp);
                }
            }
        }
        self.check_unique(
            keywords.iter().map(|(n, _)| n.as_str()).zip(keyword_starts),
            "keyword argument",
        )?;
        Ok(Type::callable(CallableSignature {
            positional,
            keywords,
            ret,
        }))
    }

    /// An error if two of `names` (with their offsets) are the same.
    fn check_unique<'n>(
        &self,
        names: impl IntoIterator<Item = (&'n str, usize)>,
        what: &str,
    ) -> Result<()> {
        let mut seen = HashSet::new();
        for (name, offset) in names {
            if !seen.insert(name) {
                return Err(self.error_at(
                    offset,
                    format!("duplicate {what} name {}", describe_name(name)),
                ));
            }
        }
        Ok(())
    }

    // --- tokens -----------------------------------------------------------------

    /// The next token, without consuming it.
    fn peek(&self) -> Result<Token<'a>> {
        lex(self.text, self.pos)
    }

    /// The token after `token`, without consuming anything.
    fn peek_after(&self, token: &Token<'a>) -> Result<Token<'a>> {
        lex(self.text, token.end)
    }

    /// Consumes `token` (which must be the next one).
    fn advance(&mut self, token: &Token<'a>) {
        self.pos = token.end;
    }

    /// The byte offset where the next token starts.
    fn next_start(&self) -> usize {
        skip_trivia(self.text, self.pos)
    }

    /// Consumes the next token if it is `expected`, and says whether it did.
    fn eat(&mut self, expected: &Tok<'_>) -> Result<bool> {
        let token = self.peek()?;
        let found = token.tok == *expected;
        if found {
            self.advance(&token);
        }
        Ok(found)
    }

    /// Consumes the next token if it is `expected`; otherwise an error
    /// "expected {what}, found ...".
    fn expect(&mut self, expected: Tok<'_>, what: &str) -> Result<Token<'a>> {
        let token = self.peek()?;
        if token.tok != expected {
            return Err(self.unexpected(&token, what));
        }
        self.advance(&token);
        Ok(token)
    }

    /// Consumes the `]` that closes `keyword[`.
    fn close_bracket(&mut self, keyword: &str) -> Result<()> {
        let token = self.peek()?;
        if token.tok != Tok::RBracket {
            return Err(self.unexpected(&token, &format!("']' to close '{keyword}['")));
        }
        self.advance(&token);
        Ok(())
    }

    /// Consumes an integer token, or errors "expected {what}".
    fn expect_int(&mut self, what: &str) -> Result<(usize, Token<'a>)> {
        let token = self.peek()?;
        let Tok::Int(digits) = token.tok else {
            return Err(self.unexpected(&token, what));
        };
        let value = self.int_value(digits, token.start, what)?;
        self.advance(&token);
        Ok((value, token))
    }

    /// Converts the digits of an `Int` token; `what` names the number.
    fn int_value(&self, digits: &str, offset: usize, what: &str) -> Result<usize> {
        match digits.parse::<usize>() {
            Ok(value) if value <= MAX_DATA_SIZE => Ok(value),
            _ => Err(self.error_at(
                offset,
                format!(
                    "{what} {} is too large; the largest is {MAX_DATA_SIZE}",
                    snippet(digits)
                ),
            )),
        }
    }

    // --- errors -----------------------------------------------------------------

    /// A parse error at byte `offset`.
    fn error_at(&self, offset: usize, message: impl fmt::Display) -> Error {
        error_at(self.text, offset, message)
    }

    /// An error from a type constructor, moved to byte `offset` as a parse
    /// error.
    fn relocate(&self, offset: usize, err: Error) -> Error {
        self.error_at(offset, err.message())
    }

    /// "expected {what}, found {token}".
    fn unexpected(&self, token: &Token<'a>, what: &str) -> Error {
        self.error_at(
            token.start,
            format!("expected {what}, found {}", self.describe(token)),
        )
    }

    /// The source text of a token for an error message.
    fn describe(&self, token: &Token<'a>) -> String {
        let text = snippet(self.text.get(token.start..token.end).unwrap_or_default());
        match token.tok {
            Tok::End => "end of input".to_owned(),
            Tok::Str(_) => format!("quoted string {text}"),
            _ => format!("'{text}'"),
        }
    }

    /// An error unless `depth` is within [`MAX_DEPTH`].
    fn check_depth(&self, depth: usize, offset: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(self.error_at(
                offset,
                format!(
                    "nesting too deep: types may nest at most {MAX_DEPTH} levels (dims included)"
                ),
            ));
        }
        Ok(())
    }

    /// An error unless `size` (a data size, `None` when it overflowed) fits
    /// in `isize`.
    fn check_data_size(&self, size: Option<usize>, offset: usize) -> Result<()> {
        match size {
            Some(size) if size <= MAX_DATA_SIZE => Ok(()),
            _ => Err(self.error_at(
                offset,
                format!("type too large: its data would exceed {MAX_DATA_SIZE} bytes"),
            )),
        }
    }
}

/// An upper bound of the data size of a struct or tuple of `items` (each
/// field's size plus its alignment as padding), `None` on overflow.
fn total_data_size(items: &[Item]) -> Option<usize> {
    items.iter().try_fold(0usize, |total, item| {
        total
            .checked_add(item.tp.data_size())?
            .checked_add(item.tp.data_alignment())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every token of `text`, as (token, start, end), up to and including End.
    fn tokens(text: &str) -> Vec<(Tok<'_>, usize, usize)> {
        let mut out = Vec::new();
        let mut pos = 0;
        loop {
            let t = lex(text, pos).expect("lexes");
            pos = t.end;
            let end = t.tok == Tok::End;
            out.push((t.tok, t.start, t.end));
            if end {
                return out;
            }
        }
    }

    /// The tokens of `text` without their positions.
    fn token_kinds(text: &str) -> Vec<Tok<'_>> {
        tokens(text).into_iter().map(|(t, _, _)| t).collect()
    }

    #[test]
    fn lexes_punctuation_and_words() {
        use Tok::*;
        assert_eq!(
            token_kinds("3**2 * var * {x: ?int32, 'a b': fixed_bytes[4, align=2]}"),
            vec![
                Int("3"),
                StarStar,
                Int("2"),
                Star,
                Ident("var"),
                Star,
                LBrace,
                Ident("x"),
                Colon,
                Question,
                Ident("int32"),
                Comma,
                Str("a b".into()),
                Colon,
                Ident("fixed_bytes"),
                LBracket,
                Int("4"),
                Comma,
                Ident("align"),
                Equals,
                Int("2"),
                RBracket,
                RBrace,
                End,
            ]
        );
    }

    #[test]
    fn lexes_arrows_ellipses_and_unknown_characters() {
        use Tok::*;
        assert_eq!(
            token_kinds("(Dims... * T) -> + - .. é"),
            vec![
                LParen,
                Ident("Dims"),
                Ellipsis,
                Star,
                Ident("T"),
                RParen,
                Arrow,
                Unknown('+'),
                Unknown('-'),
                Unknown('.'),
                Unknown('.'),
                Unknown('é'),
                End,
            ]
        );
    }

    #[test]
    fn token_spans_are_byte_ranges_after_whitespace_and_comments() {
        let text = "  # a comment\n\tint32 # another\n  *";
        let toks = tokens(text);
        assert_eq!(toks[0], (Tok::Ident("int32"), 15, 20));
        assert_eq!(toks[1], (Tok::Star, 33, 34));
        assert_eq!(toks[2], (Tok::End, 34, 34));
        // A comment running to the end of input.
        assert_eq!(
            tokens("int8 # done"),
            vec![(Tok::Ident("int8"), 0, 4), (Tok::End, 11, 11)]
        );
    }

    #[test]
    fn strings_decode_escapes() {
        let lexed = |s| lex(s, 0).map(|t| t.tok);
        assert_eq!(lexed(r#"'it\'s'"#), Ok(Tok::Str("it's".into())));
        assert_eq!(lexed(r#""say \"hi\"""#), Ok(Tok::Str("say \"hi\"".into())));
        assert_eq!(lexed(r#"'"'"#), Ok(Tok::Str("\"".into())));
        assert_eq!(lexed(r"'a\\b\n\t\r'"), Ok(Tok::Str("a\\b\n\t\r".into())));
        assert_eq!(lexed(r"'\u00e9\u0001'"), Ok(Tok::Str("é\u{1}".into())));
        assert_eq!(lexed(r"'\uD83D\uDE00'"), Ok(Tok::Str("😀".into())));
        assert_eq!(lexed("'é ü'"), Ok(Tok::Str("é ü".into())));
        let t = lex("  'ab'x", 0).unwrap();
        assert_eq!((t.start, t.end), (2, 6));
    }

    #[test]
    fn string_errors_name_their_position() {
        let err = |s| lex(s, 0).unwrap_err().message().to_owned();
        assert!(err("'abc").starts_with("line 1, column 1: unterminated quoted string"));
        assert!(err("'abc\\").starts_with("line 1, column 1: unterminated quoted string"));
        assert!(err("'ab\\qc'").starts_with("line 1, column 4: invalid escape '\\q'"));
        assert!(err("'\\u12'").contains("four hex digits"));
        assert!(err("'\\uD800'").contains("low surrogate"));
        assert!(err("'\\uD800\\u0041'").contains("low surrogate"));
        assert!(err("'\\uDC00'").contains("not a unicode scalar value"));
    }

    #[test]
    fn line_column_counts_characters() {
        let text = "ab\ncdé\n\nfg";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 2), (1, 3));
        assert_eq!(line_column(text, 3), (2, 1));
        assert_eq!(line_column(text, 5), (2, 3));
        assert_eq!(line_column(text, 7), (2, 4)); // after the two-byte 'é'
        assert_eq!(line_column(text, 8), (3, 1));
        assert_eq!(line_column(text, 9), (4, 1));
        assert_eq!(line_column(text, text.len()), (4, 3));
        // Out of range or inside a character: clamped, never a panic.
        assert_eq!(line_column(text, 6), (2, 3));
        assert_eq!(line_column(text, 1000), (4, 3));
        assert_eq!(line_column("", 0), (1, 1));
    }

    #[test]
    fn errors_on_later_lines_report_that_line() {
        let err = parse("{\n  x: int32,\n  y: float65\n}").unwrap_err();
        assert_eq!(
            err.message(),
            "line 3, column 6: unrecognized data type 'float65'"
        );
    }

    #[test]
    fn snippets_are_shortened() {
        assert_eq!(snippet("short"), "short");
        let long = "x".repeat(100);
        assert_eq!(snippet(&long), format!("{}...", "x".repeat(SNIPPET_CHARS)));
    }
}
