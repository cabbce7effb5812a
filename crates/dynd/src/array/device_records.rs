//! Records with var fields on a device (DESIGN §4, §14; issue #30):
//! `[fixed dims] * {a: var * T, b: U, …}` — fixed dims over structs whose
//! fields are plain values or var dims of plain values (`?var` too: rows
//! that may be missing, each descriptor followed by its present flag).
//!
//! On the device the records keep their host layout (C order over the
//! fixed dims, each field at its offset); a var field's data is its rows'
//! `{begin, size}` descriptors, `begin` a device address into a values
//! block of that field (its var arrmeta refers to it). [`Array::to_device`]
//! packs each var field's values in record order (one copy per field) and
//! the records (one copy) with the descriptors rebased; [`Array::to_host`]
//! copies the records' span, then the span of each field's values.
//!
//! A field of a device array is a view as on the host ([`Array::field`]):
//! a var field is then a ragged device array (`N * var * T`, its
//! descriptors a record apart), on which every ragged device operation
//! runs.

use super::Array;
use super::device_var::{c_order, read_rows, row_offset, write_outer};
use super::flags;
use crate::error::{Error, Result};
use crate::exec::{self, Device};
use crate::layout::{FixedDimMeta, VarDimData, VarDimMeta, arrmeta};
use crate::memblock::{DeviceId, MemBlock};
use crate::types::{Type, TypeKind};
use std::mem::size_of;

/// A var field: its data offset in the record, its arrmeta offset in the
/// record's arrmeta, its var arrmeta, and its element type.
struct VarField {
    data: usize,
    meta_at: usize,
    meta: VarDimMeta,
    elem: Type,
    /// A `?var` field's present flag, its offset in the field.
    flag: Option<usize>,
}

impl VarField {
    /// The field's row in the packed record at `at` (its data offset
    /// added): a missing row (`?var`) reads as empty, and is zeroed.
    fn row(&self, packed: &mut [u8], at: usize) -> VarDimData {
        if let Some(f) = self.flag
            && packed[at + f] == 0
        {
            packed[at..at + size_of::<VarDimData>()].fill(0);
            return VarDimData {
                begin: std::ptr::null_mut(),
                size: 0,
            };
        }
        // SAFETY: the field's descriptor, 16 bytes of the packed record.
        unsafe { arrmeta::read(packed.as_ptr().add(at)) }
    }
}

/// The layout of records with var fields.
struct Records {
    /// The fixed dims' sizes and byte strides.
    outer: Vec<(usize, isize)>,
    /// The record type.
    record: Type,
    /// The var fields.
    vars: Vec<VarField>,
}

impl Records {
    fn rows(&self) -> usize {
        self.outer.iter().map(|(n, _)| n).product()
    }

    fn row_offset(&self, r: usize) -> isize {
        row_offset(&self.outer, r)
    }
}

/// Whether `t` is fixed-size plain data (no arrmeta, no block references).
fn plain(t: &Type) -> bool {
    !t.is_dim() && !t.has_blockref() && t.arrmeta_size() == 0
}

/// The record layout of `a`: fixed dims over a struct whose fields are
/// plain or `var * plain`, at least one of them var; `None` otherwise.
fn records(a: &Array) -> Option<Records> {
    let mut outer = Vec::new();
    let mut t = a.tp();
    let mut meta = a.arrmeta_ptr();
    while let TypeKind::FixedDim { size, elem } = t.kind() {
        // SAFETY: a fixed dim's arrmeta is a FixedDimMeta, followed by its
        // element's.
        let (m, rest): (FixedDimMeta, _) = unsafe { arrmeta::read_dim(meta) };
        outer.push((*size, m.stride));
        meta = rest;
        t = elem;
    }
    let TypeKind::Struct(fields) = t.kind() else {
        return None;
    };
    let mut vars = Vec::new();
    for (i, ft) in fields.types().iter().enumerate() {
        // A `?var` field: the descriptor, then its flag; the option's
        // arrmeta is the var dim's.
        let rows = ft.option_value().unwrap_or(ft);
        match rows.kind() {
            TypeKind::VarDim { elem } if plain(elem) => {
                let meta_at = fields.arrmeta_offsets()[i];
                // SAFETY: the field's arrmeta (a VarDimMeta) lies at its
                // recorded offset in the struct's.
                let m: VarDimMeta = unsafe { arrmeta::read(meta.add(meta_at)) };
                vars.push(VarField {
                    data: fields.data_offsets()[i],
                    meta_at,
                    meta: m,
                    elem: elem.clone(),
                    flag: ft.option_flag_offset(),
                });
            }
            _ if plain(ft) => {}
            _ => return None,
        }
    }
    (!vars.is_empty()).then(|| Records {
        outer,
        record: t.clone(),
        vars,
    })
}

