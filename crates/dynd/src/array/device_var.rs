//! Ragged arrays on a device (DESIGN §4, §14): `N * var * T` (any number
//! of fixed dims, then one var dim of fixed-size plain elements: numbers,
//! bool and their option types) with its row descriptors and its values
//! in device memory.
//!
//! On the device the layout is §4's: the data is one `{begin, size}`
//! descriptor per row (C order over the fixed dims), `begin` a device
//! address into the values block the var dim's arrmeta refers to (a block
//! of kind `device`). [`Array::to_device`] copies the values once — one
//! transfer of the span when the rows lie in order in one block (what JSON,
//! Arrow and every dynd kernel produce), else gathered row by row on the
//! host first — and the descriptors rebased onto the device values: rows
//! in order go as their int64 offsets (Arrow's layout, 8 bytes a row) and
//! the device builds the descriptors ([`exec::Device::descriptors_from_offsets`])
//! when its runtime can; otherwise the host builds and copies them.
//! [`Array::to_host`] copies the descriptors, then the span of values they
//! reach, into a POD arena block, and rebases them.

use super::{Array, flags};
use crate::error::{Error, Result};
use crate::exec::{self, Device};
use crate::layout::{FixedDimMeta, VarDimData, VarDimMeta, arrmeta};
use crate::memblock::{DeviceId, MemBlock};
use crate::types::{Type, TypeKind};
use std::mem::size_of;

/// The ragged layout of an array of type `[fixed dims] * var * E`.
struct Ragged {
    /// The fixed dims' sizes and byte strides.
    outer: Vec<(usize, isize)>,
    /// The var dim's arrmeta.
    var: VarDimMeta,
    /// The element type (fixed-size plain data, no arrmeta).
    elem: Type,
    /// Where a row's present flag lies in its element, when the rows may
    /// be missing (`?var * E`: the descriptor, then one flag byte).
    flag: Option<usize>,
    /// Bytes of one row's element: a descriptor (`var`), or a descriptor
    /// and its flag, padded (`?var`).
    item: usize,
}

impl Ragged {
    /// The fixed dims' sizes.
    fn sizes(&self) -> Vec<usize> {
        self.outer.iter().map(|(n, _)| *n).collect()
    }

    /// The number of rows (descriptors).
    fn rows(&self) -> usize {
        self.outer.iter().map(|(n, _)| n).product()
    }

    /// The byte offset of row `r` (C order) from the array's data.
    fn row_offset(&self, r: usize) -> isize {
        row_offset(&self.outer, r)
    }
}

/// The byte offset of row `r` (C order over fixed dims `outer`: sizes and
/// byte strides) from the array's data.
pub(super) fn row_offset(outer: &[(usize, isize)], mut r: usize) -> isize {
    let mut off = 0;
    for &(n, s) in outer.iter().rev() {
        off += (r % n) as isize * s;
        r /= n;
    }
    off
}

/// The ragged layout of `a`, when its type is `[fixed dims] * var * E` with
/// `E` fixed-size plain data; `None` for a type without var dims.
///
/// # Errors
/// `Type` for other var types (a var dim inside another, var dims of
/// strings or records holding blocks), naming the type.
fn ragged(a: &Array) -> Result<Option<Ragged>> {
    let mut probe = a.tp();
    loop {
        match probe.kind() {
            TypeKind::FixedDim { elem, .. } => probe = elem,
            TypeKind::VarDim { .. } => break,
            TypeKind::Option(v) if matches!(v.kind(), TypeKind::VarDim { .. }) => break,
            _ => return Ok(None),
        }
    }
    let refuse = || {
        Error::type_error(format!(
            "{} cannot live on a device yet: ragged arrays on a device are fixed dims, then var \
             dims, over numbers, bool or their option types",
            a.tp()
        ))
    };
    let mut outer = Vec::new();
    let mut t = a.tp();
    let mut meta = a.arrmeta_ptr();
    loop {
        match t.kind() {
            TypeKind::FixedDim { size, elem } => {
                // SAFETY: a fixed dim's arrmeta is a FixedDimMeta, followed
                // by its element's.
                let (m, rest): (FixedDimMeta, _) = unsafe { arrmeta::read_dim(meta) };
                outer.push((*size, m.stride));
                meta = rest;
                t = elem;
            }
            TypeKind::VarDim { .. } => return ragged_rows(t, meta, outer, &refuse).map(Some),
            // Rows that may be missing: an option's arrmeta is its value's.
            TypeKind::Option(v) if matches!(v.kind(), TypeKind::VarDim { .. }) => {
                let flag = t.option_flag_offset();
                let item = t.data_size();
                let mut r = ragged_rows(v, meta, outer, &refuse)?;
                r.flag = flag;
                r.item = item;
                return Ok(Some(r));
            }
            _ => return Err(refuse()),
        }
    }
}

