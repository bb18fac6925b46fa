#!/usr/bin/env bash
# scripts/docs/readme_tables.py: the documents' generated blocks match the committed results in
# docs/results/ (regenerating changes nothing; after a new GPU run, copy its results there and
# run the script), and a result or a marker that is missing is an error naming it.
#
#   tests/scripts/readme_tables_test.sh <repository root>
set -uo pipefail
root=$1
tables=$root/scripts/docs/readme_tables.py
# shellcheck source=tests/scripts/test_lib.sh
source "$(dirname "$0")/test_lib.sh"
docs=(README.md docs/RESULTS.md docs/KERNELS.md)
mkdir -p "$work/docs"
for d in "${docs[@]}"; do cp "$root/$d" "$work/$d"; done
run() {  # <results folder>: the script on the copies; its output in $work/out
  python3 "$tables" --results "$1" --docs "${docs[@]/#/$work/}" >"$work/out" 2>&1
}

if ! run "$root/docs/results"; then
  fail "regenerating from docs/results failed: $(cat "$work/out")"
fi
for d in "${docs[@]}"; do
  diff -u "$root/$d" "$work/$d" >"$work/diff" ||
    fail "$d differs from what readme_tables.py generates from docs/results (run it):
$(head -40 "$work/diff")"
done

# A variant of the ladder missing from the training results: an error naming it and the file.
cp -r "$root/docs/results" "$work/results"
grep -v '^regtile,' "$root/docs/results/train_compare.csv" >"$work/results/train_compare.csv"
if run "$work/results"; then
  fail "a train_compare.csv without regtile was accepted"
elif ! grep -q "train_compare.csv has no row for regtile" "$work/out"; then
  fail "the error does not name the missing row: $(cat "$work/out")"
fi

# A step's markers missing from every document: an error naming the block.
cp "$root/docs/results/train_compare.csv" "$work/results/"
sed -i '/<!-- step:dbuf:/d' "$work/docs/KERNELS.md"
if run "$work/results"; then
  fail "KERNELS.md without the step:dbuf markers was accepted"
elif ! grep -q "<!-- step:dbuf:begin/end --> markers in 0 of" "$work/out"; then
  fail "the error does not name the missing block: $(cat "$work/out")"
fi

# A step slower than the one before at a shape: the shape and the ratio are named in its block.
cp "$root/docs/KERNELS.md" "$work/docs/KERNELS.md"
python3 - "$root/docs/results/gemm_bench.json" "$work/results/gemm_bench.json" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))
by = {(r["variant"], r["m"], r["n"], r["k"], r["layout"]): r for r in bench["results"]}
by[("warptile", 1024, 1024, 1024, "NN")]["tflops"] = by[("dbuf", 1024, 1024, 1024, "NN")]["tflops"] / 2
json.dump(bench, open(sys.argv[2], "w"))
PY
if ! run "$work/results"; then
  fail "regenerating with a slow warptile failed: $(cat "$work/out")"
elif ! sed -n '/step:warptile:begin/,/step:warptile:end/p' "$work/docs/KERNELS.md" | tr '\n' ' ' |
    grep -q "Slower than dbuf by more than 1% at: .*1024³ 0.50×"; then
  fail "step:warptile does not name 1024³ at 0.50× of dbuf"
fi

# first_run.csv rows (scripts/check/first_run_time.sh --csv): the last one's figures in the
# README's first_run block, with its commit and load; a summary.txt that names no date: an error
# naming the file.
cat >"$work/results/first_run.csv" <<'CSV'
date,commit,cores,gpu,wall_s,user_s,system_s,epoch_s,setup_build_s,train_mlp_bytes,build_wall_s,longest_silence_s,gpu_kernels,load_before
2026-11-30,0000000,2,none,100.0,200.0,10.0,5.0,95.0,3000000,90.0,10,OFF,
2026-12-02,abc1234,2,none,300.0,500.0,20.0,17.5,282.5,1650000,270.0,12,OFF,1.5
CSV
if ! run "$work/results"; then
  fail "regenerating with a first_run.csv row failed: $(cat "$work/out")"
elif ! grep -qF '| 2 cores, no GPU (2026-12-02, `abc1234`, load 1.5) | 5.0 min | 4.7 min | 17.5 s | 1.6 MB |' "$work/README.md"; then
  fail "README.md's first_run block does not show the last first_run.csv row"
elif grep -qF "0000000" "$work/README.md"; then
  fail "README.md's first_run block shows an earlier row"
fi
echo "no summary" >"$work/results/summary.txt"
if run "$work/results"; then
  fail "a summary.txt without a date was accepted"
elif ! grep -q "summary.txt names no date or no GPU" "$work/out"; then
  fail "the error does not name summary.txt: $(cat "$work/out")"
fi

finish readme_tables_test
