//! Callables that work on whole rows of the innermost dim (`drop_null`,
//! `sort`, `argsort`, `cumsum`, `cumprod`, ...): the shared machinery.
//!
//! Such a callable gives a kernel for one row ([`RowKernel`]); the outer
//! dims are lifted over by the generic lifter ([`instantiate_rows`]), which
//! stops at the cells: the innermost dim of the argument and of the result,
//! each seen as a one-field tuple of the same layout ([`as_cell`]). A row
//! kernel reads its row through a [`RowIn`], which hides whether the dim is
//! fixed or var, and writes it through a [`RowOut`] (a var row allocated
//! from the destination's arena by a [`VarAlloc`]).

use super::CallableImpl;
use crate::error::{Error, Result};
use crate::kernels::assign::{ErrorMode, make_assignment_kernel};
use crate::kernels::{CKernelBuilder, KernelArgs, KernelRequest, lift};
use crate::layout::{FixedDimMeta, VarDimData, VarDimMeta, arrmeta};
use crate::memblock::MemBlock;
use crate::types::{Type, TypeKind};
use std::pin::Pin;
use std::ptr::NonNull;

/// Builds `tp` under `dims` (outermost first; `None` is var).
pub(crate) fn under_dims(dims: &[Option<usize>], mut tp: Type) -> Type {
    for d in dims.iter().rev() {
        tp = match d {
            Some(n) => Type::fixed_dim(*n, tp),
            None => Type::var_dim(tp),
        };
    }
    tp
}

/// `tp` as the one-field tuple `(tp)`, which the lifter does not peel:
/// the same data and arrmeta layout (field 0 at offset 0 of both), checked;
/// `name` is the callable's, for the error.
pub(crate) fn as_cell(name: &str, tp: &Type) -> Result<Type> {
    let cell = Type::tuple_of([tp.clone()]);
    let same = cell.data_size() == tp.data_size()
        && cell.data_alignment() == tp.data_alignment()
        && cell.arrmeta_size() == tp.arrmeta_size()
        && cell.fields().is_some_and(|f| {
            f.data_offsets().first() == Some(&0) && f.arrmeta_offsets().first() == Some(&0)
        });
    if same {
        Ok(cell)
    } else {
        Err(Error::invalid_argument(format!(
            "{name}: {cell} does not lay out as {tp}"
        )))
    }
}

/// A callable that works on whole rows: from the innermost dim of its one
/// argument (`inner`) to the innermost dim of its result (`row`), lifted
/// over the outer dims. Every such type is a [`CallableImpl`] through the
/// impl below: the result is the outer dims over `row`.
pub(crate) trait RowKernel: Send + Sync + 'static {
    /// The callable's name.
    fn row_name(&self) -> &str;

    /// The callable's signature.
    fn row_signature(&self) -> &Type;

    /// The row operation it is, when it is one of dynd's
    /// ([`CallableImpl::as_row_op`]).
    fn row_op(&self) -> Option<super::sort::RowOp> {
        None
    }

    /// The argument's outer dims, its innermost dim (with the element)
    /// and the result's innermost dim, for argument types `args`; the
    /// errors of a call that does not fit.
    fn parts(&self, args: &[Type]) -> Result<(Vec<Option<usize>>, Type, Type)>;

    /// `true` when each row kernel writes every element of its output row
    /// ([`CallableImpl::writes_whole_result`]) and cuts the var output
    /// rows of a strided run from one allocation
    /// ([`CallableImpl::allocates_per_run`]), as the kernels that open
    /// their rows through `sort::Rows::each_row` do.
    fn fills_rows_per_run(&self) -> bool {
        false
    }

    /// Builds the kernel of one row at `offset`.
    ///
    /// # Safety
    /// 1. `offset` is a free slot of `ckb`.
    /// 2. `dst.1` and `src.1` are valid arrmeta of `dst.0` and `src.0`.
    unsafe fn instantiate_row(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        dst: (&Type, *const u8),
        src: (&Type, *const u8),
        req: KernelRequest,
    ) -> Result<usize>;
}

