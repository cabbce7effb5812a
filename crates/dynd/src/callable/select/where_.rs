//! `where(cond, x, y)`: `x` where `cond` is true, else `y`, elementwise (a
//! scalar callable: the lifter broadcasts it over fixed and var dims).
//!
//! It takes option types itself (missing values do not simply propagate:
//! a missing `y` is not missing where `x` is chosen), so the generic null
//! propagation of [`crate::callable::missing`] leaves it alone.

use super::{arity, by_size, plain_width};
use crate::callable::arith::promote;
use crate::callable::{CallableImpl, no_match};
use crate::error::{Error, Result};
use crate::exec::{self, SPLIT_MIN, Shared, TASK_ELEMENTS};
use crate::kernels::assign::{ErrorMode, make_assignment_kernel};
use crate::kernels::mask::Truthy;
use crate::kernels::mask::{BLOCK, Bits, Lane, Scratch};
use crate::kernels::{CKernelBuilder, Kernel, KernelArgs, KernelRef, KernelRequest, Strided};
use crate::layout::na;
use crate::types::{BuiltinType, Type};
use crate::with_native;
use std::pin::Pin;

/// `where(cond, x, y)`.
pub(super) struct Where {
    pub(super) sig: Type,
}

/// A condition's value type: bool, or a number tested for truthiness.
fn cond_type(c: &Type) -> Option<BuiltinType> {
    let b = c.option_value().unwrap_or(c).as_builtin()?;
    (b.is_bool() || with_native!(b, signed unsigned ieee => |T| ()).is_some()).then_some(b)
}

impl Where {
    /// The result for element types `c`, `x`, `y`.
    fn result(&self, args: &[Type]) -> Result<Type> {
        let [c, x, y] = args else {
            return Err(arity("where", "cond, x, y", args.len()));
        };
        if args.iter().any(Type::is_symbolic) {
            return Err(no_match("where", &self.sig, args));
        }
        if cond_type(c).is_none() {
            return Err(Error::type_error(format!(
                "where: the condition must be bool or a number (or an option of one), not {c}"
            )));
        }
        let (xv, yv) = (x.option_value().unwrap_or(x), y.option_value().unwrap_or(y));
        let numbers = |b: BuiltinType| b != BuiltinType::Void;
        let v = match (xv.as_builtin(), yv.as_builtin()) {
            (Some(a), Some(b)) if numbers(a) && numbers(b) => {
                Type::from(promote(a, b).ok_or_else(|| no_match("where", &self.sig, args))?)
            }
            _ if xv == yv => xv.clone(),
            _ => {
                return Err(Error::type_error(format!(
                    "where: x ({x}) and y ({y}) have no common type"
                )));
            }
        };
        if args.iter().any(|t| t.option_value().is_some()) {
            Type::option(v)
        } else {
            Ok(v)
        }
    }
}

impl CallableImpl for Where {
    fn name(&self) -> &str {
        "where"
    }

    fn signature(&self) -> &Type {
        &self.sig
    }

    fn resolve(&self, args: &[Type]) -> Result<Type> {
        self.result(args)
    }

    unsafe fn instantiate(
        &self,
        mut ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        let c = &args.src_tps[0];
        let out = args.dst_tp;
        let cond = cond_type(c).ok_or_else(|| no_match("where", &self.sig, args.src_tps))?;
        let width = plain_width(out);
        // x and y already hold the output's bits: no cast.
        let direct = [1, 2].map(|i| width.is_some() && args.src_tps[i] == *out);
        let out_na = out
            .option_value()
            .and_then(Type::as_builtin)
            .and_then(na::builtin_na);
        let k = WhereKernel {
            cond,
            cond_na: c.option_value().map(|_| Bits::of(cond)),
            width,
            out_na,
            out_tp: out.clone(),
            direct,
            children: [0, 0],
        };
        // SAFETY: `offset` is free (the caller's promise); the children go
        // in the slots after it, recorded below as they are built.
        let mut at = unsafe { ckb.as_mut().emplace(offset, args.req, k) }?;
        for i in 0..2 {
            if direct[i] {
                continue;
            }
            // SAFETY: a WhereKernel was emplaced at `offset`; `at` is the
            // free slot past everything built so far, used by child i only.
            unsafe { ckb.as_mut().kernel_mut::<WhereKernel>(offset) }?.children[i] = at - offset;
            // SAFETY: `at` is free; each arrmeta is the caller's, of its type.
            at = unsafe {
                make_assignment_kernel(
                    ckb.as_mut(),
                    at,
                    out,
                    args.dst_meta,
                    &args.src_tps[i + 1],
                    args.src_metas[i + 1],
                    KernelRequest::Strided,
                    ErrorMode::Default,
                )
            }
            .map_err(|e| e.context(format!("where: {}", ["x", "y"][i])))?;
        }
        Ok(at)
    }
}

