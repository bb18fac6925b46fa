#!/usr/bin/env bash
# scripts/check/bench_ab.py on hand-made gemm_bench JSON: two builds (the best median of each
# side's rounds, the ratio, cuBLAS's share), warm timings, and a chain of builds, each over the one
# before it, with a case missing from one side left empty; bad usage named.
#
#   tests/scripts/bench_ab_test.sh <source dir>
set -uo pipefail
root=$1
source "$(dirname "$0")/test_lib.sh"
ab=$root/scripts/check/bench_ab.py

# result VARIANT M MS WARM_US [STATUS]: one JSON result of shape M×64×32 NT.
result() {
  printf '{"variant": "%s", "m": %s, "n": 64, "k": 32, "layout": "NT", "precision": "TF32",' \
    "$1" "$2"
  printf ' "status": "%s", "ms_median": %s, "pct_cublas_tf32": 80.0, "warm_us_median": %s,' \
    "${5:-ok}" "$3" "$4"
  printf ' "warm_pct_cublas_tf32": 90.0}'
}
json() { echo "{\"results\": [$1]}" >"$work/$2"; }
csv() { cat "$work/$1"; }
json "$(result tf32_fast 128 0.0100 8.0), $(result tf32_fast 256 0.0200 9.0)" a1.json
json "$(result tf32_fast 128 0.0090 7.5)" a2.json
json "$(result tf32_fast 128 0.0080 6.0), $(result tf32_fast 256 0.0300 9.9 fail)" b.json
json "$(result tf32_fast 128 0.0070 5.0), $(result tf32_fast 256 0.0100 4.5)" c.json

out=$(python3 "$ab" --a "$work/a1.json" "$work/a2.json" --b "$work/b.json" --csv "$work/ab.csv" 2>&1) ||
  fail "two sides: $out"
csv ab.csv | grep -q "^tf32_fast,128x64x32,NT,0.0090,0.0080,0.889,80.0,80.0$" ||
  fail "two sides: best median and ratio: $(csv ab.csv)"
csv ab.csv | grep -q "256x64x32" && fail "two sides: a case that failed in b compared"
out=$(python3 "$ab" --warm --a "$work/a1.json" --b "$work/c.json" --csv "$work/warm.csv" 2>&1) ||
  fail "warm: $out"
csv warm.csv | grep -q "^tf32_fast,256x64x32,NT,0.00900,0.00450,0.500,90.0,90.0$" ||
  fail "warm: $(csv warm.csv)"

out=$(python3 "$ab" --warm --chain "c0=$work/a1.json" "c1=$work/b.json" "c2=$work/c.json" \
  --csv "$work/chain.csv" 2>&1) || fail "chain: $out"
csv chain.csv | head -1 | grep -q "^variant,shape,layout,ms_c0,ms_c1,ms_c2,c1_over_c0,c2_over_c1$" ||
  fail "chain: header: $(csv chain.csv | head -1)"
csv chain.csv | grep -q "^tf32_fast,128x64x32,NT,0.00800,0.00600,0.00500,0.750,0.833$" ||
  fail "chain: every side over the one before: $(csv chain.csv)"
csv chain.csv | grep -q "^tf32_fast,256x64x32,NT,0.00900,,0.00450,,$" ||
  fail "chain: a side's failed case left empty: $(csv chain.csv)"

for bad in "--chain c0=$work/a1.json" "--chain c0=$work/a1.json c0=$work/b.json" \
  "--chain $work/a1.json $work/b.json" "--a $work/a1.json" \
  "--chain c0=$work/a1.json c1=$work/b.json --a $work/a1.json"; do
  # shellcheck disable=SC2086  # each case is its words
  python3 "$ab" $bad >/dev/null 2>&1 && fail "'$bad' accepted"
done
out=$(python3 "$ab" --chain "c0=$work/a1.json" "c0=$work/b.json" 2>&1)
grep -q "names 'c0' twice" <<<"$out" || fail "a label twice not named: $out"
finish bench_ab_test
