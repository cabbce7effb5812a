//! Elementwise lifting of scalar callables, written once for every scalar
//! callable, ours or a third party's.
//!
//! Output dims broadcast the arguments' dims, aligned from the right:
//!
//! | dims met at one position | output dim |
//! |---|---|
//! | fixed N and fixed N, or fixed N and fixed 1 | fixed N |
//! | var and fixed N (N ≠ 1) | fixed N (each var element must have N elements, or 1) |
//! | var and var, or var and fixed 1 | var (element sizes must agree, or be 1) |
//! | fixed N and fixed M (N ≠ M, neither 1) | a broadcast error naming both shapes |
//!
//! The kernel is the generic lifter (`kernels::lift`) over the
//! scalar callable's kernel; var outputs are allocated as it runs.
//!
//! The flat case comes first: when every argument is a scalar or
//! C-contiguous fixed dims of one shape (and a preallocated output is too,
//! of the computed element type), the call is one strided loop of the
//! scalar kernel over all elements, resolved and built with no per-dim
//! work. That is what makes a 10-element call cheap and a large one a
//! single vectorised loop (split in ranges across threads when large).
//!
//! Large calls whose output has a fixed outermost dim run that outer loop
//! on the executor's threads (`exec`): one kernel is built for the rows and called from
//! several threads at once, each on its own rows (about 64K elements per
//! task, DESIGN §10). Results equal the serial ones bit for bit: each
//! element is computed by the same kernel either way.

use super::{Callable, missing, no_match};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::exec::{self, SPLIT_MIN, Shared, TASK_ELEMENTS};
use crate::kernels::broadcast::{self, Mismatch, dims_of, dims_through_options};
use crate::kernels::loops::{
    MAX_ROW_OPERANDS, RowCutter, RowRun, Rows, stream_copy, stream_fence, streams_bytes,
};
use crate::kernels::{CKernelBuilder, KernelRequest};
use crate::kernels::{KernelArgs, lift};
use crate::layout::{FixedDimMeta, VarDimData, VarDimMeta};
use crate::types::{BuiltinType, Type, TypeKind};
use smallvec::SmallVec;
use std::cell::RefCell;
use std::mem::size_of;
use std::pin::{Pin, pin};
use std::rc::Rc;

/// The broadcast of the arguments' leading dims (`Some(n)` fixed, `None` var),
/// by the one rule of `kernels::broadcast`.
pub fn broadcast_dims(args: &[Type]) -> Result<Vec<Option<usize>>> {
    let all: Vec<_> = args.iter().map(dims_of).collect();
    broadcast_outer(args, &all)
}

/// [`broadcast_dims`] of the outer dims `all[i]` of each argument `args[i]`.
fn broadcast_outer(args: &[Type], all: &[Dims]) -> Result<Vec<Option<usize>>> {
    let nd = all.iter().map(|d| d.len()).max().unwrap_or(0);
    let mut out = Vec::with_capacity(nd);
    for pos in 0..nd {
        let mut cur: Option<Option<usize>> = None;
        for d in all {
            let Some(k) = (pos + d.len()).checked_sub(nd) else {
                continue;
            };
            cur = Some(match cur {
                None => d[k],
                Some(c) => broadcast::combine(c, d[k]).map_err(|why| {
                    let tps: Vec<&Type> = args.iter().collect();
                    broadcast::broadcast_error(&tps, None, why)
                })?,
            });
        }
        out.push(cur.flatten());
    }
    Ok(out)
}

/// Leading dims, `Some(n)` fixed, `None` var.
type Dims = SmallVec<[Option<usize>; 8]>;

/// The arguments of a scalar callable split into the dims lifted over and
/// the elements its kernel sees, by its per-argument core dims
/// ([`super::CallableImpl::core_dims`]).
struct Split {
    /// Each argument's outer (lifted) dims.
    outer: Vec<Dims>,
    /// Each argument's element: the type under its outer dims.
    elems: Vec<Type>,
}

impl Split {
    /// Splits `args` with `cores[i]` core dims of argument `i` (none when
    /// `cores` is `None`): the outer dims are the leading dims but the
    /// last `cores[i]` (counted through options of dims, as the lifter
    /// counts), never more than the leading dims themselves.
    fn of(args: &[Type], cores: Option<&[usize]>) -> Split {
        let mut split = Split {
            outer: Vec::with_capacity(args.len()),
            elems: Vec::with_capacity(args.len()),
        };
        for (i, tp) in args.iter().enumerate() {
            let mut dims = dims_of(tp);
            let core = cores.and_then(|c| c.get(i)).copied().unwrap_or(0);
            let keep = dims_through_options(tp)
                .len()
                .saturating_sub(core)
                .min(dims.len());
            dims.truncate(keep);
            let mut elem = tp;
            for _ in 0..keep {
                elem = elem.dim_elem().unwrap_or(elem);
            }
            split.outer.push(dims);
            split.elems.push(elem.clone());
        }
        split
    }
}

/// The argument types as references ([`CallableImpl::core_dims`] takes
/// them so, without a reference count each on the hot path).
fn type_refs(tps: &[Type]) -> SmallVec<[&Type; 4]> {
    tps.iter().collect()
}

