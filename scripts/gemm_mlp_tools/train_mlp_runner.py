"""The gemm-mlp side of scripts/pytorch/vs_pytorch.py: one train_mlp run as a subprocess, its s/epoch and
test accuracy read from the JSON it writes with --results."""

import json
import os
import shlex
import subprocess
import sys


def run_train_mlp(args, sizes, batch, variant, tmp):
    """(s_per_epoch, test_acc fraction, note) from one train_mlp run; times are None on error."""
    out = os.path.join(tmp, f"{variant}.json")
    cmd = [args.train_mlp, "--gemm", variant, "--hidden", ",".join(map(str, sizes[1:-1])),
           "--batch", str(batch), "--epochs", str(args.epochs), "--seed", str(args.seed),
           "--data-dir", args.data_dir, "--results", out] + shlex.split(args.train_mlp_args)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        return None, None, f"cannot run train_mlp: {e}"
    if proc.returncode != 0:
        text = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()
        print(f"$ {shlex.join(cmd)}\n" + "\n".join(text[-20:]), file=sys.stderr)
        return None, None, f"train_mlp exit {proc.returncode}: {text[-1][:200]}"
    try:
        with open(out) as f:
            result = next(r for r in json.load(f) if r["variant"] == variant)
        return result["s_per_epoch"], result["final_test_acc"], ""
    except (OSError, ValueError, KeyError, StopIteration) as e:
        return None, None, f"bad train_mlp results {out}: {e!r}"