/// `dst = cond ? x : y`, missing where `cond` is.
struct WhereKernel {
    cond: BuiltinType,
    /// The condition's NA, when it is optional.
    cond_na: Option<Bits>,
    /// The output's width when it is bits (a builtin or an option of one).
    width: Option<usize>,
    /// The output's NA bytes (an option of a builtin).
    out_na: Option<[u8; 16]>,
    out_tp: Type,
    /// x, y already the output's bits (their children are not built).
    direct: [bool; 2],
    /// The casts of x and y to the output type.
    children: [usize; 2],
}

/// Which operand each element takes: 0 is y.
const TAKE_X: u8 = 1;
const MISSING: u8 = 2;

impl WhereKernel {
    /// Fills `sel` with [`TAKE_X`], 0 (y) or [`MISSING`] for the
    /// conditions at `c` (`stride` apart).
    ///
    /// # Safety
    /// 1. `sel.len()` conditions at `stride` from `c` are readable.
    unsafe fn select(&self, c: *const u8, stride: isize, sel: &mut [u8]) {
        if self.cond.is_bool() {
            for (j, s) in sel.iter_mut().enumerate() {
                // SAFETY: (1) condition j is readable.
                let b = unsafe { *c.wrapping_offset(j as isize * stride) };
                *s = (b != 0) as u8;
            }
        } else {
            with_native!(self.cond, signed unsigned ieee => |T| {
                for (j, s) in sel.iter_mut().enumerate() {
                    // SAFETY: (1) condition j is readable.
                    let v = unsafe { c.wrapping_offset(j as isize * stride).cast::<T>().read_unaligned() };
                    *s = Truthy::truthy(v) as u8;
                }
            });
        }
        if let Some(bits) = self.cond_na {
            let mut miss = [0u8; BLOCK];
            let miss = &mut miss[..sel.len()];
            // SAFETY: (1).
            unsafe { bits.mark(c, stride, miss) };
            for (s, &m) in sel.iter_mut().zip(miss.iter()) {
                if m != 0 {
                    *s = MISSING;
                }
            }
        }
    }
}

/// `out[j] = c[j] != 0 ? x[j] : y[j]` over slices, where an `x` or `y` of
/// one element repeats: a lane blend, which LLVM vectorises.
#[inline(always)]
fn blend_body<U: Lane>(c: &[u8], x: &[U], y: &[U], out: &mut [U]) {
    let n = out.len();
    let c = &c[..n];
    match (x.len() == n, y.len() == n) {
        (true, true) => {
            let (x, y) = (&x[..n], &y[..n]);
            for j in 0..n {
                let m = U::all(c[j] != 0);
                out[j] = (x[j] & m) | (y[j] & !m);
            }
        }
        (true, false) => {
            let (x, y) = (&x[..n], y[0]);
            for j in 0..n {
                let m = U::all(c[j] != 0);
                out[j] = (x[j] & m) | (y & !m);
            }
        }
        (false, true) => {
            let (x, y) = (x[0], &y[..n]);
            for j in 0..n {
                let m = U::all(c[j] != 0);
                out[j] = (x & m) | (y[j] & !m);
            }
        }
        (false, false) => {
            let (x, y) = (x[0], y[0]);
            for j in 0..n {
                let m = U::all(c[j] != 0);
                out[j] = (x & m) | (y & !m);
            }
        }
    }
}

