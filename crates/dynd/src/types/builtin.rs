//! Builtin scalar types: plain ids, no allocation, no reference count.

use super::NativeType;
use std::fmt;

/// The id of a builtin scalar type. The discriminants are the type ids of
/// DESIGN §3: they cross the C ABI and never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum BuiltinType {
    /// `bool`, one byte holding 0 or 1.
    Bool = 1,
    /// `int8`
    Int8 = 2,
    /// `int16`
    Int16 = 3,
    /// `int32`
    Int32 = 4,
    /// `int64`
    Int64 = 5,
    /// `int128`
    Int128 = 6,
    /// `uint8`
    UInt8 = 7,
    /// `uint16`
    UInt16 = 8,
    /// `uint32`
    UInt32 = 9,
    /// `uint64`
    UInt64 = 10,
    /// `uint128`
    UInt128 = 11,
    /// `float16` (IEEE binary16, the `half` crate's `f16`)
    Float16 = 12,
    /// `float32`
    Float32 = 13,
    /// `float64`
    Float64 = 14,
    /// `complex[float32]`: `{re: f32, im: f32}`
    Complex64 = 16,
    /// `complex[float64]`: `{re: f64, im: f64}`
    Complex128 = 17,
    /// `void`: no data.
    Void = 18,
    /// `bfloat16` (the upper half of a float32: 8 exponent bits, 8
    /// significant bits; the `half` crate's `bf16`)
    BFloat16 = 19,
}

/// The type id reserved for float128 (DESIGN §3); not supported.
pub const FLOAT128_TYPE_ID: u32 = 15;
/// A `dynd_type` below this value is a builtin id (DESIGN §3).
pub const BUILTIN_TYPE_ID_LIMIT: usize = 64;

impl BuiltinType {
    /// Every builtin type, in id order.
    pub const ALL: [BuiltinType; 18] = [
        BuiltinType::Bool,
        BuiltinType::Int8,
        BuiltinType::Int16,
        BuiltinType::Int32,
        BuiltinType::Int64,
        BuiltinType::Int128,
        BuiltinType::UInt8,
        BuiltinType::UInt16,
        BuiltinType::UInt32,
        BuiltinType::UInt64,
        BuiltinType::UInt128,
        BuiltinType::Float16,
        BuiltinType::Float32,
        BuiltinType::Float64,
        BuiltinType::Complex64,
        BuiltinType::Complex128,
        BuiltinType::Void,
        BuiltinType::BFloat16,
    ];

    /// The DESIGN §3 type id.
    pub fn id(self) -> u32 {
        self as u32
    }

    /// The builtin type with this id; `None` for 0 (uninitialized), 15
    /// (float128, not supported) and anything that is not a builtin id.
    pub fn from_id(id: u32) -> Option<BuiltinType> {
        BuiltinType::ALL.into_iter().find(|b| b.id() == id)
    }

    /// Size of one value in bytes (of its [`NativeType`]; 0 for void).
    pub fn data_size(self) -> usize {
        crate::with_native!(self, |T| size_of::<<T as NativeType>::Raw>()).unwrap_or(0)
    }

    /// Alignment of a value in bytes (the platform C alignment, that of its
    /// [`NativeType`]; 1 for void).
    pub fn data_alignment(self) -> usize {
        crate::with_native!(self, |T| align_of::<<T as NativeType>::Raw>()).unwrap_or(1)
    }

