//! `cargo run --release -p dynd-bench [-- --quick] [--json] [--only NAME[,NAME…]] [--threads N[,N…]]`
//!
//! Prints, for each operation: name, n, median ms over repeated runs, GB/s
//! (bytes read + written) and the ratio to a plain memory copy measured in
//! the same run. `--json` prints one JSON object per operation instead
//! (`name`, `n`, `shape`, `median_ms`, `gbps`, `ratio_copy`, `note`; or
//! `name`, `skipped`), which `bench/compare.py` reads. Callables run on a
//! one-thread executor (`dynd::exec`) unless a row names its thread count. Performance
//! targets live here, never in timed unit tests.
//!
//! `--threads 1,2,4` sweeps thread counts: each row that scales
//! (elementwise add, multiply and less, `a*b+c` through two calls, sums, stateful reductions,
//! ragged sum / `+ 1.0` / per-row sort / filter, take, where, 1-d sort,
//! argsort, cumsum, casts through `Array::assign`, JSON Lines) runs once
//! per count (1 is always measured: the speed-ups need it), in interleaved
//! rounds; its 1-thread row keeps the plain name, the others are named
//! `"…, N threads"`, and each has a note with its speed-up over the
//! 1-thread time (in JSON also the fields `threads` and `speedup`).

mod arrow;
mod callables;
mod casts;
mod copies;
mod fused;
mod harness;
mod interop;
mod json_lines;
mod json_parse;
mod new_arrays;
mod overhead;
mod ragged;
mod reductions;
mod select;
mod sort;

use dynd::exec::Executor;
use harness::{Ctx, Measurement};

/// The groups `--only` selects, in the order they run.
const GROUPS: [&str; 14] = [
    "copies",
    "casts",
    "new_arrays",
    "callables",
    "fused",
    "reductions",
    "ragged",
    "select",
    "sort",
    "json",
    "json_lines",
    "overhead",
    "interop",
    "arrow",
];

fn usage_error(msg: &str) -> ! {
    eprintln!(
        "error[invalid_argument]: {msg} (expected --quick, --json, --threads N[,N...] with N from 1 to {}, --only NAME[,NAME...] with NAME one of {})",
        dynd::exec::MAX_THREADS,
        GROUPS.join(", ")
    );
    std::process::exit(1);
}

/// The counts of `--threads LIST`: positive integers up to
/// `dynd::exec::MAX_THREADS`, separated by commas; returned ascending,
/// without repeats, with 1 added when missing (the speed-ups need it).
fn parse_threads(list: &str) -> Result<Vec<usize>, String> {
    let mut counts = Vec::new();
    for item in list.split(',') {
        let item = item.trim();
        let n: usize = item
            .parse()
            .map_err(|_| format!("--threads: '{item}' is not a thread count"))?;
        if n == 0 || n > dynd::exec::MAX_THREADS {
            return Err(format!(
                "--threads: {n} is not a thread count from 1 to {}",
                dynd::exec::MAX_THREADS
            ));
        }
        counts.push(n);
    }
    counts.push(1);
    counts.sort_unstable();
    counts.dedup();
    Ok(counts)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut quick = false;
    let mut json = false;
    let mut only: Option<Vec<String>> = None;
    let mut threads: Option<Vec<usize>> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--json" => json = true,
            "--only" => {
                let Some(v) = it.next() else {
                    usage_error("--only needs a NAME")
                };
                let names: Vec<String> = v.split(',').map(str::to_string).collect();
                if let Some(bad) = names.iter().find(|n| !GROUPS.contains(&n.as_str())) {
                    usage_error(&format!("unknown group '{bad}'"));
                }
                only = Some(names);
            }
            "--threads" => {
                let Some(v) = it.next() else {
                    usage_error("--threads needs N[,N...]")
                };
                threads = Some(parse_threads(v).unwrap_or_else(|e| usage_error(&e)));
            }
            other => usage_error(&format!("unknown argument '{other}'")),
        }
    }
    let runs = if quick { 5 } else { 15 };
    let n = if quick { 2_000_000 } else { 10_000_000 };
    let (bandwidth, copy_t) = harness::copy_bandwidth(n * 8, runs);
    let ctx = Ctx {
        quick,
        runs,
        bandwidth,
        json,
        one: Executor::Threads(1),
        threads,
    };
    ctx.header();
    ctx.row(
        &Measurement::new("memory copy (copy_from_slice)", n, copy_t, 2 * n * 8),
        "the baseline of ÷copy",
    );
    let wants = |g: &str| only.as_ref().is_none_or(|o| o.iter().any(|x| x == g));
    for g in GROUPS {
        if !wants(g) {
            continue;
        }
        ctx.one.install(|| match g {
            "copies" => copies::run(&ctx),
            "casts" => casts::run(&ctx),
            "new_arrays" => new_arrays::run(&ctx),
            "callables" => callables::run(&ctx),
            "fused" => fused::run(&ctx),
            "reductions" => reductions::run(&ctx),
            "ragged" => ragged::run(&ctx),
            "select" => select::run(&ctx),
            "sort" => sort::run(&ctx),
            "json" => json_parse::run(&ctx),
            "json_lines" => json_lines::run(&ctx),
            "overhead" => overhead::run(&ctx),
            "interop" => interop::run(&ctx),
            "arrow" => arrow::run(&ctx),
            _ => unreachable!("GROUPS lists every group"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::parse_threads;

    #[test]
    fn thread_lists() {
        assert_eq!(parse_threads("1,2,4"), Ok(vec![1, 2, 4]));
        assert_eq!(parse_threads("4, 2,2"), Ok(vec![1, 2, 4]));
        assert_eq!(parse_threads("16"), Ok(vec![1, 16]));
        for bad in ["", "0", "1,,2", "two", "-1", "1.5", "99999"] {
            assert!(parse_threads(bad).is_err(), "{bad:?}");
        }
    }
}
