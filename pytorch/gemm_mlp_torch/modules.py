"""Linear, a drop-in for nn.Linear on gemm-mlp's kernels, and fp32_accurate(), which routes
existing code's fp32 matrix products through them."""

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from . import _ops
from ._device import fp32_matmul, served_or_warn


def _cuda_fp32(*tensors):
    """All tensors float32 and on one CUDA device."""
    first = tensors[0]
    return all(isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.is_cuda
               and t.device == first.device for t in tensors)


class Linear(torch.nn.Linear):
    """nn.Linear whose forward and backward run on gemm-mlp's kernels: the same parameters,
    initialisation and state_dict, so it loads nn.Linear's checkpoints and nn.Linear loads its.
    Float32 CUDA inputs of shape (..., in_features); other inputs, and a GPU the kernels do not
    serve (one warning), go through nn.Linear's own forward (TF32 off)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None,
                 variant=_ops.DEFAULT_VARIANT):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.variant = variant

    @classmethod
    def from_linear(cls, linear, variant=_ops.DEFAULT_VARIANT):
        """A Linear sharing `linear`'s parameters (no copy)."""
        module = cls(linear.in_features, linear.out_features, bias=linear.bias is not None,
                     device="meta", variant=variant)
        module.weight = linear.weight
        module.bias = linear.bias
        return module

    def forward(self, x):
        operands = (x, self.weight) if self.bias is None else (x, self.weight, self.bias)
        if _cuda_fp32(*operands) and served_or_warn(x.device, "nn.Linear's forward (TF32 off)"):
            return _ops.linear(x, self.weight, self.bias, variant=self.variant)
        with fp32_matmul():
            return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"{super().extra_repr()}, variant={self.variant!r}"


class fp32_accurate(TorchFunctionMode):  # noqa: N801 (a context manager, named as one)
    """Inside `with gemm_mlp_torch.fp32_accurate():`, float32 CUDA torch.matmul, torch.mm,
    torch.addmm, F.linear (so nn.Linear) and their Tensor methods and `@` run on gemm-mlp's
    kernels, fp32-accurate on tensor cores; autograd's backward through them too. The matmul's
    first operand may have more than two dimensions (batch dimensions of a matrix times a
    matrix). Everything else runs as it would, with PyTorch's own fp32 matmul set to full fp32
    (TF32 off) until the block ends: batched products, other dtypes, CPU tensors, and a GPU the
    kernels do not serve (one warning).

    The returned object counts `routed` (calls run on the kernels) and `passed_through` (calls of
    those functions left to PyTorch)."""

    def __init__(self, variant=_ops.DEFAULT_VARIANT):
        super().__init__()
        self.variant = variant
        self.routed = 0
        self.passed_through = 0
        self._fp32 = None

    def __enter__(self):
        self._fp32 = fp32_matmul()
        self._fp32.__enter__()
        return super().__enter__()

    def __exit__(self, exc_type, exc_value, traceback):
        try:
            return super().__exit__(exc_type, exc_value, traceback)
        finally:
            self._fp32.__exit__(exc_type, exc_value, traceback)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        route = _ROUTES.get(func)
        if route is not None:
            out = route(self.variant, *args, **kwargs)
            if out is not NotImplemented:
                self.routed += 1
                return out
            self.passed_through += 1
        return func(*args, **kwargs)


# --- What fp32_accurate routes, each returning NotImplemented to leave a call to PyTorch ------

def _served(*tensors):
    return _cuda_fp32(*tensors) and served_or_warn(tensors[0].device,
                                                    "PyTorch's fp32 matmul (TF32 off)")


def _route_matmul(variant, input, other, *, out=None):
    if out is not None or not _served(input, other) or input.dim() < 2 or other.dim() != 2:
        return NotImplemented
    return _ops.rows_apply(lambda rows: _ops.matmul(rows, other, variant), input)


def _route_mm(variant, input, mat2, *, out=None):
    if out is not None or not _served(input, mat2) or input.dim() != 2 or mat2.dim() != 2:
        return NotImplemented
    return _ops.matmul(input, mat2, variant)


def _route_addmm(variant, input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if (out is not None or not _served(input, mat1, mat2) or mat1.dim() != 2 or mat2.dim() != 2
            or mat1.shape[1] != mat2.shape[0]):
        return NotImplemented
    if beta == 1 and alpha == 1 and input.dim() == 1 and input.shape[0] == mat2.shape[1]:
        # The bias in the epilogue: mat1 @ mat2 = linear(mat1, weight = mat2ᵀ), a view.
        return _ops.linear(mat1, mat2.t(), input, variant=variant)
    product = _ops.matmul(mat1, mat2, variant)
    if alpha != 1:
        product = product * alpha
    if beta == 0:  # as torch.addmm: input is ignored, NaN in it included
        return product
    return torch.add(product, input, alpha=beta)


def _route_linear(variant, input, weight, bias=None):
    tensors = (input, weight) if bias is None else (input, weight, bias)
    if (not _served(*tensors) or weight.dim() != 2 or input.dim() < 1
            or (bias is not None and tuple(bias.shape) != (weight.shape[0],))):
        return NotImplemented
    return _ops.linear(input, weight, bias, variant=variant)


# `a @ b` reaches the mode as Tensor.matmul (torch 2.6 and 2.14: __matmul__ is C code that
# dispatches by that name); __matmul__ stays for torches whose Python __matmul__ passes itself.
_ROUTES = {
    torch.matmul: _route_matmul,
    torch.Tensor.matmul: _route_matmul,
    torch.Tensor.__matmul__: _route_matmul,
    torch.mm: _route_mm,
    torch.Tensor.mm: _route_mm,
    torch.addmm: _route_addmm,
    torch.Tensor.addmm: _route_addmm,
    F.linear: _route_linear,
}
