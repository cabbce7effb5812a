//! Reductions on the device: the description of one built-in reduction
//! over fixed dims ([`Reduce`]), its CUDA C ([`source`]) and its launch
//! plan ([`Plan`]).
//!
//! The source's dims split into the kept ones, which give the outputs, and
//! the reduced ones, each output's extent of `r` values walked in C order
//! (position `j` in it is what argmin and argmax give, as on the host).
//! Neighbouring dims that walk memory as one are merged on each side.
//!
//! Each reduction is a state with four operations, written once in CUDA C
//! per kind: `init`, `add` (one present value at position `j`), `merge`
//! (another state) and `store` (the result, with NA where nothing was
//! present and the result is optional). Missing values are skipped before
//! `add`. The states follow the host's semantics (DESIGN §6): integer sums
//! and products wrap in 64 bits, float sums accumulate in the result type,
//! min and max propagate NaN, argmin and argmax keep the first best
//! position (the first NaN), all and any test against zero, mean divides a
//! float64 sum by the count, var and std merge (count, mean, M2) states
//! with Chan's update (population, ddof 0).
//!
//! Two kernels: `dynd_reduce` gives each (output, part) item to a group of
//! `lanes` threads of a block — lane `k` adds positions `k, k + lanes, …`
//! of the item's part of the extent, then the group merges its states in
//! shared memory as a tree; with one part per output it stores the result,
//! otherwise it writes the part's state, and `dynd_reduce_finish` merges
//! each output's parts with a block (each thread a run of parts in order,
//! then the runs as a tree, lower runs first) and stores. [`Plan`] picks `lanes` (1, a
//! warp's worth, a block) from `r` and the parts from how many outputs
//! there are, so one long extent spreads over the device and many short
//! ones take a thread each. Float results therefore depend on the plan
//! (the device's size), and differ from the host's order in the last bits.

use crate::codegen::{bit_cast, bits_type, c_type, na_bits};
use crate::kernel::{element_value, strided};
use dynd::callable::reduce::{BuiltinReduction, Reduction};
use dynd::types::BuiltinType;
use dynd::{Array, Error, Result};
use std::fmt::Write;

/// The kernel that reduces items.
pub const KERNEL: &str = "dynd_reduce";
/// The kernel that merges the parts of each output.
pub const FINISH: &str = "dynd_reduce_finish";
/// The bytes of a part's state, at most (checked in the source).
pub const STATE_BYTES: usize = 32;

/// A built-in reduction of a strided source into a strided output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reduce {
    /// Which reduction.
    pub kind: BuiltinReduction,
    /// The source's value type, and whether it is optional.
    pub src: (BuiltinType, bool),
    /// The result's value type, and whether it is optional.
    pub out: (BuiltinType, bool),
    /// The kept dims (at least one; `[1]` when none).
    pub kept: Vec<usize>,
    /// The source's byte strides over the kept dims.
    pub kept_src: Vec<isize>,
    /// The output's byte strides over the kept dims.
    pub kept_out: Vec<isize>,
    /// The reduced dims, in axis order (at least one; `[1]` when none).
    pub reduced: Vec<usize>,
    /// The source's byte strides over the reduced dims.
    pub reduced_src: Vec<isize>,
}

impl Reduce {
    /// The number of outputs.
    pub fn outputs(&self) -> usize {
        self.kept.iter().product()
    }

    /// The number of values reduced into each output.
    pub fn extent(&self) -> usize {
        self.reduced.iter().product()
    }

