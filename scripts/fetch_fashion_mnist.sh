#!/usr/bin/env bash
# Fashion-MNIST into DIR, uncompressed and checked; called by `scripts/fetch_mnist.sh fashion [DIR]`
# (its header says where the files come from and what is checked).
set -euo pipefail

dir="${1:-data/fashion-mnist}"
mirror="${FASHION_MIRROR:-http://fashion-mnist.s3-website.eu-central-1.amazonaws.com}"
files=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
declare -A md5=(  # the uncompressed files
  [train-images-idx3-ubyte]=f4a8712d7a061bf5bd6d2ca38dc4d50a
  [train-labels-idx1-ubyte]=9018921c3c673c538a1fc5bad174d6f9
  [t10k-images-idx3-ubyte]=8181f5470baa50b63fa0f6fddb340f0a
  [t10k-labels-idx1-ubyte]=15d484375f8d13e6eb1aabb0c3f46965
)
declare -A gz_md5=(  # upstream's .gz files, as its README publishes them
  [train-images-idx3-ubyte]=8d4fb7e6c68d591d4c3dfef9ec88bf0d
  [train-labels-idx1-ubyte]=25c81989df183df01b3e8a0aad5dffbe
  [t10k-images-idx3-ubyte]=bef4ecab320f06d8554ea6380940ec79
  [t10k-labels-idx1-ubyte]=bb300cfdad3c16e7a12a480ee83cd310
)

die() {
  echo "fetch_fashion_mnist.sh: error: $*" >&2
  exit 1
}
md5_of() { md5sum "$1" | cut -d' ' -f1; }
all_present() {
  local f
  for f in "${files[@]}"; do
    [[ -f "$1/$f" && "$(md5_of "$1/$f")" == "${md5[$f]}" ]] || return 1
  done
}

if all_present "$dir"; then
  echo "Fashion-MNIST already present and verified in $dir"
  exit 0
fi
mkdir -p "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if (cd "$tmp" && apt-get download dataset-fashion-mnist >/dev/null 2>&1); then
  echo "fetched Debian's dataset-fashion-mnist"
  dpkg-deb -x "$tmp"/dataset-fashion-mnist_*.deb "$tmp/deb"
  for f in "${files[@]}"; do
    gunzip -c "$tmp/deb/usr/share/datasets/fashion-mnist/$f.gz" >"$tmp/$f" ||
      die "$f.gz from the Debian package is not a valid gzip file"
  done
else
  if command -v curl >/dev/null; then
    get() { curl -fsSL --retry 3 -o "$2" "$1"; }
  elif command -v wget >/dev/null; then
    get() { wget -q -O "$2" "$1"; }
  else
    die "apt-get download failed and neither curl nor wget is installed"
  fi
  for f in "${files[@]}"; do
    echo "downloading $mirror/$f.gz"
    get "$mirror/$f.gz" "$tmp/$f.gz" || die "download of $mirror/$f.gz failed"
    got="$(md5_of "$tmp/$f.gz")"
    [[ "$got" == "${gz_md5[$f]}" ]] || die "$f.gz: md5 mismatch: published ${gz_md5[$f]}, got $got"
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
echo "Fashion-MNIST written to $dir and verified"
