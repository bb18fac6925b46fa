"""Finds and loads libgemm_mlp_torch_ops.so, the op library (pytorch/csrc), into torch.ops."""

import os

import torch

LIBRARY_NAME = "libgemm_mlp_torch_ops.so"
BUILD_HINT = ("scripts/pytorch/build_op.sh builds it and puts it in pytorch/gemm_mlp_torch/; "
              "or set GEMM_MLP_TORCH_LIBRARY to the path of a built one")


def library_path():
    """$GEMM_MLP_TORCH_LIBRARY, else the copy beside this file; ImportError naming how to build
    it when neither exists."""
    path = os.environ.get("GEMM_MLP_TORCH_LIBRARY")
    if path:
        if not os.path.isfile(path):
            raise ImportError(f"gemm_mlp_torch: GEMM_MLP_TORCH_LIBRARY is {path}, which does not "
                              f"exist; {BUILD_HINT}")
        return path
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_NAME)
    if not os.path.isfile(path):
        raise ImportError(f"gemm_mlp_torch: the op library {LIBRARY_NAME} is not built; "
                          f"{BUILD_HINT}")
    return path


def load():
    """Registers the gemm_mlp ops with PyTorch (once per process)."""
    if hasattr(torch.ops.gemm_mlp, "matmul"):
        return
    path = library_path()
    try:
        torch.ops.load_library(path)
    except OSError as e:
        raise ImportError(f"gemm_mlp_torch: cannot load {path}: {e}. It must be built against "
                          f"this torch ({torch.__version__}); rebuild it with "
                          "scripts/pytorch/build_op.sh") from e
