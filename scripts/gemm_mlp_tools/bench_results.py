"""gemm_bench's CSV or JSON output as rows of typed values: the one reader behind
scripts/docs/bench_to_docs.py, scripts/docs/plot_bench.py and scripts/docs/update_auto_table.py."""

import csv
import json
import math
import sys

NUMERIC = ("ms_median", "ms_min", "ms_p90", "tflops", "pct_cublas", "pct_cublas_tf32",
           "max_err_ratio")


def number(x):
    if x is None or x == "" or x == "-":
        return math.nan
    try:
        return float(x)
    except ValueError:
        return math.nan


def load(path):
    """Rows as dicts with the gemm_bench CSV columns, and device/method info where known."""
    info = {}
    if path.endswith(".json"):
        with open(path) as f:
            data = json.load(f)
        rows = data.get("results", [])
        dev = data.get("device", {})
        info = {
            "device": dev.get("name", ""),
            "cuda": data.get("cuda_runtime", ""),
            "driver": data.get("cuda_driver", ""),
            "reps": data.get("method", {}).get("reps", ""),
        }
    else:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        if rows:
            info["device"] = rows[0].get("device", "")
    required = {"m", "n", "k", "layout", "variant", "status"}
    for i, r in enumerate(rows):
        missing = required - set(r)
        if missing:
            sys.exit(f"gemm_bench results {path}: row {i + 1} lacks {', '.join(sorted(missing))}")
        for key in NUMERIC:
            r[key] = number(r.get(key))
        for key in ("m", "n", "k"):
            r[key] = int(r[key])
        r.setdefault("precision", "FP32")
        r.setdefault("note", "")
    return rows, info
