#!/usr/bin/env bash
# Builds, here, what a lent GPU machine runs (it has CUDA, Python, CuPy and
# PyTorch but no Rust toolchain and no network) into .gpu-bundle/
# (gitignored), for the device tool's `carry` (64 MiB at most): dynd-cuda's
# integration test binary (its `gpu` tests need the device; `compile` checks
# the machine's NVRTC), release and stripped, and the `dynd` wheel (release).
# Then on the device: scripts/gpu-check.sh.
#
#   scripts/gpu-bundle.sh          # then carry [".gpu-bundle"] and run
#                                  # `bash scripts/gpu-check.sh`
set -euo pipefail
cd "$(dirname "$0")/.."
out=.gpu-bundle
rm -rf "$out" && mkdir -p "$out"
mapfile -t bins < <(cargo test --release -p dynd-cuda --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] != ["bin"]:
        print(m["target"]["name"] + " " + m["executable"])
')
for b in "${bins[@]}"; do
  name="${b%% *}"; path="${b#* }"
  case "$name" in integration) cp "$path" "$out/dynd-cuda-tests" && strip "$out/dynd-cuda-tests" ;; esac
done
maturin="${DYND_PYENV:-.venv}/bin/maturin"
[ -x "$maturin" ] || { echo "no $maturin: run scripts/python-tests.sh once (it makes the venv)"; exit 1; }
"$maturin" build -q --release --strip -m crates/dynd-python/Cargo.toml -o "$out/wheels"
ls -l "$out"
du -sh "$out"
