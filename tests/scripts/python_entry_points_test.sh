#!/usr/bin/env bash
# Every Python entry point under scripts/ starts and prints its usage (--help) without a GPU,
# PyTorch or matplotlib: its imports of scripts/gemm_mlp_tools resolve from where it lives.
#
#   tests/scripts/python_entry_points_test.sh <repository root>
set -uo pipefail
root=$1
failures=0
shopt -s nullglob
scripts=("$root"/scripts/{check,docs,pytorch}/*.py)
[[ ${#scripts[@]} -gt 0 ]] || { echo "FAIL: no Python scripts under $root/scripts"; exit 1; }
for script in "${scripts[@]}"; do
  name=${script#"$root"/}
  [[ $name == scripts/check/ctest_summary.py ]] && continue  # no --help: ctest_summary_test.sh
  if ! out=$(PYTHONDONTWRITEBYTECODE=1 python3 "$script" --help 2>&1); then
    printf 'FAIL: %s --help exited non-zero:\n%s\n' "$name" "$out"
    failures=$((failures + 1))
  elif [[ $out != usage:* ]]; then
    printf 'FAIL: %s --help printed no usage:\n%s\n' "$name" "$out"
    failures=$((failures + 1))
  fi
done
[[ $failures -eq 0 ]] && echo "python_entry_points_test: ${#scripts[@]} scripts checked"
exit $((failures > 0))
