#!/usr/bin/env bash
# Tile-shape sweep for the warptile (06) and tf32 (07) kernels, on a GPU machine: compiles a copy of
# a kernel file per candidate (sed on the copy, kernels/ untouched), then times every candidate
# beside cuBLAS and checks it against cuBLAS fp32. The shapes kernels/ ships came from this sweep
# (docs/results/tuning_h200.txt). Needs a build of the project first:
#   scripts/gpu_check.sh out   (builds build-gpu, or $BUILD_DIR)   then
#   scripts/tune/tune_tiles.sh [build-dir] [sections]
# build-dir defaults to build-gpu; sections is a comma-separated subset of
#   large  warptile's LargeTile candidates at 2048³ and 4096³ (NN, TN; NT at 4096³)
#   tf32   tf32's LargeTile candidates, same sizes
#   small  warptile's SmallTile candidates, forced onto the small (split-K) path, at the MLP's
#          larger GEMMs, each crossed with split-K policies and fixed split counts
#          (tune_tiles_main.cu, kPolicies)
# (default: all three; estimated under 3 minutes on a 16-core H200 machine, compilation included).
# TUNE_BUILD_ONLY=1 compiles and links without running (a machine without a GPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
sections=",${2:-large,tf32,small},"
lib="$build/kernels/libgemm_kernels.a"
[ -f "$lib" ] || { echo "tune_tiles: $lib not found; build the project first" >&2; exit 2; }
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
work="$build/tune"
rm -rf "$work" && mkdir -p "$work"

# Each sed below must change its copy; a pattern that no longer matches the kernel file would
# otherwise silently time the shipped shape under a candidate's name.
must_contain() {
  grep -qF -- "$2" "$1" || { echo "tune_tiles: $1 lacks '$2' (kernel file changed?)" >&2; exit 3; }
}

decls="" calls=""
add() {  # add <name> <kind>: declare launch_<name>, list it as a Candidate of that kind
  decls+="void launch_$1(const Problem&, cudaStream_t);"
  calls+="{\"$1\", gemm::detail::launch_$1, Kind::$2},"
}

if [[ $sections == *,large,* ]]; then
  # name, then the LargeTile template arguments: BM, BN, BK, WM, WN, TM, TN, stages, and how
  # K-contiguous tiles are read (06's KcTiles). ye is shipped.
  while read -r name cfg; do
    sed -e "s/^using LargeTile = WarpTileConfig<.*/using LargeTile = WarpTileConfig<$cfg>;/" \
      -e "s/void launch_warptile(/void launch_$name(/" kernels/06_warptile.cu >"$work/$name.cu"
    must_contain "$work/$name.cu" "using LargeTile = WarpTileConfig<$cfg>;"
    must_contain "$work/$name.cu" "void launch_$name("
    add "$name" Warptile
  done <<'L'
wa 128, 128, 32, 64, 32, 8, 8, 2, KcTiles::Transpose
wb 128, 128, 32, 64, 32, 8, 8, 3, KcTiles::Transpose
wc 128, 128, 16, 64, 32, 8, 8, 2, KcTiles::Transpose
wd 128, 128, 16, 64, 32, 8, 8, 3, KcTiles::Transpose
wf 128, 128, 32, 32, 64, 8, 8, 2, KcTiles::Transpose
wh 128, 256, 32, 64, 64, 8, 16, 2, KcTiles::Transpose
xa 128, 128, 32, 64, 32, 8, 8, 2, KcTiles::ReadXMajor
xf 128, 128, 32, 32, 64, 8, 8, 2, KcTiles::ReadXMajor
ya 128, 128, 16, 32, 64, 8, 8, 3, KcTiles::TransposeAhead
yb 128, 128, 16, 32, 64, 8, 8, 4, KcTiles::TransposeAhead
yc 128, 128, 24, 32, 64, 8, 8, 3, KcTiles::TransposeAhead
yd 128, 128, 32, 32, 64, 8, 8, 3, KcTiles::TransposeAhead
ye 128, 128, 16, 64, 32, 8, 8, 4, KcTiles::TransposeAhead
yh 128, 256, 16, 64, 64, 8, 16, 3, KcTiles::TransposeAhead
yk 256, 128, 16, 64, 64, 16, 8, 3, KcTiles::TransposeAhead
yl 256, 128, 8, 64, 64, 16, 8, 4, KcTiles::TransposeAhead
ym 128, 256, 8, 64, 64, 8, 16, 4, KcTiles::TransposeAhead
L
fi

