//! Text assignment: `string`, `bytes`, `fixed_string[N, enc]`,
//! `fixed_bytes[N]` and `char`, between themselves and to and from every
//! builtin number.
//!
//! | dst ← src | nocheck | overflow | fractional (= default) | inexact |
//! |---|---|---|---|---|
//! | string ← string, fixed_string, char | validated copy / re-encode to utf-8 | same | same | same |
//! | fixed_string\[N, e\] ← string, fixed_string, char | re-encode to e, zero pad; **error** (`Overflow`) when it needs more than N code units or holds a character e cannot represent (non-ascii in ascii, outside the basic plane in ucs2) | same | same | same |
//! | char ← string, fixed_string, char | the one character; **error** (`Overflow`) unless exactly one | same | same | same |
//! | bytes ← bytes, fixed_bytes | copy | same | same | same |
//! | fixed_bytes\[N\] ← fixed_bytes\[M\] | copy; M ≠ N is a `Type` error when built | same | same | same |
//! | fixed_bytes\[N\] ← bytes | copy; **error** (`Overflow`) unless exactly N bytes | same | same | same |
//! | bytes, fixed_bytes ← string, fixed_string, char | the utf-8 bytes (fixed_bytes: exactly N, else `Overflow`) | same | same | same |
//! | string, fixed_string, char ← bytes, fixed_bytes | the bytes read as utf-8 (validated), then as text ← text | same | same | same |
//! | int ← text | truncates toward zero, wraps mod 2^bits; NaN → 0, ±inf saturate | out of range: `Overflow`; fraction dropped | also a fraction: `Fractional` | = fractional |
//! | float ← text | nearest; out of range → ±inf | finite text out of range: `Overflow` | = overflow | also more digits than the type keeps (the text is not what the result formats as): `Inexact` |
//! | bool ← text | `true`/`false`, else a number ≠ 0 | `true`/`false`/0/1, else `Overflow` | = overflow | = overflow |
//! | complex ← text | each part as float ← text | per part | per part | per part |
//! | text ← number | formatted (see [`number`]); too long for a fixed_string or char: `Overflow` | same | same | same |
//! | bytes, fixed_bytes ↔ number | a `Type` error when built | | | |
//!
//! "Text" is string, fixed_string or char. In every mode:
//! - source data that is not valid in its encoding (invalid utf-8 in string
//!   or bytes data, a non-ascii byte in ascii data, an unpaired surrogate in
//!   utf-16 or any surrogate in ucs2, an invalid utf-32 or char code point)
//!   is a `Parse` error — never replacement characters;
//! - text that is not a number of the destination's form is a `Parse` error
//!   (`"12x"` into int8);
//! - a value that does not fit a fixed-size destination is an `Overflow`
//!   error: a fixed_string is never truncated, not even in nocheck.
//!
//! Number syntax and formats are in [`number`]; encodings in [`crate::layout::text`]
//! (fixed_string data ends at its first zero code unit). Errors name the
//! value and both types: `string value "128" is out of range for int8`.
//! When an element fails, it is left unchanged.
//!
//! String and bytes destinations allocate their bytes from the POD allocator
//! block of the destination arrmeta; the kernel keeps its own reference to
//! that block, and the allocator locks, so one kernel may run on several
//! threads at once. Data is read and written unaligned everywhere.

pub(crate) mod number;

use super::{AssignArgs, ErrorMode};
use crate::error::{Error, Result};
use crate::kernels::{CKernelBuilder, Kernel, KernelRef};
use crate::layout::text::{
    Invalid, StoreError, Text, TextKind, element_bytes, store_text, store_var, text_of,
};
use crate::layout::{BlockrefMeta, StringData};
use crate::memblock::MemBlock;
use crate::types::{BuiltinType, NativeType, Type};
use crate::with_native;
use number::{Bad, FromText, StackBuf, ToText};
use std::fmt::Display;
use std::marker::PhantomData;
use std::pin::Pin;
use std::ptr::NonNull;

