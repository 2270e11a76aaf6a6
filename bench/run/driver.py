"""bench/run.sh's measurements (issue 4 "Benchmark"; docs/performance.md).

  driver.py --root ROOT --release DIR --policy P [--warmup 40] [--calls 200] [--passes 3]

ROOT is the checkout (bin/gl-plan, bin/gl-run, build/host, tests/fixtures);
DIR the installed benchmark release (GL_HOME/releases/<sha256>, GL_HOME
exported by the caller). For each case (function, items, consumers) and each
pass, WARMUP + CALLS calls run:

  germline     one session `gl-plan | gl-run` per case and pass: P50/P99 of
               the elapsed_ms gl-run reports per call (the broker's wall
               time of the call, plan to last copy gone), and the wall time
               of the whole session (germline launch included) / calls;
  persistent   tests/fixtures/run/persistent.py --timing: one unprotected
               process, each call timed inside it;
  fresh        bench/run/fresh_call.py: a fresh `/usr/bin/python3 -I -B` per
               call that imports the release and runs the one call, timed
               from outside (spawn to exit);
  bare fork    bench/run/bare_fork.py: fork + noop + _exit + waitpid of a
               warm Python process that imported what a germline imports.

Figures are the median over passes of each pass's P50, and the largest P99
of the passes (the paper's Table VII convention). Memory: PSS from
/proc/PID/smaps_rollup of gl-run, of its resident germline (idle, and while
a copy lives), of a live copy (the release's `hold` function sleeps while
it is read), and of the persistent process. Every figure and ratio printed
comes from this one run.
"""
import argparse
import base64
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time

PY = "/usr/bin/python3"
clock = time.perf_counter
# GL_BENCH_JOBS=N: the germline sessions run gl-run --jobs N (default: gl-run's
# own, the online CPUs), to read the dispatcher's worker cost against --jobs 1
JOBS_ARGS = ["--jobs", os.environ["GL_BENCH_JOBS"]] if os.environ.get("GL_BENCH_JOBS") else []


def pct(xs, p):
    """Nearest-rank percentile."""
    s = sorted(xs)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def b64(text):
    return base64.b64encode(text.encode()).decode()


def items():
    rng = random.Random(1)
    words = ("invoice total salary note meeting draft report budget quarter "
             "review summary figure table line account").split()

    def doc(title):
        lines = [title] + [" ".join(rng.choice(words) for _ in range(10)) for _ in range(60)]
        return "\n".join(lines) + "\n"

    docs = [{"name": "a-public.txt", "label": [], "data": b64(doc("Public notes"))},
            {"name": "b-finance.txt", "label": ["finance"], "data": b64(doc("Q3 invoices"))},
            {"name": "c-hr.txt", "label": ["hr"], "data": b64(doc("Salaries 2027"))}]
    nums = " ".join("%.3f" % rng.gauss(100, 15) for _ in range(2000))
    numbers = [{"name": "numbers.txt", "label": [], "data": b64(nums)}]
    return docs, numbers


def cases():
    docs, numbers = items()
    # (row name, function, items, consumers, copies expected from Plan)
    return [
        ("noop", "noop", [], ["agent"], 1),
        ("stats", "stats", numbers, ["agent"], 1),
        ("summarize", "summarize", docs, ["agent"], 1),
        ("summarize_many", "summarize_many", docs, ["pub", "fin", "agent"], 3),
        ("summarize_many (2 consumers)", "summarize_many", docs, ["pub", "agent"], 2),
    ]