impl<R: RowKernel> CallableImpl for R {
    fn name(&self) -> &str {
        self.row_name()
    }

    fn signature(&self) -> &Type {
        self.row_signature()
    }

    fn as_row_op(&self) -> Option<super::sort::RowOp> {
        self.row_op()
    }

    fn is_scalar(&self) -> bool {
        false
    }

    fn resolve(&self, args: &[Type]) -> Result<Type> {
        let (dims, _, row) = self.parts(args)?;
        Ok(under_dims(&dims, row))
    }

    fn outer_rows(&self, args: &[Type]) -> usize {
        self.parts(args).map_or(0, |(dims, _, _)| dims.len())
    }

    fn writes_whole_result(&self) -> bool {
        self.fills_rows_per_run()
    }

    fn allocates_per_run(&self) -> bool {
        self.fills_rows_per_run()
    }

    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        let (dims, inner, row) = self.parts(args.src_tps)?;
        // SAFETY: the caller's promises; `parts` gave the argument's dims,
        // its innermost dim and the result's.
        unsafe { instantiate_rows(self, ckb, offset, args, (&dims, &inner, &row)) }
    }
}

/// Builds the kernel of row callable `r` over its one argument: the row
/// kernel itself when there are no outer `dims`, else the row kernel lifted
/// over them (the argument is `dims` over `inner`, the result `dims` over
/// `row`).
///
/// # Safety
/// As [`super::CallableImpl::instantiate`], with `args` of one argument of
/// type `dims` over `inner` and a result of type `dims` over `row`.
pub(crate) unsafe fn instantiate_rows<R: RowKernel + ?Sized>(
    r: &R,
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    args: KernelArgs<'_>,
    (dims, inner, row): (&[Option<usize>], &Type, &Type),
) -> Result<usize> {
    let (x_meta, req) = (args.src_metas[0], args.req);
    if dims.is_empty() {
        // SAFETY: the caller's promises; the result is `row` and the
        // argument its own innermost dim.
        return unsafe {
            r.instantiate_row(ckb, offset, (row, args.dst_meta), (inner, x_meta), req)
        };
    }
    let name = r.row_name();
    let (row_cell, inner_cell) = (as_cell(name, row)?, as_cell(name, inner)?);
    let dst_cells = under_dims(dims, row_cell.clone());
    let src_cells = [under_dims(dims, inner_cell.clone())];
    let mut leaf = |ckb: Pin<&mut CKernelBuilder>, at: usize, el: KernelArgs<'_>| {
        if *el.dst_tp != row_cell || el.src_tps.first() != Some(&inner_cell) {
            return Err(Error::type_error(format!(
                "{name}: the lifter reached ({}) -> {}, not ({inner_cell}) -> {row_cell}",
                super::type_list(el.src_tps),
                el.dst_tp
            )));
        }
        // SAFETY: make_lifted calls the leaf at a free slot with the cells'
        // arrmeta: that of their one field, at offset 0 (as_cell checked).
        unsafe {
            r.instantiate_row(
                ckb,
                at,
                (row, el.dst_meta),
                (inner, el.src_metas[0]),
                el.req,
            )
        }
    };
    let metas = [x_meta];
    // SAFETY: `offset` is free (the caller's promise); the cells have the
    // data and arrmeta layout of the real types (the same dims over types
    // laid out alike), so the caller's arrmeta is theirs; the leaf builds at
    // the offset it is given.
    unsafe {
        let args = KernelArgs::new(&dst_cells, args.dst_meta, &src_cells, &metas, req);
        lift::make_lifted(ckb, offset, args, &mut leaf)
    }
}

/// A row of the innermost dim of a source, as a row kernel reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RowIn {
    /// A fixed dim: every row has `size` elements `stride` bytes apart.
    Fixed { size: usize, stride: isize },
    /// A var dim: each row's `{begin, size}`, elements at
    /// `begin + offset + i * stride`.
    Var { stride: isize, offset: isize },
}

