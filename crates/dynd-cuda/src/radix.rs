//! The device's stable radix sort (issue #30): `sort` and `argsort` of one
//! long row ([`sort`]), and of many long rows at once ([`sort_segments`]).
//!
//! A least-significant-digit sort over the host's order
//! ([`crate::rows::key_functions`]), four bits a pass: the key's nibbles
//! (two a byte of the element; one for `bool`), then the class (number,
//! NaN, missing) when NaN or missing values can occur, then — many rows —
//! the row index's nibbles, so the items end grouped by row, each row in
//! the host's order. Every pass is stable, so equal keys keep their order.
//!
//! The items are what a pass moves: the value's bits (the key and the
//! class are computed from them), its position (`argsort`) and its row
//! (many rows). A pass is three steps over the same cut of the items into
//! ranges, one range a block:
//!
//! 1. `dynd_radix_hist`: each block counts the digits of its range, each
//!    thread in its own column of a shared table (no atomics), and writes
//!    its 16 counts, digit-major.
//! 2. A device scan of the counts ([`crate::select::exclusive_scan`]):
//!    each (digit, block) gets its first place in the output. With few
//!    blocks (at most 64: fewer than half a million items on a GPU) the
//!    next kernel sums the counts itself instead, saving three launches.
//! 3. `dynd_radix_scatter`: each block walks its range a tile ([`TILE`]
//!    items) at a time, each thread taking consecutive items of it; the
//!    threads count their tile's digits in the shared table, whose
//!    exclusive scan in digit-major order gives each thread's first place
//!    for each digit within the tile; each thread reads its items again
//!    and puts each at its block's place for its digit plus its rank
//!    within the tile's items of that digit.
//!
//! Items of a thread are consecutive and threads take the tile in order,
//! so ranks follow the input order: the sort is stable, as the host's is.
//! Reads are whole tiles; writes are 16 runs a tile.

use crate::codegen::{bits_type, na_bits};
use crate::launch::{self, Backend, Params};
use crate::long_row::SEGMENT_PRELUDE;
use crate::rows::key_functions;
use crate::select::exclusive_scan;
use dynd::types::BuiltinType;
use dynd::{Error, Result};

/// The items of a tile (a block's threads take them in turn, each
/// `TILE / block` consecutive ones, at least 4).
pub const TILE: usize = 2048;

/// Digits of a pass (four bits).
const DIGITS: usize = 16;

/// Tiles a block's range holds at least.
const TILES_PER_BLOCK: usize = 4;

/// The most blocks whose counts the scatter kernel sums itself (16 of
/// its threads reading up to `16 * blocks` counts each), saving the
/// device scan's three launches a pass.
const FEW_BLOCKS: usize = 64;

/// The launches of each pass of a radix sort of `n` items on `b`: the
/// counts, their device scan (three; not for few blocks), the moves.
pub fn pass_launches(b: &dyn Backend, n: usize) -> usize {
    if ranges(b, n).1 > FEW_BLOCKS { 5 } else { 2 }
}

/// The kernels of a radix sort of one row.
pub const SORT_KERNELS: [&str; 4] = [
    "dynd_radix_init",
    "dynd_radix_hist",
    "dynd_radix_scatter",
    "dynd_radix_out",
];

/// The kernels of a radix sort of many rows (with the segments' own
/// `dynd_seg_tasks` first).
pub const SEGMENTED_KERNELS: [&str; 4] = [
    "dynd_seg_init",
    "dynd_radix_hist",
    "dynd_radix_scatter",
    "dynd_seg_write",
];

/// Whether values of `src` have a class pass (NaN or missing can occur).
fn has_class((src, optional): (BuiltinType, bool)) -> bool {
    optional || matches!(src, BuiltinType::Float32 | BuiltinType::Float64)
}

/// The key's passes of values of `src` (its nibbles, and the class when
/// there can be NaN or missing values).
pub fn sort_passes(src: (BuiltinType, bool)) -> usize {
    let key = if src.0 == BuiltinType::Bool {
        1
    } else {
        2 * src.0.data_size()
    };
    key + usize::from(has_class(src))
}

/// The key's passes and then the row passes of a sort of `count` rows of
/// values of `src`: the row index's low nibbles that can be non-zero.
pub fn segmented_passes(src: (BuiltinType, bool), count: usize) -> (usize, usize) {
    let bits = u64::BITS - (count.saturating_sub(1) as u64).leading_zeros();
    (sort_passes(src), bits.div_ceil(4) as usize)
}