/// The rows of the var dim `t` (arrmeta at `meta`) under fixed dims
/// `outer`, as [`ragged`] reads them (`refuse` for elements that cannot
/// live on a device).
fn ragged_rows(
    t: &Type,
    meta: *const u8,
    outer: Vec<(usize, isize)>,
    refuse: &dyn Fn() -> Error,
) -> Result<Ragged> {
    let TypeKind::VarDim { elem } = t.kind() else {
        return Err(refuse());
    };
    if elem.is_dim() || elem.has_blockref() || elem.arrmeta_size() != 0 {
        return Err(refuse());
    }
    // SAFETY: the caller's `meta` is the var dim's arrmeta, a VarDimMeta.
    let (var, _): (VarDimMeta, _) = unsafe { arrmeta::read_dim(meta) };
    Ok(Ragged {
        outer,
        var,
        elem: elem.clone(),
        flag: None,
        item: size_of::<VarDimData>(),
    })
}

/// A view of `a`'s data as an array of type `tp` (fixed dims `outer` with
/// byte `strides`, then one var dim whose arrmeta is `var` over the block
/// `block`, whose reference the view's arrmeta takes), with `a`'s flags.
///
/// # Safety
/// 1. Each element of the fixed dims, at `a`'s data plus its offset, holds
///    a `{begin, size}` descriptor reaching elements of `tp`'s var dim in
///    `block` through `var`'s offset and stride.
pub(super) unsafe fn rows_view(
    a: &Array,
    tp: Type,
    (outer, strides): (&[usize], &[isize]),
    (var, block): (VarDimMeta, MemBlock),
) -> Array {
    let var = VarDimMeta {
        blockref: block.into_raw().as_ptr(),
        ..var
    };
    // SAFETY: (1); the arrmeta written is the fixed dims' and the var
    // dim's, holding the owned reference to `block`.
    unsafe {
        Array::from_parts(tp, a.data_ptr(), a.data_ref().clone(), a.flags(), |m| {
            arrmeta::write(write_outer(m, outer, strides), var)
        })
    }
}

/// The ragged layout of `rows` (`[fixed dims] * var * E`, plain `E`)
/// and its fixed dims, when `present` is bool over the same dims on the
/// same device; `what` names the caller in the errors.
///
/// # Errors
/// `Type` for other types; `InvalidArgument` for two devices.
fn rows_and_flags(what: &str, rows: &Array, present: &Array) -> Result<(Ragged, Vec<usize>)> {
    let r = match ragged(rows) {
        Ok(Some(r)) if r.flag.is_none() => r,
        _ => {
            return Err(Error::type_error(format!(
                "{what} takes rows of type [fixed dims] * var * T (T plain data), not {}",
                rows.tp()
            )));
        }
    };
    let outer = r.sizes();
    let (pdims, pelem) = leading_fixed(present.tp());
    if pdims != outer || pelem != &Type::bool() {
        return Err(Error::type_error(format!(
            "{what}: the present flags ({}) must be bool over the rows' fixed dims {outer:?} ({})",
            present.tp(),
            rows.tp()
        )));
    }
    if rows.device() != present.device() {
        return Err(Error::invalid_argument(format!(
            "{what}: the rows are on {} and the flags on {}; nothing moves implicitly",
            rows.device(),
            present.device()
        )));
    }
    Ok((r, outer))
}

