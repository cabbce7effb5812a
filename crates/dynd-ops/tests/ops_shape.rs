//! Shape operators (reading and, for lvalues, writing), on every executor.

use crate::common;
use common::{both, both_set, irregular, t10_12_14};
use dynd::ErrorKind;
use dynd_ops::*;

#[test]
fn ops_transpose_reverses_dims_and_transpose_matrix_swaps_the_last_two() {
    let t = t10_12_14();
    let tt = both(transpose(&t));
    assert_eq!(tt.sizes(), [14, 12, 10]);
    assert_eq!(tt.at([3, 5, 7]), t.at([7, 5, 3]));
    let tm = both(transpose_matrix(&t));
    assert_eq!(tm.sizes(), [10, 14, 12]);
    assert_eq!(tm.at([7, 3, 5]), t.at([7, 5, 3]));
    assert_eq!(
        permute(&t, [0, 0, 1]).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        permute(&t, [0, 1, 3]).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn ops_reverse_flipud_fliplr() {
    let a = Tensor::from_fn([3, 4], |[i, j]| (i * 4 + j) as i32);
    let r0 = both(reverse(&a, 0).unwrap());
    assert_eq!(r0.as_slice(), &[8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3]);
    assert_eq!(both(flipud(&a)), r0);
    let r1 = both(fliplr(&a));
    assert_eq!(r1.as_slice(), &[3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8]);
    assert_eq!(both(reverse(&a, 1).unwrap()), r1);
    assert_eq!(both(fliplr(fliplr(&a))), a);
    assert_eq!(reverse(&a, 2).unwrap_err().kind(), ErrorKind::Index);
    assert_eq!(fliplr(&a).name(), "reverse<1>(tensor)");
}

#[test]
fn ops_slice_follows_python_rules() {
    let a = Tensor::from_fn([10], |[i]| i as i64);
    let s = |start, end, step| both(slice(&a, [start], [end], [step]).unwrap()).into_vec();
    assert_eq!(s(8, END, -3), vec![8, 5, 2]);
    assert_eq!(s(-1, END, -1), (0..10).rev().collect::<Vec<_>>());
    assert_eq!(s(2, 100, 3), vec![2, 5, 8]);
    assert_eq!(s(-100, 3, 1), vec![0, 1, 2]);
    assert_eq!(s(5, 2, 1), Vec::<i64>::new());
    assert_eq!(s(-3, -1, 1), vec![7, 8]);
    assert_eq!(s(7, 2, -2), vec![7, 5, 3]);
    assert_eq!(
        slice(&a, [0], [5], [0]).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let m = Tensor::from_fn([4, 6], |[i, j]| (i * 6 + j) as i64);
    let sm = both(slice(&m, [-1, 1], [END, END], [-2, 2]).unwrap());
    assert_eq!(sm.sizes(), [2, 3]);
    assert_eq!(sm.as_slice(), &[19, 21, 23, 7, 9, 11]);
}

#[test]
fn ops_drop_dim_selects_one_index() {
    let t = t10_12_14();
    let d = both(drop_dim(&t, 1, -2).unwrap());
    assert_eq!(d.sizes(), [10, 14]);
    assert_eq!(d.at([3, 4]), t.at([3, 10, 4]));
    let d0 = both(drop_dim(drop_dim(&t, 0, 2).unwrap(), 1, 5).unwrap());
    assert_eq!(d0.sizes(), [12]);
    assert_eq!(d0.at([7]), t.at([2, 7, 5]));
    assert_eq!(drop_dim(&t, 1, 12).unwrap_err().kind(), ErrorKind::Index);
    assert_eq!(drop_dim(&t, 3, 0).unwrap_err().kind(), ErrorKind::Index);
    let v = Tensor::from_vec([3], vec![1.0f64, 2.0, 3.0]).unwrap();
    let scalar0 = both(drop_dim(&v, 0, 1).unwrap());
    assert_eq!(scalar0.as_slice(), &[2.0]);
}

#[test]
fn ops_reshape_and_flatten_keep_c_order() {
    let t = t10_12_14();
    let r = both(reshape(&t, [20, 6, 2, 7]).unwrap());
    assert_eq!(r.as_slice(), t.as_slice());
    let f = both(flatten(permute(&t, [2, 1, 0]).unwrap()));
    assert_eq!(f.sizes(), [1680]);
    assert_eq!(f.at([1]), t.at([1, 0, 0]));
    let e = reshape(&t, [7, 7]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("[10, 12, 14]") && e.to_string().contains("[7, 7]"));
}

#[test]
fn ops_clone_broadcasts_to_new_dims() {
    let v = Tensor::from_vec([3], vec![1i32, 2, 3]).unwrap();
    let rows = both(clone(&v, [2, KEEP]).unwrap());
    assert_eq!(rows.as_slice(), &[1, 2, 3, 1, 2, 3]);
    let cols = both(clone(&v, [KEEP, 2]).unwrap());
    assert_eq!(cols.as_slice(), &[1, 1, 2, 2, 3, 3]);
    let m = Tensor::from_fn([2, 3], |[i, j]| (i * 3 + j) as i32);
    let c = both(clone(&m, [KEEP, 4, KEEP]).unwrap());
    assert_eq!(c.sizes(), [2, 4, 3]);
    assert_eq!(c.at([1, 3, 2]), 5);
    let s = both(clone(sum(&v), [2, 2]).unwrap());
    assert_eq!(s.as_slice(), &[6; 4]);
    assert_eq!(
        clone(&v, [2, 3]).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn ops_stack_adds_a_dim() {
    let a = Tensor::from_fn([2, 3], |[i, j]| (i * 3 + j) as i32);
    let b = Tensor::from_fn([2, 3], |[i, j]| 10 + (i * 3 + j) as i32);
    let s0 = both(stack(0, &a, &b).unwrap());
    assert_eq!(s0.sizes(), [2, 2, 3]);
    assert_eq!(&s0.as_slice()[..6], a.as_slice());
    let s2 = both(stack(2, &a, &b).unwrap());
    assert_eq!(s2.sizes(), [2, 3, 2]);
    assert_eq!(s2.as_slice()[..4], [0, 10, 1, 11]);
    let s1 = both(stack(1, &a, &b).unwrap());
    assert_eq!(s1.at([1, 1, 2]), 15);
    assert_eq!(stack(3, &a, &b).unwrap_err().kind(), ErrorKind::Index);
    let c = Tensor::<i32, _>::zeros([3, 2]);
    assert_eq!(stack(0, &a, &c).unwrap_err().kind(), ErrorKind::Broadcast);
}

#[test]
fn ops_repmat_shift_and_pad() {
    let a = Tensor::from_fn([2, 3], |[i, j]| (i * 3 + j) as i32);
    let r = both(repmat(&a, [2, 3]));
    assert_eq!(r.sizes(), [4, 9]);
    for i in 0..4 {
        for j in 0..9 {
            assert_eq!(r.at([i, j]), a.at([i % 2, j % 3]));
        }
    }
    let v = Tensor::from_fn([5], |[i]| i as i32);
    // NumPy's roll: element i is element (i - amount) mod n.
    assert_eq!(both(shift(&v, 0, 2).unwrap()).as_slice(), &[3, 4, 0, 1, 2]);
    assert_eq!(both(shift(&v, 0, -1).unwrap()).as_slice(), &[1, 2, 3, 4, 0]);
    assert_eq!(both(shift(&v, 0, 12).unwrap()).as_slice(), &[3, 4, 0, 1, 2]);
    assert_eq!(
        both(shift(&a, 1, 1).unwrap()).as_slice(),
        &[2, 0, 1, 5, 3, 4]
    );
    let p = both(pad(&v, 0, 2, 1, PadMode::Constant(-1)).unwrap());
    assert_eq!(p.as_slice(), &[-1, -1, 0, 1, 2, 3, 4, -1]);
    let e = both(pad(&v, 0, 1, 3, PadMode::Edge).unwrap());
    assert_eq!(e.as_slice(), &[0, 0, 1, 2, 3, 4, 4, 4, 4]);
    let pa = both(pad(&a, 0, 1, 0, PadMode::Constant(9)).unwrap());
    assert_eq!(pa.as_slice(), &[9, 9, 9, 0, 1, 2, 3, 4, 5]);
    let pe = both(pad(&a, 1, 1, 1, PadMode::Edge).unwrap());
    assert_eq!(pe.as_slice(), &[0, 0, 1, 2, 2, 3, 3, 4, 5, 5]);
    let empty = Tensor::<i32, _>::zeros([0]);
    assert_eq!(
        pad(&empty, 0, 1, 0, PadMode::Edge).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn ops_diag_extracts_and_embeds() {
    let m = Tensor::from_fn([3, 4], |[i, j]| (i * 4 + j) as i32);
    assert_eq!(both(diag(&m, 0)).as_slice(), &[0, 5, 10]);
    assert_eq!(both(diag(&m, 1)).as_slice(), &[1, 6, 11]);
    assert_eq!(both(diag(&m, -1)).as_slice(), &[4, 9]);
    assert_eq!(both(diag(&m, 9)).sizes(), [0]);
    let v = Tensor::from_vec([2], vec![7i32, 8]).unwrap();
    assert_eq!(both(diag_embed(&v, 0)).as_slice(), &[7, 0, 0, 8]);
    assert_eq!(
        both(diag_embed(&v, 1)).as_slice(),
        &[0, 7, 0, 0, 0, 8, 0, 0, 0]
    );
    assert_eq!(
        both(diag_embed(&v, -1)).as_slice(),
        &[0, 0, 0, 7, 0, 0, 0, 8, 0]
    );
}

#[test]
fn ops_lvalues_permute_slice_reverse_accept_set() {
    let b = Tensor::from_fn([4, 3], |[i, j]| (i * 3 + j) as f64);
    let init = Tensor::<f64, [usize; 2]>::zeros([3, 4]);
    let out = both_set(&init, |o, ex| {
        permute(o.view_mut(), [1, 0])
            .unwrap()
            .set(&b)
            .run(ex)
            .unwrap()
    });
    assert_eq!(out, both(transpose(&b)));
    // Every other column, backwards.
    let init = Tensor::<f64, [usize; 2]>::full([2, 6], -1.0);
    let col = Tensor::from_fn([2, 3], |[i, j]| (i * 10 + j) as f64);
    let out = both_set(&init, |o, ex| {
        slice(o.view_mut(), [0, -1], [END, END], [1, -2])
            .unwrap()
            .set(&col)
            .run(ex)
            .unwrap()
    });
    assert_eq!(
        out.as_slice(),
        &[
            -1.0, 2.0, -1.0, 1.0, -1.0, 0.0, -1.0, 12.0, -1.0, 11.0, -1.0, 10.0
        ]
    );
    let out = both_set(&init, |o, ex| {
        reverse(o.view_mut(), 1)
            .unwrap()
            .set(range([2, 6], 1, 0.0, 1.0).unwrap())
            .run(ex)
            .unwrap()
    });
    assert_eq!(&out.as_slice()[..6], &[5.0, 4.0, 3.0, 2.0, 1.0, 0.0]);
    let out = both_set(&init, |o, ex| {
        drop_dim(o.view_mut(), 0, 1)
            .unwrap()
            .set(fill([6], 3.0))
            .run(ex)
            .unwrap()
    });
    assert_eq!(&out.as_slice()[6..], &[3.0; 6]);
    let out = both_set(&init, |o, ex| {
        diag(o.view_mut(), 1).set(fill([2], 8.0)).run(ex).unwrap()
    });
    assert_eq!(
        (out.at([0, 1]), out.at([1, 2]), out.at([0, 0])),
        (8.0, 8.0, -1.0)
    );
}

#[test]
fn ops_lvalues_collapse_reshape_concat_accept_set() {
    let t = t10_12_14();
    let init = Tensor::<i64, [usize; 3]>::zeros([10, 12, 14]);
    let flat = Tensor::from_fn([10, 168], |[n, x]| (n * 168 + x) as i64);
    let out = both_set(&init, |o, ex| {
        rcollapse::<2, _>(o.view_mut()).set(&flat).run(ex).unwrap()
    });
    assert_eq!(out, t);
    let rows = Tensor::from_fn([120, 14], |[r, k]| (r * 14 + k) as i64);
    let out = both_set(&init, |o, ex| {
        lcollapse::<2, _>(o.view_mut()).set(&rows).run(ex).unwrap()
    });
    assert_eq!(out, t);
    // Through a permute first: rows of the collapse are strided.
    let out = both_set(&init, |o, ex| {
        let p = permute(o.view_mut(), [2, 1, 0]).unwrap();
        rcollapse::<2, _>(p)
            .set(rcollapse::<2, _>(transpose(&t)))
            .run(ex)
            .unwrap()
    });
    assert_eq!(out, t);
    let out = both_set(&init, |o, ex| {
        reshape(o.view_mut(), [1680])
            .unwrap()
            .set(flatten(&t))
            .run(ex)
            .unwrap()
    });
    assert_eq!(out, t);
    let small = Tensor::<i32, [usize; 2]>::zeros([7, 4]);
    let out = both_set(&small, |o, ex| {
        let (top, bottom) = o.as_mut_slice().split_at_mut(16);
        let top = TensorViewMut::new(top, [4, 4]).unwrap();
        let bottom = TensorViewMut::new(bottom, [3, 4]).unwrap();
        concat(0, top, bottom)
            .unwrap()
            .set(range([7, 4], 0, 0, 1).unwrap())
            .run(ex)
            .unwrap()
    });
    assert_eq!(out.at([6, 3]), 6);
    assert_eq!(out.at([3, 0]), 3);
}

#[test]
fn ops_strided_views_with_negative_strides() {
    let data: Vec<f64> = (0..12).map(f64::from).collect();
    let v = TensorView::strided(&data, 11, [3, 4], [-4, -1]).unwrap();
    let r = both(v);
    assert_eq!(
        r.as_slice(),
        &[11.0, 10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0]
    );
    let cols = TensorView::strided(&data, 0, [4, 3], [1, 4]).unwrap();
    assert_eq!(
        both(cols + 0.0),
        both(transpose(TensorView::new(&data, [3, 4]).unwrap()))
    );
    assert_eq!(
        TensorView::strided(&data, 0, [4, 3], [1, 5])
            .unwrap_err()
            .kind(),
        ErrorKind::Index
    );
    let mut m = vec![0.0f64; 12];
    assert_eq!(
        TensorViewMut::strided(&mut m, 0, [3, 4], [0, 1])
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn ops_names_compose() {
    let t = t10_12_14();
    let e = lcollapse::<2, _>(permute(&t, [1, 0, 2]).unwrap());
    assert_eq!(e.name(), "lcollapse<2>(permute(tensor))");
    let e = sum_axes(
        slice(&t, [0, 0, 0], [END, END, END], [1, 2, 1]).unwrap(),
        [2],
    )
    .unwrap();
    assert_eq!(e.name(), "sum<1>(permute(slice(tensor)))");
    let x = irregular([3]);
    assert_eq!(sqrt(abs(&x) + 1.0).name(), "sqrt(add(abs(tensor), 1.0))");
}

/// Every combinator read along reversed and strided runs agrees with
/// element-by-element access (`get`), which has no run logic.
#[test]
fn ops_runs_backwards_and_strided_agree_with_get() {
    fn check<O: Operator<Elem = i64, Shape = [usize; 2]> + Clone>(op: O) {
        let name = op.name();
        let want = Tensor::from_fn(op.sizes(), |i| op.get(i));
        assert_eq!(both(op.clone()), want, "{name}");
        assert_eq!(both(fliplr(fliplr(op.clone()))), want, "{name}");
        let [r, c] = op.sizes();
        let lr = both(fliplr(op.clone()));
        let ud = both(flipud(op.clone()));
        let st = both(slice(op.clone(), [-1, -1], [END, END], [-2, -3]).unwrap());
        for i in 0..r {
            for j in 0..c {
                assert_eq!(lr.at([i, j]), want.at([i, c - 1 - j]), "{name}");
                assert_eq!(ud.at([i, j]), want.at([r - 1 - i, j]), "{name}");
            }
        }
        for i in 0..st.sizes()[0] {
            for j in 0..st.sizes()[1] {
                assert_eq!(
                    st.at([i, j]),
                    want.at([r - 1 - 2 * i, c - 1 - 3 * j]),
                    "{name}"
                );
            }
        }
        let tr = both(transpose(op.clone()));
        assert_eq!(tr, both(transpose(&want)), "{name}");
    }
    let a = Tensor::from_fn([4, 7], |[i, j]| (i * 7 + j) as i64);
    let b = Tensor::from_fn([3, 7], |[i, j]| 100 + (i * 7 + j) as i64);
    let c = Tensor::from_fn([4, 2], |[i, j]| 200 + (i * 2 + j) as i64);
    check(concat(0, &a, &b).unwrap());
    check(concat(1, &a, &c).unwrap());
    check(slice(concat(1, &a, &c).unwrap(), [0, 2], [END, END], [1, -1]).unwrap());
    check(repmat(&c, [2, 3]));
    check(shift(&a, 1, 3).unwrap());
    check(shift(&a, 0, -1).unwrap());
    check(pad(&a, 1, 2, 3, PadMode::Constant(-5)).unwrap());
    check(pad(&a, 0, 1, 2, PadMode::Edge).unwrap());
    check(clone(drop_dim(&a, 0, 1).unwrap(), [3, KEEP]).unwrap());
    check(lcollapse::<2, _>(reshape(&a, [2, 2, 7]).unwrap()));
    check(rcollapse::<2, _>(reshape(&a, [4, 7, 1]).unwrap()));
    check(reshape(&a, [7, 4]).unwrap());
    check(stack(0, diag(&a, 0), diag(&a, 1)).unwrap());
    check(&a + transpose(&Tensor::from_fn([7, 1], |[i, _]| i as i64)));
    check(cumsum(&a, 1).unwrap());
    check(sort(&a * -1, SortDir::Ascending));
}

#[test]
fn ops_writes_backwards_through_a_concatenation() {
    // Two disjoint buffers, concatenated along the columns,
    // written through a reversal so every run crosses the seam backwards.
    let mut l = vec![0i32; 8];
    let mut r = vec![0i32; 6];
    for ex in common::executors() {
        let left = TensorViewMut::new(&mut l, [2, 4]).unwrap();
        let right = TensorViewMut::new(&mut r, [2, 3]).unwrap();
        fliplr(concat(1, left, right).unwrap())
            .set(range([2, 7], 1, 0, 1).unwrap())
            .run(ex)
            .unwrap();
        assert_eq!(l, vec![6, 5, 4, 3, 6, 5, 4, 3]);
        assert_eq!(r, vec![2, 1, 0, 2, 1, 0]);
    }
}

/// Writing distinct values through an lvalue (forwards and reversed) and
/// reading them back through the same operator over the result gives the
/// values written.
#[test]
fn ops_lvalue_writes_read_back_through_the_same_operator() {
    macro_rules! check {
        ($sizes:expr, |$v:ident| $make:expr) => {{
            for reversed in [false, true] {
                for ex in common::executors() {
                    let mut t = Tensor::<i64, _>::full($sizes, -1);
                    let n = {
                        let $v = t.view();
                        let op = $make;
                        op.sizes()
                    };
                    let vals = Tensor::from_fn(n, |i| 1 + ravel(&i, &n) as i64);
                    {
                        let $v = t.view_mut();
                        let op = $make;
                        if reversed {
                            fliplr(op).set(fliplr(&vals)).run(ex).unwrap();
                        } else {
                            op.set(&vals).run(ex).unwrap();
                        }
                    }
                    let $v = t.view();
                    let op = $make;
                    let back = Tensor::from_fn(n, |i| op.get(i));
                    assert_eq!(
                        back,
                        vals,
                        "{} (reversed: {reversed}) on {}",
                        op.name(),
                        ex.name()
                    );
                }
            }
        }};
    }
    check!([3, 4, 5], |v| permute(v, [2, 0, 1]).unwrap());
    check!([3, 4, 5], |v| slice(
        v,
        [-1, 0, 4],
        [END, END, END],
        [-1, 2, -2]
    )
    .unwrap());
    check!([3, 4, 5], |v| reverse(v, 2).unwrap());
    check!([3, 4, 5], |v| rcollapse::<2, _>(drop_dim(v, 1, 2).unwrap()));
    check!([3, 4, 5], |v| lcollapse::<2, _>(v));
    check!([3, 4, 5], |v| rcollapse::<2, _>(
        permute(v, [1, 2, 0]).unwrap()
    ));
    check!([3, 4, 5], |v| reshape(v, [6, 2, 5]).unwrap());
    check!([3, 4, 5], |v| reshape(
        permute(v, [2, 1, 0]).unwrap(),
        [10, 6]
    )
    .unwrap());
    check!([4, 6], |v| diag(v, 2));
    check!([4, 6], |v| diag(v, -1));
}