impl RowIn {
    /// The row reader for the dim `tp`, and its element's arrmeta; `name`
    /// is the callable's, for the error when `tp` is not a dim.
    ///
    /// # Safety
    /// 1. `meta` is valid arrmeta of `tp`.
    pub(crate) unsafe fn of(name: &str, tp: &Type, meta: *const u8) -> Result<(RowIn, *const u8)> {
        match tp.kind() {
            TypeKind::FixedDim { size, .. } => {
                // SAFETY: (1) a fixed dim's arrmeta starts with FixedDimMeta,
                // and the element's follows.
                let (m, em) = unsafe { arrmeta::read_dim::<FixedDimMeta>(meta) };
                let stride = m.stride;
                Ok((
                    RowIn::Fixed {
                        size: *size,
                        stride,
                    },
                    em,
                ))
            }
            TypeKind::VarDim { .. } => {
                // SAFETY: (1) a var dim's arrmeta starts with VarDimMeta, and
                // the element's follows.
                let (m, em) = unsafe { arrmeta::read_dim::<VarDimMeta>(meta) };
                let (stride, offset) = (m.stride, m.offset);
                Ok((RowIn::Var { stride, offset }, em))
            }
            _ => Err(Error::type_error(format!(
                "{name} reads rows of a dim, not of {tp}"
            ))),
        }
    }

    /// The row at `data`: its first element, length and stride.
    ///
    /// # Safety
    /// 1. `data` is a readable element of the dim this reader was made for.
    #[inline]
    pub(crate) unsafe fn row(self, data: *const u8) -> (*const u8, usize, isize) {
        match self {
            RowIn::Fixed { size, stride } => (data, size, stride),
            RowIn::Var { stride, offset } => {
                // SAFETY: (1) a var element.
                let v: VarDimData = unsafe { data.cast::<VarDimData>().read_unaligned() };
                (v.begin.wrapping_offset(offset).cast_const(), v.size, stride)
            }
        }
    }
}

/// Allocates the rows of a var dim destination from the POD arena its
/// arrmeta holds.
pub(crate) struct VarAlloc {
    block: MemBlock,
    /// The element's size and alignment.
    esize: usize,
    align: usize,
}

impl VarAlloc {
    /// The allocator of the var dim `tp` (with arrmeta `meta`), and its
    /// element's arrmeta; `name` is the callable's, for the errors.
    ///
    /// # Safety
    /// 1. `meta` is valid arrmeta of `tp`.
    pub(crate) unsafe fn of(
        name: &str,
        tp: &Type,
        meta: *const u8,
    ) -> Result<(VarAlloc, *const u8)> {
        let TypeKind::VarDim { elem } = tp.kind() else {
            return Err(Error::type_error(format!(
                "{name} allocates var rows, not {tp}"
            )));
        };
        // SAFETY: (1) a var dim's arrmeta starts with VarDimMeta, and the
        // element's follows.
        let (m, em) = unsafe { arrmeta::read_dim::<VarDimMeta>(meta) };
        if m.offset != 0 || m.stride != elem.data_size() as isize {
            return Err(Error::invalid_argument(format!(
                "{name} cannot allocate {tp} elements through a view with offset {} and stride {}",
                m.offset, m.stride
            )));
        }
        // SAFETY: (1) the arrmeta holds a reference to its block, alive
        // during this call; the kernel takes its own.
        let block = NonNull::new(m.blockref)
            .map(|b| unsafe { MemBlock::from_borrowed(b) })
            .filter(|b| b.pod_allocator().is_some())
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{name}: the destination {tp} has no POD allocator block to allocate from"
                ))
            })?;
        let alloc = VarAlloc {
            block,
            esize: elem.data_size(),
            align: elem.data_alignment(),
        };
        Ok((alloc, em))
    }

    /// The size of one element.
    pub(crate) fn esize(&self) -> usize {
        self.esize
    }

    /// Room for `n` elements: zeroed, or (`overwrite`) to be written in
    /// full before anyone reads it.
    pub(crate) fn allocate(&self, name: &str, n: usize, overwrite: bool) -> Result<*mut u8> {
        let alloc = self.block.pod_allocator().ok_or_else(|| {
            Error::invalid_argument(format!("{name}: no POD allocator to allocate from"))
        })?;
        let bytes = n
            .checked_mul(self.esize)
            .ok_or_else(|| Error::alloc(format!("{name}: {n} elements are too large")))?;
        if overwrite {
            alloc.allocate_for_overwrite(bytes, self.align)
        } else {
            alloc.allocate(bytes, self.align)
        }
    }

    /// The allocation at `begin` (the last one made) shrunk to `n`
    /// elements; when it cannot shrink (another allocation came after it)
    /// the longer allocation stays, which is still correct.
    pub(crate) fn shrink(&self, begin: *mut u8, n: usize) -> *mut u8 {
        match self.block.pod_allocator() {
            Some(a) => a.resize(begin, n * self.esize).unwrap_or(begin),
            None => begin,
        }
    }
}

