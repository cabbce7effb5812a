#!/usr/bin/env bash
# Runs the Python examples of the C ABI (examples/python/) against a fresh
# debug build of libdynd_capi.so:
#   ctypes_demo.py   -- ctypes only (no packages needed)
#   numba_kernel.py  -- a numba.cfunc kernel (needs numba, installed here)
#
# A virtual environment is made in $DYND_PYENV (default .venv, gitignored)
# and numba installed into it once; later runs reuse both. Only when pip
# cannot install numba (no network to the package index) is the Numba
# example skipped, with a message saying so; every other failure fails.
#
#   scripts/python-examples.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in examples/python

venv="${DYND_PYENV:-.venv}"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
python="$venv/bin/python"

echo "== cargo build -p dynd-capi"
cargo build -q -p dynd-capi
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
export DYND_CAPI_LIB="$target_dir/debug/libdynd_capi.so"
[ -f "$DYND_CAPI_LIB" ] || { echo "no $DYND_CAPI_LIB after the build"; exit 1; }

if ! "$python" -c 'import sys' 2>/dev/null; then
  echo "== python3 -m venv ${venv#"$PWD"/}"
  rm -rf "$venv"
  python3 -m venv "$venv"
fi

have_numba=yes
if ! "$python" -c 'import numba, numpy' 2>/dev/null; then
  echo "== pip install numba (into ${venv#"$PWD"/})"
  if ! "$python" -m pip install -q --disable-pip-version-check --retries 2 --timeout 30 \
      'numba>=0.59'; then
    have_numba=no
  elif ! "$python" -c 'import numba, numpy'; then
    echo "numba installed but does not import"; exit 1
  fi
fi

passed=0 failed=0 skipped=0
run() {
  echo "== python $1"
  if (cd examples/python && "$python" "$1"); then
    passed=$((passed + 1))
  else
    echo "FAILED: examples/python/$1"; failed=$((failed + 1))
  fi
}

run ctypes_demo.py
if [ "$have_numba" = yes ]; then
  run numba_kernel.py
else
  echo "SKIPPED: examples/python/numba_kernel.py -- pip could not install numba" \
       "(is the package index reachable?)"
  skipped=$((skipped + 1))
fi

echo "python-examples: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
