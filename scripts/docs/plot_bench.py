#!/usr/bin/env python3
"""Plots gemm_bench results: TFLOP/s against square size, one line per variant.

    scripts/docs/plot_bench.py OUT/gemm_bench.csv [-o docs/gemm_squares.png]

Reads the CSV (or JSON) that gemm_bench writes; uses the square NN shapes with status ok or
capped. Needs matplotlib (present on the GPU machine's python3).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools.atomic import atomic_savefig  # noqa: E402
from gemm_mlp_tools.bench_results import load  # noqa: E402  (same reader as the docs table)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="gemm_bench --csv or --json output")
    ap.add_argument("-o", "--output",
                    default=os.path.join(os.path.dirname(__file__), "..", "..", "docs", "gemm_squares.png"))
    ap.add_argument("--title", default=None)
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_bench.py: matplotlib is not installed (pip install matplotlib)")

    rows, info = load(args.results)
    lines = {}
    for r in rows:
        if r["m"] == r["n"] == r["k"] and r["layout"] == "NN" and r["status"] in ("ok", "capped"):
            lines.setdefault(r["variant"], []).append((r["m"], r["tflops"]))
    if not lines:
        sys.exit(f"plot_bench.py: no square NN results in {args.results}")

    fig, ax = plt.subplots(figsize=(8, 5))
    # tab20 gives every series its own colour (the default cycle has ten for twelve series); the
    # markers cycle too, so that lines stay apart in grey print.
    colours = plt.get_cmap("tab20").colors
    markers = "os^vD<>phX*P"
    for i, (variant, pts) in enumerate(lines.items()):
        pts.sort()
        style = "--" if variant.startswith("cublas") else "-"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker=markers[i % len(markers)],
                color=colours[(2 * i) % 20 + (2 * i // 20) % 2], label=variant)
    ax.set_xscale("log", base=2)
    sizes = sorted({p[0] for pts in lines.values() for p in pts})
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(s) for s in sizes])
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOP/s")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(args.title or f"GEMM throughput, square NN{' on ' + info['device'] if info.get('device') else ''}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    atomic_savefig(fig, args.output, dpi=120)
    print(f"plot_bench.py: wrote {os.path.normpath(args.output)}")


if __name__ == "__main__":
    main()
