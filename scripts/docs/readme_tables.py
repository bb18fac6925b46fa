#!/usr/bin/env python3
"""Writes the result tables and figures of README.md, docs/RESULTS.md and docs/KERNELS.md from the
committed H200 results in docs/results/.

Each block goes between its marker comments (<!-- NAME:begin --> ... <!-- NAME:end -->) in
whichever of the documents holds them (README.md holds `pytorch`, `train` and `first_run`;
docs/KERNELS.md `ladder`, `production` and the `step:VARIANT` blocks; docs/RESULTS.md the
others), so re-running replaces them in place and a new GPU run only needs its results copied to
docs/results/ (docs/results/README.md lists the files). Standard library only.
  pytorch  vs_pytorch.csv/.json: per model and precision, PyTorch eager, PyTorch's CUDA graph, our
           fastest variant and our engine on cuBLAS, in ms per epoch and as a ratio to the graph
  first_run  first_run.csv (scripts/check/first_run_time.sh --csv): a fresh clone's set-up and
           build, and one epoch on that machine; a placeholder row while the file has none
  squares  TFLOP/s of every variant on square NN GEMMs, and % of cuBLAS fp32 at 4096³
  mlp      TFLOP/s on the nine GEMMs of the default model's step (784-1024-1024-10, batch 256,
           mlp_shapes.json), with the percentage of cuBLAS in each variant's own precision
  wide     the same for the wide model (784-4096-4096-10, batch 512, mlp4096_shapes.json)
  train    train_mlp --compare: seconds per epoch (one CUDA graph per step, and launch by
           launch from train_compare_nograph.csv of the same run), GEMM share, speedup over
           naive, accuracy; the date and GPU from summary.txt, the run's gpu_check.sh summary
  vs       scripts/pytorch/vs_pytorch.py: s per epoch beside PyTorch eager and PyTorch's CUDA graph
  roofline scripts/docs/roofline.py (roofline.csv): each model's step at the H200's peaks, and the
           floor as a fraction of every measured epoch time of vs_pytorch.csv
  path     scripts/check/critical_path.py (critical_path.csv): the step's critical path per variant,
           each kernel's time alone (ncu), against all its kernels in a row
  odd      scripts/check/odd_widths.py (odd_widths.csv): ms per epoch at odd widths and batches,
           and the production rules checked on them (scripts/gemm_mlp_tools/production_rules.py)
  ladder   the numbered steps: 4096³ NN TFLOP/s (gemm_bench.json) and s per training epoch
           (train_compare.csv), each against the step before
  step:V   one step's two figures, against the step it builds on, and the commands that measure
           them again
  production  the production variants and cuBLAS, the same two figures
"""
import argparse
import csv
import json
import os
import re
import sys
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools import production_rules  # noqa: E402
from gemm_mlp_tools.critical_path import short_name  # noqa: E402

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


def train_table(path, nograph_path, summary_path):
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
    return out + "\n" + summary_line(summary_path) + "\n"


def summary_line(path):
    """'Measured on GPU on DATE by scripts/check/gpu_check.sh' from a gpu_check.sh summary.txt."""
    date = gpu = None
    with open(path) as f:
        for line in f:
            m = re.match(r"gpu_check\.sh summary \((\d{4}-\d\d-\d\d)", line)
            if m:
                date = m.group(1)
            if line.startswith("GPU: "):
                gpu = line[5:].split(",")[0].strip()
    if not date or not gpu:
        raise SystemExit("readme_tables.py: %s names no date or no GPU (is it gpu_check.sh's "
                         "summary.txt?)" % path)
    return "Measured on the %s on %s by `scripts/check/gpu_check.sh`." % (gpu, date)


