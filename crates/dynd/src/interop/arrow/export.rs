//! dynd → Arrow: an array of one or more dims becomes an arrow-rs
//! [`ArrayData`] whose length is its outermost dim.
//!
//! The walk goes column by column. A column is a set of elements of one
//! dynd type, either evenly strided ([`Elems::Strided`]) or scattered
//! ([`Elems::Ptrs`], after a gather of ragged rows that do not lie in
//! order). What is zero-copy: primitives at their natural stride (the
//! Arrow buffer points into dynd memory and holds the array alive),
//! the values of var dims whose rows lie in order in one block, and the
//! bytes of strings that lie in order. Everything else is copied: validity
//! bitmaps are computed, booleans packed, offsets written, scattered
//! elements gathered.

use super::schema::{no_arrow_form, primitive_to_arrow};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::layout::{FixedDimMeta, StringData, VarDimData, VarDimMeta, arrmeta, na};
use crate::types::{Type, TypeKind};
use arrow_buffer::{Buffer, MutableBuffer, NullBuffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, Fields};
use std::mem::size_of;
use std::panic::AssertUnwindSafe;
use std::ptr::NonNull;
use std::sync::Arc;

/// What keeps the dynd memory under zero-copy Arrow buffers alive: the
/// exported array itself (its arrmeta holds every block its data reaches).
struct Keep(#[allow(dead_code)] AssertUnwindSafe<Array>);

/// The elements of one column.
enum Elems {
    /// `len` elements from `ptr`, `stride` bytes apart.
    Strided {
        ptr: *const u8,
        stride: isize,
        len: usize,
    },
    /// Each element's address.
    Ptrs(Vec<*const u8>),
}

impl Elems {
    fn len(&self) -> usize {
        match self {
            Elems::Strided { len, .. } => *len,
            Elems::Ptrs(v) => v.len(),
        }
    }

    fn get(&self, i: usize) -> *const u8 {
        match self {
            Elems::Strided { ptr, stride, .. } => ptr.wrapping_offset(*stride * i as isize),
            Elems::Ptrs(v) => v[i],
        }
    }

    /// The same elements moved by `off` bytes (a struct field).
    fn shifted(&self, off: usize) -> Elems {
        match self {
            Elems::Strided { ptr, stride, len } => Elems::Strided {
                ptr: ptr.wrapping_add(off),
                stride: *stride,
                len: *len,
            },
            Elems::Ptrs(v) => Elems::Ptrs(v.iter().map(|p| p.wrapping_add(off)).collect()),
        }
    }
}

/// The exporter's state: the owner that zero-copy buffers hold.
struct Exporter {
    keep: Arc<Keep>,
}

/// `a` as Arrow data with its field (name `""`; nullable when the
/// elements are options).
pub(crate) fn export(a: &Array) -> Result<(ArrayData, Field)> {
    a.check_host("Arrow export")?;
    let ex = Exporter {
        keep: Arc::new(Keep(AssertUnwindSafe(a.clone()))),
    };
    let (elems, tp, meta) = match a.tp().kind() {
        TypeKind::FixedDim { size, elem } => {
            // SAFETY: a fixed dim's arrmeta starts with FixedDimMeta.
            let fm: FixedDimMeta = unsafe { arrmeta::read(a.arrmeta_ptr()) };
            let e = Elems::Strided {
                ptr: a.data_ptr(),
                stride: fm.stride,
                len: *size,
            };
            // SAFETY: the element's arrmeta follows.
            (e, elem, unsafe {
                a.arrmeta_ptr().add(size_of::<FixedDimMeta>())
            })
        }
        TypeKind::VarDim { elem } => {
            // SAFETY: a var dim's arrmeta and data (DESIGN §4).
            let (vm, row): (VarDimMeta, VarDimData) =
                unsafe { (arrmeta::read(a.arrmeta_ptr()), arrmeta::read(a.data_ptr())) };
            let e = Elems::Strided {
                ptr: row.begin.wrapping_offset(vm.offset),
                stride: vm.stride,
                len: row.size,
            };
            // SAFETY: the element's arrmeta follows.
            (e, elem, unsafe {
                a.arrmeta_ptr().add(size_of::<VarDimMeta>())
            })
        }
        _ => {
            return Err(Error::type_error(format!(
                "an array of type {} has no dim, so it has no Arrow form: Arrow arrays are columns (export at least one dim)",
                a.tp()
            )));
        }
    };
    let (data, nullable) = ex.column(tp, meta, &elems)?;
    let field = Field::new("", data.data_type().clone(), nullable);
    Ok((data, field))
}

impl Exporter {
    /// A zero-copy buffer over `len` bytes at `ptr`, held by the array.
    fn borrow(&self, ptr: *const u8, len: usize) -> Buffer {
        match NonNull::new(ptr.cast_mut()) {
            // SAFETY: the bytes are the exported array's, alive while the
            // array is (held by `keep` for as long as the buffer).
            Some(p) if len > 0 => unsafe {
                Buffer::from_custom_allocation(p, len, self.keep.clone())
            },
            _ => Buffer::from(MutableBuffer::new(0)),
        }
    }

    /// The column of `tp` elements `elems` (arrmeta `meta`) and whether it
    /// is nullable (`tp` an option).
    fn column(&self, tp: &Type, meta: *const u8, elems: &Elems) -> Result<(ArrayData, bool)> {
        let n = elems.len();
        let (value, nulls) = match tp.kind() {
            TypeKind::Option(v) => {
                // SAFETY: each element is data of the option type.
                let valid = (0..n).map(|i| !unsafe { na::is_missing(tp, elems.get(i)) });
                (v, Some(NullBuffer::from_iter(valid)))
            }
            _ => (tp, None),
        };
        let is_null = |i: usize| nulls.as_ref().is_some_and(|b| b.is_null(i));
        let data = match value.kind() {
            TypeKind::Builtin(b) if *b == crate::types::BuiltinType::Bool => {
                // SAFETY: each element is one bool byte.
                let bits = (0..n).map(|i| unsafe { *elems.get(i) } == 1);
                let buf = arrow_buffer::BooleanBuffer::from_iter(bits).into_inner();
                self.build(
                    ArrayData::builder(DataType::Boolean).len(n).add_buffer(buf),
                    nulls,
                )
            }
            TypeKind::Builtin(b) => {
                let dt = primitive_to_arrow(*b)?;
                let size = b.data_size();
                let buf = match elems {
                    Elems::Strided { ptr, stride, len } if *stride == size as isize => {
                        self.borrow(*ptr, len * size)
                    }
                    _ => {
                        // MutableBuffer: aligned for every primitive.
                        let mut v = MutableBuffer::with_capacity(n * size);
                        for i in 0..n {
                            // SAFETY: each element has `size` bytes.
                            v.extend_from_slice(unsafe {
                                std::slice::from_raw_parts(elems.get(i), size)
                            });
                        }
                        v.into()
                    }
                };
                self.build(ArrayData::builder(dt).len(n).add_buffer(buf), nulls)
            }
            TypeKind::String | TypeKind::Bytes => {
                let text = matches!(value.kind(), TypeKind::String);
                self.strings(text, n, elems, &is_null, nulls.clone())
            }
            TypeKind::FixedDim { size: k, elem } => {
                // SAFETY: the fixed dim's arrmeta, then the element's.
                let fm: FixedDimMeta = unsafe { arrmeta::read(meta) };
                let emeta = meta.wrapping_add(size_of::<FixedDimMeta>());
                let child = match elems {
                    Elems::Strided { ptr, stride, len } if *stride == fm.stride * *k as isize => {
                        Elems::Strided {
                            ptr: *ptr,
                            stride: fm.stride,
                            len: len * k,
                        }
                    }
                    _ => Elems::Ptrs(
                        (0..n)
                            .flat_map(|i| {
                                let p = elems.get(i);
                                (0..*k).map(move |j| p.wrapping_offset(fm.stride * j as isize))
                            })
                            .collect(),
                    ),
                };
                let (cd, cn) = self.column(elem, emeta, &child)?;
                let f = Arc::new(Field::new("item", cd.data_type().clone(), cn));
                let dt = DataType::FixedSizeList(f, *k as i32);
                self.build(ArrayData::builder(dt).len(n).add_child_data(cd), nulls)
            }
            TypeKind::VarDim { elem } => {
                // SAFETY: the var dim's arrmeta, then the element's.
                let vm: VarDimMeta = unsafe { arrmeta::read(meta) };
                let emeta = meta.wrapping_add(size_of::<VarDimMeta>());
                self.lists(elem, emeta, vm, elems, &is_null, nulls.clone())
            }
            TypeKind::Struct(fields) | TypeKind::Tuple(fields) => {
                let tuple = matches!(value.kind(), TypeKind::Tuple(_));
                let mut afields = Vec::with_capacity(fields.len());
                let mut children = Vec::with_capacity(fields.len());
                for k in 0..fields.len() {
                    let child = elems.shifted(fields.data_offsets()[k]);
                    let fmeta = meta.wrapping_add(fields.arrmeta_offsets()[k]);
                    let (cd, cn) = self.column(&fields.types()[k], fmeta, &child)?;
                    let name = if tuple {
                        format!("f{k}")
                    } else {
                        fields.names()[k].clone()
                    };
                    afields.push(Field::new(name, cd.data_type().clone(), cn));
                    children.push(cd);
                }
                let dt = DataType::Struct(Fields::from(afields));
                self.build(ArrayData::builder(dt).len(n).child_data(children), nulls)
            }
            _ => Err(no_arrow_form(value)),
        };
        Ok((data?, tp.option_value().is_some()))
    }

    /// Finishes a builder with its validity. Not validated again in
    /// release builds (an O(rows) pass over the offsets): every builder
    /// here is filled by this module — buffers of exactly `len` values
    /// (plus one offset), offsets that start at 0, never decrease and end
    /// at the child's length or the values' byte count, string bytes from
    /// dynd strings (valid UTF-8), children of the declared types. Debug
    /// builds validate, and the tests run arrow-rs's `validate_full` on
    /// every export.
    fn build(
        &self,
        b: arrow_data::ArrayDataBuilder,
        nulls: Option<NullBuffer>,
    ) -> Result<ArrayData> {
        let b = b.nulls(nulls);
        if cfg!(debug_assertions) {
            return b
                .build()
                .map_err(|e| Error::external(format!("arrow-rs refused the exported data: {e}")));
        }
        // SAFETY: the builder holds data this module laid out as Arrow's
        // specification requires for its type (the list above).
        Ok(unsafe { b.build_unchecked() })
    }

    /// Utf8/Binary (LargeUtf8/LargeBinary past 2 GiB): the bytes
    /// zero-copy when the strings lie in order, else gathered.
    fn strings(
        &self,
        text: bool,
        n: usize,
        elems: &Elems,
        is_null: &dyn Fn(usize) -> bool,
        nulls: Option<NullBuffer>,
    ) -> Result<ArrayData> {
        // SAFETY: each element is string data.
        let get = |i: usize| -> StringData { unsafe { arrmeta::read(elems.get(i)) } };
        let mut offsets = Offsets::with_capacity(n + 1);
        let mut seen = InOrder::new();
        let mut total = 0usize;
        for i in 0..n {
            let s = get(i);
            let len = if is_null(i) || s.begin.is_null() {
                0
            } else {
                s.end as usize - s.begin as usize
            };
            if len > 0 {
                seen.push(s.begin, s.end);
            }
            total += len;
            offsets.push(total);
        }
        let values = if seen.in_order {
            self.borrow(seen.first, total)
        } else {
            let mut v = Vec::with_capacity(total);
            for i in 0..n {
                if !is_null(i) {
                    // SAFETY: string data of a live array.
                    v.extend_from_slice(unsafe { crate::layout::string_bytes(get(i)) });
                }
            }
            Buffer::from_vec(v)
        };
        let large = offsets.is_large();
        let dt = match (text, large) {
            (true, false) => DataType::Utf8,
            (true, true) => DataType::LargeUtf8,
            (false, false) => DataType::Binary,
            (false, true) => DataType::LargeBinary,
        };
        let offs = offsets.into_buffer();
        self.build(
            ArrayData::builder(dt)
                .len(n)
                .add_buffer(offs)
                .add_buffer(values),
            nulls,
        )
    }

    /// List (LargeList past i32 offsets) of `elem`: one pass over the row
    /// descriptors writes the offsets and checks whether the rows lie in
    /// order; if so the values are one strided run, else a gather.
    fn lists(
        &self,
        elem: &Type,
        emeta: *const u8,
        vm: VarDimMeta,
        elems: &Elems,
        is_null: &dyn Fn(usize) -> bool,
        nulls: Option<NullBuffer>,
    ) -> Result<ArrayData> {
        let n = elems.len();
        let scan = match elems {
            // The common case, as its own loop: no nulls, descriptors
            // `stride` apart (no per-row null test or dispatch).
            Elems::Strided { ptr, stride, .. } if nulls.is_none() => {
                let (ptr, stride) = (*ptr, *stride);
                scan_rows(n, vm, |i| {
                    // SAFETY: element i is a var row descriptor.
                    unsafe { arrmeta::read::<VarDimData>(ptr.wrapping_offset(stride * i as isize)) }
                })
            }
            _ => scan_rows(n, vm, |i| {
                if is_null(i) {
                    VarDimData {
                        begin: std::ptr::null_mut(),
                        size: 0,
                    }
                } else {
                    // SAFETY: element i is a var row descriptor.
                    unsafe { arrmeta::read(elems.get(i)) }
                }
            }),
        };
        let RowScan {
            offsets,
            first,
            in_order,
            total,
        } = scan;
        let child = if in_order {
            Elems::Strided {
                ptr: first,
                stride: vm.stride,
                len: total,
            }
        } else {
            let mut v = Vec::with_capacity(total);
            for i in 0..n {
                if is_null(i) {
                    continue;
                }
                // SAFETY: each element is a var row descriptor.
                let row: VarDimData = unsafe { arrmeta::read(elems.get(i)) };
                let start = row.begin.wrapping_offset(vm.offset).cast_const();
                v.extend((0..row.size).map(|j| start.wrapping_offset(vm.stride * j as isize)));
            }
            Elems::Ptrs(v)
        };
        let (cd, cn) = self.column(elem, emeta, &child)?;
        let f = Arc::new(Field::new("item", cd.data_type().clone(), cn));
        let dt = if offsets.is_large() {
            DataType::LargeList(f)
        } else {
            DataType::List(f)
        };
        let offs = offsets.into_buffer();
        self.build(
            ArrayData::builder(dt)
                .len(n)
                .add_buffer(offs)
                .add_child_data(cd),
            nulls,
        )
    }
}

/// What one pass over a column's row descriptors finds.
struct RowScan {
    offsets: Offsets,
    /// The first element of the first non-empty row (null when none).
    first: *const u8,
    /// Whether each non-empty row starts where the one before ends: the
    /// values are then one strided run from `first`.
    in_order: bool,
    /// The number of values.
    total: usize,
}

/// Scans `n` rows, row `i`'s descriptor being `row(i)` (a null row reads
/// as empty), of a var dim with arrmeta `vm`. The offsets are written as
/// 32-bit values in the loop; when the total passes `i32::MAX` (rare) a
/// second pass writes them as 64-bit.
#[inline]
fn scan_rows(n: usize, vm: VarDimMeta, row: impl Fn(usize) -> VarDimData) -> RowScan {
    let mut small: Vec<i32> = Vec::with_capacity(n + 1);
    small.push(0);
    let mut seen = InOrder::new();
    let mut total = 0usize;
    for i in 0..n {
        let r = row(i);
        if r.size > 0 {
            let start = r.begin.wrapping_offset(vm.offset).cast_const();
            seen.push(start, start.wrapping_offset(vm.stride * r.size as isize));
        }
        total += r.size;
        // Truncated past i32::MAX: then replaced below.
        small.push(total as i32);
    }
    let offsets = if i32::try_from(total).is_ok() {
        Offsets::Small(small)
    } else {
        drop(small);
        let mut large: Vec<i64> = Vec::with_capacity(n + 1);
        large.push(0);
        let mut t = 0i64;
        for i in 0..n {
            t += row(i).size as i64;
            large.push(t);
        }
        Offsets::Large(large)
    };
    RowScan {
        offsets,
        first: seen.first,
        in_order: seen.in_order,
        total,
    }
}

/// Whether non-empty ranges met one after another lie back to back in
/// memory (the values are then one run from `first`).
struct InOrder {
    /// The start of the first range (null before one).
    first: *const u8,
    /// The end of the last range.
    next: *const u8,
    in_order: bool,
}

impl InOrder {
    fn new() -> InOrder {
        InOrder {
            first: std::ptr::null(),
            next: std::ptr::null(),
            in_order: true,
        }
    }

    /// Notes the next range, `[start, end)`.
    #[inline]
    fn push(&mut self, start: *const u8, end: *const u8) {
        if self.first.is_null() {
            self.first = start;
        } else if start != self.next {
            self.in_order = false;
        }
        self.next = end;
    }
}

/// Arrow offsets written in one pass: 32-bit (List, Utf8, Binary) until
/// a value passes `i32::MAX`, then widened once to 64-bit (the Large
/// types).
enum Offsets {
    Small(Vec<i32>),
    Large(Vec<i64>),
}

impl Offsets {
    /// Offsets starting with 0, with room for `cap`.
    fn with_capacity(cap: usize) -> Offsets {
        let mut v = Vec::with_capacity(cap);
        v.push(0);
        Offsets::Small(v)
    }

    #[inline]
    fn push(&mut self, total: usize) {
        match self {
            Offsets::Small(v) => match i32::try_from(total) {
                Ok(t) => v.push(t),
                Err(_) => {
                    let mut w: Vec<i64> = v.iter().map(|&o| o as i64).collect();
                    w.push(total as i64);
                    *self = Offsets::Large(w);
                }
            },
            Offsets::Large(v) => v.push(total as i64),
        }
    }

    fn is_large(&self) -> bool {
        matches!(self, Offsets::Large(_))
    }

    fn into_buffer(self) -> Buffer {
        match self {
            Offsets::Small(v) => Buffer::from_vec(v),
            Offsets::Large(v) => Buffer::from_vec(v),
        }
    }
}
