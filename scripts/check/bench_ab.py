#!/usr/bin/env python3
"""Compares gemm_bench JSON files of two builds run in the same session, alternating:

    scripts/check/bench_ab.py --a old_1.json old_2.json --b new_1.json new_2.json [--csv out.csv]

For every (variant, shape, layout) in both, prints the best median of each side over its rounds,
the ratio b/a of those times, and each side's per cent of cuBLAS in its precision (timed beside
it in the same file), so that a change of clock between rounds shows up as a change of cuBLAS.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools.atomic import atomic_write, csv_text  # noqa: E402


def load(paths):
    """(variant, m, n, k, layout) -> (best ms_median, per cent of cuBLAS at that run)."""
    best = {}
    for path in paths:
        with open(path) as f:
            for r in json.load(f)["results"]:
                if r.get("status") != "ok":
                    continue
                key = (r["variant"], r["m"], r["n"], r["k"], r["layout"])
                pct = r["pct_cublas_tf32"] if r["precision"] == "TF32" else r["pct_cublas"]
                if key not in best or r["ms_median"] < best[key][0]:
                    best[key] = (r["ms_median"], pct)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", nargs="+", required=True, help="gemm_bench JSON files of build A")
    ap.add_argument("--b", nargs="+", required=True, help="gemm_bench JSON files of build B")
    ap.add_argument("--csv", help="write the table as CSV here too")
    args = ap.parse_args()
    a, b = load(args.a), load(args.b)
    rows = []
    for key in sorted(a.keys() & b.keys()):
        (ta, pa), (tb, pb) = a[key], b[key]
        variant, m, n, k, layout = key
        rows.append([variant, f"{m}x{n}x{k}", layout, f"{ta:.4f}", f"{tb:.4f}", f"{tb / ta:.3f}",
                     "" if pa is None else f"{pa:.1f}", "" if pb is None else f"{pb:.1f}"])
    if not rows:
        sys.exit("bench_ab.py: the two sides share no case")
    header = ["variant", "shape", "layout", "ms_a", "ms_b", "b_over_a", "pct_cublas_a",
              "pct_cublas_b"]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in [header] + rows:
        print("  ".join(str(x).rjust(w) for x, w in zip(row, widths)))
    if args.csv:
        atomic_write(args.csv, csv_text([header] + rows))


if __name__ == "__main__":
    main()
