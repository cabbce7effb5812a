//! Arrow data types ↔ dynd types, and the structural checks run on foreign
//! `ArrowSchema`/`ArrowArray` structs before arrow-rs reads them.
//!
//! | dynd | Arrow (format) |
//! |---|---|
//! | `bool` | Boolean (`b`) |
//! | `int8` … `int64`, `uint8` … `uint64` | Int8 … UInt64 (`c s i l C S I L`) |
//! | `float16`, `float32`, `float64` | Float16/32/64 (`e f g`) |
//! | `string` | Utf8 / LargeUtf8 (`u`, `U`; import also `vu`) |
//! | `bytes` | Binary / LargeBinary (`z`, `Z`; import also `vz`) |
//! | `N * T` under the outermost dim | FixedSizeList (`+w:N`) |
//! | `var * T` | List / LargeList (`+l`, `+L`; import also `+vl`, `+vL`) |
//! | `{a: A, …}`, `(A, …)` | Struct (`+s`; tuple fields are named `f0`, `f1`, …) |
//! | `?T` | T with a validity bitmap (nullable field) |
//!
//! No Arrow form: `int128`, `uint128`, `bfloat16`, complex, `char`,
//! `fixed_string`, `fixed_bytes`, `pointer`, `void`.

use crate::error::{Error, Result};
use crate::types::{BuiltinType, Type, TypeKind};
use arrow_array::ffi::FFI_ArrowArray;
use arrow_schema::DataType;
use arrow_schema::ffi::FFI_ArrowSchema;

/// The Arrow primitive type of a dynd builtin, or an error naming why it
/// has none.
pub(crate) fn primitive_to_arrow(b: BuiltinType) -> Result<DataType> {
    use BuiltinType as B;
    Ok(match b {
        B::Bool => DataType::Boolean,
        B::Int8 => DataType::Int8,
        B::Int16 => DataType::Int16,
        B::Int32 => DataType::Int32,
        B::Int64 => DataType::Int64,
        B::UInt8 => DataType::UInt8,
        B::UInt16 => DataType::UInt16,
        B::UInt32 => DataType::UInt32,
        B::UInt64 => DataType::UInt64,
        B::Float16 => DataType::Float16,
        B::Float32 => DataType::Float32,
        B::Float64 => DataType::Float64,
        other => return Err(no_arrow_form(&Type::builtin(other))),
    })
}

/// The dynd builtin of an Arrow fixed-width numeric type.
pub(crate) fn primitive_from_arrow(dt: &DataType) -> Option<BuiltinType> {
    use BuiltinType as B;
    Some(match dt {
        DataType::Int8 => B::Int8,
        DataType::Int16 => B::Int16,
        DataType::Int32 => B::Int32,
        DataType::Int64 => B::Int64,
        DataType::UInt8 => B::UInt8,
        DataType::UInt16 => B::UInt16,
        DataType::UInt32 => B::UInt32,
        DataType::UInt64 => B::UInt64,
        DataType::Float16 => B::Float16,
        DataType::Float32 => B::Float32,
        DataType::Float64 => B::Float64,
        _ => return None,
    })
}

/// The error for a dynd type without an Arrow counterpart.
pub(crate) fn no_arrow_form(tp: &Type) -> Error {
    let why = match tp.kind() {
        TypeKind::Builtin(BuiltinType::Int128 | BuiltinType::UInt128) => {
            "Arrow has no 128-bit integer type (its decimal128 is a different type)"
        }
        TypeKind::Builtin(BuiltinType::Complex64 | BuiltinType::Complex128) => {
            "Arrow has no complex type"
        }
        TypeKind::Builtin(BuiltinType::BFloat16) => "Arrow has no bfloat16 type",
        TypeKind::Builtin(BuiltinType::Void) => "void has no values",
        TypeKind::Option(_) => "an option cannot be nested in an option",
        _ => "it has no Arrow counterpart",
    };
    Error::type_error(format!(
        "the dynd type {tp} has no Arrow form: {why} (supported: bool, int8-int64, uint8-uint64, float16/32/64, string, bytes, fixed and var dims, structs, tuples and options of these)"
    ))
}

/// The number of buffers the C Data Interface gives a format (`None`: any
/// number, at least two: the view types), for the formats dynd imports;
/// an error naming any other format.
fn buffers_of(format: &str) -> Result<Option<usize>> {
    Ok(Some(match format {
        "b" | "c" | "C" | "s" | "S" | "i" | "I" | "l" | "L" | "e" | "f" | "g" => 2,
        "u" | "U" | "z" | "Z" => 3,
        "vu" | "vz" => return Ok(None),
        "+l" | "+L" => 2,
        "+vl" | "+vL" => 3,
        "+s" => 1,
        f if f.starts_with("+w:") => 1,
        _ => {
            return Err(Error::type_error(format!(
                "unsupported Arrow format string {format:?}: dynd imports b, c, C, s, S, i, I, l, L, e, f, g, u, U, z, Z, vu, vz, +l, +L, +vl, +vL, +w:N and +s"
            )));
        }
    }))
}

/// The number of children a format has (`None`: a struct, any number).
fn children_of(format: &str) -> Option<usize> {
    match format {
        "+s" => None,
        f if f.starts_with("+l") || f.starts_with("+L") || f.starts_with("+v") && f.len() == 3 => {
            Some(1)
        }
        f if f.starts_with("+w:") => Some(1),
        _ => Some(0),
    }
}

