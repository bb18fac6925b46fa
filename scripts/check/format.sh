#!/usr/bin/env bash
# Formats the project's C++ and CUDA sources with clang-format (the style in .clang-format), or,
# with --check, changes nothing and names each file clang-format would change (exit status 1).
# The files: those git tracks and the untracked ones it does not ignore, in a git checkout;
# elsewhere every source below the source folders. Output differs between clang-format versions:
# the sources follow Debian 12's (14), the one CI installs.
#
#   scripts/check/format.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/../.."
check=0
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    -h | --help)
      echo "usage: scripts/check/format.sh [--check]   (clang-format the C++ and CUDA sources)"
      exit 0
      ;;
    *)
      echo "format.sh: error: unknown argument '$arg' (it takes --check; --help)" >&2
      exit 2
      ;;
  esac
done
clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "format.sh: $clang_format not found (Debian: apt-get install clang-format)" >&2
  exit 2
fi

pattern='\.(cpp|h|cu|cuh)$'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard | grep -E "$pattern")
else
  mapfile -t files < <(find apps base data engine examples kernels models pytorch tests tools \
    -type f 2>/dev/null | grep -E "$pattern" | sort)
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "format.sh: no C++ or CUDA sources found below $(pwd)" >&2
  exit 2
fi
if [ "$check" = 0 ]; then
  "$clang_format" -i "${files[@]}"
  exit 0
fi
# One run over every file; each place it would change starts "FILE:LINE:COLUMN: warning:".
if ! report=$("$clang_format" --dry-run "${files[@]}" 2>&1); then
  echo "format.sh: $clang_format failed:" >&2
  tail -5 <<<"$report" >&2
  exit 2
fi
mapfile -t unformatted < <(sed -n \
  's/^\(.*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' <<<"$report" | sort -u)
version=$("$clang_format" --version | sed 's/^.*version //')
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "format.sh: ${#unformatted[@]} of ${#files[@]} sources are not as clang-format $version" \
    "formats them (scripts/check/format.sh formats them):"
  printf '  %s\n' "${unformatted[@]}"
  exit 1
fi
echo "format.sh: all ${#files[@]} sources as clang-format $version formats them"
