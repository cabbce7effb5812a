//! Arrow → dynd: an arrow-rs [`ArrayData`] (validated) becomes a dynd
//! array of type `N * T`, N its length.
//!
//! Each Arrow column becomes a [`Column`]: its elements' dynd type, the
//! address of element 0, a stride (always the element's data size: every
//! column is compact), the block that owns the element data, and the
//! element arrmeta (whose blockrefs own whatever the elements point at).
//! What is zero-copy:
//! - non-null primitives and FixedSizeLists of them: the Arrow values
//!   buffer is the element data (an external block holds the arrow-rs
//!   buffers, and through them the producer's release);
//! - List/LargeList/ListView values: the var dim's blockref holds the child
//!   column's block; only the `{begin, size}` row descriptors are new (one
//!   pass over the offsets);
//! - string and binary bytes: the descriptors are new, the bytes are the
//!   Arrow buffers.
//!
//! What copies: nullable columns (the values, so that NA sentinels or flag
//! bytes can be written), booleans (bits → bytes), and structs (Arrow
//! stores a struct's fields as separate columns; dynd stores a struct's
//! fields side by side in one element).

use super::schema::primitive_from_arrow;
use crate::array::{Array, flags};
use crate::error::{Error, Result};
use crate::exec::{self, Shared, TASK_ELEMENTS};
use crate::layout::{BlockrefMeta, FixedDimMeta, StringData, VarDimData, VarDimMeta, arrmeta, na};
use crate::memblock::MemBlock;
use crate::types::Type;
use arrow_buffer::ArrowNativeType;
use arrow_data::ArrayData;
use arrow_schema::DataType;
use std::mem::size_of;

/// Owned arrmeta bytes of a type: its blockrefs are owned references,
/// dropped with it unless moved out by [`Meta::move_to`].
struct Meta {
    tp: Type,
    bytes: Vec<u8>,
}

impl Meta {
    /// Default-free arrmeta: zeroed (for types whose arrmeta is written by
    /// the caller, or that have none).
    fn zeroed(tp: &Type) -> Meta {
        Meta {
            tp: tp.clone(),
            bytes: vec![0; tp.arrmeta_size()],
        }
    }

    /// Moves the arrmeta (and its references) to `dst`.
    ///
    /// # Safety
    /// 1. `dst` has room for `self.tp.arrmeta_size()` bytes.
    unsafe fn move_to(mut self, dst: *mut u8) {
        // SAFETY: (1); the references move with the bytes, and the emptied
        // Vec makes Drop skip them.
        unsafe { std::ptr::copy_nonoverlapping(self.bytes.as_ptr(), dst, self.bytes.len()) };
        self.bytes.clear();
    }
}

impl Drop for Meta {
    fn drop(&mut self) {
        if !self.bytes.is_empty() {
            // SAFETY: non-empty bytes are the type's arrmeta, holding owned
            // references (or nulls) written by this module.
            unsafe { arrmeta::destroy(&self.tp, self.bytes.as_mut_ptr()) }
        }
    }
}

/// One imported Arrow column (see the module docs).
struct Column {
    tp: Type,
    data: *mut u8,
    len: usize,
    block: MemBlock,
    meta: Meta,
}

impl Column {
    /// `len` elements of `meta.tp` at `data`, kept alive by `block`.
    fn new(data: *mut u8, len: usize, block: MemBlock, meta: Meta) -> Column {
        Column {
            tp: meta.tp.clone(),
            data,
            len,
            block,
            meta,
        }
    }
}

