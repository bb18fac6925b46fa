#!/usr/bin/env bash
# README's test command: installs what is missing, builds everything and runs the whole suite.
# GPU tests skip where there is no usable GPU; scripts/gpu_check.sh runs them with none skipped.
# Environment: BUILD_DIR (default build), CUDA_ARCHS (default: this machine's GPUs, or 80 without
# one; see cmake/cuda_defaults.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
# MNIST lets the tests that train on it run (they skip without it, naming the reason).
scripts/fetch_mnist.sh data/mnist || echo "test.sh: MNIST could not be fetched; its tests skip"
build_dir=${BUILD_DIR:-build}
arch_args=()
[ -n "${CUDA_ARCHS:-}" ] && arch_args=(-DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS")
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "${arch_args[@]}"
cmake --build "$build_dir" -j "$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
