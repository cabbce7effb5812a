//! Data in and out without copies: `Array::from_vec` of 8 MB and of 80 MB
//! (zero-copy: the time does not grow with the size), a DLPack export and
//! import of 10M float64, `Array::from_ndarray` of 80 MB (zero-copy), and
//! `Array::from_slice` of 8 MB (one copy) beside a plain `memcpy` of the
//! same bytes.

use crate::harness::{Ctx, Measurement, copy_rows, median_consuming, median_time, or_skip};
use dynd::Array;
use std::hint::black_box;

/// 1M float64: 8 MB.
const SMALL: usize = 1_000_000;
/// 10M float64: 80 MB.
const LARGE: usize = 10_000_000;

/// Both sizes are timed with the caches in the same state: before each
/// run, 80 MB are written, which evicts what the allocator and dynd's type
/// nodes keep in cache. Without it, the 80 MB input's own copy does that
/// for the large size only, and the rows differ by that (~2 against ~10
/// µs), not by any work per element.
fn from_vec(ctx: &Ctx) {
    let runs = ctx.runs.max(15);
    let mut flood: Vec<f64> = vec![0.0; LARGE];
    for (n, label) in [(SMALL, "8 MB"), (LARGE, "80 MB")] {
        let src: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let t = median_consuming(
            runs,
            || {
                flood.iter_mut().for_each(|x| *x += 1.0);
                black_box(&flood);
                src.clone()
            },
            |v| Array::from_vec(v, &[n]).expect("from_vec"),
        );
        ctx.row(
            &Measurement::latency(format!("Array::from_vec {label} f64 (zero-copy)"), n, t),
            "O(1): the vector becomes the data's owner (caches flushed)",
        );
    }
}

fn dlpack(ctx: &Ctx) {
    let name = "DLPack export+import 10M f64 (to_dlpack, from_dlpack)";
    let src: Vec<f64> = (0..LARGE).map(|i| i as f64).collect();
    let Some(a) = or_skip(ctx, name, Array::from_vec(src, &[LARGE])) else {
        return;
    };
    let t = median_time(ctx.runs.max(15), || {
        let t = a.to_dlpack().expect("to_dlpack");
        // SAFETY: a live tensor from to_dlpack, handed over once.
        let b = unsafe { Array::from_dlpack(t) }.expect("from_dlpack");
        black_box(&b);
    });
    ctx.row(
        &Measurement::latency(name, LARGE, t),
        "O(1): both ways share the data; includes the deleter",
    );
}

fn from_ndarray(ctx: &Ctx) {
    let src = ndarray::Array2::from_shape_fn((LARGE / 1000, 1000), |(i, j)| (i * 1000 + j) as f64);
    let t = median_consuming(
        ctx.runs.max(15),
        || src.clone(),
        |m| Array::from_ndarray(m).expect("from_ndarray"),
    );
    ctx.row(
        &Measurement::latency("Array::from_ndarray 80 MB f64 (zero-copy)", LARGE, t),
        "O(1): the ndarray buffer becomes the data's owner",
    );
}

fn from_slice(ctx: &Ctx) {
    let src: Vec<f64> = (0..SMALL).map(|i| i as f64).collect();
    let runs = ctx.runs.max(15);
    copy_rows(
        ctx,
        runs,
        &src,
        "Array::from_slice 8 MB f64 (copy)",
        (
            "memcpy 8 MB f64 into a new Vec",
            "the baseline of the row above",
        ),
        |s| Array::from_slice(s, &[SMALL]).expect("from_slice"),
    );
}

pub fn run(ctx: &Ctx) {
    from_vec(ctx);
    dlpack(ctx);
    from_ndarray(ctx);
    from_slice(ctx);
}