/// A host array of type `tp` over the values of the host ragged array
/// `rows` (layout `r`), with new row elements of `item` bytes in C order:
/// each row's descriptor where `present` is true, else `{missing, 0}`,
/// then (at `flag`, for `?var`) its present flag.
///
/// # Safety
/// 1. `tp` is `[r's fixed dims] * var * E` (`flag` is `None`) or
///    `[r's fixed dims] * ?var * E` (`flag` its element's flag offset), of
///    elements of `item` bytes, `E` being `r`'s element type.
/// 2. `missing` is an address an empty row may have in `tp`'s use.
unsafe fn rebuilt(
    rows: &Array,
    r: &Ragged,
    present: &Array,
    (tp, item, flag): (&Type, usize, Option<usize>),
    missing: *mut u8,
) -> Result<Array> {
    let values = rows
        .ragged_values_block()
        .ok_or_else(|| Error::type_error(format!("{} has no values block", rows.tp())))?;
    let flags = present.contiguous()?;
    let n = r.rows();
    let dblock = MemBlock::new_fixed((n * item).max(1), 16)?;
    let (dptr, _) = dblock
        .fixed_data()
        .ok_or_else(|| Error::alloc("a fixed block without data"))?;
    for k in 0..n {
        // SAFETY: `flags` is C-contiguous bool over the same dims (byte k
        // is row k's, 0 or 1); row k's descriptor lies at its offset from
        // the rows' data, on the host; the new element (and its flag byte,
        // (1)) lies in the fresh block.
        unsafe {
            let here = *flags.data_ptr().add(k) != 0;
            let d: VarDimData = if here {
                arrmeta::read(rows.data_ptr().offset(r.row_offset(k)))
            } else {
                VarDimData {
                    begin: missing,
                    size: 0,
                }
            };
            arrmeta::write(dptr.add(k * item), d);
            if let Some(f) = flag {
                *dptr.add(k * item + f) = u8::from(here);
            }
        }
    }
    // SAFETY: (1) the new elements (C order) hold the rows' descriptors
    // or empty ones, reaching the rows' values through their stride and
    // offset.
    Ok(unsafe {
        from_rows(
            tp,
            &r.sizes(),
            (dptr, dblock),
            values,
            (r.var.stride, r.var.offset),
        )
    })
}

/// The sizes of `tp`'s leading fixed dims, and the type under them.
pub(super) fn leading_fixed(tp: &Type) -> (Vec<usize>, &Type) {
    let mut t = tp;
    let mut dims = Vec::new();
    while let TypeKind::FixedDim { size, elem } = t.kind() {
        dims.push(*size);
        t = elem;
    }
    (dims, t)
}

/// The C-order byte strides of fixed dims `outer` over items of `item`
/// bytes.
pub(super) fn c_order(outer: &[usize], item: usize) -> Vec<isize> {
    let mut strides = vec![0isize; outer.len()];
    let mut step = item as isize;
    for (k, &n) in outer.iter().enumerate().rev() {
        strides[k] = step;
        step = step.wrapping_mul(n as isize);
    }
    strides
}

/// Writes the arrmeta of fixed dims `outer` with byte `strides` at `m`,
/// and returns where the element's arrmeta starts.
///
/// # Safety
/// 1. `m` is writable arrmeta of a type whose leading dims are `outer`.
pub(super) unsafe fn write_outer(m: *mut u8, outer: &[usize], strides: &[isize]) -> *mut u8 {
    for (k, (&n, &s)) in outer.iter().zip(strides).enumerate() {
        // SAFETY: (1) fixed dim k's arrmeta slot.
        unsafe {
            arrmeta::write(
                m.add(k * size_of::<FixedDimMeta>()),
                FixedDimMeta {
                    dim_size: n as isize,
                    stride: s,
                },
            )
        };
    }
    m.wrapping_add(outer.len() * size_of::<FixedDimMeta>())
}

/// The `item`-byte elements of fixed dims `outer` (sizes, byte strides)
/// from the device address `data`, copied in one transfer (the span the
/// dims reach: a view's may be strided or reversed) and packed in C order.
///
/// # Errors
/// `External` when the copy fails.
///
/// # Safety
/// 1. Every element lies at `data + Σ i_k * stride_k`, memory of
///    `runtime`'s device alive for the call.
pub(super) unsafe fn read_rows(
    runtime: &dyn Device,
    data: *const u8,
    outer: &[(usize, isize)],
    item: usize,
) -> Result<Vec<u8>> {
    let rows: usize = outer.iter().map(|(n, _)| n).product();
    let mut packed = vec![0u8; rows * item];
    if rows == 0 {
        return Ok(packed);
    }
    let (lo, hi) = outer.iter().fold((0isize, 0isize), |(lo, hi), &(n, s)| {
        let far = (n as isize - 1) * s;
        (lo + far.min(0), hi + far.max(0))
    });
    let mut buf = vec![0u8; (hi - lo) as usize + item];
    // SAFETY: (1) every element lies in [data + lo, data + hi + item).
    unsafe { runtime.copy_to_host(&mut buf, data.wrapping_offset(lo))? };
    for r in 0..rows {
        let at = (row_offset(outer, r) - lo) as usize;
        packed[r * item..(r + 1) * item].copy_from_slice(&buf[at..at + item]);
    }
    Ok(packed)
}

