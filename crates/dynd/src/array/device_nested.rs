//! Nested ragged arrays on a device (DESIGN §4, §14; issue #30):
//! `[fixed dims] * var * var * … * E` — fixed dims, then two or more var
//! dims one inside the other, over fixed-size plain elements.
//!
//! Each var level is §4's layout: the outer level's data is one `{begin,
//! size}` descriptor per row (C order over the fixed dims), `begin` a
//! device address into the block the var dim's arrmeta refers to — the
//! next level's descriptors, or, for the innermost, the values.
//! [`Array::to_device`] gathers every level in C order (each level packed,
//! one copy per level) and rebases the descriptors bottom up;
//! [`Array::to_host`] copies the outer descriptors (one transfer), then at
//! each level the span of memory the rows reach (one transfer each), and
//! rebases them onto the host copies.
//!
//! A device runtime computes on the innermost level as on a ragged array
//! of its own ([`Array::nested_inner_rows`]): the descriptors of the
//! second-to-last level are rows `M * var * E`; a result over those rows
//! becomes the nested result with the outer descriptors moved to it
//! ([`Array::nested_on_device`]).

use super::Array;
use super::device_var::{c_order, read_rows, row_offset, write_outer};
use super::flags;
use crate::error::{Error, Result};
use crate::exec::{self, Device};
use crate::layout::{FixedDimMeta, VarDimData, VarDimMeta, arrmeta};
use crate::memblock::{DeviceId, MemBlock};
use crate::types::{Type, TypeKind};
use std::mem::size_of;

/// Bytes of a row descriptor.
const DESC: usize = size_of::<VarDimData>();

/// The layout of a nested ragged array.
struct Nested {
    /// The fixed dims' sizes and byte strides.
    outer: Vec<(usize, isize)>,
    /// Each var level's arrmeta, outermost first (at least two).
    vars: Vec<VarDimMeta>,
    /// The element type (fixed-size plain data).
    elem: Type,
}

impl Nested {
    /// The number of outer rows (descriptors in the data).
    fn rows(&self) -> usize {
        self.outer.iter().map(|(n, _)| n).product()
    }

    /// The byte offset of outer row `r` (C order) from the data.
    fn row_offset(&self, r: usize) -> isize {
        row_offset(&self.outer, r)
    }

    /// The bytes of an element of level `i` (a descriptor, or a value at
    /// the innermost level).
    fn item(&self, i: usize) -> usize {
        if i + 1 < self.vars.len() {
            DESC
        } else {
            self.elem.data_size()
        }
    }
}

/// The nested layout of `a`, when its type is fixed dims, then two or more
/// var dims, then plain elements; `None` for every other type.
fn nested(a: &Array) -> Option<Nested> {
    let mut outer = Vec::new();
    let mut vars = Vec::new();
    let mut t = a.tp();
    let mut meta = a.arrmeta_ptr();
    loop {
        match t.kind() {
            TypeKind::FixedDim { size, elem } if vars.is_empty() => {
                // SAFETY: a fixed dim's arrmeta is a FixedDimMeta, followed
                // by its element's.
                let (m, rest): (FixedDimMeta, _) = unsafe { arrmeta::read_dim(meta) };
                outer.push((*size, m.stride));
                meta = rest;
                t = elem;
            }
            TypeKind::VarDim { elem } => {
                // SAFETY: a var dim's arrmeta is a VarDimMeta, followed by
                // its element's.
                let (m, rest): (VarDimMeta, _) = unsafe { arrmeta::read_dim(meta) };
                vars.push(m);
                meta = rest;
                t = elem;
            }
            _ => break,
        }
    }
    let plain = !t.is_dim() && !t.has_blockref() && t.arrmeta_size() == 0;
    (vars.len() >= 2 && plain).then(|| Nested {
        outer,
        vars,
        elem: t.clone(),
    })
}

