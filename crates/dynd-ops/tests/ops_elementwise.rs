//! Elementwise operators and generators, each on every executor.

use crate::common;
use common::{both, executors, irregular};
use dynd::ErrorKind;
use dynd_ops::*;

fn check_map<S: Shape>(got: &Tensor<f64, S>, a: &Tensor<f64, S>, f: impl Fn(f64) -> f64) {
    for (g, &x) in got.as_slice().iter().zip(a.as_slice()) {
        let w = f(x);
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "f({x}) = {g}, want {w}"
        );
    }
}

#[test]
fn ops_arithmetic_operators_match_a_scalar_loop() {
    let a = irregular([5, 7]);
    let b = irregular([5, 7])
        .as_slice()
        .iter()
        .map(|x| x + 0.5)
        .collect::<Vec<_>>();
    let b = Tensor::from_vec([5, 7], b).unwrap();
    type Case = (Tensor<f64, [usize; 2]>, fn(f64, f64) -> f64);
    let cases: [Case; 5] = [
        (both(&a + &b), |x, y| x + y),
        (both(&a - &b), |x, y| x - y),
        (both(&a * &b), |x, y| x * y),
        (both(&a / &b), |x, y| x / y),
        (both(&a % &b), |x, y| x % y),
    ];
    for (got, f) in cases {
        for ((g, &x), &y) in got.as_slice().iter().zip(a.as_slice()).zip(b.as_slice()) {
            assert_eq!(g.to_bits(), f(x, y).to_bits());
        }
    }
    let n = both(-&a);
    check_map(&n, &a, |x| -x);
    let f = both(add(mul(&a, &b), sub(&a, div(&b, rem(&a, scalar(3.0))))));
    for ((g, &x), &y) in f.as_slice().iter().zip(a.as_slice()).zip(b.as_slice()) {
        assert_eq!(g.to_bits(), (x * y + (x - y / (x % 3.0))).to_bits());
    }
}

#[test]
fn ops_scalars_on_either_side() {
    let a = irregular([4, 3]);
    check_map(&both(2.0 * &a - 1.0), &a, |x| 2.0 * x - 1.0);
    check_map(&both(10.0 / (&a + 100.0)), &a, |x| 10.0 / (x + 100.0));
    check_map(&both(1.0 - a.view() % 4.0), &a, |x| 1.0 - x % 4.0);
    let e = (&a * 3.0 + 1.0) * 2.0;
    assert_eq!(e.name(), "mul(add(mul(tensor, 3.0), 1.0), 2.0)");
}

#[test]
fn ops_integer_arithmetic_wraps_and_division_by_zero_is_an_error() {
    // As dynd's divide and modulo: a zero divisor is an InvalidArgument
    // error, MIN / -1 an Overflow error, on every executor; the error names
    // the first bad pair in C order.
    let a = Tensor::from_vec([4], vec![7i32, -7, i32::MAX, i32::MIN]).unwrap();
    let z = Tensor::from_vec([4], vec![0i32, 2, 1, -1]).unwrap();
    for ex in executors() {
        let e = (&a / &z).eval(ex).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.message().contains("7 / 0"), "{e}");
        let e = (&a % &z).eval(ex).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        let min = Tensor::from_vec([2], vec![1i32, i32::MIN]).unwrap();
        let e = (&min / -1).eval(ex).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Overflow, "{e}");
    }
    let nz = Tensor::from_vec([4], vec![3i32, 2, 1, 2]).unwrap();
    assert_eq!(both(&a / &nz).as_slice(), &[2, -3, i32::MAX, i32::MIN / 2]);
    assert_eq!(both(&a % &nz).as_slice(), &[1, -1, 0, 0]);
    // MIN % -1 is 0, not an error (as dynd).
    let m1 = Tensor::from_vec([4], vec![1i32, 1, 1, -1]).unwrap();
    assert_eq!(both(&a % &m1).as_slice(), &[0, 0, 0, 0]);
    assert_eq!(both(&a + 1).as_slice(), &[8, -6, i32::MIN, i32::MIN + 1]);
    assert_eq!(both(abs(&a)).as_slice(), &[7, 7, i32::MAX, i32::MIN]);
    let u = Tensor::from_vec([3], vec![0u8, 1, 200]).unwrap();
    assert_eq!(both(&u - 1u8).as_slice(), &[255, 0, 199]);
    assert_eq!(both(sign(&a)).as_slice(), &[1, -1, 1, -1]);
    // A later evaluation after a fixed input starts clean.
    let expr = &a / &z;
    assert!(expr.clone().eval(&Serial).is_err());
}

