//! Option types (`?T`) on either side of an assignment, for both kinds of
//! option (an NA sentinel, or a flag byte after the value: DESIGN §4); the
//! one place that reads and writes missing values is [`crate::layout::na`].
//!
//! | dst ← src | rule |
//! |---|---|
//! | `?T ← ?U` | missing stays missing; a value converts as `T ← U` |
//! | `?T ← string` (T not text) | `"NA"`, `"null"` and `""` are missing; other text converts as `T ← string` |
//! | `?T ← float/complex` (T not float or complex) | NaN is missing; other values convert as `T ← U` |
//! | `?T ← U` | the value converts as `T ← U` (never missing) |
//! | `T ← ?U` | a value converts as `T ← U`; a missing value is an `invalid_argument` error in every mode |
//!
//! A converted value that happens to be `T`'s missing-value marker (such as
//! -128 into `?int8`) is an `overflow` error in the checked modes and
//! becomes missing in `nocheck`. A flag-byte option has no such value.
//!
//! The missing-value error names where the value was, as the JSON reader
//! does (`[3].age: a missing value cannot be assigned to int32`): the
//! kernels that loop over elements and fields put their step in front
//! ([`at_index`], [`at_field`]) as the error passes up through them. A
//! position is counted within the run the kernel was called for, which is
//! the whole dim unless an executor split it into chunks.

use super::{AssignArgs, ErrorMode, WithChild, emplace_with_child};
use crate::error::{Error, ErrorKind, Result};
use crate::kernels::CKernelBuilder;
use crate::layout::StringData;
use crate::layout::na;
use crate::types::{BuiltinType, Type, TypeKind};
use half::f16;
use std::pin::Pin;

/// What marks a source value as missing.
enum Missing {
    /// The source is `?U`: its NA marker.
    Option(Type),
    /// The source is a string: "NA", "null" or "".
    Text,
    /// The source is a float or complex type: NaN.
    NaN(BuiltinType),
    /// Nothing: every source value is a value.
    Never,
}

/// `?T ← src`.
struct IntoOption {
    missing: Missing,
    value_tp: Type,
    opt_tp: Type,
    check_marker: bool,
}

/// # Safety
/// `p` is readable data of float or complex type `b`.
unsafe fn is_nan(b: BuiltinType, p: *const u8) -> bool {
    // SAFETY: the caller's promise: a value of `b` at `p`.
    unsafe {
        match b {
            BuiltinType::Float16 => std::ptr::read_unaligned(p as *const f16).is_nan(),
            BuiltinType::Float32 | BuiltinType::Complex64 => {
                std::ptr::read_unaligned(p as *const f32).is_nan()
                    || (b == BuiltinType::Complex64
                        && std::ptr::read_unaligned(p.add(4) as *const f32).is_nan())
            }
            BuiltinType::Float64 | BuiltinType::Complex128 => {
                std::ptr::read_unaligned(p as *const f64).is_nan()
                    || (b == BuiltinType::Complex128
                        && std::ptr::read_unaligned(p.add(8) as *const f64).is_nan())
            }
            _ => false,
        }
    }
}

impl WithChild for IntoOption {
    unsafe fn child_source(&self, dst: *mut u8, src: *const u8) -> Result<Option<*const u8>> {
        // SAFETY: the source is data of the source type (child_source 1).
        let missing = unsafe {
            match &self.missing {
                Missing::Option(opt) => na::is_missing(opt, src),
                Missing::Text => {
                    let s: StringData = std::ptr::read_unaligned(src as *const StringData);
                    s.begin.is_null()
                        || matches!(crate::layout::string_bytes(s), b"NA" | b"null" | b"")
                }
                Missing::NaN(b) => is_nan(*b, src),
                Missing::Never => false,
            }
        };
        if missing {
            // SAFETY: the destination is writable data of the option type.
            unsafe { na::set_missing(&self.opt_tp, dst) }?;
            return Ok(None);
        }
        // The child assigns value ← source.
        Ok(Some(src))
    }

    unsafe fn finish(&self, dst: *mut u8) -> Result<()> {
        // SAFETY: the destination holds a value of the value type, which
        // the child wrote, inside writable option data (finish 1).
        if self.check_marker && unsafe { na::is_na(&self.value_tp, dst) } {
            return Err(Error::overflow(format!(
                "the value is the missing-value marker of {}, so it cannot be stored in it",
                self.opt_tp
            )));
        }
        // SAFETY: as above: `dst` is the option's data.
        unsafe { na::set_present(&self.opt_tp, dst) };
        Ok(())
    }
}

/// `T ← ?U`.
struct FromOption {
    src_tp: Type,
    dst_tp: Type,
}

impl WithChild for FromOption {
    unsafe fn child_source(&self, _dst: *mut u8, src: *const u8) -> Result<Option<*const u8>> {
        // SAFETY: the source is `?U` data (child_source 1).
        if unsafe { na::is_missing(&self.src_tp, src) } {
            return Err(missing_value_error(&self.dst_tp));
        }
        // The child assigns T ← U from the same bytes: U's data comes first.
        Ok(Some(src))
    }
}

/// What every missing-value error says after its position.
const MISSING: &str = "a missing value cannot be assigned to ";

/// The error for a missing value assigned to the non-option type `dst`.
fn missing_value_error(dst: &Type) -> Error {
    Error::invalid_argument(format!("{MISSING}{dst}"))
}

