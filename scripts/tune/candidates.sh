# shellcheck shell=bash disable=SC2154  # nvcc, flags, work and lib come from the sourcing script
# Sourced by tune_tiles.sh and wgmma_tiles.sh: compiles tune candidates (candidate.h) in parallel,
# each config given to nvcc as -D macros (no source is copied or edited), and links them with a
# tune program and the kernels library. Needs, set by the sourcing script: nvcc, flags (an array
# of nvcc flags), work (an empty folder), lib (libgemm_kernels.a).
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
