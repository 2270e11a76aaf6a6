"""bench/lone/driver.py — one call in flight at a time, gl-run --jobs 1
against --jobs 2 (issue 19: what a call's worker process costs).

  driver.py --root ROOT --policy P --release SHA [--calls N] [--rounds R]

For each round and each --jobs value, in turn: a gl-run session is sent N
planned noop envelopes, the next written when the last record is read
(the client's wall time per call, the first tenth dropped), then a second
session is sent N envelopes at once (the CPU of gl-run and every process
it waited for: germline, copies, workers). Prints P50 latency and CPU per
call, and the --jobs 2 / --jobs 1 ratios (docs/performance.md "One call
alone: what a worker costs")."""
import argparse, json, os, resource, statistics, subprocess, time

ap = argparse.ArgumentParser()
ap.add_argument("--root", required=True)
ap.add_argument("--policy", required=True)
ap.add_argument("--release", required=True)
ap.add_argument("--calls", type=int, default=300)
ap.add_argument("--rounds", type=int, default=3)
opt = ap.parse_args()
gl_plan = os.path.join(opt.root, "bin", "gl-plan")
gl_run = os.path.join(opt.root, "bin", "gl-run")
env = {"id": "x", "release": opt.release, "function": "noop", "args": {}, "items": [],
       "consumers": ["agent"]}
r = subprocess.run([gl_plan, "--policy", opt.policy], input=json.dumps(env) + "\n",
                   capture_output=True, text=True, check=True)
plan = r.stdout
if not plan.endswith("\n") or plan.count("\n") != 1:
    raise SystemExit("bench: gl-plan gave %r" % plan[:200])


def lone(jobs):
    p = subprocess.Popen([gl_run, "--policy", opt.policy, "--jobs", str(jobs)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    ms = []
    for _ in range(opt.calls):
        t0 = time.perf_counter()
        p.stdin.write(plan)
        p.stdin.flush()
        rec = json.loads(p.stdout.readline())
        ms.append((time.perf_counter() - t0) * 1e3)
        if not rec.get("ok"):
            raise SystemExit("bench: a call failed: %.300s" % rec)
    p.stdin.close()
    if p.wait() != 0:
        raise SystemExit("bench: gl-run --jobs %d exited %d" % (jobs, p.returncode))
    return statistics.median(ms[opt.calls // 10:])


def cpu(jobs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([gl_run, "--policy", opt.policy, "--jobs", str(jobs)],
                       input=plan * opt.calls, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    recs = [json.loads(l) for l in r.stdout.splitlines()]
    if r.returncode != 0 or len(recs) != opt.calls or not all(x.get("ok") for x in recs):
        raise SystemExit("bench: gl-run --jobs %d: exit %d, %d records" % (jobs, r.returncode, len(recs)))
    s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return s * 1e3 / opt.calls


lat = {1: [], 2: []}
use = {1: [], 2: []}
for _ in range(opt.rounds):
    for j in (1, 2):
        lat[j].append(lone(j))
        use[j].append(cpu(j))
print("| gl-run | latency P50 per round (ms) | CPU per call per round (ms) |")
print("|---|---|---|")
for j in (1, 2):
    print("| --jobs %d | %s | %s |" % (j, ", ".join("%.2f" % x for x in lat[j]),
                                       ", ".join("%.2f" % x for x in use[j])))
ml = {j: statistics.mean(lat[j]) for j in lat}
mc = {j: statistics.mean(use[j]) for j in use}
print("one call alone, --jobs 2 / --jobs 1: latency %.2fx (+%.2f ms), CPU %.2fx (+%.2f ms)"
      % (ml[2] / ml[1], ml[2] - ml[1], mc[2] / mc[1], mc[2] - mc[1]))
