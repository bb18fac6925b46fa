#!/usr/bin/env bash
# scripts/check/probe.py, the bad-input probe, on the CPU, every category (those that need root or
# strace skip themselves, saying so), with 2 random kills rather than 12: every case clear (or
# skipped). Needs MNIST (the probe trains on it): exit 77, a skip, without it. About 4 minutes on
# 2 busy cores.
#
#   tests/scripts/probe_test.sh <repository root> <build folder>
set -uo pipefail
root=$1
build=$2
mnist=${GEMM_MLP_MNIST_DIR:-$root/data/mnist}
if [[ ! -e "$mnist/t10k-labels-idx1-ubyte" && ! -e "$mnist/t10k-labels-idx1-ubyte.gz" ]]; then
  echo "SKIP: MNIST is not in $mnist (run scripts/setup/fetch_mnist.sh)"
  exit 77
fi
out=$(python3 "$root/scripts/check/probe.py" --build "$build" --data-dir "$mnist" --kills 2 2>&1)
status=$?
grep -v "^clear \|^skipped " <<<"$out"
echo "$(grep -c "^clear " <<<"$out") cases clear, $(grep -c "^skipped " <<<"$out") skipped"
exit "$status"
