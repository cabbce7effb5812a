//! Reductions and transforms, on every executor.

use crate::common;
use common::{both, irregular};
use dynd::ErrorKind;
use dynd_ops::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn ops_sum_prod_mean_full_and_over_axes() {
    let a = irregular([4, 5, 6]);
    let xs = a.as_slice();
    let total: f64 = xs.iter().sum();
    assert!(close(both(sum(&a)).at([]), total));
    assert!(close(both(mean(&a)).at([]), total / 120.0));
    let s1 = both(sum_axes(&a, [1]).unwrap());
    assert_eq!(s1.sizes(), [4, 6]);
    for i in 0..4 {
        for k in 0..6 {
            let want: f64 = (0..5).map(|j| a.at([i, j, k])).sum();
            assert!(close(s1.at([i, k]), want));
        }
    }
    let s20 = both(sum_axes(&a, [2, 0]).unwrap());
    assert_eq!(s20.sizes(), [5]);
    for j in 0..5 {
        let want: f64 = (0..4)
            .flat_map(|i| (0..6).map(move |k| (i, k)))
            .map(|(i, k)| a.at([i, j, k]))
            .sum();
        assert!(close(s20.at([j]), want));
    }
    let ints = Tensor::from_fn([3, 4], |[i, j]| (i * 4 + j + 1) as i64);
    assert_eq!(
        both(prod_axes(&ints, [1]).unwrap()).as_slice(),
        &[24, 1680, 11880]
    );
    assert_eq!(both(sum(&ints)).as_slice(), &[78]);
    let m = both(mean_axes(&a, [0, 1]).unwrap());
    assert!(close(
        m.at([2]),
        (0..4)
            .flat_map(|i| (0..5).map(move |j| (i, j)))
            .map(|(i, j)| a.at([i, j, 2]))
            .sum::<f64>()
            / 20.0
    ));
    assert_eq!(sum_axes(&a, [1, 1]).unwrap_err().kind(), ErrorKind::Index);
    assert_eq!(sum_axes(&a, [3]).unwrap_err().kind(), ErrorKind::Index);
}

#[test]
fn ops_min_max_and_arg_positions_within_the_reduced_slice() {
    let a = Tensor::from_vec(
        [2, 5],
        vec![3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 9.0, 3.0],
    )
    .unwrap();
    assert_eq!(both(max(&a)).as_slice(), &[9.0]);
    assert_eq!(both(min(&a)).as_slice(), &[1.0]);
    assert_eq!(both(argmax(&a)).as_slice(), &[5]);
    assert_eq!(both(argmin(&a)).as_slice(), &[1]);
    assert_eq!(both(max_axes(&a, [1]).unwrap()).as_slice(), &[5.0, 9.0]);
    assert_eq!(
        both(min_axes(&a, [0]).unwrap()).as_slice(),
        &[3.0, 1.0, 4.0, 1.0, 3.0]
    );
    // Positions are within each output's slice; ties give the first.
    assert_eq!(both(argmax_axes(&a, [1]).unwrap()).as_slice(), &[4, 0]);
    assert_eq!(both(argmin_axes(&a, [1]).unwrap()).as_slice(), &[1, 1]);
    assert_eq!(
        both(argmax_axes(&a, [0]).unwrap()).as_slice(),
        &[1, 1, 1, 1, 0]
    );
    // Over two axes, the position is flat over the axes in the order given.
    let t = Tensor::from_fn([2, 3, 4], |[i, j, k]| {
        if (i, j, k) == (1, 2, 1) || (i, j, k) == (0, 1, 3) {
            10
        } else {
            0
        }
    });
    assert_eq!(both(argmax_axes(&t, [1, 2]).unwrap()).as_slice(), &[7, 9]);
    assert_eq!(both(argmax_axes(&t, [2, 1]).unwrap()).as_slice(), &[10, 5]);
    let n = Tensor::from_vec([4], vec![1.0, f64::NAN, 7.0, f64::NAN]).unwrap();
    assert!(both(max(&n)).at([]).is_nan());
    assert!(both(min(&n)).at([]).is_nan());
    assert_eq!(both(argmax(&n)).as_slice(), &[1]);
    assert_eq!(both(argmin(&n)).as_slice(), &[1]);
}

#[test]
fn ops_any_and_all() {
    let b = Tensor::from_vec([2, 3], vec![false, false, true, true, true, true]).unwrap();
    assert_eq!(both(any(&b)).as_slice(), &[true]);
    assert_eq!(both(all(&b)).as_slice(), &[false]);
    assert_eq!(both(any_axes(&b, [1]).unwrap()).as_slice(), &[true, true]);
    assert_eq!(both(all_axes(&b, [1]).unwrap()).as_slice(), &[false, true]);
    assert_eq!(
        both(all_axes(&b, [0]).unwrap()).as_slice(),
        &[false, false, true]
    );
    let empty = Tensor::<bool, [usize; 1]>::zeros([0]);
    assert_eq!(both(any(&empty)).as_slice(), &[false]);
    assert_eq!(both(all(&empty)).as_slice(), &[true]);
    let a = irregular([3, 7]);
    assert_eq!(both(any(isnan(&a))).as_slice(), &[false]);
}

