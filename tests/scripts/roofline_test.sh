#!/usr/bin/env bash
# scripts/docs/roofline.py and scripts/gemm_mlp_tools/roofline.py: the default model's step
# counted by hand, the committed roofline.csv regenerated from the committed results, and a bad
# results row named in a non-zero exit.
#
#   tests/scripts/roofline_test.sh <repository root>
set -uo pipefail
root=$1
# shellcheck source=tests/scripts/test_lib.sh
source "$(dirname "$0")/test_lib.sh"

# 784-1024-1024-10 at batch 256: forward 2·256·(784·1024 + 1024·1024 + 1024·10) = 953155584 FLOPs,
# the weight gradients as many, the input gradients (layers 2 and 3) 2·256·(1024·1024 + 1024·10) =
# 542113792; 1863690 parameters; 235 steps per epoch (the last one partial).
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$root/scripts python3 - >"$work/hand" 2>&1 <<'PY' ||
from gemm_mlp_tools import roofline as r
sizes = [784, 1024, 1024, 10]
assert r.step_flops(sizes, 256) == 2 * 953155584 + 542113792, r.step_flops(sizes, 256)
assert r.parameter_count(sizes) == 1863690, r.parameter_count(sizes)
assert r.steps_per_epoch(256) == 235 and r.steps_per_epoch(128) == 469
f = r.floor(sizes, 256, "tf32", 50 * 2**20)  # w, g and v (22 MB) in L2: no memory term
assert f["memory_us"] == 0 and abs(f["compute_us"] - 2448424960 / 494.5e12 * 1e6) < 1e-9, f
f = r.floor(sizes, 256, "tf32", 2**20)  # an L2 of 1 MB: the bytes at HBM bandwidth count
assert f["memory_us"] == r.step_bytes(sizes, 256) / 4.8e12 * 1e6, f
PY
  fail "hand-counted step: $(cat "$work/hand")"

# The committed CSV is what the script writes from the committed results.
if ! python3 "$root/scripts/docs/roofline.py" --results "$root/docs/results" --csv "$work/roofline.csv" \
    >"$work/out" 2>&1; then
  fail "roofline.py on docs/results failed: $(cat "$work/out")"
elif ! diff -u "$root/docs/results/roofline.csv" "$work/roofline.csv" >"$work/diff"; then
  fail "docs/results/roofline.csv differs from what roofline.py writes (run it):
$(head -20 "$work/diff")"
fi

# A model that is not a list of sizes: an error naming it, no CSV.
cp -r "$root/docs/results" "$work/results"
sed -i '2s/^784-1024-1024-10,/784-x-10,/' "$work/results/vs_pytorch.csv"
if python3 "$root/scripts/docs/roofline.py" --results "$work/results" --csv "$work/bad.csv" \
    >"$work/out" 2>&1; then
  fail "a vs_pytorch.csv row with model 784-x-10 was accepted"
elif ! grep -q "bad row in vs_pytorch.csv.*784-x-10" "$work/out"; then
  fail "the error does not name the bad row: $(cat "$work/out")"
fi

finish roofline_test
