//! The end of a bad-input sweep, shared by the sweeps of the library
//! (`dynd/tests/bad_inputs.rs`), of the C ABI
//! (`dynd-capi/tests/bad_inputs_capi.rs`, which includes this file by path)
//! and of the command line (`dynd-cli/tests/bad_args.rs`, likewise).

/// Prints `summary`, then fails listing every failure (each names its row),
/// or when the sweep has shrunk below `at_least` of its `total` rows.
pub fn finish(summary: &str, total: usize, at_least: usize, failures: &[String]) {
    println!("{summary}");
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(total >= at_least, "the sweep shrank to {total}");
}
