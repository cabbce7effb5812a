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
status=0
for bin in "${bins[@]}"; do
  name=$(basename "$bin")
  [[ -n "$filter" && "$name" != "$filter"* ]] && continue
  echo "== valgrind $name"
  # --test-threads=1: valgrind serialises threads anyway; one at a time keeps
  # reports attributable. Tests that spawn their own threads still do.
  if ! valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
      --show-leak-kinds=definite "$bin" --test-threads=1 -q "${test_filter[@]}" >"/tmp/valgrind-$name.log" 2>&1; then
    echo "FAILED: see /tmp/valgrind-$name.log"; tail -40 "/tmp/valgrind-$name.log"; status=1
  else
    grep -E "test result" "/tmp/valgrind-$name.log" | tail -1
  fi
done
exit $status
