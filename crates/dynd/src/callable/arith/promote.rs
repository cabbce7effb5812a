//! Type promotion: the type two numbers are computed in.
//!
//! The rule is derived, not kept as a table: [`promote`] is the first type
//! in [`LATTICE`] order that both arguments convert to *safely*
//! ([`safe_cast`], NumPy's `can_cast(..., "safe")` extended to int128 and
//! uint128). The table in the [module docs](super) is printed from it
//! ([`promotion_table`]) and the tests compare it with a hand-written grid.

use crate::types::{BuiltinType, NativeType};
use crate::with_native;
use std::sync::LazyLock;

use BuiltinType::*;

/// The numeric builtins in promotion order: the first of these that both
/// arguments convert to safely is their common type. Ordered by kind (bool,
/// integers, floats, complex), then size, unsigned before signed: derived
/// from the types' properties, so a new builtin takes its place by itself.
pub static LATTICE: LazyLock<Vec<BuiltinType>> = LazyLock::new(|| {
    let mut v = NUMERIC.clone();
    v.sort_by_key(|&t| (kind_rank(t), t.data_size(), t.is_signed_int(), t.id()));
    v
});

/// The numeric builtins in table order (type id order).
pub static NUMERIC: LazyLock<Vec<BuiltinType>> = LazyLock::new(|| {
    BuiltinType::ALL
        .into_iter()
        .filter(|&t| is_numeric(t))
        .collect()
});

/// 0 bool, 1 integer, 2 real float, 3 complex.
fn kind_rank(t: BuiltinType) -> u8 {
    if t.is_bool() {
        0
    } else if t.is_int() {
        1
    } else if t.is_float() {
        2
    } else {
        3
    }
}

/// `(mantissa digits, max exponent)` of a real float, or of a complex
/// type's parts.
fn float_format(t: BuiltinType) -> Option<(u32, i32)> {
    /// The builtin type of a value.
    fn type_of<F: NativeType>(_: F) -> BuiltinType {
        F::TYPE
    }
    with_native!(t, half ieee => |T| (T::MANTISSA_DIGITS, T::MAX_EXP)).or_else(|| {
        with_native!(t, complex => |T| float_format(type_of(T::default().re))).flatten()
    })
}

/// `true` for the types arithmetic works on: bool, the integers, the
/// floats and the complex types (every builtin but void).
pub(crate) fn is_numeric(t: BuiltinType) -> bool {
    t != Void
}

/// Bytes of one real part: the size of a real type, half that of a complex.
fn part_size(t: BuiltinType) -> usize {
    if t.is_complex() {
        t.data_size() / 2
    } else {
        t.data_size()
    }
}

/// `true` when NumPy would call converting every value of `from` to `to`
/// safe: bool to anything; an integer to an integer that holds its whole
/// range; an integer of `n` bytes to a float (or complex part) of at least
/// `2n` bytes, capped at float64 — so 4- to 16-byte integers go to
/// float64, which rounds beyond 2^53 just as NumPy's int64 → float64
/// does; a float to a float or complex part at least as wide; a complex to
/// a complex at least as wide. Never for void.
pub fn safe_cast(from: BuiltinType, to: BuiltinType) -> bool {
    if !is_numeric(from) || !is_numeric(to) {
        return false;
    }
    if from == to || from == Bool {
        return true;
    }
    if to == Bool {
        return false;
    }
    let (fs, ts) = (from.data_size(), to.data_size());
    if from.is_int() {
        if to.is_int() {
            return match (from.is_signed_int(), to.is_signed_int()) {
                (true, true) | (false, false) => ts >= fs,
                (false, true) => ts > fs,
                (true, false) => false,
            };
        }
        return part_size(to) >= (2 * fs).min(8);
    }
    if from.is_float() || from.is_complex() {
        // Every value of `from` is one of `to`: at least as many mantissa
        // digits and as wide an exponent range (float16 and bfloat16 hold
        // neither each other's precision nor range). Complex to complex
        // only.
        if from.is_complex() && !to.is_complex() {
            return false;
        }
        return match (float_format(from), float_format(to)) {
            (Some((fd, fe)), Some((td, te))) => td >= fd && te >= fe,
            _ => false,
        };
    }
    false
}

/// The common type of two numeric builtins: the first type in [`LATTICE`]
/// order both convert to safely. `None` when either is not numeric (void).
///
/// ```
/// use dynd::callable::arith::promote;
/// use dynd::types::BuiltinType::*;
/// assert_eq!(promote(Int32, Float64), Some(Float64));
/// assert_eq!(promote(Int8, UInt8), Some(Int16));
/// assert_eq!(promote(Int64, UInt64), Some(Int128));
/// assert_eq!(promote(Int16, Float16), Some(Float32));
/// assert_eq!(promote(Int64, Complex64), Some(Complex128));
/// assert_eq!(promote(Void, Int8), None);
/// ```
pub fn promote(a: BuiltinType, b: BuiltinType) -> Option<BuiltinType> {
    // Every call resolves through here, so the derived rule is computed once
    // into a table indexed by type id (ids are below 32).
    static TABLE: LazyLock<[[Option<BuiltinType>; 32]; 32]> = LazyLock::new(|| {
        let mut t = [[None; 32]; 32];
        for a in BuiltinType::ALL {
            for b in BuiltinType::ALL {
                t[a.id() as usize][b.id() as usize] = derive_promote(a, b);
            }
        }
        t
    });
    TABLE[a.id() as usize & 31][b.id() as usize & 31]
}

