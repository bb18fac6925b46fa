"""PyTorch.Integration: the ops inside PyTorch's machinery.

torch.compile(fullgraph=True) traces a two-layer MLP through them, forward and backward, and
gives what eager gives; a CUDA graph captures them (after a warm-up, and for shapes never run
before, whose scratch memory comes from the graph's pool) and its replays are right; on a side
stream they run after the stream's earlier work and return before it is done (no host
synchronisation); fp32_accurate() routes a small model's layers and each function it names,
passes the rest through, and restores PyTorch's matmul setting; where the kernels do not serve
the GPU, fp32_accurate falls back to PyTorch with one warning. Without a GPU: the schemas, the
fake implementations on meta and fake tensors (torch.library.opcheck; torch.compile with the
aot_eager backend, forward and backward), and which functions fp32_accurate() routes and passes
through, on CPU tensors with the kernels mocked.
"""
import unittest
import warnings
from unittest import mock

import torch
import torch.nn.functional as F

import gemm_mlp_torch as gm
import gemm_mlp_torch._device as gm_device
from _support import Fp32MatmulTestCase, generator, matrix, needs_gpu, set_tf32


def mlp(x, w1, b1, w2, b2):
    return gm.linear(gm.linear(x, w1, b1, relu=True), w2, b2)


@needs_gpu
class Compile(Fp32MatmulTestCase, unittest.TestCase):
    def test_fullgraph_forward_and_backward_match_eager(self):
        gen = generator(21)
        params = [torch.randn(128, 64, device="cuda", generator=gen).mul_(0.1),
                  torch.randn(128, device="cuda", generator=gen),
                  torch.randn(10, 128, device="cuda", generator=gen).mul_(0.1),
                  torch.randn(10, device="cuda", generator=gen)]
        x = torch.randn(32, 64, device="cuda", generator=gen)
        eager = [p.clone().requires_grad_() for p in params]
        compiled = [p.clone().requires_grad_() for p in params]
        y_eager = mlp(x, *eager)
        y_eager.square().sum().backward()
        torch._dynamo.reset()
        y_compiled = torch.compile(mlp, fullgraph=True)(x, *compiled)
        y_compiled.square().sum().backward()
        for name, got, want in [("y", y_compiled, y_eager)] + [
                (f"grad {i}", c.grad, e.grad) for i, (c, e) in enumerate(zip(compiled, eager))]:
            rel = ((got - want).abs().max() / want.abs().max()).item()
            self.assertLess(rel, 1e-5, f"{name}: compiled differs from eager by {rel:.3g}")


class Tracing(unittest.TestCase):
    """What torch.compile traces with, no GPU needed: the schemas and the fake implementations."""

    def test_schemas(self):
        self.assertEqual(str(torch.ops.gemm_mlp.matmul.default._schema),
                         'gemm_mlp::matmul(Tensor a, Tensor b, str variant="default") -> Tensor')
        self.assertEqual(str(torch.ops.gemm_mlp.linear.default._schema),
                         "gemm_mlp::linear(Tensor x, Tensor weight, Tensor? bias=None, "
                         'bool relu=False, str variant="default") -> Tensor')

    def test_meta_tensors_give_the_shape(self):
        a = torch.empty(7, 5, device="meta")
        self.assertEqual(tuple(gm.matmul(a, torch.empty(5, 3, device="meta")).shape), (7, 3))
        self.assertEqual(tuple(gm.linear(a, torch.empty(4, 5, device="meta")).shape), (7, 4))
        x3 = torch.empty(2, 7, 5, device="meta")  # batch dimensions, reshaped to rows
        self.assertEqual(tuple(gm.linear(x3, torch.empty(4, 5, device="meta")).shape), (2, 7, 4))

    def test_fake_tensors_give_the_shape(self):
        from torch._subclasses.fake_tensor import FakeTensorMode

        with FakeTensorMode() as mode:
            x = mode.from_tensor(torch.empty(7, 5, device="meta"))
            weight = mode.from_tensor(torch.empty(4, 5, device="meta"))
            bias = mode.from_tensor(torch.empty(4, device="meta"))
            y = gm.linear(x, weight, bias, relu=True)
            c = gm.matmul(x, weight.t())
        self.assertEqual((tuple(y.shape), y.dtype), ((7, 4), torch.float32))
        self.assertEqual(tuple(c.shape), (7, 4))

    def test_compile_traces_forward_and_backward_on_meta_tensors(self):
        # aot_eager: Dynamo and AOTAutograd trace through the fake implementations and the C++
        # autograd, with no compiler behind them (and no GPU).
        x = torch.empty(8, 6, device="meta")
        params = [torch.empty(*shape, device="meta", requires_grad=True)
                  for shape in ((5, 6), (5,), (3, 5), (3,))]
        torch._dynamo.reset()
        y = torch.compile(mlp, backend="aot_eager", fullgraph=True)(x, *params)
        y.sum().backward()
        self.assertEqual(tuple(y.shape), (8, 3))
        self.assertEqual([tuple(p.grad.shape) for p in params], [(5, 6), (5,), (3, 5), (3,)])

    def test_opcheck_on_meta_tensors(self):
        def meta(*shape):
            return torch.empty(*shape, device="meta", requires_grad=True)

        for op, args, kwargs in (
                (torch.ops.gemm_mlp.matmul.default, (meta(7, 5), meta(5, 3)), {}),
                (torch.ops.gemm_mlp.matmul.default, (meta(7, 5), meta(3, 5).t()), {}),
                (torch.ops.gemm_mlp.linear.default, (meta(7, 5), meta(4, 5), meta(4)),
                 {"relu": True}),
                (torch.ops.gemm_mlp.linear.default, (meta(7, 5), meta(4, 5)), {})):
            torch.library.opcheck(op, args, kwargs)  # schema, autograd, fake, AOT dispatch


