#!/usr/bin/env bash
# The folders' include rules (docs/DESIGN.md, "Layout"), checked on the sources:
#   - base/ includes nothing of the project's other folders;
#   - engine/, data/, models/, apps/, examples/ and pytorch/ include from kernels/ only
#     kernels/gemm.h;
#   - the ladder (kernels/*.cu, *.cuh, *.h, *.cpp) includes nothing from kernels/fast/.
#
#   tests/scripts/layering_test.sh <repository root>
set -uo pipefail
root=$1
# shellcheck source=test_lib.sh
source "$(dirname "$0")/test_lib.sh"
cd "$root" || exit 1

includes() {  # includes FOLDER...: "file:line:#include ..." for the project's own includes
  grep -rnE '^\s*#\s*include\s+"(base|kernels|engine|data|models|apps|tools)/' "$@" \
    --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' 2>/dev/null
}

upward=$(includes base | grep -vE '#\s*include\s+"base/')
[[ -z "$upward" ]] || fail "base/ includes the project's upper folders:"$'\n'"$upward"

inside=$(includes engine data models apps examples pytorch | grep -E '"kernels/' |
         grep -vE '"kernels/gemm\.h"')
[[ -z "$inside" ]] || fail "outside kernels/, only kernels/gemm.h may be included from it:"$'\n'"$inside"

shopt -s nullglob
ladder=(kernels/*.cu kernels/*.cuh kernels/*.h kernels/*.cpp)
[[ ${#ladder[@]} -gt 10 ]] || fail "found only ${#ladder[@]} files in kernels/"
production=$(grep -nE '#\s*include\s+"kernels/fast/' "${ladder[@]}")
[[ -z "$production" ]] || fail "the ladder includes production code:"$'\n'"$production"

finish layering_test
