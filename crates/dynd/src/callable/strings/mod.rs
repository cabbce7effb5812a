//! String functions: `find`, `rfind`, `count_substring`, `startswith`, `endswith`,
//! `contains`, `concat`, `replace` and `split`, as callables lifted over
//! any fixed and var dims with broadcasting, like every other callable.
//!
//! | function | element arguments | element result | meaning (as Python's `str` methods) |
//! |---|---|---|---|
//! | `find(s, sub)` | string, string | int64 | code point index of the first `sub` in `s`; -1 when absent; an empty `sub` is at 0 |
//! | `rfind(s, sub)` | string, string | int64 | code point index of the last `sub`; -1 when absent; an empty `sub` is at the end (the length of `s`) |
//! | `count_substring(s, sub)` | string, string | int64 | non-overlapping occurrences, from the left (`count_substring("aaaa", "aa")` is 2); an empty `sub` matches between every two code points and at both ends: length + 1 |
//! | `startswith(s, p)`, `endswith(s, p)`, `contains(s, p)` | string, string | bool | an empty `p` always matches |
//! | `concat(a, b)` | string, string | string | `a` followed by `b` |
//! | `replace(s, old, new)` | string, string, string | string | every non-overlapping `old`, from the left; an empty `old` inserts `new` between every two code points and at both ends (`replace("abc", "", "-")` is `"-a-b-c-"`) |
//! | `split(s, sep)` | string, string | `var * string` | the pieces between non-overlapping `sep`s, from the left, empty ones included (`split("xaxxbxxxc", "x")` is `["", "a", "", "b", "", "", "c"]`; `split("", "x")` is `[""]`); an empty `sep` is an `InvalidArgument` error |
//!
//! Indexes count code points, as Python 3 does, not utf-8 bytes:
//! `find("héllo", "l")` is 2, though `é` takes two bytes.
//!
//! **Dims.** Arguments broadcast against each other (DESIGN §6): a scalar
//! pattern applies to every string of a `3 * var * string`, and
//! `concat` of `2 * 1 * string` and `3 * string` is `2 * 3 * string`.
//! `split` adds one var dim after the broadcast dims: `string` gives
//! `var * string`, `N * string` gives `N * var * string`, and
//! `3 * var * string` gives `3 * var * var * string`.
//!
//! **Missing values.** Every function but `split` also takes `?string`
//! arguments; the result is then optional (`?int64`, `?bool`, `?string`)
//! and missing wherever an argument is. `split` refuses `?string` with a
//! `Type` error: its element result `var * string` has no missing value.
//!
//! **Errors.** Arguments that are not strings are a `Type` error naming
//! the signature; string data that is not valid utf-8 is a `Parse` error
//! naming the function and the argument (never replacement characters).
//!
//! **Threads.** String results are allocated from the destination's POD
//! allocator blocks, which lock, and the kernels keep no scratch: one
//! kernel runs on several threads at once (large calls do, see
//! [`super::elementwise`]).
//!
//! **How `split` is lifted.** The elementwise lifter peels every dim of
//! the destination, so it cannot stop above a scalar callable's own result
//! dim. `split` therefore sees whole types ([`Callable::is_scalar`] is
//! `false` for it) and lifts itself through the same generic lifter, which
//! it hands the destination with its element `var * string` seen as the
//! one-field tuple `(var * string)`: the same data and arrmeta layout, so
//! the lifter peels exactly the broadcast dims (see `split.rs`). Each
//! output element gets a new list (an element already written is
//! replaced, not reused), so the destination's var dims must be plain
//! (offset 0, stride 16), as freshly made outputs are.

mod kernel;
mod split;

use super::{Callable, CallableImpl, check_operands, no_match, type_list};
use crate::error::{Error, Result};
use crate::kernels::{CKernelBuilder, KernelArgs};
use crate::layout::{BlockrefMeta, VarDimMeta};
use crate::memblock::MemBlock;
use crate::types::{CallableSignature, Type, TypeKind};
use kernel::{Out, StrKernel};
use std::collections::BTreeMap;
use std::mem::size_of;
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::LazyLock;