/// A new array of `tp` (`[fixed dims] * var * E` or `[fixed dims] * ?var
/// * E`, C order over the fixed dims) over the descriptors at `data` (kept
/// alive by `data_ref`) and the values block `values`, element `j` of a
/// row at `begin + offset + j * stride`.
///
/// # Safety
/// 1. `data` holds one descriptor per row (`?var`: each followed by its
///    flag, one row element of `?var * E`'s size apart), C order, each
///    reaching elements of `values` (or none), all in the same memory (host
///    or one device) as `data`.
pub(super) unsafe fn from_rows(
    tp: &Type,
    outer: &[usize],
    (data, data_ref): (*mut u8, MemBlock),
    values: MemBlock,
    (stride, offset): (isize, isize),
) -> Array {
    // A row's element: its descriptor, or (`?var`) the descriptor and flag.
    let mut t = tp;
    while let TypeKind::FixedDim { elem, .. } = t.kind() {
        t = elem;
    }
    let strides = c_order(outer, t.data_size());
    let var = VarDimMeta {
        blockref: values.into_raw().as_ptr(),
        stride,
        offset,
    };
    // SAFETY: (1); the arrmeta written is each fixed dim's (C order over
    // the descriptors) and the var dim's, whose blockref is the owned
    // reference to the values; the element has no arrmeta.
    unsafe {
        Array::from_parts(
            tp.clone(),
            data,
            data_ref,
            flags::READ | flags::WRITE,
            |m| {
                arrmeta::write(write_outer(m, outer, &strides), var);
            },
        )
    }
}

/// The layout of a ragged array `[fixed dims] * var * E`
/// ([`Array::ragged_layout`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaggedLayout {
    /// The fixed dims' sizes.
    pub shape: Vec<usize>,
    /// The byte strides of the row descriptors over the fixed dims.
    pub strides: Vec<isize>,
    /// Element `j` of a row lies at `begin + offset + j * stride`.
    pub offset: isize,
    /// Bytes from one element of a row to the next.
    pub stride: isize,
    /// The element type.
    pub elem: Type,
}

impl Array {
    /// The layout of an array of type `[fixed dims] * var * E`, `E`
    /// fixed-size plain data (what can live on a device): the fixed dims
    /// and their descriptor strides, and the var dim's offset and stride.
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_json("3 * var * int32", "[[1], [], [2, 3]]").unwrap();
    /// let l = a.ragged_layout().unwrap();
    /// assert_eq!((l.shape, l.strides, l.stride), (vec![3], vec![16], 4));
    /// ```
    ///
    /// # Errors
    /// `Type` for any other type, naming it.
    pub fn ragged_layout(&self) -> Result<RaggedLayout> {
        let r = ragged(self)?
            .ok_or_else(|| Error::type_error(format!("{} has no var dim", self.tp())))?;
        if r.flag.is_some() {
            return Err(Error::type_error(format!(
                "{} has rows that may be missing (?var): see Array::option_rows",
                self.tp()
            )));
        }
        Ok(RaggedLayout {
            shape: r.sizes(),
            strides: r.outer.iter().map(|(_, s)| *s).collect(),
            offset: r.var.offset,
            stride: r.var.stride,
            elem: r.elem,
        })
    }

    /// The block the var dim's values live in (a new reference), for a
    /// result whose rows point into the same values (a slice of each row).
    /// `None` for other arrays.
    pub fn ragged_values_block(&self) -> Option<MemBlock> {
        let r = ragged(self).ok()??;
        let raw = std::ptr::NonNull::new(r.var.blockref)?;
        // SAFETY: the var dim's blockref is a live block, referenced by
        // this array's arrmeta; borrowing it takes a reference of its own.
        Some(unsafe { MemBlock::from_borrowed(raw) })
    }

    /// The device address and length of the block the var dim's values
    /// live in, when a device runtime allocated it
    /// ([`MemBlock::device_span`]): what a device kernel mirrors when it
    /// writes a result with the same rows. `None` for other arrays.
    pub fn ragged_values_span(&self) -> Option<(*mut u8, usize)> {
        let r = ragged(self).ok()??;
        let raw = std::ptr::NonNull::new(r.var.blockref)?;
        // SAFETY: the var dim's blockref is a live block, referenced by
        // this array's arrmeta; borrowing it takes a reference of its own.
        let block = unsafe { MemBlock::from_borrowed(raw) };
        block.device_span()
    }

