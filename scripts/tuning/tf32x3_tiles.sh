#!/usr/bin/env bash
# Tile sweep for tf32x3_fast's split tiles (kernels/fast/tf32x3_fast.cu), on an H200: builds
# tune_tf32x3_tiles (tools/tune/; the candidate tiles are in tf32x3_candidates.h), which times
# every candidate on the MLPs' GEMMs with a dimension of 10, and the shipped kernels also at
# weight-gradient (TN) and NN shapes, beside cuBLAS fp32. The tiles and the TN rule tf32x3_fast
# ships came from this sweep (docs/results/tuning_tf32x3_h200.txt), and tf32_fast's register-A
# rules from its register_a rows (docs/results/tuning_register_a_h200.txt). Needs a build of the
# project first:
#   scripts/check/gpu_check.sh out   then   scripts/tuning/tf32x3_tiles.sh [build-dir]
# TUNE_BUILD_ONLY=1 builds without running (a machine without a GPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/tuning/tune_build.sh
tune_build tf32x3_tiles.sh "${1:-build-gpu}" tune_tf32x3_tiles
"$program"
