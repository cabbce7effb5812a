//! Row operations over ragged device arrays (issue #30): `cumsum`,
//! `cumprod`, `sort` and `argsort` of each row of `[fixed dims] * var * T`.
//!
//! Each result has the argument's rows, so — as for the elementwise
//! functions ([`crate::ragged`]) — its values are a new block that mirrors
//! the argument's values block element for element, and one row-aware
//! kernel writes the new descriptors and the rows: a thread per row
//! (grid-stride), which scans its row left to right (the host's serial
//! order: the same bits, floats included) or sorts it.
//!
//! **Sorting** is the host's order (`dynd::callable::sort`): ascending by
//! an unsigned key that orders as the values do (integers with the sign
//! bit flipped, floats by the sign-flip transform, so `-0.0` sorts before
//! `0.0`), then NaNs in their original order, then missing values;
//! descending inverts the numbers' keys only. A row is sorted stably:
//! insertion sort of runs of [`RUN`] elements, then bottom-up merges
//! between the output row and its mirror in a scratch block (taking the
//! left element unless the right one is strictly less). `argsort` sorts the
//! positions `0..n` by the values they point at, the same way.
//!
//! **Long rows** ([`long_row::MIN_LENGTH`] values or more) are skipped by
//! that kernel and listed by another ([`long_rows_source`]); all of them
//! then take the whole grid together: a segmented radix sort or chunked
//! scan ([`long_row::run_segments`]), a fixed number of launches however
//! many long rows there are. A 1-D array is one long row
//! ([`long_row::run`]).

use crate::codegen::{bit_cast, bits_type, c_type, na_bits};
use crate::kernel::element_value;
use crate::launch::{self, Backend, Params};
use crate::long_row;
use dynd::array::RaggedLayout;
use dynd::callable::Callable;
use dynd::callable::sort::RowOp;
use dynd::memblock::DeviceId;
use dynd::types::BuiltinType;
use dynd::{Array, Error, Result};
use std::fmt::Write;

/// The kernel's name.
pub const KERNEL: &str = "dynd_rows";

/// Elements a thread sorts by insertion before merging runs.
pub const RUN: usize = 16;

/// A row kernel: `op` over rows of `src` (`?src` when `src_opt`), writing
/// `out` (`?out` when `out_opt`), under `nk` fixed dims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowKernel {
    /// The operation.
    pub op: RowOp,
    /// The values' type and whether they are optional.
    pub src: (BuiltinType, bool),
    /// The result's element type and whether it is optional.
    pub out: (BuiltinType, bool),
    /// Fixed dims over the rows (at least 1: a top-level var dim is one
    /// row).
    pub nk: usize,
    /// Rows of a fixed innermost dim (a fixed array: the row length is a
    /// parameter, the outer dims' element strides in the block), rather
    /// than var rows read from descriptors.
    pub fixed: bool,
}

/// The parameter struct and the device function that finds row `row`'s
/// first value and length from its descriptor, for kernels over the rows
/// of `[fixed dims] * var * T` (`nk` fixed dims, at least 1): the block
/// holds the fixed dims' sizes, then the descriptors' byte strides
/// ([`row_block`]).
pub(crate) fn row_prelude(nk: usize) -> String {
    format!(
        "struct dynd_gparams {{ long long rows[{nk}]; long long desc[{nk}]; }};\n\
         __device__ inline const char* dynd_row(const dynd_gparams& p, const char* descs, long long row, long long voff, long long* size) {{\n\
         \x20 long long sb = 0, rem = row;\n\
         \x20 for (int d = {}; d >= 0; --d) {{ sb += (rem % p.rows[d]) * p.desc[d]; rem /= p.rows[d]; }}\n\
         \x20 *size = *(const long long*)(descs + sb + 8);\n\
         \x20 return *(const char* const*)(descs + sb) + voff;\n\
         }}\n",
        nk - 1
    )
}

/// [`row_prelude`]'s parameter block for `layout`, and its `nk`.
pub(crate) fn row_block(layout: &RaggedLayout) -> (Vec<i64>, usize) {
    row_block_of(&layout.shape, &layout.strides)
}