/// A new array of `tp` (fixed dims `outer`, C order over the descriptors
/// at `data`, then one var level per entry of `levels`: the block that
/// level's rows point into, the bytes between its elements and its
/// arrmeta offset).
///
/// # Safety
/// 1. `data` holds one descriptor per outer row, C order; each level's
///    descriptors reach elements of the next level's block (the last, the
///    values), all in the same memory (host or one device) as `data`.
unsafe fn from_levels(
    tp: &Type,
    outer: &[usize],
    (data, data_ref): (*mut u8, MemBlock),
    levels: Vec<(MemBlock, isize, isize)>,
) -> Array {
    let strides = c_order(outer, DESC);
    let metas: Vec<VarDimMeta> = levels
        .into_iter()
        .map(|(block, stride, offset)| VarDimMeta {
            blockref: block.into_raw().as_ptr(),
            stride,
            offset,
        })
        .collect();
    // SAFETY: (1); the arrmeta written is each fixed dim's, then each var
    // level's, whose blockref is the owned reference to its block; the
    // element has no arrmeta.
    unsafe {
        Array::from_parts(
            tp.clone(),
            data,
            data_ref,
            flags::READ | flags::WRITE,
            |m| {
                let at = write_outer(m, outer, &strides);
                for (i, v) in metas.into_iter().enumerate() {
                    arrmeta::write(at.add(i * size_of::<VarDimMeta>()), v);
                }
            },
        )
    }
}

/// The bytes of `descs` (plain `{begin, size}` pairs).
fn desc_bytes(descs: &[VarDimData]) -> Vec<u8> {
    let mut out = Vec::with_capacity(descs.len() * DESC);
    for d in descs {
        out.extend_from_slice(&(d.begin as u64).to_ne_bytes());
        out.extend_from_slice(&(d.size as u64).to_ne_bytes());
    }
    out
}

/// The descriptor in the 16 bytes at `b`.
fn read_desc(b: &[u8]) -> VarDimData {
    let word = |i: usize| u64::from_ne_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
    VarDimData {
        begin: word(0) as usize as *mut u8,
        size: word(8) as usize,
    }
}

/// The nested layout of `a`, a device array.
///
/// # Errors
/// `Type` for a host array or another type.
fn device_nested(a: &Array) -> Result<Nested> {
    nested(a).filter(|_| !a.device().is_cpu()).ok_or_else(|| {
        Error::type_error(format!(
            "{} on {} is not a device array of fixed dims, then var dims",
            a.tp(),
            a.device()
        ))
    })
}

/// The block a var level of `a` (its arrmeta `v`) points into, a new
/// reference.
///
/// # Errors
/// `Type` when the level has no block.
fn level_block(a: &Array, v: &VarDimMeta) -> Result<MemBlock> {
    let raw = std::ptr::NonNull::new(v.blockref)
        .ok_or_else(|| Error::type_error(format!("{} has a var level without a block", a.tp())))?;
    // SAFETY: the var dim's blockref is a live block referenced by `a`'s
    // arrmeta; borrowing takes a reference of its own.
    Ok(unsafe { MemBlock::from_borrowed(raw) })
}

/// The device address and length of `block`, a block of `a` a device
/// runtime allocated.
///
/// # Errors
/// `Type` when the runtime did not allocate it (no recorded span).
fn runtime_span(a: &Array, block: &MemBlock) -> Result<(*mut u8, usize)> {
    block.device_span().ok_or_else(|| {
        Error::type_error(format!(
            "the rows of {} were not allocated by a device runtime",
            a.tp()
        ))
    })
}

/// The layout of a nested ragged array on a device, as a device runtime
/// reads it ([`Array::nested_layout`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestedLayout {
    /// The fixed dims' sizes.
    pub shape: Vec<usize>,
    /// The byte strides of the outer descriptors over the fixed dims.
    pub strides: Vec<isize>,
    /// Each var level's (arrmeta offset, stride), outermost first.
    pub levels: Vec<(isize, isize)>,
    /// The element type.
    pub elem: Type,
}

