"""The PyTorch side of scripts/pytorch/vs_pytorch.py: MNIST on the GPU, and train_mlp's recipe trained by
PyTorch eager (run_eager) and by PyTorch with the whole step in one CUDA graph (run_graph).
Importing this module imports torch; vs_pytorch.py does so only after parsing its arguments."""

import argparse
import gzip
import math
import os
import struct
import sys
import warnings

import torch
import torch.nn.functional as F

LR, MOMENTUM, WEIGHT_DECAY = 0.1, 0.9, 5e-4
MNIST_MEAN, MNIST_STD = 0.1307, 0.3081  # data/mnist.h: train_mlp's (v/255 - mean) / std
EVAL_BATCH = 1000


def cuda_available():
    return torch.cuda.is_available()


def environment():
    """What the results were measured with, for the JSON sidecar."""
    return {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "cuda": torch.version.cuda}


def release_memory():
    """Leaves the GPU's memory to the next run (train_mlp, a separate process)."""
    torch.cuda.empty_cache()


# --- MNIST -----------------------------------------------------------------------------------

def read_idx(data_dir, name):
    """One IDX file (raw, or name.gz) as a uint8 numpy array of its declared shape."""
    import numpy as np
    base = os.path.join(data_dir, name)
    path = next((p for p in (base, base + ".gz") if os.path.exists(p)), None)
    if path is None:
        sys.exit(f"vs_pytorch.py: missing MNIST file {base} (or {name}.gz); "
                 "scripts/setup/fetch_mnist.sh fetches it")
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
