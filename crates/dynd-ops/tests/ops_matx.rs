//! MatX parity: shift's direction, n-ary concat and stack, flips of rank 1,
//! the FFT shifts, linspace over columns, broadcasting across ranks and
//! complex elements; expected values by plain loops, on every executor.

use crate::common;
use common::{both, both_set, irregular};
use dynd::ErrorKind;
use dynd_ops::*;

type C = Complex<f64>;

#[test]
fn ops_shift_is_numpy_roll() {
    let v = Tensor::from_fn([5], |[i]| i as i32);
    assert_eq!(both(shift(&v, 0, -1).unwrap()).as_slice(), &[1, 2, 3, 4, 0]);
    for n in [1usize, 4, 7] {
        let a = irregular([3, n]);
        for s in [-9isize, -1, 0, 1, 2, 5, isize::MIN, isize::MAX] {
            let got = both(shift(&a, 1, s).unwrap());
            let by = both(shift_by(&a, 1, scalar(s as i64)).unwrap());
            for i in 0..3 {
                for j in 0..n {
                    let src = (j as i128 - s as i128).rem_euclid(n as i128) as usize;
                    assert_eq!(got.at([i, j]), a.at([i, src]), "n={n} s={s}");
                    if s != isize::MIN && s != isize::MAX {
                        assert_eq!(by.at([i, j]), a.at([i, src]), "by n={n} s={s}");
                    }
                }
            }
        }
    }
    // The amount as a rank-0 operator computed when the expression runs.
    let amount = Tensor::from_vec([2], vec![1i64, 1]).unwrap();
    let r = both(shift_by(&v, 0, sum(&amount)).unwrap());
    assert_eq!(r.as_slice(), &[3, 4, 0, 1, 2]);
    assert_eq!(
        shift_by(&v, 1, scalar(1)).unwrap_err().kind(),
        ErrorKind::Index
    );
}

#[test]
fn ops_fftshift_and_ifftshift() {
    for n in [1usize, 2, 5, 6] {
        let a = Tensor::from_fn([2, n], |[i, j]| (i * 10 + j) as i64);
        let f = both(fftshift1d(&a));
        let g = both(ifftshift1d(&a));
        for i in 0..2 {
            for j in 0..n {
                // NumPy: fftshift rolls by n / 2, ifftshift by -(n / 2).
                assert_eq!(f.at([i, j]), a.at([i, (j + n - n / 2) % n]));
                assert_eq!(g.at([i, j]), a.at([i, (j + n / 2) % n]));
            }
        }
        assert_eq!(both(ifftshift1d(fftshift1d(&a))), a);
    }
    let m = Tensor::from_fn([3, 5, 4], |[b, i, j]| (b * 100 + i * 10 + j) as i64);
    let f = both(fftshift2d(&m));
    let g = both(ifftshift2d(&m));
    for b in 0..3 {
        for i in 0..5 {
            for j in 0..4 {
                assert_eq!(f.at([b, i, j]), m.at([b, (i + 3) % 5, (j + 2) % 4]));
                assert_eq!(g.at([b, i, j]), m.at([b, (i + 2) % 5, (j + 2) % 4]));
            }
        }
    }
    assert_eq!(both(ifftshift2d(fftshift2d(&m))), m);
}

