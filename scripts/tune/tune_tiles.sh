#!/usr/bin/env bash
# Tile-shape sweep for variant `fast` (kernels/fast/) and step 7 (kernels/07_tf32.cu), on a GPU
# machine: compiles each candidate config into its own object (fast_candidate.cu,
# tf32_candidate.cu; the config as -D macros, candidates.sh), then times every candidate beside
# cuBLAS with gemm_bench's timing harness and checks it against cuBLAS fp32 (tune_tiles_main.cu).
# The configs kernels/ ships came from this sweep (docs/results/tuning_h200.txt). Needs a build
# of the project first:
#   scripts/gpu_check.sh out   (builds build-gpu, or $BUILD_DIR)   then
#   scripts/tune/tune_tiles.sh [build-dir] [sections]
# build-dir defaults to build-gpu; sections is a comma-separated subset of
#   large  fast's large-tile candidates, unsplit, at 2048³ and 4096³ (NN, TN; NT at 4096³)
#   tf32   step 7's large-tile candidates, same sizes
#   small  fast's small-tile candidates at the MLP's larger GEMMs, each crossed with split-K
#          policies and fixed split counts (tune_tiles_main.cu, kPolicies)
# (default: all three).
# TUNE_BUILD_ONLY=1 compiles and links without running (a machine without a GPU).
# TUNE_NVCC_FLAGS: extra nvcc flags (word-split), e.g. "-Xptxas -v" for register counts.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
sections=",${2:-large,tf32,small},"
source scripts/tune/candidates.sh
tune_prepare tune_tiles "$build" tune
# shellcheck disable=SC2206
flags=(-std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I. ${TUNE_NVCC_FLAGS:-})

# candidates_from <source> [nvcc flags…]: one candidate per "name config" line of stdin.
candidates_from() {
  local source=$1 name cfg
  shift
  while read -r name cfg; do candidate "$name" "$source" "$cfg" "$@"; done
}

if [[ $sections == *,large,* ]]; then
  # name, then WarpTileConfig's arguments: BM, BN, BK, WM, WN, TM, TN, stages, and how K-major
  # tiles are read (KMajorTiles). ye is shipped (fast.cu's LargeTile).
  candidates_from scripts/tune/fast_candidate.cu <<'L'
wa 128, 128, 32, 64, 32, 8, 8, 2, KMajorTiles::Transpose
wb 128, 128, 32, 64, 32, 8, 8, 3, KMajorTiles::Transpose
wc 128, 128, 16, 64, 32, 8, 8, 2, KMajorTiles::Transpose
wd 128, 128, 16, 64, 32, 8, 8, 3, KMajorTiles::Transpose
wf 128, 128, 32, 32, 64, 8, 8, 2, KMajorTiles::Transpose
wh 128, 256, 32, 64, 64, 8, 16, 2, KMajorTiles::Transpose
xa 128, 128, 32, 64, 32, 8, 8, 2, KMajorTiles::ReadKMajor
xf 128, 128, 32, 32, 64, 8, 8, 2, KMajorTiles::ReadKMajor
ya 128, 128, 16, 32, 64, 8, 8, 3, KMajorTiles::TransposeAhead
yb 128, 128, 16, 32, 64, 8, 8, 4, KMajorTiles::TransposeAhead
yc 128, 128, 24, 32, 64, 8, 8, 3, KMajorTiles::TransposeAhead
yd 128, 128, 32, 32, 64, 8, 8, 3, KMajorTiles::TransposeAhead
ye 128, 128, 16, 64, 32, 8, 8, 4, KMajorTiles::TransposeAhead
yh 128, 256, 16, 64, 64, 8, 16, 3, KMajorTiles::TransposeAhead
yk 256, 128, 16, 64, 64, 16, 8, 3, KMajorTiles::TransposeAhead
yl 256, 128, 8, 64, 64, 16, 8, 4, KMajorTiles::TransposeAhead
ym 128, 256, 8, 64, 64, 8, 16, 4, KMajorTiles::TransposeAhead
L
fi

