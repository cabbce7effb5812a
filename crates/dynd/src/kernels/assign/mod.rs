//! Assignment kernels: `dst ← src` between any two types, under an error
//! mode (DESIGN §6).
//!
//! [`make_assignment_kernel`] dispatches once on the pair of types and hands
//! the work to one family, one file each:
//! - `dims`: fixed and var dims, with broadcasting (size-1 and missing
//!   leading dims; var elements checked per element);
//! - `option`: `?T` on either side, both kinds of option (missing values;
//!   `"NA"`, `"null"` and `""` strings and NaN into a non-float option read
//!   as missing; a missing value into a non-option is an error naming its
//!   position); it comes before `dims` when an option wraps a dim;
//! - `pointer`: `T ← pointer[U]`, through the pointer;
//! - `structs`: structs matched by field name, tuples by position;
//! - `numeric`: every pair of builtin scalars;
//! - `string`: string, bytes, fixed_string, fixed_bytes and char, between
//!   themselves and to and from numbers.
//!
//! The error mode is one enum passed down, never a second copy of a kernel.

/// Values converted per checked chunk (the numeric loops and their AVX2
/// fast path, `numeric` and `float_int_avx2`, share it).
pub(crate) const CHUNK: usize = 256;

pub use device::{DeviceConversion, device_conversion};

mod device;
pub(crate) mod dims;
mod float_int_avx2;
pub(crate) mod numeric;
pub(crate) mod option;
pub(crate) mod pointer;
pub(crate) mod string;
pub(crate) mod structs;

use super::{CKernelBuilder, Kernel, KernelArgs, KernelRef, KernelRequest, kernel_size};
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

/// What one assignment kernel is built for: the destination's and the
/// source's type and arrmeta, the request and the error mode. The families
/// take their operands as one `AssignArgs` (as callables take
/// [`KernelArgs`]), and build children with [`AssignArgs::child`].
///
/// The arrmeta pointers are raw: whoever builds from an `AssignArgs`
/// promises (in that function's `# Safety`) that each is valid arrmeta of
/// its type.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AssignArgs<'a> {
    /// The destination's type.
    pub(crate) dst_tp: &'a Type,
    /// The destination's arrmeta.
    pub(crate) dst_meta: *const u8,
    /// The source's type.
    pub(crate) src_tp: &'a Type,
    /// The source's arrmeta.
    pub(crate) src_meta: *const u8,
    /// Which function the kernel provides.
    pub(crate) req: KernelRequest,
    /// How much the kernel checks.
    pub(crate) mode: ErrorMode,
}

impl<'a> AssignArgs<'a> {
    /// The operands of a child kernel: `dst_tp ← src_tp` with the given
    /// arrmeta, called one element at a time (`Single`), under the same
    /// error mode.
    pub(crate) fn child<'b>(
        &self,
        dst_tp: &'b Type,
        dst_meta: *const u8,
        src_tp: &'b Type,
        src_meta: *const u8,
    ) -> AssignArgs<'b> {
        AssignArgs {
            dst_tp,
            dst_meta,
            src_tp,
            src_meta,
            req: KernelRequest::Single,
            mode: self.mode,
        }
    }

    /// The assignment a one-source [`KernelArgs`] asks for, under `mode`.
    pub(crate) fn of_kernel_args(args: KernelArgs<'a>, mode: ErrorMode) -> AssignArgs<'a> {
        AssignArgs {
            dst_tp: args.dst_tp,
            dst_meta: args.dst_meta,
            src_tp: &args.src_tps[0],
            src_meta: args.src_metas[0],
            req: args.req,
            mode,
        }
    }

    /// The error for a pair no family handles.
    pub(crate) fn cannot_assign(&self) -> Error {
        cannot_assign(self.dst_tp, self.src_tp)
    }

    /// A `Type` error for this pair, saying why: `cannot assign {src} to
    /// {dst}: {why}`.
    pub(crate) fn type_error(&self, why: impl std::fmt::Display) -> Error {
        Error::type_error(format!(
            "cannot assign {} to {}: {why}",
            self.src_tp, self.dst_tp
        ))
    }
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
    let args = AssignArgs {
        dst_tp,
        dst_meta,
        src_tp,
        src_meta,
        req,
        mode,
    };
    // SAFETY: the caller's promises are make_assign's.
    unsafe { make_assign(ckb, offset, args) }
}