/// The output type of a scalar callable over whole argument types.
pub fn resolve(f: &Callable, args: &[Type]) -> Result<Type> {
    let cores = f.implementation().core_dims(&type_refs(args));
    let Split {
        outer,
        elems: dtypes,
    } = Split::of(args, cores.as_deref());
    let dims = broadcast_outer(args, &outer)?;
    let mut tp = missing::resolve(f.implementation(), &dtypes).map_err(|e| {
        // One sentence per failure: a plain "does not accept" for the
        // element types is said once, of the whole types; a more specific
        // message (which names the element types) stands alone.
        let plain = format!("{} does not accept arguments (", f.name());
        if e.kind() == crate::ErrorKind::Type
            && e.message().starts_with(&plain)
            && args.iter().any(|a| a.is_dim())
        {
            no_match(f.name(), f.signature(), args)
        } else {
            e
        }
    })?;
    for d in dims.iter().rev() {
        tp = match d {
            Some(n) => Type::fixed_dim(*n, tp),
            None => Type::var_dim(tp),
        };
    }
    Ok(tp)
}

/// Builds the lifted kernel of scalar callable `f`.
///
/// # Safety
/// As [`super::CallableImpl::instantiate`].
pub(crate) unsafe fn instantiate(
    f: &Callable,
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: KernelArgs<'_>,
) -> Result<usize> {
    let imp = f.implementation();
    let mut leaf = |ckb: Pin<&mut CKernelBuilder>, at, el: KernelArgs<'_>| {
        // SAFETY: make_lifted calls the leaf under the promises of
        // CallableImpl::instantiate; missing::instantiate checks the
        // element types (with options) against the scalar callable's.
        unsafe { missing::instantiate(imp, ckb, at, el) }
    };
    let Some(cores) = imp.core_dims(&type_refs(args.src_tps)) else {
        lift::check_broadcast(args.dst_tp, args.src_tps)?;
        // SAFETY: the caller's promises are make_lifted's.
        return unsafe { lift::make_lifted(ckb, offset, args, &mut leaf) };
    };
    // Core dims: lift exactly the outer dims. The destination's are those
    // over the element result (which has its own dims).
    let split = Split::of(args.src_tps, Some(&cores));
    let elem = missing::resolve(imp, &split.elems)?;
    let dst_dims = dims_of(args.dst_tp);
    let k = dst_dims.len().saturating_sub(dims_of(&elem).len());
    for (s_tp, s) in args.src_tps.iter().zip(&split.outer) {
        broadcast::check_dims((args.dst_tp, &dst_dims[..k]), (s_tp, s))?;
    }
    let outer = lift::Outer {
        dst: k,
        srcs: split.outer.iter().map(SmallVec::len).collect(),
    };
    // SAFETY: the caller's promises are make_lifted's (1)-(3); (4) the
    // destination has `k` leading dims (counted above), each source as many
    // as its split counted, at most `k` (checked).
    unsafe { lift::make_lifted_outer(ckb, offset, args, &outer, &mut leaf) }
}

/// Runs a scalar callable on arrays by the first of its fast paths that
/// fits — the one place that chooses among them:
///
/// 1. flat: every argument a scalar or C-contiguous of one shape, one
///    strided loop over all elements ([`call_flat`]);
/// 2. ragged, into a new output: `N * var * T` arguments with equal rows,
///    one strided loop per run of rows ([`call_ragged`]);
/// 3. parallel, into an existing output with a large fixed outer dim: the
///    outer loop split by the executor ([`call_parallel`]).
///
/// `None`: the general lifter runs the call (and words any error).
pub(crate) fn call_selected(
    f: &Callable,
    out: Option<&Array>,
    args: &[&Array],
) -> Option<Result<Array>> {
    // The fast paths lift every dim: a call with core dims is the lifter's.
    let tps: SmallVec<[&Type; 4]> = args.iter().map(|a| a.tp()).collect();
    if f.implementation().core_dims(&tps).is_some() {
        return None;
    }
    if let Some(r) = call_flat(f, out, args) {
        return Some(r);
    }
    match out {
        None => call_ragged(f, args),
        Some(out) if can_run_parallel(out, args) => {
            Some(call_parallel(f, out, args).map(|()| out.clone()))
        }
        Some(_) => None,
    }
}

/// `true` when a call is worth splitting across threads: a fixed outer
/// output dim with at least two tasks' worth of elements, and more than one
/// thread to run them.
fn can_run_parallel(out: &Array, _args: &[&Array]) -> bool {
    let TypeKind::FixedDim { size, elem } = out.tp().kind() else {
        return false;
    };
    let dtype_size = out.tp().dtype().data_size().max(1);
    let elements = size.saturating_mul(elem.data_size().max(dtype_size) / dtype_size);
    *size >= 2 && elements >= SPLIT_MIN && exec::num_threads() > 1
}