/// The dynd array of type `N * T` for an Arrow array of length N.
/// `nullable` (the schema's flag) makes the elements `?T` even when no
/// value is null.
pub(crate) fn import(data: &ArrayData, nullable: bool) -> Result<Array> {
    let col = column(data, nullable, "the root")?;
    let Column {
        tp,
        data,
        len,
        block,
        meta,
    } = col;
    let stride = tp.data_size() as isize;
    let full = Type::fixed_dim(len, tp);
    let fm = FixedDimMeta {
        dim_size: len as isize,
        stride,
    };
    // An empty array's data is never read; keep it non-null and aligned.
    let data = if data.is_null() {
        full.data_alignment() as *mut u8
    } else {
        data
    };
    // SAFETY: `data` holds `len` elements of the column's type at `stride`,
    // owned by `block`; the arrmeta written is the fixed dim's, then the
    // column's element arrmeta, whose references move into the array.
    Ok(unsafe {
        Array::from_parts(full, data, block, flags::READ, |m| {
            arrmeta::write(m, fm);
            meta.move_to(m.add(size_of::<FixedDimMeta>()));
        })
    })
}

/// A block holding (a clone of) `data`: its buffers, and through them the
/// producer's release, live until the last dynd array over them is gone.
fn keep(data: &ArrayData) -> MemBlock {
    let d = data.clone();
    MemBlock::new_external(move || drop(d))
}

/// A fresh zeroed buffer of `n` elements of `tp`.
fn new_elems(tp: &Type, n: usize) -> Result<(MemBlock, *mut u8)> {
    new_elems_with(tp, n, true)
}

/// A fresh buffer of `n` elements of `tp`, zeroed when `zero` (else its
/// bytes are zero or a freed block's: the caller writes every element).
fn new_elems_with(tp: &Type, n: usize, zero: bool) -> Result<(MemBlock, *mut u8)> {
    let bytes = n
        .checked_mul(tp.data_size())
        .ok_or_else(|| Error::alloc(format!("{n} elements of {tp} do not fit in memory")))?;
    let block = if zero {
        MemBlock::new_fixed(bytes, tp.data_alignment())?
    } else {
        MemBlock::new_fixed_for_overwrite(bytes, tp.data_alignment())?
    };
    let (ptr, _) = block
        .fixed_data()
        .ok_or_else(|| Error::alloc("a fixed data block without data"))?;
    Ok((block, ptr))
}

