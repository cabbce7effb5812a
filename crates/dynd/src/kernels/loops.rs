//! The loop selector: the one place that decides how a strided loop walks
//! its operands (NumPy's "one selector", ndarray's `for_each_core`).
//!
//! Every kernel with a strided loop — the arithmetic family, the numeric
//! casts, third-party scalar functions, the reductions' folds — asks
//! [`select`] (or, per operand, [`run_of`]) once per call, and runs what it
//! is told:
//!
//! | [`Plan`] | when | the kernel runs |
//! |---|---|---|
//! | [`Plan::Contiguous`] | the output and every source are aligned and one element apart (a source may also be [`Run::Broadcast`] when the kernel takes one), and no source slice overlaps the output | a plain slice loop that LLVM vectorises |
//! | [`Plan::Strided`] | anything else | an element-by-element loop through unaligned access |
//!
//! Above the element loop, ragged data (`N * var * T`) is cut into runs of
//! rows that lie one after another in memory ([`RowCutter`]): rows packed in
//! one block (as JSON, the builders and ragged outputs make them) become one
//! contiguous run with row boundaries — a segmented loop — and a view whose
//! rows are out of order becomes one run per row. [`Rows`] reads the row
//! descriptors `{begin, size}` of such a dim, once per row.
//!
//! ```
//! use dynd::kernels::loops::{Operand, Plan, Run, run_of, select};
//! let xs = [1.0f64, 2.0, 3.0];
//! let mut out = [0.0f64; 3];
//! let src = Operand::of::<f64>(xs.as_ptr().cast(), 8);
//! let dst = Operand::of::<f64>(out.as_mut_ptr().cast(), 8);
//! assert_eq!(run_of(src), Run::Contiguous);
//! assert_eq!(run_of(Operand::of::<f64>(xs.as_ptr().cast(), 0)), Run::Broadcast);
//! assert_eq!(run_of(Operand::of::<f64>(xs.as_ptr().cast(), 16)), Run::Strided);
//! assert_eq!(select(dst, &[src], 3, false), Plan::Contiguous);
//! // The output overlapping a source slice: element by element.
//! assert_eq!(select(dst, &[dst], 3, false), Plan::Strided);
//! ```

use crate::layout::VarDimData;
use smallvec::SmallVec;
use std::mem::{align_of, size_of};

/// One operand of a strided loop: its first element, the byte stride, and
/// the element's size and alignment.
#[derive(Clone, Copy, Debug)]
pub struct Operand {
    /// The first element.
    pub ptr: *const u8,
    /// Bytes from one element to the next.
    pub stride: isize,
    /// The element's size in bytes.
    pub size: usize,
    /// The element's alignment in bytes (a power of two).
    pub align: usize,
}

impl Operand {
    /// An operand of elements of type `T`.
    #[inline(always)]
    pub fn of<T>(ptr: *const u8, stride: isize) -> Operand {
        Operand {
            ptr,
            stride,
            size: size_of::<T>(),
            align: align_of::<T>(),
        }
    }

    /// The bytes `count` elements of a contiguous run cover.
    #[inline(always)]
    fn bytes(&self, count: usize) -> usize {
        count.saturating_mul(self.size)
    }
}

/// How one operand of a strided loop can be walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// Aligned elements one after another: a slice.
    Contiguous,
    /// Stride 0: one value, repeated.
    Broadcast,
    /// Anything else: element by element, through unaligned access.
    Strided,
}

/// How the elements of `op` can be walked.
#[inline(always)]
pub fn run_of(op: Operand) -> Run {
    if op.stride == op.size as isize && (op.ptr as usize).is_multiple_of(op.align) {
        Run::Contiguous
    } else if op.stride == 0 {
        Run::Broadcast
    } else {
        Run::Strided
    }
}

/// `true` when two byte ranges share memory.
#[inline(always)]
pub fn overlaps(a: *const u8, a_len: usize, b: *const u8, b_len: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    a < b.saturating_add(b_len) && b < a.saturating_add(a_len)
}

/// The loop a strided call runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Slices: the output and every source contiguous (or broadcast, when
    /// allowed), no source overlapping the output.
    Contiguous,
    /// Element by element.
    Strided,
}