/// Runs a scalar callable with the outer loop split by the executor.
fn call_parallel(f: &Callable, out: &Array, args: &[&Array]) -> Result<()> {
    let tps: Vec<Type> = args.iter().map(|a| a.tp().clone()).collect();
    lift::check_broadcast(out.tp(), &tps)?;
    let TypeKind::FixedDim {
        size: n,
        elem: out_elem,
    } = out.tp().kind()
    else {
        return Err(Error::invalid_argument(
            "parallel call needs a fixed outer dim",
        ));
    };
    let n = *n;
    // SAFETY: the output's arrmeta starts with its fixed dim.
    let om: FixedDimMeta =
        unsafe { std::ptr::read_unaligned(out.arrmeta_ptr() as *const FixedDimMeta) };
    // SAFETY: the element arrmeta follows.
    let out_elem_meta = unsafe { out.arrmeta_ptr().add(size_of::<FixedDimMeta>()) };
    // Peel the outer dim off each argument that has it.
    let mut el_tps = Vec::with_capacity(args.len());
    let mut el_metas = Vec::with_capacity(args.len());
    let mut firsts = Vec::with_capacity(args.len());
    let mut strides = Vec::with_capacity(args.len());
    for a in args {
        if a.ndim() < out.ndim() {
            el_tps.push(a.tp().clone());
            el_metas.push(a.arrmeta_ptr());
            firsts.push(a.data_ptr() as *const u8);
            strides.push(0isize);
            continue;
        }
        match a.tp().kind() {
            TypeKind::FixedDim { size, elem } => {
                // SAFETY: fixed dim arrmeta, then the element's.
                let m: FixedDimMeta =
                    unsafe { std::ptr::read_unaligned(a.arrmeta_ptr() as *const FixedDimMeta) };
                el_tps.push(elem.clone());
                // SAFETY: fixed dim arrmeta, then the element's.
                el_metas.push(unsafe { a.arrmeta_ptr().add(size_of::<FixedDimMeta>()) });
                firsts.push(a.data_ptr() as *const u8);
                strides.push(if *size == n { m.stride } else { 0 });
            }
            TypeKind::VarDim { elem } => {
                // SAFETY: var dim arrmeta; the outermost var dim's data is
                // one element.
                let (m, d): (VarDimMeta, VarDimData) = unsafe {
                    (
                        std::ptr::read_unaligned(a.arrmeta_ptr() as *const VarDimMeta),
                        std::ptr::read_unaligned(a.data_ptr() as *const VarDimData),
                    )
                };
                if !broadcast::fits(d.size, n) {
                    return Err(broadcast::broadcast_error(
                        &[a.tp()],
                        Some(out.tp()),
                        Mismatch::Size {
                            from: d.size,
                            into: n,
                        },
                    ));
                }
                el_tps.push(elem.clone());
                // SAFETY: the element's arrmeta follows.
                el_metas.push(unsafe { a.arrmeta_ptr().add(size_of::<VarDimMeta>()) });
                firsts.push(d.begin.wrapping_offset(m.offset) as *const u8);
                strides.push(if d.size == n { m.stride } else { 0 });
            }
            _ => return Err(Error::type_error(format!("cannot lift over {}", a.tp()))),
        }
    }
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: a new builder; the element arrmeta pointers are inside the
    // arrays' arrmeta, which outlive the call.
    unsafe {
        f.instantiate(
            ckb.as_mut(),
            0,
            KernelArgs::new(
                out_elem,
                out_elem_meta,
                &el_tps,
                &el_metas,
                KernelRequest::Strided,
            ),
        )?;
    }
    let ckb: &CKernelBuilder = &ckb;
    let dtype_size = out.tp().dtype().data_size().max(1);
    let per_row = (out_elem.data_size() / dtype_size).max(1);
    let rows = (TASK_ELEMENTS / per_row).max(1);
    // SAFETY: the kernel was built for Strided on the row types; the `n`
    // output rows are writable and every source row is readable.
    unsafe {
        run_strided_split(
            ckb,
            out.data_ptr(),
            om.stride,
            &firsts,
            &strides,
            n,
            rows,
            false,
        )
    }
}

// ------------------------------------------------------------------ flat case

/// The arguments of a call in the flat case: each is a scalar or
/// C-contiguous fixed dims of one common shape, so the whole call is one
/// strided loop of the scalar kernel over every element (NumPy's "trivial
/// loop"). Calls take this path before the general lifter; it resolves,
/// builds and runs with no per-dim work and no broadcasting analysis.
struct FlatArgs<'a> {
    /// Each argument's element type.
    dtypes: SmallVec<[Type; 4]>,
    /// Each argument's element arrmeta (after its dims' arrmeta).
    metas: SmallVec<[*const u8; 4]>,
    /// Each argument's byte stride per element (0 for a scalar).
    strides: SmallVec<[isize; 4]>,
    /// An argument with the common shape (its type gives the dims), if any.
    shaped: Option<&'a Array>,
    /// The number of dims of the common shape.
    ndim: usize,
    /// Elements in the shape.
    count: usize,
}

/// One argument of a flat call: C-contiguous fixed dims over a non-dim
/// element ([`Array::c_contiguous_parts`], without collecting the shape).
struct Contiguous<'a> {
    /// The element type.
    dtype: &'a Type,
    /// The element's arrmeta.
    meta: *const u8,
    /// The number of fixed dims.
    ndim: usize,
    /// The number of elements (`None`: it overflows).
    count: Option<usize>,
}

