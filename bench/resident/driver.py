"""bench/resident.sh's measurements (issue 19 "many resident releases";
docs/performance.md "Many resident releases"; the paper's Fig. 4(c)).

  driver.py --root ROOT --policy P --releases SHA,SHA,... --entry-dir DIR --entry MOD
            [--counts 1,5,10,20] [--cycles 10]

The releases are distinct signed installs of one release (the same code,
a different version each) under GL_HOME/releases (GL_HOME exported by the
caller). For each count K:

  germlines  one gl-run session (default --max-resident) that calls noop
             once on each of K releases, so that K germlines are resident;
             then, idle, the PSS (/proc/PID/smaps_rollup) summed over every
             process of each germline: its init (PID 1 of its namespace, a
             child of gl-run) and everything under it (the germline);
             gl-run's own PSS apart;
  plain      K plain `/usr/bin/python3 -I -B` processes that import the
             same entry module from the same tree (the same imports, the
             same thread caps as the germline's environment) and then
             block on stdin: their PSS summed.

PSS divides a shared page among the processes that map it, so both sides
get cheaper per process as K grows; the ratio is germline over plain at
the same K. Then the cost of an eviction: a session with --max-resident 1
alternating two releases (every call stops one germline and launches the
other: evict + verified relaunch + the call) against --max-resident 2 on
the same alternation (every call a resident hit): the median of the
elapsed_ms gl-run reports, and the ratio. Every figure and ratio printed
comes from this one run; nothing is asserted on a time.
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

_spec = importlib.util.spec_from_file_location(
    "bench_run_driver", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run",
                                     "driver.py"))
_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_run)
children, cmdline, smaps = _run.children, _run.cmdline, _run.smaps

PY = "/usr/bin/python3"
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def envelope(i, sha):
    return json.dumps({"id": "c%d" % i, "release": sha, "function": "noop", "args": {},
                       "items": [], "consumers": ["agent"]}) + "\n"


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children(p))
    return out


class Bench:
    def __init__(self, opt):
        self.opt = opt
        self.bin = os.path.join(opt.root, "bin")
        self.shas = opt.releases.split(",")

    def plan(self, lines):
        r = subprocess.run([os.path.join(self.bin, "gl-plan"), "--policy", self.opt.policy],
                           input="".join(lines), capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("bench: gl-plan failed: %s%s" % (r.stdout[:400], r.stderr[:400]))
        return r.stdout.splitlines(keepends=True)

    def session(self, flags=()):
        return subprocess.Popen([os.path.join(self.bin, "gl-run"), "--policy", self.opt.policy,
                                 *flags], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True)

    def call(self, run, line):
        run.stdin.write(line)
        run.stdin.flush()
        rec = json.loads(run.stdout.readline())
        if not rec.get("ok"):
            sys.exit("bench: a noop call failed: %s" % json.dumps(rec)[:600])
        return rec

    def germlines(self, k):
        """[(PSS MiB of each germline: init + descendants)], gl-run's PSS."""
        run = self.session()
        try:
            for line in self.plan([envelope(i, self.shas[i]) for i in range(k)]):
                self.call(run, line)
            time.sleep(0.5)  # idle: every copy is gone
            inits = [i for i in children(run.pid)
                     if any("germline_host.py" in cmdline(g) for g in children(i))]
            if len(inits) != k:
                sys.exit("bench: %d germlines under gl-run, expected %d" % (len(inits), k))
            per = [sum(smaps(p)["pss"] for p in descendants(i)) for i in inits]
            init = [smaps(i)["pss"] for i in inits]
            return per, init, smaps(run.pid)["pss"]
        finally:
            run.stdin.close()
            run.wait()

    def plain(self, k):
        code = ("import sys; sys.path.insert(0, %r); import %s; sys.stdout.write('up\\n'); "
                "sys.stdout.flush(); sys.stdin.read()" % (self.opt.entry_dir, self.opt.entry))
        env = dict(os.environ, **THREADS)
        procs = []
        try:
            for _ in range(k):
                p = subprocess.Popen([PY, "-I", "-B", "-c", code], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env)
                procs.append(p)
                if p.stdout.readline() != "up\n":
                    sys.exit("bench: a plain process did not import the release")
            time.sleep(0.5)
            return [smaps(p.pid)["pss"] for p in procs]
        finally:
            for p in procs:
                p.stdin.close()
                p.wait()

    def cycle(self, k, n):
        """Median elapsed_ms of n calls alternating two releases, --max-resident k
        (both launched before the n calls are timed)."""
        lines = self.plan([envelope(i, self.shas[i % 2]) for i in range(n + 2)])
        run = self.session(["--max-resident", str(k)])
        try:
            ms = [self.call(run, line)["elapsed_ms"] for line in lines]
        finally:
            run.stdin.close()
            run.wait()
        return statistics.median(ms[2:])


def main():
    ap = argparse.ArgumentParser()
    for a in ("--root", "--policy", "--releases", "--entry-dir", "--entry"):
        ap.add_argument(a, required=True)
    ap.add_argument("--counts", default="1,5,10,20")
    ap.add_argument("--cycles", type=int, default=10)
    opt = ap.parse_args()
    b = Bench(opt)
    counts = [int(x) for x in opt.counts.split(",")]
    if max(counts) > len(b.shas):
        sys.exit("bench: %d releases installed, %d needed" % (len(b.shas), max(counts)))
    print("| resident K | germlines PSS MiB (total) | per germline | plain python3 PSS MiB "
          "(total) | per process | ratio per germline / per process | of which the inits "
          "(total) | gl-run PSS MiB |")
    print("|---|---|---|---|---|---|---|---|")
    tot = {}
    for k in counts:
        g, init, broker = b.germlines(k)
        p = b.plain(k)
        tot[k] = (sum(g), sum(p))
        print("| %d | %.1f | %.1f | %.1f | %.1f | %.2fx | %.1f | %.1f |"
              % (k, sum(g), sum(g) / k, sum(p), sum(p) / k, (sum(g) / k) / (sum(p) / k),
                 sum(init), broker))
    lo, hi = min(counts), max(counts)
    if hi > lo:
        dg, dp = ((tot[hi][j] - tot[lo][j]) / (hi - lo) for j in (0, 1))
        print("| each additional resident (K %d to %d) | %.1f | | %.1f | | %.2fx | | |"
              % (lo, hi, dg, dp, dg / dp))
    print()
    evict = b.cycle(1, opt.cycles)
    hit = b.cycle(2, opt.cycles * 2)
    print("| calls alternating two releases | median elapsed_ms |")
    print("|---|---|")
    print("| --max-resident 2 (every call a resident hit) | %.1f |" % hit)
    print("| --max-resident 1 (every call: evict, verified relaunch, call) | %.1f |" % evict)
    print("| ratio eviction+relaunch / hit | %.1fx |" % (evict / hit))


if __name__ == "__main__":
    main()
