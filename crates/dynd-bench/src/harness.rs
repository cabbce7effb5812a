//! Timing and reporting: medians over repeated runs, throughput in GB/s,
//! and the ratio to a plain memory copy measured in this run; rows printed
//! as a table or, with `--json`, as one JSON object per line.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// One measured operation.
pub struct Measurement {
    /// The operation's name (the comparison script maps rows by it).
    pub name: String,
    /// The shape of the main operand; its product is the row's `n`.
    pub shape: Vec<usize>,
    /// Median time of one operation.
    pub median: Duration,
    /// Bytes read plus bytes written by one operation (`None`: the row is
    /// about latency, not throughput, and has no GB/s).
    pub bytes: Option<usize>,
}

impl Measurement {
    /// A throughput row over a 1-d operand of `n` elements.
    pub fn new(name: impl Into<String>, n: usize, median: Duration, bytes: usize) -> Measurement {
        Measurement {
            name: name.into(),
            shape: vec![n],
            median,
            bytes: Some(bytes),
        }
    }

    /// The same, over an operand of `shape`.
    pub fn shaped(
        name: impl Into<String>,
        shape: &[usize],
        median: Duration,
        bytes: usize,
    ) -> Measurement {
        Measurement {
            name: name.into(),
            shape: shape.to_vec(),
            median,
            bytes: Some(bytes),
        }
    }

    /// A latency row (per call or per build): no GB/s.
    pub fn latency(name: impl Into<String>, n: usize, median: Duration) -> Measurement {
        Measurement {
            name: name.into(),
            shape: vec![n],
            median,
            bytes: None,
        }
    }