impl Array {
    /// The layout of a nested ragged array (`[fixed dims] * var * var *
    /// … * E`, `E` plain).
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_json("2 * var * var * int8", "[[[1], []], [[2, 3]]]").unwrap();
    /// let l = a.nested_layout().unwrap();
    /// assert_eq!((l.shape, l.levels.len()), (vec![2], 2));
    /// ```
    ///
    /// # Errors
    /// `Type` for any other type, naming it.
    pub fn nested_layout(&self) -> Result<NestedLayout> {
        let n = nested(self).ok_or_else(|| {
            Error::type_error(format!(
                "{} is not fixed dims, then nested var dims, over plain values",
                self.tp()
            ))
        })?;
        Ok(NestedLayout {
            shape: n.outer.iter().map(|(s, _)| *s).collect(),
            strides: n.outer.iter().map(|(_, s)| *s).collect(),
            levels: n.vars.iter().map(|v| (v.offset, v.stride)).collect(),
            elem: n.elem,
        })
    }

    /// The innermost level of a nested ragged device array (two var levels
    /// or more) as a ragged array of its own: every descriptor of the block
    /// the level above points into, as rows `M * var * E` (C order, the
    /// block's whole span: rows no row above reaches included, as a device
    /// runtime allocates them), the innermost var dim's arrmeta shared.
    ///
    /// # Errors
    /// `Type` for other arrays (another type, a block a device runtime did
    /// not allocate).
    pub fn nested_inner_rows(&self) -> Result<Array> {
        let n = device_nested(self)?;
        let k = n.vars.len();
        let inner = level_block(self, &n.vars[k - 2])?;
        let (base, bytes) = runtime_span(self, &inner)?;
        let m = bytes / DESC;
        let values = level_block(self, &n.vars[k - 1])?;
        let tp = Type::fixed_dim(m, Type::var_dim(n.elem.clone()));
        // SAFETY: (1) the block holds `m` descriptors, C order (one dim),
        // each reaching the values block through the inner level's
        // arrmeta, all on the device.
        Ok(unsafe {
            super::device_var::from_rows(
                &tp,
                &[m],
                (base, inner),
                values,
                (n.vars[k - 1].stride, n.vars[k - 1].offset),
            )
        })
    }

    /// Each var level's block of a nested ragged device array, outermost
    /// first — the blocks the levels' descriptors point into, the last the
    /// values — with its device address and length (a device runtime
    /// allocated them: [`MemBlock::device_span`]).
    ///
    /// # Errors
    /// `Type` for other arrays, or a block without a recorded span.
    pub fn nested_level_blocks(&self) -> Result<Vec<(MemBlock, *mut u8, usize)>> {
        let n = device_nested(self)?;
        n.vars
            .iter()
            .map(|v| {
                let block = level_block(self, v)?;
                let (base, bytes) = runtime_span(self, &block)?;
                Ok((block, base, bytes))
            })
            .collect()
    }

    /// A nested ragged array `[fixed dims] * var * … * var * E` of type
    /// `tp` (one var dim per entry of `levels`) on a device: `descriptors`
    /// (address and block) hold one descriptor per outer row (C order over
    /// `outer`), pointing into the first level's block, whose descriptors
    /// point into the next's, `stride` bytes apart each, the last level's
    /// block the values. What a device runtime builds for a nested result
    /// of any depth.
    ///
    /// # Errors
    /// `Type` when `tp` is not fixed dims `outer`, then `levels.len()` var
    /// dims (two or more), over plain values.
    ///
    /// # Safety
    /// 1. As [`Array::nested_on_device`], for every level.
    pub unsafe fn nested_levels_on_device(
        tp: &Type,
        outer: &[usize],
        descriptors: (*mut u8, MemBlock),
        levels: Vec<(MemBlock, isize)>,
    ) -> Result<Array> {
        let (dims, mut t) = super::device_var::leading_fixed(tp);
        let mut vars = 0;
        while let TypeKind::VarDim { elem } = t.kind() {
            vars += 1;
            t = elem;
        }
        let plain = !t.is_dim() && !t.has_blockref() && t.arrmeta_size() == 0;
        if !plain || dims != outer || vars != levels.len() || vars < 2 {
            return Err(Error::type_error(format!(
                "{tp} is not fixed dims {outer:?}, then {} var dims, over plain values",
                levels.len()
            )));
        }
        let levels = levels.into_iter().map(|(b, s)| (b, s, 0)).collect();
        // SAFETY: (1).
        Ok(unsafe { from_levels(tp, outer, descriptors, levels) })
    }

