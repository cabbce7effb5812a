//! Views: integer indexing, slicing, struct fields by name, permuting dims.
//! Every view shares the original's data; only a new preamble and arrmeta
//! are made.

use super::Array;
use crate::error::{Error, Result};
use crate::layout::arrmeta::{self, FixedDimMeta, VarDimData, VarDimMeta};
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
enum Piece {
    Fixed(FixedDimMeta),
    /// A var dim's arrmeta, shared (its blockref gets a new reference).
    Var(VarDimMeta),
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
            self.pieces.push(Piece::Fixed(FixedDimMeta {
                dim_size: n as isize,
                stride,
            }));
            self.dims.push(Some(n));
            self.single = false;
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
    /// A view selecting `indices` from the leading dims (integers drop a
    /// dim, slices keep it). Integer and sliced indexes into a var dim are
    /// possible when it is the outermost remaining dim (its one element is
    /// known); a var dim under a kept dim only takes `:`.
    ///
    /// ```
    /// use dynd::{Array, Index};
    /// let a = Array::from_json("3 * 4 * int32", "[[0,1,2,3],[4,5,6,7],[8,9,10,11]]").unwrap();
    /// let v = a.index(&[Index::slice(None, None, -1), 1.into()]).unwrap();
    /// assert_eq!(v.to_json(), "[9,5,1]");
    /// ```
    pub fn index(&self, indices: &[Index]) -> Result<Array> {
        let ndim = self.ndim();
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
        for (axis, &ix) in indices.iter().enumerate() {
            match tp.kind().clone() {
                TypeKind::FixedDim { elem, .. } => {
                    // SAFETY: the arrmeta of a fixed dim starts here.
                    let m: FixedDimMeta = unsafe { arrmeta::read(meta) };
                    let (start, count, step) = resolve(ix, m.dim_size as usize, axis)?;
                    view.data = view.data.wrapping_offset(start * m.stride);
                    view.keep_fixed(count, m.stride * step);
                    // SAFETY: the element's arrmeta follows.
                    meta = unsafe { meta.add(size_of::<FixedDimMeta>()) };
                    tp = elem;
                }
                TypeKind::VarDim { elem } => {
                    // SAFETY: the arrmeta of a var dim starts here.
                    let m: VarDimMeta = unsafe { arrmeta::read(meta) };
                    if view.single {
                        // SAFETY: `single` means the data is one var element.
                        let d: VarDimData = unsafe { arrmeta::read(view.data) };
                        let (start, count, step) = resolve(ix, d.size, axis)?;
                        view.data = d.begin.wrapping_offset(m.offset + start * m.stride);
                        // SAFETY: the arrmeta holds a reference to its blockref.
                        view.data_ref =
                            unsafe { arrmeta::blockref_clone(m.blockref) }.ok_or_else(|| {
                                Error::index(format!("var dim on axis {axis} has no memory block"))
                            })?;
                        view.keep_fixed(count, m.stride * step);
                    } else if ix.is_all() {
                        view.pieces.push(Piece::Var(m));
                        view.dims.push(None);
                    } else {
                        return Err(Error::index(format!(
                            "cannot index the var dim on axis {axis} of {} element by element \
                             under a sliced dimension; only ':' is supported there",
                            self.tp()
                        )));
                    }
                    // SAFETY: the element's arrmeta follows.
                    meta = unsafe { meta.add(size_of::<VarDimMeta>()) };
                    tp = elem;
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
    pub fn field(&self, name: &str) -> Result<Array> {
        let mut view = View::new(self);
        view.single = false;
        let mut tp = self.tp().clone();
        let mut meta = self.arrmeta_ptr();
        loop {
            match tp.kind().clone() {
                TypeKind::FixedDim { elem, .. } => {
                    // SAFETY: fixed dim arrmeta starts here; the element's follows.
                    unsafe {
                        let m: FixedDimMeta = arrmeta::read(meta);
                        view.pieces.push(Piece::Fixed(m));
                        view.dims.push(Some(m.dim_size as usize));
                        meta = meta.add(size_of::<FixedDimMeta>());
                    }
                    tp = elem;
                }
                TypeKind::VarDim { elem } => {
                    // SAFETY: var dim arrmeta starts here; the element's follows.
                    unsafe {
                        view.pieces.push(Piece::Var(arrmeta::read(meta)));
                        view.dims.push(None);
                        meta = meta.add(size_of::<VarDimMeta>());
                    }
                    tp = elem;
                }
                TypeKind::Struct(fields) => {
                    let Some(i) = fields.index_of(name) else {
                        return Err(Error::index(format!(
                            "no field named '{name}' in {tp} (fields: {})",
                            fields.names().join(", ")
                        )));
                    };
                    let off = fields.data_offsets()[i] as isize;
                    // The field sits `off` bytes into each struct: add that to
                    // the innermost var dim's offset, or to the data pointer.
                    match view.pieces.iter_mut().rev().find_map(|p| match p {
                        Piece::Var(v) => Some(v),
                        Piece::Fixed(_) => None,
                    }) {
                        Some(v) => v.offset += off,
                        None => view.data = view.data.wrapping_offset(off),
                    }
                    let ftp = fields.types()[i].clone();
                    // SAFETY: the field's arrmeta is at its recorded offset.
                    let fmeta = unsafe { meta.add(fields.arrmeta_offsets()[i]) };
                    return Ok(view.finish(self, &ftp, fmeta));
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
    /// view is axis `axes[i]` of `self`. Those dims must be fixed.
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
        let mut metas = Vec::with_capacity(k);
        let mut tp = self.tp().clone();
        let mut meta = self.arrmeta_ptr();
        for axis in 0..k {
            let TypeKind::FixedDim { elem, .. } = tp.kind().clone() else {
                return Err(Error::type_error(format!(
                    "permute needs fixed dims, but axis {axis} of {} is {}",
                    self.tp(),
                    if matches!(tp.kind(), TypeKind::VarDim { .. }) {
                        "var"
                    } else {
                        "not a dim"
                    }
                )));
            };
            // SAFETY: fixed dim arrmeta starts here; the element's follows.
            unsafe {
                metas.push(arrmeta::read::<FixedDimMeta>(meta));
                meta = meta.add(size_of::<FixedDimMeta>());
            }
            tp = elem;
        }
        let mut view = View::new(self);
        view.single = false;
        for &a in axes {
            view.pieces.push(Piece::Fixed(metas[a]));
            view.dims.push(Some(metas[a].dim_size as usize));
        }
        Ok(view.finish(self, &tp, meta))
    }
}

pub(super) fn shape(a: &Array) -> Vec<Option<usize>> {
    let mut out = Vec::new();
    let mut tp = a.tp().clone();
    let mut meta = a.arrmeta_ptr();
    loop {
        match tp.kind().clone() {
            TypeKind::FixedDim { elem, .. } => {
                // SAFETY: fixed dim arrmeta starts here; the element's follows.
                unsafe {
                    out.push(Some(arrmeta::read::<FixedDimMeta>(meta).dim_size as usize));
                    meta = meta.add(size_of::<FixedDimMeta>());
                }
                tp = elem;
            }
            TypeKind::VarDim { elem } => {
                if out.is_empty() {
                    // SAFETY: the outermost var dim's data is one element.
                    out.push(Some(
                        unsafe { arrmeta::read::<VarDimData>(a.data_ptr()) }.size,
                    ));
                } else {
                    out.push(None);
                }
                // SAFETY: the element's arrmeta follows.
                meta = unsafe { meta.add(size_of::<VarDimMeta>()) };
                tp = elem;
            }
            _ => return out,
        }
    }
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