/// The source of a radix sort's kernels over values of `src`: `argsort`
/// moves (and writes out) positions, `segmented` sorts many rows (items
/// carry their row; [`SEGMENT_PRELUDE`]'s rows and offsets).
pub fn source(
    src: (BuiltinType, bool),
    descending: bool,
    argsort: bool,
    segmented: bool,
) -> String {
    let bits = bits_type(src.0);
    let key_passes = sort_passes(src) - usize::from(has_class(src));
    let class = if has_class(src) {
        format!(
            "  if (pass == {key_passes}) {{ int c; unsigned long long k; dynd_key(it.b, &c, &k); return (unsigned)c; }}\n"
        )
    } else {
        String::new()
    };
    let first_row_pass = sort_passes(src);
    let (pos_field, seg_field, row_digit) = (
        if argsort { " long long pos;" } else { "" },
        if segmented { " long long seg;" } else { "" },
        if segmented {
            format!(
                "  return (unsigned)(((unsigned long long)it.seg >> (4 * (pass - {first_row_pass}))) & 15);\n"
            )
        } else {
            "  return 0;\n".to_string()
        },
    );
    // The value as sorted: bools as 0 or 1 (missing kept).
    let norm = if src.0 == BuiltinType::Bool {
        let na = if src.1 {
            format!("b == {} ? b : ", na_bits(src.0))
        } else {
            String::new()
        };
        format!("({na}({bits})(b != 0))")
    } else {
        "b".into()
    };
    let out_value = if argsort { "it.pos" } else { "it.b" };
    let out_type = if argsort { "long long" } else { bits };
    let init = if segmented {
        format!(
            "extern \"C\" __global__ void dynd_seg_init(dynd_item* dst, const dynd_segment* rows, const long long* off, long long count, long long vstride, long long n) {{\n\
             \x20 for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{\n\
             \x20   const long long k = dynd_seg_of(off, count, i);\n\
             \x20   const long long j = i - off[k];\n\
             \x20   const {bits} b = *(const {bits}*)((const char*)rows[k].first + j * vstride);\n\
             \x20   dynd_item it; it.b = {norm};{pos} it.seg = k;\n\
             \x20   dst[i] = it;\n\
             \x20 }}\n\
             }}\n\
             extern \"C\" __global__ void dynd_seg_write(const dynd_item* src, const dynd_segment* rows, const long long* off, long long n) {{\n\
             \x20 for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{\n\
             \x20   const dynd_item it = src[i];\n\
             \x20   (({out_type}*)rows[it.seg].out)[i - off[it.seg]] = {out_value};\n\
             \x20 }}\n\
             }}\n",
            pos = if argsort { " it.pos = j;" } else { "" },
        )
    } else {
        format!(
            "extern \"C\" __global__ void dynd_radix_init(dynd_item* dst, const char* first, long long vstride, long long n) {{\n\
             \x20 for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{\n\
             \x20   const {bits} b = *(const {bits}*)(first + i * vstride);\n\
             \x20   dynd_item it; it.b = {norm};{pos}\n\
             \x20   dst[i] = it;\n\
             \x20 }}\n\
             }}\n\
             extern \"C\" __global__ void dynd_radix_out(const dynd_item* src, {out_type}* out, long long n) {{\n\
             \x20 for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{\n\
             \x20   const dynd_item it = src[i];\n\
             \x20   out[i] = {out_value};\n\
             \x20 }}\n\
             }}\n",
            pos = if argsort { " it.pos = i;" } else { "" },
        )
    };
    format!(
        "// generated by dynd-cuda: a radix sort, four bits a pass\n\
         {keys}\
         {prelude}\
         #define DYND_MAX_BLOCK 256\n\
         struct dynd_item {{ {bits} b;{pos_field}{seg_field} }};\n\
         __device__ inline unsigned dynd_digit(const dynd_item& it, int pass) {{\n\
         \x20 if (pass < {key_passes}) {{ int c; unsigned long long k; dynd_key(it.b, &c, &k); return (unsigned)((k >> (4 * pass)) & 15); }}\n\
         {class}\
         {row_digit}\
         }}\n\
         {init}\
         // Each block counts the digits of its range (`per` items from\n\
         // blockIdx.x * per), each thread in its own column.\n\
         extern \"C\" __global__ void dynd_radix_hist(const dynd_item* src, long long n, long long per, long long pass, long long* hist) {{\n\
         \x20 __shared__ unsigned int c[{DIGITS} * DYND_MAX_BLOCK];\n\
         \x20 const int t = threadIdx.x, B = blockDim.x;\n\
         \x20 for (int d = 0; d < {DIGITS}; ++d) c[d * B + t] = 0;\n\
         \x20 const long long lo = (long long)blockIdx.x * per;\n\
         \x20 const long long hi = lo + per < n ? lo + per : n;\n\
         \x20 for (long long i = lo + t; i < hi; i += B) c[dynd_digit(src[i], (int)pass) * B + t] += 1;\n\
         \x20 __syncthreads();\n\
         \x20 if (t < {DIGITS}) {{\n\
         \x20   long long s = 0;\n\
         \x20   for (int k = 0; k < B; ++k) s += c[t * B + k];\n\
         \x20   hist[(long long)t * gridDim.x + blockIdx.x] = s;\n\
         \x20 }}\n\
         }}\n\
         // Each block moves its range, a tile of B * items at a time,\n\
         // to its places (`hist`, scanned).\n\
         extern \"C\" __global__ void dynd_radix_scatter(const dynd_item* src, dynd_item* dst, long long n, long long per, long long pass, const long long* hist, long long items, long long scanned) {{\n\
         \x20 __shared__ unsigned int c[{DIGITS} * DYND_MAX_BLOCK];\n\
         \x20 __shared__ unsigned int part[DYND_MAX_BLOCK];\n\
         \x20 __shared__ unsigned int start[{DIGITS} + 1];\n\
         \x20 __shared__ long long place[{DIGITS}];\n\
         \x20 const int t = threadIdx.x, B = blockDim.x;\n\
         \x20 const long long G = gridDim.x;\n\
         \x20 if (t < {DIGITS}) {{\n\
         \x20   if (scanned) place[t] = hist[(long long)t * G + blockIdx.x];\n\
         \x20   else {{\n\
         \x20     // Few blocks: the counts' exclusive scan (digit-major) up to\n\
         \x20     // this block's count of digit t, read here.\n\
         \x20     long long s = 0;\n\
         \x20     for (long long j = 0; j < (long long)t * G + blockIdx.x; ++j) s += hist[j];\n\
         \x20     place[t] = s;\n\
         \x20   }}\n\
         \x20 }}\n\
         \x20 const long long lo = (long long)blockIdx.x * per;\n\
         \x20 const long long hi = lo + per < n ? lo + per : n;\n\
         \x20 for (long long tile = lo; tile < hi; tile += (long long)B * items) {{\n\
         \x20   for (int d = 0; d < {DIGITS}; ++d) c[d * B + t] = 0;\n\
         \x20   // Thread t's items: `items` from `mine`, counted, then (after the\n\
         \x20   // scan) read again and placed.\n\
         \x20   const long long mine = tile + (long long)t * items;\n\
         \x20   const long long end = mine + items < hi ? mine + items : hi;\n\
         \x20   for (long long i = mine; i < end; ++i) c[dynd_digit(src[i], (int)pass) * B + t] += 1;\n\
         \x20   __syncthreads();\n\
         \x20   // The exclusive scan of the table in digit-major order: thread t\n\
         \x20   // scans entries [16t, 16t + 16), the partials across threads.\n\
         \x20   unsigned int sum = 0;\n\
         \x20   for (int k = 0; k < {DIGITS}; ++k) sum += c[{DIGITS} * t + k];\n\
         \x20   part[t] = sum;\n\
         \x20   __syncthreads();\n\
         \x20   // Each thread's prefix read from the partials before it (one\n\
         \x20   // barrier, where a tree would take two a level).\n\
         \x20   unsigned int run = 0;\n\
         \x20   for (int k = 0; k < t; ++k) run += part[k];\n\
         \x20   if (t == B - 1) start[{DIGITS}] = run + part[t];\n\
         \x20   for (int k = 0; k < {DIGITS}; ++k) {{ const unsigned int v = c[{DIGITS} * t + k]; c[{DIGITS} * t + k] = run; run += v; }}\n\
         \x20   __syncthreads();\n\
         \x20   if (t < {DIGITS}) start[t] = c[t * B];\n\
         \x20   __syncthreads();\n\
         \x20   for (long long i = mine; i < end; ++i) {{\n\
         \x20     const dynd_item it = src[i];\n\
         \x20     const unsigned d = dynd_digit(it, (int)pass);\n\
         \x20     const unsigned r = c[d * B + t]++;\n\
         \x20     dst[place[d] + (r - start[d])] = it;\n\
         \x20   }}\n\
         \x20   __syncthreads();\n\
         \x20   // (The next tile reads `place` and writes `start` after barriers.)\n\
         \x20   if (t < {DIGITS}) place[t] += start[t + 1] - start[t];\n\
         \x20 }}\n\
         }}\n",
        keys = key_functions(src, descending),
        prelude = if segmented { SEGMENT_PRELUDE } else { "" },
    )
}