#[test]
fn ops_concat_n_and_stack_n() {
    let parts: Vec<Tensor<i64, [usize; 2]>> = (0..4)
        .map(|k| Tensor::from_fn([3, k + 1], |[i, j]| (k * 100 + i * 10 + j) as i64))
        .collect();
    let c = both(concat_n(1, parts.iter()).unwrap());
    assert_eq!(c.sizes(), [3, 10]);
    for i in 0..3 {
        let mut row = Vec::new();
        for p in &parts {
            row.extend((0..p.sizes()[1]).map(|j| p.at([i, j])));
        }
        assert_eq!((0..10).map(|j| c.at([i, j])).collect::<Vec<_>>(), row);
    }
    // Read backwards across the seams.
    let r = both(reverse(concat_n(1, parts.iter()).unwrap(), 1).unwrap());
    assert_eq!(r.at([2, 0]), c.at([2, 9]));
    assert_eq!(r.at([1, 5]), c.at([1, 4]));
    // Written through.
    let mut outs: Vec<Tensor<i64, [usize; 1]>> = (0..3).map(|k| Tensor::zeros([k + 2])).collect();
    concat_n(0, outs.iter_mut().map(|t| t.view_mut()))
        .unwrap()
        .set(range([9], 0, 0i64, 1).unwrap())
        .run(&Parallel::new(2).unwrap())
        .unwrap();
    assert_eq!(outs[0].as_slice(), &[0, 1]);
    assert_eq!(outs[2].as_slice(), &[5, 6, 7, 8]);

    let vs: Vec<Tensor<f64, [usize; 2]>> = (0..5).map(|_| irregular([2, 3])).collect();
    for axis in 0..3 {
        let s = both(stack_n(axis, vs.iter()).unwrap());
        for (k, v) in vs.iter().enumerate() {
            for i in 0..2 {
                for j in 0..3 {
                    let idx = match axis {
                        0 => [k, i, j],
                        1 => [i, k, j],
                        _ => [i, j, k],
                    };
                    assert_eq!(s.at(idx), v.at([i, j]));
                }
            }
        }
    }
    let none: Vec<&Tensor<f64, [usize; 2]>> = Vec::new();
    assert_eq!(
        concat_n(0, none.clone()).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        stack_n(0, none).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let e = concat_n(1, [&vs[0], &irregular([3, 3])]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast);
    assert!(e.to_string().contains("operand 1"), "{e}");
    assert_eq!(
        stack_n(0, [&vs[0], &irregular([3, 2])]).unwrap_err().kind(),
        ErrorKind::Broadcast
    );
    assert_eq!(stack_n(3, vs.iter()).unwrap_err().kind(), ErrorKind::Index);
}

#[test]
fn ops_flips_of_rank_one_reverse_dim_zero() {
    let v = Tensor::from_fn([5], |[i]| i as i32);
    assert_eq!(both(flipud(&v)).as_slice(), &[4, 3, 2, 1, 0]);
    assert_eq!(both(fliplr(&v)).as_slice(), &[4, 3, 2, 1, 0]);
}

#[test]
fn ops_linspace_over_columns() {
    let l = both(linspace_n(&[0.0f64, 1.0], &[1.0, 3.0], 10, 0).unwrap());
    assert_eq!(l.sizes(), [10, 2]);
    let t = both(linspace_n(&[0.0f64, 1.0], &[1.0, 3.0], 10, 1).unwrap());
    assert_eq!(t.sizes(), [2, 10]);
    let (first, last) = ([0.0, 1.0], [1.0, 3.0]);
    for c in 0..2 {
        for i in 0..10 {
            let want = if i == 9 {
                last[c]
            } else {
                first[c] + i as f64 * ((last[c] - first[c]) / 9.0)
            };
            assert_eq!(l.at([i, c]), want);
            assert_eq!(t.at([c, i]), want);
        }
    }
    assert_eq!(
        linspace_n(&[0.0f64], &[1.0, 2.0], 3, 0).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        linspace_n(&[0.0f64], &[1.0], 3, 2).unwrap_err().kind(),
        ErrorKind::Index
    );
}

#[test]
fn ops_rank_zero_and_cross_rank_broadcasting() {
    let t4 = irregular([2, 3, 2, 4]);
    let t0 = Tensor::from_vec([], vec![2.5]).unwrap();
    let p = both(&t4 * &t0);
    assert_eq!(p.sizes(), [2, 3, 2, 4]);
    for (i, &v) in t4.as_slice().iter().enumerate() {
        assert_eq!(p.as_slice()[i], v * 2.5);
    }
    let q = both(&t0 - &t4);
    for (i, &v) in t4.as_slice().iter().enumerate() {
        assert_eq!(q.as_slice()[i], 2.5 - v);
    }
    // set from a rank-0 operator fills the output.
    let filled = both_set(&t4, |out, ex| out.set(&t0).run(ex).unwrap());
    assert!(filled.as_slice().iter().all(|&v| v == 2.5));
    let filled = both_set(&t4, |out, ex| out.set(sum(&t0)).run(ex).unwrap());
    assert!(filled.as_slice().iter().all(|&v| v == 2.5));
    // Leading dims added as NumPy: [4] and [3, 1] with [2, 3, 2, 4].
    let row = irregular([4]);
    let col = irregular([3, 1, 1]);
    let r = both(add(&t4, &row));
    let c = both(mul(&col, &t4));
    let rc = both(&col + &row);
    assert_eq!(rc.sizes(), [3, 1, 4]);
    for (a, b, d, e) in (0..2)
        .flat_map(|a| (0..3).map(move |b| (a, b)))
        .flat_map(|(a, b)| (0..2).map(move |d| (a, b, d)))
        .flat_map(|(a, b, d)| (0..4).map(move |e| (a, b, d, e)))
    {
        let x = t4.at([a, b, d, e]);
        assert_eq!(r.at([a, b, d, e]), x + row.at([e]));
        assert_eq!(c.at([a, b, d, e]), col.at([b, 0, 0]) * x);
        assert_eq!(rc.at([b, 0, e]), col.at([b, 0, 0]) + row.at([e]));
    }
    // set broadcasts a lower rank to the output's sizes.
    let out = both_set(&irregular([2, 4]), |o, ex| o.set(&row).run(ex).unwrap());
    for i in 0..2 {
        for j in 0..4 {
            assert_eq!(out.at([i, j]), row.at([j]));
        }
    }
    // Shapes that do not broadcast are errors naming both.
    let bad = irregular([5]);
    let e = add(&t4, &bad).eval(&Serial).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast);
    assert!(e.to_string().contains("[1, 1, 1, 5]"), "{e}");
    let mut small = Tensor::<f64, [usize; 2]>::zeros([2, 4]);
    let e = small.set(&bad).run(&Serial).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast);
}