class Bench:
    def __init__(self, opt):
        self.opt = opt
        self.root = opt.root
        self.gl_plan = os.path.join(opt.root, "bin", "gl-plan")
        self.gl_run = os.path.join(opt.root, "bin", "gl-run")
        self.sha = os.path.basename(opt.release.rstrip("/"))
        self.work = opt.work

    def envelopes(self, case, n):
        name, fn, its, cons, _ = case
        return [json.dumps({"id": "%s-%d" % (fn, i), "release": self.sha, "function": fn,
                            "args": {}, "items": its, "consumers": cons}) + "\n"
                for i in range(n)]

    def write(self, lines, name):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.writelines(lines)
        return path

    def plan(self, lines):
        r = subprocess.run([self.gl_plan, "--policy", self.opt.policy], input="".join(lines),
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("bench: gl-plan failed: %s%s" % (r.stdout[:400], r.stderr[:400]))
        return r.stdout.splitlines(keepends=True)

    def check_plan(self, case):
        """Plan must yield the copies the case is named for."""
        rec = json.loads(self.plan(self.envelopes(case, 1))[0])
        n = len(rec["plan"]["groups"])
        if n != case[4]:
            sys.exit("bench: %s plans %d groups, expected %d" % (case[0], n, case[4]))

    # (a) germline
    def germline(self, case, off=False):
        """off: the test build with its per-copy bounds switched off
        (GL_TEST_LIMITS_OFF=1, lib/sandbox/cgroup.c): the cost of the bounds."""
        total = self.opt.warmup + self.opt.calls
        gl_run, env = self.gl_run, None
        if off:
            gl_run = os.path.join(self.root, "build", "testing", "bin", "gl-run")
            env = dict(os.environ, GL_TEST_LIMITS_OFF="1")
        path = self.write(self.envelopes(case, total), "calls.jsonl")
        t0 = clock()
        with open(path) as f:
            plan = subprocess.Popen([self.gl_plan, "--policy", self.opt.policy], stdin=f,
                                    stdout=subprocess.PIPE)
            run = subprocess.Popen([gl_run, "--policy", self.opt.policy] + JOBS_ARGS,
                                   stdin=plan.stdout, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=env)
            plan.stdout.close()
            out, err = run.communicate()
            plan.wait()
        wall = clock() - t0
        recs = [json.loads(l) for l in out.splitlines()]
        bad = [r for r in recs if not r.get("ok") or r.get("copies") != case[4]
               or not all(x.get("ok") for x in r.get("results", []))]
        if run.returncode != 0 or len(recs) != total or bad:
            sys.exit("bench: gl-run %s: exit %d, %d records, first bad: %.300s %s"
                     % (case[0], run.returncode, len(recs), bad[:1], err[-400:].decode()))
        ms = [r["elapsed_ms"] for r in recs]
        return ms[self.opt.warmup:], wall * 1e3 / total, ms[0]

    # (b) one persistent unprotected process
    def persistent(self, case):
        total = self.opt.warmup + self.opt.calls
        path = self.write(self.envelopes(case, total), "calls.jsonl")
        with open(path) as f:
            r = subprocess.run([PY, "-B", os.path.join(self.root, "tests/fixtures/run/persistent.py"),
                                "--release", self.opt.release, "--timing"], stdin=f,
                               capture_output=True, text=True)
        recs = [json.loads(l) for l in r.stdout.splitlines()]
        if r.returncode != 0 or len(recs) != total or not all(x["ok"] for x in recs):
            sys.exit("bench: persistent %s failed: %s" % (case[0], r.stderr[-400:]))
        return [x["elapsed_ms"] for x in recs][self.opt.warmup:]

    # (c) a fresh process per call
    def fresh(self, case):
        script = os.path.join(self.root, "bench/run/fresh_call.py")
        out = []
        for line in self.envelopes(case, self.opt.warmup + self.opt.calls):
            t0 = clock()
            r = subprocess.run([PY, "-I", "-B", script, self.opt.release], input=line,
                               capture_output=True, text=True)
            out.append((clock() - t0) * 1e3)
            if r.returncode != 0 or not json.loads(r.stdout)["ok"]:
                sys.exit("bench: fresh %s failed: %s" % (case[0], r.stderr[-400:]))
        return out[self.opt.warmup:]

    def interpreter(self):
        """A fresh interpreter that imports nothing: the floor of (c)."""
        out = []
        for _ in range(self.opt.warmup // 4 + 50):
            t0 = clock()
            subprocess.run([PY, "-I", "-B", "-c", "pass"], check=True)
            out.append((clock() - t0) * 1e3)
        return out[self.opt.warmup // 4:]

    def bare_fork(self):
        r = subprocess.run([PY, "-I", "-B", os.path.join(self.root, "bench/run/bare_fork.py"),
                            self.opt.release, os.path.join(self.root, "build/host"),
                            str(self.opt.warmup), str(self.opt.calls)],
                           capture_output=True, text=True, check=True)
        return [float(x) for x in r.stdout.split()]

    # memory
    def memory(self):
        mem = {}
        env = lambda fn, args: json.dumps({"id": fn, "release": self.sha, "function": fn,
                                           "args": args, "items": [],
                                           "consumers": ["agent"]}) + "\n"
        noop, hold = self.plan([env("noop", {}), env("hold", {"seconds": 1.5})])
        run = subprocess.Popen([self.gl_run, "--policy", self.opt.policy], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
        try:
            run.stdin.write(noop)
            run.stdin.flush()
            if not json.loads(run.stdout.readline()).get("ok"):
                sys.exit("bench: memory: the noop call failed")
            time.sleep(0.3)
            # gl-run -> the germline's init (PID 1 of its namespace, a fork of
            # gl-run) -> the germline; copies are the init's children too
            inits = [i for i in children(run.pid)
                     if any("germline_host.py" in cmdline(g) for g in children(i))]
            germ = [g for i in inits for g in children(i) if "germline_host.py" in cmdline(g)]
            if len(germ) != 1:
                sys.exit("bench: memory: no resident germline under gl-run")
            mem["gl-run (broker)"] = smaps(run.pid)
            mem["the germline's init"] = smaps(inits[0])
            mem["germline, idle"] = smaps(germ[0])
            run.stdin.write(hold)
            run.stdin.flush()
            copy = []
            for _ in range(100):
                time.sleep(0.02)
                copy = [p for p in children(inits[0]) if p != germ[0] and state(p) not in "ZX"]
                if copy:
                    break
            if not copy:
                sys.exit("bench: memory: no live copy under the germline")
            time.sleep(0.3)  # the copy has received its call and sleeps in it
            mem["germline, with a live copy"] = smaps(germ[0])
            mem["live copy (hold)"] = smaps(copy[0])
            if not json.loads(run.stdout.readline()).get("ok"):
                sys.exit("bench: memory: the hold call failed")
        finally:
            run.stdin.close()
            run.wait()
        per = subprocess.Popen([PY, "-B", os.path.join(self.root, "tests/fixtures/run/persistent.py"),
                                "--release", self.opt.release], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
        per.stdin.write(env("noop", {}))
        per.stdin.flush()
        per.stdout.readline()
        mem["persistent process"] = smaps(per.pid)
        per.stdin.close()
        per.wait()
        return mem


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rpartition(")")[2].split()[0]
    except OSError:
        return "X"


def smaps(pid):
    """{Pss, Rss, Private} in MiB from /proc/PID/smaps_rollup."""
    kb = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if v.strip().endswith("kB"):
                kb[k] = int(v.split()[0])
    return {"pss": kb["Pss"] / 1024, "rss": kb["Rss"] / 1024,
            "private": (kb["Private_Clean"] + kb["Private_Dirty"]) / 1024}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--release", required=True)
    ap.add_argument("--policy", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--warmup", type=int, default=40)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--passes", type=int, default=3)
    opt = ap.parse_args()
    b = Bench(opt)
    cs = cases()
    for c in cs:
        b.check_plan(c)

    t_start = clock()
    res = {c[0]: {"g": [], "g99": [], "wall": [], "launch": [], "p": [], "p99": [],
                  "f": [], "f99": []} for c in cs}
    bare, bare99, interp, nooff = [], [], [], []
    for k in range(opt.passes):
        print("pass %d/%d ..." % (k + 1, opt.passes), file=sys.stderr, flush=True)
        for c in cs:
            r = res[c[0]]
            ms, wall, first = b.germline(c)
            r["g"].append(pct(ms, 50)), r["g99"].append(pct(ms, 99))
            r["wall"].append(wall), r["launch"].append(first)
            ms = b.persistent(c)
            r["p"].append(pct(ms, 50)), r["p99"].append(pct(ms, 99))
            if c[0] != "summarize_many (2 consumers)":
                ms = b.fresh(c)
                r["f"].append(pct(ms, 50)), r["f99"].append(pct(ms, 99))
        ms, _, _ = b.germline(cs[0], off=True)
        nooff.append(pct(ms, 50))
        ms = b.bare_fork()
        bare.append(pct(ms, 50)), bare99.append(pct(ms, 99))
        ms = b.interpreter()
        interp.append(pct(ms, 50))
    mem = b.memory()
    took = clock() - t_start

    med = statistics.median
    print("Per-call latency, ms: P50 (median of %d passes) / P99 (largest of the passes); "
          "%d calls a pass after %d warm-up calls." % (opt.passes, opt.calls, opt.warmup))
    print()
    print("| function | copies | germline (gl-run elapsed_ms) | germline session wall / calls "
          "| persistent process | fresh process per call | fresh / germline (P50) |")
    print("|---|---|---|---|---|---|---|")
    for c in cs:
        r = res[c[0]]
        g = med(r["g"])
        fresh = "%.1f / %.1f" % (med(r["f"]), max(r["f99"])) if r["f"] else "—"
        ratio = "%.1f×" % (med(r["f"]) / g) if r["f"] else "—"
        print("| %s | %d | %.1f / %.1f | %.1f | %.3f / %.3f | %s | %s |"
              % (c[0], c[4], g, max(r["g99"]), med(r["wall"]), med(r["p"]), max(r["p99"]),
                 fresh, ratio))
    print()
    print("| reference | P50 | P99 |")
    print("|---|---|---|")
    print("| bare fork-and-wait of the warm Python process (fork + noop + _exit + waitpid) "
          "| %.2f | %.2f |" % (med(bare), max(bare99)))
    print("| germline noop, per-copy limits off (test build, GL_TEST_LIMITS_OFF=1) | %.2f | |"
          % med(nooff))
    print("| fresh interpreter importing nothing (`python3 -I -B -c pass`) | %.1f | |"
          % med(interp))
    print("| germline launch (the first call of a session, elapsed_ms) | %.1f | |"
          % med([x for c in cs for x in res[c[0]]["launch"]]))
    print()
    print("| process | PSS MiB | private MiB | RSS MiB |")
    print("|---|---|---|---|")
    for k, v in mem.items():
        print("| %s | %.1f | %.1f | %.1f |" % (k, v["pss"], v["private"], v["rss"]))
    added = (mem["germline, with a live copy"]["pss"] + mem["live copy (hold)"]["pss"]
             - mem["germline, idle"]["pss"])
    print("| what a live copy adds (germline + copy PSS, minus the idle germline) | %.1f | | |"
          % added)
    print()

    def verdict(ok):
        return "met" if ok else "NOT met"

    single = [c for c in cs if c[4] == 1]
    ratios = {c[0]: med(res[c[0]]["f"]) / med(res[c[0]]["g"]) for c in single}
    print("Goals (issue 4), from this run:")
    print("- single-copy germline vs a fresh process per call (P50, goal ≥ 25×): %s — %s"
          % (", ".join("%s %.1f×" % kv for kv in ratios.items()),
             verdict(min(ratios.values()) >= 25)))
    nb = med(res["noop"]["g"]) / med(bare)
    print("- germline noop vs bare fork-and-wait (P50, goal ≤ 1.5×): %.2f / %.2f ms = %.2f× — %s"
          % (med(res["noop"]["g"]), med(bare), nb, verdict(nb <= 1.5)))
    lr = med(res["noop"]["g"]) / med(nooff)
    print("- per-copy limits (issue 15): noop with limits on / off (P50): %.2f / %.2f ms = %.2f×"
          % (med(res["noop"]["g"]), med(nooff), lr))
    pts = [(1, med(res["summarize"]["g"])), (2, med(res["summarize_many (2 consumers)"]["g"])),
           (3, med(res["summarize_many"]["g"]))]
    xm = sum(x for x, _ in pts) / 3
    ym = sum(y for _, y in pts) / 3
    slope = sum((x - xm) * (y - ym) for x, y in pts) / sum((x - xm) ** 2 for x, _ in pts)
    icpt = ym - slope * xm
    worst = max(abs(y - (icpt + slope * x)) / y for x, y in pts)
    per1, per3 = pts[0][1], pts[2][1] / 3
    print("- latency vs copies (summarize 1, summarize_many 2 and 3; goal: linear): "
          "P50 %.1f / %.1f / %.1f ms; fit %.1f ms + %.1f ms per copy, largest residual %.0f%%; "
          "per copy %.1f ms at 1 copy, %.1f ms at 3 — %s"
          % (pts[0][1], pts[1][1], pts[2][1], icpt, slope, worst * 100, per1, per3,
             verdict(worst <= 0.10 and per3 <= per1 * 1.10)))
    print()
    print("(benchmark run time %.0f s)" % took)


if __name__ == "__main__":
    main()
