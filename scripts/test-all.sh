#!/usr/bin/env bash
# Every test of the project -- the README's test command, which .ci/run runs:
#   1. Rust: unit, integration and doc tests of every crate, the C ABI's C
#      tests (crates/dynd-capi/tests/c_tests.rs), the CLI's tests;
#   2. Python: the dynd package's pytest suite and the examples
#      (scripts/python-tests.sh, which makes its own virtual environment).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== cargo test --workspace"
cargo test --workspace
bash scripts/python-tests.sh
