//! Missing values through elementwise callables (DESIGN §6): `?T`
//! arguments give `?R`, missing where any argument is missing; Kleene
//! logic for logical_and / logical_or; no error from a missing element.

use crate::common;
use common::{a, assert_error, assert_ok, pair, show};

use dynd::callable::{Callable, lookup};
use dynd::{Array, ErrorKind, Index, Type, compute};

#[test]
fn arithmetic_on_options_is_missing_where_an_argument_is() {
    let x = a("4 * ?int32", "[1, null, 3, null]");
    let y = a("4 * int32", "[10, 20, 30, 40]");
    assert_ok(compute::add(&x, &y), "4 * ?int32", "[11,null,33,null]");
    assert_ok(compute::add(&y, &x), "4 * ?int32", "[11,null,33,null]");
    let z = a("4 * ?float64", "[null, 0.5, 1.5, 2.5]");
    assert_ok(
        compute::multiply(&x, &z),
        "4 * ?float64",
        "[null,null,4.5,null]",
    );
    // A scalar broadcasts, optional or not.
    assert_ok(
        compute::add(&x, &Array::from(1i32)),
        "4 * ?int32",
        "[2,null,4,null]",
    );
    let na = a("?int32", "null");
    assert_ok(compute::add(&y, &na), "4 * ?int32", "[null,null,null,null]");
    // One argument.
    assert_ok(compute::negative(&x), "4 * ?int32", "[-1,null,-3,null]");
    let c = a("2 * ?complex[float64]", "[[3, 4], null]");
    assert_ok(compute::abs(&c), "2 * ?float64", "[5.0,null]");
    assert_ok(
        compute::sqrt(&z),
        "4 * ?float64",
        "[null,0.7071067811865476,1.224744871391589,1.5811388300841898]",
    );
    // A NaN is a value, not missing.
    let nan = a("2 * ?float64", "[NaN, null]");
    assert_ok(
        compute::add(&nan, &Array::from(1.0f64)),
        "2 * ?float64",
        "[NaN,null]",
    );
}

#[test]
fn comparisons_give_optional_bools() {
    let x = a("3 * ?float64", "[1, null, 3]");
    let y = a("3 * float64", "[2, 2, 2]");
    assert_ok(compute::less(&x, &y), "3 * ?bool", "[true,null,false]");
    assert_ok(compute::equal(&x, &x), "3 * ?bool", "[true,null,true]");
}

#[test]
fn logical_functions_use_kleene_logic() {
    let t = a(
        "9 * ?bool",
        "[true, true, true, false, false, false, null, null, null]",
    );
    let u = a(
        "9 * ?bool",
        "[true, false, null, true, false, null, true, false, null]",
    );
    assert_ok(
        compute::logical_and(&t, &u),
        "9 * ?bool",
        "[true,false,null,false,false,false,null,false,null]",
    );
    assert_ok(
        compute::logical_or(&t, &u),
        "9 * ?bool",
        "[true,true,true,true,false,null,true,null,null]",
    );
    // Numbers by truthiness.
    let n = a("3 * ?int32", "[0, 5, null]");
    let m = a("3 * ?float64", "[null, null, 0]");
    assert_ok(
        compute::logical_and(&n, &m),
        "3 * ?bool",
        "[false,null,false]",
    );
    assert_ok(compute::logical_or(&n, &m), "3 * ?bool", "[null,true,null]");
    assert_ok(compute::logical_not(&n), "3 * ?bool", "[true,false,null]");
}

#[test]
fn a_missing_element_never_raises_an_error() {
    // The divisor under a missing dividend is 0, and MIN / -1 hides under
    // an NA sentinel: neither is an error.
    let x = a("4 * ?int32", "[null, 6, null, 7]");
    let y = a("4 * ?int32", "[0, 2, -1, null]");
    assert_ok(compute::divide(&x, &y), "4 * ?int32", "[null,3,null,null]");
    assert_ok(
        compute::floor_divide(&x, &y),
        "4 * ?int32",
        "[null,3,null,null]",
    );
    // A present zero divisor still is.
    let e = compute::divide(&a("2 * ?int32", "[null, 6]"), &a("2 * int32", "[1, 0]")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.message(), "int32 division by zero: 6 / 0");
    // Over runs longer than a block, into a new and a preallocated output:
    // the kernel writes the output directly, fails on a zero under a
    // missing dividend, and the block is redone element by element.
    let n = 1500usize;
    let list = |f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join(",");
    let x = a(
        &format!("{n} * ?int32"),
        &format!(
            "[{}]",
            list(&|i| if i % 100 == 7 {
                "null".into()
            } else {
                (3 * i).to_string()
            })
        ),
    );
    let y = a(
        &format!("{n} * int32"),
        &format!(
            "[{}]",
            list(&|i| if i % 100 == 7 { "0" } else { "3" }.into())
        ),
    );
    let want = format!(
        "[{}]",
        list(&|i| if i % 100 == 7 {
            "null".into()
        } else {
            i.to_string()
        })
    );
    assert_eq!(compute::divide(&x, &y).unwrap().to_json(), want);
    let into = Array::empty(Type::parse(&format!("{n} * ?int32")).unwrap()).unwrap();
    lookup("divide")
        .unwrap()
        .call_into(&into, &[&x, &y])
        .unwrap();
    assert_eq!(into.to_json(), want);
}

