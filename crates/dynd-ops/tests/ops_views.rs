//! Every view's fast paths (`fill_line`, `contiguous_line`, `row_ptr`)
//! agree with element-by-element access (`get`, which goes through the
//! index map alone), for every start, axis and step — forwards, backwards,
//! strided, across the rows of collapsed and reshaped inputs, and around
//! the wrap of repmat and shift.

use dynd_ops::*;

/// The run of `len` from `idx` along `axis` by `step`, through `get`.
fn by_get<O: Operator>(
    op: &O,
    idx: O::Shape,
    axis: usize,
    step: isize,
    len: usize,
) -> Vec<O::Elem> {
    (0..len)
        .map(|j| {
            let mut i = idx;
            i[axis] = (idx[axis] as isize + j as isize * step) as usize;
            op.get(i)
        })
        .collect()
}

/// Every run of `op` (each start, axis and step, short and longest) read
/// by `fill_line` and, where offered, `contiguous_line`, against `get`;
/// returns how many runs came back contiguous.
fn check_reads<O: Operator<Elem = i64>>(op: &O) -> usize {
    let sizes = op.sizes();
    let name = op.name();
    let mut contiguous = 0;
    for flat in 0..numel(&sizes) {
        let idx = unravel(flat, &sizes);
        for axis in 0..O::Shape::RANK {
            for step in [1isize, -1, 2, -3] {
                let (p, n) = (idx[axis] as isize, sizes[axis] as isize);
                let longest = if step > 0 {
                    (n - 1 - p) / step + 1
                } else {
                    p / -step + 1
                };
                for len in [1, 2, longest as usize] {
                    if len > longest as usize {
                        continue;
                    }
                    let want = by_get(op, idx, axis, step, len);
                    let mut got = vec![-1; len];
                    op.fill_line(idx, axis, step, &mut got);
                    assert_eq!(
                        got, want,
                        "{name}: fill_line at {idx:?} axis {axis} step {step}"
                    );
                    if let Some(c) = op.contiguous_line(idx, axis, step, len) {
                        assert_eq!(
                            c,
                            &want[..],
                            "{name}: contiguous_line at {idx:?} axis {axis}"
                        );
                        contiguous += 1;
                    }
                }
            }
        }
    }
    contiguous
}

/// Every `row_ptr` an lvalue offers points at the run `get` reads; returns
/// how many it offered.
fn check_row_ptrs<O: LvalueOp<Elem = i64>>(op: &O) -> usize {
    let sizes = op.sizes();
    let last = O::Shape::RANK.saturating_sub(1);
    let mut offered = 0;
    for flat in 0..numel(&sizes) {
        let idx = unravel(flat, &sizes);
        let left = if O::Shape::RANK == 0 {
            1
        } else {
            sizes[last] - idx[last]
        };
        for len in [1, left] {
            if let Some(p) = op.row_ptr(idx, len) {
                // SAFETY: `row_ptr` promises `len` contiguous elements of
                // the output; nothing writes them while this reads.
                let got = unsafe { std::slice::from_raw_parts(p, len) };
                let want = if O::Shape::RANK == 0 {
                    vec![op.get(idx)]
                } else {
                    by_get(op, idx, last, 1, len)
                };
                assert_eq!(got, &want[..], "{}: row_ptr at {idx:?}", op.name());
                offered += 1;
            }
        }
    }
    offered
}

