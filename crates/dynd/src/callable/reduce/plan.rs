//! The reduction kernel: a plan of the source's dims, each reduced or
//! kept, and the walk over them that calls the op's inner loops.
//!
//! The walk carries a `first` flag: an output element's first visit
//! writes it (`init`, or `fold` with `first`), later visits — from a
//! reduced dim outside it — combine into it (`accumulate`, `fold`). So no
//! identity is needed except for empty extents, which `fill` with it.
//! Where only reduced dims lie below a reduced dim, its rows all go into
//! one output element, and an empty row (a var element of length 0)
//! passes `first` on to the next row: only an element that gets no value
//! at all is filled (or, without an identity, is an error). The
//! innermost dim is one call of the op: a reduced one folds its run with
//! several accumulators; a kept one under a reduced outer dim accumulates
//! row by row into the output (strided adds, no gathering of columns).
//!
//! Before it runs, the plan drops fixed dims of size 1, and merges
//! neighbouring fixed dims that are both reduced or both kept and lie in
//! memory as one (so a reduction over every axis of a C-order array is
//! one run). For built-in (commutative) reductions it also reorders the
//! fixed dims after the last var dim by decreasing source stride, so the
//! innermost loop is the one that walks memory contiguously.

use super::ops::{CountOp, Ctx, ReduceOp, Span, StateBuf};
use crate::error::{Error, Result};
use crate::exec::{self, SPLIT_MIN, Shared, TASK_ELEMENTS};
use crate::kernels::loops::{Rows, stream_min_bytes};
use crate::kernels::{Kernel, KernelRef};
use crate::layout::{FixedDimMeta, VarDimData, VarDimMeta};
use crate::memblock::MemBlock;
use crate::types::{Type, TypeKind};
use std::cell::Cell;
use std::mem::size_of;
use std::ptr::NonNull;

/// Reads a `T` from arrmeta or data (unaligned).
///
/// # Safety
/// 1. `p` is readable for a `T` holding a valid value.
unsafe fn read<T: Copy>(p: *const u8) -> T {
    // SAFETY: (1).
    unsafe { p.cast::<T>().read_unaligned() }
}

/// A source dim.
#[derive(Clone, Copy, Debug)]
pub(super) enum SrcDim {
    /// `N *`.
    Fixed { size: usize, stride: isize },
    /// `var *`: the size is in each element.
    Var { stride: isize, offset: isize },
}

/// What the output does at a source dim.
#[derive(Clone)]
pub(super) enum DstDim {
    /// The dim is reduced: the output does not advance.
    Reduced,
    /// A kept fixed dim.
    Fixed { stride: isize },
    /// A kept var dim: output elements are allocated on first visit.
    Var(VarDst),
}

/// A kept var dim of the output.
#[derive(Clone)]
pub(super) struct VarDst {
    /// The POD allocator block the output's elements come from.
    block: Option<MemBlock>,
    stride: isize,
    offset: isize,
    elem_size: usize,
    elem_align: usize,
}

impl VarDst {
    /// Allocates `n` elements.
    fn allocate(&self, n: usize, out: &Type) -> Result<*mut u8> {
        if self.offset != 0 || self.stride != self.elem_size as isize {
            return Err(Error::invalid_argument(format!(
                "cannot allocate elements of {out} through a view with offset {} and stride {}",
                self.offset, self.stride
            )));
        }
        let alloc = self
            .block
            .as_ref()
            .and_then(MemBlock::pod_allocator)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "the output {out} has no POD allocator block to allocate from"
                ))
            })?;
        let bytes = n
            .checked_mul(self.elem_size)
            .ok_or_else(|| Error::alloc(format!("{n} elements of {out} are too large")))?;
        alloc.allocate(bytes, self.elem_align.max(1))
    }
}

/// One source dim of the plan.
#[derive(Clone)]
pub(super) struct Dim {
    pub src: SrcDim,
    pub dst: DstDim,
    /// The axis of the source type it came from (for messages).
    pub axis: usize,
    /// Stride of a side buffer shaped like the output (a mean's counts).
    pub aux: isize,
    /// Every dim after this one is reduced (set by [`simplify`]).
    pub tail_reduced: bool,
}

impl Dim {
    fn reduced(&self) -> bool {
        matches!(self.dst, DstDim::Reduced)
    }
    fn fixed_size(&self) -> Option<usize> {
        match self.src {
            SrcDim::Fixed { size, .. } => Some(size),
            SrcDim::Var { .. } => None,
        }
    }
}

