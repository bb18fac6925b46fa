#!/usr/bin/env bash
# Tile sweep for variant `fast` (kernels/fast/warptile.cuh), on an H200: builds tune_tiles
# (tools/tune/; the candidate tiles are in fast_candidates.h), which times them beside cuBLAS.
# The tiles fast.cu ships came from this sweep (docs/results/tuning_h200.txt). Needs a build of
# the project first:
#   scripts/check/gpu_check.sh out   (builds build-gpu, or $BUILD_DIR)   then
#   scripts/tuning/tune_tiles.sh [build-dir] [sections]
# build-dir defaults to build-gpu; sections is a comma-separated subset of
#   large  fast's large-tile candidates, unsplit, at 2048³ and 4096³ (NN, TN; NT at 4096³)
#   small  fast's small-tile candidates at the MLP's larger GEMMs, each crossed with split-K
#          policies and fixed split counts (tune_tiles_main.cu, kPolicies)
# (default: both).
# TUNE_BUILD_ONLY=1 builds without running (a machine without a GPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/tuning/tune_build.sh
tune_build tune_tiles.sh "${1:-build-gpu}" tune_tiles
"$program" "${2:-large,small}"