/// The rule itself: the first type in [`LATTICE`] order both convert to
/// safely.
fn derive_promote(a: BuiltinType, b: BuiltinType) -> Option<BuiltinType> {
    LATTICE
        .iter()
        .copied()
        .find(|&c| safe_cast(a, c) && safe_cast(b, c))
}

/// The type the math functions (sqrt, exp, ..., pow) compute in for a
/// (promoted) argument type: floats and complex keep their type; bool and
/// the integers become float64.
pub fn inexact(t: BuiltinType) -> BuiltinType {
    if t.is_float() || t.is_complex() {
        t
    } else {
        Float64
    }
}

/// A short name for tables: `b`, `i8`, `u16`, `f32`, `bf16`, `c64`
/// (complex\[float32\]), `c128` (complex\[float64\]); derived from the
/// datashape name.
pub fn short_name(t: BuiltinType) -> &'static str {
    static NAMES: LazyLock<Vec<(BuiltinType, &'static str)>> = LazyLock::new(|| {
        BuiltinType::ALL
            .into_iter()
            .map(|t| {
                let name = if t.is_bool() {
                    "b".to_string()
                } else if t.is_complex() {
                    format!("c{}", 8 * t.data_size())
                } else {
                    t.name()
                        .replace("uint", "u")
                        .replace("int", "i")
                        .replace("float", "f")
                };
                (t, &*Box::leak(name.into_boxed_str()))
            })
            .collect()
    });
    NAMES.iter().find(|(b, _)| *b == t).map_or("?", |(_, n)| n)
}

/// The promotion table as a text grid: a header of [`short_name`]s in
/// [`NUMERIC`] order, then one row per left argument (the module docs
/// show it).
pub fn promotion_table() -> String {
    promotion_table_by(promote)
}

/// A grid like [`promotion_table`]'s from any function of two types
/// (`-` where it gives `None`).
pub fn promotion_table_by(f: impl Fn(BuiltinType, BuiltinType) -> Option<BuiltinType>) -> String {
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let text: String = cells.iter().map(|c| format!("{c:<5}")).collect();
        out.push_str(text.trim_end());
        out.push('\n');
    };
    let mut header = vec![""];
    header.extend(NUMERIC.iter().map(|&b| short_name(b)));
    line(header);
    for &a in NUMERIC.iter() {
        let mut row = vec![short_name(a)];
        row.extend(NUMERIC.iter().map(|&b| f(a, b).map_or("-", short_name)));
        line(row);
    }
    out
}

/// The table as `(a, b, common type)` rows, for programs that want it as
/// data.
pub fn promotion_pairs() -> Vec<(BuiltinType, BuiltinType, Option<BuiltinType>)> {
    let mut v = Vec::with_capacity(NUMERIC.len() * NUMERIC.len());
    for &a in NUMERIC.iter() {
        for &b in NUMERIC.iter() {
            v.push((a, b, promote(a, b)));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_is_symmetric_idempotent_and_safe() {
        for &a in NUMERIC.iter() {
            assert_eq!(promote(a, a), Some(a));
            for &b in NUMERIC.iter() {
                assert_eq!(promote(a, b), promote(b, a), "{a} {b}");
                let c = promote(a, b).unwrap();
                assert!(safe_cast(a, c) && safe_cast(b, c));
            }
        }
        assert_eq!(promote(Void, Int32), None);
        assert_eq!(promote(Void, Void), None);
    }

    /// 0 bool, 1 integer, 2 float, 3 complex.
    fn kind(t: BuiltinType) -> u8 {
        if t == Bool {
            0
        } else if t.is_int() {
            1
        } else if t.is_float() {
            2
        } else {
            3
        }
    }

    #[test]
    fn the_kind_is_the_larger_kind_except_for_wide_mixed_integers() {
        for &a in NUMERIC.iter() {
            for &b in NUMERIC.iter() {
                let c = promote(a, b).unwrap();
                let k = kind(a).max(kind(b));
                let no_wider_int = a.is_int()
                    && b.is_int()
                    && a.is_signed_int() != b.is_signed_int()
                    && (a == UInt128 || b == UInt128);
                if no_wider_int {
                    assert_eq!(c, Float64, "{a} {b}");
                } else {
                    assert_eq!(kind(c), k, "{a} {b} -> {c}");
                }
            }
        }
    }

    #[test]
    fn promotion_is_not_associative_like_numpy() {
        // (int8 + uint8) + float16 = int16 + float16 = float32, but
        // int8 + (uint8 + float16) = int8 + float16 = float16 — NumPy's
        // pairwise rule does the same.
        let left = promote(promote(Int8, UInt8).unwrap(), Float16);
        let right = promote(Int8, promote(UInt8, Float16).unwrap());
        assert_eq!((left, right), (Some(Float32), Some(Float16)));
    }
}

#[cfg(test)]
mod table_tests {
    use super::*;

    #[test]
    fn the_table_is_the_derived_rule() {
        const _: () = assert!(BuiltinType::Void as u32 <= 31);
        for a in BuiltinType::ALL {
            assert!(a.id() < 32, "{a} has id {}", a.id());
            for b in BuiltinType::ALL {
                assert_eq!(promote(a, b), derive_promote(a, b), "{a}, {b}");
            }
        }
        assert_eq!(promote(Int8, UInt8), Some(Int16));
        assert_eq!(promote(Void, Float64), None);
    }
}
