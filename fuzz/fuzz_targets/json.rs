//! Arbitrary bytes as JSON against a type.
//!
//! Input: byte 0 picks the type (one of [`TYPES`], or, past them, datashape
//! text read up to the first newline); byte 1 picks a cast target and an
//! error mode; the rest is the JSON text. Parsing either fails cleanly or
//! gives an array whose compact JSON reads back to the same JSON, whose
//! readable repr holds JSON that reads back too, and whose copy prints the
//! same. Casting it to another type never panics. ASan's leak checker
//! catches anything the error paths forget to release.

#![no_main]

use dynd::kernels::assign::ErrorMode;
use dynd::{Array, Type};
use libfuzzer_sys::fuzz_target;

const TYPES: &[&str] = &[
    "int32",
    "3 * float64",
    "var * string",
    "var * {x: int32, s: ?string}",
    "2 * var * ?float64",
    "(bool, bytes)",
    "var * var * int8",
    "complex[float64]",
    "var * complex[float32]",
    "int128",
    "uint64",
    "uint128",
    "float16",
    "?int16",
    "var * ?int64",
    "var * ?bool",
    "3 * fixed_string[4, 'utf16']",
    "var * fixed_string[3, 'ascii']",
    "fixed_string[5, 'utf32']",
    "fixed_string[8]",
    "fixed_bytes[4]",
    "var * fixed_bytes[2, align=2]",
    "char",
    "var * char",
    "pointer[int32]",
    "var * pointer[string]",
    "{a: 2 * ?int64, b: var * (float32, string), c: {d: ?bytes}}",
    "var * {'quoted name': uint8, e: ?complex[float64]}",
    "2 * 2 * var * var * uint16",
    "(?string, ?uint32, ?char)",
    "var * (int8, ?float32, ?pointer[int8])",
    "0 * int32",
    "var * 0 * string",
    "?float64",
    "?string",
    "bool",
    // Options of types without an NA value: a flag byte after the data.
    "?{a: int32, b: ?string}",
    "var * ?{x: ?float64, y: var * ?int8}",
    "?3 * int32",
    "?var * ?string",
    "2 * ?(int8, ?fixed_string[3])",
    "{p: ?{q: ?{r: bool}}, s: ?2 * ?char}",
];

/// Types read from the input are used only when this small (data bytes,
/// arrmeta bytes, fixed elements).
const MAX_BYTES: usize = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let [sel, cast_sel, rest @ ..] = data else {
        return;
    };
    let sel = *sel as usize % (TYPES.len() + 1);
    let (tp, json) = if sel < TYPES.len() {
        (Type::parse(TYPES[sel]).expect("a fixed type parses"), rest)
    } else {
        let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
            return;
        };
        let Ok(text) = std::str::from_utf8(&rest[..nl]) else {
            return;
        };
        let Ok(tp) = Type::parse(text) else {
            return;
        };
        if tp.is_symbolic()
            || tp.data_size() > MAX_BYTES
            || tp.arrmeta_size() > MAX_BYTES
            || elements(&tp) > MAX_BYTES
        {
            return;
        }
        (tp, &rest[nl + 1..])
    };

    let Ok(a) = Array::from_json_bytes(tp.clone(), json) else {
        return;
    };
    let compact = a.to_json();
    let b = Array::from_json(tp.clone(), &compact)
        .unwrap_or_else(|e| panic!("{tp}: {compact:?} does not read back: {e}"));
    assert_eq!(b.to_json(), compact, "{tp}");

    let repr = a.to_string();
    let pretty = repr
        .strip_prefix("array(")
        .and_then(|r| r.rfind(", type=\"").map(|i| &r[..i]))
        .unwrap_or_else(|| panic!("{tp}: odd repr {repr:?}"));
    let c = Array::from_json(tp.clone(), pretty)
        .unwrap_or_else(|e| panic!("{tp}: pretty {pretty:?} does not read back: {e}"));
    assert_eq!(c.to_json(), compact, "{tp}");

    let d = a
        .copy()
        .unwrap_or_else(|e| panic!("{tp}: copy failed: {e}"));
    assert_eq!(d.to_json(), compact, "{tp}");

    // Casting between unrelated types either works or fails cleanly; into
    // the same type under any mode it must work and keep the value (pointer
    // destinations are not assignable: a clean type error).
    let mode = ErrorMode::ALL[*cast_sel as usize % ErrorMode::ALL.len()];
    match a.cast(tp.clone(), mode) {
        Ok(same) => assert_eq!(same.to_json(), compact, "{tp} under {mode}"),
        Err(_) if has_pointer(&tp) => {}
        Err(e) => panic!("{tp}: cast to itself under {mode} failed: {e}"),
    }
    let target = Type::parse(TYPES[*cast_sel as usize % TYPES.len()]).expect("a fixed type parses");
    if let Ok(e) = a.cast(target.clone(), mode) {
        let j = e.to_json();
        let f = Array::from_json(target.clone(), &j)
            .unwrap_or_else(|err| panic!("{tp} cast to {target}: {j:?} does not read back: {err}"));
        assert_eq!(f.to_json(), j, "{tp} cast to {target}");
    }
});

/// How many scalar slots the fixed dims of `tp` hold, saturating.
fn elements(tp: &Type) -> usize {
    use dynd::types::TypeKind;
    match tp.kind() {
        TypeKind::FixedDim { size, elem } => size.saturating_mul(elements(elem).max(1)),
        TypeKind::Struct(f) | TypeKind::Tuple(f) => f
            .types()
            .iter()
            .fold(1usize, |w, t| w.saturating_add(elements(t))),
        TypeKind::Pointer(t) | TypeKind::Option(t) => elements(t),
        _ => 1,
    }
}

/// Whether `tp` holds a pointer anywhere.
fn has_pointer(tp: &Type) -> bool {
    use dynd::types::TypeKind;
    match tp.kind() {
        TypeKind::Pointer(_) => true,
        TypeKind::FixedDim { elem: t, .. } | TypeKind::VarDim { elem: t } | TypeKind::Option(t) => {
            has_pointer(t)
        }
        TypeKind::Struct(f) | TypeKind::Tuple(f) => f.types().iter().any(has_pointer),
        _ => false,
    }
}
