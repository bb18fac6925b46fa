#!/usr/bin/env python3
"""Checkpoints both ways between gemm-mlp and PyTorch, on a machine with PyTorch and a GPU.

    scripts/pytorch/torch_roundtrip.py [--train-mlp build-gpu/apps/train_mlp/train_mlp]
                               [--predict build-gpu/apps/predict/predict] [--data-dir DIR]

1. train_mlp trains 784-256-256-10 for 2 epochs and saves a checkpoint; PyTorch loads it into an
   nn.Sequential with safetensors.torch.load_file and load_state_dict(strict=True), and its test
   accuracy must match `train_mlp --eval` within 0.05 points.
2. PyTorch trains the same architecture for 1 epoch and saves it with safetensors.torch.save_file
   and the metadata train_mlp reads; `train_mlp --eval` must report PyTorch's own test accuracy
   within 0.05 points.
3. The same model saved as a PyTorch user saves it, save_file(model.state_dict()) with no metadata:
   `train_mlp --eval` (layer sizes from the tensors) must again report PyTorch's accuracy, and
   `predict` must give at least 90% of 50 test digits (written as PGM files) their label.
Exits non-zero when any of them misses. Reuses vs_pytorch.py's MNIST reader and model builder.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SIZES = [784, 256, 256, 10]
TOLERANCE = 0.05  # percentage points


def eval_with_train_mlp(train_mlp, data_dir, ckpt):
    out = subprocess.run([train_mlp, "--eval", ckpt, "--data-dir", data_dir, "--device", "cuda"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"torch_roundtrip.py: train_mlp --eval {ckpt} failed: {out.stderr.strip()}")
    m = re.search(r"test accuracy ([0-9.]+)%", out.stdout)
    if not m:
        sys.exit(f"torch_roundtrip.py: no accuracy in train_mlp's output: {out.stdout!r}")
    return float(m.group(1))


def compare(label, model, ckpt, args, data):
    """PyTorch's test accuracy of `model` beside train_mlp --eval's of `ckpt`; True if within."""
    torch_acc = 100 * baseline.evaluate(model, data)
    ours_acc = eval_with_train_mlp(args.train_mlp, args.data_dir, ckpt)
    good = abs(torch_acc - ours_acc) <= TOLERANCE
    print(f"{label}: PyTorch {torch_acc:.2f}%, train_mlp --eval {ours_acc:.2f}% "
          f"({'ok' if good else 'MISMATCH'})")
    return good


def predict_digits(args, ckpt, tmp, count=50):
    """predict on the first `count` test digits, as PGM files; True if >= 90% get their label."""
    images = baseline.read_idx(args.data_dir, "t10k-images-idx3-ubyte")[:count]
    labels = baseline.read_idx(args.data_dir, "t10k-labels-idx1-ubyte")[:count]
    paths = []
    for i, image in enumerate(images):
        paths.append(os.path.join(tmp, f"digit{i}.pgm"))
        with open(paths[-1], "wb") as f:
            f.write(b"P5 28 28 255\n" + image.tobytes())
    out = subprocess.run([args.predict, "--model", ckpt, "--device", "cuda", "--top", "1", *paths],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print(f"predict on {ckpt} failed: {out.stderr.strip()}")
        return False
    right = 0
    for path, label in zip(paths, labels):
        m = re.search(re.escape(path) + r": (\S+) \(", out.stdout)
        right += bool(m) and m.group(1) == str(label)
    good = right >= 0.9 * count
    print(f"predict, PyTorch state_dict without metadata: {right} of {count} test digits "
          f"({'ok' if good else 'MISS'})")
    return good


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train-mlp", default=os.path.join(ROOT, "build-gpu/apps/train_mlp/train_mlp"))
    ap.add_argument("--predict", default=os.path.join(ROOT, "build-gpu/apps/predict/predict"))
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data/mnist"))
    args = ap.parse_args()
    try:
        import torch
        from safetensors.torch import load_file, save_file
    except ImportError:
        sys.exit("torch_roundtrip.py: needs PyTorch and safetensors")
    if not torch.cuda.is_available():
        sys.exit("torch_roundtrip.py: needs a CUDA GPU")
    global baseline
    from gemm_mlp_tools import pytorch_baseline as baseline  # imports torch
    data = baseline.load_mnist(args.data_dir)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        # 1. ours → PyTorch.
        ours = os.path.join(tmp, "ours.safetensors")
        hidden = ",".join(str(s) for s in SIZES[1:-1])
        subprocess.run([args.train_mlp, "--gemm", "fast", "--hidden", hidden, "--epochs", "2",
                        "--data-dir", args.data_dir, "--save", ours], check=True,
                       capture_output=True)
        model = baseline.build_model(SIZES)
        model.load_state_dict({k: v.cuda() for k, v in load_file(ours).items()}, strict=True)
        ok &= compare("gemm-mlp checkpoint", model, ours, args, data)

        # 2. PyTorch → ours.
        baseline.set_precision("fp32")
        model = baseline.build_model(SIZES)
        baseline.init_params(model, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
        for i in range(0, len(data.y_train), 256):
            loss = torch.nn.functional.cross_entropy(model(data.x_train[i:i + 256]),
                                                     data.y_train[i:i + 256])
            opt.zero_grad()
            loss.backward()
            opt.step()
        theirs = os.path.join(tmp, "pytorch.safetensors")
        metadata = {"format": "gemm-mlp checkpoint 1", "layers": "-".join(map(str, SIZES)),
                    "hidden": hidden, "dataset": "mnist", "variant": "pytorch", "epoch": "1",
                    "epochs": "1", "batch": "256", "seed": "1", "optimizer": "sgd", "lr": "0.1",
                    "momentum": "0.9", "weight_decay": "0.0005", "schedule": "constant",
                    "normalisation": "(v/255 - 0.1307) / 0.3081"}
        save_file({k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()},
                  theirs, metadata=metadata)
        ok &= compare("PyTorch checkpoint", model, theirs, args, data)

        # 3. PyTorch → ours, saved as a PyTorch user saves it: no metadata at all.
        plain = os.path.join(tmp, "plain.safetensors")
        save_file({k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}, plain)
        ok &= compare("PyTorch state_dict without metadata", model, plain, args, data)
        ok &= predict_digits(args, plain, tmp)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
