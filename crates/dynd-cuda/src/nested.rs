//! dynd's functions on nested ragged device arrays (issue #30):
//! `[fixed dims] * var * var * T`, computed on the innermost level.
//!
//! Several nested arrays in one call (`x + y`, `where`, `filter(x,
//! mask)`, `take(x, idx)`) compute on their inner rows when those
//! correspond one to one: the same outer rows, laid out alike (a kernel
//! checks; views laid out otherwise are packed first).
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
use dynd::memblock::{DeviceId, MemBlock};
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
             arithmetic functions and where (of nested arrays of the same outer rows, and host \
             scalars), filter, take, indexing, concatenate, cumsum, cumprod, sort, argsort and \
             the reductions over the innermost dim (copy to the host with to_host() for the rest)",
            f.name(),
            args.iter()
                .map(|a| a.tp().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    };
    if let Some(o) = out {
        // Computed, then assigned into the output's rows (as the host
        // lifts into them: each row of the result of the output row's
        // length or 1); a row that does not fit is the host's error.
        let tps: Vec<dynd::Type> = args.iter().map(|a| a.tp().clone()).collect();
        crate::outputs::check_type(f, o, &f.resolve(&tps)?)?;
        let r = call(f, ordinal, None, args)?;
        // Row results go into an output of their row lengths (the host
        // replaces inner rows of other lengths; a device values block
        // cannot grow: `rows_into` says so).
        let written = if RowOp::of(f).is_some() && o.nested_layout().is_ok() {
            rows_into(f, ordinal, o, &r)
        } else {
            assign(o, &r, dynd::kernels::assign::ErrorMode::NoCheck)
        };
        return match written {
            Ok(()) => Ok(o.clone()),
            Err(e) if e.kind() == dynd::ErrorKind::Type => Err(e),
            Err(_) => Err(match crate::broadcast::host_failure_into(f, o, args) {
                Some(e) => e.context(format!("{} on {device}", f.name())),
                None => Error::external(format!(
                    "{} on {device}: the device could not write the result into the \
                         output, and the host can",
                    f.name()
                )),
            }),
        };
    }
    if crate::calls::own(f, "concatenate") {
        return concatenate(f, ordinal, args);
    }
    let nested: Vec<usize> = (0..args.len())
        .filter(|&i| !args[i].device().is_cpu())
        .collect();
    if nested.len() > 1 {
        return several(f, ordinal, args, &nested, &refuse);
    }
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
    // Two var levels or more: the innermost rows compute, the levels above
    // are moved onto the result ([`over_inner`]).
    let depth = a.nested_layout()?.levels.len();
    let out_tp = f.resolve(&args.iter().map(|a| a.tp().clone()).collect::<Vec<_>>())?;
    let inner = a.nested_inner_rows()?;
    let mut inner_args: Vec<&Array> = args.to_vec();
    inner_args[x] = &inner;
    // The result over the rows, and whether it is ragged (one value per
    // row otherwise: a reduction).
    let (r, ragged) = if let Some(reduction) = Reduction::of(f) {
        let reduced = reduction.reduced_axes(a.tp())?;
        let n = reduced.len();
        if depth == 2
            && let Some(r) = over_both_levels(reduction, &reduced, a, &out_tp)?
        {
            return Ok(r);
        }
        if depth == 2 && reduced[n - 2] && !reduction.keepdims() {
            return over_outer(reduction, &reduced, ordinal, a, out_tp);
        }
        if !reduced[n - 1] || reduced[..n - 1].iter().any(|r| *r) || reduction.keepdims() {
            return Err(refuse(
                "reductions run over the innermost dim alone (axis -1), and with two var dims \
                 over the outer var dim (axis -2, with fixed dims too), both var dims or every \
                 axis, without keepdims",
            ));
        }
        let per_row = reduction.with(Some(&[-1]), false);
        (per_row.call(&inner_args)?, false)
    } else if RowOp::of(f).is_some() || arith::function(f.name()).is_some() {
        (f.call(&inner_args)?, true)
    } else {
        return Err(refuse("it does not run there yet"));
    };
    over_inner(ordinal, a, &inner, &r, ragged, &out_tp).map_err(|e| {
        if e.kind() == dynd::ErrorKind::Type {
            refuse(e.message())
        } else {
            e
        }
    })
}

/// `reduction` of the nested device array `a` over both its var levels
/// (`axis=(-2, -1)`) or every axis, as two reductions: each inner row,
/// then the resulting rows (a count's counts summed) — `sum`, `prod`,
/// `min`, `max`, `count`, `any`, `all`, whose results compose (integers
/// exactly; float sums group their terms by inner row) — and `mean` as
/// their sum over their count (missing where none; not of float32
/// values). `None` for other reductions and axes (the caller refuses
/// them).
///
/// # Errors
/// The errors of the two reductions.
fn over_both_levels(
    reduction: &Reduction,
    reduced: &[bool],
    a: &Array,
    out_tp: &dynd::Type,
) -> Result<Option<Array>> {
    use dynd::callable::reduce::BuiltinReduction as K;
    let n = reduced.len();
    let both = reduced[n - 1] && reduced[n - 2];
    let every = reduced.iter().all(|r| *r);
    let fixed_kept = reduced[..n - 2].iter().all(|r| !r);
    let Some(kind) = reduction.kind() else {
        return Ok(None);
    };
    let composes = matches!(
        kind,
        K::Sum | K::Prod | K::Min | K::Max | K::Count | K::Any | K::All
    );
    // A mean is a sum over a count, missing where nothing was counted
    // (its sum exact or in float64: not of float32 values, whose host mean
    // adds in float64).
    let float32 = a
        .nested_layout()?
        .elem
        .dtype()
        .to_string()
        .ends_with("float32");
    let mean = kind == K::Mean && !float32;
    if !(composes || mean) || !both || reduction.keepdims() || !(every || fixed_kept) {
        return Ok(None);
    }
    if mean {
        let axes: Option<&[isize]> = if every { None } else { Some(&[-2, -1]) };
        let sum = Reduction::builtin(K::Sum).with(axes, false).call(&[a])?;
        let count = Reduction::builtin(K::Count).with(axes, false).call(&[a])?;
        // In float64 (an integer sum times 1.0, exactly); a count of 0
        // gives NaN here, masked below.
        let sum = dynd::compute::multiply(&sum, &Array::from(1.0f64))?;
        let q = dynd::compute::divide(&sum, &count)?;
        let some = dynd::compute::greater(&count, &Array::from(0i64))?;
        let missing = Array::from_json("?float64", "null")?;
        let r = dynd::compute::where_(&some, &q, &missing)?;
        if r.tp() != out_tp {
            return Err(Error::type_error(format!(
                "mean over both var dims of {} on {}: sum over count gives {}, not {out_tp}",
                a.tp(),
                a.device(),
                r.tp()
            )));
        }
        return Ok(Some(r));
    }
    let rows = reduction.with(Some(&[-1]), false).call(&[a])?;
    let then = if kind == K::Count { K::Sum } else { kind };
    let axes: Option<&[isize]> = if every { None } else { Some(&[-1]) };
    let r = Reduction::builtin(then).with(axes, false).call(&[&rows])?;
    if r.tp() != out_tp {
        return Err(Error::type_error(format!(
            "{} over both var dims of {} on {}: the two steps give {}, not {out_tp}",
            reduction.name(),
            a.tp(),
            a.device(),
            r.tp()
        )));
    }
    Ok(Some(r))
}

/// The kernels padding a nested array's outer rows to their longest.
pub const PAD_KERNELS: [&str; 2] = ["dynd_nested_longest", "dynd_nested_pad"];