/// The innermost dim of a destination, as a row kernel writes it.
pub(crate) enum RowOut {
    Fixed {
        size: usize,
        stride: isize,
    },
    /// A var dim whose rows are allocated.
    Var {
        alloc: VarAlloc,
        /// The elements need zeroed memory (strings, assigned by a child).
        zeroed: bool,
    },
}

impl RowOut {
    /// The row writer for the dim `tp`, and its element's arrmeta; `name`
    /// is the callable's, for the errors.
    ///
    /// # Safety
    /// 1. `meta` is valid arrmeta of `tp`.
    pub(crate) unsafe fn of(name: &str, tp: &Type, meta: *const u8) -> Result<(RowOut, *const u8)> {
        match tp.kind() {
            TypeKind::FixedDim { size, .. } => {
                // SAFETY: (1) a fixed dim's arrmeta starts with FixedDimMeta,
                // and the element's follows.
                let (m, em) = unsafe { arrmeta::read_dim::<FixedDimMeta>(meta) };
                let out = RowOut::Fixed {
                    size: *size,
                    stride: m.stride,
                };
                Ok((out, em))
            }
            TypeKind::VarDim { elem } => {
                // SAFETY: (1).
                let (alloc, em) = unsafe { VarAlloc::of(name, tp, meta) }?;
                let zeroed = elem.as_builtin().is_none();
                Ok((RowOut::Var { alloc, zeroed }, em))
            }
            _ => Err(Error::type_error(format!(
                "{name} writes rows of a dim, not {tp}"
            ))),
        }
    }

    /// Makes the output row at `dst` one of `n` elements and returns its
    /// first element and stride: a var row is allocated (and written), a
    /// fixed one must have `n` elements.
    ///
    /// # Safety
    /// 1. `dst` is a writable element of the dim this writer was made for.
    pub(crate) unsafe fn open(
        &self,
        name: &str,
        dst: *mut u8,
        n: usize,
    ) -> Result<(*mut u8, isize)> {
        match self {
            RowOut::Fixed { size, stride } => {
                if *size != n {
                    return Err(Error::broadcast(format!(
                        "{name}: a row of {n} elements does not fit an output row of {size}"
                    )));
                }
                Ok((dst, *stride))
            }
            RowOut::Var { alloc, zeroed } => {
                let begin = alloc.allocate(name, n, !zeroed)?;
                // SAFETY: (1) a writable var element.
                unsafe {
                    dst.cast::<VarDimData>()
                        .write_unaligned(VarDimData { begin, size: n })
                };
                Ok((begin, alloc.esize as isize))
            }
        }
    }
}

/// Builds the element copy `dst ← src` (types and arrmeta) at `offset`:
/// the assignment kernel, strided, under the default error mode.
///
/// # Safety
/// 1. `offset` is a free slot of `ckb`; 2. each arrmeta is valid arrmeta of
///    its type.
pub(crate) unsafe fn copy_kernel(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    dst: (&Type, *const u8),
    src: (&Type, *const u8),
) -> Result<usize> {
    // SAFETY: (1) and (2), passed on.
    unsafe {
        make_assignment_kernel(
            ckb,
            offset,
            dst.0,
            dst.1,
            src.0,
            src.1,
            KernelRequest::Strided,
            ErrorMode::Default,
        )
    }
}
