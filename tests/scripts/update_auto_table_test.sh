#!/usr/bin/env bash
# scripts/docs/update_auto_table.py on a scratch tree: an H200 run filed under the plain names, an
# H100 run under h100_ beside it, the table one block per GPU, a second take of a run adding no
# name; runs of two GPUs, a missing file and a missing gemm_bench refused with the reason.
#
#   tests/scripts/update_auto_table_test.sh <repository root> <gemm_bench>
set -uo pipefail
root=$1
bench=$2
# shellcheck source=tests/scripts/test_lib.sh
source "$(dirname "$0")/test_lib.sh"
update=$root/scripts/docs/update_auto_table.py
tree=$work/tree
mkdir -p "$tree/docs/results" "$tree/kernels"
printf '// From: gemm_bench.json mlp_shapes.json mlp4096_shapes.json auto_shapes.json\n' \
  >"$tree/kernels/auto_table.inc"

# OUT with the bench step's four files from one GPU; `fastest` wins the 64³ NN shape.
make_out() {  # folder, GPU name, fastest variant
  mkdir -p "$1"
  for f in gemm_bench mlp_shapes mlp4096_shapes auto_shapes; do
    local slow=dbuf
    [ "$3" = dbuf ] && slow=fast
    printf '{"device": {"name": "%s"}, "results": [%s, %s]}\n' "$2" \
      "{\"m\": 64, \"n\": 64, \"k\": 64, \"layout\": \"NN\", \"variant\": \"$3\", \"status\": \"ok\", \"ms_median\": 0.01}" \
      "{\"m\": 64, \"n\": 64, \"k\": 64, \"layout\": \"NN\", \"variant\": \"$slow\", \"status\": \"ok\", \"ms_median\": 0.02}" \
      >"$1/$f.json"
  done
}
run_update() { python3 "$update" "$1" --bench "$bench" --root "$tree" >"$work/log" 2>&1; }

make_out "$work/h200" "NVIDIA H200" fast
run_update "$work/h200" || fail "the H200 run: $(cat "$work/log")"
[ -f "$tree/docs/results/gemm_bench.json" ] || fail "the H200 run is not filed as gemm_bench.json"
make_out "$work/h100" "NVIDIA H100 80GB HBM3" dbuf
run_update "$work/h100" || fail "the H100 run: $(cat "$work/log")"
for f in gemm_bench mlp_shapes mlp4096_shapes auto_shapes; do
  cmp -s "$work/h100/$f.json" "$tree/docs/results/h100_$f.json" || fail "h100_$f.json not filed"
  cmp -s "$work/h200/$f.json" "$tree/docs/results/$f.json" || fail "$f.json changed by the H100 run"
done
want='// From: gemm_bench.json mlp_shapes.json mlp4096_shapes.json auto_shapes.json h100_gemm_bench.json h100_mlp_shapes.json h100_mlp4096_shapes.json h100_auto_shapes.json
{"NVIDIA H200", "NN", 64, 64, 64, "fast"},
{"NVIDIA H100 80GB HBM3", "NN", 64, 64, 64, "dbuf"},'
got=$(grep -v '^// [^F]' "$tree/kernels/auto_table.inc")
[ "$got" = "$want" ] || fail "the two-GPU table: got
$got"
run_update "$work/h100" || fail "the H100 run again: $(cat "$work/log")"
[ "$(grep -v '^// [^F]' "$tree/kernels/auto_table.inc")" = "$want" ] ||
  fail "a second take of the H100 run changed the table"

make_out "$work/mixed" "NVIDIA H100 80GB HBM3" fast
make_out "$work/other" "NVIDIA H200" fast
cp "$work/other/auto_shapes.json" "$work/mixed/"
run_update "$work/mixed" && fail "runs of two GPUs taken"
grep -q "the four runs name 2 GPUs" "$work/log" || fail "two GPUs: $(cat "$work/log")"
rm "$work/mixed/mlp_shapes.json"
run_update "$work/mixed" && fail "a missing run taken"
grep -q "lacks mlp_shapes.json" "$work/log" || fail "a missing run: $(cat "$work/log")"
python3 "$update" "$work/h100" --bench "$work/none" --root "$tree" >"$work/log" 2>&1 &&
  fail "a missing gemm_bench taken"
grep -q "no gemm_bench at" "$work/log" || fail "no gemm_bench: $(cat "$work/log")"
finish "update_auto_table.py"
