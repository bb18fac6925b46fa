"""The bad-input probe's runner (scripts/check/probe.py): runs one case, measures its peak memory
and its time, sorts its outcome (clear, silent, unbounded, crashed), and keeps the rows."""
import os
import re
import resource
import signal
import subprocess
import sys
import time

# A line that says work was done: train_mlp's when an epoch has trained ("[cpu] epoch  1/3  loss
# ..."), gemm_bench's when a case has run ("8x8x8    NN    0.001 ...").
WORK_LINE = re.compile(r"\] epoch +\d+/|^\d+x\d+x\d+ ", re.M)


def run(cmd, timeout, env=None):
    """(exit status or -signal, stdout, stderr, peak RSS in MB, timed out). The command runs in a
    session of its own, with no input (a read of stdin ends at once); past `timeout` seconds its
    whole process group is killed (a child that hangs, on a FIFO say, included), so that a hang
    ends the case, not the probe."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        timed_out = True
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"), rss_mb, \
        timed_out


def limited(command, ulimit):
    """command under `ulimit` ("-v 4194304", "-f 0"), SIGXFSZ ignored (a write past -f fails with
    EFBIG, as on a full disk, instead of ending the process)."""
    return ["sh", "-c", f"trap '' XFSZ; ulimit {ulimit} && exec \"$@\"", "sh"] + command


class Probe:
    def __init__(self, args, work):
        self.args, self.work, self.rows = args, work, []
        b = os.path.abspath(args.build)
        self.train = os.path.join(b, "apps/train_mlp/train_mlp")
        self.predict = os.path.join(b, "apps/predict/predict")
        self.bench = os.path.join(b, "apps/gemm_bench/gemm_bench")
        self.spiral = os.path.join(b, "examples/train_spiral/train_spiral")
        self.data = os.path.abspath(args.data_dir)

    def path(self, name):
        return os.path.join(self.work, name)

    def record(self, category, name, outcome, detail):
        self.rows.append([category, name, outcome, detail.strip().replace("\n", " | ")[:300]])
        print(f"{outcome:10} {category:12} {name}: {self.rows[-1][3][:150]}", flush=True)

    def case(self, category, name, cmd, expect_error=True, timeout=120, seconds=None, env=None):
        """Runs cmd (in `env`, default this process's) and records its outcome. Past `timeout`
        seconds it is killed and `unbounded` (a hang). `seconds`, for a refusal that must come
        before any work (a name that cannot be written, refused before an epoch trains): a refusal
        that takes longer is `unbounded` too, and so is one that printed an epoch's line (or a
        benchmark's row) first."""
        # Each case in a fresh process group of its own, so that RUSAGE_CHILDREN's peak is its own:
        # run it through a child Python that reports the grandchild's peak.
        wrapper = [sys.executable, "-c", (
            "import resource,subprocess,sys\n"
            "p=subprocess.run(sys.argv[1:])\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)\n")] + cmd
        start = time.monotonic()
        rc, out, err, _, timed_out = run(wrapper, timeout, env)
        elapsed = time.monotonic() - start
        lines = err.rstrip().split("\n")
        try:
            rss_mb = int(lines[-1]) / 1024
            err = "\n".join(lines[:-1])
        except ValueError:
            rss_mb = 0.0
        late = seconds is not None and rc != 0 and (elapsed > seconds or WORK_LINE.search(out))
        if timed_out or rss_mb > self.args.max_rss_mb or late:
            outcome = "unbounded"
        elif rc > 128:
            outcome = "crashed"
        elif expect_error:
            outcome = "clear" if rc != 0 and err.strip() else "silent"
        else:
            outcome = "clear" if rc == 0 else "silent"
        detail = (f"killed after {timeout} s (a hang)" if timed_out else f"exit {rc}") + \
            f", {rss_mb:.0f} MB" + (f", {elapsed:.1f} s (bound {seconds} s)" if seconds else "") + \
            ": " + (err.strip() or out.strip()[-200:])
        self.record(category, name, outcome, detail)
        return rc, out, err
