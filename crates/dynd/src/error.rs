//! The one error type of dynd.
//!
//! Every failure carries an [`ErrorKind`] — the same codes the C ABI reports
//! (`DYND_ERR_*`, DESIGN §5) — and a message that names what was wrong and
//! where. The kind is what programs branch on; the message is for people.

use std::fmt;

/// The kinds of [`Error`], each once: the variant (its C ABI code), the
/// name the CLI prints, and the [`Error`] constructor.
macro_rules! error_kinds {
    ($($(#[$doc:meta])* $kind:ident = $code:literal, $name:literal, $ctor:ident;)*) => {
        /// What kind of failure an [`Error`] is. The discriminants are the C ABI's
        /// `DYND_ERR_*` codes and never change.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(i32)]
        pub enum ErrorKind {
            $($(#[$doc])* $kind = $code,)*
        }

        impl ErrorKind {
            /// Every kind, in code order.
            pub const ALL: [ErrorKind; [$(ErrorKind::$kind),*].len()] = [$(ErrorKind::$kind),*];

            /// The lower-case name the CLI prints in `error[NAME]: ...`.
            pub fn name(self) -> &'static str {
                match self {
                    $(ErrorKind::$kind => $name,)*
                }
            }
        }

        impl Error {
            $(
                #[doc = concat!("`", stringify!($kind), "`.")]
                pub fn $ctor(message: impl Into<String>) -> Error {
                    Error::new(ErrorKind::$kind, message)
                }
            )*
        }
    };
}

error_kinds! {
    /// A bad argument: a null pointer, mismatched counts of parallel
    /// arguments (types and arrmeta pointers), an unknown name or option.
    InvalidArgument = 1, "invalid_argument", invalid_argument;
    /// A type that does not fit the operation (or is not supported by it),
    /// including a call with the wrong number of arguments for the
    /// callable's signature (as Python's `TypeError`).
    Type = 2, "type", type_error;
    /// A value outside the destination type's range.
    Overflow = 3, "overflow", overflow;
    /// A float to integer conversion that would drop a fractional part.
    Fractional = 4, "fractional", fractional;
    /// A conversion that would change the value (rounding).
    Inexact = 5, "inexact", inexact;
    /// An index or an axis out of range, or too many indices.
    Index = 6, "index", index;
    /// Shapes that do not broadcast together.
    Broadcast = 7, "broadcast", broadcast;
    /// Malformed text: datashape, JSON, numbers in strings, utf-8.
    Parse = 8, "parse", parse;
    /// Memory could not be allocated.
    Alloc = 9, "alloc", alloc;
    /// An error reported by code outside dynd (a third-party kernel).
    External = 10, "external", external;
}

impl ErrorKind {
    /// The C ABI code (`DYND_ERR_*`).
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The kind for a C ABI code, if it is one.
    pub fn from_code(code: i32) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.code() == code)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dynd error: a kind and a message naming what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// What kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error with `context` put in front of the message
    /// (`"context: message"`), for callers that know where it happened.
    pub fn context(mut self, context: impl fmt::Display) -> Error {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

thread_local! {
    static LAST_ERROR: std::cell::RefCell<Option<Error>> = const { std::cell::RefCell::new(None) };
}

/// Records `error` in this thread's error slot (what kernels and the C ABI
/// report through; DESIGN §2).
pub fn set_last_error(error: &Error) {
    LAST_ERROR.with(|slot| *slot.borrow_mut() = Some(error.clone()));
}

/// Takes the error in this thread's slot, leaving it empty.
pub fn take_last_error() -> Option<Error> {
    LAST_ERROR.with(|slot| slot.borrow_mut().take())
}

/// The error in this thread's slot, left in place.
pub fn last_error() -> Option<Error> {
    LAST_ERROR.with(|slot| slot.borrow().clone())
}

/// Empties this thread's error slot.
pub fn clear_last_error() {
    LAST_ERROR.with(|slot| *slot.borrow_mut() = None);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_c_abi() {
        let expected = [
            (ErrorKind::InvalidArgument, 1, "invalid_argument"),
            (ErrorKind::Type, 2, "type"),
            (ErrorKind::Overflow, 3, "overflow"),
            (ErrorKind::Fractional, 4, "fractional"),
            (ErrorKind::Inexact, 5, "inexact"),
            (ErrorKind::Index, 6, "index"),
            (ErrorKind::Broadcast, 7, "broadcast"),
            (ErrorKind::Parse, 8, "parse"),
            (ErrorKind::Alloc, 9, "alloc"),
            (ErrorKind::External, 10, "external"),
        ];
        for (kind, code, name) in expected {
            assert_eq!(kind.code(), code);
            assert_eq!(kind.name(), name);
            assert_eq!(ErrorKind::from_code(code), Some(kind));
        }
        assert_eq!(ErrorKind::from_code(0), None);
        assert_eq!(ErrorKind::from_code(11), None);
    }

    #[test]
    fn the_error_slot_is_per_thread() {
        clear_last_error();
        set_last_error(&Error::overflow("value 300 does not fit in uint8"));
        std::thread::spawn(|| assert_eq!(last_error(), None))
            .join()
            .unwrap();
        assert_eq!(last_error().map(|e| e.kind()), Some(ErrorKind::Overflow));
        assert_eq!(
            take_last_error().map(|e| e.kind()),
            Some(ErrorKind::Overflow)
        );
        assert_eq!(take_last_error(), None);
    }

    #[test]
    fn context_prefixes_the_message() {
        let e = Error::index("index 5 is out of range for dimension of size 3").context("axis 1");
        assert_eq!(e.kind(), ErrorKind::Index);
        assert_eq!(
            e.to_string(),
            "axis 1: index 5 is out of range for dimension of size 3"
        );
    }
}
