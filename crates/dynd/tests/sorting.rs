//! `sort`, `argsort`, `cumsum`, `cumprod` and `concatenate` (DESIGN §6,
//! §8): every element type, ragged and empty rows, NaN and missing
//! ordering, stability, descending, strided views, scan result types and
//! overflow, concatenation of fixed and var dims, and the errors.

use crate::common;
use common::{Typed, a, assert_ok, ok, pair};

use dynd::callable::lookup;
use dynd::compute::{self, SortOptions};
use dynd::{Array, ErrorKind, Index};

const DESC: SortOptions = SortOptions { descending: true };

/// `(type, input, sorted, argsort, descending sort, descending argsort)`.
#[rustfmt::skip]
const CASES: &[(&str, &str, &str, &str, &str, &str)] = &[
    ("5 * int8", "[3,-128,127,0,3]", "[-128,0,3,3,127]", "[1,3,0,4,2]", "[127,3,3,0,-128]", "[2,0,4,3,1]"),
    ("5 * int16", "[3,-2,7,0,3]", "[-2,0,3,3,7]", "[1,3,0,4,2]", "[7,3,3,0,-2]", "[2,0,4,3,1]"),
    ("5 * int32", "[3,-2,7,0,3]", "[-2,0,3,3,7]", "[1,3,0,4,2]", "[7,3,3,0,-2]", "[2,0,4,3,1]"),
    ("5 * int64", "[3,-2,7,0,3]", "[-2,0,3,3,7]", "[1,3,0,4,2]", "[7,3,3,0,-2]", "[2,0,4,3,1]"),
    ("5 * int128", "[3,-2,7,0,3]", "[-2,0,3,3,7]", "[1,3,0,4,2]", "[7,3,3,0,-2]", "[2,0,4,3,1]"),
    ("5 * uint8", "[3,255,7,0,3]", "[0,3,3,7,255]", "[3,0,4,2,1]", "[255,7,3,3,0]", "[1,2,0,4,3]"),
    ("5 * uint16", "[3,2,7,0,3]", "[0,2,3,3,7]", "[3,1,0,4,2]", "[7,3,3,2,0]", "[2,0,4,1,3]"),
    ("5 * uint32", "[3,2,7,0,3]", "[0,2,3,3,7]", "[3,1,0,4,2]", "[7,3,3,2,0]", "[2,0,4,1,3]"),
    ("5 * uint64", "[3,18446744073709551615,7,0,3]", "[0,3,3,7,18446744073709551615]", "[3,0,4,2,1]", "[18446744073709551615,7,3,3,0]", "[1,2,0,4,3]"),
    ("5 * uint128", "[3,2,7,0,3]", "[0,2,3,3,7]", "[3,1,0,4,2]", "[7,3,3,2,0]", "[2,0,4,1,3]"),
    ("5 * float16", "[1.5,NaN,-2,0.5,1.5]", "[-2.0,0.5,1.5,1.5,NaN]", "[2,3,0,4,1]", "[1.5,1.5,0.5,-2.0,NaN]", "[0,4,3,2,1]"),
    ("5 * bfloat16", "[1.5,NaN,-2,0.5,1.5]", "[-2.0,0.5,1.5,1.5,NaN]", "[2,3,0,4,1]", "[1.5,1.5,0.5,-2.0,NaN]", "[0,4,3,2,1]"),
    ("5 * float32", "[1.5,NaN,-Infinity,Infinity,1.5]", "[-Infinity,1.5,1.5,Infinity,NaN]", "[2,0,4,3,1]", "[Infinity,1.5,1.5,-Infinity,NaN]", "[3,0,4,2,1]"),
    ("5 * float64", "[1.5,NaN,-0.0,0.0,NaN]", "[-0.0,0.0,1.5,NaN,NaN]", "[2,3,0,1,4]", "[1.5,0.0,-0.0,NaN,NaN]", "[0,3,2,1,4]"),
    ("5 * bool", "[true,false,true,false,false]", "[false,false,false,true,true]", "[1,3,4,0,2]", "[true,true,false,false,false]", "[0,2,1,3,4]"),
    ("5 * ?int32", "[3,null,-1,null,3]", "[-1,3,3,null,null]", "[2,0,4,1,3]", "[3,3,-1,null,null]", "[0,4,2,1,3]"),
    ("5 * ?uint8", "[3,null,254,null,3]", "[3,3,254,null,null]", "[0,4,2,1,3]", "[254,3,3,null,null]", "[2,0,4,1,3]"),
    ("6 * ?float64", "[null,NaN,2,-Infinity,NaN,1]", "[-Infinity,1.0,2.0,NaN,NaN,null]", "[3,5,2,1,4,0]", "[2.0,1.0,-Infinity,NaN,NaN,null]", "[2,5,3,1,4,0]"),
    ("4 * ?bool", "[true,null,false,true]", "[false,true,true,null]", "[2,0,3,1]", "[true,true,false,null]", "[0,3,2,1]"),
    ("5 * string", r#"["b","ab","","é","b"]"#, r#"["","ab","b","b","é"]"#, "[2,1,0,4,3]", r#"["é","b","b","ab",""]"#, "[3,0,4,1,2]"),
    ("4 * ?string", r#"["b",null,"a","b"]"#, r#"["a","b","b",null]"#, "[2,0,3,1]", r#"["b","b","a",null]"#, "[0,3,2,1]"),
    ("3 * bytes", r#"["ff","00","0a"]"#, r#"["00","0a","ff"]"#, "[1,2,0]", r#"["ff","0a","00"]"#, "[0,2,1]"),
];

#[test]
fn every_element_type() {
    for &(tp, x, sorted, arg, desc, desc_arg) in CASES {
        let x = a(tp, x);
        let arg_tp = format!("{} * int64", &tp[..tp.find(" *").unwrap()]);
        assert_eq!(ok(compute::sort(&x)), pair(tp, sorted), "sort {tp}");
        assert_eq!(ok(compute::argsort(&x)), pair(&arg_tp, arg), "argsort {tp}");
        assert_eq!(
            ok(compute::sort_by(&x, DESC)),
            pair(tp, desc),
            "sort desc {tp}"
        );
        assert_eq!(
            ok(compute::argsort_by(&x, DESC)),
            pair(&arg_tp, desc_arg),
            "argsort desc {tp}"
        );
        // Through the registry too.
        assert_eq!(ok(lookup("sort").unwrap().call(&[&x])).1, sorted);
    }
}

#[test]
fn ragged_and_empty_rows() {
    let x = a("4 * var * float64", "[[3,1,2],[],[5],[2,2,1,NaN]]");
    assert_ok(
        compute::sort(&x),
        "4 * var * float64",
        "[[1.0,2.0,3.0],[],[5.0],[1.0,2.0,2.0,NaN]]",
    );
    assert_ok(
        compute::argsort(&x),
        "4 * var * int64",
        "[[1,2,0],[],[0],[2,0,1,3]]",
    );
    let e = a("0 * var * int32", "[]");
    assert_ok(compute::sort(&e), "0 * var * int32", "[]");
    let e = a("0 * int32", "[]");
    assert_ok(compute::argsort(&e), "0 * int64", "[]");
    let v = a("var * var * int16", "[[2,1],[],[9,-9,0]]");
    assert_ok(
        compute::sort(&v),
        "var * var * int16",
        "[[1,2],[],[-9,0,9]]",
    );
    let f = a("2 * 2 * 3 * uint8", "[[[3,2,1],[1,1,0]],[[0,0,0],[9,8,7]]]");
    assert_eq!(
        ok(compute::sort(&f)).1,
        "[[[1,2,3],[0,1,1]],[[0,0,0],[7,8,9]]]"
    );
    let s = a("2 * var * string", r#"[["b","a"],[]]"#);
    assert_ok(compute::sort(&s), "2 * var * string", r#"[["a","b"],[]]"#);
}

#[test]
fn long_rows_are_sorted_and_stable() {
    // Long enough for the radix sort; many equal keys.
    let n = 5000;
    let vals: Vec<f64> = (0..n).map(|i| ((i * 7919) % 37) as f64 - 18.0).collect();
    let x = Array::from(vals.clone());
    let s = compute::sort(&x).unwrap().to_json();
    let mut want = vals.clone();
    want.sort_by(f64::total_cmp);
    assert_eq!(s, Array::from(want).to_json());
    let arg = compute::argsort(&x).unwrap().to_json();
    let mut idx: Vec<i64> = (0..n as i64).collect();
    idx.sort_by(|&i, &j| vals[i as usize].total_cmp(&vals[j as usize]));
    assert_eq!(arg, Array::from(idx.clone()).to_json());
    let arg = compute::argsort_by(&x, DESC).unwrap().to_json();
    idx.sort_by(|&i, &j| vals[j as usize].total_cmp(&vals[i as usize]));
    assert_eq!(arg, Array::from(idx).to_json());
}

/// A float64 as JSON text dynd reads.
fn text(v: f64) -> String {
    match v {
        _ if v.is_nan() => "NaN".into(),
        f64::INFINITY => "Infinity".into(),
        f64::NEG_INFINITY => "-Infinity".into(),
        _ => format!("{v:?}"),
    }
}

/// Pseudo-random 64-bit words (xorshift64*).
fn words(n: usize, seed: u64) -> Vec<u64> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            s.wrapping_mul(0x2545_F491_4F6C_DD1D)
        })
        .collect()
}

#[test]
fn long_rows_of_64_bit_numbers() {
    // Long rows of int64, uint64 and float64 go to the vectorised sort
    // where the CPU has one: every value's bits, both ends of each range,
    // -0.0 before 0.0, NaNs then missing values last.
    let n = 20_000;
    let w = words(n, 3);
    let mut ints: Vec<i64> = w.iter().map(|&u| u as i64).collect();
    ints[7] = i64::MIN;
    ints[8] = i64::MAX;
    let x = Array::from(ints.clone());
    ints.sort();
    assert_eq!(compute::sort(&x).unwrap().to_vec::<i64>().unwrap(), ints);
    ints.reverse();
    let d = compute::sort_by(&x, DESC).unwrap().to_vec::<i64>().unwrap();
    assert_eq!(d, ints);

    let mut uints = w.clone();
    uints[0] = u64::MAX;
    uints[1] = 0;
    let x = Array::from(uints.clone());
    uints.sort();
    assert_eq!(compute::sort(&x).unwrap().to_vec::<u64>().unwrap(), uints);

    let mut f: Vec<f64> = w
        .iter()
        .map(|&u| (u >> 11) as f64 - 2f64.powi(52))
        .collect();
    f[3] = -0.0;
    f[4] = 0.0;
    f[5] = f64::NEG_INFINITY;
    f[6] = f64::NAN;
    let json: Vec<String> = f
        .iter()
        .enumerate()
        .map(|(i, v)| match i % 1000 {
            999 => "null".to_string(),
            _ => text(*v),
        })
        .collect();
    let tp = format!("{n} * ?float64");
    let x = Array::from_json(tp.as_str(), &format!("[{}]", json.join(","))).unwrap();
    let got = compute::sort(&x).unwrap().to_json();
    let mut present: Vec<f64> = (0..n).filter(|i| i % 1000 != 999).map(|i| f[i]).collect();
    present.sort_by(f64::total_cmp);
    let mut want: Vec<String> = present.iter().map(|&v| text(v)).collect();
    want.extend(std::iter::repeat_n("null".to_string(), n / 1000));
    let want = Array::from_json(tp.as_str(), &format!("[{}]", want.join(","))).unwrap();
    assert_eq!(got, want.to_json());
}

#[test]
fn strided_and_reversed_views() {
    let x = a("6 * int32", "[6,5,4,3,2,1]");
    let odd = x.index(&[Index::slice(Some(1), None, 2)]).unwrap();
    assert_eq!(ok(compute::sort(&odd)).1, "[1,3,5]");
    let rev = x.index(&[Index::slice(None, None, -1)]).unwrap();
    assert_eq!(ok(compute::argsort(&rev)).1, "[0,1,2,3,4,5]");
    let m = a("2 * 3 * float64", "[[3,1,2],[6,5,4]]");
    let col = m
        .index(&[Index::slice(None, None, -1), Index::slice(None, None, -1)])
        .unwrap();
    assert_eq!(ok(compute::sort(&col)).1, "[[4.0,5.0,6.0],[1.0,2.0,3.0]]");
    assert_eq!(
        ok(compute::cumsum(&col)).1,
        "[[4.0,9.0,15.0],[2.0,3.0,6.0]]"
    );
    let v = a("var * int32", "[1,9,3,8,5,7]");
    let vs = v.index(&[Index::slice(Some(1), None, 2)]).unwrap();
    assert_eq!(ok(compute::sort(&vs)).1, "[7,8,9]");
    assert_eq!(ok(compute::cumsum(&vs)).1, "[9,17,24]");
}

#[test]
fn scans_types_and_values() {
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str, &str, &str)] = &[
        ("3 * int8", "[100,100,100]", "3 * int64", "[100,200,300]", "[100,10000,1000000]"),
        ("3 * uint8", "[200,200,2]", "3 * uint64", "[200,400,402]", "[200,40000,80000]"),
        ("3 * bool", "[true,false,true]", "3 * int64", "[1,1,2]", "[1,0,0]"),
        ("3 * float32", "[0.5,1.5,2]", "3 * float32", "[0.5,2.0,4.0]", "[0.5,0.75,1.5]"),
        ("3 * float16", "[0.5,1.5,2]", "3 * float16", "[0.5,2.0,4.0]", "[0.5,0.75,1.5]"),
        ("3 * float64", "[1,NaN,2]", "3 * float64", "[1.0,NaN,NaN]", "[1.0,NaN,NaN]"),
        ("3 * ?int32", "[null,2,3]", "3 * ?int64", "[null,2,5]", "[null,2,6]"),
        ("4 * ?float64", "[1,null,2,null]", "4 * ?float64", "[1.0,null,3.0,null]", "[1.0,null,2.0,null]"),
        ("2 * complex[float64]", "[[1,1],[0,1]]", "2 * complex[float64]", "[[1.0,1.0],[1.0,2.0]]", "[[1.0,1.0],[-1.0,1.0]]"),
        ("2 * var * int16", "[[1,2,3],[]]", "2 * var * int64", "[[1,3,6],[]]", "[[1,2,6],[]]"),
    ];
    for &(tp, x, out, sum, prod) in cases {
        let x = a(tp, x);
        assert_eq!(ok(compute::cumsum(&x)), pair(out, sum), "cumsum {tp}");
        assert_eq!(ok(compute::cumprod(&x)), pair(out, prod), "cumprod {tp}");
    }
}

