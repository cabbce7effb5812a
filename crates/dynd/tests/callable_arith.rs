//! Arithmetic, comparison, logical and math functions: the reference lifting
//! cases, the promotion table (against a hand-written grid), integer
//! division and overflow, strings, logical truthiness, math against std,
//! strided and reversed views, parallel against serial, dispatch, and the
//! `dynd::compute` faces and operators.

use crate::common;
use common::{BinaryFn, a, assert_error, show};

use dynd::callable::arith::{self, comparison_overloads, function, functions};
use dynd::callable::{Callable, lookup, names, register};
use dynd::compute as func;
use dynd::kernels::assign::ErrorMode;
use dynd::kernels::loops::stream_min_bytes;
use dynd::types::BuiltinType;
use dynd::{Array, ErrorKind, Index, Type};
use num_complex::Complex;

type RealFn = fn(f64) -> f64;
type Face1 = fn(&Array) -> dynd::Result<Array>;
type Face2 = fn(&Array, &Array) -> dynd::Result<Array>;

/// The values of a 1-d array as float64 (a contiguous copy, then read).
fn values(x: &Array) -> Vec<f64> {
    let n = x.shape()[0].unwrap_or(0);
    let c = x
        .cast(Type::fixed_dim(n, Type::float64()), ErrorMode::NoCheck)
        .unwrap();
    // SAFETY: `c` is a fresh `n * float64` array with the default
    // (contiguous, aligned) layout, alive while the slice is read.
    unsafe { std::slice::from_raw_parts(c.data_ptr() as *const f64, n) }.to_vec()
}

/// For each `(name, f, json)`: `f(x, y)` is `json`; a failure names `f`.
fn check_binary(x: &Array, y: &Array, cases: &[(&str, Face2, &str)]) {
    for &(name, f, want) in cases {
        let r = f(x, y).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.to_json(), want, "{name}");
    }
}

fn slice(x: &Array, start: Option<isize>, stop: Option<isize>, step: isize) -> Array {
    x.index(&[Index::slice(start, stop, step)]).unwrap()
}

// ------------------------------------------------------------- lifting

#[test]
fn lifting_over_fixed_var_and_mixed_dims() {
    let x = a("2 * var * int32", "[[1,2,3],[4]]");
    let y = a("2 * 3 * int32", "[[5,6,7],[8,9,10]]");
    let expect = (
        "2 * 3 * int32".to_string(),
        "[[6,8,10],[12,13,14]]".to_string(),
    );
    assert_eq!(show(&func::add(&x, &y).unwrap()), expect);
    assert_eq!(show(&(&x + &y).unwrap()), expect);
    assert_eq!(
        show(&lookup("add").unwrap().call(&[&x, &y]).unwrap()),
        expect
    );

    let z = a("2 * var * int32", "[[5],[6,7]]");
    let r = (&x + &z).unwrap();
    assert_eq!(
        show(&r),
        (
            "2 * var * int32".to_string(),
            "[[6,7,8],[10,11]]".to_string()
        )
    );
}

#[test]
fn broadcasting_with_promotion_and_scalars() {
    // An int8 scalar against float64 rows: the scalar is converted once.
    let m = a("2 * 3 * float64", "[[1,2,3],[4,5,6]]");
    let s = Array::from(2i8);
    assert_eq!(
        show(&func::multiply(&m, &s).unwrap()),
        (
            "2 * 3 * float64".to_string(),
            "[[2.0,4.0,6.0],[8.0,10.0,12.0]]".to_string()
        )
    );
    // A row broadcast down a column, of another type.
    let col = a("2 * 1 * int16", "[[10],[20]]");
    let row = a("3 * uint8", "[1,2,3]");
    assert_eq!(
        show(&func::subtract(&col, &row).unwrap()),
        (
            "2 * 3 * int16".to_string(),
            "[[9,8,7],[19,18,17]]".to_string()
        )
    );
    // 0-d arrays give a 0-d result.
    let r = (&Array::from(2i32) + &Array::from(3.5f64)).unwrap();
    assert_eq!(show(&r), ("float64".to_string(), "5.5".to_string()));
    // var against var, with promotion.
    let v = a("var * float32", "[1.5, 2.5]");
    let w = a("var * int64", "[1]");
    assert_eq!(
        show(&(&v + &w).unwrap()),
        ("var * float64".to_string(), "[2.5,3.5]".to_string())
    );
}

#[test]
fn broadcast_errors_name_both_shapes() {
    let x = a("2 * 3 * int32", "[[1,2,3],[4,5,6]]");
    let y = a("4 * float64", "[1,2,3,4]");
    let e = func::add(&x, &y).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast);
    assert!(
        e.message().contains("(2, 3)") && e.message().contains("(4)"),
        "{e}"
    );
    // Var elements that do not match a fixed dim fail when run.
    let v = a("2 * var * int32", "[[1,2],[3]]");
    let e = func::less(&v, &x).unwrap_err();
    assert_error(&e, ErrorKind::Broadcast, "size 2");
}

// ----------------------------------------------------------- promotion