    /// A ragged array `[fixed dims] * var * E` of type `tp` (C order over
    /// its fixed dims `outer`) on a device: `descriptors` (address and
    /// block) hold one `{begin, size}` per row, each `begin` the device
    /// address of the row's first value in `values`, values `stride` bytes
    /// apart. What a device runtime builds for a ragged result. For rows
    /// that may be missing (`tp` is `[fixed dims] * ?var * E`) each row's
    /// element is `?var * E`'s: the descriptor (zeroed where missing), then
    /// the present flag, padded.
    ///
    /// # Errors
    /// `Type` when `tp` is not `[fixed dims] * var * E` (or `?var * E`)
    /// with fixed dims `outer` over plain values.
    ///
    /// # Safety
    /// 1. The descriptors and values are device memory of the same device,
    ///    laid out as above, every (present) row's values inside `values`.
    pub unsafe fn ragged_on_device(
        tp: &Type,
        outer: &[usize],
        descriptors: (*mut u8, MemBlock),
        values: MemBlock,
        stride: isize,
    ) -> Result<Array> {
        let (dims, t) = leading_fixed(tp);
        let rows = t.option_value().unwrap_or(t);
        let plain = matches!(rows.kind(), TypeKind::VarDim { elem } if !elem.is_dim() && !elem.has_blockref() && elem.arrmeta_size() == 0);
        if !plain || dims != outer {
            return Err(Error::type_error(format!(
                "{tp} is not a ragged array of fixed dims {outer:?} over plain values"
            )));
        }
        // SAFETY: (1).
        Ok(unsafe { from_rows(tp, outer, descriptors, values, (stride, 0)) })
    }

    /// The two parts of an array of type `[fixed dims] * ?var * E` (rows
    /// that may be missing; `E` fixed-size plain data), as views of its
    /// data on its device: the rows as `[fixed dims] * var * E` (a missing
    /// row reads as an empty one: its descriptor is zeroed, DESIGN §4) and
    /// the rows' present flags as `[fixed dims] * bool`. What a device
    /// runtime computes `?var` arrays with. On the host a missing row's
    /// descriptor has a null address: to call host kernels on the rows,
    /// take [`Array::rows_where`] of them (calls on the `?var` array itself
    /// do, `callable::option_rows`).
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_json("3 * ?var * int32", "[[1], null, [2, 3]]").unwrap();
    /// let (rows, present) = a.option_rows().unwrap();
    /// assert_eq!(rows.to_json(), "[[1],[],[2,3]]");
    /// assert_eq!(present.to_json(), "[true,false,true]");
    /// ```
    ///
    /// # Errors
    /// `Type` for any other type, naming it.
    pub fn option_rows(&self) -> Result<(Array, Array)> {
        let refuse = || {
            Error::type_error(format!(
                "{} is not fixed dims over rows that may be missing (?var * T of plain T)",
                self.tp()
            ))
        };
        let r = ragged(self)?.ok_or_else(refuse)?;
        let Some(flag) = r.flag else {
            return Err(refuse());
        };
        let Some(values) = self.ragged_values_block() else {
            return Err(refuse());
        };
        let outer = r.sizes();
        let strides: Vec<isize> = r.outer.iter().map(|(_, s)| *s).collect();
        let mut tp = Type::var_dim(r.elem.clone());
        for &n in outer.iter().rev() {
            tp = Type::fixed_dim(n, tp);
        }
        // SAFETY: the rows view reads each row's descriptor where this
        // array holds it (the first 16 bytes of the row's element, the same
        // fixed-dim strides), reaching `values` through the var arrmeta.
        let rows = unsafe { rows_view(self, tp, (&outer, &strides), (r.var, values)) };
        // SAFETY: each row's flag byte lies `flag` bytes into its element,
        // the same strides apart, kept alive by the data block; a flag is 0
        // or 1, a valid bool (and what is written through the view is a
        // bool too).
        let present = unsafe {
            super::external::from_external_block(
                Type::bool(),
                self.data_ptr().wrapping_add(flag),
                &outer,
                &strides,
                self.data_ref().clone(),
                self.is_writable(),
            )?
        };
        Ok((rows, present))
    }

