//! Missing values through scalar callables (DESIGN §6): a scalar callable
//! called on `?T` arguments that it does not accept as they are is called
//! on their value types, and its result becomes optional — missing where
//! any argument is missing. The kernel author does nothing: Rust closures,
//! the built-in functions and third parties' deferred ckernels all get it.
//!
//! A callable that takes option types itself (the string functions) is
//! called as it is. The logical functions use Kleene logic
//! ([`Missing::KleeneAnd`], [`Missing::KleeneOr`]): `false and missing` is
//! false, `true or missing` is true.
//!
//! How it runs: a wrapper kernel ([`Propagate`]) takes each strided call in
//! chunks of [`CHUNK`] elements, marks the missing ones (a typed comparison
//! with each optional argument's NA value), runs the callable's own kernel
//! and writes NA where something was missing. When every type is a builtin
//! number the kernel runs over the whole chunk — a missing element is a
//! value there, computed and then overwritten — so the inner loop stays the
//! vectorised one; should that fail (integer division meeting an NA
//! sentinel), and for other types always, it runs over the present runs
//! only, so an error always comes from a present element.

use super::CallableImpl;
use super::arith::Truthy;
use crate::error::{Error, Result};
use crate::kernels::{CKernelBuilder, Kernel, KernelArgs, KernelRef, Strided, kernel_size};
use crate::layout::na;
use crate::types::{BuiltinType, NativeType, Type};
use crate::with_native;
use smallvec::SmallVec;
use std::pin::Pin;

/// Elements per chunk of the missing-value mask.
pub const CHUNK: usize = 256;

/// The most arguments a callable may take for missing values to propagate.
const MAX_ARGS: usize = 4;

/// What a scalar callable's result is where an argument is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Missing (arithmetic, comparisons, math, every callable by default).
    Propagate,
    /// Kleene `and` of truthiness: false where a present argument is
    /// false, else missing.
    KleeneAnd,
    /// Kleene `or` of truthiness: true where a present argument is true,
    /// else missing.
    KleeneOr,
}

/// The value types of `dtypes` (options stripped), when any is optional.
fn values(dtypes: &[Type]) -> Option<SmallVec<[Type; 4]>> {
    dtypes.iter().any(|t| t.option_value().is_some()).then(|| {
        dtypes
            .iter()
            .map(|t| t.option_value().unwrap_or(t).clone())
            .collect()
    })
}

/// The element result of scalar callable `imp` on element types `dtypes`:
/// its own resolution, or, where it does not take the option types given,
/// the option of its result on their value types.
pub(crate) fn resolve(imp: &dyn CallableImpl, dtypes: &[Type]) -> Result<Type> {
    let own = imp.resolve(dtypes);
    match (own, values(dtypes)) {
        (Ok(t), _) => Ok(t),
        (Err(e), None) => Err(e),
        (Err(e), Some(v)) => match imp.resolve(&v) {
            Ok(r) if r.option_value().is_some() => Ok(r),
            Ok(r) => Type::option(r),
            // Neither: the error for the types as given.
            Err(_) => Err(e),
        },
    }
}

