#!/usr/bin/env python3
"""Takes a GPU run's four benchmark files into the `auto` variant's shipped table.

    scripts/docs/update_auto_table.py OUT [--bench build/apps/gemm_bench/gemm_bench] [--root DIR]

OUT is what `scripts/check/gpu_check.sh OUT` wrote with its bench step: gemm_bench.json,
mlp_shapes.json, mlp4096_shapes.json and auto_shapes.json, all from one GPU. They are copied to
docs/results/, under their own names for the H200 and with a prefix for any other GPU
("NVIDIA H100 80GB HBM3": h100_gemm_bench.json, ...), so that each GPU keeps its own runs. Then
kernels/auto_table.inc is written again by `gemm_bench --from-json` from every run its
"// From:" line names, with this GPU's four added where they are new: one block of lines per GPU
(GemmBench.ShippedAutoTableIsWhatTheCommittedRunsMake checks the result). Rebuild after it.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools import bench_results  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNS = ["gemm_bench.json", "mlp_shapes.json", "mlp4096_shapes.json", "auto_shapes.json"]
# The GPU whose runs keep their plain names: the one the documents' figures come from.
DOCUMENTED_GPU = "NVIDIA H200"


def device_of(path):
    """The GPU a gemm_bench --json file names (bench_results.load, the project's reader)."""
    try:
        _, info = bench_results.load(path)
    except (OSError, ValueError, AttributeError) as e:
        sys.exit(f"update_auto_table.py: {path}: not a gemm_bench --json file ({e})")
    if not info.get("device"):
        sys.exit(f"update_auto_table.py: {path} names no GPU: not a gemm_bench --json file")
    return info["device"]


def prefix_for(device):
    """'' for the documented GPU; else the model's first word after the vendor, as h100_."""
    if device == DOCUMENTED_GPU:
        return ""
    words = re.sub(r"^NVIDIA\s+", "", device).split()
    slug = re.sub(r"[^a-z0-9]", "", words[0].lower()) if words else ""
    if not slug:
        sys.exit(f"update_auto_table.py: cannot make a file prefix of the GPU name '{device}'")
    return slug + "_"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="gpu_check.sh's output folder, with its bench step's files")
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "apps", "gemm_bench",
                                                    "gemm_bench"), help="a built gemm_bench")
    ap.add_argument("--root", default=ROOT,
                    help="the tree whose docs/results/ and kernels/auto_table.inc to update")
    args = ap.parse_args()
    results = os.path.join(args.root, "docs", "results")
    table = os.path.join(args.root, "kernels", "auto_table.inc")
    missing = [r for r in RUNS if not os.path.isfile(os.path.join(args.out, r))]
    if missing:
        sys.exit(f"update_auto_table.py: {args.out} lacks {', '.join(missing)} (gpu_check.sh's "
                 "bench step writes them)")
    if not os.access(args.bench, os.X_OK):
        sys.exit(f"update_auto_table.py: no gemm_bench at {args.bench}: build it, or give --bench")
    devices = {device_of(os.path.join(args.out, r)) for r in RUNS}
    if len(devices) != 1:
        sys.exit(f"update_auto_table.py: the four runs name {len(devices)} GPUs: "
                 f"{', '.join(sorted(devices))}")
    prefix = prefix_for(devices.pop())
    with open(table) as f:
        from_line = next((line for line in f if line.startswith("// From:")), "// From:")
    sources = from_line.split()[2:]
    for r in RUNS:
        shutil.copyfile(os.path.join(args.out, r), os.path.join(results, prefix + r))
        if prefix + r not in sources:
            sources.append(prefix + r)
    runs = ",".join(os.path.join(results, s) for s in sources)
    status = subprocess.run([args.bench, "--from-json", runs, "--auto-table", table]).returncode
    if status != 0:
        sys.exit(f"update_auto_table.py: gemm_bench --from-json failed (exit {status})")
    print(f"update_auto_table.py: {table} from {' '.join(sources)}; rebuild to use it")


if __name__ == "__main__":
    main()