/// The source of [`PAD_KERNELS`] over `nk` fixed dims: the longest outer
/// row (`atomicMax`), and the inner descriptors of each outer row written
/// as `R` rows of a new block, empty past the row's length.
pub fn pad_source(nk: usize) -> String {
    format!(
        "// generated by dynd-cuda: a nested array's outer rows padded to their longest\n\
         {prelude}\
         extern \"C\" __global__ void {longest}(const char* descs, dynd_gparams p, long long n_rows, \
         unsigned long long* m) {{\n\
         \x20 for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < n_rows;\n\
         \x20      row += (long long)gridDim.x * blockDim.x) {{\n\
         \x20   long long n;\n\
         \x20   (void)dynd_row(p, descs, row, 0, &n);\n\
         \x20   atomicMax(m, (unsigned long long)n);\n\
         \x20 }}\n\
         }}\n\
         extern \"C\" __global__ void {pad}(char* out, const char* descs, dynd_gparams p, long long n_rows, \
         long long voff, long long vstride, long long R) {{\n\
         \x20 for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < n_rows;\n\
         \x20      row += (long long)gridDim.x * blockDim.x) {{\n\
         \x20   long long n;\n\
         \x20   const char* first = dynd_row(p, descs, row, voff, &n);\n\
         \x20   for (long long r = 0; r < R; ++r) {{\n\
         \x20     char* o = out + (row * R + r) * 16;\n\
         \x20     if (r < n) {{\n\
         \x20       *(unsigned long long*)o = *(const unsigned long long*)(first + r * vstride);\n\
         \x20       *(long long*)(o + 8) = *(const long long*)(first + r * vstride + 8);\n\
         \x20     }} else {{ *(unsigned long long*)o = 0; *(long long*)(o + 8) = 0; }}\n\
         \x20   }}\n\
         \x20 }}\n\
         }}\n",
        prelude = crate::rows::row_prelude(nk),
        longest = PAD_KERNELS[0],
        pad = PAD_KERNELS[1],
    )
}

/// `reduction` of the nested device array `a` over its outer var dim
/// (and fixed dims and the inner var dim, `reduced`): the outer rows are
/// padded with empty inner rows to the longest, `R`, and the result is
/// the ragged reduction of `[fixed dims] * R * var * T` over the same axes
/// ([`crate::ragged_axes`]). The inner var dim kept, that is position by
/// position over the inner rows of each outer row, as the host (and
/// awkward) reduce (an inner row's position is its index in its outer
/// row); reduced too, each outer row's values together (positions count
/// them in C order; the empty rows add none). `argmin`/`argmax` with fixed
/// dims reduced and the inner var dim kept (whose positions count
/// differently there) are refused, as are outer rows so uneven that the
/// padding would pass four times the inner rows.
///
/// # Errors
/// `Type` for what is refused; the device's errors.
fn over_outer(
    reduction: &Reduction,
    reduced: &[bool],
    ordinal: u32,
    a: &Array,
    out_tp: dynd::Type,
) -> Result<Array> {
    use dynd::callable::reduce::BuiltinReduction as K;
    let device = DeviceId::Cuda(ordinal);
    let refuse = |why: &str| {
        Error::type_error(format!(
            "{} over the outer var dim of {} on {device}: {why} (copy the array to the host \
             with to_host())",
            reduction.name(),
            a.tp()
        ))
    };
    let n = reduced.len();
    let fixed_reduced = reduced[..n - 2].iter().any(|r| *r);
    let positions = matches!(reduction.kind(), Some(K::ArgMin | K::ArgMax));
    if fixed_reduced && positions && !reduced[n - 1] {
        return Err(refuse(
            "with fixed dims reduced too, positions are not counted there yet",
        ));
    }
    let packed;
    let a = if a.nested_layout()?.levels[1].0 != 0 {
        packed = a.to_host()?.to_device(device)?;
        &packed
    } else {
        a
    };
    let l = a.nested_layout()?;
    let rows: usize = l.shape.iter().product();
    let inner = a.nested_inner_rows()?;
    let m = inner.ragged_layout()?.shape[0];
    let backend = launch::backend(ordinal)?;
    let b: &dyn Backend = &*backend;
    let (block, nk) = row_block_of(&l.shape, &l.strides);
    let source = pad_source(nk);
    let (_m_block, longest) = b.alloc(8)?;
    // SAFETY: `longest` is a fresh allocation of 8 bytes.
    unsafe { b.copy_to_device(longest, &[0u8; 8])? };
    if rows > 0 {
        let mut p = Params::default();
        p.word(a.data_ptr() as u64)
            .block(block.clone())
            .word(rows as u64)
            .word(longest as u64);
        // SAFETY: (1) the longest kernel's parameters: the outer
        // descriptors, the parameter block, the row count, the maximum.
        // (2) It reads one descriptor per outer row.
        unsafe {
            launch::counted(
                b,
                &source,
                PAD_KERNELS[0],
                launch::grid(b, rows),
                &mut p.pointers(),
            )?
        };
    }
    let mut r8 = [0u8; 8];
    // SAFETY: `longest` holds 8 bytes, written by the kernel.
    unsafe { b.copy_to_host(&mut r8, longest)? };
    let r_len = u64::from_le_bytes(r8) as usize;
    if rows * r_len > 4 * m + 1024 {
        return Err(refuse(&format!(
            "its outer rows are too uneven to pad ({rows} rows of up to {r_len} inner rows, \
             {m} inner rows in all)"
        )));
    }
    let (pblock, pptr) = b.alloc((rows * r_len * DESC).max(1))?;
    if rows * r_len > 0 {
        let mut p = Params::default();
        p.word(pptr as u64)
            .word(a.data_ptr() as u64)
            .block(block)
            .word(rows as u64)
            .word(l.levels[0].0 as u64)
            .word(l.levels[0].1 as u64)
            .word(r_len as u64);
        // SAFETY: (1) the pad kernel's parameters: the new rows (`rows *
        // R` of 16 bytes), the outer descriptors, the parameter block, the
        // row count, the outer var offset and stride, `R`. (2) Each row
        // reads its inner descriptors and writes its `R` slots.
        unsafe {
            launch::counted(
                b,
                &source,
                PAD_KERNELS[1],
                launch::grid(b, rows),
                &mut p.pointers(),
            )?
        };
    }
    let values = inner
        .ragged_values_block()
        .ok_or_else(|| refuse("no values block"))?;
    let mut tp = dynd::Type::var_dim(l.elem.clone());
    tp = dynd::Type::fixed_dim(r_len, tp);
    for &d in l.shape.iter().rev() {
        tp = dynd::Type::fixed_dim(d, tp);
    }
    let mut outer = l.shape.clone();
    outer.push(r_len);
    // SAFETY: the padded rows (C order over the fixed dims and `R`) are
    // the array's inner descriptors or empty ones, reaching its values
    // `levels[1].1` bytes apart (offset 0).
    let padded =
        unsafe { Array::ragged_on_device(&tp, &outer, (pptr, pblock), values, l.levels[1].1)? };
    let mut fixed = reduced[..n - 2].to_vec();
    fixed.push(true);
    crate::ragged_axes::call(
        reduction,
        crate::ragged_axes::Axes {
            fixed,
            var: reduced[n - 1],
        },
        ordinal,
        &padded,
        out_tp,
    )
}

/// The kernel checking that two nested arrays have the same rows.
pub const SAME_KERNEL: &str = "dynd_nested_same";

