//! Value copies between arrays of the same type (any layouts), used by
//! [`Array::copy`]. Assignment between different types is the job of the
//! assignment kernels.

use super::Array;
use crate::error::{Error, Result};
use crate::layout::arrmeta::{
    self, BlockrefMeta, FixedDimMeta, StringData, VarDimData, VarDimMeta,
};
use crate::layout::na;
use crate::types::NativeType;
use crate::types::{Type, TypeKind};
use std::mem::size_of;

/// Copies the value of `src` into `dst`, which must have the same type.
pub(super) fn copy_value(dst: &Array, src: &Array) -> Result<()> {
    if dst.tp() != src.tp() {
        return Err(Error::type_error(format!(
            "copy needs equal types, got {} and {}",
            dst.tp(),
            src.tp()
        )));
    }
    dst.check_writable()?;
    // SAFETY: both arrays are valid for their (equal) type and arrmeta, and
    // `dst` is writable; `dst`'s arrmeta lives in its own block, which only
    // `dst` reaches (a fresh array from `Array::copy`).
    unsafe {
        copy(
            dst.tp(),
            dst.arrmeta_ptr() as *mut u8,
            dst.data_ptr(),
            src.arrmeta_ptr(),
            src.data_ptr(),
        )
    }
}

/// # Safety
/// 1. `src` / `smeta` are valid data and arrmeta of `tp`.
/// 2. `dst` / `dmeta` are writable data and arrmeta of `tp`; `dmeta` may be
///    changed (pointer arrmeta is replaced by the source's).
pub(super) unsafe fn copy(
    tp: &Type,
    dmeta: *mut u8,
    dst: *mut u8,
    smeta: *const u8,
    src: *const u8,
) -> Result<()> {
    // SAFETY: every branch reads and writes within the layouts that (1) and
    // (2) promise, as DESIGN §4 describes them.
    unsafe {
        match tp.kind() {
            TypeKind::FixedDim { elem, .. } => {
                let dm: FixedDimMeta = arrmeta::read(dmeta);
                let sm: FixedDimMeta = arrmeta::read(smeta);
                for i in 0..dm.dim_size {
                    copy(
                        elem,
                        dmeta.add(size_of::<FixedDimMeta>()),
                        dst.offset(i * dm.stride),
                        smeta.add(size_of::<FixedDimMeta>()),
                        src.offset(i * sm.stride),
                    )?;
                }
            }
            TypeKind::VarDim { elem } => {
                let dm: VarDimMeta = arrmeta::read(dmeta);
                let sm: VarDimMeta = arrmeta::read(smeta);
                let sd: VarDimData = arrmeta::read(src);
                let bytes = sd
                    .size
                    .checked_mul(elem.data_size())
                    .ok_or_else(|| Error::alloc("var dim too large to copy"))?;
                let begin = arrmeta::with_allocator(dm.blockref, |a| {
                    a.allocate(bytes, elem.data_alignment())
                })?;
                arrmeta::write(
                    dst,
                    VarDimData {
                        begin,
                        size: sd.size,
                    },
                );
                for i in 0..sd.size as isize {
                    copy(
                        elem,
                        dmeta.add(size_of::<VarDimMeta>()),
                        begin.wrapping_offset(dm.offset + i * dm.stride),
                        smeta.add(size_of::<VarDimMeta>()),
                        sd.begin.wrapping_offset(sm.offset + i * sm.stride),
                    )?;
                }
            }
            TypeKind::String | TypeKind::Bytes => {
                let s: StringData = arrmeta::read(src);
                let bytes = crate::layout::string_bytes(s);
                let m: BlockrefMeta = arrmeta::read(dmeta);
                let begin = arrmeta::with_allocator(m.blockref, |a| a.allocate(bytes.len(), 1))?;
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), begin, bytes.len());
                let end = begin.add(bytes.len());
                // Keep `?string` NA (null begin) distinct from "" (non-null).
                let data = if s.begin.is_null() {
                    StringData {
                        begin: std::ptr::null_mut(),
                        end: std::ptr::null_mut(),
                    }
                } else {
                    StringData { begin, end }
                };
                arrmeta::write(dst, data);
            }
            TypeKind::Pointer(_) => {
                // Point at the same target: share the source's blockref and
                // target arrmeta.
                arrmeta::destroy(tp, dmeta);
                arrmeta::copy(tp, dmeta, smeta);
                std::ptr::copy_nonoverlapping(src, dst, 8);
            }
            TypeKind::Struct(fields) | TypeKind::Tuple(fields) => {
                for ((t, doff), moff) in fields
                    .types()
                    .iter()
                    .zip(fields.data_offsets())
                    .zip(fields.arrmeta_offsets())
                {
                    copy(
                        t,
                        dmeta.add(*moff),
                        dst.add(*doff),
                        smeta.add(*moff),
                        src.add(*doff),
                    )?;
                }
            }
            TypeKind::Option(value) => {
                if na::is_missing(tp, src) {
                    na::set_missing(tp, dst)?;
                } else {
                    copy(value, dmeta, dst, smeta, src)?;
                    na::set_present(tp, dst);
                }
            }
            _ => std::ptr::copy_nonoverlapping(src, dst, tp.data_size()),
        }
    }
    Ok(())
}

/// Writes `values` into a 1-d array `N * T` (N must match) or a single var
/// element `var * T` (allocated to fit).
pub(super) fn fill_row<T: NativeType>(row: &Array, values: &[T]) -> Result<()> {
    let size = T::TYPE.data_size();
    match row.tp().kind() {
        TypeKind::FixedDim { size: n, elem }
            if elem.as_builtin() == Some(T::TYPE) && *n == values.len() =>
        {
            // SAFETY: fixed dim arrmeta; n elements at `stride`.
            let m: FixedDimMeta = unsafe { arrmeta::read(row.arrmeta_ptr()) };
            for (i, v) in values.iter().enumerate() {
                // SAFETY: element i of the row.
                unsafe { v.store(row.data_ptr().offset(i as isize * m.stride)) };
            }
            Ok(())
        }
        TypeKind::VarDim { elem } if elem.as_builtin() == Some(T::TYPE) => {
            // SAFETY: var dim arrmeta; the data is one var element.
            unsafe {
                let m: VarDimMeta = arrmeta::read(row.arrmeta_ptr());
                let begin = arrmeta::with_allocator(m.blockref, |a| {
                    a.allocate(values.len() * size, T::TYPE.data_alignment())
                })?;
                for (i, v) in values.iter().enumerate() {
                    v.store(begin.wrapping_offset(m.offset + i as isize * m.stride));
                }
                arrmeta::write(
                    row.data_ptr(),
                    VarDimData {
                        begin,
                        size: values.len(),
                    },
                );
            }
            Ok(())
        }
        _ => Err(Error::type_error(format!(
            "cannot fill a row of type {} with {} values of {}",
            row.tp(),
            values.len(),
            T::TYPE
        ))),
    }
}