/// Builds `dst ← src` when either side is text or bytes (and the other is
/// text, bytes or a builtin scalar).
///
/// # Safety
/// As [`super::make_assign`].
pub(crate) unsafe fn make(
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: AssignArgs<'_>,
) -> Result<usize> {
    let (dst_tp, src_tp) = (args.dst_tp, args.src_tp);
    let dst_kind = TextKind::of(dst_tp);
    let src_kind = TextKind::of(src_tp);
    let block = match dst_kind {
        // SAFETY: (2) the destination arrmeta is valid string or bytes arrmeta.
        Some(k) if k.is_var() => unsafe { dst_block(args.dst_meta) },
        _ => None,
    };
    // The builtin on the number side of text ↔ number, whose text side
    // must be text, not bytes.
    let number_of = |number: &Type, text: TextKind| {
        let number = number
            .as_builtin()
            .filter(|b| *b != BuiltinType::Void)
            .ok_or_else(|| args.cannot_assign())?;
        if text.is_raw() {
            return Err(
                args.type_error("bytes do not convert to or from numbers (go through string)")
            );
        }
        Ok(number)
    };
    match (dst_kind, src_kind) {
        (Some(dst), Some(src)) => {
            if let (TextKind::FixedBytes(n), TextKind::FixedBytes(m)) = (dst, src)
                && n != m
            {
                return Err(args.type_error("the sizes differ"));
            }
            let kernel = TextAssign {
                dst,
                src,
                dst_tp: dst_tp.clone(),
                src_tp: src_tp.clone(),
                block,
            };
            // SAFETY: (1) a free slot; the kernel has no children.
            unsafe { ckb.emplace(offset, args.req, kernel) }
        }
        (None, Some(src)) => {
            let number = number_of(dst_tp, src)?;
            with_native!(number, |T| {
                let kernel = ParseAssign::<T> {
                    src,
                    src_tp: src_tp.clone(),
                    mode: args.mode.resolve(),
                    _dst: PhantomData,
                };
                // SAFETY: (1) a free slot; the kernel has no children.
                unsafe { ckb.as_mut().emplace(offset, args.req, kernel) }
            })
            .unwrap_or_else(|| Err(args.cannot_assign()))
        }
        (Some(dst), None) => {
            let number = number_of(src_tp, dst)?;
            with_native!(number, |T| {
                let kernel = FormatAssign::<T> {
                    dst,
                    dst_tp: dst_tp.clone(),
                    block: block.clone(),
                    _src: PhantomData,
                };
                // SAFETY: (1) a free slot; the kernel has no children.
                unsafe { ckb.as_mut().emplace(offset, args.req, kernel) }
            })
            .unwrap_or_else(|| Err(args.cannot_assign()))
        }
        (None, None) => Err(args.cannot_assign()),
    }
}

/// A new reference to the block of string or bytes arrmeta, if any.
///
/// # Safety
/// 1. `meta` is valid string or bytes arrmeta (a [`BlockrefMeta`]).
unsafe fn dst_block(meta: *const u8) -> Option<MemBlock> {
    // SAFETY: (1) a BlockrefMeta, read unaligned.
    let m = unsafe { meta.cast::<BlockrefMeta>().read_unaligned() };
    // SAFETY: (1) a non-null blockref is live, kept so by the arrmeta's own
    // reference for the duration of this call.
    NonNull::new(m.blockref).map(|b| unsafe { MemBlock::from_borrowed(b) })
}

/// `true` when `bytes` and the `len` bytes at `dst` share an address.
fn overlaps(bytes: &[u8], dst: *const u8, len: usize) -> bool {
    let (a, b) = (bytes.as_ptr() as usize, dst as usize);
    !bytes.is_empty() && len > 0 && a < b + len && b < a + bytes.len()
}

/// The error for source data that is not valid text.
fn invalid(e: Invalid, src_tp: &Type, dst_tp: &dyn Display) -> Error {
    Error::parse(format!(
        "{}; it cannot be assigned to {dst_tp}",
        e.describe(src_tp)
    ))
}

/// The error for a value that could not be stored (`value` already shown).
fn store_failure(
    e: StoreError,
    src_tp: &dyn Display,
    value: &str,
    dst: TextKind,
    dst_tp: &Type,
) -> Error {
    let what = format!("{src_tp} value {value}");
    match (e, dst) {
        (StoreError::Alloc(e), _) => e,
        (StoreError::Unrepresentable(c), _) => Error::overflow(format!(
            "{what} holds the character {c:?} (U+{:04X}), which is out of range for {dst_tp}",
            c as u32
        )),
        (StoreError::Length(n), TextKind::FixedString(size, _)) => Error::overflow(format!(
            "{what} is too long for {dst_tp}: it needs {n} code units, and {size} fit"
        )),
        (StoreError::Length(n), TextKind::FixedBytes(size)) => Error::overflow(format!(
            "{what} has {n} bytes, but {dst_tp} holds exactly {size}"
        )),
        (StoreError::Length(n), _) => Error::overflow(format!(
            "{what} has {n} characters, but {dst_tp} holds exactly one"
        )),
    }
}

// -------------------------------------------------------- text <- text

/// `dst ← src` between two text or bytes types.
struct TextAssign {
    dst: TextKind,
    src: TextKind,
    dst_tp: Type,
    src_tp: Type,
    /// The destination's allocator block (string and bytes destinations).
    block: Option<MemBlock>,
}