/// The source of [`SAME_KERNEL`] over `nk` fixed dims: each outer row of
/// two nested arrays has the same length and (when not empty) starts at
/// the same inner row of its block; the first row that does not is
/// recorded.
///
/// Parameters: both arrays' outer descriptors, the parameter block (the
/// fixed dims, both arrays' strides), the row count, both blocks' bases
/// (less the outer var offsets), the error record.
pub fn same_source(nk: usize) -> String {
    format!(
        "// generated by dynd-cuda: do two nested arrays have the same rows?\n\
         struct dynd_sparams {{ long long rows[{nk}]; long long a[{nk}]; long long b[{nk}]; }};\n\
         extern \"C\" __global__ void {SAME_KERNEL}(const char* da, const char* db, dynd_sparams p, \
         long long n_rows, unsigned long long base_a, unsigned long long base_b, \
         unsigned long long* err) {{\n\
         \x20 for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < n_rows;\n\
         \x20      row += (long long)gridDim.x * blockDim.x) {{\n\
         \x20   long long oa = 0, ob = 0, rem = row;\n\
         \x20   for (int d = {}; d >= 0; --d) {{\n\
         \x20     const long long i = rem % p.rows[d];\n\
         \x20     oa += i * p.a[d]; ob += i * p.b[d]; rem /= p.rows[d];\n\
         \x20   }}\n\
         \x20   const unsigned long long ba = *(const unsigned long long*)(da + oa);\n\
         \x20   const unsigned long long bb = *(const unsigned long long*)(db + ob);\n\
         \x20   const long long na = *(const long long*)(da + oa + 8);\n\
         \x20   const long long nb = *(const long long*)(db + ob + 8);\n\
         \x20   if (na != nb || (na > 0 && ba - base_a != bb - base_b)) atomicMin(err, (unsigned long long)row);\n\
         \x20 }}\n\
         }}\n",
        nk - 1
    )
}

/// The kernel finding the common outer row lengths of nested arrays.
pub const LENGTHS_KERNEL: &str = "dynd_nested_lengths";
/// The kernel expanding a nested array to common outer rows.
pub const EXPAND_KERNEL: &str = "dynd_nested_expand";

/// The source of [`LENGTHS_KERNEL`] for `n` nested arrays over `nk` fixed
/// dims: each outer row's common length (the arrays' lengths agree or are
/// 1), 0 and the row recorded where they do not.
///
/// Parameters: each array's outer descriptors; the parameter block (the
/// fixed dims, each array's strides); the row count; the lengths; the
/// error record.
pub fn lengths_source(n: usize, nk: usize) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = write!(
        s,
        "// generated by dynd-cuda: the common outer rows of nested arrays\n\
         struct dynd_lparams {{ long long rows[{nk}]; long long st[{n}][{nk}]; }};\n\
         extern \"C\" __global__ void {LENGTHS_KERNEL}("
    );
    for i in 0..n {
        let _ = write!(s, "const char* a{i}, ");
    }
    let _ = write!(
        s,
        "dynd_lparams p, long long n_rows, long long* counts, unsigned long long* err) {{\n\
         \x20 for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < n_rows;\n\
         \x20      row += (long long)gridDim.x * blockDim.x) {{\n\
         \x20   long long idx[{nk}]; long long rem = row;\n\
         \x20   for (int d = {}; d >= 0; --d) {{ idx[d] = rem % p.rows[d]; rem /= p.rows[d]; }}\n\
         \x20   long long L = 1; bool bad = false;\n",
        nk - 1
    );
    for i in 0..n {
        let _ = writeln!(
            s,
            "    {{ long long o = 0; for (int d = 0; d < {nk}; ++d) o += idx[d] * p.st[{i}][d];\n\
             \x20     const long long m = *(const long long*)(a{i} + o + 8);\n\
             \x20     if (m != 1) {{ if (L == 1) L = m; else if (L != m) bad = true; }} }}"
        );
    }
    s.push_str(
        "    if (bad) { atomicMin(err, (unsigned long long)row); L = 0; }\n\
         \x20   counts[row] = L;\n\
         \x20 }\n\
         }\n",
    );
    s
}

/// The source of [`EXPAND_KERNEL`] over `nk` fixed dims: each outer row of
/// a nested array written as `L` inner descriptors (the row's own, or its
/// one repeated) at its place in a new inner block, and a new outer
/// descriptor `{place, L}` (C order).
///
/// Parameters: the new outer descriptors, the new inner block, the
/// array's outer descriptors, its outer var offset and stride, the
/// parameter block (the fixed dims, the array's strides), the row count,
/// the rows' places (an exclusive scan of the lengths), the total.
pub fn expand_source(nk: usize) -> String {
    format!(
        "// generated by dynd-cuda: a nested array expanded to common outer rows\n\
         {prelude}\
         extern \"C\" __global__ void {EXPAND_KERNEL}(char* out_desc, char* inner, const char* descs, \
         long long voff, long long vstride, dynd_gparams p, long long n_rows, const long long* at, \
         long long total) {{\n\
         \x20 for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < n_rows;\n\
         \x20      row += (long long)gridDim.x * blockDim.x) {{\n\
         \x20   long long n;\n\
         \x20   const char* first = dynd_row(p, descs, row, voff, &n);\n\
         \x20   const long long L = (row + 1 < n_rows ? at[row + 1] : total) - at[row];\n\
         \x20   char* place = inner + at[row] * 16;\n\
         \x20   for (long long q = 0; q < L; ++q) {{\n\
         \x20     const char* d = first + (n == 1 ? 0 : q) * vstride;\n\
         \x20     *(unsigned long long*)(place + q * 16) = *(const unsigned long long*)d;\n\
         \x20     *(long long*)(place + q * 16 + 8) = *(const long long*)(d + 8);\n\
         \x20   }}\n\
         \x20   *(char**)(out_desc + row * 16) = place;\n\
         \x20   *(long long*)(out_desc + row * 16 + 8) = L;\n\
         \x20 }}\n\
         }}\n",
        prelude = crate::rows::row_prelude(nk)
    )
}