    /// The outer level of a nested ragged array of two var levels as rows
    /// of its own: `[fixed dims] * var * fixed_bytes[16, align=8]`, each
    /// element an inner row's descriptor (a view of the same data, the
    /// outer var dim's arrmeta shared) — what a device runtime indexes the
    /// outer var dim with (`x[:, i]` picks a descriptor per row).
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_json("2 * var * var * int8", "[[[1], []], [[2, 3]]]").unwrap();
    /// let o = a.nested_outer_rows().unwrap();
    /// assert_eq!(o.tp().to_string(), "2 * var * fixed_bytes[16, align=8]");
    /// ```
    ///
    /// # Errors
    /// `Type` for other arrays (another type, more var levels).
    pub fn nested_outer_rows(&self) -> Result<Array> {
        let n = nested(self).filter(|n| n.vars.len() == 2).ok_or_else(|| {
            Error::type_error(format!(
                "{} is not fixed dims, then two var dims, over plain values",
                self.tp()
            ))
        })?;
        let raw = std::ptr::NonNull::new(n.vars[0].blockref)
            .ok_or_else(|| Error::type_error(format!("{} has no row block", self.tp())))?;
        // SAFETY: the var dim's blockref is a live block referenced by this
        // array's arrmeta; borrowing takes a reference of its own.
        let rows = unsafe { MemBlock::from_borrowed(raw) };
        let outer: Vec<usize> = n.outer.iter().map(|(s, _)| *s).collect();
        let strides: Vec<isize> = n.outer.iter().map(|(_, s)| *s).collect();
        let mut tp = Type::var_dim(Type::fixed_bytes(DESC, 8)?);
        for &d in outer.iter().rev() {
            tp = Type::fixed_dim(d, tp);
        }
        // SAFETY: the view reads each outer row's descriptor where this
        // array holds it (the same data, fixed-dim strides), each reaching
        // whole inner descriptors (16 plain bytes each) in the row block.
        Ok(
            unsafe {
                super::device_var::rows_view(self, tp, (&outer, &strides), (n.vars[0], rows))
            },
        )
    }

    /// A nested ragged array `[fixed dims] * var * var * E` of type `tp` on
    /// a device: `descriptors` (address and block) hold one outer
    /// descriptor per row (C order over `outer`), pointing into `rows` —
    /// the inner descriptors' block, `row_stride` bytes apart — whose
    /// descriptors point into `values`, `stride` bytes apart. What a device
    /// runtime builds for a nested result.
    ///
    /// # Errors
    /// `Type` when `tp` is not fixed dims `outer`, then two var dims over
    /// plain values.
    ///
    /// # Safety
    /// 1. The descriptors, rows and values are device memory of one
    ///    device, laid out as above.
    pub unsafe fn nested_on_device(
        tp: &Type,
        outer: &[usize],
        descriptors: (*mut u8, MemBlock),
        (rows, row_stride): (MemBlock, isize),
        (values, stride): (MemBlock, isize),
    ) -> Result<Array> {
        let (dims, t) = super::device_var::leading_fixed(tp);
        let two = match t.kind() {
            TypeKind::VarDim { elem } => match elem.kind() {
                TypeKind::VarDim { elem } => {
                    !elem.is_dim() && !elem.has_blockref() && elem.arrmeta_size() == 0
                }
                _ => false,
            },
            _ => false,
        };
        if !two || dims != outer {
            return Err(Error::type_error(format!(
                "{tp} is not fixed dims {outer:?}, then two var dims, over plain values"
            )));
        }
        // SAFETY: (1).
        Ok(unsafe {
            from_levels(
                tp,
                outer,
                descriptors,
                vec![(rows, row_stride, 0), (values, stride, 0)],
            )
        })
    }

