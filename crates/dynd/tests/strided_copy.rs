//! Copies of 2-d strided views (`Array::copy`, and assignment into a
//! contiguous array) against an element-by-element reference: read in
//! order (`a[::2, ::3]`, reversed rows or columns: the row loop) and not
//! (transposed: tiles), small and large, for every element size.

use dynd::kernels::assign::ErrorMode;
use dynd::{Array, Index, Type};

/// Every element of a 2-d array as JSON, one by one through `index`.
fn elements(a: &Array) -> Vec<String> {
    let shape = a.shape();
    let (r, c) = (shape[0].unwrap(), shape[1].unwrap());
    let mut out = Vec::with_capacity(r * c);
    for i in 0..r {
        for j in 0..c {
            out.push(a.index(&[i.into(), j.into()]).unwrap().to_json());
        }
    }
    out
}

fn views(a: &Array) -> Vec<(&'static str, Array)> {
    let s = |start: Option<isize>, step: isize| Index::slice(start, None, step);
    vec![
        ("a[::2, ::3]", a.index(&[s(None, 2), s(None, 3)]).unwrap()),
        (
            "a[1::2, ::-3]",
            a.index(&[s(Some(1), 2), s(None, -3)]).unwrap(),
        ),
        ("a[::-1, ::2]", a.index(&[s(None, -1), s(None, 2)]).unwrap()),
        ("a[:, ::-1]", a.index(&[s(None, 1), s(None, -1)]).unwrap()),
        ("a.T", a.permute(&[1, 0]).unwrap()),
        (
            "a.T[::2]",
            a.permute(&[1, 0]).unwrap().index(&[s(None, 2)]).unwrap(),
        ),
    ]
}

#[test]
fn strided_2d_copies_match_the_elements() {
    for tp in [
        "float64",
        "int32",
        "uint8",
        "int16",
        "complex[float64]",
        "bool",
    ] {
        for (rows, cols) in [(5usize, 7usize), (1, 9), (130, 100)] {
            let json = {
                let rows_text: Vec<String> = (0..rows)
                    .map(|i| {
                        let row: Vec<String> = (0..cols)
                            .map(|j| match tp {
                                "bool" => ((i + j) % 3 == 0).to_string(),
                                "complex[float64]" => format!("[{i}, {j}]"),
                                _ => ((i * cols + j) % 100).to_string(),
                            })
                            .collect();
                        format!("[{}]", row.join(","))
                    })
                    .collect();
                format!("[{}]", rows_text.join(","))
            };
            let a = Array::from_json(format!("{rows} * {cols} * {tp}").as_str(), &json).unwrap();
            for (what, v) in views(&a) {
                let want = elements(&v);
                let c = v.copy().unwrap();
                assert_eq!(elements(&c), want, "{tp} {rows}x{cols} {what} copy");
                let dst = Array::empty(v.tp()).unwrap();
                dst.assign(&v, ErrorMode::NoCheck).unwrap();
                assert_eq!(elements(&dst), want, "{tp} {rows}x{cols} {what} assign");
            }
        }
    }
}

#[test]
fn a_repeated_source_row_is_copied_to_every_row() {
    let v = vec![1.5f64, 2.5, 3.5];
    let keep = v.clone();
    // SAFETY: every element read is one of the vector's three, which the
    // owner closure keeps alive; rows repeat with stride 0.
    let a = unsafe {
        Array::from_external(
            Type::float64(),
            v.as_ptr() as *mut u8,
            &[4, 3],
            &[0, 8],
            move || drop(v),
            false,
        )
    }
    .unwrap();
    let step = a
        .index(&[Index::slice(None, None, 1), Index::slice(None, None, 2)])
        .unwrap();
    let c = step.copy().unwrap();
    assert_eq!(c.to_json(), "[[1.5,3.5],[1.5,3.5],[1.5,3.5],[1.5,3.5]]");
    assert_eq!(
        a.copy()
            .unwrap()
            .index(&[3.into(), 1.into()])
            .unwrap()
            .as_scalar::<f64>()
            .unwrap(),
        keep[1]
    );
}

#[test]
fn c_contiguous_2d_casts_go_flat_and_keep_the_modes() {
    // 3 × 700 float64 → int32: one flat call over 2100 elements (chunks
    // cross row ends).
    let v: Vec<f64> = (0..2100).map(|i| i as f64 - 1000.5).collect();
    let a = Array::from_vec(v.clone(), &[3, 700]).unwrap();
    let tp = Type::parse("3 * 700 * int32").unwrap();
    let c = a.cast(&tp, ErrorMode::NoCheck).unwrap();
    for (i, want) in v.iter().enumerate() {
        let got = c
            .index(&[(i / 700).into(), (i % 700).into()])
            .unwrap()
            .as_scalar::<i32>()
            .unwrap();
        assert_eq!(got, *want as i32, "element {i}");
    }
    let e = a.cast(&tp, ErrorMode::Fractional).unwrap_err();
    assert_eq!(e.kind(), dynd::ErrorKind::Fractional, "{e}");
    let mut big = vec![0.0f64; 2100];
    big[1500] = 1e12;
    let e = Array::from_vec(big, &[3, 700])
        .unwrap()
        .cast(&tp, ErrorMode::Overflow)
        .unwrap_err();
    assert_eq!(e.kind(), dynd::ErrorKind::Overflow, "{e}");
    // Different shapes still broadcast through the lifted path.
    let row = Array::from_vec(vec![1i32, 2], &[1, 2]).unwrap();
    let dst = Array::empty("3 * 2 * float64").unwrap();
    dst.assign(&row, ErrorMode::Default).unwrap();
    assert_eq!(dst.to_json(), "[[1.0,2.0],[1.0,2.0],[1.0,2.0]]");
}
