"""mcp_host: the MCP half of the Python host (SPEC §11; paper §VI "For an MCP
server, each copy instead continues the server's own stdio loop on a fresh
socket, over which the host speaks MCP JSON-RPC"; docs/mcp.md).

A release with "protocol": "mcp-stdio" is an unmodified MCP server whose
`entry` module the germline imports once (its initialisation, before any
data: assumption A2). In a copy, start() binds a fresh socketpair to the
server's standard streams (file descriptors 0 and 1, and new sys.stdin /
sys.stdout over them) and starts the server's own stdio loop in a thread:
`entry.main()` when the module defines a callable `main`, otherwise the
module run as `__main__` (runpy; its initialisation then runs again in the
copy). The host, in the copy's main thread, is the MCP client on the other
end: initialize, notifications/initialized, then tools/call (or tools/list
for the broker's discovery check) per call; HTTP the server makes still
goes through copy_host's relay as `effect` messages.

Nothing here is trusted by the broker: it runs in the same process as the
server's code.
"""

import _thread
import io
import json
import os
import runpy
import socket
import sys

PROTOCOL_VERSION = "2025-06-18"
LINE_MAX = 64 << 20  # a server line: at most what one copy message may carry (GL_MSG_MAX)
LIST_PAGES_MAX = 64  # tools/list pages followed
DISCOVERY = "tools/list"  # the broker's reserved function: not a tool name
# the MCP methods a manifest may declare as functions (lib/release/manifest.h)
METHODS = ("resources/read", "prompts/get", "completion/complete")
# the lists the discovery call may ask for: (its name, the method, the key)
LISTS = (("resources", "resources/list", "resources"),
         ("resources", "resources/templates/list", "resourceTemplates"),
         ("prompts", "prompts/list", "prompts"))


# The server's notifications/message of the running call (docs/mcp.md "Log
# messages"), bounded as the broker bounds them (lib/json/msg.h
# GL_MSG_LOG_MAX, GL_MSG_LOG_ENTRY_MAX): the result message's "log".
LOG_MAX, LOG_ENTRY_MAX = 64, 8192
_log, _log_dropped = [], 0


def _keep_log(params):
    global _log_dropped
    try:
        size = len(json.dumps(params, separators=(",", ":"), allow_nan=False))
    except (TypeError, ValueError):
        size = LOG_ENTRY_MAX + 1
    if not isinstance(params, dict) or size > LOG_ENTRY_MAX or len(_log) >= LOG_MAX - 1:
        _log_dropped += 1
    else:
        _log.append(params)


def take_log():
    """The call's log messages (and a note of those dropped); cleared."""
    global _log, _log_dropped
    out = _log
    if _log_dropped:
        out.append({"level": "warning", "logger": "germline",
                    "data": "%d log messages of the server not passed on (more than %d, "
                            "or larger than %d bytes)" % (_log_dropped, LOG_MAX - 1,
                                                          LOG_ENTRY_MAX)})
    _log, _log_dropped = [], 0
    return out


# The token the host gives the server in every tools/call, so that a server
# that reports progress does (docs/mcp.md "Cancellation and progress"): its
# notifications for it, the last PROGRESS_MAX as lib/json/msg.h bounds them,
# are the result message's "progress"; gl-run passes them on under the
# client's own token, to a client that asked.
PROGRESS_TOKEN, PROGRESS_MAX, PROGRESS_TEXT_MAX = "germline", 64, 1024
_progress = []


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v \
        and v not in (float("inf"), float("-inf"))


def _keep_progress(params):
    if not isinstance(params, dict) or params.get("progressToken") != PROGRESS_TOKEN \
            or not _number(params.get("progress")):
        return
    k = {"progress": params["progress"]}
    if _number(params.get("total")):
        k["total"] = params["total"]
    m = params.get("message")
    if isinstance(m, str) and "\0" not in m and len(m.encode("utf-8", "replace")) <= PROGRESS_TEXT_MAX:
        k["message"] = m
    _progress.append(k)
    del _progress[:-PROGRESS_MAX]


def take_progress():
    """The call's progress notifications; cleared."""
    global _progress
    out, _progress = _progress, []
    return out


class McpError(Exception):
    """A JSON-RPC error the server answered, or a broken stream."""