#[test]
fn ops_math_functions_match_std() {
    let x = Tensor::from_fn([3, 11], |[i, j]| (i * 11 + j) as f64 / 40.0 + 0.01);
    let neg = Tensor::from_fn([3, 11], |[i, j]| ((i * 11 + j) as f64 - 16.0) / 3.3);
    check_map(&both(sqrt(&x)), &x, f64::sqrt);
    check_map(&both(exp(&x)), &x, f64::exp);
    check_map(&both(log(&x)), &x, f64::ln);
    check_map(&both(log2(&x)), &x, f64::log2);
    check_map(&both(log10(&x)), &x, f64::log10);
    check_map(&both(sin(&neg)), &neg, f64::sin);
    check_map(&both(cos(&neg)), &neg, f64::cos);
    check_map(&both(tan(&neg)), &neg, f64::tan);
    check_map(&both(asin(&x)), &x, f64::asin);
    check_map(&both(acos(&x)), &x, f64::acos);
    check_map(&both(atan(&neg)), &neg, f64::atan);
    check_map(&both(sinh(&neg)), &neg, f64::sinh);
    check_map(&both(cosh(&neg)), &neg, f64::cosh);
    check_map(&both(tanh(&neg)), &neg, f64::tanh);
    check_map(&both(floor(&neg)), &neg, f64::floor);
    check_map(&both(ceil(&neg)), &neg, f64::ceil);
    check_map(&both(round(&neg)), &neg, f64::round);
    check_map(&both(abs(&neg)), &neg, f64::abs);
    check_map(&both(sign(&neg)), &neg, |v| {
        if v > 0.0 {
            1.0
        } else if v < 0.0 {
            -1.0
        } else {
            v
        }
    });
    check_map(&both(pow(&x, fill([3, 11], 1.5))), &x, |v| v.powf(1.5));
    check_map(&both(atan2(&neg, fill([3, 11], -2.0))), &neg, |v| {
        v.atan2(-2.0)
    });
    let f = Tensor::from_vec([3], vec![1.0f32, 4.0, 9.0]).unwrap();
    assert_eq!(both(sqrt(&f)).as_slice(), &[1.0f32, 2.0, 3.0]);
}

#[test]
fn ops_minimum_maximum_propagate_nan() {
    let a = Tensor::from_vec([4], vec![1.0, f64::NAN, 3.0, -0.5]).unwrap();
    let b = Tensor::from_vec([4], vec![2.0, 0.0, f64::NAN, -1.5]).unwrap();
    let mx = both(maximum(&a, &b));
    let mn = both(minimum(&a, &b));
    assert_eq!(mx.at([0]), 2.0);
    assert!(mx.at([1]).is_nan() && mx.at([2]).is_nan());
    assert_eq!(mx.at([3]), -0.5);
    assert_eq!(mn.at([0]), 1.0);
    assert!(mn.at([1]).is_nan() && mn.at([2]).is_nan());
    assert_eq!(mn.at([3]), -1.5);
    let i = Tensor::from_vec([3], vec![1i64, 5, -3]).unwrap();
    assert_eq!(both(maximum(&i, scalar(2))).as_slice(), &[2, 5, 2]);
}

#[test]
fn ops_comparisons_predicates_and_logic_give_bools() {
    let a = Tensor::from_vec([5], vec![1.0, 2.0, f64::NAN, f64::INFINITY, -2.0]).unwrap();
    let two = || scalar::<f64>(2.0);
    let p = Tensor::from_vec([4], vec![true, true, false, false]).unwrap();
    let q = Tensor::from_vec([4], vec![true, false, true, false]).unwrap();
    // (the op, its result, the values it must give).
    type Case<'a> = (&'a str, Tensor<bool, [usize; 1]>, &'a [bool]);
    let cases: [Case; 12] = [
        (
            "lt",
            both(lt(&a, two())),
            &[true, false, false, false, true],
        ),
        ("le", both(le(&a, two())), &[true, true, false, false, true]),
        (
            "gt",
            both(gt(&a, two())),
            &[false, false, false, true, false],
        ),
        (
            "ge",
            both(ge(&a, two())),
            &[false, true, false, true, false],
        ),
        (
            "eq",
            both(eq(&a, two())),
            &[false, true, false, false, false],
        ),
        ("ne", both(ne(&a, two())), &[true, false, true, true, true]),
        (
            "isnan",
            both(isnan(&a)),
            &[false, false, true, false, false],
        ),
        (
            "isinf",
            both(isinf(&a)),
            &[false, false, false, true, false],
        ),
        (
            "logical_and",
            both(logical_and(&p, &q)),
            &[true, false, false, false],
        ),
        (
            "logical_or",
            both(logical_or(&p, &q)),
            &[true, true, true, false],
        ),
        (
            "logical_xor",
            both(logical_xor(&p, &q)),
            &[false, true, true, false],
        ),
        (
            "logical_not",
            both(logical_not(&p)),
            &[false, false, true, true],
        ),
    ];
    for (name, got, want) in &cases {
        assert_eq!(got.as_slice(), *want, "{name}");
    }
}

