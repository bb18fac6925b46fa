#!/usr/bin/env bash
# Tile sweep for the wgmma kernels (08, and 09 with its producer warpgroup), on an H200: compiles
# a copy of the kernel's file per candidate with its LargeTile and SmallTile both set to the
# candidate's config (so every shape runs that one tile), then times each beside cuBLAS fp32 and
# TF32 at 2048³–8192³ and the MLP's shapes (wgmma_tiles_main.cu). The shapes 08 and 09 ship came
# from this sweep (docs/results/tuning_wgmma_h200.txt). Needs a build of the project first:
#   scripts/gpu_check.sh out   then   scripts/tune/wgmma_tiles.sh [build-dir] [08|09|all]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
steps=${2:-all}
lib="$build/kernels/libgemm_kernels.a"
[ -f "$lib" ] || { echo "wgmma_tiles: $lib not found; build the project first" >&2; exit 2; }
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
work="$build/wgmma_tune"
rm -rf "$work" && mkdir -p "$work"

decls="" calls=""
# step, name, then the step's config arguments: 08's WgmmaConfig<BM, BN, BK, stages>, 09's
# WsConfig<BM, BN, stages, consumer warpgroups>. Shipped: w256x128k32s4 and ws256x128s4c2 (LargeTile).
while read -r step name cfg; do
  [ "$steps" = all ] || [ "$steps" = "$step" ] || continue
  case $step in
    08) src=kernels/08_wgmma.cu type=WgmmaConfig launcher=launch_wgmma ;;
    09) src=kernels/09_wgmma_ws.cu type=WsConfig launcher=launch_wgmma_ws ;;
  esac
  sed -e "s/^using LargeTile = $type<.*/using LargeTile = $type<$cfg>;/" \
    -e "s/^using SmallTile = $type<.*/using SmallTile = $type<$cfg>;/" \
    -e "s/void $launcher(/void launch_$name(/" \
    -e "s/const char\* wgmma_unavailable() {/const char* ${name}_unavailable() {/" \
    "$src" >"$work/$name.cu"
  for s in "using LargeTile = $type<$cfg>;" "using SmallTile = $type<$cfg>;" "void launch_$name("; do
    grep -qF -- "$s" "$work/$name.cu" || { echo "wgmma_tiles: sed failed on '$s'" >&2; exit 3; }
  done
  decls+="void launch_$name(const Problem&, cudaStream_t);"
  calls+="{\"$name\", gemm::detail::launch_$name},"
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
[ -n "$calls" ] || { echo "wgmma_tiles: no candidates for step '$steps' (08, 09 or all)" >&2; exit 2; }
calls+="{\"tf32\", gemm::detail::launch_tf32_mma},"
printf 'namespace gemm::detail { %s }\nstatic const Candidate kCandidates[] = { %s };\n' \
  "$decls" "$calls" >"$work/candidates.inc"

flags=(-std=c++17 -O3 "-gencode=arch=compute_90a,code=sm_90a" --expt-relaxed-constexpr -I. -I"$work")
printf '%s\0' "$work"/*.cu | xargs -0 -P "$(nproc)" -I{} "$nvcc" "${flags[@]}" -c {} -o {}.o
"$nvcc" "${flags[@]}" scripts/tune/wgmma_tiles_main.cu "$work"/*.o "$lib" -lcublas -lopenblas \
  -o "$work/wgmma_tiles"
"$work/wgmma_tiles"
