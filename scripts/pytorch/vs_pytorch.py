#!/usr/bin/env python3
"""Training time of an MNIST MLP: PyTorch eager, PyTorch in one CUDA graph, gemm-mlp's train_mlp.

    scripts/pytorch/vs_pytorch.py                     the three models, fp32 and tf32, 6 epochs
    scripts/pytorch/vs_pytorch.py --models 784-1024-1024-10:256 --precisions tf32 --skip-ours

One recipe everywhere, train_mlp's defaults: Linear-ReLU-...-Linear; weights U(+-sqrt(6/in)),
biases U(+-1/sqrt(in)); pixels (v/255 - 0.1307) / 0.3081 as data/mnist.h has it; mean softmax
cross-entropy; SGD lr 0.1, momentum 0.9, weight decay 5e-4, the lr decayed per step by a cosine
to 0 over the run; reshuffled every epoch, the last partial batch kept.

  pytorch_eager  a plain loop (default SGD, the lr set from the host every step).
  pytorch_graph  one training step in one CUDA graph, replayed once per full batch: the gather
                 from the device-resident data through a device permutation and a device
                 position counter, the lr from a device step counter, forward, loss, backward
                 and a fused SGD step (which reads a tensor lr on the device). The last partial
                 batch runs eagerly, outside the graph.
  gemm-mlp       train_mlp --gemm VARIANT as a subprocess; its s/epoch and accuracy as reported.

PyTorch's s/epoch is the mean over epochs of the CUDA-event time around the epoch's training
steps (the shuffle upload and the evaluation are outside). An untimed epoch runs first (for the
graph: after the side-stream warm-up and the capture) to settle cuBLAS, the allocator and the
momentum buffers; parameters and optimiser state are then re-initialised in place from the seed,
so the timed run starts where train_mlp's does and the captured addresses stay valid.

Writes the CSV (--csv), a JSON sidecar next to it (device, torch version, date, rows) and a
Markdown table on stdout. Exit status 1 when a run failed (its row has the error in `note`), 2
without a CUDA GPU and PyTorch. --help needs neither torch nor numpy.

The PyTorch runs are in scripts/gemm_mlp_tools/pytorch_baseline.py, the train_mlp runs in
scripts/gemm_mlp_tools/train_mlp_runner.py.
"""

import argparse
import datetime
import json
import os
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools.atomic import atomic_write  # noqa: E402
from gemm_mlp_tools.formatted_rows import fmt, formatted_csv  # noqa: E402
from gemm_mlp_tools.model_list import parse_model, split_list  # noqa: E402
from gemm_mlp_tools.train_mlp_runner import run_train_mlp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_MODELS = "784-1024-1024-10:256,784-512-512-10:128,784-4096-4096-10:512"
COLUMNS = ["model", "batch", "precision", "system", "variant", "s_per_epoch",
           "ratio_to_pytorch_graph", "test_acc", "epochs", "note"]

# pytorch_baseline.py (which imports torch), imported in main() after argument parsing, so that
# --help works without torch
baseline = None


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--models", default=DEFAULT_MODELS,
                    help="comma list of LAYERS:BATCH entries, e.g. 784-1024-1024-10:256")
    ap.add_argument("--precisions", default="fp32,tf32", help="comma list of fp32, tf32")
    ap.add_argument("--skip-pytorch", action="store_true", help="only run train_mlp")
    ap.add_argument("--skip-ours", action="store_true", help="only run PyTorch")
    ap.add_argument("--epochs", type=int, default=6, help="timed epochs per run")
    ap.add_argument("--seed", type=int, default=1, help="initialisation and shuffle seed")
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data", "mnist"),
                    help="MNIST IDX files, raw or .gz")
    ap.add_argument("--train-mlp", help="train_mlp binary",
                    default=os.path.join(ROOT, "build-gpu", "apps", "train_mlp", "train_mlp"))
    ap.add_argument("--fp32-variants", default="fast,tf32x3_ws,tf32x3_fast,auto",
                    help="train_mlp --gemm variants for fp32 (cublas is always added)")
    ap.add_argument("--tf32-variants", default="tf32,wgmma_ws,tf32_fast,cublas_tf32",
                    help="train_mlp --gemm variants for tf32")
    ap.add_argument("--train-mlp-args", default="", help="extra train_mlp flags, one string")
    ap.add_argument("--csv", default=os.path.join(ROOT, "docs", "results", "vs_pytorch.csv"),
                    help="output CSV; the JSON sidecar goes next to it")
    args = ap.parse_args(argv)
    args.models = [parse_model(m, ap.error) for m in split_list(args.models)]
    args.precisions = split_list(args.precisions)
    if set(args.precisions) - {"fp32", "tf32"}:
        ap.error(f"--precisions takes fp32 and/or tf32, not {args.precisions}")
    if args.epochs < 1:
        ap.error("--epochs must be >= 1")
    return args