/// A new array of `tp` (fixed dims `outer` over `record`, C order) over
/// the records at `data`, each var field's arrmeta pointing at its block
/// (`values[i]` for `vars[i]`) with the given stride and offset.
///
/// # Safety
/// 1. `data` holds the records, C order; each var field's descriptors
///    reach elements of its block, in the same memory as `data`.
unsafe fn from_records(
    tp: &Type,
    outer: &[usize],
    record: &Type,
    (data, data_ref): (*mut u8, MemBlock),
    vars: &[VarField],
    values: Vec<(MemBlock, isize, isize)>,
) -> Array {
    let strides = c_order(outer, record.data_size());
    let metas: Vec<(usize, VarDimMeta)> = vars
        .iter()
        .zip(values)
        .map(|(v, (block, stride, offset))| {
            (
                v.meta_at,
                VarDimMeta {
                    blockref: block.into_raw().as_ptr(),
                    stride,
                    offset,
                },
            )
        })
        .collect();
    // SAFETY: (1); the arrmeta written is each fixed dim's, then the
    // struct's: each var field's at its offset (the owned reference to its
    // block); plain fields have none.
    unsafe {
        Array::from_parts(
            tp.clone(),
            data,
            data_ref,
            flags::READ | flags::WRITE,
            |m| {
                let at = write_outer(m, outer, &strides);
                for (off, v) in metas {
                    arrmeta::write(at.add(off), v);
                }
            },
        )
    }
}

impl Array {
    /// [`Array::to_device`] of records with var fields; `None` for other
    /// types.
    pub(super) fn records_to_device(&self, device: DeviceId) -> Result<Option<Array>> {
        let Some(r) = records(self) else {
            return Ok(None);
        };
        let runtime = exec::device(device)?;
        let size = r.record.data_size();
        let rows = r.rows();
        // The records, packed in C order, on the host.
        let mut packed = vec![0u8; rows * size];
        for k in 0..rows {
            // SAFETY: record k lies at its offset from the data: `size`
            // bytes of host memory (the array's layout).
            let src = unsafe {
                std::slice::from_raw_parts(self.data_ptr().offset(r.row_offset(k)), size)
            };
            packed[k * size..(k + 1) * size].copy_from_slice(src);
        }
        // Each var field's values, packed in record order, and its
        // descriptors rebased onto them.
        let mut blocks = Vec::with_capacity(r.vars.len());
        for v in &r.vars {
            let esize = v.elem.data_size();
            let mut values: Vec<u8> = Vec::new();
            let mut sizes = Vec::with_capacity(rows);
            for k in 0..rows {
                let at = k * size + v.data;
                let d = v.row(&mut packed, at);
                for j in 0..d.size {
                    let e = d
                        .begin
                        .wrapping_offset(v.meta.offset + j as isize * v.meta.stride);
                    // SAFETY: element j of the row: `esize` bytes of host
                    // memory (the array's layout).
                    values.extend_from_slice(unsafe { std::slice::from_raw_parts(e, esize) });
                }
                sizes.push(d.size);
            }
            let (block, ptr) = runtime.alloc(values.len().max(1))?;
            if !values.is_empty() {
                // SAFETY: (1) a fresh allocation of values.len() bytes.
                unsafe { runtime.copy_to_device(ptr, &values)? };
            }
            let mut prefix = 0usize;
            for (k, &n) in sizes.iter().enumerate() {
                let at = k * size + v.data;
                if v.flag.is_some_and(|f| packed[at + f] == 0) {
                    continue;
                }
                let begin = (ptr as u64).wrapping_add((prefix * esize) as u64);
                packed[at..at + 8].copy_from_slice(&begin.to_ne_bytes());
                prefix += n;
            }
            blocks.push((block, esize as isize, 0));
        }
        let (dblock, dptr) = runtime.alloc(packed.len().max(1))?;
        if !packed.is_empty() {
            // SAFETY: (1) a fresh allocation of packed.len() bytes.
            unsafe { runtime.copy_to_device(dptr, &packed)? };
        }
        let outer: Vec<usize> = r.outer.iter().map(|(n, _)| *n).collect();
        // SAFETY: (1) the records, C order, on the device; each var field's
        // descriptors reach its values block.
        Ok(Some(unsafe {
            from_records(
                self.tp(),
                &outer,
                &r.record,
                (dptr, dblock),
                &r.vars,
                blocks,
            )
        }))
    }

