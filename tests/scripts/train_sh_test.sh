#!/usr/bin/env bash
# scripts/train.sh's build, with cmake, nvidia-smi, the set-up scripts and train_mlp stubbed: where
# nvidia-smi finds no GPU, the first configure leaves out the GPU kernels
# (-DGEMM_MLP_GPU_KERNELS=OFF) and says what to expect; with a GPU it keeps them; a build/
# configured without them is turned on where a GPU is found, and left as it is otherwise; every
# run builds train_mlp, runs it, and after a run that ended well builds predict and gemm_bench
# (what the README's next commands use), not before training. --help is answered before anything
# is installed, fetched or built; nothing but build/ is configured.
#
#   tests/scripts/train_sh_test.sh <repository root>
set -uo pipefail
root=$1
source "$(dirname "$0")/test_lib.sh"

repo=$work/repo
mkdir -p "$repo/scripts/setup" "$work/bin"
cp "$root/scripts/train.sh" "$repo/scripts/"
printf '#!/bin/sh\necho "install_deps" >>"%s/cmake.log"\n' "$work" >"$repo/scripts/setup/install_deps.sh"
printf '#!/bin/sh\necho "fetch_mnist" >>"%s/cmake.log"\n' "$work" >"$repo/scripts/setup/fetch_mnist.sh"
# cmake: records its arguments; a configure writes the cache entry it was given.
cat >"$work/bin/cmake" <<STUB
#!/usr/bin/env bash
echo "cmake \$*" >>"$work/cmake.log"
if [[ "\$1" == -S ]]; then
  mkdir -p "$repo/build/apps/train_mlp"
  for a in "\$@"; do
    [[ "\$a" == -DGEMM_MLP_GPU_KERNELS=* ]] && echo "GEMM_MLP_GPU_KERNELS:BOOL=\${a#*=}" >"$repo/build/CMakeCache.txt"
  done
  touch "$repo/build/CMakeCache.txt"
  printf '#!/bin/sh\necho "train_mlp \$*" | tee -a "$work/cmake.log"\n[ "\$TRAIN_STATUS" ] && exit "\$TRAIN_STATUS"\nexit 0\n' >"$repo/build/apps/train_mlp/train_mlp"
  chmod +x "$repo/build/apps/train_mlp/train_mlp"
fi
STUB
chmod +x "$work/bin/cmake" "$repo/scripts/setup/"*.sh
gpu() {  # yes or no: what the stub nvidia-smi reports
  if [[ $1 == yes ]]; then
    printf '#!/bin/sh\necho "GPU 0: NVIDIA H200 (UUID: GPU-0)"\n' >"$work/bin/nvidia-smi"
  else
    printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2\nexit 9\n' >"$work/bin/nvidia-smi"
  fi
  chmod +x "$work/bin/nvidia-smi"
}
train() { rm -f "$work/cmake.log"; PATH="$work/bin:$PATH" bash "$repo/scripts/train.sh" --epochs 1 2>&1; }

gpu no
out=$(train) || fail "no GPU: train.sh failed: $out"
grep -q -- "-DGEMM_MLP_GPU_KERNELS=OFF" "$work/cmake.log" || fail "no GPU: not configured OFF: $(cat "$work/cmake.log")"
grep -q "no GPU found (nvidia-smi): building the CPU path only.*about 2 minutes" <<<"$out" ||
  fail "no GPU: no notice of what to expect in: $out"
# train_mlp built alone, run, then predict and gemm_bench built: in that order.
order=$(grep -E -- "--target|^train_mlp" "$work/cmake.log" | sed -E 's/^cmake --build .* --target /build /; s/ -j.*//; s/^train_mlp .*/run/' | tr '\n' ';')
[[ "$order" == "build train_mlp;run;build predict gemm_bench;" ]] ||
  fail "no GPU: not built train_mlp, run, then predict and gemm_bench: $order"
grep -q "building predict and gemm_bench for the README's next commands" <<<"$out" ||
  fail "no GPU: the later build of predict and gemm_bench is not said: $out"
grep -q "^train_mlp --data-dir .* --epochs 1" <<<"$out" || fail "no GPU: train_mlp not run: $out"
[[ ! -e "$repo/build-test" ]] || fail "train.sh touched build-test/"

# A run that fails (or is stopped: 130) ends train.sh with its status, building nothing after it.
out=$(TRAIN_STATUS=130 train)
status=$?
[ "$status" -eq 130 ] || fail "stopped run: train.sh's status is $status, not 130"
grep -q -- "--target predict" "$work/cmake.log" && fail "stopped run: predict built after it"

# --help: this script's usage, before anything is installed, fetched, configured or built; then
# train_mlp's flags when it is built.
rm -f "$work/cmake.log"
out=$(PATH="$work/bin:$PATH" bash "$repo/scripts/train.sh" --epochs 3 --help 2>&1) ||
  fail "--help failed: $out"
grep -q "The one command to train on a fresh Debian machine" <<<"$out" || fail "--help: no usage: $out"
grep -q "^train_mlp --help" <<<"$out" || fail "--help: train_mlp's flags not shown: $out"
grep -vq "^train_mlp --help" "$work/cmake.log" 2>/dev/null &&
  fail "--help did work first: $(cat "$work/cmake.log")"

# Configured already, no GPU: no second configure.
out=$(train) || fail "again: train.sh failed: $out"
[ "$(grep -c -- " -S " "$work/cmake.log")" -eq 0 ] || fail "again: configured again: $(cat "$work/cmake.log")"

# A GPU now, build/ without the GPU kernels: turned on.
gpu yes
out=$(train) || fail "GPU after OFF: train.sh failed: $out"
grep -q -- "-DGEMM_MLP_GPU_KERNELS=ON" "$work/cmake.log" || fail "GPU after OFF: not turned on: $(cat "$work/cmake.log")"

# A fresh build/ with a GPU: the kernels are in.
rm -rf "$repo/build"
out=$(train) || fail "GPU: train.sh failed: $out"
grep -q -- "-DGEMM_MLP_GPU_KERNELS=ON" "$work/cmake.log" || fail "GPU: not configured ON: $(cat "$work/cmake.log")"
finish train_sh_test