    pub fn n(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn gbps(&self) -> Option<f64> {
        self.bytes
            .map(|b| b as f64 / self.median.as_secs_f64() / 1e9)
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

/// The median times of `runs` rounds in which each of `fs` is called once,
/// in turn (after one warm-up round): load from other processes then hits
/// every function alike, which makes their ratio steadier than timing
/// each alone.
pub fn median_times_interleaved(runs: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<Duration> {
    for f in fs.iter_mut() {
        f();
    }
    let mut times = vec![Vec::with_capacity(runs.max(1)); fs.len()];
    for _ in 0..runs.max(1) {
        for (f, t) in fs.iter_mut().zip(&mut times) {
            let start = Instant::now();
            f();
            t.push(start.elapsed());
        }
    }
    medians(times)
}

/// A row name's thread suffix: none for 1 thread (rows run on one thread
/// unless they say otherwise), `", N threads"` for more.
pub fn thread_suffix(count: usize) -> String {
    if count == 1 {
        String::new()
    } else {
        format!(", {count} threads")
    }
}

/// The median time of `f` on each of `counts` threads: `runs` rounds
/// (after a warm-up round) in which `f` runs once on each count, inside
/// that count's executor (`dynd::exec::Executor::with_threads`), so that
/// load from other processes hits every count alike.
pub fn median_times_threads(runs: usize, counts: &[usize], mut f: impl FnMut()) -> Vec<Duration> {
    let executors: Vec<dynd::exec::Executor> = counts
        .iter()
        .map(|&c| dynd::exec::Executor::with_threads(c).expect("checked by --threads"))
        .collect();
    let mut times = vec![Vec::with_capacity(runs.max(1)); counts.len()];
    for round in 0..=runs.max(1) {
        for (ex, t) in executors.iter().zip(&mut times) {
            let d = ex.install(|| {
                let start = Instant::now();
                f();
                start.elapsed()
            });
            if round > 0 {
                t.push(d);
            }
        }
    }
    medians(times)
}

/// The median time of one call of `f`, timing batches of `reps` calls
/// (for operations too short to time one at a time).
pub fn median_time_per_call(runs: usize, reps: usize, mut f: impl FnMut()) -> Duration {
    let reps = reps.max(1);
    median_time(runs, || {
        for _ in 0..reps {
            f();
        }
    }) / reps as u32
}

/// Copy bandwidth in GB/s (read + write) over buffers of `bytes` each, and
/// the median time of one copy.
pub fn copy_bandwidth(bytes: usize, runs: usize) -> (f64, Duration) {
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    let t = median_time(runs, || {
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
    });
    (2.0 * bytes as f64 / t.as_secs_f64() / 1e9, t)
}

/// Where rows go, and what every module needs to know about the run.
pub struct Ctx {
    /// Reduced sizes and fewer runs.
    pub quick: bool,
    /// Timed runs per operation (after one warm-up).
    pub runs: usize,
    /// Memory copy bandwidth (read + write) measured at the start, GB/s.
    pub bandwidth: f64,
    /// One JSON object per row instead of a table.
    pub json: bool,
    /// One thread: callables run serially inside its `install`.
    pub one: dynd::exec::Executor,
    /// `--threads LIST`: the thread counts of the sweep, ascending, 1
    /// first (`None`: no sweep, the rows of a plain run).
    pub threads: Option<Vec<usize>>,
}

impl Ctx {
    /// Elements of the main 1-d operands (10M, or 2M with `--quick`).
    pub fn n(&self) -> usize {
        if self.quick { 2_000_000 } else { 10_000_000 }
    }

    /// The thread counts a row that scales runs on: the `--threads` list,
    /// or without it `plain` (the counts a plain run has always had for
    /// that row: `&[1]` or `&[1, 2]`).
    pub fn counts(&self, plain: &[usize]) -> Vec<usize> {
        self.threads.clone().unwrap_or_else(|| plain.to_vec())
    }

    /// Prints the table header (nothing in JSON mode).
    pub fn header(&self) {
        if self.json {
            return;
        }
        println!(
            "memory copy bandwidth (read + write), measured now: {:.1} GB/s; median of {} runs; callables on 1 thread unless a row says otherwise",
            self.bandwidth, self.runs
        );
        if let Some(counts) = &self.threads {
            let counts: Vec<String> = counts.iter().map(usize::to_string).collect();
            println!(
                "thread sweep --threads {} on {} cores: rows that scale run once per count (1 thread: the plain name; more: \", N threads\"), timed in interleaved rounds; each note gives its speed-up = 1-thread time / this time",
                counts.join(","),
                std::thread::available_parallelism().map_or(1, |n| n.get())
            );
        }
        println!(
            "{:<62} {:>10} {:>10} {:>8} {:>8}  note",
            "operation", "n", "median ms", "GB/s", "÷copy"
        );
    }

    /// Prints one row; `note` is free text (ratios to a baseline), shown in
    /// the table and carried as `note` in JSON.
    pub fn row(&self, m: &Measurement, note: &str) {
        self.row_threads(m, note, None);
    }

    /// Reports one row per thread count of a row that scales: `times[k]`
    /// is the time on `counts[k]` threads (see [`median_times_threads`]),
    /// `make(name, t)` its measurement. Names get [`thread_suffix`]; in a
    /// `--threads` sweep each row also says its speed-up over the 1-thread
    /// time, in its note and as the JSON fields `threads` and `speedup`.
    pub fn scaling_rows(
        &self,
        name: &str,
        counts: &[usize],
        times: &[Duration],
        note: &str,
        make: impl Fn(String, Duration) -> Measurement,
    ) {
        self.scaling_rows_noted(name, counts, times, |_| note.to_string(), make);
    }

    /// [`Ctx::scaling_rows`] with a note that depends on the row's time.
    pub fn scaling_rows_noted(
        &self,
        name: &str,
        counts: &[usize],
        times: &[Duration],
        note: impl Fn(Duration) -> String,
        make: impl Fn(String, Duration) -> Measurement,
    ) {
        let base = counts
            .iter()
            .zip(times)
            .find(|(c, _)| **c == 1)
            .map(|(_, t)| *t);
        for (&count, &t) in counts.iter().zip(times) {
            let m = make(format!("{name}{}", thread_suffix(count)), t);
            let note = note(t);
            // A plain run, or a row that runs on one thread only: no sweep fields.
            if self.threads.is_none() || counts.len() < 2 {
                self.row(&m, &note);
                continue;
            }
            let speedup = base.map(|b| b.as_secs_f64() / t.as_secs_f64());
            let note = match (speedup, count) {
                (Some(s), 2..) => {
                    let sep = if note.is_empty() { "" } else { "; " };
                    format!("{note}{sep}speed-up {s:.2}x over 1 thread")
                }
                _ => note,
            };
            self.row_threads(&m, &note, Some((count, speedup)));
        }
    }

    /// [`Ctx::row`], with a sweep row's thread count and speed-up (JSON
    /// fields `threads` and `speedup`, only in a `--threads` sweep).
    fn row_threads(&self, m: &Measurement, note: &str, sweep: Option<(usize, Option<f64>)>) {
        let ms = m.median.as_secs_f64() * 1e3;
        let gbps = m.gbps();
        let ratio = gbps.map(|g| g / self.bandwidth);
        if self.json {
            let num = |v: Option<f64>| match v {
                Some(v) if v.is_finite() => format!("{v:.6}"),
                _ => "null".to_string(),
            };
            let shape: Vec<String> = m.shape.iter().map(usize::to_string).collect();
            let sweep = sweep.map_or_else(String::new, |(count, speedup)| {
                format!(", \"threads\": {count}, \"speedup\": {}", num(speedup))
            });
            println!(
                "{{\"name\": {}, \"n\": {}, \"shape\": [{}], \"median_ms\": {}, \"gbps\": {}, \"ratio_copy\": {}, \"note\": {}{sweep}}}",
                json_string(&m.name),
                m.n(),
                shape.join(", "),
                num(Some(ms)),
                num(gbps),
                num(ratio),
                json_string(note)
            );
        } else {
            let opt = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"));
            let ms = if ms < 0.01 {
                format!("{ms:.6}")
            } else {
                format!("{ms:.3}")
            };
            println!(
                "{:<62} {:>10} {:>10} {:>8} {:>8}  {note}",
                m.name,
                m.n(),
                ms,
                opt(gbps),
                opt(ratio)
            );
        }
    }

    /// Reports an operation that could not be measured.
    pub fn skipped(&self, name: &str, reason: &str) {
        if self.json {
            println!(
                "{{\"name\": {}, \"skipped\": {}}}",
                json_string(name),
                json_string(reason)
            );
        } else {
            println!("{name:<62} skipped: {reason}");
        }
    }
}

/// Two rows: `copy` of `src` into a new array (`name`), then `to_vec` of
/// it, the memcpy baseline (`baseline`: its name and note); each reads and
/// writes `src` once.
pub fn copy_rows(
    ctx: &Ctx,
    runs: usize,
    src: &[f64],
    name: &str,
    baseline: (&str, &str),
    copy: impl Fn(&[f64]) -> dynd::Array,
) {
    let bytes = 2 * std::mem::size_of_val(src);
    let t = median_time(runs, || {
        black_box(copy(black_box(src)));
    });
    ctx.row(&Measurement::new(name, src.len(), t, bytes), "");
    let t = median_time(runs, || {
        black_box(black_box(src).to_vec());
    });
    ctx.row(
        &Measurement::new(baseline.0, src.len(), t, bytes),
        baseline.1,
    );
}

/// `s` as a JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Unwraps a setup step's result or reports the row as skipped.
pub fn or_skip<T>(ctx: &Ctx, name: &str, r: dynd::Result<T>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            ctx.skipped(name, &e.to_string());
            None
        }
    }
}

/// Median time of `f(input)` over `runs` runs, each with a fresh input
/// made (untimed) by `make`; the result is dropped untimed too.
pub fn median_consuming<I, O>(
    runs: usize,
    mut make: impl FnMut() -> I,
    mut f: impl FnMut(I) -> O,
) -> Duration {
    let mut times: Vec<Duration> = (0..=runs.max(1))
        .map(|_| {
            let input = make();
            let t = Instant::now();
            let out = black_box(f(black_box(input)));
            let e = t.elapsed();
            drop(out);
            e
        })
        .skip(1)
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// The median of each list of times.
fn medians(times: Vec<Vec<Duration>>) -> Vec<Duration> {
    times
        .into_iter()
        .map(|mut t| {
            t.sort();
            t[t.len() / 2]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(json_string("i32->f64"), "\"i32->f64\"");
    }

    #[test]
    fn medians_and_rates() {
        let m = Measurement::new("x", 10, Duration::from_millis(2), 2_000_000);
        assert!((m.gbps().unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(
            Measurement::latency("y", 10, Duration::from_micros(1)).gbps(),
            None
        );
        let t = median_time_per_call(3, 10, || {});
        assert!(t < Duration::from_millis(10));
    }

    #[test]
    fn thread_counts_are_timed_in_turn_inside_their_executors() {
        let mut seen = Vec::new();
        let t = median_times_threads(2, &[1, 3], || seen.push(dynd::exec::num_threads()));
        assert_eq!(t.len(), 2);
        // A warm-up round and two timed ones, one call per count each.
        assert_eq!(seen, [1, 3, 1, 3, 1, 3]);
        assert_eq!(thread_suffix(1), "");
        assert_eq!(thread_suffix(4), ", 4 threads");
    }
}
