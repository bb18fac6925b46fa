#!/usr/bin/env python3
"""Compares gemm_bench JSON files of two builds run in the same session, alternating:

    scripts/check/bench_ab.py --a old_1.json old_2.json --b new_1.json new_2.json [--csv out.csv]
                              [--warm]

For every (variant, shape, layout) in both, prints the best median of each side over its rounds,
the ratio b/a of those times, and each side's per cent of cuBLAS in its precision (timed beside
it in the same file), so that a change of clock between rounds shows up as a change of cuBLAS.
With --warm, the warm timings (gemm_bench's back-to-back calls in one CUDA graph, operands in L2:
warm_us_median and warm_pct_cublas*) instead of the flushed ones; the times stay in ms.

    scripts/check/bench_ab.py --chain c0=main.json c1=one.json c2=two.json [--csv out.csv] [--warm]

compares a series of builds, each a change on top of the one before (scripts/check/small_m.sh's
BASE_SRC, measured in one run): for every case, each side's best median and each side's time over
the one before it (c1_over_c0, ...), so that every change is measured alone. A case missing from a
side (a failed run) leaves its cells empty.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools.atomic import atomic_write, csv_text  # noqa: E402


def load(paths, warm=False):
    """(variant, m, n, k, layout) -> (best median in ms, per cent of cuBLAS at that run)."""
    best = {}
    prefix = "warm_" if warm else ""
    for path in paths:
        with open(path) as f:
            for r in json.load(f)["results"]:
                if r.get("status") != "ok" or (warm and r.get("warm_us_median") is None):
                    continue
                key = (r["variant"], r["m"], r["n"], r["k"], r["layout"])
                cublas = "pct_cublas_tf32" if r["precision"] == "TF32" else "pct_cublas"
                pct = r.get(prefix + cublas)
                ms = 1e-3 * r["warm_us_median"] if warm else r["ms_median"]
                if key not in best or ms < best[key][0]:
                    best[key] = (ms, pct)
    return best


def print_and_write(header, rows, csv_path):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in [header] + rows:
        print("  ".join(str(x).rjust(w) for x, w in zip(row, widths)))
    if csv_path:
        atomic_write(csv_path, csv_text([header] + rows, lineterminator="\n"))


def compare_two(args, digits):
    a, b = load(args.a, args.warm), load(args.b, args.warm)
    rows = []
    for key in sorted(a.keys() & b.keys()):
        (ta, pa), (tb, pb) = a[key], b[key]
        variant, m, n, k, layout = key
        rows.append([variant, f"{m}x{n}x{k}", layout, f"{ta:.{digits}f}", f"{tb:.{digits}f}",
                     f"{tb / ta:.3f}",
                     "" if pa is None else f"{pa:.1f}", "" if pb is None else f"{pb:.1f}"])
    if not rows:
        sys.exit("bench_ab.py: the two sides share no case")
    header = ["variant", "shape", "layout", "ms_a", "ms_b", "b_over_a", "pct_cublas_a",
              "pct_cublas_b"]
    print_and_write(header, rows, args.csv)


def compare_chain(args, digits):
    labels, sides = [], []
    for item in args.chain:
        label, sep, path = item.partition("=")
        if not sep or not label or not path:
            sys.exit(f"bench_ab.py: --chain takes LABEL=JSON, not '{item}'")
        if label in labels:
            sys.exit(f"bench_ab.py: --chain names '{label}' twice")
        labels.append(label)
        sides.append(load([path], args.warm))
    if len(sides) < 2:
        sys.exit("bench_ab.py: --chain needs at least two sides")
    rows = []
    for key in sorted(set().union(*sides)):
        times = [side[key][0] if key in side else None for side in sides]
        variant, m, n, k, layout = key
        rows.append([variant, f"{m}x{n}x{k}", layout]
                    + ["" if t is None else f"{t:.{digits}f}" for t in times]
                    + ["" if t is None or prev is None else f"{t / prev:.3f}"
                       for prev, t in zip(times, times[1:])])
    if not rows:
        sys.exit("bench_ab.py: no side has a case")
    header = (["variant", "shape", "layout"] + [f"ms_{label}" for label in labels]
              + [f"{label}_over_{prev}" for prev, label in zip(labels, labels[1:])])
    print_and_write(header, rows, args.csv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", nargs="+", help="gemm_bench JSON files of build A")
    ap.add_argument("--b", nargs="+", help="gemm_bench JSON files of build B")
    ap.add_argument("--chain", nargs="+", metavar="LABEL=JSON",
                    help="a series of builds, each compared with the one before it")
    ap.add_argument("--csv", help="write the table as CSV here too")
    ap.add_argument("--warm", action="store_true", help="compare the warm timings")
    args = ap.parse_args()
    if args.chain and (args.a or args.b):
        ap.error("--chain replaces --a and --b")
    if not args.chain and not (args.a and args.b):
        ap.error("give --a and --b, or --chain")
    digits = 5 if args.warm else 4  # warm calls take microseconds
    if args.chain:
        compare_chain(args, digits)
    else:
        compare_two(args, digits)


if __name__ == "__main__":
    main()
