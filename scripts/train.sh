#!/usr/bin/env bash
# The one command to train on a fresh Debian machine:
#
#   scripts/train.sh [train_mlp flags...]      e.g. scripts/train.sh --gemm tiled --epochs 5
#
# 1. installs the Debian packages the build needs, if any is missing (with sudo unless root);
# 2. fetches MNIST into data/mnist (scripts/fetch_mnist.sh; does nothing when it is there);
# 3. configures and builds build/ (Release) when train_mlp is missing or out of date;
# 4. runs build/apps/train_mlp/train_mlp with the flags given.
# The CUDA toolkit (nvcc) must be installed already (NVIDIA's, in /usr/local/cuda, is found).
set -euo pipefail

cd "$(dirname "$0")/.."

die() {
  echo "train.sh: error: $*" >&2
  exit 1
}

packages=(libopenblas-dev libstb-dev libcli11-dev libgtest-dev zlib1g-dev cmake g++)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get to install them"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || die "missing packages (${missing[*]}); run as root or install sudo"
    sudo=(sudo)
  fi
  echo "installing ${missing[*]}"
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

if [[ ! -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null && [[ -z "${CUDACXX:-}" ]]; then
  die "nvcc not found: install the CUDA toolkit (it is needed to build, not to run)"
fi

scripts/fetch_mnist.sh data/mnist

# Configure once; the build itself is incremental, so running it each time only rebuilds what
# changed (and does nothing when train_mlp is up to date).
if [[ ! -f build/CMakeCache.txt ]]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build --target train_mlp -j"$(nproc)"

exec build/apps/train_mlp/train_mlp "$@"
