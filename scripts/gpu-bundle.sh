#!/usr/bin/env bash
# Builds, here, what a lent GPU machine runs (it has CUDA, Python, CuPy and
# PyTorch but no Rust toolchain and no network): the dynd-cuda test binaries
# (release, stripped) into .gpu-bundle/ (gitignored), for the device tool's
# `carry`. Then on the device: scripts/gpu-check.sh.
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
  cp "$path" "$out/$name" && strip "$out/$name"
done
ls -l "$out"
du -sh "$out"