fn column(data: &ArrayData, nullable: bool, path: &str) -> Result<Column> {
    let n = data.len();
    let off = data.offset();
    let opt = nullable || data.null_count() > 0;
    let is_null = |i: usize| data.nulls().is_some_and(|v| v.is_null(i));
    let dt = data.data_type();
    if let Some(b) = primitive_from_arrow(dt) {
        let elem = Type::builtin(b);
        let size = b.data_size();
        let buf = &data.buffers()[0];
        // SAFETY: a validated primitive array's buffer holds offset + len
        // values of the type.
        let src = unsafe { buf.as_ptr().add(off * size) };
        if !opt {
            return Ok(Column::new(
                src.cast_mut(),
                n,
                keep(data),
                Meta::zeroed(&elem),
            ));
        }
        let tp = Type::option(elem.clone())?;
        let (block, dst) = new_elems(&tp, n)?;
        // SAFETY: `src` has n values (above), `dst` room for n.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, n * size) };
        for i in 0..n {
            // SAFETY: element i of the new buffer.
            let p = unsafe { dst.add(i * size) };
            if is_null(i) {
                // SAFETY: `p` is writable data of `tp`.
                unsafe { na::set_missing(&tp, p)? };
            // SAFETY: `p` holds a value of `elem`.
            } else if unsafe { na::is_missing(&tp, p) } {
                return Err(Error::invalid_argument(format!(
                    "the value at index {i} of {path} is the NA sentinel of {tp}, so a nullable {elem} column cannot hold it"
                )));
            }
        }
        return Ok(Column::new(dst, n, block, Meta::zeroed(&tp)));
    }
    match dt {
        DataType::Boolean => {
            let elem = Type::bool();
            let tp = maybe_option(elem, opt)?;
            let (block, dst) = new_elems(&tp, n)?;
            let bits = arrow_buffer::BooleanBuffer::new(data.buffers()[0].clone(), off, n);
            for (i, v) in bits.iter().enumerate() {
                // SAFETY: element i of the new n-byte buffer.
                unsafe { *dst.add(i) = if is_null(i) { 2 } else { v as u8 } };
            }
            Ok(Column::new(dst, n, block, Meta::zeroed(&tp)))
        }
        DataType::Utf8 | DataType::Binary => strings::<i32>(data, opt),
        DataType::LargeUtf8 | DataType::LargeBinary => strings::<i64>(data, opt),
        DataType::Utf8View | DataType::BinaryView => string_views(data, opt),
        DataType::FixedSizeList(field, k) => {
            let k = *k as usize;
            let child = data.child_data()[0].slice(off * k, n * k);
            let c = column(&child, field.is_nullable(), &format!("{path}.item"))?;
            let esize = c.tp.data_size();
            let tp = Type::fixed_dim(k, c.tp.clone());
            let mut meta = Meta::zeroed(&tp);
            let fm = FixedDimMeta {
                dim_size: k as isize,
                stride: esize as isize,
            };
            let Column {
                data: cdata,
                block,
                meta: cmeta,
                ..
            } = c;
            // SAFETY: `tp`'s arrmeta is the fixed dim's, then the child's.
            unsafe {
                arrmeta::write(meta.bytes.as_mut_ptr(), fm);
                cmeta.move_to(meta.bytes.as_mut_ptr().add(size_of::<FixedDimMeta>()));
            }
            let col = Column::new(cdata, n, block, meta);
            if opt { to_option(col, data) } else { Ok(col) }
        }
        DataType::List(field) | DataType::ListView(field) => {
            lists::<i32>(data, field.is_nullable(), opt, path)
        }
        DataType::LargeList(field) | DataType::LargeListView(field) => {
            lists::<i64>(data, field.is_nullable(), opt, path)
        }
        DataType::Struct(fields) => {
            let mut cols = Vec::with_capacity(fields.len());
            for (f, child) in fields.iter().zip(data.child_data()) {
                let child = child.slice(off, n);
                cols.push(column(
                    &child,
                    f.is_nullable(),
                    &format!("{path}.{}", f.name()),
                )?);
            }
            let st = Type::struct_of(
                fields
                    .iter()
                    .zip(&cols)
                    .map(|(f, c)| (f.name().clone(), c.tp.clone())),
            )
            .map_err(|e| e.context(format!("at {path}")))?;
            let tp = maybe_option(st.clone(), opt)?;
            let (block, dst) = new_elems(&tp, n)?;
            let sf = st
                .fields()
                .ok_or_else(|| Error::type_error("a struct without fields"))?;
            let ssize = tp.data_size();
            let mut meta = Meta::zeroed(&tp);
            for (k, c) in cols.into_iter().enumerate() {
                let fsize = c.tp.data_size();
                let doff = sf.data_offsets()[k];
                for i in 0..n {
                    // SAFETY: element i of the field column (compact, n
                    // elements) and field k of element i of the new buffer.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            c.data.add(i * fsize),
                            dst.add(i * ssize + doff),
                            fsize,
                        )
                    };
                }
                // SAFETY: the field's arrmeta lies at its offset in the
                // struct's (an option's arrmeta is its value's).
                unsafe {
                    c.meta
                        .move_to(meta.bytes.as_mut_ptr().add(sf.arrmeta_offsets()[k]))
                };
            }
            if opt {
                for i in 0..n {
                    // SAFETY: element i of the new buffer, of type `tp`.
                    unsafe {
                        let p = dst.add(i * ssize);
                        if is_null(i) {
                            na::set_missing(&tp, p)?;
                        } else {
                            na::set_present(&tp, p);
                        }
                    }
                }
            }
            meta.tp = tp;
            Ok(Column::new(dst, n, block, meta))
        }
        other => Err(Error::type_error(format!(
            "the Arrow type {other} at {path} has no dynd form"
        ))),
    }
}