/// The promotion table, written out by hand (NumPy's table for the types
/// NumPy has, except int64 + uint64, which is int128 here; bfloat16 as
/// ml_dtypes: with float16 it is float32, and int8, uint8 and bool convert
/// to it exactly).
const EXPECTED_TABLE: &str = r"     b    i8   i16  i32  i64  i128 u8   u16  u32  u64  u128 f16  f32  f64  c64  c128 bf16
b    b    i8   i16  i32  i64  i128 u8   u16  u32  u64  u128 f16  f32  f64  c64  c128 bf16
i8   i8   i8   i16  i32  i64  i128 i16  i32  i64  i128 f64  f16  f32  f64  c64  c128 bf16
i16  i16  i16  i16  i32  i64  i128 i16  i32  i64  i128 f64  f32  f32  f64  c64  c128 f32
i32  i32  i32  i32  i32  i64  i128 i32  i32  i64  i128 f64  f64  f64  f64  c128 c128 f64
i64  i64  i64  i64  i64  i64  i128 i64  i64  i64  i128 f64  f64  f64  f64  c128 c128 f64
i128 i128 i128 i128 i128 i128 i128 i128 i128 i128 i128 f64  f64  f64  f64  c128 c128 f64
u8   u8   i16  i16  i32  i64  i128 u8   u16  u32  u64  u128 f16  f32  f64  c64  c128 bf16
u16  u16  i32  i32  i32  i64  i128 u16  u16  u32  u64  u128 f32  f32  f64  c64  c128 f32
u32  u32  i64  i64  i64  i64  i128 u32  u32  u32  u64  u128 f64  f64  f64  c128 c128 f64
u64  u64  i128 i128 i128 i128 i128 u64  u64  u64  u64  u128 f64  f64  f64  c128 c128 f64
u128 u128 f64  f64  f64  f64  f64  u128 u128 u128 u128 u128 f64  f64  f64  c128 c128 f64
f16  f16  f16  f32  f64  f64  f64  f16  f32  f64  f64  f64  f16  f32  f64  c64  c128 f32
f32  f32  f32  f32  f64  f64  f64  f32  f32  f64  f64  f64  f32  f32  f64  c64  c128 f32
f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  c128 c128 f64
c64  c64  c64  c64  c128 c128 c128 c64  c64  c128 c128 c128 c64  c64  c128 c64  c128 c64
c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128
bf16 bf16 bf16 f32  f64  f64  f64  bf16 f32  f64  f64  f64  f32  f32  f64  c64  c128 bf16
";

#[test]
fn the_promotion_table_matches_the_hand_written_grid() {
    assert_eq!(arith::promotion_table(), EXPECTED_TABLE);
    // And `add` resolves to it, pair by pair.
    let add = lookup("add").unwrap();
    let resolved = arith::promotion_table_by(|x, y| {
        add.resolve(&[Type::builtin(x), Type::builtin(y)])
            .ok()
            .and_then(|t| t.as_builtin())
    });
    assert_eq!(resolved, EXPECTED_TABLE);
    // The module docs show the same grid.
    assert_eq!(arith::promotion_pairs().len(), 17 * 17);
}

#[test]
fn every_pair_of_types_adds_to_the_right_value() {
    let add = lookup("add").unwrap();
    for (x, y, c) in arith::promotion_pairs() {
        let c = c.unwrap();
        let xa = Array::from(1i32)
            .cast(Type::builtin(x), ErrorMode::NoCheck)
            .unwrap();
        let ya = Array::from(2i32)
            .cast(Type::builtin(y), ErrorMode::NoCheck)
            .unwrap();
        // Strided 1-d as well as 0-d, so the promotion wrapper runs both ways.
        let xs = Array::from(vec![1i32; 3])
            .cast(Type::fixed_dim(3, Type::builtin(x)), ErrorMode::NoCheck)
            .unwrap();
        for (lhs, dims) in [(&xa, 0), (&xs, 1)] {
            let r = add.call(&[lhs, &ya]).unwrap();
            assert_eq!(r.tp().dtype().as_builtin(), Some(c), "{x} + {y}");
            assert_eq!(r.ndim(), dims);
            let v = if dims == 0 {
                r.cast(Type::float64(), ErrorMode::NoCheck).unwrap()
            } else {
                r.index(&[2.into()])
                    .unwrap()
                    .cast(Type::float64(), ErrorMode::NoCheck)
                    .unwrap()
            };
            // 2 cast to bool is true, which adds as 1.
            let (xv, yv) = (1.0, if y == BuiltinType::Bool { 1.0 } else { 2.0 });
            // bool + bool is logical or.
            let want = if c == BuiltinType::Bool { 1.0 } else { xv + yv };
            assert_eq!(v.as_scalar::<f64>().unwrap(), want, "{x} + {y} -> {c}");
        }
    }
}

#[test]
fn result_types_of_every_function_for_every_pair() {
    use BuiltinType::*;
    for op in functions() {
        let f = lookup(op.name()).unwrap();
        for (x, y, c) in arith::promotion_pairs() {
            let c = c.unwrap();
            let args: Vec<Type> = if op.arity() == 1 {
                if y != Bool {
                    continue;
                }
                vec![Type::builtin(x)]
            } else {
                vec![Type::builtin(x), Type::builtin(y)]
            };
            let c = if op.arity() == 1 { x } else { c };
            let r = f.resolve(&args);
            let want: Option<BuiltinType> = match op.name() {
                "add" | "multiply" => Some(c),
                "subtract" | "divide" | "negative" => (c != Bool).then_some(c),
                "modulo" | "floor_divide" | "remainder" => {
                    (c != Bool && !c.is_complex()).then_some(c)
                }
                "abs" => Some(match c {
                    Complex64 => Float32,
                    Complex128 => Float64,
                    c => c,
                }),
                "less" | "less_equal" | "greater" | "greater_equal" => {
                    (!c.is_complex()).then_some(Bool)
                }
                "equal" | "not_equal" | "logical_and" | "logical_or" | "logical_not" => Some(Bool),
                "sqrt" | "exp" | "log" | "sin" | "cos" | "tan" | "pow" => Some(arith::inexact(c)),
                other => panic!("{other}: a function this test does not know"),
            };
            match (want, r) {
                (Some(w), Ok(t)) => assert_eq!(t, Type::builtin(w), "{op} {args:?}"),
                (None, Err(e)) => {
                    assert_eq!(e.kind(), ErrorKind::Type, "{op} {args:?}: {e}");
                    assert!(e.message().contains(op.name()), "{e}");
                }
                (w, r) => panic!("{op} {args:?}: wanted {w:?}, got {r:?}"),
            }
        }
    }
}

