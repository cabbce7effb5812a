//! bfloat16 (type id 19): casts in every mode, arithmetic and its
//! promotion, reductions, missing values, JSON in and out.
//!
//! Promotion follows NumPy with ml_dtypes: bfloat16 with bfloat16 stays
//! bfloat16 (computed in float32, rounded once); bfloat16 with float16 is
//! float32 (neither holds the other's range and precision); bool, int8 and
//! uint8 convert exactly, so they promote to bfloat16; wider integers go
//! to float32 or float64 as they do with float16.

use crate::common;
use common::{BinaryFn, a};

use dynd::compute;
use dynd::kernels::assign::ErrorMode::{self, *};
use dynd::types::{BuiltinType, NativeType};
use dynd::{Array, ErrorKind};
use half::{bf16, f16};

fn cast(json: &str, from: &str, to: &str, mode: ErrorMode) -> Result<String, ErrorKind> {
    a(from, json)
        .cast(to, mode)
        .map(|r| r.to_json())
        .map_err(|e| e.kind())
}

const MODES: [ErrorMode; 5] = [NoCheck, Overflow, Fractional, Inexact, Default];

#[test]
fn the_type_has_its_id_name_size_and_na() {
    let t = BuiltinType::BFloat16;
    assert_eq!(
        (t.id(), t.name(), t.data_size(), t.data_alignment()),
        (19, "bfloat16", 2, 2)
    );
    assert_eq!(BuiltinType::from_id(19), Some(t));
    assert_eq!(
        "bfloat16".parse::<dynd::Type>().unwrap().to_string(),
        "bfloat16"
    );
    assert_eq!(<bf16 as NativeType>::TYPE, t);
    assert!(t.is_float() && !t.is_int());
    assert_eq!(<bf16 as NativeType>::NA.to_bits(), 0x7fa2);
    // A missing value and a NaN stay apart.
    let o = a("3 * ?bfloat16", "[1.5, null, NaN]");
    assert_eq!(o.to_json(), "[1.5,null,NaN]");
}

#[test]
fn json_round_trips_with_the_shortest_text() {
    // 0.1 is 0.10009765625 in bfloat16: the shortest text that reads back
    // is "0.1", not the float32 text of the value.
    let x = a("6 * bfloat16", "[0.1, 1, -2.5, 3.140625, 1e30, 0]");
    assert_eq!(x.to_json(), "[0.1,1.0,-2.5,3.14,1e30,0.0]");
    assert_eq!(a("6 * bfloat16", &x.to_json()).to_json(), x.to_json());
    assert_eq!(
        a("bfloat16", "0.1").as_scalar::<bf16>().unwrap(),
        bf16::from_f32(0.1)
    );
    // Every finite bfloat16 round-trips through its text.
    for bits in (0u16..=0xffff).step_by(7) {
        let v = bf16::from_bits(bits);
        if !v.is_finite() {
            continue;
        }
        let text = Array::from(v).to_json();
        let back = a("bfloat16", &text).as_scalar::<bf16>().unwrap();
        assert_eq!(back.to_bits(), v.to_bits(), "{text}");
    }
    assert_eq!(
        a("3 * bfloat16", "[NaN, Infinity, -Infinity]").to_json(),
        "[NaN,Infinity,-Infinity]"
    );
    // Out of range (bfloat16's range is float32's) is an overflow error.
    let e = Array::from_json("bfloat16", "1e39").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow, "{e}");
}

/// `json` of type `from` cast to `to` in `mode` gives `want` (the result's
/// JSON, or the error's kind); a failure names the cast.
fn check_cast(json: &str, from: &str, to: &str, mode: ErrorMode, want: Result<&str, ErrorKind>) {
    assert_eq!(
        cast(json, from, to, mode).as_deref(),
        want.as_deref(),
        "{json}: {from} -> {to} in {mode:?}"
    );
}

/// The expected outcome of a cast: `Err(err)` when it `fails`, else
/// `Ok(json)`.
fn outcome(fails: bool, err: ErrorKind, json: &str) -> Result<&str, ErrorKind> {
    if fails { Err(err) } else { Ok(json) }
}

#[test]
fn casts_from_wider_floats_round_and_check() {
    // 1 + 2^-8 is halfway between 1 and the next bfloat16: ties to even.
    for m in MODES {
        let tie = outcome(m == Inexact, ErrorKind::Inexact, "1.0");
        check_cast("1.00390625", "float64", "bfloat16", m, tie);
        check_cast("1.5", "float32", "bfloat16", m, Ok("1.5"));
        let big = outcome(m != NoCheck, ErrorKind::Overflow, "Infinity");
        check_cast("1e39", "float64", "bfloat16", m, big);
        check_cast("NaN", "float32", "bfloat16", m, Ok("NaN"));
    }
    // bfloat16 to float32 and float64 is exact.
    check_cast("0.1", "bfloat16", "float32", Inexact, Ok("0.100097656"));
    check_cast("0.1", "bfloat16", "float64", Inexact, Ok("0.10009765625"));
}

