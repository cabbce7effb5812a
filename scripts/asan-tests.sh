#!/usr/bin/env bash
# Runs the unsafe core's tests under AddressSanitizer (with LeakSanitizer):
# the library's unit and integration tests (dynd), the C ABI's Rust tests
# (dynd-capi) and the lazy operators' tests (dynd-ops, which reads and
# writes dynd arrays through raw pointers). Any out-of-bounds access, use after free, double free or
# leak aborts the test binary with a report.
#
# Needs the nightly toolchain (`-Zsanitizer` is unstable); the standard
# library is not rebuilt with ASan (no -Zbuild-std): our own code, where the
# unsafe is, is instrumented, and the runtime still intercepts every
# malloc/free. Builds go to target/asan so the normal build stays warm.
#
#   scripts/asan-tests.sh                 # dynd, dynd-capi, dynd-ops
#   scripts/asan-tests.sh -- stress::     # extra arguments go to cargo test
#
# Not run: doc tests (rustdoc does not pass the sanitizer to its
# binaries), and dynd-capi's c_tests.rs, which links C programs against the
# cdylib (an instrumented .so needs the ASan runtime preloaded into a C
# program; those programs run under valgrind in scripts/valgrind-tests.sh
# and c_tests.rs instead).
set -euo pipefail
cd "$(dirname "$0")/.."
rustup toolchain list | grep -q '^nightly' || { echo "needs a nightly toolchain (rustup toolchain install nightly)"; exit 1; }

host=$(rustc +nightly -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Zsanitizer=address ${RUSTFLAGS:-}"
# allocator_may_return_null: tests ask for absurd sizes on purpose and expect
# an `Alloc` error (malloc returning null), which ASan would otherwise turn
# into a fatal allocation-size-too-big report.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:detect_stack_use_after_return=1}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/asan}"
# Property tests: fewer cases, as under valgrind (ASan runs ~2-3x slower).
export PROPTEST_CASES="${PROPTEST_CASES:-32}"

# --target keeps build scripts and proc macros uninstrumented (they run on
# the host, outside the sanitizer runtime).
echo "== ASan: dynd (lib + tests)"
cargo +nightly test --target "$host" -p dynd --lib --tests "$@"
echo "== ASan: dynd-capi (lib + Rust tests)"
cargo +nightly test --target "$host" -p dynd-capi --lib --test integration "$@"
echo "== ASan: dynd-ops (lib + tests)"
cargo +nightly test --target "$host" -p dynd-ops --lib --tests "$@"
echo "== ASan: no reports"
