#!/usr/bin/env bash
# scripts/check/ctest_progress.awk (scripts/test.sh's view of ctest) on ctest's output: passes,
# skips and "Start" lines dropped (counted in a progress line every 250), a failure and its output
# kept, and ctest's closing lines kept but for its "N% tests passed" line (a skip counted as a
# pass; test.sh's summary leads instead) and its list of the tests that did not run.
#
#   tests/scripts/ctest_progress_test.sh <path to scripts/check/ctest_progress.awk>
set -uo pipefail
filter=$1
source "$(dirname "$0")/test_lib.sh"
{
  echo "Test project /x/build"
  for i in $(seq 1 300); do
    printf '        Start %3d: A.Pass%d\n' "$i" "$i"
    printf '%3d/503 Test #%d: A.Pass%d ..........   Passed    0.05 sec\n' "$i" "$i" "$i"
  done
  for i in $(seq 301 500); do
    printf '%3d/503 Test #%d: Gpu.Skip%d ..........***Skipped   0.01 sec\n' "$i" "$i" "$i"
  done
  echo "501/503 Test #501: Gpu.B ..........***Skipped   0.01 sec"
  echo "502/503 Test #502: C.Fails ..........***Failed    0.02 sec"
  echo "[ RUN      ] C.Fails"
  echo "boom"
  echo "503/503 Test #503: Gpu.E ..........***Skipped   0.01 sec"
  echo ""
  echo "99% tests passed, 1 tests failed out of 503"
  echo ""
  echo "The following tests did not run:"
  printf '\t501 - Gpu.B (Skipped)\n\t503 - Gpu.E (Skipped)\n'
  echo ""
  echo "The following tests FAILED:"
  printf '\t502 - C.Fails (Failed)\n'
  echo "Errors while running CTest"
} >"$work/ctest.txt"
out=$(awk -f "$filter" "$work/ctest.txt")
grep -q "Gpu\.\|Skipped" <<<"$out" && fail "a skipped test printed (the summary counts them)"
grep -q "Pass\|Start" <<<"$out" && fail "a pass or a Start line printed"
[ "$(grep -c "tests done" <<<"$out")" -eq 2 ] || fail "not two progress lines for 502 tests done"
grep -q "^  \.\.\. 500 tests done: 300 passed, 200 skipped$" <<<"$out" ||
  fail "no progress line counting passes and skips"
grep -q "tests passed, " <<<"$out" && fail "ctest's % tests passed line printed"
grep -q "^boom$" <<<"$out" || fail "the failure's output is missing"
[ "$(grep -c "C.Fails" <<<"$out")" -ge 2 ] || fail "the failure is not named in ctest's list"
grep -q "did not run" <<<"$out" && fail "the list of tests that did not run is printed"
[ "$(tail -1 <<<"$out")" = "Errors while running CTest" ] || fail "ctest's closing lines are cut"
[ "$failures" -eq 0 ] || printf -- '--- output:\n%s\n' "$out"
finish ctest_progress_test
