#!/usr/bin/env bash
# Tile-shape sweep for the warptile (06) and tf32 (07) kernels, on a GPU machine: compiles a copy of
# each kernel file per candidate block/warp/thread tile, then times every candidate beside cuBLAS
# at 2048³ and 4096³ (NN and TN) and checks it against cuBLAS. The shapes kernels/ ships came from
# this sweep (docs/results/tuning_h200.txt). Needs a build of the project first:
#   scripts/gpu_check.sh out   (or any build folder)  then  scripts/tune/tune_tiles.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
lib="$build/kernels/libgemm_kernels.a"
[ -f "$lib" ] || { echo "tune_tiles: $lib not found; build the project first" >&2; exit 2; }
work="$build/tune"
rm -rf "$work" && mkdir -p "$work"

decls="" calls=""
# name, then the LargeTile template arguments: BM, BN, BK, WM, WN, TM, TN, stages
while read -r name cfg; do
  sed -e "s/^using LargeTile = WarpTileConfig<.*/using LargeTile = WarpTileConfig<$cfg>;/" \
    -e "s/void launch_warptile(/void launch_$name(/" kernels/06_warptile.cu >"$work/$name.cu"
  decls+="void launch_$name(const Problem&, cudaStream_t);" calls+="{\"$name\", launch_$name, false},"
done <<'L'
wa 128, 128, 16, 64, 32, 8, 8, 3
wb 128, 128, 8, 64, 32, 8, 8, 4
wc 128, 256, 16, 64, 64, 8, 16, 3
wd 128, 128, 16, 32, 64, 8, 8, 3
we 256, 128, 16, 64, 64, 16, 8, 3
wf 128, 128, 32, 64, 32, 8, 8, 2
wg 128, 256, 16, 64, 64, 16, 8, 3
L
# BM, BN, BK, WM, WN, stages
while read -r name cfg; do
  sed -e "s/^using LargeTile = MmaConfig<.*/using LargeTile = MmaConfig<$cfg>;/" \
    -e "s/void launch_tf32_mma(/void launch_$name(/" kernels/07_tf32_mma.cu >"$work/$name.cu"
  decls+="void launch_$name(const Problem&, cudaStream_t);" calls+="{\"$name\", launch_$name, true},"
done <<'L'
ta 128, 128, 32, 64, 64, 3
tb 128, 128, 32, 64, 32, 3
tc 128, 256, 32, 64, 64, 3
td 256, 128, 32, 64, 64, 3
tf 128, 128, 32, 32, 64, 4
tg 128, 256, 32, 64, 64, 2
L
printf 'namespace gemm::detail { %s }\nstatic const Candidate kCandidates[] = { %s };\n' \
  "$decls" "$calls" >"$work/candidates.inc"

flags=(-std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I. -I"$work")
ls "$work"/*.cu | xargs -P "$(nproc)" -I{} nvcc "${flags[@]}" -c {} -o {}.o
nvcc "${flags[@]}" scripts/tune/tune_tiles_main.cu "$work"/*.o "$lib" -lcublas -lopenblas \
  -o "$work/tune_tiles"
"$work/tune_tiles"
