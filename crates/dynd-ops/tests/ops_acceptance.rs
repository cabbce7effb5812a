//! The reference cases of MatX's operator tests, each on every executor.

use crate::common;
use common::{both, t10_12_14};
use dynd_ops::*;

#[test]
fn ops_rcollapse_2_of_t10_12_14() {
    let t = t10_12_14();
    let r = rcollapse::<2, _>(&t);
    assert_eq!(r.sizes(), [10, 168]);
    assert_eq!(r.name(), "rcollapse<2>(tensor)");
    let out = both(r);
    for n in 0..10 {
        for m in 0..12 {
            for k in 0..14 {
                assert_eq!(out.at([n, m * 14 + k]), t.at([n, m, k]));
            }
        }
    }
}

#[test]
fn ops_lcollapse_2_of_t10_12_14() {
    let t = t10_12_14();
    let l = lcollapse::<2, _>(&t);
    assert_eq!(l.sizes(), [120, 14]);
    let out = both(l);
    for n in 0..10 {
        for m in 0..12 {
            for k in 0..14 {
                assert_eq!(out.at([n * 12 + m, k]), t.at([n, m, k]));
            }
        }
    }
    // Collapsing one dim does nothing: the input comes back as it was.
    let same: &Tensor<i64, [usize; 3]> = lcollapse::<1, _>(&t);
    assert!(std::ptr::eq(same, &t));
}

#[test]
fn ops_permute_a10_20_30_by_2_0_1() {
    let a = Tensor::from_fn([10, 20, 30], |[i, j, k]| (i * 600 + j * 30 + k) as f64);
    let p = permute(&a, [2, 0, 1]).unwrap();
    assert_eq!(p.sizes(), [30, 10, 20]);
    let out = both(p);
    for i in 0..30 {
        for j in 0..10 {
            for k in 0..20 {
                assert_eq!(out.at([i, j, k]), a.at([j, k, i]));
            }
        }
    }
}

#[test]
fn ops_slice_negative_starts_equal_positive() {
    let a = Tensor::from_fn([6, 8], |[i, j]| (i * 8 + j) as i32);
    let neg = both(slice(&a, [-4, -6], [END, -1], [1, 2]).unwrap());
    let pos = both(slice(&a, [2, 2], [6, 7], [1, 2]).unwrap());
    assert_eq!(neg.sizes(), [4, 3]);
    assert_eq!(neg, pos);
    assert_eq!(neg.at([0, 0]), a.at([2, 2]));
    assert_eq!(neg.at([3, 2]), a.at([5, 6]));
}

#[test]
fn ops_concat_4x4_and_3x4_along_0() {
    let a = Tensor::from_fn([4, 4], |[i, j]| (i * 4 + j) as f32);
    let b = Tensor::from_fn([3, 4], |[i, j]| 100.0 + (i * 4 + j) as f32);
    let c = concat(0, &a, &b).unwrap();
    assert_eq!(c.sizes(), [7, 4]);
    let out = both(c);
    for i in 0..7 {
        for j in 0..4 {
            let want = if i < 4 {
                a.at([i, j])
            } else {
                b.at([i - 4, j])
            };
            assert_eq!(out.at([i, j]), want);
        }
    }
}

#[test]
fn ops_sum_axes_1_2_3_of_ones_3_4_5_6() {
    let s = sum_axes(ones::<f64, _>([3, 4, 5, 6]), [1, 2, 3]).unwrap();
    assert_eq!(s.sizes(), [3]);
    assert_eq!(both(s).as_slice(), &[120.0, 120.0, 120.0]);
}

#[test]
fn ops_linspace_1_100_100() {
    let l = linspace(1.0f64, 100.0, 100);
    assert_eq!(l.sizes(), [100]);
    let out = both(l);
    for i in 0..100 {
        assert_eq!(out.at([i]), (i + 1) as f64);
    }
}
