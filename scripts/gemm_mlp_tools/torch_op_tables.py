"""The torch op's tables of docs/RESULTS.md (scripts/docs/readme_tables.py's `torch_gemm`,
`torch_overhead` and `torch_train` blocks), from scripts/pytorch/torch_op_bench.py's
torch_op_gemm.csv, torch_op_overhead.csv and torch_op_train.csv."""
from gemm_mlp_tools.kernel_tables import read_csv


def gemm_table(path):
    """One row per GEMM: the op's TFLOP/s and torch.matmul's in fp32 and in TF32, the op's speed
    over torch fp32, and each one's largest error over the fp32 bound (at most 1: within it)."""
    rows = read_csv(path)
    by = {}
    for r in rows:
        by.setdefault((r["m"], r["n"], r["k"], r["layout"], r["where"]), {})[r["system"]] = r
    head = ("| GEMM (M×N×K) | where | op TFLOP/s | torch fp32 | torch TF32 | op over fp32 | "
            "error/bound: op | fp32 | TF32 |\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
    def cell(r, key, spec):
        return "" if r is None or not r[key] else format(float(r[key]), spec)
    out = []
    for (m, n, k, layout, where), systems in by.items():
        op, fp32, tf32 = (systems.get(s) for s in ("gemm_mlp", "torch_fp32", "torch_tf32"))
        speed = ("%.2f×" % (float(fp32["median_us"]) / float(op["median_us"]))
                 if op and fp32 and op["median_us"] and fp32["median_us"] else "")
        out.append("| %s×%s×%s %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            m, n, k, layout, where, cell(op, "tflops", ".1f"), cell(fp32, "tflops", ".1f"),
            cell(tf32, "tflops", ".1f"), speed, cell(op, "err_ratio", ".3g"),
            cell(fp32, "err_ratio", ".3g"), cell(tf32, "err_ratio", ".3g")))
    return head + "\n".join(out) + "\n"


def overhead_table(path):
    """µs a call: replayed in a CUDA graph (the kernels alone), called from Python, the CPU's
    part, and what calling adds over the graph."""
    rows = read_csv(path)
    head = ("| GEMM | system | graph µs | eager µs | host µs | overhead µs |\n"
            "|---|---|--:|--:|--:|--:|\n")
    out = ["| %s×%s×%s %s | %s | %s | %s | %s | %s |" % (
        r["m"], r["n"], r["k"], r["layout"],
        "op (`%s`)" % r["variant"] if r["system"] == "gemm_mlp" else "torch.matmul fp32",
        r["graph_us"], r["eager_us"], r["host_us"], r["overhead_us"]) for r in rows]
    return head + "\n".join(out) + "\n"


def train_table(path):
    """s/epoch, the speed over plain fp32 in the same mode, and test accuracy."""
    rows = read_csv(path)
    head = ("| model, batch | mode | precision | s/epoch | over fp32 | test accuracy % |\n"
            "|---|---|---|--:|--:|--:|\n")
    names = {"fp32": "fp32", "fp32_accurate": "`fp32_accurate()`", "tf32": "TF32"}
    out = ["| %s, %s | %s | %s | %.4f | %s× | %s |" % (
        r["model"], r["batch"], r["mode"], names.get(r["precision"], r["precision"]),
        float(r["s_per_epoch"]), r["speedup_over_fp32"], r["test_acc"]) for r in rows]
    return head + "\n".join(out) + "\n"