/// The plan's dims for a source and output of these types.
///
/// # Safety
/// 1. `src_meta` and `dst_meta` are valid arrmeta of `src_tp` and
///    `dst_tp`, alive for the call.
pub(super) unsafe fn build_dims(
    src_tp: &Type,
    src_meta: *const u8,
    dst_tp: &Type,
    dst_meta: *const u8,
    reduced: &[bool],
    keepdims: bool,
) -> Result<Vec<Dim>> {
    let mismatch = || {
        Error::type_error(format!(
            "the output {dst_tp} does not match the reduction of {src_tp}"
        ))
    };
    let mut dims = Vec::with_capacity(reduced.len());
    let (mut st, mut sm) = (src_tp, src_meta);
    let (mut dt, mut dm) = (dst_tp, dst_meta);
    for (axis, &red) in reduced.iter().enumerate() {
        let (src, s_elem) = match st.kind() {
            TypeKind::FixedDim { size, elem } => {
                // SAFETY: (1) fixed dim arrmeta, then the element's.
                let m: FixedDimMeta = unsafe { read(sm) };
                sm = sm.wrapping_add(size_of::<FixedDimMeta>());
                (
                    SrcDim::Fixed {
                        size: *size,
                        stride: m.stride,
                    },
                    elem,
                )
            }
            TypeKind::VarDim { elem } => {
                // SAFETY: (1) var dim arrmeta, then the element's.
                let m: VarDimMeta = unsafe { read(sm) };
                sm = sm.wrapping_add(size_of::<VarDimMeta>());
                (
                    SrcDim::Var {
                        stride: m.stride,
                        offset: m.offset,
                    },
                    elem,
                )
            }
            _ => return Err(Error::type_error(format!("cannot reduce over {src_tp}"))),
        };
        st = s_elem;
        let dst = if red {
            if keepdims {
                let TypeKind::FixedDim { size: 1, elem } = dt.kind() else {
                    return Err(mismatch());
                };
                dm = dm.wrapping_add(size_of::<FixedDimMeta>());
                dt = elem;
            }
            DstDim::Reduced
        } else {
            match (dt.kind(), src) {
                (TypeKind::FixedDim { size, elem }, SrcDim::Fixed { size: n, .. })
                    if *size == n =>
                {
                    // SAFETY: (1) fixed dim arrmeta of the output.
                    let m: FixedDimMeta = unsafe { read(dm) };
                    dm = dm.wrapping_add(size_of::<FixedDimMeta>());
                    dt = elem;
                    DstDim::Fixed { stride: m.stride }
                }
                (TypeKind::VarDim { elem }, SrcDim::Var { .. }) => {
                    // SAFETY: (1) var dim arrmeta of the output.
                    let m: VarDimMeta = unsafe { read(dm) };
                    dm = dm.wrapping_add(size_of::<VarDimMeta>());
                    // SAFETY: (1) the arrmeta holds a reference to its block,
                    // alive during this call; the kernel takes its own.
                    let block =
                        NonNull::new(m.blockref).map(|b| unsafe { MemBlock::from_borrowed(b) });
                    let v = VarDst {
                        block,
                        stride: m.stride,
                        offset: m.offset,
                        elem_size: elem.data_size(),
                        elem_align: elem.data_alignment(),
                    };
                    dt = elem;
                    DstDim::Var(v)
                }
                _ => return Err(mismatch()),
            }
        };
        dims.push(Dim {
            src,
            dst,
            axis,
            aux: 0,
            tail_reduced: false,
        });
    }
    if st.is_dim() || dt.is_dim() {
        return Err(mismatch());
    }
    Ok(dims)
}

/// How [`simplify`] may reorder the fixed dims after the last var dim.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Order {
    /// As given (user reductions combine in index order).
    Given,
    /// By decreasing source stride, so the innermost loop walks memory
    /// contiguously (built-in, commutative reductions).
    Memory,
    /// Kept dims first, then reduced ones, each in their order (stateful
    /// reductions: their state lives inside the kept dims, and argmin's
    /// positions count in C order).
    KeptFirst,
}

/// Drops fixed dims of size 1, reorders the fixed dims after the last var
/// dim as `order` says, and merges neighbouring fixed dims that lie in
/// memory as one.
pub(super) fn simplify(dims: Vec<Dim>, order: Order) -> Vec<Dim> {
    let mut dims: Vec<Dim> = dims
        .into_iter()
        .filter(|d| d.fixed_size() != Some(1))
        .collect();
    let start = dims
        .iter()
        .rposition(|d| d.fixed_size().is_none())
        .map_or(0, |i| i + 1);
    match order {
        Order::Given => {}
        Order::Memory => dims[start..].sort_by_key(|d| match d.src {
            SrcDim::Fixed { stride, .. } => std::cmp::Reverse(stride.unsigned_abs()),
            SrcDim::Var { .. } => std::cmp::Reverse(0),
        }),
        Order::KeptFirst => dims[start..].sort_by_key(Dim::reduced),
    }
    let mut out: Vec<Dim> = Vec::with_capacity(dims.len());
    for d in dims {
        if let Some(prev) = out.last_mut()
            && let Some(merged) = merge(prev, &d)
        {
            *prev = merged;
            continue;
        }
        out.push(d);
    }
    let mut tail = true;
    for d in out.iter_mut().rev() {
        d.tail_reduced = tail;
        tail &= d.reduced();
    }
    out
}

/// The level where a stateful op's reduced dims start (`Some(None)`:
/// nothing is reduced): every dim from it on is reduced, none before it.
/// `None` when a reduced dim lies outside a kept one.
pub(super) fn tail(dims: &[Dim]) -> Option<Option<usize>> {
    let b = dims.iter().rposition(|d| !d.reduced()).map_or(0, |i| i + 1);
    if dims[..b].iter().any(Dim::reduced) {
        return None;
    }
    Some((b < dims.len()).then_some(b))
}

