"""The bad-input probe's checkpoint pairs (issue 37): PyTorch dtypes, checksums, a save stopped
between its two renames (the first and a later one), two writers of one path, and a resume on
other data."""
import os
import subprocess
import time

from gemm_mlp_tools.probe_cases import train_args
from gemm_mlp_tools.probe_files import (mlp_tensors, mnist_copy, read_header, write_png,
                                        write_safetensors)
from gemm_mlp_tools.probe_runner import run


def pairs(p):
    """Issue 37's checkpoints: PyTorch dtypes, checksums, a save stopped between its two renames
    (the first and a later one), two writers of one path, and a resume on other data."""
    ev = lambda path: [p.train, "--device", "cpu", "--data-dir", p.data, "--eval", path]
    pr = lambda path: [p.predict, "--device", "cpu", "--model", path, p.path("digit.png")]
    resume = lambda path, epochs, data=None: [p.train, "--device", "cpu", "--data-dir",
                                              data or p.data, "--resume", path, "--epochs",
                                              str(epochs)]
    write_png(p.path("digit.png"), 28, 28, 0)
    good = mlp_tensors([784, 16, 10])
    for dtypes in ["F16", "BF16", "F64"]:
        path = p.path(f"torch_{dtypes}.safetensors")
        write_safetensors(path, good, dtypes={name: dtypes for name in good})
        p.case("pairs", f"PyTorch {dtypes} state_dict, --eval (valid)", ev(path), expect_error=False)
        p.case("pairs", f"PyTorch {dtypes} state_dict, predict (valid)", pr(path),
               expect_error=False)

    d = p.path("pairs")
    os.makedirs(d)
    ckpt = os.path.join(d, "m.safetensors")
    optim = os.path.join(d, "m.optim.safetensors")
    if run(train_args(p, save=ckpt), 300)[0] != 0:
        p.record("pairs", "a run to save", "silent", "train_mlp --save failed")
        return
    saved = open(ckpt, "rb").read()
    # A flipped exponent bit in the first weight of the model file.
    n, header = read_header(ckpt)
    begin = header["0.weight"]["data_offsets"][0]
    flipped = bytearray(saved)
    flipped[8 + n + begin + 3] ^= 0x40
    open(p.path("flipped.safetensors"), "wb").write(flipped)
    p.case("pairs", "flipped exponent bit, --eval", ev(p.path("flipped.safetensors")))
    p.case("pairs", "flipped exponent bit, predict", pr(p.path("flipped.safetensors")))

    # The first save stopped between its renames: the optimiser file alone.
    os.remove(ckpt)
    rc, out, err = p.case("pairs", "first save stopped between renames, --eval (valid)", ev(ckpt),
                          expect_error=False)
    if rc == 0 and "note: " not in out + err:
        p.record("pairs", "first save stopped, --eval says which file", "silent", out + err)
    p.case("pairs", "first save stopped between renames, predict (valid)", pr(ckpt),
           expect_error=False)
    rc, out, err = p.case("pairs", "first save stopped between renames, --resume (valid)",
                          resume(ckpt, 2), expect_error=False, timeout=300)
    if rc == 0 and not os.path.exists(ckpt):
        p.record("pairs", "first save stopped, model file rewritten", "data lost", out + err)

    # A later save stopped between its renames: the model file one save behind.
    older = open(ckpt, "rb").read()  # epoch 2 now
    p.case("pairs", "extend to epoch 3 (valid)", resume(ckpt, 3), expect_error=False, timeout=300)
    open(ckpt, "wb").write(older)
    rc, out, err = p.case("pairs", "stale model file, --eval (valid)", ev(ckpt), expect_error=False)
    if rc == 0 and "using the newer parameters" not in out + err:
        p.record("pairs", "stale model file, --eval uses the newer file", "data lost", out + err)
    rc, out, err = p.case("pairs", "stale model file, predict (valid)", pr(ckpt),
                          expect_error=False)
    if rc == 0 and "using the newer parameters" not in out + err:
        p.record("pairs", "stale model file, predict uses the newer file", "data lost", out + err)
    rc, out, err = p.case("pairs", "stale model file, --resume (valid: nothing to train)",
                          resume(ckpt, 3), expect_error=False)
    epoch = read_header(ckpt)[1]["__metadata__"].get("epoch")
    if rc == 0 and (epoch != "3" or "rewrote it" not in out):
        p.record("pairs", "stale model file repaired by --resume", "data lost",
                 f"its epoch is {epoch}: " + out)

    # Two runs saving to one path: the second refused before it trains.
    other = os.path.join(d, "two.safetensors")
    first = subprocess.Popen(train_args(p, epochs="1000", save=other), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    for _ in range(600):
        if os.path.exists(other):
            break
        time.sleep(0.1)
    rc, out, err = p.case("pairs", "a second run saving to one path",
                          train_args(p, save=other, seed="2"))
    if rc != 0 and "epoch" in out:
        p.record("pairs", "the second writer refused before training", "silent", out)
    first.kill()
    first.wait()

    # --resume on other data: one pixel changed.
    def one_pixel(raw):
        raw = bytearray(raw)
        raw[16 + 300] ^= 0xff
        return bytes(raw)
    changed = mnist_copy(p, "mnist_changed", images_hook=one_pixel)
    p.case("pairs", "--resume on other data (one pixel)", resume(ckpt, 4, changed))
