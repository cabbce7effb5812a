//! Views: integer indexing, slicing, struct fields by name, permuting dims.
//! A view shares the original's data; only a new preamble and arrmeta are
//! made.
//!
//! Two kinds of indexing cannot be views, and **copy** instead:
//!
//! | indexing | result | why |
//! |---|---|---|
//! | fixed dims, slices anywhere, fields of plain structs, `permute` | a view | a start and strides describe it |
//! | an integer under a kept var dim (`x[:, 0]` of `N * var * T`) | a copy, `N * T` | the picked elements lie at addresses no stride describes |
//! | anything through an option (`x[:, 0]` of `N * ?var * T`, field `a` of `N * ?{a: T}`) | a copy, `N * ?T` | the result needs a missing mark per element, and an option of a struct or dim keeps its flag byte after the value's data (DESIGN §4), where no view of the part has it |
//!
//! Through an option, the index or field applies to each present value
//! (as awkward does with option types); a missing element gives a missing
//! result, never an index error. The result is an option of what the
//! index gives on the value, not optional twice (`?{a: ?int32}` gives
//! `?int32`).

use super::Array;
use crate::error::{Error, Result};
use crate::kernels::broadcast::dims_through_options;
use crate::layout::arrmeta::{self, FixedDimMeta, VarDimData, VarDimMeta};
use crate::layout::na;
use crate::memblock::MemBlock;
use crate::types::{Type, TypeKind};
use std::mem::size_of;

/// One index of an index expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    /// One element; negative counts from the end. The dim is dropped.
    At(isize),
    /// `start:stop:step` with NumPy's rules (missing bounds default by the
    /// step's sign; out-of-range bounds are clamped; step 0 is an error).
    Slice {
        /// First index (default: 0, or the last for a negative step).
        start: Option<isize>,
        /// One past the last index (default: the end, or before the first).
        stop: Option<isize>,
        /// Step (default 1).
        step: isize,
    },
}

impl Index {
    /// `:` — the whole dim.
    pub const ALL: Index = Index::Slice {
        start: None,
        stop: None,
        step: 1,
    };

    /// `start:stop:step`.
    pub fn slice(start: Option<isize>, stop: Option<isize>, step: isize) -> Index {
        Index::Slice { start, stop, step }
    }

    fn is_all(&self) -> bool {
        *self == Index::ALL
    }
}

macro_rules! index_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Index {
            fn from(i: $t) -> Index {
                Index::At(i as isize)
            }
        }
    )*};
}
index_from_int!(i32, i64, isize);

impl From<usize> for Index {
    fn from(i: usize) -> Index {
        Index::At(isize::try_from(i).unwrap_or(isize::MAX))
    }
}
impl From<std::ops::RangeFull> for Index {
    fn from(_: std::ops::RangeFull) -> Index {
        Index::ALL
    }
}
impl From<std::ops::Range<isize>> for Index {
    fn from(r: std::ops::Range<isize>) -> Index {
        Index::slice(Some(r.start), Some(r.end), 1)
    }
}
impl From<std::ops::RangeFrom<isize>> for Index {
    fn from(r: std::ops::RangeFrom<isize>) -> Index {
        Index::slice(Some(r.start), None, 1)
    }
}
impl From<std::ops::RangeTo<isize>> for Index {
    fn from(r: std::ops::RangeTo<isize>) -> Index {
        Index::slice(None, Some(r.end), 1)
    }
}

/// Resolves `index` against a dim of `size` on `axis`: `(start, count,
/// step)`, `count == None` meaning the dim is dropped (an integer index).
fn resolve(index: Index, size: usize, axis: usize) -> Result<(isize, Option<usize>, isize)> {
    let n = size as isize;
    match index {
        Index::At(i) => {
            let k = if i < 0 { i + n } else { i };
            if k < 0 || k >= n {
                return Err(Error::index(format!(
                    "index {i} is out of range for axis {axis} with size {size}"
                )));
            }
            Ok((k, None, 1))
        }
        Index::Slice { start, stop, step } => {
            if step == 0 {
                return Err(Error::index(format!(
                    "slice step cannot be zero (axis {axis})"
                )));
            }
            let norm = |v: isize, lo: isize, hi: isize| {
                let v = if v < 0 { v.saturating_add(n) } else { v };
                v.clamp(lo, hi)
            };
            let (start, count) = if step > 0 {
                let s = start.map_or(0, |v| norm(v, 0, n));
                let e = stop.map_or(n, |v| norm(v, 0, n));
                (s, if e > s { (e - s - 1) / step + 1 } else { 0 })
            } else {
                let s = start.map_or(n - 1, |v| norm(v, -1, n - 1));
                let e = stop.map_or(-1, |v| norm(v, -1, n - 1));
                (s, if s > e { (s - e - 1) / (-step) + 1 } else { 0 })
            };
            // An empty slice keeps the data pointer at the dim's start.
            let start = if count == 0 { 0 } else { start };
            Ok((start, Some(count as usize), step))
        }
    }
}

/// One piece of the view's arrmeta, written when the view is built.
#[derive(Clone, Copy)]
enum Piece {
    Fixed(FixedDimMeta),
    /// A var dim's arrmeta, shared (its blockref gets a new reference).
    Var(VarDimMeta),
}

impl Piece {
    /// The dim's size: `None` for a var dim, whose rows have their own.
    fn size(&self) -> Option<usize> {
        match self {
            Piece::Fixed(m) => Some(m.dim_size as usize),
            Piece::Var(_) => None,
        }
    }
}

/// A view under construction: the dims kept so far, where the data is.
struct View {
    pieces: Vec<Piece>,
    /// Sizes of the kept dims: `Some(n)` fixed, `None` var.
    dims: Vec<Option<usize>>,
    data: *mut u8,
    data_ref: MemBlock,
    /// `true` while `data` points at exactly one element of the current
    /// type (every dim so far was dropped by an integer index).
    single: bool,
}