/// [`make_assignment_kernel`] for operands in one value: what the families
/// call for their children.
///
/// # Safety
/// 1. `offset` is a free slot of `ckb` (as [`CKernelBuilder::emplace`]).
/// 2. `args.dst_meta` and `args.src_meta` are valid arrmeta of
///    `args.dst_tp` and `args.src_tp`.
pub(crate) unsafe fn make_assign(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: AssignArgs<'_>,
) -> Result<usize> {
    let (dst_tp, src_tp) = (args.dst_tp, args.src_tp);
    if dst_tp.is_symbolic() || src_tp.is_symbolic() {
        return Err(args.type_error("both types must be concrete"));
    }
    // SAFETY: (1) and (2) pass through to each family.
    unsafe {
        // A pointer source is followed first: its target may hold dims.
        if let TypeKind::Pointer(_) = src_tp.kind() {
            return pointer::make(ckb, offset, args);
        }
        // An option of a dim counts as that dim (`?3 * int32 ← 3 * int32`
        // is an option conversion); otherwise dims are peeled first.
        if option::comes_first(dst_tp, src_tp) {
            return option::make(ckb, offset, args);
        }
        if dst_tp.is_dim() || src_tp.is_dim() {
            return dims::make(ckb, offset, args);
        }
        if dst_tp.option_value().is_some() || src_tp.option_value().is_some() {
            return option::make(ckb, offset, args);
        }
        match (dst_tp.kind(), src_tp.kind()) {
            (TypeKind::Builtin(d), TypeKind::Builtin(s)) => {
                numeric::make(ckb, offset, *d, *s, args.req, args.mode)
            }
            (
                TypeKind::Struct(_) | TypeKind::Tuple(_),
                TypeKind::Struct(_) | TypeKind::Tuple(_),
            ) => structs::make(ckb, offset, args),
            _ if (is_text(dst_tp) || is_text(src_tp))
                && (is_text(dst_tp) || dst_tp.as_builtin().is_some())
                && (is_text(src_tp) || src_tp.as_builtin().is_some()) =>
            {
                string::make(ckb, offset, args)
            }
            _ => Err(args.cannot_assign()),
        }
    }
}

/// A kernel of one source that hands each element on to one child
/// assignment kernel, which [`emplace_with_child`] builds in the slot just
/// past it: it looks at the source first (a missing value, a pointer to
/// follow), then the child assigns, then it may check what the child wrote.
pub(crate) trait WithChild: Send + Sync + 'static {
    /// What the child assigns `dst` from: `src` itself or an element it
    /// leads to, a readable element of the child's source type; `None` when
    /// this kernel has written `dst` itself and the child does not run.
    ///
    /// # Safety
    /// 1. `dst` is a writable element and `src` a readable one, of the types
    ///    and arrmeta this kernel was built for.
    unsafe fn child_source(&self, dst: *mut u8, src: *const u8) -> Result<Option<*const u8>>;

    /// Checks and completes the element the child wrote (an option's
    /// flag byte); the default accepts it as it is.
    ///
    /// # Safety
    /// 1. `dst` is the writable element `child_source` was given, whose
    ///    child's part the child has just written.
    unsafe fn finish(&self, _dst: *mut u8) -> Result<()> {
        Ok(())
    }
}

/// A [`WithChild`] in the builder, with the offset of its child.
struct OneChild<K> {
    kernel: K,
    child: [usize; 1],
}

impl<K: WithChild> Kernel for OneChild<K> {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: (Kernel::single 1) the elements, passed on.
        let Some(child_src) = (unsafe { self.kernel.child_source(dst, src[0]) })? else {
            return Ok(());
        };
        // SAFETY: `self.child[0]` is this kernel's child offset (set by
        // emplace_with_child, the only builder of a OneChild), built for
        // Single there; `child_src` is an element of its source type
        // (child_source's promise) and `dst` of its destination type.
        unsafe { k.child(self.child[0]).call_single(dst, &[child_src]) }?;
        // SAFETY: the child has just written `dst`.
        unsafe { self.kernel.finish(dst) }
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

/// Emplaces `kernel` at `offset`, then builds `child`, its one child, in
/// the slot just past it; returns the offset just past both.
///
/// # Safety
/// 1. `offset` is a free slot of `ckb` (as [`CKernelBuilder::emplace`]).
/// 2. `child.dst_meta` and `child.src_meta` are valid arrmeta of
///    `child.dst_tp` and `child.src_tp`.
pub(crate) unsafe fn emplace_with_child<K: WithChild>(
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    req: KernelRequest,
    kernel: K,
    child: AssignArgs<'_>,
) -> Result<usize> {
    let node = OneChild {
        kernel,
        child: [kernel_size::<OneChild<K>>()],
    };
    // SAFETY: (emplace 1) the caller's (1); (emplace 2) the one child offset
    // is the slot emplace reserves, and `at` names it.
    let at = unsafe { ckb.as_mut().emplace(offset, req, node) }?;
    // SAFETY: (1) `at` is the reserved, still free, child slot; (2) the
    // child's arrmeta.
    unsafe { make_assign(ckb, at, child) }
}

/// The error for a pair no family handles.
pub(crate) fn cannot_assign(dst: &Type, src: &Type) -> Error {
    Error::type_error(format!("cannot assign {src} to {dst}"))
}

#[cfg(test)]
mod tests;