/// The nested arrays among `args` (at `nested`, of the same fixed dims,
/// inner rows at offset 0) expanded to their common outer rows: each
/// outer row's inner rows laid out in one new block per array, in the
/// same places for all (a row of 1 repeated). `None` when their outer
/// rows do not broadcast (the host's error), or their fixed dims differ.
///
/// # Errors
/// The device's errors.
fn expand(ordinal: u32, args: &[&Array], nested: &[usize]) -> Result<Option<Vec<Array>>> {
    let layouts: Vec<dynd::array::NestedLayout> = nested
        .iter()
        .map(|&i| args[i].nested_layout())
        .collect::<Result<_>>()?;
    let shape = layouts[0].shape.clone();
    if layouts
        .iter()
        .any(|l| l.shape != shape || l.levels.len() != 2 || l.levels[1].0 != 0)
    {
        return Ok(None);
    }
    let rows: usize = shape.iter().product();
    let backend = launch::backend(ordinal)?;
    let b: &dyn Backend = &*backend;
    let nk = shape.len().max(1);
    let dims: Vec<i64> = if shape.is_empty() {
        vec![1]
    } else {
        shape.iter().map(|&n| n as i64).collect()
    };
    let strides_of = |l: &dynd::array::NestedLayout| -> Vec<i64> {
        if l.strides.is_empty() {
            vec![0]
        } else {
            l.strides.iter().map(|&s| s as i64).collect()
        }
    };
    let (_counts_block, counts) = b.alloc((rows * 8).max(8))?;
    let mut total = 0usize;
    if rows > 0 {
        let record = launch::ErrorRecord::new(b)?;
        let mut block = dims.clone();
        for l in &layouts {
            block.extend(strides_of(l));
        }
        let mut p = Params::default();
        for &i in nested {
            p.word(args[i].data_ptr() as u64);
        }
        p.block(block)
            .word(rows as u64)
            .word(counts as u64)
            .word(record.addr());
        // SAFETY: (1) the kernel's parameters in order ([`lengths_source`]):
        // each array's outer descriptors, the parameter block, the row
        // count, the lengths (`rows` int64), the error record. (2) It reads
        // one descriptor per outer row of each array and writes `rows`
        // lengths; all alive until the launch returns.
        unsafe {
            launch::counted(
                b,
                &lengths_source(nested.len(), nk),
                LENGTHS_KERNEL,
                launch::grid(b, rows),
                &mut p.pointers(),
            )?
        };
        if record.first(b)?.is_some() {
            return Ok(None);
        }
        // SAFETY: `counts` holds `rows` int64 lengths, alive in its block.
        total = unsafe { crate::select::exclusive_scan(b, counts, rows)? } as usize;
    }
    let mut out: Vec<Array> = args.iter().map(|a| (*a).clone()).collect();
    for (&i, l) in nested.iter().zip(&layouts) {
        let a = args[i];
        let (dblock, dptr) = b.alloc((rows * DESC).max(1))?;
        let (iblock, iptr) = b.alloc((total * DESC).max(1))?;
        if rows > 0 {
            let mut block = dims.clone();
            block.extend(strides_of(l));
            let mut p = Params::default();
            p.word(dptr as u64)
                .word(iptr as u64)
                .word(a.data_ptr() as u64)
                .word(l.levels[0].0 as u64)
                .word(l.levels[0].1 as u64)
                .block(block)
                .word(rows as u64)
                .word(counts as u64)
                .word(total as u64);
            // SAFETY: (1) the kernel's parameters in order
            // ([`expand_source`]): the new outer descriptors (`rows` of 16
            // bytes), the new inner block (`total` of 16 bytes), the
            // array's outer descriptors, its outer var offset and stride,
            // the parameter block, the row count, the places, the total.
            // (2) Each row reads its own inner descriptors (or its one) and
            // writes its `L` places inside the new block (the scan); all
            // alive until the launch returns.
            unsafe {
                launch::counted(
                    b,
                    &expand_source(nk),
                    EXPAND_KERNEL,
                    launch::grid(b, rows),
                    &mut p.pointers(),
                )?
            };
        }
        let values = a
            .nested_inner_rows()?
            .ragged_values_block()
            .ok_or_else(|| Error::type_error(format!("{} has no values block", a.tp())))?;
        // SAFETY: the new outer descriptors (C order) point into the new
        // inner block, whose descriptors are the array's own, reaching its
        // values `l.levels[1].1` bytes apart.
        out[i] = unsafe {
            Array::nested_on_device(
                a.tp(),
                &shape,
                (dptr, dblock),
                (iblock, DESC as isize),
                (values, l.levels[1].1),
            )?
        };
    }
    Ok(Some(out))
}

/// `true` when the nested device arrays `a` and `b` (two var levels each)
/// have the same rows laid out alike: the same fixed dims, outer var
/// offsets and strides, as many inner rows in their blocks, and each
/// outer row as long as the other and starting at the same inner row —
/// so their inner rows correspond one to one.
///
/// # Errors
/// The device's errors.
fn same_rows(ordinal: u32, a: &Array, b: &Array) -> Result<bool> {
    let (la, lb) = (a.nested_layout()?, b.nested_layout()?);
    if la.shape != lb.shape || la.levels.len() != 2 || lb.levels.len() != 2 {
        return Ok(false);
    }
    if la.levels[0] != lb.levels[0] {
        return Ok(false);
    }
    let (ia, ib) = (a.nested_inner_rows()?, b.nested_inner_rows()?);
    if ia.ragged_layout()?.shape != ib.ragged_layout()?.shape {
        return Ok(false);
    }
    let rows: usize = la.shape.iter().product();
    if rows == 0 {
        return Ok(true);
    }
    let backend = launch::backend(ordinal)?;
    let b_: &dyn Backend = &*backend;
    let record = launch::ErrorRecord::new(b_)?;
    let (mut block, nk) = row_block_of(&la.shape, &la.strides);
    let (bb, _) = row_block_of(&lb.shape, &lb.strides);
    block.extend_from_slice(&bb[nk..]);
    let off = la.levels[0].0 as i64;
    let mut p = Params::default();
    p.word(a.data_ptr() as u64)
        .word(b.data_ptr() as u64)
        .block(block)
        .word(rows as u64)
        .word((ia.data_ptr() as i64 - off) as u64)
        .word((ib.data_ptr() as i64 - off) as u64)
        .word(record.addr());
    // SAFETY: (1) the kernel's parameters in order ([`same_source`]): both
    // arrays' outer descriptors, the parameter block (the fixed dims, both
    // strides), the row count, both bases, the error record. (2) It reads
    // one descriptor per outer row of each array (their data, alive while
    // they are) and writes the record only.
    unsafe {
        launch::counted(
            b_,
            &same_source(nk),
            SAME_KERNEL,
            launch::grid(b_, rows),
            &mut p.pointers(),
        )?
    };
    Ok(record.first(b_)?.is_none())
}

/// `f` on several nested device arrays (`nested`: their places in `args`,
/// the others 0-d host scalars): the arithmetic functions, `where`,
/// `filter` and `take`, on the inner rows, when the arrays' rows
/// correspond one to one ([`same_rows`]). Arrays whose rows are as long
/// but laid out otherwise (views) are packed first (through the host:
/// `to_device` lays every level out in C order); outer rows of 1 beside
/// longer ones are expanded to the common rows ([`expand`]). Outer rows
/// that do not broadcast are the host's error; nested arrays of different
/// fixed dims a `Type` error where the host broadcasts them.
fn several(
    f: &Callable,
    ordinal: u32,
    args: &[&Array],
    nested: &[usize],
    refuse: &dyn Fn(&str) -> Error,
) -> Result<Array> {
    let device = DeviceId::Cuda(ordinal);
    let selection = ["filter", "take"].contains(&f.name());
    if arith::function(f.name()).is_none() && f.name() != "where" && !selection {
        return Err(refuse(
            "it does not run there yet with several device arrays",
        ));
    }
    for (i, a) in args.iter().enumerate() {
        if nested.contains(&i) {
            if a.nested_layout().map(|l| l.levels.len()) != Ok(2) {
                return Err(refuse(
                    "every device argument must be nested (two var dims) beside a nested one",
                ));
            }
        } else if a.ndim() != 0 {
            return Err(refuse("the other arguments must be 0-d host scalars"));
        }
    }
    let out_tp = f.resolve(&args.iter().map(|a| a.tp().clone()).collect::<Vec<_>>())?;
    let host_error = || match crate::select::host_failure(f, args) {
        Some(e) => e.context(format!("{} on {device}", f.name())),
        None => refuse(
            "nested arrays whose fixed dims differ (broadcast between them) do not run there yet",
        ),
    };
    let alike = |arrays: &[&Array]| -> Result<bool> {
        for &i in &nested[1..] {
            if !same_rows(ordinal, arrays[nested[0]], arrays[i])? {
                return Ok(false);
            }
        }
        Ok(true)
    };
    let run = |arrays: &[&Array]| -> Result<Array> {
        let inner: Vec<Array> = arrays
            .iter()
            .enumerate()
            .map(|(i, a)| {
                if nested.contains(&i) {
                    a.nested_inner_rows()
                } else {
                    Ok((*a).clone())
                }
            })
            .collect::<Result<_>>()?;
        let refs: Vec<&Array> = inner.iter().collect();
        let r = match f.name() {
            "filter" => crate::select::filter(f, ordinal, &refs)?,
            "take" => crate::select::take(f, ordinal, &refs)?,
            _ => f.call(&refs)?,
        };
        // The result's rows are the first array's (take: the indices').
        let at = if f.name() == "take" {
            nested[nested.len() - 1]
        } else {
            nested[0]
        };
        over_inner(ordinal, arrays[at], &inner[at], &r, true, &out_tp)
    };
    if alike(args)? {
        match run(args) {
            Ok(r) => return Ok(r),
            Err(e) if e.kind() == dynd::ErrorKind::Type => return Err(e),
            // Inner rows no outer row reaches may fail where the reached
            // ones do not: the host decides, then the packed arrays run.
            Err(_) => {
                if crate::select::host_failure(f, args).is_some() {
                    return Err(host_error());
                }
            }
        }
    }
    let packed: Vec<Array> = args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            if nested.contains(&i) {
                a.to_host().and_then(|h| h.to_device(device))
            } else {
                Ok((*a).clone())
            }
        })
        .collect::<Result<_>>()?;
    let refs: Vec<&Array> = packed.iter().collect();
    let expanded;
    let refs = if alike(&refs)? {
        refs
    } else {
        // Outer rows of 1 beside longer ones: every array expanded to the
        // common outer rows (a row of 1 repeated), laid out alike.
        match expand(ordinal, &refs, nested)? {
            Some(e) => {
                expanded = e;
                expanded.iter().collect()
            }
            None => return Err(host_error()),
        }
    };
    run(&refs).map_err(|e| {
        if e.kind() == dynd::ErrorKind::Type {
            e
        } else {
            host_error()
        }
    })
}

