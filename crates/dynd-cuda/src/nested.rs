//! dynd's functions on nested ragged device arrays (issue #30):
//! `[fixed dims] * var * var * T`, computed on the innermost level.
//!
//! The second var level's descriptors are rows of their own
//! ([`dynd::Array::nested_inner_rows`]: `M * var * T` over the block the
//! outer level points into), so what runs on ragged arrays runs on them:
//! the elementwise functions with host scalars, `cumsum`, `cumprod`,
//! `sort`, `argsort` of each innermost row, and the reductions over the
//! innermost dim. The result over those rows is laid out row for row like
//! them, so one kernel moves the outer descriptors onto it
//! ([`crate::ragged::rebase_source`]) and the nested result is assembled
//! ([`dynd::Array::nested_on_device`]). Anything else on a nested device
//! array is a `Type` error saying what runs there.

use crate::launch::{self, Backend, Params};
use crate::ragged::{REBASE_KERNEL, rebase_source};
use crate::rows::row_block_of;
use dynd::callable::reduce::Reduction;
use dynd::callable::sort::RowOp;
use dynd::callable::{Callable, arith};
use dynd::memblock::DeviceId;
use dynd::{Array, Error, Result};

/// Bytes of a row descriptor.
const DESC: usize = 16;

/// `f` on `args` (one nested ragged array on `cuda:ordinal`, the others
/// 0-d host scalars).
///
/// # Errors
/// `Type` for what does not run on nested device arrays (naming what
/// does) and a given output; the errors of the same call on the rows.
pub fn call(f: &Callable, ordinal: u32, out: Option<&Array>, args: &[&Array]) -> Result<Array> {
    let device = DeviceId::Cuda(ordinal);
    let refuse = |why: &str| {
        Error::type_error(format!(
            "{} on nested var dims on {device} ({}): {why}; on nested device arrays run the \
             arithmetic functions with host scalars, cumsum, cumprod, sort, argsort and the \
             reductions over the innermost dim (copy to the host with to_host() for the rest)",
            f.name(),
            args.iter()
                .map(|a| a.tp().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    };
    if out.is_some() {
        return Err(refuse("no output may be given"));
    }
    let nested: Vec<usize> = (0..args.len())
        .filter(|&i| !args[i].device().is_cpu())
        .collect();
    let [x] = nested[..] else {
        return Err(refuse("one device array, with host scalars beside it"));
    };
    if args
        .iter()
        .enumerate()
        .any(|(i, a)| i != x && a.ndim() != 0)
    {
        return Err(refuse("the other arguments must be 0-d host scalars"));
    }
    let a = args[x];
    let layout = a.nested_layout()?;
    if layout.levels.len() != 2 {
        return Err(refuse("two var dims run there, not more"));
    }
    let out_tp = f.resolve(&args.iter().map(|a| a.tp().clone()).collect::<Vec<_>>())?;
    let inner = a.nested_inner_rows()?;
    let mut inner_args: Vec<&Array> = args.to_vec();
    inner_args[x] = &inner;
    // The result over the rows, and whether it is ragged (one value per
    // row otherwise: a reduction).
    let (r, ragged) = if let Some(reduction) = Reduction::of(f) {
        let reduced = reduction.reduced_axes(a.tp())?;
        let n = reduced.len();
        if !reduced[n - 1] || reduced[..n - 1].iter().any(|r| *r) || reduction.keepdims() {
            return Err(refuse(
                "reductions run over the innermost dim alone (axis -1), without keepdims",
            ));
        }
        let per_row = reduction.with(Some(&[-1]), false);
        (per_row.call(&inner_args)?, false)
    } else if RowOp::of(f).is_some() || arith::function(f.name()).is_some() {
        (f.call(&inner_args)?, true)
    } else {
        return Err(refuse("it does not run there yet"));
    };
    let backend = launch::backend(ordinal)?;
    let b: &dyn Backend = &*backend;
    // Each row's result at the row's place: a value, or a descriptor.
    let osize = if ragged {
        DESC
    } else {
        r.tp().dtype().data_size()
    };
    let (off0, stride0) = layout.levels[0];
    if stride0 % DESC as isize != 0 {
        return Err(refuse("the outer rows are not whole descriptors apart"));
    }
    let rows: usize = layout.shape.iter().product();
    let (dblock, dptr) = b.alloc((rows * DESC).max(1))?;
    if rows > 0 {
        let (block, nk) = row_block_of(&layout.shape, &layout.strides);
        let mut p = Params::default();
        p.word(dptr as u64)
            .word(a.data_ptr() as u64)
            .block(block)
            .word(rows as u64)
            .word(off0 as u64)
            .word(inner.data_ptr() as u64)
            .word(r.data_ptr() as u64);
        // SAFETY: (1) the rebase kernel's parameters in order: the new
        // outer descriptors (`rows` of 16 bytes), the array's, the
        // parameter block, the row count, the outer level's offset, the
        // rows' block (the inner view's data) and the result over them.
        // (2) Every outer row points into the rows' block, whose result has
        // one element of `osize` bytes per descriptor; all alive until the
        // launch returns.
        unsafe {
            launch::counted(
                b,
                &rebase_source(DESC, osize, nk),
                REBASE_KERNEL,
                launch::grid(b, rows),
                &mut p.pointers(),
            )?
        };
    }
    let stride = stride0 / DESC as isize * osize as isize;
    if ragged {
        let values = r
            .ragged_values_block()
            .ok_or_else(|| refuse("the result over the rows has no values block"))?;
        let vstride = r.ragged_layout()?.stride;
        // SAFETY: the new outer descriptors point into the result's rows
        // (its data, `stride` apart), whose descriptors reach its values.
        unsafe {
            Array::nested_on_device(
                &out_tp,
                &layout.shape,
                (dptr, dblock),
                (r.data_ref().clone(), stride),
                (values, vstride),
            )
        }
    } else {
        // SAFETY: the new outer descriptors point into the result's values
        // (one per inner row, `stride` apart).
        unsafe {
            Array::ragged_on_device(
                &out_tp,
                &layout.shape,
                (dptr, dblock),
                r.data_ref().clone(),
                stride,
            )
        }
    }
}
