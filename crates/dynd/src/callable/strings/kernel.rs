//! The string kernel: one struct for every string function, computing one
//! element from its string arguments.
//!
//! Arguments are read as `{begin, end}` and validated as utf-8 (invalid data
//! is a `Parse` error naming the function and the argument, never
//! replacement characters). A `?string` argument whose `begin` is null is
//! missing, and so is the result. String results are allocated from the
//! destination's POD allocator block, which the kernel keeps a reference
//! to; the allocator locks, so one kernel may run on several threads at
//! once, and the kernel keeps no scratch of its own.

use super::Op;
use crate::error::{Error, Result};
use crate::kernels::{Kernel, KernelRef};
use crate::layout::na::write_na;
use crate::layout::text::{Invalid, store_var, utf8};
use crate::layout::{StringData, VarDimData, string_bytes};
use crate::memblock::{MemBlock, PodAllocator};
use crate::types::Type;
use std::mem::{align_of, size_of};

/// Where a kernel puts its result.
pub(super) enum Out {
    /// An `int64`.
    Int64,
    /// A `bool`.
    Bool,
    /// A `string`, allocated from this block (the destination's).
    Str(MemBlock),
    /// A `var * string`: the element list from the var dim's block, the
    /// text of every piece (one allocation) from the inner string's block.
    Split {
        /// The var dim's block.
        list: MemBlock,
        /// The inner string's block.
        text: MemBlock,
    },
}

/// `dst = op(src...)` for `N` string arguments.
pub(super) struct StrKernel<const N: usize> {
    pub op: Op,
    /// Which arguments are `?string` (a null `begin` is missing there, and
    /// an empty string in a plain `string`).
    pub optional: [bool; N],
    /// The result's value type when the result is optional (its missing
    /// value is written for a missing argument).
    pub na: Option<Type>,
    pub out: Out,
}

/// The POD allocator of a block the kernel holds (checked when it was
/// built, so this fails only for a kernel built by hand).
fn allocator<'a>(block: &'a MemBlock, op: Op) -> Result<PodAllocator<'a>> {
    block.pod_allocator().ok_or_else(|| {
        Error::invalid_argument(format!(
            "{}: the destination's memory block is not a POD allocator",
            op.name()
        ))
    })
}

/// The error for argument `i` (from 0) holding invalid utf-8.
fn bad_utf8(op: Op, i: usize, e: Invalid) -> Error {
    Error::parse(format!(
        "{}: argument {} is not valid text: {}",
        op.name(),
        i + 1,
        e.describe(&"string")
    ))
}

