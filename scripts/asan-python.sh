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
# --target: RUSTFLAGS then reach only the target crates, not proc macros.
host=$(rustc +nightly -vV | sed -n "s/^host: //p")
runtime=$(gcc -print-file-name=libasan.so)
[ -f "$runtime" ] || { echo "needs GCC's ASan runtime (libasan.so; apt-get install libasan8)"; exit 1; }

venv="${DYND_ASAN_PYENV:-.venv-asan}"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
if ! "$venv/bin/python" -c 'import maturin, numpy, pyarrow, numba, pytest, hypothesis' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check maturin numpy pyarrow numba pytest hypothesis
fi

# A wheel installed into the ASan environment, not `maturin develop`: an
# editable install would put the instrumented module into the source tree,
# where .venv's (uninstrumented) install finds it too.
echo "== maturin build (nightly, -Zsanitizer=address)"
wheels=target/asan-python/wheels
rm -rf "$wheels"
RUSTUP_TOOLCHAIN=nightly RUSTFLAGS="-Zsanitizer=address" CARGO_TARGET_DIR=target/asan-python \
  "$venv/bin/maturin" build -q --profile dev --target "$host" -i "$venv/bin/python" \
  -m crates/dynd-python/Cargo.toml -o "$wheels"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheels"/dynd-*.whl

echo "== pytest under ASan"
# Run from outside the source tree, so that `import dynd` is the wheel's.
cd "$(mktemp -d)"
root="$OLDPWD"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1:abort_on_error=1}"
LD_PRELOAD="$runtime" PYTHONMALLOC=malloc "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  "$root/crates/dynd-python/tests" "$@"
