#!/usr/bin/env bash
# The time from a fresh clone to the first epoch, as docs/NOTES.md ("Build and first run")
# reports it:
#
#   scripts/check/first_run_time.sh [COMMIT]      (default HEAD)
#
# Clones this repository at COMMIT into a temporary folder, links the MNIST files of data/mnist
# (so that no download is timed), and runs `scripts/train.sh --epochs 1` there with ccache off.
# Prints the wall and CPU seconds, the load average before and after (other work on the machine
# slows the build), and the sizes of the programs built.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
commit=${1:-HEAD}
[ -d "$repo/data/mnist" ] || { echo "first_run_time.sh: run scripts/setup/fetch_mnist.sh first" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
git clone -q "$repo" "$dir/clone"
git -C "$dir/clone" checkout -q "$commit"
ln -s "$repo/data/mnist" "$dir/clone/data/mnist"
echo "commit $(git -C "$dir/clone" rev-parse --short HEAD), $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
cd "$dir/clone"
/usr/bin/time -f "fresh clone to the end of epoch 1: %e s wall, %U s user, %S s system" \
  env CCACHE_DISABLE=1 scripts/train.sh --epochs 1 >"$dir/train.log" 2>&1 || {
  tail -20 "$dir/train.log"
  exit 1
}
tail -1 "$dir/train.log"
grep -E "epoch +1/" "$dir/train.log" | tail -1
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
ls -l build/apps/train_mlp/train_mlp | awk '{print "train_mlp: " $5 " bytes"}'