impl View {
    fn new(a: &Array) -> View {
        View {
            pieces: Vec::new(),
            dims: Vec::new(),
            data: a.data_ptr(),
            data_ref: a.data_ref().clone(),
            single: true,
        }
    }

    /// Keeps a fixed dim of `count` elements `stride` bytes apart (none
    /// when an integer index dropped the dim: `count` is `None`).
    fn keep_fixed(&mut self, count: Option<usize>, stride: isize) {
        if let Some(n) = count {
            self.keep(Piece::Fixed(FixedDimMeta {
                dim_size: n as isize,
                stride,
            }));
        }
    }

    /// Keeps a dim whose arrmeta is `piece`.
    fn keep(&mut self, piece: Piece) {
        self.dims.push(piece.size());
        self.pieces.push(piece);
        self.single = false;
    }

    /// Moves the selected element `bytes` further: inside the innermost
    /// kept var dim's elements (its arrmeta offset) when there is one,
    /// else the data pointer.
    fn shift(&mut self, bytes: isize) {
        match self.pieces.iter_mut().rev().find_map(|p| match p {
            Piece::Var(v) => Some(v),
            Piece::Fixed(_) => None,
        }) {
            Some(v) => v.offset += bytes,
            None => self.data = self.data.wrapping_offset(bytes),
        }
    }

    /// Builds the array: kept dims over `tail` (whose arrmeta is at `tail_meta`).
    fn finish(self, a: &Array, tail: &Type, tail_meta: *const u8) -> Array {
        let mut tp = tail.clone();
        for d in self.dims.iter().rev() {
            tp = match d {
                Some(n) => Type::fixed_dim(*n, tp),
                None => Type::var_dim(tp),
            };
        }
        let pieces = self.pieces;
        let tail = tail.clone();
        // SAFETY: the pieces describe the kept dims of `a`'s data from
        // `self.data` on, within `a`'s bounds (every index was resolved
        // against the dim sizes), kept alive by `data_ref`; each var piece
        // and the tail arrmeta are copied with new references.
        unsafe {
            Array::from_parts(tp, self.data, self.data_ref, a.flags(), |mut m| {
                for p in &pieces {
                    match p {
                        Piece::Fixed(f) => {
                            arrmeta::write(m, *f);
                            m = m.add(size_of::<FixedDimMeta>());
                        }
                        Piece::Var(v) => {
                            if let Some(b) = std::ptr::NonNull::new(v.blockref) {
                                crate::memblock::incref(b);
                            }
                            arrmeta::write(m, *v);
                            m = m.add(size_of::<VarDimMeta>());
                        }
                    }
                }
                arrmeta::copy(&tail, m, tail_meta);
            })
        }
    }
}

impl Array {
    /// Selects `indices` from the leading dims, as NumPy's brackets do:
    /// an integer drops its dim, a slice keeps it (with its kind: a sliced
    /// var dim stays var). Negative integers and slice bounds count from
    /// the end.
    ///
    /// Everything is a view of `self`'s data (a write through it is seen
    /// through `self`) except through an option (below) and in one place, a
    /// var dim under a kept dim (`x[:, 0]` of `N * var * T`), where each row
    /// has its own length:
    /// - a **slice** there (`x[:, 1:3]`, `x[:, ::-1]`) slices every row; the
    ///   result has new row descriptors (its own small block) over the
    ///   same elements, so it is still a view of the values;
    /// - an **integer** there (`x[:, 0]`, `x[:, -1]`) picks element `i` of
    ///   every row; those elements lie at addresses no stride describes, so
    ///   the result (`N * T`) is a **copy**, and writing to it does not
    ///   change `self`. An index past the end of a row is an `index` error
    ///   naming the row and its length.
    ///
    /// Indices go on **through an option of a dim** (`?var * T`, `?3 * T`;
    /// they count among the dims): from there on the rest of the indices
    /// apply to each present value, and the result is a **copy** (the
    /// module docs say why), an option of what they give on the value,
    /// missing where the element is missing. `x[:, 0]` of `N * ?var * int32`
    /// is `N * ?int32`; a missing row is no error, an index past the end of a
    /// present row is an `index` error naming the row.
    ///
    /// ```
    /// use dynd::{Array, Index};
    /// let a = Array::from_json("3 * 4 * int32", "[[0,1,2,3],[4,5,6,7],[8,9,10,11]]").unwrap();
    /// let v = a.index(&[Index::slice(None, None, -1), 1.into()]).unwrap();
    /// assert_eq!(v.to_json(), "[9,5,1]");
    /// // Ragged rows: per-row integers and slices.
    /// let r = Array::from_json("3 * var * int32", "[[1,2,3],[4],[5,6]]").unwrap();
    /// let last = r.index(&[Index::ALL, (-1).into()]).unwrap();
    /// assert_eq!((last.tp().to_string(), last.to_json()), ("3 * int32".into(), "[3,4,6]".into()));
    /// let head = r.index(&[Index::ALL, (..2).into()]).unwrap();
    /// assert_eq!((head.tp().to_string(), head.to_json()), ("3 * var * int32".into(), "[[1,2],[4],[5,6]]".into()));
    /// assert!(r.index(&[Index::ALL, 1.into()]).unwrap_err().message().contains("row [1]"));
    /// // Through an option: missing where the row is.
    /// let o = Array::from_json("3 * ?var * int32", "[[1,2],null,[3]]").unwrap();
    /// let first = o.index(&[Index::ALL, 0.into()]).unwrap();
    /// assert_eq!((first.tp().to_string(), first.to_json()), ("3 * ?int32".into(), "[1,null,3]".into()));
    /// ```
    pub fn index(&self, indices: &[Index]) -> Result<Array> {
        self.index_from(indices, 0)
    }

