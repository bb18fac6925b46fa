"""The bad-input probe's checkpoint pairs (issue 37): PyTorch dtypes, checksums, a save stopped
between its two renames (the first and a later one), two writers of one path, and a resume on
other data; and kill -9 at exact instants of a save, between its renames and before them."""
import os
import re
import shutil
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
    # The lowest mantissa bit of the last bias: a value still plausible, which only the checksum
    # tells from the saved one.
    end = header["2.bias"]["data_offsets"][1]
    flipped = bytearray(saved)
    flipped[8 + n + end - 4] ^= 0x01
    open(p.path("mantissa.safetensors"), "wb").write(flipped)
    p.case("pairs", "flipped mantissa bit, --eval", ev(p.path("mantissa.safetensors")))
    p.case("pairs", "flipped mantissa bit, predict", pr(p.path("mantissa.safetensors")))
    # A corrupted byte in the optimiser file of a whole pair: --resume reads its tensors and
    # refuses it; --eval and predict take the model file of the same save, and check it alone.
    c = p.path("corrupt_pair")
    os.makedirs(c)
    shutil.copy(ckpt, os.path.join(c, "m.safetensors"))
    state = bytearray(open(optim, "rb").read())
    n_state, state_header = read_header(optim)
    last = max(v["data_offsets"][1] for k, v in state_header.items() if k != "__metadata__")
    state[8 + n_state + last - 2] ^= 0x10
    open(os.path.join(c, "m.optim.safetensors"), "wb").write(state)
    p.case("pairs", "corrupted optimiser file, --resume",
           resume(os.path.join(c, "m.safetensors"), 2))
    p.case("pairs", "corrupted optimiser file, --eval (valid: the model file)",
           ev(os.path.join(c, "m.safetensors")), expect_error=False)

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


def exact_kills(p):
    """kill -9 at exact instants of a save, not at random ones: strace stops train_mlp at its Nth
    rename (renames 1 and 2 are the first save's optimiser and model files, 3 and 4 the second's)
    and kills it there, that rename undone. Killed at rename 2 or 4, the save stopped between its
    two renames; at 1 or 3, before them. Each pair must then be used (--eval) and resumed, the
    newer file's parameters taken, and the model file rewritten."""
    strace = shutil.which("strace")
    if not strace:
        p.record("exact kills", "strace", "skipped", "needs strace to stop a save at a rename")
        return
    calls = "rename,renameat,renameat2"
    ev = lambda path: [p.train, "--device", "cpu", "--data-dir", p.data, "--eval", path]
    for rename in [1, 2, 3, 4]:
        d = p.path(f"exact{rename}")
        os.makedirs(d)
        ckpt = os.path.join(d, "m.safetensors")
        optim = os.path.join(d, "m.optim.safetensors")
        save, between = (rename + 1) // 2, rename % 2 == 0
        name = f"save {save} killed " + ("between its renames" if between else "before them")
        cmd = [strace, "-f", "-qq", "-o", os.devnull, "-e", "trace=" + calls, "-e",
               f"inject={calls}:error=EIO:signal=KILL:when={rename}"] + \
            train_args(p, epochs="3", save=ckpt)
        rc, out, err, _, timed_out = run(cmd, 300)
        if timed_out or rc not in (-9, 137):  # strace ends as its tracee did
            p.record("exact kills", name, "skipped", f"strace did not kill it (exit {rc}): {err}")
            continue
        has_model, has_optim = os.path.exists(ckpt), os.path.exists(optim)
        expected = (save > 1 or between, save > 1)  # (optimiser file, model file) there
        if (has_optim, has_model) != expected:
            p.record("exact kills", name + ": the files left", "data lost",
                     f"optimiser file {has_optim}, model file {has_model}; expected {expected}")
            continue
        if not has_optim:
            p.record("exact kills", name, "clear", "killed before the first save: no files")
            continue
        epoch = save if between else save - 1  # the save the optimiser file holds
        rc, out, err = p.case("exact kills", name + ", --eval (valid)", ev(ckpt),
                              expect_error=False)
        note = "using the parameters in" if save == 1 else "using the newer parameters"
        if rc == 0 and between and note not in out + err:
            p.record("exact kills", name + ", --eval takes the newer file", "data lost", out + err)
        rc, out, err = p.case("exact kills", name + ", --resume (valid)",
                              [p.train, "--device", "cpu", "--data-dir", p.data, "--resume", ckpt,
                               "--epochs", "4"], expect_error=False, timeout=300)
        if rc == 0 and not re.search(rf"resumed from .*: after epoch {epoch}\b", out):
            p.record("exact kills", name + ", resumed from the save made", "data lost",
                     f"expected epoch {epoch}: " + out + err)
        meta = read_header(ckpt)[1]["__metadata__"] if os.path.exists(ckpt) else {}
        if rc == 0 and meta.get("epoch") != "4":
            p.record("exact kills", name + ", both files rewritten", "data lost",
                     f"the model file's epoch is {meta.get('epoch')}")
        left = [f for f in os.listdir(d) if ".tmp." in f]
        if left:
            p.record("exact kills", name + ", no temporary files left", "silent", " ".join(left))
