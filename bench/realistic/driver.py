"""bench/realistic.sh's measurements (issue 19 "a realistic release";
docs/performance.md "A realistic release").

  driver.py --root ROOT --release DIR --policy P --work W
            [--warmup 20] [--calls 100] [--fresh-warmup 2] [--fresh-calls 20] [--passes 3]

DIR is bench/releases/realistic as installed through the real chain
(GL_HOME/releases/<sha256>, GL_HOME exported by the caller): a release that
imports numpy, pypdf and requests at init (what real tools cost; the
paper's Section VII: the 2-28x of a fork of a warm process over a fresh
process per call comes from such imports). For each function, one copy per
call (one consumer), and each pass:

  germline    one session `gl-plan | gl-run` of WARMUP + CALLS calls: P50/P99
              of the elapsed_ms gl-run reports per call (plan to last copy
              gone); the first call's elapsed_ms is the germline's launch;
  persistent  tests/fixtures/run/persistent.py --timing: one unprotected
              process, each call timed inside it (the paper's Sig+Pin);
  fresh       bench/run/fresh_call.py: a fresh `/usr/bin/python3 -I -B` per
              call that imports the release (hence numpy, pypdf, requests)
              and runs the one call, timed from spawn to exit; fewer calls
              (FRESH_WARMUP + FRESH_CALLS), each costs a whole import.

Also, once a pass: a fresh interpreter that imports nothing (the floor of
fresh). Figures: the median over passes of each pass's P50, the largest
P99 of the passes (the paper's Table VII convention). Memory (PSS from
/proc/PID/smaps_rollup) of the resident germline idle and while a copy
lives (`hold`), of the live copy and of the persistent process, and the
germline's thread count (G1: a germline must be single-threaded; numpy's
BLAS could start threads). Every figure and ratio printed comes from this
one run; nothing is asserted on a time.
"""
import argparse
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import time

# The helpers of bench/run/driver.py (percentiles, /proc readers), by path:
# both files are named driver.py.
_spec = importlib.util.spec_from_file_location(
    "bench_run_driver", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run",
                                     "driver.py"))
_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_run)
b64, children, cmdline, pct, smaps, state = (_run.b64, _run.children, _run.cmdline, _run.pct,
                                             _run.smaps, _run.state)

PY = "/usr/bin/python3"
clock = time.perf_counter


def cases():
    rng = random.Random(19)
    values = [round(rng.gauss(100, 15), 3) for _ in range(4096)]
    words = ("invoice total salary note meeting draft report budget quarter "
             "review summary figure table line account").split()
    text = "Quarterly report\n" + "\n".join(
        " ".join(rng.choice(words) for _ in range(10)) for _ in range(40)) + "\n"
    doc = [{"name": "report.txt", "label": [], "data": b64(text)}]
    req = {"method": "POST", "url": "https://ocr.example/v1/ocr",
           "params": {"lang": "en", "pages": "1-3"},
           "headers": {"Authorization": "Bearer placeholder", "X-Request": "bench"},
           "json": {"document": "report.txt", "options": {"dpi": 300, "layout": True}}}
    # (row name, function, args, items)
    return [("noop", "noop", {}, []),
            ("reduce (numpy, 4,096 values)", "reduce", {"values": values}, []),
            ("pdf_roundtrip (pypdf, one 4 KB item)", "pdf_roundtrip", {}, doc),
            ("prepare_request (requests)", "prepare_request", req, [])]