/// Chooses the loop for `count` elements written to `dst` from `srcs`;
/// `broadcast` when the kernel's contiguous loop also takes a repeated
/// (stride 0) source. `count == 0` is [`Plan::Strided`] (nothing to slice;
/// the data pointers of an empty array may be dangling).
#[inline(always)]
pub fn select(dst: Operand, srcs: &[Operand], count: usize, broadcast: bool) -> Plan {
    if count == 0 || run_of(dst) != Run::Contiguous {
        return Plan::Strided;
    }
    let out = dst.bytes(count);
    for s in srcs {
        match run_of(*s) {
            Run::Contiguous if !overlaps(s.ptr, s.bytes(count), dst.ptr, out) => {}
            Run::Broadcast if broadcast => {}
            _ => return Plan::Strided,
        }
    }
    Plan::Contiguous
}

/// The rows of a var dim below a fixed (or strided) outer loop: `n` row
/// descriptors (`VarDimData`) `stride` bytes apart from `data`, each row's
/// elements at `begin + offset`, `elem_stride` bytes apart.
#[derive(Clone, Copy, Debug)]
pub struct Rows {
    /// The first row descriptor.
    pub data: *const u8,
    /// Bytes from one row descriptor to the next.
    pub stride: isize,
    /// How many rows.
    pub n: usize,
    /// The var dim's arrmeta offset (added to each row's begin).
    pub offset: isize,
    /// The var dim's element stride.
    pub elem_stride: isize,
}

impl Rows {
    /// Row `i`: its first element and its size.
    ///
    /// # Safety
    /// 1. `i < n`, and row descriptor `i` is readable.
    #[inline(always)]
    pub unsafe fn row(&self, i: usize) -> (*const u8, usize) {
        // SAFETY: (1) row descriptor i lies at data + i * stride; unaligned
        // read, as arrmeta-described data may be.
        let r: VarDimData = unsafe {
            std::ptr::read_unaligned(
                self.data.wrapping_offset(i as isize * self.stride) as *const VarDimData
            )
        };
        (r.begin.wrapping_offset(self.offset).cast_const(), r.size)
    }

    /// Loads the row descriptors of rows `lo..hi`, one read per cache
    /// line. A row loop calls it at the start of each group of
    /// [`ROW_GROUP`] rows: the group's descriptor lines are then fetched
    /// together, instead of each one after the previous rows' elements
    /// (the row loop needs a descriptor before it can address its row).
    ///
    /// # Safety
    /// 1. `lo <= hi <= n`, and row descriptors `lo..hi` are readable.
    #[inline(always)]
    pub unsafe fn touch(&self, lo: usize, hi: usize) {
        // Rows per cache line (at least one).
        let step = (64 / self.stride.unsigned_abs().max(1)).max(1);
        let mut sizes = 0usize;
        let mut i = lo;
        while i < hi {
            // SAFETY: (1) lo <= i < hi <= n, a readable row descriptor.
            sizes = sizes.wrapping_add(unsafe { self.row(i) }.1);
            i += step;
        }
        // The loads are the point; keep them.
        std::hint::black_box(sizes);
    }
}

/// Rows a row loop reads the descriptors of at once ([`Rows::touch`]):
/// 32 rows of 16-byte descriptors are eight cache lines. In a standalone
/// loop over the bench's ragged layout, groups of 16 to 64 rows did about
/// equally well; in the library, a prefetch hint in place of the reads
/// gained less (3.6 against 3.4 ms for the ragged sum).
pub const ROW_GROUP: usize = 32;

/// Outputs of at least this many bytes that a loop writes once, in order,
/// and does not read back may bypass the cache ([`stream_store`]): at this
/// size they no longer fit the core's L2 cache, so writing through it
/// only costs a read of every line first (the "read for ownership") and
/// evicts the sources. glibc's `memcpy` makes the same choice above a
/// fraction of the cache. The default of [`stream_min_bytes`].
pub const STREAM_MIN_BYTES: usize = 4 << 20;

/// The size from which outputs are written past the cache: the
/// environment variable `DYND_STREAM_MIN_BYTES` (a byte count, read once;
/// as glibc's `GLIBC_TUNABLES` sets `memcpy`'s), else
/// [`STREAM_MIN_BYTES`]. A machine with a larger cache per core may want
/// it higher; `usize::MAX` turns streaming off. The tests under valgrind
/// set it low, to take the streamed paths on small arrays.
pub fn stream_min_bytes() -> usize {
    static MIN: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MIN.get_or_init(|| {
        std::env::var("DYND_STREAM_MIN_BYTES")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(STREAM_MIN_BYTES)
    })
}

