"""What the PyTorch op's tests share: operands in every storage layout, assertWithinBound, the
fp32 error bound against an fp64 reference (gemm_mlp_torch.accuracy), and needs_gpu, which skips
a test that runs the kernels where there is no GPU (the rest run on meta and CPU tensors)."""
import unittest
import warnings

import torch

from gemm_mlp_torch.accuracy import TOLERANCE, bound_ratio  # (importing the package loads the ops)

TOL_FP32, TOL_TF32 = TOLERANCE["fp32"], TOLERANCE["tf32"]

NO_GPU = "no usable CUDA device (torch.cuda.is_available() is False)"
needs_gpu = unittest.skipUnless(torch.cuda.is_available(), NO_GPU)


def generator(seed):
    return torch.Generator(device="cuda").manual_seed(seed)


def matrix(rows, cols, gen, layout="N", offset=0, pad=0):
    """A rows×cols float32 CUDA matrix of N(0, 1) values. Layout N: row-major with leading
    dimension cols + pad; T: the transpose of a cols×rows row-major matrix with leading dimension
    rows + pad (a .t() view). It starts `offset` floats into its storage (1 leaves it 4-byte
    aligned only). The padding holds NaN, so a kernel that reads it shows."""
    stored_rows, stored_cols = (rows, cols) if layout == "N" else (cols, rows)
    ld = stored_cols + pad
    storage = torch.full((offset + stored_rows * ld,), float("nan"), device="cuda")
    stored = storage[offset:].view(stored_rows, ld)[:, :stored_cols]
    stored.copy_(torch.randn(stored_rows, stored_cols, device="cuda", generator=gen))
    return stored if layout == "N" else stored.t()


def set_tf32(on):
    """PyTorch's own fp32 matmul on TF32 tensor cores (on) or in full fp32 (off)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        torch.set_float32_matmul_precision("high" if on else "highest")


class Fp32MatmulTestCase:
    """Mixin: PyTorch's own matmul in full fp32 for each test, as a test that changes it expects
    to find it; assertWithinBound."""

    def setUp(self):
        set_tf32(False)

    def tearDown(self):
        set_tf32(False)

    def assertWithinBound(self, c, a, b, bias=None, relu=False, tol=TOL_FP32, what=""):
        """c = a·b (+ bias, ReLU) within the bound; NaN fails."""
        ratio = bound_ratio(c, a, b, bias, relu, tol)
        self.assertLessEqual(ratio, 1.0, f"{what}: error {ratio:.3g}x the bound (tol {tol})")
        return ratio