/// `a` as a [`Contiguous`] argument, or `None` when it is not one.
fn contiguous(a: &Array) -> Option<Contiguous<'_>> {
    let mut tp = a.tp();
    let mut meta = a.arrmeta_ptr();
    let mut ndim = 0;
    let mut count = Some(1usize);
    // Walk the dims, checking C order from the outside in: each stride
    // must be the size of its element (dims of size 1 take any stride).
    while let TypeKind::FixedDim { size, elem } = tp.kind() {
        // SAFETY: a fixed dim's arrmeta starts with its FixedDimMeta, and
        // the element's arrmeta follows (DESIGN §4).
        let m = unsafe { std::ptr::read_unaligned(meta as *const FixedDimMeta) };
        if *size != 1 && m.stride != elem.data_size() as isize {
            return None;
        }
        // SAFETY: as above.
        meta = unsafe { meta.add(size_of::<FixedDimMeta>()) };
        tp = elem;
        ndim += 1;
        count = count.and_then(|c| c.checked_mul(*size));
    }
    if tp.is_dim() {
        return None;
    }
    Some(Contiguous {
        dtype: tp,
        meta,
        ndim,
        count,
    })
}

/// `true` when `a` and `b` have the same `ndim` leading fixed dims.
fn same_dims(a: &Type, b: &Type, ndim: usize) -> bool {
    let (mut a, mut b) = (a, b);
    for _ in 0..ndim {
        match (a.kind(), b.kind()) {
            (
                TypeKind::FixedDim { size: n, elem: ea },
                TypeKind::FixedDim { size: m, elem: eb },
            ) if n == m => (a, b) = (ea, eb),
            _ => return false,
        }
    }
    true
}

fn flat_args<'a>(args: &[&'a Array]) -> Option<FlatArgs<'a>> {
    let mut flat = FlatArgs {
        dtypes: SmallVec::new(),
        metas: SmallVec::new(),
        strides: SmallVec::new(),
        shaped: None,
        ndim: 0,
        count: 1,
    };
    for a in args {
        let c = contiguous(a)?;
        flat.strides.push(if c.ndim == 0 {
            0
        } else {
            c.dtype.data_size() as isize
        });
        flat.dtypes.push(c.dtype.clone());
        flat.metas.push(c.meta);
        if c.ndim == 0 {
            continue;
        }
        match flat.shaped {
            None => {
                flat.count = c.count?;
                flat.ndim = c.ndim;
                flat.shaped = Some(a);
            }
            // Different shapes broadcast (or fail): the general path.
            Some(s) if c.ndim != flat.ndim || !same_dims(s.tp(), a.tp(), c.ndim) => return None,
            Some(_) => {}
        }
    }
    Some(flat)
}

/// Calls scalar callable `f` in the flat case, into a new output (`out`
/// `None`) or into `out`; `None` when the call is not flat (or the types do
/// not resolve: the general path then reports the error in full).
fn call_flat(f: &Callable, out: Option<&Array>, args: &[&Array]) -> Option<Result<Array>> {
    let flat = flat_args(args)?;
    let imp = f.implementation();
    let key = KernelKey::of(f, &flat.dtypes);
    let cached = key.as_ref().and_then(KernelKey::find);
    let dtype = match &cached {
        Some(k) => k.dtype.clone(),
        None => missing::resolve(imp, &flat.dtypes).ok()?,
    };
    let fresh = out.is_none();
    let out = match out {
        Some(out) => {
            let c = contiguous(out)?;
            let same_shape = match flat.shaped {
                Some(s) => c.ndim == flat.ndim && same_dims(s.tp(), out.tp(), c.ndim),
                None => c.ndim == 0,
            };
            if !same_shape || c.dtype != &dtype {
                return None;
            }
            out.clone()
        }
        None => {
            if dtype.arrmeta_size() != 0 {
                return None;
            }
            let tp = match flat.shaped {
                Some(a) => with_dtype(a.tp(), flat.ndim, &dtype),
                None => dtype.clone(),
            };
            // Every element is written by the loop (or the array is dropped
            // with the error), so the data need not be zeroed first.
            match Array::empty_for_overwrite(tp) {
                Ok(a) => a,
                Err(e) => return Some(Err(e)),
            }
        }
    };
    Some(run_flat(f, &out, fresh, &dtype, &flat, args, key, cached).map(|()| out))
}

/// Builds scalar callable `f`'s strided kernel, missing values handled,
/// for these element types at offset 0 of the fresh builder `ckb`.
///
/// # Safety
/// 1. `out_meta` and `metas` are arrmeta of `dtype` and `dtypes` (null for
///    a type without arrmeta) that outlive the kernel.
/// 2. `dtype` is what `f` resolved for `dtypes`.
unsafe fn build_strided(
    f: &Callable,
    ckb: Pin<&mut CKernelBuilder>,
    dtype: &Type,
    out_meta: *const u8,
    dtypes: &[Type],
    metas: &[*const u8],
) -> Result<()> {
    let args = KernelArgs::new(dtype, out_meta, dtypes, metas, KernelRequest::Strided);
    // SAFETY: a fresh builder's offset 0 is free; (1) and (2).
    unsafe { missing::instantiate(f.implementation(), ckb, 0, args) }.map(|_| ())
}

/// The `ndim` leading fixed dims of `tp` over `dtype` (`tp` itself when
/// its element is `dtype` already).
fn with_dtype(tp: &Type, ndim: usize, dtype: &Type) -> Type {
    match tp.kind() {
        _ if ndim == 0 => dtype.clone(),
        TypeKind::FixedDim { size, elem } => {
            if tp.dtype() == dtype {
                tp.clone()
            } else {
                Type::fixed_dim(*size, with_dtype(elem, ndim - 1, dtype))
            }
        }
        _ => dtype.clone(),
    }
}

