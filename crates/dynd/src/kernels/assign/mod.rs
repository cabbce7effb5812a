//! Assignment kernels: `dst ← src` between any two types, under an error
//! mode (DESIGN §6).
//!
//! [`make_assignment_kernel`] dispatches once on the pair of types and hands
//! the work to one family, one file each:
//! - `dims`: fixed and var dims, with broadcasting (size-1 and missing
//!   leading dims; var elements checked per element);
//! - `option`: `?T` on either side (missing values; `"NA"`, `"null"` and
//!   `""` strings and NaN into a non-float option read as missing);
//! - `pointer`: `T ← pointer[U]`, through the pointer;
//! - `structs`: structs matched by field name, tuples by position;
//! - `numeric`: every pair of builtin scalars;
//! - `string`: string, bytes, fixed_string, fixed_bytes and char, between
//!   themselves and to and from numbers.
//!
//! The error mode is one enum passed down, never a second copy of a kernel.

pub(crate) mod dims;
mod float_int_avx2;
pub(crate) mod numeric;
pub(crate) mod option;
pub(crate) mod pointer;
pub(crate) mod string;
pub(crate) mod structs;

use super::{CKernelBuilder, KernelRequest};
use crate::error::{Error, Result};
use crate::types::{Type, TypeKind};
use std::pin::Pin;

/// How much an assignment checks (DESIGN §6). The discriminants are the C
/// ABI's `DYND_ASSIGN_*` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(i32)]
pub enum ErrorMode {
    /// Plain conversion, as C would (see the `numeric` family's table for each pair).
    NoCheck = 0,
    /// Error when a value is out of the destination's range.
    Overflow = 1,
    /// Also error when a float to integer conversion drops a fraction.
    Fractional = 2,
    /// Also error when any value would change.
    Inexact = 3,
    /// The default: [`ErrorMode::Fractional`].
    #[default]
    Default = 4,
}

impl ErrorMode {
    /// Every mode, in C ABI order.
    pub const ALL: [ErrorMode; 5] = [
        ErrorMode::NoCheck,
        ErrorMode::Overflow,
        ErrorMode::Fractional,
        ErrorMode::Inexact,
        ErrorMode::Default,
    ];

    /// The mode itself, with `Default` replaced by what it means.
    pub fn resolve(self) -> ErrorMode {
        match self {
            ErrorMode::Default => ErrorMode::Fractional,
            m => m,
        }
    }

    /// The mode for a C ABI value.
    pub fn from_raw(raw: i32) -> Result<ErrorMode> {
        ErrorMode::ALL
            .into_iter()
            .find(|m| *m as i32 == raw)
            .ok_or_else(|| Error::invalid_argument(format!("unknown assignment error mode {raw}")))
    }

    /// Its name: `nocheck`, `overflow`, `fractional`, `inexact`, `default`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorMode::NoCheck => "nocheck",
            ErrorMode::Overflow => "overflow",
            ErrorMode::Fractional => "fractional",
            ErrorMode::Inexact => "inexact",
            ErrorMode::Default => "default",
        }
    }
}

impl std::str::FromStr for ErrorMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<ErrorMode> {
        ErrorMode::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| {
            Error::invalid_argument(format!(
                "unknown error mode '{s}' (expected nocheck, overflow, fractional, inexact or default)"
            ))
        })
    }
}

impl std::fmt::Display for ErrorMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The types a text family handles.
fn is_text(tp: &Type) -> bool {
    matches!(
        tp.kind(),
        TypeKind::String
            | TypeKind::Bytes
            | TypeKind::FixedString { .. }
            | TypeKind::FixedBytes { .. }
            | TypeKind::Char
    )
}

/// Builds the kernel `dst ← src` at `offset` for the request, and returns
/// the offset just past it.
///
/// The kernel copies what it needs from the arrmeta (strides, and new
/// references to the blocks var and string destinations allocate from), so
/// the arrmeta need not outlive it.
///
/// Errors: `Type` when the pair cannot be assigned (or a type is symbolic),
/// `Broadcast` when fixed dims cannot broadcast; builder errors. On error the
/// builder holds whatever was built, which it destroys cleanly.
///
/// # Safety
/// 1. `offset` is a free slot of `ckb` (as [`CKernelBuilder::emplace`]).
/// 2. `dst_meta` and `src_meta` are valid arrmeta of `dst_tp` and `src_tp`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn make_assignment_kernel(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    dst_tp: &Type,
    dst_meta: *const u8,
    src_tp: &Type,
    src_meta: *const u8,
    req: KernelRequest,
    mode: ErrorMode,
) -> Result<usize> {
    if dst_tp.is_symbolic() || src_tp.is_symbolic() {
        return Err(Error::type_error(format!(
            "cannot assign {src_tp} to {dst_tp}: both types must be concrete"
        )));
    }
    // SAFETY: (1) and (2) pass through to each family.
    unsafe {
        // A pointer source is followed first: its target may hold dims.
        if let TypeKind::Pointer(_) = src_tp.kind() {
            return pointer::make(ckb, offset, dst_tp, dst_meta, src_tp, src_meta, req, mode);
        }
        if dst_tp.is_dim() || src_tp.is_dim() {
            return dims::make(ckb, offset, dst_tp, dst_meta, src_tp, src_meta, req, mode);
        }
        if dst_tp.option_value().is_some() || src_tp.option_value().is_some() {
            return option::make(ckb, offset, dst_tp, dst_meta, src_tp, src_meta, req, mode);
        }
        match (dst_tp.kind(), src_tp.kind()) {
            (TypeKind::Builtin(d), TypeKind::Builtin(s)) => {
                numeric::make(ckb, offset, *d, *s, req, mode)
            }
            (
                TypeKind::Struct(_) | TypeKind::Tuple(_),
                TypeKind::Struct(_) | TypeKind::Tuple(_),
            ) => structs::make(ckb, offset, dst_tp, dst_meta, src_tp, src_meta, req, mode),
            _ if (is_text(dst_tp) || is_text(src_tp))
                && (is_text(dst_tp) || dst_tp.as_builtin().is_some())
                && (is_text(src_tp) || src_tp.as_builtin().is_some()) =>
            {
                string::make(ckb, offset, dst_tp, dst_meta, src_tp, src_meta, req, mode)
            }
            _ => Err(cannot_assign(dst_tp, src_tp)),
        }
    }
}

/// The error for a pair no family handles.
pub(crate) fn cannot_assign(dst: &Type, src: &Type) -> Error {
    Error::type_error(format!("cannot assign {src} to {dst}"))
}

#[cfg(test)]
mod tests;
