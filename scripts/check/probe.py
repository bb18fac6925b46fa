#!/usr/bin/env python3
"""The bad-input probe: feeds the apps bad flags, bad files, bad checkpoints, huge sizes and bad
images, FIFOs and names that cannot be written, checkpoint pairs as stopped saves leave them, kills
saves at random instants and at exact ones (between their renames) and fills the disk under them,
and sorts every outcome:

    clear       a non-zero exit with a message, within the memory bound (or, for a valid input,
                exit 0)
    silent      exit 0 on bad input (or a valid input refused)
    unbounded   more memory than --max-rss-mb, or past the time limit (a hang, on a FIFO say,
                is killed there); or a refusal due before any work (a name that cannot be
                written) that came after an epoch, or after a few seconds
    crashed     killed by a signal (a segfault, an abort)
    data lost   after a kill or a full disk, no consistent checkpoint pair to resume from; or
                the wrong file of a pair used, or a stale one left unrepaired; or an output file
                that a failed write changed
    unclear     a refusal whose message misses what it should name (the duplicate, the size,
                the limit, the system's reason)

    scripts/check/probe.py --build build --data-dir data/mnist [--csv probe.csv] [--kills 12]

Runs on the CPU (--device cpu); the full-disk cases mount a small tmpfs and need root, the exact
kills strace, an immutable checkpoint root and chattr (each skipped otherwise, and said so); the
edges category (issue 58) fills the disk with `ulimit -f` instead, and needs neither. Exit status
1 when any case is not clear. CI runs it with --kills 2 (tests/scripts/probe_test.sh,
Scripts.ProbeFindsEveryCaseClear).
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gemm_mlp_tools.atomic import atomic_write, csv_text  # noqa: E402
from gemm_mlp_tools.probe_cases import (bad_checkpoints, bad_files, bad_flags,  # noqa: E402
                                        full_disk, huge_sizes, images, kills, save_targets)
from gemm_mlp_tools.probe_edges import edges  # noqa: E402
from gemm_mlp_tools.probe_pairs import exact_kills, pairs  # noqa: E402
from gemm_mlp_tools.probe_paths import fifos, names  # noqa: E402
from gemm_mlp_tools.probe_runner import Probe  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--data-dir", default="data/mnist")
    ap.add_argument("--csv")
    ap.add_argument("--kills", type=int, default=12)
    ap.add_argument("--max-rss-mb", type=float, default=1500)
    ap.add_argument("--only", help="comma-separated categories: flags, files, checkpoints, sizes, "
                    "images, saves, fifos, names, pairs, exact, kills, disk, edges")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="probe-")
    p = Probe(args, work)
    steps = {"flags": bad_flags, "files": bad_files, "checkpoints": bad_checkpoints,
             "sizes": huge_sizes, "images": images, "saves": save_targets, "fifos": fifos,
             "names": names, "pairs": pairs, "exact": exact_kills, "kills": kills,
             "disk": full_disk, "edges": edges}
    try:
        for name, fn in steps.items():
            if not args.only or name in args.only.split(","):
                fn(p)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    counts = {}
    for r in p.rows:
        counts[r[2]] = counts.get(r[2], 0) + 1
    print("totals: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if args.csv:
        atomic_write(args.csv, csv_text([["category", "case", "outcome", "detail"]] + p.rows))
    sys.exit(0 if set(counts) <= {"clear", "skipped"} else 1)


if __name__ == "__main__":
    main()
