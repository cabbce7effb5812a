//! Computing on missing values themselves (DESIGN §6, §8): `is_null`,
//! `fill_null` and `drop_null`, for options of every type — the NA
//! sentinel kind and the flag byte kind alike ([`crate::layout::na`]).
//!
//! | callable | arguments | result |
//! |---|---|---|
//! | `is_null(x)` | any `x` | `bool` per element of `x`'s dims: true where missing; all false for a type that is not an option; one bool per record for `?{...}` (and per list for `?var * T`) |
//! | `fill_null(x, v)` | `x`, a fill value `v` | `x`'s value where present, `v` cast to `x`'s value type where missing; the type drops `x`'s `?` (`?T` → `T`), unless `v` is itself optional: then the result is `?T`, missing where both are (a coalesce) |
//! | `drop_null(x)` | `x` with at least one dim | `x` without its missing elements along the innermost dim, which becomes var; the element drops its `?` |
//!
//! ```
//! use dynd::{Array, compute};
//! let x = Array::from_json("4 * ?float64", "[1.5, null, 3, null]").unwrap();
//! assert_eq!(compute::is_null(&x).unwrap().to_json(), "[false,true,false,true]");
//! let filled = compute::fill_null(&x, &Array::from(0i32)).unwrap();
//! assert_eq!(filled.tp().to_string(), "4 * float64");
//! assert_eq!(filled.to_json(), "[1.5,0.0,3.0,0.0]");
//! let dropped = compute::drop_null(&x).unwrap();
//! assert_eq!((dropped.tp().to_string(), dropped.to_json()), ("var * float64".into(), "[1.5,3.0]".into()));
//! ```
//!
//! **Dims.** `is_null` and `fill_null` are scalar callables, lifted over
//! fixed and var dims like any other; `v` broadcasts against `x` (a scalar
//! fills every hole, `N * 1 * T` one value per row).
//!
//! **Options of dims.** When `x`'s element is an option of a dim
//! (`2 * ?3 * int32`: the element is `?3 * int32`, its value `3 * int32`),
//! the fill's innermost dims, as many as the value has, are the value's:
//! they are `fill_null`'s *core dims* ([`CallableImpl::core_dims`]), not
//! lifted. Only the fill's dims outside them broadcast against `x`'s
//! outer dims:
//!
//! | `x` | `v` | result |
//! |---|---|---|
//! | `2 * ?3 * int32` `[[1,2,3], null]` | `3 * int32` `[7,8,9]` | `2 * 3 * int32` `[[1,2,3],[7,8,9]]` |
//! | `2 * ?3 * int32` | `2 * 3 * int32`: one row per element of `x` | `2 * 3 * int32` |
//! | `2 * ?3 * int32` | `int32` `0` (or `1 * int32`): fills every slot of a missing row | `2 * 3 * int32` `[[1,2,3],[0,0,0]]` |
//! | `N * ?var * int32` | `var * int32` or `M * int32`: the missing rows become copies of it | `N * var * int32` |
//! | `N * ?var * int32` | `int32`: a `Type` error, a scalar has no length to give a var row | |
//!
//! The fill's core casts to the value type as assignment does (its dims
//! broadcast into the value's); one that does not fit (`2 * int32` for
//! `3 * int32`) is a `Type` error naming both, when the call is resolved.
//! A var fill row whose length does not fit a fixed value dim is a
//! broadcast error where it is used.
//!
//! `drop_null` keeps the
//! outer dims and makes the innermost one var: `N * ?T` → `var * T`,
//! `N * var * ?T` → `N * var * T`, `N * M * ?T` → `N * var * T`. An
//! option of a dim is an element like any other: `drop_null(2 * ?3 * int32)`
//! drops whole missing lists, `var * 3 * int32`.
//!
//! **Outputs.** `drop_null` allocates each output row anew from the
//! destination's var dim block (a row already written is replaced, not
//! reused), so a destination given to [`Callable::instantiate`] must have
//! a plain innermost var dim (offset 0, stride the element size), as fresh
//! outputs do.
//!
//! **Errors.** A fill value whose type does not cast to `x`'s value type is
//! a `Type` error naming both, when the call is built; a fill value that
//! does not fit it (`300` for `?int8`) is the cast's error (`Overflow`,
//! `Fractional`, ... under the default error mode) where it is used, that
//! is where `x` is missing, prefixed `fill_null: the fill value`.
//!
//! **Speed.** The missing test is one comparison per element: a builtin
//! NA's bits as an integer of its width (as null propagation marks them,
//! [`super::missing`]), the null `begin` of a string, or the flag byte.
//! `is_null` and `fill_null` over builtin numbers are plain loops that LLVM
//! vectorises (`fill_null` with a scalar fill: a copy, then a blend of the
//! cast fill value where the copy holds NA). `drop_null` over builtin
//! numbers is one pass per row: a branch-free compaction into an
//! allocation of the row's length, shrunk to what was kept.

