#!/usr/bin/env python3
"""Training time of an MNIST MLP: PyTorch eager, PyTorch in one CUDA graph, gemm-mlp's train_mlp.

    scripts/vs_pytorch.py                     the three models, fp32 and tf32, 6 epochs
    scripts/vs_pytorch.py --models 784-1024-1024-10:256 --precisions tf32 --skip-ours

One recipe everywhere, train_mlp's defaults: Linear-ReLU-...-Linear; weights U(+-sqrt(6/in)),
biases U(+-1/sqrt(in)); pixels (v/255 - 0.1307) / 0.3081 as data/mnist.h has it; mean softmax
cross-entropy; SGD lr 0.1, momentum 0.9, weight decay 5e-4, the lr decayed per step by a cosine
to 0 over the run; reshuffled every epoch, the last partial batch kept.

  pytorch_eager  a plain loop (default SGD, the lr set from the host every step).
  pytorch_graph  one training step in one CUDA graph, replayed once per full batch: the gather
                 from the device-resident data through a device permutation and a device
                 position counter, the lr from a device step counter, forward, loss, backward
                 and a fused SGD step (which reads a tensor lr on the device). The last partial
                 batch runs eagerly, outside the graph.
  gemm-mlp       train_mlp --gemm VARIANT as a subprocess; its s/epoch and accuracy as reported.

PyTorch's s/epoch is the mean over epochs of the CUDA-event time around the epoch's training
steps (the shuffle upload and the evaluation are outside). An untimed epoch runs first (for the
graph: after the side-stream warm-up and the capture) to settle cuBLAS, the allocator and the
momentum buffers; parameters and optimiser state are then re-initialised in place from the seed,
so the timed run starts where train_mlp's does and the captured addresses stay valid.

Writes the CSV (--csv), a JSON sidecar next to it (device, torch version, date, rows) and a
Markdown table on stdout. Exit status 1 when a run failed (its row has the error in `note`), 2
without a CUDA GPU and PyTorch. --help needs neither torch nor numpy.
"""

import argparse
import csv
import datetime
import gzip
import json
import math
import os
import shlex
import struct
import subprocess
import sys
import tempfile
import traceback
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = "784-1024-1024-10:256,784-512-512-10:128,784-4096-4096-10:512"
COLUMNS = ["model", "batch", "precision", "system", "variant", "s_per_epoch",
           "ratio_to_pytorch_graph", "test_acc", "epochs", "note"]
LR, MOMENTUM, WEIGHT_DECAY = 0.1, 0.9, 5e-4
MNIST_MEAN, MNIST_STD = 0.1307, 0.3081  # data/mnist.h: train_mlp's (v/255 - mean) / std
EVAL_BATCH = 1000

torch = F = None  # imported in main(), after argument parsing, so --help works without them


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--models", default=DEFAULT_MODELS,
                    help="comma list of LAYERS:BATCH entries, e.g. 784-1024-1024-10:256")
    ap.add_argument("--precisions", default="fp32,tf32", help="comma list of fp32, tf32")
    ap.add_argument("--skip-pytorch", action="store_true", help="only run train_mlp")
    ap.add_argument("--skip-ours", action="store_true", help="only run PyTorch")
    ap.add_argument("--epochs", type=int, default=6, help="timed epochs per run")
    ap.add_argument("--seed", type=int, default=1, help="initialisation and shuffle seed")
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data", "mnist"),
                    help="MNIST IDX files, raw or .gz")
    ap.add_argument("--train-mlp", help="train_mlp binary",
                    default=os.path.join(ROOT, "build-gpu", "apps", "train_mlp", "train_mlp"))
    ap.add_argument("--fp32-variants", default="warptile",
                    help="train_mlp --gemm variants for fp32 (cublas is always added)")
    ap.add_argument("--tf32-variants", default="tf32,wgmma_ws,cublas_tf32",
                    help="train_mlp --gemm variants for tf32")
    ap.add_argument("--train-mlp-args", default="", help="extra train_mlp flags, one string")
    ap.add_argument("--csv", default=os.path.join(ROOT, "docs", "results", "vs_pytorch.csv"),
                    help="output CSV; the JSON sidecar goes next to it")
    args = ap.parse_args(argv)
    args.models = [parse_model(m) for m in split_list(args.models)]
    args.precisions = split_list(args.precisions)
    if set(args.precisions) - {"fp32", "tf32"}:
        ap.error(f"--precisions takes fp32 and/or tf32, not {args.precisions}")
    if args.epochs < 1:
        ap.error("--epochs must be >= 1")
    return args


