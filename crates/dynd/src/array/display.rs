//! The readable repr of an array, which summarises big arrays as NumPy
//! does: when an array holds more than [`print_threshold`] elements (1000
//! unless [`set_print_threshold`] says otherwise), each dim longer than
//! twice the edge items (3) shows its first and last 3 elements around
//! `...`, at every level.
//!
//! ```
//! use dynd::Array;
//! let a = Array::from((0..1_000_000i64).collect::<Vec<_>>());
//! assert_eq!(
//!     a.to_string(),
//!     r#"array([0, 1, 2, ..., 999997, 999998, 999999], type="1000000 * int64")"#
//! );
//! // Per call: a threshold and edge items of its own.
//! let b = Array::from((0..10i32).collect::<Vec<_>>());
//! assert_eq!(
//!     b.display().threshold(5).edge_items(2).to_string(),
//!     r#"array([0, 1, ..., 8, 9], type="10 * int32")"#
//! );
//! ```
//!
//! Small arrays print in full, as JSON with spaces (`array([[1, 2], [3]],
//! type="2 * var * int32")`). The summary cuts dims only: a struct's
//! fields, and dims inside a struct field, print in full. JSON output
//! ([`Array::to_json`]) never summarises.

use super::{Array, json};
use crate::layout::arrmeta::{self, FixedDimMeta, VarDimData, VarDimMeta};
use crate::memblock::DeviceId;
use crate::types::{Type, TypeKind};
use std::fmt;
use std::mem::size_of;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The number of edge items a summarised dim shows at each end.
pub const DEFAULT_EDGE_ITEMS: usize = 3;

/// The element count above which [`Array`]'s `Display` summarises.
pub const DEFAULT_PRINT_THRESHOLD: usize = 1000;

// A plain setting read once per print: no other memory hangs on it, so
// relaxed ordering is enough.
static PRINT_THRESHOLD: AtomicUsize = AtomicUsize::new(DEFAULT_PRINT_THRESHOLD);

/// Sets the element count above which `Display` summarises arrays, for
/// the whole process (NumPy's `set_printoptions(threshold=...)`);
/// `usize::MAX` never summarises.
pub fn set_print_threshold(n: usize) {
    PRINT_THRESHOLD.store(n, Ordering::Relaxed);
}

/// The element count above which `Display` summarises arrays.
pub fn print_threshold() -> usize {
    PRINT_THRESHOLD.load(Ordering::Relaxed)
}

/// An array's repr with its own summary settings, from [`Array::display`].
#[derive(Clone, Copy)]
pub struct ArrayDisplay<'a> {
    array: &'a Array,
    threshold: usize,
    edge_items: usize,
}

impl ArrayDisplay<'_> {
    /// Summarises when the array holds more than `n` elements.
    pub fn threshold(self, n: usize) -> Self {
        ArrayDisplay {
            threshold: n,
            ..self
        }
    }

    /// Shows `k` elements at each end of a summarised dim.
    pub fn edge_items(self, k: usize) -> Self {
        ArrayDisplay {
            edge_items: k,
            ..self
        }
    }
}

impl Array {
    /// The repr with summary settings of its own ([`ArrayDisplay`]);
    /// `Display` uses [`print_threshold`] and [`DEFAULT_EDGE_ITEMS`].
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_json("3 * 10 * int32", &format!("{:?}", vec![[7; 10]; 3])).unwrap();
    /// assert_eq!(
    ///     a.display().threshold(10).edge_items(1).to_string(),
    ///     r#"array([[7, ..., 7], ..., [7, ..., 7]], type="3 * 10 * int32")"#
    /// );
    /// ```
    pub fn display(&self) -> ArrayDisplay<'_> {
        ArrayDisplay {
            array: self,
            threshold: print_threshold(),
            edge_items: DEFAULT_EDGE_ITEMS,
        }
    }
}