#[test]
fn casts_with_integers() {
    for m in MODES {
        // Small integers are exact.
        check_cast("-128", "int8", "bfloat16", m, Ok("-128.0"));
        check_cast("255", "uint8", "bfloat16", m, Ok("255.0"));
        // 257 needs 9 significant bits: rounds to 256.
        let rounded = outcome(m == Inexact, ErrorKind::Inexact, "256.0");
        check_cast("257", "int32", "bfloat16", m, rounded);
        // Back to integers: range and fractions as for every float.
        check_cast("100", "bfloat16", "int8", m, Ok("100"));
        let frac = outcome(!matches!(m, NoCheck | Overflow), ErrorKind::Fractional, "2");
        check_cast("2.5", "bfloat16", "int32", m, frac);
        let over = outcome(m != NoCheck, ErrorKind::Overflow, "255");
        check_cast("300", "bfloat16", "uint8", m, over);
        if m != NoCheck {
            check_cast("NaN", "bfloat16", "int64", m, Err(ErrorKind::Overflow));
        }
    }
}

#[test]
fn casts_with_float16_bool_complex_and_string() {
    for m in MODES {
        // float16's 11 bits do not fit in bfloat16's 8.
        let rounded = outcome(m == Inexact, ErrorKind::Inexact, "1.0");
        check_cast("1.0009765625", "float16", "bfloat16", m, rounded);
        // bfloat16's range does not fit in float16's.
        let big = outcome(m != NoCheck, ErrorKind::Overflow, "Infinity");
        check_cast("1e10", "bfloat16", "float16", m, big);
        check_cast("0.5", "bfloat16", "float16", m, Ok("0.5"));
        // bool.
        check_cast("true", "bool", "bfloat16", m, Ok("1.0"));
        check_cast("0", "bfloat16", "bool", m, Ok("false"));
        let two = outcome(m != NoCheck, ErrorKind::Overflow, "true");
        check_cast("2", "bfloat16", "bool", m, two);
        // complex.
        check_cast("1.5", "bfloat16", "complex[float32]", m, Ok("[1.5,0.0]"));
        check_cast("[2.0, 0.0]", "complex[float64]", "bfloat16", m, Ok("2.0"));
    }
    // string, both ways: the shortest text, and the inexact check against it.
    // (json, from, to, mode, the outcome).
    type Case<'a> = (
        &'a str,
        &'a str,
        &'a str,
        ErrorMode,
        Result<&'a str, ErrorKind>,
    );
    let string_casts: [Case; 6] = [
        ("0.1", "bfloat16", "string", Default, Ok("\"0.1\"")),
        ("\"0.1\"", "string", "bfloat16", Inexact, Ok("0.1")),
        ("\"0.1000\"", "string", "bfloat16", Inexact, Ok("0.1")),
        (
            "\"0.10009765625\"",
            "string",
            "bfloat16",
            Inexact,
            Err(ErrorKind::Inexact),
        ),
        (
            "\"1e39\"",
            "string",
            "bfloat16",
            Default,
            Err(ErrorKind::Overflow),
        ),
        (
            "\"x\"",
            "string",
            "bfloat16",
            NoCheck,
            Err(ErrorKind::Parse),
        ),
    ];
    for (json, from, to, mode, want) in string_casts {
        check_cast(json, from, to, mode, want);
    }
}

#[test]
fn arithmetic_computes_in_float32_and_rounds_once() {
    let x = a("4 * bfloat16", "[1.5, 0.1, -3, 256]");
    let y = a("4 * bfloat16", "[2, 0.2, 0, 1]");
    let tp = |r: &Array| r.tp().to_string();
    let add = compute::add(&x, &y).unwrap();
    assert_eq!(tp(&add), "4 * bfloat16");
    // 256 + 1 rounds back to 256 (8 significant bits).
    assert_eq!(add.to_json(), "[3.5,0.3,-3.0,256.0]");
    let rest: [(&str, BinaryFn, &str); 3] = [
        ("subtract", compute::subtract, "[-0.5,-0.1,-3.0,255.0]"),
        ("multiply", compute::multiply, "[3.0,0.02,-0.0,256.0]"),
        ("divide", compute::divide, "[0.75,0.5,-Infinity,256.0]"),
    ];
    for (name, f, want) in rest {
        assert_eq!(f(&x, &y).unwrap().to_json(), want, "{name}");
    }
    // Each result is the float32 result rounded once.
    for (i, r) in [
        compute::add(&x, &y),
        compute::multiply(&x, &y),
        compute::divide(&x, &y),
    ]
    .into_iter()
    .enumerate()
    {
        let r = r.unwrap();
        let xs: Vec<f32> = [1.5f32, 0.1, -3.0, 256.0]
            .map(|v| bf16::from_f32(v).to_f32())
            .to_vec();
        let ys: Vec<f32> = [2.0f32, 0.2, 0.0, 1.0]
            .map(|v| bf16::from_f32(v).to_f32())
            .to_vec();
        for k in 0..4 {
            let want = match i {
                0 => xs[k] + ys[k],
                1 => xs[k] * ys[k],
                _ => xs[k] / ys[k],
            };
            let got = r
                .index(&[dynd::Index::At(k as isize)])
                .unwrap()
                .as_scalar::<bf16>()
                .unwrap();
            assert_eq!(
                got.to_bits(),
                bf16::from_f32(want).to_bits(),
                "op {i} at {k}"
            );
        }
    }
}

