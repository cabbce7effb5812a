//! Timing: medians over repeated runs, throughput in GB/s, and the ratio to
//! a plain memory copy of the same number of bytes measured in this run.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// One measured operation.
pub struct Measurement {
    pub name: String,
    pub n: usize,
    pub median: Duration,
    /// Bytes read plus bytes written by one run.
    pub bytes: usize,
}

impl Measurement {
    pub fn gbps(&self) -> f64 {
        self.bytes as f64 / self.median.as_secs_f64() / 1e9
    }
}

/// The median time of `runs` calls of `f` (after one warm-up call).
pub fn median_time(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// Copy bandwidth in GB/s (read + write) over buffers of `bytes` each.
pub fn copy_bandwidth(bytes: usize, runs: usize) -> f64 {
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    let t = median_time(runs, || {
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
    });
    2.0 * bytes as f64 / t.as_secs_f64() / 1e9
}

/// Prints the table header.
pub fn header(bandwidth: f64) {
    println!("memory copy bandwidth (read + write), measured now: {bandwidth:.1} GB/s");
    println!(
        "{:<44} {:>10} {:>10} {:>8} {:>8}  note",
        "operation", "n", "median ms", "GB/s", "÷copy"
    );
}

/// Prints one row; `note` is free text (ratios to a baseline).
pub fn row(m: &Measurement, bandwidth: f64, note: &str) {
    println!(
        "{:<44} {:>10} {:>10.3} {:>8.2} {:>8.2}  {note}",
        m.name,
        m.n,
        m.median.as_secs_f64() * 1e3,
        m.gbps(),
        m.gbps() / bandwidth
    );
}
