//! Sorting, scans and concatenation (DESIGN §8): `sort`, `argsort`,
//! `cumsum`, `cumprod` along the innermost dim, row by row, and
//! `concatenate` along the outermost dim.
//!
//! | callable | arguments | result |
//! |---|---|---|
//! | `sort(x)` | `x` with at least one dim; numbers (not complex), bool, string, bytes, or options of them | `x`'s type: each row along the innermost dim in ascending order |
//! | `argsort(x)` | as `sort` | `x`'s dims over `int64`: the positions, within the row, that sort it |
//! | `cumsum(x)`, `cumprod(x)` | `x` with at least one dim; numbers or bool, or options of them | `x`'s dims over the running sum / product, typed as `sum` / `prod` are (signed integers and bool → `int64`, unsigned → `uint64`, floats and complex keep their type); `?` kept |
//! | `concatenate(x, y, ...)` | one or more arrays with at least one dim and equal element types | the rows of each in turn along the outermost dim: fixed when every outermost dim is, else var |
//!
//! ```
//! use dynd::{Array, compute};
//! let x = Array::from_json("2 * var * ?float64", "[[3, null, NaN, 1, 2], []]").unwrap();
//! assert_eq!(compute::sort(&x).unwrap().to_json(), "[[1.0,2.0,3.0,NaN,null],[]]");
//! assert_eq!(compute::argsort(&x).unwrap().to_json(), "[[3,4,0,2,1],[]]");
//! let desc = compute::sort_by(&x, compute::SortOptions { descending: true }).unwrap();
//! assert_eq!(desc.to_json(), "[[3.0,2.0,1.0,NaN,null],[]]");
//! let c = compute::cumsum(&Array::from_json("3 * ?int8", "[100, null, 100]").unwrap()).unwrap();
//! assert_eq!((c.tp().to_string(), c.to_json()), ("3 * ?int64".into(), "[100,null,200]".into()));
//! let a = Array::from_json("2 * int32", "[1, 2]").unwrap();
//! let b = Array::from_json("var * int32", "[3]").unwrap();
//! let ab = compute::concatenate(&[&a, &b]).unwrap();
//! assert_eq!((ab.tp().to_string(), ab.to_json()), ("var * int32".into(), "[1,2,3]".into()));
//! ```
//!
//! **Order.** Ascending; numbers by value, with `-0.0` before `0.0`
//! (IEEE total order, where NumPy calls them equal); then every NaN (of
//! any sign or payload), in their original order; then missing values.
//! Both sorts are stable: equal keys keep their order, so `argsort` of
//! equal values gives increasing positions. Strings and bytes compare by
//! their bytes (utf-8 byte order is code point order); `false < true`.
//! Descending ([`SortOptions::descending`], Rust API only) reverses the
//! order of the numbers (or strings) and is still stable; NaNs and missing
//! values stay last. `sort` writes a bool as 0 or 1, and keeps every other
//! value's bits (a NaN's payload too).
//!
//! **Scans.** `cumsum` and `cumprod` skip missing values: a missing element
//! stays missing in the output and does not change the running value.
//! Integers wrap on overflow, as NumPy's do; float16 and bfloat16 round
//! each step to their own type (as NumPy's float16 cumsum does).
//!
//! **Threads** (DESIGN §13). A row of 2^17 elements or more, on more than
//! one thread, is scanned in blocks of 2^16: each block's total first,
//! then each block from the running value of the totals before it. For
//! integers and bool (wrapping arithmetic) that is exactly the serial
//! result. For floating and complex types each output element still
//! combines the same elements, grouped differently, so its last bits may
//! differ from a one-thread scan, and an overflow to infinity part way
//! along a row may not happen (or happen elsewhere); the bits do not
//! depend on the count once it is two or more (the blocks do not). Short
//! rows, and every row on one thread, are scanned left to right as
//! NumPy's `cumsum` is.
//!
//! **Dims.** The outer dims are kept and lifted by the generic lifter
//! (fixed or var, one row kernel call per row); the innermost dim keeps
//! its kind (`N * T` stays `N * T`, `var * T` stays `var * T`). Output
//! rows of a var innermost dim are allocated anew from the destination's
//! block, so a destination given to [`Callable::instantiate`] must have a
//! plain innermost var dim (offset 0, stride the element size), as fresh
//! outputs do.
//!
//! **concatenate** takes its arguments whole: the outermost dims may
//! differ in kind and size, the element types (everything under the
//! outermost dim) must be equal — no promotion: cast first — and a
//! mismatch is a `Type` error naming both arguments' types. Through the
//! registry it is variadic (any number of arguments, at least one).
//!
//! **Speed.** Rows of builtin numbers are sorted on unsigned keys that
//! order as the values do (floats: the sign-flip transform), written
//! straight into the output's memory: insertion sort for short rows, the
//! standard library's unstable sort for long ones (equal keys are equal
//! values, so stability is moot; `argsort` sorts distinct `(key,
//! position)` pairs, which makes it stable). Measured on 10M float64
//! keys (a stand-alone release bench, best of 5, on a shared 2-core
//! machine whose timings vary by ±30%): `std` `sort_unstable` 310 ms;
//! `voracious_radix_sort` 1.2 `voracious_sort` (DLSD) 480 ms; `rdst` 0.20
//! single-threaded 280 ms; an LSD radix with one histogram pass, skipped
//! constant digits and ping-pong buffers 306 ms (8-bit digits), 457 ms
//! (11-bit), 566 ms (16-bit); one 11-bit MSD pass then `sort_unstable` of
//! buckets under 1 MiB 212–340 ms on random keys, but slower than
//! `sort_unstable` on the keys of `dynd-bench --only sort`. A scatter
//! pass over 80 MB costs 30–50 ms here, so eight LSD passes cannot beat
//! NumPy's SIMD sort (`np.sort` ~215 ms). So long rows of 64-bit keys
//! (int64, uint64, float64) on a CPU with AVX-512 use our own vectorised
//! in-place quicksort (`simd.rs`: register compress/expand partitions, no
//! scratch memory). Stable `argsort`: pairs with
//! `sort_unstable` 740 ms, `rdst` on (key, position) 550 ms (stable on
//! that input, though it does not promise it), 8-bit LSD on pairs 876 ms,
//! `voracious_stable_sort` 978 ms (`np.argsort(kind='stable')` ~3.2 s).
//!
//! **Threads** (DESIGN §13). A long row of 64-bit keys on an AVX-512 CPU
//! is partitioned level by level with the same vectorised partition (the
//! first level on one thread, each later level's segments on their own
//! threads) until there are four segments per thread, which are then
//! sorted as independent tasks: no scratch memory and no merge. A long
//! row's `argsort` is a sample sort (`sample.rs`): splitters from a
//! sample cut the `(key, position)` pairs into buckets of about 2 MiB,
//! which blocks of the row count and fill in parallel (NaN and missing
//! positions going straight to the end of the output), and which are then
//! sorted as independent tasks. Other long rows (narrower keys, other
//! CPUs) are cut into one piece per thread, each sorted alone, and merged
//! round by round (`split.rs`). Rows of a ragged or multi-dimensional
//! array are split between threads by the outer dims. Either way the
//! result is the serial one, element for element.
//!
//! Large results of `filter`, `take`, `sort`, `argsort`, `cumsum` and
//! `cumprod` with var rows of plain elements are split the same way,
//! each task allocating its rows from the output's own arena (one
//! allocation per task; `callable/split.rs`).