    /// The description of `reduction` (a built-in one) of the device array
    /// `src` into `out`, an array of the result's type on the same device.
    ///
    /// # Errors
    /// `Type` for a user reduction, or a source the device does not
    /// compute on (fixed dims of bool, integers of 8 to 64 bits, float32,
    /// float64, and their option types); `Index` for bad axes.
    pub fn for_call(reduction: &Reduction, out: &Array, src: &Array) -> Result<Reduce> {
        let kind = reduction.kind().ok_or_else(|| {
            Error::type_error(format!(
                "{} is a user reduction: it runs on the host only (copy the array with to_host())",
                reduction.name()
            ))
        })?;
        let (shape, strides, src_elem) = strided(src, "the source")?;
        let (out_shape, out_strides, out_elem) = strided(out, "the output")?;
        let reduced = reduction.reduced_axes(src.tp())?;
        let mut kept = (Vec::new(), Vec::new(), Vec::new());
        let mut red = (Vec::new(), Vec::new());
        let mut at_out = 0;
        for (k, &is_reduced) in reduced.iter().enumerate() {
            if is_reduced {
                red.0.push(shape[k]);
                red.1.push(strides[k]);
                if reduction.keepdims() {
                    at_out += 1;
                }
            } else {
                if out_shape.get(at_out) != Some(&shape[k]) {
                    return Err(Error::invalid_argument(format!(
                        "{}: the output {} does not match the source {}",
                        reduction.name(),
                        out.tp(),
                        src.tp()
                    )));
                }
                kept.0.push(shape[k]);
                kept.1.push(strides[k]);
                kept.2.push(out_strides[at_out]);
                at_out += 1;
            }
        }
        let (kept, mut ks) = merge(kept.0, vec![kept.1, kept.2]);
        let (reduced, mut rs) = merge(red.0, vec![red.1]);
        Ok(Reduce {
            kind,
            src: src_elem,
            out: out_elem,
            kept,
            kept_out: ks.pop().unwrap_or_default(),
            kept_src: ks.pop().unwrap_or_default(),
            reduced,
            reduced_src: rs.pop().unwrap_or_default(),
        })
    }

    /// The parameter block the kernels take: the kept dims, the source's
    /// and the output's strides over them, the reduced dims and the
    /// source's strides over them.
    pub fn params(&self) -> Vec<i64> {
        let mut p: Vec<i64> = Vec::new();
        p.extend(self.kept.iter().map(|&d| d as i64));
        p.extend(self.kept_src.iter().map(|&d| d as i64));
        p.extend(self.kept_out.iter().map(|&d| d as i64));
        p.extend(self.reduced.iter().map(|&d| d as i64));
        p.extend(self.reduced_src.iter().map(|&d| d as i64));
        p
    }

    /// The byte offsets of position `j` of output `o`'s extent in the
    /// source, and of output `o` in the output: the index arithmetic of
    /// the kernels, for the interpreter.
    pub fn offsets(&self, o: usize, j: usize) -> (isize, isize) {
        let (mut src, mut out) = (0isize, 0isize);
        let mut rem = o;
        for d in (0..self.kept.len()).rev() {
            let c = (rem % self.kept[d]) as isize;
            rem /= self.kept[d];
            src += c * self.kept_src[d];
            out += c * self.kept_out[d];
        }
        let mut rem = j;
        for d in (0..self.reduced.len()).rev() {
            let c = (rem % self.reduced[d]) as isize;
            rem /= self.reduced[d];
            src += c * self.reduced_src[d];
        }
        (src, out)
    }
}

/// Merges neighbouring dims that every stride list walks as one, drops
/// dims of size 1, and gives `[1]` (strides 0) when no dim is left. A dim
/// of size 0 stays, so the extent or the output count is 0.
fn merge(shape: Vec<usize>, strides: Vec<Vec<isize>>) -> (Vec<usize>, Vec<Vec<isize>>) {
    let mut out_shape: Vec<usize> = Vec::new();
    let mut out_strides: Vec<Vec<isize>> = vec![Vec::new(); strides.len()];
    for (k, &n) in shape.iter().enumerate() {
        if n == 1 {
            continue;
        }
        let mergeable = !out_shape.is_empty()
            && strides.iter().zip(&out_strides).all(|(s, o)| {
                let last = *o.last().unwrap_or(&0);
                last == s[k] * n as isize
            });
        if mergeable {
            let l = out_shape.len() - 1;
            out_shape[l] *= n;
            for (s, o) in strides.iter().zip(out_strides.iter_mut()) {
                o[l] = s[k];
            }
        } else {
            out_shape.push(n);
            for (s, o) in strides.iter().zip(out_strides.iter_mut()) {
                o.push(s[k]);
            }
        }
    }
    if out_shape.is_empty() {
        out_shape.push(1);
        for o in &mut out_strides {
            o.push(0);
        }
    }
    (out_shape, out_strides)
}

