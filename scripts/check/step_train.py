#!/usr/bin/env python3
"""Training through the step kernel against the graph step: s/epoch and test accuracy.

    scripts/check/step_train.py --train-mlp build-gpu/apps/train_mlp/train_mlp --csv out/step_train.csv
    scripts/check/step_train.py --models 784-1024-1024-10:256 --variants tf32_fast --epochs 3

In one run, trains each model of --models with each variant of --variants twice, one
`train_mlp --gemm VARIANT` each (scripts/gemm_mlp_tools/train_mlp_runner.py): once with the step
replayed as a CUDA graph (today's default) and once with --step-kernel, persistent launches of
several steps (train_mlp's default count, or --steps-per-launch), each step gathering the next
batch inside its launch. Issue 38 asks the two to agree in test accuracy within 0.3 points after
3 epochs (the default --epochs); the script checks that, and reports the kernel's s/epoch over the
graph's.

Writes the CSV (--csv: model, batch, variant, graph_s_per_epoch, kernel_s_per_epoch, ratio,
graph_test_acc, kernel_test_acc, acc_points, note) and prints it as a Markdown table. Exit status
1 when a run fails or the accuracies differ by more than --max-acc-points, 2 on bad usage. On the
H200 the defaults take about a minute. Standard library only.
"""

import argparse
import csv
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools.train_mlp_runner import run_train_mlp  # noqa: E402

DEFAULT_MODELS = "784-1024-1024-10:256,784-512-512-10:128,784-4096-4096-10:512"
DEFAULT_VARIANTS = "tf32_fast,tf32x3_fast,auto"


def parse_models(text):
    """[(sizes, batch)] from 'W-W-...-W:BATCH,...'."""
    models = []
    for item in text.split(","):
        try:
            widths, batch = item.split(":")
            sizes = [int(w) for w in widths.split("-")]
            batch = int(batch)
        except ValueError:
            raise argparse.ArgumentTypeError(f"model {item!r} is not W-W-...-W:BATCH")
        if len(sizes) < 3 or min(sizes) < 1 or batch < 1:
            raise argparse.ArgumentTypeError(
                f"model {item!r}: at least one hidden layer, widths and batch >= 1")
        models.append((sizes, batch))
    return models


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--train-mlp", default="build-gpu/apps/train_mlp/train_mlp")
    p.add_argument("--data-dir", default=os.environ.get("MNIST_DIR", "data/mnist"))
    p.add_argument("--models", type=parse_models, default=parse_models(DEFAULT_MODELS),
                   help=f"comma-separated W-...-W:BATCH (default {DEFAULT_MODELS})")
    p.add_argument("--variants", default=DEFAULT_VARIANTS,
                   help=f"comma-separated (default {DEFAULT_VARIANTS})")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-acc-points", type=float, default=0.3,
                   help="largest allowed test-accuracy difference, in points (default 0.3)")
    p.add_argument("--steps-per-launch", type=int,
                   help="the step kernel's training steps per launch (default: train_mlp's)")
    p.add_argument("--csv", help="write the table here")
    args = p.parse_args()
    if args.epochs < 1:
        p.error(f"--epochs must be >= 1, got {args.epochs}")
    if args.steps_per_launch is not None and args.steps_per_launch < 1:
        p.error(f"--steps-per-launch must be >= 1, got {args.steps_per_launch}")
    kernel_args = "--step-kernel"
    if args.steps_per_launch is not None:
        kernel_args += f" --steps-per-launch {args.steps_per_launch}"
    if not os.access(args.train_mlp, os.X_OK):
        p.error(f"--train-mlp {args.train_mlp} is not an executable (build train_mlp first)")

    args.train_mlp_args = ""  # the runner's flags before `extra`: none here
    rows, failed = [], False
    for sizes, batch in args.models:
        for variant in args.variants.split(","):
            result = {}
            for mode, extra in (("graph", ""), ("kernel", kernel_args)):
                with tempfile.TemporaryDirectory() as tmp:
                    result[mode] = run_train_mlp(args, sizes, batch, variant, tmp, extra)
            (g_s, g_acc, g_note), (k_s, k_acc, k_note) = result["graph"], result["kernel"]
            note = "; ".join(n for n in (g_note, k_note) if n)
            row = {"model": "-".join(map(str, sizes)), "batch": batch, "variant": variant,
                   "graph_s_per_epoch": g_s, "kernel_s_per_epoch": k_s, "ratio": None,
                   "graph_test_acc": g_acc, "kernel_test_acc": k_acc, "acc_points": None,
                   "note": note}
            if g_s is None or k_s is None:
                failed = True
            else:
                row["ratio"] = k_s / g_s
                row["acc_points"] = 100 * (k_acc - g_acc)
                if abs(row["acc_points"]) > args.max_acc_points:
                    failed = True
                    row["note"] = (f"test accuracy differs by {row['acc_points']:+.2f} points, "
                                   f"past {args.max_acc_points}")
            rows.append(row)

    fields = list(rows[0].keys())
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    print("| model, batch | variant | graph ms/epoch | kernel ms/epoch | kernel / graph | "
          "test acc graph | kernel | note |")
    print("|---|---|--:|--:|--:|--:|--:|---|")
    for r in rows:
        ms = lambda s: "-" if s is None else f"{1000 * s:.1f}"  # noqa: E731
        pct = lambda a: "-" if a is None else f"{100 * a:.2f}%"  # noqa: E731
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        print(f"| {r['model']}, {r['batch']} | {r['variant']} | {ms(r['graph_s_per_epoch'])} | "
              f"{ms(r['kernel_s_per_epoch'])} | {ratio} | {pct(r['graph_test_acc'])} | "
              f"{pct(r['kernel_test_acc'])} | {r['note']} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
