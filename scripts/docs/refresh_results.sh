#!/usr/bin/env bash
# Copies a GPU run's results into docs/results/ and regenerates every table and figure of the
# documents from them (docs/results/README.md):
#
#   scripts/docs/refresh_results.sh [OUT]
#
# OUT is what `scripts/check/gpu_check.sh OUT` wrote; without it, only regenerates from what
# docs/results/ already holds. Copies each result file OUT has (a step that did not run leaves
# the committed file as it is), then runs bench_to_docs.py (docs/RESULTS.md, "GEMM throughput"),
# readme_tables.py (README.md, docs/RESULTS.md, docs/KERNELS.md), plot_bench.py
# (docs/gemm_squares.png), plot_training.py compare (docs/train_compare.png) and plot_headline.py
# (docs/headline.png). The plots need matplotlib (Debian's python3-matplotlib): python3 if it has
# it, else /usr/bin/python3. The bench step's four runs (gemm_bench.json and the three
# *_shapes.json) go through scripts/docs/update_auto_table.py, which files them by GPU (an H100's
# as h100_*.json, leaving the documents' H200 runs alone) and writes kernels/auto_table.inc again
# with a built gemm_bench (GEMM_BENCH, default build/apps/gemm_bench/gemm_bench); rebuild after.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
results=$repo/docs/results
if [ $# -gt 1 ]; then
  echo "usage: scripts/docs/refresh_results.sh [OUT]" >&2
  exit 2
fi
if [ $# -eq 1 ]; then
  [ -d "$1" ] || { echo "refresh_results.sh: $1 is not a folder" >&2; exit 2; }
  copied=()
  if [ -f "$1/gemm_bench.json" ]; then
    python3 "$repo/scripts/docs/update_auto_table.py" "$1" \
      --bench "${GEMM_BENCH:-$repo/build/apps/gemm_bench/gemm_bench}"
    # The CSV beside the JSON, where the run was filed under the plain names (the H200's).
    if cmp -s "$1/gemm_bench.json" "$results/gemm_bench.json" && [ -f "$1/gemm_bench.csv" ]; then
      cp "$1/gemm_bench.csv" "$results/gemm_bench.csv"
      copied+=(gemm_bench.csv)
    fi
  fi
  for f in summary.txt train_compare.csv train_compare_nograph.csv vs_pytorch.csv vs_pytorch.json \
      roofline.csv critical_path.csv odd_widths.csv sanitizers.csv racecheck_named_barrier.txt \
      small_m.csv small_m.json phases.csv; do
    if [ -f "$1/$f" ]; then
      cp "$1/$f" "$results/$f"
      copied+=("$f")
    fi
  done
  echo "refresh_results.sh: copied ${copied[*]:-nothing}"
fi

plot_python=
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import matplotlib' 2>/dev/null; then plot_python=$p; break; fi
done
[ -n "$plot_python" ] || {
  echo "refresh_results.sh: no python3 with matplotlib (apt-get install python3-matplotlib)" >&2
  exit 1
}

python3 "$repo/scripts/docs/bench_to_docs.py" "$results/gemm_bench.json" \
  --source "scripts/check/gpu_check.sh"
python3 "$repo/scripts/docs/readme_tables.py"
"$plot_python" "$repo/scripts/docs/plot_bench.py" "$results/gemm_bench.csv" -o "$repo/docs/gemm_squares.png"
"$plot_python" "$repo/scripts/docs/plot_training.py" compare "$results/train_compare.csv" \
  -o "$repo/docs/train_compare.png"
"$plot_python" "$repo/scripts/docs/plot_headline.py" "$results/vs_pytorch.csv" \
  -o "$repo/docs/headline.png"
echo "refresh_results.sh: done; review git diff docs/ README.md, then commit"
