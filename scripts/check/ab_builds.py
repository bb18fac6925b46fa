#!/usr/bin/env python3
"""Two builds side by side on one GPU, alternating: the GEMM benchmark and training, A then B.

    scripts/check/ab_builds.py --base SRC_A --out DIR [--rounds 2] [--epochs 2]
    scripts/check/ab_builds.py --b-build build-gpu --out DIR     (B's ladder alone, no build)

SRC_A is a source tree of the base (for example `git archive BASE | tar -x -C SRC_A`); B is this
checkout. Both are built (Release, sm_90, train_mlp and gemm_bench) in parallel, B unless --b-build
names a build of it already made, then each round
runs, A then B:
  gemm_bench over --bench-variants at --bench-shapes (L2 flushed, median of its reps, cuBLAS beside
  it in the same run), written to DIR/bench_{a,b}_ROUND.json;
  train_mlp --gemm V for every --train-variants at every --models, written to DIR/train.csv row
  by row as measured (a run stopped part way keeps its rows).
Then DIR/bench_ab.csv (scripts/check/bench_ab.py: best median per side, b over a) and
DIR/train_ab.csv (best s/epoch per side over the rounds, b over a), and a Markdown summary on
stdout. B's own ladder is in DIR/train.csv too: each step's time over the step before's is in
DIR/ladder_train.csv (--ladder-variants, B only, once per model).
Without --base, only B's ladder runs (no benchmark, no A/B). Exit status 1 when a build or a run
failed (the run's row says why).
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

LADDER = ["naive", "tiled", "vec", "regtile", "dbuf", "warptile", "tf32", "wgmma", "wgmma_ws",
          "tf32x3", "tf32x3_ws"]
PRODUCTION = ["fast", "tf32_fast", "tf32x3_fast", "auto"]


def build(src, build_dir, jobs, log):
    cmds = [["cmake", "-S", src, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
             "-DCMAKE_CUDA_ARCHITECTURES=90", "-DGEMM_MLP_BUILD_TESTS=OFF"],
            ["cmake", "--build", build_dir, "-j", str(jobs), "--target", "train_mlp", "gemm_bench"]]
    with open(log, "w") as f:
        for cmd in cmds:
            if subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode != 0:
                return False
    return True


def train(binary, variant, model, epochs, data_dir, tmp):
    sizes, batch = model.split(":")
    hidden = ",".join(sizes.split("-")[1:-1])
    out = os.path.join(tmp, "r.json")
    cmd = [binary, "--gemm", variant, "--hidden", hidden, "--batch", batch, "--epochs",
           str(epochs), "--data-dir", data_dir, "--results", out]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
        return None, None, f"exit {proc.returncode}: {tail[:160]}"
    with open(out) as f:
        r = next(r for r in json.load(f) if r["variant"] == variant)
    return r["s_per_epoch"], r["final_test_acc"], ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="source tree of build A; without it, only B's ladder runs")
    ap.add_argument("--out", required=True, help="folder for the results")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--data-dir", default=os.path.join(REPO, "data", "mnist"))
    ap.add_argument("--bench-variants", default=",".join(LADDER + PRODUCTION))
    ap.add_argument("--bench-shapes", default="4096:NT,4096:TN,4096x4096x4096,256x1024x784:NT,"
                    "256x784x1024:NN,1024x784x256:TN,512x4096x4096:NT,4096x4096x512:TN")
    ap.add_argument("--train-variants", default=",".join(PRODUCTION))
    ap.add_argument("--ladder-variants", default=",".join(LADDER))
    ap.add_argument("--models", default="784-1024-1024-10:256,784-512-512-10:128,"
                    "784-4096-4096-10:512")
    ap.add_argument("--ladder-models", default="784-1024-1024-10:256,784-2048-2048-10:512,"
                    "784-1024-1024-10:1024")
    ap.add_argument("--b-build", help="an existing build of this checkout with train_mlp and "
                    "gemm_bench (scripts/check/gpu_check.sh's, say): B is not built again")
    args = ap.parse_args()
    for name in ("train_variants", "ladder_variants", "models", "ladder_models"):
        setattr(args, name, [x for x in getattr(args, name).split(",") if x])  # "" runs none
    os.makedirs(args.out, exist_ok=True)
    sides = {"a": os.path.abspath(args.base), "b": REPO} if args.base else {"b": REPO}
    builds = {s: os.path.join(src, "build-ab") for s, src in sides.items()}
    if args.b_build:
        builds["b"] = os.path.abspath(args.b_build)
    to_build = [s for s in sides if not (s == "b" and args.b_build)]
    jobs = max(1, (os.cpu_count() or 2) // max(1, len(to_build)))
    with ThreadPoolExecutor(max(1, len(to_build))) as pool:
        ok = dict(zip(to_build, pool.map(
            lambda s: build(sides[s], builds[s], jobs, os.path.join(args.out, f"build_{s}.log")),
            to_build)))
    if not all(ok.values()):
        sys.exit(f"ab_builds.py: build failed: {ok} (see {args.out}/build_*.log)")
    bench = {s: os.path.join(b, "apps", "gemm_bench", "gemm_bench") for s, b in builds.items()}
    trainer = {s: os.path.join(b, "apps", "train_mlp", "train_mlp") for s, b in builds.items()}
    failed = False
    rows = []
    # Each row is written as it is measured, so a run stopped part way keeps what it measured.
    train_file = open(os.path.join(args.out, "train.csv"), "w", newline="")
    train_csv = csv.writer(train_file)
    train_csv.writerow(["kind", "round", "build", "model", "variant", "s_per_epoch", "test_acc",
                        "note"])

    def add(row):
        rows.append(row)
        train_csv.writerow(row)
        train_file.flush()

    with tempfile.TemporaryDirectory() as tmp:
        ab_rounds = args.rounds if args.base else 0  # without a base, no A/B rounds
        for r in range(1, ab_rounds + 1):
            for s in sides:
                cmd = [bench[s], "--variants", args.bench_variants, "--shapes", args.bench_shapes,
                       "--json", os.path.join(args.out, f"bench_{s}_{r}.json")]
                if subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode != 0:
                    print(f"gemm_bench {s} round {r} failed", file=sys.stderr)
                    failed = True
            for model in args.models:
                for v in args.train_variants:
                    for s in sides:
                        t, acc, note = train(trainer[s], v, model, args.epochs, args.data_dir, tmp)
                        failed |= t is None
                        add(["ab", r, s, model, v, t, acc, note])
        for model in args.ladder_models:
            for v in args.ladder_variants:
                t, acc, note = train(trainer["b"], v, model, args.epochs, args.data_dir, tmp)
                failed |= t is None
                add(["ladder", 1, "b", model, v, t, acc, note])
    train_file.close()

    if args.base:
        subprocess.run([sys.executable, os.path.join(HERE, "bench_ab.py"),
                        "--a", *[os.path.join(args.out, f"bench_a_{r}.json")
                                 for r in range(1, args.rounds + 1)],
                        "--b", *[os.path.join(args.out, f"bench_b_{r}.json")
                                 for r in range(1, args.rounds + 1)],
                        "--csv", os.path.join(args.out, "bench_ab.csv")])

        best = {}
        for kind, _, s, model, v, t, _, _ in rows:
            if kind == "ab" and t is not None:
                key = (model, v, s)
                best[key] = min(t, best.get(key, t))
        print("\n| model | variant | A s/epoch | B s/epoch | B/A |\n|---|---|--:|--:|--:|")
        with open(os.path.join(args.out, "train_ab.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["model", "variant", "s_per_epoch_a", "s_per_epoch_b", "b_over_a"])
            for model in args.models:
                for v in args.train_variants:
                    a, b = best.get((model, v, "a")), best.get((model, v, "b"))
                    ratio = f"{b / a:.3f}" if a and b else ""
                    w.writerow([model, v, a, b, ratio])
                    print(f"| {model} | {v} | {a} | {b} | {ratio} |")
    print("\n| model | step | s/epoch | over the step before |\n|---|---|--:|--:|")
    with open(os.path.join(args.out, "ladder_train.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "variant", "s_per_epoch", "test_acc", "over_previous"])
        for model in args.ladder_models:
            prev = None
            for kind, _, _, m, v, t, acc, note in rows:
                if kind != "ladder" or m != model:
                    continue
                ratio = f"{t / prev:.3f}" if t and prev else ""
                w.writerow([m, v, t, acc, ratio])
                print(f"| {m} | {v} | {t if t else note} | {ratio} |")
                prev = t
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