/// How a reduction is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Threads per item (a power of two dividing the block).
    pub lanes: u32,
    /// Parts each output's extent is split into.
    pub parts: usize,
    /// Blocks of the first kernel.
    pub grid: u32,
}

impl Plan {
    /// The plan for `outputs` outputs of `extent` values each, on blocks of
    /// `block` threads, at most `max_blocks` of them: an extent under 64
    /// values takes one thread, one under 8 blocks' worth a group of 32
    /// (or half a block, when smaller), a longer one a whole block; when
    /// there are fewer items than the device has groups, each extent is
    /// split into parts of at least 8 values per lane.
    pub fn new(outputs: usize, extent: usize, block: u32, max_blocks: u32) -> Plan {
        let lanes = if extent < 64 {
            1
        } else if extent < 8 * block as usize {
            32.min(block / 2).max(1)
        } else {
            block
        };
        let groups = (block / lanes) as usize;
        let capacity = max_blocks as usize * groups;
        let parts = if outputs >= capacity {
            1
        } else {
            (capacity / outputs.max(1))
                .min(extent.div_ceil(lanes as usize * 8))
                .max(1)
        };
        let items = outputs * parts;
        let grid = items.div_ceil(groups).clamp(1, max_blocks as usize) as u32;
        Plan { lanes, parts, grid }
    }
}