#[test]
fn float16_and_int64_uint64() {
    let h = a("2 * float16", "[1.5, 0.1]");
    let r = func::add(&h, &a("2 * float16", "[2.25, 0.2]")).unwrap();
    assert_eq!(show(&r).0, "2 * float16");
    let v = values(&r);
    assert_eq!(v[0], 3.75);
    // float16(0.1) + float16(0.2) rounded once to float16.
    let want =
        half::f16::from_f32(half::f16::from_f32(0.1).to_f32() + half::f16::from_f32(0.2).to_f32());
    assert_eq!(v[1], want.to_f64());
    // int16 + float16 is float32.
    let r = func::add(&a("int16", "300"), &a("float16", "0.5")).unwrap();
    assert_eq!(show(&r), ("float32".to_string(), "300.5".to_string()));
    // int64 + uint64 is int128, exactly (NumPy would round in float64).
    let r = func::add(
        &a("int64", "-9223372036854775808"),
        &a("uint64", "18446744073709551615"),
    )
    .unwrap();
    assert_eq!(
        show(&r),
        ("int128".to_string(), "9223372036854775807".to_string())
    );
    // int + complex is complex[float64].
    let r = func::multiply(&a("int32", "2"), &a("complex[float32]", "[1, -1]")).unwrap();
    assert_eq!(
        show(&r),
        ("complex[float64]".to_string(), "[2.0,-2.0]".to_string())
    );
}

// ---------------------------------------------------- integer semantics

#[test]
fn integer_division_truncates_and_zero_is_an_error() {
    let x = a("4 * int32", "[7, -7, 7, -7]");
    let y = a("4 * int32", "[2, 2, -2, -2]");
    assert_eq!(func::divide(&x, &y).unwrap().to_json(), "[3,-3,-3,3]");
    // modulo has the sign of the dividend, and a/b*b + a%b == a.
    assert_eq!(func::modulo(&x, &y).unwrap().to_json(), "[1,-1,1,-1]");
    assert_eq!((&x % &y).unwrap().to_json(), "[1,-1,1,-1]");
    let back = func::add(
        &func::multiply(&func::divide(&x, &y).unwrap(), &y).unwrap(),
        &func::modulo(&x, &y).unwrap(),
    )
    .unwrap();
    assert_eq!(back.to_json(), x.to_json());

    let zero = a("4 * int32", "[1, 1, 0, 1]");
    let e = func::divide(&x, &zero).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.message(), "int32 division by zero: 7 / 0");
    let e = func::modulo(&x, &zero).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.message(), "int32 division by zero: 7 % 0");
    let e = (&a("uint8", "5") / &a("uint8", "0")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // Through promotion (int8 / int16 computes in int16), strided, and 0-d.
    let e = func::divide(&a("3 * int8", "[1,2,3]"), &a("int16", "0")).unwrap_err();
    assert_eq!(e.message(), "int16 division by zero: 1 / 0");
    let strided = slice(&a("6 * int64", "[1, 0, 1, 0, 0, 9]"), None, None, 2);
    let e = func::divide(&a("3 * int64", "[4, 5, 6]"), &strided).unwrap_err();
    assert_eq!(e.message(), "int64 division by zero: 6 / 0");

    // MIN / -1 overflows; MIN % -1 is 0.
    let min = a("2 * int32", "[-2147483648, -2147483648]");
    let m1 = a("2 * int32", "[-1, 1]");
    let e = func::divide(&min, &m1).unwrap_err();
    assert_error(&e, ErrorKind::Overflow, "-2147483648 / -1");
    assert_eq!(func::modulo(&min, &m1).unwrap().to_json(), "[0,0]");

    // Floats follow IEEE 754.
    let r = func::divide(&a("3 * float64", "[1, -1, 0]"), &a("float64", "0")).unwrap();
    assert_eq!(r.to_json(), "[Infinity,-Infinity,NaN]");
    let r = func::modulo(&a("2 * float64", "[-7.5, 7.5]"), &a("float64", "2")).unwrap();
    assert_eq!(r.to_json(), "[-1.5,1.5]");
}

#[test]
fn floor_divide_and_remainder_match_numpy() {
    // Integers: the quotient rounds down, the remainder takes the
    // divisor's sign, and a // b * b + a % b == a.
    let x = a("6 * int8", "[7, -7, 7, -7, -128, 0]");
    let y = a("6 * int8", "[2, 2, -2, -2, 3, -5]");
    let q = func::floor_divide(&x, &y).unwrap();
    let r = func::remainder(&x, &y).unwrap();
    assert_eq!(q.to_json(), "[3,-4,-4,3,-43,0]");
    assert_eq!(r.to_json(), "[1,1,-1,-1,1,0]");
    let back = func::add(&func::multiply(&q, &y).unwrap(), &r).unwrap();
    assert_eq!(back.to_json(), x.to_json());
    let u = func::floor_divide(&a("2 * uint8", "[7, 200]"), &a("2 * uint8", "[2, 7]")).unwrap();
    assert_eq!(u.to_json(), "[3,28]");
    let u = func::remainder(&a("2 * uint8", "[7, 200]"), &a("2 * uint8", "[2, 7]")).unwrap();
    assert_eq!(u.to_json(), "[1,4]");

    // A zero divisor is an error; MIN // -1 overflows; MIN % -1 is 0.
    let zero = a("6 * int8", "[1, 1, 1, 0, 1, 1]");
    let e = func::floor_divide(&x, &zero).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.message(), "int8 division by zero: -7 // 0");
    let e = func::remainder(&x, &zero).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.message(), "int8 division by zero: -7 % 0");
    let (min, m1) = (a("int8", "-128"), a("int8", "-1"));
    let e = func::floor_divide(&min, &m1).unwrap_err();
    assert_error(&e, ErrorKind::Overflow, "-128 // -1");
    assert_eq!(func::remainder(&min, &m1).unwrap().to_json(), "0");

    // Floats: NumPy 2.4's np.floor_divide / np.remainder on these pairs,
    // special values and signed zeros included.
    let x = a(
        "15 * float64",
        "[7, -7, 7, -7, 0, -0.0, 5, -5, 0, Infinity, 2, -2, NaN, 5.5, -1e-20]",
    );
    let y = a(
        "15 * float64",
        "[2, 2, -2, -2, -3, 3, 0, 0, 0, 2, Infinity, Infinity, 1, 0.5, 1]",
    );
    #[rustfmt::skip]
    let results: [(&str, BinaryFn, &str); 2] = [
        ("floor_divide", func::floor_divide, "[3.0,-4.0,-4.0,3.0,-0.0,-0.0,Infinity,-Infinity,NaN,NaN,0.0,-1.0,NaN,11.0,-1.0]"),
        ("remainder", func::remainder, "[1.0,1.0,-1.0,-1.0,-0.0,0.0,NaN,NaN,NaN,NaN,2.0,Infinity,NaN,0.0,1.0]"),
    ];
    for (name, f, want) in results {
        assert_eq!(f(&x, &y).unwrap().to_json(), want, "{name}");
    }
    // float16 through float32; bool and complex have neither.
    let h = func::floor_divide(&a("2 * float16", "[7, -7]"), &a("float16", "2")).unwrap();
    assert_eq!(
        show(&h),
        ("2 * float16".to_string(), "[3.0,-4.0]".to_string())
    );
    for (tp, v) in [("bool", "true"), ("complex[float64]", "[1, 1]")] {
        for f in [func::floor_divide, func::remainder] {
            let e = f(&a(tp, v), &a(tp, v)).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Type, "{tp}: {e}");
        }
    }
}

