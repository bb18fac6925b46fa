#!/usr/bin/env bash
# The tile sweeps of the production kernels, on an H200: builds one tune program (tools/tune/) and
# runs it. Needs a build of the project first:
#   scripts/check/gpu_check.sh out   (builds build-gpu, or $BUILD_DIR)   then
#   scripts/tuning/tune.sh SWEEP [build-dir] [sections]
# build-dir defaults to build-gpu. TUNE_BUILD_ONLY=1 builds without running (a machine without a
# GPU). SWEEP is one of:
#
#   fast    Tile sweep for variant `fast` (kernels/fast/warptile.cuh): builds tune_tiles (the
#           candidate tiles are in fast_candidates.h), which times them beside cuBLAS. The tiles
#           fast.cu ships came from this sweep (docs/results/tuning_h200.txt). sections is a
#           comma-separated subset of
#             large  fast's large-tile candidates, unsplit, at 2048³ and 4096³ (NN, TN; NT at 4096³)
#             small  fast's small-tile candidates at the MLP's larger GEMMs, each crossed with
#                    split-K policies and fixed split counts (tune_tiles_main.cu, kPolicies)
#           (default: both).
#
#   wgmma   Tile sweep for the production wgmma pipeline (kernels/fast/wgmma_pipeline.cuh,
#           tf32_fast's and tf32x3_fast's kernel): builds tune_wgmma_tiles (the candidate tiles
#           are in wgmma_candidates.h), which times each tile as both the large and the small tile
#           beside cuBLAS fp32 and TF32 at 2048³–8192³ and the MLP's shapes. The tiles the
#           pipeline ships came from this sweep (docs/results/tuning_wgmma_h200.txt).
#
#   tf32x3  Tile sweep for tf32x3_fast's split tiles (kernels/fast/tf32x3_fast.cu): builds
#           tune_tf32x3_tiles (the candidate tiles are in tf32x3_candidates.h), which times every
#           candidate on the MLPs' GEMMs with a dimension of 10, and the shipped kernels also at
#           weight-gradient (TN) and NN shapes, beside cuBLAS fp32. The tiles and the TN rule
#           tf32x3_fast ships came from this sweep (docs/results/tuning_tf32x3_h200.txt), and
#           tf32_fast's register-A rules from its register_a rows
#           (docs/results/tuning_register_a_h200.txt).
#
#   tn      Tile sweep for the gradients whose B is MN-major: builds tune_tn_tiles (the candidate
#           tiles are in tn_candidates.h), which times mma.sync split tiles in TF32 and 3×TF32 at
#           the standard and odd models' weight-gradient (TN) and input-gradient (NN) shapes
#           beside what tf32_fast and tf32x3_fast run there, step 7 and cuBLAS. It set
#           launch_small_mn_major_b's rule (kernels/fast/mma_sync_tiles.cuh,
#           docs/results/tuning_tn_h200.txt).
set -euo pipefail
cd "$(dirname "$0")/../.."

usage() {
  echo "usage: scripts/tuning/tune.sh fast|wgmma|tf32x3|tn [build-dir] [sections, fast only]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
sweep=$1 build=${2:-build-gpu}
case "$sweep" in
  fast) target=tune_tiles ;;
  wgmma) target=tune_wgmma_tiles ;;
  tf32x3) target=tune_tf32x3_tiles ;;
  tn) target=tune_tn_tiles ;;
  *) echo "tune.sh: no sweep '$sweep'" >&2; usage ;;
esac
if [ $# -ge 3 ] && [ "$sweep" != fast ]; then
  echo "tune.sh: only the fast sweep takes sections" >&2
  usage
fi

# Turns GEMM_MLP_BUILD_TUNE on in the build folder (which must exist), and builds the program.
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "tune.sh: '$build' is not a CMake build folder; build the project first" \
    "(scripts/check/gpu_check.sh makes build-gpu)" >&2
  exit 2
fi
cmake -S . -B "$build" -DGEMM_MLP_BUILD_TUNE=ON -DGEMM_MLP_GPU_KERNELS=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target "$target"
program="$build/tools/tune/$target"
if [ -n "${TUNE_BUILD_ONLY:-}" ]; then
  echo "tune.sh: built $program (TUNE_BUILD_ONLY: not run)"
  exit 0
fi
if [ "$sweep" = fast ]; then
  "$program" "${3:-large,small}"
else
  "$program"
fi
