#!/usr/bin/env bash
# The time from a fresh clone to the first epoch, as docs/NOTES.md ("Build and first run")
# reports it:
#
#   scripts/check/first_run_time.sh [--csv FILE] [COMMIT]      (default HEAD)
#
# Clones this repository at COMMIT into a temporary folder, links the MNIST files of data/mnist
# (so that no download is timed), and runs `scripts/train.sh --epochs 1` there with ccache off.
# Prints the wall and CPU seconds, the load average before and after (other work on the machine
# slows the build), and the sizes of the programs built. With --csv, also writes them as one row
# of FILE (docs/results/first_run.csv is the copy the README's first-run table is generated
# from, by scripts/docs/readme_tables.py):
#   date, commit, cores, gpu (the first GPU's name, or "none"), wall_s (fresh clone to the end of
#   epoch 1), user_s, system_s, epoch_s (the epoch itself, from train_mlp --history),
#   setup_build_s (wall_s - epoch_s: installing, configuring, building, loading), train_mlp_bytes
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
echo "commit $(git -C "$dir/clone" rev-parse --short HEAD), $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
cd "$dir/clone"
/usr/bin/time -o "$dir/time" -f "%e %U %S" \
  env CCACHE_DISABLE=1 scripts/train.sh --epochs 1 --history "$dir/history.csv" >"$dir/train.log" 2>&1 || {
  tail -20 "$dir/train.log"
  exit 1
}
read -r wall user system <"$dir/time"
echo "fresh clone to the end of epoch 1: $wall s wall, $user s user, $system s system"
tail -1 "$dir/train.log"
grep -E "epoch +1/" "$dir/train.log" | tail -1
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
bytes=$(stat -c %s build/apps/train_mlp/train_mlp)
echo "train_mlp: $bytes bytes"
if [ -n "$csv" ]; then
  epoch=$(python3 -c 'import csv, sys; print(list(csv.DictReader(open(sys.argv[1])))[-1]["epoch_s"])' \
    "$dir/history.csv")
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
  {
    echo "date,commit,cores,gpu,wall_s,user_s,system_s,epoch_s,setup_build_s,train_mlp_bytes"
    echo "$(date -u +%Y-%m-%d),$(git rev-parse --short HEAD),$(nproc),${gpu:-none},$wall,$user,$system,$epoch,$(python3 -c "print(round($wall - $epoch, 1))"),$bytes"
  } >"$csv"
  echo "first_run_time.sh: wrote $csv"
fi
