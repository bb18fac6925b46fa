#!/usr/bin/env bash
# Fuzzes the readers of untrusted files with libFuzzer, AddressSanitizer and UBSan (clang):
#   idx         data::read_idx on a raw file
#   gzip        data::read_idx's decompressing path
#   checkpoint  engine::safetensors::read (every checkpoint load goes through it)
#
#   scripts/check/fuzz.sh [SECONDS]          each target for SECONDS (default 60), from tests/fuzz/corpus
#
# Builds in build-fuzz/ (no CUDA: the readers are plain C++). Prints each target's executions and
# findings; exits non-zero if any target crashed, leaked, hung or tripped a sanitizer (its
# reproducer is left in build-fuzz/, named crash-* or timeout-*).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
out=build-fuzz
mkdir -p "$out"
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is needed (apt-get install clang)" >&2; exit 2; }

flags=(-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I. -Itests/fuzz -I/usr/local/cuda/include)
build() {  # build <target> <sources...>
  local target=$1
  shift
  clang++ "${flags[@]}" "$@" -o "$out/$target"
}
build idx_fuzz tests/fuzz/idx_fuzz.cpp data/idx.cpp -lz
build gzip_fuzz tests/fuzz/gzip_fuzz.cpp data/idx.cpp -lz
build checkpoint_fuzz tests/fuzz/checkpoint_fuzz.cpp engine/checkpoint/safetensors.cpp \
  engine/checkpoint/safetensors_dtypes.cpp engine/checkpoint/atomic_file.cpp -lz

status=0
for target in idx gzip checkpoint; do
  corpus="$out/corpus-$target"
  mkdir -p "$corpus"
  cp -n tests/fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true
  log="$out/$target.log"
  set +e
  (cd "$out" && ./"${target}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
     -max_len=65536 "corpus-$target") >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
  [ -n "$execs" ] || execs=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#')
  if [ "$rc" -eq 0 ]; then
    echo "fuzz.sh: $target: ${execs:-?} executions in ${seconds} s, no findings"
  else
    echo "fuzz.sh: $target: FINDING (exit $rc) after ${execs:-?} executions; see $log"
    grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -5
    status=1
  fi
done
exit "$status"
