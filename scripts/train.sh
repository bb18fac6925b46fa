#!/usr/bin/env bash
# The one command to train on a fresh Debian machine:
#
#   scripts/train.sh [train_mlp flags...]      e.g. scripts/train.sh --gemm tiled --epochs 5
#
# 1. installs the Debian packages the build needs, if any is missing (scripts/install_deps.sh);
# 2. fetches MNIST into data/mnist (scripts/fetch_mnist.sh; does nothing when it is there);
# 3. configures and builds build/ (Release) when train_mlp is missing or out of date;
# 4. runs build/apps/train_mlp/train_mlp with the flags given.
set -euo pipefail

cd "$(dirname "$0")/.."

scripts/install_deps.sh
scripts/fetch_mnist.sh data/mnist

# Configure once; the build itself is incremental, so running it each time only rebuilds what
# changed (and does nothing when train_mlp is up to date).
if [[ ! -f build/CMakeCache.txt ]]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build --target train_mlp -j"$(nproc)"

exec build/apps/train_mlp/train_mlp "$@"
