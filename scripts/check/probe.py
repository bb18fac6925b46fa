#!/usr/bin/env python3
"""The bad-input probe: feeds the apps bad flags, bad files, bad checkpoints, huge sizes and bad
images, kills saves at random instants and fills the disk under them, and sorts every outcome:

    clear       a non-zero exit with a message, within the memory bound (or, for a valid input,
                exit 0)
    silent      exit 0 on bad input (or a valid input refused)
    unbounded   more memory than --max-rss-mb, or past the time limit
    crashed     killed by a signal (a segfault, an abort)
    data lost   after a kill or a full disk, no consistent checkpoint pair to resume from; or
                the wrong file of a pair used, or a stale one left unrepaired

    scripts/check/probe.py --build build --data-dir data/mnist [--csv probe.csv] [--kills 12]

Runs on the CPU (--device cpu); the full-disk cases mount a small tmpfs and need root (skipped
otherwise, and said so). Exit status 1 when any case is not clear.
"""
import argparse
import csv
import gzip
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, timeout, env=None):
    """(exit status or -signal, stdout, stderr, peak RSS in MB, timed out)."""
    start = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        timed_out = True
    del start
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"), rss_mb, \
        timed_out


class Probe:
    def __init__(self, args, work):
        self.args, self.work, self.rows = args, work, []
        b = os.path.abspath(args.build)
        self.train = os.path.join(b, "apps/train_mlp/train_mlp")
        self.predict = os.path.join(b, "apps/predict/predict")
        self.bench = os.path.join(b, "apps/gemm_bench/gemm_bench")
        self.data = os.path.abspath(args.data_dir)

    def path(self, name):
        return os.path.join(self.work, name)

    def record(self, category, name, outcome, detail):
        self.rows.append([category, name, outcome, detail.strip().replace("\n", " | ")[:300]])
        print(f"{outcome:10} {category:12} {name}: {self.rows[-1][3][:150]}", flush=True)

    def case(self, category, name, cmd, expect_error=True, timeout=120):
        # Each case in a fresh process group of its own, so that RUSAGE_CHILDREN's peak is its own:
        # run it through a child Python that reports the grandchild's peak.
        wrapper = [sys.executable, "-c", (
            "import resource,subprocess,sys\n"
            "p=subprocess.run(sys.argv[1:])\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)\n")] + cmd
        rc, out, err, _, timed_out = run(wrapper, timeout)
        lines = err.rstrip().split("\n")
        try:
            rss_mb = int(lines[-1]) / 1024
            err = "\n".join(lines[:-1])
        except ValueError:
            rss_mb = 0.0
        if timed_out or rss_mb > self.args.max_rss_mb:
            outcome = "unbounded"
        elif rc > 128:
            outcome = "crashed"
        elif expect_error:
            outcome = "clear" if rc != 0 and err.strip() else "silent"
        else:
            outcome = "clear" if rc == 0 else "silent"
        detail = f"exit {rc}, {rss_mb:.0f} MB: " + (err.strip() or out.strip()[-200:])
        self.record(category, name, outcome, detail)
        return rc, out, err


# --- Files -------------------------------------------------------------------------------------

def pack(dtype, values):
    """Little-endian bytes of `values` as a safetensors dtype (BF16: fp32's upper halves)."""
    if dtype == "BF16":
        return b"".join(struct.pack("<f", v)[2:] for v in values)
    return struct.pack(f"<{len(values)}" + {"F32": "f", "F16": "e", "F64": "d"}[dtype], *values)


