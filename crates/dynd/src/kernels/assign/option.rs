//! Option types (`?T`) on either side of an assignment.
//!
//! | dst ← src | rule |
//! |---|---|
//! | `?T ← ?U` | missing stays missing; a value converts as `T ← U` |
//! | `?T ← string` (T not text) | `"NA"`, `"null"` and `""` are missing; other text converts as `T ← string` |
//! | `?T ← float/complex` (T not float or complex) | NaN is missing; other values convert as `T ← U` |
//! | `?T ← U` | the value converts as `T ← U` |
//! | `T ← ?U` | a value converts as `T ← U`; a missing value is an error in every mode |
//!
//! A converted value that happens to be `T`'s missing-value marker (such as
//! -128 into `?int8`) is an `overflow` error in the checked modes and
//! becomes missing in `nocheck`.

use super::{AssignArgs, ErrorMode, WithChild, emplace_with_child};
use crate::error::{Error, Result};
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
                Missing::Option(v) => na::is_na(v, src),
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
            // SAFETY: the destination is writable data of the value type.
            unsafe { na::write_na(&self.value_tp, dst) }?;
            return Ok(None);
        }
        // The child assigns value ← source.
        Ok(Some(src))
    }

    unsafe fn check_result(&self, dst: *const u8) -> Result<()> {
        // SAFETY: the destination holds a value of the value type, which
        // the child wrote (check_result 1).
        if self.check_marker && unsafe { na::is_na(&self.value_tp, dst) } {
            return Err(Error::overflow(format!(
                "the value is the missing-value marker of {}, so it cannot be stored in it",
                self.opt_tp
            )));
        }
        Ok(())
    }
}

/// `T ← ?U`.
struct FromOption {
    value_tp: Type,
    dst_tp: Type,
}

impl WithChild for FromOption {
    unsafe fn child_source(&self, _dst: *mut u8, src: *const u8) -> Result<Option<*const u8>> {
        // SAFETY: the source is `?U` data, laid out as U (child_source 1).
        if unsafe { na::is_na(&self.value_tp, src) } {
            return Err(Error::overflow(format!(
                "a missing value cannot be assigned to {}",
                self.dst_tp
            )));
        }
        // The child assigns T ← U from the same bytes.
        Ok(Some(src))
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
                (Some(v), _, _) => Missing::Option(v.clone()),
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
            // arrmeta.
            unsafe { emplace_with_child(ckb, offset, args.req, k, child) }
        }
        (None, Some(sv)) => {
            let k = FromOption {
                value_tp: sv.clone(),
                dst_tp: args.dst_tp.clone(),
            };
            let child = args.child(args.dst_tp, args.dst_meta, sv, args.src_meta);
            // SAFETY: (1) `offset` is free; (2) option arrmeta is the value's
            // arrmeta.
            unsafe { emplace_with_child(ckb, offset, args.req, k, child) }
        }
        (None, None) => Err(args.cannot_assign()),
    }
}