/// The C Data Interface's `struct ArrowSchema`, field by field (the Arrow
/// specification's layout, the same as arrow-rs's `FFI_ArrowSchema`, whose
/// fields are private): read to check a foreign struct before arrow-rs
/// trusts it.
#[repr(C)]
struct RawSchema {
    format: *const std::ffi::c_char,
    name: *const std::ffi::c_char,
    metadata: *const std::ffi::c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut RawSchema,
    dictionary: *mut RawSchema,
    release: Option<unsafe extern "C" fn(*mut RawSchema)>,
    private_data: *mut std::ffi::c_void,
}

/// The C Data Interface's `struct ArrowArray`, field by field (as
/// [`RawSchema`]).
#[repr(C)]
struct RawArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const std::ffi::c_void,
    children: *mut *mut RawArray,
    dictionary: *mut RawArray,
    release: Option<unsafe extern "C" fn(*mut RawArray)>,
    private_data: *mut std::ffi::c_void,
}

const _: () = {
    assert!(std::mem::size_of::<RawSchema>() == std::mem::size_of::<FFI_ArrowSchema>());
    assert!(std::mem::size_of::<RawArray>() == std::mem::size_of::<FFI_ArrowArray>());
};

/// Checks a foreign schema and array before arrow-rs reads them (arrow-rs
/// trusts the producer and panics or reads out of bounds on malformed
/// structs): both are live (not released), every format is one dynd
/// imports, and at every node the children counts agree with each other
/// and with the format, children and buffer arrays are not null where
/// needed, and the buffer count is the format's.
pub(crate) fn check_structs(schema: &FFI_ArrowSchema, array: &FFI_ArrowArray) -> Result<()> {
    let s = (schema as *const FFI_ArrowSchema).cast::<RawSchema>();
    let a = (array as *const FFI_ArrowArray).cast::<RawArray>();
    // SAFETY: both structs are the C Data Interface's, whose layout the
    // Raw mirrors have (sizes asserted above; field order from the spec);
    // the references keep them alive for the call.
    unsafe { check_raw(&*s, &*a, "the root") }
}

/// [`check_structs`] on the raw layouts; `path` names the node in errors.
///
/// # Safety
/// 1. `s` and `a` are structs of the C Data Interface whose pointers, when
///    not null, point at what the specification says.
unsafe fn check_raw(s: &RawSchema, a: &RawArray, path: &str) -> Result<()> {
    if s.release.is_none() {
        return Err(Error::invalid_argument(format!(
            "the ArrowSchema at {path} was already released (its release is NULL)"
        )));
    }
    if a.release.is_none() {
        return Err(Error::invalid_argument(format!(
            "the ArrowArray at {path} was already released (its release is NULL)"
        )));
    }
    if s.format.is_null() {
        return Err(Error::invalid_argument(format!(
            "the ArrowSchema at {path} has a NULL format string"
        )));
    }
    // SAFETY: (1) a non-null format is a NUL-terminated string.
    let format = unsafe { std::ffi::CStr::from_ptr(s.format) }.to_string_lossy();
    if !s.dictionary.is_null() {
        return Err(Error::type_error(format!(
            "the Arrow field at {path} (format {format:?}) is dictionary-encoded, which dynd does not import"
        )));
    }
    let nbuf = buffers_of(&format).map_err(|e| e.context(format!("at {path}")))?;
    let got = a.n_buffers;
    match nbuf {
        Some(n) if got != n as i64 => {
            return Err(Error::invalid_argument(format!(
                "the ArrowArray at {path} (format {format:?}) has {got} buffers; the format has {n}"
            )));
        }
        None if got < 2 => {
            return Err(Error::invalid_argument(format!(
                "the ArrowArray at {path} (format {format:?}) has {got} buffers; a view format has at least 2"
            )));
        }
        _ => {}
    }
    if got > 0 && a.buffers.is_null() {
        return Err(Error::invalid_argument(format!(
            "the ArrowArray at {path} has {got} buffers but a NULL buffers pointer"
        )));
    }
    if a.length < 0 || a.offset < 0 {
        return Err(Error::invalid_argument(format!(
            "the ArrowArray at {path} has a negative length ({}) or offset ({})",
            a.length, a.offset
        )));
    }
    let (ns, na) = (s.n_children, a.n_children);
    if ns != na {
        return Err(Error::invalid_argument(format!(
            "mismatched children at {path}: the ArrowSchema (format {format:?}) has {ns} children but the ArrowArray has {na}"
        )));
    }
    if let Some(want) = children_of(&format)
        && want as i64 != ns
    {
        return Err(Error::invalid_argument(format!(
            "the Arrow format {format:?} at {path} has {want} children, but the structs have {ns}"
        )));
    }
    if ns < 0 || (ns > 0 && (s.children.is_null() || a.children.is_null())) {
        return Err(Error::invalid_argument(format!(
            "the structs at {path} have {ns} children but a NULL (or negative) children array"
        )));
    }
    for i in 0..ns as usize {
        // SAFETY: (1) the children arrays (checked non-null) hold
        // `n_children` pointers.
        let (cs, ca) = unsafe { (*s.children.add(i), *a.children.add(i)) };
        if cs.is_null() || ca.is_null() {
            return Err(Error::invalid_argument(format!(
                "child {i} at {path} is a NULL pointer"
            )));
        }
        // SAFETY: (1) non-null children point at live child structs.
        let (cs, ca) = unsafe { (&*cs, &*ca) };
        let name = if cs.name.is_null() {
            String::new()
        } else {
            // SAFETY: (1) a non-null name is a NUL-terminated string.
            unsafe { std::ffi::CStr::from_ptr(cs.name) }
                .to_string_lossy()
                .into_owned()
        };
        // SAFETY: (1) for the children.
        unsafe { check_raw(cs, ca, &format!("{path}.{i} ({name:?})"))? };
    }
    Ok(())
}