/// [`row_block`] of fixed dims `shape` with descriptor strides `strides`.
pub(crate) fn row_block_of(shape: &[usize], strides: &[isize]) -> (Vec<i64>, usize) {
    if shape.is_empty() {
        return (vec![1, 0], 1);
    }
    let mut block: Vec<i64> = shape.iter().map(|&n| n as i64).collect();
    block.extend(strides.iter().map(|&s| s as i64));
    (block, shape.len())
}

/// The unsigned sort key of bits `b` of type `t` (a CUDA C expression of
/// `unsigned long long`) that orders as the values do.
fn key(t: BuiltinType) -> String {
    use BuiltinType as B;
    match t {
        B::Bool => "(unsigned long long)(b != 0)".into(),
        // The sign bit flipped, in the element's width (a radix sort
        // reads the key a byte at a time, up to that width).
        B::Int8 | B::Int16 | B::Int32 | B::Int64 => format!(
            "(unsigned long long)({bits})(b ^ ({bits})(1ULL << {}))",
            8 * t.data_size() - 1,
            bits = bits_type(t)
        ),
        B::Float32 => "(unsigned long long)((b & 0x80000000u) ? ~b : (b | 0x80000000u))".into(),
        B::Float64 => "((b & 0x8000000000000000ULL) ? ~b : (b | 0x8000000000000000ULL))".into(),
        _ => "(unsigned long long)b".into(),
    }
}

/// Whether bits `b` of `t` are a NaN (a CUDA C expression).
fn is_nan(t: BuiltinType) -> &'static str {
    match t {
        BuiltinType::Float32 => "((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0)",
        BuiltinType::Float64 => {
            "((b & 0x7ff0000000000000ULL) == 0x7ff0000000000000ULL && (b & 0xfffffffffffffULL) != 0)"
        }
        _ => "false",
    }
}

/// The sort order's device functions for values of `src` (`?src` when
/// optional): `dynd_key(bits, &class, &key)` — class 0 for numbers (their
/// unsigned key, inverted when `descending`), 1 for NaN, 2 for missing —
/// and `dynd_less(x, y)`, whether bits `x` sort strictly before `y`.
pub(crate) fn key_functions((src, src_opt): (BuiltinType, bool), descending: bool) -> String {
    let bits = bits_type(src);
    let missing = if src_opt {
        format!("b == {}", na_bits(src))
    } else {
        "false".into()
    };
    let descending = if descending { "k = ~k;" } else { "" };
    format!(
        "__device__ inline void dynd_key({bits} b, int* c, unsigned long long* key) {{\n\
         \x20 if ({missing}) {{ *c = 2; *key = 0; return; }}\n\
         \x20 if ({nan}) {{ *c = 1; *key = 0; return; }}\n\
         \x20 unsigned long long k = {key}; {descending}\n\
         \x20 *c = 0; *key = k;\n\
         }}\n\
         __device__ inline bool dynd_less({bits} x, {bits} y) {{\n\
         \x20 int cx, cy; unsigned long long kx, ky;\n\
         \x20 dynd_key(x, &cx, &kx); dynd_key(y, &cy, &ky);\n\
         \x20 return cx < cy || (cx == cy && kx < ky);\n\
         }}\n",
        nan = is_nan(src),
        key = key(src),
    )
}

/// The CUDA C pieces of a running sum or product of values of `src`
/// into `out` (the host's `sum`/`prod` type): the accumulator's type,
/// the value of bits `b` as one, the bits of `acc` to store, the identity
/// and the step (`acc` and `v`). Integers accumulate as `unsigned long
/// long` (wrapping, as the host's), floats in their own type.
pub(crate) struct ScanC {
    pub acc: &'static str,
    pub value: String,
    pub store: String,
    pub init: &'static str,
    pub step: &'static str,
}