/// Builds scalar callable `imp`'s element kernel for `el`, wrapped in a
/// [`Propagate`] when missing values need it (see [`resolve`]).
///
/// # Safety
/// As [`CallableImpl::instantiate`], with `el.dst_tp` what [`resolve`]
/// gives for `el.src_tps`.
pub(crate) unsafe fn instantiate(
    imp: &dyn CallableImpl,
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    el: KernelArgs<'_>,
) -> Result<usize> {
    let wrapped = imp.resolve(el.src_tps).is_err();
    let vals = values(el.src_tps).filter(|_| wrapped);
    let Some(vals) = vals else {
        imp.check_args(&el)?;
        // SAFETY: the caller's promises; the types are ones `imp` accepts.
        return unsafe { imp.instantiate(ckb, offset, el) };
    };
    let n = el.nsrc();
    if n > MAX_ARGS {
        return Err(Error::invalid_argument(format!(
            "{}: missing values propagate through at most {MAX_ARGS} arguments, not {n}",
            imp.name()
        )));
    }
    let r = imp.resolve(&vals)?;
    let want = if r.option_value().is_some() {
        r.clone()
    } else {
        Type::option(r.clone())?
    };
    if want != *el.dst_tp {
        return Err(Error::type_error(format!(
            "{} computes {want} for ({}), not {}",
            imp.name(),
            super::type_list(el.src_tps),
            el.dst_tp
        )));
    }
    el.check_counts(imp.name())?;
    let mut optional = [None; MAX_ARGS];
    for (slot, t) in optional.iter_mut().zip(el.src_tps) {
        *slot = match t.option_value().map(Type::as_builtin) {
            None => None,
            Some(Some(b)) => Some(b),
            Some(None) => {
                return Err(Error::type_error(format!(
                    "{}: missing values of {t} do not propagate yet (only options of numbers and bool)",
                    imp.name()
                )));
            }
        };
    }
    let all_numbers = vals.iter().all(|t| t.as_builtin().is_some()) && r.as_builtin().is_some();
    let rule = imp.missing();
    if rule != Missing::Propagate
        && (r.as_builtin() != Some(BuiltinType::Bool)
            || n != 2
            || vals.iter().any(|t| t.as_builtin().is_none()))
    {
        return Err(Error::type_error(format!(
            "{}: Kleene logic takes two numbers and gives bool",
            imp.name()
        )));
    }
    let vals_builtin: [Option<BuiltinType>; MAX_ARGS] =
        std::array::from_fn(|i| vals.get(i).and_then(Type::as_builtin));
    macro_rules! build {
        ($n:literal) => {{
            let k = Propagate::<$n> {
                child: [kernel_size::<Propagate<$n>>()],
                optional: std::array::from_fn(|i| optional[i]),
                values: std::array::from_fn(|i| vals_builtin[i]),
                dst: want.clone(),
                all_numbers,
                rule,
            };
            // SAFETY: (1) `offset` is free (the caller's promise); the child
            // goes in the slot emplace reserves.
            unsafe { ckb.as_mut().emplace(offset, el.req, k) }?
        }};
    }
    let at = match n {
        1 => build!(1),
        2 => build!(2),
        3 => build!(3),
        _ => build!(4),
    };
    let inner = KernelArgs::new(
        &r,
        el.dst_meta,
        &vals,
        el.src_metas,
        crate::kernels::KernelRequest::Strided,
    );
    // SAFETY: `at` is the child slot emplace reserved; an option's arrmeta
    // is its value type's (DESIGN §4), so every pointer is valid arrmeta of
    // the value types; they are ones `imp` accepts (resolved above).
    unsafe { imp.instantiate(ckb, at, inner) }
}

/// The wrapper kernel: marks missing elements, runs the callable's own
/// kernel (its one child) and writes NA (or the Kleene result) where an
/// argument was missing.
struct Propagate<const N: usize> {
    child: [usize; 1],
    /// Each argument's value type when it is optional (its NA is checked).
    optional: [Option<BuiltinType>; N],
    /// Each argument's value type when it is a builtin (for Kleene logic).
    values: [Option<BuiltinType>; N],
    /// The output element type, an option.
    dst: Type,
    /// Every argument and the result are builtin numbers: the child may
    /// run over missing elements (their values are plain data).
    all_numbers: bool,
    rule: Missing,
}

/// Marks in `mask` the elements of `src` (`n` of type `b`, `stride` bytes
/// apart) that are `b`'s NA.
///
/// # Safety
/// 1. `n` elements of `b` at `stride` are readable from `src`.
unsafe fn mark_missing(b: BuiltinType, src: *const u8, stride: isize, mask: &mut [bool]) {
    fn mark<T: NativeType>(src: *const u8, stride: isize, mask: &mut [bool]) {
        let na_value = T::NA;
        let na = bytemuck::bytes_of(&na_value);
        for (j, m) in mask.iter_mut().enumerate() {
            // SAFETY: (1) element j is readable (the caller's promise).
            let v = unsafe {
                std::ptr::read_unaligned(src.wrapping_offset(j as isize * stride).cast::<T::Raw>())
            };
            *m |= bytemuck::bytes_of(&v) == na;
        }
    }
    with_native!(b, |T| mark::<T>(src, stride, mask));
}

/// The truthiness of element `j` of `src`, of builtin type `b`.
///
/// # Safety
/// 1. The element is readable.
unsafe fn truthy(b: BuiltinType, src: *const u8) -> bool {
    // SAFETY: (1).
    with_native!(b, |T| unsafe { T::load(src) }.truthy()).unwrap_or(false)
}