class Client:
    """The MCP client speaking to the server thread over its socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()
        self.next_id = 0
        self.ready = False

    def _send(self, msg):
        data = json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        self.sock.sendall(data)

    def _line(self):
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line = bytes(self.buf[:nl])
                del self.buf[:nl + 1]
                return line
            if len(self.buf) > LINE_MAX:
                raise McpError("the server sent a line above %d bytes" % LINE_MAX)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise McpError("the server closed its stdout")
            self.buf += chunk

    def _answer_server_request(self, msg):
        # The server asks the client something (MCP lets it): ping and
        # roots/list have answers that reveal nothing; others are refused.
        method = msg.get("method")
        if method == "ping":
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
        elif method == "roots/list":
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": {"roots": []}})
        else:
            self._send({"jsonrpc": "2.0", "id": msg["id"],
                        "error": {"code": -32601, "message": "Method not found"}})

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self._line().strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                raise McpError("the server wrote a line that is not JSON: %.80r" % line)
            if not isinstance(msg, dict):
                raise McpError("the server wrote a message that is not an object")
            if "method" in msg:  # a notification or a request from the server
                if "id" in msg:
                    self._answer_server_request(msg)
                elif msg.get("method") == "notifications/message":
                    _keep_log(msg.get("params"))
                elif msg.get("method") == "notifications/progress":
                    _keep_progress(msg.get("params"))
                continue
            if msg.get("id") != rid:
                continue  # a stale response: not ours
            if "error" in msg:
                err = msg["error"] if isinstance(msg["error"], dict) else {}
                raise McpError("mcp error %s: %s" % (err.get("code"), err.get("message")))
            if "result" not in msg:
                raise McpError("a response without result or error")
            return msg["result"]

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def initialize(self):
        if self.ready:
            return
        res = self.request("initialize", {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "germline", "version": "1"},
        })
        if not isinstance(res, dict):
            raise McpError("initialize: the result is not an object")
        # what the server says of itself, for the discovery check's answer
        # (the broker types and bounds it: lib/broker/mcp.c)
        self.server = {k: res[k] for k in ("serverInfo", "instructions") if k in res}
        self.notify("notifications/initialized")
        self.ready = True

    def tools(self):
        """Every tool the server lists, following pagination."""
        tools, cursor = [], None
        for _ in range(LIST_PAGES_MAX):
            res = self.request("tools/list", {"cursor": cursor} if cursor else {})
            if not isinstance(res, dict) or not isinstance(res.get("tools"), list):
                raise McpError("tools/list: no tools array")
            tools += res["tools"]
            cursor = res.get("nextCursor")
            if not cursor:
                return tools
        raise McpError("tools/list: more than %d pages" % LIST_PAGES_MAX)

    def listed(self, method, key):
        """Every page of a resources or prompts list; what it gave before an
        error answer (the broker types and bounds it: lib/broker/mcp_lists.c)."""
        out, cursor = [], None
        for _ in range(LIST_PAGES_MAX):
            try:
                res = self.request(method, {"cursor": cursor} if cursor else {})
            except McpError:
                return out
            if not isinstance(res, dict) or not isinstance(res.get(key), list):
                return out
            out += res[key]
            cursor = res.get("nextCursor")
            if not cursor:
                return out
        return out


_client = None


def _serve(module, entry):
    try:
        main = getattr(module, "main", None)
        if callable(main):
            main()
        else:
            runpy.run_module(entry, run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
    finally:
        try:  # the server's end of the stream: EOF for the client
            sys.stdout.flush()
        except Exception:  # noqa: BLE001
            pass
        try:
            os.close(1)
            os.close(0)
        except OSError:
            pass


_streams = None  # (stdin, stdout) wrappers over fds 0 and 1, made in the germline


def prepare():
    """In the germline, once: the server's future sys.stdin / sys.stdout,
    text wrappers over file descriptors 0 and 1 (still /dev/null there:
    nothing is read or written before a copy rebinds them), so that no
    copy pays for building them."""
    global _streams
    if _streams is None:
        _streams = (
            io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "rb", closefd=False)),
                             encoding="utf-8"),
            io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "wb", closefd=False)),
                             encoding="utf-8", line_buffering=True))


def start(module, entry):
    """In a copy (or a session process): start the server's stdio loop on a
    fresh socket and return the client; once per process."""
    global _client
    if _client is not None:
        return _client
    prepare()  # a no-op when the germline did it
    host_end, server_end = socket.socketpair()
    os.dup2(server_end.fileno(), 0)
    os.dup2(server_end.fileno(), 1)
    server_end.close()
    sys.stdin, sys.stdout = _streams
    sys.__stdin__, sys.__stdout__ = _streams
    # A bare thread: threading.Thread.start would wait for the new thread to
    # report in (one more context switch per copy); threading still sees it
    # (as a dummy thread) if the server asks.
    _thread.start_new_thread(_serve, (module, entry))
    _client = Client(host_end)
    return _client


def call(module, entry, function, args):
    """One call: the tool's CallToolResult (a dict), a resources/read or
    prompts/get or completion/complete result, or for the reserved function "tools/list" (the
    broker's discovery check) {"tools": [...], "server": ...} and the lists
    args["lists"] asks for.
    Raises McpError on a JSON-RPC error."""
    client = start(module, entry)
    client.initialize()
    if function == DISCOVERY:
        out = {"tools": client.tools(), "server": getattr(client, "server", {})}
        lists = args.get("lists") if isinstance(args, dict) else None
        for want, method, key in LISTS:
            if isinstance(lists, list) and want in lists:
                out[key] = client.listed(method, key)
        return out
    take_log()  # what the server logged before this call (at its start) is not the call's
    take_progress()
    if function in METHODS:  # a resource read or a prompt: its params are the args
        return client.request(function, args)
    return client.request("tools/call", {"name": function, "arguments": args,
                                         "_meta": {"progressToken": PROGRESS_TOKEN}})