/// The nested result of type `out_tp` of a result `r` over the innermost
/// rows `inner` of the nested device array `a` (on `cuda:ordinal`, two
/// var levels or more): one value per inner row (`ragged` false: the
/// innermost var level is gone), or one row per inner row. The levels
/// above are moved onto `r`, innermost first: one kernel per level copies
/// its descriptors (a whole block of them, or the outer rows) pointing at
/// the new copy of the block below.
///
/// # Errors
/// `Type` when the rows are not whole descriptors apart; the device's
/// errors.
fn over_inner(
    ordinal: u32,
    a: &Array,
    inner: &Array,
    r: &Array,
    ragged: bool,
    out_tp: &dynd::Type,
) -> Result<Array> {
    let layout = a.nested_layout()?;
    let k = layout.levels.len();
    let refuse = |why: &str| Error::type_error(why.to_string());
    let backend = launch::backend(ordinal)?;
    let b: &dyn Backend = &*backend;
    // Each inner row's result at the row's place: a value, or a
    // descriptor.
    let osize = if ragged {
        DESC
    } else {
        r.tp().dtype().data_size()
    };
    if layout.levels[..k - 1]
        .iter()
        .any(|(_, s)| s % DESC as isize != 0)
    {
        return Err(refuse("the rows are not whole descriptors apart"));
    }
    // Moves the descriptors of level `level` (`n` rows laid out as `shape`
    // / `strides` from `descs`) from the block at `from` to its new copy
    // at `to` (elements of `to_size` bytes there), into new rows.
    let rebase = |descs: u64,
                  (shape, strides): (&[usize], &[isize]),
                  level: usize,
                  (from, to, to_size): (u64, u64, usize)|
     -> Result<(MemBlock, *mut u8)> {
        let n: usize = shape.iter().product();
        let (block, ptr) = b.alloc((n * DESC).max(1))?;
        if n > 0 {
            let (pblock, nk) = row_block_of(shape, strides);
            let mut p = Params::default();
            p.word(ptr as u64)
                .word(descs)
                .block(pblock)
                .word(n as u64)
                .word(layout.levels[level].0 as u64)
                .word(from)
                .word(to);
            // SAFETY: (1) the rebase kernel's parameters in order: the new
            // descriptors (`n` of 16 bytes), the old ones, the parameter
            // block, the row count, the level's offset, the block they
            // point into and its new copy. (2) Every row points into the
            // old block, whose copy has one element of `to_size` bytes per
            // descriptor of it; all alive until the launch returns.
            unsafe {
                launch::counted(
                    b,
                    &rebase_source(DESC, to_size, nk),
                    REBASE_KERNEL,
                    launch::grid(b, n),
                    &mut p.pointers(),
                )?
            };
        }
        Ok((block, ptr))
    };
    // From the innermost row level up: the descriptors of level l (in the
    // block of level l - 1, or the data for level 0) point into the block
    // of level l, replaced by its new copy (the result over the inner
    // rows, for level k - 2).
    let blocks = a.nested_level_blocks()?;
    let mut into: (u64, u64, usize) = (inner.data_ptr() as u64, r.data_ptr() as u64, osize);
    let mut levels: Vec<(MemBlock, isize)> = Vec::new();
    let stride = layout.levels[k - 2].1 / DESC as isize * osize as isize;
    if ragged {
        let values = r
            .ragged_values_block()
            .ok_or_else(|| refuse("the result over the rows has no values block"))?;
        levels.push((values, r.ragged_layout()?.stride));
    }
    levels.push((r.data_ref().clone(), stride));
    for level in (1..k - 1).rev() {
        let (_, base, bytes) = &blocks[level - 1];
        let m = bytes / DESC;
        let (block, ptr) = rebase(*base as u64, (&[m], &[DESC as isize]), level, into)?;
        levels.push((block, layout.levels[level - 1].1));
        into = (*base as u64, ptr as u64, DESC);
    }
    levels.reverse();
    let (dblock, dptr) = rebase(
        a.data_ptr() as u64,
        (&layout.shape, &layout.strides),
        0,
        into,
    )?;
    if levels.len() == 1 {
        let (values, stride) = levels.remove(0);
        // SAFETY: the new outer descriptors point into the result's values
        // (one per inner row, `stride` apart).
        return unsafe {
            Array::ragged_on_device(out_tp, &layout.shape, (dptr, dblock), values, stride)
        };
    }
    // SAFETY: the new outer descriptors point into the first level's new
    // block, each level's into the next's, the last's into the result's
    // values, each `stride` apart as before (the result's scaled).
    unsafe { Array::nested_levels_on_device(out_tp, &layout.shape, (dptr, dblock), levels) }
}

