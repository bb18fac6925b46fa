"""gemm-mlp's GEMM kernels in PyTorch: fp32 accuracy at tensor-core speed (3×TF32 on Hopper).

    import gemm_mlp_torch as gm
    y = gm.matmul(a, b)                      # a @ b, float32 CUDA; a.t()-style views read in place
    y = gm.linear(x, w, b, relu=True)        # relu(x @ w.T + b), bias and ReLU fused
    layer = gm.Linear(784, 1024)             # a drop-in nn.Linear
    with gm.fp32_accurate():                 # existing code's fp32 matmul/mm/addmm/linear
        loss = model(x).logsumexp(1).mean()  # run on the kernels, forward and backward

The ops are torch.ops.gemm_mlp.matmul and torch.ops.gemm_mlp.linear (differentiable, traceable by
torch.compile, capturable in CUDA graphs). variant= picks any device variant of gemm_bench --list;
"default" is tf32x3_fast on Hopper, fast elsewhere. docs/USAGE.md ("From PyTorch") has the details.
"""

from ._library import load as _load

_load()

from . import accuracy  # noqa: E402
from ._device import kernels_serve  # noqa: E402
from ._ops import DEFAULT_VARIANT, default_variant, linear, matmul, variants  # noqa: E402
from .modules import Linear, fp32_accurate  # noqa: E402

__all__ = ["DEFAULT_VARIANT", "Linear", "accuracy", "default_variant", "fp32_accurate",
           "kernels_serve", "linear", "matmul", "variants"]
