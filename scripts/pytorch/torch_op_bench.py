#!/usr/bin/env python3
"""The torch op (pytorch/) measured on a GPU: GEMMs against torch.matmul, a call's overhead, and an
MNIST MLP trained through fp32_accurate() against plain fp32.

    scripts/pytorch/torch_op_bench.py --out DIR [--library PATH] [--data-dir DIR] [--epochs N]

1. GEMMs -> DIR/torch_op_gemm.csv. At 4096³ and 8192³ (NN and NT) and at every GEMM of the three
   models' training steps (--models; forward NT, input gradient NN, weight gradient TN), on the
   same operands (transposed views, as a model has them):
     gemm_mlp    gemm_mlp_torch.matmul, the default variant (and any --variants)
     torch_fp32  torch.matmul with TF32 off (cuBLAS fp32)
     torch_tf32  torch.matmul with TF32 on
   tflops: from the median of --reps calls, each timed alone with CUDA events after the L2 is
   flushed (a 256 MB write) and after --warmup calls; err_ratio: the largest error over the fp32
   bound against fp64 (gemm_mlp_torch.accuracy; at most 1 within it); max_abs_err likewise.
2. Overhead -> DIR/torch_op_overhead.csv. Per call, for the op and for torch.matmul (TF32 off):
     graph_us   --calls calls captured in one CUDA graph, replayed: the kernels back to back
                (what a call costs the GPU, with the graph's ~1 µs launch);
     eager_us   the same calls made from Python back to back (the GPU idles between calls
                where the call's CPU side outlasts its kernels);
     host_us    the CPU time of a call (wall time of the loop, before waiting for the GPU);
     overhead_us = eager_us - graph_us, what calling from Python adds over the bare kernels.
3. Training -> DIR/torch_op_train.csv. scripts/pytorch/vs_pytorch.py's recipe and runs
   (gemm_mlp_tools/pytorch_baseline.py: eager, and the whole step in one CUDA graph) for
   --train-models, in fp32 (TF32 off), inside gemm_mlp_torch.fp32_accurate(), and in TF32:
   s/epoch (mean of --epochs after an untimed one), the speed-up over fp32 in the same mode, and
   test accuracy.

Also DIR/torch_op_bench.json (device, versions, date, every row) and Markdown tables on stdout.
Exit status 1 when a row failed (its note says why), 2 without PyTorch and a CUDA GPU or the op.
--help needs neither torch nor the op.
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, ".."))
from gemm_mlp_tools.atomic import atomic_write  # noqa: E402
from gemm_mlp_tools.formatted_rows import fmt, formatted_csv, markdown_table  # noqa: E402
from gemm_mlp_tools.model_list import parse_model, split_list  # noqa: E402

DEFAULT_MODELS = "784-1024-1024-10:256,784-512-512-10:128,784-4096-4096-10:512"
DEFAULT_TRAIN_MODELS = "784-1024-1024-10:256,784-4096-4096-10:512"
SQUARES = [(4096, 4096, 4096, "NN"), (4096, 4096, 4096, "NT"), (8192, 8192, 8192, "NN"),
           (8192, 8192, 8192, "NT")]
OVERHEAD_SHAPES = [(64, 64, 64, "NN"), (256, 1024, 784, "NT")]
GEMM_COLUMNS = ["m", "n", "k", "layout", "where", "system", "variant", "median_us", "tflops",
                "err_ratio", "max_abs_err", "note"]
OVERHEAD_COLUMNS = ["m", "n", "k", "layout", "system", "variant", "graph_us", "eager_us",
                    "host_us", "overhead_us", "note"]
TRAIN_COLUMNS = ["model", "batch", "mode", "precision", "s_per_epoch", "speedup_over_fp32",
                 "test_acc", "epochs", "note"]

torch = gm = accuracy = baseline = None  # imported in main(), after the arguments


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the CSV and JSON files")
    ap.add_argument("--library", help="libgemm_mlp_torch_ops.so (default: $GEMM_MLP_TORCH_LIBRARY, "
                    "else the one in pytorch/gemm_mlp_torch/)")
    ap.add_argument("--models", default=DEFAULT_MODELS, help="models whose step GEMMs to time")
    ap.add_argument("--train-models", default=DEFAULT_TRAIN_MODELS, help="models to train")
    ap.add_argument("--variants", default="", help="comma list of op variants besides the default")
    ap.add_argument("--reps", type=int, default=20, help="timed calls per GEMM")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls per GEMM first")
    ap.add_argument("--calls", type=int, default=200, help="calls per overhead measurement")
    ap.add_argument("--epochs", type=int, default=6, help="timed epochs per training run")
    ap.add_argument("--seed", type=int, default=1, help="initialisation and shuffle seed")
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data", "mnist"),
                    help="MNIST IDX files, raw or .gz")
    ap.add_argument("--skip", default="", help="comma list of parts to leave out: gemm, overhead, "
                    "train")
    args = ap.parse_args(argv)
    args.models = [parse_model(m, ap.error) for m in split_list(args.models)]
    args.train_models = [parse_model(m, ap.error) for m in split_list(args.train_models)]
    args.variants = split_list(args.variants)
    args.skip = set(split_list(args.skip))
    if args.skip - {"gemm", "overhead", "train"}:
        ap.error(f"--skip takes gemm, overhead and train, not {sorted(args.skip)}")
    for name in ("reps", "warmup", "calls", "epochs"):
        if getattr(args, name) < (0 if name == "warmup" else 1):
            ap.error(f"--{name} must be positive")
    return args


# --- 1. GEMMs ----------------------------------------------------------------------------------

def step_gemms(models):
    """(m, n, k, layout, where) of every GEMM of the models' training steps, each once. A layer
    in -> out at batch B: forward B×out×in NT, input gradient B×in×out NN (not the first layer),
    weight gradient out×in×B TN."""
    shapes = {}
    for name, sizes, batch in models:
        for i, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:])):
            found = [(batch, fan_out, fan_in, "NT")]
            if i > 0:
                found.append((batch, fan_in, fan_out, "NN"))
            found.append((fan_out, fan_in, batch, "TN"))
            for shape in found:
                shapes.setdefault(shape, []).append(f"{name} b{batch}")
    return [(*shape, " ".join(sorted(set(where)))) for shape, where in shapes.items()]


def operands(m, n, k, layout, gen):
    """a (M×K) and b (K×N) as the layout stores them: T operands are .t() views."""
    def make(rows, cols, op):
        if op == "N":
            return torch.randn(rows, cols, device="cuda", generator=gen)
        return torch.randn(cols, rows, device="cuda", generator=gen).t()
    return make(m, k, layout[0]), make(k, n, layout[1])


class L2Flush:
    """Evicts the L2 (50 MB on an H200) by writing a buffer several times its size."""

    def __init__(self):
        self.buffer = torch.empty(64 << 20, dtype=torch.float32, device="cuda")  # 256 MB

    def __call__(self):
        self.buffer.zero_()


def time_each_call(fn, reps, warmup, flush):
    """The median of `reps` calls of fn in microseconds, each after an L2 flush, timed with CUDA
    events."""
    for _ in range(warmup):
        fn()
    pairs = []
    for _ in range(reps):
        flush()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in pairs) * 1e3


def set_tf32(on):
    baseline.set_precision("tf32" if on else "fp32")


def gemm_systems(variants):
    """(system, variant, fn(a, b), tf32 setting) for each system timed."""
    systems = [("gemm_mlp", v, (lambda v: lambda a, b: gm.matmul(a, b, v))(v), False)
               for v in ["default"] + variants]
    systems += [("torch_fp32", "", torch.matmul, False), ("torch_tf32", "", torch.matmul, True)]
    return systems


def run_gemms(args, flush):
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    shapes = [(*s, "square") for s in SQUARES] + step_gemms(args.models)
    for m, n, k, layout, where in shapes:
        a, b = operands(m, n, k, layout, gen)
        for system, variant, fn, tf32 in gemm_systems(args.variants):
            row = dict(m=m, n=n, k=k, layout=layout, where=where, system=system,
                       variant=gm.default_variant() if variant == "default" else variant,
                       median_us=None, tflops=None, err_ratio=None, max_abs_err=None, note="")
            try:
                set_tf32(tf32)
                c = fn(a, b)
                row["err_ratio"] = accuracy.bound_ratio(c, a, b)
                row["max_abs_err"] = (c.double() - a.double() @ b.double()).abs().max().item()
                del c
                us = time_each_call(lambda: fn(a, b), args.reps, args.warmup, flush)
                row.update(median_us=us, tflops=2.0 * m * n * k / (us * 1e-6) / 1e12)
            except Exception as e:  # keep the other rows; exit 1 at the end
                traceback.print_exc()
                row["note"] = f"{type(e).__name__}: {e}"[:200]
            finally:
                set_tf32(False)
            rows.append(row)
            print(f"{m}x{n}x{k} {layout} {system} {row['variant']}: "
                  f"{fmt(row['tflops'], '.1f') or '-'} TFLOP/s, error "
                  f"{fmt(row['err_ratio'], '.3g') or '-'}x the fp32 bound {row['note']}",
                  file=sys.stderr)
        torch.cuda.empty_cache()
    return rows


# --- 2. Overhead -------------------------------------------------------------------------------

def overhead_row(m, n, k, layout, system, variant, fn, calls, gen):
    a, b = operands(m, n, k, layout, gen)
    for _ in range(3):  # warm-up, also on the side stream the capture uses
        fn(a, b)
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn(a, b)
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn(a, b)

    def gpu_us(run):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        host_start = time.perf_counter()
        run()
        host = time.perf_counter() - host_start
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) * 1e3 / calls, host * 1e6 / calls

    def eager():
        for _ in range(calls):
            fn(a, b)

    graph_us = statistics.median(gpu_us(graph.replay)[0] for _ in range(5))
    measured = [gpu_us(eager) for _ in range(5)]
    eager_us = statistics.median(e for e, _ in measured)
    host_us = statistics.median(h for _, h in measured)
    return dict(m=m, n=n, k=k, layout=layout, system=system, variant=variant, graph_us=graph_us,
                eager_us=eager_us, host_us=host_us, overhead_us=eager_us - graph_us, note="")


def run_overhead(args):
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    for m, n, k, layout in OVERHEAD_SHAPES:
        for system, variant, fn in (("gemm_mlp", gm.default_variant(), gm.matmul),
                                    ("torch_fp32", "", torch.matmul)):
            try:
                row = overhead_row(m, n, k, layout, system, variant, fn, args.calls, gen)
            except Exception as e:
                traceback.print_exc()
                row = dict(m=m, n=n, k=k, layout=layout, system=system, variant=variant,
                           graph_us=None, eager_us=None, host_us=None, overhead_us=None,
                           note=f"{type(e).__name__}: {e}"[:200])
            rows.append(row)
            print(f"overhead {m}x{n}x{k} {layout} {system}: graph {fmt(row['graph_us'], '.2f')} "
                  f"eager {fmt(row['eager_us'], '.2f')} host {fmt(row['host_us'], '.2f')} µs "
                  f"{row['note']}", file=sys.stderr)
    return rows


# --- 3. Training -------------------------------------------------------------------------------

def run_training(args):
    data = baseline.load_mnist(args.data_dir)
    rows = []
    for name, sizes, batch in args.train_models:
        for mode, run in (("eager", baseline.run_eager), ("graph", baseline.run_graph)):
            for precision in ("fp32", "fp32_accurate", "tf32"):
                row = dict(model=name, batch=batch, mode=mode, precision=precision,
                           s_per_epoch=None, speedup_over_fp32=None, test_acc=None,
                           epochs=args.epochs, note="")
                baseline.set_precision("tf32" if precision == "tf32" else "fp32")
                try:
                    if precision == "fp32_accurate":
                        with gm.fp32_accurate() as routing:
                            s, acc = run(data, sizes, batch, args.epochs, args.seed)
                        if routing.routed == 0:
                            row["note"] = "fp32_accurate routed no call"
                    else:
                        s, acc = run(data, sizes, batch, args.epochs, args.seed)
                    row.update(s_per_epoch=s, test_acc=100 * acc)
                except Exception as e:
                    traceback.print_exc()
                    row["note"] = f"{type(e).__name__}: {e}"[:200]
                finally:
                    baseline.set_precision("fp32")
                    baseline.release_memory()
                rows.append(row)
                print(f"{name} b{batch} {mode} {precision}: "
                      f"{fmt(row['s_per_epoch'], '.1f', 1e3) or '-'} ms/epoch, test accuracy "
                      f"{fmt(row['test_acc'], '.2f') or '-'}% {row['note']}", file=sys.stderr)
    for row in rows:
        ref = next((r["s_per_epoch"] for r in rows if r["precision"] == "fp32" and
                    (r["model"], r["mode"]) == (row["model"], row["mode"])), None)
        if row["s_per_epoch"] and ref:
            row["speedup_over_fp32"] = ref / row["s_per_epoch"]
    return rows


# --- Output ------------------------------------------------------------------------------------

FORMATS = {"median_us": ".2f", "tflops": ".2f", "err_ratio": ".4g", "max_abs_err": ".3g",
           "graph_us": ".2f", "eager_us": ".2f", "host_us": ".2f", "overhead_us": ".2f",
           "s_per_epoch": ".6f", "speedup_over_fp32": ".3f", "test_acc": ".2f"}


def main(argv=None):
    args = parse_args(argv)
    global torch, gm, accuracy, baseline
    if args.library:
        os.environ["GEMM_MLP_TORCH_LIBRARY"] = os.path.abspath(args.library)
    sys.path.insert(0, os.path.join(ROOT, "pytorch"))
    try:
        import torch
        from gemm_mlp_tools import pytorch_baseline as baseline
        import gemm_mlp_torch as gm
        from gemm_mlp_torch import accuracy
    except ImportError as e:
        print(f"torch_op_bench.py: needs PyTorch and the op library: {e}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_op_bench.py: needs a CUDA GPU", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    baseline.set_precision("fp32")
    results = {}
    if "gemm" not in args.skip:
        results["gemm"] = (GEMM_COLUMNS, run_gemms(args, L2Flush()))
    if "overhead" not in args.skip:
        results["overhead"] = (OVERHEAD_COLUMNS, run_overhead(args))
    if "train" not in args.skip:
        results["train"] = (TRAIN_COLUMNS, run_training(args))
    for part, (columns, rows) in results.items():
        path = os.path.join(args.out, f"torch_op_{part}.csv")
        atomic_write(path, formatted_csv(columns, rows, FORMATS))
        print(f"wrote {path}", file=sys.stderr)
        print(f"## {part}\n\n" + markdown_table(columns, rows, FORMATS))
    sidecar = os.path.join(args.out, "torch_op_bench.json")
    atomic_write(sidecar, json.dumps(
        {**baseline.environment(), "default_variant": gm.default_variant(),
         "date": datetime.datetime.now(datetime.timezone.utc).isoformat("T", "seconds"),
         "reps": args.reps, "warmup": args.warmup, "calls": args.calls, "epochs": args.epochs,
         "seed": args.seed, **{part: rows for part, (_, rows) in results.items()}},
        indent=1) + "\n")
    print(f"wrote {sidecar}", file=sys.stderr)
    return 1 if any(r["note"] for _, rows in results.values() for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