    /// The array of type `[fixed dims] * ?var * E` whose rows are those of
    /// `rows` (`[fixed dims] * var * E`, `E` fixed-size plain data) where
    /// `present` (`[fixed dims] * bool`, on the same device) is true, and
    /// missing elsewhere: [`Array::option_rows`]'s inverse. The values are
    /// shared, not copied; the rows' descriptors and flags are new (a
    /// missing row's descriptor zeroed, DESIGN §4). On a device, its
    /// runtime assembles them (`DeviceAssign::assemble_option_rows`).
    ///
    /// ```
    /// use dynd::Array;
    /// let rows = Array::from_json("3 * var * int32", "[[1], [9], [2, 3]]").unwrap();
    /// let present = Array::from_json("3 * bool", "[true, false, true]").unwrap();
    /// let a = Array::from_option_rows(&rows, &present).unwrap();
    /// assert_eq!(a.tp().to_string(), "3 * ?var * int32");
    /// assert_eq!(a.to_json(), "[[1],null,[2,3]]");
    /// ```
    ///
    /// # Errors
    /// `Type` when `rows` is not fixed dims over a var dim of plain data,
    /// or `present` not bool over the same fixed dims; `InvalidArgument`
    /// when they live on two devices.
    pub fn from_option_rows(rows: &Array, present: &Array) -> Result<Array> {
        let (r, outer) = rows_and_flags("from_option_rows", rows, present)?;
        let mut tp = Type::option(Type::var_dim(r.elem.clone()))?;
        for &n in outer.iter().rev() {
            tp = Type::fixed_dim(n, tp);
        }
        if !rows.device().is_cpu() {
            return super::device::assemble_option_rows(&tp, rows, present);
        }
        // Each row's element: the descriptor, then the flag byte, padded.
        let (_, item) = leading_fixed(&tp);
        let flag = item
            .option_flag_offset()
            .ok_or_else(|| Error::type_error(format!("{tp} has no row flags")))?;
        // SAFETY: a missing row's descriptor is zeroed (DESIGN §4).
        unsafe {
            rebuilt(
                rows,
                &r,
                present,
                (&tp, item.data_size(), Some(flag)),
                std::ptr::null_mut(),
            )
        }
    }

    /// The ragged array `self` (`[fixed dims] * var * E`) with its rows
    /// emptied where `present` (`[fixed dims] * bool`) is false (values
    /// shared): what a call on rows that may be missing computes on
    /// (`callable::option_rows`).
    ///
    /// ```
    /// use dynd::Array;
    /// let rows = Array::from_json("3 * var * int32", "[[1], [2, 3], [4]]").unwrap();
    /// let present = Array::from_json("3 * bool", "[true, false, true]").unwrap();
    /// assert_eq!(rows.rows_where(&present).unwrap().to_json(), "[[1],[],[4]]");
    /// ```
    ///
    /// On the host an emptied row's descriptor keeps a non-null, aligned
    /// address (host kernels view rows as slices, which an empty row may
    /// be only at such an address); on a device it is zeroed, as
    /// [`Array::option_rows`] reads a missing row.
    ///
    /// # Errors
    /// As [`Array::from_option_rows`].
    pub fn rows_where(&self, present: &Array) -> Result<Array> {
        let (r, _) = rows_and_flags("rows_where", self, present)?;
        if !self.device().is_cpu() {
            return Array::from_option_rows(self, present)?
                .option_rows()
                .map(|(rows, _)| rows);
        }
        let nowhere = std::ptr::without_provenance_mut::<u8>(r.elem.data_alignment().max(16));
        // SAFETY: an emptied row points nowhere, aligned and not null.
        unsafe {
            rebuilt(
                self,
                &r,
                present,
                (self.tp(), size_of::<VarDimData>(), None),
                nowhere,
            )
        }
    }

