//! `cargo run --release -p dynd-bench [-- --quick] [-- --only NAME]`
//!
//! Prints, for each operation: name, n, median ms over repeated runs, GB/s
//! (bytes read + written) and the ratio to a plain memory copy measured in
//! the same run. Performance targets live here, never in timed unit tests.

mod callables;
mod casts;
mod harness;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned());
    if let Some(bad) = args
        .iter()
        .find(|a| a.starts_with("--") && *a != "--quick" && *a != "--only")
    {
        eprintln!(
            "error[invalid_argument]: unknown option '{bad}' (expected --quick, --only NAME)"
        );
        std::process::exit(1);
    }
    let n = if quick { 2_000_000 } else { 10_000_000 };
    let runs = if quick { 5 } else { 15 };
    let bandwidth = harness::copy_bandwidth(n * 8, runs);
    harness::header(bandwidth);
    let wants = |name: &str| only.as_deref().is_none_or(|o| o == name);
    if wants("casts") {
        casts::run(n, runs, bandwidth);
    }
    if wants("callables") {
        callables::run(n, runs, bandwidth);
    }
}