#[test]
fn promotion_with_other_types() {
    let b = a("bfloat16", "1.5");
    let result = |other: Array| compute::add(&b, &other).unwrap().tp().to_string();
    assert_eq!(result(a("bfloat16", "1")), "bfloat16");
    assert_eq!(result(a("float16", "1")), "float32");
    assert_eq!(result(a("float32", "1")), "float32");
    assert_eq!(result(a("float64", "1")), "float64");
    assert_eq!(result(a("bool", "true")), "bfloat16");
    assert_eq!(result(a("int8", "1")), "bfloat16");
    assert_eq!(result(a("uint8", "1")), "bfloat16");
    assert_eq!(result(a("int16", "1")), "float32");
    assert_eq!(result(a("int32", "1")), "float64");
    assert_eq!(result(a("complex[float32]", "[1, 0]")), "complex[float32]");
    assert_eq!(
        compute::add(&b, &a("float16", "1")).unwrap().to_json(),
        "2.5"
    );
    assert_eq!(
        dynd::callable::arith::promote(BuiltinType::BFloat16, BuiltinType::Float16),
        Some(BuiltinType::Float32)
    );
    // Comparisons and math work as for float16.
    assert_eq!(
        compute::less(&b, &a("float16", "2")).unwrap().to_json(),
        "true"
    );
    assert_eq!(compute::negative(&b).unwrap().to_json(), "-1.5");
    assert_eq!(compute::sqrt(&a("bfloat16", "4")).unwrap().to_json(), "2.0");
    assert_eq!(
        compute::sqrt(&a("bfloat16", "4")).unwrap().tp().to_string(),
        "bfloat16"
    );
}

#[test]
fn reductions_accumulate_in_float32() {
    // 256 ones: a bfloat16 accumulator would stop at 256 + 1 = 256 much
    // earlier for larger counts; in float32 the sum is exact, rounded once.
    let ones = Array::from(vec![bf16::ONE; 300]);
    let s = compute::sum(&ones, None, false).unwrap();
    assert_eq!(s.tp().to_string(), "bfloat16");
    assert_eq!(s.to_json(), "300.0");
    let x = a("2 * 3 * bfloat16", "[[1, -2.5, 0.1], [4, NaN, 6]]");
    type Reduce = fn(&Array, Option<&[isize]>, bool) -> dynd::Result<Array>;
    let over_one_axis: [(&str, Reduce, isize, &str); 4] = [
        ("sum", compute::sum, 1, "[-1.4,NaN]"),
        ("prod", compute::prod, 0, "[4.0,NaN,0.6]"),
        ("min", compute::min, 1, "[-2.5,NaN]"),
        ("max", compute::max, 0, "[4.0,NaN,6.0]"),
    ];
    for (name, f, axis, want) in over_one_axis {
        let r = f(&x, Some(&[axis]), false).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.to_json(), want, "{name} over axis {axis}");
    }
    let m = compute::mean(&a("3 * bfloat16", "[1, 2, 4]"), None, false).unwrap();
    assert_eq!(
        (m.tp().to_string(), m.to_json()),
        ("float64".to_string(), "2.3333333333333335".to_string())
    );
    assert_eq!(compute::all(&x, None, false).unwrap().to_json(), "true");
    assert_eq!(
        compute::any(&a("2 * bfloat16", "[0, -0]"), None, false)
            .unwrap()
            .to_json(),
        "false"
    );
    // Missing values convert as missing.
    let o = a("3 * ?bfloat16", "[1.5, null, 2]");
    assert_eq!(
        o.cast("3 * ?float32", Default).unwrap().to_json(),
        "[1.5,null,2.0]"
    );
}

#[test]
fn float16_is_unchanged_next_to_it() {
    assert_eq!(a("float16", "0.1").to_json(), "0.099975586");
    assert_eq!(
        a("float16", "0.1").as_scalar::<f16>().unwrap(),
        f16::from_f32(0.1)
    );
}
