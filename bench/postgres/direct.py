#!/usr/bin/env python3
"""bench/postgres/direct.py URL N [--fresh] ENTRY... — server-postgres run
unprotected: one process answering N query calls over MCP stdio (or, with
--fresh, a new process per call, initialize included), the same query as
bench/postgres.sh's germline calls. Prints the mean milliseconds per call."""
import json
import subprocess
import sys
import time

QUERY = {"name": "query", "arguments": {"sql": "SELECT name FROM staff WHERE team = 'eng' ORDER BY name"}}


def start(entry, url):
    return subprocess.Popen(entry + [url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)


def rpc(p, i, method, params):
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
                   + "\n").encode())
    p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i:
            if "error" in m or m["result"].get("isError"):
                sys.exit("direct.py: the call failed: %r" % m)
            return m["result"]


def init(p):
    rpc(p, 0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "bench", "version": "1"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    p.stdin.flush()


def main():
    args = sys.argv[1:]
    fresh = "--fresh" in args
    args = [a for a in args if a != "--fresh"]
    url, n, entry = args[0], int(args[1]), args[2:]
    if fresh:
        t0 = time.perf_counter()
        for i in range(n):
            p = start(entry, url)
            init(p)
            rpc(p, 1, "tools/call", QUERY)
            p.kill()
            p.wait()
        t1 = time.perf_counter()
    else:
        p = start(entry, url)
        init(p)
        rpc(p, 1, "tools/call", QUERY)  # warm-up: the pool's first connection
        t0 = time.perf_counter()
        for i in range(n):
            rpc(p, 2 + i, "tools/call", QUERY)
        t1 = time.perf_counter()
        p.kill()
        p.wait()
    print("%.3f" % ((t1 - t0) * 1000 / n))


main()
