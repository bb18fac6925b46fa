#!/usr/bin/env bash
# Tile sweep for the production wgmma pipeline (kernels/fast/wgmma_pipeline.cuh, tf32_fast's and
# tf32x3_fast's kernel), on an H200: builds tune_wgmma_tiles (tools/tune/; the candidate tiles are
# in wgmma_candidates.h), which times each tile as both the large and the small tile beside cuBLAS
# fp32 and TF32 at 2048³–8192³ and the MLP's shapes. The tiles the pipeline ships came from this
# sweep (docs/results/tuning_wgmma_h200.txt). Needs a build of the project first:
#   scripts/check/gpu_check.sh out   then   scripts/tuning/wgmma_tiles.sh [build-dir]
# TUNE_BUILD_ONLY=1 builds without running (a machine without a GPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/tuning/tune_build.sh
tune_build wgmma_tiles.sh "${1:-build-gpu}" tune_wgmma_tiles
"$program"
