"""The bad-input probe's runner (scripts/check/probe.py): runs one case, measures its peak memory
and sorts its outcome (clear, silent, unbounded, crashed), and keeps the rows."""
import os
import resource
import subprocess
import sys
import time


def run(cmd, timeout, env=None):
    """(exit status or -signal, stdout, stderr, peak RSS in MB, timed out)."""
    start = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        timed_out = True
    del start
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"), rss_mb, \
        timed_out


class Probe:
    def __init__(self, args, work):
        self.args, self.work, self.rows = args, work, []
        b = os.path.abspath(args.build)
        self.train = os.path.join(b, "apps/train_mlp/train_mlp")
        self.predict = os.path.join(b, "apps/predict/predict")
        self.bench = os.path.join(b, "apps/gemm_bench/gemm_bench")
        self.data = os.path.abspath(args.data_dir)

    def path(self, name):
        return os.path.join(self.work, name)

    def record(self, category, name, outcome, detail):
        self.rows.append([category, name, outcome, detail.strip().replace("\n", " | ")[:300]])
        print(f"{outcome:10} {category:12} {name}: {self.rows[-1][3][:150]}", flush=True)

    def case(self, category, name, cmd, expect_error=True, timeout=120):
        # Each case in a fresh process group of its own, so that RUSAGE_CHILDREN's peak is its own:
        # run it through a child Python that reports the grandchild's peak.
        wrapper = [sys.executable, "-c", (
            "import resource,subprocess,sys\n"
            "p=subprocess.run(sys.argv[1:])\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)\n")] + cmd
        rc, out, err, _, timed_out = run(wrapper, timeout)
        lines = err.rstrip().split("\n")
        try:
            rss_mb = int(lines[-1]) / 1024
            err = "\n".join(lines[:-1])
        except ValueError:
            rss_mb = 0.0
        if timed_out or rss_mb > self.args.max_rss_mb:
            outcome = "unbounded"
        elif rc > 128:
            outcome = "crashed"
        elif expect_error:
            outcome = "clear" if rc != 0 and err.strip() else "silent"
        else:
            outcome = "clear" if rc == 0 else "silent"
        detail = f"exit {rc}, {rss_mb:.0f} MB: " + (err.strip() or out.strip()[-200:])
        self.record(category, name, outcome, detail)
        return rc, out, err