    /// [`Array::to_device`] of a nested ragged host array; `None` for other
    /// types.
    pub(super) fn nested_to_device(&self, device: DeviceId) -> Result<Option<Array>> {
        let Some(n) = nested(self) else {
            return Ok(None);
        };
        let runtime = exec::device(device)?;
        let k = n.vars.len();
        // Every level's rows, C order, read on the host.
        let rows0: Vec<VarDimData> = (0..n.rows())
            // SAFETY: each outer row's descriptor lies at its offset from
            // the data (the array's layout), on the host.
            .map(|r| unsafe { arrmeta::read(self.data_ptr().offset(n.row_offset(r))) })
            .collect();
        let mut levels = vec![rows0];
        for i in 0..k - 1 {
            let m = n.vars[i];
            let next: Vec<VarDimData> = levels[i]
                .iter()
                .flat_map(|d| {
                    (0..d.size).map(move |j| {
                        let at = d.begin.wrapping_offset(m.offset + j as isize * m.stride);
                        // SAFETY: element j of the row is a descriptor of
                        // the next level, on the host (the layout).
                        unsafe { arrmeta::read::<VarDimData>(at) }
                    })
                })
                .collect();
            levels.push(next);
        }
        let esize = n.elem.data_size();
        let last = n.vars[k - 1];
        let mut values: Vec<u8> = Vec::new();
        for d in &levels[k - 1] {
            for j in 0..d.size {
                let at = d
                    .begin
                    .wrapping_offset(last.offset + j as isize * last.stride);
                // SAFETY: element j of the row: `esize` bytes on the host.
                values.extend_from_slice(unsafe { std::slice::from_raw_parts(at, esize) });
            }
        }
        let (vblock, vptr) = runtime.alloc(values.len().max(1))?;
        if !values.is_empty() {
            // SAFETY: (1) a fresh allocation of at least values.len() bytes.
            unsafe { runtime.copy_to_device(vptr, &values)? };
        }
        // Bottom up: each level's descriptors rebased onto the packed level
        // below it.
        let mut below: (MemBlock, *mut u8, usize) = (vblock, vptr, esize);
        let mut blocks: Vec<(MemBlock, isize, isize)> = Vec::with_capacity(k);
        for i in (0..k).rev() {
            let mut at = 0usize;
            let rebased: Vec<VarDimData> = levels[i]
                .iter()
                .map(|d| {
                    let r = VarDimData {
                        begin: below.1.wrapping_add(at * below.2),
                        size: d.size,
                    };
                    at += d.size;
                    r
                })
                .collect();
            let bytes = desc_bytes(&rebased);
            let (block, ptr) = runtime.alloc(bytes.len().max(1))?;
            if !bytes.is_empty() {
                // SAFETY: (1) a fresh allocation of bytes.len() bytes.
                unsafe { runtime.copy_to_device(ptr, &bytes)? };
            }
            blocks.push((below.0, below.2 as isize, 0));
            below = (block, ptr, DESC);
        }
        blocks.reverse();
        let outer: Vec<usize> = n.outer.iter().map(|(s, _)| *s).collect();
        // SAFETY: (1) the outer descriptors (C order) and every level were
        // just written on the device, each reaching the packed level below.
        Ok(Some(unsafe {
            from_levels(self.tp(), &outer, (below.1, below.0), blocks)
        }))
    }