/// The string functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Find,
    RFind,
    Count,
    StartsWith,
    EndsWith,
    Contains,
    Concat,
    Replace,
    Split,
}

impl Op {
    const ALL: [Op; 9] = [
        Op::Find,
        Op::RFind,
        Op::Count,
        Op::StartsWith,
        Op::EndsWith,
        Op::Contains,
        Op::Concat,
        Op::Replace,
        Op::Split,
    ];

    /// The registry name.
    fn name(self) -> &'static str {
        match self {
            Op::Find => "find",
            Op::RFind => "rfind",
            Op::Count => "count_substring",
            Op::StartsWith => "startswith",
            Op::EndsWith => "endswith",
            Op::Contains => "contains",
            Op::Concat => "concat",
            Op::Replace => "replace",
            Op::Split => "split",
        }
    }

    /// The number of string arguments.
    fn arity(self) -> usize {
        if self == Op::Replace { 3 } else { 2 }
    }

    /// The element result for plain `string` arguments.
    fn result(self) -> Type {
        match self {
            Op::Find | Op::RFind | Op::Count => Type::int64(),
            Op::StartsWith | Op::EndsWith | Op::Contains => Type::bool(),
            Op::Concat | Op::Replace => Type::string(),
            Op::Split => Type::var_dim(Type::string()),
        }
    }
}

/// One string function as a callable.
struct StrFn {
    op: Op,
    sig: Type,
}

impl StrFn {
    fn new(op: Op) -> StrFn {
        let sig = Type::callable(CallableSignature {
            positional: vec![Type::string(); op.arity()],
            keywords: Vec::new(),
            ret: op.result(),
        });
        StrFn { op, sig }
    }

    /// The element result for element argument types.
    fn resolve_elem(&self, args: &[Type]) -> Result<Type> {
        let refuse = || {
            let e = no_match(self.op.name(), &self.sig, args);
            let hint = if self.op == Op::Split {
                "each argument must be a string"
            } else {
                "each argument may be string or ?string"
            };
            Error::type_error(format!("{} ({hint})", e.message()))
        };
        if args.len() != self.op.arity() {
            return Err(refuse());
        }
        let mut optional = false;
        for a in args {
            match a.kind() {
                TypeKind::String => {}
                TypeKind::Option(v) if matches!(v.kind(), TypeKind::String) => optional = true,
                _ => return Err(refuse()),
            }
        }
        let out = self.op.result();
        if !optional {
            return Ok(out);
        }
        if self.op == Op::Split {
            return Err(Error::type_error(format!(
                "split does not accept optional strings ({}): its result, {out}, has no missing value",
                type_list(args)
            )));
        }
        Type::option(out)
    }

