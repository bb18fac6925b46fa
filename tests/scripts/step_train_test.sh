#!/usr/bin/env bash
# scripts/check/step_train.py with a stand-in for train_mlp that reports set times and accuracies:
# every model × variant run with and without --step-kernel, the CSV's ratio and accuracy points,
# an accuracy past the limit or a failed run named in exit status 1, bad usage in 2.
#
#   tests/scripts/step_train_test.sh <repository root>
set -uo pipefail
root=$1
script=$root/scripts/check/step_train.py
# shellcheck source=tests/scripts/test_lib.sh
source "$(dirname "$0")/test_lib.sh"

# The stand-in: s/epoch and accuracy from $work/times ("HIDDEN BATCH VARIANT MODE SECONDS ACC",
# MODE graph or kernel, the last match, else 0.05 s and 0.98), exit 1 for SECONDS "exit"; it logs
# its command line to $work/calls.
cat >"$work/train_mlp" <<'SH'
#!/usr/bin/env bash
here=$(dirname "$0")
echo "$*" >>"$here/calls"
declare -A a
mode=graph
while [ $# -ge 1 ]; do
  if [ "$1" = --step-kernel ]; then mode=kernel; shift; else a[$1]=$2; shift 2; fi
done
read -r s acc < <(awk -v key="${a[--hidden]} ${a[--batch]} ${a[--gemm]} $mode" \
  '$1" "$2" "$3" "$4 == key {s = $5; acc = $6} END {print s, acc}' "$here/times")
if [ "$s" = exit ]; then echo "train_mlp: error: out of luck" >&2; exit 1; fi
printf '[{"variant": "%s", "s_per_epoch": %s, "final_test_acc": %s}]\n' "${a[--gemm]}" \
  "${s:-0.05}" "${acc:-0.98}" >"${a[--results]}"
SH
chmod +x "$work/train_mlp"
run() {  # <extra args>: step_train.py on the stand-in; output in $work/out, status returned
  : >"$work/calls"
  PYTHONDONTWRITEBYTECODE=1 python3 "$script" --train-mlp "$work/train_mlp" --data-dir "$work" \
    --csv "$work/step.csv" "$@" >"$work/out" 2>&1
}

# The kernel at twice the graph's time, 0.29 points apart (inside 0.3).
cat >"$work/times" <<'EOF2'
100 64 tf32_fast graph 0.020 0.9800
100 64 tf32_fast kernel 0.040 0.9829
EOF2
run --models 784-100-10:64,784-30-20-10:32 --variants tf32_fast,auto ||
  fail "accuracies inside the limit gave a non-zero exit: $(cat "$work/out")"
[[ $(wc -l <"$work/calls") -eq 8 ]] || fail "want 8 train_mlp runs (2 models × 2 variants × 2): $(cat "$work/calls")"
grep -qx -- "--gemm auto --hidden 30,20 --batch 32 --epochs 3 --seed 1 --data-dir $work --results .*/auto.json --step-kernel" \
  "$work/calls" || fail "train_mlp's command line with the kernel: $(cat "$work/calls")"
# --steps-per-launch goes to the kernel's runs only.
run --models 784-100-10:64 --variants tf32_fast --steps-per-launch 8 ||
  fail "--steps-per-launch 8 gave a non-zero exit: $(cat "$work/out")"
grep -q -- "--step-kernel --steps-per-launch 8$" "$work/calls" &&
  [[ $(grep -c -- "--steps-per-launch" "$work/calls") -eq 1 ]] ||
  fail "--steps-per-launch 8 in the kernel's command line only: $(cat "$work/calls")"
run --models 784-100-10:64,784-30-20-10:32 --variants tf32_fast,auto
head -1 "$work/step.csv" | grep -qx "model,batch,variant,graph_s_per_epoch,kernel_s_per_epoch,ratio,graph_test_acc,kernel_test_acc,acc_points,note" ||
  fail "CSV header: $(head -1 "$work/step.csv")"
python3 - "$work/step.csv" <<'PY' || fail "CSV rows: $(cat "$work/step.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 4, rows
r = rows[0]
assert (r["model"], r["batch"], r["variant"]) == ("784-100-10", "64", "tf32_fast"), r
assert abs(float(r["ratio"]) - 2.0) < 1e-9, r
assert abs(float(r["acc_points"]) - 0.29) < 1e-9, r
assert abs(float(rows[3]["ratio"]) - 1.0) < 1e-9, rows[3]
PY
grep -qF "| 784-100-10, 64 | tf32_fast | 20.0 | 40.0 | 2.00 | 98.00% | 98.29% |  |" "$work/out" ||
  fail "the Markdown table: $(cat "$work/out")"

# A run that fails the check: exit 1, and its row of the CSV says why.
expect_failed_row() {  # <what> <the row's note>
  run --models 784-100-10:64 --variants tf32_fast
  local status=$?
  [[ $status -eq 1 ]] || fail "$1 exited $status, want 1: $(cat "$work/out")"
  grep -qF -- "$2" "$work/step.csv" || fail "$1: the row does not say '$2': $(cat "$work/step.csv")"
}
echo "100 64 tf32_fast kernel 0.040 0.9769" >>"$work/times"
expect_failed_row "0.31 points apart" "test accuracy differs by -0.31 points, past 0.3"
run --models 784-100-10:64 --variants tf32_fast --max-acc-points 0.5 ||
  fail "0.31 points failed at --max-acc-points 0.5: $(cat "$work/out")"
echo "100 64 tf32_fast kernel exit" >>"$work/times"
expect_failed_row "a failed run" "train_mlp exit 1: train_mlp: error: out of luck"

# Bad usage: exit 2 naming the problem, before any run.
expect_usage() {  # <needle> <args...>
  local needle=$1
  shift
  run "$@"
  local status=$?
  [[ $status -eq 2 ]] || fail "$* exited $status, want 2: $(cat "$work/out")"
  grep -qF -- "$needle" "$work/out" || fail "$* does not say '$needle': $(cat "$work/out")"
  [[ ! -s $work/calls ]] || fail "$* ran train_mlp"
}
expect_usage "model '784-x-10:64' is not W-W-...-W:BATCH" --models 784-x-10:64
expect_usage "model '784-10:64': at least one hidden layer" --models 784-10:64
expect_usage "--epochs must be >= 1, got 0" --epochs 0
expect_usage "--steps-per-launch must be >= 1, got 0" --steps-per-launch 0
expect_usage "is not an executable" --train-mlp "$work/none"

finish step_train_test
