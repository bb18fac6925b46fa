"""Whether the kernels serve a GPU, and the fallback's one warning where they do not."""

import contextlib
import warnings

import torch

_warned = set()


def kernels_serve(device):
    """(True, "") where gemm-mlp's kernels run on `device`, else (False, why). They need compute
    capability 8.0 or newer (cp.async)."""
    major, minor = torch.cuda.get_device_capability(device)
    if major >= 8:
        return True, ""
    return False, (f"{torch.cuda.get_device_name(device)} has compute capability {major}.{minor}; "
                   "gemm-mlp's kernels need 8.0 or newer")


def served_or_warn(device, fallback):
    """kernels_serve(device)[0]; where it is False, warns once per device that `fallback` runs
    instead."""
    ok, why = kernels_serve(device)
    if not ok:
        index = torch.device(device).index
        if index not in _warned:
            _warned.add(index)
            warnings.warn(f"gemm_mlp_torch: {why}; {fallback} runs instead", RuntimeWarning,
                          stacklevel=3)
    return ok


@contextlib.contextmanager
def fp32_matmul():
    """PyTorch's own matmul in full fp32 (TF32 off) inside, the previous setting after."""
    with warnings.catch_warnings():  # newer torch warns that the legacy switch will go
        warnings.simplefilter("ignore", UserWarning)
        saved = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            torch.set_float32_matmul_precision(saved)