/// [`ScanC`] of `op` (`CumSum` or `CumProd`).
pub(crate) fn scan_c(op: RowOp, src: BuiltinType, out: BuiltinType) -> ScanC {
    let (acc, value, store) = match out {
        BuiltinType::Float32 | BuiltinType::Float64 => (
            c_type(out),
            format!("({})({})", c_type(out), bit_cast(src, "b", false)),
            bit_cast(out, "acc", true),
        ),
        _ => (
            "unsigned long long",
            format!(
                "(unsigned long long)(long long)({})",
                bit_cast(src, "b", false)
            ),
            "acc".to_string(),
        ),
    };
    let (init, step) = if op == RowOp::CumSum {
        ("0", "acc + v")
    } else {
        ("1", "acc * v")
    };
    ScanC {
        acc,
        value,
        store,
        init,
        step,
    }
}

/// The source of `k`'s kernel.
pub fn source(k: &RowKernel) -> String {
    let (src, src_opt) = k.src;
    let (out, out_opt) = k.out;
    let bits = bits_type(src);
    let obits = bits_type(out);
    let missing = if src_opt {
        format!("b == {}", na_bits(src))
    } else {
        "false".into()
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// generated by dynd-cuda: {} of var * {}{src}",
        k.op.name(),
        if src_opt { "?" } else { "" }
    );
    s.push_str(&row_prelude(k.nk));
    let body = match k.op {
        RowOp::CumSum | RowOp::CumProd => {
            let ScanC {
                acc,
                value,
                store,
                init,
                step,
            } = scan_c(k.op, src, out);
            let na_out = if out_opt {
                format!("*({obits}*)(o + j * ostride) = {};", na_bits(out))
            } else {
                String::new()
            };
            format!(
                "    {acc} acc = {init};\n\
                 \x20   for (long long j = 0; j < size; ++j) {{\n\
                 \x20     const {bits} b = *(const {bits}*)(first + j * vstride);\n\
                 \x20     if ({missing}) {{ {na_out} continue; }}\n\
                 \x20     const {acc} v = {value};\n\
                 \x20     acc = {step};\n\
                 \x20     *({obits}*)(o + j * ostride) = ({obits})({store});\n\
                 \x20   }}\n"
            )
        }
        RowOp::Sort(opts) | RowOp::ArgSort(opts) => {
            s.push_str(&key_functions(k.src, opts.descending));
            let argsort = matches!(k.op, RowOp::ArgSort(_));
            // E: what is moved (the values' bits, or positions).
            let (e, less, init) = if argsort {
                (
                    "long long",
                    format!(
                        "dynd_less(*(const {bits}*)(first + (y) * vstride), *(const {bits}*)(first + (x) * vstride))"
                    ),
                    "DYND_AT(o, j) = (long long)j;".to_string(),
                )
            } else {
                let norm = if src == BuiltinType::Bool {
                    format!("(({missing}) ? b : ({bits})(b != 0))")
                } else {
                    "b".into()
                };
                (
                    bits,
                    "dynd_less(y, x)".to_string(),
                    format!(
                        "{{ const {bits} b = *(const {bits}*)(first + j * vstride); DYND_AT(o, j) = {norm}; }}"
                    ),
                )
            };
            // `LESS(x, y)` is "y sorts strictly before x" (right before
            // left), the one comparison a stable sort needs.
            let _ = write!(
                s,
                "#define DYND_AT(base, j) (*({e}*)((base) + (j) * ostride))\n\
                 #define DYND_RIGHT_FIRST(x, y) {less}\n"
            );
            let _ = writeln!(s, "#define DYND_RUN {RUN}");
            format!(
                "    for (long long j = 0; j < size; ++j) {init}\n\
                 \x20   for (long long lo = 0; lo < size; lo += DYND_RUN) {{\n\
                 \x20     const long long hi = lo + DYND_RUN < size ? lo + DYND_RUN : size;\n\
                 \x20     for (long long i = lo + 1; i < hi; ++i) {{\n\
                 \x20       const {e} v = DYND_AT(o, i);\n\
                 \x20       long long j = i;\n\
                 \x20       while (j > lo && DYND_RIGHT_FIRST(DYND_AT(o, j - 1), v)) {{ DYND_AT(o, j) = DYND_AT(o, j - 1); --j; }}\n\
                 \x20       DYND_AT(o, j) = v;\n\
                 \x20     }}\n\
                 \x20   }}\n\
                 \x20   char* from = o; char* to = t;\n\
                 \x20   for (long long w = DYND_RUN; w < size; w *= 2) {{\n\
                 \x20     for (long long lo = 0; lo < size; lo += 2 * w) {{\n\
                 \x20       const long long mid = lo + w < size ? lo + w : size;\n\
                 \x20       const long long hi = lo + 2 * w < size ? lo + 2 * w : size;\n\
                 \x20       long long i = lo, j = mid, m = lo;\n\
                 \x20       while (i < mid && j < hi) {{\n\
                 \x20         if (DYND_RIGHT_FIRST(DYND_AT(from, i), DYND_AT(from, j))) DYND_AT(to, m++) = DYND_AT(from, j++);\n\
                 \x20         else DYND_AT(to, m++) = DYND_AT(from, i++);\n\
                 \x20       }}\n\
                 \x20       while (i < mid) DYND_AT(to, m++) = DYND_AT(from, i++);\n\
                 \x20       while (j < hi) DYND_AT(to, m++) = DYND_AT(from, j++);\n\
                 \x20     }}\n\
                 \x20     char* x = from; from = to; to = x;\n\
                 \x20   }}\n\
                 \x20   if (from != o) for (long long j = 0; j < size; ++j) DYND_AT(o, j) = DYND_AT(from, j);\n"
            )
        }
    };
    let esize = src.data_size();
    let osize = out.data_size();
    // Where the row is, where its result goes.
    let head = if k.fixed {
        // `voff` is the rows' length, `p.desc` the element strides of the
        // outer dims; the result is C order, `ostride` its element size.
        format!(
            "    const long long size = voff;\n\
             \x20   long long sb = 0, rem = row;\n\
             \x20   for (int d = {}; d >= 0; --d) {{ sb += (rem % p.rows[d]) * p.desc[d]; rem /= p.rows[d]; }}\n\
             \x20   const char* first = src_desc + sb;\n\
             \x20   char* o = (char*)(out_base + row * size * ostride);\n\
             \x20   char* t = (char*)(scratch_base + row * size * ostride);\n\
             \x20   (void)t; (void)src_base; (void)out_desc; (void)skip;\n",
            k.nk - 1
        )
    } else {
        format!(
            "    long long size;\n\
             \x20   const char* first = dynd_row(p, src_desc, row, voff, &size);\n\
             \x20   const unsigned long long at = ((unsigned long long)first - src_base) / {esize} * {osize};\n\
             \x20   char* o = (char*)(out_base + at);\n\
             \x20   char* t = (char*)(scratch_base + at);\n\
             \x20   (void)t;\n\
             \x20   *(char**)(out_desc + row * 16) = o;\n\
             \x20   *(long long*)(out_desc + row * 16 + 8) = size;\n\
             \x20   if (size >= skip) continue;\n"
        )
    };
    let _ = write!(
        s,
        "extern \"C\" __global__ void {KERNEL}(char* out_desc, const char* src_desc, dynd_gparams p, \
         long long n_rows, long long voff, long long vstride, unsigned long long src_base, \
         unsigned long long out_base, long long ostride, unsigned long long scratch_base, \
         long long skip) {{\n\
         \x20 for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < n_rows;\n\
         \x20      row += (long long)gridDim.x * blockDim.x) {{\n\
         {head}\
         {body}\
         \x20 }}\n\
         }}\n"
    );
    s
}