/// `ix` within each row of var level `level` (0: the outer var dim, 1:
/// the inner) of the nested device array `x` (`[fixed dims] * var * var *
/// T` on `cuda:ordinal`; `axis` for messages), as the host indexes it: an
/// integer drops the level (`[fixed dims] * var * T`), a slice keeps it (a
/// view over the same rows or values).
///
/// The outer level is indexed as rows of inner descriptors
/// ([`dynd::Array::nested_outer_rows`]): `x[:, i]` copies a descriptor
/// per outer row, `x[:, a:b]` makes new outer descriptors. The inner level
/// is indexed as the ragged rows it is ([`dynd::Array::nested_inner_rows`])
/// and the outer descriptors moved onto the result.
///
/// # Errors
/// The host's `Index` error for a row an integer is out of range of;
/// `Type` for more var levels.
pub fn index_rows(
    ordinal: u32,
    x: &Array,
    level: usize,
    ix: dynd::Index,
    axis: usize,
) -> Result<Array> {
    let device = DeviceId::Cuda(ordinal);
    let layout = x.nested_layout()?;
    if layout.levels.len() != 2 || level > 1 {
        return Err(Error::type_error(format!(
            "indexing var level {level} of {} on {device}: within nested rows the device \
             indexes two var levels, not more; copy the array to the host with to_host()",
            x.tp()
        )));
    }
    let mut tp = dynd::Type::var_dim(layout.elem.clone());
    for &n in layout.shape.iter().rev() {
        tp = dynd::Type::fixed_dim(n, tp);
    }
    let computed = if level == 0 {
        outer_index(ordinal, x, &layout, ix, axis, &tp)
    } else {
        let inner = x.nested_inner_rows()?;
        crate::select::index_rows(ordinal, &inner, ix, axis).and_then(|r| {
            let at = matches!(ix, dynd::Index::At(_));
            over_inner(ordinal, x, &inner, &r, !at, if at { &tp } else { x.tp() })
        })
    };
    match computed {
        Err(e) if e.kind() == dynd::ErrorKind::Index => {
            // The host decides: its error names the row as the user's
            // array numbers it. Inner rows no outer row reaches (a view's)
            // may fail where the host's reached ones do not: then the
            // array is packed (through the host) and indexed again.
            let host = x.to_host()?;
            let here = layout.shape.len() + level;
            let mut index = vec![dynd::Index::ALL; here];
            index.push(ix);
            match host.index(&index) {
                // The host numbers the axes of `x`; the user's array may
                // have had dims before it (`a[0][:, :, 0]`).
                Err(h) => Err(Error::new(
                    h.kind(),
                    h.message()
                        .replace(&format!("axis {here} "), &format!("axis {axis} ")),
                )),
                Ok(_) => {
                    let packed = host.to_device(device)?;
                    if level == 0 {
                        outer_index(ordinal, &packed, &packed.nested_layout()?, ix, axis, &tp)
                    } else {
                        let inner = packed.nested_inner_rows()?;
                        let r = crate::select::index_rows(ordinal, &inner, ix, axis)?;
                        let at = matches!(ix, dynd::Index::At(_));
                        over_inner(
                            ordinal,
                            &packed,
                            &inner,
                            &r,
                            !at,
                            if at { &tp } else { x.tp() },
                        )
                    }
                }
            }
        }
        other => other,
    }
}

/// [`index_rows`] of the outer level: `ix` within each outer row of `x`
/// (`layout` its nested layout; `tp` the type of an integer's result).
fn outer_index(
    ordinal: u32,
    x: &Array,
    layout: &dynd::array::NestedLayout,
    ix: dynd::Index,
    axis: usize,
    tp: &dynd::Type,
) -> Result<Array> {
    let device = DeviceId::Cuda(ordinal);
    let (inner_offset, inner_stride) = layout.levels[1];
    if inner_offset != 0 {
        return Err(Error::type_error(format!(
            "indexing the outer rows of {} on {device}: its inner rows start {inner_offset} \
             bytes into their values (a view the device does not index yet)",
            x.tp()
        )));
    }
    let outer = x.nested_outer_rows()?;
    let values = x
        .nested_inner_rows()?
        .ragged_values_block()
        .ok_or_else(|| Error::type_error(format!("{} has no values block", x.tp())))?;
    let r = crate::select::index_rows(ordinal, &outer, ix, axis)?;
    match ix {
        // A descriptor per outer row: the rows picked, over the values.
        // SAFETY: `r` holds one inner descriptor per outer row (C order
        // over the fixed dims), each reaching the values block `stride`
        // bytes apart; `r`'s block keeps them.
        dynd::Index::At(_) => unsafe {
            Array::ragged_on_device(
                tp,
                &layout.shape,
                (r.data_ptr(), r.data_ref().clone()),
                values,
                inner_stride,
            )
        },
        _ => {
            let rows = outer
                .ragged_values_block()
                .ok_or_else(|| Error::type_error(format!("{} has no row block", x.tp())))?;
            let row_stride = r.ragged_layout()?.stride;
            // SAFETY: `r`'s new outer descriptors (C order) point into the
            // inner descriptors' block, `row_stride` bytes apart, each of
            // which reaches the values.
            unsafe {
                Array::nested_on_device(
                    x.tp(),
                    &layout.shape,
                    (r.data_ptr(), r.data_ref().clone()),
                    (rows, row_stride),
                    (values, inner_stride),
                )
            }
        }
    }
}

/// `concatenate(args)` (`f`) of nested device arrays on `cuda:ordinal`
/// (`[N_i] * [fixed dims] * var * var * T`, along the first dim): the
/// inner rows of all concatenated into one ragged array (ragged
/// `concatenate`: lengths, scan, gather), and each array's outer
/// descriptors moved onto its part of it (one kernel per array). Arrays
/// whose outer rows are not packed descriptors (a view's `x[:, ::-1]`) are
/// packed through the host first.
///
/// # Errors
/// The host's type errors; `Type` for arguments that are not nested
/// arrays of two var levels under a fixed dim.
pub fn concatenate(f: &Callable, ordinal: u32, args: &[&Array]) -> Result<Array> {
    let device = DeviceId::Cuda(ordinal);
    let out_tp = f.resolve(&args.iter().map(|a| a.tp().clone()).collect::<Vec<_>>())?;
    let refuse = |a: &Array| {
        Error::type_error(format!(
            "concatenate on {device}: {} beside nested arrays; on the device, nested arrays \
             (a fixed dim first, then two var dims) concatenate with nested arrays of their \
             own kind (copy the arrays to the host with to_host() for the rest)",
            a.tp()
        ))
    };
    let mut packed = Vec::with_capacity(args.len());
    for a in args {
        if a.device() != device {
            return Err(Error::invalid_argument(format!(
                "concatenate on {device}: {} is on {}; nothing moves implicitly",
                a.tp(),
                a.device()
            )));
        }
        let l = a.nested_layout().map_err(|_| refuse(a))?;
        if l.levels.len() != 2 || l.shape.is_empty() {
            return Err(refuse(a));
        }
        packed.push(if l.levels[0] == (0, DESC as isize) {
            (*a).clone()
        } else {
            a.to_host()?.to_device(device)?
        });
    }
    let inner: Vec<Array> = packed
        .iter()
        .map(Array::nested_inner_rows)
        .collect::<Result<_>>()?;
    let refs: Vec<&Array> = inner.iter().collect();
    let r = crate::concat::call(f, ordinal, &refs)?;
    let mut shape = Vec::new();
    let mut t = &out_tp;
    while let dynd::types::TypeKind::FixedDim { size, elem } = t.kind() {
        shape.push(*size);
        t = elem;
    }
    let rows: usize = shape.iter().product();
    let backend = launch::backend(ordinal)?;
    let b: &dyn Backend = &*backend;
    let (dblock, dptr) = b.alloc((rows * DESC).max(1))?;
    let (mut rows_before, mut inner_before) = (0usize, 0usize);
    for (a, i) in packed.iter().zip(&inner) {
        let l = a.nested_layout()?;
        let n: usize = l.shape.iter().product();
        if n > 0 {
            let (block, nk) = row_block_of(&l.shape, &l.strides);
            let mut p = Params::default();
            p.word(dptr.wrapping_add(rows_before * DESC) as u64)
                .word(a.data_ptr() as u64)
                .block(block)
                .word(n as u64)
                .word(0)
                .word(i.data_ptr() as u64)
                .word(r.data_ptr().wrapping_add(inner_before * DESC) as u64);
            // SAFETY: (1) the rebase kernel's parameters in order: this
            // array's part of the new outer descriptors (`n` of 16 bytes
            // from `rows_before`), its outer descriptors, the parameter
            // block, the row count, the outer offset (0: packed), its
            // inner rows' block and their place in the concatenated rows.
            // (2) Every outer row points into its inner block, whose rows
            // lie in the same order in `r` from `inner_before`; all alive
            // until the launch returns.
            unsafe {
                launch::counted(
                    b,
                    &rebase_source(DESC, DESC, nk),
                    REBASE_KERNEL,
                    launch::grid(b, n),
                    &mut p.pointers(),
                )?
            };
        }
        rows_before += n;
        inner_before += i.ragged_layout()?.shape[0];
    }
    if rows_before != rows {
        return Err(Error::invalid_argument(format!(
            "concatenate on {device}: the arguments hold {rows_before} outer rows, the result \
             {out_tp} {rows}"
        )));
    }
    let values = r
        .ragged_values_block()
        .ok_or_else(|| Error::type_error("the concatenated rows have no values block"))?;
    let stride = r.ragged_layout()?.stride;
    // SAFETY: the new outer descriptors (C order over the result's fixed
    // dims: each array's rows in turn) point into `r`'s descriptors (16
    // bytes apart, C order), which reach its values `stride` apart.
    unsafe {
        Array::nested_on_device(
            &out_tp,
            &shape,
            (dptr, dblock),
            (r.data_ref().clone(), DESC as isize),
            (values, stride),
        )
    }
}