mod concat;
mod sample;
mod scan;
mod simd;
#[allow(clippy::module_inception)]
mod sort;
mod split;

use super::registry::builtin_callables;
use super::rows::{RowIn, RowKernel, RowOut};
use super::{Callable, arity, no_match, signature};
use crate::error::{Error, Result};
use crate::kernels::broadcast::dims_of;
use crate::kernels::{CKernelBuilder, KernelRequest, Strided};
use crate::layout::VarDimData;
use crate::types::Type;
use std::pin::Pin;

pub use concat::concatenate;

/// How `sort` and `argsort` order a row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SortOptions {
    /// Largest first (NaNs and missing values still last; still stable).
    pub descending: bool,
}

/// What a row callable (`sort`, `argsort`, `cumsum`, `cumprod`) computes
/// along the innermost dim: what a device runtime reads to run the same
/// operation itself ([`RowOp::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowOp {
    /// `sort` (the order of the module docs).
    Sort(SortOptions),
    /// `argsort`: int64 positions within each row.
    ArgSort(SortOptions),
    /// `cumsum`, typed as `sum`.
    CumSum,
    /// `cumprod`, typed as `prod`.
    CumProd,
}

impl RowOp {
    /// The row operation `f` is, when it is one of dynd's (the registered
    /// `sort`, `argsort`, `cumsum`, `cumprod`, or a `sort`/`argsort` with
    /// other [`SortOptions`]).
    ///
    /// ```
    /// use dynd::callable::{lookup, sort::RowOp};
    /// assert_eq!(RowOp::of(&lookup("cumsum").unwrap()), Some(RowOp::CumSum));
    /// assert_eq!(RowOp::of(&lookup("add").unwrap()), None);
    /// ```
    pub fn of(f: &Callable) -> Option<RowOp> {
        f.implementation().as_row_op()
    }