/// Row operation `op` (`f`) of the device array `x` (ragged, or fixed
/// along its innermost dim) on `cuda:ordinal`, into a new array on the
/// device (an output given is filled from it: [`crate::outputs::rows`]).
///
/// # Errors
/// `Type` for values the device does not compute on;
/// the host's type errors (a sort of complex numbers, …).
pub fn call(f: &Callable, op: RowOp, ordinal: u32, args: &[&Array]) -> Result<Array> {
    let device = DeviceId::Cuda(ordinal);
    let [x] = args else {
        return Err(Error::invalid_argument(format!(
            "{} takes one argument, got {}",
            f.name(),
            args.len()
        )));
    };
    let out_tp = f.resolve(&[x.tp().clone()])?;
    let values = |t: &dynd::Type, what: &str| {
        element_value(t).ok_or_else(|| {
            Error::type_error(format!(
                "{} on {device}: {what} ({t}) cannot be computed on the device",
                f.name()
            ))
        })
    };
    let oelem = values(out_tp.dtype(), "the result")?;
    let osize = oelem.0.data_size();
    let backend = launch::backend(ordinal)?;
    let b: &dyn Backend = &*backend;
    let sorts = matches!(op, RowOp::Sort(_) | RowOp::ArgSort(_));
    let Ok(layout) = x.ragged_layout() else {
        // A fixed innermost dim: rows of `m` elements.
        let (shape, strides, elem) = x.strided_layout()?;
        let src = values(elem, "the values")?;
        let n = shape.len();
        let (m, inner) = (shape[n - 1], strides[n - 1]);
        let result = Array::empty_on(device, out_tp)?;
        let rows: usize = shape[..n - 1].iter().product();
        if rows * m == 0 {
            return Ok(result);
        }
        if m >= long_row::MIN_LENGTH {
            // Long rows: one row takes the whole grid (a radix sort or a
            // chunked scan); more take it together (the segmented ones).
            let at = |r: usize| {
                let mut at = 0isize;
                let mut rem = r;
                for d in (0..n - 1).rev() {
                    at += (rem % shape[d]) as isize * strides[d];
                    rem /= shape[d];
                }
                x.data_ptr().wrapping_offset(at)
            };
            if rows == 1 {
                let row = (at(0).cast_const(), inner, m);
                // SAFETY: the row's `m` values lie in `x` (its layout);
                // the result holds `m` elements.
                unsafe { long_row::run(b, op, (src, oelem.0), row, result.data_ptr())? };
                return Ok(result);
            }
            let list = long_row::Segment::list_bytes((0..rows).map(|r| long_row::Segment {
                first: at(r) as u64,
                len: m as u64,
                out: result.data_ptr().wrapping_add(r * m * osize) as u64,
            }));
            let (_list_block, dlist) = b.alloc(list.len())?;
            // SAFETY: `dlist` is a fresh allocation of `list.len()` bytes.
            unsafe { b.copy_to_device(dlist, &list)? };
            // SAFETY: row `r`'s `m` values lie in `x` (its layout); its
            // result is the `m` elements of the C-order result from
            // `r * m`, apart from the other rows'.
            unsafe {
                long_row::run_segments(b, op, (src, oelem.0), (dlist, rows, m), inner)?;
            }
            return Ok(result);
        }
        let mut block: Vec<i64> = shape[..n - 1].iter().map(|&d| d as i64).collect();
        block.extend(strides[..n - 1].iter().map(|&d| d as i64));
        let nk = (n - 1).max(1);
        if n == 1 {
            block = vec![1, 0];
        }
        let scratch = if sorts {
            Some(b.alloc(rows * m * osize)?)
        } else {
            None
        };
        let k = RowKernel {
            op,
            src,
            out: oelem,
            nk,
            fixed: true,
        };
        let mut p = Params::default();
        p.word(0)
            .word(x.data_ptr() as u64)
            .block(block)
            .word(rows as u64)
            .word(m as u64)
            .word(inner as u64)
            .word(0)
            .word(result.data_ptr() as u64)
            .word(osize as u64)
            .word(scratch.as_ref().map_or(0, |s| s.1 as u64))
            .word(i64::MAX as u64);
        // SAFETY: (1) the kernel's parameters in order (a fixed kernel:
        // no descriptors; the row length in place of the var offset): the
        // source's data, the parameter block (outer dims, element
        // strides), the row count, the row length and element stride, the
        // result (C order, `rows * m` elements), its element size, the
        // scratch of as many elements (sorts), no rows skipped. (2) Each row's `m`
        // elements lie in the source; all alive until the launch returns.
        unsafe {
            launch::counted(
                b,
                &source(&k),
                KERNEL,
                launch::grid(b, rows),
                &mut p.pointers(),
            )?
        };
        return Ok(result);
    };
    let src = values(&layout.elem, "the values")?;
    let esize = layout.elem.data_size();
    let (src_base, src_bytes) = crate::ragged::mirrored(f.name(), x, &layout)?;
    let ostride = layout.stride / esize as isize * osize as isize;
    let rows: usize = layout.shape.iter().product();
    let mirror = (src_bytes / esize * osize).max(1);
    let (vblock, vptr) = b.alloc(mirror)?;
    let (dblock, dptr) = b.alloc((rows * 16).max(1))?;
    // Long rows (values one element apart) take the segmented kernels
    // together, after the thread-per-row kernel has skipped them.
    let long = if rows > 0 && layout.stride == esize as isize {
        let values = src_bytes / esize;
        long_rows(b, x, &layout, values, (src_base as u64, vptr as u64, osize))?
    } else {
        None
    };
    let skip = if long.is_some() {
        long_row::MIN_LENGTH as i64
    } else {
        i64::MAX
    };
    if rows > 0 {
        let (block, nk) = row_block(&layout);
        let k = RowKernel {
            op,
            src,
            out: oelem,
            nk,
            fixed: false,
        };
        let scratch = if sorts { Some(b.alloc(mirror)?) } else { None };
        let mut p = Params::default();
        p.word(dptr as u64)
            .word(x.data_ptr() as u64)
            .block(block)
            .word(rows as u64)
            .word(layout.offset as u64)
            .word(layout.stride as u64)
            .word(src_base as u64)
            .word(vptr as u64)
            .word(ostride as u64)
            .word(scratch.as_ref().map_or(0, |s| s.1 as u64))
            .word(skip as u64);
        // SAFETY: (1) the kernel's parameters in order: the new
        // descriptors, the source descriptors, the parameter block (fixed
        // dims, descriptor strides), the row count, the var dim's offset
        // and stride, the source values block's address, the mirror's,
        // the output stride, the scratch mirror's (sorts only) and the
        // length from which rows are left to the long path. (2)
        // Every row reaches values inside the source block, whose mirrors
        // have as many elements of the output's size; the new descriptors
        // hold `rows` of 16 bytes; all alive until the launch returns.
        unsafe {
            launch::counted(
                b,
                &source(&k),
                KERNEL,
                launch::grid(b, rows),
                &mut p.pointers(),
            )?
        };
    }
    if let Some(long) = long {
        // SAFETY: the list holds `count` segments (written by the listing
        // kernel): each row's values lie in the source values block, one
        // element apart, and its result at its place in the mirror, which
        // holds as many elements of the output's size; the rows reach
        // disjoint values (as the thread-per-row kernel, which sorts in
        // the mirror, also relies on).
        unsafe {
            long_row::run_segments(
                b,
                op,
                (src, oelem.0),
                (long.list, long.count, long.most),
                layout.stride,
            )?;
        }
    }
    // SAFETY: the new descriptors (C order over the fixed dims) reach the
    // mirror block, element j of a row `ostride` bytes apart.
    unsafe { Array::ragged_on_device(&out_tp, &layout.shape, (dptr, dblock), vblock, ostride) }
}