#[test]
fn through_var_dims_views_and_long_runs() {
    let x = a("3 * var * ?float64", "[[1, null], [], [null, 4, 5]]");
    assert_ok(
        compute::add(&x, &Array::from(1.0f64)),
        "3 * var * ?float64",
        "[[2.0,null],[],[null,5.0,6.0]]",
    );
    let y = a("3 * 2 * int32", "[[1, 2], [3, 4], [5, 6]]");
    let z = a("3 * var * ?int32", "[[1, null], [null], [5, 6]]");
    assert_ok(
        compute::add(&y, &z),
        "3 * 2 * ?int32",
        "[[2,null],[null,null],[10,12]]",
    );
    // Reversed views, and more elements than a chunk, on one thread and
    // (past the parallel threshold) on several.
    for n in [1000usize, 300_000] {
        let vals: Vec<String> = (0..n)
            .map(|i| {
                if i % 7 == 3 {
                    "null".to_string()
                } else {
                    i.to_string()
                }
            })
            .collect();
        let v = a(&format!("{n} * ?int64"), &format!("[{}]", vals.join(",")));
        let rev = v.index(&[Index::slice(None, None, -1)]).unwrap();
        let r = compute::add(&rev, &Array::from(1i64)).unwrap();
        let want: Vec<String> = (0..n)
            .rev()
            .map(|i| {
                if i % 7 == 3 {
                    "null".to_string()
                } else {
                    (i + 1).to_string()
                }
            })
            .collect();
        assert_eq!(r.to_json(), format!("[{}]", want.join(",")), "{n}");
    }
}

#[test]
fn two_optional_arguments_over_long_runs_and_strided_outputs() {
    // Longer than a block: both arguments' missing elements are marked
    // (the first in the scratch block, the second as the output is
    // stored), into a new output and into every other element of a
    // bigger one.
    let n = 5000usize;
    let list = |f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join(",");
    let x = a(
        &format!("{n} * ?float64"),
        &format!(
            "[{}]",
            list(&|i| if i % 5 == 1 {
                "null".into()
            } else {
                format!("{i}.5")
            })
        ),
    );
    let y = a(
        &format!("{n} * ?float64"),
        &format!(
            "[{}]",
            list(&|i| if i % 3 == 0 {
                "null".into()
            } else {
                "1".into()
            })
        ),
    );
    let want = format!(
        "[{}]",
        list(&|i| if i % 5 == 1 || i % 3 == 0 {
            "null".into()
        } else {
            format!("{}.5", i + 1)
        })
    );
    assert_eq!(compute::add(&x, &y).unwrap().to_json(), want);
    let big = Array::empty(Type::parse(&format!("{} * ?float64", 2 * n)).unwrap()).unwrap();
    let every_other = big.index(&[Index::slice(None, None, 2)]).unwrap();
    lookup("add")
        .unwrap()
        .call_into(&every_other, &[&x, &y])
        .unwrap();
    assert_eq!(every_other.to_json(), want);
}

#[test]
fn in_place_calls_keep_missing_values_missing() {
    // The output is the optional argument: the missing elements are found
    // before the kernel overwrites them (a NaN-payload NA plus 1 is a
    // plain NaN, no longer NA).
    for n in [5usize, 5000] {
        let vals: Vec<&str> = (0..n)
            .map(|i| if i % 5 == 1 { "null" } else { "2.5" })
            .collect();
        let x = a(&format!("{n} * ?float64"), &format!("[{}]", vals.join(",")));
        lookup("add")
            .unwrap()
            .call_into(&x, &[&x, &Array::from(1.0f64)])
            .unwrap();
        let want: Vec<&str> = (0..n)
            .map(|i| if i % 5 == 1 { "null" } else { "3.5" })
            .collect();
        assert_eq!(x.to_json(), format!("[{}]", want.join(",")), "{n}");
    }
}

