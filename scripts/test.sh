#!/usr/bin/env bash
# README's test command: installs what is missing, builds everything and runs the whole suite.
# GPU tests skip where there is no usable GPU; scripts/check/gpu_check.sh runs them with none
# skipped.
# ctest's whole output goes to BUILD_DIR/ctest.log; the terminal gets it condensed
# (scripts/check/ctest_progress.awk): a progress line every 250 passes, each skipped test named
# once, each failure whole, ctest's closing lines. The summary at the end counts the skipped tests
# by reason (scripts/check/ctest_summary.py reads ctest's JUnit file, BUILD_DIR/ctest_junit.xml).
# The exit status is ctest's: 0 when no test failed, skips included.
# Environment: BUILD_DIR (default build), CUDA_ARCHS (default: this machine's GPUs, or 80 without
# one; see cmake/cuda_defaults.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup/install_deps.sh
# MNIST lets the tests that train on it run (they skip without it, naming the reason).
scripts/setup/fetch_mnist.sh data/mnist || echo "test.sh: MNIST could not be fetched; its tests skip"
build_dir=${BUILD_DIR:-build}
arch_args=()
[ -n "${CUDA_ARCHS:-}" ] && arch_args=(-DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS")
# Everything, GPU kernels included (scripts/train.sh may have configured BUILD_DIR without them on
# a machine with no GPU; this turns them back on).
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
echo "(ctest's whole output: $log)"
echo "----- summary"
if [ ! -s "$junit" ]; then
  echo "test.sh: ctest wrote no JUnit file ($junit): no skip summary"
elif command -v python3 >/dev/null; then
  python3 scripts/check/ctest_summary.py "$junit" || true
else
  echo "$(grep -c 'status="notrun"' "$junit" || true) tests skipped (install python3 for the reasons)"
fi
exit "$status"