@needs_gpu
class Graphs(Fp32MatmulTestCase, unittest.TestCase):
    def _capture_and_replay(self, shapes, warm_up):
        """Captures one op call per (M, N, K, layout, epilogue), replays with new inputs copied in
        place, checks each output."""
        gen = generator(22)
        cases = []
        for m, n, k, layout in shapes:
            a, b = matrix(m, k, gen, layout[0]), matrix(k, n, gen, layout[1])
            cases.append((a, b, torch.randn(n, device="cuda", generator=gen)))

        def calls():
            return [gm.linear(a, b.t(), bias, relu=True) for a, b, bias in cases]

        if warm_up:  # on a side stream, as PyTorch's CUDA graph docs do
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                calls()
            torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outputs = calls()
        for replay in range(2):
            for a, b, bias in cases:
                for t in (a, b, bias):
                    t.copy_(torch.randn(t.shape, device="cuda", generator=gen))
            graph.replay()
            torch.cuda.synchronize()
            for (a, b, bias), y, (m, n, k, layout) in zip(cases, outputs, shapes):
                self.assertWithinBound(y, a, b, bias, relu=True,
                                       what=f"replay {replay}: {m}x{n}x{k} {layout}")

    def test_capture_after_a_warm_up(self):
        self._capture_and_replay([(256, 1024, 784, "NT"), (256, 1024, 1024, "NN"),
                                  (1024, 784, 256, "TN"), (37, 45, 129, "TT")], warm_up=True)

    def test_capture_of_shapes_never_run_before(self):
        # K split across blocks (partial sums in scratch memory), and a TN on K-major copies.
        self._capture_and_replay([(250, 1030, 790, "NT"), (3601, 3605, 37, "TN")], warm_up=False)


@needs_gpu
class Streams(Fp32MatmulTestCase, unittest.TestCase):
    def test_side_stream_order_and_no_host_synchronisation(self):
        gen = generator(23)
        a, b = matrix(512, 512, gen), matrix(512, 512, gen, "T")
        new_a = torch.randn(512, 512, device="cuda", generator=gen)
        # The same calls once before, so that no first launch (a kernel's lazy loading) waits.
        gm.matmul(a, b), gm.linear(a, b.t(), relu=True)
        torch.cuda.synchronize()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            torch.cuda._sleep(1_000_000_000)  # about 0.5 s of spinning on the side stream
            a.copy_(new_a)  # after the sleep, on the side stream
            c = gm.matmul(a, b)
            y = gm.linear(a, b.t(), relu=True)
            pending = not side.query()
        self.assertTrue(pending, "the calls waited for the side stream's work (a host sync)")
        side.synchronize()
        # On any other stream they would have run before the copy and read the old a.
        self.assertWithinBound(c, new_a, b, what="matmul on the side stream")
        self.assertWithinBound(y, new_a, b, relu=True, what="linear on the side stream")


