//! Selection (DESIGN §8): `where`, `filter` and `take`.
//!
//! | callable | arguments | result |
//! |---|---|---|
//! | `where(cond, x, y)` | `cond` bool (or numbers, by truthiness), `x` and `y` numbers, or of one value type | elementwise with broadcasting over fixed and var dims: `x` where `cond` is true, else `y`, in the promotion of `x` and `y` (as arithmetic promotes); optional when an argument is, missing where `cond` is, and where the chosen `x`/`y` is |
//! | `filter(x, mask)` | `mask`'s dims `x`'s outer dims, over `bool` or `?bool` | `x` along the mask's innermost dim, keeping what the mask says, row by row; that dim becomes var: `N * T` → `var * T`, `N * var * T` → `N * var * T`; a missing mask value drops the element |
//! | `take(x, idx)` | `idx`'s outer dims `x`'s outer dims, over any integer (or option of one) | `x`'s elements along the dim `idx`'s innermost dim aligns with, gathered by index, row by row: `(N * T, M * int64)` → `M * T`, `(N * var * T, N * var * int64)` → `N * var * T`; negative indices count from the end; a missing index gives a missing element (`?T`) |
//!
//! ```
//! use dynd::{Array, compute};
//! let x = Array::from_json("2 * var * float64", "[[1, 2, 3], [4, 5]]").unwrap();
//! let mask = Array::from_json("2 * var * bool", "[[true, false, true], [false, true]]").unwrap();
//! assert_eq!(compute::filter(&x, &mask).unwrap().to_json(), "[[1.0,3.0],[5.0]]");
//! let idx = Array::from_json("2 * var * int64", "[[-1, 0], []]").unwrap();
//! assert_eq!(compute::take(&x, &idx).unwrap().to_json(), "[[3.0,1.0],[]]");
//! let c = Array::from_json("3 * bool", "[true, false, true]").unwrap();
//! let r = compute::where_(&c, &Array::from(vec![1i32, 2, 3]), &Array::from(0.5f64)).unwrap();
//! assert_eq!((r.tp().to_string(), r.to_json()), ("3 * float64".into(), "[1.0,0.5,3.0]".into()));
//! ```
//!
//! **Dims.** `where` is a scalar callable, lifted and broadcast as every
//! elementwise callable is (its flat, ragged and parallel fast paths
//! included). `filter` and `take` see whole types: the argument with the
//! mask or indices (`k` dims) aligns with `x`'s first `k` dims; the first
//! `k - 1` are the outer dims, lifted (and broadcast) by the generic lifter,
//! and the `k`-th is the row the kernel works on, whatever lies below it
//! (`filter(N * 3 * T, N * bool)` keeps whole `3 * T` elements).
//!
//! **Errors.** A mask row whose length differs from `x`'s row is a
//! `Broadcast` error naming the row and both lengths; an index out of range
//! is an `Index` error naming the index, the row and its length (`take:
//! index 7 is out of range for row 3 of length 5`). Types that do not fit
//! are `Type` errors, when the call is resolved.
//!
//! **Outputs.** `filter` and `take` into a var dim allocate once per strided
//! call of the row kernel (one allocation for all the rows of an outer
//! loop, not one per row) from the destination's var dim block, so a
//! destination given to [`super::Callable::instantiate`] must have a plain
//! innermost var dim (offset 0, stride the element size), as fresh outputs
//! do.
//!
//! **Speed.** Elements that are builtin numbers (or options of them) move
//! by width — a branch-free compaction for `filter`, a checked gather for
//! `take` (each block of indices range-checked in one branch-free pass,
//! then gathered with plain loads and a software prefetch a few dozen
//! elements ahead; split across threads for a long row), a lane blend for
//! `where` — with the width (and index type) dispatched once per run of
//! rows, not per row; any other element type (records, strings, dims)
//! moves through its assignment kernel, one strided call per run of kept
//! or gathered elements.

mod filter;
mod take;
mod where_;

use super::registry::builtin_callables;
pub(super) use super::rows::under_dims;
use super::rows::{RowIn, as_cell, copy_kernel};
use super::{Callable, CallableImpl, arity, signature, type_list};
use crate::error::{Error, Result};
use crate::kernels::broadcast::{Mismatch, broadcast_error, combine, dims_of};
use crate::kernels::{CKernelBuilder, Kernel, KernelArgs, KernelRequest, kernel_size, lift};
use crate::types::Type;
use std::pin::Pin;