#[test]
fn ops_select_chooses_elementwise() {
    let a = irregular([6, 5]);
    let r = both(select(gt(&a, scalar(0.0)), &a, -&a));
    check_map(&r, &a, f64::abs);
    let clipped = both(select(lt(&a, scalar(-10.0)), fill([1, 1], -10.0), &a));
    check_map(&clipped, &a, |x| if x < -10.0 { -10.0 } else { x });
}

#[test]
fn ops_casts_follow_as() {
    let a = Tensor::from_vec([5], vec![1.7f64, -2.5, 1e20, f64::NAN, 255.9]).unwrap();
    assert_eq!(
        both(cast::<i32, _>(&a)).as_slice(),
        &[1, -2, i32::MAX, 0, 255]
    );
    assert_eq!(both(cast::<u8, _>(&a)).as_slice(), &[1, 0, 255, 0, 255]);
    let i = Tensor::from_vec([3], vec![1i64, -3, 1 << 40]).unwrap();
    assert_eq!(
        both(cast::<f32, _>(&i)).as_slice(),
        &[1.0, -3.0, (1u64 << 40) as f32]
    );
    let b = Tensor::from_vec([2], vec![true, false]).unwrap();
    assert_eq!(both(cast::<u8, _>(&b)).as_slice(), &[1, 0]);
    assert_eq!(both((&a * 2.0).cast::<i64>()).as_slice()[0], 3);
    assert_eq!(cast::<i16, _>(&i).name(), "cast<int16>(tensor)");
}

#[test]
fn ops_size_one_dims_broadcast() {
    let a = Tensor::from_fn([3, 4], |[i, j]| (i * 4 + j) as f64);
    let row = Tensor::from_vec([1, 4], vec![10.0, 20.0, 30.0, 40.0]).unwrap();
    let col = Tensor::from_vec([3, 1], vec![100.0, 200.0, 300.0]).unwrap();
    let r = both(&a + &row + &col);
    assert_eq!(r.sizes(), [3, 4]);
    for i in 0..3 {
        for j in 0..4 {
            assert_eq!(r.at([i, j]), a.at([i, j]) + row.at([0, j]) + col.at([i, 0]));
        }
    }
    let outer = both(&row * &col);
    assert_eq!(outer.sizes(), [3, 4]);
    assert_eq!(outer.at([2, 3]), 300.0 * 40.0);
}

#[test]
fn ops_mismatched_operands_are_broadcast_errors_naming_both_shapes() {
    let a = Tensor::<f64, _>::zeros([3, 4]);
    let b = Tensor::<f64, _>::zeros([4, 3]);
    let e = (&a + &b).try_sizes().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast);
    assert!(
        e.to_string().contains("[3, 4]") && e.to_string().contains("[4, 3]"),
        "{e}"
    );
    for ex in common::executors() {
        let e = (&a * &b).eval(ex).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Broadcast);
        assert!(
            e.to_string().contains("[3, 4]") && e.to_string().contains("[4, 3]"),
            "{e}"
        );
    }
}

#[test]
fn ops_fused_multiply_add_on_long_and_short_rows() {
    // One long row: split into several tasks.
    let n = 3 * TASK_ELEMS + 123;
    let a = Tensor::from_fn([n], |[i]| i as f64 * 0.5);
    let b = Tensor::from_fn([n], |[i]| (i % 7) as f64);
    let c = Tensor::from_fn([n], |[i]| -(i as f64));
    let r = both(&a * &b + &c);
    for i in (0..n).step_by(997) {
        assert_eq!(r.at([i]), a.at([i]) * b.at([i]) + c.at([i]));
    }
    // Many short rows: grouped into tasks.
    let s = [5000, 30];
    let a = irregular(s);
    let r = both(&a * &a + 1.0);
    check_map(&r, &a, |x| x * x + 1.0);
}

