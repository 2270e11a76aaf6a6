"""bench/throughput.sh's measurement (issue 19, "Must show": throughput;
docs/performance.md "Concurrency").

  driver.py --root ROOT --release DIR --policy P --work W
            [--calls 40] [--passes 3] [--jobs 1,2,4] [--n 200000]

Independent calls (no items, no destination) of the CPU-bound `burn` of
bench/releases/throughput, CALLS per case and pass, at parallelism N for
each N of --jobs. Call i is sent for consumer agent<i mod 8>, each with a
clearance of its own (bench/throughput.sh's policy), as several agents of
one host send calls: consecutive calls touch different horizon slots, so
gl-run --jobs may run them at once (calls of one slot keep their order,
docs/gl-run.md "--jobs"):

  germline  one gl-run --jobs N (when gl-run has --jobs), else N gl-run
            processes on one GL_HOME each given CALLS/N calls (copies of
            different calls at the same time: the equivalent); each session
            is warmed first (its germline launched, 2 calls per process),
            then timed from the first envelope written to the last record read
  fresh     a fresh `/usr/bin/python3 -I -B bench/run/fresh_call.py` per
            call (imports the release, runs the one call), N at a time
  bwrap     the same inside a fresh bwrap launch per call (unshared
            net/pid/ipc, /usr, the release and the script bound read-only,
            a fresh /proc, /dev and /tmp), N at a time

calls/s is CALLS / wall time, the median over passes; ratios are taken
against the baselines of the same run; scaling is calls/s at N / at 1.
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import threading
import time

PY = "/usr/bin/python3"
AGENTS = 8  # consumers agent0..agent7 (bench/throughput.sh's policy)
BWRAP = "/usr/bin/bwrap"


class Throughput:
    def __init__(self, opt):
        self.opt = opt
        self.gl_run = os.path.join(opt.root, "bin", "gl-run")
        self.sha = os.path.basename(opt.release.rstrip("/"))
        self.fresh = os.path.join(opt.root, "bench", "run", "fresh_call.py")
        self.has_jobs = "--jobs" in subprocess.run(
            [self.gl_run, "--help"], capture_output=True, text=True).stdout

    def envelope(self, i):
        return json.dumps({"id": "b-%d" % i, "release": self.sha, "function": "burn",
                           "args": {"n": self.opt.n}, "items": [],
                           "consumers": ["agent%d" % (i % AGENTS)]}) + "\n"

    # ---- germline -----------------------------------------------------------
    def _session(self, jobs):
        extra = ["--jobs", str(jobs)] if jobs else []
        return subprocess.Popen([self.gl_run, "--policy", self.opt.policy] + extra,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, bufsize=1)

    @staticmethod
    def _records(p, n):
        for _ in range(n):
            line = p.stdout.readline()
            if not line or not json.loads(line).get("ok"):
                sys.exit("bench: throughput: gl-run record %r" % line[:400])

    def germline(self, n):
        procs = [self._session(n)] if self.has_jobs else [self._session(None) for _ in range(n)]
        for p in procs:  # warm: germline launched
            p.stdin.write(self.envelope(-1) + self.envelope(-2))
            p.stdin.flush()
        for p in procs:
            self._records(p, 2)
        share = [self.opt.calls // len(procs) + (k < self.opt.calls % len(procs))
                 for k in range(len(procs))]
        lines = [[self.envelope(i) for i in range(c)] for c in share]
        t0 = time.perf_counter()
        ws = [threading.Thread(target=lambda p=p, ls=ls: (p.stdin.writelines(ls), p.stdin.flush()))
              for p, ls in zip(procs, lines)]
        for w in ws:
            w.start()
        rs = [threading.Thread(target=self._records, args=(p, c)) for p, c in zip(procs, share)]
        for r in rs:
            r.start()
        for t in ws + rs:
            t.join()
        wall = time.perf_counter() - t0
        for p in procs:
            p.stdin.close()
            p.wait()
        return self.opt.calls / wall

    # ---- baselines ----------------------------------------------------------
    def _bwrap_argv(self):
        return [BWRAP, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent",
                "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
                "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
                "--ro-bind", self.opt.release, "/release",
                "--ro-bind", self.fresh, "/fresh_call.py",
                "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--clearenv",
                PY, "-I", "-B", "/fresh_call.py", "/release"]

    def baseline(self, n, argv):
        def one(i):
            r = subprocess.run(argv, input=self.envelope(i), capture_output=True, text=True)
            if r.returncode != 0 or not json.loads(r.stdout).get("ok"):
                sys.exit("bench: throughput: %s: %s" % (argv[0], (r.stdout + r.stderr)[:400]))
        with concurrent.futures.ThreadPoolExecutor(n) as ex:
            t0 = time.perf_counter()
            list(ex.map(one, range(self.opt.calls)))
            wall = time.perf_counter() - t0
        return self.opt.calls / wall

    def run(self):
        jobs = [int(j) for j in self.opt.jobs.split(",")]
        kinds = [("germline", self.germline),
                 ("fresh", lambda n: self.baseline(n, [PY, "-I", "-B", self.fresh,
                                                       self.opt.release])),
                 ("bwrap", lambda n: self.baseline(n, self._bwrap_argv()))]
        cps = {}
        for _ in range(self.opt.passes):
            for n in jobs:
                for name, f in kinds:
                    cps.setdefault((name, n), []).append(f(n))
        med = {k: statistics.median(v) for k, v in cps.items()}
        how = ("gl-run --jobs N" if self.has_jobs
               else "N gl-run processes on one GL_HOME (gl-run has no --jobs yet)")
        print("throughput: %d calls of burn(n=%d) per case, %d passes (median); germline: %s"
              % (self.opt.calls, self.opt.n, self.opt.passes, how))
        print("%-4s %10s %10s %10s %12s %12s" % ("N", "germline", "fresh", "bwrap",
                                                 "germ/fresh", "germ/bwrap"))
        for n in jobs:
            g, f, b = med[("germline", n)], med[("fresh", n)], med[("bwrap", n)]
            print("%-4d %10.2f %10.2f %10.2f %11.2fx %11.2fx" % (n, g, f, b, g / f, g / b))
        for n in jobs[1:]:
            print("scaling at %d (calls/s at %d / at %d): germline %.2fx, fresh %.2fx, bwrap %.2fx"
                  % (n, n, jobs[0], med[("germline", n)] / med[("germline", jobs[0])],
                     med[("fresh", n)] / med[("fresh", jobs[0])],
                     med[("bwrap", n)] / med[("bwrap", jobs[0])]))
        print("json: " + json.dumps({"%s@%d" % k: v for k, v in med.items()}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--release", required=True)
    ap.add_argument("--policy", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--jobs", default="1,2,4")
    ap.add_argument("--n", type=int, default=200_000)
    Throughput(ap.parse_args()).run()


if __name__ == "__main__":
    main()
