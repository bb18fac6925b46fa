"""The small-M tables of docs/RESULTS.md and docs/KERNELS.md (scripts/docs/readme_tables.py's
`warm` and `phases` blocks), from scripts/check/small_m.sh's small_m.csv and phases.csv."""
from gemm_mlp_tools.kernel_tables import read_csv


def warm_table(path):
    """One row per GEMM: cuBLAS fp32 and TF32 in µs, then each production variant's µs with
    cuBLAS's time over its own in its precision; warm (back to back in one graph) first, then
    flushed (L2 flushed before each call) in brackets."""
    rows = read_csv(path)
    by = {(r["m"], r["n"], r["k"], r["layout"], r["variant"]): r for r in rows}
    shapes, variants = [], []
    for r in rows:
        key = (r["m"], r["n"], r["k"], r["layout"])
        if key not in shapes:
            shapes.append(key)
        if r["variant"] not in variants and not r["variant"].startswith("cublas"):
            variants.append(r["variant"])
    head = ("| GEMM (M×N×K) | cuBLAS fp32 | cuBLAS TF32 | " + " | ".join(
        "`%s`" % v for v in variants) + " |\n|---|" + "--:|" * (2 + len(variants)) + "\n")
    def us(r, warm):
        return float(r["warm_us_median"]) if warm else 1e3 * float(r["ms_median"])
    out = []
    for s in shapes:
        cells = []
        for v in ("cublas", "cublas_tf32"):
            r = by.get(s + (v,))
            cells.append("" if r is None else "%.2f (%.2f)" % (us(r, True), us(r, False)))
        for v in variants:
            r = by.get(s + (v,))
            if r is None:
                cells.append("")
                continue
            base = by[s + ("cublas_tf32" if r["precision"] == "TF32" else "cublas",)]
            cells.append("%.2f, %.2f× (%.2f, %.2f×)" % (
                us(r, True), us(base, True) / us(r, True), us(r, False),
                us(base, False) / us(r, False)))
        out.append("| %s×%s×%s %s | %s |" % (s + (" | ".join(cells),)))
    return head + "\n".join(out) + "\n"


def phases_table(path):
    """gemm_bench --phases' CSV as a table: µs per phase, median over blocks and calls."""
    rows = read_csv(path)
    cols = [c for c in rows[0] if c.endswith(" us")]
    head = ("| GEMM | variant | kernel | blocks | " + " | ".join(c[:-3] for c in cols) +
            " |\n|---|---|---|--:|" + "--:|" * len(cols) + "\n")
    out = []
    for r in rows:
        out.append("| %s×%s×%s %s | `%s` | %s | %s | %s |" % (
            r["m"], r["n"], r["k"], r["layout"], r["variant"], r["kernel"], r["blocks"],
            " | ".join(r[c] and "%.2f" % float(r[c]) for c in cols)))
    return head + "\n".join(out) + "\n"
