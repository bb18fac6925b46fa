#!/usr/bin/env bash
# scripts/check/critical_path.py on a hand-made step graph and ncu report (no GPU): the critical
# path and its length counted by hand, ncu's units and thousands separators, the warm-up step
# skipped and the median taken; a launch-by-launch step that differs from the graph, a step with a
# kernel the graph lacks and bad input each named in a non-zero exit.
#
#   tests/scripts/critical_path_test.sh <repository root>
set -uo pipefail
root=$1
# shellcheck source=tests/scripts/test_lib.sh
source "$(dirname "$0")/test_lib.sh"
script=$root/scripts/check/critical_path.py

# The graph: gather -> forward -> loss, which forks into the weight gradient (then its SGD) and the
# input gradient (then the first layer's weight gradient and SGD). Times in µs (warm-up: 20 times):
#   0 gather 5, 1 forward 10, 2 loss 20, 3 wgrad 12, 4 dgrad 8, 5 sgd 6, 6 wgrad0 9, 7 sgd0 4
# Ends: 5, 15, 35, 47, 43, 53, 52, 56. Critical path 0 1 2 4 6 7: 56 µs; all kernels 74 µs.
# The report: ncu's own lines, an initialisation kernel, a warm-up step, three steps whose
# per-kernel medians are the times above, a shuffle, a partial batch (another grid) and an eval
# kernel. Each argument is a file to write, PATH[:OPTION,...]: order=... (the step's kernel
# order), extra (a kernel the graph lacks at the end of each step), raw (ncu's --page raw
# layout), badunit.
cat >"$work/fixture.py" <<'PY'
import csv, json, sys
names = ["gather", "forward", "loss", "wgrad", "dgrad", "sgd", "wgrad0", "sgd0"]
mangled = [f"_Z{len(n)}{n}Pfi" for n in names]
times = [5, 10, 20, 12, 8, 6, 9, 4]


def write_graph(out):
    json.dump({"format": "gemm-mlp graph topology 1", "batch": "256", "model": "784-64-10",
               "variant": "fake", "kernels": [
                   {"index": i, "name": f"void {n}(float*, int)", "mangled": mangled[i],
                    "grid": [8 + i, 1, 1], "block": [256, 1, 1], "shared_bytes": 0}
                   for i, n in enumerate(names)],
               "edges": [[0, 1], [1, 2], [2, 3], [2, 4], [3, 5], [4, 6], [6, 7]],
               "other_nodes": {"event_record": 2}}, open(out, "w"))


def write_report(out, opts):
    order = [int(v) for v in next((o[6:] for o in opts if o.startswith("order=")), "01234567")]
    launches = [("_Z4initv", (1, 1, 1), 3.0)]

    def step(scale, grid_extra=0):
        for i in order:
            launches.append((mangled[i], (8 + i + grid_extra, 1, 1), times[i] * scale))
        if "extra" in opts:
            launches.append(("_Z5extrav", (1, 1, 1), 1.0))

    step(20)                  # warm-up: far slower, skipped
    for scale in (1.0, 1.5, 0.5):
        step(scale)           # medians: the times above
    launches.append(("_Z7shufflev", (4, 1, 1), 2.0))
    step(1.0, grid_extra=1)   # a partial batch: other grids, not a whole step
    launches.append(("_Z4evalv", (2, 1, 1), 7.0))
    with open(out, "w", newline="") as f:
        f.write("==PROF== Connected to process 4242 (train_mlp)\n")
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        head = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                "Stream", "Block Size", "Grid Size", "Device", "CC"]
        if "raw" in opts:
            w.writerow(head + ["gpu__time_duration.sum"])
            w.writerow([""] * len(head) + ["usecond"])
        else:
            w.writerow(head + ["Section Name", "Metric Name", "Metric Unit", "Metric Value"])
        for n, (name, grid, us) in enumerate(launches):
            row = [n, 4242, "train_mlp", "127.0.0.1", name, 1, 7, "(256, 1, 1)",
                   "(%d, %d, %d)" % grid, 0, "9.0"]
            if "raw" in opts:
                w.writerow(row + ["%.4f" % us])
                continue
            w.writerow(row + ["Command line profiler metrics", "dram__bytes.sum", "byte", "1,024"])
            unit, value = ("nsecond", "{:,.1f}".format(us * 1000)) if n % 3 == 0 else (
                ("msecond", "%.7f" % (us / 1000)) if n % 3 == 1 else ("usecond", "%.4f" % us))
            if "badunit" in opts and n == 5:
                unit = "furlong"
            w.writerow(row + ["Command line profiler metrics", "gpu__time_duration.sum", unit,
                              value])
        f.write("==PROF== Disconnected from process 4242\n")


