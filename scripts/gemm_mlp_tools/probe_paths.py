"""The bad-input probe's odd paths (issue 37; scripts/check/probe.py): FIFOs where the apps read or
write a file, and names that cannot be written (too long, the temporary name alone too long, /proc,
past PATH_MAX).

A FIFO must be refused at once with a message: opening one for reading waits for a writer, so an
app that opens it hangs, which the runner's time limit turns into `unbounded`. A name that cannot
be written must be refused before any work: an epoch trained and then lost at its save was the
old bug, so these cases run with a bound of a few seconds and no epoch line (nor, for gemm_bench,
a case's row) allowed."""
import os
import stat

from gemm_mlp_tools.probe_cases import train_args
from gemm_mlp_tools.probe_files import mlp_tensors, mnist_copy, write_png, write_safetensors

# A FIFO case that has not answered in this many seconds hangs on the FIFO.
FIFO_TIMEOUT = 20
# A refusal of a name that cannot be written comes before any work: within this many seconds.
REFUSAL_SECONDS = 5


def fifo(p, name):
    path = p.path("fifo_" + name)  # apart from the other categories' files
    os.mkfifo(path)
    return path


def kept(p, category, name, path):
    """Records `data lost` when the FIFO at path was replaced (a rename over it)."""
    if not os.path.exists(path) or not stat.S_ISFIFO(os.lstat(path).st_mode):
        p.record(category, name + ": the FIFO kept", "data lost", "the FIFO was replaced")


def fifos(p):
    model = p.path("fifo_model.safetensors")
    write_safetensors(model, mlp_tensors([784, 16, 10]))
    write_png(p.path("fifo_digit.png"), 28, 28, 0)
    pr = [p.predict, "--device", "cpu", "--model"]
    ev = [p.train, "--device", "cpu", "--data-dir", p.data]
    case = lambda name, cmd: p.case("fifos", name, cmd, timeout=FIFO_TIMEOUT)

    case("predict --model a FIFO", pr + [fifo(p, "m.fifo"), p.path("fifo_digit.png")])
    case("predict an image that is a FIFO", pr + [model, fifo(p, "digit.fifo")])
    rc, out, err = case("predict a FIFO among good images (goes on, exit non-zero)",
                        pr + [model, fifo(p, "digit2.fifo"), p.path("fifo_digit.png")])
    if rc != 0 and "fifo_digit.png" not in out:
        p.record("fifos", "goes on past a FIFO image", "silent", out + err)
    case("gemm_bench --from-json a FIFO",
         [p.bench, "--from-json", fifo(p, "b.json"), "--auto-table", p.path("fifo_t.inc")])
    case("train_mlp --eval a FIFO", ev + ["--eval", fifo(p, "eval.safetensors")])
    case("train_mlp --resume a FIFO", ev + ["--resume", fifo(p, "resume.safetensors"),
                                            "--epochs", "2"])
    # A pair whose optimiser file is a FIFO: --resume, --eval and predict all look at it (the
    # newer file of the pair is used), and refuse it.
    os.makedirs(p.path("fifopair"))
    pair = os.path.join(p.path("fifopair"), "m.safetensors")
    write_safetensors(pair, mlp_tensors([784, 16, 10]))
    os.mkfifo(os.path.join(p.path("fifopair"), "m.optim.safetensors"))
    case("train_mlp --resume, the optimiser file a FIFO", ev + ["--resume", pair, "--epochs", "2"])
    case("train_mlp --eval, the optimiser file a FIFO", ev + ["--eval", pair])
    case("predict, the optimiser file a FIFO", pr + [pair, p.path("fifo_digit.png")])
    # --data-dir's files: the raw name, and the .gz name where the raw one is missing.
    d = mnist_copy(p, "fifodata")
    os.remove(os.path.join(d, "train-images-idx3-ubyte"))
    os.mkfifo(os.path.join(d, "train-images-idx3-ubyte"))
    case("--data-dir's training images a FIFO", train_args(p, data_dir=d))
    d = mnist_copy(p, "fifodatagz")
    os.remove(os.path.join(d, "t10k-labels-idx1-ubyte"))
    os.mkfifo(os.path.join(d, "t10k-labels-idx1-ubyte.gz"))
    case("--data-dir's test labels a FIFO named .gz", train_args(p, data_dir=d))
    # Files written: refused before any work, and the FIFO left as it was.
    for flag in ["--save", "--history", "--results"]:
        target = fifo(p, "out" + flag.strip("-") + ".fifo")
        p.case("fifos", f"train_mlp {flag} onto a FIFO", train_args(p) + [flag, target],
               timeout=FIFO_TIMEOUT, seconds=REFUSAL_SECONDS)
        kept(p, "fifos", f"train_mlp {flag}", target)
    for flag in ["--csv", "--json"]:
        target = fifo(p, "bench" + flag.strip("-") + ".fifo")
        case(f"gemm_bench {flag} onto a FIFO",
             [p.bench, "--variants", "cpu", "--shapes", "8", flag, target])
        kept(p, "fifos", f"gemm_bench {flag}", target)


def names(p):
    """Names that cannot be written: refused before any training, within REFUSAL_SECONDS."""
    base = train_args(p, train_limit="60000", hidden="256", epochs="2")  # seconds an epoch
    long_name = p.path("n" * 300 + ".safetensors")
    # Names the file system takes, whose temporary name (NAME.tmp.<pid>.<n>, at least 9 bytes more
    # whatever the pid) it does not: 255 bytes a name; the optimiser file of --save adds ".optim".
    tmp_save = p.path("s" * 236 + ".safetensors")  # 248 bytes; its optimiser file's 254
    tmp_csv = p.path("h" * 246 + ".csv")  # 250 bytes
    os.makedirs(p.path("longdir"), exist_ok=True)
    for flag, target, what in [
            ("--save", long_name, "a 312-byte name"),
            ("--history", p.path("h" * 300 + ".csv"), "a 304-byte name"),
            ("--results", p.path("r" * 300 + ".csv"), "a 304-byte name"),
            ("--save", p.path("d" * 300 + "/m.safetensors"), "in a folder of a 300-byte name"),
            ("--save", tmp_save, "248 bytes, its temporary name too long"),
            ("--history", tmp_csv, "250 bytes, its temporary name too long"),
            ("--results", tmp_csv, "250 bytes, its temporary name too long"),
            ("--save", "/proc/m.safetensors", "in /proc"),
            ("--history", "/proc/h.csv", "in /proc"),
            ("--results", "/proc/r.csv", "in /proc"),
            ("--save", "/proc/self/status", "a /proc file"),
            ("--history", p.path("longdir") + "/" + "x/" * 2100 + "h.csv",
             "a path over PATH_MAX")]:
        p.case("names", f"{flag} {what}", base + [flag, target], seconds=REFUSAL_SECONDS)
    # gemm_bench writes its files after the last case: a name it cannot write, before the first.
    bench = [p.bench, "--variants", "cpu", "--shapes", "8,64"]
    for flag, target, what in [("--csv", p.path("c" * 300 + ".csv"), "a 304-byte name"),
                               ("--json", "/proc/b.json", "in /proc"),
                               ("--auto-table", p.path("t" * 300 + ".inc"), "a 304-byte name")]:
        p.case("names", f"gemm_bench {flag} {what}", bench + [flag, target],
               seconds=REFUSAL_SECONDS)
    left = [f for f in os.listdir(p.work) if ".tmp." in f]
    if left:
        p.record("names", "no temporary files left", "silent", " ".join(left))
