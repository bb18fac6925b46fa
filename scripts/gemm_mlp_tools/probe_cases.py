"""The bad-input probe's categories of cases (scripts/check/probe.py): bad flags, bad files, bad
checkpoints, huge sizes, bad images, save targets, kills during saves and a full disk. Each takes
the Probe (probe_runner.py) and records its cases there."""
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import time

from gemm_mlp_tools.probe_files import mlp_tensors, mnist_copy, write_png, write_safetensors
from gemm_mlp_tools.probe_runner import limited, run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
    write_safetensors(p.path("flags.safetensors"), mlp_tensors([784, 16, 10]))
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
            ("data-dir missing", {"data_dir": p.path("nowhere")}),
            # values the apps once took silently (a switch's value, a blank name, a flag that a
            # mode ignores), now refused
            ("--serial-step=2", {"serial_step=2": None}), ("save ' '", {"save": " "}),
            ("optimizer adam, momentum 0.5", {"optimizer": "adam", "momentum": "0.5"})]:
        p.case("flags", "train_mlp " + name, train_args(p, **flags))
    p.case("flags", "train_mlp eval with epochs", [p.train, "--device", "cpu", "--data-dir", p.data,
                                                   "--eval", p.path("flags.safetensors"),
                                                   "--epochs", "3"])
    b = [p.bench, "--variants", "cpu", "--shapes", "8"]
    for name, extra in [
            ("max-seconds nan", ["--max-seconds-per-case", "nan"]), ("seed -1", ["--seed", "-1"]),
            ("device 7", ["--device", "7"]), ("shapes 0", ["--shapes", "0"]),
            ("shapes abc", ["--shapes", "abc"]), ("reps 0", ["--reps", "0"]),
            ("cpu --auto-table", ["--auto-table", p.path("t.inc")]),
            ("variants nosuch", ["--variants", "nosuch"]),
            ("variants cpu,", ["--variants", "cpu,"]), ("shapes 64,,64", ["--shapes", "64,,64"]),
            ("csv X, json X", ["--csv", p.path("same"), "--json", p.path("same")])]:
        p.case("flags", "gemm_bench " + name, b + extra)
    # No GPU visible, whether the machine has one or not.
    p.case("flags", "gemm_bench without a GPU, default variants", [p.bench, "--shapes", "8"],
           env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    rc, _, _ = p.case("flags", "gemm_bench cpu --json (valid)", b + ["--json", p.path("b.json")],
                      expect_error=False)
    if rc == 0 and not os.path.exists(p.path("b.json")):
        p.record("flags", "gemm_bench cpu --json wrote it", "silent", "exit 0, no file written")
    p.case("flags", "train_spiral 20 steps (valid)", [p.spiral, "--device", "cpu", "--steps", "20"],
           expect_error=False)
    for name, extra in [("gemm ''", ["--gemm", ""]), ("gemm nosuch", ["--gemm", "nosuch"]),
                        ("hidden 1000000", ["--hidden", "1000000"]),
                        ("hidden 0", ["--hidden", "0"]), ("steps 0", ["--steps", "0"]),
                        ("device x", ["--device", "x"])]:
        device = [] if "--device" in extra else ["--device", "cpu"]
        p.case("flags", "train_spiral " + name, [p.spiral] + extra + device, timeout=60)
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


def available_memory_bytes():
    """MemAvailable in /proc/meminfo, in bytes (0 where it cannot be read)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def huge_sizes(p):
    # 48 GiB, the largest shape gemm_bench takes; where the host has that much memory available,
    # under a 16 GiB address-space limit, so that it is refused on any machine.
    bench = [p.bench, "--variants", "cpu", "--shapes", "65536"]
    if available_memory_bytes() >= 48 << 30:
        p.case("sizes", "gemm_bench cpu 65536 under ulimit -v 16 GiB",
               limited(bench, "-v 16777216"))
    else:
        p.case("sizes", "gemm_bench cpu 65536", bench)
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
        pair = [ckpt, os.path.join(d, "m.optim.safetensors")]
        cmd = train_args(p, epochs="200", save=ckpt)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        time.sleep(rnd.uniform(1.0, 6.0))
        proc.send_signal(signal.SIGKILL)
        out = proc.communicate()[0].decode(errors="replace")
        ended = [l for l in out.splitlines() if "epoch" in l and "/200" in l]
        # An epoch's line comes before its save, so a kill after the first line may still land
        # inside the first save: with neither file of the pair renamed yet, nothing was saved.
        if len(ended) <= 1 and not any(os.path.exists(f) for f in pair):
            p.record("kill -9", f"trial {trial}", "clear",
                     "killed before the first save" + (" ended" if ended else ""))
            continue
        rc, text = consistent_resume(p, ckpt, 300)
        outcome = "clear" if rc == 0 else "data lost"
        p.record("kill -9", f"trial {trial} after {len(ended)} epochs", outcome,
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