/// The kernel comparing a nested output's row lengths with a result's.
pub const LENGTHS_ALIKE_KERNEL: &str = "dynd_nested_lengths_alike";

/// The source of [`LENGTHS_ALIKE_KERNEL`] over `nk` fixed dims: an outer
/// row of another length than the result's is recorded as its index; an
/// inner row of another length as `2^62` plus its outer row's (so outer
/// ones come first).
///
/// Parameters: the output's outer descriptors, its outer var offset and
/// stride; the result's; the parameter block (the fixed dims, the
/// output's strides, the result's); the row count; the error record.
pub fn lengths_alike_source(nk: usize) -> String {
    format!(
        "// generated by dynd-cuda: has a nested output a result's row lengths?\n\
         struct dynd_nparams {{ long long rows[{nk}]; long long o[{nk}]; long long s[{nk}]; }};\n\
         extern \"C\" __global__ void {LENGTHS_ALIKE_KERNEL}(const char* od, long long oo0, long long os0, \
         const char* rd, long long ro0, long long rs0, dynd_nparams p, long long n_rows, \
         unsigned long long* err) {{\n\
         \x20 for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < n_rows;\n\
         \x20      row += (long long)gridDim.x * blockDim.x) {{\n\
         \x20   long long ob = 0, rb = 0, rem = row;\n\
         \x20   for (int d = {}; d >= 0; --d) {{\n\
         \x20     const long long x = rem % p.rows[d];\n\
         \x20     ob += x * p.o[d]; rb += x * p.s[d]; rem /= p.rows[d];\n\
         \x20   }}\n\
         \x20   const char* orow = *(const char* const*)(od + ob) + oo0;\n\
         \x20   const long long on = *(const long long*)(od + ob + 8);\n\
         \x20   const char* rrow = *(const char* const*)(rd + rb) + ro0;\n\
         \x20   const long long rn = *(const long long*)(rd + rb + 8);\n\
         \x20   if (on != rn) {{ atomicMin(err, (unsigned long long)row); continue; }}\n\
         \x20   for (long long q = 0; q < on; ++q)\n\
         \x20     if (*(const long long*)(orow + q * os0 + 8) != *(const long long*)(rrow + q * rs0 + 8)) {{\n\
         \x20       atomicMin(err, (1ULL << 62) + (unsigned long long)row); break;\n\
         \x20     }}\n\
         \x20 }}\n\
         }}\n",
        nk - 1
    )
}

/// A row result `r` (nested, two var levels) into the nested output
/// `out` of its type: the output's rows must have the result's lengths —
/// the host replaces inner rows of other lengths, which a device values
/// block cannot hold (a `Type` error saying so) — and the result is
/// assigned into them.
///
/// # Errors
/// `Broadcast` (for the caller to explain) when an outer row's length
/// differs; `Type` for inner rows of other lengths and other outputs; the
/// device's errors.
fn rows_into(f: &Callable, ordinal: u32, out: &Array, r: &Array) -> Result<()> {
    let device = DeviceId::Cuda(ordinal);
    out.check_writable()?;
    let (lo, lr) = (out.nested_layout()?, r.nested_layout()?);
    if lo.levels.len() != 2 || lr.levels.len() != 2 || lo.shape != lr.shape {
        return Err(Error::type_error(format!(
            "rows of {} on {device} go into an output of two var levels and the same fixed \
             dims, not {}",
            r.tp(),
            out.tp()
        )));
    }
    let rows: usize = lo.shape.iter().product();
    if rows > 0 {
        let backend = launch::backend(ordinal)?;
        let b: &dyn Backend = &*backend;
        let record = launch::ErrorRecord::new(b)?;
        let (mut block, nk) = row_block_of(&lo.shape, &lo.strides);
        let (rblock, _) = row_block_of(&lr.shape, &lr.strides);
        block.extend_from_slice(&rblock[nk..]);
        let mut p = Params::default();
        p.word(out.data_ptr() as u64)
            .word(lo.levels[0].0 as u64)
            .word(lo.levels[0].1 as u64)
            .word(r.data_ptr() as u64)
            .word(lr.levels[0].0 as u64)
            .word(lr.levels[0].1 as u64)
            .block(block)
            .word(rows as u64)
            .word(record.addr());
        // SAFETY: (1) the kernel's parameters in order
        // ([`lengths_alike_source`]): the output's outer descriptors,
        // offset and stride; the result's; the parameter block; the row
        // count; the error record. (2) Each thread reads its outer rows'
        // descriptors and, when their lengths agree, their inner
        // descriptors; all alive until the launch returns.
        unsafe {
            launch::counted(
                b,
                &lengths_alike_source(nk),
                LENGTHS_ALIKE_KERNEL,
                launch::grid(b, rows),
                &mut p.pointers(),
            )?
        };
        match record.first(b)? {
            Some(at) if at < (1 << 62) => {
                return Err(Error::broadcast(format!(
                    "{} on {device}: an outer row of the output has another length than the \
                     result's",
                    out.tp()
                )));
            }
            Some(_) => return Err(crate::outputs::other_lengths(f, out)),
            None => {}
        }
    }
    assign(out, r, dynd::kernels::assign::ErrorMode::NoCheck)
}

/// The kernel of an assignment into nested rows.
pub const ASSIGN_KERNEL: &str = "dynd_nested_assign";

