#!/usr/bin/env bash
# Tile sweep for the wgmma kernels (08, and 09 with its producer warpgroup), on an H200: compiles
# each candidate config into its own object (wgmma_candidate.cu; the config as -D macros,
# candidates.sh) as both the step's large and small tile, so that every shape runs it; then
# times each beside cuBLAS fp32 and TF32 with gemm_bench's timing harness at 2048³–8192³ and the
# MLP's shapes (wgmma_tiles_main.cu). The configs 08 and 09 ship came from this sweep
# (docs/results/tuning_wgmma_h200.txt). Needs a build of the project first:
#   scripts/gpu_check.sh out   then   scripts/tune/wgmma_tiles.sh [build-dir] [08|09|all]
# TUNE_BUILD_ONLY=1 compiles and links without running (a machine without a GPU).
# TUNE_NVCC_FLAGS: extra nvcc flags (word-split).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
steps=${2:-all}
source scripts/tune/candidates.sh
tune_prepare wgmma_tiles "$build" wgmma_tune
# shellcheck disable=SC2206
flags=(-std=c++17 -O3 "-gencode=arch=compute_90a,code=sm_90a" --expt-relaxed-constexpr -I.
  ${TUNE_NVCC_FLAGS:-})

# step, name, then the step's config arguments: 08's WgmmaConfig<BM, BN, BK, stages>, 09's
# WsConfig<BM, BN, stages, consumer warpgroups>. Shipped: w256x128k32s4 and ws256x128s4c2 as the
# large tiles.
while read -r step name cfg; do
  [ "$steps" = all ] || [ "$steps" = "$step" ] || continue
  candidate "$name" scripts/tune/wgmma_candidate.cu "$cfg" "-DTUNE_STEP=${step#0}"
done <<'L'
08 w128x128k32s3 128, 128, 32, 3
08 w256x128k32s4 256, 128, 32, 4
09 ws256x128s4c2 256, 128, 4, 2
09 ws128x256s4c2 128, 256, 4, 2
09 ws128x128s4c2 128, 128, 4, 2
09 ws256x128s3c2 256, 128, 3, 2
09 ws128x128s6c2 128, 128, 6, 2
09 ws128x128s4c1 128, 128, 4, 1
L
build_and_run scripts/tune/wgmma_tiles_main.cu "$work/wgmma_tiles" \
  "no candidates for step '$steps' (08, 09 or all)"
