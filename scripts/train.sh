#!/usr/bin/env bash
# The one command to train on a fresh Debian machine:
#
#   scripts/train.sh [train_mlp flags...]      e.g. scripts/train.sh --gemm tiled --epochs 5
#
# 1. installs the Debian packages the build needs, if any is missing
#    (scripts/setup/install_deps.sh);
# 2. fetches MNIST into data/mnist (scripts/setup/fetch_mnist.sh; does nothing when it is there);
# 3. configures and builds build/ (Release) when train_mlp is missing or out of date, for this
#    machine's GPU only, or compute capability 8.0 without one (cmake/cuda_defaults.cmake);
# 4. runs build/apps/train_mlp/train_mlp with the flags given.
set -euo pipefail

# Runs from the folder it was started in, so that relative paths in the flags (--save,
# --history, --results, --resume, --eval, --data-dir) mean what the user typed.
repo=$(cd "$(dirname "$0")/.." && pwd)

"$repo/scripts/setup/install_deps.sh"
# The dataset the flags ask for (--dataset fashion: Fashion-MNIST), or else the one a --resume or
# --eval checkpoint names in its metadata (as train_mlp takes it), fetched where train_mlp looks.
dataset=
checkpoint=
prev=
for arg in "$@"; do
  [[ "$prev" == --dataset ]] && dataset=$arg
  [[ "$arg" == --dataset=* ]] && dataset=${arg#--dataset=}
  [[ "$prev" == --resume || "$prev" == --eval ]] && checkpoint=$arg
  [[ "$arg" == --resume=* || "$arg" == --eval=* ]] && checkpoint=${arg#*=}
  prev=$arg
done
if [[ -z "$dataset" && -f "$checkpoint" ]]; then
  # The header's JSON, as train_mlp writes it: "dataset":"NAME" (no metadata: mnist).
  dataset=$(head -c 1048576 "$checkpoint" | grep -ao '"dataset":"[a-z-]*"' | head -1 | cut -d'"' -f4 || true)
fi
dataset=${dataset:-mnist}
if [[ "$dataset" == fashion ]]; then
  data_folder="$repo/data/fashion-mnist"
  "$repo/scripts/setup/fetch_mnist.sh" fashion "$data_folder"
else
  data_folder="$repo/data/mnist"
  "$repo/scripts/setup/fetch_mnist.sh" "$data_folder"
fi

# Configure once; the build itself is incremental, so running it each time only rebuilds what
# changed (and does nothing when train_mlp is up to date).
if [[ ! -f "$repo/build/CMakeCache.txt" ]]; then
  cmake -S "$repo" -B "$repo/build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$repo/build" --target train_mlp -j"$(nproc)"

# The repository's copy unless the user names another folder.
data_dir=(--data-dir "$data_folder")
for arg in "$@"; do
  case "$arg" in --data-dir | --data-dir=*) data_dir=() ;; esac
done
exec "$repo/build/apps/train_mlp/train_mlp" "${data_dir[@]}" "$@"
