#!/usr/bin/env bash
# The one prepared check a lent GPU machine runs (DESIGN §14; it must finish
# in 8 minutes): dynd-cuda's test binary from .gpu-bundle/ (built here by
# scripts/gpu-bundle.sh) with DYND_REQUIRE_GPU=1, so no GPU test may skip;
# compute-sanitizer memcheck and racecheck over the GPU tests when the
# machine has it. Prints `N passed, M failed` last; exits non-zero on any
# failure.
set -uo pipefail
cd "$(dirname "$0")/.."
bundle=.gpu-bundle
[ -d "$bundle" ] || { echo "no $bundle: run scripts/gpu-bundle.sh where Rust is, and carry it"; exit 2; }
export DYND_REQUIRE_GPU=1
# NVRTC: the machine's CUDA installation, else the wheel carried in .nvrtc.
for d in /usr/local/cuda/lib64 "$PWD/.nvrtc/nvidia/cu13/lib"; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export DYND_REQUIRE_NVRTC=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
passed=0; failed=0
for bin in "$bundle"/*; do
  [ -f "$bin" ] && [ -x "$bin" ] || continue
  log="$(mktemp)"
  echo "== $(basename "$bin")"
  # The emulated tests ran where the bundle was built (they need a C++
  # compiler, not a GPU): skipped here, to keep the device's minutes.
  "$bin" --test-threads=1 --skip emulated 2>&1 | tee "$log" | grep -E '^(test |SKIP|BENCH|test result)' || true
  p=$(grep -Eo '[0-9]+ passed' "$log" | awk '{s+=$1} END {print s+0}')
  f=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s+=$1} END {print s+0}')
  if ! grep -q 'test result: ok' "$log"; then f=$((f > 0 ? f : 1)); fi
  passed=$((passed + p)); failed=$((failed + f))
  rm -f "$log"
done
# The Python package: its CUDA tests, the tour, and the benchmark table.
wheel=$(ls "$bundle"/wheels/dynd-*.whl 2>/dev/null | head -1)
if [ -n "$wheel" ]; then
  venv=/tmp/dynd-gpu-venv
  python3 -m venv --system-site-packages "$venv" && "$venv/bin/python" -m pip install -q --no-deps --no-index "$wheel"
  if "$venv/bin/python" -c 'import pytest' 2>/dev/null; then
    echo "== pytest crates/dynd-python/tests/test_cuda.py"
    if "$venv/bin/python" -m pytest -q -p no:cacheprovider crates/dynd-python/tests/test_cuda.py; then
      passed=$((passed + 1)); else failed=$((failed + 1)); fi
  else
    echo "SKIP: pytest is not on this machine (the Python CUDA tests did not run)"
  fi
  echo "== python examples/python/tour.py"
  if (cd examples/python && "$venv/bin/python" tour.py | tail -12); then
    passed=$((passed + 1)); else failed=$((failed + 1)); fi
  echo "== python bench/gpu_compare.py"
  if "$venv/bin/python" bench/gpu_compare.py --size 1e8 --runs 10; then
    passed=$((passed + 1)); else failed=$((failed + 1)); fi
else
  echo "no wheel in $bundle/wheels: the Python checks did not run"; failed=$((failed + 1))
fi
if command -v compute-sanitizer >/dev/null && [ -x "$bundle/dynd-cuda-tests" ]; then
  for tool in memcheck racecheck; do
    # Not the sweeps: under the sanitizer their thousands of launches
    # would not fit the 8 minutes; these tests launch every kind of kernel
    # (contiguous, strided, scalar, failing, casts, fused, each reduction
    # plan: shared memory and __syncthreads for racecheck; copies for
    # aliased outputs; the row-aware ragged kernels, selections and scan).
    echo "== compute-sanitizer --tool $tool dynd-cuda-tests (gpu:: but the sweep)"
    if compute-sanitizer --tool "$tool" --error-exitcode 9 "$bundle/dynd-cuda-tests" --test-threads=1 \
        gpu::arrays gpu::device_errors gpu::a_second gpu::mixing gpu::assignments \
        gpu::ops_fuse gpu::reductions_of_each_plan gpu::overlapping \
        gpu::ragged_elementwise gpu::ragged_kernels_once >/tmp/sanitizer.log 2>&1; then
      passed=$((passed + 1)); tail -3 /tmp/sanitizer.log
    else
      failed=$((failed + 1)); tail -40 /tmp/sanitizer.log
    fi
  done
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