/// `outer` and `inner` as one dim, when they are fixed, both reduced or
/// both kept, and step through memory (source and output) as one.
fn merge(outer: &Dim, inner: &Dim) -> Option<Dim> {
    let (
        SrcDim::Fixed {
            size: n1,
            stride: s1,
        },
        SrcDim::Fixed {
            size: n2,
            stride: s2,
        },
    ) = (outer.src, inner.src)
    else {
        return None;
    };
    let size = n1.checked_mul(n2)?;
    let n2 = isize::try_from(n2).ok()?;
    let dst = match (&outer.dst, &inner.dst) {
        (DstDim::Reduced, DstDim::Reduced) => DstDim::Reduced,
        (DstDim::Fixed { stride: d1 }, DstDim::Fixed { stride: d2 })
            if d2.checked_mul(n2) == Some(*d1) =>
        {
            DstDim::Fixed { stride: *d2 }
        }
        _ => return None,
    };
    (s2.checked_mul(n2) == Some(s1)).then_some(Dim {
        src: SrcDim::Fixed { size, stride: s2 },
        dst,
        axis: outer.axis,
        aux: 0,
        tail_reduced: false,
    })
}

/// What a reduction does after the walk.
pub(super) enum Finish {
    /// Nothing.
    None,
    /// A mean with the same count everywhere: divide every output by it.
    Divide(f64),
    /// A mean whose reduced dims are the innermost: divide each output by
    /// its count when the walk leaves the dim at this level.
    AtLevel(usize),
    /// A mean over var dims into fixed outputs: count into a side buffer
    /// of `len` `f64`s (walking `dims`, whose output strides are the
    /// buffer's), then divide.
    Counts(Box<Counts>),
    /// A stateful op ([`super::ops::Staged`]) whose reduced dims do not all
    /// lie inside the kept ones: the walk reduces into a tree of states
    /// shaped like the output, then each state's result is written.
    States(Box<States>),
}

/// How a stateful op reduces into a tree of states (see
/// [`Finish::States`]): one state per output element, `elem` bytes apart
/// (the op's state size, rounded up to 16); a kept fixed dim of the tree
/// holds its states in C order, a kept var dim holds `{begin, size}` whose
/// states come from a POD block of the call, grown as longer rows are seen.
pub(super) struct States {
    pub elem: usize,
    /// Per level, what one index of a reduced dim adds to a value's
    /// position in the reduced extent (the product of the sizes of the
    /// reduced dims inside it: NumPy's flat index, and over unequal rows
    /// the row index, as awkward's); `None` where a reduced var dim lies
    /// inside another reduced dim, so there is no such product: each state
    /// then counts the values folded into it.
    pub weights: Option<Box<[i64]>>,
}

impl States {
    /// The plan for a stateful op of `state_size` bytes over `dims`.
    pub fn new(dims: &[Dim], state_size: usize) -> States {
        let mut weights = Some(vec![0i64; dims.len()]);
        let mut inner = Some(1i64);
        for (l, d) in dims.iter().enumerate().rev() {
            if !d.reduced() {
                continue;
            }
            match (&mut weights, inner) {
                (Some(w), Some(i)) => w[l] = i,
                _ => weights = None,
            }
            inner = match d.src {
                SrcDim::Fixed { size, .. } => {
                    inner.and_then(|i| i.checked_mul(i64::try_from(size).ok()?))
                }
                SrcDim::Var { .. } => None,
            };
        }
        States {
            elem: state_size.next_multiple_of(16),
            weights: weights.map(Vec::into_boxed_slice),
        }
    }

    /// `dims` with their kept dims addressing a tree of states (var dims
    /// allocating from `block`), and the bytes of the tree's root.
    fn tree(&self, dims: &[Dim], block: &MemBlock) -> Result<(Vec<Dim>, usize)> {
        let mut out = dims.to_vec();
        let mut size = self.elem;
        for d in out.iter_mut().rev() {
            match (&d.dst, d.src) {
                (DstDim::Reduced, _) => {}
                (DstDim::Fixed { .. }, SrcDim::Fixed { size: n, .. }) => {
                    let stride = isize::try_from(size).map_err(|_| too_many_states())?;
                    d.dst = DstDim::Fixed { stride };
                    size = size.checked_mul(n).ok_or_else(too_many_states)?;
                }
                _ => {
                    let stride = isize::try_from(size).map_err(|_| too_many_states())?;
                    d.dst = DstDim::Var(VarDst {
                        block: Some(block.clone()),
                        stride,
                        offset: 0,
                        elem_size: size,
                        elem_align: 16,
                    });
                    size = size_of::<VarDimData>();
                }
            }
        }
        Ok((out, size))
    }
}

/// The error for a tree of states beyond the address space.
fn too_many_states() -> Error {
    Error::alloc("the states of a reduction's output elements are too large")
}

/// A mean's counting plan: the plan with output strides into a side
/// buffer of `len` `f64`s.
pub(super) struct Counts {
    pub dims: Box<[Dim]>,
    pub len: usize,
}

/// How the walk splits across threads: a kept fixed dim at `level` (of
/// `size`), in chunks of `chunk` indices.
#[derive(Clone, Copy, Debug)]
pub(super) struct Split {
    level: usize,
    size: usize,
    chunk: usize,
}

impl Split {
    /// No split: the walk runs on the calling thread.
    pub const NONE: Split = Split {
        level: 0,
        size: 0,
        chunk: 0,
    };
}

