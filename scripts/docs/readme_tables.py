#!/usr/bin/env python3
"""Writes the result tables and figures of README.md, docs/RESULTS.md and docs/KERNELS.md from the
committed H200 results in docs/results/.

Each block goes between its marker comments (<!-- NAME:begin --> ... <!-- NAME:end -->) in
whichever of the documents holds them (README.md holds `pytorch`, `train` and `first_run`;
docs/KERNELS.md `ladder`, `ladder_models`, `production` and the `step:VARIANT` blocks;
docs/RESULTS.md the others), so re-running replaces them in place and a new GPU run only needs its
results copied to docs/results/ (docs/results/README.md lists the files). Standard library only.
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
  ladder_models  the numbered steps trained at several models (ladder_models.csv, written by
           scripts/check/ab_builds.py): s per epoch, each with its speed × the step before
  step:V   one step's two figures, against the step it builds on, and the commands that measure
           them again
  production  the production variants and cuBLAS, the same two figures
  warm     scripts/check/small_m.sh (small_m.csv): the three models' step GEMMs, µs a call warm
           (back to back in one CUDA graph) and flushed, each with cuBLAS's time over ours in the
           variant's own precision (above 1: faster than cuBLAS)
  phases   scripts/check/small_m.sh (phases.csv, gemm_bench --phases): where each kernel's time
           goes at the default model's GEMMs
  phases_before  the same table before the small-M work (archive/phases_before_small_m.csv)
  torch_gemm, torch_overhead, torch_train  scripts/pytorch/torch_op_bench.py (torch_op_*.csv): the
           torch op beside torch.matmul, a call's overhead, MNIST through fp32_accurate()
The ladder, step:V and production blocks are scripts/gemm_mlp_tools/kernel_tables.py's, warm and
phases small_m_tables.py's.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools import production_rules  # noqa: E402
from gemm_mlp_tools.atomic import atomic_write  # noqa: E402
from gemm_mlp_tools.critical_path import short_name  # noqa: E402
from gemm_mlp_tools.kernel_tables import (  # noqa: E402
    STEPS, ladder_table, models_table, production_table, read_csv, step_block, step_figures)
from gemm_mlp_tools.small_m_tables import phases_table, warm_table  # noqa: E402
from gemm_mlp_tools import torch_op_tables  # noqa: E402

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
    """The last measurement of first_run.csv (the others are its history), with the commit it
    measured and the machine's load then; a placeholder row while it has none."""
    rows = read_csv(path) if os.path.exists(path) else []
    out = ("| machine | fresh clone to a trained epoch | set-up and build | one epoch of the "
           "default model | train_mlp |\n|---|--:|--:|--:|--:|\n")
    if not rows:
        return out + ("| *not measured yet: `scripts/check/first_run_time.sh --csv "
                      "docs/results/first_run.csv`* | | | | |\n")
    r = rows[-1]
    gpu = r["gpu"] if r["gpu"] != "none" else "no GPU"
    when = r["date"] + ", `" + r["commit"] + "`"
    if r.get("load_before"):
        when += ", load " + r["load_before"]
    out += "| %s cores, %s (%s) | %.1f min | %.1f min | %.1f s | %.1f MB |\n" % (
        r["cores"], gpu, when, float(r["wall_s"]) / 60, float(r["setup_build_s"]) / 60,
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
    replace_block(docs, "ladder_models",
                  models_table(os.path.join(args.results, "ladder_models.csv")))
    for _, variant, _, _ in STEPS:
        replace_block(docs, "step:" + variant, step_block(variant, figures, results))
    replace_block(docs, "production", production_table(figures, results))
    replace_block(docs, "warm", warm_table(os.path.join(args.results, "small_m.csv")))
    replace_block(docs, "phases", phases_table(os.path.join(args.results, "phases.csv")))
    replace_block(docs, "phases_before", phases_table(
        os.path.join(args.results, "archive", "phases_before_small_m.csv")))
    torch_op = {name: os.path.join(args.results, "torch_op_%s.csv" % name)
                for name in ("gemm", "overhead", "train")}
    replace_block(docs, "torch_gemm", torch_op_tables.gemm_table(torch_op["gemm"]))
    replace_block(docs, "torch_overhead", torch_op_tables.overhead_table(torch_op["overhead"]))
    replace_block(docs, "torch_train", torch_op_tables.train_table(torch_op["train"]))
    for path, text in docs.items():
        atomic_write(path, text)
    print("readme_tables.py: updated", ", ".join(os.path.relpath(p) for p in docs))


if __name__ == "__main__":
    main()
