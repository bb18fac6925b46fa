#!/usr/bin/env bash
# Whether a refactor changed the device code: compiles the CUDA sources of two source trees to
# PTX for the H200 (sm_90a, the Release build's flags), and compares every kernel and device
# function by name, whichever file it now lives in. Identical PTX assembles to identical machine
# code (ptxas is deterministic), so an unchanged kernel needs no new timing or sanitizer run.
# No GPU needed.
#
#   scripts/check/ptx_diff.sh <tree-a> <tree-b> <out-dir>
#
# Writes <out-dir>/ptx_diff.csv (function, PTX lines in a and b, identical: yes, no, only-a or
# only-b) and each differing function's unified diff to <out-dir>/diffs/. Names and bodies are
# compared without nvcc's per-file prefix of internal symbols (_INTERNAL_<hash>_…) and without
# comments, and branch labels without the function's index in its file. Exit status 0 when every function of either tree is in both and identical, 1
# otherwise, 2 on bad usage or a failed compile.
# A difference is not always a change: nvcc 13.0 compiles kernels/fast/fast.cu to different PTX
# from one run to the next (the same file, path and flags, three compiles, three PTX files: its
# warptile kernels' register numbering and instruction order), so `fast`'s warptile kernels can
# differ between two trees whose sources are the same. Identical is identical.
# Environment: JOBS (parallel compiles, default nproc), NVCC (default nvcc, or /usr/local/cuda's).
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: scripts/check/ptx_diff.sh <tree-a> <tree-b> <out-dir>" >&2
  exit 2
fi
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
jobs=${JOBS:-$(nproc)}
mkdir -p "$3/diffs"
out=$(cd "$3" && pwd)

list_tree() {  # list_tree TREE SIDE: "TREE SRC OUTPUT" for every .cu of kernels/, engine/, data/
  local tree
  tree=$(cd "$1" && pwd)
  mkdir -p "$out/$2"
  local folders=()
  for folder in kernels engine data; do [ -d "$tree/$folder" ] && folders+=("$folder"); done
  [ ${#folders[@]} -gt 0 ] || { echo "ptx_diff.sh: $tree has no kernels/, engine/ or data/" >&2; exit 2; }
  (cd "$tree" && find "${folders[@]}" -name '*.cu' | sort) | while read -r src; do
    echo "$tree $src $out/$2/$(echo "$src" | tr / _).ptx"
  done
}
compile_one() {  # compile_one TREE SRC PTX
  "$nvcc" -O3 -DNDEBUG -std=c++17 --expt-relaxed-constexpr -I"$1" \
    -gencode=arch=compute_90a,code=sm_90a -ptx -o "$3" "$1/$2" 2>"${3%.ptx}.log" ||
    { echo "ptx_diff.sh: $1/$2 did not compile (${3%.ptx}.log)" >&2; return 255; }
}
export -f compile_one
export nvcc
{ list_tree "$1" a; list_tree "$2" b; } | xargs -P "$jobs" -L 1 bash -c 'compile_one "$@"' _ ||
  exit 2

python3 - "$out" <<'EOF'
import csv, difflib, glob, os, re, sys
out = sys.argv[1]
# nvcc's per-file names: the prefix of internal symbols, and the anonymous namespace, which is
# named after the file and a hash of it (its length prefix included, as the file's name differs).
internal = re.compile(r"_INTERNAL_[0-9a-f]+_\d+_\w+?_(?=_?Z|\d)|\d+_GLOBAL__N__[0-9a-f]+_\d+_\w+?_[0-9a-f]{8}")
# Branch labels and local stacks carry the function's index in its file; a static's mangled name
# keeps a length and a hash around the prefix removed.
label = re.compile(r"(\$L__BB|__local_depot)\d+")
leftover = re.compile(r"\d+ANON[0-9a-f]{8}")
start = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$.]+)")
def functions(side):
    found = {}
    for path in sorted(glob.glob(os.path.join(out, side, "*.ptx"))):
        name, body = None, []
        for line in open(path):
            line = internal.sub("ANON", line.rstrip())
            line = leftover.sub("ANON", label.sub(r"\1", line))
            m = start.match(line)
            if m:
                name, body = m.group(1), []
                found[name] = body
            if name is not None and not line.lstrip().startswith("//"):
                body.append(line)
            if line.startswith("}"):
                name = None
    return found
a, b = functions("a"), functions("b")
rows, bad = [], 0
for name in sorted(a.keys() | b.keys()):
    if name not in b: state = "only-a"
    elif name not in a: state = "only-b"
    else: state = "yes" if a[name] == b[name] else "no"
    if state == "no":
        short = re.sub(r"\W", "_", name)[:150]
        with open(os.path.join(out, "diffs", short + ".diff"), "w") as f:
            f.writelines(l + "\n" for l in difflib.unified_diff(a[name], b[name], "a", "b", lineterm=""))
    bad += state != "yes"
    rows.append([name, len(a.get(name, [])), len(b.get(name, [])), state])
with open(os.path.join(out, "ptx_diff.csv"), "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["function", "ptx_lines_a", "ptx_lines_b", "identical"])
    w.writerows(rows)
n = {s: sum(r[3] == s for r in rows) for s in ("yes", "no", "only-a", "only-b")}
print(f"ptx_diff: {len(rows)} functions: {n['yes']} identical, {n['no']} differ, "
      f"{n['only-a']} only in a, {n['only-b']} only in b ({out}/ptx_diff.csv)")
sys.exit(1 if bad else 0)
EOF