/// The items each thread of `b` takes from a tile.
fn items(b: &dyn Backend) -> usize {
    (TILE / b.block().max(1) as usize).max(4)
}

/// The cut of `n` items into block ranges: the items a block takes (whole
/// tiles) and the blocks.
fn ranges(b: &dyn Backend, n: usize) -> (usize, usize) {
    let tile = b.block() as usize * items(b);
    let most = b.max_blocks().max(1) as usize;
    let per = n.div_ceil(most).max(tile * TILES_PER_BLOCK).div_ceil(tile) * tile;
    (per, n.div_ceil(per).max(1))
}

/// Runs `passes` passes of `source`'s sort over the `n` items in `from`,
/// with `to` as large; returns the buffer holding the sorted items.
///
/// # Errors
/// `External` when the device cannot allocate or launch, or a pass does
/// not count every item.
///
/// # Safety
/// 1. `from` and `to` hold `n` items of `source`'s `dynd_item` in `b`'s
///    memory, `from` initialised; both alive and otherwise unused until
///    this returns.
unsafe fn passes(
    b: &dyn Backend,
    source: &str,
    n: usize,
    passes: usize,
    (mut from, mut to): (*mut u8, *mut u8),
) -> Result<*mut u8> {
    if (b.block() as usize) < DIGITS {
        return Err(Error::external(format!(
            "the radix sort needs blocks of at least {DIGITS} threads, the device runs {}",
            b.block()
        )));
    }
    let (per, blocks) = ranges(b, n);
    let (_hist_block, hist) = b.alloc(DIGITS * blocks * 8)?;
    for pass in 0..passes {
        let mut p = Params::default();
        p.word(from as u64)
            .word(n as u64)
            .word(per as u64)
            .word(pass as u64)
            .word(hist as u64);
        // SAFETY: (1) `dynd_radix_hist`'s parameters: the items, their
        // count, a block's range, the pass, the counts (16 per block of
        // the grid `blocks`); (2) block k reads its range of `from`
        // inside `0..n` and writes its 16 counts.
        unsafe { launch::counted(b, source, SORT_KERNELS[1], blocks as u32, &mut p.pointers())? };
        let scanned = blocks > FEW_BLOCKS;
        if scanned {
            // SAFETY: `hist` holds `16 * blocks` int64 counts.
            let total = unsafe { exclusive_scan(b, hist, DIGITS * blocks)? };
            if total != n as u64 {
                return Err(Error::external(format!(
                    "the radix sort counted {total} of {n} elements"
                )));
            }
        }
        let mut p = Params::default();
        p.word(from as u64)
            .word(to as u64)
            .word(n as u64)
            .word(per as u64)
            .word(pass as u64)
            .word(hist as u64)
            .word(items(b) as u64)
            .word(u64::from(scanned));
        // SAFETY: (1) `dynd_radix_scatter`'s parameters: both item
        // buffers, then as the counts', then the items a thread takes
        // from a tile and whether the counts were scanned (else the
        // kernel sums them); (2) the scanned counts place each
        // of the `n` items once inside `0..n` of `to`.
        unsafe { launch::counted(b, source, SORT_KERNELS[2], blocks as u32, &mut p.pointers())? };
        std::mem::swap(&mut from, &mut to);
    }
    Ok(from)
}

