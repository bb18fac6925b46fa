"""PyTorch.Accuracy: the ops against an fp64 reference, within the fp32 bound (_support.py).

Odd shapes in all four layouts (transposed views read in place), storage offsets that leave the
operands 4-byte aligned only, padded rows (NaN in the padding), operands that must be copied;
linear's bias and ReLU epilogues; every device variant by name, in its own precision's bound;
empty dimensions. And the control: on the same data, TF32 (torch.matmul with TF32 on) misses the
bound that the op meets.
"""
import unittest

import torch

import gemm_mlp_torch as gm
from _support import (TOL_FP32, TOL_TF32, Fp32MatmulTestCase, bound_ratio, generator, matrix,
                      needs_gpu, set_tf32)

# M, N, K: single rows and columns, sizes that are no tile's multiple, the default model's first
# GEMM (K split across blocks), a narrow output, short K, and a TN large enough to run on K-major
# copies (scratch memory from PyTorch's allocator).
SHAPES = [(1, 1, 1), (1, 37, 5), (37, 1, 129), (17, 33, 65), (129, 257, 511), (256, 1024, 784),
          (300, 10, 1024), (1000, 999, 37)]
LAYOUTS = ["NN", "NT", "TN", "TT"]


@needs_gpu
class Accuracy(Fp32MatmulTestCase, unittest.TestCase):
    def test_odd_shapes_every_layout_offset_and_padding(self):
        gen = generator(1)
        for m, n, k in SHAPES:
            for layout in LAYOUTS:
                for offset, pad in ((0, 0), (1, 3)):
                    a = matrix(m, k, gen, layout[0], offset, pad)
                    b = matrix(k, n, gen, layout[1], 3 * offset, pad)
                    self.assertWithinBound(gm.matmul(a, b), a, b,
                                           what=f"{m}x{n}x{k} {layout} offset {offset} pad {pad}")

    def test_large_tn_on_k_major_copies(self):
        gen = generator(2)
        a, b = matrix(3601, 37, gen, "T"), matrix(37, 3605, gen, "N", offset=1)
        self.assertWithinBound(gm.matmul(a, b), a, b, what="3601x3605x37 TN")

    def test_other_strides_are_copied(self):
        gen = generator(3)
        wide = torch.randn(64, 2 * 96, device="cuda", generator=gen)
        a = wide[:, ::2]  # column step 2: neither row-major nor a transpose
        b = torch.randn(1, 40, device="cuda", generator=gen).expand(96, 40)  # stride 0
        c = gm.matmul(a, b)
        self.assertEqual(tuple(c.shape), (64, 40))
        self.assertTrue(c.is_contiguous())
        self.assertWithinBound(c, a, b, what="strided a, expanded b")

    def test_linear_epilogues(self):
        gen = generator(4)
        for m, n, k in ((256, 1024, 784), (33, 17, 129)):
            x = matrix(m, k, gen, offset=1)
            for weight_layout in "NT":  # weight row-major (out × in) or a transposed view
                weight = matrix(n, k, gen, weight_layout)
                bias = torch.randn(n, device="cuda", generator=gen)
                for with_bias in (False, True):
                    for relu in (False, True):
                        b = bias if with_bias else None
                        y = gm.linear(x, weight, b, relu=relu)
                        self.assertWithinBound(
                            y, x, weight.t(), b, relu,
                            what=f"{m}x{n}x{k} weight {weight_layout} bias {with_bias} relu {relu}")
                        if relu:
                            self.assertGreaterEqual(y.min().item(), 0.0)

    def test_linear_batch_dimensions(self):
        gen = generator(5)
        x = torch.randn(3, 5, 64, device="cuda", generator=gen)
        weight = torch.randn(48, 64, device="cuda", generator=gen)
        bias = torch.randn(48, device="cuda", generator=gen)
        y = gm.linear(x, weight, bias)
        self.assertEqual(tuple(y.shape), (3, 5, 48))
        self.assertWithinBound(y.reshape(15, 48), x.reshape(15, 64), weight.t(), bias)
        v = gm.linear(x[0, 0], weight, bias)  # one vector
        self.assertEqual(tuple(v.shape), (48,))

    def test_every_device_variant_by_name(self):
        gen = generator(6)
        cases = [(matrix(129, 511, gen), matrix(511, 257, gen, "T")),  # NT
                 (matrix(300, 256, gen, "T"), matrix(256, 700, gen))]  # TN
        table = gm.variants()
        self.assertIn("tf32x3_fast", table)
        self.assertIn("fast", table)
        for name, (precision, why) in table.items():
            if why:  # cannot run on this GPU: refused by name (test_errors.py)
                continue
            tol = TOL_TF32 if precision == "tf32" else TOL_FP32
            for a, b in cases:
                self.assertWithinBound(gm.matmul(a, b, variant=name), a, b, tol=tol,
                                       what=f"variant {name}")
            bias = torch.randn(257, device="cuda", generator=gen)
            a, b = cases[0]
            self.assertWithinBound(gm.linear(a, b.t(), bias, relu=True, variant=name), a, b, bias,
                                   relu=True, tol=tol, what=f"variant {name}, bias and ReLU")

    def test_default_variant_is_tf32x3_fast_on_hopper_else_fast(self):
        hopper = torch.cuda.get_device_capability() == (9, 0)
        self.assertEqual(gm.default_variant(), "tf32x3_fast" if hopper else "fast")
        gen = generator(7)
        a, b = matrix(256, 784, gen), matrix(784, 1024, gen, "T")
        self.assertTrue(torch.equal(gm.matmul(a, b), gm.matmul(a, b, gm.default_variant())))

    def test_empty_dimensions(self):
        x = torch.randn(0, 8, device="cuda")
        self.assertEqual(tuple(gm.matmul(x, torch.randn(8, 5, device="cuda")).shape), (0, 5))
        self.assertEqual(tuple(gm.matmul(torch.randn(4, 8, device="cuda"),
                                         torch.randn(8, 0, device="cuda")).shape), (4, 0))
        zero_k = gm.matmul(torch.randn(4, 0, device="cuda"), torch.randn(0, 5, device="cuda"))
        self.assertTrue(torch.equal(zero_k, torch.zeros(4, 5, device="cuda")))
        bias = torch.tensor([-1.0, 2.0, 3.0], device="cuda")
        y = gm.linear(torch.randn(2, 0, device="cuda"), torch.randn(3, 0, device="cuda"), bias,
                      relu=True)
        self.assertTrue(torch.equal(y, torch.tensor([[0.0, 2.0, 3.0]] * 2, device="cuda")))

    def test_tf32_misses_the_bound_the_op_meets(self):
        # Zero-mean data: TF32's input rounding (2^-11 relative) leaves errors of about
        # 6e-4/sqrt(K) of Σ|a·b| per element, 2e-5 at K = 1024, several times that at the worst
        # of a million elements; the fp32 bound is 1e-5.
        gen = generator(8)
        a, b = matrix(1024, 1024, gen), matrix(1024, 1024, gen)
        set_tf32(True)
        tf32 = bound_ratio(torch.matmul(a, b), a, b)
        set_tf32(False)
        fp32 = bound_ratio(torch.matmul(a, b), a, b)
        ours = bound_ratio(gm.matmul(a, b), a, b)
        self.assertGreater(tf32, 1.0, f"TF32 within the fp32 bound ({tf32:.3g}x): no control")
        self.assertLessEqual(fp32, 1.0, f"cuBLAS fp32 at {fp32:.3g}x the bound")
        self.assertLessEqual(ours, 1.0, f"the op at {ours:.3g}x the bound")
        print(f"\n  1024^3 error over the fp32 bound: TF32 {tf32:.3g}, cuBLAS fp32 {fp32:.3g}, "
              f"gemm_mlp {ours:.3g}")


if __name__ == "__main__":
    unittest.main()