def pytorch_table(path, json_path):
    """Per model and precision: PyTorch eager and graph, our fastest variant and our engine on
    cuBLAS, ms per epoch, each of ours with its ratio to PyTorch's graph."""
    with open(json_path) as f:
        meta = json.load(f)
    groups = {}
    for r in read_csv(path):
        if r["s_per_epoch"]:
            groups.setdefault((r["model"], r["batch"], r["precision"]), []).append(r)
    out = ["| model, batch | precision | PyTorch eager | PyTorch, CUDA graph | gemm-mlp, fastest "
           "| gemm-mlp on cuBLAS |", "|---|---|--:|--:|--:|--:|"]
    for (model, batch, precision), rows in groups.items():
        by = {r["system"]: r for r in rows}
        ours = [r for r in rows if r["system"] == "gemm-mlp" and not r["variant"].startswith("cublas")]
        blas = [r for r in rows if r["system"] == "gemm-mlp" and r["variant"].startswith("cublas")]
        if "pytorch_graph" not in by or not ours:
            raise SystemExit("readme_tables.py: %s has no PyTorch graph or no gemm-mlp row for %s, "
                             "%s" % (path, model, precision))
        best = min(ours, key=lambda r: float(r["s_per_epoch"]))

        def ms(r, ratio=True):
            text = "%.1f" % (1e3 * float(r["s_per_epoch"]))
            if ratio:
                text += " (%.2f×)" % float(r["ratio_to_pytorch_graph"])
            return text
        out.append("| %s, %s | %s | %s | %s | **%s** `%s` | %s |" % (
            model, batch, "TF32" if precision == "tf32" else precision,
            ms(by["pytorch_eager"], False) if "pytorch_eager" in by else "",
            ms(by["pytorch_graph"], False), ms(best), best["variant"],
            ms(blas[0]) if blas else ""))
    out.append("")
    out.append("ms per epoch (in brackets: the time over PyTorch's CUDA graph's in the same precision; "
               "below 1 is faster); the mean of %d epochs after an untimed one, the same model, "
               "seed and hyper-parameters for all. Measured on the %s on %s by "
               "`scripts/check/gpu_check.sh` (`scripts/pytorch/vs_pytorch.py`, PyTorch %s)."
               % (int(meta["epochs"]), meta["device"], meta["date"][:10], meta["torch"]))
    return "\n".join(out) + "\n"


def first_run_table(path):
    """One row per measurement of first_run.csv; a placeholder row while it has none."""
    rows = read_csv(path) if os.path.exists(path) else []
    out = ("| machine | fresh clone to a trained epoch | set-up and build | one epoch of the "
           "default model | train_mlp |\n|---|--:|--:|--:|--:|\n")
    if not rows:
        return out + ("| *not measured yet: `scripts/check/first_run_time.sh --csv "
                      "docs/results/first_run.csv`* | | | | |\n")
    for r in rows:
        gpu = r["gpu"] if r["gpu"] != "none" else "no GPU"
        out += "| %s cores, %s (%s) | %.1f min | %.1f min | %.1f s | %.0f MB |\n" % (
            r["cores"], gpu, r["date"], float(r["wall_s"]) / 60, float(r["setup_build_s"]) / 60,
            float(r["epoch_s"]), float(r["train_mlp_bytes"]) / 1e6)
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


# The numbered steps in reading order: (step, variant, the step it is measured against, family).
# Families: fp32 on CUDA cores (1-6), TF32 (7-9), fp32-accurate 3×TF32 (10-11); a family's first
# step is measured against the step its code builds on.
STEPS = [
    (1, "naive", None, "fp32"),
    (2, "tiled", "naive", "fp32"),
    (3, "vec", "tiled", "fp32"),
    (4, "regtile", "vec", "fp32"),
    (5, "dbuf", "regtile", "fp32"),
    (6, "warptile", "dbuf", "fp32"),
    (7, "tf32", "warptile", "TF32"),
    (8, "wgmma", "tf32", "TF32"),
    (9, "wgmma_ws", "wgmma", "TF32"),
    (10, "tf32x3", "tf32", "3×TF32"),
    (11, "tf32x3_ws", "tf32x3", "3×TF32"),
]
PRODUCTION = ["fast", "tf32_fast", "tf32x3_fast", "auto", "cublas", "cublas_tf32"]
# Variants train_mlp --compare trains only when named (the TF32 ones).
NAMED_IN_COMPARE = {"tf32", "wgmma", "wgmma_ws", "tf32_fast", "cublas_tf32"}
BENCH = "build/apps/gemm_bench/gemm_bench"


def roofline_table(path):
    rows = read_csv(path)
    out = ["| model | batch | precision | GFLOP / step | MB / step | floor, µs / step (compute, memory) "
           "| system | variant | ms / epoch | floor, ms / epoch | floor / measured |",
           "|---|--:|---|--:|--:|--:|---|---|--:|--:|--:|"]
    for r in rows:
        if not r["s_per_epoch"]:
            continue
        out.append("| %s | %s | %s | %s | %s | %s, %s | %s | %s | %.1f | %.2f | %s |" % (
            r["model"], r["batch"], r["precision"], r["gflop_per_step"], r["mb_per_step"],
            r["compute_floor_us"], r["memory_floor_us"], r["system"], r["variant"],
            float(r["s_per_epoch"]) * 1e3, float(r["floor_s_per_epoch"]) * 1e3,
            r["floor_over_measured"]))
    return "\n".join(out) + "\n"


