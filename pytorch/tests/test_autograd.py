"""PyTorch.Autograd: gradients through the ops against fp64, within the fp32 bound of each
backward GEMM; Linear as a drop-in for nn.Linear.

matmul: C = A·B, dA = dC·Bᵀ, dB = Aᵀ·dC. linear with ReLU: Y = relu(X·Wᵀ + b), dZ = dY where
Y > 0, dX = dZ·W (NN), dW = dZᵀ·X (TN), db = Σ_rows dZ. The fp64 reference takes the ReLU's
mask from the op's own output, so that an output within rounding of 0 cannot flip the mask
between the two and make the gradients differ by more than rounding.
"""
import unittest

import torch

import gemm_mlp_torch as gm
from _support import Fp32MatmulTestCase, generator, needs_gpu


@needs_gpu
class Autograd(Fp32MatmulTestCase, unittest.TestCase):
    def test_matmul_gradients_in_every_layout(self):
        gen = generator(11)
        m, n, k = 129, 257, 300
        for layout in ("NN", "NT", "TN", "TT"):
            # Leaves stored row-major as the layout says (A as M×K for N, K×M for T); the op
            # sees the T ones through .t(), and their gradients arrive transposed back.
            a_leaf = torch.randn(*((m, k) if layout[0] == "N" else (k, m)), device="cuda",
                                 generator=gen).requires_grad_()
            b_leaf = torch.randn(*((k, n) if layout[1] == "N" else (n, k)), device="cuda",
                                 generator=gen).requires_grad_()
            a = a_leaf if layout[0] == "N" else a_leaf.t()
            b = b_leaf if layout[1] == "N" else b_leaf.t()
            grad_c = torch.randn(m, n, device="cuda", generator=gen)
            gm.matmul(a, b).backward(grad_c)
            grad_a = a_leaf.grad if layout[0] == "N" else a_leaf.grad.t()
            grad_b = b_leaf.grad if layout[1] == "N" else b_leaf.grad.t()
            self.assertWithinBound(grad_a, grad_c, b.detach().t(), what=f"{layout} dA = dC.B^T")
            self.assertWithinBound(grad_b, a.detach().t(), grad_c, what=f"{layout} dB = A^T.dC")

    def test_linear_gradients_with_bias_and_relu(self):
        gen = generator(12)
        m, n, k = 256, 1024, 784  # the default model's first layer at batch 256
        for relu in (False, True):
            x = torch.randn(m, k, device="cuda", generator=gen).requires_grad_()
            weight = torch.randn(n, k, device="cuda", generator=gen).mul_(0.05).requires_grad_()
            bias = torch.randn(n, device="cuda", generator=gen).requires_grad_()
            y = gm.linear(x, weight, bias, relu=relu)
            grad_y = torch.randn(m, n, device="cuda", generator=gen)
            y.backward(grad_y)
            grad_z = torch.where(y.detach() > 0, grad_y, 0.0) if relu else grad_y
            self.assertWithinBound(x.grad, grad_z, weight.detach(), what=f"relu {relu}: dX")
            self.assertWithinBound(weight.grad, grad_z.t(), x.detach(), what=f"relu {relu}: dW")
            db = grad_z.double().sum(0)
            err = (bias.grad.double() - db).abs() / (1e-5 * grad_z.double().abs().sum(0) + 1e-20)
            self.assertLessEqual(err.max().item(), 1.0, f"relu {relu}: db")

    def test_only_the_gradients_asked_for(self):
        gen = generator(13)
        x = torch.randn(64, 32, device="cuda", generator=gen)  # no gradient wanted
        weight = torch.randn(16, 32, device="cuda", generator=gen).requires_grad_()
        gm.linear(x, weight).sum().backward()
        self.assertIsNone(x.grad)
        ones = torch.ones(64, 16, device="cuda")
        self.assertWithinBound(weight.grad, ones.t(), x, what="dW of a sum")

    def test_linear_is_a_drop_in_for_nn_linear(self):
        torch.manual_seed(14)
        ref = torch.nn.Linear(100, 30).cuda()
        ours = gm.Linear(100, 30, device="cuda")
        self.assertEqual(ref.state_dict().keys(), ours.state_dict().keys())
        ours.load_state_dict(ref.state_dict())
        ref.load_state_dict(ours.state_dict())
        shared = gm.Linear.from_linear(ref)
        self.assertIs(shared.weight, ref.weight)
        self.assertIn("variant='default'", repr(shared))
        x = torch.randn(4, 7, 100, device="cuda", requires_grad=True)
        for module in (ours, shared):
            y = module(x)
            self.assertEqual(tuple(y.shape), (4, 7, 30))
            self.assertWithinBound(y.detach().reshape(28, 30), x.detach().reshape(28, 100),
                                   ref.weight.detach().t(), ref.bias.detach(), what="forward")
        no_bias = gm.Linear(100, 30, bias=False, device="cuda")
        self.assertIsNone(no_bias.bias)
        self.assertEqual(tuple(no_bias(x).shape), (4, 7, 30))
        # Gradients: the same as nn.Linear's in fp64.
        ref64 = torch.nn.Linear(100, 30).cuda().double()
        ref64.load_state_dict(ref.state_dict())
        x64 = x.detach().double().requires_grad_()
        ref64(x64).square().sum().backward()
        shared(x).square().sum().backward()
        for name, got, want in (("dx", x.grad, x64.grad),
                                ("dW", ref.weight.grad, ref64.weight.grad),
                                ("db", ref.bias.grad, ref64.bias.grad)):
            rel = ((got.double() - want).abs().max() / want.abs().max()).item()
            self.assertLess(rel, 1e-5, f"{name}: relative error {rel:.3g}")


class AutogradOnMeta(unittest.TestCase):
    """The C++ autograd on meta tensors, whose GEMMs are the fake implementations: what is saved,
    which gradients are computed, an absent bias; shapes only, no GPU."""

    def test_linear_gradients_have_their_inputs_shapes(self):
        for with_bias, relu in ((True, True), (True, False), (False, True)):
            x = torch.empty(6, 5, device="meta", requires_grad=True)
            weight = torch.empty(4, 5, device="meta", requires_grad=True)
            bias = torch.empty(4, device="meta", requires_grad=True) if with_bias else None
            gm.linear(x, weight, bias, relu=relu).sum().backward()
            self.assertEqual(tuple(x.grad.shape), (6, 5))
            self.assertEqual(tuple(weight.grad.shape), (4, 5))
            if with_bias:
                self.assertEqual(tuple(bias.grad.shape), (4,))

    def test_matmul_gradients_only_where_asked(self):
        a = torch.empty(6, 5, device="meta")
        b_leaf = torch.empty(3, 5, device="meta", requires_grad=True)
        c = gm.matmul(a, b_leaf.t())  # a transposed view
        self.assertEqual(tuple(c.shape), (6, 3))
        c.sum().backward()
        self.assertIsNone(a.grad)
        self.assertEqual(tuple(b_leaf.grad.shape), (3, 5))


if __name__ == "__main__":
    unittest.main()