/// The CUDA C of `r`'s two kernels.
pub fn source(r: &Reduce) -> String {
    let (src, src_opt) = r.src;
    let (out, out_opt) = r.out;
    let (nk, nr) = (r.kept.len(), r.reduced.len());
    let mut s = String::new();
    let _ = writeln!(s, "// generated by dynd-cuda: {} of {}", r.kind.name(), src);
    let _ = writeln!(
        s,
        "struct dynd_rparams {{ long long kept[{nk}]; long long kept_src[{nk}]; long long kept_out[{nk}]; long long red[{nr}]; long long red_src[{nr}]; }};"
    );
    s.push_str(&state(r.kind, src, out, out_opt));
    let _ = writeln!(
        s,
        "static_assert(sizeof(St) <= {STATE_BYTES}, \"a reduction state must fit its part slot\");"
    );
    s.push_str(&kept_fn(nk));
    let offset = if nr == 1 {
        "    long long off = sb + j * p.red_src[0];\n".to_string()
    } else {
        format!(
            "    long long off = sb;\n    {{ long long rem = j; for (int d = {}; d >= 0; --d) {{ long long c = rem % p.red[d]; rem /= p.red[d]; off += c * p.red_src[d]; }} }}\n",
            nr - 1
        )
    };
    let bits = bits_type(src);
    let missing = if src_opt {
        format!("b == {}", na_bits(src))
    } else {
        "false".to_string()
    };
    let value = bit_cast(src, "b", false);
    let _ = write!(
        s,
        "#define DYND_MAX_BLOCK 256\n\
extern \"C\" __global__ void {KERNEL}(const char* src, char* out, St* parts, dynd_rparams p, long long n_out, long long r, long long nparts, int lanes) {{\n\
  __shared__ St sh[DYND_MAX_BLOCK];\n\
  const long long groups = blockDim.x / lanes;\n\
  const int lane = threadIdx.x % lanes;\n\
  const long long g = threadIdx.x / lanes;\n\
  const long long items = n_out * nparts;\n\
  const long long chunk = (r + nparts - 1) / nparts;\n\
  for (long long base = (long long)blockIdx.x * groups; base < items; base += (long long)gridDim.x * groups) {{\n\
    const long long item = base + g;\n\
    const long long o = item / nparts;\n\
    St s; s.init();\n\
    long long sb = 0, ob = 0;\n\
    if (item < items) {{\n\
      dynd_kept(p, o, &sb, &ob);\n\
      const long long lo = (item % nparts) * chunk;\n\
      const long long hi = lo + chunk < r ? lo + chunk : r;\n\
      for (long long j = lo + lane; j < hi; j += lanes) {{\n\
    {offset}\
        {bits} b = *(const {bits}*)(src + off);\n\
        if (!({missing})) s.add({value}, j);\n\
      }}\n\
    }}\n\
{GROUP_MERGE}    if (lane == 0 && item < items) {{\n\
      if (nparts == 1) s.store(out + ob); else parts[item] = s;\n\
    }}\n\
  }}\n\
}}\n\
extern \"C\" __global__ void {FINISH}(char* out, const St* parts, dynd_rparams p, long long n_out, long long nparts) {{\n\
  __shared__ St sh[DYND_MAX_BLOCK];\n\
  const long long per = (nparts + blockDim.x - 1) / blockDim.x;\n\
  for (long long o = blockIdx.x; o < n_out; o += gridDim.x) {{\n\
    St s; s.init();\n\
    const long long lo = threadIdx.x * per;\n\
    const long long hi = lo + per < nparts ? lo + per : nparts;\n\
    for (long long k = lo; k < hi; ++k) s.merge(parts[o * nparts + k]);\n\
    sh[threadIdx.x] = s;\n\
    for (int w = blockDim.x / 2; w > 0; w /= 2) {{\n\
      __syncthreads();\n\
      if (threadIdx.x < w) sh[threadIdx.x].merge(sh[threadIdx.x + w]);\n\
    }}\n\
    __syncthreads();\n\
    if (threadIdx.x == 0) {{ long long sb = 0, ob = 0; dynd_kept(p, o, &sb, &ob); sh[0].store(out + ob); }}\n\
    __syncthreads();\n\
  }}\n\
}}\n"
    );
    s
}

/// The CUDA C that merges the states `s` of a group of `lanes` threads
/// into its lane 0, as a tree in shared memory (`sh`, a state per thread of
/// the block). Every thread of the block runs it (`__syncthreads`), also
/// those without an item.
const GROUP_MERGE: &str = "    if (lanes > 1) {
      sh[threadIdx.x] = s;
      for (int w = lanes / 2; w > 0; w /= 2) {
        __syncthreads();
        if (lane < w) sh[threadIdx.x].merge(sh[threadIdx.x + w]);
      }
      __syncthreads();
      s = sh[threadIdx.x];
      __syncthreads();
    }
";

/// `dynd_kept`: the offset of output `o` in the output, and of its extent's
/// start (or its row's descriptor) in the source, over `nk` kept dims.
fn kept_fn(nk: usize) -> String {
    format!(
        "static __device__ __forceinline__ void dynd_kept(const dynd_rparams& p, long long o, long long* src, long long* out) {{\n\
         \x20 long long s = 0, t = 0;\n\
         \x20 for (int d = {} ; d >= 0; --d) {{ long long c = o % p.kept[d]; o /= p.kept[d]; s += c * p.kept_src[d]; t += c * p.kept_out[d]; }}\n\
         \x20 *src = s; *out = t;\n}}\n",
        nk - 1
    )
}

/// A built-in reduction over the var dim of a ragged device array
/// (`[fixed dims] * var * T`, axis -1): one output per row, each row's
/// extent its descriptor's size (DESIGN §4: `{begin, size}`, element `j`
/// at `begin + offset + j * stride`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaggedReduce {
    /// Which reduction.
    pub kind: BuiltinReduction,
    /// The values' type, and whether it is optional.
    pub src: (BuiltinType, bool),
    /// The result's value type, and whether it is optional.
    pub out: (BuiltinType, bool),
    /// The fixed dims (the rows; at least one, `[1]` when none).
    pub kept: Vec<usize>,
    /// The descriptors' byte strides over them.
    pub kept_desc: Vec<isize>,
    /// The output's byte strides over them.
    pub kept_out: Vec<isize>,
    /// The var dim's arrmeta offset.
    pub offset: isize,
    /// The var dim's stride.
    pub stride: isize,
}

