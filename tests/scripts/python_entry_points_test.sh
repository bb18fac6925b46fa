#!/usr/bin/env bash
# Every Python entry point under scripts/ starts and prints its usage (--help) without a GPU,
# PyTorch or matplotlib: its imports of scripts/gemm_mlp_tools resolve from where it lives.
# The scripts start in parallel (a Python start-up each).
#
#   tests/scripts/python_entry_points_test.sh <repository root>
set -uo pipefail
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shopt -s nullglob
scripts=()
for script in "$root"/scripts/{check,docs,pytorch}/*.py; do
  # ctest_summary.py has no --help (ctest_summary_test.sh runs it).
  [[ $script == */scripts/check/ctest_summary.py ]] || scripts+=("$script")
done
[[ ${#scripts[@]} -gt 0 ]] || { echo "FAIL: no Python scripts under $root/scripts"; exit 1; }
for i in "${!scripts[@]}"; do
  (PYTHONDONTWRITEBYTECODE=1 python3 "${scripts[$i]}" --help >"$work/$i.out" 2>&1
   echo $? >"$work/$i.status") &
done
wait
failures=0
for i in "${!scripts[@]}"; do
  name=${scripts[$i]#"$root"/}
  if [[ $(cat "$work/$i.status") != 0 ]]; then
    printf 'FAIL: %s --help exited non-zero:\n%s\n' "$name" "$(cat "$work/$i.out")"
    failures=$((failures + 1))
  elif [[ $(head -c 6 "$work/$i.out") != usage: ]]; then
    printf 'FAIL: %s --help printed no usage:\n%s\n' "$name" "$(cat "$work/$i.out")"
    failures=$((failures + 1))
  fi
done
[[ $failures -eq 0 ]] && echo "python_entry_points_test: ${#scripts[@]} scripts checked"
exit $((failures > 0))