/// A count or index as an `int64` (lengths of data in memory always fit).
fn int64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl<const N: usize> StrKernel<N> {
    /// Writes the result for a missing argument.
    ///
    /// # Safety
    /// 1. `dst` is a writable element of the result type.
    unsafe fn missing(&self, dst: *mut u8) -> Result<()> {
        match &self.na {
            // SAFETY: (1) `dst` holds the option's value type `tp`.
            Some(tp) => unsafe { write_na(tp, dst) },
            None => Err(Error::invalid_argument(format!(
                "{}: a missing argument, but the result type has no missing value",
                self.op.name()
            ))),
        }
    }

    /// Allocates a string of `len` bytes for `dst`, filled by `fill`.
    ///
    /// # Safety
    /// 1. `dst` is a writable string element made with the arrmeta whose
    ///    block `self.out` holds.
    unsafe fn store_str(
        &self,
        dst: *mut u8,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<()> {
        let Out::Str(block) = &self.out else {
            return Err(self.wrong_output());
        };
        // SAFETY: (1); store_var allocates through the locking allocator.
        unsafe { store_var(Some(block), dst, len, fill) }
    }

    /// Splits `s` at every `sep` into a new `var * string` element at `dst`.
    ///
    /// # Safety
    /// 1. `dst` is a writable `var * string` element made with the arrmeta
    ///    whose blocks `self.out` holds, with stride 16 and offset 0.
    unsafe fn store_split(&self, dst: *mut u8, s: &str, sep: &str) -> Result<()> {
        let Out::Split { list, text } = &self.out else {
            return Err(self.wrong_output());
        };
        if sep.is_empty() {
            return Err(Error::invalid_argument(format!(
                "split: empty separator (splitting {} needs a non-empty separator, as in Python)",
                show(s)
            )));
        }
        let pieces = s.matches(sep).count() + 1;
        let text_len = s.len() - (pieces - 1) * sep.len();
        let list_len = pieces.checked_mul(size_of::<StringData>()).ok_or_else(|| {
            Error::alloc(format!("split: {pieces} pieces are too many to allocate"))
        })?;
        let list_ptr = allocator(list, self.op)?.allocate(list_len, align_of::<StringData>())?;
        let text_ptr = allocator(text, self.op)?.allocate(text_len, 1)?;
        let mut at = 0usize;
        for (j, piece) in s.split(sep).take(pieces).enumerate() {
            // The pieces are the text between the matches counted above, so
            // their lengths add up to `text_len`; checked anyway.
            if at + piece.len() > text_len {
                return Err(Error::invalid_argument(
                    "split: the pieces do not fit the text allocated for them",
                ));
            }
            // SAFETY: `text_ptr` has `text_len` fresh bytes and
            // [at, at + piece.len()) lies inside them; slot j < pieces of
            // the fresh list has room for a StringData (written unaligned).
            unsafe {
                let begin = text_ptr.add(at);
                std::ptr::copy_nonoverlapping(piece.as_ptr(), begin, piece.len());
                list_ptr
                    .add(j * size_of::<StringData>())
                    .cast::<StringData>()
                    .write_unaligned(StringData {
                        begin,
                        end: begin.add(piece.len()),
                    });
            }
            at += piece.len();
        }
        // SAFETY: (1) a writable var element; the list holds `pieces`
        // strings at stride 16, which the arrmeta's stride and offset
        // (checked when built) read back.
        unsafe {
            dst.cast::<VarDimData>().write_unaligned(VarDimData {
                begin: list_ptr,
                size: pieces,
            })
        };
        Ok(())
    }

    fn wrong_output(&self) -> Error {
        Error::invalid_argument(format!(
            "{}: the kernel was built for another result type",
            self.op.name()
        ))
    }

    /// Computes the result from the validated arguments.
    ///
    /// # Safety
    /// 1. `dst` is a writable element of the result type, made with the
    ///    arrmeta this kernel was built for; no argument borrows it.
    unsafe fn compute(&self, dst: *mut u8, args: &[&str]) -> Result<()> {
        let arity = || {
            Error::invalid_argument(format!(
                "{}: {} arguments, expected {}",
                self.op.name(),
                args.len(),
                self.op.arity()
            ))
        };
        match self.op {
            Op::Find | Op::RFind | Op::Count => {
                let [s, sub] = args else { return Err(arity()) };
                let value = match self.op {
                    Op::Find => find(s, sub),
                    Op::RFind => rfind(s, sub),
                    _ => count(s, sub),
                };
                // SAFETY: (1) an int64 element, written unaligned.
                unsafe { dst.cast::<i64>().write_unaligned(value) };
                Ok(())
            }
            Op::StartsWith | Op::EndsWith | Op::Contains => {
                let [s, p] = args else { return Err(arity()) };
                let value = match self.op {
                    Op::StartsWith => s.starts_with(p),
                    Op::EndsWith => s.ends_with(p),
                    _ => s.contains(p),
                };
                // SAFETY: (1) a bool element.
                unsafe { *dst = u8::from(value) };
                Ok(())
            }
            Op::Concat => {
                let [a, b] = args else { return Err(arity()) };
                let len = a
                    .len()
                    .checked_add(b.len())
                    .ok_or_else(|| too_long(self.op))?;
                // SAFETY: (1).
                unsafe {
                    self.store_str(dst, len, |out| {
                        let mut at = 0;
                        put(out, &mut at, a);
                        put(out, &mut at, b);
                    })
                }
            }
            Op::Replace => {
                let [s, old, new] = args else {
                    return Err(arity());
                };
                let len = replaced_len(s, old, new).ok_or_else(|| too_long(self.op))?;
                // SAFETY: (1).
                unsafe { self.store_str(dst, len, |out| replace_into(s, old, new, out)) }
            }
            Op::Split => {
                let [s, sep] = args else { return Err(arity()) };
                // SAFETY: (1).
                unsafe { self.store_split(dst, s, sep) }
            }
        }
    }
}

impl<const N: usize> Kernel for StrKernel<N> {
    const NSRC: usize = N;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        let mut args = [""; N];
        for (i, arg) in args.iter_mut().enumerate() {
            // SAFETY: (single 1) src[i] is a readable string element
            // (unaligned reads are fine).
            let data = unsafe { src[i].cast::<StringData>().read_unaligned() };
            if self.optional[i] && data.begin.is_null() {
                // SAFETY: (single 1) `dst` is a writable result element.
                return unsafe { self.missing(dst) };
            }
            // SAFETY: (single 1) the bytes live in the argument's block,
            // which its array keeps alive while the call runs.
            let bytes = unsafe { string_bytes(data) };
            *arg = utf8(bytes).map_err(|e| bad_utf8(self.op, i, e))?;
        }
        // SAFETY: (single 1); results are computed before anything is
        // written, and string results go to fresh allocations, so a
        // destination that is also an argument (in place) is fine.
        unsafe { self.compute(dst, &args) }
    }
}