/// The kernel of a ragged reduction: a group of lanes per row, long rows
/// listed for [`RAGGED_LONG_KERNEL`].
pub const RAGGED_KERNEL: &str = "dynd_ragged_reduce";

/// The kernel of a ragged reduction's long rows: a block per row.
pub const RAGGED_LONG_KERNEL: &str = "dynd_ragged_reduce_long";

/// The least length of a row that takes a block of its own in a ragged
/// reduction whose rows take fewer lanes than a block (also at least 32
/// times those lanes).
pub const LONG_REDUCE_ROW: usize = 1024;

impl RaggedReduce {
    /// The number of rows (outputs).
    pub fn outputs(&self) -> usize {
        self.kept.iter().product()
    }

    /// The parameter block: the fixed dims, the descriptors' and the
    /// output's strides over them (and an unused reduced dim, so the
    /// block is [`Reduce`]'s).
    pub fn params(&self) -> Vec<i64> {
        let mut p: Vec<i64> = Vec::new();
        p.extend(self.kept.iter().map(|&d| d as i64));
        p.extend(self.kept_desc.iter().map(|&d| d as i64));
        p.extend(self.kept_out.iter().map(|&d| d as i64));
        p.extend([1, 0]);
        p
    }

    /// `Ok` when `reduction` reduces the var dim of the ragged array `src`
    /// alone (axis -1), what the device runs.
    ///
    /// # Errors
    /// `Type` naming the axes otherwise; `Index` for bad axes.
    pub fn check_axes(reduction: &Reduction, src: &Array) -> Result<()> {
        let n = src.ragged_layout()?.shape.len();
        let reduced = reduction.reduced_axes(src.tp())?;
        if reduced.iter().take(n).any(|r| *r) || !reduced.get(n).copied().unwrap_or(false) {
            return Err(Error::type_error(format!(
                "{} over axes {:?} of {} does not run on the device yet (there: the var dim \
                 alone, axis -1)",
                reduction.name(),
                reduction.axes(),
                src.tp()
            )));
        }
        Ok(())
    }

    /// The description of `reduction` (built-in, over the last axis only)
    /// of the ragged device array `src` into `out`.
    ///
    /// # Errors
    /// `Type` for a user reduction, other axes, or a type the device does
    /// not compute on.
    pub fn for_call(reduction: &Reduction, out: &Array, src: &Array) -> Result<RaggedReduce> {
        let kind = reduction.kind().ok_or_else(|| {
            Error::type_error(format!(
                "{} is a user reduction: it runs on the host only",
                reduction.name()
            ))
        })?;
        RaggedReduce::check_axes(reduction, src)?;
        let layout = src.ragged_layout()?;
        let n = layout.shape.len();
        let value = |t: &dynd::Type, what: &str| {
            element_value(t).ok_or_else(|| {
                Error::type_error(format!("{what} ({t}) cannot be computed on the device"))
            })
        };
        let src_v = value(&layout.elem, "the values")?;
        let (out_shape, out_strides, out_elem) = out.strided_layout()?;
        let out_v = value(out_elem, "the result")?;
        // keepdims leaves a trailing dim of 1.
        let kept_out: Vec<isize> = out_strides[..n].to_vec();
        if out_shape[..n] != layout.shape[..] {
            return Err(Error::invalid_argument(format!(
                "{}: the output {} does not match the source {}",
                reduction.name(),
                out.tp(),
                src.tp()
            )));
        }
        let (kept, mut ks) = merge(layout.shape, vec![layout.strides, kept_out]);
        Ok(RaggedReduce {
            kind,
            src: src_v,
            out: out_v,
            kept,
            kept_out: ks.pop().unwrap_or_default(),
            kept_desc: ks.pop().unwrap_or_default(),
            offset: layout.offset,
            stride: layout.stride,
        })
    }
}

