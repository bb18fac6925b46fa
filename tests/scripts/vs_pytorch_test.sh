#!/usr/bin/env bash
# scripts/pytorch/vs_pytorch.py's own runs (run_all with --skip-pytorch: no GPU or PyTorch) on a
# stand-in for train_mlp: VARIANT+step_kernel runs train_mlp --gemm VARIANT --step-kernel and is
# reported as VARIANT+step_kernel, an unknown +MODE is a row with a note and no run.
#
#   tests/scripts/vs_pytorch_test.sh <repository root>
set -uo pipefail
root=$1
# shellcheck source=tests/scripts/test_lib.sh
source "$(dirname "$0")/test_lib.sh"

# The stand-in: 0.02 s an epoch, 0.03 with --step-kernel; logs its command line to $work/calls.
cat >"$work/train_mlp" <<'SH'
#!/usr/bin/env bash
here=$(dirname "$0")
echo "$*" >>"$here/calls"
declare -A a
s=0.02
while [ $# -ge 1 ]; do
  if [ "$1" = --step-kernel ]; then s=0.03; shift; else a[$1]=$2; shift 2; fi
done
printf '[{"variant": "%s", "s_per_epoch": %s, "final_test_acc": 0.98}]\n' "${a[--gemm]}" "$s" \
  >"${a[--results]}"
SH
chmod +x "$work/train_mlp"

PYTHONDONTWRITEBYTECODE=1 python3 - "$root/scripts/pytorch" "$work" >"$work/out" 2>&1 <<'PY' ||
import sys
sys.path.insert(0, sys.argv[1])
import vs_pytorch
work = sys.argv[2]
args = vs_pytorch.parse_args([
    "--skip-pytorch", "--models", "784-100-10:64", "--precisions", "tf32", "--epochs", "1",
    "--train-mlp", f"{work}/train_mlp", "--data-dir", work, "--csv", f"{work}/vs.csv",
    "--tf32-variants", "tf32_fast,tf32_fast+step_kernel,tf32_fast+other"])
rows = vs_pytorch.run_all(args, None)
got = [(r["variant"], r["s_per_epoch"], r["note"]) for r in rows]
assert got[0] == ("tf32_fast", 0.02, ""), got
assert got[1] == ("tf32_fast+step_kernel", 0.03, ""), got
assert got[2][0] == "tf32_fast+other" and got[2][1] is None, got
assert "unknown mode '+other'" in got[2][2], got
assert len(got) == 3, got
PY
  fail "vs_pytorch.py's rows: $(cat "$work/out")"
[[ $(wc -l <"$work/calls") -eq 2 ]] || fail "want 2 train_mlp runs: $(cat "$work/calls")"
grep -q -- "--gemm tf32_fast .* --step-kernel$" "$work/calls" ||
  fail "the step kernel's run: $(cat "$work/calls")"
[[ $(grep -c -- "--step-kernel" "$work/calls") -eq 1 ]] ||
  fail "--step-kernel in one run only: $(cat "$work/calls")"

finish vs_pytorch_test
