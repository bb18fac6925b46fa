# shellcheck shell=bash disable=SC2154  # flags comes from the sourcing script
# Sourced by tune_tiles.sh, wgmma_tiles.sh and tf32x3_tiles.sh, from the repository root: compiles
# tune candidates (candidate.h) in parallel, each config given to nvcc as -D macros (no source is
# copied or edited), and links them with a tune program and the kernels library. The sourcing
# script calls tune_prepare, then sets flags (an array of nvcc flags).

# tune_prepare PROGRAM BUILD FOLDER: sets lib (BUILD's libgemm_kernels.a, which must exist), nvcc
# ($NVCC, else the one on PATH or in /usr/local/cuda) and work (BUILD/FOLDER, emptied).
tune_prepare() {
  lib="$2/kernels/libgemm_kernels.a"
  [ -f "$lib" ] || { echo "$1: $lib not found; build the project first" >&2; exit 2; }
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  work="$2/$3"
  rm -rf "$work" && mkdir -p "$work"
}

candidate_pids=()
candidate_objects=()
candidates_start=$SECONDS

# candidate NAME SOURCE CFG [NVCC_ARG...]: compiles SOURCE into $work/NAME.o in the background (at
# most nproc at a time), with TUNE_NAME="NAME", TUNE_CFG=CFG (template arguments; nvcc splits -D
# values at unescaped commas, hence the escapes) and TUNE_ORDER (the call's rank).
candidate() {
  local name=$1 source=$2 cfg=$3
  shift 3
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done  # statuses: below
  "$nvcc" "${flags[@]}" "$@" "-DTUNE_NAME=\"$name\"" "-DTUNE_CFG=${cfg//,/\\,}" \
    "-DTUNE_ORDER=${#candidate_objects[@]}" -c "$source" -o "$work/$name.o" &
  candidate_pids+=($!)
  candidate_objects+=("$work/$name.o")
}

# build_and_run MAIN OUTPUT NONE_MESSAGE: waits for every compile, links MAIN, the candidates and
# the library into OUTPUT, then runs it unless TUNE_BUILD_ONLY is set. Without candidates, prints
# NONE_MESSAGE and exits with status 2.
build_and_run() {
  local pid failed=0
  if [ ${#candidate_objects[@]} -eq 0 ]; then
    echo "$(basename "$0"): $3" >&2
    exit 2
  fi
  echo "== compiling ${#candidate_objects[@]} candidates with $(nproc) jobs"
  for pid in "${candidate_pids[@]}"; do wait "$pid" || failed=1; done
  if [ "$failed" -ne 0 ]; then
    echo "$(basename "$0"): a candidate failed to compile (see above)" >&2
    exit 3
  fi
  "$nvcc" "${flags[@]}" "$1" "${candidate_objects[@]}" "$lib" -lcublas -lcublasLt -lopenblas \
    -o "$2"
  echo "== compiled in $((SECONDS - candidates_start)) s"
  [ -n "${TUNE_BUILD_ONLY:-}" ] || "$2"
}