/// The lanes per row of a ragged reduction whose rows hold `mean` values
/// on average, on blocks of `block` threads: a power of two near half the
/// mean (one thread for rows of a few values, a block for long ones).
pub fn ragged_lanes(mean: usize, block: u32) -> u32 {
    let want = (mean / 2).max(1).next_power_of_two() as u32;
    want.min(block)
}

/// The CUDA C of `r`'s kernels: each row's group of lanes folds its values
/// into the reduction's state and merges in shared memory — except rows of
/// `skip` values or more, which lane 0 lists (while the list has room:
/// `cap`) for [`RAGGED_LONG_KERNEL`], where a whole block folds each.
pub fn ragged_source(r: &RaggedReduce) -> String {
    let (src, src_opt) = r.src;
    let (out, out_opt) = r.out;
    let nk = r.kept.len();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// generated by dynd-cuda: {} of var * {}",
        r.kind.name(),
        src
    );
    let _ = writeln!(
        s,
        "struct dynd_rparams {{ long long kept[{nk}]; long long kept_src[{nk}]; long long kept_out[{nk}]; long long red[1]; long long red_src[1]; }};"
    );
    s.push_str(&state(r.kind, src, out, out_opt));
    s.push_str(&kept_fn(nk));
    let bits = bits_type(src);
    let missing = if src_opt {
        format!("b == {}", na_bits(src))
    } else {
        "false".to_string()
    };
    let value = bit_cast(src, "b", false);
    // The row of `item`: its first value and length.
    let row = "      dynd_kept(p, item, &sb, &ob);\n\
      const char* first = *(const char* const*)(descs + sb) + voff;\n\
      long long size = *(const long long*)(descs + sb + 8);\n";
    let fold = format!(
        "      for (long long j = lane; j < size; j += lanes) {{\n\
        {bits} b = *(const {bits}*)(first + j * vstride);\n\
        if (!({missing})) s.add({value}, j);\n\
      }}\n"
    );
    let _ = write!(
        s,
        "#define DYND_MAX_BLOCK 256\n\
extern \"C\" __global__ void {RAGGED_KERNEL}(const char* descs, char* out, dynd_rparams p, long long n_out, long long voff, long long vstride, int lanes, long long skip, unsigned long long* count, long long* list, long long cap) {{\n\
  __shared__ St sh[DYND_MAX_BLOCK];\n\
  __shared__ int deferred[DYND_MAX_BLOCK];\n\
  const long long groups = blockDim.x / lanes;\n\
  const int lane = threadIdx.x % lanes;\n\
  const long long g = threadIdx.x / lanes;\n\
  for (long long base = (long long)blockIdx.x * groups; base < n_out; base += (long long)gridDim.x * groups) {{\n\
    const long long item = base + g;\n\
    St s; s.init();\n\
    long long sb = 0, ob = 0;\n\
    if (item < n_out && lane == 0) {{\n\
      // A long row is listed for a block of its own, while there is room.\n\
      int d = 0;\n\
      dynd_kept(p, item, &sb, &ob);\n\
      if (*(const long long*)(descs + sb + 8) >= skip) {{\n\
        const unsigned long long k = atomicAdd(count, 1ULL);\n\
        if (k < (unsigned long long)cap) {{ list[k] = item; d = 1; }}\n\
      }}\n\
      deferred[g] = d;\n\
    }}\n\
    __syncthreads();\n\
    // (Read before the merge's barriers, the next write after them; a\n\
    // group of one lane reads what it wrote.)\n\
    const bool mine = item < n_out && !deferred[g];\n\
    if (mine) {{\n\
{row}{fold}\
    }}\n\
{GROUP_MERGE}    if (lane == 0 && mine) s.store(out + ob);\n\
  }}\n\
}}\n\
extern \"C\" __global__ void {RAGGED_LONG_KERNEL}(const char* descs, char* out, dynd_rparams p, long long voff, long long vstride, const unsigned long long* count, const long long* list, long long cap) {{\n\
  __shared__ St sh[DYND_MAX_BLOCK];\n\
  const int lanes = blockDim.x;\n\
  const int lane = threadIdx.x;\n\
  const long long n = (long long)*count < cap ? (long long)*count : cap;\n\
  for (long long k = blockIdx.x; k < n; k += gridDim.x) {{\n\
    const long long item = list[k];\n\
    St s; s.init();\n\
    long long sb = 0, ob = 0;\n\
    {{\n\
{row}{fold}\
    }}\n\
{GROUP_MERGE}    if (lane == 0) s.store(out + ob);\n\
  }}\n\
}}\n"
    );
    s
}