def split_list(text):
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_model(entry):
    """'784-1024-1024-10:256' -> ('784-1024-1024-10', [784, 1024, 1024, 10], 256)."""
    try:
        layers, batch = entry.split(":")
        sizes = [int(s) for s in layers.split("-")]
        batch = int(batch)
    except ValueError:
        sys.exit(f"vs_pytorch.py: bad --models entry '{entry}' (want e.g. 784-1024-1024-10:256)")
    if len(sizes) < 3 or sizes[0] != 784 or sizes[-1] != 10 or batch < 1:
        sys.exit(f"vs_pytorch.py: '{entry}' must be 784-...-10 with a positive batch")
    return layers, sizes, batch


# --- MNIST -----------------------------------------------------------------------------------

def read_idx(data_dir, name):
    """One IDX file (raw, or name.gz) as a uint8 numpy array of its declared shape."""
    import numpy as np
    base = os.path.join(data_dir, name)
    path = next((p for p in (base, base + ".gz") if os.path.exists(p)), None)
    if path is None:
        sys.exit(f"vs_pytorch.py: missing MNIST file {base} (or {name}.gz); "
                 "scripts/fetch_mnist.sh fetches it")
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        raw = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0 or dtype != 0x08:  # 0x08: unsigned bytes, the only type MNIST uses
        sys.exit(f"vs_pytorch.py: {path} is not an unsigned-byte IDX file")
    dims = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_mnist(data_dir):
    """The four MNIST arrays on the GPU: float images (N x 784), int64 labels."""
    def images(name):
        x = read_idx(data_dir, name).reshape(-1, 784).astype("float32") / 255
        return torch.from_numpy((x - MNIST_MEAN) / MNIST_STD).float().cuda()

    def labels(name):  # int64: what cross_entropy wants for class indices
        return torch.from_numpy(read_idx(data_dir, name).astype("int64")).cuda()

    return argparse.Namespace(
        x_train=images("train-images-idx3-ubyte"), y_train=labels("train-labels-idx1-ubyte"),
        x_test=images("t10k-images-idx3-ubyte"), y_test=labels("t10k-labels-idx1-ubyte"))


# --- PyTorch ---------------------------------------------------------------------------------

def set_precision(precision):
    tf32 = precision == "tf32"
    with warnings.catch_warnings():  # newer torch warns that these legacy switches will go
        warnings.simplefilter("ignore", UserWarning)
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        torch.set_float32_matmul_precision("high" if tf32 else "highest")


def build_model(sizes):
    layers = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        layers += [torch.nn.Linear(fan_in, fan_out), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1]).cuda()  # no ReLU after the last Linear