    /// The callable's name.
    pub fn name(self) -> &'static str {
        match self {
            RowOp::Sort(_) => "sort",
            RowOp::ArgSort(_) => "argsort",
            RowOp::CumSum => "cumsum",
            RowOp::CumProd => "cumprod",
        }
    }

    /// The result's element type for `x`'s element type, or the error
    /// saying that this operation does not take it.
    pub fn result_elem(self, elem: &Type) -> Result<Type> {
        let value = elem.option_value().unwrap_or(elem);
        let refuse = |what: &str| {
            Error::type_error(format!(
                "{} does not take elements of type {elem}; it takes {what}",
                self.name()
            ))
        };
        match self {
            RowOp::Sort(_) | RowOp::ArgSort(_) => {
                if !sort::sortable(value) {
                    return Err(refuse(
                        "integers, floats, bool, string and bytes (and options of them)",
                    ));
                }
                Ok(match self {
                    RowOp::Sort(_) => elem.clone(),
                    _ => Type::int64(),
                })
            }
            RowOp::CumSum | RowOp::CumProd => {
                let sum = value
                    .as_builtin()
                    .and_then(scan::sum_type)
                    .ok_or_else(|| refuse("numbers and bool (and options of them)"))?;
                if elem.option_value().is_some() {
                    Type::option(Type::builtin(sum))
                } else {
                    Ok(Type::builtin(sum))
                }
            }
        }
    }
}

/// `sort`, `argsort`, `cumsum` or `cumprod`: sees whole types, and lifts
/// itself over the outer dims.
struct RowCallable {
    op: RowOp,
    sig: Type,
}

/// `x`'s dims (the innermost last) and element type; an error when `x`
/// has no dim.
fn dims_and_elem(name: &str, x: &Type) -> Result<(Vec<Option<usize>>, Type)> {
    x.require_concrete(&format!("{name}'s argument"))?;
    let dims = dims_of(x).to_vec();
    if dims.is_empty() {
        return Err(Error::type_error(format!(
            "{name} works along a dim, and {x} has none"
        )));
    }
    let mut elem = x;
    for _ in 0..dims.len() {
        elem = elem.dim_elem().unwrap_or(elem);
    }
    Ok((dims, elem.clone()))
}

impl RowKernel for RowCallable {
    fn row_name(&self) -> &str {
        self.op.name()
    }

    fn row_op(&self) -> Option<RowOp> {
        Some(self.op)
    }

    fn row_signature(&self) -> &Type {
        &self.sig
    }

    /// Every op writes each element of its output row (a sort writes its
    /// NaNs and missing values last, an argsort every position, a scan
    /// every running value, missing where the element is), and
    /// [`Rows::each_row`] cuts a run's var rows from one allocation.
    fn fills_rows_per_run(&self) -> bool {
        true
    }

    /// `x`'s outer dims, its innermost dim (with the element), and the
    /// result's innermost dim.
    fn parts(&self, args: &[Type]) -> Result<(Vec<Option<usize>>, Type, Type)> {
        let name = self.op.name();
        let [x] = args else {
            return Err(arity(name, "x", args.len()));
        };
        let (mut dims, elem) = dims_and_elem(name, x)?;
        let out_elem = self.op.result_elem(&elem)?;
        let inner_dim = dims.pop().flatten();
        let mut inner = x;
        for _ in 0..dims.len() {
            inner = inner.dim_elem().unwrap_or(inner);
        }
        let row = match inner_dim {
            Some(n) => Type::fixed_dim(n, out_elem),
            None => Type::var_dim(out_elem),
        };
        Ok((dims, inner.clone(), row))
    }