// ------------------------------------------------------------------ helpers

/// `tp` below its first `k` dims.
fn below(tp: &Type, k: usize) -> &Type {
    let mut t = tp;
    for _ in 0..k {
        t = t.dim_elem().unwrap_or(t);
    }
    t
}

/// How `x` and the argument `by` (a mask or indices) line up: `by`'s `k`
/// dims align with `x`'s first `k`.
struct Rows {
    /// The outer dims (the first `k - 1`), broadcast.
    dims: Vec<Option<usize>>,
    /// `x` below its outer dims: the row dim over its element.
    x_row: Type,
    /// `by` below its outer dims: one dim over its element.
    by_row: Type,
}

impl Rows {
    /// Lines up `x` and `by` for `name`, whose argument `by` is called
    /// `what` in messages.
    fn of(name: &str, what: &str, x: &Type, by: &Type) -> Result<Rows> {
        x.require_concrete(&format!("{name}'s x"))?;
        by.require_concrete(&format!("{name}'s {what}"))?;
        let (xd, bd) = (dims_of(x), dims_of(by));
        let k = bd.len();
        if k == 0 {
            return Err(Error::type_error(format!(
                "{name}: the {what} ({by}) has no dim to select along"
            )));
        }
        if xd.len() < k {
            return Err(Error::type_error(format!(
                "{name}: the {what} ({by}) has {k} dims, more than x ({x}) has"
            )));
        }
        let mut dims = Vec::with_capacity(k - 1);
        for (a, b) in xd.iter().zip(&bd).take(k - 1) {
            dims.push(combine(*a, *b).map_err(|why| {
                let why = match why {
                    // x's dims are the ones that count: name them first.
                    Mismatch::Size { from, into } if Some(from) == *a => Mismatch::Size {
                        from: into,
                        into: from,
                    },
                    w => w,
                };
                broadcast_error(&[by, x], None, why).context(name)
            })?);
        }
        if let (Some(n), Some(m)) = (xd[k - 1], bd[k - 1])
            && n != m
            && name == "filter"
        {
            return Err(Error::broadcast(format!(
                "filter: the mask's dim has length {m} but x's has length {n} ({by} and {x})"
            )));
        }
        Ok(Rows {
            dims,
            x_row: below(x, k - 1).clone(),
            by_row: below(by, k - 1).clone(),
        })
    }
}

/// The row reader of `tp` (a dim) with arrmeta `meta`, its element type
/// and the element's arrmeta.
///
/// # Safety
/// 1. `meta` is valid arrmeta of `tp`.
unsafe fn row_dim(tp: &Type, meta: *const u8) -> Result<(RowIn, &Type, *const u8)> {
    let elem = tp
        .dim_elem()
        .ok_or_else(|| Error::type_error(format!("{tp} is not a dim to select along")))?;
    // SAFETY: (1).
    let (dim, em) = unsafe { RowIn::of("select", tp, meta) }?;
    Ok((dim, elem, em))
}

/// Builds one row's kernel: `(builder, offset, dst arrmeta, [x, by]
/// arrmeta, request) -> end offset`.
type RowLeaf<'a> = dyn FnMut(
        Pin<&mut CKernelBuilder>,
        usize,
        *const u8,
        [*const u8; 2],
        KernelRequest,
    ) -> Result<usize>
    + 'a;

