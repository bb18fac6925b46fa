"""The blocks of docs/KERNELS.md that scripts/docs/readme_tables.py writes: the ladder of numbered
steps (`ladder`), each step's figures against the step it builds on (`step:VARIANT`) and the
production variants (`production`), from gemm_bench.json's results and train_compare.csv.
Standard library only."""
import csv
import textwrap


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


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


def models_table(path):
    """The ladder trained at each model of ladder_models.csv (scripts/check/ab_builds.py's
    ladder_train.csv): s per epoch per step and model, with its speed × the step it builds on
    (STEPS); a step or model missing from the file is an error naming it."""
    epochs, models = {}, []
    for r in read_csv(path):
        if r["model"] not in models:
            models.append(r["model"])
        if not r["s_per_epoch"]:
            raise SystemExit("readme_tables.py: %s: %s at %s has no time" % (path, r["variant"],
                                                                            r["model"]))
        epochs[(r["model"], r["variant"])] = float(r["s_per_epoch"])
    for model in models:
        for _, v, _, _ in STEPS:
            if (model, v) not in epochs:
                raise SystemExit("readme_tables.py: %s has no row for %s at %s" % (path, v, model))

    def title(model):
        sizes, batch = model.split(":")
        return "%s, batch %s" % (sizes, batch)

    out = "| step | variant | %s |\n|--:|---|%s\n" % (
        " | ".join(title(m) for m in models), "--:|" * len(models))
    for step, v, prev, _ in STEPS:
        cells = []
        for m in models:
            cell = "%.4f" % epochs[(m, v)]
            if prev:
                cell += " (%.2f×)" % (epochs[(m, prev)] / epochs[(m, v)])
            cells.append(cell)
        out += "| %d | %s | %s |\n" % (step, v, " | ".join(cells))
    return out
