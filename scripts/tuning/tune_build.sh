# shellcheck shell=bash
# Sourced by the tuning scripts of this folder, from the repository root.
# tune_build SCRIPT BUILD TARGET: turns GEMM_MLP_BUILD_TUNE on in the CMake build folder BUILD
# (which must exist: scripts/check/gpu_check.sh makes build-gpu), builds TARGET (tools/tune/),
# and sets program to its path. TUNE_BUILD_ONLY set: builds and exits without running (no GPU here).
tune_build() {
  local script=$1 build=$2 target=$3
  if [ ! -f "$build/CMakeCache.txt" ]; then
    echo "$script: '$build' is not a CMake build folder; build the project first" \
      "(scripts/check/gpu_check.sh makes build-gpu)" >&2
    exit 2
  fi
  cmake -S . -B "$build" -DGEMM_MLP_BUILD_TUNE=ON -DGEMM_MLP_GPU_KERNELS=ON >/dev/null
  cmake --build "$build" -j "$(nproc)" --target "$target"
  program="$build/tools/tune/$target"
  if [ -n "${TUNE_BUILD_ONLY:-}" ]; then
    echo "$script: built $program (TUNE_BUILD_ONLY: not run)"
    exit 0
  fi
}
