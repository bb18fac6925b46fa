#!/usr/bin/env python3
"""Compares gemm_bench JSON files of two builds run in the same session, alternating:

    scripts/check/bench_ab.py --a old_1.json old_2.json --b new_1.json new_2.json [--csv out.csv]
                              [--warm]

For every (variant, shape, layout) in both, prints the best median of each side over its rounds,
the ratio b/a of those times, and each side's per cent of cuBLAS in its precision (timed beside
it in the same file), so that a change of clock between rounds shows up as a change of cuBLAS.
With --warm, the warm timings (gemm_bench's back-to-back calls in one CUDA graph, operands in L2:
warm_us_median and warm_pct_cublas*) instead of the flushed ones; the times stay in ms.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", nargs="+", required=True, help="gemm_bench JSON files of build A")
    ap.add_argument("--b", nargs="+", required=True, help="gemm_bench JSON files of build B")
    ap.add_argument("--csv", help="write the table as CSV here too")
    ap.add_argument("--warm", action="store_true", help="compare the warm timings")
    args = ap.parse_args()
    a, b = load(args.a, args.warm), load(args.b, args.warm)
    rows = []
    digits = 5 if args.warm else 4  # warm calls take microseconds
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
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in [header] + rows:
        print("  ".join(str(x).rjust(w) for x, w in zip(row, widths)))
    if args.csv:
        atomic_write(args.csv, csv_text([header] + rows))


if __name__ == "__main__":
    main()
