#!/usr/bin/env python3
"""The training step's critical path: its chain of dependent kernels, with each kernel's time.

    scripts/check/critical_path.py --train-mlp BUILD/apps/train_mlp/train_mlp \\
        --variant tf32_fast,tf32x3_fast [--hidden 1024,1024] [--batch 256] [--data-dir DIR]
        [--train-mlp-args=FLAGS]
    scripts/check/critical_path.py --graph-json G.json --ncu-csv N.csv [--graph-json ... ]

For each variant, on the GPU:
  1. train_mlp --step-graph writes the captured step's CUDA graph: its kernels in creation order
     and which kernels each waits for (a DAG once the step forks onto side streams);
  2. ncu times every kernel of the same training run made launch by launch (--no-graph
     --branched-no-graph, so that the step's kernels are queued in the graph's order):
     gpu__time_duration.sum per launch, with --clock-control none and --cache-control none, so
     the clocks are those training runs at (not ncu's locked base clocks) and the L2 keeps what
     the previous kernel left in it, as in training. The step's kernels are found in the launches
     by name (and grid and block) in the graph's order: a launch-by-launch step queues them in
     that order, from the same code. Any difference is an error naming the kernel and launch.
     The first step is skipped (it loads the kernels); each kernel's time is its median over the
     other steps (--steps full batches an epoch, 1 epoch: the profiling epoch and the timed one);
  3. the critical path: each kernel ends at its time plus the latest end among the kernels it
     waits for; the path is the chain that ends last. A kernel's time is its time alone (ncu runs
     one kernel at a time), so branches that overlap in the graph may take longer there. Memsets,
     memcpys and event nodes count as taking no time (ncu times kernels only).
Writes one CSV (every kernel of every variant: model, batch, variant, order, kernel, grid, block,
µs, ends_at_us, critical yes/no) and prints each variant's critical path as a Markdown table.

--graph-json and --ncu-csv (given in pairs, one per variant) recompute it from saved files, with no
GPU: the JSON from train_mlp --step-graph, the CSV from ncu --csv (the default details page or
--page raw) with gpu__time_duration.sum; --keep DIR saves a GPU run's pair for that.
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools import critical_path as cp  # noqa: E402
from gemm_mlp_tools.atomic import atomic_write, csv_dict_text  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
NCU_FALLBACK = "/usr/local/cuda/bin/ncu"


def fail(message):
    sys.exit(f"critical_path.py: error: {message}")


def find_ncu(given):
    if given:
        return given
    found = shutil.which("ncu") or (NCU_FALLBACK if os.access(NCU_FALLBACK, os.X_OK) else None)
    if not found:
        fail(f"ncu (Nsight Compute) is not on PATH nor at {NCU_FALLBACK}; install it or give --ncu")
    return found


def run(cmd, what):
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as e:
        fail(f"cannot run {what} ({cmd[0]}): {e.strerror}")
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-20:])
        fail(f"{what} exited with status {proc.returncode}:\n{tail}")
    return proc.stdout


def measure(args, variant, work):
    """(graph JSON path, ncu CSV path) for one variant, made on the GPU. The epoch ends with a
    partial batch of one row (run launch by launch), so that every full step gathers the next
    batch at its end, as in training, and the graph captured last is that step's."""
    train = [args.train_mlp, "--gemm", variant, "--hidden", args.hidden, "--batch",
             str(args.batch), "--epochs", "1", "--train-limit", str(args.steps * args.batch + 1),
             "--seed", "1", "--data-dir", args.data_dir] + shlex.split(args.train_mlp_args)
    graph = os.path.join(work, f"{variant}.graph.json")
    run(train + ["--step-graph", graph], f"train_mlp --step-graph ({variant})")
    report = os.path.join(work, variant)
    log = run([args.ncu, "--clock-control", "none", "--cache-control", "none", "--metrics",
               cp.TIME_METRIC, "--force-overwrite", "--export", report] + train +
              ["--no-graph", "--branched-no-graph"],
              f"ncu over train_mlp --no-graph ({variant})")
    if not os.path.isfile(report + ".ncu-rep"):  # e.g. no permission to profile: ncu says why
        tail = "\n".join([line for line in log.splitlines() if line.startswith("==")][-10:])
        fail(f"ncu wrote no report for {variant}:\n{tail}")
    table = run([args.ncu, "--import", report + ".ncu-rep", "--csv", "--page", "details",
                 "--print-kernel-base", "mangled", "--print-units", "base"],
                f"ncu --import ({variant})")
    ncu_csv = os.path.join(work, f"{variant}.ncu.csv")
    with open(ncu_csv, "w") as f:
        f.write(table)
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        for path in (graph, ncu_csv):
            shutil.copy(path, args.keep)
    return graph, ncu_csv


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--train-mlp", help="the train_mlp binary (measure on the GPU)")
    ap.add_argument("--variant", help="GEMM variants, comma-separated (e.g. tf32_fast,tf32x3_fast)")
    ap.add_argument("--hidden", default="1024,1024", help="hidden layer sizes (default 1024,1024)")
    ap.add_argument("--batch", type=int, default=256, help="batch size (default 256)")
    ap.add_argument("--steps", type=int, default=4,
                    help="full batches in the one epoch (default 4; at least 2: the trainer "
                         "captures the second)")
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data", "mnist"), help="MNIST files")
    ap.add_argument("--train-mlp-args", default="",
                    help="extra train_mlp flags, one string (e.g. --train-mlp-args=--serial-step)")
    ap.add_argument("--ncu", help=f"the ncu binary (default: ncu on PATH, else {NCU_FALLBACK})")
    ap.add_argument("--keep", help="also save each variant's graph JSON and ncu CSV in this folder")
    ap.add_argument("--graph-json", action="append", default=[],
                    help="a saved train_mlp --step-graph file (with --ncu-csv; repeatable)")
    ap.add_argument("--ncu-csv", action="append", default=[],
                    help="a saved ncu --csv report of the same run launch by launch (repeatable)")
    ap.add_argument("--warmup", type=int, default=1, help="steps skipped first (default 1)")
    ap.add_argument("--csv", default=os.path.join(ROOT, "docs", "results", "critical_path.csv"),
                    help="output (default docs/results/critical_path.csv)")
    args = ap.parse_args()

    saved = bool(args.graph_json or args.ncu_csv)
    if saved and (args.train_mlp or args.variant):
        fail("give either --train-mlp and --variant (measure) or --graph-json and --ncu-csv "
             "(saved files), not both")
    if saved and len(args.graph_json) != len(args.ncu_csv):
        fail(f"--graph-json and --ncu-csv come in pairs; got {len(args.graph_json)} and "
             f"{len(args.ncu_csv)}")
    if not saved and not (args.train_mlp and args.variant):
        fail("give --train-mlp and --variant (measure on the GPU), or --graph-json and --ncu-csv")
    if args.warmup < 0:
        fail(f"--warmup must be >= 0, got {args.warmup}")
    if not saved:
        if args.steps < 2:
            fail(f"--steps must be >= 2 (the trainer captures the second full batch), got "
                 f"{args.steps}")
        if args.batch < 1:
            fail(f"--batch must be >= 1, got {args.batch}")
        if not os.access(args.train_mlp, os.X_OK):
            fail(f"--train-mlp {args.train_mlp}: not an executable file")
        args.ncu = find_ncu(args.ncu)
    out_dir = os.path.dirname(os.path.abspath(args.csv))
    if not os.access(out_dir, os.W_OK):
        fail(f"--csv {args.csv}: the folder {out_dir} does not exist or is not writable")

    rows, tables = [], []
    with tempfile.TemporaryDirectory(prefix="critical_path_") as work:
        pairs = list(zip(args.graph_json, args.ncu_csv)) if saved else [
            measure(args, v.strip(), work) for v in args.variant.split(",") if v.strip()]
        for graph_path, ncu_path in pairs:
            try:
                graph = cp.read_graph(graph_path)
                times, used = cp.step_times(graph, cp.read_ncu_csv(ncu_path), args.warmup)
            except cp.Error as e:
                fail(f"{graph_path} with {ncu_path}: {e}")
            result = cp.longest_path(graph, times)
            rows += cp.csv_rows(graph, times, result)
            tables.append(cp.markdown(graph, times, result, used))
    atomic_write(args.csv, csv_dict_text(cp.CSV_COLUMNS, rows))
    print("\n".join(tables))
    print(f"critical_path.py: wrote {len(rows)} kernels of {len(pairs)} step graph(s) to {args.csv}")


if __name__ == "__main__":
    main()