/// Builds the row kernel `leaf` lifted over the outer `dims`: the result
/// is `dims * dst_row`, the sources `x` and `by` with their rows
/// `rows.x_row`, `rows.by_row` below those dims. `leaf(ckb, offset,
/// dst_meta, src_metas, req)` builds one row's kernel.
///
/// # Safety
/// As [`super::CallableImpl::instantiate`] (with `args` the whole types).
unsafe fn lift_rows(
    name: &str,
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: KernelArgs<'_>,
    rows: &Rows,
    dst_row: &Type,
    leaf: &mut RowLeaf<'_>,
) -> Result<usize> {
    let metas = [args.src_metas[0], args.src_metas[1]];
    if rows.dims.is_empty() {
        return leaf(ckb, offset, args.dst_meta, metas, args.req);
    }
    // The outer dims are the lifter's; it stops at the cells (each row seen
    // as a one-field tuple of the same layout).
    let k = rows.dims.len();
    let cell = |full: &Type, row: &Type| -> Result<Type> {
        Ok(under_dims(&dims_of(full)[..k], as_cell(name, row)?))
    };
    let dst_cells = under_dims(&rows.dims, as_cell(name, dst_row)?);
    let src_cells = [
        cell(&args.src_tps[0], &rows.x_row)?,
        cell(&args.src_tps[1], &rows.by_row)?,
    ];
    let want = [
        as_cell(name, dst_row)?,
        as_cell(name, &rows.x_row)?,
        as_cell(name, &rows.by_row)?,
    ];
    let mut cells_leaf = |ckb: Pin<&mut CKernelBuilder>, at: usize, el: KernelArgs<'_>| {
        if *el.dst_tp != want[0] || el.src_tps != &want[1..] {
            return Err(Error::type_error(format!(
                "{name}: the lifter reached ({}) -> {}, not ({}, {}) -> {}",
                type_list(el.src_tps),
                el.dst_tp,
                want[1],
                want[2],
                want[0]
            )));
        }
        // A cell's arrmeta is its one field's, at offset 0 (as_cell).
        leaf(
            ckb,
            at,
            el.dst_meta,
            [el.src_metas[0], el.src_metas[1]],
            el.req,
        )
    };
    lift::check_broadcast(&dst_cells, &src_cells)?;
    // SAFETY: `offset` is free (the caller's promise); the cells have the
    // data and arrmeta layout of the real types (the same dims over types
    // laid out alike), so the caller's arrmeta is theirs; the leaf builds
    // at the offset it is given.
    unsafe {
        let args = KernelArgs::new(&dst_cells, args.dst_meta, &src_cells, &metas, args.req);
        lift::make_lifted(ckb, offset, args, &mut cells_leaf)
    }
}

/// What [`RowSelect::row_kernel`] gives: the row kernel, the width its
/// elements move at as plain bits (`None`: through the element copy), and
/// the result elements' type and arrmeta.
type RowBuilt<K> = (K, Option<usize>, (Type, *const u8));

/// A selection of `x`'s elements row by row, by a second argument (`filter`
/// by a mask, `take` by indices): what a call resolves to and the kernel of
/// one row. [`Select`] makes it a callable that sees whole types and lifts
/// its row kernel over the outer dims.
trait RowSelect: Send + Sync + 'static {
    /// What a call resolves to: at least the lined-up rows and the result
    /// row ([`RowSelect::rows_of`]).
    type Parts;

    /// The callable's name.
    const NAME: &'static str;

    /// The callable's signature.
    fn sig(&self) -> &Type;

    /// What a call on argument types `args` resolves to; the errors of a
    /// call that does not fit.
    fn parts(&self, args: &[Type]) -> Result<Self::Parts>;

    /// The lined-up rows and the result row of `p`.
    fn rows_of(p: &Self::Parts) -> (&Rows, &Type);

    /// The kernel of one row.
    type Kernel: Kernel;

    /// The kernel of one row, whether its elements move as plain bits of
    /// a width, and the result elements' type and arrmeta (what the
    /// element copy, when there is one, writes): `x` is `x`'s row reader
    /// with its element type and the element's arrmeta, `by` the reader of
    /// the mask's or indices' row.
    ///
    /// # Safety
    /// 1. `dst_meta` is valid arrmeta of the result row of `p`, and `x` and
    ///    `by` were read from valid arrmeta of its rows.
    unsafe fn row_kernel(
        &self,
        p: &Self::Parts,
        dst_meta: *const u8,
        x: (RowIn, &Type, *const u8),
        by: RowIn,
    ) -> Result<RowBuilt<Self::Kernel>>;
}

/// The callable of a [`RowSelect`]: the result is the outer dims over the
/// result row; the row kernel is lifted over them ([`lift_rows`]).
struct Select<S>(S);

impl<S: RowSelect> CallableImpl for Select<S> {
    fn name(&self) -> &str {
        S::NAME
    }

    fn signature(&self) -> &Type {
        self.0.sig()
    }

    fn is_scalar(&self) -> bool {
        false
    }

    fn resolve(&self, args: &[Type]) -> Result<Type> {
        let p = self.0.parts(args)?;
        let (rows, out_row) = S::rows_of(&p);
        Ok(under_dims(&rows.dims, out_row.clone()))
    }

    fn outer_rows(&self, args: &[Type]) -> usize {
        self.0
            .parts(args)
            .map_or(0, |p| S::rows_of(&p).0.dims.len())
    }

