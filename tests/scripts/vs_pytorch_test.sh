#!/usr/bin/env bash
# scripts/pytorch/vs_pytorch.py's own runs (run_all with --skip-pytorch: no GPU or PyTorch) on a
# stand-in for train_mlp: each variant is one train_mlp --gemm VARIANT run, reported as its row
# with the run's s/epoch; fp32 adds cublas; a failed run is a row with no time and a note.
#
#   tests/scripts/vs_pytorch_test.sh <repository root>
set -uo pipefail
root=$1
# shellcheck source=tests/scripts/test_lib.sh
source "$(dirname "$0")/test_lib.sh"

# The stand-in: 0.02 s an epoch (0.03 for cublas); logs its command line to $work/calls; the
# variant "broken" fails.
cat >"$work/train_mlp" <<'SH'
#!/usr/bin/env bash
here=$(dirname "$0")
echo "$*" >>"$here/calls"
declare -A a
while [ $# -ge 1 ]; do a[$1]=$2; shift 2; done
[ "${a[--gemm]}" = broken ] && { echo "broken: no such variant" >&2; exit 1; }
s=0.02
[ "${a[--gemm]}" = cublas ] && s=0.03
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
    "--skip-pytorch", "--models", "784-100-10:64", "--precisions", "fp32,tf32", "--epochs", "1",
    "--train-mlp", f"{work}/train_mlp", "--data-dir", work, "--csv", f"{work}/vs.csv",
    "--fp32-variants", "tf32x3_fast", "--tf32-variants", "tf32_fast,broken"])
rows = vs_pytorch.run_all(args, None)
got = [(r["precision"], r["variant"], r["s_per_epoch"]) for r in rows]
assert got[:3] == [("fp32", "tf32x3_fast", 0.02), ("fp32", "cublas", 0.03),
                   ("tf32", "tf32_fast", 0.02)], got
assert got[3][:2] == ("tf32", "broken") and got[3][2] is None and rows[3]["note"], rows[3]
assert len(got) == 4, got
PY
  fail "vs_pytorch.py's rows: $(cat "$work/out")"
[[ $(wc -l <"$work/calls") -eq 4 ]] || fail "want 4 train_mlp runs: $(cat "$work/calls")"
for v in tf32x3_fast cublas tf32_fast broken; do
  grep -q -- "--gemm $v --hidden 100 --batch 64 " "$work/calls" ||
    fail "no run of --gemm $v with the model's flags: $(cat "$work/calls")"
done

finish vs_pytorch_test