/// A copy of `col` as `?T` (a flag-byte option), missing where `data`'s
/// validity says null.
fn to_option(col: Column, data: &ArrayData) -> Result<Column> {
    let tp = Type::option(col.tp.clone())?;
    let (block, dst) = new_elems(&tp, col.len)?;
    let (esize, osize) = (col.tp.data_size(), tp.data_size());
    for i in 0..col.len {
        // SAFETY: element i of the column (compact) and of the new buffer.
        unsafe {
            let p = dst.add(i * osize);
            if data.nulls().is_some_and(|v| v.is_null(i)) {
                na::set_missing(&tp, p)?;
            } else {
                std::ptr::copy_nonoverlapping(col.data.add(i * esize), p, esize);
                na::set_present(&tp, p);
            }
        }
    }
    let mut meta = col.meta;
    meta.tp = tp;
    Ok(Column::new(dst, col.len, block, meta))
}

/// `tp`, or `?tp` when the column has nulls (`opt`).
fn maybe_option(tp: Type, opt: bool) -> Result<Type> {
    if opt { Type::option(tp) } else { Ok(tp) }
}

/// `string` (Utf8 types) or `bytes` (Binary types) for `data`'s type.
fn text_type(dt: &DataType) -> Type {
    match dt {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Type::string(),
        _ => Type::bytes(),
    }
}

/// The string descriptors of an offsets-and-bytes column: new
/// `{begin, end}` records, the bytes zero-copy.
fn strings<O: ArrowNativeType + TryInto<usize>>(data: &ArrayData, opt: bool) -> Result<Column> {
    let (n, off) = (data.len(), data.offset());
    let elem = text_type(data.data_type());
    let tp = maybe_option(elem, opt)?;
    let (block, dst) = new_elems(&tp, n)?;
    let offsets = &data.buffers()[0].typed_data::<O>()[off..off + n + 1];
    let values = data.buffers()[1].as_ptr().cast_mut();
    let us = |o: O| -> usize { o.try_into().unwrap_or(0) };
    for i in 0..n {
        if data.nulls().is_some_and(|v| v.is_null(i)) {
            continue; // zeroed: the string NA (a null begin)
        }
        // SAFETY: validated offsets lie inside the values buffer.
        let s = unsafe {
            StringData {
                begin: values.add(us(offsets[i])),
                end: values.add(us(offsets[i + 1])),
            }
        };
        // SAFETY: element i of the new buffer of string data.
        unsafe { arrmeta::write(dst.add(i * 16), s) };
    }
    string_column(tp, dst, n, block, data)
}

/// A string column over `n` descriptors at `dst` whose bytes `data` owns.
fn string_column(
    tp: Type,
    dst: *mut u8,
    n: usize,
    block: MemBlock,
    data: &ArrayData,
) -> Result<Column> {
    let mut meta = Meta::zeroed(&tp);
    let bm = BlockrefMeta {
        blockref: keep(data).into_raw().as_ptr(),
    };
    // SAFETY: string arrmeta is one blockref; the new reference moves in.
    unsafe { arrmeta::write(meta.bytes.as_mut_ptr(), bm) };
    Ok(Column::new(dst, n, block, meta))
}

