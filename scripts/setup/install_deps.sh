#!/usr/bin/env bash
# Installs the Debian packages gemm-mlp builds with, skipping apt when all are present.
# The CUDA toolkit (nvcc, cudart, cuBLAS, cuRAND) is needed to build even on a machine without a
# GPU; NVIDIA's installer puts it in /usr/local/cuda, Debian's package is nvidia-cuda-toolkit.
# python3-matplotlib is for scripts/docs/plot_training.py (which, run by a python3 without
# matplotlib, such as pyenv's, runs itself under /usr/bin/python3, the one this package serves).
#
#   scripts/setup/install_deps.sh          exit status 0 when everything is there, 1 when apt
#                                          failed, 2 for an argument (it takes none but --help)
set -euo pipefail

for arg in "$@"; do
  case "$arg" in
    -h | --help)
      echo "usage: scripts/setup/install_deps.sh   (installs the Debian packages gemm-mlp needs)"
      exit 0
      ;;
    *)
      echo "install_deps.sh: error: unknown argument '$arg' (it takes none; --help)" >&2
      exit 2
      ;;
  esac
done

packages=(cmake g++ make pkg-config libopenblas-dev libstb-dev libcli11-dev libgtest-dev zlib1g-dev
          nlohmann-json3-dev python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

have_nvcc() { command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || [ -n "${CUDACXX:-}" ]; }
have_nvcc || missing+=(nvidia-cuda-toolkit)

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all packages present"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
if ! $sudo apt-get install -y -qq "${missing[@]}"; then
  echo "install_deps: apt-get could not install: ${missing[*]}" >&2
  have_nvcc || echo "install_deps: no CUDA toolkit found (nvcc); install NVIDIA's CUDA toolkit" \
    "or enable Debian's non-free component for nvidia-cuda-toolkit" >&2
  exit 1
fi