#[test]
fn ops_generators_constant_range_and_identity() {
    assert_eq!(both(zeros::<i32, _>([2, 2])).as_slice(), &[0; 4]);
    assert_eq!(both(ones::<f32, _>([3])).as_slice(), &[1.0; 3]);
    assert_eq!(both(fill([2], 7u8)).as_slice(), &[7, 7]);
    let r = both(range([2, 3], 1, 10i64, -2).unwrap());
    assert_eq!(r.as_slice(), &[10, 8, 6, 10, 8, 6]);
    let r0 = both(range([2, 3], 0, 0.5f64, 0.25).unwrap());
    assert_eq!(r0.as_slice(), &[0.5, 0.5, 0.5, 0.75, 0.75, 0.75]);
    assert_eq!(
        range([2, 3], 2, 0i32, 1).unwrap_err().kind(),
        ErrorKind::Index
    );
    assert_eq!(
        both(eye::<i32, _>([3, 3])).as_slice(),
        &[1, 0, 0, 0, 1, 0, 0, 0, 1]
    );
    assert_eq!(
        both(eye::<f64, _>([2, 2, 2])).as_slice(),
        &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    );
    assert_eq!(
        both(diag_const([2, 3], 5i32)).as_slice(),
        &[5, 0, 0, 0, 5, 0]
    );
    assert_eq!(both(alternate::<i32>(5)).as_slice(), &[1, -1, 1, -1, 1]);
    let l = both(logspace(0.0f64, 3.0, 4, 10.0));
    assert_eq!(l.as_slice(), &[1.0, 10.0, 100.0, 1000.0]);
    assert_eq!(
        both(linspace(0.0f64, 1.0, 5)).as_slice(),
        &[0.0, 0.25, 0.5, 0.75, 1.0]
    );
    assert_eq!(both(linspace(3.0f64, 9.0, 1)).as_slice(), &[3.0]);
    let upper = both(generate([3, 3], "upper", |[i, j]: [usize; 2]| i <= j));
    assert_eq!(
        upper.as_slice(),
        &[true, true, true, false, true, true, false, false, true]
    );
    assert_eq!(generate([1], "upper", |_: [usize; 1]| 0u8).name(), "upper");
}

#[test]
fn ops_random_uniform_is_reproducible_and_in_range() {
    let sizes = [40, 250];
    let u = both(random_uniform(sizes, 42, -1.0f64, 3.0).unwrap());
    let again = both(random_uniform(sizes, 42, -1.0f64, 3.0).unwrap());
    assert_eq!(common::bits(u.as_slice()), common::bits(again.as_slice()));
    let other = both(random_uniform(sizes, 43, -1.0f64, 3.0).unwrap());
    assert_ne!(common::bits(u.as_slice()), common::bits(other.as_slice()));
    assert!(u.as_slice().iter().all(|&x| (-1.0..3.0).contains(&x)));
    let mean = u.as_slice().iter().sum::<f64>() / u.as_slice().len() as f64;
    assert!((mean - 1.0).abs() < 0.05, "mean {mean}");
    // An element's value depends only on the seed and its position.
    let big = both(random_uniform([2, 40, 250], 42, -1.0f64, 3.0).unwrap());
    assert_eq!(
        common::bits(&big.as_slice()[..10_000]),
        common::bits(u.as_slice())
    );
    let ints = both(random_uniform([1000], 1, 0i32, 6).unwrap());
    assert!(ints.as_slice().iter().all(|&x| (0..6).contains(&x)));
    assert_eq!(
        random_uniform([3], 0, 1.0f64, 1.0).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn ops_random_normal_has_the_asked_moments() {
    let n = both(random_normal([20_000], 7, 2.0f64, 0.5).unwrap());
    let xs = n.as_slice();
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / xs.len() as f64;
    assert!((mean - 2.0).abs() < 0.02, "mean {mean}");
    assert!((var.sqrt() - 0.5).abs() < 0.02, "std {}", var.sqrt());
    assert_eq!(
        random_normal([3], 0, 0.0f64, -1.0).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let r = both(random_normal([4, 4], 7, 0.0f32, 1.0).unwrap());
    assert!(r.as_slice().iter().all(|x| x.is_finite()));
}