#[test]
fn ops_var_and_std_with_ddof() {
    let a = irregular([3, 50]);
    for ddof in [0, 1, 2] {
        let v = both(var_axes(&a, [1], ddof).unwrap());
        let s = both(std_axes(&a, [1], ddof).unwrap());
        for i in 0..3 {
            let row: Vec<f64> = (0..50).map(|j| a.at([i, j])).collect();
            let m = row.iter().sum::<f64>() / 50.0;
            let want = row.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (50 - ddof) as f64;
            assert!(close(v.at([i]), want), "{} vs {want}", v.at([i]));
            assert!(close(s.at([i]), want.sqrt()));
        }
    }
    let x = Tensor::from_vec([4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!(both(var(&x, 0)).as_slice(), &[1.25]);
    assert!(both(var(&x, 4)).at([]).is_nan());
    assert_eq!(both(std(fill([9], 2.5f64), 1)).as_slice(), &[0.0]);
}

#[test]
fn ops_median_odd_even_and_nan() {
    let odd = Tensor::from_vec([5], vec![3.0, 1.0, 4.0, 1.0, 5.0]).unwrap();
    assert_eq!(both(median(&odd)).as_slice(), &[3.0]);
    let even = Tensor::from_vec([2, 4], vec![4.0, 1.0, 3.0, 2.0, 10.0, -1.0, 7.0, 0.0]).unwrap();
    assert_eq!(both(median(&even)).as_slice(), &[2.5]);
    assert_eq!(
        both(median_axes(&even, [1]).unwrap()).as_slice(),
        &[2.5, 3.5]
    );
    assert_eq!(
        both(median_axes(&even, [0]).unwrap()).as_slice(),
        &[7.0, 0.0, 5.0, 1.0]
    );
    let n = Tensor::from_vec([3], vec![1.0, f64::NAN, 2.0]).unwrap();
    assert!(both(median(&n)).at([]).is_nan());
    let e = median(Tensor::<f64, [usize; 1]>::zeros([0]).view())
        .eval(&Serial)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn ops_cumsum_along_each_axis() {
    let a = Tensor::from_fn([3, 4], |[i, j]| (i * 4 + j) as i32);
    assert_eq!(
        both(cumsum(&a, 1).unwrap()).as_slice(),
        &[0, 1, 3, 6, 4, 9, 15, 22, 8, 17, 27, 38]
    );
    assert_eq!(
        both(cumsum(&a, 0).unwrap()).as_slice(),
        &[0, 1, 2, 3, 4, 6, 8, 10, 12, 15, 18, 21]
    );
    assert_eq!(cumsum(&a, 2).unwrap_err().kind(), ErrorKind::Index);
    // Read without an executor (no prepare step), the values agree.
    let f = irregular([5, 6]);
    let c = cumsum(&f, 1).unwrap();
    let prepared = both(c.clone());
    for i in 0..5 {
        for j in 0..6 {
            assert_eq!(c.get([i, j]).to_bits(), prepared.at([i, j]).to_bits());
        }
    }
}

#[test]
fn ops_big_reductions_span_several_blocks_and_agree() {
    let n = 2 * REDUCE_BLOCK + 4321;
    let a = Tensor::from_fn([n], |[i]| ((i * 7919) % 1000) as f64 * 1e-3 + 1.0);
    let exact: f64 = a.as_slice().iter().sum();
    let s = both(sum(&a)).at([]);
    assert!((s - exact).abs() < 1e-6 * exact);
    let by_rows = both(sum_axes(reshape(&a, [1, n]).unwrap(), [1]).unwrap());
    assert_eq!(by_rows.at([0]).to_bits(), s.to_bits());
    assert!(both(var(&a, 0)).at([]) > 0.0);
    assert_eq!(
        both(argmax(&a)).at([]),
        a.as_slice()
            .iter()
            .position(|&x| x == both(max(&a)).at([]))
            .unwrap() as i64
    );
    // Evaluated lazily (no prepare) it is the same value.
    assert_eq!(sum(&a).get([]).to_bits(), s.to_bits());
    // Many small outputs.
    let m = Tensor::from_fn([3000, 40], |[i, j]| (i + j) as f64);
    let r = both(sum_axes(&m, [1]).unwrap());
    assert_eq!(
        r.at([2999]),
        (0..40).map(|j| (2999 + j) as f64).sum::<f64>()
    );
}

#[test]
fn ops_empty_reductions() {
    let e = Tensor::<f64, [usize; 2]>::zeros([3, 0]);
    assert_eq!(both(sum_axes(&e, [1]).unwrap()).as_slice(), &[0.0; 3]);
    assert_eq!(both(prod(&e)).as_slice(), &[1.0]);
    assert!(both(mean(&e)).at([]).is_nan());
    let err = max_axes(&e, [1]).unwrap().eval(&Serial).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        argmin(&e).eval(&Serial).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    // Reducing to nothing is fine.
    assert_eq!(
        both(max_axes(Tensor::<f64, [usize; 2]>::zeros([0, 3]).view(), [1]).unwrap()).sizes(),
        [0]
    );
}

fn naive_matmul(a: &Tensor<f64, [usize; 2]>, b: &Tensor<f64, [usize; 2]>) -> Vec<f64> {
    let ([m, k], [_, n]) = (a.sizes(), b.sizes());
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|p| a.at([i, p]) * b.at([p, j])).sum();
        }
    }
    c
}

