#!/usr/bin/env bash
# Tile sweep for tf32x3_fast's split tiles (kernels/fast/tf32x3_fast.cu), on an H200: compiles each
# candidate config into its own object (tf32x3_candidate.cu; the config as -D macros,
# candidates.sh), then times every candidate on the MLPs' GEMMs with a dimension of 10, and the
# shipped variants also at weight-gradient (TN) shapes, beside cuBLAS fp32 (tf32x3_tiles_main.cu).
# The tiles and the TN rule tf32x3_fast ships came from this sweep
# (docs/results/tuning_tf32x3_h200.txt), and tf32_fast's register-A rules from its register_a rows
# (docs/results/tuning_register_a_h200.txt). Needs a build of the project first:
#   scripts/gpu_check.sh out   then   scripts/tune/tf32x3_tiles.sh [build-dir]
# TUNE_BUILD_ONLY=1 compiles and links without running (a machine without a GPU).
# TUNE_NVCC_FLAGS: extra nvcc flags (word-split).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
source scripts/tune/candidates.sh
tune_prepare tf32x3_tiles "$build" tf32x3_tune
# shellcheck disable=SC2206
flags=(-std=c++17 -O3 "-gencode=arch=compute_90a,code=sm_90a" --expt-relaxed-constexpr -I.
  ${TUNE_NVCC_FLAGS:-})

# name, blocks per multiprocessor, then MmaConfig<BM, BN, BK, WM, WN, stages[, staged output]>.
# n: 16 columns, m: 16 rows, k: one K tile (s: output staged). Shipped: n64x16, m16x64, k64x128s
# where it fills the chip, else k16x64s (4 blocks per multiprocessor).
while read -r name bps cfg; do
  candidate "$name" scripts/tune/tf32x3_candidate.cu "$cfg" "-DTUNE_BPS=$bps"
done <<'L'
n64x16 4 64, 16, 32, 16, 16, 3
n64x16b2 2 64, 16, 32, 16, 16, 3
n64x16b8 8 64, 16, 32, 16, 16, 3
n32x16 4 32, 16, 32, 16, 16, 3
n128x16 4 128, 16, 32, 32, 16, 3
m16x64 4 16, 64, 32, 16, 16, 3
m16x64b8 8 16, 64, 32, 16, 16, 3
m16x32 4 16, 32, 32, 16, 16, 3
m16x128 4 16, 128, 32, 16, 32, 3
k32x64 4 32, 64, 32, 16, 32, 2
k32x32 4 32, 32, 32, 16, 16, 2
k64x64 4 64, 64, 32, 32, 32, 2
k64x128 4 64, 128, 32, 32, 64, 2
k128x128 4 128, 128, 32, 64, 32, 2
k32x64s 4 32, 64, 32, 16, 32, 2, true
k16x64s 4 16, 64, 32, 16, 16, 2, true
k32x32s 4 32, 32, 32, 16, 16, 2, true
k64x64s 4 64, 64, 32, 32, 32, 2, true
k32x128s 4 32, 128, 32, 16, 64, 2, true
k64x128s 4 64, 128, 32, 32, 64, 2, true
k64x128s8 4 64, 128, 32, 32, 32, 2, true
k128x128s 4 128, 128, 32, 64, 32, 2, true
L
build_and_run scripts/tune/tf32x3_tiles_main.cu "$work/tf32x3_tiles" "no candidates"