#[test]
fn division_by_zero_is_found_in_every_chunk_and_loop() {
    // Contiguous (checked a chunk at a time), in the last chunk.
    let n = 1000usize;
    let xs: Vec<i32> = (0..n as i32).collect();
    let mut ys = vec![3i32; n];
    ys[n - 1] = 0;
    let e = func::divide(&Array::from(xs.clone()), &Array::from(ys.clone())).unwrap_err();
    assert_eq!(e.message(), "int32 division by zero: 999 / 0");
    // The same data reversed (strided, negative stride).
    let rx = slice(&Array::from(xs.clone()), None, None, -1);
    let ry = slice(&Array::from(ys.clone()), None, None, -1);
    let e = func::divide(&rx, &ry).unwrap_err();
    assert_eq!(e.message(), "int32 division by zero: 999 / 0");
    // Without a zero, every path agrees with a Rust loop.
    ys[n - 1] = 7;
    let r = func::divide(&Array::from(xs.clone()), &Array::from(ys.clone())).unwrap();
    let want: Vec<f64> = xs.iter().zip(&ys).map(|(x, y)| (x / y) as f64).collect();
    assert_eq!(values(&r), want);
}

#[test]
fn integer_overflow_wraps_like_numpy() {
    assert_eq!(
        (&a("int8", "127") + &a("int8", "1")).unwrap().to_json(),
        "-128"
    );
    assert_eq!(
        (&a("uint8", "0") - &a("uint8", "1")).unwrap().to_json(),
        "255"
    );
    assert_eq!(
        (&a("int32", "2147483647") * &a("int32", "2"))
            .unwrap()
            .to_json(),
        "-2"
    );
    let min = a("2 * int32", "[-2147483648, 5]");
    assert_eq!((-&min).unwrap().to_json(), "[-2147483648,-5]");
    assert_eq!(func::abs(&min).unwrap().to_json(), "[-2147483648,5]");
    assert_eq!(func::negative(&a("uint8", "1")).unwrap().to_json(), "255");
}

#[test]
fn bool_arithmetic() {
    let t = a("2 * bool", "[true, false]");
    let u = a("2 * bool", "[true, true]");
    assert_eq!(
        show(&(&t + &u).unwrap()),
        ("2 * bool".to_string(), "[true,true]".to_string())
    );
    assert_eq!((&t * &u).unwrap().to_json(), "[true,false]");
    assert_eq!(func::abs(&t).unwrap().to_json(), "[true,false]");
    for e in [
        (&t - &u).unwrap_err(),
        (&t / &u).unwrap_err(),
        (&t % &u).unwrap_err(),
        (-&t).unwrap_err(),
    ] {
        assert_error(&e, ErrorKind::Type, "not defined for bool");
    }
    // bool with a number promotes to the number.
    assert_eq!(
        show(&(&t + &a("int8", "5")).unwrap()),
        ("2 * int8".to_string(), "[6,5]".to_string())
    );
}

#[test]
fn complex_arithmetic() {
    let z = a("2 * complex[float64]", "[[1, 2], [3, -4]]");
    let w = a("complex[float64]", "[0, 1]");
    assert_eq!((&z * &w).unwrap().to_json(), "[[-2.0,1.0],[4.0,3.0]]");
    assert_eq!((&z / &w).unwrap().to_json(), "[[2.0,-1.0],[-4.0,-3.0]]");
    assert_eq!((-&z).unwrap().to_json(), "[[-1.0,-2.0],[-3.0,4.0]]");
    let e = (&z % &w).unwrap_err();
    assert_error(&e, ErrorKind::Type, "complex");
}

