#!/usr/bin/env bash
# Runs the Python package's pytest suite with the native module built under
# AddressSanitizer: every out-of-bounds access, use after free or double free
# in dynd's Rust code -- the buffer protocol, DLPack and Arrow capsules,
# kernels from cfuncs, the ctypes face -- aborts with a report.
#
# The module is built with the nightly toolchain and -Zsanitizer=address
# (target/asan-python, so the normal build stays warm) into its own virtual
# environment ($DYND_ASAN_PYENV, default .venv-asan); CPython and NumPy are
# not instrumented, so GCC's ASan runtime is preloaded into the interpreter
# (its malloc interceptors see every allocation). Leak checking is off:
# CPython keeps memory alive until exit by design.
#
#   scripts/asan-python.sh                 # the whole suite
#   scripts/asan-python.sh -k interop      # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."
rustup toolchain list | grep -q '^nightly' || { echo "needs a nightly toolchain (rustup toolchain install nightly)"; exit 1; }
runtime=$(gcc -print-file-name=libasan.so)
[ -f "$runtime" ] || { echo "needs GCC's ASan runtime (libasan.so; apt-get install libasan8)"; exit 1; }

venv="${DYND_ASAN_PYENV:-.venv-asan}"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
if ! "$venv/bin/python" -c 'import maturin, numpy, pyarrow, numba, pytest, hypothesis' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check maturin numpy pyarrow numba pytest hypothesis
fi

echo "== maturin develop (nightly, -Zsanitizer=address)"
RUSTUP_TOOLCHAIN=nightly RUSTFLAGS="-Zsanitizer=address" CARGO_TARGET_DIR=target/asan-python \
  VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop -q -m crates/dynd-python/Cargo.toml

echo "== pytest under ASan"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1:abort_on_error=1}"
LD_PRELOAD="$runtime" PYTHONMALLOC=malloc "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  crates/dynd-python/tests "$@"