if [[ $sections == *,tf32,* ]]; then
  # BM, BN, BK, WM, WN, stages. tb is shipped.
  while read -r name cfg; do
    sed -e "s/^using LargeTile = MmaConfig<.*/using LargeTile = MmaConfig<$cfg>;/" \
      -e "s/void launch_tf32_mma(/void launch_$name(/" kernels/07_tf32_mma.cu >"$work/$name.cu"
    must_contain "$work/$name.cu" "using LargeTile = MmaConfig<$cfg>;"
    must_contain "$work/$name.cu" "void launch_$name("
    add "$name" Tf32
  done <<'L'
ta 128, 128, 32, 64, 64, 3
tb 128, 128, 32, 64, 32, 3
tc 128, 256, 32, 64, 64, 3
td 256, 128, 32, 64, 64, 3
tf 128, 128, 32, 32, 64, 4
tg 128, 256, 32, 64, 64, 2
L
fi

if [[ $sections == *,small,* ]]; then
  # The split-K planner, with its constants read from tune_split:: (set per policy at run time by
  # tune_tiles_main.cu) and renamed, calls included: a different plan_split_k<BK> under the same
  # name would be merged with the library's by the linker.
  sed -e 's|#include "kernels/common.cuh"|&\n#include "tune_split.h"|' \
    -e 's/constexpr int kMinKTiles = 4;/const int kMinKTiles = tune_split::min_k_tiles;/' \
    -e 's|long(blocks_per_sm) \* sms;|long(tune_split::blocks_per_sm) * sms;|' \
    -e 's|(blocks + tiles - 1) / tiles, max_splits)|(blocks + tiles - 1) / tiles, tune_split::max_splits)|' \
    -e 's/plan_split_k\([<(]\)/plan_split_k_tune\1/g' \
    -e 's/^  if (tiles >= blocks || balanced) return {1, k_tiles \* BK};/  if (tiles >= blocks || balanced) return tune_split::record(SplitK{1, k_tiles * BK});/' \
    -e 's/^  return {\(.*\), tiles_per_split \* BK};/  return tune_split::record(SplitK{\1, tiles_per_split * BK});/' \
    -e 's|^  const long blocks = |  if (tune_split::forced_splits > 0) return tune_split::record(tune_split::force<SplitK>(k_tiles, BK));\n&|' \
    kernels/split_k.cuh >"$work/split_k_tune.cuh"
  for s in tune_split::min_k_tiles tune_split::blocks_per_sm tune_split::max_splits plan_split_k_tune \
    tune_split::force \
    'record(SplitK{1,' 'record(SplitK{(k_tiles'; do
    must_contain "$work/split_k_tune.cuh" "$s"
  done
  cat >"$work/tune_split.h" <<'H'
#pragma once
// Split-K policy of the small candidates, defined in tune_tiles_main.cu.
namespace tune_split {
extern int min_k_tiles;    // plan_split_k's kMinKTiles (shipped: 4)
extern int max_splits;     // its cap on the split count (shipped by warptile: 8)
extern int blocks_per_sm;  // blocks wanted per multiprocessor (shipped by warptile: 3)
extern int forced_splits;  // > 0: this many slices (or fewer, where K is short), planner bypassed
extern int last_splits;    // the split count of the latest plan
template <class SplitK>
SplitK record(SplitK plan) {
  last_splits = plan.splits;
  return plan;
}
template <class SplitK>
SplitK force(int k_tiles, int bk) {
  const int per_split = (k_tiles + forced_splits - 1) / forced_splits;
  return SplitK{(k_tiles + per_split - 1) / per_split, per_split * bk};
}
}  // namespace tune_split
H
  # name, then the SmallTile template arguments (as above). pa is shipped (sk as NarrowTile, pk as
  # FineTile); the p candidates pipeline their fragment reads where the layout allows (06's
  # kFragmentLoop). NarrowTile and FineTile are set to the candidate too, so that it is what runs
  # at 256x10x1024 and 1024x784x256; LargeTile as well (only to save compiling one that is never
  # launched), and the small path is forced.
  while read -r name cfg; do
    sed -e "s/^using SmallTile = WarpTileConfig<.*/using SmallTile = WarpTileConfig<$cfg>;/" \
      -e "s/^using NarrowTile = WarpTileConfig<.*/using NarrowTile = WarpTileConfig<$cfg>;/" \
      -e "s/^using FineTile = WarpTileConfig<.*/using FineTile = WarpTileConfig<$cfg>;/" \
      -e "s/^using LargeTile = WarpTileConfig<.*/using LargeTile = WarpTileConfig<$cfg>;/" \
      -e 's|#include "kernels/split_k.cuh"|#include "split_k_tune.cuh"|' \
      -e 's/plan_split_k</plan_split_k_tune</' \
      -e 's/if (large_tiles >= sms) {/if (false \&\& large_tiles >= sms) {  \/\/ tune: small path only/' \
      -e "s/void launch_warptile(/void launch_$name(/" kernels/06_warptile.cu >"$work/$name.cu"
    for s in "using SmallTile = WarpTileConfig<$cfg>;" "using NarrowTile = WarpTileConfig<$cfg>;" \
      "using FineTile = WarpTileConfig<$cfg>;" \
      '#include "split_k_tune.cuh"' \
      plan_split_k_tune '(false && large_tiles' "void launch_$name("; do
      must_contain "$work/$name.cu" "$s"
    done
    add "$name" Small
  done <<'L'