    /// The leaf: one output row from one row of `x`.
    ///
    /// # Safety
    /// As [`CallableImpl::instantiate`], with `dst` the result's innermost
    /// dim and `src` `x`'s (with their arrmeta).
    unsafe fn instantiate_row(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        dst: (&Type, *const u8),
        src: (&Type, *const u8),
        req: KernelRequest,
    ) -> Result<usize> {
        let name = self.op.name();
        // SAFETY: (2) the arrmeta are of these types.
        let (row_in, in_meta) = unsafe { RowIn::of(name, src.0, src.1) }?;
        // SAFETY: as above.
        let (row_out, out_meta) = unsafe { RowOut::of(name, dst.0, dst.1) }?;
        let (Some(elem), Some(out_elem)) = (src.0.dim_elem(), dst.0.dim_elem()) else {
            return Err(Error::type_error(format!(
                "{name} computes a dim from a dim, not {} from {}",
                dst.0, src.0
            )));
        };
        let rows = Rows {
            src: row_in,
            dst: row_out,
        };
        // SAFETY: the caller's promises, passed on with the elements'
        // arrmeta.
        unsafe {
            match self.op {
                RowOp::Sort(o) | RowOp::ArgSort(o) => sort::instantiate(
                    ckb,
                    offset,
                    req,
                    rows,
                    (out_elem, out_meta),
                    (elem, in_meta),
                    matches!(self.op, RowOp::ArgSort(_)),
                    o,
                ),
                RowOp::CumSum | RowOp::CumProd => {
                    scan::instantiate(ckb, offset, req, rows, elem, self.op == RowOp::CumProd)
                }
            }
        }
    }
}

// ------------------------------------------------------------ rows in, out

/// A row kernel's reader and writer.
struct Rows {
    src: RowIn,
    dst: RowOut,
}

/// A source row: its first element, length and stride.
type Row = (*const u8, usize, isize);

impl Rows {
    /// `f(row, out, out_stride)` for each row of a run of one-source row
    /// kernel calls, with each output row opened for the row's length. A
    /// var output of builtins gets one allocation for the whole run, cut
    /// into the rows in order, rather than one per row (a ragged sort of
    /// short rows spent a tenth of its time allocating them one by one).
    ///
    /// # Safety
    /// 1. `run` is a valid strided run of this kernel: `count` source
    ///    elements of the input dim, and as many writable output elements.
    unsafe fn each_row(
        &self,
        name: &str,
        run: &Strided<'_>,
        mut f: impl FnMut(Row, *mut u8, isize) -> Result<()>,
    ) -> Result<()> {
        let src = |j: usize| run.src[0].wrapping_offset(j as isize * run.src_stride[0]);
        let dst = |j: usize| run.dst.wrapping_offset(j as isize * run.dst_stride);
        // SAFETY: (1) source element j < count.
        let row = |j: usize| unsafe { self.src.row(src(j)) };
        match &self.dst {
            RowOut::Var {
                alloc,
                zeroed: false,
            } if run.count > 1 => {
                let total = (0..run.count).map(|j| row(j).1).sum();
                let base = alloc.allocate(name, total, true)?;
                let esize = alloc.esize();
                let mut at = 0usize;
                for j in 0..run.count {
                    let r = row(j);
                    let begin = base.wrapping_add(at * esize);
                    // SAFETY: (1) output element j is a writable var
                    // element; `begin` has room for the row's elements
                    // (the rows' lengths sum to the allocation's).
                    unsafe {
                        dst(j)
                            .cast::<VarDimData>()
                            .write_unaligned(VarDimData { begin, size: r.1 })
                    };
                    f(r, begin, esize as isize)?;
                    at += r.1;
                }
                Ok(())
            }
            out => (0..run.count).try_for_each(|j| {
                let r = row(j);
                // SAFETY: (1) output element j is writable.
                let (begin, stride) = unsafe { out.open(name, dst(j), r.1) }?;
                f(r, begin, stride)
            }),
        }
    }
}

// ------------------------------------------------------------- registration

fn row_callable(op: RowOp) -> Callable {
    let sig = match op {
        RowOp::Sort(_) => "(Dims... * T) -> Dims... * T",
        RowOp::ArgSort(_) => "(Dims... * T) -> Dims... * int64",
        RowOp::CumSum | RowOp::CumProd => "(Dims... * T) -> Dims... * R",
    };
    Callable::new(RowCallable {
        op,
        sig: signature(sig),
    })
}

builtin_callables! {
    /// The registered `sort` (ascending).
    fn sort_ascending() = row_callable(RowOp::Sort(SortOptions::default()));
    /// The registered `argsort` (ascending).
    fn argsort_ascending() = row_callable(RowOp::ArgSort(SortOptions::default()));
    /// The built-in `cumsum`.
    pub fn cumsum() = row_callable(RowOp::CumSum);
    /// The built-in `cumprod`.
    pub fn cumprod() = row_callable(RowOp::CumProd);
    /// The built-in `concatenate` (variadic).
    pub fn concatenate_callable() = Callable::new(concat::Concatenate {
        sig: signature("(var * T, var * T) -> var * T"),
    });
}