/// Runs a flat call into `out`: with the kernel `cached` for its key, or
/// with one built now (and kept for the next call when there is a `key`).
#[allow(clippy::too_many_arguments)]
fn run_flat(
    f: &Callable,
    out: &Array,
    fresh: bool,
    dtype: &Type,
    flat: &FlatArgs<'_>,
    args: &[&Array],
    key: Option<KernelKey>,
    cached: Option<KeptKernel>,
) -> Result<()> {
    if flat.count == 0 {
        return Ok(());
    }
    let ckb = match cached {
        Some(k) => k.kernel,
        None => {
            let out_meta = {
                let nd = flat.ndim;
                // SAFETY: the output has `nd` fixed dims, whose arrmeta comes first.
                unsafe { out.arrmeta_ptr().add(nd * size_of::<FixedDimMeta>()) }
            };
            let mut ckb = Box::pin(CKernelBuilder::new());
            // SAFETY: (1) the element arrmeta pointers lie inside the
            // arrays' arrmeta, which outlive the call; (2) `dtype` is what
            // the scalar callable resolved for these element types.
            unsafe { build_strided(f, ckb.as_mut(), dtype, out_meta, &flat.dtypes, &flat.metas)? };
            let ckb = Rc::new(ckb);
            if let Some(key) = key {
                key.keep(
                    f,
                    KeptKernel {
                        dtype: dtype.clone(),
                        kernel: ckb.clone(),
                    },
                );
            }
            ckb
        }
    };
    let srcs: SmallVec<[*const u8; 4]> = args.iter().map(|a| a.data_ptr() as *const u8).collect();
    // SAFETY: (1) built for Strided on the element types above; (2)
    // `count` elements at these strides lie in each array's data
    // (C-contiguous of the common shape, or a scalar read with stride 0);
    // (3) a `fresh` output is the new array `call_flat` made, which no
    // argument overlaps, of a dtype without arrmeta (it checked), and
    // contiguous.
    unsafe {
        run_strided_split(
            &ckb,
            out.data_ptr(),
            dtype.data_size() as isize,
            &srcs,
            &flat.strides,
            flat.count,
            TASK_ELEMENTS,
            fresh
                && one_stream_read(&flat.strides)
                && streams_bytes(dtype.data_size() as isize, dtype.data_size(), flat.count),
        )
    }
}

/// How many kernels of flat calls each thread keeps.
const KEPT_KERNELS: usize = 8;

/// A flat call's kernel kept for later calls ([`KernelKey`]), and the
/// element type it computes.
#[derive(Clone)]
struct KeptKernel {
    dtype: Type,
    /// Built for `KernelRequest::Strided`; never moved (pinned in its box).
    kernel: Rc<Pin<Box<CKernelBuilder>>>,
}

thread_local! {
    /// The kernels this thread's flat calls built lately, newest last: a
    /// program calls the same function on the same types again and again
    /// (`a + b` in a loop), and a kernel found here spares such a call the
    /// resolution, the checks and the build. Per thread, so a kernel is
    /// only ever called, and dropped, by the thread that built it.
    static KEPT: RefCell<Vec<Kept>> = const { RefCell::new(Vec::new()) };
}

/// A kept kernel and its key.
struct Kept {
    /// The callable of the key, held so that its address is not reused
    /// while the kernel is kept.
    _f: Callable,
    key: KernelKey,
    kernel: KeptKernel,
}

/// What a flat call's kernel depends on, for a callable that says its
/// kernels depend on nothing else ([`super::CallableImpl::reuses_kernels`]):
/// the callable and its arguments' element types, all builtin (which have
/// no arrmeta for a kernel to read).
#[derive(PartialEq, Eq)]
struct KernelKey {
    /// The callable's address ([`Kept`] holds the callable).
    f: *const (),
    dtypes: [Option<BuiltinType>; MAX_KEPT_ARGS],
}

/// The most arguments a kept kernel takes.
const MAX_KEPT_ARGS: usize = 4;

impl KernelKey {
    /// The key of a flat call of `f` on element types `dtypes`, when its
    /// kernel may be kept.
    fn of(f: &Callable, dtypes: &[Type]) -> Option<KernelKey> {
        if dtypes.len() > MAX_KEPT_ARGS || !f.implementation().reuses_kernels() {
            return None;
        }
        let mut key = [None; MAX_KEPT_ARGS];
        for (k, t) in key.iter_mut().zip(dtypes) {
            *k = Some(t.as_builtin()?);
        }
        Some(KernelKey {
            f: f.addr(),
            dtypes: key,
        })
    }

    /// The kernel kept for this key on this thread.
    fn find(&self) -> Option<KeptKernel> {
        // `try_with`: during the thread's teardown, build anew.
        KEPT.try_with(|kept| {
            let kept = kept.borrow();
            kept.iter()
                .rev()
                .find(|k| k.key == *self)
                .map(|k| k.kernel.clone())
        })
        .ok()
        .flatten()
    }

    /// Keeps `kernel` for this key, of callable `f`, on this thread
    /// (forgetting the oldest kept when full).
    fn keep(self, f: &Callable, kernel: KeptKernel) {
        let _ = KEPT.try_with(|kept| {
            let mut kept = kept.borrow_mut();
            if kept.len() == KEPT_KERNELS {
                kept.remove(0);
            }
            kept.push(Kept {
                _f: f.clone(),
                key: self,
                kernel,
            });
        });
    }
}

