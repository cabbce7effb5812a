//! FFTs against a direct DFT written here, on every executor.

use crate::common;
use common::both;
use dynd_ops::*;
use std::f64::consts::PI;

type C = Complex<f64>;

/// The direct DFT: `X[k] = sum_j x[j] e^(sign 2 pi i j k / n)`.
fn dft(x: &[C], inverse: bool) -> Vec<C> {
    let n = x.len();
    let sign = if inverse { 1.0 } else { -1.0 };
    (0..n)
        .map(|k| {
            let mut acc = C::new(0.0, 0.0);
            for (j, &v) in x.iter().enumerate() {
                let ang = sign * 2.0 * PI * ((j * k) % n) as f64 / n as f64;
                acc += v * C::new(ang.cos(), ang.sin());
            }
            acc
        })
        .collect()
}

fn signal(n: usize, seed: usize) -> Vec<C> {
    (0..n)
        .map(|j| {
            let a = ((j * 7919 + seed * 104729) % 1009) as f64 / 1009.0 - 0.5;
            let b = ((j * 6151 + seed * 3571) % 997) as f64 / 997.0 - 0.5;
            C::new(a, b)
        })
        .collect()
}

fn close(got: &[C], want: &[C], what: &str) {
    let scale = want.iter().map(|z| z.norm()).fold(1.0, f64::max);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).norm() <= 1e-12 * scale,
            "{what}: element {i}: {g} vs {w}"
        );
    }
    assert_eq!(got.len(), want.len());
}

#[test]
fn ops_fft_matches_a_direct_dft_on_sizes_1_to_64() {
    for n in 1..=64 {
        let x = signal(n, n);
        let t = Tensor::from_vec([n], x.clone()).unwrap();
        let f = both(fft(&t));
        close(f.as_slice(), &dft(&x, false), &format!("fft n={n}"));
        // The inverse is scaled by 1/n (MatX's and NumPy's default).
        let want: Vec<C> = dft(&x, true).iter().map(|z| z / n as f64).collect();
        close(both(ifft(&t)).as_slice(), &want, &format!("ifft n={n}"));
        // ifft(fft(x)) == x.
        close(
            both(ifft(fft(&t))).as_slice(),
            &x,
            &format!("round trip n={n}"),
        );
        // Read outside an executor, one element at a time.
        close(
            &[fft(&t).get([n - 1])],
            &dft(&x, false)[n - 1..],
            "on demand",
        );
    }
}

#[test]
fn ops_fft_transforms_every_row_and_norms_scale() {
    let (rows, n) = (5, 13);
    let x: Vec<C> = (0..rows).flat_map(|r| signal(n, r)).collect();
    let t = Tensor::from_vec([rows, n], x.clone()).unwrap();
    let f = both(fft(&t));
    for r in 0..rows {
        let want = dft(&x[r * n..(r + 1) * n], false);
        close(&f.as_slice()[r * n..(r + 1) * n], &want, "row");
    }
    let fw = both(fft_with(&t, FftNorm::Forward));
    let fo = both(fft_with(&t, FftNorm::Ortho));
    for (i, &v) in f.as_slice().iter().enumerate() {
        close(&[fw.as_slice()[i]], &[v / n as f64], "forward norm");
        close(&[fo.as_slice()[i]], &[v / (n as f64).sqrt()], "ortho norm");
    }
    close(
        both(ifft_with(fft_with(&t, FftNorm::Ortho), FftNorm::Ortho)).as_slice(),
        &x,
        "ortho",
    );
    close(
        both(ifft_with(fft_with(&t, FftNorm::Forward), FftNorm::Forward)).as_slice(),
        &x,
        "fwd",
    );
    assert_eq!(fft(&t).name(), "fft(tensor)");
}

#[test]
fn ops_fft2_is_rows_then_columns() {
    for (r, c) in [(1, 1), (3, 5), (4, 7), (8, 8), (2, 11)] {
        let x: Vec<C> = (0..2).flat_map(|b| signal(r * c, b + r)).collect();
        let t = Tensor::from_vec([2, r, c], x.clone()).unwrap();
        let f = both(fft2(&t));
        for b in 0..2 {
            let m = &x[b * r * c..(b + 1) * r * c];
            // The direct 2-D DFT.
            let mut want = vec![C::new(0.0, 0.0); r * c];
            for (k1, k2) in (0..r).flat_map(|k| (0..c).map(move |l| (k, l))) {
                for (j1, j2) in (0..r).flat_map(|k| (0..c).map(move |l| (k, l))) {
                    let ang =
                        -2.0 * PI * ((j1 * k1) as f64 / r as f64 + (j2 * k2) as f64 / c as f64);
                    want[k1 * c + k2] += m[j1 * c + j2] * C::new(ang.cos(), ang.sin());
                }
            }
            close(&f.as_slice()[b * r * c..(b + 1) * r * c], &want, "fft2");
        }
        close(both(ifft2(fft2(&t))).as_slice(), &x, "fft2 round trip");
    }
}

#[test]
fn ops_fft_of_f32_and_of_real_input() {
    let x: Vec<f32> = (0..16).map(|i| (i as f32 * 0.7).sin()).collect();
    let t = Tensor::from_vec([16], x.clone()).unwrap();
    let f = both(fft(to_complex(&t)));
    let want = dft(
        &x.iter().map(|&v| C::new(v as f64, 0.0)).collect::<Vec<_>>(),
        false,
    );
    for (g, w) in f.as_slice().iter().zip(&want) {
        assert!(
            (C::new(g.re as f64, g.im as f64) - w).norm() < 1e-4,
            "{g} vs {w}"
        );
    }
    // An empty last dim transforms to nothing.
    let e = Tensor::<C, [usize; 2]>::zeros([3, 0]);
    assert_eq!(both(fft(&e)).sizes(), [3, 0]);
}
