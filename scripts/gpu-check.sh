#!/usr/bin/env bash
# The one prepared check a lent GPU machine runs (DESIGN §14; it must finish
# in 8 minutes): dynd-cuda's test binary from .gpu-bundle/ (built here by
# scripts/gpu-bundle.sh) with DYND_REQUIRE_GPU=1, so no GPU test may skip;
# the Python package's CUDA tests, the tour and bench/gpu_compare.py from the
# carried wheel; compute-sanitizer memcheck and racecheck over the GPU tests
# when the machine has it. Prints `N passed, M failed` last; exits non-zero
# on any failure.
#
# Every step has a time limit inside an overall budget (DYND_GPU_BUDGET_S,
# default 480 s), so one hung or slow step cannot take the rest of the run:
# a step stopped at its limit counts as failed and says so. Full logs go to
# $OUT (the device tool's folder of files that come back) when it is set.
set -uo pipefail
cd "$(dirname "$0")/.."
bundle=.gpu-bundle
[ -d "$bundle" ] || { echo "no $bundle: run scripts/gpu-bundle.sh where Rust is, and carry it"; exit 2; }
export DYND_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
# NVRTC: the machine's CUDA installation, else its Python's NVRTC wheel,
# else the wheel carried in .nvrtc: the first folder that holds it.
sites=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
    $(for s in $sites; do echo "$s/nvidia/cu13/lib $s/nvidia/cuda_nvrtc/lib"; done) "$PWD/.nvrtc/nvidia/cu13/lib"; do
  if ls "$d"/libnvrtc.so.13* >/dev/null 2>&1; then
    export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; echo "NVRTC from $d"; break
  fi
done
export DYND_REQUIRE_NVRTC=1
logs="${OUT:-$(mktemp -d)}"
start=$SECONDS
budget="${DYND_GPU_BUDGET_S:-480}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
passed=0; failed=0

# The seconds a step may take: its own limit, or what is left of the budget.
limit() {
  local left=$((budget - (SECONDS - start)))
  [ "$left" -lt "$1" ] && echo $((left > 5 ? left : 5)) || echo "$1"
}

# Counts a finished step: $1 its name, $2 its exit status.
count() {
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "ok: $1";
  elif [ "$2" -eq 124 ] || [ "$2" -eq 137 ]; then failed=$((failed + 1)); echo "FAILED: $1 (stopped at its time limit)";
  else failed=$((failed + 1)); echo "FAILED: $1 (exit $2)"; fi
}

# Counts a libtest log's tests: $1 the log, $2 the run's exit status.
tests_of() {
  local p f
  p=$(grep -Eo '[0-9]+ passed' "$1" | awk '{s+=$1} END {print s+0}')
  f=$(grep -Eo '[0-9]+ failed' "$1" | awk '{s+=$1} END {print s+0}')
  if [ "$2" -ne 0 ] || ! grep -q 'test result: ok' "$1"; then f=$((f > 0 ? f : 1)); fi
  grep -E '^(test .*FAILED|SKIP|BENCH|test result)' "$1" | head -30
  grep -A2 'panicked at' "$1" | cut -c1-600 | head -30
  [ "$2" -eq 124 ] || [ "$2" -eq 137 ] && echo "(stopped at its time limit: $(grep -c '\.\.\. ok' "$1") tests had passed)"
  passed=$((passed + p)); failed=$((failed + f))
}

tests="$bundle/dynd-cuda-tests"
if [ -x "$tests" ]; then
  # The tests that need no device (NVRTC compiles every kernel family with
  # this machine's CUDA; the interpreter's property tests) run beside the
  # GPU tests, on other cores. The emulated tests ran where the bundle was
  # built (they need a C++ compiler, not a GPU): skipped here.
  # DYND_GPU_CHECK_COMPILE=0 leaves them out (a rerun in the same session,
  # after a run that passed them, keeps its CPUs for the GPU tests).
  if [ "${DYND_GPU_CHECK_COMPILE:-1}" != 0 ]; then
    timeout "$(limit 300)" "$tests" --skip emulated --skip gpu:: --test-threads=8 >"$logs/cpu-tests.log" 2>&1 &
    cpu_pid=$!
  fi
  # The GPU tests, all at once (each thread binds the device's context;
  # the sweeps take each type on a thread of their own, since NVRTC's
  # compiles are CPU time), but not those that need the process to
  # themselves: `a_second_*` (the compile counter and the memory pool are
  # the process's) and `fused_*` (the BENCH line is a timing). --nocapture: a failure's message is in the log even when the
  # run is stopped at its limit.
  echo "== dynd-cuda-tests gpu::"
  timeout "$(limit 300)" "$tests" gpu:: --skip gpu::a_second --skip gpu::fused --test-threads=16 --nocapture >"$logs/gpu-tests.log" 2>&1
  tests_of "$logs/gpu-tests.log" $?
  echo "== dynd-cuda-tests gpu::a_second gpu::fused (alone)"
  timeout "$(limit 60)" "$tests" gpu::a_second gpu::fused --test-threads=1 --nocapture >"$logs/gpu-alone.log" 2>&1
  tests_of "$logs/gpu-alone.log" $?
  if [ -n "${cpu_pid:-}" ]; then
    wait "$cpu_pid"; rc=$?
    echo "== dynd-cuda-tests (compile::, interp::: no device needed)"
    tests_of "$logs/cpu-tests.log" "$rc"
  else
    echo "SKIP: compile:: and interp:: (DYND_GPU_CHECK_COMPILE=0)"
  fi