// ---------------------------------------------------------------- ragged case

/// An `N * var * T` argument of a ragged call (T not a dim).
struct VarArg<'a> {
    /// The outer dim's rows (the loop selector's ragged view of them).
    rows: Rows,
    dtype: &'a Type,
    /// The element arrmeta (after the two dims').
    meta: *const u8,
}

impl<'a> VarArg<'a> {
    fn of(a: &'a Array) -> Option<VarArg<'a>> {
        let TypeKind::FixedDim { size: n, elem } = a.tp().kind() else {
            return None;
        };
        let TypeKind::VarDim { elem: dtype } = elem.kind() else {
            return None;
        };
        if dtype.is_dim() {
            return None;
        }
        // SAFETY: `N * var * T` arrmeta: the fixed dim's, the var dim's,
        // then the element's (DESIGN §4).
        let (fm, vm) = unsafe {
            (
                std::ptr::read_unaligned(a.arrmeta_ptr() as *const FixedDimMeta),
                std::ptr::read_unaligned(
                    a.arrmeta_ptr().add(size_of::<FixedDimMeta>()) as *const VarDimMeta
                ),
            )
        };
        if vm.stride != dtype.data_size() as isize {
            return None;
        }
        Some(VarArg {
            rows: Rows {
                data: a.data_ptr(),
                stride: fm.stride,
                n: *n,
                offset: vm.offset,
                elem_stride: vm.stride,
            },
            dtype,
            // SAFETY: the element arrmeta follows the two dims'.
            meta: unsafe {
                a.arrmeta_ptr()
                    .add(size_of::<FixedDimMeta>() + size_of::<VarDimMeta>())
            },
        })
    }
}

/// Calls scalar callable `f` into a new output when the arguments are
/// `N * var * T` arrays with equal row sizes, and scalars: each row
/// descriptor is read once, the rows are cut into runs that lie in order
/// in memory ([`RowCutter`]) and the kernel runs once per run — once in all
/// for rows packed in one buffer (as JSON, the builders and this path
/// itself make them), awkward-array's way — and the output's elements are
/// one allocation. `None` when the call is not of that form: the general
/// lifter handles it, and reports any error.
fn call_ragged(f: &Callable, args: &[&Array]) -> Option<Result<Array>> {
    // Each argument: Some(var arg) or None for a scalar.
    let mut vars: SmallVec<[Option<VarArg<'_>>; 4]> = SmallVec::new();
    for a in args {
        if let Some(v) = VarArg::of(a) {
            vars.push(Some(v));
        } else if a.ndim() == 0 {
            vars.push(None);
        } else {
            return None;
        }
    }
    let n = vars.iter().flatten().next()?.rows.n;
    if vars.iter().flatten().any(|v| v.rows.n != n) {
        return None;
    }
    let dtypes: SmallVec<[Type; 4]> = vars
        .iter()
        .zip(args)
        .map(|(v, a)| {
            v.as_ref()
                .map_or_else(|| a.tp().clone(), |v| v.dtype.clone())
        })
        .collect();
    let dtype = missing::resolve(f.implementation(), &dtypes).ok()?;
    if dtype.arrmeta_size() != 0 {
        return None;
    }
    // Rows and runs; rows of different sizes go to the general path.
    // The cutter follows the var arguments only: a scalar never breaks a
    // run. More of them than it follows: the general path.
    let var_rows: SmallVec<[Rows; 4]> = vars.iter().flatten().map(|v| v.rows).collect();
    let kv = var_rows.len();
    let mut cutter = RowCutter::new(kv)?;
    let mut vstarts = [std::ptr::null::<u8>(); MAX_ROW_OPERANDS];
    let mut vstrides = [0isize; MAX_ROW_OPERANDS];
    for (st, r) in vstrides.iter_mut().zip(&var_rows) {
        *st = r.elem_stride;
    }
    let mut sizes = Vec::new();
    // A row with a null `begin` (never allocated): its descriptor must not
    // be shared.
    let mut null_rows = false;
    if let [rows] = var_rows.as_slice() {
        // One var argument (`x + 1.0`): a tight loop over its rows; their
        // sizes are read again only when the output cannot share them.
        let null = std::ptr::null::<u8>().wrapping_offset(rows.offset);
        for i in 0..n {
            // SAFETY: i < n rows, each a readable row descriptor of the
            // argument's fixed dim.
            let (p, size) = unsafe { rows.row(i) };
            null_rows |= p == null;
            cutter.push(&[p], &vstrides[..1], size);
        }
    } else {
        sizes.reserve(n);
        for i in 0..n {
            let mut size = None;
            for (j, rows) in var_rows.iter().enumerate() {
                // SAFETY: i < n rows (every var argument has n, checked
                // above), each a readable row descriptor of its fixed dim.
                let (p, s) = unsafe { rows.row(i) };
                if size.is_some_and(|z| z != s) {
                    return None;
                }
                size = Some(s);
                vstarts[j] = p;
            }
            let size = size.unwrap_or(0);
            sizes.push(size);
            cutter.push(&vstarts[..kv], &vstrides[..kv], size);
        }
    }
    let total = cutter.total();
    let cut = cutter.finish();
    // One var argument whose rows lie in order in one run, of the result's
    // element size: the output shares its row descriptors (no sizes, no
    // descriptors written), awkward-array's way.
    let share = match (var_rows.as_slice(), cut.as_slice()) {
        ([rows], [run]) if !null_rows && rows.elem_stride == dtype.data_size() as isize => {
            let at = vars.iter().position(Option::is_some)?;
            Some((args[at], run.srcs[0]))
        }
        _ => None,
    };
    if share.is_none()
        && let [rows] = var_rows.as_slice()
    {
        // SAFETY: i < n rows, read as above.
        sizes = (0..n).map(|i| unsafe { rows.row(i) }.1).collect();
    }
    // Each run's sources: its var arguments' starts, the scalars' data.
    let runs: Vec<RowRun> = cut
        .into_iter()
        .map(|run| {
            let mut vs = run.srcs.iter();
            let srcs = vars
                .iter()
                .zip(args)
                .map(|(v, a)| match v {
                    Some(_) => vs.next().copied().unwrap_or(std::ptr::null()),
                    None => a.data_ptr() as *const u8,
                })
                .collect();
            RowRun { srcs, ..run }
        })
        .collect();
    let strides: SmallVec<[isize; 4]> = vars
        .iter()
        .map(|v| v.as_ref().map_or(0, |v| v.rows.elem_stride))
        .collect();
    let metas: SmallVec<[*const u8; 4]> = vars
        .iter()
        .zip(args)
        .map(|(v, a)| v.as_ref().map_or_else(|| a.arrmeta_ptr(), |v| v.meta))
        .collect();
    let made = match share {
        // SAFETY: the one var argument's rows all have a begin and lie in
        // order in its one run of `total` elements from `first`.
        Some((src, first)) => unsafe { Array::with_rows_of(src, &dtype, first, total) },
        None => ragged_output(&dtype, &sizes, total),
    };
    Some(made.and_then(|(out, base)| {
        let run = RaggedRun {
            dtype: &dtype,
            dtypes: &dtypes,
            metas: &metas,
            strides: &strides,
        };
        // SAFETY: `base` holds `total` elements of `dtype`, the output's
        // values, which the runs cover.
        unsafe { run.run(f, base, &runs) }?;
        Ok(out)
    }))
}

/// A new `n * var * dtype` output for rows of `sizes` (`total` elements in
/// all), packed in order in one buffer; returns it and the buffer's start.
fn ragged_output(dtype: &Type, sizes: &[usize], total: usize) -> Result<(Array, *mut u8)> {
    let n = sizes.len();
    let out = Array::empty(Type::fixed_dim(n, Type::var_dim(dtype.clone())))?;
    let esize = dtype.data_size();
    // SAFETY: the output is `n * var * dtype` with default arrmeta: the
    // fixed dim's, then the var dim's (whose block is a POD allocator).
    let (fm, vm) = unsafe {
        (
            std::ptr::read_unaligned(out.arrmeta_ptr() as *const FixedDimMeta),
            std::ptr::read_unaligned(
                out.arrmeta_ptr().add(size_of::<FixedDimMeta>()) as *const VarDimMeta
            ),
        )
    };
    let bytes = total
        .checked_mul(esize)
        .ok_or_else(|| Error::alloc(format!("{total} elements of {dtype} are too large")))?;
    // SAFETY: the var dim's blockref is the output's own, alive with it.
    let base = unsafe {
        crate::layout::arrmeta::with_allocator(vm.blockref, |a| {
            // Every element is written by the kernel (or the output is
            // dropped with the error).
            a.allocate_for_overwrite(bytes, dtype.data_alignment())
        })?
    };
    let mut at = 0usize;
    for (i, &size) in sizes.iter().enumerate() {
        let row = VarDimData {
            begin: base.wrapping_add(at * esize).wrapping_offset(-vm.offset),
            size,
        };
        // SAFETY: row i of the output's fixed dim, a writable VarDimData.
        unsafe {
            std::ptr::write_unaligned(
                out.data_ptr().offset(i as isize * fm.stride) as *mut VarDimData,
                row,
            )
        };
        at += size;
    }
    Ok((out, base))
}

/// The element operands of a ragged call.
struct RaggedRun<'a> {
    /// The result's element type (no arrmeta).
    dtype: &'a Type,
    dtypes: &'a [Type],
    metas: &'a [*const u8],
    /// Each argument's element stride (0: a scalar).
    strides: &'a [isize],
}

impl RaggedRun<'_> {
    /// Runs scalar callable `f` over `segments`, writing the output's
    /// elements from `base` on.
    ///
    /// # Safety
    /// 1. `base` is writable for every element the segments cover, and
    ///    each segment's sources are readable for its count at `strides`.
    unsafe fn run(&self, f: &Callable, base: *mut u8, segments: &[RowRun]) -> Result<()> {
        if segments.iter().all(|s| s.count == 0) {
            return Ok(());
        }
        let (dtype, esize, strides) = (self.dtype, self.dtype.data_size(), self.strides);
        let mut ckb = pin!(CKernelBuilder::new());
        // SAFETY: (1) element arrmeta of live arrays (a dtype without
        // arrmeta reads none); (2) `dtype` is what the scalar callable
        // resolved for these element types.
        unsafe {
            build_strided(
                f,
                ckb.as_mut(),
                dtype,
                std::ptr::null(),
                self.dtypes,
                self.metas,
            )?
        };
        // The runs of one new output: large in all, it is written past the
        // cache, whatever its runs' lengths (a JSON array's rows lie in
        // arena chunks of their own).
        let total: usize = segments.iter().map(|s| s.count).sum();
        let stream = one_stream_read(strides) && streams_bytes(esize as isize, esize, total);
        for seg in segments {
            // SAFETY: (1) built for Strided above; (2) a run's elements lie one
            // after another in every var argument (that is how runs were cut),
            // scalars are read with stride 0, and the output has `total`
            // elements from `base`, this run's from `seg.start`; (3) the
            // output is new (no argument overlaps it) and its dtype has no
            // arrmeta.
            unsafe {
                run_strided_split(
                    &ckb,
                    base.wrapping_add(seg.start * esize),
                    esize as isize,
                    &seg.srcs,
                    strides,
                    seg.count,
                    TASK_ELEMENTS,
                    // Short runs (rows out of order) as usual: a few bytes
                    // past the cache would only split its lines.
                    stream && seg.count * esize >= STREAM_BUF,
                )?;
            }
        }
        Ok(())
    }
}