    /// [`Array::index`], where `indices[p]` is axis `p + shift` of the array
    /// the caller indexed (for messages, after a ragged step re-indexes).
    /// The indices `rest` that follow one applied row by row at `axis`,
    /// applied to its result (whose first `done` dims are the ones before
    /// them).
    fn index_rest(self, done: usize, rest: &[Index], axis: usize) -> Result<Array> {
        if rest.is_empty() {
            return Ok(self);
        }
        let rest: Vec<Index> = std::iter::repeat_n(Index::ALL, done)
            .chain(rest.iter().copied())
            .collect();
        self.index_from(&rest, axis + 1 - done)
    }

    fn index_from(&self, indices: &[Index], shift: usize) -> Result<Array> {
        // Dims under an option of a dim count: indexing goes through it.
        let ndim = dims_through_options(self.tp()).len();
        if indices.len() > ndim {
            return Err(Error::index(format!(
                "too many indices: {} given for an array of type {} with {ndim} dimension{}",
                indices.len(),
                self.tp(),
                if ndim == 1 { "" } else { "s" }
            )));
        }
        let mut view = View::new(self);
        let mut tp = self.tp().clone();
        let mut meta = self.arrmeta_ptr();
        for (pos, &ix) in indices.iter().enumerate() {
            let axis = pos + shift;
            match tp.kind().clone() {
                TypeKind::FixedDim { elem, .. } => {
                    // SAFETY: the arrmeta of a fixed dim starts here.
                    let m: FixedDimMeta = unsafe { arrmeta::read(meta) };
                    let (start, count, step) = resolve(ix, m.dim_size as usize, axis)?;
                    view.shift(start * m.stride);
                    view.keep_fixed(count, m.stride * step);
                    // SAFETY: the element's arrmeta follows.
                    meta = unsafe { meta.add(size_of::<FixedDimMeta>()) };
                    tp = elem;
                }
                TypeKind::VarDim { elem } => {
                    // SAFETY: the arrmeta of a var dim starts here.
                    let m: VarDimMeta = unsafe { arrmeta::read(meta) };
                    if ix.is_all() {
                        // The same rows: share the var arrmeta. (When
                        // `single`, the data is the one row's descriptor.)
                        view.keep(Piece::Var(m));
                    } else if let (true, Index::At(_), true) =
                        (view.single, ix, self.device().is_cpu())
                    {
                        // SAFETY: `single` means the data is one var element.
                        let d: VarDimData = unsafe { arrmeta::read(view.data) };
                        let (start, _, _) = resolve(ix, d.size, axis)?;
                        view.data = d.begin.wrapping_offset(m.offset + start * m.stride);
                        // SAFETY: the arrmeta holds a reference to its blockref.
                        view.data_ref =
                            unsafe { arrmeta::blockref_clone(m.blockref) }.ok_or_else(|| {
                                Error::index(format!("var dim on axis {axis} has no memory block"))
                            })?;
                    } else {
                        // Row by row: every row of the kept dims (one row
                        // when `single`) gets `ix`, then the rest of the
                        // indices apply to that result.
                        let kept = view.dims.len();
                        let head = view.finish(self, &tp, meta);
                        let (out, done) = if self.device().is_cpu() {
                            ragged(&head, kept, ix, axis)?
                        } else {
                            // The device's runtime reads its descriptors.
                            super::device::index_rows(&head, kept, ix, axis)?
                        };
                        return out.index_rest(done, &indices[pos + 1..], axis);
                    }
                    // SAFETY: the element's arrmeta follows.
                    meta = unsafe { meta.add(size_of::<VarDimMeta>()) };
                    tp = elem;
                }
                TypeKind::Option(value)
                    if !self.device().is_cpu()
                        && matches!(value.kind(), TypeKind::VarDim { .. }) =>
                {
                    // Rows that may be missing on a device: the runtime
                    // indexes each row, keeping the missing ones missing.
                    let kept = view.dims.len();
                    let head = view.finish(self, &tp, meta);
                    let (out, done) = super::device::index_rows(&head, kept, ix, axis)?;
                    return out.index_rest(done, &indices[pos + 1..], axis);
                }
                TypeKind::Option(value) if value.is_dim() => {
                    // Through the option, element by element: a copy.
                    let kept = view.dims.len();
                    let head = view.finish(self, &tp, meta);
                    let op = Through::Index(&indices[pos..], axis);
                    return through_option(&head, kept, op, self.tp());
                }
                _ => {
                    return Err(Error::index(format!(
                        "cannot index axis {axis} of {}: it is not a fixed or var dim",
                        self.tp()
                    )));
                }
            }
        }
        Ok(view.finish(self, &tp, meta))
    }

