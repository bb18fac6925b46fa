#!/usr/bin/env python3
"""Production holds at any model: training times at widths and batches no standard model uses.

    scripts/check/odd_widths.py --train-mlp build-gpu/apps/train_mlp/train_mlp --csv out/odd_widths.csv
    scripts/check/odd_widths.py --models 784-777-333-10:200 --epochs 3

In one run, trains each model of --models (none is one of the three standard models of
scripts/pytorch/vs_pytorch.py; odd widths and batches, one to three hidden layers) with each
variant, one `train_mlp --gemm VARIANT` each (scripts/gemm_mlp_tools/train_mlp_runner.py, the
runner vs_pytorch.py uses): tf32 (step 7), tf32_fast, regtile, dbuf, warptile (steps 4-6), fast,
tf32x3 (step 10), tf32x3_fast, auto, and every variant auto's table (--auto-table, the
kernels/auto_table.inc the binary was built with) lists for the GPU (--gpu; a GPU the table does
not list is a usage error). Then checks issue 24's rules per model
(scripts/gemm_mlp_tools/production_rules.py): tf32_fast no slower than step 7, fast than the best
of steps 4-6, tf32x3_fast than step 10, auto than any variant its table lists; each as the ratio
of s/epoch to the fastest reference's, passing at <= 1 + --tolerance (default 2%, above
train_mlp's run-to-run noise).

Writes the CSV (--csv: model, batch, variant, precision, auto_lists, s_per_epoch, test_acc,
epochs, note) and prints two Markdown tables: ms per epoch of every model and variant, and the
rules. Exit status 1 when a rule fails or a run fails (its row has the error in `note`), 2 on bad
usage. On the H200 the default models take about 2 minutes at 2 epochs. Standard library only.
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools import production_rules as rules  # noqa: E402
from gemm_mlp_tools.atomic import atomic_write, csv_text  # noqa: E402
from gemm_mlp_tools.train_mlp_runner import run_train_mlp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Odd widths (777, 333, 257, 1500) and batches (200, 96, 64, 384, 160); a bottleneck, one hidden
# layer, two wide ones, three.
DEFAULT_MODELS = ("784-777-333-10:200,784-1500-100-10:96,784-257-10:64,784-2000-2000-10:384,"
                  "784-640-480-320-10:160")
STANDARD_MODELS = {("784-1024-1024-10", 256), ("784-512-512-10", 128),
                   ("784-4096-4096-10", 512)}
VARIANTS = ["tf32", "tf32_fast", "regtile", "dbuf", "warptile", "fast", "tf32x3", "tf32x3_fast",
            "auto"]


def split_list(text):
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_model(entry, error):
    """'784-777-333-10:200' -> ('784-777-333-10', [784, 777, 333, 10], 200)."""
    try:
        layers, batch = entry.split(":")
        sizes = [int(s) for s in layers.split("-")]
        batch = int(batch)
    except ValueError:
        error(f"bad --models entry '{entry}' (want e.g. 784-777-333-10:200)")
    if len(sizes) < 3 or sizes[0] != 784 or sizes[-1] != 10 or min(sizes) < 1 or batch < 1:
        error(f"--models entry '{entry}' must be 784-...-10 with positive widths and batch")
    if (layers, batch) in STANDARD_MODELS:
        error(f"--models entry '{entry}' is a standard model (vs_pytorch.py measures it); "
              "pick widths or a batch none of them uses")
    return layers, sizes, batch


def first_gpu_name():
    """The name nvidia-smi gives the first GPU, or None without nvidia-smi or a GPU."""
    if not shutil.which("nvidia-smi"):
        return None
    r = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                       capture_output=True, text=True)
    names = r.stdout.strip().splitlines() if r.returncode == 0 else []
    return names[0].strip() if names else None


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--models", default=DEFAULT_MODELS,
                    help="comma list of LAYERS:BATCH entries, e.g. 784-777-333-10:200")
    ap.add_argument("--epochs", type=int, default=2, help="epochs per run")
    ap.add_argument("--seed", type=int, default=1, help="initialisation and shuffle seed")
    ap.add_argument("--tolerance", type=float, default=rules.DEFAULT_TOLERANCE,
                    help="a rule passes at ratio <= 1 + this")
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data", "mnist"),
                    help="MNIST IDX files, raw or .gz")
    ap.add_argument("--train-mlp", help="train_mlp binary",
                    default=os.path.join(ROOT, "build-gpu", "apps", "train_mlp", "train_mlp"))
    ap.add_argument("--auto-table", default=os.path.join(ROOT, "kernels", "auto_table.inc"),
                    help="the auto table train_mlp was built with")
    ap.add_argument("--gpu", help="the GPU's name as the table writes it (default: the first GPU "
                    "nvidia-smi lists, the one train_mlp runs on)")
    ap.add_argument("--train-mlp-args", default="", help="extra train_mlp flags, one string")
    ap.add_argument("--csv", default=os.path.join(ROOT, "docs", "results", "odd_widths.csv"),
                    help="output CSV")
    args = ap.parse_args(argv)
    if args.epochs < 1:
        ap.error(f"--epochs must be >= 1, got {args.epochs}")
    if not 0 <= args.tolerance < 1:
        ap.error(f"--tolerance must be in [0, 1), got {args.tolerance}")
    args.models = [parse_model(m, ap.error) for m in split_list(args.models)]
    if not args.models:
        ap.error("--models lists no model")
    if not os.access(args.train_mlp, os.X_OK):
        ap.error(f"--train-mlp {args.train_mlp} is not an executable (build train_mlp first)")
    if args.gpu is None:
        args.gpu = first_gpu_name()
        if args.gpu is None:
            ap.error("--gpu: nvidia-smi names no GPU here; give the GPU's name")
    try:
        args.listed = rules.auto_table_variants(args.auto_table, args.gpu)
    except OSError as e:
        ap.error(f"--auto-table: {e}")
    except ValueError as e:
        ap.error(f"--auto-table {e}")
    csv_dir = os.path.dirname(os.path.abspath(args.csv))
    if not os.path.isdir(csv_dir):
        ap.error(f"--csv {args.csv}: the folder {csv_dir} does not exist")
    return args


def run_all(args, listed):
    """Every model with every variant, in order; a failed run is a row without a time."""
    variants = list(dict.fromkeys(VARIANTS + listed))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, sizes, batch in args.models:
            for variant in variants:
                s, acc, note = run_train_mlp(args, sizes, batch, variant, tmp)
                rows.append(dict(model=name, batch=batch, variant=variant,
                                 precision=rules.precision(variant),
                                 auto_lists="yes" if variant in listed else "no",
                                 s_per_epoch=s, test_acc=None if acc is None else 100 * acc,
                                 epochs=args.epochs, note=note))
                print(f"{name} b{batch} {variant}: "
                      f"{'-' if s is None else f'{s * 1e3:.1f} ms/epoch'} {note}",
                      file=sys.stderr, flush=True)
    return rows


def write_csv(path, rows):
    table = [rules.COLUMNS] + [
        [r["model"], r["batch"], r["variant"], r["precision"], r["auto_lists"],
         "" if r["s_per_epoch"] is None else "%.6f" % r["s_per_epoch"],
         "" if r["test_acc"] is None else "%.2f" % r["test_acc"], r["epochs"], r["note"]]
        for r in rows]
    atomic_write(path, csv_text(table, lineterminator="\n"))
    print(f"odd_widths.py: wrote {path}", file=sys.stderr)


def main(argv=None):
    args = parse_args(argv)
    rows = run_all(args, args.listed)
    write_csv(args.csv, rows)
    # The rules on the CSV's figures, as readme tables would read them back.
    with open(args.csv, newline="") as f:
        measured = rules.read_rows(csv.DictReader(f))
    results = rules.check(measured, args.tolerance)
    print(rules.markdown(measured, results, args.tolerance))
    failed = [r for r in results if not r["passed"]]
    for r in failed:
        print(f"odd_widths.py: FAIL: {r['model']} batch {r['batch']}: {r['variant']} against "
              f"{r['against']}: {r['note'] or 'ratio %.3f' % r['ratio']}", file=sys.stderr)
    return 1 if failed or any(r["note"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
