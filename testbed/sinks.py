#!/usr/bin/python3
"""HTTP sinks of the testbed: one real server on loopback per destination.

    sinks.py --world DIR --logs LOGDIR [--attacker HOST ...] [--pidfile FILE]
             [--hold HOST=SECONDS ...]

Starts one HTTP server on 127.0.0.1 (a free port each) for every destination
listed in DIR/world.json and for every --attacker host, all in this one
process. Every request a server receives is appended, flushed before the
reply, as one JSON line to LOGDIR/<host>.jsonl:

    {"sink": HOST, "seq": N, "method": M, "path": P, "host": <Host header>,
     "headers": [[name, value], ...], "body": "<base64 of the body bytes>"}

(`path` and header values are the bytes on the wire read as ISO-8859-1, as
http.server reads them; `body` is every byte of the body, Content-Length or
chunked.) Each server replies 200 {"ok": true, "sink": HOST, "received": N}.

Once every server listens it writes DIR/routes.json ({host: "127.0.0.1:PORT"}),
sets the "routes" of DIR/policy.json to the same map (both written atomically),
and then writes --pidfile: its existence means the sinks are ready. SIGTERM or
SIGINT stops every server, closes the logs, removes the pidfile and exits 0.

The request recorder (make_server) is also what tests/fixtures/sink.py runs:
one implementation of "record every byte". Standard library only.
"""

import argparse
import base64
import http.server
import json
import os
import signal
import socketserver
import sys
import threading
import time


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def _read_body(handler):
    """Every byte of the request body: Content-Length, or chunked."""
    te = (handler.headers.get("Transfer-Encoding") or "").lower()
    if "chunked" in te:
        out = bytearray()
        while True:
            line = handler.rfile.readline(65537)
            if not line:
                break
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while handler.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                break
            out += handler.rfile.read(size)
            handler.rfile.readline(65537)  # CRLF after the chunk
        return bytes(out)
    n = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(n) if n > 0 else b""


def make_server(log, reply, sink=None, lock=None, hold=0.0):
    """A loopback HTTP server on a free port that logs every request to the
    open text file `log` (one JSON line each, flushed before replying) and
    answers with reply(handler, record, body_bytes), which sends the
    response. `sink`, when given, is written into each record as "sink" with a
    per-server sequence number "seq". hold > 0 (sinks.py --hold): each reply
    waits that many seconds after the request is logged, and each record
    gets "open", the number of this server's requests unanswered when it
    was logged, itself included. Returns the (not yet serving) server."""
    lock = lock or threading.Lock()
    counter = [0]
    unanswered = [0]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # no Nagle: a reply's head and body go out at once (a client that delays
        # its ACK would otherwise wait 40 ms for the body)
        disable_nagle_algorithm = True

        def log_message(self, *a):
            pass

        def handle_any(self):
            body = _read_body(self)
            rec = {"method": self.command, "path": self.path,
                   "host": self.headers.get("Host"),
                   "headers": [[k, v] for k, v in self.headers.items()],
                   "body": base64.b64encode(body).decode()}
            with lock:
                if sink is not None:
                    counter[0] += 1
                    rec["sink"] = sink
                    rec["seq"] = counter[0]
                if hold > 0:
                    unanswered[0] += 1
                    rec["open"] = unanswered[0]
                log.write(json.dumps(rec, sort_keys=True) + "\n")
                log.flush()
            if hold <= 0:
                reply(self, rec, body)
                return
            try:
                time.sleep(hold)
                reply(self, rec, body)
            finally:
                with lock:
                    unanswered[0] -= 1

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any
        do_HEAD = do_OPTIONS = handle_any

    return _Server(("127.0.0.1", 0), Handler)


def send_json(handler, obj, status=200):
    out = json.dumps(obj, sort_keys=True).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(out)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(out)


def write_atomic(path, text):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--world", required=True, help="the world directory (world.json, policy.json)")
    ap.add_argument("--logs", required=True, help="directory for one HOST.jsonl log per sink")
    ap.add_argument("--attacker", action="append", default=[],
                    help="an attacker-owned host to start a sink for (repeatable)")
    ap.add_argument("--pidfile", help="written once every sink listens")
    ap.add_argument("--hold", action="append", default=[], metavar="HOST=SECONDS",
                    help="HOST answers each request SECONDS (0..10) after logging it "
                         "(testbed/matrix.py --pipeline: a call stays in flight)")
    args = ap.parse_args()
    holds = {}
    for h in args.hold:
        host, _, sec = h.partition("=")
        try:
            holds[host] = float(sec)
        except ValueError:
            holds[host] = -1.0
        if not 0 <= holds[host] <= 10:
            sys.exit("sinks.py: --hold %s: HOST=SECONDS, 0..10" % h)

    try:
        with open(os.path.join(args.world, "world.json"), encoding="utf-8") as f:
            world = json.load(f)
        hosts = list(world["destinations"])
    except (OSError, ValueError, KeyError) as e:
        sys.exit("sinks.py: %s/world.json: %s" % (args.world, e))
    for h in args.attacker:
        if h not in hosts:
            hosts.append(h)
    os.makedirs(args.logs, exist_ok=True)

    servers, logs, routes = [], [], {}
    for host in hosts:
        log = open(os.path.join(args.logs, host + ".jsonl"), "a", encoding="utf-8")

        def reply(handler, rec, body, host=host):
            send_json(handler, {"ok": True, "sink": host, "received": len(body)})

        srv = make_server(log, reply, sink=host, hold=holds.get(host, 0.0))
        servers.append(srv)
        logs.append(log)
        routes[host] = "127.0.0.1:%d" % srv.server_address[1]

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())

    threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.1},
                                daemon=True) for s in servers]
    for t in threads:
        t.start()

    write_atomic(os.path.join(args.world, "routes.json"),
                 json.dumps(routes, sort_keys=True, indent=1) + "\n")
    ppath = os.path.join(args.world, "policy.json")
    with open(ppath, encoding="utf-8") as f:
        policy = json.load(f)
    policy["routes"] = routes
    write_atomic(ppath, json.dumps(policy, indent=1) + "\n")
    if args.pidfile:
        write_atomic(args.pidfile, "%d\n" % os.getpid())

    while not stop.wait(0.2):
        pass
    for s in servers:
        s.shutdown()
        s.server_close()
    for log in logs:
        log.close()
    if args.pidfile:
        try:
            os.unlink(args.pidfile)
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