    /// A view of the struct field `name` through all leading dims:
    /// `3 * {x: int32, y: float64}` → `3 * int32`.
    ///
    /// Through an option (of the struct, or of a dim above it) the result
    /// is a **copy**, optional, missing where the record is missing (the
    /// module docs say why): field `a` of `N * ?{a: int32, s: string}` is
    /// `N * ?int32`, and still `N * ?int32` when the field itself is
    /// `?int32`.
    ///
    /// ```
    /// use dynd::Array;
    /// let x = Array::from_json("3 * ?{a: int32, s: string}", r#"[{"a":1,"s":"x"},null,{"a":3,"s":"z"}]"#).unwrap();
    /// let a = x.field("a").unwrap();
    /// assert_eq!((a.tp().to_string(), a.to_json()), ("3 * ?int32".into(), "[1,null,3]".into()));
    /// ```
    pub fn field(&self, name: &str) -> Result<Array> {
        let mut view = View::new(self);
        view.single = false;
        let mut tp = self.tp().clone();
        let mut meta = self.arrmeta_ptr();
        loop {
            // SAFETY: `meta` is `tp`'s arrmeta in `self`, moved along by `read_dim`.
            if let Some((piece, elem, next)) = unsafe { read_dim(&tp, meta) } {
                view.keep(piece);
                (tp, meta) = (elem, next);
                continue;
            }
            match tp.kind().clone() {
                TypeKind::Struct(fields) => {
                    let Some(i) = fields.index_of(name) else {
                        return Err(Error::index(format!(
                            "no field named '{name}' in {tp} (fields: {})",
                            fields.names().join(", ")
                        )));
                    };
                    // The field sits this far into each struct.
                    view.shift(fields.data_offsets()[i] as isize);
                    let ftp = fields.types()[i].clone();
                    // SAFETY: the field's arrmeta is at its recorded offset.
                    let fmeta = unsafe { meta.add(fields.arrmeta_offsets()[i]) };
                    return Ok(view.finish(self, &ftp, fmeta));
                }
                TypeKind::Option(value) if value.is_dim() || value.fields().is_some() => {
                    // Through the option, element by element: a copy.
                    let kept = view.dims.len();
                    let head = view.finish(self, &tp, meta);
                    return through_option(&head, kept, Through::Field(name), self.tp());
                }
                _ => {
                    return Err(Error::type_error(format!(
                        "cannot take field '{name}' of {}: {tp} is not a struct",
                        self.tp()
                    )));
                }
            }
        }
    }

    /// A view with the leading `axes.len()` dims reordered: axis `i` of the
    /// view is axis `axes[i]` of `self`.
    ///
    /// Var dims may be among those dims when the permutation keeps each of
    /// them where it is and moves no fixed dim across one: the dims outside
    /// a var dim are the positions of its rows, the dims inside it are
    /// laid out within each row, and neither can trade places with the
    /// other (`N * M * var * T` permuted `[1, 0, 2]` is `M * N * var * T`;
    /// `var * 3 * 4 * T` permuted `[0, 2, 1]` is `var * 4 * 3 * T`).
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_json("2 * 3 * var * int32", "[[[1],[2,3],[]],[[4],[],[5,6]]]").unwrap();
    /// let t = a.permute(&[1, 0, 2]).unwrap();
    /// assert_eq!(t.tp().to_string(), "3 * 2 * var * int32");
    /// assert_eq!(t.to_json(), "[[[1],[4]],[[2,3],[]],[[],[5,6]]]");
    /// assert!(a.permute(&[2, 0, 1]).is_err());
    /// ```
    pub fn permute(&self, axes: &[usize]) -> Result<Array> {
        let k = axes.len();
        let mut seen = vec![false; k];
        for &a in axes {
            if a >= k || std::mem::replace(&mut seen[a], true) {
                return Err(Error::index(format!(
                    "permute axes {axes:?} are not a permutation of 0..{k}"
                )));
            }
        }
        if k > self.ndim() {
            return Err(Error::index(format!(
                "permute of {k} axes on an array of type {} with {} dimensions",
                self.tp(),
                self.ndim()
            )));
        }
        let mut pieces = Vec::with_capacity(k);
        // How many var dims lie outside each axis (its "segment").
        let mut segment = Vec::with_capacity(k);
        let mut vars = 0;
        let mut tp = self.tp().clone();
        let mut meta = self.arrmeta_ptr();
        for _ in 0..k {
            // SAFETY: `meta` is `tp`'s arrmeta in `self`, moved along by `read_dim`.
            // `k <= ndim` leaves a dim at every one of the k levels.
            let Some((piece, elem, next)) = (unsafe { read_dim(&tp, meta) }) else {
                return unreachable_dim();
            };
            segment.push(vars);
            if let Piece::Var(_) = piece {
                vars += 1;
            }
            pieces.push(piece);
            (tp, meta) = (elem, next);
        }
        for (i, &a) in axes.iter().enumerate() {
            let var = |x: usize| matches!(pieces[x], Piece::Var(_));
            if a != i && (var(a) || var(i)) {
                let v = if var(a) { a } else { i };
                return Err(Error::type_error(format!(
                    "permute {axes:?} of {} moves axis {a} to position {i}, but axis {v} is a var \
                     dim: its rows have their own lengths, so it stays in place",
                    self.tp()
                )));
            }
            if segment[a] != segment[i] {
                return Err(Error::type_error(format!(
                    "permute {axes:?} of {} moves axis {a} to position {i}, across a var dim: \
                     dims outside a var dim cannot trade places with dims inside its rows",
                    self.tp()
                )));
            }
        }
        let mut view = View::new(self);
        view.single = false;
        for &a in axes {
            view.keep(pieces[a]);
        }
        Ok(view.finish(self, &tp, meta))
    }
}

/// Allocates a destination var row of `size` elements of `csize` bytes
/// (aligned to `calign`) from the arena of `dm`, writes its descriptor at
/// `dst`, and returns the row's begin.
///
/// # Safety
/// `dst` is writable var-dim data whose arrmeta is `dm`.
unsafe fn new_row(
    dst: *mut u8,
    dm: &VarDimMeta,
    size: usize,
    (csize, calign): (usize, usize),
) -> Result<*mut u8> {
    let bytes = size
        .checked_mul(csize)
        .ok_or_else(|| Error::alloc("var dim too large to copy"))?;
    // SAFETY: the caller's promise: `dm` is the var dim's arrmeta, whose
    // blockref is its arena.
    let begin = unsafe { arrmeta::with_allocator(dm.blockref, |a| a.allocate(bytes, calign))? };
    // SAFETY: the caller's promise: `dst` is writable var-dim data.
    unsafe { arrmeta::write(dst, VarDimData { begin, size }) };
    Ok(begin)
}

/// The error for a dim that the type's `ndim` promised.
fn unreachable_dim<T>() -> Result<T> {
    Err(Error::type_error("the type has fewer dims than its ndim"))
}