use super::registry::builtin_callables;
use super::rows::{RowIn, RowKernel, VarAlloc, copy_kernel};
use super::{Callable, CallableImpl, arity, no_match, signature};
use crate::error::{Error, Result};
use crate::kernels::broadcast::{self, dims_of, dims_through_options};
use crate::kernels::kernel_size;
use crate::kernels::mask::{BLOCK, Bits, CHUNK, fill_where, scratch};
use crate::kernels::{CKernelBuilder, Kernel, KernelArgs, KernelRef, KernelRequest, Strided};
use crate::layout::{VarDimData, VarDimMeta};
use crate::types::{Type, TypeKind};
use std::mem::size_of;
use std::pin::Pin;

// ------------------------------------------------------------ the null test

/// How to tell whether an element of one type is missing: the one
/// comparison [`crate::layout::na::is_missing`] makes, chosen once.
#[derive(Debug, Clone, Copy)]
enum NullTest {
    /// Not an option: never missing.
    Never,
    /// A sentinel option: the value's NA bits.
    Sentinel(Bits),
    /// A flag option: the flag byte at this offset is 0.
    Flag(usize),
}

impl NullTest {
    /// The test for elements of `tp`.
    fn of(tp: &Type) -> Result<NullTest> {
        match (tp.option_value(), tp.option_flag_offset()) {
            (None, _) => Ok(NullTest::Never),
            (Some(_), Some(flag)) => Ok(NullTest::Flag(flag)),
            (Some(v), None) => Bits::of_sentinel(v)
                .map(NullTest::Sentinel)
                .ok_or_else(|| Error::type_error(format!("{tp} has no missing value to test"))),
        }
    }

    /// Sets `mask[j]` where element `j` (`stride` bytes apart from `src`)
    /// is missing; leaves the others as they are.
    ///
    /// # Safety
    /// 1. `mask.len()` elements of the tested type at `stride` are readable.
    #[inline]
    unsafe fn mark(self, src: *const u8, stride: isize, mask: &mut [u8]) {
        match self {
            NullTest::Never => {}
            // SAFETY: (1) the elements are readable, each starting with the
            // value's bits.
            NullTest::Sentinel(bits) => unsafe { bits.mark(src, stride, mask) },
            NullTest::Flag(flag) => {
                for (j, m) in mask.iter_mut().enumerate() {
                    // SAFETY: (1) element j is readable, its flag byte at
                    // `flag` inside it.
                    let f = unsafe { *src.wrapping_offset(j as isize * stride).add(flag) };
                    *m |= (f == 0) as u8;
                }
            }
        }
    }
}

/// Runs `each(start, len, missing)` over the maximal runs of equal `mask`
/// values, in order.
fn runs(mask: &[u8], mut each: impl FnMut(usize, usize, bool) -> Result<()>) -> Result<()> {
    let mut j = 0;
    while j < mask.len() {
        let start = j;
        let m = mask[j];
        while j < mask.len() && mask[j] == m {
            j += 1;
        }
        each(start, j - start, m != 0)?;
    }
    Ok(())
}