/// [`blend_body`] compiled for AVX2.
///
/// # Safety
/// 1. The CPU supports AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn blend_avx2<U: Lane>(c: &[u8], x: &[U], y: &[U], out: &mut [U]) {
    blend_body(c, x, y, out)
}

/// [`blend_body`], the AVX2 build where the CPU has it (the 64-bit lane
/// compare needs more than the x86-64 baseline).
#[inline(always)]
fn blend<U: Lane>(c: &[u8], x: &[U], y: &[U], out: &mut [U]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { blend_avx2(c, x, y, out) };
    }
    blend_body(c, x, y, out)
}

/// One operand of the bits path: a pointer and a byte stride.
type Operand = (*const u8, isize);

/// The bits path over `n` elements of width `U`: contiguous (or repeated)
/// operands as slices, else element by element.
///
/// # Safety
/// 1. `n` elements of each operand at its stride are valid: the output
///    writable (not overlapping the others), the rest readable.
#[inline(always)]
unsafe fn pick<U: Lane>(c: Operand, x: Operand, y: Operand, out: (*mut u8, isize), n: usize) {
    let w = size_of::<U>() as isize;
    let aligned = |p: *const u8| (p as usize).is_multiple_of(align_of::<U>());
    let slice_of = |(p, s): Operand| -> Option<&[U]> {
        // SAFETY: (1) the operand's elements are readable: `n` contiguous
        // aligned ones, or one repeated.
        match s {
            _ if !aligned(p) => None,
            // SAFETY: (1) `n` contiguous, aligned, readable elements.
            s if s == w => Some(unsafe { std::slice::from_raw_parts(p.cast::<U>(), n) }),
            // SAFETY: (1) one readable, aligned element, repeated.
            0 => Some(unsafe { std::slice::from_raw_parts(p.cast::<U>(), 1) }),
            _ => None,
        }
    };
    if let (1, Some(xs), Some(ys), true, true) =
        (c.1, slice_of(x), slice_of(y), out.1 == w, aligned(out.0))
    {
        // SAFETY: (1) `n` contiguous, aligned, writable outputs apart from
        // the sources; `n` contiguous condition bytes.
        let (cs, os) = unsafe {
            (
                std::slice::from_raw_parts(c.0, n),
                std::slice::from_raw_parts_mut(out.0.cast::<U>(), n),
            )
        };
        return blend(cs, xs, ys, os);
    }
    for j in 0..n as isize {
        // SAFETY: (1) element j of each operand.
        unsafe {
            let b = *c.0.wrapping_offset(j * c.1);
            let from = if b != 0 { x } else { y };
            let v = from
                .0
                .wrapping_offset(j * from.1)
                .cast::<U>()
                .read_unaligned();
            out.0
                .wrapping_offset(j * out.1)
                .cast::<U>()
                .write_unaligned(v);
        }
    }
}