/// Whether `n` outputs of `T`, `stride` bytes apart from `dst`, may be
/// written by [`stream_store`]: on x86-64, for 4- and 8-byte elements,
/// aligned and contiguous, [`stream_min_bytes`] or more in all.
#[inline]
pub fn streams<T: bytemuck::Pod>(dst: *mut u8, stride: isize, n: usize) -> bool {
    matches!(size_of::<T>(), 4 | 8)
        && (dst as usize).is_multiple_of(size_of::<T>())
        && streams_bytes(stride, size_of::<T>(), n)
}

/// Whether a run of `n` outputs of `size` bytes, `stride` apart, is one
/// contiguous block large enough ([`stream_min_bytes`]) to be written
/// past the cache, by [`stream_store`] or [`stream_copy`] (x86-64 only).
#[inline]
pub fn streams_bytes(stride: isize, size: usize, n: usize) -> bool {
    cfg!(target_arch = "x86_64")
        && size > 0
        && stride == size as isize
        && n.saturating_mul(size) >= stream_min_bytes()
}

/// Copies `bytes` bytes from `src` to `dst`, writing the aligned middle
/// past the cache (16-byte `movntdq`), the ends as usual. A run of them
/// must end with [`stream_fence`], as for [`stream_store`].
///
/// # Safety
/// 1. `src` is readable and `dst` writable for `bytes` bytes, and they do
///    not overlap.
#[inline]
pub unsafe fn stream_copy(dst: *mut u8, src: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let head = dst.align_offset(16).min(bytes);
        // SAFETY: (1) the first `head` bytes of each.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, head) };
        let mut at = head;
        // A cache line per step: each line's four stores go out together
        // (the write-combining buffer flushes whole lines), and the loop's
        // own instructions stay few. One 16-byte store per step ran as
        // much as 15% slower, depending on where the loop landed in the
        // code (docs/performance.md, "`stream_copy` by the cache line").
        while at + 64 <= bytes {
            // SAFETY: (1) bytes at..at + 64 of each; `dst + at` is 16-byte
            // aligned (from `head` on, in steps of 64); SSE2 is part of
            // x86-64.
            unsafe {
                let s = src.add(at).cast::<__m128i>();
                let d = dst.add(at).cast::<__m128i>();
                let (v0, v1) = (_mm_loadu_si128(s), _mm_loadu_si128(s.add(1)));
                let (v2, v3) = (_mm_loadu_si128(s.add(2)), _mm_loadu_si128(s.add(3)));
                _mm_stream_si128(d, v0);
                _mm_stream_si128(d.add(1), v1);
                _mm_stream_si128(d.add(2), v2);
                _mm_stream_si128(d.add(3), v3);
            }
            at += 64;
        }
        while at + 16 <= bytes {
            // SAFETY: (1) bytes at..at + 16 of each; `dst + at` is 16-byte
            // aligned (from `head` on, in steps of 16); SSE2 is part of
            // x86-64.
            unsafe {
                let v = _mm_loadu_si128(src.add(at).cast::<__m128i>());
                _mm_stream_si128(dst.add(at).cast::<__m128i>(), v);
            }
            at += 16;
        }
        // SAFETY: (1) the last `bytes - at` bytes of each.
        unsafe { std::ptr::copy_nonoverlapping(src.add(at), dst.add(at), bytes - at) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: (1).
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, bytes)
    };
}

/// Writes `v` at `p` past the cache (`movnti`). A run of them must end
/// with [`stream_fence`] before anything else reads the outputs, another
/// thread included.
///
/// # Safety
/// 1. `p` is writable for a `T`, and aligned to its size.
/// 2. [`streams`] said yes for the run `p` belongs to (so `T` is 4 or 8
///    bytes and the target x86-64).
#[inline(always)]
pub unsafe fn stream_store<T: bytemuck::Pod>(p: *mut u8, v: T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_stream_si32, _mm_stream_si64};
        if size_of::<T>() == 8 {
            let bits: i64 = bytemuck::cast(v);
            // SAFETY: (1) an aligned, writable 8 bytes; SSE2 is part of
            // x86-64.
            unsafe { _mm_stream_si64(p.cast::<i64>(), bits) };
            return;
        }
        if size_of::<T>() == 4 {
            let bits: i32 = bytemuck::cast(v);
            // SAFETY: (1) an aligned, writable 4 bytes; SSE2 is part of
            // x86-64.
            unsafe { _mm_stream_si32(p.cast::<i32>(), bits) };
            return;
        }
    }
    // Not reached when `streams` said yes; a plain store otherwise.
    // SAFETY: (1) `p` is writable for a `T`.
    unsafe { p.cast::<T>().write_unaligned(v) }
}