#[test]
fn ops_complex_elementwise() {
    let z = Tensor::from_fn([7], |[i]| {
        C::new(i as f64 * 0.5 - 1.0, 1.0 - i as f64 * 0.3)
    });
    let w = Tensor::from_fn([7], |[i]| C::new(0.25 + i as f64, -0.5));
    let s = both(&z + &w);
    let d = both(&z - &w);
    let m = both(&z * &w);
    let q = both(&z / &w);
    let n = both(-&z);
    let k = both(&z * C::new(0.0, 1.0));
    let ex = both(exp(&z));
    let sq = both(sqrt(&z));
    let lg = both(log(&z));
    let pw = both(pow(&z, &w));
    let ab = both(abs(&z));
    let re = both(real(&z));
    let im = both(imag(&z));
    let cj = both(conj(&z));
    let an = both(angle(&z));
    let eqs = both(eq(&z, &z));
    let nan = both(isnan(&z));
    for i in 0..7 {
        let (a, b) = (z.at([i]), w.at([i]));
        assert_eq!(s.at([i]), a + b);
        assert_eq!(d.at([i]), a - b);
        assert_eq!(m.at([i]), a * b);
        assert_eq!(q.at([i]), a / b);
        assert_eq!(n.at([i]), -a);
        assert_eq!(k.at([i]), C::new(-a.im, a.re));
        assert_eq!(ex.at([i]), a.exp());
        assert_eq!(sq.at([i]), a.sqrt());
        assert_eq!(lg.at([i]), a.ln());
        assert_eq!(pw.at([i]), a.powc(b));
        assert_eq!(ab.at([i]), (a.re * a.re + a.im * a.im).sqrt());
        assert_eq!(re.at([i]), a.re);
        assert_eq!(im.at([i]), a.im);
        assert_eq!(cj.at([i]), C::new(a.re, -a.im));
        assert_eq!(an.at([i]), a.im.atan2(a.re));
        assert!(eqs.at([i]));
        assert!(!nan.at([i]));
    }
    let zf = Tensor::from_vec(
        [2],
        vec![Complex::new(1.0f32, 2.0), Complex::new(-3.0, 0.5)],
    )
    .unwrap();
    assert_eq!(
        both(&zf * &zf).at([1]),
        Complex::new(-3.0f32, 0.5) * Complex::new(-3.0, 0.5)
    );
    assert_eq!(both(to_complex(re.view())).at([2]), C::new(re.at([2]), 0.0));
    // Rank-0 complex broadcasting.
    let c0 = Tensor::from_vec([], vec![C::new(0.0, 2.0)]).unwrap();
    assert_eq!(both(&z * &c0).at([3]), z.at([3]) * C::new(0.0, 2.0));
}