#[test]
fn ops_view_runs_agree_with_get() {
    let mut t = Tensor::from_fn([3, 4, 5], |[i, j, k]| (i * 100 + j * 10 + k) as i64);
    let m = Tensor::from_fn([4, 6], |[i, j]| (i * 10 + j) as i64);
    let v = t.view();
    let mut total = 0;
    total += check_reads(&permute(v, [2, 0, 1]).unwrap());
    total += check_reads(&transpose(v));
    total += check_reads(&reverse(v, 2).unwrap());
    total += check_reads(&slice(v, [-1, 1, 4], [END, END, END], [-1, 2, -2]).unwrap());
    total += check_reads(&drop_dim(v, 1, -1).unwrap());
    total += check_reads(&drop_dim(v, 2, 3).unwrap());
    total += check_reads(&lcollapse::<2, _>(v));
    total += check_reads(&lcollapse::<3, _>(v));
    total += check_reads(&rcollapse::<2, _>(v));
    total += check_reads(&rcollapse::<3, _>(v));
    total += check_reads(&lcollapse::<2, _>(permute(v, [1, 0, 2]).unwrap()));
    total += check_reads(&rcollapse::<2, _>(permute(v, [0, 2, 1]).unwrap()));
    total += check_reads(&reshape(v, [6, 10]).unwrap());
    total += check_reads(&reshape(v, [2, 3, 10]).unwrap());
    total += check_reads(&reshape(transpose(v), [10, 6]).unwrap());
    total += check_reads(&flatten(v));
    total +=
        check_reads(&reshape(drop_dim(drop_dim(v, 0, 0).unwrap(), 0, 0).unwrap(), [1, 5]).unwrap());
    total += check_reads(&clone(m.view(), [KEEP, 3, KEEP]).unwrap());
    total += check_reads(&clone(m.view(), [2, KEEP, KEEP]).unwrap());
    total += check_reads(&repmat(m.view(), [2, 3]));
    total += check_reads(&shift(m.view(), 1, 4).unwrap());
    total += check_reads(&shift(m.view(), 0, -1).unwrap());
    total += check_reads(&diag(m.view(), 1));
    total += check_reads(&diag(m.view(), -2));
    total += check_reads(&fliplr(lcollapse::<2, _>(reshape(&m, [2, 2, 6]).unwrap())));
    assert!(total > 0, "no view offered a contiguous run");

    let mut offered = 0;
    let w = t.view_mut();
    offered += check_row_ptrs(&permute(w, [1, 0, 2]).unwrap());
    let w = t.view_mut();
    offered += check_row_ptrs(&slice(w, [0, 0, 1], [END, END, END], [2, 1, 1]).unwrap());
    let w = t.view_mut();
    offered += check_row_ptrs(&reverse(w, 1).unwrap());
    let w = t.view_mut();
    offered += check_row_ptrs(&drop_dim(w, 0, 1).unwrap());
    let w = t.view_mut();
    offered += check_row_ptrs(&lcollapse::<3, _>(w));
    let w = t.view_mut();
    offered += check_row_ptrs(&rcollapse::<2, _>(w));
    let w = t.view_mut();
    offered += check_row_ptrs(&reshape(w, [6, 10]).unwrap());
    let w = t.view_mut();
    offered += check_row_ptrs(
        &drop_dim(drop_dim(drop_dim(w, 0, 2).unwrap(), 0, 3).unwrap(), 0, 4).unwrap(),
    );
    let w = t.view_mut();
    offered += check_row_ptrs(&reshape(drop_dim(w, 0, 0).unwrap(), [2, 10]).unwrap());
    assert!(offered > 0, "no lvalue view offered a row pointer");
    // None where the last axis is not a step-1 run of the input.
    let w = t.view_mut();
    assert_eq!(check_row_ptrs(&permute(w, [0, 2, 1]).unwrap()), 0);
    let w = t.view_mut();
    assert_eq!(check_row_ptrs(&fliplr(w)), 0);
}

/// A 0-d view (every dim dropped, or a reshape to `[]`) reads and writes
/// its one element.
#[test]
fn ops_zero_dim_views_read_and_write_one_element() {
    let mut t = Tensor::from_fn([2, 3], |[i, j]| (i * 3 + j) as i64);
    let one = drop_dim(drop_dim(t.view(), 0, 1).unwrap(), 0, 2).unwrap();
    assert_eq!((one.sizes(), one.get([])), ([], 5));
    for ex in [&Serial as &dyn Executor, &Parallel::new(2).unwrap()] {
        let w = drop_dim(drop_dim(t.view_mut(), 0, 1).unwrap(), 0, 2).unwrap();
        w.set(scalar::<i64>(40 + ex.num_threads() as i64))
            .run(ex)
            .unwrap();
        let r = reshape(slice(t.view_mut(), [0, 0], [1, 1], [1, 1]).unwrap(), []).unwrap();
        r.set(scalar::<i64>(-7)).run(ex).unwrap();
        assert_eq!(t.at([1, 2]), 40 + ex.num_threads() as i64);
        assert_eq!(t.at([0, 0]), -7);
    }
}
