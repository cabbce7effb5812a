#!/usr/bin/env bash
# Makes NVRTC (CUDA 13's run-time compiler) available without a CUDA
# installation, for the tests that compile every generated device kernel
# (crates/dynd-cuda/tests/compile.rs): pip installs the `nvidia-cuda-nvrtc`
# wheel (libnvrtc.so.13 and its builtins, no driver) into .nvrtc/ (gitignored)
# once, and prints the directory to put on LD_LIBRARY_PATH.
#
#   export LD_LIBRARY_PATH="$(scripts/nvrtc.sh)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$PWD/.nvrtc"
lib="$dir/nvidia/cu13/lib"
if [ ! -e "$lib/libnvrtc.so.13" ]; then
  echo "== pip install nvidia-cuda-nvrtc (CUDA 13) into .nvrtc" >&2
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --retries 2 --timeout 60 \
    --no-deps --target "$dir" 'nvidia-cuda-nvrtc>=13,<14' >&2
fi
[ -e "$lib/libnvrtc.so.13" ] || { echo "no libnvrtc.so.13 under $lib after the install" >&2; exit 1; }
echo "$lib"