def write_safetensors(path, tensors, metadata=None, header_override=None, dtypes=None):
    """tensors: {name: (shape, values)}; dtypes: {name: "F16"|"BF16"|"F64"} (default F32)."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (shape, values) in tensors.items():
        dtype = (dtypes or {}).get(name, "F32")
        raw = pack(dtype, values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header) if header_override is None else header_override
    text += " " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text.encode() + data)


def mlp_tensors(sizes):
    rnd = random.Random(1)
    t = {}
    for i in range(len(sizes) - 1):
        t[f"{2 * i}.weight"] = ([sizes[i + 1], sizes[i]],
                               [rnd.uniform(-0.05, 0.05) for _ in range(sizes[i] * sizes[i + 1])])
        t[f"{2 * i}.bias"] = ([sizes[i + 1]], [0.0] * sizes[i + 1])
    return t


def write_png(path, width, height, value=0):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    comp = zlib.compressobj(9)
    row = b"\x00" + bytes([value]) * width
    body = b"".join(comp.compress(row) for _ in range(height)) + comp.flush()
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0,
                                                                  0, 0)) +
                chunk(b"IDAT", body) + chunk(b"IEND", b""))


def mnist_copy(probe, name, images_hook=None, labels_hook=None, gz=False):
    """A copy of the MNIST folder with the training images or labels replaced by hook(bytes)."""
    d = probe.path(name)
    os.makedirs(d)
    for f in ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
              "t10k-labels-idx1-ubyte"]:
        src = os.path.join(probe.data, f)
        if not os.path.exists(src):
            src += ".gz"
        with (gzip.open if src.endswith(".gz") else open)(src, "rb") as s:
            raw = s.read()
        hook = images_hook if f == "train-images-idx3-ubyte" else (
            labels_hook if f == "train-labels-idx1-ubyte" else None)
        if hook:
            raw = hook(raw)
        if gz and hook:
            with gzip.open(os.path.join(d, f + ".gz"), "wb") as o:
                o.write(raw)
        else:
            with open(os.path.join(d, f), "wb") as o:
                o.write(raw)
    return d


# --- Categories --------------------------------------------------------------------------------

def train_args(p, **flags):
    """train_mlp's command line: the tiny CPU run, with `flags` ({"momentum": "1"}) replacing or
    adding flags (a list value repeats the flag)."""
    opts = {"data-dir": p.data, "device": "cpu", "hidden": "16", "batch": "128",
            "train-limit": "512", "epochs": "1"}
    opts.update({k.replace("_", "-"): v for k, v in flags.items()})
    cmd = [p.train]
    for k, v in opts.items():
        for value in (v if isinstance(v, list) else [v]):
            cmd += ["--" + k] + ([] if value is None else [value])
    return cmd


def bad_flags(p):
    for name, flags in [
            ("momentum 1", {"momentum": "1"}), ("momentum -0.1", {"momentum": "-0.1"}),
            ("momentum 0x10", {"momentum": "0x10"}), ("momentum ''", {"momentum": ""}),
            ("weight-decay ''", {"weight_decay": ""}), ("weight-decay -1", {"weight_decay": "-1"}),
            ("log-interval ''", {"log_interval": ""}), ("log-interval -1", {"log_interval": "-1"}),
            ("train-limit ''", {"train_limit": ""}), ("train-limit -5", {"train_limit": "-5"}),
            ("hidden 16,,16", {"hidden": "16,,16"}), ("hidden twice", {"hidden": ["16", "32"]}),
            ("hidden 0", {"hidden": "0"}), ("hidden 1e9", {"hidden": "1000000000"}),
            ("gemm ''", {"gemm": ""}), ("gemm nosuch", {"gemm": "nosuch"}),
            ("epochs 0", {"epochs": "0"}), ("epochs abc", {"epochs": "abc"}),
            ("batch 0", {"batch": "0"}), ("batch 1e12", {"batch": "1000000000000"}),
            ("lr nan", {"lr": "nan"}), ("lr -1", {"lr": "-1"}), ("lr inf", {"lr": "inf"}),
            ("seed -1", {"seed": "-1"}), ("seed 1e3", {"seed": "1e3"}),
            ("optimizer x", {"optimizer": "x"}), ("schedule x", {"schedule": "x"}),
            ("dataset x", {"dataset": "x"}), ("device x", {"device": "x"}),
            ("unknown flag", {"no-such-flag": None}),
            ("resume and eval", {"resume": "a", "eval": "b"}),
            ("data-dir missing", {"data_dir": p.path("nowhere")})]:
        p.case("flags", "train_mlp " + name, train_args(p, **flags))
    b = [p.bench, "--variants", "cpu", "--shapes", "8"]
    for name, extra in [
            ("max-seconds nan", ["--max-seconds-per-case", "nan"]), ("seed -1", ["--seed", "-1"]),
            ("device 7", ["--device", "7"]), ("shapes 0", ["--shapes", "0"]),
            ("shapes abc", ["--shapes", "abc"]), ("reps 0", ["--reps", "0"]),
            ("cpu --auto-table", ["--auto-table", p.path("t.inc")]),
            ("variants nosuch", ["--variants", "nosuch"])]:
        p.case("flags", "gemm_bench " + name, b + extra)
    p.case("flags", "gemm_bench without a GPU, default variants", [p.bench, "--shapes", "8"])
    rc, _, _ = p.case("flags", "gemm_bench cpu --json (valid)", b + ["--json", p.path("b.json")],
                      expect_error=False)
    if rc == 0 and not os.path.exists(p.path("b.json")):
        p.record("flags", "gemm_bench cpu --json wrote it", "silent", "exit 0, no file written")
    f = [os.path.join(ROOT, "scripts/setup/fetch_mnist.sh")]
    os.makedirs(p.path("adir"), exist_ok=True)
    p.case("flags", "fetch_mnist.sh --help", f + ["--help"], expect_error=False)
    for name, extra in [("extra arguments", ["mnist", p.path("x"), "more"]), ("empty argument", [""]),
                        ("unknown option", ["--frobnicate"])]:
        p.case("flags", "fetch_mnist.sh " + name, f + extra)


def bad_files(p):
    huge = struct.pack(">IIII", 0x803, 65536, 256, 256)
    cases = [
        ("truncated images", lambda r: r[:1000], None, False),
        ("wrong magic", lambda r: b"\x00\x00\x09\x03" + r[4:], None, False),
        ("header claims 65536x256x256 (gz)", lambda r: huge + r[16:4_000_000], None, True),
        ("header claims 65536x256x256", lambda r: huge + r[16:4_000_000], None, False),
        ("count mismatch", None, lambda r: r[:8] + r[8:5008], False),
        ("label 12", None, lambda r: r[:8] + b"\x0c" + r[9:], False),
        ("garbage gz", lambda r: b"\x1f\x8b" + os.urandom(5000), None, False),
    ]
    for i, (name, ih, lh, gz) in enumerate(cases):
        d = mnist_copy(p, f"files{i}", ih, lh, gz)
        if name == "garbage gz":
            os.replace(os.path.join(d, "train-images-idx3-ubyte"),
                       os.path.join(d, "train-images-idx3-ubyte.gz"))
        p.case("files", name, train_args(p, data_dir=d))


def bad_checkpoints(p):
    ev = lambda path, *extra: [p.train, "--device", "cpu", "--data-dir", p.data, "--eval", path,
                               *extra]
    pr = lambda path: [p.predict, "--device", "cpu", "--model", path, p.path("digit.png")]
    write_png(p.path("digit.png"), 28, 28, 0)
    good = mlp_tensors([784, 16, 10])
    write_safetensors(p.path("torch.safetensors"), good)  # as PyTorch's save_file writes it
    p.case("checkpoints", "PyTorch state_dict, --eval (valid)", ev(p.path("torch.safetensors")),
           expect_error=False)
    p.case("checkpoints", "PyTorch state_dict, predict (valid)", pr(p.path("torch.safetensors")),
           expect_error=False)
    meta = {"format": "gemm-mlp checkpoint 1", "layers": "784-16-10", "hidden": "16",
            "dataset": "mnist", "seed": "1", "epoch": "1", "epochs": "1", "batch": "128"}
    specs = {
        "missing file": None,
        "a directory": "dir",
        "empty file": b"",
        "truncated": "truncated",
        "header length 2^60": struct.pack("<Q", 1 << 60) + b"{}",
        "invalid JSON": struct.pack("<Q", 8) + b"{nope}  ",
        "hidden 100000,100000": dict(meta, hidden="100000,100000", layers="784-100000-100000-10"),
        "seed -1": dict(meta, seed="-1"),
        "unknown dataset": dict(meta, dataset="cifar"),
        "epoch abc": dict(meta, epoch="abc"),
        "shapes not a chain": "chain",
        "F16 header over F32 data": "f16",
        "30 GiB sparse": "sparse",
    }
    for name, spec in specs.items():
        path = p.path("ck_" + name.replace(" ", "_").replace(",", "") + ".safetensors")
        if spec == "dir":
            os.makedirs(path)
        elif isinstance(spec, bytes):
            open(path, "wb").write(spec)
        elif isinstance(spec, dict):
            write_safetensors(path, good, spec)
        elif spec == "truncated":
            write_safetensors(path, good)
            os.truncate(path, os.path.getsize(path) - 100)
        elif spec == "chain":
            write_safetensors(path, dict(good, **{"2.weight": ([10, 17], [0.0] * 170)}))
        elif spec == "f16":
            write_safetensors(path, good, header_override=json.dumps(
                {"0.weight": {"dtype": "F16", "shape": [16, 784], "data_offsets": [0, 25088]}}))
        elif spec == "sparse":
            write_safetensors(path, good)
            os.truncate(path, 30 << 30)
        p.case("checkpoints", name + ", --eval", ev(path))
        if name not in ("seed -1", "epoch abc"):  # keys of a training run, which predict ignores
            p.case("checkpoints", name + ", predict", pr(path))


def read_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return n, json.loads(f.read(n))


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


def huge_sizes(p):
    p.case("sizes", "gemm_bench cpu 65536", [p.bench, "--variants", "cpu", "--shapes", "65536"])
    p.case("sizes", "train_mlp hidden 200000,200000", train_args(p, hidden="200000,200000"))
    p.case("sizes", "train_mlp batch 2^31-1 (valid: the batch is cut to the data)",
           train_args(p, batch="2147483647"), expect_error=False)


def images(p):
    write_safetensors(p.path("m.safetensors"), mlp_tensors([784, 16, 10]))
    pr = [p.predict, "--device", "cpu", "--model", p.path("m.safetensors")]
    write_png(p.path("huge.png"), 20000, 20000)
    write_png(p.path("blank.png"), 28, 28, 255)
    open(p.path("corrupt.png"), "wb").write(b"\x89PNG\r\n\x1a\n" + os.urandom(300))
    os.makedirs(p.path("imgdir"), exist_ok=True)
    p.case("images", "20000x20000 PNG", pr + [p.path("huge.png")])
    rc, out, err = p.case("images", "blank image (warns, exit 0)", pr + [p.path("blank.png")],
                          expect_error=False)
    if rc == 0 and "blank" not in (out + err).lower():
        p.record("images", "blank image warned", "silent", out + err)
    p.case("images", "corrupt PNG", pr + [p.path("corrupt.png")])
    p.case("images", "missing file", pr + [p.path("nope.png")])
    p.case("images", "a directory", pr + [p.path("imgdir")])
    rc, out, err = p.case("images", "unreadable among good (goes on, exit non-zero)",
                          pr + [p.path("nope.png"), p.path("blank.png")])
    if rc != 0 and "blank.png" not in out:
        p.record("images", "goes on past an unreadable file", "silent", out + err)


def save_targets(p):
    base = train_args(p)
    os.makedirs(p.path("savedir"), exist_ok=True)
    for dev in ["null", "full"]:
        node = p.path("dev" + dev)
        if os.geteuid() == 0:
            st = os.stat("/dev/" + dev)
            os.mknod(node, 0o666 | 0o020000, st.st_rdev)
            for flag in ["--save", "--history", "--results"]:
                p.case("saves", f"{flag} onto a /dev/{dev} node", base + [flag, node])
                if not os.path.exists(node) or not os.path.stat.S_ISCHR(os.stat(node).st_mode):
                    p.record("saves", f"{flag} /dev/{dev} node kept", "data lost",
                             "the node was replaced")
    for flag, target in [("--save", p.path("savedir") + "/"), ("--save", p.path("savedir")),
                         ("--history", p.path("savedir")), ("--results", p.path("savedir")),
                         ("--save", p.path("nodir/m.safetensors"))]:
        p.case("saves", f"{flag} {os.path.relpath(target, p.work)}", base + [flag, target])
    leftovers = [f for f in os.listdir(p.path("savedir"))]
    if leftovers:
        p.record("saves", "no temporary files left", "silent", " ".join(leftovers))


def consistent_resume(p, ckpt, epochs):
    """Whether --resume of ckpt continues (exit 0) for one more epoch."""
    rc, out, err, _, _ = run([p.train, "--data-dir", p.data, "--device", "cpu", "--resume", ckpt,
                              "--epochs", str(epochs)], 300)
    return rc, out + err


def kills(p):
    rnd = random.Random(7)
    for trial in range(p.args.kills):
        d = p.path(f"kill{trial}")
        os.makedirs(d)
        ckpt = os.path.join(d, "m.safetensors")
        cmd = train_args(p, epochs="200", save=ckpt)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        time.sleep(rnd.uniform(1.0, 6.0))
        proc.send_signal(signal.SIGKILL)
        out = proc.communicate()[0].decode(errors="replace")
        saved = [l for l in out.splitlines() if "epoch" in l and "/200" in l]
        if not os.path.exists(ckpt) and not saved:
            p.record("kill -9", f"trial {trial}", "clear", "killed before the first save")
            continue
        rc, text = consistent_resume(p, ckpt, 300)
        outcome = "clear" if rc == 0 else "data lost"
        p.record("kill -9", f"trial {trial} after {len(saved)} epochs", outcome,
                 f"resume exit {rc}: " + text.strip().splitlines()[0] if text.strip() else "")


def full_disk(p):
    if os.geteuid() != 0 or not shutil.which("mount"):
        p.record("full disk", "tmpfs", "skipped", "needs root to mount a small tmpfs")
        return
    for size_kb in [60, 120, 180, 260]:
        d = p.path(f"tmpfs{size_kb}")
        os.makedirs(d)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", d]).returncode:
            p.record("full disk", f"tmpfs {size_kb} KB", "skipped", "mount failed")
            return
        try:
            ckpt = os.path.join(d, "m.safetensors")
            rc, out, err, _, _ = run(train_args(p, epochs="4", save=ckpt), 300)
            if rc == 0:
                p.record("full disk", f"{size_kb} KB", "clear", "everything fitted: exit 0")
                continue
            if not err.strip():
                p.record("full disk", f"{size_kb} KB", "silent", f"exit {rc}, no message")
                continue
            if not os.path.exists(ckpt):
                p.record("full disk", f"{size_kb} KB", "clear",
                         f"exit {rc}, no save fitted: " + err.strip().splitlines()[-1])
                continue
            rrc, text = consistent_resume(p, ckpt, 4)
            # the resumed run may hit the full disk again; what matters is that it loaded the pair
            loaded = "resumed from" in text
            p.record("full disk", f"{size_kb} KB", "clear" if loaded else "data lost",
                     f"exit {rc}: {err.strip().splitlines()[-1]}; resume: "
                     + (text.strip().splitlines()[0] if text.strip() else f"exit {rrc}"))
        finally:
            subprocess.run(["umount", d])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--data-dir", default="data/mnist")
    ap.add_argument("--csv")
    ap.add_argument("--kills", type=int, default=12)
    ap.add_argument("--max-rss-mb", type=float, default=1500)
    ap.add_argument("--only", help="comma-separated categories")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="probe-")
    p = Probe(args, work)
    steps = {"flags": bad_flags, "files": bad_files, "checkpoints": bad_checkpoints,
             "sizes": huge_sizes, "images": images, "saves": save_targets, "pairs": pairs,
             "kills": kills,
             "disk": full_disk}
    try:
        for name, fn in steps.items():
            if not args.only or name in args.only.split(","):
                fn(p)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    counts = {}
    for r in p.rows:
        counts[r[2]] = counts.get(r[2], 0) + 1
    print("totals: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            csv.writer(f).writerows([["category", "case", "outcome", "detail"]] + p.rows)
    sys.exit(0 if set(counts) <= {"clear", "skipped"} else 1)


if __name__ == "__main__":
    main()