for spec in sys.argv[1:]:
    path, _, options = spec.partition(":")
    if path.endswith(".json"):
        write_graph(path)
    else:
        write_report(path, options.split(",") if options else [])
PY
PYTHONDONTWRITEBYTECODE=1 python3 "$work/fixture.py" "$work/graph.json" "$work/ncu.csv" \
  "$work/raw.csv:raw" "$work/swapped.csv:order=01243567" "$work/extra.csv:extra" \
  "$work/badunit.csv:badunit" || fail "the fixture script failed"
run_script() { PYTHONDONTWRITEBYTECODE=1 python3 "$script" --graph-json "$work/graph.json" "$@"; }

# The path and its length, in the Markdown and the CSV.
if ! run_script --ncu-csv "$work/ncu.csv" --csv "$work/out.csv" >"$work/out" 2>&1; then
  fail "critical_path.py on the fixture failed: $(cat "$work/out")"
else
  grep -q "Critical path: 6 of 8 kernels, 56.0 µs; all kernels 74.0 µs (each kernel's median over 3 launch-by-launch steps)" "$work/out" ||
    fail "the summary line is not the hand-counted one: $(cat "$work/out")"
  # shellcheck disable=SC2016  # Markdown's backticks
  grep -q '^| 6 | `wgrad0` | 14×1×1 | 9.0 | 52.0 |$' "$work/out" ||
    fail "the Markdown table lacks kernel 6 as counted by hand: $(cat "$work/out")"
  got=$(python3 -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(" ".join(r["order"] for r in rows if r["critical"] == "yes"), "|",
      " ".join(r["us"] for r in rows), "|", rows[7]["ends_at_us"], rows[0]["variant"])' "$work/out.csv")
  [ "$got" = "0 1 2 4 6 7 | 5.00 10.00 20.00 12.00 8.00 6.00 9.00 4.00 | 56.00 fake" ] ||
    fail "the CSV's critical kernels, times or end are not the hand-counted ones: $got"
fi

# ncu's --page raw layout gives the same CSV.
if ! run_script --ncu-csv "$work/raw.csv" --csv "$work/raw_out.csv" >"$work/out" 2>&1; then
  fail "critical_path.py on the raw-page fixture failed: $(cat "$work/out")"
elif ! diff -u "$work/out.csv" "$work/raw_out.csv" >"$work/diff"; then
  fail "the raw page gives another CSV: $(head -20 "$work/diff")"
fi

# expect_error <what> <message fragment> <critical_path.py arguments...>
expect_error() {
  local what=$1 message=$2
  shift 2
  if run_script "$@" --csv "$work/bad.csv" >"$work/out" 2>&1; then
    fail "$what was accepted: $(cat "$work/out")"
  elif ! grep -qF -- "$message" "$work/out"; then
    fail "$what: the error does not say '$message': $(cat "$work/out")"
  fi
}
# The launch-by-launch step runs dgrad before wgrad: the graph's order is not the launches'.
expect_error "a step in another order" "the launch-by-launch step differs from the graph: from launch ID 1 on, kernels 0..2 agree, then graph kernel 3 is wgrad grid (11, 1, 1) block (256, 1, 1) but launch ID 4 is _Z5dgradPfi grid (12, 1, 1) block (256, 1, 1)" \
  --ncu-csv "$work/swapped.csv"
expect_error "a step with a kernel the graph lacks" "launches kernels that the graph lacks (between the first two: _Z5extrav)" \
  --ncu-csv "$work/extra.csv"
expect_error "an unknown unit" "launch ID 5: unknown time unit 'furlong'" --ncu-csv "$work/badunit.csv"
expect_error "a lone --graph-json" "--graph-json and --ncu-csv come in pairs; got 1 and 0"
expect_error "a missing report" "cannot read the ncu report $work/missing.csv" --ncu-csv "$work/missing.csv"
expect_error "too few steps" "at least 5 are needed" --ncu-csv "$work/ncu.csv" --warmup 4

finish critical_path_test
