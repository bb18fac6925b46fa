#!/usr/bin/env bash
# scripts/setup/install_deps.sh: an argument is an error (it takes none but --help), and a missing
# package, python3-matplotlib included, goes to apt-get (stubbed: nothing is installed).
#
#   tests/scripts/install_deps_test.sh <path to scripts/setup/install_deps.sh>
set -uo pipefail
script=$1
source "$(dirname "$0")/test_lib.sh"

out=$(bash "$script" --bogus 2>&1)
[ $? -eq 2 ] || fail "--bogus: exit status not 2"
grep -q "unknown argument '--bogus'" <<<"$out" || fail "--bogus: not named in: $out"
out=$(bash "$script" --help 2>&1) || fail "--help: non-zero exit"
grep -q "usage:" <<<"$out" || fail "--help: no usage in: $out"

# Stubs: dpkg-query finds nothing installed, apt-get records what it is asked for, sudo runs it.
mkdir -p "$work/bin"
printf '#!/bin/sh\nexit 1\n' >"$work/bin/dpkg-query"
printf '#!/bin/sh\necho "$@" >>"%s/apt.log"\n' "$work" >"$work/bin/apt-get"
printf '#!/bin/sh\nexec "$@"\n' >"$work/bin/sudo"
printf '#!/bin/sh\n' >"$work/bin/nvcc"
chmod +x "$work/bin/"*
PATH="$work/bin:$PATH" bash "$script" >"$work/out" 2>&1 || fail "stubbed install failed: $(cat "$work/out")"
grep -q "install .*python3-matplotlib" "$work/apt.log" 2>/dev/null ||
  fail "python3-matplotlib not installed: $(cat "$work/apt.log" 2>/dev/null)"
finish install_deps_test