@needs_gpu
class Fp32Accurate(Fp32MatmulTestCase, unittest.TestCase):
    def test_small_model_forward_and_backward(self):
        # Tanh rather than ReLU: a ReLU input within rounding of 0 could flip between fp32 and
        # fp64 and move a gradient by more than rounding.
        torch.manual_seed(24)
        model = torch.nn.Sequential(torch.nn.Linear(200, 300), torch.nn.Tanh(),
                                    torch.nn.Linear(300, 10)).cuda()
        model64 = torch.nn.Sequential(torch.nn.Linear(200, 300), torch.nn.Tanh(),
                                      torch.nn.Linear(300, 10)).cuda().double()
        model64.load_state_dict(model.state_dict())
        x = torch.randn(1000, 200, device="cuda")
        set_tf32(True)  # the user's setting; inside, fp32 accuracy regardless
        with gm.fp32_accurate() as mode:
            self.assertEqual(torch.get_float32_matmul_precision(), "highest")
            y = model(x)
            y.square().mean().backward()
        self.assertEqual(torch.get_float32_matmul_precision(), "high", "setting not restored")
        self.assertEqual(mode.routed, 2, "the two Linear layers")
        y64 = model64(x.double())
        y64.square().mean().backward()
        for name, got, want in [("y", y, y64)] + [
                (name, p.grad, p64.grad) for (name, p), p64 in
                zip(model.named_parameters(), model64.parameters())]:
            rel = ((got.double() - want).abs().max() / want.abs().max()).item()
            self.assertLess(rel, 1e-5, f"{name}: relative error {rel:.3g} (TF32 gives ~1e-3)")

    def test_each_function_is_routed(self):
        gen = generator(25)
        a, b = matrix(65, 130, gen), matrix(130, 33, gen)
        a3 = torch.randn(2, 3, 130, device="cuda", generator=gen)
        bias = torch.randn(33, device="cuda", generator=gen)
        c0 = torch.randn(65, 33, device="cuda", generator=gen)
        set_tf32(True)
        with gm.fp32_accurate() as mode:
            results = [
                ("torch.matmul", torch.matmul(a, b), None, 1, 0),
                ("Tensor.matmul", a.matmul(b), None, 1, 0),
                ("@", a @ b, None, 1, 0),
                ("torch.mm", torch.mm(a, b), None, 1, 0),
                ("Tensor.mm", a.mm(b), None, 1, 0),
                ("addmm, bias", torch.addmm(bias, a, b), bias, 1, 0),
                ("Tensor.addmm", bias.addmm(a, b), bias, 1, 0),
                ("addmm, matrix, alpha, beta", torch.addmm(c0, a, b, beta=0.5, alpha=2.0), None, 2,
                 0.5),
                ("F.linear", F.linear(a, b.t(), bias), bias, 1, 0),
            ]
            batched = a3 @ b
            linear3 = F.linear(a3, b.t(), bias)
        self.assertEqual(mode.routed, len(results) + 2)
        self.assertEqual(mode.passed_through, 0)
        for name, got, with_bias, alpha, beta in results:
            want = alpha * (a.double() @ b.double()) + beta * c0.double()
            if with_bias is not None:
                want = want + with_bias.double()
            scale = (abs(alpha) * (a.double().abs() @ b.double().abs())
                     + abs(beta) * c0.double().abs())
            if with_bias is not None:
                scale = scale + with_bias.double().abs()
            ratio = ((got.double() - want).abs() / (1e-5 * scale + 1e-20)).max().item()
            self.assertLessEqual(ratio, 1.0, f"{name}: {ratio:.3g}x the bound")
        self.assertEqual(tuple(batched.shape), (2, 3, 33))
        self.assertWithinBound(batched.reshape(6, 33), a3.reshape(6, 130), b, what="3-D @ 2-D")
        self.assertWithinBound(linear3.reshape(6, 33), a3.reshape(6, 130), b, bias,
                               what="F.linear on 3-D input")

    def test_the_rest_passes_through(self):
        gen = generator(26)
        a, b = matrix(16, 8, gen), matrix(8, 4, gen)
        with gm.fp32_accurate() as mode:
            half = torch.matmul(a.half(), b.half())
            cpu = torch.mm(a.cpu(), b.cpu())
            batched = torch.matmul(a.expand(3, 16, 8), b.expand(3, 8, 4))  # a batch of B's
            vector = torch.matmul(a, b[:, 0])  # matrix @ vector
            other = torch.relu(a)  # not a matrix product: not counted
        self.assertEqual(mode.routed, 0)
        self.assertEqual(mode.passed_through, 4)
        self.assertEqual(half.dtype, torch.float16)
        self.assertEqual(cpu.device.type, "cpu")
        self.assertTrue(torch.allclose(batched[1], a @ b, rtol=1e-5, atol=1e-5))
        self.assertEqual(tuple(vector.shape), (16,))
        self.assertTrue(torch.equal(other, torch.relu(a)))

    def test_unserved_gpu_falls_back_with_one_warning(self):
        gen = generator(27)
        a, b = matrix(40, 50, gen), matrix(50, 60, gen)
        gm_device._warned.clear()
        with mock.patch.object(gm_device.torch.cuda, "get_device_capability", return_value=(7, 5)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with gm.fp32_accurate() as mode:
                    c1 = torch.matmul(a, b)
                    c2 = F.linear(a, b.t())
                layer = gm.Linear(50, 60, device="cuda")
                layer(a)
        gm_device._warned.clear()
        ours = [w for w in caught if "gemm_mlp_torch" in str(w.message)]
        self.assertEqual(len(ours), 1, [str(w.message) for w in ours])
        self.assertIn("compute capability 7.5", str(ours[0].message))
        self.assertIn("instead", str(ours[0].message))
        self.assertEqual((mode.routed, mode.passed_through), (0, 2))
        self.assertWithinBound(c1, a, b, what="fallback matmul (TF32 off)")
        self.assertWithinBound(c2, a, b, what="fallback linear (TF32 off)")


class Fp32AccurateRouting(unittest.TestCase):
    """Which functions fp32_accurate() intercepts, as this torch passes them to a
    TorchFunctionMode, and what it makes of their arguments, on CPU tensors: the kernels' check
    (float32 CUDA on a GPU they serve) is mocked to take float32 CPU tensors, and the ops to
    record their calls and compute with torch."""

    def setUp(self):
        self.calls = []

        def matmul(a, b, variant):
            self.calls.append(("matmul", variant))
            return torch.mm(a, b)

        def linear(x, weight, bias=None, relu=False, variant=None):
            self.calls.append(("linear", variant))
            return F.linear(x, weight, bias)

        def served(*tensors):
            return all(isinstance(t, torch.Tensor) and t.dtype == torch.float32 for t in tensors)

        for target, name, value in ((gm.modules, "_served", served),
                                    (gm.modules._ops, "matmul", matmul),
                                    (gm.modules._ops, "linear", linear)):
            patcher = mock.patch.object(target, name, value)
            patcher.start()
            self.addCleanup(patcher.stop)
        set_tf32(True)
        self.addCleanup(set_tf32, False)

    def test_each_function_is_routed(self):
        torch.manual_seed(28)
        a, b, a3 = torch.randn(6, 5), torch.randn(5, 4), torch.randn(2, 3, 5)
        bias, c0 = torch.randn(4), torch.randn(6, 4)
        layer = torch.nn.Linear(5, 4)
        with gm.fp32_accurate(variant="fast") as mode:
            self.assertEqual(torch.get_float32_matmul_precision(), "highest")
            got = {
                "torch.matmul": torch.matmul(a, b),
                "Tensor.matmul": a.matmul(b),
                "@": a @ b,
                "torch.mm": torch.mm(a, b),
                "Tensor.mm": a.mm(b),
                "addmm, bias": torch.addmm(bias, a, b),
                "Tensor.addmm": bias.addmm(a, b),
                "addmm, alpha, beta": torch.addmm(c0, a, b, beta=0.5, alpha=2.0),
                "F.linear": F.linear(a, b.t(), bias),
                "nn.Linear": layer(a),
                "3-D @ 2-D": a3 @ b,
                "F.linear, 3-D": F.linear(a3, b.t()),
            }
        self.assertEqual(torch.get_float32_matmul_precision(), "high", "setting not restored")
        self.assertEqual((mode.routed, mode.passed_through), (len(got), 0))
        self.assertEqual({variant for _, variant in self.calls}, {"fast"})
        # Each bias (an addmm's 1-D input, a linear's bias) goes to the fused epilogue.
        self.assertEqual([op for op, _ in self.calls].count("linear"), 5)
        ab, a3b = a @ b, (a3.reshape(6, 5) @ b).reshape(2, 3, 4)
        want = dict.fromkeys(("torch.matmul", "Tensor.matmul", "@", "torch.mm", "Tensor.mm"), ab)
        want.update({"addmm, bias": ab + bias, "Tensor.addmm": ab + bias,
                     "addmm, alpha, beta": 2 * ab + 0.5 * c0, "F.linear": ab + bias,
                     "nn.Linear": a @ layer.weight.t() + layer.bias, "3-D @ 2-D": a3b,
                     "F.linear, 3-D": a3b})
        for name, value in got.items():
            self.assertEqual(value.shape, want[name].shape, name)
            self.assertTrue(torch.allclose(value, want[name], rtol=1e-5, atol=1e-5), name)

    def test_the_rest_passes_through(self):
        a, b = torch.randn(6, 5), torch.randn(5, 4)
        with gm.fp32_accurate() as mode:
            float64 = torch.mm(a.double(), b.double())
            batched = torch.matmul(a.expand(3, 6, 5), b.expand(3, 5, 4))  # a batch of B's
            vector = torch.matmul(a, b[:, 0])  # matrix @ vector
            out = torch.mm(a, b, out=torch.empty(6, 4))
            torch.relu(a)  # not a matrix product: not counted
        self.assertEqual((mode.routed, mode.passed_through), (0, 4))
        self.assertEqual(self.calls, [])
        self.assertEqual(float64.dtype, torch.float64)
        self.assertEqual((tuple(batched.shape), tuple(vector.shape)), ((3, 6, 4), (6,)))
        self.assertTrue(torch.allclose(out, a @ b))


if __name__ == "__main__":
    unittest.main()
