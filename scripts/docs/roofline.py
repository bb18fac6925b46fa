#!/usr/bin/env python3
"""Writes the training step's floor beside every measured epoch time (docs/results/roofline.csv).

    scripts/docs/roofline.py [--results DIR] [--csv OUT]

For each row of DIR/vs_pytorch.csv (model × precision × system and variant), the step's GFLOP and
minimum MB, its floor at the H200's peaks (scripts/gemm_mlp_tools/roofline.py says how), and the
floor as a fraction of the measured time. The L2 size comes from DIR/gemm_bench.json's device.
scripts/docs/readme_tables.py renders the CSV into docs/RESULTS.md.
"""
import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools import roofline  # noqa: E402
from gemm_mlp_tools.atomic import atomic_write, csv_dict_text  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
COLUMNS = ["model", "batch", "precision", "system", "variant", "s_per_epoch", "gflop_per_step",
           "mb_per_step", "compute_floor_us", "memory_floor_us", "floor_s_per_epoch",
           "floor_over_measured"]


def rows(results_dir):
    try:
        with open(os.path.join(results_dir, "gemm_bench.json")) as f:
            l2_bytes = json.load(f)["device"]["l2_bytes"]
        with open(os.path.join(results_dir, "vs_pytorch.csv")) as f:
            measured = list(csv.DictReader(f))
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"roofline.py: cannot read the results in {results_dir}: {e}")
    out = []
    for r in measured:
        try:
            sizes = [int(s) for s in r["model"].split("-")]
            batch, precision = int(r["batch"]), r["precision"]
            f = roofline.floor(sizes, batch, precision, l2_bytes)
        except (KeyError, ValueError) as e:
            sys.exit(f"roofline.py: bad row in vs_pytorch.csv ({e}): {r}")
        s = float(r["s_per_epoch"]) if r["s_per_epoch"] else None
        out.append({"model": r["model"], "batch": batch, "precision": precision,
                    "system": r["system"], "variant": r["variant"],
                    "s_per_epoch": "" if s is None else "%.6f" % s,
                    "gflop_per_step": "%.3f" % f["gflop"], "mb_per_step": "%.1f" % f["mbytes"],
                    "compute_floor_us": "%.2f" % f["compute_us"],
                    "memory_floor_us": "%.2f" % f["memory_us"],
                    "floor_s_per_epoch": "%.6f" % f["floor_s_per_epoch"],
                    "floor_over_measured": "" if not s else "%.3f" % (f["floor_s_per_epoch"] / s)})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=os.path.join(ROOT, "docs", "results"),
                    help="folder with vs_pytorch.csv and gemm_bench.json")
    ap.add_argument("--csv", help="output (default: roofline.csv in --results)")
    args = ap.parse_args()
    path = args.csv or os.path.join(args.results, "roofline.csv")
    table = rows(args.results)
    atomic_write(path, csv_dict_text(COLUMNS, table))
    print(f"roofline.py: wrote {len(table)} rows to {os.path.relpath(path)}")


if __name__ == "__main__":
    main()