/// The leading dim of `tp`: its arrmeta (at `meta`), its element type and
/// where the element's arrmeta starts; `None` when `tp` is not a fixed or
/// var dim.
///
/// # Safety
/// 1. `meta` is valid arrmeta of `tp`.
unsafe fn read_dim(tp: &Type, meta: *const u8) -> Option<(Piece, Type, *const u8)> {
    // SAFETY: (1), with DESIGN §4's layouts: a dim's arrmeta starts `meta`,
    // its element's follows.
    let (piece, next) = unsafe {
        match tp.kind() {
            TypeKind::FixedDim { .. } => {
                let (m, next) = arrmeta::read_dim(meta);
                (Piece::Fixed(m), next)
            }
            TypeKind::VarDim { .. } => {
                let (m, next) = arrmeta::read_dim(meta);
                (Piece::Var(m), next)
            }
            _ => return None,
        }
    };
    Some((piece, tp.dim_elem()?.clone(), next))
}

/// One row's position in the kept dims, as `[i, j]`.
fn row_text(row: &[usize]) -> String {
    let parts: Vec<String> = row.iter().map(usize::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// Applies `ix` to the var dim under `k` kept dims of `head` (type
/// `D_1 * ... * D_k * var * E`, any `D` fixed or var), row by row.
///
/// A slice gives `D... * var * E`: a fresh skeleton (the kept dims' data
/// and each row's `{begin, size}`) whose rows point into `head`'s
/// elements, with the var arrmeta's stride times the step. An integer
/// gives `D... * E`: each row's element copied into a fresh array.
/// Returns the array and how many of its leading dims `ix` has dealt with
/// (`k + 1` for a slice, `k` for an integer).
fn ragged(head: &Array, k: usize, ix: Index, axis: usize) -> Result<(Array, usize)> {
    if let Index::Slice { step: 0, .. } = ix {
        return Err(Error::index(format!(
            "slice step cannot be zero (axis {axis})"
        )));
    }
    // The type and arrmeta offset of each level, down to the var dim.
    let (levels, elem, off) = leading_dims(head.tp(), k + 1).ok_or_else(|| {
        Error::index(format!(
            "cannot index axis {axis} of {}: it is not a dim",
            head.tp()
        ))
    })?;
    let slice = matches!(ix, Index::Slice { .. });
    // What the walk over the kept dims writes at each of their elements:
    // the var dim itself (a slice) or one element of its rows (an integer).
    let out_elem = if slice {
        levels[k].0.clone()
    } else {
        elem.clone()
    };
    let out = Array::empty(over_dims(&levels[..k], out_elem.clone()))?;
    let dmeta = out.arrmeta_ptr() as *mut u8;
    let smeta = head.arrmeta_ptr();
    let var_off = levels[k].1;
    // SAFETY: `levels` walked `head`'s type, so `smeta + var_off` is the var
    // dim's arrmeta there; `out` is fresh and only reached through here, and
    // has the same dims (so the same offsets) down to the var dim.
    let vm: VarDimMeta = unsafe { arrmeta::read(smeta.add(var_off)) };
    if let Index::Slice { step: s, .. } = ix {
        // SAFETY: the same var dim and element arrmeta in both (equal
        // types): drop out's defaults and share head's, so that the rows
        // point into head's elements.
        unsafe {
            let d = dmeta.add(var_off);
            arrmeta::destroy(&levels[k].0, d);
            if let Some(b) = std::ptr::NonNull::new(vm.blockref) {
                crate::memblock::incref(b);
            }
            arrmeta::write(
                d,
                VarDimMeta {
                    stride: vm.stride * s,
                    ..vm
                },
            );
            arrmeta::copy(&elem, d.add(size_of::<VarDimMeta>()), smeta.add(off));
        }
    }
    let mut each = |src: *const u8, dst: *mut u8, row: &[usize]| -> Result<()> {
        // SAFETY: the walk hands one row descriptor of the var dim in head's
        // data and the matching writable `out_elem` in out's; the var dim's
        // arrmeta is `vm`, its element's at `off` in head and (an integer
        // gives `D... * E`) at `var_off` in out.
        unsafe {
            let d: VarDimData = arrmeta::read(src);
            match ix {
                Index::At(i) => {
                    let j = at_in_row(i, axis, row, d.size)?;
                    let at = d.begin.wrapping_offset(vm.offset + j * vm.stride);
                    super::copy::copy(&elem, dmeta.add(var_off), dst, smeta.add(off), at)
                }
                Index::Slice { .. } => {
                    let (start, count, _) = resolve(ix, d.size, axis)?;
                    arrmeta::write(
                        dst,
                        VarDimData {
                            begin: d.begin.wrapping_offset(start * vm.stride),
                            size: count.unwrap_or(0),
                        },
                    );
                    Ok(())
                }
            }
        }
    };
    // SAFETY: `leading_dims` gave `levels`; `out` is fresh, of those dims
    // over `out_elem`.
    unsafe { each_element(head, &levels[..k], &out, &out_elem, &mut each)? };
    if slice {
        // The rows reach head's elements: no more writable than head.
        Ok((out.with_flags(head.flags()), k + 1))
    } else {
        Ok((out, k))
    }
}

/// A dim's type and the offset of its arrmeta in the array's.
type Level = (Type, usize);

/// The type and arrmeta offset of each of the `k` leading dims of `tp`
/// (fixed or var), the type under them and the offset of its arrmeta;
/// `None` when fewer than `k` dims lead `tp`.
fn leading_dims(tp: &Type, k: usize) -> Option<(Vec<Level>, Type, usize)> {
    let mut levels = Vec::with_capacity(k);
    let mut tp = tp.clone();
    let mut off = 0;
    for _ in 0..k {
        let (elem, size) = match tp.kind() {
            TypeKind::FixedDim { elem, .. } => (elem.clone(), size_of::<FixedDimMeta>()),
            TypeKind::VarDim { elem } => (elem.clone(), size_of::<VarDimMeta>()),
            _ => return None,
        };
        levels.push((tp, off));
        off += size;
        tp = elem;
    }
    Some((levels, tp, off))
}

/// `elem` under dims like those of `levels` (fixed of the same sizes, or var).
fn over_dims(levels: &[Level], elem: Type) -> Type {
    levels.iter().rev().fold(elem, |t, (d, _)| match d.kind() {
        TypeKind::FixedDim { size, .. } => Type::fixed_dim(*size, t),
        _ => Type::var_dim(t),
    })
}

// ------------------------------------------------------- through options

/// What indexing applies through an option type, element by element.
#[derive(Clone, Copy, Debug)]
enum Through<'a> {
    /// The rest of an index expression, its first on this axis.
    Index(&'a [Index], usize),
    /// A struct field by name.
    Field(&'a str),
}

impl Through<'_> {
    /// The type this gives on an array of type `tp`, from the types alone
    /// (the one error for every element; a var row's length is the only
    /// thing left to check per element). `whole` is the indexed array's
    /// type, for messages.
    fn result_type(self, tp: &Type, whole: &Type) -> Result<Type> {
        match self {
            Through::Index(indices, axis) => index_type(tp, indices, axis, whole),
            Through::Field(name) => field_type(tp, name, whole),
        }
    }

    /// Applies this to `value`, the present value of the element at `row`
    /// of the dims outside the option.
    fn apply(self, value: &Array, row: &[usize]) -> Result<Array> {
        let in_row = |e: Error| {
            if row.is_empty() {
                e
            } else {
                e.context(format!("in row {}", row_text(row)))
            }
        };
        match self {
            Through::Index(indices, axis) => {
                if let (Some(&Index::At(i)), TypeKind::VarDim { .. }) =
                    (indices.first(), value.tp().kind())
                {
                    // SAFETY: the value is one var element, its data a
                    // row descriptor.
                    let d: VarDimData = unsafe { arrmeta::read(value.data_ptr()) };
                    at_in_row(i, axis, row, d.size)?;
                }
                value.index_from(indices, axis).map_err(in_row)
            }
            Through::Field(name) => value.field(name).map_err(in_row),
        }
    }

    /// The one element this picks from a present value of type `value`
    /// (data `src`, arrmeta `meta`), as its data and arrmeta, without
    /// building arrays: one integer on the value's dim, or a field of a
    /// struct. `None` when it is more than that (slices, several indices,
    /// a field under dims): [`Through::apply`] does it.
    ///
    /// # Safety
    /// 1. `src` and `meta` are valid data and arrmeta of `value`, and
    ///    [`Through::result_type`] accepted `value`.
    unsafe fn pick(
        self,
        value: &Type,
        meta: *const u8,
        src: *const u8,
        row: &[usize],
    ) -> Option<Result<(*const u8, *const u8)>> {
        // SAFETY: (1), with DESIGN §4's layouts.
        unsafe {
            match (self, value.kind()) {
                (Through::Index(&[Index::At(i)], axis), TypeKind::FixedDim { size, .. }) => {
                    let m: FixedDimMeta = arrmeta::read(meta);
                    Some(resolve(Index::At(i), *size, axis).map(|(k, _, _)| {
                        (
                            src.wrapping_offset(k * m.stride),
                            meta.add(size_of::<FixedDimMeta>()),
                        )
                    }))
                }
                (Through::Index(&[Index::At(i)], axis), TypeKind::VarDim { .. }) => {
                    let m: VarDimMeta = arrmeta::read(meta);
                    let d: VarDimData = arrmeta::read(src);
                    Some(at_in_row(i, axis, row, d.size).map(|j| {
                        (
                            d.begin
                                .wrapping_offset(m.offset + j * m.stride)
                                .cast_const(),
                            meta.add(size_of::<VarDimMeta>()),
                        )
                    }))
                }
                (Through::Field(name), TypeKind::Struct(fields)) => {
                    let i = fields.index_of(name)?;
                    Some(Ok((
                        src.add(fields.data_offsets()[i]),
                        meta.add(fields.arrmeta_offsets()[i]),
                    )))
                }
                _ => None,
            }
        }
    }
}

/// Integer `i` into a var row of length `n` at `row` of the dims outside
/// it: the position, or the `index` error naming the row (as under a kept
/// var dim), or the axis alone for the one row of a 0-d array.
fn at_in_row(i: isize, axis: usize, row: &[usize], n: usize) -> Result<isize> {
    if row.is_empty() {
        return resolve(Index::At(i), n, axis).map(|(j, _, _)| j);
    }
    let j = if i < 0 { i + n as isize } else { i };
    if j < 0 || j >= n as isize {
        return Err(Error::index(format!(
            "index {i} is out of range for axis {axis} in row {}, which has length {n}",
            row_text(row)
        )));
    }
    Ok(j)
}

/// `tp` as an option: itself when it is one already (a field that is
/// `?int32` of a missing record is `?int32`, not `??int32`).
fn optional(tp: Type) -> Result<Type> {
    if tp.option_value().is_some() {
        Ok(tp)
    } else {
        Type::option(tp)
    }
}

/// The type `indices` (the first on `axis`) give on `tp`, as
/// [`Array::index`] would: the index errors that do not depend on the data
/// (a fixed dim's range, a zero step, too many indices).
fn index_type(tp: &Type, indices: &[Index], axis: usize, whole: &Type) -> Result<Type> {
    let Some((&ix, rest)) = indices.split_first() else {
        return Ok(tp.clone());
    };
    match tp.kind() {
        TypeKind::FixedDim { size, elem } => {
            let (_, count, _) = resolve(ix, *size, axis)?;
            let inner = index_type(elem, rest, axis + 1, whole)?;
            Ok(match count {
                Some(n) => Type::fixed_dim(n, inner),
                None => inner,
            })
        }
        TypeKind::VarDim { elem } => {
            if let Index::Slice { step: 0, .. } = ix {
                return Err(Error::index(format!(
                    "slice step cannot be zero (axis {axis})"
                )));
            }
            let inner = index_type(elem, rest, axis + 1, whole)?;
            Ok(match ix {
                Index::At(_) => inner,
                Index::Slice { .. } => Type::var_dim(inner),
            })
        }
        TypeKind::Option(value) if value.is_dim() => {
            optional(index_type(value, indices, axis, whole)?)
        }
        _ => Err(Error::index(format!(
            "too many indices for an array of type {whole}: axis {axis} is {tp}, not a fixed or var dim"
        ))),
    }
}

/// The type field `name` gives on `tp`, as [`Array::field`] would.
fn field_type(tp: &Type, name: &str, whole: &Type) -> Result<Type> {
    match tp.kind() {
        TypeKind::FixedDim { size, elem } => {
            Ok(Type::fixed_dim(*size, field_type(elem, name, whole)?))
        }
        TypeKind::VarDim { elem } => Ok(Type::var_dim(field_type(elem, name, whole)?)),
        TypeKind::Option(value) => optional(field_type(value, name, whole)?),
        TypeKind::Struct(fields) => match fields.index_of(name) {
            Some(i) => Ok(fields.types()[i].clone()),
            None => Err(Error::index(format!(
                "no field named '{name}' in {tp} (fields: {})",
                fields.names().join(", ")
            ))),
        },
        _ => Err(Error::type_error(format!(
            "cannot take field '{name}' of {whole}: {tp} is not a struct"
        ))),
    }
}

/// `op` applied through the option under the `k` leading dims of `head`
/// (`D_1 * ... * D_k * ?V`, any `D` fixed or var), element by element:
/// `D... * ?R`, where `R` is what `op` gives on `V`, missing where the
/// element is missing. A **copy**: the option's flag byte lies after its
/// value's data (DESIGN §4), so no view of the results has one where it
/// belongs. `whole` is the indexed array's type, for messages.
fn through_option(head: &Array, k: usize, op: Through<'_>, whole: &Type) -> Result<Array> {
    let Some((levels, opt, off)) = leading_dims(head.tp(), k) else {
        return unreachable_dim();
    };
    let Some(value) = opt.option_value() else {
        return Err(Error::type_error(format!(
            "{opt} is not an option type to index through"
        )));
    };
    let r = op.result_type(value, whole)?;
    let out_elem = optional(r.clone())?;
    let out = Array::empty(over_dims(&levels, out_elem.clone()))?;
    let (smeta, dmeta) = (head.arrmeta_ptr(), out.arrmeta_ptr() as *mut u8);
    // SAFETY: `levels` walked head's type: its option's arrmeta is at `off`.
    let vmeta = unsafe { smeta.add(off) };
    let mut each = |src: *const u8, dst: *mut u8, row: &[usize]| -> Result<()> {
        // SAFETY: the walk hands one element of `opt` in head's data and
        // the matching writable element of `out_elem` in out's.
        unsafe {
            if na::is_missing(&opt, src) {
                return na::set_missing(&out_elem, dst);
            }
            // One element of the value: copied from where it lies.
            if let Some(at) = op.pick(value, vmeta, src, row) {
                let (esrc, emeta) = at?;
                super::copy::copy(&r, dmeta.add(off), dst, emeta, esrc)?;
                if out_elem != r {
                    na::set_present(&out_elem, dst);
                }
                return Ok(());
            }
            // The present value, as an array for `op`: head's data block
            // keeps it alive while head lives, which outlives this view.
            let v = Array::from_parts(
                value.clone(),
                src.cast_mut(),
                head.data_ref().clone(),
                head.flags(),
                |m| arrmeta::copy(value, m, vmeta),
            );
            let got = op.apply(&v, row)?;
            if got.tp() != &r {
                return Err(Error::type_error(format!(
                    "indexing through {opt} gave {}, not {r}",
                    got.tp()
                )));
            }
            // An option's arrmeta is its value's (DESIGN §4); its value's
            // data starts it. An optional `r` is the output's element
            // itself, its own flag copied.
            super::copy::copy(&r, dmeta.add(off), dst, got.arrmeta_ptr(), got.data_ptr())?;
            if out_elem != r {
                na::set_present(&out_elem, dst);
            }
        }
        Ok(())
    };
    // SAFETY: `leading_dims` gave `levels`; `out` is fresh, of those dims
    // over `out_elem`.
    unsafe { each_element(head, &levels, &out, &out_elem, &mut each)? };
    Ok(out)
}

/// Calls `each(src, dst, row)` for every element under the dims `levels`
/// of `head` and under the same dims of `out`, `row` its position in them,
/// allocating `out`'s var rows as it goes.
///
/// # Safety
/// 1. `levels` are leading dims of `head`'s type, as [`leading_dims`]
///    gives them.
/// 2. `out` is a fresh array of the same dims over `out_elem` (as
///    [`over_dims`] builds its type), reached only through here.
unsafe fn each_element(
    head: &Array,
    levels: &[Level],
    out: &Array,
    out_elem: &Type,
    each: &mut PerElement<'_>,
) -> Result<()> {
    let k = levels.len();
    let mut out_levels = Vec::with_capacity(k);
    let mut t = out.tp();
    while let (true, Some(e)) = (out_levels.len() < k, t.dim_elem()) {
        out_levels.push(t.clone());
        t = e;
    }
    let walk = EachElem {
        levels,
        out_levels: &out_levels,
        out_elem,
        smeta: head.arrmeta_ptr(),
        dmeta: out.arrmeta_ptr() as *mut u8,
    };
    let mut row = Vec::with_capacity(k);
    // SAFETY: (1) and (2): head's data and arrmeta are valid for its type;
    // `out`'s data is writable, of the same dims, its var rows not
    // allocated yet.
    unsafe { walk.each(0, head.data_ptr(), out.data_ptr(), &mut row, each) }
}

/// What [`EachElem`] does with each element: `(src, dst, row)`.
type PerElement<'a> = dyn FnMut(*const u8, *mut u8, &[usize]) -> Result<()> + 'a;

/// A walk over the elements under the leading dims of an array and of a
/// fresh array with the same dims (other elements), whose var rows it
/// allocates as it goes.
struct EachElem<'a> {
    /// The source's type and arrmeta offset at each dim (the same offsets
    /// in the output: the same dims).
    levels: &'a [Level],
    /// The output's type at each dim.
    out_levels: &'a [Type],
    /// The output's element type.
    out_elem: &'a Type,
    smeta: *const u8,
    dmeta: *mut u8,
}

impl EachElem<'_> {
    /// Calls `each(src, dst, row)` for every element under the dims from
    /// `level` on, `row` its position in them.
    ///
    /// # Safety
    /// 1. `src` is data of `levels[level]` in the source (its arrmeta at
    ///    `smeta` plus the level's offset), or of the element when `level`
    ///    is past the dims; `dst` the matching writable data of the output,
    ///    whose var rows are not allocated yet.
    unsafe fn each(
        &self,
        level: usize,
        src: *const u8,
        dst: *mut u8,
        row: &mut Vec<usize>,
        each: &mut PerElement<'_>,
    ) -> Result<()> {
        let Some((tp, off)) = self.levels.get(level) else {
            return each(src, dst, row);
        };
        // The output's element at the next level: its size and alignment.
        let child = self.out_levels.get(level + 1).unwrap_or(self.out_elem);
        let (csize, calign) = (child.data_size(), child.data_alignment());
        // SAFETY: (1), with DESIGN §4's layouts: each level's arrmeta is at
        // its offset in both arrays, its data at `src`/`dst`.
        unsafe {
            match tp.kind() {
                TypeKind::FixedDim { .. } => {
                    let sm: FixedDimMeta = arrmeta::read(self.smeta.add(*off));
                    let dm: FixedDimMeta = arrmeta::read(self.dmeta.add(*off));
                    for i in 0..sm.dim_size {
                        row.push(i as usize);
                        self.each(
                            level + 1,
                            src.wrapping_offset(i * sm.stride),
                            dst.wrapping_offset(i * dm.stride),
                            row,
                            each,
                        )?;
                        row.pop();
                    }
                }
                TypeKind::VarDim { .. } => {
                    let sm: VarDimMeta = arrmeta::read(self.smeta.add(*off));
                    let dm: VarDimMeta = arrmeta::read(self.dmeta.add(*off));
                    let d: VarDimData = arrmeta::read(src);
                    let begin = new_row(dst, &dm, d.size, (csize, calign))?;
                    for i in 0..d.size as isize {
                        row.push(i as usize);
                        self.each(
                            level + 1,
                            d.begin.wrapping_offset(sm.offset + i * sm.stride),
                            begin.wrapping_offset(dm.offset + i * dm.stride),
                            row,
                            each,
                        )?;
                        row.pop();
                    }
                }
                _ => unreachable_dim()?,
            }
        }
        Ok(())
    }
}

