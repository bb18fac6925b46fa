#!/usr/bin/env bash
# Tile sweep for the wgmma kernel (08), on an H200: compiles a copy of kernels/08_wgmma.cu per
# candidate with its LargeTile and SmallTile both set to the candidate's WgmmaConfig (so every
# shape runs that one tile), then times each beside cuBLAS fp32 and TF32 at 2048³–8192³ and the
# MLP's shapes (wgmma_tiles_main.cu). The shapes 08 ships came from this sweep
# (docs/results/tuning_wgmma_h200.txt). Needs a build of the project first:
#   scripts/gpu_check.sh out   then   scripts/tune/wgmma_tiles.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
lib="$build/kernels/libgemm_kernels.a"
[ -f "$lib" ] || { echo "wgmma_tiles: $lib not found; build the project first" >&2; exit 2; }
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
work="$build/wgmma_tune"
rm -rf "$work" && mkdir -p "$work"

decls="" calls=""
# name, then WgmmaConfig's arguments: BM, BN, BK, stages. w256x128k32s4 is shipped (LargeTile).
while read -r name cfg; do
  sed -e "s/^using LargeTile = WgmmaConfig<.*/using LargeTile = WgmmaConfig<$cfg>;/" \
    -e "s/^using SmallTile = WgmmaConfig<.*/using SmallTile = WgmmaConfig<$cfg>;/" \
    -e "s/void launch_wgmma(/void launch_$name(/" \
    -e "s/const char\* wgmma_unavailable() {/const char* ${name}_unavailable() {/" \
    kernels/08_wgmma.cu >"$work/$name.cu"
  for s in "using LargeTile = WgmmaConfig<$cfg>;" "using SmallTile = WgmmaConfig<$cfg>;" \
    "void launch_$name("; do
    grep -qF -- "$s" "$work/$name.cu" || { echo "wgmma_tiles: sed failed on '$s'" >&2; exit 3; }
  done
  decls+="void launch_$name(const Problem&, cudaStream_t);"
  calls+="{\"$name\", gemm::detail::launch_$name},"
done <<'L'
w128x128k32s3 128, 128, 32, 3
w128x128k32s4 128, 128, 32, 4
w128x128k32s6 128, 128, 32, 6
w128x128k64s3 128, 128, 64, 3
w256x128k32s3 256, 128, 32, 3
w256x128k32s4 256, 128, 32, 4
w128x256k32s3 128, 256, 32, 3
w128x256k32s4 128, 256, 32, 4
L
calls+="{\"tf32\", gemm::detail::launch_tf32_mma},"
printf 'namespace gemm::detail { %s }\nstatic const Candidate kCandidates[] = { %s };\n' \
  "$decls" "$calls" >"$work/candidates.inc"

flags=(-std=c++17 -O3 "-gencode=arch=compute_90a,code=sm_90a" --expt-relaxed-constexpr -I. -I"$work")
printf '%s\0' "$work"/*.cu | xargs -0 -P "$(nproc)" -I{} "$nvcc" "${flags[@]}" -c {} -o {}.o
"$nvcc" "${flags[@]}" scripts/tune/wgmma_tiles_main.cu "$work"/*.o "$lib" -lcublas -lopenblas \
  -o "$work/wgmma_tiles"
"$work/wgmma_tiles"
