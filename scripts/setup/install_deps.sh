#!/usr/bin/env bash
# Installs the Debian packages gemm-mlp builds with, skipping apt when all are present.
# The CUDA toolkit (nvcc, cudart, cuBLAS, cuRAND) is needed to build even on a machine without a
# GPU; NVIDIA's installer puts it in /usr/local/cuda, Debian's package is nvidia-cuda-toolkit.
set -euo pipefail

packages=(cmake g++ make pkg-config libopenblas-dev libstb-dev libcli11-dev libgtest-dev zlib1g-dev
          nlohmann-json3-dev)
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