def odd_table(path):
    try:
        rows = production_rules.read_rows(read_csv(path))
    except ValueError as e:
        raise SystemExit("readme_tables.py: %s: %s" % (path, e))
    return production_rules.markdown(rows, production_rules.check(rows))


def path_table(path):
    """Per variant: the kernels on the critical path, in order, and the path's length beside the
    sum of all the step's kernels (the step on one stream)."""
    groups = {}
    for r in read_csv(path):
        groups.setdefault((r["model"], r["batch"], r["variant"]), []).append(r)
    out = []
    for (model, batch, variant), rows in groups.items():
        critical = [r for r in rows if r["critical"] == "yes"]
        total = sum(float(r["us"]) for r in rows)
        length = max(float(r["ends_at_us"]) for r in critical)
        out.append("%s, batch %s, `%s`: %d of %d kernels on the critical path, %.1f µs; all %d "
                   "in a row, %.1f µs (%.2f×).\n" % (model, batch, variant, len(critical),
                                                     len(rows), length, len(rows), total,
                                                     total / length))
        out.append("| # | kernel | grid | µs | ends at µs |\n|--:|:--|:--|--:|--:|")
        for r in critical:
            name = short_name(r["kernel"])
            for noise in ("(anonymous namespace)::", "gemm::detail::", "engine::cuda::", "data::"):
                name = name.replace(noise, "")
            out.append("| %s | `%s` | %s | %.1f | %.1f |" % (
                r["order"], name, r["grid"], float(r["us"]),
                float(r["ends_at_us"])))
        out.append("")
    return "\n".join(out)


def step_figures(results, train_path):
    """{variant: (TFLOP/s at 4096³ NN, % of cuBLAS in its precision, s per epoch)}, for every
    variant the ladder and the production block name; a variant missing from either file is an
    error naming it and the file."""
    square = {r["variant"]: r for r in results
              if r["m"] == r["n"] == r["k"] == 4096 and r["layout"] == "NN"}
    epochs = {r["variant"]: float(r["s_per_epoch"]) for r in read_csv(train_path)}
    figures = {}
    for v in [step[1] for step in STEPS] + PRODUCTION:
        if v not in square:
            raise SystemExit("readme_tables.py: gemm_bench.json has no 4096³ NN row for %s" % v)
        if v not in epochs:
            raise SystemExit("readme_tables.py: %s has no row for %s" % (train_path, v))
        r = square[v]
        pct = r["pct_cublas_tf32"] if r["precision"] == "TF32" else r["pct_cublas"]
        figures[v] = (r["tflops"], pct, epochs[v])
    return figures


def cublas_name(variant, results):
    tf32 = any(r["variant"] == variant and r["precision"] == "TF32" for r in results)
    return "cuBLAS TF32" if tf32 else "cuBLAS fp32"


def ladder_table(figures, results):
    out = ("| step | variant | family | 4096³ NN, TFLOP/s | × the step before | s / epoch "
           "| speed × the step before |\n|--:|---|---|--:|--:|--:|--:|\n")
    for step, v, prev, family in STEPS:
        tflops, _, epoch = figures[v]
        gain = "%.2f× (%s)" % (tflops / figures[prev][0], prev) if prev else ""
        speed = "%.2f× (%s)" % (figures[prev][2] / epoch, prev) if prev else ""
        out += "| %d | %s | %s | %.1f | %s | %.4f | %s |\n" % (
            step, v, family, tflops, gain, epoch, speed)
    return out


def shape_name(m, n, k, layout):
    return "%d³" % m if m == n == k and layout == "NN" else "%d×%d×%d %s" % (m, n, k, layout)


def slower_shapes(variant, prev, results):
    """The shapes of gemm_bench.json where `variant` runs more than 1% below `prev`, with the
    ratio (closer than that is within the noise of one run)."""
    by = {(r["variant"], r["m"], r["n"], r["k"], r["layout"]): r["tflops"] for r in results}
    out = []
    for r in results:
        if r["variant"] != variant or not r["tflops"]:
            continue
        before = by.get((prev, r["m"], r["n"], r["k"], r["layout"]))
        if before and r["tflops"] < 0.99 * before:
            out.append("%s %.2f×" % (shape_name(r["m"], r["n"], r["k"], r["layout"]),
                                     r["tflops"] / before))
    return out


