#!/usr/bin/env bash
# Runs every test binary of the workspace under valgrind (memcheck): any
# invalid read or write, use of uninitialised memory, or definite leak fails.
# Property tests run fewer cases here (PROPTEST_CASES) to keep it to minutes.
#
#   scripts/valgrind-tests.sh                      # all test binaries
#   scripts/valgrind-tests.sh integration          # only binaries whose name starts so
#   scripts/valgrind-tests.sh integration stress:: # and only tests matching a filter
#
# Each crate's integration tests are one binary (`integration`), one module
# per file under tests/: a filter like `stress::` picks one file's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 1; }
filter="${1:-}"
test_filter=("${@:2}")
export PROPTEST_CASES="${PROPTEST_CASES:-16}"
# Outputs from 64 KiB on are written past the cache (4 MiB by default), so
# the streamed paths run, and are checked, on the tests' small arrays.
export DYND_STREAM_MIN_BYTES="${DYND_STREAM_MIN_BYTES:-65536}"
# Tests that run every family on several thread counts run a subset of
# their calls under valgrind (tests/exec_families.rs).
export DYND_VALGRIND=1
# Tests that exist to cross a size threshold -- thread splits on 1, 2 and 3
# threads, streamed outputs, JSON Lines pieces -- run the same kernels as
# the small tests on arrays of 10^5..10^6 elements: under valgrind each took
# minutes (the integration binary alone ran past 50 minutes). They run
# natively in `cargo test`; here they are skipped by name, and the unsafe
# parts of splitting (exec::split, callable::split, the parallel sort,
# absorbed arenas) are checked by their own unit tests, which are sized
# just above the thresholds when DYND_VALGRIND is set.
skips=(
  exec_families::every_executor_gives_the_serial_result
  exec_families::ragged_families
  exec_families::flat_families
  exec_families::json_and_arrow
  json_lines::parallel_read_equals_serial_read
  json_lines::parallel_errors_report_the_global_line
  json_lines::long_strings_and_rows_in_every_piece
  callable_core::the_ragged_path_agrees_with_the_general_lifter
  callable_core::the_flat_path_agrees_with_the_general_lifter
  callable_core::parallel_and_serial_results_agree
  callable_strings::large_calls_match_element_by_element
  callable_arith::parallel_results_equal_a_rust_loop_and_serial_pieces
  callable_reduce::parallel_results_equal_serial_ones_bit_for_bit
  segmented::folds_over_a_large_output_stream_it_with_the_same_bits
  segmented::a_large_ragged_call_streams_its_new_values_with_the_same_bits
  segmented::a_large_ragged_sum_splits_across_threads_with_the_serial_bits
  sorting_props::long_float_rows_match_plain_loops
  reduce_missing::large_reductions_agree_across_thread_counts
  # The emulated device sweeps compile and launch thousands of generated
  # kernels (each launch a block of host threads): minutes natively, hours
  # under valgrind. The emulator's unsafe launch path is checked by the
  # small emulated tests, which stay (`ragged_kernels_once`: each ragged
  # row and selection kernel once).
  emulated::every_function_on_every_type_equals_the_host
  emulated::reductions_equal_the_host
  emulated::random_reductions_equal_the_host
  emulated::casts_equal_the_host
  emulated::reductions_of_each_plan
  emulated::where_equals_the_host
  emulated::ragged_rows_equal_the_host
  emulated::ragged_selection_equals_the_host
  emulated::ragged_extremes_equal_the_host
  emulated::ragged_broadcasting_equals_the_host
  emulated::long_rows_equal_the_host
  emulated::ragged_reductions_over_fixed_axes_equal_the_host
)
skip_args=()
for s in "${skips[@]}"; do skip_args+=(--skip "$s"); done
# Debug builds keep valgrind's reports readable; no doc tests (rustdoc runs
# its own processes).
mapfile -t bins < <(cargo test --workspace --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        print(m["executable"])
')
# One valgrind per core (valgrind runs a process's threads on one), the
# largest binaries (the longest runs) first; each writes its own log.
jobs="${DYND_VALGRIND_JOBS:-$(nproc)}"
if [ ${#bins[@]} -eq 0 ]; then
  echo "no test binaries: cargo test --workspace --no-run failed or built none"; exit 1
fi
mapfile -t bins < <(ls -S "${bins[@]}")
run_one() {
  local bin=$1 name
  name=$(basename "$bin")
  # --test-threads=1: valgrind serialises threads anyway; one at a time keeps
  # reports attributable. Tests that spawn their own threads still do.
  if valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
      --show-leak-kinds=definite "$bin" --test-threads=1 -q "${skip_args[@]}" "${test_filter[@]}" \
      >"/tmp/valgrind-$name.log" 2>&1; then
    echo "== valgrind $name: $(grep -E "test result" "/tmp/valgrind-$name.log" | tail -1) (at ${SECONDS}s)"
  else
    echo "== valgrind $name FAILED: see /tmp/valgrind-$name.log"
    tail -40 "/tmp/valgrind-$name.log"
    return 1
  fi
}
status=0
running=0
for bin in "${bins[@]}"; do
  name=$(basename "$bin")
  [[ -n "$filter" && "$name" != "$filter"* ]] && continue
  # c_tests drives the C programs, and runs each under valgrind itself.
  [[ "$name" == c_tests-* ]] && continue
  if (( running >= jobs )); then
    wait -n || status=1
    running=$((running - 1))
  fi
  run_one "$bin" &
  running=$((running + 1))
done
while (( running > 0 )); do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
