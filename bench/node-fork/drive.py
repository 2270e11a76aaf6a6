"""drive.py ADDON ENTRY_DIR CALLS TOOL_JSON -- ARG… — bench/node-fork.sh's
client: CALLS calls of one MCP server (initialize, notifications/initialized,
tools/call TOOL_JSON, answered) two ways in one run, both unconfined:

  fresh  `node ENTRY ARG…` started per call, its stdio pipes
  fork   one warm process (germline.mjs with the addon fork.c) forked per
         call, the child given a fresh socket as its stdio
  warm   the same, the germline having answered a data-free initialize and
         tools/list first (its request path compiled before the forks)

Prints one JSON line: P50 and P90 per mode (ms, from the start or the fork
request to the call's answer), the fork mode's fork alone, and the ratio."""
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time

addon, entry, calls, tool = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
args = sys.argv[6:] if len(sys.argv) > 5 and sys.argv[5] == "--" else []
here = os.path.dirname(os.path.abspath(__file__))
msgs = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": tool},
]
payload = "".join(json.dumps(m) + "\n" for m in msgs).encode()


def answer(read):
    """The tools/call's answer (id 2), read line by line."""
    buf = b""
    while True:
        d = read(1 << 16)
        if not d:
            raise SystemExit("node-fork: the server closed before answering: %r" % buf[-300:])
        buf += d
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line.startswith(b"{"):
                m = json.loads(line)
                if m.get("id") == 2:
                    if "error" in m or m.get("result", {}).get("isError"):
                        raise SystemExit("node-fork: the call failed: %s" % line[:300])
                    return m


def fresh():
    out = []
    for _ in range(calls):
        t = time.perf_counter()
        p = subprocess.Popen(["node", entry] + args, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        p.stdin.write(payload)
        p.stdin.flush()
        answer(lambda n: os.read(p.stdout.fileno(), n))
        out.append((time.perf_counter() - t) * 1e3)
        p.kill()
        p.wait()
    return out, []


SETTLE_MS = 2000


def forked(warm):
    idle, idle_peer = socket.socketpair()
    ctl, ctl_peer = socket.socketpair()
    g = subprocess.Popen(
        ["node", "--v8-pool-size=0", os.path.join(here, "germline.mjs"), addon, entry] + args,
        stdin=idle_peer.fileno(), stdout=idle_peer.fileno(), stderr=subprocess.DEVNULL,
        pass_fds=[ctl_peer.fileno()],
        env=dict(os.environ, GL_BENCH_CTL=str(ctl_peer.fileno()), GL_BENCH_SETTLE_MS=str(SETTLE_MS)))
    ctl_peer.close()
    idle_peer.close()
    t0 = time.monotonic()
    if warm:
        # a data-free exchange first (initialize, tools/list), so that the
        # request path is compiled in the germline, not once per child
        idle.sendall(payload.replace(b'"method": "tools/call", "params": ' + json.dumps(tool).encode(),
                                     b'"method": "tools/list", "params": {}'))
        answer(idle.recv)
    # its import and start (and the exchange), before any call: germline.mjs
    # serves forks from SETTLE_MS on
    time.sleep(max(0.0, SETTLE_MS / 1e3 + 0.5 - (time.monotonic() - t0)))
    out, forks = [], []
    try:
        for _ in range(calls):
            t = time.perf_counter()
            a, b = socket.socketpair()
            socket.send_fds(ctl, [b"x"], [b.fileno()])
            b.close()
            pid = int.from_bytes(ctl.recv(4), sys.byteorder, signed=True)
            forks.append((time.perf_counter() - t) * 1e3)
            a.sendall(payload)
            answer(a.recv)
            out.append((time.perf_counter() - t) * 1e3)
            a.close()
            os.kill(pid, signal.SIGKILL)
    finally:
        g.kill()
        g.wait()
    return out, forks


def p(v, q):
    v = sorted(v)
    return round(v[min(len(v) - 1, int(len(v) * q))], 1)


f, _ = fresh()
k, forks = forked(False)
w, _ = forked(True)
print(json.dumps({
    "fresh_p50_ms": round(statistics.median(f), 1), "fresh_p90_ms": p(f, 0.9),
    "fork_p50_ms": round(statistics.median(k), 1), "fork_p90_ms": p(k, 0.9),
    "fork_alone_p50_ms": round(statistics.median(forks), 1),
    "warm_fork_p50_ms": round(statistics.median(w), 1), "warm_fork_p90_ms": p(w, 0.9),
    "fresh_over_fork": round(statistics.median(f) / statistics.median(k), 1),
    "fresh_over_warm_fork": round(statistics.median(f) / statistics.median(w), 1)}))
