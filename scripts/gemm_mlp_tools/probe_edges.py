"""The bad-input probe's third round of edges (issue 58; scripts/check/probe.py): output files
on a full disk, flags --eval ignored, a signal during --eval, one dataset read as the other,
dataset names, blank names, what stb_image and gzip pass over, limits (ulimit -v, and a sweep of
them) and sizes named, a symbolic-link loop, a checkpoint that cannot be replaced, progress
without a terminal, and the scripts' --help.

A case whose message misses what it should name (the duplicate, the size, the limit, the cause) is
`unclear`; a valid input whose oddity goes unsaid (no note) is `silent`."""
import json
import os
import shutil
import signal
import stat
import subprocess
import time

from gemm_mlp_tools.probe_cases import ROOT, train_args
from gemm_mlp_tools.probe_files import mlp_tensors, mnist_copy, write_png, write_safetensors
from gemm_mlp_tools.probe_runner import limited, run

# A refusal due before any work comes within this many seconds.
REFUSAL_SECONDS = 10
# Fashion-MNIST's first labels (train, test), which tell its files from MNIST's.
FASHION_TRAIN = bytes([9, 0, 0, 3, 0, 2, 7, 2, 5, 5, 0, 9, 5, 5, 7, 9, 1, 0, 6, 4])
FASHION_TEST = bytes([9, 2, 1, 1, 6, 1, 4, 6, 5, 7, 4, 5, 7, 3, 4, 1, 2, 4, 8, 0])


def expect_text(p, category, name, rc, out, err, want, ok_status=None):
    """`unclear` when the output lacks `want` (a refusal that does not name its cause), or, with
    ok_status, `silent` when the exit status is not ok_status."""
    text = out + err
    if ok_status is not None and rc != ok_status:
        p.record(category, name, "silent", f"exit {rc}: " + text)
    elif want not in text:
        p.record(category, name, "unclear", f"no '{want}' in: " + text)


def full_disk_outputs(p):
    """gemm_bench's --csv, --json and --auto-table when the write fails at the end: the old file
    stays whole, and the error names the system's reason."""
    cpu_json = p.path("edges_cpu.json")
    if run([p.bench, "--variants", "cpu", "--shapes", "8", "--json", cpu_json], 120)[0] != 0:
        p.record("edges", "gemm_bench --json for --from-json", "silent", "gemm_bench failed")
        return
    doc = json.load(open(cpu_json))
    doc["device"] = {"name": "GPU X"}
    for r in doc["results"]:
        r["variant"] = "fast"
    json.dump(doc, open(cpu_json, "w"))
    for flag, command in [
            ("--csv", [p.bench, "--variants", "cpu", "--shapes", "8,16"]),
            ("--json", [p.bench, "--variants", "cpu", "--shapes", "8,16"]),
            ("--auto-table", [p.bench, "--from-json", cpu_json])]:
        target = p.path("edges_old" + flag.strip("-"))
        old = b"an earlier run's file, whole\n" * 200
        open(target, "wb").write(old)
        name = f"gemm_bench {flag} on a full disk (ulimit -f 0)"
        rc, out, err = p.case("edges", name, limited(command + [flag, target], "-f 0"))
        if open(target, "rb").read() != old:
            p.record("edges", name + ": the old file kept", "data lost", "the file was changed")
        expect_text(p, "edges", name + ": the reason named", rc, out, err, "File too large")


