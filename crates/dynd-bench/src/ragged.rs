//! Var dims: a ragged `R * var * float64` of R = 1M rows (200K with
//! `--quick`) of 0–20 elements: sum over the inner axis, and `+ 1.0` into
//! a new array, each on one thread and on two (on each count of
//! `--threads`). Then missing values, on one thread: the
//! sum over axis -1 of the same data as `R * var * ?float64` with every
//! element `k` where `k mod 10 = 3` missing (10%), and the max over axis
//! -1 of `R * var * float64` whose rows `i` with `i mod 10 = 0` are empty.
//!
//! Row `i` has `(7 i + 3) mod 21` elements; the element at flat position
//! `k` is `(k mod 100) / 4` (`bench/compare.py` builds the same arrays for
//! awkward). The array is built directly in its layout: one allocation for
//! all elements in the var dim's arena and one `VarDimData` per row: the
//! fastest way through the public API (no text to format and parse, no
//! per-row allocation). Its time is reported too.

use crate::callables::named;
use crate::harness::{Ctx, Measurement, median_time, median_times_threads, or_skip};
use dynd::array::{FixedDimMeta, VarDimData, VarDimMeta};
use dynd::compute as reduce;
use dynd::memblock::MemBlock;
use dynd::{Array, Error, Result, Type};
use std::hint::black_box;
use std::ops::Range;
use std::ptr::NonNull;

/// Elements of row `i`.
pub fn row_len(i: usize) -> usize {
    (7 * i + 3) % 21
}

/// The element at flat position `k`.
pub fn value(k: usize) -> f64 {
    (k % 100) as f64 * 0.25
}

/// Rows of the max bench: every tenth one is empty.
pub fn gap_row_len(i: usize) -> usize {
    if i.is_multiple_of(10) { 0 } else { row_len(i) }
}

/// Whether the element at flat position `k` is missing (the option bench).
pub fn missing(k: usize) -> bool {
    k % 10 == 3
}

/// Builds the ragged array of `rows` rows described in the module docs.
pub fn build(rows: usize) -> Result<Array> {
    build_with(rows, row_len, false)
}

/// Builds a ragged array of `rows` rows of `len(i)` elements, as
/// `?float64` with the [`missing`] elements NA when `optional`.
pub fn build_with(rows: usize, len: fn(usize) -> usize, optional: bool) -> Result<Array> {
    if !optional {
        return build_rows(rows, len, Type::float64(), |k, _, _| value(k));
    }
    // R's NA payload: the missing value of ?float64 (DESIGN §4).
    let na = f64::from_bits(0x7ff0_0000_0000_07a2);
    build_rows(rows, len, Type::option(Type::float64())?, |k, _, _| {
        if missing(k) { na } else { value(k) }
    })
}

