#!/usr/bin/env bash
# compute-sanitizer's memcheck, racecheck, synccheck and initcheck over every device GEMM variant
# (scripts/check/gpu_check.sh runs it; it needs a GPU and a build with the test programs):
#
#   scripts/check/sanitize.sh <build-dir> <out-dir> [variant ...]   (default: every device variant)
#
# Each (variant, tool) pair runs gemm_sanitizer_cases VARIANT (tests/kernels/sanitizer_cases.cpp:
# 72 cases of odd shapes, every layout and epilogue, each checked against the oracle) under the
# tool, several pairs at a time. Writes to <out-dir>:
#   sanitizers.csv               variant,tool,cases,errors (errors: the tool's errors, or for
#                                racecheck its hazards, errors and warnings together; a run whose
#                                results were wrong or that printed no summary counts as an error)
#   sanitizers.log               every run's output, the first 20 reports of each
#   racecheck_named_barrier.txt  racecheck on the barrier patterns of racecheck_named_barrier.cu
# SANITIZE_TOOLS (word-split) runs only those tools, e.g. "racecheck" after a change to tests alone.
# SANITIZE_PAIR_LIMIT_S bounds each pair (default 900 s).
# Exit status 0 when every row has 0 errors and the control pattern's race was reported.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: scripts/check/sanitize.sh <build-dir> <out-dir> [variant ...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
shift 2
cases_bin=$build/tests/kernels/gemm_sanitizer_cases
pattern_bin=$build/tests/kernels/racecheck_named_barrier
for b in "$cases_bin" "$pattern_bin"; do
  [ -x "$b" ] || { echo "sanitize.sh: $b was not built" >&2; exit 1; }
done
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "sanitize.sh: compute-sanitizer not found" >&2; exit 1; }
variants=("$@")
[ ${#variants[@]} -gt 0 ] || mapfile -t variants < <("$cases_bin" --list)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Stopped (TERM or INT, e.g. by a timeout around this script): every pair's process group too,
# for xargs does not pass the signal on and a sanitizer left running holds the GPU.
stop_pairs() {
  local f
  pkill -STOP -P $$ || true  # xargs starts no more pairs
  for f in "$work"/*.pid; do [ -e "$f" ] && kill -TERM -- "-$(cat "$f")" 2>/dev/null; done
  for f in $(pgrep -P $$); do pkill -TERM -P "$f" || true; done  # the pairs' shells
  pkill -TERM -P $$ || true
  pkill -CONT -P $$ || true  # xargs, stopped, takes its TERM
  exit 143
}
trap stop_pairs TERM INT

# One pair: its log in $work/<variant>.<tool>.log, its row in $work/<variant>.<tool>.row.
run_pair() {
  local variant=$1 tool=$2 rc=0 cases errors summary
  local name="$work/$1.$2"
  local log="$name.log"
  # timeout runs the pair in a process group of its own (its pid), named in a file for the trap.
  GEMM_MLP_REQUIRE_GPU=1 timeout "$pair_limit" \
    "$sanitizer" --tool "$tool" --print-limit 20 "$cases_bin" "$variant" >"$log" 2>&1 &
  echo $! >"$name.pid"
  wait $! || rc=$?
  rm -f "$name.pid"  # its id may be another process's by the time the trap runs
  cases=$(sed -n "s/^$variant: \([0-9]*\) cases.*/\1/p" "$log")
  # Every summary line counts (a tool may print more than one).
  if [ "$tool" = racecheck ]; then
    summary=$(sed -n 's/.*RACECHECK SUMMARY: [0-9]* hazards displayed (\([0-9]*\) errors, \([0-9]*\) warnings).*/\1 \2/p' "$log")
  else
    summary=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log")
  fi
  [ -n "$summary" ] && errors=$(echo "$summary" | awk '{ for (i = 1; i <= NF; ++i) n += $i } END { print n }')
  if [ -z "$summary" ] || [ -z "$cases" ] || [ "$rc" -ne 0 ]; then
    echo "sanitize.sh: $variant under $tool: exit status $rc, no summary or wrong results" >>"$log"
    errors=$(( ${errors:-0} > 0 ? errors : 1 ))
  fi
  echo "${cases:-0} $errors" >"$name.row"
}
export -f run_pair
pair_limit=${SANITIZE_PAIR_LIMIT_S:-900}
[[ $pair_limit =~ ^[1-9][0-9]*$ ]] || { echo "sanitize.sh: SANITIZE_PAIR_LIMIT_S must be a positive number of seconds" >&2; exit 2; }
export sanitizer cases_bin work pair_limit

tools=(memcheck racecheck synccheck initcheck)
if [ -n "${SANITIZE_TOOLS:-}" ]; then
  read -r -a tools <<<"$SANITIZE_TOOLS"
  for t in "${tools[@]}"; do
    case $t in
      memcheck | racecheck | synccheck | initcheck) ;;
      *) echo "sanitize.sh: unknown tool '$t' in SANITIZE_TOOLS" >&2; exit 2 ;;
    esac
  done
fi
jobs=$(( $(nproc) > 2 ? $(nproc) / 2 : 1 ))
start=$SECONDS
# In the background, waited for: a trap runs only once the foreground command is done.
for v in "${variants[@]}"; do for t in "${tools[@]}"; do echo "$v $t"; done; done |
  xargs -P "$jobs" -n 2 bash -c 'run_pair "$0" "$1"' &
wait $!

echo "variant,tool,cases,errors" >"$out/sanitizers.csv"
: >"$out/sanitizers.log"
status=0
for v in "${variants[@]}"; do
  for t in "${tools[@]}"; do
    cases=0 errors=1  # a pair that left no row (stopped) counts as an error
    [ -e "$work/$v.$t.row" ] && read -r cases errors <"$work/$v.$t.row"
    { echo "===== $v, $t"; cat "$work/$v.$t.log" 2>/dev/null || echo "(no log)"; } \
      >>"$out/sanitizers.log"
    echo "$v,$t,$cases,$errors" >>"$out/sanitizers.csv"
    [ "$errors" = 0 ] || status=1
  done
done
echo "sanitize.sh: ${#variants[@]} variants x ${#tools[@]} tools in $((SECONDS - start)) s"

# The barrier patterns: what racecheck reports for each (docs/NOTES.md, "Racecheck and named
# barriers", explains the difference).
{
  echo "# compute-sanitizer --tool racecheck on tests/kernels/racecheck_named_barrier.cu"
  "$sanitizer" --version | tail -1
  for p in $("$pattern_bin" --list); do
    line=$("$sanitizer" --tool racecheck "$pattern_bin" "$p" 2>&1 | grep 'RACECHECK SUMMARY' || true)
    echo "$p: ${line#*SUMMARY: }"
  done
} >"$out/racecheck_named_barrier.txt"
grep -q '^no_barrier: [1-9]' "$out/racecheck_named_barrier.txt" || {
  echo "sanitize.sh: racecheck reported no hazard for the no_barrier control" >&2
  status=1
}
cat "$out/sanitizers.csv"
cat "$out/racecheck_named_barrier.txt"
exit "$status"
