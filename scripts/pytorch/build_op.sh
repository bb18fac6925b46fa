#!/usr/bin/env bash
# Builds the torch op library and puts it in the Python package, for a machine with a CUDA build
# of PyTorch and the CUDA toolkit:
#
#   scripts/pytorch/build_op.sh [build-dir]        (default build-torch)
#   PYTHONPATH=$PWD/pytorch python3 your_script.py   # then: import gemm_mlp_torch
#
# 1. installs the Debian packages the build needs, if any is missing
#    (scripts/setup/install_deps.sh);
# 2. checks that $PYTHON (default python3) imports a CUDA build of torch;
# 3. configures the project with -DGEMM_MLP_TORCH=ON (a torch that does not suit this nvcc stops
#    the configure, saying why) for this machine's GPU, and builds the target gemm_mlp_torch_ops
#    alone;
# 4. copies libgemm_mlp_torch_ops.so into pytorch/gemm_mlp_torch/, where the package loads it,
#    and imports the package once.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$repo/build-torch}
python=${PYTHON:-python3}
if [[ $# -gt 1 || ${1:-} == -h || ${1:-} == --help ]]; then
  echo "usage: scripts/pytorch/build_op.sh [build-dir]   (PYTHON=python-with-torch to choose)"
  [[ ${1:-} == -h || ${1:-} == --help ]] && exit 0
  exit 2
fi

"$repo/scripts/setup/install_deps.sh"
if ! cuda=$("$python" -c 'import torch; print(torch.version.cuda or "")'); then
  echo "build_op.sh: $python cannot import torch; install a CUDA build of PyTorch" \
    "(https://pytorch.org/get-started/locally/) or set PYTHON to a Python that has one" >&2
  exit 1
fi
if [[ -z $cuda ]]; then
  echo "build_op.sh: the torch of $python is a CPU-only build; the op needs a CUDA build" >&2
  exit 1
fi

cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGEMM_MLP_GPU_KERNELS=ON \
  -DGEMM_MLP_TORCH=ON -DGEMM_MLP_PYTHON="$python"
cmake --build "$build" --target gemm_mlp_torch_ops -j"$(nproc)"
cp "$build/pytorch/libgemm_mlp_torch_ops.so" "$repo/pytorch/gemm_mlp_torch/"
PYTHONPATH="$repo/pytorch${PYTHONPATH:+:$PYTHONPATH}" GEMM_MLP_TORCH_LIBRARY='' \
  "$python" -c 'import gemm_mlp_torch'
echo "build_op.sh: built; use it with PYTHONPATH=$repo/pytorch (import gemm_mlp_torch)"
