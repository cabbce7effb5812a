//! Datashape text → type → canonical text → the same type.
//!
//! Any utf-8 input either parses, or is a clean `Parse` error. A parsed type
//! prints as text that parses back to an equal type which prints
//! identically; its layout is consistent; and a concrete type small enough
//! makes an empty array whose JSON reads back as the same JSON.

#![no_main]

use dynd::{Array, ErrorKind, Type};
use libfuzzer_sys::fuzz_target;
use std::hash::{BuildHasher, RandomState};

/// Arrays are built only for types with at most this much data.
const MAX_ARRAY_BYTES: usize = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let tp = match Type::parse(text) {
        Ok(tp) => tp,
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Parse, "{text:?}: {e}");
            assert!(e.message().starts_with("line "), "{text:?}: {e}");
            return;
        }
    };
    let printed = tp.to_string();
    let again = Type::parse(&printed)
        .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which does not parse: {e}"));
    assert_eq!(tp, again, "{text:?} printed as {printed:?}");
    assert_eq!(again.to_string(), printed, "{text:?}");
    let hasher = RandomState::new();
    assert_eq!(hasher.hash_one(&tp), hasher.hash_one(&again), "{printed}");

    // Layout queries.
    let (size, align, meta) = (tp.data_size(), tp.data_alignment(), tp.arrmeta_size());
    assert_eq!(
        (size, align, meta),
        (
            again.data_size(),
            again.data_alignment(),
            again.arrmeta_size()
        ),
        "{printed}"
    );
    let _ = (tp.ndim(), tp.dtype(), tp.has_blockref(), tp.is_dim());
    if tp.is_symbolic() {
        assert!(Array::empty(tp.clone()).is_err(), "{printed}");
        return;
    }
    assert!(align.is_power_of_two(), "{printed}: alignment {align}");
    assert!(size <= isize::MAX as usize, "{printed}: size {size}");
    assert_eq!(size % align, 0, "{printed}: size {size}, alignment {align}");
    assert_eq!(
        meta % size_of::<usize>(),
        0,
        "{printed}: arrmeta size {meta}"
    );

    // A small concrete type makes an array, printed as JSON that reads back.
    if size <= MAX_ARRAY_BYTES && meta <= MAX_ARRAY_BYTES && json_weight(&tp) <= MAX_ARRAY_BYTES {
        let a = match Array::empty(tp.clone()) {
            Ok(a) => a,
            // void and the like have no array form: a clean error is fine.
            Err(_) => return,
        };
        let json = a.to_json();
        match Array::from_json(tp.clone(), &json) {
            Ok(b) => assert_eq!(b.to_json(), json, "{printed}"),
            Err(e) => panic!("{printed}: empty array's JSON {json:?} does not read back: {e}"),
        }
        let c = a
            .copy()
            .unwrap_or_else(|e| panic!("{printed}: copy failed: {e}"));
        assert_eq!(c.to_json(), json, "{printed}");
    }
});

/// A bound on the length of an empty array's JSON (`1000000 * 0 * int8`
/// has no data but a long JSON text), saturating.
fn json_weight(tp: &Type) -> usize {
    use dynd::types::TypeKind;
    match tp.kind() {
        TypeKind::FixedDim { size, elem } => {
            size.saturating_mul(json_weight(elem).saturating_add(1))
        }
        TypeKind::Struct(f) | TypeKind::Tuple(f) => {
            let names = f
                .names()
                .iter()
                .fold(0usize, |w, n| w.saturating_add(6 * n.len() + 4));
            f.types().iter().fold(names, |w, t| {
                w.saturating_add(json_weight(t)).saturating_add(1)
            })
        }
        TypeKind::Pointer(t) | TypeKind::Option(t) => json_weight(t).saturating_add(8),
        TypeKind::FixedString { size, .. } | TypeKind::FixedBytes { size, .. } => {
            size.saturating_mul(12).saturating_add(8)
        }
        _ => 64,
    }
}
