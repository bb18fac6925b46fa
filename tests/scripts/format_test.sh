#!/usr/bin/env bash
# scripts/check/format.sh: the project's sources are as clang-format formats them; on a scratch
# tree (no git), an unformatted file is named with exit status 1, formatted by the script without
# --check, and then passes; an unknown argument is exit status 2.
#
#   tests/scripts/format_test.sh <source dir>
set -uo pipefail
root=$1
source "$(dirname "$0")/test_lib.sh"

out=$("$root/scripts/check/format.sh" --check 2>&1) || fail "the project's sources: $out"

mkdir -p "$work/tree/scripts/check" "$work/tree/kernels"
cp "$root/scripts/check/format.sh" "$work/tree/scripts/check/"
cp "$root/.clang-format" "$work/tree/"
printf 'int  f( int x ){return x;}\n' >"$work/tree/kernels/bad.cu"
printf 'int g(int x) { return x; }\n' >"$work/tree/kernels/good.h"
out=$("$work/tree/scripts/check/format.sh" --check 2>&1)
[ $? -eq 1 ] || fail "unformatted file: exit status not 1: $out"
grep -q "^  kernels/bad.cu$" <<<"$out" || fail "unformatted file not named: $out"
grep -q "good.h" <<<"$out" && fail "formatted file named: $out"
"$work/tree/scripts/check/format.sh" || fail "formatting failed"
out=$("$work/tree/scripts/check/format.sh" --check 2>&1) || fail "after formatting: $out"
out=$("$work/tree/scripts/check/format.sh" --bogus 2>&1)
[ $? -eq 2 ] || fail "--bogus: exit status not 2"
grep -q "unknown argument '--bogus'" <<<"$out" || fail "--bogus: not named in: $out"
finish format_test