def init_params(model, seed):
    """Kaiming-uniform weights, fan-in biases, drawn on the host from `seed` and copied into the
    existing tensors: the same start for every run, and addresses a graph captured stay valid."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in model:
            if isinstance(layer, torch.nn.Linear):
                fan_in = layer.in_features
                for p, bound in ((layer.weight, math.sqrt(6 / fan_in)),
                                 (layer.bias, 1 / math.sqrt(fan_in))):
                    p.copy_(torch.empty(p.shape).uniform_(-bound, bound, generator=gen))


def reset(model, opt, seed):
    """Back to the fresh start after the warm-up. A zeroed momentum buffer is what PyTorch's SGD
    starts from in effect (its first step sets buf = grad = 0.9 * 0 + grad)."""
    init_params(model, seed)
    with torch.no_grad():
        for state in opt.state.values():
            if state.get("momentum_buffer") is not None:
                state["momentum_buffer"].zero_()


def cosine_lr(step, total_steps):
    return LR * 0.5 * (1 + math.cos(math.pi * step / total_steps))


def evaluate(model, data):
    """Test accuracy as a fraction, in batches, without grad."""
    correct = torch.zeros((), dtype=torch.int64, device="cuda")
    with torch.no_grad():
        for i in range(0, len(data.y_test), EVAL_BATCH):
            logits = model(data.x_test[i:i + EVAL_BATCH])
            correct += (logits.argmax(1) == data.y_test[i:i + EVAL_BATCH]).sum()
    return correct.item() / len(data.y_test)


def timed_run(data, epochs, seed, train_epoch, perm):
    """Mean seconds per epoch of train_epoch(epoch), timed with CUDA events. The epoch's shuffle
    is drawn on the host and uploaded into the static `perm` before the start event."""
    gen = torch.Generator().manual_seed(seed)
    seconds = []
    for epoch in range(epochs):
        perm.copy_(torch.randperm(len(data.y_train), generator=gen))
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        train_epoch(epoch)
        end.record()
        end.synchronize()
        seconds.append(start.elapsed_time(end) / 1000)
    return sum(seconds) / len(seconds)


def run_eager(data, sizes, batch, epochs, seed):
    model = build_model(sizes)
    init_params(model, seed)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)
    n = len(data.y_train)
    steps = math.ceil(n / batch)
    perm = torch.empty(n, dtype=torch.int64, device="cuda")

    def train_epoch(epoch):
        for i in range(steps):
            for group in opt.param_groups:
                group["lr"] = cosine_lr(epoch * steps + i, epochs * steps)
            rows = perm[i * batch:(i + 1) * batch]  # the last slice is the partial batch
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(data.x_train.index_select(0, rows)),
                                   data.y_train.index_select(0, rows))
            loss.backward()
            opt.step()

    perm.copy_(torch.randperm(n))
    train_epoch(0)  # untimed warm-up epoch
    reset(model, opt, seed)
    return timed_run(data, epochs, seed, train_epoch, perm), evaluate(model, data)


def run_graph(data, sizes, batch, epochs, seed):
    model = build_model(sizes)
    init_params(model, seed)
    # Everything the graph reads or updates lives in static device tensors: the lr (fused SGD
    # reads a tensor lr on the device; the foreach path would call .item(), which capture
    # forbids), the global step, the batch's position in the epoch's permutation.
    lr = torch.full((), LR, dtype=torch.float32, device="cuda")
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=MOMENTUM,
                          weight_decay=WEIGHT_DECAY, fused=True)
    step = torch.zeros((), dtype=torch.float64, device="cuda")
    pos = torch.zeros((), dtype=torch.int64, device="cuda")
    offsets = torch.arange(batch, device="cuda")
    n = len(data.y_train)
    full, rest = divmod(n, batch)
    total_steps = epochs * (full + (rest > 0))
    perm = torch.empty(n, dtype=torch.int64, device="cuda")

    def train_step(rows):
        lr.copy_(torch.cos(step * (math.pi / total_steps)).add_(1).mul_(LR * 0.5))
        loss = F.cross_entropy(model(data.x_train.index_select(0, rows)),
                               data.y_train.index_select(0, rows))
        loss.backward()
        opt.step()
        step.add_(1)

    def graph_body():
        train_step(perm.index_select(0, pos + offsets))
        pos.add_(batch)

    perm.copy_(torch.randperm(n))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):  # as the CUDA-graph docs do before a capture
            opt.zero_grad(set_to_none=True)
            graph_body()
    torch.cuda.current_stream().wait_stream(side)
    # Grads are None at capture, so the captured backward writes them rather than adding to
    # them, and every replay starts from fresh gradients without a zero_grad in the graph.
    opt.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        graph_body()

    def train_epoch(epoch):
        pos.zero_()
        for _ in range(full):
            graph.replay()
        if rest:  # the partial batch, eagerly; zeroed in place to keep the graph's grad tensors
            opt.zero_grad(set_to_none=False)
            train_step(perm[full * batch:])

    train_epoch(0)  # untimed warm-up epoch of replays
    reset(model, opt, seed)
    step.zero_()
    return timed_run(data, epochs, seed, train_epoch, perm), evaluate(model, data)


# --- gemm-mlp --------------------------------------------------------------------------------

def run_ours(args, sizes, batch, variant, tmp):
    """(s_per_epoch, test_acc fraction, note) from one train_mlp run; times are None on error."""
    out = os.path.join(tmp, f"{variant}.json")
    cmd = [args.train_mlp, "--gemm", variant, "--hidden", ",".join(map(str, sizes[1:-1])),
           "--batch", str(batch), "--epochs", str(args.epochs), "--seed", str(args.seed),
           "--data-dir", args.data_dir, "--results", out] + shlex.split(args.train_mlp_args)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        return None, None, f"cannot run train_mlp: {e}"
    if proc.returncode != 0:
        text = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()
        print(f"$ {shlex.join(cmd)}\n" + "\n".join(text[-20:]), file=sys.stderr)
        return None, None, f"train_mlp exit {proc.returncode}: {text[-1][:200]}"
    try:
        with open(out) as f:
            result = next(r for r in json.load(f) if r["variant"] == variant)
        return result["s_per_epoch"], result["final_test_acc"], ""
    except (OSError, ValueError, KeyError, StopIteration) as e:
        return None, None, f"bad train_mlp results {out}: {e!r}"


# --- one run, rows, output -------------------------------------------------------------------

def run_all(args, data):
    """Every configuration in order; a failure becomes a row with an empty time and a note."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, sizes, batch in args.models:
            for precision in args.precisions:
                def add(system, variant, s, acc, note=""):
                    rows.append(dict(model=name, batch=batch, precision=precision, system=system,
                                     variant=variant, s_per_epoch=s, ratio_to_pytorch_graph=None,
                                     test_acc=None if acc is None else 100 * acc,
                                     epochs=args.epochs, note=note))
                    print(f"{name} b{batch} {precision} {system}/{variant}: "
                          f"{'-' if s is None else f'{s * 1e3:.1f} ms/epoch'} {note}",
                          file=sys.stderr)

                if not args.skip_pytorch:
                    for system, variant, fn in (("pytorch_eager", "eager", run_eager),
                                                ("pytorch_graph", "graph", run_graph)):
                        set_precision(precision)
                        try:
                            add(system, variant, *fn(data, sizes, batch, args.epochs, args.seed))
                        except Exception as e:  # keep the other results; exit 1 at the end
                            traceback.print_exc()
                            add(system, variant, None, None, f"{type(e).__name__}: {e}"[:200])
                        torch.cuda.empty_cache()  # leave the GPU's memory to train_mlp
                if not args.skip_ours:
                    variants = split_list(args.fp32_variants if precision == "fp32"
                                          else args.tf32_variants)
                    if precision == "fp32" and "cublas" not in variants:
                        variants.append("cublas")
                    for variant in variants:
                        add("gemm-mlp", variant, *run_ours(args, sizes, batch, variant, tmp))
    for row in rows:
        ref = next((r["s_per_epoch"] for r in rows if r["system"] == "pytorch_graph"
                    and (r["model"], r["precision"]) == (row["model"], row["precision"])), None)
        if row["s_per_epoch"] and ref:
            row["ratio_to_pytorch_graph"] = row["s_per_epoch"] / ref
    return rows


