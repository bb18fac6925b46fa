#!/usr/bin/env bash
# scripts/docs/plot_training.py: the history plot's epoch axis has whole-number ticks only, its
# loss axis at least three labelled ticks, and a python3 without matplotlib gets the command that
# installs it for that python3.
#
#   tests/scripts/plot_training_test.sh <repository root>
# Exit 77 (a skip, named) when no python3 here has matplotlib: the tick check needs it.
set -uo pipefail
root=$1
plot=$root/scripts/docs/plot_training.py
source "$(dirname "$0")/test_lib.sh"

printf 'epoch,loss,train_acc,test_acc,lr,epoch_s,gemm_s\n' >"$work/run.csv"
for e in 1 2 3; do printf '%d,0.%d,0.9,0.9,0.1,1,0.5\n' "$e" "$((6 - e))" >>"$work/run.csv"; done

# A matplotlib that cannot be imported, shadowing any real one: the advice names an install
# command for the python3 that ran the script (after it tried /usr/bin/python3, which sees the
# same shadow).
mkdir -p "$work/fake/matplotlib"
echo 'raise ImportError("no matplotlib here")' >"$work/fake/matplotlib/__init__.py"
out=$(PYTHONPATH="$work/fake" python3 "$plot" history "$work/run.csv" 2>&1)
status=$?
[ "$status" -ne 0 ] || fail "no matplotlib: exit status 0"
grep -q "matplotlib is not installed for .*; install it with: .*\(-m pip install matplotlib\|install_deps.sh\)" <<<"$out" ||
  fail "no matplotlib: no install command in: $out"
[ ! -e "$work/run.png" ] || fail "no matplotlib: a PNG was written"

python=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c "import matplotlib" 2>/dev/null; then
    python=$p
    break
  fi
done
if [ -z "$python" ]; then
  echo "SKIP: no python3 here has matplotlib (scripts/setup/install_deps.sh installs it)"
  exit 77
fi

# The ticks of both panels' epoch axes, as drawn for a 3-epoch run: whole numbers only.
ticks=$(cd "$root/scripts/docs" && "$python" - "$work/run.csv" <<'PY'
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import plot_training
rows = plot_training.read_rows(sys.argv[1])
fig = plot_training.plot_history(plt, rows, sys.argv[1], None)
for ax in fig.axes:
    lo, hi = ax.get_xlim()
    print(" ".join(repr(float(t)) for t in ax.get_xticks() if lo <= t <= hi))
PY
)
[ -n "$ticks" ] || fail "no ticks read"
for t in $ticks; do
  [[ "$t" =~ ^[0-9]+\.0$ ]] || fail "epoch axis tick $t is not a whole number (ticks: $ticks)"
done
# The loss axis (log scale) labels at least three ticks, each at its value, over a loss within less
# than a decade (0.5 to 0.06) and over one across three decades.
for losses in "0.5 0.2 0.06" "2.3 0.05 0.002"; do
  printf 'epoch,loss,train_acc,test_acc,lr,epoch_s,gemm_s\n' >"$work/loss.csv"
  e=0
  for l in $losses; do e=$((e + 1)); printf '%d,%s,0.9,0.9,0.1,1,0.5\n' "$e" "$l" >>"$work/loss.csv"; done
  labels=$(cd "$root/scripts/docs" && "$python" - "$work/loss.csv" <<'PY'
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import plot_training
rows = plot_training.read_rows(sys.argv[1])
fig = plot_training.plot_history(plt, rows, sys.argv[1], None)
fig.canvas.draw()
ax = fig.axes[0]
lo, hi = ax.get_ylim()
for tick, label in zip(ax.get_yticks(), ax.get_yticklabels()):
    if lo <= tick <= hi and label.get_text():
        print(f"{tick:g}={label.get_text()}")
PY
)
  n=$(wc -w <<<"$labels")
  [ "$n" -ge 3 ] || fail "loss $losses: $n labelled ticks on the loss axis, not 3 or more: $labels"
  for pair in $labels; do
    [[ "${pair%%=*}" == "${pair#*=}" ]] || fail "loss $losses: tick ${pair%%=*} labelled ${pair#*=}"
  done
done
"$python" "$plot" history "$work/run.csv" -o "$work/run.png" >/dev/null 2>&1 || fail "plot failed"
[ -s "$work/run.png" ] || fail "no PNG written"
finish plot_training_test
