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

use super::{ErrorMode, make_assignment_kernel};
use crate::error::{Error, Result};
use crate::kernels::{CKernelBuilder, Kernel, KernelRef, KernelRequest, kernel_size};
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
    child: [usize; 1],
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

impl Kernel for IntoOption {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: the source is data of the source type (Kernel::single 1).
        let missing = unsafe {
            match &self.missing {
                Missing::Option(v) => na::is_na(v, src[0]),
                Missing::Text => {
                    let s: StringData = std::ptr::read_unaligned(src[0] as *const StringData);
                    s.begin.is_null()
                        || matches!(crate::layout::string_bytes(s), b"NA" | b"null" | b"")
                }
                Missing::NaN(b) => is_nan(*b, src[0]),
                Missing::Never => false,
            }
        };
        if missing {
            // SAFETY: the destination is writable data of the value type.
            return unsafe { na::write_na(&self.value_tp, dst) };
        }
        // SAFETY: the child was built for Single, value ← source.
        unsafe { k.child(self.child[0]).call_single(dst, src) }?;
        // SAFETY: the destination now holds a value of the value type.
        if self.check_marker && unsafe { na::is_na(&self.value_tp, dst) } {
            return Err(Error::overflow(format!(
                "the value is the missing-value marker of {}, so it cannot be stored in it",
                self.opt_tp
            )));
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

/// `T ← ?U`.
struct FromOption {
    value_tp: Type,
    dst_tp: Type,
    child: [usize; 1],
}

impl Kernel for FromOption {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: the source is `?U` data, laid out as U.
        if unsafe { na::is_na(&self.value_tp, src[0]) } {
            return Err(Error::overflow(format!(
                "a missing value cannot be assigned to {}",
                self.dst_tp
            )));
        }
        // SAFETY: the child was built for Single, T ← U.
        unsafe { k.child(self.child[0]).call_single(dst, src) }
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

/// Builds `dst ← src` when either is an option.
///
/// # Safety
/// As [`super::make_assignment_kernel`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn make(
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    dst_tp: &Type,
    dst_meta: *const u8,
    src_tp: &Type,
    src_meta: *const u8,
    req: KernelRequest,
    mode: ErrorMode,
) -> Result<usize> {
    // An option's arrmeta is its value's, so the metas pass through.
    let (child_dst, child_src, at) = match (dst_tp.option_value(), src_tp.option_value()) {
        (Some(dv), sv) => {
            let missing = match (sv, src_tp.kind(), dv.kind()) {
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
                opt_tp: dst_tp.clone(),
                check_marker: mode != ErrorMode::NoCheck
                    && dv
                        .as_builtin()
                        .is_some_and(|b| !(b.is_float() || b.is_complex())),
                child: [kernel_size::<IntoOption>()],
            };
            // SAFETY: (1) `offset` is free; the child goes in the reserved slot.
            let at = unsafe { ckb.as_mut().emplace(offset, req, k) }?;
            (dv, sv.unwrap_or(src_tp), at)
        }
        (None, Some(sv)) => {
            let k = FromOption {
                value_tp: sv.clone(),
                dst_tp: dst_tp.clone(),
                child: [kernel_size::<FromOption>()],
            };
            // SAFETY: (1) `offset` is free; the child goes in the reserved slot.
            let at = unsafe { ckb.as_mut().emplace(offset, req, k) }?;
            (dst_tp, sv, at)
        }
        (None, None) => return Err(super::cannot_assign(dst_tp, src_tp)),
    };
    // SAFETY: (1) `at` is the reserved child slot; (2) option arrmeta is the
    // value's arrmeta.
    unsafe {
        make_assignment_kernel(
            ckb,
            at,
            child_dst,
            dst_meta,
            child_src,
            src_meta,
            KernelRequest::Single,
            mode,
        )
    }
}