/// The bytes of one item of a sort of values of `src`.
fn item_bytes(src: BuiltinType, argsort: bool, segmented: bool) -> usize {
    let size = src.data_size();
    let extra = usize::from(argsort) + usize::from(segmented);
    if extra == 0 { size } else { 8 * (1 + extra) }
}

/// Sorts (or argsorts) the `n` values at `first` (`vstride` bytes apart,
/// of `src`) into `out` (`n` elements: the values' bits, or int64
/// positions) on `b`.
///
/// # Errors
/// `External` when the device cannot allocate, copy or launch.
///
/// # Safety
/// 1. `first + i * vstride` for `i < n` are values of `src` in `b`'s
///    memory; `out` holds `n` elements of the result; all alive and
///    otherwise unused until this returns.
pub unsafe fn sort(
    b: &dyn Backend,
    src: (BuiltinType, bool),
    descending: bool,
    argsort: bool,
    (first, vstride, n): (*const u8, isize, usize),
    out: *mut u8,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let source = source(src, descending, argsort, false);
    let bytes = item_bytes(src.0, argsort, false);
    let (_a_block, a) = b.alloc(n * bytes)?;
    let (_b_block, c) = b.alloc(n * bytes)?;
    let mut p = Params::default();
    p.word(a as u64)
        .word(first as u64)
        .word(vstride as u64)
        .word(n as u64);
    // SAFETY: (1) `dynd_radix_init`'s parameters: the items, the values,
    // their stride and count; (2) it reads the `n` values (the caller's
    // promise) and writes `n` items.
    unsafe {
        launch::counted(
            b,
            &source,
            SORT_KERNELS[0],
            launch::grid(b, n),
            &mut p.pointers(),
        )?
    };
    // SAFETY: both buffers hold `n` items, `a` initialised.
    let sorted = unsafe { passes(b, &source, n, sort_passes(src), (a, c))? };
    let mut p = Params::default();
    p.word(sorted as u64).word(out as u64).word(n as u64);
    // SAFETY: (1) `dynd_radix_out`'s parameters: the sorted items, the
    // output, the count; (2) it writes `n` elements of `out` (the
    // caller's room).
    unsafe {
        launch::counted(
            b,
            &source,
            SORT_KERNELS[3],
            launch::grid(b, n),
            &mut p.pointers(),
        )
    }
}