impl Kernel for WhereKernel {
    const NSRC: usize = 3;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: one element is a strided run of one (Kernel::single 1).
        unsafe { self.strided(k, Strided::one(dst, src, &[0, 0, 0])) }
    }

    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        let plain_bool = self.cond.is_bool() && self.cond_na.is_none();
        // The common case first: bool conditions, x and y the output's bits.
        if let (true, [true, true], Some(w)) = (plain_bool, self.direct, self.width) {
            let c = (run.src[0], run.src_stride[0]);
            let (x, y) = (
                (run.src[1], run.src_stride[1]),
                (run.src[2], run.src_stride[2]),
            );
            let (c, x, y) = (Shared(c), Shared(x), Shared(y));
            let out = Shared((run.dst, run.dst_stride));
            let pieces = if run.count >= SPLIT_MIN {
                TASK_ELEMENTS
            } else {
                run.count
            };
            // A flat run of the executor: pieces of a long run on its threads.
            return exec::flat(run.count, pieces, |lo, n| {
                let at = |(p, s): Operand| (p.wrapping_offset(lo as isize * s), s);
                let (d, ds) = *out.get();
                let dst = (d.wrapping_offset(lo as isize * ds), ds);
                // SAFETY: the run's ranges are valid (Kernel::strided 1),
                // elements lo..lo + n of each this piece's alone in the
                // output; the output of a call does not overlap its sources.
                by_size!(w, |U| unsafe {
                    pick::<U>(at(*c.get()), at(*x.get()), at(*y.get()), dst, n)
                });
                Ok(())
            });
        }
        let mut sel = [0u8; BLOCK];
        // Not zeroed (a ragged call runs once per row): the casts write
        // each block before it is read.
        let mut scratch = std::mem::MaybeUninit::<[Scratch; 2]>::uninit();
        let scratch = scratch.as_mut_ptr().cast::<u8>();
        let mut done = 0;
        while done < run.count {
            let n = (run.count - done).min(BLOCK);
            let at = |i: usize| {
                (
                    run.src[i].wrapping_offset(done as isize * run.src_stride[i]),
                    run.src_stride[i],
                )
            };
            let dst = run.dst.wrapping_offset(done as isize * run.dst_stride);
            let sel = &mut sel[..n];
            let (c, cs) = at(0);
            // SAFETY: conditions [done, done + n) are readable.
            unsafe { self.select(c, cs, sel) };
            if let Some(w) = self.width {
                // x and y as the output's bits: directly, or cast into the
                // scratch blocks (every element: the casts are safe
                // promotions, which cannot fail on a value not chosen).
                let mut ops = [at(1), at(2)];
                for (i, op) in ops.iter_mut().enumerate() {
                    if self.direct[i] {
                        continue;
                    }
                    let tmp = scratch.wrapping_add(i * size_of::<Scratch>());
                    // SAFETY: the child was built for Strided from this
                    // operand to the output type; the scratch has room for
                    // `n` elements of any width, contiguous.
                    unsafe {
                        k.child(self.children[i])
                            .call_strided(tmp, w as isize, &[op.0], &[op.1], n)
                    }
                    .map_err(|e| e.context(format!("where: {}", ["x", "y"][i])))?;
                    *op = (tmp.cast_const(), w as isize);
                }
                // SAFETY: the operands hold `n` elements each (the selection
                // bytes contiguous); the output's are writable.
                by_size!(w, |U| unsafe {
                    pick::<U>((sel.as_ptr(), 1), ops[0], ops[1], (dst, run.dst_stride), n)
                });
                if let (Some(na), true) = (self.out_na, self.cond_na.is_some()) {
                    for (j, &s) in sel.iter().enumerate() {
                        if s == MISSING {
                            let to = dst.wrapping_offset(j as isize * run.dst_stride);
                            // SAFETY: output element j is writable, `w` bytes.
                            unsafe { std::ptr::copy_nonoverlapping(na.as_ptr(), to, w) };
                        }
                    }
                }
            } else {
                // Any other type: runs of one choice, each copied by its cast.
                let mut j = 0;
                while j < n {
                    let s = sel[j];
                    let start = j;
                    while j < n && sel[j] == s {
                        j += 1;
                    }
                    let to = dst.wrapping_offset(start as isize * run.dst_stride);
                    if s == MISSING {
                        for e in 0..(j - start) {
                            let p = to.wrapping_offset(e as isize * run.dst_stride);
                            // SAFETY: output element is writable, of the
                            // output type (optional: the condition is).
                            unsafe { na::set_missing(&self.out_tp, p) }?;
                        }
                        continue;
                    }
                    let i = if s == TAKE_X { 0 } else { 1 };
                    let (p, st) = at(i + 1);
                    let from = p.wrapping_offset(start as isize * st);
                    // SAFETY: the child was built for Strided (not direct:
                    // the output is not bits); elements [start, j) of the
                    // run.
                    unsafe {
                        k.child(self.children[i]).call_strided(
                            to,
                            run.dst_stride,
                            &[from],
                            &[st],
                            j - start,
                        )
                    }
                    .map_err(|e| e.context(format!("where: {}", ["x", "y"][i])))?;
                }
            }
            done += n;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.children
    }
}
