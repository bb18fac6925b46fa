#!/usr/bin/env python3
"""Runs the PyTorch op's unittest modules, as ctest does (tests/pytorch/CMakeLists.txt):

    pytorch/tests/run_tests.py [test_accuracy test_autograd ...]   (default: every test_*.py)

Exit status 0 when all pass, 1 when one fails, 77 (a skip) with its reason on a "SKIP: " line
where the op library is not built (GEMM_MLP_TORCH_MISSING holds the configure's reason) or torch
cannot be imported, or where every test skipped itself (the first reason). Without a usable GPU
the tests that run the kernels skip, each naming why, and the rest run (schemas, meta and fake
tensors, CPU tensors refused, fp32_accurate's routing).
GEMM_MLP_REQUIRE_GPU=1 turns a missing GPU into a failure, GEMM_MLP_REQUIRE_TORCH=1 a missing
torch or library (scripts/pytorch/torch_op_check.sh sets both); under either, a test that skips
itself fails the run too.

The library is GEMM_MLP_TORCH_LIBRARY (ctest gives the build's), else the one in
pytorch/gemm_mlp_torch/ (scripts/pytorch/build_op.sh puts it there).
"""
import glob
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def flag(name):
    return os.environ.get(name, "") not in ("", "0")


def skip(reason, required):
    if required:
        print(f"FAIL: {reason}")
        sys.exit(1)
    print(f"SKIP: {reason}")
    sys.exit(77)


def main(argv):
    if argv[1:2] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    require_torch, require_gpu = flag("GEMM_MLP_REQUIRE_TORCH"), flag("GEMM_MLP_REQUIRE_GPU")
    modules = argv[1:] or sorted(os.path.basename(p)[:-3]
                                 for p in glob.glob(os.path.join(HERE, "test_*.py")))
    missing = os.environ.get("GEMM_MLP_TORCH_MISSING", "")
    if missing:
        skip(f"the torch op library is not built: {missing}", require_torch)
    library = os.environ.get("GEMM_MLP_TORCH_LIBRARY", "")
    if library and not os.path.isfile(library):
        skip(f"the torch op library is not built: no {library} (build the target "
             "gemm_mlp_torch_ops)", require_torch)
    try:
        import torch
    except ImportError as e:
        skip(f"PyTorch is not installed for {sys.executable} ({e})", require_torch)
    if require_gpu and not torch.cuda.is_available():
        skip("no usable CUDA device (torch.cuda.is_available() is False)", True)

    sys.path[:0] = [HERE, os.path.dirname(HERE)]  # the tests' helpers, the package
    suite = unittest.defaultTestLoader.loadTestsFromNames(modules)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if result.skipped and (require_gpu or require_torch):
        print(f"FAIL: {len(result.skipped)} tests skipped where none may be")
        return 1
    if result.wasSuccessful() and result.testsRun == len(result.skipped) > 0:
        skip(sorted({reason for _, reason in result.skipped})[0], False)  # ran nothing: a skip
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
