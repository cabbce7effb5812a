#!/usr/bin/env bash
# Every test of the project -- the README's test command, which .ci/run runs:
#   1. Rust: unit, integration and doc tests of every crate, the C ABI's C
#      tests (crates/dynd-capi/tests/c_tests.rs), the CLI's tests;
#   2. Python: the dynd package's pytest suite and the examples
#      (scripts/python-tests.sh, which makes its own virtual environment).
# NVRTC comes from PyPI (scripts/nvrtc.sh), so that every kernel the CUDA
# code generator emits is compiled here, GPU or not; DYND_REQUIRE_NVRTC=1
# makes a missing NVRTC a failure instead of a skip. The generated CUDA C
# also runs here, on the host emulator (dynd_cuda::emulator, the C++
# compiler); DYND_REQUIRE_EMULATOR=1 makes a missing C++ compiler a failure.
# Tests that need a GPU print "SKIP: no CUDA device (...)" without one
# (scripts/gpu-check.sh runs them on a device).
set -euo pipefail
cd "$(dirname "$0")/.."
nvrtc_lib="$(bash scripts/nvrtc.sh)"
export LD_LIBRARY_PATH="$nvrtc_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DYND_REQUIRE_NVRTC=1
export DYND_REQUIRE_EMULATOR=1
echo "== cargo test --workspace"
cargo test --workspace
bash scripts/python-tests.sh