/// The long rows' listing kernel.
pub const LONG_KERNEL: &str = "dynd_long_rows";

/// The source of [`LONG_KERNEL`] over `nk` fixed dims: each row of at
/// least `min_len` values adds its [`long_row::Segment`] — its first
/// value, its length, and its place in the mirror of the values block at
/// `out_base` (elements of `osize` for the source's of `esize`) — to the
/// list (in any order) while there is room (`cap`); `count` counts them
/// all, `most` keeps the longest length.
pub fn long_rows_source(nk: usize) -> String {
    format!(
        "// generated by dynd-cuda: the long rows of a ragged array\n\
         {prelude}\
         extern \"C\" __global__ void {LONG_KERNEL}(const char* descs, dynd_gparams p, long long n_rows, \
         long long voff, long long min_len, long long cap, unsigned long long src_base, \
         unsigned long long out_base, long long esize, long long osize, unsigned long long* count, \
         unsigned long long* most, long long* list) {{\n\
         \x20 for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < n_rows;\n\
         \x20      row += (long long)gridDim.x * blockDim.x) {{\n\
         \x20   long long size;\n\
         \x20   const char* first = dynd_row(p, descs, row, voff, &size);\n\
         \x20   if (size < min_len) continue;\n\
         \x20   const unsigned long long k = atomicAdd(count, 1ULL);\n\
         \x20   atomicMax(most, (unsigned long long)size);\n\
         \x20   if (k < (unsigned long long)cap) {{\n\
         \x20     list[3 * k] = (long long)first;\n\
         \x20     list[3 * k + 1] = size;\n\
         \x20     list[3 * k + 2] = (long long)(out_base + ((unsigned long long)first - src_base) / esize * osize);\n\
         \x20   }}\n\
         \x20 }}\n\
         }}\n",
        prelude = row_prelude(nk)
    )
}

