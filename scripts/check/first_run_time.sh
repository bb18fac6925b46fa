#!/usr/bin/env bash
# The time from a fresh clone to the first epoch, as the README's first-run table reports it:
#
#   scripts/check/first_run_time.sh [--csv FILE] [COMMIT]      (default HEAD)
#
# Clones this repository at COMMIT into a temporary folder, links the MNIST files of data/mnist
# (so that no download is timed), and there, with ccache off (a real first build), runs
# `scripts/train.sh --epochs 1` as a first-time user does: set-up, configure, build of train_mlp,
# the epoch, then the build of predict and gemm_bench that train.sh makes after training. Timed
# (wall, and the user and system CPU seconds of everything it ran), each line of its output
# time-stamped: the build ends at train_mlp's first line, the trained epoch at its epoch line.
# Prints the figures, the load average before and after (other work on the machine slows the
# build) and the size of train_mlp. With --csv, also appends them as a row of FILE (the header
# first when FILE is new; docs/results/first_run.csv is the copy whose last row the README's
# first-run table is generated from, by scripts/docs/readme_tables.py):
#   date, commit, cores, gpu (the first GPU's name, or "none"), wall_s (fresh clone to the end of
#   epoch 1), user_s, system_s (the whole of train.sh, the later build of predict and gemm_bench
#   included), epoch_s (the epoch itself, from train_mlp --history), setup_build_s (wall_s -
#   epoch_s: installing, configuring, building, loading), train_mlp_bytes, build_wall_s (to
#   train_mlp's first line), longest_silence_s (the longest stretch of the build without a line of
#   output), gpu_kernels (the build's GEMM_MLP_GPU_KERNELS: OFF where train.sh found no GPU),
#   load_before (the 1-minute load average before the clone)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
csv=
if [ "${1:-}" = --csv ]; then
  [ $# -ge 2 ] || { echo "usage: scripts/check/first_run_time.sh [--csv FILE] [COMMIT]" >&2; exit 2; }
  csv=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
  shift 2
fi
commit=${1:-HEAD}
[ -d "$repo/data/mnist" ] || { echo "first_run_time.sh: run scripts/setup/fetch_mnist.sh first" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
git clone -q "$repo" "$dir/clone"
git -C "$dir/clone" checkout -q "$commit"
ln -s "$repo/data/mnist" "$dir/clone/data/mnist"
short=$(git -C "$dir/clone" rev-parse --short HEAD)
load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "commit $short, $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
cd "$dir/clone"

# Each line of stdin, prefixed with the time it came.
stamp() { while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done; }
# Runs the command under /usr/bin/time (ccache off), its output time-stamped into LOG; TIME gets
# "wall user system".
timed() {  # LOG TIME COMMAND...
  local log=$1 time=$2
  shift 2
  /usr/bin/time -o "$time" -f "%e %U %S" env CCACHE_DISABLE=1 "$@" 2>&1 | stamp >"$log" || {
    cut -d' ' -f2- "$log" | tail -20
    exit 1
  }
}

# One run, as a first-time user makes it: the build, the epoch, then predict's and gemm_bench's
# build.
start=$(date +%s.%N)
timed "$dir/train.log" "$dir/train.time" scripts/train.sh --epochs 1 --history "$dir/history.csv"
read -r whole_wall user system <"$dir/train.time"
# The first line train_mlp prints ends the build; its epoch line, the trained epoch.
first_line=$(grep -m1 -E '^[0-9.]+ (No GPU found|\[[a-z0-9_]+\] [0-9]+(-[0-9]+)+ on )' \
  "$dir/train.log" | cut -d' ' -f1)
epoch_line=$(grep -m1 -E '^[0-9.]+ \[[a-z0-9_]+\] epoch +1/1 ' "$dir/train.log" | cut -d' ' -f1)
[ -n "$first_line" ] && [ -n "$epoch_line" ] || {
  echo "first_run_time.sh: train_mlp's first or epoch line not found in the output:" >&2
  cut -d' ' -f2- "$dir/train.log" | tail -20 >&2
  exit 1
}
since() { awk -v a="$1" -v b="$start" 'BEGIN { printf "%.2f", a - b }'; }
wall=$(since "$epoch_line")
build_wall=$(since "$first_line")
silence=$(awk -v t="$start" -v end="$first_line" '$1 <= end { if ($1 - t > m) m = $1 - t; t = $1 }
  END { printf "%.0f", m }' "$dir/train.log")
epoch=$(python3 -c 'import csv, sys; print(list(csv.DictReader(open(sys.argv[1])))[-1]["epoch_s"])' \
  "$dir/history.csv")
bytes=$(stat -c %s build/apps/train_mlp/train_mlp)
kernels=$(sed -n 's/^GEMM_MLP_GPU_KERNELS:BOOL=//p' build/CMakeCache.txt)

echo "build of train_mlp (GEMM_MLP_GPU_KERNELS=$kernels): $build_wall s wall; the longest" \
  "stretch without output: $silence s"
echo "fresh clone to the end of epoch 1: $wall s wall; train.sh in all: $whole_wall s wall," \
  "$user s user, $system s system"
grep -E "epoch +1/" "$dir/train.log" | tail -1 | cut -d' ' -f2-
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "train_mlp: $bytes bytes"
if [ -n "$csv" ]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
  header="date,commit,cores,gpu,wall_s,user_s,system_s,epoch_s,setup_build_s,train_mlp_bytes,build_wall_s,longest_silence_s,gpu_kernels,load_before"
  [ -s "$csv" ] || echo "$header" >"$csv"
  echo "$(date -u +%Y-%m-%d),$short,$(nproc),${gpu:-none},$wall,$user,$system,$epoch,$(python3 -c "print(round($wall - $epoch, 1))"),$bytes,$build_wall,$silence,$kernels,$load_before" >>"$csv"
  echo "first_run_time.sh: appended a row to $csv"
fi
