#!/usr/bin/env bash
# scripts/check/odd_widths.py and scripts/gemm_mlp_tools/production_rules.py, with a stand-in for
# train_mlp that reports set times: every model × variant run once, the CSV, the rules' ratios at
# the tolerance's edge, a slow auto or a failed run named in exit status 1, bad usage in 2.
#
#   tests/scripts/odd_widths_test.sh <repository root>
set -uo pipefail
root=$1
odd=$root/scripts/check/odd_widths.py
# shellcheck source=tests/scripts/test_lib.sh
source "$(dirname "$0")/test_lib.sh"

# The stand-in: s/epoch from $work/times ("HIDDEN BATCH VARIANT SECONDS", the last match, else
# 0.05 s), exit 1 for SECONDS "exit"; it logs its command line to $work/calls.
cat >"$work/train_mlp" <<'SH'
#!/usr/bin/env bash
here=$(dirname "$0")
echo "$*" >>"$here/calls"
declare -A a
while [ $# -ge 2 ]; do a[$1]=$2; shift 2; done
s=$(awk -v key="${a[--hidden]} ${a[--batch]} ${a[--gemm]}" '$1" "$2" "$3 == key {s = $4} END {print s}' "$here/times")
if [ "$s" = exit ]; then echo "train_mlp: error: out of luck" >&2; exit 1; fi
printf '[{"variant": "%s", "s_per_epoch": %s, "final_test_acc": 0.975}]\n' "${a[--gemm]}" "${s:-0.05}" >"${a[--results]}"
SH
chmod +x "$work/train_mlp"
cat >"$work/table.inc" <<'EOF'
// Written by gemm_bench --auto-table; one line per measured shape and layout:
// {device, layout, M, N, K, fastest correct fp32 variant of this project}.
{"NVIDIA H200", "NN", 128, 512, 10, "vec"},
{"NVIDIA H200", "NT", 256, 1024, 784, "tf32x3_fast"},
{"NVIDIA H200", "TN", 1024, 1024, 256, "tf32x3_ws"},
{"NVIDIA H100 80GB HBM3", "NN", 128, 512, 10, "naive"},
EOF
odd_run() {  # <extra args>: odd_widths.py on the stand-in; output in $work/out, status returned
  : >"$work/calls"
  PYTHONDONTWRITEBYTECODE=1 python3 "$odd" --train-mlp "$work/train_mlp" --data-dir "$work" \
    --auto-table "$work/table.inc" --gpu "NVIDIA H200" --csv "$work/odd.csv" "$@" >"$work/out" 2>&1
}

# Every rule holds: tf32_fast at 1.02 × tf32 (the edge), fast beside the best ladder step (dbuf),
# auto beside the fastest listed variant (tf32x3_ws).
cat >"$work/times" <<'EOF'
777,333 200 tf32 0.050
777,333 200 tf32_fast 0.051
777,333 200 regtile 0.080
777,333 200 dbuf 0.060
777,333 200 warptile 0.070
777,333 200 fast 0.055
777,333 200 tf32x3_ws 0.040
777,333 200 auto 0.040
257 64 auto 0.049
EOF
if ! odd_run --models 784-777-333-10:200,784-257-10:64; then
  fail "all rules holding gave a non-zero exit: $(cat "$work/out")"
fi
# 2 models × (9 variants + vec and tf32x3_ws, which the table adds for the H200; tf32x3_fast it
# lists already, naive only for another GPU).
[[ $(wc -l <"$work/calls") -eq 22 ]] || fail "want 22 train_mlp runs: $(cat "$work/calls")"
grep -q -- "--gemm tf32x3_ws --hidden 777,333 --batch 200 --epochs 2 --seed 1 --data-dir $work" \
  "$work/calls" || fail "train_mlp's command line: $(head -3 "$work/calls")"
head -1 "$work/odd.csv" | grep -qx "model,batch,variant,precision,auto_lists,s_per_epoch,test_acc,epochs,note" ||
  fail "CSV header: $(head -1 "$work/odd.csv")"
grep -qx "784-777-333-10,200,tf32_fast,tf32,no,0.051000,97.50,2," "$work/odd.csv" ||
  fail "tf32_fast's row: $(cat "$work/odd.csv")"
grep -qx "784-257-10,64,vec,fp32,yes,0.050000,97.50,2," "$work/odd.csv" ||
  fail "vec's row: $(cat "$work/odd.csv")"
grep -q "| 784-777-333-10 | 200 | tf32_fast | step 7 | tf32 | 51.0 | 50.0 | 1.020 | pass |" "$work/out" ||
  fail "tf32_fast's rule at 1.02: $(cat "$work/out")"
grep -q "| 784-777-333-10 | 200 | fast | the best of steps 4-6 | dbuf | 55.0 | 60.0 | 0.917 | pass |" "$work/out" ||
  fail "fast's rule: $(cat "$work/out")"
grep -q "| 784-777-333-10 | 200 | auto | every variant its table lists | tf32x3_ws | 40.0 | 40.0 | 1.000 | pass |" "$work/out" ||
  fail "auto's rule: $(cat "$work/out")"
grep -q "the variants auto's table lists: tf32x3_fast, vec, tf32x3_ws." "$work/out" ||
  fail "the listed variants: $(cat "$work/out")"

# auto 3% slower than the fastest listed variant, and a failed run: both named, exit 1.
echo "777,333 200 auto 0.0412" >>"$work/times"
echo "777,333 200 tf32x3 exit" >>"$work/times"
odd_run --models 784-777-333-10:200
status=$?
[[ $status -eq 1 ]] || fail "a slow auto and a failed run: exit $status, want 1: $(cat "$work/out")"
grep -q "| 784-777-333-10 | 200 | auto | every variant its table lists | tf32x3_ws | 41.2 | 40.0 | 1.030 | \*\*FAIL\*\* |" \
  "$work/out" || fail "auto at 1.03 not failed: $(cat "$work/out")"
grep -q "FAIL: 784-777-333-10 batch 200: tf32x3_fast against step 10: no time for tf32x3" "$work/out" ||
  fail "the failed run's rule is not named: $(cat "$work/out")"
grep -q "784-777-333-10,200,tf32x3,fp32,no,,,2,train_mlp exit 1: train_mlp: error: out of luck" "$work/odd.csv" ||
  fail "the failed run's row: $(cat "$work/odd.csv")"
# With a 5% tolerance, auto at 1.03 passes.
sed -i '$d' "$work/times"
odd_run --models 784-777-333-10:200 --tolerance 0.05 ||
  fail "auto at 1.03 failed at --tolerance 0.05: $(cat "$work/out")"

# Bad usage: exit 2 naming the entry, before any run.
expect_usage() {  # <needle> <args...>
  local needle=$1
  shift
  odd_run "$@"
  local status=$?
  [[ $status -eq 2 ]] || fail "$* exited $status, want 2: $(cat "$work/out")"
  grep -qF -- "$needle" "$work/out" || fail "$* does not say '$needle': $(cat "$work/out")"
  [[ ! -s $work/calls ]] || fail "$* ran train_mlp"
}
expect_usage "'784-1024-1024-10:256' is a standard model" --models 784-1024-1024-10:256
expect_usage "bad --models entry '784-x-10:64'" --models 784-x-10:64
expect_usage "must be 784-...-10" --models 784-100-9:64
expect_usage "--epochs must be >= 1, got 0" --epochs 0
expect_usage "--tolerance must be in [0, 1), got 1.5" --tolerance 1.5
expect_usage "is not an executable" --train-mlp "$work/none"

expect_usage "--auto-table: [Errno 2] No such file or directory" --auto-table "$work/none.inc"
# A table line that is not an entry: the file and line named.
# A GPU the table does not list: auto runs fast there, and no rule could check its picks.
expect_usage "has no line for the GPU X, where auto runs fast" --gpu "GPU X"
echo '{"NVIDIA H200", "NN", 1, 2, "fast"},' >>"$work/table.inc"
expect_usage "table.inc:7: not an auto table entry" --models 784-257-10:64

finish odd_widths_test
