#!/usr/bin/env bash
# The one command to train on a fresh Debian machine:
#
#   scripts/train.sh [train_mlp flags...]      e.g. scripts/train.sh --gemm tiled --epochs 5
#   scripts/train.sh --help                    this text, and train_mlp's flags once it is built
#
# 1. installs the Debian packages the build needs, if any is missing
#    (scripts/setup/install_deps.sh);
# 2. fetches MNIST into data/mnist (scripts/setup/fetch_mnist.sh; does nothing when it is there);
# 3. configures build/ (Release) and builds train_mlp there when it is missing or out of date: for
#    this machine's GPU only (cmake/cuda_defaults.cmake); where nvidia-smi finds no GPU, the first
#    configure leaves out the GEMM kernels' device code and the tests
#    (-DGEMM_MLP_GPU_KERNELS=OFF: the CPU path, about 2 minutes on 2 cores instead of about 7).
#    build/ is this script's: scripts/test.sh builds everything in build-test/;
# 4. runs build/apps/train_mlp/train_mlp with the flags given;
# 5. after a run that ends well, builds predict and gemm_bench in build/ (what the README's next
#    commands use: predict, and `cmake --install build`), after training rather than before it,
#    so that training starts as soon as train_mlp is built.
set -euo pipefail

# Runs from the folder it was started in, so that relative paths in the flags (--save,
# --history, --results, --resume, --eval, --data-dir) mean what the user typed.
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$repo/build
train_mlp=$build/apps/train_mlp/train_mlp

# --help before anything is installed, fetched or built.
for arg in "$@"; do
  [[ "$arg" == --help || "$arg" == -h ]] || continue
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  echo
  if [[ -x "$train_mlp" ]]; then
    echo "train_mlp's flags ($train_mlp --help):"
    "$train_mlp" --help
  else
    echo "train_mlp is not built yet: its flags are in docs/USAGE.md, and in" \
      "build/apps/train_mlp/train_mlp --help once a first scripts/train.sh has built it"
  fi
  exit 0
done

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
# changed (and does nothing when the programs are up to date).
gpu=no
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  gpu=yes
fi
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  if [[ $gpu == yes ]]; then
    kernels=ON
    echo "train.sh: first build, for this machine's GPU: several minutes (progress below)"
  else
    kernels=OFF
    echo "train.sh: no GPU found (nvidia-smi): building the CPU path only, without the GPU" \
      "kernels; about 2 minutes on 2 cores (progress below). scripts/test.sh builds everything," \
      "in build-test/."
  fi
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGEMM_MLP_GPU_KERNELS=$kernels
elif [[ $gpu == yes ]] && grep -q '^GEMM_MLP_GPU_KERNELS:BOOL=OFF' "$build/CMakeCache.txt"; then
  echo "train.sh: a GPU is here, but build/ was configured without the GPU kernels: adding them" \
    "(several minutes)"
  cmake -S "$repo" -B "$build" -DGEMM_MLP_GPU_KERNELS=ON
fi
cmake --build "$build" --target train_mlp -j"$(nproc)"

# The repository's copy unless the user names another folder.
data_dir=(--data-dir "$data_folder")
for arg in "$@"; do
  case "$arg" in --data-dir | --data-dir=*) data_dir=() ;; esac
done
# train_mlp in the foreground: Ctrl-C reaches it (it saves and exits 130), and ends this script
# with its status; predict and gemm_bench are built after a run that ended well.
status=0
"$train_mlp" "${data_dir[@]}" "$@" || status=$?
if [[ $status -eq 0 ]]; then
  if [[ ! -x "$build/apps/predict/predict" || ! -x "$build/apps/gemm_bench/gemm_bench" ]]; then
    echo "train.sh: building predict and gemm_bench for the README's next commands" \
      "(scripts/train.sh builds them after training, so that it starts sooner)"
  fi
  cmake --build "$build" --target predict gemm_bench -j"$(nproc)"
fi
exit "$status"