def eval_flags_and_signal(p):
    model = p.path("edges_m.safetensors")
    write_safetensors(model, mlp_tensors([784, 16, 10]))
    ev = [p.train, "--device", "cpu", "--data-dir", p.data, "--eval", model]
    for flag in (["--compare"], ["--no-graph"], ["--lr", "0.5"], ["--seed", "3"]):
        rc, out, err = p.case("edges", "train_mlp --eval with " + " ".join(flag), ev + flag)
        expect_text(p, "edges", "--eval names " + flag[0], rc, out, err, flag[0] + " does not apply")
    # Ctrl-C during --eval: it stops at once, saying so, with 130 (the evaluation takes about a
    # second; the signal comes as soon as the handler is in place).
    big = p.path("edges_big.safetensors")
    write_safetensors(big, mlp_tensors([784, 1024, 1024, 10]))
    proc = subprocess.Popen([p.train, "--device", "cpu", "--data-dir", p.data, "--eval", big],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:  # train_mlp's handler, not the forked Python's before the exec
            if os.readlink(f"/proc/{proc.pid}/exe") != os.path.realpath(p.train):
                time.sleep(0.001)
                continue
            mask = [line for line in open(f"/proc/{proc.pid}/status") if line.startswith("SigCgt")]
            if mask and (int(mask[0].split()[1], 16) >> (signal.SIGINT - 1)) & 1:
                break
        except OSError:
            break
        time.sleep(0.001)
    proc.send_signal(signal.SIGINT)
    text = proc.communicate(timeout=120)[0].decode(errors="replace")
    name = "Ctrl-C during --eval"
    if proc.returncode != 130 or "test accuracy" in text:
        p.record("edges", name, "silent", f"exit {proc.returncode}: {text}")
    elif "stopped by SIGINT" not in text:
        p.record("edges", name, "unclear", f"exit 130: {text}")
    else:
        p.record("edges", name, "clear", f"exit 130: {text}")


def datasets(p):
    """Fashion-MNIST's files read as MNIST (an MNIST checkpoint's --eval, training without
    --dataset fashion); fetch_mnist.sh's dataset names (its downloads stubbed)."""
    d = mnist_copy(p, "edges_fashion", labels_hook=lambda r: r[:8] + FASHION_TRAIN + r[28:])
    test_labels = os.path.join(d, "t10k-labels-idx1-ubyte")
    raw = open(test_labels, "rb").read()
    open(test_labels, "wb").write(raw[:8] + FASHION_TEST + raw[28:])
    model = p.path("edges_mnist.safetensors")
    write_safetensors(model, mlp_tensors([784, 16, 10]), {"dataset": "mnist"})
    for name, command in [
            ("--eval of an MNIST checkpoint on Fashion-MNIST's files",
             [p.train, "--device", "cpu", "--data-dir", d, "--eval", model]),
            ("training on Fashion-MNIST's files without --dataset fashion",
             train_args(p, data_dir=d))]:
        rc, out, err = p.case("edges", name, command)
        expect_text(p, "edges", name + ": names the dataset", rc, out, err,
                    "these are Fashion-MNIST's files")
    # fetch_mnist.sh, the download tools stubbed: a name whatever its case, an unknown word.
    stubs = p.path("edges_stubs")
    os.makedirs(stubs)
    for tool in ["npm", "curl", "wget", "apt-get"]:
        path = os.path.join(stubs, tool)
        open(path, "w").write(f"#!/bin/sh\necho STUBBED {tool} \"$@\" >&2\nexit 99\n")
        os.chmod(path, 0o755)
    env = dict(os.environ, PATH=stubs + ":" + os.environ["PATH"])
    fetch = os.path.join(ROOT, "scripts/setup/fetch_mnist.sh")
    cwd = p.path("edges_fetch")
    os.makedirs(cwd)
    for words, want in [(["FASHION", "fx"], "fashion-mnist"),
                        (["cifar"], "is no dataset (mnist or fashion)")]:
        name = "fetch_mnist.sh " + " ".join(words)
        proc = subprocess.run(["bash", fetch] + words, cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=60)
        made = [f for f in os.listdir(cwd) if f in ("FASHION", "cifar")]
        if made or want not in proc.stdout + proc.stderr:
            p.record("edges", name, "silent",
                     f"exit {proc.returncode}, folders {made}: " + proc.stdout + proc.stderr)
        else:
            p.record("edges", name, "clear", f"exit {proc.returncode}: " + proc.stderr.strip())


def names_and_variants(p):
    bench = [p.bench, "--variants", "cpu", "--shapes", "8"]
    for flag in ["--csv", "--json"]:
        blank = p.path(" ")
        rc, out, err = p.case("edges", f"gemm_bench {flag} ' '", bench + [flag, blank])
        if os.path.exists(blank):
            p.record("edges", f"gemm_bench {flag} ' ': no file", "silent", "a file ' ' written")
            os.remove(blank)
    rc, out, err = p.case("edges", "gemm_bench --variants cpu,cpu",
                          [p.bench, "--variants", "cpu,cpu", "--shapes", "8"])
    expect_text(p, "edges", "--variants names the duplicate", rc, out, err, "'cpu' twice")
    loop = p.path("edges_loop")
    os.symlink(loop, loop)
    rc, out, err = p.case("edges", "--data-dir a symbolic-link loop", train_args(p, data_dir=loop))
    expect_text(p, "edges", "a symbolic-link loop named", rc, out, err,
                "Too many levels of symbolic links")


def files_passed_over(p):
    """What zlib and stb_image pass over: a note each for a valid input, a reason for an error."""
    model = p.path("edges_pm.safetensors")
    write_safetensors(model, mlp_tensors([784, 16, 10]))
    pr = [p.predict, "--device", "cpu", "--model", model]
    # bytes after a gzip stream
    d = mnist_copy(p, "edges_trailing", labels_hook=lambda r: r, gz=True)
    with open(os.path.join(d, "train-labels-idx1-ubyte.gz"), "ab") as f:
        f.write(b"trailing junk\n")
    rc, out, err = p.case("edges", "gzip with bytes after its stream (valid, a note)",
                          train_args(p, data_dir=d), expect_error=False)
    expect_text(p, "edges", "gzip trailing bytes noted", rc, out, err,
                "bytes after the end of its gzip data")
    # a PNG with a bad CRC (decodes: a note), and one without IEND
    write_png(p.path("edges_digit.png"), 28, 28, 200)
    png = open(p.path("edges_digit.png"), "rb").read()
    bad = bytearray(png)
    bad[-12 - 1] ^= 0xFF  # the CRC-32 of the chunk before IEND
    open(p.path("edges_crc.png"), "wb").write(bytes(bad))
    rc, out, err = p.case("edges", "PNG with a bad CRC (valid, a note)",
                          pr + [p.path("edges_crc.png")], expect_error=False)
    expect_text(p, "edges", "PNG CRC noted", rc, out, err, "fails its CRC-32")
    open(p.path("edges_noiend.png"), "wb").write(png[:-12])
    rc, out, err = p.case("edges", "PNG without IEND (an error with its reason)",
                          pr + [p.path("edges_noiend.png")])
    expect_text(p, "edges", "PNG without IEND named", rc, out, err, "before its IEND chunk")
    # an animated GIF: two 1x1 frames
    frame = bytes([0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0x02, 0x02, 0x44, 0x01, 0x00])
    gif = b"GIF89a" + bytes([1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255]) + frame * 2 + b";"
    open(p.path("edges_anim.gif"), "wb").write(gif)
    rc, out, err = p.case("edges", "animated GIF (valid, a note)", pr + [p.path("edges_anim.gif")],
                          expect_error=False)
    expect_text(p, "edges", "animated GIF noted", rc, out, err, "an animated GIF of 2 frames")
    # a PNG whose header claims 100000 x 100000
    write_png(p.path("edges_huge.png"), 8, 8)
    huge = bytearray(open(p.path("edges_huge.png"), "rb").read())
    huge[16:24] = (100000).to_bytes(4, "big") * 2
    open(p.path("edges_huge.png"), "wb").write(bytes(huge))
    rc, out, err = p.case("edges", "PNG claiming 100000x100000", pr + [p.path("edges_huge.png")])
    expect_text(p, "edges", "its size and the limit named", rc, out, err,
                "100000x100000 (10000000000 pixels), more than the")


def limits(p):
    """ulimit -v: refused before any work, naming the limit; a gzip file claiming 4 GiB too."""
    rc, out, err = p.case("edges", "train_mlp --hidden 1000000 under ulimit -v 4 GiB",
                          limited(train_args(p, hidden="1000000"), "-v 4194304"),
                          seconds=REFUSAL_SECONDS)
    expect_text(p, "edges", "the address-space limit named", rc, out, err, "ulimit -v")
    count = (65536).to_bytes(4, "big")
    header = (0x803).to_bytes(4, "big") + count + (256).to_bytes(4, "big") * 2
    d = mnist_copy(p, "edges_claims4g", images_hook=lambda r: header + r[16:4_000_000],
                   labels_hook=lambda r: r[:4] + count + r[8:], gz=True)
    rc, out, err = p.case("edges", "a gzip file claiming 4 GiB under ulimit -v 2 GiB",
                          limited(train_args(p, data_dir=d), "-v 2097152"),
                          seconds=REFUSAL_SECONDS)
    expect_text(p, "edges", "4 GiB claim: the limit named", rc, out, err, "ulimit -v")
    # Limits from below what the libraries map to past what the run needs: each run trains or is
    # refused with a message. None waits on an OpenBLAS thread that found no room, nor crashes in
    # a library's initialiser (base/openblas_threads.h).
    sweep, bad = range(768, 1792, 32), 0
    for mib in sweep:
        rc, out, err, _, timed_out = run(limited(train_args(p), f"-v {mib << 10}"), 60)
        outcome = ("unbounded" if timed_out else "crashed" if rc < 0 or rc > 128
                   else "silent" if rc != 0 and not err.strip() else "clear")
        if outcome != "clear":
            bad += 1
            p.record("edges", f"train_mlp under ulimit -v {mib} MiB", outcome,
                     f"exit {rc}: " + (err.strip() or out.strip()[-200:]))
    p.record("edges", f"train_mlp under ulimit -v {sweep[0]} to {sweep[-1]} MiB",
             "clear" if bad == 0 else "unbounded",
             f"{len(sweep) - bad} of {len(sweep)} limits trained or were refused with a message")


def replaceable(p):
    """A --resume checkpoint that cannot be replaced (chattr +i): refused before training."""
    if os.geteuid() != 0 or not shutil.which("chattr"):
        p.record("edges", "--resume of an immutable checkpoint", "skipped", "needs root and chattr")
        return
    d = p.path("edges_immutable")
    os.makedirs(d)
    ckpt = os.path.join(d, "m.safetensors")
    if run(train_args(p, save=ckpt), 300)[0] != 0:
        p.record("edges", "a run to save", "silent", "train_mlp --save failed")
        return
    if subprocess.run(["chattr", "+i", ckpt], capture_output=True).returncode != 0:
        p.record("edges", "--resume of an immutable checkpoint", "skipped",
                 "chattr +i failed (the file system has no such flag)")
        return
    try:
        rc, out, err = p.case("edges", "--resume of an immutable checkpoint",
                              [p.train, "--device", "cpu", "--data-dir", p.data, "--resume", ckpt,
                               "--epochs", "2"], seconds=REFUSAL_SECONDS)
        expect_text(p, "edges", "immutable named", rc, out, err, "immutable (chattr +i)")
    finally:
        subprocess.run(["chattr", "-i", ckpt])


def first_hour(p):
    """Progress without a terminal, and the scripts' --help, which does no work."""
    rc, out, err = p.case("edges", "an epoch into a pipe: a line every --log-seconds",
                          train_args(p, train_limit="60000", hidden="1024",
                                     log_seconds="1"), expect_error=False)
    if rc == 0 and " step " not in out:
        p.record("edges", "a progress line within the epoch", "silent", out)
    for script, want in [("scripts/test.sh", "README's test command"),
                         ("scripts/train.sh", "The one command to train")]:
        rc, out, err = p.case("edges", f"{script} --help", [os.path.join(ROOT, script), "--help"],
                              expect_error=False, timeout=30)
        expect_text(p, "edges", f"{script} --help: its usage", rc, out, err, want)


def edges(p):
    full_disk_outputs(p)
    eval_flags_and_signal(p)
    datasets(p)
    names_and_variants(p)
    files_passed_over(p)
    limits(p)
    replaceable(p)
    first_hour(p)
