#!/usr/bin/env bash
# scripts/check/ctest_summary.py on a JUnit file as ctest writes it: a pass, a failure, two
# GoogleTest skips with one reason, one with another, a script's skip by exit status with its
# "SKIP: " line, and a test ctest did not run (Disabled).
#
#   tests/scripts/ctest_summary_test.sh <path to scripts/check/ctest_summary.py>
set -uo pipefail
summary=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gtest_skip() {  # <name> <reason>: a testcase as ctest records a GTEST_SKIP()
  printf '<testcase name="%s" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>' "$1"
  printf '<system-out>[ RUN      ] %s\n/src/t.cpp:12: Skipped\n%s\n[  SKIPPED ] %s (0 ms)\n' "$1" "$2" "$1"
  printf '</system-out></testcase>\n'
}
{
  echo '<?xml version="1.0" encoding="UTF-8"?><testsuite name="x" tests="7">'
  echo '<testcase name="A.Passes" status="run"><system-out>ok</system-out></testcase>'
  echo '<testcase name="A.Fails" status="fail"><failure message="Failed"/></testcase>'
  gtest_skip Gpu.One "no usable CUDA device"
  gtest_skip Gpu.Two "no usable CUDA device"
  gtest_skip RealMnist.Loads "MNIST not found in /x (run scripts/setup/fetch_mnist.sh)"
  printf '<testcase name="PyTorch.Errors" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>'
  printf '<system-out>starting\nSKIP: PyTorch is not installed for python3\n</system-out></testcase>\n'
  echo '<testcase name="B.Off" status="disabled"><skipped message="Disabled"/></testcase>'
  echo '</testsuite>'
} >"$work/junit.xml"

failures=0
check() {  # <what> <got> <want>
  if [[ "$2" != "$3" ]]; then
    printf 'FAIL: %s\n--- got:\n%s\n--- want:\n%s\n' "$1" "$2" "$3"
    failures=$((failures + 1))
  fi
}
check "summary" "$(python3 "$summary" "$work/junit.xml" 2>&1)" \
"tests: 7 total, 1 passed, 1 failed, 5 skipped
failed: A.Fails
skipped, by reason:
  2  no usable CUDA device
  1  MNIST not found in /x (run scripts/setup/fetch_mnist.sh)
  1  PyTorch is not installed for python3
  1  Disabled"
check "--lines" "$(python3 "$summary" --lines "$work/junit.xml" 2>&1)" \
"7 1 1 5
failed A.Fails
skipped Gpu.One
skipped Gpu.Two
skipped RealMnist.Loads
skipped PyTorch.Errors
skipped B.Off"
python3 "$summary" "$work/missing.xml" >/dev/null 2>&1
check "a missing file fails" "$?" 1

if [[ $failures -gt 0 ]]; then exit 1; fi
echo "ctest_summary.py: all checks passed"