/// `e` with `step` put in front of its position, when `e` is the
/// missing-value error (other errors pass unchanged): the message reads
/// `{step}{rest of the path}: a missing value ...`.
#[cold]
fn at_step(e: Error, step: impl std::fmt::Display) -> Error {
    if e.kind() != ErrorKind::InvalidArgument || !e.message().contains(MISSING) {
        return e;
    }
    let msg = if e.message().starts_with(MISSING) {
        format!("{step}: {}", e.message())
    } else {
        format!("{step}{}", e.message())
    };
    Error::invalid_argument(msg)
}

/// A missing-value error from element `i` of a dim: `[i]` in front of its
/// position. Any other error passes unchanged.
#[cold]
pub(crate) fn at_index(e: Error, i: usize) -> Error {
    at_step(e, format_args!("[{i}]"))
}

/// A missing-value error from field `name` (a struct's) or `i` (a
/// tuple's, `name` empty): `.name`, `["odd name"]` or `[i]` in front of its
/// position, as the JSON reader writes paths.
#[cold]
pub(crate) fn at_field(e: Error, name: &str, i: usize) -> Error {
    if name.is_empty() {
        at_index(e, i)
    } else if crate::types::is_identifier(name) {
        at_step(e, format_args!(".{name}"))
    } else {
        at_step(e, format_args!("[{name:?}]"))
    }
}

/// Builds `dst ← src` when either is an option.
///
/// # Safety
/// As [`super::make_assign`].
pub(crate) unsafe fn make(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: AssignArgs<'_>,
) -> Result<usize> {
    // An option's arrmeta is its value's, so the metas pass through.
    match (args.dst_tp.option_value(), args.src_tp.option_value()) {
        (Some(dv), sv) => {
            let missing = match (sv, args.src_tp.kind(), dv.kind()) {
                (Some(_), _, _) => Missing::Option(args.src_tp.clone()),
                (None, TypeKind::String, _) if !super::is_text(dv) => Missing::Text,
                (None, TypeKind::Builtin(b), TypeKind::Builtin(d))
                    if (b.is_float() || b.is_complex()) && !(d.is_float() || d.is_complex()) =>
                {
                    Missing::NaN(*b)
                }
                _ => Missing::Never,
            };
            let k = IntoOption {
                missing,
                value_tp: dv.clone(),
                opt_tp: args.dst_tp.clone(),
                check_marker: args.mode != ErrorMode::NoCheck
                    && dv
                        .as_builtin()
                        .is_some_and(|b| !(b.is_float() || b.is_complex())),
            };
            let child = args.child(dv, args.dst_meta, sv.unwrap_or(args.src_tp), args.src_meta);
            // SAFETY: (1) `offset` is free; (2) option arrmeta is the value's
            // arrmeta, and its data starts with the value's.
            unsafe { emplace_with_child(ckb, offset, args.req, k, child) }
        }
        (None, Some(sv)) => {
            let k = FromOption {
                src_tp: args.src_tp.clone(),
                dst_tp: args.dst_tp.clone(),
            };
            let child = args.child(args.dst_tp, args.dst_meta, sv, args.src_meta);
            // SAFETY: (1) `offset` is free; (2) option arrmeta is the value's
            // arrmeta, and its data starts with the value's.
            unsafe { emplace_with_child(ckb, offset, args.req, k, child) }
        }
        (None, None) => Err(args.cannot_assign()),
    }
}

/// Whether an assignment between `dst` and `src` goes to this family
/// before the dims family: an option on one side whose value has at least
/// as many leading dims (through options of dims) as the other side, so
/// that `?3 * int32 ← 3 * int32` and `var * int32 ← ?var * int32` are
/// option conversions, while `2 * ?int32 ← ?int32` still repeats the source
/// over the destination's dim.
pub(crate) fn comes_first(dst: &Type, src: &Type) -> bool {
    let levels = |t: &Type| crate::kernels::broadcast::dims_through_options(t).len();
    let (d, s) = (levels(dst), levels(src));
    (dst.option_value().is_some() && d >= s) || (src.option_value().is_some() && s >= d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_of_a_dim_counts_as_the_dim() {
        let t = |s: &str| Type::parse(s).unwrap();
        // (dst, src, option family first)
        for (d, s, first) in [
            ("?3 * int32", "3 * int32", true),
            ("3 * int32", "?3 * int32", true),
            ("?var * int32", "int32", true),
            ("2 * ?int32", "?int32", false),
            ("2 * ?3 * int32", "?3 * int32", false),
            ("?int32", "3 * int32", false),
            ("?int32", "?int32", true),
            ("int32", "int32", false),
        ] {
            assert_eq!(comes_first(&t(d), &t(s)), first, "{d} <- {s}");
        }
    }

    #[test]
    fn positions_are_put_in_front_of_missing_value_errors_only() {
        let e = missing_value_error(&Type::int32());
        let e = at_field(e, "age", 1);
        let e = at_index(e, 3);
        assert_eq!(
            e.message(),
            "[3].age: a missing value cannot be assigned to int32"
        );
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let e = at_field(
            at_field(missing_value_error(&Type::int32()), "", 2),
            "a b",
            0,
        );
        assert_eq!(
            e.message(),
            r#"["a b"][2]: a missing value cannot be assigned to int32"#
        );
        let other = at_index(Error::overflow("value 300 does not fit"), 3);
        assert_eq!(other.message(), "value 300 does not fit");
    }
}
