#!/usr/bin/python3
"""bench/mcp.sh's driver: per-call latency of a Python MCP server four ways,
in one run on one machine (issue 7 "Benchmark"; docs/mcp.md).

  germline       gl-run --serve-mcp (every tools/call planned, a copy forked
                 from the server's germline, the server's stdio loop
                 continued in it)
  germline+pool  the same with --pool: the copy was forked, checked and
                 had the server start and the MCP handshake run before the
                 call came (docs/gl-run.md "--pool")
  persistent     the same server as one unprotected process
  bwrap          a fresh `bwrap --unshare-all` launch of the server per
                 call: process start, import, initialize,
                 notifications/initialized, tools/call, exit

Each call is timed by the client from sending tools/call (for bwrap: from
the launch) to its answer; the ways run interleaved, call by call, so the
machine's noise falls on all of them alike, each call --gap-ms after the
previous one (an agent's time between calls; untimed). Prints P50/P99 per
way and the ratios.
"""
import argparse
import json
import os
import subprocess
import sys
import time

INIT = {"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}


class Conn:
    def __init__(self, cmd, env=None):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.n = 0

    def rpc(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method,
                                       "params": params}).encode() + b"\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("bench: %s closed its stdout" % self.p.args[0])
            m = json.loads(line)
            if m.get("id") == self.n:
                if "result" not in m:
                    raise SystemExit("bench: %s: %r" % (method, m))
                return m["result"]

    def start(self):
        self.rpc("initialize", INIT)
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.p.stdin.flush()
        return self

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def bwrap_cmd(server, release, data):
    return ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
            "--proc", "/proc", "--dev", "/dev", "--ro-bind", release, "/rel",
            "--ro-bind", data, data, "/usr/bin/python3", "-I", "/rel/" + server]


def timed(f):
    t0 = time.perf_counter()
    f()
    return (time.perf_counter() - t0) * 1000


def bwrap_call(cmd, call):
    c = Conn(cmd).start()
    c.rpc("tools/call", call)
    c.close()


def measure(germline_cmd, plain_cmd, bwrap, calls, warmup, nbwrap, gap):
    """The four ways interleaved call by call, so that the machine's noise
    falls on all of them alike. Every call starts `gap` seconds after the
    previous one of any way (an agent's time between tool calls, in which
    gl-run --pool forks the next copy); the gap is not timed."""
    g, gp, p = (Conn(germline_cmd).start(), Conn(germline_cmd + ["--pool"]).start(),
                Conn(plain_cmd).start())
    for call in calls[:warmup]:
        for c in (g, gp, p):
            c.rpc("tools/call", call)
    res = {"germline": [], "germline+pool": [], "persistent": [], "bwrap": []}
    every = max(1, len(calls) // max(1, nbwrap))
    for i, call in enumerate(calls):
        for name, c in (("germline", g), ("germline+pool", gp), ("persistent", p)):
            time.sleep(gap)
            res[name].append(timed(lambda: c.rpc("tools/call", call)))
        if i % every == 0 and len(res["bwrap"]) < nbwrap:
            time.sleep(gap)
            res["bwrap"].append(timed(lambda: bwrap_call(bwrap, call)))
    for c in (g, gp, p):
        c.close()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gl-run", required=True)
    ap.add_argument("--release", required=True)  # installed release dir
    ap.add_argument("--sha", required=True)
    ap.add_argument("--policy", required=True)
    ap.add_argument("--calls", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--bwrap-calls", type=int, default=100)
    ap.add_argument("--gap-ms", type=float, default=20)
    a = ap.parse_args()
    calls = [json.loads(l) for l in open(a.calls) if l.strip()]
    server = json.load(open(os.path.join(a.release, "manifest.json")))["entry"] + ".py"
    res = measure([a.gl_run, "--serve-mcp", "--release", a.sha, "--policy", a.policy],
                  ["/usr/bin/python3", os.path.join(a.release, server)],
                  bwrap_cmd(server, a.release, a.data), calls, a.warmup, a.bwrap_calls,
                  a.gap_ms / 1000)
    print("every call %.0f ms after the previous one (untimed)" % a.gap_ms)
    print("%-14s %6s %9s %9s" % ("way", "calls", "P50 ms", "P99 ms"))
    for k, v in res.items():
        print("%-14s %6d %9.2f %9.2f" % (k, len(v), pct(v, .5), pct(v, .99)))
    b50, b99 = pct(res["bwrap"], .5), pct(res["bwrap"], .99)
    p50 = pct(res["persistent"], .5)
    for way in ("germline", "germline+pool"):
        g50, g99 = pct(res[way], .5), pct(res[way], .99)
        print("bwrap launch / %s call: P50 %.1fx, P99 %.1fx (goal: at least 10x) %s"
              % (way, b50 / g50, b99 / g99, "MET" if b50 / g50 >= 10 else "NOT MET"))
        print("%s call / persistent unprotected call: P50 %.1fx" % (way, g50 / p50))


if __name__ == "__main__":
    main()
