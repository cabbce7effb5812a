//! `PartialEq` for arrays: equal types and equal values, compared element
//! by element over the data (any layouts; no text is made).
//!
//! Values compare as Rust compares them: floats by IEEE rules (NaN is not
//! equal to itself, `-0.0 == 0.0`), complex numbers part by part, strings
//! and bytes by content, var dims row by row (lengths, then elements),
//! options by presence and then value (two missing values are equal; a NaN
//! in `?float64` is a present value, still not equal to itself), pointers
//! by their targets' values, structs field by field.
//!
//! ```
//! use dynd::Array;
//! let a = Array::from_json("2 * var * ?float64", "[[1, null], []]").unwrap();
//! assert_eq!(a, Array::from_json("2 * var * ?float64", "[[1.0, null], []]").unwrap());
//! assert_ne!(a, Array::from_json("2 * var * ?float64", "[[1, 2], []]").unwrap());
//! // Types must match too.
//! assert_ne!(a, Array::from_json("2 * var * float64", "[[1, 0], []]").unwrap());
//! let nan = Array::from_json("float64", "NaN").unwrap();
//! assert_ne!(nan, nan.clone());
//! ```

use super::Array;
use crate::layout::arrmeta::{self, FixedDimMeta, PointerMeta, StringData, VarDimData, VarDimMeta};
use crate::layout::{na, string_bytes};
use crate::types::{NativeType, Type, TypeKind};
use crate::with_native;
use std::mem::size_of;

impl PartialEq for Array {
    fn eq(&self, other: &Array) -> bool {
        if self.tp() != other.tp() {
            return false;
        }
        if !(self.device().is_cpu() && other.device().is_cpu()) {
            // Compared on the host; an array that cannot get there equals
            // nothing.
            return match (self.to_host(), other.to_host()) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            };
        }
        if let (Some((shape, a_dt, _)), Some(_)) =
            (self.c_contiguous_parts(), other.c_contiguous_parts())
            && let Some(bt) = a_dt.as_builtin()
        {
            let n: usize = shape.iter().product();
            let size = bt.data_size();
            let (pa, pb) = (self.data_ptr(), other.data_ptr());
            // Builtins in C order: one flat loop (integers: their bytes).
            // SAFETY: both arrays hold `n` contiguous values of `bt`.
            return unsafe {
                if bt.is_int() {
                    std::slice::from_raw_parts(pa, n * size)
                        == std::slice::from_raw_parts(pb, n * size)
                } else {
                    with_native!(bt, |T| (0..n)
                        .all(|i| { T::load(pa.add(i * size)) == T::load(pb.add(i * size)) }))
                    .unwrap_or(true)
                }
            };
        }
        // SAFETY: both arrays are valid for their (equal) types.
        unsafe {
            values_eq(
                self.tp(),
                self.arrmeta_ptr(),
                self.data_ptr(),
                other.arrmeta_ptr(),
                other.data_ptr(),
            )
        }
    }
}

/// # Safety
/// 1. `a` / `am` and `b` / `bm` are valid data and arrmeta of `tp`.
unsafe fn values_eq(tp: &Type, am: *const u8, a: *const u8, bm: *const u8, b: *const u8) -> bool {
    // SAFETY: every arm reads within the layouts (1) promises (DESIGN §4).
    unsafe {
        match tp.kind() {
            TypeKind::Builtin(bt) => {
                with_native!(*bt, |T| T::load(a) == T::load(b)).unwrap_or(true)
            }
            TypeKind::Option(v) => {
                let (ma, mb) = (na::is_missing(tp, a), na::is_missing(tp, b));
                if ma || mb {
                    ma == mb
                } else {
                    values_eq(v, am, a, bm, b)
                }
            }
            TypeKind::String | TypeKind::Bytes => {
                string_bytes(arrmeta::read::<StringData>(a))
                    == string_bytes(arrmeta::read::<StringData>(b))
            }
            TypeKind::Char | TypeKind::FixedString { .. } | TypeKind::FixedBytes { .. } => {
                let n = tp.data_size();
                std::slice::from_raw_parts(a, n) == std::slice::from_raw_parts(b, n)
            }
            TypeKind::FixedDim { elem, .. } => {
                let ma: FixedDimMeta = arrmeta::read(am);
                let mb: FixedDimMeta = arrmeta::read(bm);
                let (ea, eb) = (
                    am.add(size_of::<FixedDimMeta>()),
                    bm.add(size_of::<FixedDimMeta>()),
                );
                (0..ma.dim_size).all(|i| {
                    values_eq(
                        elem,
                        ea,
                        a.wrapping_offset(i * ma.stride),
                        eb,
                        b.wrapping_offset(i * mb.stride),
                    )
                })
            }
            TypeKind::VarDim { elem } => {
                let ma: VarDimMeta = arrmeta::read(am);
                let mb: VarDimMeta = arrmeta::read(bm);
                let da: VarDimData = arrmeta::read(a);
                let db: VarDimData = arrmeta::read(b);
                let (ea, eb) = (
                    am.add(size_of::<VarDimMeta>()),
                    bm.add(size_of::<VarDimMeta>()),
                );
                da.size == db.size
                    && (0..da.size as isize).all(|i| {
                        values_eq(
                            elem,
                            ea,
                            da.begin.wrapping_offset(ma.offset + i * ma.stride),
                            eb,
                            db.begin.wrapping_offset(mb.offset + i * mb.stride),
                        )
                    })
            }
            TypeKind::Struct(fields) | TypeKind::Tuple(fields) => fields
                .types()
                .iter()
                .zip(fields.data_offsets())
                .zip(fields.arrmeta_offsets())
                .all(|((t, d), m)| values_eq(t, am.add(*m), a.add(*d), bm.add(*m), b.add(*d))),
            TypeKind::Pointer(target) => {
                let pa: usize = arrmeta::read(a);
                let pb: usize = arrmeta::read(b);
                if pa == 0 || pb == 0 {
                    return pa == pb;
                }
                let ma: PointerMeta = arrmeta::read(am);
                let mb: PointerMeta = arrmeta::read(bm);
                values_eq(
                    target,
                    am.add(size_of::<PointerMeta>()),
                    (pa as *const u8).wrapping_offset(ma.offset),
                    bm.add(size_of::<PointerMeta>()),
                    (pb as *const u8).wrapping_offset(mb.offset),
                )
            }
            // Symbolic types never describe an array's data.
            _ => false,
        }
    }
}