class Bench:
    def __init__(self, opt):
        self.opt = opt
        self.gl_plan = os.path.join(opt.root, "bin", "gl-plan")
        self.gl_run = os.path.join(opt.root, "bin", "gl-run")
        self.persistent_py = os.path.join(opt.root, "tests/fixtures/run/persistent.py")
        self.sha = os.path.basename(opt.release.rstrip("/"))

    def envelope(self, fn, args, its, i):
        return json.dumps({"id": "%s-%d" % (fn, i), "release": self.sha, "function": fn,
                           "args": args, "items": its, "consumers": ["agent"]}) + "\n"

    def write(self, case, n):
        _, fn, args, its = case
        path = os.path.join(self.opt.work, "calls.jsonl")
        with open(path, "w") as f:
            f.writelines(self.envelope(fn, args, its, i) for i in range(n))
        return path

    def germline(self, case):
        total = self.opt.warmup + self.opt.calls
        with open(self.write(case, total)) as f:
            plan = subprocess.Popen([self.gl_plan, "--policy", self.opt.policy], stdin=f,
                                    stdout=subprocess.PIPE)
            run = subprocess.Popen([self.gl_run, "--policy", self.opt.policy],
                                   stdin=plan.stdout, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
            plan.stdout.close()
            out, err = run.communicate()
            plan.wait()
        recs = [json.loads(line) for line in out.splitlines()]
        bad = [r for r in recs if not r.get("ok") or r.get("copies") != 1
               or not all(x.get("ok") for x in r.get("results", []))]
        if run.returncode != 0 or len(recs) != total or bad:
            sys.exit("bench: gl-run %s: exit %d, %d records, first bad: %.600s %s"
                     % (case[0], run.returncode, len(recs), bad[:1], err[-400:].decode()))
        ms = [r["elapsed_ms"] for r in recs]
        return ms[self.opt.warmup:], ms[0], recs[-1]["results"][0]["value"]

    def persistent(self, case):
        total = self.opt.warmup + self.opt.calls
        with open(self.write(case, total)) as f:
            r = subprocess.run([PY, "-B", self.persistent_py, "--release", self.opt.release,
                                "--timing"], stdin=f, capture_output=True, text=True)
        recs = [json.loads(line) for line in r.stdout.splitlines()]
        if r.returncode != 0 or len(recs) != total or not all(x["ok"] for x in recs):
            sys.exit("bench: persistent %s failed: %s" % (case[0], r.stderr[-400:]))
        return [x["elapsed_ms"] for x in recs][self.opt.warmup:], recs[-1]["value"]

    def fresh(self, case):
        script = os.path.join(self.opt.root, "bench/run/fresh_call.py")
        _, fn, args, its = case
        out, value = [], None
        for i in range(self.opt.fresh_warmup + self.opt.fresh_calls):
            line = self.envelope(fn, args, its, i)
            t0 = clock()
            r = subprocess.run([PY, "-I", "-B", script, self.opt.release], input=line,
                               capture_output=True, text=True)
            out.append((clock() - t0) * 1e3)
            if r.returncode != 0 or not json.loads(r.stdout)["ok"]:
                sys.exit("bench: fresh %s failed: %s" % (case[0], r.stderr[-400:]))
            value = json.loads(r.stdout)["value"]
        return out[self.opt.fresh_warmup:], value

    def interpreter(self):
        out = []
        for _ in range(self.opt.fresh_warmup + self.opt.fresh_calls):
            t0 = clock()
            subprocess.run([PY, "-I", "-B", "-c", "pass"], check=True)
            out.append((clock() - t0) * 1e3)
        return out[self.opt.fresh_warmup:]

    def memory(self):
        """PSS of the germline (idle, with a live copy), of the copy, of the
        persistent process; the germline's Threads (G1)."""
        mem = {}
        noop = self.envelope("noop", {}, [], 0)
        hold = self.envelope("hold", {"seconds": 2.5}, [], 1)
        r = subprocess.run([self.gl_plan, "--policy", self.opt.policy], input=noop + hold,
                           capture_output=True, text=True, check=True)
        noop_p, hold_p = r.stdout.splitlines(keepends=True)
        run = subprocess.Popen([self.gl_run, "--policy", self.opt.policy], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
        try:
            run.stdin.write(noop_p)
            run.stdin.flush()
            if not json.loads(run.stdout.readline()).get("ok"):
                sys.exit("bench: memory: the noop call failed")
            time.sleep(0.3)
            inits = [i for i in children(run.pid)
                     if any("germline_host.py" in cmdline(g) for g in children(i))]
            germ = [g for i in inits for g in children(i) if "germline_host.py" in cmdline(g)]
            if len(germ) != 1:
                sys.exit("bench: memory: no resident germline under gl-run")
            threads = status_field(germ[0], "Threads")
            mem["germline, idle"] = smaps(germ[0])
            run.stdin.write(hold_p)
            run.stdin.flush()
            copy = []
            for _ in range(200):
                time.sleep(0.02)
                copy = [p for p in children(inits[0]) if p != germ[0] and state(p) not in "ZX"]
                if copy:
                    break
            if not copy:
                sys.exit("bench: memory: no live copy under the germline")
            time.sleep(0.5)  # the copy has received its call and sleeps in it
            mem["germline, with a live copy"] = smaps(germ[0])
            mem["live copy (hold)"] = smaps(copy[0])
            if not json.loads(run.stdout.readline()).get("ok"):
                sys.exit("bench: memory: the hold call failed")
        finally:
            run.stdin.close()
            run.wait()
        per = subprocess.Popen([PY, "-B", self.persistent_py, "--release", self.opt.release],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        per.stdin.write(noop)
        per.stdin.flush()
        per.stdout.readline()
        mem["persistent process"] = smaps(per.pid)
        per.stdin.close()
        per.wait()
        return mem, threads


def status_field(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1


def norm(v):
    """A result with every number as a float (gl-run writes 4.0 as 4)."""
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return v


def same(a, b):
    """The germline's, the persistent process's and the fresh process's
    results must agree (the bench measures the same work three ways)."""
    return norm(a) == norm(b)


def report(opt, cs, res, interp, mem, threads, took):
    med = statistics.median
    print("Per-call latency, ms: P50 (median of %d passes) / P99 (largest of the passes); "
          "germline and persistent: %d calls a pass after %d warm-up calls; fresh: %d after %d."
          % (opt.passes, opt.calls, opt.warmup, opt.fresh_calls, opt.fresh_warmup))
    print()
    print("| function | germline (gl-run elapsed_ms) | persistent process | fresh process per call "
          "| fresh / germline (P50) | germline / persistent (P50) |")
    print("|---|---|---|---|---|---|")
    ratios = {}
    for c in cs:
        r = res[c[0]]
        g, p, f = med(r["g"]), med(r["p"]), med(r["f"])
        ratios[c[0]] = f / g
        print("| %s | %.1f / %.1f | %.3f / %.3f | %.1f / %.1f | %.1f× | %.0f× |"
              % (c[0], g, max(r["g99"]), p, max(r["p99"]), f, max(r["f99"]), f / g, g / p))
    print()
    fresh_noop = med(res["noop"]["f"])
    print("| reference | P50 ms |")
    print("|---|---|")
    print("| fresh interpreter importing nothing (`python3 -I -B -c pass`) | %.1f |" % med(interp))
    print("| what the release's import adds to a fresh process (fresh noop − the above) | %.1f |"
          % (fresh_noop - med(interp)))
    print("| germline launch (the first call of a session, elapsed_ms) | %.1f |"
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
    print("The germline's threads (/proc/PID/status Threads, G1 wants 1): %d" % threads)
    print("Single-copy germline vs a fresh process per call with the same imports (P50; "
          "the paper's footing, its 2–28×): %s; range %.1f–%.1f×"
          % (", ".join("%s %.1f×" % (k.split(" ")[0], v) for k, v in ratios.items()),
             min(ratios.values()), max(ratios.values())))
    print()
    print("(benchmark run time %.0f s; load average at the end %.1f %.1f %.1f on %d CPUs)"
          % ((took,) + os.getloadavg() + (os.cpu_count(),)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--release", required=True)
    ap.add_argument("--policy", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--fresh-warmup", type=int, default=2)
    ap.add_argument("--fresh-calls", type=int, default=20)
    ap.add_argument("--passes", type=int, default=3)
    opt = ap.parse_args()
    b, cs = Bench(opt), cases()
    t_start = clock()
    res = {c[0]: {k: [] for k in ("g", "g99", "launch", "p", "p99", "f", "f99")} for c in cs}
    interp = []
    for k in range(opt.passes):
        print("pass %d/%d ..." % (k + 1, opt.passes), file=sys.stderr, flush=True)
        for c in cs:
            r = res[c[0]]
            ms, first, gv = b.germline(c)
            r["g"].append(pct(ms, 50)), r["g99"].append(pct(ms, 99)), r["launch"].append(first)
            ms, pv = b.persistent(c)
            r["p"].append(pct(ms, 50)), r["p99"].append(pct(ms, 99))
            ms, fv = b.fresh(c)
            r["f"].append(pct(ms, 50)), r["f99"].append(pct(ms, 99))
            if not (same(gv, pv) and same(pv, fv)):
                sys.exit("bench: %s: germline, persistent and fresh results differ: %.300s / "
                         "%.300s / %.300s" % (c[0], gv, pv, fv))
        interp.append(pct(b.interpreter(), 50))
    mem, threads = b.memory()
    report(opt, cs, res, interp, mem, threads, clock() - t_start)


if __name__ == "__main__":
    main()