/// `rows * var * elem` with row `i` of `len(i)` elements, its element `j`
/// (at flat position `k`) `f(k, len(i), j)`, built in its layout (one
/// arena allocation for all elements, one `VarDimData` per row). `T` must
/// be `elem`'s (or its option value's) Rust type.
pub fn build_rows<T: Copy>(
    rows: usize,
    len: impl Fn(usize) -> usize,
    elem: Type,
    f: impl Fn(usize, usize, usize) -> T,
) -> Result<Array> {
    if elem.data_size() != size_of::<T>() {
        return Err(Error::type_error(format!(
            "{elem} elements are not {} bytes",
            size_of::<T>()
        )));
    }
    let a = Array::empty(Type::fixed_dim(rows, Type::var_dim(elem)))?;
    let total: usize = (0..rows).map(&len).sum();
    // SAFETY: the arrmeta of `rows * var * T` is a FixedDimMeta then a
    // VarDimMeta (DESIGN §4); read unaligned to be safe.
    let (fm, vm) = unsafe {
        let meta = a.arrmeta_ptr();
        (
            std::ptr::read_unaligned(meta.cast::<FixedDimMeta>()),
            std::ptr::read_unaligned(meta.add(size_of::<FixedDimMeta>()).cast::<VarDimMeta>()),
        )
    };
    if vm.offset != 0 || vm.stride != size_of::<T>() as isize {
        return Err(Error::type_error(format!(
            "unexpected var dim arrmeta: offset {}, stride {}",
            vm.offset, vm.stride
        )));
    }
    let block = NonNull::new(vm.blockref)
        .ok_or_else(|| Error::alloc("a new var dim has no arena block"))?;
    // SAFETY: the arrmeta holds an owned reference to this block, alive as
    // long as `a`; from_borrowed takes a reference of its own.
    let block = unsafe { MemBlock::from_borrowed(block) };
    let alloc = block
        .pod_allocator()
        .ok_or_else(|| Error::type_error("the var dim's block is not a POD arena"))?;
    let base = alloc
        .allocate(total.max(1) * size_of::<T>(), align_of::<T>())?
        .cast::<T>();
    let mut start = 0usize;
    for i in 0..rows {
        let n = len(i);
        // SAFETY: row i's elements [start, start + n) lie in the new
        // allocation of `total` T; its VarDimData is at data + i * stride
        // inside the array's data.
        unsafe {
            for j in 0..n {
                base.add(start + j).write(f(start + j, n, j));
            }
            let d = a.data_ptr().offset(i as isize * fm.stride);
            std::ptr::write_unaligned(
                d.cast::<VarDimData>(),
                VarDimData {
                    begin: base.add(start).cast::<u8>(),
                    size: n,
                },
            );
        }
        start += n;
    }
    Ok(a)
}

pub fn run(ctx: &Ctx) {
    let rows = if ctx.quick { 200_000 } else { 1_000_000 };
    let total: usize = (0..rows).map(row_len).sum();
    let Some(x) = or_skip(ctx, "ragged build", build(rows)) else {
        return;
    };
    let t = median_time(ctx.runs.min(5), || {
        black_box(build(rows).expect("build"));
    });
    ctx.row(
        &Measurement::new(
            "ragged build (arena, direct layout)",
            rows,
            t,
            total * 8 + rows * 16,
        ),
        &format!("{total} elements; bytes: elements + row descriptors written"),
    );

    let both = ctx.counts(&[1, 2]);
    timed_rows(
        ctx,
        "ragged sum inner axis",
        &both,
        (rows, total, total * 8 + rows * (16 + 8)),
        || reduce::sum(&x, Some(&[1]), false),
        |r| check_rows(r, rows, row_len, |ks| ks.map(value).sum::<f64>()),
    );

    missing_values(ctx, rows);

    let Some(add) = named(ctx, "add") else { return };
    let one = Array::from(1.0f64);
    timed_rows(
        ctx,
        "ragged + scalar (new output)",
        &both,
        (rows, total, 2 * (total * 8 + rows * 16)),
        || add.call(&[&x, &one]),
        |r| {
            let row3 = r.index(&[3.into()]).expect("row").to_json();
            let start: usize = (0..3).map(row_len).sum();
            let want: Vec<String> = (start..start + row_len(3))
                .map(|k| format!("{:?}", value(k) + 1.0))
                .collect();
            assert_eq!(row3, format!("[{}]", want.join(",")));
        },
    );
}

/// Checks the first rows of `r`, a value per row of the bench's array
/// (`len` gives the row lengths), against `want` of each row's element
/// positions, compared as JSON (`None`: null).
fn check_rows<W: Into<Option<f64>>>(
    r: &Array,
    rows: usize,
    len: fn(usize) -> usize,
    want: impl Fn(Range<usize>) -> W,
) {
    let mut start = 0usize;
    for i in 0..rows.min(50) {
        let n = len(i);
        let want = want(start..start + n).into();
        let got = r.index(&[i.into()]).expect("row").to_json();
        assert_eq!(
            got,
            want.map_or("null".into(), |w| format!("{w:?}")),
            "row {i}"
        );
        start += n;
    }
}