    /// `filter` and `take` into a var dim allocate once per strided run
    /// (see the module doc, **Outputs**).
    fn allocates_per_run(&self) -> bool {
        true
    }

    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        let p = self.0.parts(args.src_tps)?;
        let (rows, out_row) = S::rows_of(&p);
        let mut leaf = |ckb: Pin<&mut CKernelBuilder>,
                        at: usize,
                        dst_meta: *const u8,
                        metas: [*const u8; 2],
                        req: KernelRequest| {
            // SAFETY: lift_rows hands each row's arrmeta, valid for the row
            // types.
            let (x, (by, _, _)) = unsafe {
                (
                    row_dim(&rows.x_row, metas[0])?,
                    row_dim(&rows.by_row, metas[1])?,
                )
            };
            let (elem, elem_meta) = (x.1, x.2);
            // SAFETY: (1) `dst_meta` is the result row's arrmeta (lift_rows'
            // promise); the rows were read above.
            let (k, width, dst) = unsafe { self.0.row_kernel(&p, dst_meta, x, by) }?;
            // SAFETY: `at` is free (lift_rows' promise); each arrmeta is its
            // element's.
            unsafe { emplace_with_copy(ckb, at, req, k, width, (&dst.0, dst.1), (elem, elem_meta)) }
        };
        // SAFETY: the caller's promises; the types were resolved above.
        unsafe { lift_rows(S::NAME, ckb, offset, args, rows, out_row, &mut leaf) }
    }
}

pub(crate) use crate::kernels::mask::by_size;

/// The width at which elements of `tp` move as plain bits: a builtin
/// number or an option of one (whose NA is a value of the same bits).
fn plain_width(tp: &Type) -> Option<usize> {
    let b = tp.option_value().unwrap_or(tp).as_builtin()?;
    let size = b.data_size();
    (size.is_power_of_two() && size <= 16).then_some(size)
}

/// Where a row kernel's element-copy child goes: nowhere (0) when the
/// elements move as plain bits of `width`, else right after the kernel.
fn child_slot<K: Kernel>(width: Option<usize>) -> usize {
    if width.is_some() {
        0
    } else {
        kernel_size::<K>()
    }
}

/// Emplaces the row kernel `k` at `at` and, unless its elements move as
/// plain bits (`width`), the assignment kernel it copies one element with:
/// from `src` elements (type and arrmeta) to `dst` elements.
///
/// # Safety
/// `at` is free in `ckb` (as [`CKernelBuilder::emplace`] requires); each
/// arrmeta is valid for its type.
unsafe fn emplace_with_copy<K: Kernel>(
    mut ckb: Pin<&mut CKernelBuilder>,
    at: usize,
    req: KernelRequest,
    k: K,
    width: Option<usize>,
    dst: (&Type, *const u8),
    src: (&Type, *const u8),
) -> Result<usize> {
    // SAFETY: `at` is free (the caller's promise); the child, if any, goes
    // in the slot emplace reserves.
    let end = unsafe { ckb.as_mut().emplace(at, req, k) }?;
    if width.is_some() {
        return Ok(end);
    }
    // SAFETY: `end` is the reserved slot; each arrmeta is its type's (the
    // caller's promise).
    unsafe { copy_kernel(ckb, end, dst, src) }
}

// ------------------------------------------------------------- registration

builtin_callables! {
    /// The built-in `where`.
    pub fn where_() = Callable::new(where_::Where {
        sig: signature("(bool, T, T) -> T"),
    });
    /// The built-in `filter`.
    pub fn filter() = Callable::new(Select(filter::Filter {
        sig: signature("(Dims... * N * T, Dims... * N * bool) -> Dims... * var * T"),
    }));
    /// The built-in `take`.
    pub fn take() = Callable::new(Select(take::Take {
        sig: signature("(Dims... * N * T, Dims... * M * int64) -> Dims... * M * T"),
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_line_up_from_the_left() {
        let x = Type::parse("3 * var * 2 * int32").unwrap();
        let by = Type::parse("3 * var * bool").unwrap();
        let r = Rows::of("filter", "mask", &x, &by).unwrap();
        assert_eq!(r.dims, vec![Some(3)]);
        assert_eq!(r.x_row.to_string(), "var * 2 * int32");
        assert_eq!(r.by_row.to_string(), "var * bool");
        let e = Rows::of("take", "indices", &Type::parse("3 * int8").unwrap(), &by)
            .err()
            .unwrap();
        assert_eq!(e.kind(), crate::ErrorKind::Type);
        assert!(e.message().contains("more than x"), "{}", e.message());
    }
}