    /// The canonical datashape name.
    pub const fn name(self) -> &'static str {
        use BuiltinType::*;
        match self {
            Bool => "bool",
            Int8 => "int8",
            Int16 => "int16",
            Int32 => "int32",
            Int64 => "int64",
            Int128 => "int128",
            UInt8 => "uint8",
            UInt16 => "uint16",
            UInt32 => "uint32",
            UInt64 => "uint64",
            UInt128 => "uint128",
            Float16 => "float16",
            Float32 => "float32",
            Float64 => "float64",
            Complex64 => "complex[float32]",
            Complex128 => "complex[float64]",
            Void => "void",
            BFloat16 => "bfloat16",
        }
    }

    /// The builtin named `name` in datashape, aliases included
    /// (`int` = int32, `real` = float64, `complex` = `complex[float64]`,
    /// `complex64`, `complex128`, `intptr`, `uintptr`).
    pub fn from_name(name: &str) -> Option<BuiltinType> {
        use BuiltinType::*;
        Some(match name {
            "bool" => Bool,
            "int8" => Int8,
            "int16" => Int16,
            "int32" | "int" => Int32,
            "int64" => Int64,
            "int128" => Int128,
            "uint8" => UInt8,
            "uint16" => UInt16,
            "uint32" => UInt32,
            "uint64" => UInt64,
            "uint128" => UInt128,
            "float16" => Float16,
            "float32" => Float32,
            "float64" | "real" => Float64,
            "complex[float32]" | "complex64" => Complex64,
            "complex[float64]" | "complex128" | "complex" => Complex128,
            "intptr" => {
                if cfg!(target_pointer_width = "64") {
                    Int64
                } else {
                    Int32
                }
            }
            "uintptr" => {
                if cfg!(target_pointer_width = "64") {
                    UInt64
                } else {
                    UInt32
                }
            }
            "void" => Void,
            "bfloat16" => BFloat16,
            _ => return None,
        })
    }

    /// `true` for bool.
    pub fn is_bool(self) -> bool {
        self == BuiltinType::Bool
    }
    /// `true` for the signed integers.
    pub fn is_signed_int(self) -> bool {
        crate::with_native!(self, signed => |T| ()).is_some()
    }
    /// `true` for the unsigned integers.
    pub fn is_unsigned_int(self) -> bool {
        crate::with_native!(self, unsigned => |T| ()).is_some()
    }
    /// `true` for all integers.
    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }
    /// `true` for the real floating-point types (float16, float32, float64).
    pub fn is_float(self) -> bool {
        crate::with_native!(self, half ieee => |T| ()).is_some()
    }
    /// `true` for the complex types.
    pub fn is_complex(self) -> bool {
        crate::with_native!(self, complex => |T| ()).is_some()
    }
}

impl fmt::Display for BuiltinType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sizes_and_alignments_follow_design_section_3() {
        // (type, id, size, alignment)
        let table = [
            (BuiltinType::Bool, 1, 1, 1),
            (BuiltinType::Int8, 2, 1, 1),
            (BuiltinType::Int16, 3, 2, 2),
            (BuiltinType::Int32, 4, 4, 4),
            (BuiltinType::Int64, 5, 8, 8),
            (BuiltinType::Int128, 6, 16, 16),
            (BuiltinType::UInt8, 7, 1, 1),
            (BuiltinType::UInt16, 8, 2, 2),
            (BuiltinType::UInt32, 9, 4, 4),
            (BuiltinType::UInt64, 10, 8, 8),
            (BuiltinType::UInt128, 11, 16, 16),
            (BuiltinType::Float16, 12, 2, 2),
            (BuiltinType::Float32, 13, 4, 4),
            (BuiltinType::Float64, 14, 8, 8),
            (BuiltinType::Complex64, 16, 8, 4),
            (BuiltinType::Complex128, 17, 16, 8),
            (BuiltinType::Void, 18, 0, 1),
            (BuiltinType::BFloat16, 19, 2, 2),
        ];
        for (tp, id, size, align) in table {
            assert_eq!(tp.id(), id, "{tp}");
            assert_eq!(tp.data_size(), size, "{tp}");
            assert_eq!(tp.data_alignment(), align, "{tp}");
            assert_eq!(BuiltinType::from_id(id), Some(tp));
            assert_eq!(BuiltinType::from_name(tp.name()), Some(tp));
        }
        assert_eq!(BuiltinType::from_id(0), None);
        assert_eq!(BuiltinType::from_id(FLOAT128_TYPE_ID), None);
        assert_eq!(BuiltinType::from_id(20), None);
    }

    #[test]
    fn sizes_match_the_rust_types() {
        use std::mem::{align_of, size_of};
        assert_eq!(BuiltinType::Float16.data_size(), size_of::<half::f16>());
        assert_eq!(
            BuiltinType::Complex64.data_size(),
            size_of::<num_complex::Complex<f32>>()
        );
        assert_eq!(
            BuiltinType::Complex128.data_alignment(),
            align_of::<num_complex::Complex<f64>>()
        );
        assert_eq!(BuiltinType::Int128.data_alignment(), align_of::<i128>());
    }

    #[test]
    fn aliases() {
        assert_eq!(BuiltinType::from_name("int"), Some(BuiltinType::Int32));
        assert_eq!(BuiltinType::from_name("real"), Some(BuiltinType::Float64));
        assert_eq!(
            BuiltinType::from_name("complex"),
            Some(BuiltinType::Complex128)
        );
        assert_eq!(
            BuiltinType::from_name("complex64"),
            Some(BuiltinType::Complex64)
        );
        assert_eq!(BuiltinType::from_name("intptr"), Some(BuiltinType::Int64));
        assert_eq!(BuiltinType::from_name("uintptr"), Some(BuiltinType::UInt64));
        assert_eq!(BuiltinType::from_name("float65"), None);
    }
}