impl fmt::Display for ArrayDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = match self.array.on_host_for_reading() {
            Ok(a) => a,
            Err(why) => return f.write_str(&why),
        };
        let a = &a;
        let (tp, meta, data) = (a.tp(), a.arrmeta_ptr(), a.data_ptr() as *const u8);
        // SAFETY: `a` is a valid array: data and arrmeta match its type.
        let big = unsafe { count(tp, meta, data, self.threshold) } > self.threshold;
        let mut out = String::new();
        let edge = big.then_some(self.edge_items);
        // SAFETY: as above.
        unsafe { write(tp, meta, data, edge, &mut out) };
        write!(f, "array({out}, type=")?;
        json::write_json_string(&tp.to_string(), f)?;
        match self.array.device() {
            DeviceId::Cpu => f.write_str(")"),
            dev => write!(f, ", device=\"{dev}\")"),
        }
    }
}

/// The elements of `tp`'s dims (1 for a non-dim), counting no further
/// than just past `cap`.
///
/// # Safety
/// 1. `data` / `meta` are valid data and arrmeta of `tp`.
unsafe fn count(tp: &Type, meta: *const u8, data: *const u8, cap: usize) -> usize {
    // SAFETY: (1) and DESIGN §4's layouts.
    unsafe {
        match tp.kind() {
            TypeKind::FixedDim { size, elem } => {
                if !elem.is_dim() {
                    return *size;
                }
                let m: FixedDimMeta = arrmeta::read(meta);
                let mut total = 0usize;
                for i in 0..m.dim_size {
                    let inner = meta.add(size_of::<FixedDimMeta>());
                    total =
                        total.saturating_add(count(elem, inner, data.offset(i * m.stride), cap));
                    if total > cap {
                        break;
                    }
                }
                total
            }
            TypeKind::VarDim { elem } => {
                let m: VarDimMeta = arrmeta::read(meta);
                let d: VarDimData = arrmeta::read(data);
                if !elem.is_dim() {
                    return d.size;
                }
                let mut total = 0usize;
                for i in 0..d.size as isize {
                    let inner = meta.add(size_of::<VarDimMeta>());
                    let at = d.begin.wrapping_offset(m.offset + i * m.stride);
                    total = total.saturating_add(count(elem, inner, at, cap));
                    if total > cap {
                        break;
                    }
                }
                total
            }
            _ => 1,
        }
    }
}

/// Writes the value, each dim cut to `edge` items at each end when `edge`
/// is set and the dim is longer than twice that.
///
/// # Safety
/// 1. `data` / `meta` are valid data and arrmeta of `tp`.
unsafe fn write(
    tp: &Type,
    meta: *const u8,
    data: *const u8,
    edge: Option<usize>,
    out: &mut String,
) {
    // SAFETY: (1) and DESIGN §4's layouts.
    unsafe {
        // The dim's length, element type and arrmeta, first element and stride.
        let (n, elem, inner, base, stride) = match tp.kind() {
            TypeKind::FixedDim { elem, .. } => {
                let m: FixedDimMeta = arrmeta::read(meta);
                let inner = meta.add(size_of::<FixedDimMeta>());
                (m.dim_size as usize, elem, inner, data, m.stride)
            }
            TypeKind::VarDim { elem } => {
                let m: VarDimMeta = arrmeta::read(meta);
                let d: VarDimData = arrmeta::read(data);
                let inner = meta.add(size_of::<VarDimMeta>());
                let base = d.begin.wrapping_offset(m.offset).cast_const();
                (d.size, elem, inner, base, m.stride)
            }
            _ => return json::write_value(tp, meta, data, true, out),
        };
        let at = |i: usize| base.wrapping_offset(i as isize * stride);
        out.push('[');
        let cut = edge.filter(|&k| n > 2 * k);
        let mut first = true;
        let mut item = |i: usize, out: &mut String| {
            if !std::mem::take(&mut first) {
                out.push_str(", ");
            }
            write(elem, inner, at(i), edge, out);
        };
        match cut {
            Some(k) => {
                for i in 0..k {
                    item(i, out);
                }
                out.push_str(if k == 0 { "..." } else { ", ..." });
                for i in n - k..n {
                    item(i, out);
                }
            }
            None => {
                for i in 0..n {
                    item(i, out);
                }
            }
        }
        out.push(']');
    }
}