#[test]
fn scans_wrap_on_overflow() {
    let x = a("2 * int64", "[9223372036854775807,1]");
    assert_eq!(
        ok(compute::cumsum(&x)).1,
        "[9223372036854775807,-9223372036854775808]"
    );
    let x = a("2 * uint64", "[18446744073709551615,2]");
    assert_eq!(ok(compute::cumsum(&x)).1, "[18446744073709551615,1]");
    let x = a("3 * int32", "[65536,65536,65536]");
    // int32 promotes to int64: no overflow until int64's range.
    assert_eq!(
        ok(compute::cumprod(&x)).1,
        "[65536,4294967296,281474976710656]"
    );
}

/// `concatenate`'s inputs and result, one row each: fixed and var dims
/// mixed, one input, ragged rows, missing values, and empty inputs.
#[rustfmt::skip]
const CONCATENATED: &[(&[Typed], Typed)] = &[
    (&[("2 * int32", "[1,2]"), ("3 * int32", "[3,4,5]")], ("5 * int32", "[1,2,3,4,5]")),
    (&[("2 * int32", "[1,2]"), ("var * int32", "[6]"), ("3 * int32", "[3,4,5]")], ("var * int32", "[1,2,6,3,4,5]")),
    (&[("var * int32", "[6]")], ("var * int32", "[6]")),
    (&[("2 * var * string", r#"[["a"],[]]"#), ("var * var * string", r#"[["b","c"]]"#)], ("var * var * string", r#"[["a"],[],["b","c"]]"#)),
    (&[("1 * 2 * ?float64", "[[1,null]]"), ("2 * 2 * ?float64", "[[3,4],[null,6]]")], ("3 * 2 * ?float64", "[[1.0,null],[3.0,4.0],[null,6.0]]")),
    (&[("0 * int32", "[]"), ("0 * int32", "[]")], ("0 * int32", "[]")),
    // A var dim meeting a fixed one inside the element gives var (awkward).
    (&[("2 * var * int32", "[[1],[]]"), ("1 * 3 * int32", "[[2,3,4]]")], ("3 * var * int32", "[[1],[],[2,3,4]]")),
    (&[("1 * 2 * int32", "[[5,6]]"), ("1 * var * int32", "[[7]]")], ("2 * var * int32", "[[5,6],[7]]")),
    (&[("1 * 2 * var * ?int8", "[[[1],[null,2]]]"), ("1 * var * 2 * ?int8", "[[[3,4]]]")], ("2 * var * var * ?int8", "[[[1],[null,2]],[[3,4]]]")),
];

#[test]
fn concatenate_fixed_and_var() {
    for &(inputs, (tp, json)) in CONCATENATED {
        let arrays: Vec<Array> = inputs.iter().map(|&(t, j)| a(t, j)).collect();
        let refs: Vec<&Array> = arrays.iter().collect();
        assert_eq!(
            ok(compute::concatenate(&refs)),
            pair(tp, json),
            "{inputs:?}"
        );
    }
    // Through the registry, with two arguments, and with many (the Rust
    // function groups them).
    let f2 = a("2 * int32", "[1,2]");
    assert_eq!(
        ok(lookup("concatenate").unwrap().call(&[&f2, &f2])).1,
        "[1,2,1,2]"
    );
    let many: Vec<&Array> = std::iter::repeat_n(&f2, 20).collect();
    let r = compute::concatenate(&many).unwrap();
    assert_eq!(r.tp().to_string(), "40 * int32");
}

#[test]
fn errors_name_what_and_where() {
    let check = |r: dynd::Result<Array>, kind: ErrorKind, parts: &[&str]| {
        let e = r.expect_err("an error");
        assert_eq!(e.kind(), kind, "{e}");
        for p in parts {
            assert!(e.message().contains(p), "{e} lacks {p}");
        }
    };
    check(
        compute::sort(&a("int32", "3")),
        ErrorKind::Type,
        &["sort", "int32", "has none"],
    );
    check(
        compute::sort(&a("2 * complex[float64]", "[[1,2],[3,4]]")),
        ErrorKind::Type,
        &["sort", "complex[float64]"],
    );
    check(
        compute::argsort(&a("2 * {a: int32}", r#"[{"a":1},{"a":2}]"#)),
        ErrorKind::Type,
        &["argsort", "{a: int32}"],
    );
    check(
        compute::cumsum(&a("2 * string", r#"["a","b"]"#)),
        ErrorKind::Type,
        &["cumsum", "string"],
    );
    check(
        compute::cumprod(&a("float64", "1.5")),
        ErrorKind::Type,
        &["cumprod", "none"],
    );
    let f = a("2 * int32", "[1,2]");
    check(
        lookup("sort").unwrap().call(&[&f, &f]),
        ErrorKind::InvalidArgument,
        &["sort(x)", "1 argument", "not 2"],
    );
    check(
        compute::concatenate(&[&f, &a("2 * int64", "[1,2]")]),
        ErrorKind::Type,
        &["2 * int32", "2 * int64", "argument 1"],
    );
    check(
        compute::concatenate(&[
            &a("1 * 3 * int8", "[[1,2,3]]"),
            &a("1 * 4 * int8", "[[1,2,3,4]]"),
        ]),
        ErrorKind::Type,
        &["1 * 3 * int8", "1 * 4 * int8"],
    );
    check(
        compute::concatenate(&[&f, &a("int32", "1")]),
        ErrorKind::Type,
        &["argument 1", "int32"],
    );
    check(
        compute::concatenate(&[]),
        ErrorKind::InvalidArgument,
        &["at least one"],
    );
    let nine: Vec<&Array> = std::iter::repeat_n(&f, 9).collect();
    check(
        lookup("concatenate").unwrap().call(&nine),
        ErrorKind::InvalidArgument,
        &["1 to 8", "not 9"],
    );
}
