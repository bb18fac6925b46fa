"""The fp32 error bound the kernels promise (kernels/gemm.h, tolerance()), against an fp64
reference, per element of C = A·B (+ bias, then ReLU):

    |c − ref| ≤ tol·(Σ_k |a_ik·b_kj| + |bias_j|) + 1e-20,   tol = 1e-5 (fp32), 2e-3 (TF32)
"""
import torch

TOLERANCE = {"fp32": 1e-5, "tf32": 2e-3}
FLOOR = 1e-20


def bound_ratio(c, a, b, bias=None, relu=False, tol=TOLERANCE["fp32"]):
    """The largest |c − ref| over the bound, ref computed in fp64 from a and b (any float
    tensors, a M×K, b K×N): at most 1 where c is within it; NaN where c holds a NaN."""
    a64, b64 = a.double(), b.double()
    ref, scale = a64 @ b64, a64.abs() @ b64.abs()
    if bias is not None:
        ref, scale = ref + bias.double(), scale + bias.double().abs()
    if relu:
        ref = ref.clamp_min(0)  # ReLU shrinks no difference: the bound holds through it
    ratio = ((c.double() - ref).abs() / (tol * scale + FLOOR)).max()
    return float("nan") if torch.isnan(c).any() else ratio.item()
