#!/usr/bin/env bash
# The training step's own GEMM regime (docs/RESULTS.md, "The step's GEMMs, warm"): the production
# variants beside cuBLAS at the three models' GEMMs, timed flushed and warm (gemm_bench: 20
# back-to-back calls in one CUDA graph, operands warm in L2), then where each kernel's time goes
# (gemm_bench --phases, from a second build with in-kernel timestamps).
#
#   scripts/check/small_m.sh <out-dir>
#
# Writes <out-dir>/small_m.csv and small_m.json (the timings) and phases.csv (the phases), and
# prints both tables. Builds gemm_bench in BUILD_DIR (default build-gpu) and BUILD_DIR-phases
# (-DGEMM_MLP_PHASE_TIMES=ON); CMAKE_ARGS and CUDA_ARCHS (default 90) as gpu_check.sh takes them.
# SKIP_BUILD=1 uses the builds as they are; PHASES=0 leaves out the phases (and their builds).
# VARIANTS (default tf32_fast,tf32x3_fast,auto) are the variants timed beside cuBLAS.
# BASE_SRC=<source tree> (e.g. `git archive BASE | tar -x -C DIR`) also builds that tree the same
# ways, and measures it first, in the same run: its results are <out-dir>/small_m_base.csv,
# small_m_base.json and phases_base.csv, and small_m_ab_base.csv compares this tree's warm times
# with it (scripts/check/bench_ab.py --warm). BASE_SRC may also list several trees, each
# LABEL=DIR (e.g. "main=/tmp/main step1=/tmp/step1"): each is built and measured in that order,
# its results suffixed _LABEL. A side whose build or run fails is named and left out, the others
# measured (exit status 1). Needs a GPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -ne 1 ]; then
  echo "usage: scripts/check/small_m.sh <out-dir>" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
build=${BUILD_DIR:-build-gpu}
# shellcheck disable=SC2206
extra=(${CMAKE_ARGS:-})
log=$out/small_m_build.log
: >"$log"
# build_gemm_bench SRC DIR PHASES: configures DIR where it is not yet (a build folder that exists,
# gpu_check.sh's, keeps its settings) and builds gemm_bench there.
build_gemm_bench() {
  if [ ! -f "$2/CMakeCache.txt" ]; then
    cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DGEMM_MLP_GPU_KERNELS=ON \
      -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" -DGEMM_MLP_PHASE_TIMES="$3" \
      -DGEMM_MLP_BUILD_TESTS=OFF "${extra[@]}" >>"$log" 2>&1 || return 1
  fi
  cmake --build "$2" -j "$jobs" --target gemm_bench >>"$log" 2>&1
}
# Each side: its label ("" for this tree), its source tree and its build folder.
labels=() sources=() builds=()
for base in ${BASE_SRC:-}; do
  label=base src=$base
  [[ $base == *=* ]] && label=${base%%=*} src=${base#*=}
  [[ $label =~ ^[A-Za-z0-9_.-]+$ && -d $src ]] || {
    echo "small_m.sh: BASE_SRC: '$base' is not DIR or LABEL=DIR with an existing DIR" >&2
    exit 2
  }
  labels+=("$label") sources+=("$src") builds+=("$build-$label")
done
labels+=("") sources+=(.) builds+=("$build")
phases=${PHASES:-1}
# A side whose build or run fails is named and left out; the others go on, and the exit status
# is 1 at the end.
failed=()
side_ok=()
for i in "${!labels[@]}"; do side_ok[i]=1; done
side_name() { echo "${labels[$1]:-this tree}"; }
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  # Every build at once, the cores shared.
  per_side=$((phases == 1 ? 2 : 1))
  jobs=$(( ($(nproc) + per_side * ${#labels[@]} - 1) / (per_side * ${#labels[@]}) ))
  pids=() pid_side=()
  for i in "${!labels[@]}"; do
    build_gemm_bench "${sources[$i]}" "${builds[$i]}" OFF &
    pids+=($!) pid_side+=("$i")
    if [ "$phases" = 1 ]; then
      build_gemm_bench "${sources[$i]}" "${builds[$i]}-phases" ON &
      pids+=($!) pid_side+=("$i")
    fi
  done
  for j in "${!pids[@]}"; do
    wait "${pids[$j]}" && continue
    i=${pid_side[$j]}
    if [ "${side_ok[$i]}" = 1 ]; then
      side_ok[i]=0
      failed+=("$(side_name "$i"): build (small_m_build.log)")
    fi
  done
  [ ${#failed[@]} -eq 0 ] || tail -40 "$log"
fi

# The large GEMMs of each model's step: 784-1024-1024-10 at batch 256, 784-512-512-10 at 128,
# 784-4096-4096-10 at 512 (forward NT, input gradient NN, weight gradient TN).
shapes=256x1024x784:NT,256x1024x1024:NT,256x1024x1024:NN,1024x1024x256:TN,1024x784x256:TN
shapes+=,128x512x784:NT,128x512x512:NT,128x512x512:NN,512x512x128:TN,512x784x128:TN
shapes+=,512x4096x784:NT,512x4096x4096:NT,512x4096x4096:NN,4096x4096x512:TN,4096x784x512:TN
for i in "${!labels[@]}"; do
  [ "${side_ok[$i]}" = 1 ] || continue
  dir=${builds[$i]} suffix=${labels[$i]:+_${labels[$i]}}
  echo "=== $(side_name "$i") (${sources[$i]})"
  if ! "$dir/apps/gemm_bench/gemm_bench" --variants "${VARIANTS:-tf32_fast,tf32x3_fast,auto}" \
    --shapes "$shapes" --reps 20 --csv "$out/small_m$suffix.csv" --json "$out/small_m$suffix.json"; then
    side_ok[i]=0
    failed+=("$(side_name "$i"): gemm_bench")
    continue
  fi
  if [ "$phases" = 1 ] && ! "$dir-phases/apps/gemm_bench/gemm_bench" --phases \
    --variants tf32_fast,tf32x3_fast --csv "$out/phases$suffix.csv"; then
    failed+=("$(side_name "$i"): gemm_bench --phases")
  fi
done
# This tree's warm times over each base's.
last=$((${#labels[@]} - 1))
for i in "${!labels[@]}"; do
  if [ "$i" -eq "$last" ] || [ "${side_ok[$i]}" != 1 ] || [ "${side_ok[$last]}" != 1 ]; then
    continue
  fi
  label=${labels[$i]}
  echo "=== warm: this tree over $label"
  python3 scripts/check/bench_ab.py --warm --a "$out/small_m_$label.json" --b "$out/small_m.json" \
    --csv "$out/small_m_ab_$label.csv" || failed+=("this tree over $label: bench_ab.py")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "small_m.sh: failed:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