/// The source of [`ASSIGN_KERNEL`]: `k`'s body (one input: a scalar, or
/// nested rows when `!scalar`) into the values of nested rows, over `nk`
/// fixed dims (at least 1). A thread per outer row walks its inner rows;
/// a source row of 1 broadcasts (at either level), other lengths than the
/// output's fail the outer row.
///
/// Parameters: the output's outer descriptors, its outer and inner var
/// offsets and strides; the scalar's bits, or the source's outer
/// descriptors, var offsets and strides; the parameter block (the fixed
/// dims, the output's strides, the source's); the row count; the error
/// record.
pub fn assign_source(k: &crate::kernel::Elementwise, scalar: bool, nk: usize) -> String {
    use std::fmt::Write;
    let (mut g, defs) = crate::codegen::prelude(k);
    let bits = crate::codegen::bits_type(k.inputs[0].elem);
    let mut s = String::new();
    s.push_str("// generated by dynd-cuda: an assignment into nested rows\n");
    s.push_str(&defs);
    let _ = writeln!(
        s,
        "struct dynd_nparams {{ long long rows[{nk}]; long long o[{nk}]; long long s[{nk}]; }};"
    );
    let src_params = if scalar {
        format!("{bits} in0")
    } else {
        "const char* sd, long long so0, long long ss0, long long so1, long long ss1".into()
    };
    let _ = write!(
        s,
        "extern \"C\" __global__ void {ASSIGN_KERNEL}(char* od, long long oo0, long long os0, \
         long long oo1, long long os1, {src_params}, dynd_nparams p, long long n_rows, \
         unsigned long long* err) {{\n\
         \x20 for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < n_rows;\n\
         \x20      row += (long long)gridDim.x * blockDim.x) {{\n\
         \x20   long long ob = 0, sb = 0, rem = row;\n\
         \x20   for (int d = {}; d >= 0; --d) {{\n\
         \x20     const long long x = rem % p.rows[d];\n\
         \x20     ob += x * p.o[d]; sb += x * p.s[d]; rem /= p.rows[d];\n\
         \x20   }}\n\
         \x20   (void)sb;\n\
         \x20   const char* orow = *(const char* const*)(od + ob) + oo0;\n\
         \x20   const long long on = *(const long long*)(od + ob + 8);\n",
        nk - 1
    );
    if !scalar {
        s.push_str(
            "    const char* srow = *(const char* const*)(sd + sb) + so0;\n\
             \x20   const long long sn = *(const long long*)(sd + sb + 8);\n\
             \x20   if (sn != on && sn != 1) { atomicMin(err, (unsigned long long)row << 32); continue; }\n",
        );
    }
    s.push_str(
        "    for (long long q = 0; q < on; ++q) {\n\
         \x20     const char* o1 = orow + q * os0;\n\
         \x20     char* obeg = *(char* const*)o1 + oo1;\n\
         \x20     const long long om = *(const long long*)(o1 + 8);\n",
    );
    if !scalar {
        s.push_str(
            "      const char* s1 = srow + (sn == 1 ? 0 : q) * ss0;\n\
             \x20     const char* sbeg = *(const char* const*)s1 + so1;\n\
             \x20     const long long sm = *(const long long*)(s1 + 8);\n\
             \x20     if (sm != om && sm != 1) { atomicMin(err, (unsigned long long)row << 32); break; }\n",
        );
    }
    s.push_str(
        "      for (long long j = 0; j < om; ++j) {\n\
         \x20   const unsigned long long i = ((unsigned long long)row << 32) | (unsigned long long)j;\n",
    );
    crate::codegen::element(
        k,
        &mut g,
        &mut s,
        &|_, o| {
            if scalar {
                "in0".into()
            } else {
                format!(
                    "*(const {}*)(sbeg + (sm == 1 ? 0 : j) * ss1)",
                    crate::codegen::bits_type(o.elem)
                )
            }
        },
        "obeg + j * os1",
    );
    s.push_str("      }\n    }\n  }\n}\n");
    s
}

/// `dst ← src` into the nested device array `dst` (`[fixed dims] * var *
/// var * T`, two levels): `src` a 0-d host scalar, or nested rows of the
/// same fixed dims on the device (rows of 1 broadcast at either level),
/// each value converted under `mode`, as the host assigns. Only the rows
/// `dst` reaches are written.
///
/// # Errors
/// The host's errors for the same assignment (rows of other lengths, a
/// value failing the mode); `Type` for other sources.
pub fn assign(dst: &Array, src: &Array, mode: dynd::kernels::assign::ErrorMode) -> Result<()> {
    use crate::kernel::{Elementwise, Operand, Place, assign_body, element_value, value_type};
    let device = dst.device();
    let DeviceId::Cuda(ordinal) = device else {
        return Err(Error::invalid_argument(format!(
            "assign: the CUDA runtime was given {device}"
        )));
    };
    dst.check_writable()?;
    let refuse = || {
        Error::type_error(format!(
            "assignment of {} into nested rows {} on {device}: the source must be a 0-d host \
             scalar or nested rows (two var dims) of the same fixed dims on the device; \
             assign on host copies (to_host) for the rest",
            src.tp(),
            dst.tp()
        ))
    };
    let l = dst.nested_layout()?;
    if l.levels.len() != 2 {
        return Err(refuse());
    }
    let (elem, optional) = element_value(&l.elem).ok_or_else(refuse)?;
    let scalar = src.device().is_cpu();
    // A source sharing the destination's values is read from a packed copy.
    let packed;
    let src = if !scalar
        && src
            .nested_inner_rows()
            .ok()
            .and_then(|r| r.ragged_values_block())
            .zip(dst.nested_inner_rows()?.ragged_values_block())
            .is_some_and(|(a, b)| a.ptr_eq(&b))
    {
        packed = src.to_host()?.to_device(device)?;
        &packed
    } else {
        src
    };
    let (input, words, src_strides) = if scalar {
        if src.ndim() != 0 {
            return Err(refuse());
        }
        let (e, o) = value_type(src, "the source")?;
        (
            Operand {
                elem: e,
                optional: o,
                place: Place::Scalar,
            },
            vec![launch::scalar_bits(src)?],
            vec![0; l.shape.len()],
        )
    } else {
        let ls = src.nested_layout().map_err(|_| refuse())?;
        if src.device() != device || ls.levels.len() != 2 || ls.shape != l.shape {
            return Err(refuse());
        }
        let (e, o) = element_value(&ls.elem).ok_or_else(refuse)?;
        (
            Operand {
                elem: e,
                optional: o,
                place: Place::Strided(vec![0]),
            },
            vec![
                src.data_ptr() as u64,
                ls.levels[0].0 as u64,
                ls.levels[0].1 as u64,
                ls.levels[1].0 as u64,
                ls.levels[1].1 as u64,
            ],
            ls.strides.clone(),
        )
    };
    let body = assign_body(&input, (elem, optional), mode);
    let k = Elementwise {
        shape: vec![1],
        inputs: vec![input],
        out: Operand {
            elem,
            optional,
            place: Place::Strided(vec![elem.data_size() as isize]),
        },
        body,
    };
    let rows: usize = l.shape.iter().product();
    if rows == 0 {
        return Ok(());
    }
    let nk = l.shape.len().max(1);
    let mut block: Vec<i64> = if l.shape.is_empty() {
        vec![1, 0, 0]
    } else {
        let mut b: Vec<i64> = l.shape.iter().map(|&n| n as i64).collect();
        b.extend(l.strides.iter().map(|&s| s as i64));
        b.extend(src_strides.iter().map(|&s| s as i64));
        b
    };
    if block.len() < 3 * nk {
        block.resize(3 * nk, 0);
    }
    let backend = launch::backend(ordinal)?;
    let b: &dyn Backend = &*backend;
    let record = launch::ErrorRecord::new(b)?;
    let mut p = Params::default();
    p.word(dst.data_ptr() as u64)
        .word(l.levels[0].0 as u64)
        .word(l.levels[0].1 as u64)
        .word(l.levels[1].0 as u64)
        .word(l.levels[1].1 as u64);
    for w in words {
        p.word(w);
    }
    p.block(block).word(rows as u64).word(record.addr());
    // SAFETY: (1) the kernel's parameters in order ([`assign_source`]): the
    // destination's outer descriptors, its var offsets and strides; the
    // scalar's bits or the source's descriptors, offsets and strides; the
    // parameter block; the row count; the error record. (2) Each thread
    // walks its outer row's inner rows (the arrays' layouts) and writes
    // the destination's values it reaches, after checking the source's
    // lengths; all alive until the launch returns.
    unsafe {
        launch::counted(
            b,
            &assign_source(&k, scalar, nk),
            ASSIGN_KERNEL,
            launch::grid(b, rows),
            &mut p.pointers(),
        )?
    };
    if record.first(b)?.is_some() {
        let host = dst
            .to_host()
            .and_then(|d| src.to_host().and_then(|s| d.assign(&s, mode)));
        return Err(match host {
            Err(e) => e.context(format!("assign on {device}")),
            Ok(()) => Error::external(format!(
                "assign on {device}: the device reported an error the host does not find"
            )),
        });
    }
    Ok(())
}