/// Chooses a split for a large reduction: every dim fixed but perhaps a
/// reduced var dim at the bottom (so no output is allocated, and an empty
/// extent fills only its own output element), outputs that do not overlap, and
/// a kept dim of size 2 or more. Chunks depend only on the shapes, never
/// on the thread count, and every output element is computed by one task
/// exactly as the serial walk computes it.
pub(super) fn split(dims: &[Dim], dst_elem_size: usize) -> Split {
    split_of(dims, dst_elem_size).unwrap_or(Split::NONE)
}

/// [`split`], `None` for no split.
fn split_of(dims: &[Dim], dst_elem_size: usize) -> Option<Split> {
    let mut total = 1usize;
    let mut kept = Vec::new();
    for (level, d) in dims.iter().enumerate() {
        // A reduced var dim at the bottom (the ragged reduction): each row
        // folds into its own output element, which one task computes as
        // the serial walk does; counted as one element per row.
        let bottom_var = level + 1 == dims.len() && d.reduced() && d.fixed_size().is_none();
        let size = if bottom_var { 1 } else { d.fixed_size()? };
        total = total.checked_mul(size)?;
        match d.dst {
            DstDim::Reduced => {}
            DstDim::Fixed { stride } => kept.push((stride.unsigned_abs(), size)),
            DstDim::Var(_) => return None,
        }
    }
    if total < SPLIT_MIN {
        return None;
    }
    // Outputs overlap unless each stride clears the extent of the smaller ones.
    kept.sort_unstable();
    let mut extent = dst_elem_size.max(1);
    for &(stride, size) in &kept {
        if stride < extent {
            return None;
        }
        extent = extent.checked_add(stride.checked_mul(size - 1)?)?;
    }
    let level = dims
        .iter()
        .position(|d| !d.reduced() && d.fixed_size() >= Some(2))?;
    let size = dims[level].fixed_size()?;
    let tasks = (total / TASK_ELEMENTS).clamp(2, size);
    let mut chunk = size.div_ceil(tasks);
    if level + 1 == dims.len() {
        // Innermost: keep each task's rows long enough to stream.
        chunk = chunk.max(size.min(4096));
    }
    let ragged = level + 2 == dims.len() && dims[level + 1].fixed_size().is_none();
    let out_bytes = size.saturating_mul(dst_elem_size);
    let stream_min = stream_min_bytes();
    if ragged && out_bytes >= stream_min.saturating_mul(2) {
        // Rows over a large output: each task's part of the output large
        // enough for its folds to write it past the cache (the loop is
        // bound by memory, which the tasks share).
        chunk = chunk.max(stream_min.div_ceil(dst_elem_size.max(1)));
    }
    (size.div_ceil(chunk) >= 2).then_some(Split { level, size, chunk })
}

/// What messages name.
pub(super) struct Info {
    /// The reduction's name.
    pub name: String,
    /// The source type.
    pub src_tp: Type,
    /// The output type.
    pub dst_tp: Type,
    /// A stateful op's level where the reduced dims start ([`tail`]).
    pub tail: Option<usize>,
}

/// The reduction kernel (one source).
pub(super) struct ReduceKernel {
    pub dims: Box<[Dim]>,
    pub op: Box<dyn ReduceOp>,
    pub finish: Finish,
    pub split: Split,
    /// A user op's two kernels (0: none, for built-ins).
    pub children: [usize; 2],
    /// Boxed, so the kernel fits the builder's 16 inline words.
    pub info: Box<Info>,
}

impl Kernel for ReduceKernel {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        let cx = Ctx {
            k,
            children: &self.children,
        };
        let src = src.first().copied().unwrap_or(std::ptr::null());
        let walker = Walker {
            dims: &self.dims,
            op: &*self.op,
            cx,
            info: &self.info,
            divide_at: match self.finish {
                Finish::AtLevel(level) => Some(level),
                _ => None,
            },
            restrict: None,
            state: std::ptr::null_mut(),
            positions: None,
        };
        let mut buf = StateBuf::new();
        let walker = Walker {
            state: buf.0.as_mut_ptr(),
            ..walker
        };
        if let Finish::States(states) = &self.finish {
            // SAFETY: the caller's promises (Kernel::single 1).
            return unsafe { walker.reduce_states(states, dst, src) };
        }
        match self.split {
            split if split.chunk > 0 && exec::num_threads() > 1 => {
                // The pointers address the source and output of one call,
                // which outlive the split; each task writes only its own
                // output elements (`split` checked that they do not
                // overlap); the kernel tree is immutable while it runs and
                // its kernels are Sync (the ABI's contract).
                let shared = Shared((walker, dst, src));
                let tasks = split.size.div_ceil(split.chunk);
                exec::tasks(tasks, |t| {
                    let (walker, dst, src) = shared.get();
                    let lo = t * split.chunk;
                    let mut buf = StateBuf::new();
                    let w = Walker {
                        restrict: Some((split.level, lo, split.chunk.min(split.size - lo))),
                        state: buf.0.as_mut_ptr(),
                        ..*walker
                    };
                    // SAFETY: the caller's promises (Kernel::single 1); the
                    // task walks only indices lo.. of a kept dim, so it
                    // writes only its own output elements.
                    unsafe { w.walk(0, *dst, *src, true, false) }.map(|_| ())
                })?;
            }
            // SAFETY: the caller's promises (Kernel::single 1).
            _ => unsafe { walker.walk(0, dst, src, true, false) }.map(|_| ())?,
        }
        let op = &*self.op;
        let mut divide = |r: Span<'_>| {
            // SAFETY: `each_output` passes output elements (holding sums)
            // and their counts.
            unsafe { op.divide(r) }
        };
        match &self.finish {
            Finish::None | Finish::AtLevel(_) | Finish::States(_) => Ok(()),
            Finish::Divide(count) => {
                // SAFETY: the output was written by the walk; the count is
                // one f64 that every output element reads (aux strides 0).
                unsafe { walker.each_output(0, dst, (&raw const *count).cast(), &mut divide) }
            }
            Finish::Counts(c) => {
                let Counts { dims, len } = &**c;
                let mut counts = vec![0f64; *len];
                let counter = Walker {
                    dims,
                    op: &CountOp,
                    ..walker
                };
                // SAFETY: the counting plan is this plan with output strides
                // into `counts`, which holds every output's slot.
                unsafe { counter.walk(0, counts.as_mut_ptr().cast(), src, true, false) }?;
                // SAFETY: the plan's aux strides address `counts` in the
                // same layout.
                unsafe { walker.each_output(0, dst, counts.as_ptr().cast(), &mut divide) }
            }
        }
    }

    fn child_offsets(&self) -> &[usize] {
        &self.children
    }
}