sa 64, 64, 16, 32, 32, 8, 4, 3, KcTiles::ReadXMajor
sb 64, 64, 32, 32, 32, 8, 4, 3, KcTiles::ReadXMajor
sc 64, 64, 16, 32, 32, 4, 8, 3, KcTiles::ReadXMajor
sd 64, 64, 16, 32, 32, 8, 4, 2, KcTiles::ReadXMajor
se 64, 64, 32, 32, 32, 8, 4, 4, KcTiles::ReadXMajor
sf 64, 64, 16, 32, 16, 4, 4, 3, KcTiles::ReadXMajor
sg 64, 128, 16, 32, 64, 8, 8, 3, KcTiles::ReadXMajor
sh 128, 64, 16, 64, 32, 8, 8, 3, KcTiles::ReadXMajor
si 32, 64, 16, 32, 32, 8, 4, 3, KcTiles::ReadXMajor
sj 32, 64, 32, 16, 32, 4, 4, 3, KcTiles::ReadXMajor
sk 64, 32, 16, 32, 16, 4, 4, 3, KcTiles::ReadXMajor
sl 64, 64, 16, 32, 32, 8, 4, 4, KcTiles::ReadXMajor
sm 64, 64, 16, 32, 16, 4, 4, 4, KcTiles::ReadXMajor
so 64, 64, 8, 32, 32, 8, 4, 4, KcTiles::ReadXMajor
sp 64, 64, 8, 32, 32, 8, 4, 5, KcTiles::ReadXMajor
sq 64, 64, 8, 32, 16, 4, 4, 4, KcTiles::ReadXMajor
pa 64, 64, 16, 32, 32, 8, 4, 3, KcTiles::ReadXMajor, true
pb 64, 64, 32, 32, 32, 8, 4, 3, KcTiles::ReadXMajor, true
pf 64, 64, 16, 32, 16, 4, 4, 3, KcTiles::ReadXMajor, true
pk 64, 32, 16, 32, 16, 4, 4, 3, KcTiles::ReadXMajor, true
pl 64, 64, 16, 32, 32, 8, 4, 4, KcTiles::ReadXMajor, true
te 64, 64, 32, 32, 32, 8, 4, 4, KcTiles::Transpose
th 128, 64, 16, 64, 32, 8, 8, 3, KcTiles::Transpose
ua 64, 64, 32, 32, 32, 8, 4, 3, KcTiles::TransposeAhead
ub 64, 64, 16, 32, 32, 8, 4, 4, KcTiles::TransposeAhead
uc 128, 64, 16, 64, 32, 8, 8, 3, KcTiles::TransposeAhead
L
fi

[ -n "$calls" ] || { echo "tune_tiles: no section selected from '${2:-}' (large, tf32, small)" >&2; exit 2; }
printf 'namespace gemm::detail { %s }\nstatic const Candidate kCandidates[] = { %s };\n' \
  "$decls" "$calls" >"$work/candidates.inc"

# TUNE_NVCC_FLAGS: extra nvcc flags (word-split), e.g. "-Xptxas -v" for register counts.
# shellcheck disable=SC2206
flags=(-std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I. -I"$work" ${TUNE_NVCC_FLAGS:-})
sources=("$work"/*.cu)
echo "== compiling ${#sources[@]} candidates with $(nproc) jobs"
start=$SECONDS
printf '%s\0' "${sources[@]}" | xargs -0 -P "$(nproc)" -I{} "$nvcc" "${flags[@]}" -c {} -o {}.o
"$nvcc" "${flags[@]}" scripts/tune/tune_tiles_main.cu "$work"/*.o "$lib" -lcublas -lopenblas \
  -o "$work/tune_tiles"
echo "== compiled in $((SECONDS - start)) s"
[ -n "${TUNE_BUILD_ONLY:-}" ] || "$work/tune_tiles"
