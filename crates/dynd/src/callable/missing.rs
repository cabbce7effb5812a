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
//! How it runs: a wrapper kernel (`Propagate`) takes each strided call in
//! chunks of [`CHUNK`] elements, marks the missing ones (a typed comparison
//! with each optional argument's NA value), runs the callable's own kernel
//! and writes NA where something was missing. When every type is a builtin
//! number and the callable allows it ([`CallableImpl::runs_over_missing`]:
//! the built-in functions do) the kernel runs over the whole chunk — a
//! missing element is a value there, computed and then overwritten — so the
//! inner loop stays the vectorised one; should that fail (integer division
//! meeting an NA sentinel), and otherwise always, it runs over the present
//! runs only, so an error always comes from a present element, and a Rust
//! closure or a third party's kernel never sees a missing value.

use super::CallableImpl;
use crate::error::{Error, Result};
use crate::kernels::mask::Truthy;
use crate::kernels::{CKernelBuilder, Kernel, KernelArgs, KernelRef, Strided, kernel_size};
use crate::layout::na;
use crate::types::{BuiltinType, NativeType, Type};
use crate::with_native;
use smallvec::SmallVec;
use std::pin::Pin;

pub use crate::kernels::mask::CHUNK;
use crate::kernels::mask::{BLOCK, Bits, fill_where, patch_where, scratch};

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
    let e = match imp.resolve(dtypes) {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    match values(dtypes) {
        None => Err(e),
        Some(v) => match imp.resolve(&v) {
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
    // Wrapped when an argument is optional and `imp` does not take the
    // types as they are (resolved only then: no option, no wrapper).
    let vals = values(el.src_tps).filter(|_| imp.resolve(el.src_tps).is_err());
    let Some(vals) = vals else {
        // SAFETY: the caller's promises; check_and_instantiate checks the
        // types.
        return unsafe { imp.check_and_instantiate(ckb, offset, el) };
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
    let all_numbers = imp.runs_over_missing()
        && vals.iter().all(|t| t.as_builtin().is_some())
        && r.as_builtin().is_some();
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
    if rule == Missing::Propagate && all_numbers {
        let flags: SmallVec<[bool; MAX_ARGS]> = optional[..n].iter().map(Option::is_some).collect();
        let inner = KernelArgs::new(&r, el.dst_meta, &vals, el.src_metas, el.req);
        // SAFETY: `offset` is free (the caller's promise); the types are
        // value types `imp` accepts (resolved above), laid out as the
        // options given (DESIGN §4).
        let fused = unsafe { imp.instantiate_propagating(ckb.as_mut(), offset, inner, &flags) };
        if let Some(end) = fused? {
            return Ok(end);
        }
    }
    let vals_builtin: [Option<BuiltinType>; MAX_ARGS] =
        std::array::from_fn(|i| vals.get(i).and_then(Type::as_builtin));
    macro_rules! build {
        ($n:literal) => {{
            let k = Propagate::<$n> {
                child: [kernel_size::<Propagate<$n>>()],
                optional: std::array::from_fn(|i| optional[i].map(Bits::of)),
                values: std::array::from_fn(|i| vals_builtin[i]),
                dst: want.clone(),
                fill: r
                    .as_builtin()
                    .map(Bits::of)
                    .filter(|_| rule == Missing::Propagate),
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
    /// Each argument's NA bits when it is optional.
    optional: [Option<Bits>; N],
    /// Each argument's value type when it is a builtin (for Kleene logic).
    values: [Option<BuiltinType>; N],
    /// The output element type, an option.
    dst: Type,
    /// The output's NA bits, when it is a builtin and missing is missing.
    fill: Option<Bits>,
    /// Every argument and the result are builtin numbers: the child may
    /// run over missing elements (their values are plain data).
    all_numbers: bool,
    rule: Missing,
}

/// The truthiness of a value of builtin type `b`.
///
/// # Safety
/// 1. The value is readable at `src`.
unsafe fn truthy(b: BuiltinType, src: *const u8) -> bool {
    // SAFETY: (1).
    with_native!(b, |T| unsafe { T::load(src) }.truthy()).unwrap_or(false)
}

impl<const N: usize> Propagate<N> {
    /// Runs the child over the present runs of `mask` in chunk `run`.
    ///
    /// # Safety
    /// As [`Kernel::strided`] for `run`, `k` this kernel's handle.
    unsafe fn present_runs(&self, k: KernelRef<'_>, run: Strided<'_>, mask: &[u8]) -> Result<()> {
        // SAFETY: the child slot holds the callable's own kernel, built for
        // Strided.
        let child = unsafe { k.child(self.child[0]) };
        let mut j = 0;
        while j < mask.len() {
            if mask[j] != 0 {
                j += 1;
                continue;
            }
            let start = j;
            while j < mask.len() && mask[j] == 0 {
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

    /// Writes the result of the missing element `j` of chunk `run`, one
    /// element at a time (Kleene logic, and results that are not builtin).
    ///
    /// # Safety
    /// 1. Element `j` of every range of `run` is valid.
    unsafe fn write_missing(&self, run: &Strided<'_>, j: usize) -> Result<()> {
        let dst = run.dst.wrapping_offset(j as isize * run.dst_stride);
        let at = |i: usize| run.src[i].wrapping_offset(j as isize * run.src_stride[i]);
        if self.rule != Missing::Propagate {
            let mut known = None;
            for i in 0..N {
                let Some(b) = self.values[i] else {
                    continue;
                };
                let mut missing = [0u8];
                if let Some(bits) = self.optional[i] {
                    // SAFETY: (1) element j of source i is readable.
                    unsafe { bits.mark(at(i), 0, &mut missing) };
                }
                if missing[0] == 0 {
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
        if let (Some(fill), true) = (self.fill, self.all_numbers)
            && !self.output_overlaps_an_option(&run)
        {
            // Numbers, missing is missing: the callable's kernel over a
            // block, then NA wherever an argument is NA, while the block is
            // in cache. Should the kernel fail, the masked path finds out
            // whether a present element did.
            if !self.output_overlaps_a_source(&run) {
                // The output is apart from every argument: the kernel
                // writes it directly, then NA goes where an argument was
                // missing (read again while the block is in cache). Should
                // the kernel fail, the masked path redoes the block; it
                // overwrote no argument.
                return by_windows::<N>(&run, BLOCK, |block| {
                    let (srcs, n) = (block.src, block.count);
                    // SAFETY: the block's ranges are valid (Kernel::strided
                    // 1).
                    let ran = unsafe {
                        child.call_strided(block.dst, block.dst_stride, srcs, block.src_stride, n)
                    };
                    if ran.is_err() {
                        // SAFETY: as above.
                        return unsafe { self.masked(k, block) };
                    }
                    for (i, bits) in self.optional.iter().enumerate() {
                        if let Some(bits) = bits {
                            // SAFETY: the block's ranges are valid and the
                            // output overlaps no argument.
                            unsafe {
                                patch_where(
                                    (srcs[i], run.src_stride[i], *bits),
                                    (block.dst, block.dst_stride, fill),
                                    n,
                                )
                            };
                        }
                    }
                    Ok(())
                });
            }
            let mut scratch = scratch();
            return by_windows::<N>(&run, BLOCK, |block| {
                let (srcs, n) = (block.src, block.count);
                // The kernel writes the block into scratch; the last
                // optional argument's pass then stores each output element
                // once (NA or the value), earlier ones (when several are
                // optional) mark the scratch in place.
                let tmp = scratch.as_mut_ptr().cast::<u8>();
                let width = fill.size as isize;
                // SAFETY: the block's sources are valid (Kernel::strided 1);
                // the scratch has room for `n <= BLOCK` elements of the
                // output's width, contiguous.
                let ran = unsafe { child.call_strided(tmp, width, srcs, block.src_stride, n) };
                if ran.is_ok() {
                    let last = self.optional.iter().rposition(Option::is_some);
                    for (i, bits) in self.optional.iter().enumerate() {
                        if let Some(bits) = bits {
                            let src = (srcs[i], run.src_stride[i], *bits);
                            if Some(i) == last {
                                // SAFETY: the block's ranges are valid; the
                                // output overlaps no optional source and
                                // not the scratch, which holds n values.
                                unsafe {
                                    fill_where(
                                        src,
                                        (block.dst, block.dst_stride, fill),
                                        n,
                                        Some(tmp),
                                    )
                                };
                            } else {
                                // SAFETY: the scratch holds n values of the
                                // output's width, contiguous.
                                unsafe { fill_where(src, (tmp, width, fill), n, None) };
                            }
                        }
                    }
                } else {
                    // SAFETY: as above.
                    unsafe { self.masked(k, block) }?;
                }
                Ok(())
            });
        }
        // SAFETY: the caller's promises.
        unsafe { self.masked(k, run) }
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

impl<const N: usize> Propagate<N> {
    /// `true` when the output's range overlaps an optional argument's (an
    /// in-place call): the missing elements must then be marked before
    /// the kernel overwrites them.
    fn output_overlaps_an_option(&self, run: &Strided<'_>) -> bool {
        let out = span(
            run.dst,
            run.dst_stride,
            run.count,
            self.fill.map_or(16, |b| b.size),
        );
        self.optional.iter().enumerate().any(|(i, bits)| {
            bits.is_some_and(|b| {
                spans_overlap(out, span(run.src[i], run.src_stride[i], run.count, b.size))
            })
        })
    }

    /// `true` when the output's range overlaps any argument's.
    fn output_overlaps_a_source(&self, run: &Strided<'_>) -> bool {
        let out_size = self.fill.map_or(16, |b| b.size);
        (0..N).any(|i| {
            let size = self.optional[i].map_or(16, |b| b.size);
            spans_overlap(
                span(run.dst, run.dst_stride, run.count, out_size),
                span(run.src[i], run.src_stride[i], run.count, size),
            )
        })
    }

    /// The general path: chunk by chunk, mark the missing elements, run
    /// the kernel (over the whole chunk of numbers, or its present runs),
    /// then write the missing results.
    ///
    /// # Safety
    /// As [`Kernel::strided`].
    unsafe fn masked(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        // SAFETY: the child slot holds the callable's own kernel, built for
        // Strided.
        let child = unsafe { k.child(self.child[0]) };
        let mut mask = [0u8; CHUNK];
        by_windows::<N>(&run, CHUNK, |chunk| {
            let (srcs, n) = (chunk.src, chunk.count);
            let mask = &mut mask[..n];
            mask.fill(0);
            for (i, bits) in self.optional.iter().enumerate() {
                if let Some(bits) = bits {
                    // SAFETY: `n` elements of source i are readable
                    // (Kernel::strided 1).
                    unsafe { bits.mark(srcs[i], run.src_stride[i], mask) };
                }
            }
            let any = mask.iter().fold(0u8, |a, &m| a | m) != 0;
            // SAFETY: the chunk's ranges are valid (Kernel::strided 1).
            let whole = || unsafe {
                child.call_strided(chunk.dst, chunk.dst_stride, srcs, chunk.src_stride, n)
            };
            if !any {
                whole()?;
            } else if !(self.all_numbers && whole().is_ok()) {
                // SAFETY: as above, for the present runs.
                unsafe { self.present_runs(k, chunk, mask) }?;
            }
            if any {
                if let Some(bits) = self.fill {
                    // SAFETY: the chunk's `n` output elements are writable.
                    unsafe { bits.fill(chunk.dst, chunk.dst_stride, mask) };
                } else {
                    for j in (0..n).filter(|&j| mask[j] != 0) {
                        // SAFETY: element j of the chunk is valid.
                        unsafe { self.write_missing(&chunk, j) }?;
                    }
                }
            }
            Ok(())
        })
    }
}

/// The bytes `[lo, hi)` that `count` elements of `size` bytes, `stride`
/// apart from `p`, span (an element of an unknown size counts as 16).
fn span(p: *const u8, stride: isize, count: usize, size: usize) -> (usize, usize) {
    let last = p.wrapping_offset(stride.wrapping_mul(count.saturating_sub(1) as isize));
    let (lo, hi) = if stride < 0 { (last, p) } else { (p, last) };
    (lo as usize, (hi as usize).saturating_add(size))
}

/// Whether two byte spans share a byte.
fn spans_overlap(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Calls `f` on `run` cut into windows of at most `size` elements, each a
/// run of its own (its `N` sources moved to the window's start); stops at
/// the first error.
#[inline(always)]
fn by_windows<const N: usize>(
    run: &Strided<'_>,
    size: usize,
    mut f: impl FnMut(Strided<'_>) -> Result<()>,
) -> Result<()> {
    let mut done = 0;
    while done < run.count {
        let n = (run.count - done).min(size);
        let at = done as isize;
        let srcs: [*const u8; N] =
            std::array::from_fn(|i| run.src[i].wrapping_offset(at * run.src_stride[i]));
        f(Strided {
            dst: run.dst.wrapping_offset(at * run.dst_stride),
            src: &srcs,
            count: n,
            ..*run
        })?;
        done += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `patch_where` against a plain loop: every length up to past two
    /// masks, contiguous and strided sources and outputs, 8- and 4-byte
    /// elements.
    #[test]
    fn patch_where_writes_na_exactly_where_the_source_is_na() {
        let f64_bits = Bits::of(BuiltinType::Float64);
        let i32_bits = Bits::of(BuiltinType::Int32);
        let (f64_na, i32_na) = (<f64 as NativeType>::NA, <i32 as NativeType>::NA);
        for n in (0..200).chain([511, 512, 513, 4097]) {
            for (sstep, dstep) in [(1usize, 1usize), (2, 1), (1, 3)] {
                let src: Vec<f64> = (0..n * sstep)
                    .map(|i| {
                        if (i * 7919) % 13 < 2 {
                            f64_na
                        } else {
                            i as f64
                        }
                    })
                    .collect();
                let mut dst = vec![1.5f64; n * dstep];
                let mut want = dst.clone();
                for j in 0..n {
                    if src[j * sstep].to_bits() == f64_na.to_bits() {
                        want[j * dstep] = f64_na;
                    }
                }
                // SAFETY: n elements at these strides are in the vectors,
                // which do not overlap.
                unsafe {
                    patch_where(
                        (src.as_ptr().cast(), 8 * sstep as isize, f64_bits),
                        (dst.as_mut_ptr().cast(), 8 * dstep as isize, f64_bits),
                        n,
                    )
                };
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&dst), bits(&want), "n {n}, steps {sstep} {dstep}");
                // A float64 source into an int32 output.
                let mut out = vec![5i32; n];
                // SAFETY: as above.
                unsafe {
                    patch_where(
                        (src.as_ptr().cast(), 8 * sstep as isize, f64_bits),
                        (out.as_mut_ptr().cast(), 4, i32_bits),
                        n,
                    )
                };
                for (j, x) in out.iter().enumerate() {
                    let missing = src[j * sstep].to_bits() == f64_na.to_bits();
                    assert_eq!(*x, if missing { i32_na } else { 5 }, "n {n} at {j}");
                }
            }
        }
    }
}
