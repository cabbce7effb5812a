//! Percentiles against NumPy's definitions, written out here, on every
//! executor.

use crate::common;
use common::{both, irregular};
use dynd::ErrorKind;
use dynd_ops::*;

use PercentileMethod::*;

const METHODS: [PercentileMethod; 9] = PercentileMethod::ALL;

/// NumPy's `percentile(x, q, method=...)` for sorted `x`.
fn numpy(x: &[f64], q: f64, m: PercentileMethod) -> f64 {
    let n = x.len() as f64;
    let p = q / 100.0;
    let (alpha, beta) = match m {
        Hazen => (0.5, 0.5),
        Weibull => (0.0, 0.0),
        MedianUnbiased => (1.0 / 3.0, 1.0 / 3.0),
        NormalUnbiased => (3.0 / 8.0, 3.0 / 8.0),
        _ => (1.0, 1.0),
    };
    let v = p * (n - 1.0);
    let idx = |i: f64| x[i as usize];
    match m {
        Lower => idx(v.floor()),
        Higher => idx(v.ceil()),
        Nearest => idx(v.round_ties_even()),
        Midpoint => (idx(v.floor()) + idx(v.ceil())) / 2.0,
        _ => {
            let v = (p * (n + 1.0 - alpha - beta) + alpha - 1.0).clamp(0.0, n - 1.0);
            let lo = v.floor();
            let hi = (lo + 1.0).min(n - 1.0);
            idx(lo) + (v - lo) * (idx(hi) - idx(lo))
        }
    }
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-12 * b.abs().max(1.0),
        "{what}: {a} vs {b}"
    );
}

#[test]
fn ops_percentile_of_all_elements_by_every_method() {
    for n in [1usize, 2, 3, 4, 7, 10, 25] {
        let t = irregular([n]);
        let mut sorted = t.as_slice().to_vec();
        sorted.sort_by(f64::total_cmp);
        for m in METHODS {
            for q in [0.0, 1.0, 10.0, 25.0, 33.3, 50.0, 75.0, 90.0, 99.0, 100.0] {
                let got = both(percentile(&t, q, m).unwrap()).at([]);
                close(got, numpy(&sorted, q, m), &format!("n={n} q={q} {m:?}"));
            }
        }
    }
    // The known values of NumPy's documentation example.
    let a = Tensor::from_vec([6], vec![10.0, 7.0, 4.0, 3.0, 2.0, 1.0]).unwrap();
    assert_eq!(both(percentile(&a, 50.0, Linear).unwrap()).at([]), 3.5);
    assert_eq!(both(percentile(&a, 50.0, Lower).unwrap()).at([]), 3.0);
    assert_eq!(both(percentile(&a, 50.0, Higher).unwrap()).at([]), 4.0);
}

#[test]
fn ops_percentile_over_axes() {
    let t = irregular([4, 5, 6]);
    for m in METHODS {
        let p = both(percentile_axes(&t, [1], 30.0, m).unwrap());
        assert_eq!(p.sizes(), [4, 6]);
        for i in 0..4 {
            for k in 0..6 {
                let mut v: Vec<f64> = (0..5).map(|j| t.at([i, j, k])).collect();
                v.sort_by(f64::total_cmp);
                close(p.at([i, k]), numpy(&v, 30.0, m), "axis 1");
            }
        }
        let p = both(percentile_axes(&t, [0, 2], 80.0, m).unwrap());
        assert_eq!(p.sizes(), [5]);
        for j in 0..5 {
            let mut v: Vec<f64> = (0..4)
                .flat_map(|i| (0..6).map(move |k| (i, k)))
                .map(|(i, k)| t.at([i, j, k]))
                .collect();
            v.sort_by(f64::total_cmp);
            close(p.at([j]), numpy(&v, 80.0, m), "axes 0, 2");
        }
    }
}

#[test]
fn ops_percentile_nan_and_bad_arguments() {
    let t = Tensor::from_vec([3], vec![1.0, f64::NAN, 2.0]).unwrap();
    assert!(both(percentile(&t, 50.0, Linear).unwrap()).at([]).is_nan());
    let e = percentile(&t, 101.0, Linear).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("101"), "{e}");
    assert!(percentile(&t, f64::NAN, Linear).is_err());
    let m = irregular([2, 3]);
    assert_eq!(
        percentile_axes(&m, [2], 5.0, Linear).unwrap_err().kind(),
        ErrorKind::Index
    );
    let empty = Tensor::<f64, [usize; 1]>::zeros([0]);
    let err = percentile(&empty, 5.0, Linear)
        .unwrap()
        .eval(&Serial)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
}