    /// [`Array::to_host`] of a nested ragged device array; `None` for
    /// other types.
    pub(super) fn nested_to_host(&self, runtime: &dyn Device) -> Result<Option<Array>> {
        let Some(n) = nested(self) else {
            return Ok(None);
        };
        let k = n.vars.len();
        let rows = n.rows();
        // The outer descriptors: the span the fixed dims reach, one copy.
        // SAFETY: (1) each outer descriptor lies at its offset from the
        // data, on the device, kept alive by `self`.
        let packed = unsafe { read_rows(runtime, self.data_ptr(), &n.outer, DESC)? };
        let descs: Vec<VarDimData> = packed.chunks_exact(DESC).map(read_desc).collect();
        let dblock = MemBlock::new_fixed_for_overwrite((rows * DESC).max(1), 16)?;
        let (dptr, _) = dblock
            .fixed_data()
            .ok_or_else(|| Error::alloc("a fixed block without data"))?;
        // Where each row's descriptor is rewritten on the host, with the
        // device row it describes.
        let mut slots: Vec<(*mut u8, VarDimData)> = descs
            .iter()
            .enumerate()
            .map(|(r, d)| (dptr.wrapping_add(r * DESC), *d))
            .collect();
        let mut blocks: Vec<(MemBlock, isize, isize)> = Vec::with_capacity(k);
        for i in 0..k {
            let m = n.vars[i];
            let item = n.item(i) as isize;
            let reach = |d: &VarDimData| {
                let a = d.begin.wrapping_offset(m.offset);
                let b = a.wrapping_offset((d.size as isize - 1) * m.stride);
                let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                (lo as usize, hi as usize + item as usize)
            };
            let span = slots
                .iter()
                .filter(|(_, d)| d.size > 0)
                .map(|(_, d)| reach(d))
                .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)));
            let block = MemBlock::new_pod_allocator(0);
            let (lo, host) = match span {
                Some((lo, hi)) => {
                    let host = block
                        .pod_allocator()
                        .ok_or_else(|| Error::alloc("a POD allocator block without an allocator"))?
                        .allocate_for_overwrite(hi - lo, 16)?;
                    // SAFETY: `host` is a fresh buffer of `hi - lo` bytes.
                    let dst = unsafe { std::slice::from_raw_parts_mut(host, hi - lo) };
                    // SAFETY: (1) the span holds every element this level's
                    // rows reach, on the device, kept alive by the level's
                    // block.
                    unsafe { runtime.copy_to_host(dst, lo as *const u8)? };
                    (lo, host)
                }
                None => (0, std::ptr::null_mut()),
            };
            // This level's descriptors now point into the host copy.
            let mut next = Vec::new();
            for (slot, d) in &slots {
                let begin = if d.size == 0 || host.is_null() {
                    d.begin
                } else {
                    host.wrapping_offset(d.begin as isize - lo as isize)
                };
                // SAFETY: `slot` is a descriptor's 16 bytes in a host block
                // made here (the outer block, or the level above's copy).
                unsafe {
                    arrmeta::write(
                        *slot,
                        VarDimData {
                            begin,
                            size: d.size,
                        },
                    )
                };
                if i + 1 < k {
                    for j in 0..d.size {
                        let at = begin.wrapping_offset(m.offset + j as isize * m.stride);
                        // SAFETY: element j of the row, a descriptor of the
                        // next level, lies in the host copy just made.
                        let inner: VarDimData = unsafe { arrmeta::read(at) };
                        next.push((at, inner));
                    }
                }
            }
            blocks.push((block, m.stride, m.offset));
            slots = next;
        }
        let outer: Vec<usize> = n.outer.iter().map(|(s, _)| *s).collect();
        // SAFETY: (1) every level's descriptors point into the host copy
        // of the level below, through the same offsets and strides.
        Ok(Some(unsafe {
            from_levels(self.tp(), &outer, (dptr, dblock), blocks)
        }))
    }
}