/// The string descriptors of a view column (Utf8View, BinaryView): short
/// strings point into the views buffer, long ones into the data buffers.
fn string_views(data: &ArrayData, opt: bool) -> Result<Column> {
    let (n, off) = (data.len(), data.offset());
    let elem = text_type(data.data_type());
    let tp = maybe_option(elem, opt)?;
    let (block, dst) = new_elems(&tp, n)?;
    let views = data.buffers()[0].as_ptr();
    for i in 0..n {
        if data.nulls().is_some_and(|v| v.is_null(i)) {
            continue;
        }
        // SAFETY: a validated view array has offset + len 16-byte views.
        let view = unsafe { views.add((off + i) * 16) };
        // SAFETY: the view's first 4 bytes are the length.
        let len = unsafe { arrmeta::read::<u32>(view) } as usize;
        let begin = if len <= 12 {
            // SAFETY: short strings are inline after the length.
            unsafe { view.add(4) }
        } else {
            // SAFETY: bytes 8..16 of a long view: buffer index, offset.
            let (b, o) = unsafe {
                (
                    arrmeta::read::<u32>(view.add(8)),
                    arrmeta::read::<u32>(view.add(12)),
                )
            };
            let buf = data.buffers().get(1 + b as usize).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "view {i} names data buffer {b}, which does not exist"
                ))
            })?;
            // SAFETY: validated views lie inside their data buffer.
            unsafe { buf.as_ptr().add(o as usize) }
        };
        // SAFETY: `len` bytes from `begin`; element i of the new buffer.
        unsafe {
            arrmeta::write(
                dst.add(i * 16),
                StringData {
                    begin: begin.cast_mut(),
                    end: begin.add(len).cast_mut(),
                },
            )
        };
    }
    string_column(tp, dst, n, block, data)
}

/// `var * C` for a List, LargeList, ListView or LargeListView column: new
/// `{begin, size}` rows (one pass over the offsets), the child column's
/// values zero-copy where it is.
fn lists<O: ArrowNativeType + TryInto<usize>>(
    data: &ArrayData,
    child_nullable: bool,
    opt: bool,
    path: &str,
) -> Result<Column> {
    let (n, off) = (data.len(), data.offset());
    let view = matches!(
        data.data_type(),
        DataType::ListView(_) | DataType::LargeListView(_)
    );
    let child = column(
        &data.child_data()[0],
        child_nullable,
        &format!("{path}.item"),
    )?;
    let esize = child.tp.data_size();
    let vtp = Type::var_dim(child.tp.clone());
    let tp = maybe_option(vtp, opt)?;
    // Without nulls every row is written below: no need to zero first.
    let (block, dst) = new_elems_with(&tp, n, data.null_count() > 0)?;
    let rsize = tp.data_size();
    let flag = tp.option_flag_offset();
    let us = |o: O| -> usize { o.try_into().unwrap_or(0) };
    let offsets = data.buffers()[0].typed_data::<O>();
    let sizes = view.then(|| data.buffers()[1].typed_data::<O>());
    let (base, out) = (Shared(child.data), Shared(dst));
    // One pass over the offsets: a flat run of the executor (pieces of a
    // long column on its threads, each writing its own rows).
    exec::flat(n, TASK_ELEMENTS, |lo, count| {
        for i in lo..lo + count {
            if data.nulls().is_some_and(|v| v.is_null(i)) {
                continue; // zeroed: a missing row
            }
            let start = us(offsets[off + i]);
            let size = match sizes {
                Some(s) => us(s[off + i]),
                None => us(offsets[off + i + 1]) - start,
            };
            let row = VarDimData {
                // SAFETY: validated offsets lie inside the child column.
                begin: unsafe { base.get().add(start * esize) },
                size,
            };
            // SAFETY: row i of the new buffer (this piece's alone), then its
            // flag byte when optional.
            unsafe {
                let p = out.get().add(i * rsize);
                arrmeta::write(p, row);
                if let Some(f) = flag {
                    *p.add(f) = 1;
                }
            }
        }
        Ok(())
    })?;
    let Column {
        block: cblock,
        meta: cmeta,
        ..
    } = child;
    let mut meta = Meta::zeroed(&tp);
    let vm = VarDimMeta {
        blockref: cblock.into_raw().as_ptr(),
        stride: esize as isize,
        offset: 0,
    };
    // SAFETY: var arrmeta, then the child's; the child block's reference
    // moves into the var dim's blockref.
    unsafe {
        arrmeta::write(meta.bytes.as_mut_ptr(), vm);
        cmeta.move_to(meta.bytes.as_mut_ptr().add(size_of::<VarDimMeta>()));
    }
    Ok(Column::new(dst, n, block, meta))
}
