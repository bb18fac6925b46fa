"""The gemm_mlp ops' Python side: the functions users call, and the fake (meta) implementations
that torch.compile traces with. Autograd is registered with the ops, in C++
(pytorch/csrc/gemm_mlp_ops.cpp): the backward's GEMMs run through the same op, on transposed
views (forward NT, input gradient NN, weight gradient TN).
"""

import functools
import operator

import torch

DEFAULT_VARIANT = "default"  # tf32x3_fast on Hopper, else fast (pytorch/csrc/gemm_mlp_ops.cpp)


def matmul(a, b, variant=DEFAULT_VARIANT):
    """a @ b for float32 CUDA matrices, a M×K and b K×N (transposed views are read in place),
    on gemm-mlp's kernels; differentiable."""
    return torch.ops.gemm_mlp.matmul(a, b, variant)


def linear(x, weight, bias=None, relu=False, variant=DEFAULT_VARIANT):
    """F.linear(x, weight, bias), then ReLU if relu, with the bias and ReLU fused into the GEMM.
    x is (..., in), weight (out, in), bias (out,); differentiable."""
    if x.dim() == 0:
        raise RuntimeError("gemm_mlp_torch.linear: x must have at least one dimension, got a "
                           "0-d tensor")
    return rows_apply(lambda rows: torch.ops.gemm_mlp.linear(rows, weight, bias, relu, variant), x)


def rows_apply(f, x):
    """f of x's rows as one matrix: x (..., K) → f(x as (rows, K)) (rows, N) → (..., N). A 2-D x
    goes as it is (a transposed view stays one); others are reshaped (a view where possible)."""
    if x.dim() == 2:
        return f(x)
    rows = functools.reduce(operator.mul, x.shape[:-1], 1)
    y = f(x.reshape(rows, x.shape[-1]))
    return y.reshape(*x.shape[:-1], y.shape[-1])


def default_variant():
    """The variant "default" runs on the current GPU: tf32x3_fast on Hopper, else fast."""
    return torch.ops.gemm_mlp.default_variant()


def variants():
    """The device variants, as {name: (precision, why)}: precision "fp32" or "tf32" (what its
    results are accurate to), why the reason it cannot run on the current GPU, or "" when it can."""
    table = {}
    for line in torch.ops.gemm_mlp.variants().splitlines():
        name, precision, why = line.split("\t")
        table[name] = (precision, why)
    return table


# --- Fake implementations: the output's shape, dtype and device, for tracing ------------------

def _check_operands(op, named):
    for name, t in named:
        torch._check(t.dtype == torch.float32,
                     lambda: f"{op}: {name} is {t.dtype}; the op takes float32 only")
        # meta: shape inference on meta tensors (the fake tensors of tracing report "cuda")
        torch._check(t.device.type in ("cuda", "meta"),
                     lambda: f"{op}: {name} is on {t.device}; the op runs on CUDA tensors only")


@torch.library.register_fake("gemm_mlp::matmul")
def _matmul_fake(a, b, variant=DEFAULT_VARIANT):
    op = "gemm_mlp::matmul"
    torch._check(a.dim() == 2 and b.dim() == 2,
                 lambda: f"{op}: a and b must be 2-D, got {tuple(a.shape)} and {tuple(b.shape)}")
    _check_operands(op, (("a", a), ("b", b)))
    torch._check(a.shape[1] == b.shape[0],
                 lambda: f"{op}: a is {tuple(a.shape)} and b is {tuple(b.shape)}; a's columns "
                         "must equal b's rows")
    return a.new_empty((a.shape[0], b.shape[1]))


@torch.library.register_fake("gemm_mlp::linear")
def _linear_fake(x, weight, bias=None, relu=False, variant=DEFAULT_VARIANT):
    op = "gemm_mlp::linear"
    torch._check(x.dim() == 2 and weight.dim() == 2,
                 lambda: f"{op}: x and weight must be 2-D, got {tuple(x.shape)} and "
                         f"{tuple(weight.shape)}")
    _check_operands(op, (("x", x), ("weight", weight)))
    torch._check(x.shape[1] == weight.shape[1],
                 lambda: f"{op}: x is {tuple(x.shape)} and weight is {tuple(weight.shape)}; "
                         "x's columns must equal weight's")
    if bias is not None:
        _check_operands(op, (("bias", bias),))
        torch._check(bias.dim() == 1 and bias.shape[0] == weight.shape[0],
                     lambda: f"{op}: bias is {tuple(bias.shape)}, weight has "
                             f"{weight.shape[0]} rows")
    return x.new_empty((x.shape[0], weight.shape[0]))
