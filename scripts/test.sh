#!/usr/bin/env bash
# README's test command: installs what is missing, builds everything and runs the whole suite.
#
#   scripts/test.sh             (--help: this text)
#
# It builds in its own folder, build-test/, with the GPU kernels and the tests
# (-DGEMM_MLP_GPU_KERNELS=ON), and leaves scripts/train.sh's build/ as it is.
# GPU tests skip where there is no usable GPU; scripts/check/gpu_check.sh runs them with none
# skipped.
# ctest's whole output goes to BUILD_DIR/ctest.log; the terminal gets it condensed
# (scripts/check/ctest_progress.awk): a progress line every 250 tests, each failure whole, ctest's
# closing lines. The summary at the end leads with the counts, then each failure, then the
# skipped tests, one line per reason (scripts/check/ctest_summary.py reads ctest's JUnit file,
# BUILD_DIR/ctest_junit.xml).
# The exit status is ctest's: 0 when no test failed, skips included.
# Environment: BUILD_DIR (default build-test), CUDA_ARCHS (default: this machine's GPUs, or 80
# without one; see cmake/cuda_defaults.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."

for arg in "$@"; do
  case "$arg" in
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "test.sh: error: unknown argument '$arg' (it takes none; --help says what it does)" >&2
      exit 2
      ;;
  esac
done

scripts/setup/install_deps.sh
# MNIST lets the tests that train on it run (they skip without it, naming the reason).
scripts/setup/fetch_mnist.sh data/mnist || echo "test.sh: MNIST could not be fetched; its tests skip"
build_dir=${BUILD_DIR:-build-test}
arch_args=()
[ -n "${CUDA_ARCHS:-}" ] && arch_args=(-DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS")
# Everything, GPU kernels included. A BUILD_DIR configured without them (scripts/train.sh's
# build/ on a machine with no GPU, given as BUILD_DIR=build) is not switched silently.
if [ -f "$build_dir/CMakeCache.txt" ] &&
  grep -q '^GEMM_MLP_GPU_KERNELS:BOOL=OFF' "$build_dir/CMakeCache.txt"; then
  echo "test.sh: error: $build_dir was configured without the GPU kernels (as scripts/train.sh" \
    "configures build/ without a GPU), which the tests need; give another BUILD_DIR (the" \
    "default is build-test), or turn them on there with: cmake -S . -B $build_dir" \
    "-DGEMM_MLP_GPU_KERNELS=ON" >&2
  exit 2
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DGEMM_MLP_GPU_KERNELS=ON "${arch_args[@]}"
cmake --build "$build_dir" -j "$(nproc)"
junit="$(cd "$build_dir" && pwd)/ctest_junit.xml"
log="$(cd "$build_dir" && pwd)/ctest.log"
rm -f "$junit"
status=0
{
  ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --output-junit "$junit" || status=$?
  echo "$status" >"$log.status"
} 2>&1 | tee "$log" | awk -f scripts/check/ctest_progress.awk
status=$(cat "$log.status")
rm -f "$log.status"
echo "----- summary"
if [ ! -s "$junit" ]; then
  echo "test.sh: ctest wrote no JUnit file ($junit): no skip summary"
  grep -E '^[0-9]+% tests passed' "$log" || true
elif command -v python3 >/dev/null; then
  python3 scripts/check/ctest_summary.py "$junit" || true
else
  grep -E '^[0-9]+% tests passed' "$log" || true
  echo "$(grep -c 'status="notrun"' "$junit" || true) tests skipped (install python3 for the reasons)"
fi
echo "(ctest's whole output: $log)"
exit "$status"
