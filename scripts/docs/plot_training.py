#!/usr/bin/env python3
"""Plots a training run: loss and accuracy per epoch, or the epoch time of every variant.

    scripts/docs/plot_training.py history run.csv [-o docs/training_curves.png]
    scripts/docs/plot_training.py compare docs/results/train_compare.csv [-o docs/train_compare.png]

`history` reads what train_mlp --history writes (CSV or JSON: epoch, loss, train_acc, test_acc,
lr, epoch_s, gemm_s) and draws the loss and both accuracies against the epoch. `compare` reads
what train_mlp --compare --results writes and draws each variant's seconds per epoch, split into
GEMM and the rest. Needs matplotlib: scripts/setup/install_deps.sh installs Debian's
python3-matplotlib; when the python3 that runs this script lacks it (a pyenv or virtualenv one),
the script runs itself again under /usr/bin/python3 if that one has it, and says so.
"""

import argparse
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools.atomic import atomic_savefig  # noqa: E402


def read_rows(path):
    try:
        with open(path) as f:
            return json.load(f) if path.endswith(".json") else list(csv.DictReader(f))
    except (OSError, ValueError) as e:
        sys.exit(f"plot_training.py: cannot read {path}: {e}")


def column(rows, key, path):
    try:
        return [float(r[key]) for r in rows]
    except (KeyError, ValueError):
        sys.exit(f"plot_training.py: {path} has no numeric column '{key}'")


def log_ticks(lo, hi, subs):
    """The ticks s·10^e (s in subs) from lo to hi."""
    ticks = []
    for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        ticks += [s * 10.0 ** e for s in subs if lo <= s * 10.0 ** e <= hi]
    return ticks


def loss_axis(ax, losses):
    """A log scale with at least three labelled ticks over the losses: powers of ten, else 1-2-5
    in each decade, else every digit (a loss within less than a decade); a linear scale where even
    that labels fewer (a range too narrow for a log scale to show)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    finite = [v for v in losses if v > 0 and math.isfinite(v)]
    if not finite:
        return
    lo, hi = min(finite), max(finite)
    for subs in ((1,), (1, 2, 5), tuple(range(1, 10))):
        ticks = log_ticks(lo, hi, subs)
        if len(ticks) >= 3:
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(FixedLocator(ticks))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_locator(NullLocator())
            return


def plot_history(plt, rows, path, title):
    epochs = column(rows, "epoch", path)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    losses = column(rows, "loss", path)
    left.plot(epochs, losses, marker="o", color="tab:red")
    left.set_xlabel("epoch")
    left.set_ylabel("training loss (mean cross-entropy)")
    loss_axis(left, losses)
    right.plot(epochs, [100 * v for v in column(rows, "train_acc", path)], marker="o", label="train")
    right.plot(epochs, [100 * v for v in column(rows, "test_acc", path)], marker="s", label="test")
    right.set_xlabel("epoch")
    right.set_ylabel("accuracy (%)")
    right.legend()
    from matplotlib.ticker import MaxNLocator
    for ax in (left, right):
        ax.grid(True, alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs are whole numbers
    fig.suptitle(title or "train_mlp --history " + os.path.basename(path))
    return fig


def plot_compare(plt, rows, path, title):
    names = [r["variant"] for r in rows]
    total = column(rows, "s_per_epoch", path)
    gemm = [min(g, t) for g, t in zip(column(rows, "gemm_s_per_epoch", path), total)]
    rest = [t - g for g, t in zip(gemm, total)]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    ax.bar(names, [1e3 * g for g in gemm], label="GEMM", color="tab:blue")
    ax.bar(names, [1e3 * r for r in rest], bottom=[1e3 * g for g in gemm], label="the rest",
           color="tab:orange")
    for x, t in enumerate(total):
        ax.annotate(f"{1e3 * t:.1f}", (x, 1e3 * t), ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("ms per epoch")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    ax.set_title(title or "train_mlp --compare: time per epoch")
    return fig


SYSTEM_PYTHON = "/usr/bin/python3"  # the one Debian's python3-matplotlib installs for


def import_matplotlib_elsewhere():
    """matplotlib is missing for this python3: run again under the system's python3 when that one
    has it (what scripts/setup/install_deps.sh installs), else exit naming the command that
    installs it for the python3 that ran this script."""
    me = os.path.realpath(sys.executable or "python3")
    system = os.path.realpath(SYSTEM_PYTHON)
    if me != system and os.access(system, os.X_OK) and not os.environ.get("PLOT_TRAINING_REEXEC"):
        import subprocess
        has = subprocess.run([system, "-c", "import matplotlib"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL).returncode == 0
        if has:
            print(f"plot_training.py: note: matplotlib is not installed for {sys.executable}; "
                  f"running under {SYSTEM_PYTHON}, which has it", file=sys.stderr)
            os.environ["PLOT_TRAINING_REEXEC"] = "1"
            os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])
    if me == system:
        how = "scripts/setup/install_deps.sh (Debian's python3-matplotlib)"
    else:
        how = f"{sys.executable} -m pip install matplotlib"
    sys.exit(f"plot_training.py: matplotlib is not installed for {sys.executable}; install it "
             f"with: {how}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["history", "compare"])
    ap.add_argument("path", help="train_mlp --history or --results output")
    ap.add_argument("-o", "--output", help="PNG to write (default: next to the input)")
    ap.add_argument("--title")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        import_matplotlib_elsewhere()
    rows = read_rows(args.path)
    if not rows:
        sys.exit(f"plot_training.py: {args.path} holds no rows")
    fig = (plot_history if args.kind == "history" else plot_compare)(plt, rows, args.path,
                                                                     args.title)
    output = args.output or os.path.splitext(args.path)[0] + ".png"
    fig.tight_layout()
    atomic_savefig(fig, output, dpi=110)
    print(f"plot_training.py: wrote {os.path.normpath(output)}")


if __name__ == "__main__":
    main()
