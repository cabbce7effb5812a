//! Fused `out = a * b + c` into a preallocated output, 10M float64, on the
//! serial executor and on 2 threads, next to a plain memory copy of the same
//! number of bytes measured in the same run.
//!
//! Run: `cargo run --release -p dynd-ops --example bench_fused [N] [REPS]`
//!
//! Bytes counted: the fused op reads `a`, `b`, `c` and writes `out` (32 bytes
//! per element). The copy baseline is `copy_from_slice` of a buffer of
//! 16 bytes per element into another (so it too reads + writes 32 bytes
//! per element); it runs on one thread, and on 2 threads as two halves.

use dynd_ops::{LvalueOp, Parallel, Serial, Tensor, TensorView, TensorViewMut};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(reps: usize, mut f: impl FnMut()) -> Duration {
    f(); // warm up (page faults, thread start)
    median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn main() -> dynd::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(21);
    let a = Tensor::from_fn([n], |[i]| (i % 1000) as f64 * 0.001);
    let b = Tensor::from_fn([n], |[i]| (i % 7) as f64 + 0.5);
    let c = Tensor::from_fn([n], |[i]| -((i % 13) as f64));
    let mut out = Tensor::<f64, [usize; 1]>::zeros([n]);
    let par = Parallel::new(2)?;
    let bytes = (4 * n * 8) as f64;

    let copy_src = vec![1.0f64; 2 * n];
    let mut copy_dst = vec![0.0f64; 2 * n];
    let copy1 = time(reps, || {
        copy_dst.copy_from_slice(black_box(&copy_src));
        black_box(&mut copy_dst);
    });
    let copy2 = time(reps, || {
        let (d0, d1) = copy_dst.split_at_mut(n);
        let (s0, s1) = copy_src.split_at(n);
        rayon::join(|| d0.copy_from_slice(s0), || d1.copy_from_slice(s1));
        black_box(&mut copy_dst);
    });
    let plain = time(reps, || {
        for (((o, &x), &y), &z) in out
            .as_mut_slice()
            .iter_mut()
            .zip(a.as_slice())
            .zip(b.as_slice())
            .zip(c.as_slice())
        {
            *o = x * y + z;
        }
        black_box(&mut out);
    });

    let mut fused = |ex: &dyn dynd_ops::Executor| {
        time(reps, || {
            let (va, vb, vc): (TensorView<f64, [usize; 1]>, _, _) = (a.view(), b.view(), c.view());
            let o: TensorViewMut<f64, [usize; 1]> = out.view_mut();
            o.set(va * vb + vc).run(ex).unwrap();
        })
    };
    let serial = fused(&Serial);
    let two = fused(&par);

    // Check the result once.
    for i in (0..n).step_by(n / 97 + 1) {
        assert_eq!(
            out.as_slice()[i],
            a.as_slice()[i] * b.as_slice()[i] + c.as_slice()[i]
        );
    }

    let gbs = |d: Duration| bytes / d.as_secs_f64() / 1e9;
    println!(
        "fused out = a*b + c, {n} float64, median of {reps} runs; bytes = read + written = {} MB",
        bytes as usize / 1_000_000
    );
    println!(
        "{:<34} {:>10} {:>9} {:>14}",
        "", "median", "GB/s", "vs memcpy(1t)"
    );
    let row = |name: &str, d: Duration| {
        println!(
            "{name:<34} {:>8.2}ms {:>9.2} {:>13.2}x",
            d.as_secs_f64() * 1e3,
            gbs(d),
            gbs(d) / gbs(copy1)
        )
    };
    row("memcpy (copy_from_slice), 1 thread", copy1);
    row("memcpy, 2 threads", copy2);
    row("plain Rust loop, 1 thread", plain);
    row("dynd-ops fused, Serial", serial);
    row("dynd-ops fused, Parallel(2)", two);
    println!(
        "fused/memcpy on the same thread count: serial {:.2}x, 2 threads {:.2}x",
        gbs(serial) / gbs(copy1),
        gbs(two) / gbs(copy2)
    );
    Ok(())
}