/// Runs `op` once and checks its result with `check` (a failure is a
/// skipped row), then times it on each of `counts` threads: a row each
/// ([`Ctx::scaling_rows`]), for `rows` rows of `total` elements, moving
/// `bytes`.
fn timed_rows(
    ctx: &Ctx,
    name: &str,
    counts: &[usize],
    (rows, total, bytes): (usize, usize, usize),
    op: impl Fn() -> Result<Array> + Sync,
    check: impl FnOnce(&Array),
) {
    match op() {
        Err(e) => ctx.skipped(name, &e.to_string()),
        Ok(r) => {
            check(&r);
            let t = median_times_threads(ctx.runs, counts, || {
                black_box(op().expect(name));
            });
            ctx.scaling_rows(name, counts, &t, &format!("{total} elements"), |name, t| {
                Measurement::new(name, rows, t, bytes)
            });
        }
    }
}

/// A reduction (`sum`, `max`, ...) of an array over the given axes.
type Reduction = fn(&Array, Option<&[isize]>, bool) -> Result<Array>;

/// A reduction over axis -1 in [`missing_values`]: its name, the rows'
/// lengths, whether the elements are `?float64` (the [`missing`] ones NA),
/// the reduction, and each row's result from its element positions.
type LastAxis = (
    &'static str,
    fn(usize) -> usize,
    bool,
    Reduction,
    fn(Range<usize>) -> Option<f64>,
);

/// The sum over axis -1 of `var * ?float64` (10% missing) and the max over
/// axis -1 of `var * float64` with empty rows, then `x + 1.0` over the
/// first into a new output, on one thread.
fn missing_values(ctx: &Ctx, rows: usize) {
    let one_thread = [1];
    let last_axis: [LastAxis; 2] = [
        (
            "ragged ?float64 sum axis -1 (10% missing)",
            row_len,
            true,
            reduce::sum,
            |ks| Some(ks.filter(|&k| !missing(k)).map(value).sum()),
        ),
        (
            "ragged max axis -1 (10% empty rows)",
            gap_row_len,
            false,
            reduce::max,
            |ks| ks.map(value).reduce(f64::max),
        ),
    ];
    for (name, len, optional, reduction, want) in last_axis {
        let Some(x) = or_skip(ctx, name, build_with(rows, len, optional)) else {
            continue;
        };
        let total: usize = (0..rows).map(len).sum();
        timed_rows(
            ctx,
            name,
            &one_thread,
            (rows, total, total * 8 + rows * (16 + 8)),
            || reduction(&x, Some(&[-1]), false),
            |r| check_rows(r, rows, len, want),
        );
    }
    let total: usize = (0..rows).map(row_len).sum();
    let name = "ragged ?float64 + scalar (new output, 10% missing)";
    if let Some(x) = or_skip(ctx, name, build_with(rows, row_len, true)) {
        let one = Array::from(1.0f64);
        timed_rows(
            ctx,
            name,
            &one_thread,
            (rows, total, total * 16 + rows * 16),
            || reduce::add(&x, &one),
            |r| {
                let first = r.index(&[0.into()]).expect("row").to_json();
                let want: Vec<String> = (0..row_len(0))
                    .map(|k| {
                        if missing(k) {
                            "null".to_string()
                        } else {
                            format!("{:?}", value(k) + 1.0)
                        }
                    })
                    .collect();
                assert_eq!(first, format!("[{}]", want.join(",")), "row 0");
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_direct_build_matches_json() {
        let rows = 40;
        let a = build(rows).unwrap();
        let mut k = 0;
        let text: Vec<String> = (0..rows)
            .map(|i| {
                let r: Vec<String> = (0..row_len(i))
                    .map(|_| {
                        k += 1;
                        format!("{:?}", value(k - 1))
                    })
                    .collect();
                format!("[{}]", r.join(","))
            })
            .collect();
        let text = format!("[{}]", text.join(","));
        let b = Array::from_json(format!("{rows} * var * float64").as_str(), &text).unwrap();
        assert_eq!(a.to_json(), b.to_json());
        assert_eq!(a.tp(), b.tp());
    }
}