/// Runs a built strided kernel over `n` elements as one flat run of the
/// executor ([`exec::flat`]): in one call, or in pieces of `chunk`
/// elements on its threads. With `stream` (the caller's new output, too large for
/// the cache in all: [`streams_bytes`]), each call or task writes its
/// output past the cache.
///
/// # Safety
/// 1. `ckb` holds a kernel built for Strided on these element types.
/// 2. `n` elements at the strides lie in the (writable) output and in each
///    source.
/// 3. With `stream`: no source overlaps the output, whose element type
///    has no arrmeta and is `dstride` bytes (contiguous).
#[allow(clippy::too_many_arguments)]
unsafe fn run_strided_split(
    ckb: &CKernelBuilder,
    dst: *mut u8,
    dstride: isize,
    srcs: &[*const u8],
    strides: &[isize],
    n: usize,
    chunk: usize,
    stream: bool,
) -> Result<()> {
    // Streamed: pieces of STREAM_BUF bytes, each computed into a buffer
    // in L1 and copied to the output past the cache (`stream_copy`), so
    // the output's lines are never read first (a "read for ownership")
    // and do not evict the sources. Elements larger than the buffer take
    // plain calls.
    let esize = dstride.unsigned_abs();
    let stream = stream && esize <= STREAM_BUF;
    let call = |dst: *mut u8, srcs: &[*const u8], count: usize| -> Result<()> {
        if !stream {
            // SAFETY: (1) and (2), for these `count` elements.
            return unsafe { ckb.call_strided(dst, dstride, srcs, strides, count) };
        }
        let per = STREAM_BUF / esize;
        let mut buf = StreamBuf([0; STREAM_BUF]);
        let mut these: SmallVec<[*const u8; 4]> = srcs.into();
        let mut done = 0usize;
        let mut result = Ok(());
        while done < count && result.is_ok() {
            let k = per.min(count - done);
            // SAFETY: (1); the buffer holds `k` outputs of `esize` bytes
            // (3: plain data, no arrmeta to tie it to the output), aligned
            // for any builtin; (2) the sources' elements done..done + k.
            result = unsafe { ckb.call_strided(buf.0.as_mut_ptr(), dstride, &these, strides, k) };
            if result.is_ok() {
                // SAFETY: (2) and (3): outputs done..done + k, contiguous,
                // which the buffer (on this stack) does not overlap.
                unsafe { stream_copy(dst.add(done * esize), buf.0.as_ptr(), k * esize) };
            }
            done += k;
            for (p, s) in these.iter_mut().zip(strides) {
                *p = p.wrapping_offset(k as isize * s);
            }
        }
        stream_fence();
        result
    };
    // The kernel tree is immutable while it runs: one kernel serves every
    // thread (DESIGN §2).
    let (dst, srcs, call) = (Shared(dst), Shared(srcs), Shared(call));
    exec::flat(n, chunk, |start, count| {
        let (dst, srcs, call) = (*dst.get(), *srcs.get(), call.get());
        if start == 0 && count == n {
            return call(dst, srcs, n);
        }
        let these: SmallVec<[*const u8; 4]> = srcs
            .iter()
            .zip(strides)
            .map(|(p, s)| p.wrapping_offset(start as isize * s))
            .collect();
        // Elements [start, start + count) are this piece's alone in the
        // output.
        call(dst.wrapping_offset(start as isize * dstride), &these, count)
    })
}

/// Whether a call reads at most one source array (the others, if any, are
/// scalars read with stride 0): `x + 1.0`, a cast, a math function. Only
/// such calls write a large new output past the cache. Measured on the
/// 2-core EPYC of docs/performance.md ("Streaming stores"): `x + 1.0`
/// over 80 MB gains 10–20%, `a + b` nothing (the write-combining then
/// competes with two read streams) and loses the pieces' call overhead.
fn one_stream_read(strides: &[isize]) -> bool {
    strides.iter().filter(|&&s| s != 0).count() <= 1
}

/// Bytes of output a streamed [`run_strided_split`] computes at a time:
/// small enough to stay in L1 beside the sources' lines.
const STREAM_BUF: usize = 4096;

/// The stack buffer a streamed [`run_strided_split`] computes into
/// (aligned for any builtin element).
#[repr(C, align(64))]
struct StreamBuf([u8; STREAM_BUF]);
