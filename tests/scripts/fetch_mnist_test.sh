#!/usr/bin/env bash
# scripts/setup/fetch_mnist.sh's usage checks, without the network: npm, curl, wget and apt-get are
# replaced by stubs that fail saying NETWORK, so a check that let the script reach a download
# fails this test instead of downloading.
#
#   tests/scripts/fetch_mnist_test.sh <path to scripts/setup/fetch_mnist.sh>
set -uo pipefail
script=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
for tool in npm curl wget apt-get; do
  printf '#!/bin/sh\necho NETWORK: %s "$@" >&2\nexit 99\n' "$tool" >"$work/bin/$tool"
  chmod +x "$work/bin/$tool"
done
export PATH="$work/bin:$PATH"
cd "$work" || exit 1
failures=0

# expect <status> <text in the output> <arguments...>
expect() {
  local want=$1 needle=$2
  shift 2
  local out status
  out=$(bash "$script" "$@" 2>&1)
  status=$?
  if [[ $status -ne $want || $out != *"$needle"* || $out == *NETWORK* ]]; then
    echo "FAIL: fetch_mnist.sh $* -> status $status (want $want), output:"
    echo "$out"
    echo "(expected to contain: $needle)"
    failures=$((failures + 1))
  fi
}

expect 0 "usage: $script [mnist|fashion] [DIR]" --help
expect 0 "usage:" -h
expect 0 "usage:" fashion --help
[[ ! -e --help && ! -e -h ]] || { echo "FAIL: --help made a folder"; failures=$((failures + 1)); }
expect 2 "unknown option '--dir'" --dir x
expect 2 "an argument is empty" ""
expect 2 "an argument is empty" fashion ""
expect 2 "unknown dataset 'a' (mnist or fashion)" a b
expect 2 "too many arguments: a b" fashion a b
expect 2 "too many arguments: a b" MNIST a b
# Names are matched as names: FASHION is Fashion-MNIST (the download it reaches, stubbed, is
# Fashion-MNIST's, into the folder given, not into a folder named FASHION); an unknown lone word
# is neither a dataset nor a folder to create.
for name in FASHION Fashion-MNIST; do
  out=$(bash "$script" "$name" fx 2>&1)
  if [[ $out != *"downloading http://fashion-mnist"*"/train-images-idx3-ubyte.gz"* ]]; then
    echo "FAIL: fetch_mnist.sh $name fx did not fetch Fashion-MNIST:"
    echo "$out"
    failures=$((failures + 1))
  fi
done
mkdir -p blocked/train-images-idx3-ubyte
expect 2 "'blocked/train-images-idx3-ubyte' exists and is not a regular file" FASHION blocked
expect 2 "'blocked/train-images-idx3-ubyte' exists and is not a regular file" Fashion-MNIST blocked
expect 2 "'cifar' is no dataset (mnist or fashion) and no folder; to fetch MNIST into a new folder of that name, give it as ./cifar" cifar
[[ ! -e FASHION && ! -e cifar ]] || { echo "FAIL: a dataset name made a folder"; failures=$((failures + 1)); }
touch a_file
expect 2 "'a_file' exists and is not a directory" a_file
mkdir -p target/train-labels-idx1-ubyte
expect 2 "'target/train-labels-idx1-ubyte' exists and is not a regular file" target
expect 2 "usage:" fashion a_file
[[ ! -e data ]] || { echo "FAIL: a bad call created data/"; failures=$((failures + 1)); }

if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "fetch_mnist.sh: all usage checks passed"
