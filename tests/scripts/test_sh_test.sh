#!/usr/bin/env bash
# scripts/test.sh with the set-up scripts, cmake and ctest stubbed: --help is answered before
# anything runs; it configures and builds its own build-test/ with the GPU kernels, leaving
# scripts/train.sh's build/ as it is, and refuses a BUILD_DIR configured without them rather than
# switching it; its terminal output names no skipped test one by one and drops ctest's
# "100% tests passed", and its summary leads with the counts, then one line per skip reason.
#
#   tests/scripts/test_sh_test.sh <repository root>
set -uo pipefail
root=$1
source "$(dirname "$0")/test_lib.sh"

repo=$work/repo
mkdir -p "$repo/scripts/setup" "$repo/scripts/check" "$work/bin"
cp "$root/scripts/test.sh" "$repo/scripts/"
cp "$root/scripts/check/ctest_progress.awk" "$root/scripts/check/ctest_summary.py" \
  "$repo/scripts/check/"
for s in install_deps fetch_mnist; do
  printf '#!/bin/sh\necho "%s" >>"%s/calls.log"\n' "$s" "$work" >"$repo/scripts/setup/$s.sh"
done
# cmake: records its arguments; a configure writes the cache entry it was given.
cat >"$work/bin/cmake" <<STUB
#!/usr/bin/env bash
echo "cmake \$*" >>"$work/calls.log"
if [[ "\$1" == -S ]]; then
  mkdir -p "\$4"
  for a in "\$@"; do
    [[ "\$a" == -DGEMM_MLP_GPU_KERNELS=* ]] && echo "GEMM_MLP_GPU_KERNELS:BOOL=\${a#*=}" >"\$4/CMakeCache.txt"
  done
fi
STUB
# ctest: 300 passes and 300 GoogleTest skips (two reasons) as ctest prints and records them.
cat >"$work/bin/ctest" <<'STUB'
#!/usr/bin/env bash
junit=
while [[ $# -gt 0 ]]; do [[ "$1" == --output-junit ]] && junit=$2; shift; done
echo "Test project /x"
{
  echo '<?xml version="1.0" encoding="UTF-8"?><testsuite name="x" tests="600">'
  for i in $(seq 1 600); do
    if ((i <= 300)); then
      printf '%3d/600 Test #%d: A.Pass%d ....   Passed    0.01 sec\n' "$i" "$i" "$i" >&3
      echo "<testcase name=\"A.Pass$i\" status=\"run\"/>"
    else
      reason="no usable CUDA device"
      ((i > 590)) && reason="MNIST not found in /x"
      printf '%3d/600 Test #%d: Gpu.Skip%d ....***Skipped   0.01 sec\n' "$i" "$i" "$i" >&3
      printf '<testcase name="Gpu.Skip%d" status="notrun"><skipped message="x"/><system-out>[ RUN      ] x\nt.cpp:1: Skipped\n%s\n[  SKIPPED ] x</system-out></testcase>\n' "$i" "$reason"
    fi
  done
  echo '</testsuite>'
} 3>&1 >"$junit"
echo
echo "100% tests passed, 0 tests failed out of 600"
echo
echo "The following tests did not run:"
for i in $(seq 301 600); do printf '\t%d - Gpu.Skip%d (Skipped)\n' "$i" "$i"; done
STUB
chmod +x "$work/bin/"* "$repo/scripts/setup/"*.sh
run_test_sh() { rm -f "$work/calls.log"; (cd "$repo" && PATH="$work/bin:$PATH" bash scripts/test.sh "$@" 2>&1); }

# --help: the usage, nothing installed, fetched or built.
out=$(run_test_sh --help) || fail "--help failed: $out"
grep -q "README's test command" <<<"$out" || fail "--help: no usage: $out"
[[ ! -e "$work/calls.log" ]] || fail "--help did work first: $(cat "$work/calls.log")"
run_test_sh --frobnicate >/dev/null
[[ $? -eq 2 ]] || fail "an unknown argument is not a usage error"

# train.sh's build/ without the GPU kernels: left as it is; test.sh builds in build-test/.
mkdir -p "$repo/build"
echo "GEMM_MLP_GPU_KERNELS:BOOL=OFF" >"$repo/build/CMakeCache.txt"
out=$(run_test_sh) || fail "test.sh failed: $out"
grep -q "^cmake -S \. -B build-test .*-DGEMM_MLP_GPU_KERNELS=ON" "$work/calls.log" ||
  fail "build-test/ not configured with the GPU kernels: $(cat "$work/calls.log")"
grep -q -- "-B build " "$work/calls.log" && fail "build/ was configured: $(cat "$work/calls.log")"
[[ "$(cat "$repo/build/CMakeCache.txt")" == "GEMM_MLP_GPU_KERNELS:BOOL=OFF" ]] ||
  fail "build/ was changed"
# The output: no skipped test named, no "100% tests passed"; the summary leads, a line a reason.
grep -q "Skip" <<<"$out" && fail "a skipped test is named one by one: $out"
grep -q "tests passed, " <<<"$out" && fail "ctest's % tests passed line is shown: $out"
summary=$(sed -n '/^----- summary$/,$p' <<<"$out")
want="----- summary
tests: 600 total, 300 passed, 0 failed, 300 skipped
skipped, by reason:
  290  no usable CUDA device
   10  MNIST not found in /x"
[[ "$(head -5 <<<"$summary")" == "$want" ]] || fail "the summary: $summary"
grep -q "ctest's whole output: $repo/build-test/ctest.log" <<<"$out" || fail "no log named: $out"

# BUILD_DIR=build, configured without the GPU kernels: refused, not switched.
out=$(BUILD_DIR=build run_test_sh)
status=$?
[[ $status -eq 2 ]] || fail "BUILD_DIR=build (OFF): status $status, not 2: $out"
grep -q "build was configured without the GPU kernels" <<<"$out" || fail "no reason given: $out"
grep -q "^cmake" "$work/calls.log" && fail "cmake ran on build/: $(cat "$work/calls.log")"
finish test_sh_test
