"""PyTorch.Errors: every bad input gets a RuntimeError that names the problem, never a result:
CPU tensors, each other dtype, operands on two GPUs, shapes that do not fit (dimensions,
mismatched sizes, a bias of the wrong length, sizes past the kernels' 32-bit range), unknown and
host variants, a variant this GPU cannot run; the same shape errors while tracing; the non-Hopper
default's warning; a missing library at import.
"""
import os
import subprocess
import sys
import unittest
import warnings

import torch

import gemm_mlp_torch as gm
from _support import Fp32MatmulTestCase, needs_gpu


def cuda(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda").to(dtype)


class Refusals:
    def assertRefused(self, call, *texts):
        with self.assertRaises(RuntimeError) as caught:
            call()
        for text in texts:
            self.assertIn(text, str(caught.exception))


@needs_gpu
class Errors(Refusals, Fp32MatmulTestCase, unittest.TestCase):
    def test_cpu_tensors(self):
        a, b = torch.randn(4, 3), torch.randn(3, 2)
        self.assertRefused(lambda: gm.matmul(a, b), "gemm_mlp::matmul", "a is on cpu",
                           "CUDA tensors only")
        self.assertRefused(lambda: gm.matmul(cuda(4, 3), b), "b is on cpu")
        self.assertRefused(lambda: gm.linear(cuda(4, 3), cuda(2, 3), torch.randn(2)),
                           "gemm_mlp::linear", "bias is on cpu")

    def test_other_dtypes(self):
        for dtype, name in ((torch.float16, "Half"), (torch.bfloat16, "BFloat16"),
                            (torch.float64, "Double")):
            self.assertRefused(lambda: gm.matmul(cuda(4, 3, dtype=dtype), cuda(3, 2)),
                               f"a is {name}", "float32 only")
            self.assertRefused(lambda: gm.linear(cuda(4, 3), cuda(2, 3, dtype=dtype)),
                               f"weight is {name}", "float32 only")
            self.assertRefused(lambda: gm.linear(cuda(4, 3), cuda(2, 3), cuda(2, dtype=dtype)),
                               f"bias is {name}")
        self.assertRefused(lambda: gm.matmul(cuda(4, 3), cuda(3, 2).int()), "b is Int")

    def test_two_gpus(self):
        if torch.cuda.device_count() < 2:
            return  # one GPU: nothing to mix
        other = torch.randn(3, 2, device="cuda:1")
        self.assertRefused(lambda: gm.matmul(cuda(4, 3), other), "b is on cuda:1",
                           "all must be on one GPU")

    def test_shapes_that_do_not_fit(self):
        self.assertRefused(lambda: gm.matmul(cuda(4), cuda(4, 2)), "a must be 2-D", "[4]")
        self.assertRefused(lambda: gm.matmul(cuda(4, 3), cuda(2, 3, 2)), "b must be 2-D")
        self.assertRefused(lambda: gm.matmul(cuda(4, 3), cuda(4, 2)), "a is [4, 3]",
                           "b is [4, 2]", "a's columns must equal b's rows")
        self.assertRefused(lambda: torch.ops.gemm_mlp.linear(cuda(5, 4, 3), cuda(2, 3)),
                           "x must be 2-D")
        self.assertRefused(lambda: gm.linear(cuda(4, 3), cuda(2, 5)), "x's columns must equal")
        self.assertRefused(lambda: gm.linear(cuda(4, 3), cuda(2, 3), cuda(3)), "bias has 3 values",
                           "weight has 2 rows")
        self.assertRefused(lambda: gm.linear(cuda(4, 3), cuda(2, 3), cuda(1, 2)),
                           "bias must be 1-D")
        self.assertRefused(lambda: gm.linear(torch.tensor(1.0, device="cuda"), cuda(2, 1)),
                           "at least one dimension")
        # 2^31 rows (stride 0: no memory), one past the kernels' int range; refused before any
        # copy of the expanded operand.
        huge = torch.ones(1, 1, device="cuda").expand(2**31, 1)
        self.assertRefused(lambda: gm.matmul(huge, cuda(1, 1)), "a has shape [2147483648, 1]",
                           "does not fit the kernels' 32-bit sizes")

    def test_shape_errors_while_tracing(self):
        def bad(a, b):
            return gm.matmul(a, b)

        torch._dynamo.reset()
        with self.assertRaises(Exception) as caught:
            torch.compile(bad, fullgraph=True)(cuda(4, 3), cuda(4, 2))
        self.assertIn("a's columns must equal b's rows", str(caught.exception))

    def test_variants(self):
        a, b = cuda(4, 3), cuda(3, 2)
        self.assertRefused(lambda: gm.matmul(a, b, variant="nope"), "unknown variant 'nope'",
                           "tf32x3_fast", "or 'default'")
        self.assertRefused(lambda: gm.matmul(a, b, variant="cpu"), "variant 'cpu' runs on the host")
        unavailable = {name: why for name, (_, why) in gm.variants().items() if why}
        if torch.cuda.get_device_capability() == (9, 0):
            self.assertEqual(unavailable, {}, "every variant runs on Hopper")
        for name, why in unavailable.items():
            self.assertRefused(lambda: gm.matmul(a, b, variant=name),
                               f"variant '{name}' cannot run on", why)

    def test_default_off_hopper_warns_once_and_runs_fast(self):
        if torch.cuda.get_device_capability() == (9, 0):
            return  # on Hopper the default is tf32x3_fast (test_accuracy.py)
        a, b = cuda(64, 32), cuda(32, 16)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = gm.matmul(a, b)
            gm.matmul(a, b)
        ours = [w for w in caught if "is not a Hopper GPU" in str(w.message)]
        self.assertEqual(len(ours), 1)  # the first default call of this process; then no more
        self.assertTrue(torch.equal(c, gm.matmul(a, b, variant=gm.default_variant())))


class ErrorsWithoutGpu(Refusals, unittest.TestCase):
    """What is refused before any kernel runs: CPU tensors (the op's CPU kernel says so by name),
    and bad dtypes and shapes on meta tensors (the fake implementations, as while tracing)."""

    def test_cpu_tensors(self):
        a, b = torch.randn(4, 3), torch.randn(3, 2)
        self.assertRefused(lambda: gm.matmul(a, b), "gemm_mlp::matmul", "a is on cpu",
                           "CUDA tensors only")
        self.assertRefused(lambda: gm.matmul(a.half(), b), "a is on cpu")
        self.assertRefused(lambda: gm.linear(a, b.t(), torch.randn(2), relu=True),
                           "gemm_mlp::linear", "x is on cpu")

    def test_meta_dtypes_and_shapes(self):
        def meta(*shape, dtype=torch.float32):
            return torch.empty(*shape, device="meta", dtype=dtype)

        self.assertRefused(lambda: gm.matmul(meta(4, 3, dtype=torch.float16), meta(3, 2)),
                           "gemm_mlp::matmul", "a is torch.float16", "float32 only")
        self.assertRefused(lambda: gm.linear(meta(4, 3), meta(2, 3), meta(2, dtype=torch.float64)),
                           "bias is torch.float64")
        self.assertRefused(lambda: gm.matmul(meta(4), meta(4, 2)), "must be 2-D")
        self.assertRefused(lambda: gm.matmul(meta(4, 3), meta(4, 2)),
                           "a's columns must equal b's rows")
        self.assertRefused(lambda: gm.linear(meta(4, 3), meta(2, 5)), "x's columns must equal")
        self.assertRefused(lambda: gm.linear(meta(4, 3), meta(2, 3), meta(3)), "bias is (3,)",
                           "weight has 2 rows")

    def test_missing_library_at_import(self):
        env = dict(os.environ, GEMM_MLP_TORCH_LIBRARY="/nonexistent/libgemm_mlp_torch_ops.so")
        package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        run = subprocess.run([sys.executable, "-c", "import gemm_mlp_torch"], env=env,
                             cwd=package_dir, capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("ImportError", run.stderr)
        self.assertIn("/nonexistent/libgemm_mlp_torch_ops.so, which does not exist", run.stderr)
        self.assertIn("scripts/pytorch/build_op.sh", run.stderr)


if __name__ == "__main__":
    unittest.main()