def compare_command(variants):
    named = [v for v in variants if v in NAMED_IN_COMPARE]
    return "scripts/train.sh --compare %s--epochs 2" % (",".join(named) + " " if named else "")


def step_block(variant, figures, results):
    """The step's 4096³ NN throughput and its training epoch, each against the step it builds on;
    within a family, the other gemm_bench shapes where it is slower than that step; and the step's
    two run lines, as its file's header gives them: the bench beside the step before, and
    training on the step (`--gemm VARIANT`)."""
    step, _, prev, family = next(s for s in STEPS if s[1] == variant)
    tflops, pct, epoch = figures[variant]
    text = "**%.1f TFLOP/s** at 4096³ NN (%.0f%% of %s)" % (
        tflops, pct, cublas_name(variant, results))
    if prev:
        text += ", %.2f× %s's %.1f" % (tflops / figures[prev][0], prev, figures[prev][0])
    text += "; **%.4f s** per training epoch" % epoch
    if prev:
        text += ", %.2f× the speed of %s (%.4f s)" % (figures[prev][2] / epoch, prev,
                                                     figures[prev][2])
    text += "."
    if prev and next(s for s in STEPS if s[1] == prev)[3] == family:
        slower = slower_shapes(variant, prev, results)
        text += (" Slower than %s by more than 1%% at: %s (gemm_bench's default shapes, TFLOP/s "
                 "against %s)." % (prev, ", ".join(slower), prev) if slower else
                 " Within 1%% of %s or faster at every one of gemm_bench's default shapes." % prev)
    pair = ([prev] if prev else []) + [variant]
    text = textwrap.fill("Measured: " + text, 100, break_long_words=False, break_on_hyphens=False)
    return ("%s\n\n```sh\n%s --variants %s --shapes 4096\n%s\n```\n"
            % (text, BENCH, ",".join(pair), "scripts/train.sh --gemm %s --epochs 2" % variant))


def production_table(figures, results):
    out = ("| variant | precision | 4096³ NN, TFLOP/s | % of cuBLAS | s / epoch |\n"
           "|---|---|--:|--:|--:|\n")
    for v in PRODUCTION:
        tflops, pct, epoch = figures[v]
        precision = "TF32" if cublas_name(v, results) == "cuBLAS TF32" else "fp32"
        out += "| %s | %s | %.1f | %.0f%% | %.4f |\n" % (v, precision, tflops, pct, epoch)
    out += ("\n```sh\n%s --variants %s --shapes 4096\n%s\n```\n"
            % (BENCH, ",".join(PRODUCTION[:4]), compare_command(PRODUCTION)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=os.path.join(ROOT, "docs", "results"),
                    help="folder with gemm_bench.json and train_compare.csv")
    ap.add_argument("--docs", nargs="+",
                    default=[os.path.join(ROOT, "README.md"),
                             os.path.join(ROOT, "docs", "RESULTS.md"),
                             os.path.join(ROOT, "docs", "KERNELS.md")],
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
                                     os.path.join(args.results, "train_compare_nograph.csv"),
                                     os.path.join(args.results, "summary.txt")))
    replace_block(docs, "pytorch", pytorch_table(os.path.join(args.results, "vs_pytorch.csv"),
                                                 os.path.join(args.results, "vs_pytorch.json")))
    replace_block(docs, "first_run", first_run_table(os.path.join(args.results, "first_run.csv")))
    replace_block(docs, "vs", vs_table(os.path.join(args.results, "vs_pytorch.csv")))
    replace_block(docs, "roofline", roofline_table(os.path.join(args.results, "roofline.csv")))
    replace_block(docs, "odd", odd_table(os.path.join(args.results, "odd_widths.csv")))
    replace_block(docs, "path", path_table(os.path.join(args.results, "critical_path.csv")))
    figures = step_figures(results, os.path.join(args.results, "train_compare.csv"))
    replace_block(docs, "ladder", ladder_table(figures, results))
    for _, variant, _, _ in STEPS:
        replace_block(docs, "step:" + variant, step_block(variant, figures, results))
    replace_block(docs, "production", production_table(figures, results))
    for path, text in docs.items():
        with open(path, "w") as f:
            f.write(text)
    print("readme_tables.py: updated", ", ".join(os.path.relpath(p) for p in docs))


if __name__ == "__main__":
    main()
