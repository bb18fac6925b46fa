#!/usr/bin/env bash
# Tile sweep for the gradients whose B is MN-major on an H200: builds tune_tn_tiles (tools/tune/;
# the candidate tiles are in tn_candidates.h), which times mma.sync split tiles in TF32 and
# 3×TF32 at the standard and odd models' weight-gradient (TN) and input-gradient (NN) shapes
# beside what tf32_fast and tf32x3_fast run there, step 7 and cuBLAS. It set
# launch_small_mn_major_b's rule (kernels/fast/mma_sync_tiles.cuh,
# docs/results/tuning_tn_h200.txt). Needs a build of the project first:
#   scripts/check/gpu_check.sh out   then   scripts/tuning/tn_tiles.sh [build-dir]
# TUNE_BUILD_ONLY=1 builds without running (a machine without a GPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/tuning/tune_build.sh
tune_build tn_tiles.sh "${1:-build-gpu}" tune_tn_tiles
"$program"