/// One walk over the plan.
#[derive(Clone, Copy)]
struct Walker<'a> {
    dims: &'a [Dim],
    op: &'a dyn ReduceOp,
    cx: Ctx<'a>,
    info: &'a Info,
    /// A mean's level at which each output gets its whole count.
    divide_at: Option<usize>,
    /// `(level, lo, len)`: walk only indices `lo..lo + len` of that kept
    /// fixed dim (a parallel task).
    restrict: Option<(usize, usize, usize)>,
    /// A stateful op's state for the output element being reduced (this
    /// walk's own buffer).
    state: *mut u8,
    /// A walk into a tree of states ([`Finish::States`]): the weight of
    /// each level's index, and the position its walk is at.
    positions: Option<(&'a [i64], &'a Cell<i64>)>,
}

/// A visitor of output runs: the output elements, and the side buffer's
/// matching places as the source.
type Visit<'v> = dyn FnMut(Span<'_>) -> Result<()> + 'v;

impl Walker<'_> {
    /// The span of `n` output elements `ds` bytes apart from `dst` and `n`
    /// source elements `ss` bytes apart from `src`.
    fn span(&self, dst: *mut u8, ds: isize, src: *const u8, ss: isize, n: usize) -> Span<'_> {
        Span {
            cx: self.cx,
            dst,
            ds,
            src,
            ss,
            n,
            state: self.state,
            pos: self.positions.map(|(_, at)| at.get()),
        }
    }

    /// Reduces the source element at `src` (of the dims from `level` on)
    /// into the output element at `dst`; `first` when the output has not
    /// been written yet. Returns how many source values it read. An empty
    /// extent met while `first` fills the outputs with the identity, unless
    /// `defer`: then the caller — a reduced dim whose next row may still
    /// start the same, single output element — decides.
    ///
    /// # Safety
    /// 1. `src` is a readable source element and `dst` a writable output
    ///    element of the types below `level`, laid out as the plan says.
    unsafe fn walk(
        &self,
        level: usize,
        dst: *mut u8,
        src: *const u8,
        first: bool,
        defer: bool,
    ) -> Result<usize> {
        let Some(d) = self.dims.get(level) else {
            // SAFETY: (1) one value each.
            unsafe { self.init_or_accumulate(self.span(dst, 0, src, 0, 1), first) }?;
            return Ok(1);
        };
        if self.info.tail == Some(level) {
            // A stateful op: the output element's reduction starts here.
            // SAFETY: (1); the state buffer is this walk's, of the op's size.
            unsafe {
                self.op.reset(self.state);
                let count = self.dim(level, d, dst, src, true, false)?;
                self.op.finish(dst, self.state)?;
                return Ok(count);
            }
        }
        // SAFETY: (1).
        let count = unsafe { self.dim(level, d, dst, src, first, defer) }?;
        if self.divide_at == Some(level) {
            let c = count as f64;
            let by = self.span(dst, 0, (&raw const c).cast(), 0, 1);
            // SAFETY: (1) the output element holds its whole sum; `by`'s
            // source is the one count.
            unsafe { self.op.divide(by) }?;
        }
        Ok(count)
    }

    /// The op's `init` of the span when `first`, else its `accumulate`.
    ///
    /// # Safety
    /// 1. As [`ReduceOp::init`], and when not `first` as
    ///    [`ReduceOp::accumulate`].
    unsafe fn init_or_accumulate(&self, r: Span<'_>, first: bool) -> Result<()> {
        // SAFETY: (1).
        unsafe {
            if first {
                self.op.init(r)
            } else {
                self.op.accumulate(r)
            }
        }
    }

    /// [`Walker::walk`] at a dim.
    ///
    /// # Safety
    /// As [`Walker::walk`].
    unsafe fn dim(
        &self,
        level: usize,
        d: &Dim,
        dst: *mut u8,
        src: *const u8,
        first: bool,
        defer: bool,
    ) -> Result<usize> {
        let (sp, ss, n) = match d.src {
            SrcDim::Fixed { size, stride } => (src, stride, size),
            SrcDim::Var { stride, offset } => {
                // SAFETY: (1) the source element is a var dim's data.
                let v: VarDimData = unsafe { read(src) };
                (v.begin.wrapping_offset(offset).cast_const(), stride, v.size)
            }
        };
        let last = level + 1 == self.dims.len();
        let (dp, ds, first, fresh) = match &d.dst {
            DstDim::Reduced => {
                let total = if n == 0 {
                    0
                } else if last {
                    // SAFETY: (1) n elements at stride ss from sp.
                    unsafe { self.op.fold(self.span(dst, 0, sp, ss, n), first) }?;
                    n
                } else {
                    // With only reduced dims below, `dst` is one output
                    // element: it starts with the first row that has values.
                    // Otherwise row 0 starts every output element below.
                    let single = d.tail_reduced;
                    let mut total = 0usize;
                    let at = self.positions.map(|(w, at)| (w[level], at, at.get()));
                    for j in 0..n {
                        let s = sp.wrapping_offset(j as isize * ss);
                        let f = first && if single { total == 0 } else { j == 0 };
                        if let Some((w, at, base)) = at {
                            at.set(base.wrapping_add((j as i64).wrapping_mul(w)));
                        }
                        // SAFETY: (1) element j of the dim.
                        total += unsafe { self.walk(level + 1, dst, s, f, single) }?;
                    }
                    if let Some((_, at, base)) = at {
                        at.set(base);
                    }
                    total
                };
                let empty = if d.tail_reduced { total == 0 } else { n == 0 };
                if first && empty && !defer {
                    // SAFETY: (1).
                    unsafe { self.fill(level + 1, dst, level) }?;
                }
                return Ok(total);
            }
            DstDim::Fixed { stride } => (dst, *stride, first, n),
            DstDim::Var(v) => {
                // SAFETY: (1) the output element is a var dim's data.
                let mut dv: VarDimData = unsafe { read(dst) };
                let mut first = first;
                // Output elements from `fresh` on get their first value here.
                let mut fresh = n;
                if dv.begin.is_null() {
                    // Never written (or only filled with the identity, which
                    // leaves it empty): it starts here.
                    dv = VarDimData {
                        begin: v.allocate(n, &self.info.dst_tp)?,
                        size: n,
                    };
                    // SAFETY: (1) the output element is writable.
                    unsafe { dst.cast::<VarDimData>().write_unaligned(dv) };
                    first = true;
                } else if dv.size != n {
                    if !self.dims[..level].iter().any(Dim::reduced) {
                        return Err(self.ragged(level, dv.size, n));
                    }
                    if first {
                        // An output given, visited first: its element
                        // holds no state yet, whatever its length. It
                        // takes this row's length (in place when it has
                        // room; longer rows extend it below), so that every
                        // position starts with its first value.
                        if dv.size > n {
                            dv.size = n;
                        } else {
                            dv.begin = v.allocate(n, &self.info.dst_tp)?;
                            dv.size = n;
                        }
                        // SAFETY: (1) the output element is writable.
                        unsafe { dst.cast::<VarDimData>().write_unaligned(dv) };
                    }
                    // Rows of unequal length under a reduced dim combine
                    // position by position (as awkward does): a longer row
                    // extends the output element, whose new positions
                    // start with this row's values.
                    if n > dv.size {
                        let begin = v.allocate(n, &self.info.dst_tp)?;
                        // SAFETY: `allocate` checked that the output's
                        // elements are packed (offset 0, stride = size):
                        // the old element's `size` values lie at its begin;
                        // the new block holds `n` of them, and is apart.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                dv.begin.cast_const(),
                                begin,
                                dv.size * v.elem_size,
                            );
                        }
                        fresh = dv.size;
                        dv = VarDimData { begin, size: n };
                        // SAFETY: (1) the output element is writable.
                        unsafe { dst.cast::<VarDimData>().write_unaligned(dv) };
                    }
                }
                (dv.begin.wrapping_offset(v.offset), v.stride, first, fresh)
            }
        };
        let (lo, len) = match self.restrict {
            Some((l, lo, len)) if l == level => (lo, len),
            _ => (0, n),
        };
        let dp = dp.wrapping_offset(lo as isize * ds);
        let sp = sp.wrapping_offset(lo as isize * ss);
        if fresh >= len {
            // SAFETY: (1).
            return unsafe { self.kept(level, dp, ds, sp, ss, len, first) };
        }
        // SAFETY: (1) the output element holds `len` elements (var: `lo` is
        // 0), the first `fresh` of them written before.
        unsafe {
            let old = self.kept(level, dp, ds, sp, ss, fresh, first)?;
            let at = fresh as isize;
            let new = self.kept(
                level,
                dp.wrapping_offset(at * ds),
                ds,
                sp.wrapping_offset(at * ss),
                ss,
                len - fresh,
                true,
            )?;
            Ok(old + new)
        }
    }

    /// [`Walker::dim`] at a kept dim: its `len` elements, `ds` and `ss`
    /// bytes apart from `dp` and `sp`.
    ///
    /// # Safety
    /// 1. `len` output and source elements of the dims below `level` lie
    ///    at those strides, as [`Walker::walk`] needs them.
    #[allow(clippy::too_many_arguments)]
    unsafe fn kept(
        &self,
        level: usize,
        dp: *mut u8,
        ds: isize,
        sp: *const u8,
        ss: isize,
        len: usize,
        first: bool,
    ) -> Result<usize> {
        if len == 0 {
            return Ok(0);
        }
        let last = level + 1 == self.dims.len();
        if last {
            // SAFETY: (1) len elements of each at their strides.
            unsafe { self.init_or_accumulate(self.span(dp, ds, sp, ss, len), first) }?;
            return Ok(len);
        }
        if let Some(Dim {
            dst: DstDim::Reduced,
            src: SrcDim::Var {
                stride: vs,
                offset: vo,
            },
            ..
        }) = self.dims.get(level + 1)
            && level + 2 == self.dims.len()
            && self.divide_at.is_none()
        {
            // The ragged reduction (`N * var * T` over its var dim): each row
            // folds straight into its output element — what `walk` would do
            // one level down, without its per-row calls. Built-in folds run
            // it as one segmented loop (the loop selector's ragged rows).
            let rows = Rows {
                data: sp,
                stride: ss,
                n: len,
                offset: *vo,
                elem_stride: *vs,
            };
            let out = self.span(dp, ds, sp, ss, len);
            // SAFETY: (1) the dim's len elements are var dim data whose rows
            // hold readable values; output elements j at ds from dp.
            if let Some(total) = unsafe { self.op.fold_rows(out, rows, first) }? {
                return Ok(total);
            }
            let mut total = 0usize;
            for j in 0..len {
                let d = out.dst_at(j);
                // SAFETY: (1) element j of the dim is a var dim's data.
                let (row, size) = unsafe { rows.row(j) };
                if size == 0 {
                    if first {
                        // SAFETY: (1) output element j.
                        unsafe { self.fill(level + 2, d, level + 1) }?;
                    }
                    continue;
                }
                // SAFETY: (1) the row's `size` elements at stride vs.
                unsafe { self.op.fold(self.span(d, 0, row, *vs, size), first) }?;
                total += size;
            }
            return Ok(total);
        }
        let mut total = 0usize;
        for j in 0..len as isize {
            // SAFETY: (1) element j of the dim, in source and output.
            total += unsafe {
                self.walk(
                    level + 1,
                    dp.wrapping_offset(j * ds),
                    sp.wrapping_offset(j * ss),
                    first,
                    false,
                )
            }?;
        }
        Ok(total)
    }

    /// Writes the identity into every output element under `dst` (the dims
    /// from `level` on): the reduced dim at `empty` had no elements. An op
    /// without identity fails if there is any such element.
    ///
    /// # Safety
    /// 1. `dst` is a writable output element of the dims from `level` on.
    unsafe fn fill(&self, level: usize, dst: *mut u8, empty: usize) -> Result<()> {
        let op = self.op;
        let mut fill = |r: Span<'_>| {
            if r.n == 0 {
                Ok(())
            } else if !op.has_identity() {
                // Only an output element left without a value is an error.
                Err(self.empty(empty))
            } else {
                // SAFETY: `each_output` passes runs of output elements.
                unsafe { op.fill(r) }
            }
        };
        // SAFETY: (1).
        unsafe { self.each_output(level, dst, std::ptr::null(), &mut fill) }
    }

    /// Calls `f` on every run of output elements under `dst` (the kept dims
    /// from `level` on), with the matching place of a side buffer at `aux`
    /// (the dims' aux strides). Unwritten var elements are empty.
    ///
    /// # Safety
    /// 1. `dst` is an output element of the dims from `level` on, and
    ///    `aux` addresses a side buffer laid out by the aux strides (or
    ///    they are all 0).
    unsafe fn each_output(
        &self,
        level: usize,
        dst: *mut u8,
        aux: *const u8,
        f: &mut Visit<'_>,
    ) -> Result<()> {
        let Some(l) = (level..self.dims.len()).find(|&l| !self.dims[l].reduced()) else {
            return f(self.span(dst, 0, aux, 0, 1));
        };
        let d = &self.dims[l];
        let (dp, ds, n) = match (&d.src, &d.dst) {
            (_, DstDim::Var(v)) => {
                // SAFETY: (1) the output element is a var dim's data.
                let dv: VarDimData = unsafe { read(dst) };
                if dv.begin.is_null() {
                    return Ok(());
                }
                (dv.begin.wrapping_offset(v.offset), v.stride, dv.size)
            }
            (SrcDim::Fixed { size, .. }, DstDim::Fixed { stride }) => (dst, *stride, *size),
            _ => {
                return Err(Error::invalid_argument(format!(
                    "{}: a kept fixed output dim over a var source dim",
                    self.info.name
                )));
            }
        };
        if self.dims[l + 1..].iter().all(Dim::reduced) {
            return f(self.span(dp, ds, aux, d.aux, n));
        }
        for j in 0..n as isize {
            // SAFETY: (1) element j of the dim, in the output and the side
            // buffer.
            unsafe {
                self.each_output(
                    l + 1,
                    dp.wrapping_offset(j * ds),
                    aux.wrapping_offset(j * d.aux),
                    f,
                )
            }?;
        }
        Ok(())
    }

    /// Reduces `src` into a tree of states ([`Finish::States`]), then writes
    /// each state's result into the output `dst` (allocating its var
    /// elements as long as the tree's).
    ///
    /// # Safety
    /// 1. As [`Walker::walk`] at level 0; the plan's op is a
    ///    [`super::ops::Staged`] op with states of at most `states.elem`
    ///    bytes.
    unsafe fn reduce_states(&self, states: &States, dst: *mut u8, src: *const u8) -> Result<()> {
        let block = MemBlock::new_pod_allocator(0);
        let (dims, root) = states.tree(self.dims, &block)?;
        // 16-byte aligned, zeroed: var elements of the tree start empty.
        let mut tree = vec![0u128; root.div_ceil(size_of::<u128>())];
        let tree = tree.as_mut_ptr().cast::<u8>();
        let at = Cell::new(0i64);
        let walker = Walker {
            dims: &dims,
            positions: states.weights.as_deref().map(|w| (w, &at)),
            ..*self
        };
        // SAFETY: (1) the source as the caller promises; the tree's root
        // holds the kept dims' states (or var elements) as `tree` laid out
        // the dims, and its var dims allocate from `block`.
        unsafe { walker.walk(0, tree, src, true, false) }?;
        // SAFETY: (1) the walk left a state (reset, folded into) in every
        // place of the tree that an output element has.
        unsafe { self.write_results(&dims, 0, dst, tree) }
    }

    /// Writes the result of each state of the tree at `state` (laid out by
    /// `tree`'s kept dims from `level` on) into the output element `dst`.
    ///
    /// # Safety
    /// 1. `dst` is a writable output element, and `state` a tree of states
    ///    written by [`Walker::reduce_states`], of the dims from `level` on.
    unsafe fn write_results(
        &self,
        tree: &[Dim],
        level: usize,
        dst: *mut u8,
        state: *mut u8,
    ) -> Result<()> {
        let Some(l) = (level..self.dims.len()).find(|&l| !self.dims[l].reduced()) else {
            // SAFETY: (1) one state and its output element.
            return unsafe { self.op.finish(dst, state) };
        };
        let (dp, ds, sp, ss, n) = match (&self.dims[l].dst, &tree[l].dst, self.dims[l].src) {
            (
                DstDim::Fixed { stride: ds },
                DstDim::Fixed { stride: ss },
                SrcDim::Fixed { size, .. },
            ) => (dst, *ds, state, *ss, size),
            (DstDim::Var(v), DstDim::Var(t), _) => {
                // SAFETY: (1) the tree's element is a var dim's data.
                let sv: VarDimData = unsafe { read(state) };
                if sv.begin.is_null() || sv.size == 0 {
                    // No row reached it: an empty output element.
                    return Ok(());
                }
                let begin = v.allocate(sv.size, &self.info.dst_tp)?;
                let dv = VarDimData {
                    begin,
                    size: sv.size,
                };
                // SAFETY: (1) the output element is a var dim's data.
                unsafe { dst.cast::<VarDimData>().write_unaligned(dv) };
                (begin, v.stride, sv.begin, t.stride, sv.size)
            }
            _ => {
                return Err(Error::invalid_argument(format!(
                    "{}: the tree of states does not match the output {}",
                    self.info.name, self.info.dst_tp
                )));
            }
        };
        for j in 0..n as isize {
            // SAFETY: (1) element j of the dim, in the output and the tree.
            unsafe {
                self.write_results(
                    tree,
                    l + 1,
                    dp.wrapping_offset(j * ds),
                    sp.wrapping_offset(j * ss),
                )
            }?;
        }
        Ok(())
    }

    /// The error for an empty extent of an op without identity.
    fn empty(&self, level: usize) -> Error {
        let i = &self.info;
        let axis = self.dims.get(level).map_or(0, |d| d.axis);
        let below = &self.dims[..level.min(self.dims.len())];
        let across = below
            .iter()
            .position(Dim::reduced)
            .is_some_and(|r| below[r..].iter().any(|d| !d.reduced()));
        Error::invalid_argument(format!(
            "{} of an empty extent: an output element gets no values of {} at axis {axis} (and the reduced axes inside it), and {} has no identity{}",
            i.name,
            i.src_tp,
            i.name,
            if across {
                " (where a kept dim lies between reduced axes, an output element's values must start in the first row of the outer reduced axis)"
            } else {
                ""
            }
        ))
    }

    /// The error for an output var element whose length differs from the
    /// source's.
    fn ragged(&self, level: usize, have: usize, got: usize) -> Error {
        let i = &self.info;
        let axis = self.dims[level].axis;
        match self.dims[..level].iter().rev().find(|d| d.reduced()) {
            Some(outer) => Error::broadcast(format!(
                "cannot reduce over axis {} of {}: its elements are ragged (the var dim at axis {axis} has lengths {have} and {got})",
                outer.axis, i.src_tp
            )),
            None => Error::broadcast(format!(
                "cannot write the {} of {} into {}: an output element at axis {axis} has length {have}, the source's {got}",
                i.name, i.src_tp, i.dst_tp
            )),
        }
    }
}
