#!/usr/bin/env bash
# The folders' include rules (docs/DESIGN.md, "Layout"), checked on the sources:
#   - base/ includes nothing of the project's other folders;
#   - engine/, data/, models/, apps/, examples/ and pytorch/ include from kernels/ only
#     kernels/gemm.h;
#   - the ladder (kernels/*.cu, *.cuh, *.h, *.cpp) includes nothing from kernels/fast/;
#   - engine/'s rooms stack runtime/ < network/ < checkpoint/: a room includes nothing from a room
#     above it, and engine/engine.h (the rooms' public headers) is included by nothing in engine/;
#   - models/, apps/ and examples/ include from engine/ only engine/engine.h;
#   - no file includes itself through others (an include cycle), across the whole project.
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

rooms=(engine/runtime engine/network engine/checkpoint)
for room in "${rooms[@]}"; do
  [[ -d $room ]] || fail "engine/ has no $room"
done
up=$(includes engine/runtime | grep -E '"engine/(network|checkpoint)/')
up+=$(includes engine/network | grep -E '"engine/checkpoint/')
[[ -z "$up" ]] || fail "an engine room includes from a room above it:"$'\n'"$up"
whole=$(includes engine | grep -E '"engine/engine\.h"')
[[ -z "$whole" ]] || fail "engine/ includes engine/engine.h, which is for its users:"$'\n'"$whole"
narrow=$(includes models apps examples | grep -E '"engine/' | grep -vE '"engine/engine\.h"')
[[ -z "$narrow" ]] || fail "outside engine/, include engine/engine.h, not its rooms' headers:"$'\n'"$narrow"

# Include cycles: every project file's includes resolved from the root, then a depth-first search.
cycle=$(python3 - <<'PY'
import os, re, sys
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
graph = {}
for top in ("base", "kernels", "engine", "data", "models", "apps", "examples", "tools"):
    for d, _, files in os.walk(top):
        for f in files:
            if f.endswith((".h", ".cuh", ".cpp", ".cu")):
                p = os.path.join(d, f)
                graph[p] = [i for i in inc.findall(open(p, encoding="utf-8").read())
                            if os.path.isfile(i)]
state = {}
def visit(p, path):
    state[p] = 1
    for q in graph.get(p, []):
        if state.get(q) == 1:
            return path + [q]
        if q not in state:
            found = visit(q, path + [q])
            if found:
                return found
    state[p] = 2
for p in sorted(graph):
    if p not in state:
        found = visit(p, [p])
        if found:
            print(" -> ".join(found[found.index(found[-1]):]))
            break
PY
)
[[ -z "$cycle" ]] || fail "an include cycle: $cycle"

finish layering_test