    /// [`Array::to_host`] of records with var fields on a device; `None`
    /// for other types.
    pub(super) fn records_to_host(&self, runtime: &dyn Device) -> Result<Option<Array>> {
        let Some(r) = records(self) else {
            return Ok(None);
        };
        let size = r.record.data_size();
        let rows = r.rows();
        // The records: one copy, packed in C order.
        // SAFETY: (1) each record lies at its offset from the data, on the
        // device, kept alive by `self`.
        let mut packed = unsafe { read_rows(runtime, self.data_ptr(), &r.outer, size)? };
        let mut blocks = Vec::with_capacity(r.vars.len());
        for v in &r.vars {
            let esize = v.elem.data_size() as isize;
            let descs: Vec<VarDimData> = (0..rows)
                .map(|k| v.row(&mut packed, k * size + v.data))
                .collect();
            let span = descs
                .iter()
                .filter(|d| d.size > 0)
                .map(|d| {
                    let a = d.begin.wrapping_offset(v.meta.offset);
                    let b = a.wrapping_offset((d.size as isize - 1) * v.meta.stride);
                    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                    (lo as usize, hi as usize + esize as usize)
                })
                .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)));
            let block = MemBlock::new_pod_allocator(0);
            if let Some((lo, hi)) = span {
                let host = block
                    .pod_allocator()
                    .ok_or_else(|| Error::alloc("a POD allocator block without an allocator"))?
                    .allocate_for_overwrite(hi - lo, 16)?;
                // SAFETY: `host` is a fresh buffer of `hi - lo` bytes.
                let dst = unsafe { std::slice::from_raw_parts_mut(host, hi - lo) };
                // SAFETY: (1) the span holds every value the field's rows
                // reach, on the device, kept alive by the field's block.
                unsafe { runtime.copy_to_host(dst, lo as *const u8)? };
                for (k, d) in descs.iter().enumerate() {
                    if d.size == 0 {
                        continue;
                    }
                    let begin = host.wrapping_offset(d.begin as isize - lo as isize) as u64;
                    let at = k * size + v.data;
                    packed[at..at + 8].copy_from_slice(&begin.to_ne_bytes());
                }
            }
            blocks.push((block, v.meta.stride, v.meta.offset));
        }
        let dblock = MemBlock::new_fixed_for_overwrite(packed.len().max(1), 16)?;
        let (dptr, _) = dblock
            .fixed_data()
            .ok_or_else(|| Error::alloc("a fixed block without data"))?;
        // SAFETY: `dptr` is a fresh host buffer of at least packed.len()
        // bytes.
        unsafe { std::ptr::copy_nonoverlapping(packed.as_ptr(), dptr, packed.len()) };
        let outer: Vec<usize> = r.outer.iter().map(|(n, _)| *n).collect();
        // SAFETY: (1) the host records, C order; each var field's
        // descriptors reach the host copy of its values through the same
        // offset and stride as on the device.
        Ok(Some(unsafe {
            from_records(
                self.tp(),
                &outer,
                &r.record,
                (dptr, dblock),
                &r.vars,
                blocks,
            )
        }))
    }
}
