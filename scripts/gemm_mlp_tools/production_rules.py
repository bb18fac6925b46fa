"""Issue 24's rules for the production variants, checked on training times (s per epoch) of one
model and batch; used by scripts/check/odd_widths.py, which measures them.

Each production variant is no slower in training than what it replaces:
  tf32_fast    step 7 (tf32)
  fast         the best fp32 ladder step of 4-6 (regtile, dbuf, warptile)
  tf32x3_fast  step 10 (tf32x3)
  auto         every variant kernels/auto_table.inc lists for this GPU (so: the fastest of them)
A rule's ratio is the variant's s/epoch over the fastest reference's; it passes at ratio <= 1 +
tolerance. The default tolerance, 2%, is above the run-to-run noise of train_mlp's s/epoch: two
runs of one variant on the default model, old build against new with nothing changed between
them, differ by 0.1-0.7% (docs/results/archive/issue23_train_ab.csv).

The CSV odd_widths.py writes holds every run; its `auto_lists` column says which variants the
auto table listed at run time, so the rules can be checked again from the CSV alone.
"""
import json
import re

DEFAULT_TOLERANCE = 0.02
LADDER_FP32 = ["regtile", "dbuf", "warptile"]
FIXED_RULES = [  # (variant, references, what the references are)
    ("tf32_fast", ["tf32"], "step 7"),
    ("fast", LADDER_FP32, "the best of steps 4-6"),
    ("tf32x3_fast", ["tf32x3"], "step 10"),
]
# Variants on TF32 tensor cores (kernels/dispatch.cpp); every other one is fp32-accurate.
TF32_VARIANTS = {"tf32", "wgmma", "wgmma_ws", "tf32_fast", "cublas_tf32"}
COLUMNS = ["model", "batch", "variant", "precision", "auto_lists", "s_per_epoch", "test_acc",
           "epochs", "note"]

# One line of kernels/auto_table.inc: {"device", "LAYOUT", M, N, K, "variant"},
TABLE_LINE = re.compile(r'^\{("(?:[^"\\]|\\.)*"), "[NT][NT]", \d+, \d+, \d+, "(\w+)"\},$')


def auto_table_variants(path, gpu):
    """The variants auto's table lists for the GPU named `gpu`, in order of first appearance;
    ValueError naming the file and line when a line is neither a comment nor an entry, or naming
    the GPU when the table has no line for it (auto runs `fast` there, and no rule could say
    whether its picks hold); OSError when the file cannot be read."""
    variants = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("//"):
                continue
            m = TABLE_LINE.match(line)
            if not m:
                raise ValueError(f"{path}:{number}: not an auto table entry: {line}")
            if json.loads(m.group(1)) == gpu and m.group(2) not in variants:
                variants.append(m.group(2))
    if not variants:
        raise ValueError(f"{path} has no line for the {gpu}, where auto runs fast: measure it "
                         "(gpu_check.sh's bench step, then scripts/docs/update_auto_table.py)")
    return variants


def precision(variant):
    return "tf32" if variant in TF32_VARIANTS else "fp32"


def rules_for(listed):
    """The rules, auto's against the variants its table lists."""
    return FIXED_RULES + [("auto", list(listed), "every variant its table lists")]


def check(rows, tolerance=DEFAULT_TOLERANCE):
    """One result per model, batch and rule, in the rows' order of models. `rows` are dicts with
    model, batch, variant, auto_lists ("yes"/"no") and s_per_epoch (a float, or None where the
    run failed). A rule whose variant or every reference has no time fails, with a note."""
    models = []
    for r in rows:
        if (r["model"], r["batch"]) not in models:
            models.append((r["model"], r["batch"]))
    listed = [r["variant"] for r in rows if r["auto_lists"] == "yes"]
    out = []
    for model, batch in models:
        times = {r["variant"]: r["s_per_epoch"] for r in rows
                 if (r["model"], r["batch"]) == (model, batch)}
        for variant, references, against in rules_for(dict.fromkeys(listed)):
            result = dict(model=model, batch=batch, variant=variant, against=against,
                          reference=None, s_per_epoch=times.get(variant), reference_s=None,
                          ratio=None, passed=False, note="")
            timed = [(times[v], v) for v in references if times.get(v) is not None]
            missing = [v for v in [variant] + references if times.get(v) is None]
            if timed:
                result["reference_s"], result["reference"] = min(timed)
            if not references:
                result["note"] = "auto's table lists no variant"
            elif result["s_per_epoch"] is None or not timed:
                result["note"] = "no time for " + ", ".join(missing)
            else:
                result["ratio"] = result["s_per_epoch"] / result["reference_s"]
                result["passed"] = result["ratio"] <= 1 + tolerance + 1e-9  # the edge passes
                if missing:
                    result["note"] = "no time for " + ", ".join(missing)
                    result["passed"] = False
            out.append(result)
    return out


def fmt_ms(seconds):
    return "-" if seconds is None else "%.1f" % (seconds * 1e3)


def markdown(rows, results, tolerance=DEFAULT_TOLERANCE):
    """Two Markdown tables: s/epoch of every model and variant, then the rules."""
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    models = list(dict.fromkeys((r["model"], r["batch"]) for r in rows))
    times = {(r["model"], r["batch"], r["variant"]): r["s_per_epoch"] for r in rows}
    out = ["| model | batch | " + " | ".join(variants) + " |",
           "|---|--:|" + "--:|" * len(variants)]
    for model, batch in models:
        out.append("| %s | %s | %s |" % (model, batch, " | ".join(
            fmt_ms(times.get((model, batch, v))) for v in variants)))
    listed = dict.fromkeys(r["variant"] for r in rows if r["auto_lists"] == "yes")
    out += ["", "ms per epoch; the variants auto's table lists: %s." % ", ".join(listed), ""]
    out += ["| model | batch | variant | against | fastest of those | ms / epoch | theirs | ratio "
            "| ≤ %.2f |" % (1 + tolerance), "|---|--:|---|---|---|--:|--:|--:|---|"]
    for r in results:
        verdict = "pass" if r["passed"] else "**FAIL**"
        if r["note"]:
            verdict += " (%s)" % r["note"]
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], r["batch"], r["variant"], r["against"], r["reference"] or "-",
            fmt_ms(r["s_per_epoch"]), fmt_ms(r["reference_s"]),
            "-" if r["ratio"] is None else "%.3f" % r["ratio"], verdict))
    return "\n".join(out) + "\n"


def read_rows(csv_rows):
    """odd_widths.csv's rows (csv.DictReader) as check() takes them; ValueError naming a bad row."""
    out = []
    for r in csv_rows:
        try:
            missing = [c for c in COLUMNS if r.get(c) is None]
            if missing:
                raise ValueError("no column " + ", ".join(missing))
            if r["auto_lists"] not in ("yes", "no"):
                raise ValueError("auto_lists is %r, not yes or no" % r["auto_lists"])
            out.append(dict(r, batch=int(r["batch"]),
                            s_per_epoch=float(r["s_per_epoch"]) if r["s_per_epoch"] else None))
        except ValueError as e:
            raise ValueError("bad odd_widths.csv row (%s): %s" % (e, dict(r))) from None
    return out