else
  echo "no $tests in the bundle"; failed=$((failed + 1))
fi

# The Python package: the benchmark table first (its rows print as they are
# measured), then its CUDA tests and the tour.
wheel=$(ls "$bundle"/wheels/dynd-*.whl 2>/dev/null | head -1)
if [ -n "$wheel" ]; then
  # Into a folder on PYTHONPATH, not a venv: the machine's python3 is
  # itself a venv's (CuPy, PyTorch, pytest, pyarrow live there), whose
  # packages a venv made from it would not see.
  site=/tmp/dynd-site
  # (A wheel is a zip of what goes on the path: unpacked, it imports.)
  rm -rf "$site" && python3 -m zipfile -e "$wheel" "$site"
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
  py=python3
  echo "== python bench/gpu_compare.py --size 1e8 --runs 10"
  timeout "$(limit 200)" "$py" bench/gpu_compare.py --size 1e8 --runs 10 2>&1 | tee "$logs/gpu-compare.log"
  count "bench/gpu_compare.py" "${PIPESTATUS[0]}"
  if "$py" -c 'import pytest' 2>/dev/null; then
    echo "== pytest crates/dynd-python/tests/test_cuda.py"
    timeout "$(limit 90)" "$py" -m pytest -q -p no:cacheprovider crates/dynd-python/tests/test_cuda.py >"$logs/python.log" 2>&1
    rc=$?; tail -15 "$logs/python.log"; count "pytest test_cuda.py" "$rc"
  else
    echo "SKIP: pytest is not on this machine (the Python CUDA tests did not run)"
  fi
  echo "== python examples/python/tour.py"
  (cd examples/python && timeout "$(limit 60)" "$py" tour.py) >>"$logs/python.log" 2>&1
  rc=$?; tail -8 "$logs/python.log"; count "examples/python/tour.py" "$rc"
else
  echo "no wheel in $bundle/wheels: the Python checks did not run"; failed=$((failed + 1))
fi

if command -v compute-sanitizer >/dev/null && [ -x "$tests" ]; then
  for tool in memcheck racecheck; do
    # Not the sweeps: under the sanitizer their thousands of launches
    # would not fit the 8 minutes; these tests launch every kind of kernel
    # (contiguous, strided, scalar, failing, casts, fused, each reduction
    # plan: shared memory and __syncthreads for racecheck; copies for
    # aliased outputs; the row-aware ragged kernels, selections and scan).
    echo "== compute-sanitizer --tool $tool dynd-cuda-tests (gpu:: but the sweeps)"
    # One type at a time: under racecheck, launches from a dozen threads at
    # once made the sanitizer lose track of one (an "Internal Sanitizer
    # Error", counted as an error).
    DYND_GPU_TESTS_SERIAL=1 timeout "$(limit 75)" compute-sanitizer --tool "$tool" --error-exitcode 9 "$tests" --test-threads=1 \
        gpu::arrays gpu::device_errors gpu::a_second gpu::mixing gpu::assignments \
        gpu::ops_fuse gpu::reductions_of_each_plan gpu::overlapping \
        gpu::ragged_elementwise gpu::ragged_kernels_once >"$logs/sanitizer-$tool.log" 2>&1
    rc=$?; tail -4 "$logs/sanitizer-$tool.log"; count "compute-sanitizer $tool" "$rc"
  done
fi
echo "($((SECONDS - start)) s; logs in $logs)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