impl TextAssign {
    /// Assigns the source value held in `bytes` (its [`element_bytes`]).
    ///
    /// # Safety
    /// 1. `dst` is a writable element of the destination type, made with
    ///    the arrmeta this kernel was built for.
    /// 2. `bytes` does not overlap the destination element.
    unsafe fn assign(&self, dst: *mut u8, bytes: &[u8]) -> Result<()> {
        if self.src.is_raw() && self.dst.is_raw() {
            return match self.dst {
                TextKind::FixedBytes(n) if bytes.len() != n => Err(store_failure(
                    StoreError::Length(bytes.len()),
                    &self.src_tp,
                    &crate::layout::text::show_bytes(bytes),
                    self.dst,
                    &self.dst_tp,
                )),
                TextKind::FixedBytes(n) => {
                    // SAFETY: (1) n writable bytes; (2) no overlap with `bytes`,
                    // which holds n bytes.
                    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, n) };
                    Ok(())
                }
                // SAFETY: (1) a bytes element made with this arrmeta, whose
                // block is `self.block`.
                _ => unsafe {
                    store_var(self.block.as_ref(), dst, bytes.len(), |out| {
                        out.copy_from_slice(bytes)
                    })
                },
            };
        }
        let text = text_of(self.src, bytes).map_err(|e| invalid(e, &self.src_tp, &self.dst_tp))?;
        // SAFETY: (1) the destination element and its block; (2) `text`
        // borrows `bytes`, which does not overlap it.
        unsafe { store_text(self.dst, self.block.as_ref(), dst, &text) }
            .map_err(|e| store_failure(e, &self.src_tp, &text.show(), self.dst, &self.dst_tp))
    }
}

impl Kernel for TextAssign {
    const NSRC: usize = 1;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: (single 1) src[0] is a readable source element whose string
        // bytes (if any) live while the call runs.
        let bytes = unsafe { element_bytes(self.src, src[0]) };
        let dst_len = self.dst.fixed_size().unwrap_or(size_of::<StringData>());
        if overlaps(bytes, dst, dst_len) {
            if self.src == self.dst && std::ptr::eq(bytes.as_ptr(), dst) {
                // Assigning an element to itself: only validate.
                if !self.src.is_raw() {
                    text_of(self.src, bytes).map_err(|e| invalid(e, &self.src_tp, &self.dst_tp))?;
                }
                return Ok(());
            }
            // A view of the same bytes under another type: read a copy.
            let owned = bytes.to_vec();
            // SAFETY: (single 1) for `dst`; `owned` is a separate buffer.
            return unsafe { self.assign(dst, &owned) };
        }
        // SAFETY: (single 1) for `dst`; checked not to overlap above.
        unsafe { self.assign(dst, bytes) }
    }
}

// ----------------------------------------------------- number <- text

/// `D ← src`: a number parsed from text under a (resolved) error mode.
struct ParseAssign<D> {
    src: TextKind,
    src_tp: Type,
    mode: ErrorMode,
    _dst: PhantomData<fn() -> D>,
}

impl<D: FromText> Kernel for ParseAssign<D> {
    const NSRC: usize = 1;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: (single 1) src[0] is a readable source element.
        let bytes = unsafe { element_bytes(self.src, src[0]) };
        let text = text_of(self.src, bytes)
            .map_err(|e| invalid(e, &self.src_tp, &<D as NativeType>::TYPE))?;
        let (mut buf, mut heap) = ([0u8; 128], String::new());
        let s = text.as_str(&mut buf, &mut heap);
        let value = D::from_text(s.trim(), self.mode).map_err(|bad| {
            let (kind, why) = match bad {
                Bad::Syntax => (crate::ErrorKind::Parse, "cannot be parsed as"),
                Bad::Overflow => (crate::ErrorKind::Overflow, "is out of range for"),
                Bad::Fractional => (
                    crate::ErrorKind::Fractional,
                    "has a fractional part, so it cannot be assigned to",
                ),
                Bad::Inexact => (
                    crate::ErrorKind::Inexact,
                    "cannot be represented exactly in",
                ),
            };
            Error::new(
                kind,
                format!(
                    "{} value {} {why} {}",
                    self.src_tp,
                    text.show(),
                    <D as NativeType>::TYPE
                ),
            )
        })?;
        // SAFETY: (single 1) dst is a writable D (stored unaligned); the
        // source is no longer read.
        unsafe { value.store(dst) };
        Ok(())
    }
}

// ----------------------------------------------------- text <- number

/// `dst ← S`: a number formatted as text.
struct FormatAssign<S> {
    dst: TextKind,
    dst_tp: Type,
    block: Option<MemBlock>,
    _src: PhantomData<fn(S)>,
}

impl<S: ToText> Kernel for FormatAssign<S> {
    const NSRC: usize = 1;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: (single 1) src[0] holds an S (loaded unaligned; a bool as
        // any byte).
        let value = unsafe { S::load(src[0]) };
        let mut buf = StackBuf::new();
        value.write_text(&mut buf).map_err(|_| {
            Error::external(format!("cannot format a {} value", <S as NativeType>::TYPE))
        })?;
        let text = Text::Str(buf.as_str());
        // SAFETY: (single 1) the destination element and its block; the text
        // is on the stack.
        unsafe { store_text(self.dst, self.block.as_ref(), dst, &text) }.map_err(|e| {
            store_failure(
                e,
                &<S as NativeType>::TYPE,
                buf.as_str(),
                self.dst,
                &self.dst_tp,
            )
        })
    }
}