#[test]
fn non_numbers_are_type_errors() {
    let e = func::add(&a("string", "\"x\""), &a("int32", "1")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert!(
        e.message().contains("add") && e.message().contains("string"),
        "{e}"
    );
    let e = func::sqrt(&a("{x: int32}", "{\"x\": 1}")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    let e = func::less(&a("string", "\"x\""), &a("int32", "1")).unwrap_err();
    assert_error(&e, ErrorKind::Type, "two strings");
    let e = lookup("add")
        .unwrap()
        .call(&[&a("int32", "1")])
        .unwrap_err();
    assert_error(&e, ErrorKind::Type, "takes 2 arguments");
}

// --------------------------------------------------------- comparisons

#[test]
fn numbers_compare_in_their_common_type() {
    let x = a("4 * int32", "[1, 2, 3, 4]");
    let y = a("4 * float64", "[1.5, 2, 2.5, 5]");
    check_binary(
        &x,
        &y,
        &[
            ("less", func::less, "[true,false,false,true]"),
            ("less_equal", func::less_equal, "[true,true,false,true]"),
            ("equal", func::equal, "[false,true,false,false]"),
            ("not_equal", func::not_equal, "[true,false,true,true]"),
            ("greater", func::greater, "[false,false,true,false]"),
            (
                "greater_equal",
                func::greater_equal,
                "[false,true,true,false]",
            ),
        ],
    );
    // int64 against uint64 is exact (in int128): these differ by one
    // where float64 would see two equal values.
    let r = func::less(
        &a("int64", "9223372036854775807"),
        &a("uint64", "9223372036854775808"),
    )
    .unwrap();
    assert_eq!(r.to_json(), "true");
    // NaN is unordered.
    let n = a("float64", "NaN");
    for (f, want) in [
        (
            func::less as fn(&Array, &Array) -> dynd::Result<Array>,
            "false",
        ),
        (func::greater_equal, "false"),
        (func::equal, "false"),
        (func::not_equal, "true"),
    ] {
        assert_eq!(f(&n, &n).unwrap().to_json(), want);
    }
    // bool: false < true.
    assert_eq!(
        func::less(&a("bool", "false"), &a("bool", "true"))
            .unwrap()
            .to_json(),
        "true"
    );
    // Complex numbers: equality only.
    let z = a("2 * complex[float32]", "[[1, 2], [1, 0]]");
    assert_eq!(
        func::equal(&z, &a("int8", "1")).unwrap().to_json(),
        "[false,true]"
    );
    let e = func::less(&z, &z).unwrap_err();
    assert_error(&e, ErrorKind::Type, "no order");
}

#[test]
fn strings_compare_lexicographically() {
    let x = Array::from(vec!["abcd", "abcde", "b", "", "é", "z"]);
    let y = Array::from(vec!["abcde", "abcd", "abc", "", "z", "é"]);
    check_binary(
        &x,
        &y,
        &[
            ("less", func::less, "[true,false,false,false,false,true]"),
            (
                "greater",
                func::greater,
                "[false,true,true,false,true,false]",
            ),
            ("equal", func::equal, "[false,false,false,true,false,false]"),
            (
                "less_equal",
                func::less_equal,
                "[true,false,false,true,false,true]",
            ),
            (
                "greater_equal",
                func::greater_equal,
                "[false,true,true,true,true,false]",
            ),
            (
                "not_equal",
                func::not_equal,
                "[true,true,true,false,true,true]",
            ),
        ],
    );
    // A scalar string broadcasts; var dims lift.
    let words = a("2 * var * string", r#"[["apple", "pear"], ["fig"]]"#);
    assert_eq!(
        func::less(&words, &Array::from("banana"))
            .unwrap()
            .to_json(),
        "[[true,false],[false]]"
    );
    // bytes compare too (JSON spells them in hex): "ab", "b" < "abc".
    let b = a("2 * bytes", r#"["6162", "62"]"#);
    assert_eq!(
        func::less(&b, &a("bytes", r#""616263""#))
            .unwrap()
            .to_json(),
        "[true,false]"
    );
}

// ------------------------------------------------------------- logical

#[test]
fn logical_functions_use_truthiness() {
    let x = a("5 * int32", "[0, 1, -2, 0, 3]");
    let y = a("5 * float64", "[0, 0, 0.5, NaN, -0.0]");
    check_binary(
        &x,
        &y,
        &[
            (
                "logical_and",
                func::logical_and,
                "[false,false,true,false,false]",
            ),
            (
                "logical_or",
                func::logical_or,
                "[false,true,true,true,true]",
            ),
        ],
    );
    assert_eq!(
        func::logical_not(&y).unwrap().to_json(),
        "[true,true,false,false,true]"
    );
    let z = a("3 * complex[float64]", "[[0, 0], [0, 1], [2, 0]]");
    assert_eq!(
        func::logical_not(&z).unwrap().to_json(),
        "[true,false,false]"
    );
    assert_eq!(
        func::logical_and(&z, &a("bool", "true")).unwrap().to_json(),
        "[false,true,true]"
    );
    assert_eq!(
        show(&func::logical_not(&a("float16", "0")).unwrap()),
        ("bool".to_string(), "true".to_string())
    );
}

// ---------------------------------------------------------------- math

#[test]
fn math_functions_agree_with_std() {
    let xs: Vec<f64> = (1..200).map(|i| i as f64 * 0.037).collect();
    let x = Array::from(xs.clone());
    let cases: [(&str, RealFn); 6] = [
        ("sqrt", f64::sqrt),
        ("exp", f64::exp),
        ("log", f64::ln),
        ("sin", f64::sin),
        ("cos", f64::cos),
        ("tan", f64::tan),
    ];
    for (name, f) in cases {
        let r = func::call(name, &[&x]).unwrap();
        assert_eq!(r.tp().to_string(), "199 * float64");
        let want: Vec<f64> = xs.iter().map(|&v| f(v)).collect();
        assert_eq!(values(&r), want, "{name}");
        // float32 stays float32 and matches f32's functions.
        let x32 = x.cast("199 * float32", ErrorMode::NoCheck).unwrap();
        let r32 = func::call(name, &[&x32]).unwrap();
        assert_eq!(r32.tp().to_string(), "199 * float32");
    }
    let r = func::sqrt(&a("3 * float32", "[4, 2, -1]")).unwrap();
    assert_eq!(r.to_json(), format!("[2.0,{},NaN]", 2f32.sqrt()));
    // Integers compute in float64.
    assert_eq!(
        show(&func::sqrt(&a("2 * int8", "[4, 9]")).unwrap()),
        ("2 * float64".to_string(), "[2.0,3.0]".to_string())
    );
    assert_eq!(
        func::log(&a("float64", "0")).unwrap().to_json(),
        "-Infinity"
    );
    // pow: floats, integers in float64, broadcasting.
    let p = func::pow(&a("3 * float64", "[2, 9, 0.5]"), &a("float64", "0.5")).unwrap();
    let want: Vec<f64> = [2f64, 9.0, 0.5].iter().map(|v| v.powf(0.5)).collect();
    assert_eq!(values(&p), want);
    assert_eq!(
        show(&func::pow(&a("2 * int32", "[2, 3]"), &a("uint8", "3")).unwrap()),
        ("2 * float64".to_string(), "[8.0,27.0]".to_string())
    );
    // float16 computes in float32.
    let h = func::exp(&a("float16", "1")).unwrap();
    assert_eq!(h.tp().to_string(), "float16");
    assert_eq!(
        values(&func::exp(&a("1 * float16", "[1]")).unwrap())[0],
        half::f16::from_f32(1f32.exp()).to_f64()
    );
}

#[test]
fn complex_math() {
    let z = a("complex[float64]", "[-1, 0]");
    let r = func::sqrt(&z).unwrap();
    assert_eq!(r.to_json(), "[0.0,1.0]");
    let w = Complex::new(0.5f64, -1.25);
    let zw = a("complex[float64]", "[0.5, -1.25]");
    for (name, f) in [
        ("exp", Complex::exp as fn(Complex<f64>) -> Complex<f64>),
        ("log", Complex::ln),
        ("sin", Complex::sin),
        ("cos", Complex::cos),
        ("tan", Complex::tan),
    ] {
        let r = func::call(name, &[&zw]).unwrap();
        assert_eq!(r.as_scalar::<Complex<f64>>().unwrap(), f(w), "{name}");
    }
    // pow: z^0 is 1 and 0^2 is 0 (where exp(2 ln 0) would be NaN).
    let zero = a("complex[float64]", "[0, 0]");
    assert_eq!(
        func::pow(&zero, &a("int32", "0")).unwrap().to_json(),
        "[1.0,0.0]"
    );
    assert_eq!(
        func::pow(&zero, &a("int32", "2")).unwrap().to_json(),
        "[0.0,0.0]"
    );
    let i = a("complex[float32]", "[0, 1]");
    let r = func::pow(&i, &a("int8", "2")).unwrap();
    assert_eq!(r.tp().to_string(), "complex[float32]");
    let v = r.as_scalar::<Complex<f32>>().unwrap();
    assert!((v.re + 1.0).abs() < 1e-6 && v.im.abs() < 1e-6, "{v}");
    // abs of a complex is its magnitude, in the part type.
    assert_eq!(
        show(&func::abs(&a("complex[float32]", "[3, 4]")).unwrap()),
        ("float32".to_string(), "5.0".to_string())
    );
}

// --------------------------------------------------------------- views

#[test]
fn strided_and_reversed_views_equal_contiguous_copies() {
    let n = 1001;
    let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 100.0).collect();
    let ys: Vec<i32> = (0..n).map(|i| (i * 7 % 13) - 6).collect();
    let x = Array::from(xs.clone());
    let y = Array::from(ys.clone());
    let views = [
        (Some(0), None, 2),
        (None, None, -1),
        (Some(900), Some(10), -3),
        (Some(1), Some(1000), 1),
    ];
    let functions = [
        "add",
        "subtract",
        "multiply",
        "less",
        "equal",
        "logical_or",
        "pow",
    ];
    for (start, stop, step) in views {
        let xv = slice(&x, start, stop, step);
        let yv = slice(&y, start, stop, step);
        let (xc, yc) = (xv.copy().unwrap(), yv.copy().unwrap());
        for name in functions {
            let on_views = func::call(name, &[&xv, &yv]).unwrap();
            let on_copies = func::call(name, &[&xc, &yc]).unwrap();
            assert_eq!(on_views.to_json(), on_copies.to_json(), "{name} {step}");
        }
        // Same-type (no promotion) and unary.
        let yy = func::multiply(&yv, &yv).unwrap();
        assert_eq!(yy.to_json(), func::multiply(&yc, &yc).unwrap().to_json());
        let s = func::sqrt(&xv).unwrap();
        assert_eq!(s.to_json(), func::sqrt(&xc).unwrap().to_json());
        let m = func::modulo(&yv, &a("int32", "5")).unwrap();
        assert_eq!(
            m.to_json(),
            func::modulo(&yc, &a("int32", "5")).unwrap().to_json()
        );
    }
    // A 2-d transposed view.
    let m = a("2 * 3 * int16", "[[1,2,3],[4,5,6]]");
    let t = m.permute(&[1, 0]).unwrap();
    let r = func::add(&t, &a("3 * 2 * float32", "[[0,0],[0,0],[0,0.5]]")).unwrap();
    assert_eq!(r.to_json(), "[[1.0,4.0],[2.0,5.0],[3.0,6.5]]");
}

#[test]
fn into_a_preallocated_or_aliased_output() {
    let add = lookup("add").unwrap();
    let x = Array::from(vec![1.0f64, 2.0, 3.0]);
    let y = Array::from(vec![10.0f64, 20.0, 30.0]);
    let out = Array::empty("3 * float64").unwrap();
    add.call_into(&out, &[&x, &y]).unwrap();
    assert_eq!(out.to_json(), "[11.0,22.0,33.0]");
    // In place: x += y.
    add.call_into(&x, &[&x, &y]).unwrap();
    assert_eq!(x.to_json(), "[11.0,22.0,33.0]");
    // In place with promotion: an int32 output is not what add computes.
    let i = Array::from(vec![1i32, 2, 3]);
    let e = add.call_into(&i, &[&i, &y]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
}

// ----------------------------------------------------------- parallel

#[test]
fn parallel_results_equal_a_rust_loop_and_serial_pieces() {
    let n = 300_000usize;
    let xs: Vec<f64> = (0..n).map(|i| ((i % 1000) as f64).sin() * 10.0).collect();
    let ys: Vec<i32> = (0..n).map(|i| (i % 17) as i32 - 8).collect();
    let (x, y) = (Array::from(xs.clone()), Array::from(ys.clone()));

    let sum = func::add(&x, &y).unwrap();
    let want: Vec<f64> = xs.iter().zip(&ys).map(|(a, &b)| a + b as f64).collect();
    assert_eq!(values(&sum), want);

    let prod = (&x * &x).unwrap();
    let want: Vec<f64> = xs.iter().map(|a| a * a).collect();
    assert_eq!(values(&prod), want);

    let lt = func::less(&x, &y).unwrap();
    let want: Vec<f64> = xs
        .iter()
        .zip(&ys)
        .map(|(a, &b)| (*a < b as f64) as u8 as f64)
        .collect();
    assert_eq!(values(&lt), want);

    let ym = func::modulo(&y, &a("int32", "3")).unwrap();
    let want: Vec<f64> = ys.iter().map(|b| (b % 3) as f64).collect();
    assert_eq!(values(&ym), want);

    // The same computation on serial-sized pieces gives the same bits.
    for start in (0..n).step_by(60_000) {
        let stop = Some((start + 60_000) as isize);
        let xp = Array::from(xs[start..start + 60_000].to_vec());
        let yp = Array::from(ys[start..start + 60_000].to_vec());
        let piece = func::add(&xp, &yp).unwrap();
        assert_eq!(
            slice(&sum, Some(start as isize), stop, 1).to_json(),
            piece.to_json()
        );
    }

    // A 2-d case whose rows split across threads, with a broadcast row.
    let m = Array::empty("500 * 1000 * float32").unwrap();
    let row = Array::from((0..1000).map(|i| i as f64).collect::<Vec<_>>());
    let r = func::add(&m, &row).unwrap();
    assert_eq!(r.tp().to_string(), "500 * 1000 * float64");
    let last = r.index(&[499.into()]).unwrap();
    assert_eq!(
        values(&last),
        (0..1000).map(|i| i as f64).collect::<Vec<_>>()
    );

    // An error in one element of a parallel call reaches the caller.
    let mut zs = vec![1i32; n];
    zs[n - 5] = 0;
    let e = func::divide(&y, &Array::from(zs)).unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, "division by zero");
}

// ------------------------------------------------------------ dispatch

#[test]
fn user_overloads_the_most_specific_wins() {
    let mut set = comparison_overloads(function("less").unwrap()).unwrap();
    // Compare int32 by absolute value; every other type keeps the
    // built-in overloads.
    set.add(Callable::from_fn2("abs_less", |x: i32, y: i32| {
        x.unsigned_abs() < y.unsigned_abs()
    }))
    .unwrap();
    register("abs_less", set.build());
    let x = a("3 * int32", "[-5, 1, 2]");
    let y = a("3 * int32", "[3, -2, 2]");
    assert_eq!(
        func::call("abs_less", &[&x, &y]).unwrap().to_json(),
        "[false,true,false]"
    );
    assert_eq!(func::less(&x, &y).unwrap().to_json(), "[true,false,false]");
    // int64 still goes to the numeric overload, strings to theirs.
    let x64 = x.cast("3 * int64", ErrorMode::NoCheck).unwrap();
    assert_eq!(
        func::call("abs_less", &[&x64, &y]).unwrap().to_json(),
        "[true,false,false]"
    );
    assert_eq!(
        func::call("abs_less", &[&Array::from("a"), &Array::from("b")])
            .unwrap()
            .to_json(),
        "true"
    );
    assert!(names().contains(&"abs_less".to_string()));
}

#[test]
fn ambiguous_overloads_are_refused_at_registration() {
    let mut set = comparison_overloads(function("equal").unwrap()).unwrap();
    set.add(Callable::from_fn2("eq_i32_any", |x: i32, y: f64| {
        x as f64 == y
    }))
    .unwrap();
    // (float64, int32) overlaps nothing added so far but the generic
    // numeric overload, which it is more specific than: fine.
    set.add(Callable::from_fn2("eq_f64_i32", |x: f64, y: i32| {
        x == y as f64
    }))
    .unwrap();
    // The same parameters twice: a duplicate.
    let e = set
        .add(Callable::from_fn2("again", |x: i32, y: f64| x as f64 != y))
        .err()
        .unwrap();
    assert_error(&e, ErrorKind::InvalidArgument, "duplicates");

    // Two patterns that both match (int32, int32) with neither more
    // specific are refused when the second is added.
    let mut b = dynd::callable::dispatch::DispatchBuilder::new("amb");
    b.add(arith::numeric(function("add").unwrap())).unwrap();
    b.add(pattern_callable("left", "(int32, Any) -> int32"))
        .unwrap();
    let e = b
        .add(pattern_callable("right", "(Any, int32) -> int32"))
        .err()
        .unwrap();
    assert_error(&e, ErrorKind::InvalidArgument, "ambiguous");
}

/// A callable whose signature is a pattern (it is never called here).
fn pattern_callable(name: &str, sig: &str) -> Callable {
    struct P(String, Type);
    impl dynd::callable::CallableImpl for P {
        fn name(&self) -> &str {
            &self.0
        }
        fn signature(&self) -> &Type {
            &self.1
        }
        fn resolve(&self, _args: &[Type]) -> dynd::Result<Type> {
            Ok(Type::int32())
        }
        unsafe fn instantiate(
            &self,
            _ckb: std::pin::Pin<&mut dynd::kernels::CKernelBuilder>,
            _offset: usize,
            _args: dynd::kernels::KernelArgs<'_>,
        ) -> dynd::Result<usize> {
            Err(dynd::Error::invalid_argument("not callable"))
        }
    }
    Callable::new(P(name.to_string(), Type::parse(sig).unwrap()))
}

// --------------------------------------------------------------- faces

#[test]
fn every_function_is_registered_and_has_a_face() {
    let registered = names();
    for op in functions() {
        assert!(registered.contains(&op.name().to_string()), "{op}");
        assert_eq!(lookup(op.name()).unwrap().name(), op.name());
    }
    let x = a("2 * float64", "[1, 4]");
    let y = a("2 * int32", "[2, 2]");
    let faces2: [(&str, Face2); 16] = [
        ("add", func::add),
        ("subtract", func::subtract),
        ("multiply", func::multiply),
        ("divide", func::divide),
        ("modulo", func::modulo),
        ("floor_divide", func::floor_divide),
        ("remainder", func::remainder),
        ("less", func::less),
        ("less_equal", func::less_equal),
        ("equal", func::equal),
        ("not_equal", func::not_equal),
        ("greater", func::greater),
        ("greater_equal", func::greater_equal),
        ("logical_and", func::logical_and),
        ("logical_or", func::logical_or),
        ("pow", func::pow),
    ];
    for (name, f) in faces2 {
        let by_name = lookup(name).unwrap().call(&[&x, &y]).unwrap();
        assert_eq!(show(&f(&x, &y).unwrap()), show(&by_name), "{name}");
    }
    let faces1: [(&str, Face1); 9] = [
        ("negative", func::negative),
        ("abs", func::abs),
        ("logical_not", func::logical_not),
        ("sqrt", func::sqrt),
        ("exp", func::exp),
        ("log", func::log),
        ("sin", func::sin),
        ("cos", func::cos),
        ("tan", func::tan),
    ];
    for (name, f) in faces1 {
        let by_name = lookup(name).unwrap().call(&[&x]).unwrap();
        assert_eq!(show(&f(&x).unwrap()), show(&by_name), "{name}");
    }
    // Operators.
    assert_eq!((&x + &y).unwrap().to_json(), "[3.0,6.0]");
    assert_eq!((&x - &y).unwrap().to_json(), "[-1.0,2.0]");
    assert_eq!((&x * &y).unwrap().to_json(), "[2.0,8.0]");
    assert_eq!((&x / &y).unwrap().to_json(), "[0.5,2.0]");
    assert_eq!((&x % &y).unwrap().to_json(), "[1.0,0.0]");
    assert_eq!((-&x).unwrap().to_json(), "[-1.0,-4.0]");
    let e = func::call("no_such_function", &[&x]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

// ------------------------------------------------------------ kept kernels

#[test]
fn kept_kernels_compute_what_new_ones_do() {
    // More type pairs than a thread keeps kernels for, three rounds: the
    // later calls run kept kernels (or rebuild evicted ones). Each result
    // equals the general path's on a strided view of the same values, and
    // a call on another thread (its own kernels) agrees.
    let types = [
        "int8", "int32", "int64", "uint16", "float32", "float64", "bool",
    ];
    let view = |t: &str, vals: &str| {
        let wide = a("6 * int8", vals)
            .cast(format!("6 * {t}").as_str(), ErrorMode::NoCheck)
            .unwrap();
        slice(&wide, None, None, 2)
    };
    for _ in 0..3 {
        for t in types {
            for u in types {
                let x = view(t, "[1, 0, 2, 0, 3, 0]");
                let y = view(u, "[4, 0, 0, 0, 1, 0]");
                let show = |r: dynd::Result<Array>| {
                    r.map(|r| (r.tp().to_string(), r.to_json()))
                        .map_err(|e| e.to_string())
                };
                let want = show(func::multiply(&x, &y));
                let (xc, yc) = (x.copy().unwrap(), y.copy().unwrap());
                let got = show(func::multiply(&xc, &yc));
                assert_eq!(got, want, "{t} * {u}");
                let there = std::thread::spawn(move || show(func::multiply(&xc, &yc)));
                assert_eq!(there.join().unwrap(), want, "{t} * {u} on another thread");
            }
        }
    }
    // An error still comes from each call, kept kernel or not.
    for _ in 0..3 {
        let e = func::floor_divide(&Array::from(vec![1i32, 2]), &Array::from(vec![1i32, 0]))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    }
}

#[test]
fn large_new_outputs_written_past_the_cache_hold_the_same_values() {
    // New outputs of `kernels::loops::stream_min_bytes()` bytes and more
    // (4 MiB by default; low under valgrind) of calls that read one array
    // (the rest scalars) are computed in pieces and copied out with
    // streaming stores; each element must be what the plain loop gives,
    // at every piece boundary and in the last, partial piece, for 1- to
    // 16-byte results, on one thread and on two. `a + b` of two arrays
    // takes the plain loop: the same values.
    let min = stream_min_bytes();
    let n = min.div_ceil(8) + 1003;
    let xs: Vec<f64> = (0..n).map(|i| (i % 1000) as f64 * 0.37 - 100.0).collect();
    let ys: Vec<f64> = (0..n).map(|i| (i % 777) as f64 * -1.25 + 3.0).collect();
    let x = Array::from_slice(&xs, &[n]).unwrap();
    let y = Array::from_slice(&ys, &[n]).unwrap();
    let pool = |t| dynd::exec::Executor::Threads(t);
    let same = |got: Vec<f64>, want: &dyn Fn(usize) -> f64| {
        got.len() == n
            && got
                .iter()
                .enumerate()
                .all(|(i, g)| g.to_bits() == want(i).to_bits())
    };
    for threads in [1, 2] {
        pool(threads).install(|| {
            let plus = func::add(&x, &a("float64", "0.125")).unwrap();
            assert!(
                same(plus.to_vec().unwrap(), &|i| xs[i] + 0.125),
                "{threads}: x + c"
            );
            let minus = func::subtract(&a("float64", "2.5"), &x).unwrap();
            assert!(
                same(minus.to_vec().unwrap(), &|i| 2.5 - xs[i]),
                "{threads}: c - x"
            );
            let both = func::add(&x, &y).unwrap();
            assert!(
                same(both.to_vec().unwrap(), &|i| xs[i] + ys[i]),
                "{threads}: x + y"
            );
            // 1-byte results: 4M+ of them to pass the threshold.
            let m = min + 4101;
            let b: Vec<i8> = (0..m).map(|i| (i % 251) as i8).collect();
            let lt = func::call(
                "less",
                &[&Array::from_slice(&b, &[m]).unwrap(), &a("int8", "7")],
            )
            .unwrap()
            .to_vec::<bool>()
            .unwrap();
            assert!(
                lt.len() == m && lt.iter().zip(&b).all(|(&l, &b)| l == (b < 7)),
                "{threads} threads: less"
            );
            // 16-byte results.
            let k = min.div_ceil(16) + 3;
            let c: Vec<Complex<f64>> = (0..k)
                .map(|i| Complex::new(i as f64, -(i as f64) / 2.0))
                .collect();
            let w = Complex::new(0.5, 2.0);
            let prod = func::multiply(
                &Array::from_slice(&c, &[k]).unwrap(),
                &a("complex128", "[0.5, 2]"),
            )
            .unwrap()
            .to_vec::<Complex<f64>>()
            .unwrap();
            assert!(
                prod.len() == k && prod.iter().zip(&c).all(|(p, c)| *p == c * w),
                "{threads} threads: complex multiply"
            );
        });
    }
}

#[test]
fn a_failure_in_a_large_new_output_is_the_small_one_s_error() {
    // A zero divisor far into a streamed output (`c / x`, one array read):
    // the same error as in a short array, and nothing written past it
    // matters (the output is dropped).
    let n = stream_min_bytes().div_ceil(4) + 1041;
    for at in [0, 1023, 1024, n / 2, n - 1] {
        let mut den: Vec<i32> = (0..n).map(|i| (i % 7 + 1) as i32).collect();
        den[at] = 0;
        let err = func::divide(&a("int32", "1000"), &Array::from_slice(&den, &[n]).unwrap())
            .expect_err("a zero divisor");
        let small =
            func::divide(&a("int32", "1000"), &a("1 * int32", "[0]")).expect_err("a zero divisor");
        assert_eq!(err.to_string(), small.to_string(), "zero at {at}");
    }
}
