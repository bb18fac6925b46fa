#!/usr/bin/env python3
"""Every member function engine/step_kernel.h declares is defined in engine/step_kernel_off.cpp,
the step kernel of a build without GPU kernels (GEMM_MLP_GPU_KERNELS=OFF), which the test build
never compiles: a member missing there breaks only that build's link (step_bench, train_mlp).

  step_kernel_off_test.py <repo>
"""
import re
import sys


def declared_members(header):
    """The names of StepKernel's member functions declared in its class body (not = delete)."""
    body = header[header.index("class StepKernel {"):]
    body = body[:body.index("\n};")]
    body = re.sub(r"//[^\n]*", "", body)
    body = re.sub(r"struct \w+ \{.*?\};", "", body, flags=re.S)  # nested structs' members
    names = set()
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if "(" not in decl or "= delete" in decl or "operator" in decl:
            continue
        m = re.search(r"(~?\w+)\s*\(", decl)
        if m:
            names.add(m.group(1))
    return names


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    repo = sys.argv[1]
    with open(repo + "/engine/step_kernel.h") as f:
        header = f.read()
    with open(repo + "/engine/step_kernel_off.cpp") as f:
        off = f.read()
    names = declared_members(header)
    if len(names) < 5:
        print("step_kernel_off_test.py: found only %s in step_kernel.h" % sorted(names))
        return 1
    missing = sorted(n for n in names if not re.search(r"StepKernel::%s\s*\(" % re.escape(n), off))
    if missing:
        print("engine/step_kernel_off.cpp does not define StepKernel::%s, which step_kernel.h "
              "declares: the GEMM_MLP_GPU_KERNELS=OFF build fails to link" % ", ".join(missing))
        return 1
    print("step_kernel_off.cpp defines all %d members: %s" % (len(names), ", ".join(sorted(names))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
