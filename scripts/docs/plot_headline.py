#!/usr/bin/env python3
"""Draws the README's headline: training time per variant beside PyTorch's CUDA graph.

    scripts/docs/plot_headline.py [docs/results/vs_pytorch.csv] [-o docs/headline.png]

Reads what scripts/pytorch/vs_pytorch.py writes (its CSV, and the JSON sidecar beside it for the
device, date and epochs). One panel per model: a bar of ms per epoch for every gemm-mlp variant
the run trained, the fp32 ones (fp32 accuracy: CUDA cores or 3×TF32) and the TF32 ones apart,
our engine on cuBLAS hatched; PyTorch's whole step in one CUDA graph as a horizontal line in
each precision. Needs matplotlib (Debian's python3-matplotlib).
"""

import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools.atomic import atomic_savefig  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FP32_COLOUR, TF32_COLOUR = "tab:blue", "tab:orange"


def read(path):
    try:
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r["s_per_epoch"]]
    except (OSError, KeyError) as e:
        sys.exit(f"plot_headline.py: cannot read {path}: {e}")
    if not rows:
        sys.exit(f"plot_headline.py: {path} holds no timed rows")
    meta = {}
    sidecar = os.path.splitext(path)[0] + ".json"
    if os.path.exists(sidecar):
        with open(sidecar) as f:
            meta = json.load(f)
    return rows, meta


def panel(ax, model, batch, rows):
    ours = [r for r in rows if r["system"] == "gemm-mlp"]
    ours.sort(key=lambda r: (r["precision"] != "fp32", r["variant"].startswith("cublas")))
    xs = range(len(ours))
    ms = [1e3 * float(r["s_per_epoch"]) for r in ours]
    colours = [FP32_COLOUR if r["precision"] == "fp32" else TF32_COLOUR for r in ours]
    bars = ax.bar(xs, ms, color=colours, edgecolor="black", linewidth=0.5)
    for bar, r in zip(bars, ours):
        if r["variant"].startswith("cublas"):
            bar.set_hatch("//")
            bar.set_alpha(0.6)
    top = max(ms)
    lines = []
    for precision, colour, style in (("fp32", FP32_COLOUR, "--"), ("tf32", TF32_COLOUR, ":")):
        graph = [r for r in rows if r["system"] == "pytorch_graph" and r["precision"] == precision]
        if graph:
            y = 1e3 * float(graph[0]["s_per_epoch"])
            top = max(top, y)
            ax.axhline(y, color=colour, linestyle=style, linewidth=2)
            lines.append("%s %.1f" % ("TF32" if precision == "tf32" else precision, y))
    for x, y in zip(xs, ms):
        ax.text(x, y + 0.01 * top, "%.0f" % y if y >= 100 else "%.1f" % y, ha="center",
                va="bottom", fontsize=7)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r["variant"] for r in ours], rotation=60, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(ours) - 0.4)
    ax.set_ylim(0, 1.12 * top)
    ax.set_title("%s, batch %s\nPyTorch's graph: %s ms" % (model, batch, ", ".join(lines)),
                 fontsize=10)
    ax.grid(axis="y", alpha=0.3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?", default=os.path.join(ROOT, "docs", "results", "vs_pytorch.csv"),
                    help="vs_pytorch.py's CSV (default docs/results/vs_pytorch.csv)")
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "docs", "headline.png"),
                    help="PNG to write (default docs/headline.png)")
    args = ap.parse_args()
    rows, meta = read(args.csv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
    except ImportError:
        sys.exit("plot_headline.py: needs matplotlib (apt-get install python3-matplotlib)")
    models = []
    for r in rows:
        if (r["model"], r["batch"]) not in models:
            models.append((r["model"], r["batch"]))
    fig, axes = plt.subplots(1, len(models), figsize=(4.2 * len(models), 4.6), squeeze=False)
    for ax, (model, batch) in zip(axes[0], models):
        panel(ax, model, batch, [r for r in rows if (r["model"], r["batch"]) == (model, batch)])
    axes[0][0].set_ylabel("ms per training epoch (lower is faster)")
    fig.legend(handles=[Patch(facecolor=FP32_COLOUR, edgecolor="black", label="gemm-mlp, fp32 accuracy"),
                        Patch(facecolor=TF32_COLOUR, edgecolor="black", label="gemm-mlp, TF32"),
                        Patch(facecolor="white", edgecolor="black", hatch="//",
                              label="gemm-mlp's engine on cuBLAS"),
                        Line2D([], [], color=FP32_COLOUR, linestyle="--", linewidth=2,
                               label="PyTorch, step in one CUDA graph, fp32"),
                        Line2D([], [], color=TF32_COLOUR, linestyle=":", linewidth=2,
                               label="PyTorch, step in one CUDA graph, TF32")],
               loc="lower center", ncol=5, fontsize=8, frameon=False)
    where = ""
    if meta:
        where = " (%s, %s, mean of %s epochs)" % (meta.get("device", ""), meta.get("date", "")[:10],
                                                 meta.get("epochs", ""))
    fig.suptitle("MNIST MLP training time per epoch: gemm-mlp's kernels against PyTorch's CUDA "
                 "graph" + where, fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 0.95))
    atomic_savefig(fig, args.output, dpi=110)
    print(f"plot_headline.py: wrote {os.path.normpath(args.output)}")


if __name__ == "__main__":
    main()