impl<const N: usize> Propagate<N> {
    /// Runs the child over the present runs of `mask` in chunk `run`.
    ///
    /// # Safety
    /// As [`Kernel::strided`] for `run`, `k` this kernel's handle.
    unsafe fn present_runs(&self, k: KernelRef<'_>, run: Strided<'_>, mask: &[bool]) -> Result<()> {
        // SAFETY: the child slot holds the callable's own kernel, built for
        // Strided.
        let child = unsafe { k.child(self.child[0]) };
        let mut j = 0;
        while j < mask.len() {
            if mask[j] {
                j += 1;
                continue;
            }
            let start = j;
            while j < mask.len() && !mask[j] {
                j += 1;
            }
            let srcs: [*const u8; N] = std::array::from_fn(|i| {
                run.src[i].wrapping_offset(start as isize * run.src_stride[i])
            });
            // SAFETY: elements [start, j) of every range are valid (the
            // caller's promise for the chunk).
            unsafe {
                child.call_strided(
                    run.dst.wrapping_offset(start as isize * run.dst_stride),
                    run.dst_stride,
                    &srcs,
                    run.src_stride,
                    j - start,
                )
            }?;
        }
        Ok(())
    }

    /// Writes the result of the missing element `j` of chunk `run`.
    ///
    /// # Safety
    /// 1. Element `j` of every range of `run` is valid.
    unsafe fn write_missing(&self, run: &Strided<'_>, j: usize) -> Result<()> {
        let dst = run.dst.wrapping_offset(j as isize * run.dst_stride);
        let at = |i: usize| run.src[i].wrapping_offset(j as isize * run.src_stride[i]);
        if self.rule != Missing::Propagate {
            let mut known = None;
            for i in 0..N {
                let (Some(b), opt) = (self.values[i], self.optional[i]) else {
                    continue;
                };
                // SAFETY: (1) element j of source i is readable.
                let present = opt.is_none_or(|ob| !unsafe { na::is_na(&Type::builtin(ob), at(i)) });
                if present {
                    // SAFETY: (1).
                    let t = unsafe { truthy(b, at(i)) };
                    match (self.rule, t) {
                        (Missing::KleeneAnd, false) => known = Some(false),
                        (Missing::KleeneOr, true) => known = Some(true),
                        _ => {}
                    }
                }
            }
            if let Some(v) = known {
                // SAFETY: (1) the output element is a bool byte.
                unsafe { dst.write(v as u8) };
                return Ok(());
            }
        }
        let value = self.dst.option_value().unwrap_or(&self.dst);
        // SAFETY: (1) the output element is writable data of the value type.
        unsafe { na::write_na(value, dst) }
    }
}

impl<const N: usize> Kernel for Propagate<N> {
    const NSRC: usize = N;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: one element is a strided call of count 1.
        unsafe { self.strided(k, Strided::one(dst, src, &[0; N])) }
    }

    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        // SAFETY: the child slot holds the callable's own kernel, built for
        // Strided.
        let child = unsafe { k.child(self.child[0]) };
        let mut mask = [false; CHUNK];
        let mut done = 0;
        while done < run.count {
            let n = (run.count - done).min(CHUNK);
            let at = done as isize;
            let srcs: [*const u8; N] =
                std::array::from_fn(|i| run.src[i].wrapping_offset(at * run.src_stride[i]));
            let chunk = Strided {
                dst: run.dst.wrapping_offset(at * run.dst_stride),
                dst_stride: run.dst_stride,
                src: &srcs,
                src_stride: run.src_stride,
                count: n,
            };
            let mask = &mut mask[..n];
            mask.fill(false);
            for (i, opt) in self.optional.iter().enumerate() {
                if let Some(b) = opt {
                    // SAFETY: `n` elements of source i are readable
                    // (Kernel::strided 1).
                    unsafe { mark_missing(*b, srcs[i], run.src_stride[i], mask) };
                }
            }
            let any = mask.iter().any(|&m| m);
            // SAFETY: the chunk's ranges are valid (Kernel::strided 1).
            let whole = || unsafe {
                child.call_strided(chunk.dst, chunk.dst_stride, &srcs, chunk.src_stride, n)
            };
            if !any {
                whole()?;
            } else if !(self.all_numbers && whole().is_ok()) {
                // SAFETY: as above, for the present runs.
                unsafe { self.present_runs(k, chunk, mask) }?;
            }
            if any {
                for j in (0..n).filter(|&j| mask[j]) {
                    // SAFETY: element j of the chunk is valid.
                    unsafe { self.write_missing(&chunk, j) }?;
                }
            }
            done += n;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}