# --- one run, rows, output -------------------------------------------------------------------

def run_all(args, data):
    """Every configuration in order; a failure becomes a row with an empty time and a note."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, sizes, batch in args.models:
            for precision in args.precisions:
                def add(system, variant, s, acc, note=""):
                    rows.append(dict(model=name, batch=batch, precision=precision, system=system,
                                     variant=variant, s_per_epoch=s, ratio_to_pytorch_graph=None,
                                     test_acc=None if acc is None else 100 * acc,
                                     epochs=args.epochs, note=note))
                    print(f"{name} b{batch} {precision} {system}/{variant}: "
                          f"{'-' if s is None else f'{s * 1e3:.1f} ms/epoch'} {note}",
                          file=sys.stderr)

                if not args.skip_pytorch:
                    for system, variant, fn in (("pytorch_eager", "eager", baseline.run_eager),
                                                ("pytorch_graph", "graph", baseline.run_graph)):
                        baseline.set_precision(precision)
                        try:
                            add(system, variant, *fn(data, sizes, batch, args.epochs, args.seed))
                        except Exception as e:  # keep the other results; exit 1 at the end
                            traceback.print_exc()
                            add(system, variant, None, None, f"{type(e).__name__}: {e}"[:200])
                        baseline.release_memory()
                if not args.skip_ours:
                    variants = split_list(args.fp32_variants if precision == "fp32"
                                          else args.tf32_variants)
                    if precision == "fp32" and "cublas" not in variants:
                        variants.append("cublas")
                    for variant in variants:
                        add("gemm-mlp", variant, *run_train_mlp(args, sizes, batch, variant, tmp))
    for row in rows:
        ref = next((r["s_per_epoch"] for r in rows if r["system"] == "pytorch_graph"
                    and (r["model"], r["precision"]) == (row["model"], row["precision"])), None)
        if row["s_per_epoch"] and ref:
            row["ratio_to_pytorch_graph"] = row["s_per_epoch"] / ref
    return rows


CSV_FORMATS = {"s_per_epoch": ".6f", "ratio_to_pytorch_graph": ".3f", "test_acc": ".2f"}


def write_outputs(args, rows):
    os.makedirs(os.path.dirname(os.path.abspath(args.csv)), exist_ok=True)
    atomic_write(args.csv, formatted_csv(COLUMNS, rows, CSV_FORMATS))
    sidecar = os.path.splitext(args.csv)[0] + ".json"
    atomic_write(sidecar, json.dumps(
        {**baseline.environment(),
         "date": datetime.datetime.now(datetime.timezone.utc).isoformat("T", "seconds"),
         "epochs": args.epochs, "seed": args.seed, "rows": rows}, indent=1) + "\n")
    print(f"wrote {args.csv} and {sidecar}", file=sys.stderr)


def print_markdown(rows):
    print("| model | batch | precision | system | variant | s/epoch (ms) | ratio to PyTorch graph "
          "| test acc % |")
    print("|---|---:|---|---|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['batch']} | {r['precision']} | {r['system']} | {r['variant']} "
              f"| {fmt(r['s_per_epoch'], '.1f', 1e3) or '-'} "
              f"| {fmt(r['ratio_to_pytorch_graph'], '.3f') or '-'} "
              f"| {fmt(r['test_acc'], '.2f') or '-'} |")


def main(argv=None):
    args = parse_args(argv)
    global baseline
    try:
        from gemm_mlp_tools import pytorch_baseline as baseline
        cuda = baseline.cuda_available()
    except ImportError:
        cuda = False
    if not cuda:
        print("vs_pytorch.py: needs a CUDA GPU and PyTorch", file=sys.stderr)
        return 2
    data = None if args.skip_pytorch else baseline.load_mnist(args.data_dir)
    rows = run_all(args, data)
    write_outputs(args, rows)
    print_markdown(rows)
    return 1 if any(r["note"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