/// `sort` ordered by `options` (the registered `sort` is ascending).
pub fn sort(options: SortOptions) -> Callable {
    if options == SortOptions::default() {
        sort_ascending()
    } else {
        row_callable(RowOp::Sort(options))
    }
}

/// `argsort` ordered by `options` (the registered `argsort` is ascending).
pub fn argsort(options: SortOptions) -> Callable {
    if options == SortOptions::default() {
        argsort_ascending()
    } else {
        row_callable(RowOp::ArgSort(options))
    }
}

/// The no-match error, for the submodules.
fn refuse(name: &str, sig: &Type, args: &[Type]) -> Error {
    no_match(name, sig, args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_keeps_dims() {
        let t = |s: &str| Type::parse(s).unwrap();
        assert_eq!(
            cumsum().resolve(&[t("3 * var * ?int8")]).unwrap(),
            t("3 * var * ?int64")
        );
        assert_eq!(
            argsort(SortOptions::default())
                .resolve(&[t("var * 4 * string")])
                .unwrap(),
            t("var * 4 * int64")
        );
        assert_eq!(
            cumprod().resolve(&[t("2 * uint16")]).unwrap(),
            t("2 * uint64")
        );
        assert_eq!(cumprod().resolve(&[t("2 * bool")]).unwrap(), t("2 * int64"));
    }

    /// A long float row on 2 and 3 threads: the blocked scan, the same bits
    /// on both counts, within rounding of the serial scan; exact where every
    /// partial sum is exact (integer values), and a missing element skipped.
    #[test]
    fn long_float_scans_split_within_rounding() {
        use crate::Array;
        use crate::exec::{SPLIT_MIN, with_threads};
        let n = SPLIT_MIN + 12_345;
        let values: Vec<f64> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f64 * 0.1 - 49.0)
            .collect();
        let x = Array::from(values.as_slice());
        let serial = with_threads(1, || cumsum().call(&[&x])).unwrap();
        let serial = serial.to_vec::<f64>().unwrap();
        let mut acc = 0.0;
        for (i, v) in values.iter().enumerate() {
            acc += v;
            assert_eq!(
                serial[i].to_bits(),
                acc.to_bits(),
                "one thread is left to right"
            );
        }
        let two = with_threads(2, || cumsum().call(&[&x])).unwrap();
        let three = with_threads(3, || cumsum().call(&[&x])).unwrap();
        let (two, three) = (two.to_vec::<f64>().unwrap(), three.to_vec::<f64>().unwrap());
        assert!(
            two.iter()
                .zip(&three)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
        // |error| of a sum of n terms of at most 50 is below n * 50 * n * eps.
        let bound = (n as f64) * 50.0 * (n as f64) * f64::EPSILON;
        let worst = serial
            .iter()
            .zip(&two)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(worst <= bound, "{worst} > {bound}");
        assert!(
            worst > 0.0,
            "the test's values must round somewhere to test anything"
        );

        let ints: Vec<f64> = (0..n).map(|i| ((i * 31) % 17) as f64 - 8.0).collect();
        let x = Array::from(ints.as_slice());
        let one = with_threads(1, || cumsum().call(&[&x])).unwrap();
        let two = with_threads(2, || cumsum().call(&[&x])).unwrap();
        assert_eq!(one.to_vec::<f64>().unwrap(), two.to_vec::<f64>().unwrap());

        let text = format!(
            "[{}]",
            (0..n)
                .map(|i| if i == 70_000 {
                    "null".into()
                } else {
                    format!("{}.5", i % 9)
                })
                .collect::<Vec<_>>()
                .join(",")
        );
        let x = Array::from_json(format!("{n} * ?float64").as_str(), &text).unwrap();
        // Halves: every partial sum is exact, so the split is bit for bit.
        let one = with_threads(1, || cumsum().call(&[&x])).unwrap().to_json();
        let two = with_threads(2, || cumsum().call(&[&x])).unwrap().to_json();
        assert_eq!(one, two);
        let items: Vec<&str> = two.trim_matches(['[', ']']).split(',').collect();
        assert_eq!(items.len(), n);
        assert_eq!(items[70_000], "null");
        let at = |i: usize| items[i].parse::<f64>().unwrap();
        assert_eq!(at(70_001), at(69_999) + (70_001 % 9) as f64 + 0.5);
    }
}