/// Orders every [`stream_store`] of this thread before its later stores
/// (`sfence`): call it after a run of them.
#[inline(always)]
pub fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` only orders stores; SSE is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// A run of rows whose elements lie one after another in every ragged
/// operand: one strided call (or one segmented loop) covers it.
#[derive(Clone, Debug)]
pub struct RowRun {
    /// Its first element's index among all elements of the call.
    pub start: usize,
    /// Its elements.
    pub count: usize,
    /// Each operand's first element (a broadcast operand's only one).
    pub srcs: SmallVec<[*const u8; 4]>,
}

/// Most operands a [`RowCutter`] follows.
pub const MAX_ROW_OPERANDS: usize = 4;

/// Cuts rows into [`RowRun`]s: rows fed in order join the current run
/// while each operand's row starts where its previous row ended. Rows
/// packed in one block give a single run, however many rows there are.
/// Per row it compares and advances at most [`MAX_ROW_OPERANDS`] pointers
/// held inline (no allocation but the runs').
#[derive(Debug)]
pub struct RowCutter {
    runs: Vec<RowRun>,
    /// Where each operand's next row would have to start to join the run.
    next: [*const u8; MAX_ROW_OPERANDS],
    /// Operands.
    k: usize,
    /// Elements so far.
    total: usize,
}

impl RowCutter {
    /// A cutter for rows of `k` operands; `None` when `k` is above
    /// [`MAX_ROW_OPERANDS`].
    pub fn new(k: usize) -> Option<RowCutter> {
        (k <= MAX_ROW_OPERANDS).then(|| RowCutter {
            runs: Vec::new(),
            next: [std::ptr::null(); MAX_ROW_OPERANDS],
            k,
            total: 0,
        })
    }

    /// Adds a row of `size` elements whose first element in operand `j` is
    /// `starts[j]`, elements `strides[j]` bytes apart (0: a broadcast
    /// operand, which never breaks a run). Operands past the `k` given to
    /// [`RowCutter::new`] are ignored.
    #[inline]
    pub fn push(&mut self, starts: &[*const u8], strides: &[isize], size: usize) {
        if size == 0 {
            return;
        }
        let k = self.k.min(starts.len()).min(strides.len());
        let joins = !self.runs.is_empty() && starts[..k] == self.next[..k];
        match self.runs.last_mut() {
            Some(run) if joins => run.count += size,
            _ => self.runs.push(RowRun {
                start: self.total,
                count: size,
                srcs: SmallVec::from_slice(&starts[..k]),
            }),
        }
        for j in 0..k {
            self.next[j] = starts[j].wrapping_offset(strides[j].wrapping_mul(size as isize));
        }
        self.total += size;
    }

    /// The elements of every row pushed so far.
    pub fn total(&self) -> usize {
        self.total
    }

    /// The runs.
    pub fn finish(self) -> Vec<RowRun> {
        self.runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_of_tells_the_three_walks_apart() {
        let xs = [0u64; 8];
        let p = xs.as_ptr().cast::<u8>();
        assert_eq!(run_of(Operand::of::<u64>(p, 8)), Run::Contiguous);
        assert_eq!(run_of(Operand::of::<u64>(p, 0)), Run::Broadcast);
        assert_eq!(run_of(Operand::of::<u64>(p, 16)), Run::Strided);
        assert_eq!(run_of(Operand::of::<u64>(p, -8)), Run::Strided);
        // Unaligned: strided, whatever the stride.
        assert_eq!(
            run_of(Operand::of::<u64>(p.wrapping_add(1), 8)),
            Run::Strided
        );
    }

    #[test]
    fn select_needs_every_operand_and_no_overlap() {
        let xs = [0u32; 16];
        let mut out = [0u32; 16];
        let s = Operand::of::<u32>(xs.as_ptr().cast(), 4);
        let b = Operand::of::<u32>(xs.as_ptr().cast(), 0);
        let d = Operand::of::<u32>(out.as_mut_ptr().cast(), 4);
        assert_eq!(select(d, &[s, s], 16, false), Plan::Contiguous);
        assert_eq!(select(d, &[s, b], 16, false), Plan::Strided);
        assert_eq!(select(d, &[s, b], 16, true), Plan::Contiguous);
        assert_eq!(select(d, &[d], 16, true), Plan::Strided);
        assert_eq!(select(d, &[s], 0, true), Plan::Strided);
        let strided = Operand::of::<u32>(out.as_mut_ptr().cast(), 8);
        assert_eq!(select(strided, &[s], 8, true), Plan::Strided);
    }

    #[test]
    fn streamed_stores_write_what_plain_ones_do() {
        let min = stream_min_bytes();
        if !(16..=1 << 30).contains(&min) {
            // DYND_STREAM_MIN_BYTES set out of the range this test sizes
            // its buffer for (streaming off, say): nothing to compare.
            return;
        }
        let n = min.div_ceil(8);
        let mut out = vec![0u64; n];
        let mut small = [0f32; 16];
        let p = out.as_mut_ptr().cast::<u8>();
        assert_eq!(streams::<u64>(p, 8, n), cfg!(target_arch = "x86_64"));
        // Too few, strided, unaligned, or a size it has no store for.
        assert!(!streams::<u64>(p, 8, n - 1));
        assert!(!streams::<u64>(p, 16, n));
        assert!(!streams::<u64>(p.wrapping_add(4), 8, n));
        assert!(!streams::<u16>(p, 2, 4 * n));
        for (j, o) in out.iter_mut().enumerate() {
            // SAFETY: an aligned u64 of `out`.
            unsafe { stream_store(std::ptr::from_mut(o).cast::<u8>(), (j as u64) * 3 + 1) };
        }
        for (j, o) in small.iter_mut().enumerate() {
            // SAFETY: an aligned f32 of `small`.
            unsafe { stream_store(std::ptr::from_mut(o).cast::<u8>(), j as f32 - 0.5) };
        }
        stream_fence();
        assert!(
            out.iter()
                .enumerate()
                .all(|(j, &o)| o == (j as u64) * 3 + 1)
        );
        assert_eq!(small[0], -0.5);
        assert_eq!(small[15], 14.5);
    }

    #[test]
    fn streamed_copies_copy_every_byte_at_any_alignment() {
        let src: Vec<u8> = (0..200u32).map(|i| (i * 7 + 3) as u8).collect();
        for offset in 0..17 {
            for bytes in [
                0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 183,
            ] {
                let mut dst = vec![0xAAu8; 200];
                // SAFETY: `bytes` bytes from `src` and, from `offset`, of
                // `dst` (offset + bytes <= 200); two vectors do not overlap.
                unsafe {
                    stream_copy(dst.as_mut_ptr().add(offset), src.as_ptr(), bytes);
                }
                stream_fence();
                assert_eq!(
                    &dst[offset..offset + bytes],
                    &src[..bytes],
                    "{offset} {bytes}"
                );
                assert!(dst[..offset].iter().all(|&b| b == 0xAA));
                assert!(dst[offset + bytes..].iter().all(|&b| b == 0xAA));
            }
        }
        assert_eq!(
            streams_bytes(8, 8, stream_min_bytes().div_ceil(8)),
            cfg!(target_arch = "x86_64")
        );
        assert!(!streams_bytes(16, 8, usize::MAX));
        assert!(!streams_bytes(0, 0, usize::MAX));
    }

    #[test]
    fn the_cutter_joins_packed_rows_and_splits_the_rest() {
        let xs = [0f64; 32];
        let p = |k: usize| xs.as_ptr().wrapping_add(k).cast::<u8>();
        let one = [7u8];
        // Packed rows 0..3, 3..3 (empty), 3..8, then a jump back to 0..2.
        let mut c = RowCutter::new(2).unwrap();
        assert!(RowCutter::new(MAX_ROW_OPERANDS + 1).is_none());
        for (start, size) in [(0, 3), (3, 0), (3, 5), (0, 2), (2, 4)] {
            c.push(&[p(start), one.as_ptr()], &[8, 0], size);
        }
        assert_eq!(c.total(), 14);
        let runs = c.finish();
        let got: Vec<(usize, usize, *const u8)> =
            runs.iter().map(|r| (r.start, r.count, r.srcs[0])).collect();
        assert_eq!(got, vec![(0, 8, p(0)), (8, 6, p(0))]);
        assert!(runs.iter().all(|r| r.srcs[1] == one.as_ptr()));
    }
}
