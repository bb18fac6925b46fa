#!/usr/bin/env python3
"""Writes the result tables of README.md and docs/RESULTS.md from the committed H200 results in
docs/results/.

Each table goes between its marker comments (<!-- NAME:begin --> ... <!-- NAME:end -->) in
whichever of the two documents holds them (README.md holds `train`; docs/RESULTS.md the others),
so re-running replaces them in place. Standard library only.
  squares  TFLOP/s of every variant on square NN GEMMs, and % of cuBLAS fp32 at 4096³
  mlp      TFLOP/s on the nine GEMMs of the default model's step (784-1024-1024-10, batch 256,
           mlp_shapes.json), with the percentage of cuBLAS in each variant's own precision
  wide     the same for the wide model (784-4096-4096-10, batch 512, mlp4096_shapes.json)
  train    train_mlp --compare: seconds per epoch (one CUDA graph per step, and launch by
           launch from train_compare_nograph.csv of the same run), GEMM share, speedup over
           naive, accuracy
  vs       scripts/pytorch/vs_pytorch.py: s per epoch beside PyTorch eager and PyTorch's CUDA graph
"""
import argparse
import csv
import json
import os
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def replace_block(docs, name, body):
    """Replaces block NAME in the one document of `docs` ({path: text}) that holds its markers."""
    pattern = re.compile(r"(<!-- %s:begin -->\n).*?(<!-- %s:end -->)" % (name, name), re.S)
    holders = [path for path, text in docs.items() if pattern.search(text)]
    if len(holders) != 1:
        raise SystemExit("readme_tables.py: <!-- %s:begin/end --> markers in %d of %s (want one)"
                         % (name, len(holders), ", ".join(os.path.relpath(p) for p in docs)))
    docs[holders[0]] = pattern.sub(lambda m: m.group(1) + body + m.group(2), docs[holders[0]])


def fmt(x, digits=1):
    return "" if x is None else "%.*f" % (digits, x)


def squares_table(results, variants):
    sizes = sorted({r["m"] for r in results if r["m"] == r["n"] == r["k"] and r["layout"] == "NN"})
    by = {(r["variant"], r["m"]): r for r in results
          if r["m"] == r["n"] == r["k"] and r["layout"] == "NN"}
    head = "| variant | " + " | ".join("%d³" % s for s in sizes) + " | % cuBLAS at 4096³ |\n"
    head += "|---|" + "--:|" * (len(sizes) + 1) + "\n"
    rows = []
    for v in variants:
        cells = [fmt(by[(v, s)]["tflops"]) if (v, s) in by else "" for s in sizes]
        r4096 = by.get((v, 4096))
        pct = r4096["pct_cublas_tf32"] if r4096 and r4096["precision"] == "TF32" else (
            r4096["pct_cublas"] if r4096 else None)
        note = " (of cuBLAS TF32)" if r4096 and r4096["precision"] == "TF32" else ""
        rows.append("| %s | %s | %s%s |" % (v, " | ".join(cells), fmt(pct), note))
    return head + "\n".join(rows) + "\n"


def step_table(results):
    """One row per GEMM of a training step, one column per variant: TFLOP/s and, in brackets,
    the percentage of cuBLAS in the variant's own precision (fp32 or TF32)."""
    variants, shapes = [], []
    for r in results:
        if r["variant"] not in variants:
            variants.append(r["variant"])
        key = (r["m"], r["n"], r["k"], r["layout"])
        if key not in shapes:
            shapes.append(key)
    by = {(r["variant"], (r["m"], r["n"], r["k"], r["layout"])): r for r in results}
    head = "| GEMM | " + " | ".join(variants) + " |\n|---|" + "--:|" * len(variants) + "\n"
    rows = []
    for s in shapes:
        cells = []
        for v in variants:
            r = by.get((v, s))
            pct = None if r is None else (
                r["pct_cublas_tf32"] if r["precision"] == "TF32" else r["pct_cublas"])
            cells.append("" if r is None else "%s (%s%%)" % (fmt(r["tflops"], 1), fmt(pct, 0)))
        rows.append("| %d×%d×%d %s | %s |" % (s + (" | ".join(cells),)))
    return head + "\n".join(rows) + "\n"


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def train_table(path, nograph_path):
    rows = read_csv(path)
    nograph = {r["variant"]: r for r in read_csv(nograph_path)} if os.path.exists(nograph_path) else {}
    out = ("| variant | s / epoch | launch by launch | GEMM share | speedup over naive "
           "| test accuracy |\n")
    out += "|---|--:|--:|--:|--:|--:|\n"
    for r in rows:
        plain = nograph.get(r["variant"])
        out += "| %s | %.4f | %s | %.0f%% | %.2f× | %.2f%% |\n" % (
            r["variant"], float(r["s_per_epoch"]),
            "%.4f" % float(plain["s_per_epoch"]) if plain else "",
            100 * float(r["gemm_share"]), float(r["speedup_vs_naive"]),
            100 * float(r["final_test_acc"]))
    return out


def vs_table(path):
    out = ("| model | batch | precision | system | variant | ms / epoch | vs PyTorch graph "
           "| test accuracy |\n")
    out += "|---|--:|---|---|---|--:|--:|--:|\n"
    for r in read_csv(path):
        ms = "%.1f" % (1e3 * float(r["s_per_epoch"])) if r["s_per_epoch"] else r["note"]
        ratio = "%.2f" % float(r["ratio_to_pytorch_graph"]) if r["ratio_to_pytorch_graph"] else ""
        out += "| %s | %s | %s | %s | %s | %s | %s | %s%% |\n" % (
            r["model"], r["batch"], r["precision"], r["system"], r["variant"], ms, ratio,
            r["test_acc"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=os.path.join(ROOT, "docs", "results"),
                    help="folder with gemm_bench.json and train_compare.csv")
    ap.add_argument("--docs", nargs="+",
                    default=[os.path.join(ROOT, "README.md"), os.path.join(ROOT, "docs", "RESULTS.md")],
                    help="the documents that hold the tables' markers")
    args = ap.parse_args()
    with open(os.path.join(args.results, "gemm_bench.json")) as f:
        bench = json.load(f)
    results = bench["results"]
    variants = []
    for r in results:
        if r["variant"] not in variants:
            variants.append(r["variant"])
    docs = {}
    for path in args.docs:
        with open(path) as f:
            docs[path] = f.read()
    replace_block(docs, "squares", squares_table(results, variants))
    for block, name in (("mlp", "mlp_shapes.json"), ("wide", "mlp4096_shapes.json")):
        with open(os.path.join(args.results, name)) as f:
            replace_block(docs, block, step_table(json.load(f)["results"]))
    replace_block(docs, "train",
                         train_table(os.path.join(args.results, "train_compare.csv"),
                                     os.path.join(args.results, "train_compare_nograph.csv")))
    replace_block(docs, "vs", vs_table(os.path.join(args.results, "vs_pytorch.csv")))
    for path, text in docs.items():
        with open(path, "w") as f:
            f.write(text)
    print("readme_tables.py: updated", ", ".join(os.path.relpath(p) for p in docs))


if __name__ == "__main__":
    main()