fn too_long(op: Op) -> Error {
    Error::alloc(format!("{}: the result is too long to allocate", op.name()))
}

/// A value for a message: quoted, cut after 32 characters.
fn show(s: &str) -> String {
    let cut: String = s.chars().take(32).collect();
    if cut.len() < s.len() {
        format!("{cut:?}...")
    } else {
        format!("{cut:?}")
    }
}

/// Copies `bytes` to `out` at `at` and moves `at` past them (nothing when
/// they do not fit, which the callers' measuring rules out).
fn put(out: &mut [u8], at: &mut usize, bytes: &str) {
    if let Some(slot) = out.get_mut(*at..*at + bytes.len()) {
        slot.copy_from_slice(bytes.as_bytes());
    }
    *at += bytes.len();
}

// ------------------------------------------------------ the text operations

/// The number of code points in utf-8 bytes: the bytes that are not
/// continuation bytes (`10xxxxxx`).
fn code_points(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// The code point index of byte offset `at` of `s` (a char boundary).
fn char_index(s: &str, at: usize) -> i64 {
    int64(code_points(s.as_bytes().get(..at).unwrap_or_default()))
}

/// The code point index of the first `sub` in `s`, or -1 (Python's
/// `str.find`; an empty `sub` is found at 0).
pub(super) fn find(s: &str, sub: &str) -> i64 {
    s.find(sub).map_or(-1, |at| char_index(s, at))
}

/// The code point index of the last `sub` in `s`, or -1 (Python's
/// `str.rfind`; an empty `sub` is found at the end).
pub(super) fn rfind(s: &str, sub: &str) -> i64 {
    s.rfind(sub).map_or(-1, |at| char_index(s, at))
}

/// The number of non-overlapping `sub` in `s`, from the left (Python's
/// `str.count`; an empty `sub` matches between every two code points and
/// at both ends: length + 1).
pub(super) fn count(s: &str, sub: &str) -> i64 {
    if sub.is_empty() {
        return int64(code_points(s.as_bytes()) + 1);
    }
    int64(s.matches(sub).count())
}

/// The byte length of `s` with every `old` replaced by `new`, or `None`
/// when it overflows.
pub(super) fn replaced_len(s: &str, old: &str, new: &str) -> Option<usize> {
    let n = s.matches(old).count();
    let kept = s.len().checked_sub(n.checked_mul(old.len())?)?;
    kept.checked_add(n.checked_mul(new.len())?)
}

/// Writes `s` with every `old` replaced by `new` to `out`, which is
/// [`replaced_len`] long. An empty `old` matches between every two code
/// points and at both ends (Python's `str.replace`).
pub(super) fn replace_into(s: &str, old: &str, new: &str, out: &mut [u8]) {
    let (mut at, mut prev) = (0, 0);
    for (i, m) in s.match_indices(old) {
        put(out, &mut at, s.get(prev..i).unwrap_or_default());
        put(out, &mut at, new);
        prev = i + m.len();
    }
    put(out, &mut at, s.get(prev..).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_point_indexes() {
        assert_eq!(find("héllo", "l"), 2);
        assert_eq!(rfind("héllo", "l"), 3);
        assert_eq!(find("héllo", "x"), -1);
        assert_eq!(find("abc", ""), 0);
        assert_eq!(rfind("aé😀", ""), 3);
        assert_eq!(count("aé😀", ""), 4);
        assert_eq!(count("aaaa", "aa"), 2);
        assert_eq!(code_points("😀é".as_bytes()), 2);
    }

    #[test]
    fn replace_measures_then_writes() {
        for (s, old, new, want) in [
            ("abc", "", "-", "-a-b-c-"),
            ("", "", "x", "x"),
            ("aaaa", "aa", "b", "bb"),
            ("héllo", "l", "LL", "héLLLLo"),
            ("abc", "x", "y", "abc"),
        ] {
            let len = replaced_len(s, old, new).unwrap();
            let mut out = vec![0u8; len];
            replace_into(s, old, new, &mut out);
            assert_eq!(std::str::from_utf8(&out).unwrap(), want);
            assert_eq!(want, s.replace(old, new));
        }
    }

    #[test]
    fn show_cuts_long_values() {
        assert_eq!(show("ab"), "\"ab\"");
        assert!(show(&"x".repeat(40)).ends_with("\"..."));
    }
}