#[test]
fn rust_closures_get_missing_values_without_doing_anything() {
    let f = Callable::from_fn2("hyp", |x: f64, y: f64| (x * x + y * y).sqrt());
    let x = a("3 * ?float64", "[3, null, 5]");
    let y = a("3 * float64", "[4, 1, 12]");
    assert_ok(f.call(&[&x, &y]), "3 * ?float64", "[5.0,null,13.0]");
    // The closure never sees the NA payload: a closure that fails on NaN
    // still succeeds.
    let g = Callable::try_from_fn1("strict", |x: f64| {
        if x.is_nan() {
            Err(dynd::Error::invalid_argument("saw a NaN"))
        } else {
            Ok(x * 2.0)
        }
    });
    assert_ok(g.call(&[&x]), "3 * ?float64", "[6.0,null,10.0]");
    assert_eq!(
        g.call(&[&a("float64", "NaN")]).unwrap_err().message(),
        "saw a NaN"
    );
}

#[test]
fn string_functions_keep_their_own_option_handling() {
    let s = a("2 * ?string", r#"["ab", null]"#);
    let r = lookup("concat")
        .unwrap()
        .call(&[&s, &a("string", r#""c""#)])
        .unwrap();
    assert_eq!(show(&r), pair("2 * ?string", r#"["abc",null]"#));
}

#[test]
fn what_does_not_fit_is_still_a_type_error() {
    let x = a("2 * ?int32", "[1, null]");
    let s = a("2 * ?string", r#"["a", null]"#);
    let e = compute::add(&x, &s).unwrap_err();
    assert_error(&e, ErrorKind::Type, "add");
}

#[test]
fn fused_kernels_agree_with_the_plain_ones_for_every_type() {
    // The operations that cannot fail write NA in their own loop; each
    // element must be what the plain kernel gives, or null where an
    // argument is. Long enough for the vector loops, with a broadcast
    // scalar, a second optional argument and a strided (reversed) view.
    let n = 300usize;
    for t in [
        "int8",
        "int32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex[float64]",
    ] {
        // Unsigned differences stay positive: a result equal to an NA
        // sentinel (uint64 0 - 1) would read as missing.
        let value = |i: usize| 3 + i % 11;
        let x_missing = |i: usize| i % 7 == 2;
        let y_missing = |i: usize| i % 5 == 4;
        let list = |f: &dyn Fn(usize) -> String| {
            format!("[{}]", (0..n).map(f).collect::<Vec<_>>().join(","))
        };
        let x = a(
            &format!("{n} * ?{t}"),
            &list(&|i| {
                if x_missing(i) {
                    "null".into()
                } else {
                    value(i).to_string()
                }
            }),
        );
        let x_plain = a(&format!("{n} * {t}"), &list(&|i| value(i).to_string()));
        let y = a(
            &format!("{n} * ?{t}"),
            &list(&|i| {
                if y_missing(i) {
                    "null".into()
                } else {
                    (i % 4).to_string()
                }
            }),
        );
        let y_plain = a(&format!("{n} * {t}"), &list(&|i| (i % 4).to_string()));
        let one = Array::from_json(t, "9").unwrap();
        let rev = |v: &Array| v.index(&[Index::slice(None, None, -1)]).unwrap();
        for name in ["add", "subtract", "multiply", "less", "equal"] {
            if name == "less" && t.starts_with("complex") {
                continue; // complex numbers are not ordered
            }
            let f = lookup(name).unwrap();
            // (the fused result, the plain one, where it must be missing)
            type Case<'m> = (Array, Array, &'m dyn Fn(usize) -> bool);
            let cases: [Case<'_>; 4] = [
                (
                    f.call(&[&x, &y_plain]).unwrap(),
                    f.call(&[&x_plain, &y_plain]).unwrap(),
                    &x_missing,
                ),
                (
                    f.call(&[&one, &y]).unwrap(),
                    f.call(&[&one, &y_plain]).unwrap(),
                    &y_missing,
                ),
                (
                    f.call(&[&x, &y]).unwrap(),
                    f.call(&[&x_plain, &y_plain]).unwrap(),
                    &|i| x_missing(i) || y_missing(i),
                ),
                (
                    f.call(&[&rev(&x), &rev(&y)]).unwrap(),
                    rev(&f.call(&[&x_plain, &y_plain]).unwrap()),
                    &|i| x_missing(n - 1 - i) || y_missing(n - 1 - i),
                ),
            ];
            for (case, (got, plain, missing)) in cases.iter().enumerate() {
                let want_tp = plain.tp().to_string().replacen("* ", "* ?", 1);
                assert_eq!(got.tp().to_string(), want_tp, "{name} on {t}");
                for i in 0..n {
                    let g = got.index(&[i.into()]).unwrap().to_json();
                    let want = if missing(i) {
                        "null".to_string()
                    } else {
                        plain.index(&[i.into()]).unwrap().to_json()
                    };
                    assert_eq!(g, want, "{name} on {t}, case {case}, element {i}");
                }
            }
        }
    }
}