    /// Builds the element kernel computing `args.dst_tp` (the element
    /// result) from element arguments `args.src_tps`.
    ///
    /// # Safety
    /// 1. `offset` is a free slot of `ckb` (as [`CKernelBuilder::emplace`]).
    /// 2. `args.dst_meta` is valid arrmeta of `args.dst_tp`.
    unsafe fn instantiate_elem(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        check_operands(self.op.name(), &args, |s| self.resolve_elem(s))?;
        let (dst_tp, dst_meta, src_tps, req) = (args.dst_tp, args.dst_meta, args.src_tps, args.req);
        let out = match self.op {
            Op::Find | Op::RFind | Op::Count => Out::Int64,
            Op::StartsWith | Op::EndsWith | Op::Contains => Out::Bool,
            Op::Concat | Op::Replace => {
                // SAFETY: (2) string (or ?string) arrmeta is a BlockrefMeta.
                let m = unsafe { dst_meta.cast::<BlockrefMeta>().read_unaligned() };
                // SAFETY: (2) the arrmeta's blockref, if any, is live.
                Out::Str(unsafe { self.allocator_block(m.blockref, dst_tp) }?)
            }
            Op::Split => {
                // SAFETY: (2) `var * string` arrmeta: a VarDimMeta, then the
                // string's BlockrefMeta.
                let (v, s) = unsafe {
                    (
                        dst_meta.cast::<VarDimMeta>().read_unaligned(),
                        dst_meta
                            .add(size_of::<VarDimMeta>())
                            .cast::<BlockrefMeta>()
                            .read_unaligned(),
                    )
                };
                if v.offset != 0 || v.stride != Type::string().data_size() as isize {
                    return Err(Error::invalid_argument(format!(
                        "split cannot allocate {dst_tp} elements through a view with offset {} and stride {}",
                        v.offset, v.stride
                    )));
                }
                // SAFETY: (2) both blockrefs, if any, are live.
                let (list, text) = unsafe {
                    (
                        self.allocator_block(v.blockref, dst_tp)?,
                        self.allocator_block(s.blockref, &Type::string())?,
                    )
                };
                Out::Split { list, text }
            }
        };
        let optional = |i: usize| src_tps[i].option_value().is_some();
        let na = dst_tp.option_value().cloned();
        match src_tps.len() {
            2 => {
                let k = StrKernel::<2> {
                    op: self.op,
                    optional: [optional(0), optional(1)],
                    na,
                    out,
                };
                // SAFETY: (1) a free slot; the kernel has no children.
                unsafe { ckb.emplace(offset, req, k) }
            }
            _ => {
                let k = StrKernel::<3> {
                    op: self.op,
                    optional: [optional(0), optional(1), optional(2)],
                    na,
                    out,
                };
                // SAFETY: (1) a free slot; the kernel has no children.
                unsafe { ckb.emplace(offset, req, k) }
            }
        }
    }

    /// A new reference to the block of a destination's blockref, which
    /// must be a POD allocator.
    ///
    /// # Safety
    /// 1. `blockref` is null or a live block that arrmeta holds a reference
    ///    to for the duration of the call.
    unsafe fn allocator_block(
        &self,
        blockref: *mut crate::memblock::MemoryBlockHeader,
        what: &Type,
    ) -> Result<MemBlock> {
        // SAFETY: (1) the arrmeta's reference keeps it alive; this takes
        // a new one for the kernel.
        let block = NonNull::new(blockref).map(|b| unsafe { MemBlock::from_borrowed(b) });
        match block {
            Some(b) if b.pod_allocator().is_some() => Ok(b),
            _ => Err(Error::invalid_argument(format!(
                "{}: the destination {what} has no POD allocator memory block to allocate from",
                self.op.name()
            ))),
        }
    }
}

impl CallableImpl for StrFn {
    fn name(&self) -> &str {
        self.op.name()
    }

    fn signature(&self) -> &Type {
        &self.sig
    }

    /// `split` lifts itself (it sees whole types); the others are lifted.
    fn is_scalar(&self) -> bool {
        self.op != Op::Split
    }

    fn resolve(&self, args: &[Type]) -> Result<Type> {
        if self.op == Op::Split {
            self.resolve_split(args)
        } else {
            self.resolve_elem(args)
        }
    }

    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        if self.op == Op::Split {
            // SAFETY: the caller's promises, for whole types.
            unsafe { self.instantiate_split(ckb, offset, args) }
        } else {
            // SAFETY: the caller's promises, for element types.
            unsafe { self.instantiate_elem(ckb, offset, args) }
        }
    }
}

static CALLABLES: LazyLock<Vec<Callable>> = LazyLock::new(|| {
    Op::ALL
        .iter()
        .map(|&op| Callable::new(StrFn::new(op)))
        .collect()
});

/// The built-in callable of `op`.
pub(crate) fn callable(op: Op) -> Callable {
    CALLABLES
        .get(op as usize)
        .cloned()
        .unwrap_or_else(|| Callable::new(StrFn::new(op)))
}

/// Registers the string functions under their names.
pub(crate) fn register(map: &mut BTreeMap<String, Callable>) {
    for op in Op::ALL {
        map.insert(op.name().to_string(), callable(op));
    }
}
