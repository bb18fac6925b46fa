#!/usr/bin/env bash
# ptx_diff.sh on two tiny trees: a kernel moved to another file is identical, a changed one
# differs (exit status 1, its diff written), one removed is only in the first tree.
#
#   tests/scripts/ptx_diff_test.sh <repository root>
set -uo pipefail
root=$1
# shellcheck source=test_lib.sh
source "$(dirname "$0")/test_lib.sh"
mkdir -p "$work/a/kernels" "$work/b/kernels" "$work/b/engine"
kernel='__global__ void NAME(float* x) { x[threadIdx.x] *= FACTOR; }'
{ echo "${kernel/NAME/moved}" | sed 's/FACTOR/2.0f/'
  echo "${kernel/NAME/changed}" | sed 's/FACTOR/3.0f/'
  echo "${kernel/NAME/removed}" | sed 's/FACTOR/4.0f/'; } >"$work/a/kernels/one.cu"
echo "${kernel/NAME/changed}" | sed 's/FACTOR/5.0f/' >"$work/b/kernels/one.cu"
echo "${kernel/NAME/moved}" | sed 's/FACTOR/2.0f/' >"$work/b/engine/two.cu"

"$root/scripts/check/ptx_diff.sh" "$work/a" "$work/b" "$work/out" >"$work/log" 2>&1
status=$?
[[ $status == 1 ]] || fail "exit status $status, not 1: $(cat "$work/log")"
csv=$work/out/ptx_diff.csv
grep -q '^_Z5movedPf,[0-9]*,[0-9]*,yes$' "$csv" || fail "the moved kernel is not identical: $(cat "$csv")"
grep -q '^_Z7changedPf,[0-9]*,[0-9]*,no$' "$csv" || fail "the changed kernel is not told apart: $(cat "$csv")"
grep -q '^_Z7removedPf,[0-9]*,0,only-a$' "$csv" || fail "the removed kernel is not only-a: $(cat "$csv")"
[[ -s $work/out/diffs/_Z7changedPf.diff ]] || fail "no diff written for the changed kernel"

"$root/scripts/check/ptx_diff.sh" "$work/a" "$work/a" "$work/same" >"$work/log" 2>&1
[[ $? == 0 ]] || fail "a tree against itself: $(cat "$work/log")"
finish ptx_diff_test