// ------------------------------------------------------------------ is_null

/// `is_null(x)`.
struct IsNull {
    sig: Type,
}

impl CallableImpl for IsNull {
    fn name(&self) -> &str {
        "is_null"
    }

    fn signature(&self) -> &Type {
        &self.sig
    }

    fn resolve(&self, args: &[Type]) -> Result<Type> {
        match args {
            [x] if !x.is_symbolic() => Ok(Type::bool()),
            [_] => Err(no_match("is_null", &self.sig, args)),
            _ => Err(arity("is_null", "x", args.len())),
        }
    }

    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        let k = IsNullKernel {
            test: NullTest::of(&args.src_tps[0])?,
        };
        // SAFETY: `offset` is free (the caller's promise); no children.
        unsafe { ckb.emplace(offset, args.req, k) }
    }
}

/// `dst = missing(src)`, bool.
struct IsNullKernel {
    test: NullTest,
}

impl Kernel for IsNullKernel {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: one element is a strided run of one (Kernel::single 1).
        unsafe { self.strided(k, Strided::one(dst, src, &[0])) }
    }

    unsafe fn strided(&self, _k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        let mut mask = [0u8; CHUNK];
        let mut done = 0;
        while done < run.count {
            let n = (run.count - done).min(CHUNK);
            let mask = &mut mask[..n];
            mask.fill(0);
            let src = run.src[0].wrapping_offset(done as isize * run.src_stride[0]);
            let dst = run.dst.wrapping_offset(done as isize * run.dst_stride);
            // SAFETY: elements [done, done + n) of the source are readable
            // (Kernel::strided 1).
            unsafe { self.test.mark(src, run.src_stride[0], mask) };
            if run.dst_stride == 1 {
                // SAFETY: `n` contiguous bool outputs are writable; the
                // mask is on this stack frame, apart from them.
                unsafe { std::ptr::copy_nonoverlapping(mask.as_ptr(), dst, n) };
            } else {
                for (j, &m) in mask.iter().enumerate() {
                    // SAFETY: output element j is a writable bool.
                    unsafe { dst.wrapping_offset(j as isize * run.dst_stride).write(m) };
                }
            }
            done += n;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- fill_null

/// `fill_null(x, v)`.
struct FillNull {
    sig: Type,
}

impl FillNull {
    /// The result for element types `x`, `v`: `x`'s value type, optional
    /// when both are.
    fn result(x: &Type, v: &Type) -> Type {
        match x.option_value() {
            Some(_) if v.option_value().is_some() => x.clone(),
            Some(t) => t.clone(),
            None => x.clone(),
        }
    }

    /// Checks that the fill element `v` fits `x`'s value type (`x` itself
    /// when it is not an option) by shape: its dims (the core dims the
    /// lifter left it, [`CallableImpl::core_dims`]) broadcast into the
    /// value's as assignment broadcasts, and every var dim of the value
    /// gets its length from a dim of the fill — a scalar fills a fixed
    /// row, but has no length to give a var one.
    fn check_fill(x: &Type, v: &Type) -> Result<()> {
        let value = x.option_value().unwrap_or(x);
        let (vd, fd) = (dims_through_options(value), dims_through_options(v));
        if vd.is_empty() && fd.is_empty() {
            return Ok(());
        }
        let misfit = |why: &str| {
            Error::type_error(format!(
                "fill_null: the fill value ({v}) does not fit {value}, the value type of {x}: {why}"
            ))
        };
        broadcast::check(value, std::slice::from_ref(v)).map_err(|e| misfit(e.message()))?;
        let uncovered = vd.len().saturating_sub(fd.len());
        if let Some(at) = vd[..uncovered].iter().position(Option::is_none) {
            return Err(misfit(&format!(
                "dim {at} of the value is var, and the fill has no dim there to give each row a length"
            )));
        }
        Ok(())
    }
}

impl CallableImpl for FillNull {
    fn name(&self) -> &str {
        "fill_null"
    }

    fn signature(&self) -> &Type {
        &self.sig
    }

    fn resolve(&self, args: &[Type]) -> Result<Type> {
        match args {
            [x, v] if !x.is_symbolic() && !v.is_symbolic() => {
                FillNull::check_fill(x, v)?;
                Ok(FillNull::result(x, v))
            }
            [_, _] => Err(no_match("fill_null", &self.sig, args)),
            _ => Err(arity("fill_null", "x, v", args.len())),
        }
    }

    /// When `x`'s element is an option of a dim (`2 * ?3 * int32`), the
    /// fill's innermost dims that line up with the option's value
    /// (`3 * int32`) are the fill's own, as many as the value has: a
    /// `3 * int32` fill is one row for every missing row, a `2 * 3 * int32`
    /// fill one per element of `x`'s outer `2`, a scalar fills every slot
    /// of a missing fixed row.
    fn core_dims(&self, args: &[&Type]) -> Option<Vec<usize>> {
        let [x, v] = args else { return None };
        let value = x.dtype().option_value()?;
        let levels = dims_through_options(value).len();
        (levels > 0).then(|| vec![0, levels.min(dims_through_options(v).len())])
    }

    unsafe fn instantiate(
        &self,
        mut ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        let (x, v) = (&args.src_tps[0], &args.src_tps[1]);
        let (x_meta, v_meta) = (args.src_metas[0], args.src_metas[1]);
        let out = args.dst_tp;
        let value = x.option_value().unwrap_or(x);
        // Builtin numbers whose output is `x`'s value's bits (or its
        // option's, the same bits): copied, then the fill blended in.
        let builtin = out
            .option_value()
            .unwrap_or(out)
            .as_builtin()
            .filter(|_| value.as_builtin().is_some())
            .map(|b| b.data_size())
            .filter(|s| s.is_power_of_two() && *s <= 16);
        let k = FillNullKernel {
            test: NullTest::of(x)?,
            builtin,
            children: [kernel_size::<FillNullKernel>(), 0],
        };
        // SAFETY: `offset` is free (the caller's promise); child 0 is the
        // slot emplace reserves, child 1 is 0 (not built) until set below.
        let at = unsafe { ckb.as_mut().emplace(offset, args.req, k) }?;
        // x's value into the output: an option's arrmeta is its value's
        // (DESIGN §4), and the value's data starts the option's. The fast
        // path copies NA bits too (then overwrites them), so for builtins
        // the copy is of plain values, into a `?T` output's value bits too.
        let copy_to = if builtin.is_some() {
            out.option_value().unwrap_or(out)
        } else {
            out
        };
        // SAFETY: `at` is the reserved slot; the arrmeta is the caller's
        // (a sentinel option's is its value's).
        let at2 =
            unsafe { copy_kernel(ckb.as_mut(), at, (copy_to, args.dst_meta), (value, x_meta)) }?;
        // SAFETY: a FillNullKernel was emplaced at `offset`; `at2` is the
        // free slot just past its first child, which only child 1 uses.
        unsafe { ckb.as_mut().kernel_mut::<FillNullKernel>(offset) }?.children[1] = at2 - offset;
        // SAFETY: `at2` is free; the arrmeta is the caller's.
        unsafe { copy_kernel(ckb, at2, (out, args.dst_meta), (v, v_meta)) }.map_err(|e| {
            if e.kind() == crate::ErrorKind::Type {
                Error::type_error(format!(
                    "fill_null: the fill value ({v}) does not cast to {out}, the value type of {x}: {}",
                    e.message()
                ))
            } else {
                e.context("fill_null: the fill value")
            }
        })
    }
}

/// `dst = missing(x) ? v : x`, with `v` cast by child 1 and `x` copied by
/// child 0.
struct FillNullKernel {
    test: NullTest,
    /// The output's element size when `x`'s value and the output are
    /// builtins (the fast path's width).
    builtin: Option<usize>,
    /// The copy of `x`'s value, then the cast of `v`.
    children: [usize; 2],
}

impl Kernel for FillNullKernel {
    const NSRC: usize = 2;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: one element is a strided run of one (Kernel::single 1).
        unsafe { self.strided(k, Strided::one(dst, src, &[0, 0])) }
    }

    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        // SAFETY: both children were built for Strided at these offsets.
        let (copy, cast) = unsafe { (k.child(self.children[0]), k.child(self.children[1])) };
        let cast_error = |e: Error| e.context("fill_null: the fill value");
        if let (Some(size), NullTest::Sentinel(na)) = (self.builtin, self.test)
            && run.src_stride[1] == 0
            && run.count > 1
        {
            // One fill value: cast once; should it not fit, the masked path
            // below reports it only if a missing element uses it.
            let mut fill = 0u128;
            // SAFETY: the fill value is readable (Kernel::strided 1) and
            // `fill` has room for any builtin.
            let cast_once =
                unsafe { cast.call_strided((&raw mut fill).cast(), 0, &[run.src[1]], &[0], 1) };
            if cast_once.is_ok() {
                let fill = Bits::new(size, &fill.to_le_bytes()[..size]);
                let mut scratch = scratch();
                let tmp = scratch.as_mut_ptr().cast::<u8>();
                let mut done = 0;
                while done < run.count {
                    let n = (run.count - done).min(BLOCK);
                    let x = run.src[0].wrapping_offset(done as isize * run.src_stride[0]);
                    let dst = run.dst.wrapping_offset(done as isize * run.dst_stride);
                    // SAFETY: the block's source is valid (Kernel::strided
                    // 1); the scratch has room for n elements of the
                    // output's width, contiguous.
                    unsafe {
                        copy.call_strided(tmp, size as isize, &[x], &run.src_stride[..1], n)
                    }?;
                    // SAFETY: as above; the scratch holds the n values, each
                    // stored to the output, or the fill where `x` is NA.
                    unsafe {
                        fill_where(
                            (x, run.src_stride[0], na),
                            (dst, run.dst_stride, fill),
                            n,
                            Some(tmp),
                        )
                    };
                    done += n;
                }
                return Ok(());
            }
        }
        if matches!(self.test, NullTest::Never) {
            // SAFETY: the run's ranges are valid (Kernel::strided 1).
            return unsafe {
                copy.call_strided(
                    run.dst,
                    run.dst_stride,
                    &run.src[..1],
                    &run.src_stride[..1],
                    run.count,
                )
            };
        }
        let mut mask = [0u8; CHUNK];
        let mut done = 0;
        while done < run.count {
            let n = (run.count - done).min(CHUNK);
            let mask = &mut mask[..n];
            mask.fill(0);
            let at = |p: *const u8, stride: isize, j: usize| {
                p.wrapping_offset((done + j) as isize * stride)
            };
            // SAFETY: elements [done, done + n) of x are readable.
            unsafe {
                self.test.mark(
                    at(run.src[0], run.src_stride[0], 0),
                    run.src_stride[0],
                    mask,
                )
            };
            runs(mask, |start, len, missing| {
                let dst = at(run.dst.cast_const(), run.dst_stride, start).cast_mut();
                // SAFETY: elements [done + start, + len) of every range are
                // valid (Kernel::strided 1).
                unsafe {
                    if missing {
                        let v = at(run.src[1], run.src_stride[1], start);
                        cast.call_strided(dst, run.dst_stride, &[v], &run.src_stride[1..], len)
                            .map_err(cast_error)
                    } else {
                        let x = at(run.src[0], run.src_stride[0], start);
                        copy.call_strided(dst, run.dst_stride, &[x], &run.src_stride[..1], len)
                    }
                }
            })?;
            done += n;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.children
    }
}

// ---------------------------------------------------------------- drop_null

/// `drop_null(x)`: sees whole types, and lifts itself over the outer dims.
struct DropNull {
    sig: Type,
}

impl RowKernel for DropNull {
    fn row_name(&self) -> &str {
        "drop_null"
    }

    fn row_signature(&self) -> &Type {
        &self.sig
    }

    /// `x`'s outer dims (all but the innermost), its innermost dim with
    /// the element (`M * ?T`), and the result's `var * T`.
    fn parts(&self, args: &[Type]) -> Result<(Vec<Option<usize>>, Type, Type)> {
        let [x] = args else {
            return Err(arity("drop_null", "x", args.len()));
        };
        x.require_concrete("drop_null's argument")?;
        let mut dims = dims_of(x).to_vec();
        if dims.pop().is_none() {
            return Err(Error::type_error(format!(
                "drop_null drops missing elements along a dim, and {x} has none"
            )));
        }
        let mut inner = x;
        for _ in 0..dims.len() {
            inner = inner.dim_elem().unwrap_or(inner);
        }
        let elem = x.dtype();
        let value = elem.option_value().unwrap_or(elem);
        Ok((dims, inner.clone(), Type::var_dim(value.clone())))
    }

    /// The leaf: one `var * T` from one `M * ?T` (or `var * ?T`).
    ///
    /// # Safety
    /// As [`CallableImpl::instantiate`], with `dst` `var * T` and `src` the
    /// innermost dim of `x` (with their arrmeta).
    unsafe fn instantiate_row(
        &self,
        mut ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        dst: (&Type, *const u8),
        src: (&Type, *const u8),
        req: KernelRequest,
    ) -> Result<usize> {
        let (TypeKind::VarDim { elem: value }, Some(elem)) = (dst.0.kind(), src.0.dim_elem())
        else {
            return Err(Error::type_error(format!(
                "drop_null writes var * T from a dim, not {} from {}",
                dst.0, src.0
            )));
        };
        // SAFETY: (2) the destination's arrmeta.
        let (out, _) = unsafe { VarAlloc::of("drop_null", dst.0, dst.1) }?;
        // SAFETY: (2) the arrmeta is of the source's dim.
        let (src_dim, src_elem_meta) = unsafe { RowIn::of("drop_null", src.0, src.1) }?;
        let test = NullTest::of(elem)?;
        let compact = match test {
            NullTest::Sentinel(bits) if value.as_builtin().is_some() => Some(bits),
            _ => None,
        };
        let k = DropNullKernel {
            src: src_dim,
            test,
            compact,
            out,
            child: [kernel_size::<DropNullKernel>()],
        };
        // SAFETY: (1) `offset` is free; the child goes in the slot emplace
        // reserves.
        let at = unsafe { ckb.as_mut().emplace(offset, req, k) }?;
        // SAFETY: `at` is the reserved slot; the element arrmeta of both
        // (an option's arrmeta is its value's, DESIGN §4).
        unsafe {
            copy_kernel(
                ckb,
                at,
                (value, dst.1.add(size_of::<VarDimMeta>())),
                (value, src_elem_meta),
            )
        }
    }
}

/// One `var * T` row from one row of `x`: its present elements.
struct DropNullKernel {
    src: RowIn,
    test: NullTest,
    /// The NA bits, when the value is a builtin: a compaction by bits.
    compact: Option<Bits>,
    /// Where the output rows are allocated.
    out: VarAlloc,
    /// The copy of a present element's value (other types than builtins).
    child: [usize; 1],
}

impl Kernel for DropNullKernel {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: the source is an element of the dim the reader was made
        // for (Kernel::single 1).
        let (first, n, stride) = unsafe { self.src.row(src[0]) };
        let (begin, kept) = if let Some(bits) = self.compact {
            // Builtins: room for the whole row, one compacting pass, then
            // the allocation shrunk to what was kept.
            let out = self.out.allocate("drop_null", n, false)?;
            // SAFETY: the row's `n` elements are readable (Kernel::single
            // 1); `out` has room for `n` values, in a block apart from x.
            let kept = unsafe { bits.compact(first, stride, n, out) };
            let out = if kept < n {
                self.out.shrink(out, kept)
            } else {
                out
            };
            (out, kept)
        } else {
            // SAFETY: the child was built for Strided on the values.
            let copy = unsafe { k.child(self.child[0]) };
            let mut mask = [0u8; CHUNK];
            let mut missing = 0usize;
            let mut done = 0;
            while done < n {
                let m = (n - done).min(CHUNK);
                let mask = &mut mask[..m];
                mask.fill(0);
                // SAFETY: elements [done, done + m) of the row are readable.
                unsafe {
                    self.test
                        .mark(first.wrapping_offset(done as isize * stride), stride, mask)
                };
                missing += mask.iter().map(|&b| b as usize).sum::<usize>();
                done += m;
            }
            let kept = n - missing;
            let out = self.out.allocate("drop_null", kept, false)?;
            let esize = self.out.esize();
            let mut at = 0usize;
            done = 0;
            while done < n {
                let m = (n - done).min(CHUNK);
                let mask = &mut mask[..m];
                mask.fill(0);
                let base = first.wrapping_offset(done as isize * stride);
                // SAFETY: as above.
                unsafe { self.test.mark(base, stride, mask) };
                runs(mask, |start, len, is_missing| {
                    if !is_missing {
                        let from = base.wrapping_offset(start as isize * stride);
                        let to = out.wrapping_add(at * esize);
                        // SAFETY: `len` present elements of the row, into
                        // `len` free slots of the (zeroed) new row.
                        unsafe { copy.call_strided(to, esize as isize, &[from], &[stride], len) }?;
                        at += len;
                    }
                    Ok(())
                })?;
                done += m;
            }
            (out, kept)
        };
        let row = VarDimData { begin, size: kept };
        // SAFETY: the destination is a writable var element (offset 0,
        // checked when built).
        unsafe { dst.cast::<VarDimData>().write_unaligned(row) };
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

// ------------------------------------------------------------- registration

builtin_callables! {
    /// The built-in `is_null`.
    pub fn is_null() = Callable::new(IsNull {
        sig: signature("(T) -> bool"),
    });
    /// The built-in `fill_null`.
    pub fn fill_null() = Callable::new(FillNull {
        sig: signature("(?T, T) -> T"),
    });
    /// The built-in `drop_null`.
    pub fn drop_null() = Callable::new(DropNull {
        sig: signature("(Dims... * N * ?T) -> Dims... * var * T"),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::na;

    /// The bit tests agree with `na::is_missing` for every kind.
    #[test]
    fn null_test_agrees_with_is_missing() {
        for ds in [
            "?int8",
            "?uint16",
            "?int32",
            "?int64",
            "?float16",
            "?float32",
            "?float64",
            "?complex[float64]",
            "?bool",
            "?string",
            "?bytes",
            "?char",
            "?{a: int32}",
            "?3 * int16",
            "?var * int8",
            "?fixed_string[3]",
            "int32",
            "{a: int8}",
        ] {
            let tp = Type::parse(ds).unwrap();
            let test = NullTest::of(&tp).unwrap();
            let size = tp.data_size();
            let mut buf = vec![0x11u8; size * 2];
            // SAFETY: `buf` holds two elements of `tp`.
            unsafe {
                if tp.option_value().is_some() {
                    na::set_missing(&tp, buf.as_mut_ptr()).unwrap();
                    na::set_present(&tp, buf.as_mut_ptr().add(size));
                }
                let mut mask = [0u8; 2];
                test.mark(buf.as_ptr(), size as isize, &mut mask);
                for (j, &m) in mask.iter().enumerate() {
                    assert_eq!(
                        m != 0,
                        na::is_missing(&tp, buf.as_ptr().add(j * size)),
                        "{ds} [{j}]"
                    );
                }
            }
        }
    }
}