/// The state struct `St` of `kind` over values of `src`, storing results
/// of `out` (`?out` when `out_opt`).
pub(crate) fn state(
    kind: BuiltinReduction,
    src: BuiltinType,
    out: BuiltinType,
    out_opt: bool,
) -> String {
    use BuiltinReduction as R;
    let v = c_type(src);
    let is_float = matches!(src, BuiltinType::Float32 | BuiltinType::Float64);
    let ob = bits_type(out);
    // Stores the bits expression `bits` as the result.
    let put = |bits: &str| format!("*({ob}*)out = {bits};");
    let na = put(&na_bits(out));
    // NaN for an empty mean, var or std of a plain result; NA when it is
    // optional.
    let empty = if out_opt {
        na.clone()
    } else {
        put(&bit_cast(out, "(0.0 / 0.0)", true))
    };
    let (fields, init, add, merge, store) = match kind {
        R::Sum | R::Prod => {
            let (op, id) = if kind == R::Sum {
                ("+", "0")
            } else {
                ("*", "1")
            };
            if matches!(out, BuiltinType::Float32 | BuiltinType::Float64) {
                let a = c_type(out);
                (
                    format!("{a} acc;"),
                    format!("acc = ({a}){id};"),
                    format!("acc = acc {op} ({a})x;"),
                    format!("acc = acc {op} o.acc;"),
                    put(&bit_cast(out, "acc", true)),
                )
            } else {
                // 64-bit integers wrap: computed unsigned, stored as bits.
                let widen = if src == BuiltinType::Bool || src.is_unsigned_int() {
                    "(unsigned long long)x"
                } else {
                    "(unsigned long long)(long long)x"
                };
                (
                    "unsigned long long acc;".to_string(),
                    format!("acc = {id}ULL;"),
                    format!("acc = acc {op} {widen};"),
                    format!("acc = acc {op} o.acc;"),
                    put("acc"),
                )
            }
        }
        R::Min | R::Max | R::ArgMin | R::ArgMax => {
            let lt = if matches!(kind, R::Min | R::ArgMin) {
                "<"
            } else {
                ">"
            };
            let arg = matches!(kind, R::ArgMin | R::ArgMax);
            // Whether (x, at j) beats (v, at pos): a NaN beats any number
            // (min and max propagate NaN); between equals, the first.
            let tie = if arg { " || (x == v && j < pos)" } else { "" };
            let nan_tie = if arg { " || j < pos" } else { "" };
            let beats = if is_float {
                format!("(isnan(x) ? (!isnan(v){nan_tie}) : (!isnan(v) && (x {lt} v{tie})))")
            } else {
                format!("(x {lt} v{tie})")
            };
            let result = if arg {
                put("(unsigned long long)pos")
            } else {
                put(&bit_cast(out, "v", true))
            };
            let none = if out_opt { na.clone() } else { result.clone() };
            (
                format!("{v} v; long long pos; bool any;"),
                "any = false; pos = 0;".to_string(),
                format!("if (!any || {beats}) {{ v = x; pos = j; any = true; }}"),
                "if (o.any) add(o.v, o.pos);".to_string(),
                format!("if (any) {{ {result} }} else {{ {none} }}"),
            )
        }
        R::Count => (
            "long long c;".to_string(),
            "c = 0;".to_string(),
            "(void)x; c += 1;".to_string(),
            "c += o.c;".to_string(),
            put("(unsigned long long)c"),
        ),
        R::Any | R::All => {
            let (id, op) = if kind == R::Any {
                ("false", "||")
            } else {
                ("true", "&&")
            };
            (
                "bool b;".to_string(),
                format!("b = {id};"),
                format!("b = b {op} (x != 0);"),
                format!("b = b {op} o.b;"),
                put("(unsigned char)(b ? 1 : 0)"),
            )
        }
        R::Mean => (
            "double sum; long long n;".to_string(),
            "sum = 0.0; n = 0;".to_string(),
            "sum += (double)x; n += 1;".to_string(),
            "sum += o.sum; n += o.n;".to_string(),
            format!(
                "if (n == 0) {{ {empty} }} else {{ {} }}",
                put(&bit_cast(out, "(sum / (double)n)", true))
            ),
        ),
        R::Var | R::Std => {
            let result = if kind == R::Std {
                "sqrt(m2 / n)"
            } else {
                "(m2 / n)"
            };
            (
                "double n, mean, m2;".to_string(),
                "n = 0.0; mean = 0.0; m2 = 0.0;".to_string(),
                "double y = (double)x; n += 1.0; double d = y - mean; mean += d / n; m2 += d * (y - mean);".to_string(),
                "if (o.n == 0.0) return; if (n == 0.0) { n = o.n; mean = o.mean; m2 = o.m2; return; }\n    double t = n + o.n; double d = o.mean - mean; mean += d * (o.n / t); m2 += o.m2 + d * d * (n * o.n / t); n = t;".to_string(),
                format!(
                    "if (n == 0.0) {{ {empty} }} else {{ {} }}",
                    put(&bit_cast(out, result, true))
                ),
            )
        }
    };
    format!(
        "struct St {{\n  {fields}\n  __device__ void init() {{ {init} }}\n  __device__ void add({v} x, long long j) {{ (void)j; {add} }}\n  __device__ void merge(const St& o) {{ {merge} }}\n  __device__ void store(char* out) const {{ {store} }}\n}};\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_fit_the_extent_and_the_outputs() {
        // One long extent spreads over every block.
        let p = Plan::new(1, 100_000_000, 256, 4224);
        assert_eq!((p.lanes, p.grid), (256, 4224));
        assert_eq!(p.parts, 4224);
        // Many short ones: a thread each, one part.
        let p = Plan::new(10_000_000, 10, 256, 4224);
        assert_eq!((p.lanes, p.parts, p.grid), (1, 1, 4224));
        // In between: a warp per output.
        let p = Plan::new(100_000, 1000, 256, 4224);
        assert_eq!((p.lanes, p.parts), (32, 1));
        // Empty extents and no outputs still plan one block.
        assert_eq!(Plan::new(0, 0, 256, 10).grid, 1);
        assert_eq!(Plan::new(5, 0, 256, 10).parts, 1);
    }

    #[test]
    fn dims_merge_where_memory_walks_as_one() {
        let (shape, strides) = merge(vec![2, 1, 3, 4], vec![vec![128, 48, 32, 8]]);
        assert_eq!(shape, vec![2, 12]);
        assert_eq!(strides, vec![vec![128, 8]]);
        let (shape, _) = merge(vec![2, 3, 4], vec![vec![96, 32, 8]]);
        assert_eq!(shape, vec![24]);
        let (shape, strides) = merge(vec![1, 1], vec![vec![8, 8], vec![4, 4]]);
        assert_eq!(shape, vec![1]);
        assert_eq!(strides, vec![vec![0], vec![0]]);
    }
}
