#!/usr/bin/env bash
# The time from a fresh clone to the first epoch, as the README states it:
#
#   scripts/check/first_run_time.sh [COMMIT]      (default HEAD)
#
# Clones this repository at COMMIT into a temporary folder, links the MNIST files of data/mnist
# (so that no download is timed), and there, with ccache off (a real first build):
#   1. `scripts/train.sh --help`: set-up, configure and build, timed (wall, and user + system CPU
#      seconds of everything it ran);
#   2. `scripts/train.sh --epochs 1`: the build is then up to date; the seconds to the end of the
#      first epoch, and the epoch's own seconds as train_mlp prints them.
# Prints them, the load average before and after (other work on the machine slows the build), and
# the size of train_mlp; and appends a row to docs/results/first_run.csv (FIRST_RUN_CSV overrides
# the file):
#   date,commit,cores,gpu_kernels,build_wall_s,build_cpu_s,longest_silence_s,to_first_epoch_s,epoch_s,train_mlp_bytes,load_before,load_after
# to_first_epoch_s is the build's wall seconds plus the second run's seconds to its first epoch
# line (what a user waits from `scripts/train.sh` to the first epoch).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
commit=${1:-HEAD}
csv=${FIRST_RUN_CSV:-$repo/docs/results/first_run.csv}
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

# 1. The build (train.sh --help builds, then prints train_mlp's help).
stamp() { while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done; }
build_start=$(date +%s.%N)
/usr/bin/time -o "$dir/build.time" -f "%e %U %S" env CCACHE_DISABLE=1 scripts/train.sh --help \
  2>&1 | stamp >"$dir/build.log" || {
  tail -20 "$dir/build.log"
  exit 1
}
read -r build_wall build_user build_sys <"$dir/build.time"
build_cpu=$(awk -v u="$build_user" -v s="$build_sys" 'BEGIN { printf "%.1f", u + s }')
# The longest stretch without a line of output during the build.
silence=$(awk -v t="$build_start" '{ if ($1 - t > m) m = $1 - t; t = $1 } END { printf "%.0f", m }' \
  "$dir/build.log")

# 2. The first epoch, the build now up to date: seconds from the start to the epoch's line.
start=$(date +%s.%N)
env CCACHE_DISABLE=1 scripts/train.sh --epochs 1 2>&1 | stamp >"$dir/train.log"
epoch_line=$(grep -E "epoch +1/" "$dir/train.log" | tail -1) || {
  tail -20 "$dir/train.log"
  exit 1
}
epoch_at=$(awk '{print $1}' <<<"$epoch_line")
to_epoch=$(awk -v b="$build_wall" -v s="$start" -v e="$epoch_at" 'BEGIN { printf "%.1f", b + e - s }')
epoch_s=$(sed -E 's/.*epoch ([0-9.]+) s$/\1/' <<<"$epoch_line")
bytes=$(stat -c %s build/apps/train_mlp/train_mlp)
kernels=$(sed -n 's/^GEMM_MLP_GPU_KERNELS:BOOL=//p' build/CMakeCache.txt)
load_after=$(cut -d' ' -f1 /proc/loadavg)

echo "build (train.sh --help, GEMM_MLP_GPU_KERNELS=$kernels): $build_wall s wall, $build_cpu s CPU (user + system); longest silence $silence s"
echo "fresh clone to the end of epoch 1: $to_epoch s; the epoch itself: $epoch_s s"
echo "${epoch_line#* }"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "train_mlp: $bytes bytes"

[ -s "$csv" ] || echo "date,commit,cores,gpu_kernels,build_wall_s,build_cpu_s,longest_silence_s,to_first_epoch_s,epoch_s,train_mlp_bytes,load_before,load_after" >"$csv"
echo "$(date -u +%Y-%m-%dT%H:%MZ),$short,$(nproc),$kernels,$build_wall,$build_cpu,$silence,$to_epoch,$epoch_s,$bytes,$load_before,$load_after" >>"$csv"
echo "appended to $csv"