/// Sorts (or argsorts) each of the `count` rows listed at `rows`
/// ([`crate::long_row::Segment`]s; `off`, their exclusive offsets, `n`
/// values in all) into its result, on `b`.
///
/// # Errors
/// `External` when the device cannot allocate or launch.
///
/// # Safety
/// 1. As [`crate::long_row::run_segments`]'s: the rows' values and
///    results in `b`'s memory, results apart; `off` holds `count` offsets
///    summing the lengths to `n`.
pub(crate) unsafe fn sort_segments(
    b: &dyn Backend,
    src: (BuiltinType, bool),
    descending: bool,
    argsort: bool,
    (rows, off, count, n): (*const u8, *const u8, usize, usize),
    vstride: isize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let source = source(src, descending, argsort, true);
    let bytes = item_bytes(src.0, argsort, true);
    let (_a_block, a) = b.alloc(n * bytes)?;
    let (_b_block, c) = b.alloc(n * bytes)?;
    let mut p = Params::default();
    p.word(a as u64)
        .word(rows as u64)
        .word(off as u64)
        .word(count as u64)
        .word(vstride as u64)
        .word(n as u64);
    // SAFETY: (1) `dynd_seg_init`'s parameters: the items (`n`), the rows,
    // their offsets and count, the stride, the item count; (2) item i
    // reads value `i - off[k]` of its row k, inside the row (the offsets
    // sum the lengths).
    unsafe {
        launch::counted(
            b,
            &source,
            SEGMENTED_KERNELS[0],
            launch::grid(b, n),
            &mut p.pointers(),
        )?
    };
    let (keys, row_passes) = segmented_passes(src, count);
    // SAFETY: both buffers hold `n` items, `a` initialised.
    let sorted = unsafe { passes(b, &source, n, keys + row_passes, (a, c))? };
    let mut p = Params::default();
    p.word(sorted as u64)
        .word(rows as u64)
        .word(off as u64)
        .word(n as u64);
    // SAFETY: (1) `dynd_seg_write`'s parameters: the sorted items, the
    // rows, their offsets, the count; (2) the items of row k are its `len`
    // positions, so item i writes element `i - off[k] < len` of the row's
    // result (the caller's room).
    unsafe {
        launch::counted(
            b,
            &source,
            SEGMENTED_KERNELS[3],
            launch::grid(b, n),
            &mut p.pointers(),
        )
    }
}
