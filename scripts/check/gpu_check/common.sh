# shellcheck shell=bash
# Sourced by scripts/check/gpu_check.sh (and scripts/pytorch/torch_op_check.sh): paths under the
# repository, the log and the summary (start_log, log, note, fail, the summary written on exit),
# running a logged command, a ctest run's counts, and whether MNIST is present.

# PATH made absolute: under the repository where it is relative.
in_repo() { case "$1" in /*) echo "$1" ;; *) echo "$repo/$1" ;; esac; }
# Starts OUT/NAME.log empty, and the summary (OUT/summary.txt) with no lines and no failure.
start_log() {
  main_log="$out/$1.log"
  summary="$out/summary.txt"
  : >"$main_log"
  summary_lines=()
  overall=0
}
log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$main_log"; }
note() {  # a line for the summary, logged too
  summary_lines+=("$*")
  log "$*"
}
fail() {
  note "FAIL: $*"
  overall=1
}
# HEAD's short hash, and whether the tracked files differ from it (a copy of a working tree whose
# changes were not committed, or whose git metadata is older than its files).
# shellcheck disable=SC2317  # called from the EXIT trap
source_commit() {
  local head
  head=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null) || { echo unknown; return; }
  if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    echo "$head, with changes to tracked files"
  else
    echo "$head"
  fi
}
# shellcheck disable=SC2317  # called from the EXIT trap
write_summary() {
  {
    echo "gpu_check.sh summary ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
    echo "repo: $repo (commit ${SOURCE_COMMIT:-$(source_commit)})"
    echo "build dir: $build_dir, CUDA architectures: ${CUDA_ARCHS:-90}, steps: ${steps//,/ }"
    printf '%s\n' "${summary_lines[@]}"
    if [ "$overall" -eq 0 ]; then echo "RESULT: PASS"; else echo "RESULT: FAIL"; fi
  } >"$summary"
}
# shellcheck disable=SC2317  # the EXIT trap
on_exit() {
  local rc=$1
  if [ "$rc" -ne 0 ] && [ "$overall" -eq 0 ]; then
    summary_lines+=("FAIL: aborted (exit status $rc), see gpu_check.log")
    overall=1
  fi
  write_summary
  echo "----- $summary"
  cat "$summary"
}

# run_logged <log-file> <command...>: runs it, output appended to the log file and shown;
# returns the command's exit status without tripping set -e.
run_logged() {
  local file=$1
  shift
  log "\$ $*"
  set +e
  "$@" 2>&1 | tee -a "$file"
  local rc=${PIPESTATUS[0]}
  set -e
  return "$rc"
}

# junit_counts <junit-file>: sets `counts` (scripts/check/ctest_summary.py --lines: the counts'
# line, then one line per failed or skipped test) and total, passed, failed and skipped from it,
# and notes them for the summary (the first 40 names).
junit_counts() {
  counts=$(python3 "$repo/scripts/check/ctest_summary.py" --lines "$1")
  read -r total passed failed skipped <<<"$(head -1 <<<"$counts")"
  note "tests: $total total, $passed passed, $failed failed, $skipped skipped"
  local kind name
  while read -r kind name; do
    if [ -n "${kind:-}" ]; then note "  $kind: $name"; fi
  done < <(tail -n +2 <<<"$counts" | head -40)
}

mnist_present() {
  local f
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    [ -s "$mnist_dir/$f" ] || [ -s "$mnist_dir/$f.gz" ] || return 1
  done
}