    /// [`Array::to_device`] of a ragged host array; `None` when the type
    /// has no var dim.
    pub(super) fn var_to_device(&self, device: DeviceId) -> Result<Option<Array>> {
        let Some(r) = ragged(self)? else {
            return Ok(None);
        };
        let runtime = exec::device(device)?;
        let esize = r.elem.data_size();
        let rows = r.rows();
        // The rows' descriptors, read on the host.
        let descs: Vec<VarDimData> = (0..rows)
            // SAFETY: each row's descriptor lies at its offset from the
            // data (the array's layout), on the host (this array is).
            .map(|k| unsafe { arrmeta::read(self.data_ptr().offset(r.row_offset(k))) })
            .collect();
        // Rows that may be missing: each row's flag, and a missing row's
        // descriptor read as empty (§4 zeroes it; a foreign one may not).
        let present: Option<Vec<u8>> = r.flag.map(|f| {
            (0..rows)
                // SAFETY: the row's flag byte lies `f` bytes into its
                // element, on the host.
                .map(|k| unsafe { *self.data_ptr().offset(r.row_offset(k)).add(f) })
                .collect()
        });
        let descs: Vec<VarDimData> = match &present {
            Some(p) => descs
                .into_iter()
                .zip(p)
                .map(|(d, &f)| {
                    if f == 0 {
                        VarDimData {
                            begin: std::ptr::null_mut(),
                            size: 0,
                        }
                    } else {
                        d
                    }
                })
                .collect(),
            None => descs,
        };
        let total: usize = descs.iter().map(|d| d.size).sum();
        let bytes = total
            .checked_mul(esize)
            .ok_or_else(|| Error::alloc(format!("{} has too many values", self.tp())))?;
        let first = |d: &VarDimData| d.begin.wrapping_offset(r.var.offset);
        // Rows in order in one span: element j of row k at
        // start + (prefix_k + j) * esize.
        let start = descs
            .iter()
            .find(|d| d.size > 0)
            .map_or(std::ptr::null_mut(), first);
        let in_order = r.var.stride == esize as isize && {
            let mut at = start;
            descs.iter().all(|d| {
                let ok = d.size == 0 || first(d) == at;
                if d.size > 0 {
                    at = at.wrapping_add(d.size * esize);
                }
                ok
            })
        };
        let gathered: Vec<u8>;
        let values: &[u8] = if bytes == 0 {
            &[]
        } else if in_order {
            // SAFETY: the rows lie in order from `start`, `bytes` bytes of
            // host memory kept alive by the var dim's block.
            unsafe { std::slice::from_raw_parts(start, bytes) }
        } else {
            let mut g = Vec::with_capacity(bytes);
            for d in &descs {
                for j in 0..d.size {
                    let at = first(d).wrapping_offset(j as isize * r.var.stride);
                    // SAFETY: element j of the row lies at `at`, `esize`
                    // bytes of host memory (the array's layout).
                    g.extend_from_slice(unsafe { std::slice::from_raw_parts(at, esize) });
                }
            }
            gathered = g;
            &gathered
        };
        let (vblock, vptr) = runtime.alloc(bytes.max(1))?;
        if bytes > 0 {
            // SAFETY: (1) a fresh device allocation of at least `bytes`.
            unsafe { runtime.copy_to_device(vptr, values)? };
        }
        let (dblock, dptr) = runtime.alloc((rows * r.item).max(1))?;
        let outer = r.sizes();
        // Rows in order: their offsets (8 bytes a row, Arrow's layout) go,
        // and the device builds the descriptors, when it can.
        if in_order && rows > 0 && present.is_none() {
            let mut offsets: Vec<u64> = Vec::with_capacity(rows + 1);
            let mut at = 0u64;
            offsets.push(at);
            for d in &descs {
                at += d.size as u64;
                offsets.push(at);
            }
            // SAFETY: (1) `dptr` holds `rows` descriptors; the offsets are
            // nondecreasing from 0; `vptr` holds their `total` values.
            if unsafe { runtime.descriptors_from_offsets(dptr, &offsets, vptr, esize)? } {
                // SAFETY: (1) the device built the descriptors, C order,
                // reaching the device values (esize apart).
                return Ok(Some(unsafe {
                    from_rows(
                        self.tp(),
                        &outer,
                        (dptr, dblock),
                        vblock,
                        (esize as isize, 0),
                    )
                }));
            }
        }
        // The descriptors rebased onto the device values, C order (each
        // row's element whole: `?var` rows add their flag, padded).
        let mut at = 0usize;
        let mut rebased: Vec<u8> = vec![0; rows * r.item];
        for (k, d) in descs.iter().enumerate() {
            let missing = present.as_ref().is_some_and(|p| p[k] == 0);
            let nd = if missing {
                VarDimData {
                    begin: std::ptr::null_mut(),
                    size: 0,
                }
            } else {
                VarDimData {
                    begin: vptr.wrapping_add(at * esize),
                    size: d.size,
                }
            };
            at += d.size;
            let slot = &mut rebased[k * r.item..(k + 1) * r.item];
            // SAFETY: VarDimData is plain data (a pointer and a size).
            slot[..size_of::<VarDimData>()].copy_from_slice(unsafe {
                std::slice::from_raw_parts(
                    (&nd as *const VarDimData).cast::<u8>(),
                    size_of::<VarDimData>(),
                )
            });
            if let Some(f) = r.flag {
                slot[f] = u8::from(!missing);
            }
        }
        if !rebased.is_empty() {
            // SAFETY: (1) a fresh device allocation of rebased.len() bytes.
            unsafe { runtime.copy_to_device(dptr, &rebased)? };
        }
        // SAFETY: (1) the device descriptors, C order, reach the device
        // values at `vptr` (the rows' elements, esize apart).
        Ok(Some(unsafe {
            from_rows(
                self.tp(),
                &outer,
                (dptr, dblock),
                vblock,
                (esize as isize, 0),
            )
        }))
    }

