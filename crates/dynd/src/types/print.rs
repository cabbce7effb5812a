//! Canonical datashape printing.
//!
//! Canonical means: one space around `*` and after `,` and `:`, builtin
//! names in their long form (`complex[float64]`, never `complex`), default
//! encodings and alignments omitted, field names quoted only when they are
//! not identifiers.

use super::{SymbolicDim, Type, TypeKind};
use std::fmt::{self, Write};

/// `true` when `name` can be written without quotes.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Writes `s` as a single-quoted datashape string.
pub(crate) fn write_quoted(s: &str, f: &mut impl Write) -> fmt::Result {
    write_escaped(s, Quoting::Datashape, f)
}

/// Which quoted string [`write_escaped`] writes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quoting {
    /// A JSON string: double quotes, `\b` and `\f` for backspace and form
    /// feed, DEL as itself.
    Json,
    /// A datashape string: single quotes, DEL escaped as the other
    /// control characters.
    Datashape,
}

/// Writes `s` quoted as `style` says: the quote, `\`, `\n`, `\r` and `\t`
/// escaped by a backslash, other control characters as `\uXXXX`.
pub(crate) fn write_escaped(s: &str, style: Quoting, f: &mut impl Write) -> fmt::Result {
    let quote = match style {
        Quoting::Json => '"',
        Quoting::Datashape => '\'',
    };
    let json = style == Quoting::Json;
    f.write_char(quote)?;
    for c in s.chars() {
        match c {
            c if c == quote || c == '\\' => {
                f.write_char('\\')?;
                f.write_char(c)?
            }
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            '\u{8}' if json => f.write_str("\\b")?,
            '\u{c}' if json => f.write_str("\\f")?,
            c if (c as u32) < 0x20 || (c as u32 == 0x7f && !json) => {
                write!(f, "\\u{:04x}", c as u32)?
            }
            c => f.write_char(c)?,
        }
    }
    f.write_char(quote)
}

fn write_name(name: &str, f: &mut impl Write) -> fmt::Result {
    if is_identifier(name) {
        f.write_str(name)
    } else {
        write_quoted(name, f)
    }
}

pub(crate) fn write_type(tp: &Type, f: &mut impl Write) -> fmt::Result {
    match tp.kind() {
        TypeKind::Builtin(b) => f.write_str(b.name()),
        TypeKind::String => f.write_str("string"),
        TypeKind::Bytes => f.write_str("bytes"),
        TypeKind::Char => f.write_str("char"),
        TypeKind::FixedString { size, encoding } => {
            write!(f, "fixed_string[{size}")?;
            if *encoding != super::Encoding::Utf8 {
                write!(f, ", '{}'", encoding.name())?;
            }
            f.write_char(']')
        }
        TypeKind::FixedBytes { size, align } => {
            write!(f, "fixed_bytes[{size}")?;
            if *align != 1 {
                write!(f, ", align={align}")?;
            }
            f.write_char(']')
        }
        TypeKind::FixedDim { size, elem } => {
            write!(f, "{size} * ")?;
            write_type(elem, f)
        }
        TypeKind::VarDim { elem } => {
            f.write_str("var * ")?;
            write_type(elem, f)
        }
        TypeKind::SymbolicDim { dim, elem } => {
            match dim {
                SymbolicDim::Fixed => f.write_str("Fixed")?,
                SymbolicDim::Any => f.write_str("Dim")?,
                SymbolicDim::Named(n) => f.write_str(n)?,
                SymbolicDim::Ellipsis(None) => f.write_str("...")?,
                SymbolicDim::Ellipsis(Some(n)) => write!(f, "{n}...")?,
            }
            f.write_str(" * ")?;
            write_type(elem, f)
        }
        TypeKind::Struct(fields) => {
            f.write_char('{')?;
            for (i, (n, t)) in fields.names().iter().zip(fields.types()).enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_name(n, f)?;
                f.write_str(": ")?;
                write_type(t, f)?;
            }
            f.write_char('}')
        }
        TypeKind::Tuple(fields) => {
            f.write_char('(')?;
            for (i, t) in fields.types().iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_type(t, f)?;
            }
            f.write_char(')')
        }
        TypeKind::Pointer(t) => {
            f.write_str("pointer[")?;
            write_type(t, f)?;
            f.write_char(']')
        }
        TypeKind::Option(t) => {
            f.write_char('?')?;
            write_type(t, f)
        }
        TypeKind::TypeVar(n) => f.write_str(n),
        TypeKind::Any => f.write_str("Any"),
        TypeKind::Callable(sig) => {
            f.write_char('(')?;
            let mut first = true;
            for t in &sig.positional {
                if !first {
                    f.write_str(", ")?;
                }
                first = false;
                write_type(t, f)?;
            }
            for (n, t) in &sig.keywords {
                if !first {
                    f.write_str(", ")?;
                }
                first = false;
                write_name(n, f)?;
                f.write_str(": ")?;
                write_type(t, f)?;
            }
            f.write_str(") -> ")?;
            write_type(&sig.ret, f)
        }
    }
}