def fmt(value, spec, scale=1.0):
    return "" if value is None else format(value * scale, spec)


CSV_FORMATS = {"s_per_epoch": ".6f", "ratio_to_pytorch_graph": ".3f", "test_acc": ".2f"}


def write_outputs(args, rows):
    os.makedirs(os.path.dirname(os.path.abspath(args.csv)), exist_ok=True)
    with open(args.csv, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([fmt(r[c], CSV_FORMATS[c]) if c in CSV_FORMATS else r[c] for c in COLUMNS])
    sidecar = os.path.splitext(args.csv)[0] + ".json"
    with open(sidecar, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                   "cuda": torch.version.cuda,
                   "date": datetime.datetime.now(datetime.timezone.utc).isoformat("T", "seconds"),
                   "epochs": args.epochs, "seed": args.seed, "rows": rows}, f, indent=1)
        f.write("\n")
    print(f"wrote {args.csv} and {sidecar}", file=sys.stderr)


def print_markdown(rows):
    print("| model | batch | precision | system | variant | s/epoch (ms) | ratio to PyTorch graph "
          "| test acc % |")
    print("|---|---:|---|---|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['batch']} | {r['precision']} | {r['system']} | {r['variant']} "
              f"| {fmt(r['s_per_epoch'], '.1f', 1e3) or '-'} "
              f"| {fmt(r['ratio_to_pytorch_graph'], '.3f') or '-'} "
              f"| {fmt(r['test_acc'], '.2f') or '-'} |")


def main(argv=None):
    args = parse_args(argv)
    global torch, F
    try:
        import torch
        import torch.nn.functional as F
        cuda = torch.cuda.is_available()
    except ImportError:
        cuda = False
    if not cuda:
        print("vs_pytorch.py: needs a CUDA GPU and PyTorch", file=sys.stderr)
        return 2
    data = None if args.skip_pytorch else load_mnist(args.data_dir)
    rows = run_all(args, data)
    write_outputs(args, rows)
    print_markdown(rows)
    return 1 if any(r["note"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