#[test]
fn ops_matmul_matches_a_naive_product() {
    let a = irregular([130, 20]);
    let b = irregular([20, 9]);
    let c = both(matmul(&a, &b).unwrap());
    assert_eq!(c.sizes(), [130, 9]);
    for (x, y) in c.as_slice().iter().zip(naive_matmul(&a, &b)) {
        assert!(close(*x, y), "{x} vs {y}");
    }
    // Inputs are expressions; the result feeds an expression.
    let at = both(transpose(&a));
    let c2 = both(matmul(transpose(&at), &b).unwrap() * 2.0 + 1.0);
    for (x, y) in c2.as_slice().iter().zip(c.as_slice()) {
        assert!(close(*x, y * 2.0 + 1.0));
    }
    // Batched.
    let ba = irregular([3, 4, 5]);
    let bb = irregular([3, 5, 2]);
    let bc = both(matmul(&ba, &bb).unwrap());
    assert_eq!(bc.sizes(), [3, 4, 2]);
    for t in 0..3 {
        let at = both(drop_dim(&ba, 0, t as isize).unwrap());
        let bt = both(drop_dim(&bb, 0, t as isize).unwrap());
        for (i, y) in naive_matmul(&at, &bt).into_iter().enumerate() {
            assert!(close(bc.as_slice()[t * 8 + i], y));
        }
    }
    let f = Tensor::from_vec([1, 2], vec![1.0f32, 2.0]).unwrap();
    assert_eq!(
        both(matmul(transpose(&f), &f).unwrap()).as_slice(),
        &[1.0, 2.0, 2.0, 4.0]
    );
    // Read without an executor, element by element.
    assert!(close(matmul(&a, &b).unwrap().get([7, 3]), c.at([7, 3])));
}

#[test]
fn ops_matmul_shape_errors_name_both_shapes() {
    let a = irregular([3, 4]);
    let b = irregular([5, 2]);
    let e = matmul(&a, &b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast);
    assert!(
        e.to_string().contains("[3, 4]") && e.to_string().contains("[5, 2]"),
        "{e}"
    );
    let e = matmul(&irregular([2, 3, 4]), &irregular([3, 4, 1])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast);
}

#[test]
fn ops_sort_and_argsort_rows() {
    let a = Tensor::from_vec(
        [2, 5],
        vec![3.0, f64::NAN, 1.0, 2.0, 1.0, 5.0, 4.0, -1.0, 4.0, 0.0],
    )
    .unwrap();
    let s = both(sort(&a, SortDir::Ascending));
    assert_eq!(&s.as_slice()[..4], &[1.0, 1.0, 2.0, 3.0]);
    assert!(s.at([0, 4]).is_nan());
    assert_eq!(&s.as_slice()[5..], &[-1.0, 0.0, 4.0, 4.0, 5.0]);
    let d = both(sort(&a, SortDir::Descending));
    assert!(d.at([0, 0]).is_nan());
    assert_eq!(&d.as_slice()[5..], &[5.0, 4.0, 4.0, 0.0, -1.0]);
    let i = both(argsort(&a, SortDir::Ascending));
    assert_eq!(i.as_slice(), &[2, 4, 3, 0, 1, 2, 4, 1, 3, 0]);
    let id = both(argsort(&a, SortDir::Descending));
    assert_eq!(&id.as_slice()[5..], &[0, 1, 3, 4, 2]);
    // Sorting along another axis: permute it last.
    let cols = both(transpose(sort(transpose(&a), SortDir::Ascending)));
    assert_eq!(cols.at([0, 2]), -1.0);
    assert_eq!(sort(&a, SortDir::Ascending).get([1, 4]), 5.0);
    assert_eq!(argsort(&a, SortDir::Ascending).get([1, 0]), 2);
    let big = irregular([3, 30_000]);
    let sb = both(sort(&big, SortDir::Ascending));
    assert!(sb.as_slice()[..30_000].windows(2).all(|w| w[0] <= w[1]));
}
