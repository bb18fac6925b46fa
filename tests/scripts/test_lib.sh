# shellcheck shell=bash
# Sourced by the script tests: a scratch folder removed on exit ($work) and fail MESSAGE, which
# prints it and counts it in $failures; a test ends with finish NAME (its exit status).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  printf 'FAIL: %s\n' "$1"
  failures=$((failures + 1))
}
finish() {
  [ "$failures" -eq 0 ] && echo "$1: all checks passed"
  exit $((failures > 0))
}
