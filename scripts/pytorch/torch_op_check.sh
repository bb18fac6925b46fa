#!/usr/bin/env bash
# The torch op's check on a GPU machine with PyTorch, in one command:
#
#   scripts/pytorch/torch_op_check.sh <out-dir>
#
# 1. fails at once without a GPU (nvidia-smi) or without a CUDA build of torch for $PYTHON;
# 2. configures BUILD_DIR with the op (-DGEMM_MLP_TORCH=ON: a PyTorch that does not suit stops
#    here, saying why) and builds the op library and test_gemm, with all cores;
# 3. runs the op's unittest suites (PyTorch.*) and the kernels' scratch-memory hook's tests
#    (GemmWorkspace.*) through ctest, with GEMM_MLP_REQUIRE_GPU=1 and GEMM_MLP_REQUIRE_TORCH=1:
#    a skip is a failure; fails if any failed, skipped or none ran;
# 4. runs scripts/pytorch/torch_op_bench.py: GEMMs against torch.matmul, a call's overhead, and
#    MNIST training through fp32_accurate() (MNIST from MNIST_DIR; without it, the training part
#    is left out and the check fails).
#
# Writes to <out-dir>: torch_op_check.log (every step), summary.txt (PASS/FAIL and the counts),
# ctest.log, torch_op_gemm.csv, torch_op_overhead.csv, torch_op_train.csv, torch_op_bench.json.
#
# Environment:
#   BUILD_DIR   build folder (default build-torch)
#   CUDA_ARCHS  CMAKE_CUDA_ARCHITECTURES (default 90: the H200 only, for build speed)
#   CMAKE_ARGS  extra configure arguments (word-split), e.g. where CMake finds nlohmann/json and
#               stb: "-DCMAKE_PREFIX_PATH=/opt/deps -DSTB_INCLUDE_DIR=/opt/deps/include/stb"
#   PYTHON      the Python with torch (default python3)
#   MNIST_DIR   MNIST files (default data/mnist)
#   BENCH_ARGS  extra torch_op_bench.py arguments (word-split), e.g. "--epochs 3 --skip train"
#   STEPS       comma-separated subset of build,test,bench (default: all three)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)

if [ $# -ne 1 ]; then
  echo "usage: scripts/pytorch/torch_op_check.sh <out-dir>" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
# log, note, fail, run_logged, mnist_present and the exit trap, shared with gpu_check.sh.
# shellcheck source=scripts/check/gpu_check/common.sh
source "$repo/scripts/check/gpu_check/common.sh"
build_dir=$(in_repo "${BUILD_DIR:-build-torch}")
mnist_dir=$(in_repo "${MNIST_DIR:-data/mnist}")
python=${PYTHON:-python3}
steps=",${STEPS:-build,test,bench},"
jobs=$(nproc)
# shellcheck disable=SC2206
cmake_extra=(${CMAKE_ARGS:-})
start_log torch_op_check
# shellcheck disable=SC2317  # called from the EXIT trap
write_summary() {
  {
    echo "torch_op_check.sh summary ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
    echo "repo: $repo (commit ${SOURCE_COMMIT:-$(source_commit)})"
    echo "build dir: $build_dir, CUDA architectures: ${CUDA_ARCHS:-90}, python: $python"
    printf '%s\n' "${summary_lines[@]}"
    if [ "$overall" -eq 0 ]; then echo "RESULT: PASS"; else echo "RESULT: FAIL"; fi
  } >"$summary"
}
trap 'on_exit $?' EXIT

# --- 1. A GPU and torch ------------------------------------------------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  fail "no GPU: nvidia-smi lists none"
  exit 1
fi
note "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
if ! versions=$("$python" -c 'import torch; print(torch.__version__, torch.version.cuda,
  torch.cuda.is_available())' 2>>"$main_log"); then
  fail "$python cannot import torch (torch_op_check.log)"
  exit 1
fi
note "torch: $versions (torch version, its CUDA, a GPU usable)"
if [[ $versions != *True ]]; then
  fail "torch sees no usable GPU"
  exit 1
fi

# --- 2. Configure and build --------------------------------------------------------------------
if [[ $steps == *,build,* ]]; then
  if ! run_logged "$main_log" cmake -S "$repo" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
      -DGEMM_MLP_GPU_KERNELS=ON -DGEMM_MLP_TORCH=ON -DGEMM_MLP_PYTHON="$python" \
      -DGEMM_MLP_BUILD_APPS=OFF -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" \
      "${cmake_extra[@]}"; then
    fail "configure failed (torch_op_check.log: the 'gemm_mlp: ' lines say why)"
    exit 1
  fi
  start=$SECONDS
  if ! run_logged "$main_log" cmake --build "$build_dir" -j "$jobs" \
      --target gemm_mlp_torch_ops test_gemm; then
    fail "build failed (torch_op_check.log)"
    exit 1
  fi
  note "build: ok in $((SECONDS - start)) s (gemm_mlp_torch_ops, test_gemm)"
fi
library="$build_dir/pytorch/libgemm_mlp_torch_ops.so"

# --- 3. Tests, none skipped --------------------------------------------------------------------
if [[ $steps == *,test,* ]]; then
  junit="$build_dir/torch_op_junit.xml"
  rm -f "$junit"
  start=$SECONDS
  ctest_rc=0
  run_logged "$out/ctest.log" env GEMM_MLP_REQUIRE_GPU=1 GEMM_MLP_REQUIRE_TORCH=1 \
    ctest --test-dir "$build_dir" --output-on-failure -j 4 --output-junit "$junit" \
    -R '^(PyTorch\.|GemmWorkspace\.)' || ctest_rc=$?
  log "ctest exit status $ctest_rc after $((SECONDS - start)) s"
  if [ ! -s "$junit" ]; then
    fail "tests: ctest wrote no JUnit file (exit status $ctest_rc; see ctest.log)"
  else
    junit_counts "$junit"
    if [ "$failed" -gt 0 ]; then fail "tests: $failed failed (ctest.log)"; fi
    if [ "$skipped" -gt 0 ]; then fail "tests: $skipped skipped on a GPU machine with torch"; fi
    if [ "$total" -lt 8 ]; then fail "tests: only $total ran (4 PyTorch.*, 4 GemmWorkspace.*)"; fi
    if [ "$ctest_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then fail "tests: ctest exit status $ctest_rc"; fi
  fi
fi

# --- 4. Measurements ---------------------------------------------------------------------------
if [[ $steps == *,bench,* ]]; then
  # shellcheck disable=SC2206
  bench_extra=(${BENCH_ARGS:-})
  if ! mnist_present; then
    fail "MNIST not found in $mnist_dir (scripts/setup/fetch_mnist.sh): training left out"
    bench_extra+=(--skip train)
  fi
  if run_logged "$main_log" "$python" "$repo/scripts/pytorch/torch_op_bench.py" --out "$out" \
      --library "$library" --data-dir "$mnist_dir" "${bench_extra[@]}"; then
    note "bench: ok (torch_op_*.csv, torch_op_bench.json)"
  else
    fail "bench: torch_op_bench.py failed or a row has a note (torch_op_check.log)"
  fi
fi