    /// [`Array::to_host`] of a ragged device array; `None` when the type
    /// has no var dim.
    pub(super) fn var_to_host(&self, runtime: &dyn Device) -> Result<Option<Array>> {
        let Some(r) = ragged(self)? else {
            return Ok(None);
        };
        let rows = r.rows();
        let dsize = r.item;
        // The descriptors (with their flags: `?var`): the span they lie in
        // (a view's may be strided or reversed), copied in one transfer,
        // then read row by row.
        // SAFETY: (1) each row's element lies at its offset from the data,
        // on the device, kept alive by `self`.
        let packed = unsafe { read_rows(runtime, self.data_ptr(), &r.outer, dsize)? };
        let present = |k: usize| r.flag.is_none_or(|f| packed[k * dsize + f] != 0);
        let descs: Vec<VarDimData> = (0..rows)
            // SAFETY: row k's descriptor, its first 16 bytes copied whole.
            .map(|k| unsafe { arrmeta::read(packed.as_ptr().add(k * dsize)) })
            .enumerate()
            .map(|(k, d)| {
                if present(k) {
                    d
                } else {
                    VarDimData {
                        begin: std::ptr::null_mut(),
                        size: 0,
                    }
                }
            })
            .collect();
        let esize = r.elem.data_size() as isize;
        // The span of device values the rows reach.
        let reach = |d: &VarDimData| {
            let a = d.begin.wrapping_offset(r.var.offset);
            let b = a.wrapping_offset((d.size as isize - 1) * r.var.stride);
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            (lo, hi.wrapping_offset(esize))
        };
        let span = descs
            .iter()
            .filter(|d| d.size > 0)
            .map(reach)
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)));
        let values = MemBlock::new_pod_allocator(0);
        let (lo, host) = match span {
            Some((lo, hi)) => {
                let bytes = hi as usize - lo as usize;
                let host = values
                    .pod_allocator()
                    .ok_or_else(|| Error::alloc("a POD allocator block without an allocator"))?
                    .allocate_for_overwrite(bytes, r.elem.data_alignment().max(16))?;
                // SAFETY: `host` is a fresh buffer of `bytes` bytes.
                let dst = unsafe { std::slice::from_raw_parts_mut(host, bytes) };
                // SAFETY: (1) the span [lo, hi) holds every element the
                // rows reach, on the device, kept alive by the var dim's
                // block.
                unsafe { runtime.copy_to_host(dst, lo)? };
                (lo, host)
            }
            None => (std::ptr::null_mut(), std::ptr::null_mut()),
        };
        // The descriptors rebased onto the host copy: the same offsets
        // from `lo` as on the device, the same stride and arrmeta offset.
        // Zeroed: a `?var` row's padding after its flag too.
        let dblock = MemBlock::new_fixed((rows * dsize).max(1), 16)?;
        let (dptr, _) = dblock
            .fixed_data()
            .ok_or_else(|| Error::alloc("a fixed block without data"))?;
        for (k, d) in descs.iter().enumerate() {
            let begin = if d.size == 0 || lo.is_null() {
                d.begin
            } else {
                host.wrapping_offset(d.begin as isize - lo as isize)
            };
            // SAFETY: row k's slot in the fresh descriptor block (and its
            // flag's byte inside the slot).
            unsafe {
                arrmeta::write(
                    dptr.add(k * dsize),
                    VarDimData {
                        begin,
                        size: d.size,
                    },
                );
                if let Some(f) = r.flag {
                    *dptr.add(k * dsize + f) = u8::from(present(k));
                }
            };
        }
        let outer = r.sizes();
        // SAFETY: (1) the host descriptors (C order) reach the host copy
        // of the values through the same offset and stride as on the
        // device.
        Ok(Some(unsafe {
            from_rows(
                self.tp(),
                &outer,
                (dptr, dblock),
                values,
                (r.var.stride, r.var.offset),
            )
        }))
    }
}
