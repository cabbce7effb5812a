#!/usr/bin/env bash
# The Python side of every test: builds the `dynd` package (crates/dynd-python)
# into a virtual environment, runs its pytest suite, then the examples in
# examples/python/ (the package's tour, Numba and Arrow examples, and the
# ctypes examples against libdynd_capi.so).
#
# The environment is $DYND_PYENV (default .venv, gitignored); it is made
# once, with the packages the tests use installed from PyPI; later runs reuse
# it. Any failure -- an install included -- fails the script.
#
#   scripts/python-tests.sh              # everything
#   scripts/python-tests.sh -k interop   # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONDONTWRITEBYTECODE=1

venv="${DYND_PYENV:-.venv}"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
python="$venv/bin/python"
if ! "$python" -c 'import sys' 2>/dev/null; then
  echo "== python3 -m venv ${venv#"$PWD"/}"
  rm -rf "$venv"
  python3 -m venv "$venv"
fi
packages=(maturin 'numpy>=1.26' 'pyarrow>=14' 'numba>=0.59' 'pytest>=8' 'hypothesis>=6' polars arro3-core 'dask>=2025.1' 'distributed>=2025.1' 'awkward>=2')
if ! "$python" -c 'import maturin, numpy, pyarrow, numba, pytest, hypothesis, polars, arro3.core, dask, distributed, awkward' 2>/dev/null; then
  echo "== pip install ${packages[*]} (into ${venv#"$PWD"/})"
  "$python" -m pip install -q --disable-pip-version-check --retries 2 --timeout 60 "${packages[@]}"
fi

echo "== maturin develop (the dynd package, debug build, into ${venv#"$PWD"/})"
VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop -q -m crates/dynd-python/Cargo.toml

echo "== pytest crates/dynd-python/tests"
"$python" -m pytest -q -p no:cacheprovider crates/dynd-python/tests "$@"

echo "== cargo build -p dynd-capi (for the ctypes examples)"
cargo build -q -p dynd-capi
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
export DYND_CAPI_LIB="$target_dir/debug/libdynd_capi.so"

passed=0 failed=0
for example in tour.py arrow_roundtrip.py numba_ragged_kernel.py lowlevel_ckernel.py ctypes_demo.py numba_kernel.py dask_records.py; do
  echo "== python examples/python/$example"
  if (cd examples/python && "$python" "$example"); then
    passed=$((passed + 1))
  else
    echo "FAILED: examples/python/$example"
    failed=$((failed + 1))
  fi
done
echo "python examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
