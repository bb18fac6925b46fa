#!/usr/bin/env bash
# The time from a fresh clone to the first epoch, as the README's first-run table reports it:
#
#   scripts/check/first_run_time.sh [--csv FILE] [COMMIT]      (default HEAD)
#
# Clones this repository at COMMIT into a temporary folder, links the MNIST files of data/mnist
# (so that no download is timed), and there, with ccache off (a real first build):
#   1. `scripts/train.sh --help`: set-up, configure and build, timed (wall, and the user and system
#      CPU seconds of everything it ran), each line of its output time-stamped to find the longest
#      stretch with nothing printed;
#   2. `scripts/train.sh --epochs 1`, the build then up to date, timed the same way.
# Prints the figures, the load average before and after (other work on the machine slows the
# build) and the size of train_mlp. With --csv, also writes them as one row of FILE
# (docs/results/first_run.csv is the copy the README's first-run table is generated from, by
# scripts/docs/readme_tables.py):
#   date, commit, cores, gpu (the first GPU's name, or "none"), wall_s (fresh clone to the end of
#   epoch 1: both steps), user_s, system_s (both steps), epoch_s (the epoch itself, from
#   train_mlp --history), setup_build_s (wall_s - epoch_s: installing, configuring, building,
#   loading), train_mlp_bytes, build_wall_s, build_cpu_s (step 1 alone: wall, and user + system),
#   longest_silence_s (the longest stretch of step 1 without a line of output), gpu_kernels (the
#   build's GEMM_MLP_GPU_KERNELS: OFF where train.sh found no GPU)
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

# 1. The build: train.sh --help installs, fetches, configures, builds, then prints train_mlp's help.
start=$(date +%s.%N)
timed "$dir/build.log" "$dir/build.time" scripts/train.sh --help
read -r build_wall build_user build_sys <"$dir/build.time"
build_cpu=$(awk -v u="$build_user" -v s="$build_sys" 'BEGIN { printf "%.1f", u + s }')
silence=$(awk -v t="$start" '{ if ($1 - t > m) m = $1 - t; t = $1 } END { printf "%.0f", m }' \
  "$dir/build.log")

# 2. The first epoch, the build now up to date.
timed "$dir/train.log" "$dir/train.time" scripts/train.sh --epochs 1 --history "$dir/history.csv"
read -r train_wall train_user train_sys <"$dir/train.time"
sum() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a + b }'; }
wall=$(sum "$build_wall" "$train_wall")
user=$(sum "$build_user" "$train_user")
system=$(sum "$build_sys" "$train_sys")
epoch=$(python3 -c 'import csv, sys; print(list(csv.DictReader(open(sys.argv[1])))[-1]["epoch_s"])' \
  "$dir/history.csv")
bytes=$(stat -c %s build/apps/train_mlp/train_mlp)
kernels=$(sed -n 's/^GEMM_MLP_GPU_KERNELS:BOOL=//p' build/CMakeCache.txt)

echo "build (train.sh --help; GEMM_MLP_GPU_KERNELS=$kernels): $build_wall s wall, $build_cpu s CPU" \
  "(user + system); the longest stretch without output: $silence s"
echo "fresh clone to the end of epoch 1: $wall s wall, $user s user, $system s system"
grep -E "epoch +1/" "$dir/train.log" | tail -1 | cut -d' ' -f2-
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "train_mlp: $bytes bytes"
if [ -n "$csv" ]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
  {
    echo "date,commit,cores,gpu,wall_s,user_s,system_s,epoch_s,setup_build_s,train_mlp_bytes,build_wall_s,build_cpu_s,longest_silence_s,gpu_kernels"
    echo "$(date -u +%Y-%m-%d),$short,$(nproc),${gpu:-none},$wall,$user,$system,$epoch,$(python3 -c "print(round($wall - $epoch, 1))"),$bytes,$build_wall,$build_cpu,$silence,$kernels"
  } >"$csv"
  echo "first_run_time.sh: wrote $csv"
fi