pub(super) fn shape(a: &Array) -> Vec<Option<usize>> {
    let mut out = Vec::new();
    let mut tp = a.tp().clone();
    let mut meta = a.arrmeta_ptr();
    // SAFETY: `meta` is `tp`'s arrmeta in `a`, moved along by `read_dim`.
    while let Some((piece, elem, next)) = unsafe { read_dim(&tp, meta) } {
        out.push(match piece {
            // On a device the row's size is not read (it is device
            // memory): unknown, as an inner var dim's.
            Piece::Var(_) if out.is_empty() && a.device().is_cpu() => {
                // SAFETY: the outermost var dim's data is one element, on
                // the host.
                Some(unsafe { arrmeta::read::<VarDimData>(a.data_ptr()) }.size)
            }
            _ => piece.size(),
        });
        (tp, meta) = (elem, next);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (start, count, step) of a resolved index.
    type Resolved = (isize, Option<usize>, isize);

    #[test]
    fn slices_follow_numpy() {
        let cases: &[(Index, usize, Resolved)] = &[
            (Index::ALL, 5, (0, Some(5), 1)),
            (Index::slice(Some(1), Some(3), 1), 5, (1, Some(2), 1)),
            (Index::slice(Some(-2), None, 1), 5, (3, Some(2), 1)),
            (Index::slice(None, None, -1), 5, (4, Some(5), -1)),
            (Index::slice(None, None, 2), 5, (0, Some(3), 2)),
            (Index::slice(Some(4), Some(0), -2), 5, (4, Some(2), -2)),
            (Index::slice(Some(10), Some(20), 1), 5, (0, Some(0), 1)),
            (Index::slice(Some(-10), Some(2), 1), 5, (0, Some(2), 1)),
            (Index::slice(None, Some(-10), -1), 5, (4, Some(5), -1)),
            (Index::slice(None, None, -1), 0, (0, Some(0), -1)),
            (Index::At(-1), 5, (4, None, 1)),
            (Index::At(0), 5, (0, None, 1)),
        ];
        for (ix, n, want) in cases {
            assert_eq!(resolve(*ix, *n, 0).unwrap(), *want, "{ix:?} on {n}");
        }
        assert!(
            resolve(Index::At(5), 5, 2)
                .unwrap_err()
                .message()
                .contains("axis 2 with size 5")
        );
        assert!(resolve(Index::At(-6), 5, 0).is_err());
        assert!(resolve(Index::slice(None, None, 0), 5, 0).is_err());
    }
}