/// The long rows of a call, listed in device memory.
struct LongRows {
    /// The list's memory.
    _block: dynd::memblock::MemBlock,
    /// Where the [`long_row::Segment`]s are.
    list: *mut u8,
    /// How many.
    count: usize,
    /// The longest one's length.
    most: usize,
}

/// The rows of [`long_row::MIN_LENGTH`] or more values of the ragged
/// device array `x` (`layout`, values one element apart in the block at
/// `src_base`), whose results go to the mirror at `out_base` (elements of
/// `osize`), when there are some. The list has room for as many long
/// rows as the block's `values` can hold apart; rows sharing values
/// (which no dynd operation makes) could need more, and the kernel runs
/// again with room for all.
///
/// # Errors
/// The device's errors.
fn long_rows(
    b: &dyn Backend,
    x: &Array,
    layout: &RaggedLayout,
    values: usize,
    (src_base, out_base, osize): (u64, u64, usize),
) -> Result<Option<LongRows>> {
    let rows: usize = layout.shape.iter().product();
    let (_count_block, count) = b.alloc(16)?;
    let (block, nk) = row_block(layout);
    let mut room = (values / long_row::MIN_LENGTH).min(rows);
    loop {
        // SAFETY: `count` is a fresh allocation of 16 bytes (the count and
        // the longest length).
        unsafe { b.copy_to_device(count, &[0u8; 16])? };
        let (list_block, list) = b.alloc((room * long_row::SEGMENT_BYTES).max(1))?;
        let mut p = Params::default();
        p.word(x.data_ptr() as u64)
            .block(block.clone())
            .word(rows as u64)
            .word(layout.offset as u64)
            .word(long_row::MIN_LENGTH as u64)
            .word(room as u64)
            .word(src_base)
            .word(out_base)
            .word(layout.elem.data_size() as u64)
            .word(osize as u64)
            .word(count as u64)
            .word(count.wrapping_add(8) as u64)
            .word(list as u64);
        // SAFETY: (1) the kernel's parameters in order ([`long_rows_source`]):
        // the descriptors, the parameter block, the row count, the var
        // offset, the least length, the list's room, the values block's
        // and its mirror's addresses, the element sizes, the count, the
        // longest length, the list. (2) It reads each row's descriptor and
        // writes the two counts and at most `room` segments of the list;
        // all alive until the launch returns.
        unsafe {
            launch::counted(
                b,
                &long_rows_source(nk),
                LONG_KERNEL,
                launch::grid(b, rows),
                &mut p.pointers(),
            )?
        };
        let mut raw = [0u8; 16];
        // SAFETY: `count` holds 16 bytes, written by the kernel.
        unsafe { b.copy_to_host(&mut raw, count)? };
        let word =
            |k: usize| u64::from_le_bytes(raw[k * 8..k * 8 + 8].try_into().unwrap_or([0; 8]));
        let (n, most) = (word(0) as usize, word(1) as usize);
        if n == 0 {
            return Ok(None);
        }
        if n <= room {
            return Ok(Some(LongRows {
                _block: list_block,
                list,
                count: n,
                most,
            }));
        }
        room = n;
    }
}