if [[ $sections == *,tf32,* ]]; then
  # name, then MmaConfig's arguments: BM, BN, BK, WM, WN, stages. tb is shipped.
  candidates_from scripts/tune/tf32_candidate.cu <<'L'
ta 128, 128, 32, 64, 64, 3
tb 128, 128, 32, 64, 32, 3
tc 128, 256, 32, 64, 64, 3
td 256, 128, 32, 64, 64, 3
tf 128, 128, 32, 32, 64, 4
tg 128, 256, 32, 64, 64, 2
L
fi

if [[ $sections == *,small,* ]]; then
  # name, then WarpTileConfig's arguments (as above, and whether the fragment reads are
  # pipelined). Shipped (fast.cu): pa as SmallTile, sk as NarrowTile, pk as FineTile.
  candidates_from scripts/tune/fast_candidate.cu -DTUNE_SMALL <<'L'
sa 64, 64, 16, 32, 32, 8, 4, 3, KMajorTiles::ReadKMajor
sb 64, 64, 32, 32, 32, 8, 4, 3, KMajorTiles::ReadKMajor
sc 64, 64, 16, 32, 32, 4, 8, 3, KMajorTiles::ReadKMajor
sd 64, 64, 16, 32, 32, 8, 4, 2, KMajorTiles::ReadKMajor
se 64, 64, 32, 32, 32, 8, 4, 4, KMajorTiles::ReadKMajor
sf 64, 64, 16, 32, 16, 4, 4, 3, KMajorTiles::ReadKMajor
sg 64, 128, 16, 32, 64, 8, 8, 3, KMajorTiles::ReadKMajor
sh 128, 64, 16, 64, 32, 8, 8, 3, KMajorTiles::ReadKMajor
si 32, 64, 16, 32, 32, 8, 4, 3, KMajorTiles::ReadKMajor
sj 32, 64, 32, 16, 32, 4, 4, 3, KMajorTiles::ReadKMajor
sk 64, 32, 16, 32, 16, 4, 4, 3, KMajorTiles::ReadKMajor
sl 64, 64, 16, 32, 32, 8, 4, 4, KMajorTiles::ReadKMajor
sm 64, 64, 16, 32, 16, 4, 4, 4, KMajorTiles::ReadKMajor
so 64, 64, 8, 32, 32, 8, 4, 4, KMajorTiles::ReadKMajor
sp 64, 64, 8, 32, 32, 8, 4, 5, KMajorTiles::ReadKMajor
sq 64, 64, 8, 32, 16, 4, 4, 4, KMajorTiles::ReadKMajor
pa 64, 64, 16, 32, 32, 8, 4, 3, KMajorTiles::ReadKMajor, true
pb 64, 64, 32, 32, 32, 8, 4, 3, KMajorTiles::ReadKMajor, true
pf 64, 64, 16, 32, 16, 4, 4, 3, KMajorTiles::ReadKMajor, true
pk 64, 32, 16, 32, 16, 4, 4, 3, KMajorTiles::ReadKMajor, true
pl 64, 64, 16, 32, 32, 8, 4, 4, KMajorTiles::ReadKMajor, true
te 64, 64, 32, 32, 32, 8, 4, 4, KMajorTiles::Transpose
th 128, 64, 16, 64, 32, 8, 8, 3, KMajorTiles::Transpose
ua 64, 64, 32, 32, 32, 8, 4, 3, KMajorTiles::TransposeAhead
ub 64, 64, 16, 32, 32, 8, 4, 4, KMajorTiles::TransposeAhead
uc 128, 64, 16, 64, 32, 8, 8, 3, KMajorTiles::TransposeAhead
L
fi

build_and_run scripts/tune/tune_tiles_main.cu "$work/tune_tiles" \
  "no section selected from '${2:-}' (large, tf32, small)"
