"""copy_host: the copy side of the Python host (SPEC §10, docs/design/run.md).

Tool glue only; confinement is done in C (_germline) before any of this runs.

prepare(tw)    in the germline, before the release's entry module is imported
               (with tw, the broker's import twin: the import reads clocks
               and randomness from it) or after it (without: the import saw
               the originals), and before the first fork: installs shims for
               the clocks, randomness and http.client, also where the release
               took a name with `from time import time`. Outside the import
               twin and a copy's, every shim behaves as the original.
imported()     in the germline after the import: the import twin ends.
run(fd, mod)   in a copy: reads the call, sets the twin inputs (paper §IV-F,
               assumption A4) and the channel, calls the tool function, sends
               its result, exits. A call message with "session": true (the
               baselines confined, sigifc, sigpin of SPEC §6) starts session
               mode instead: no twin inputs (real clocks and randomness), one
               call.state kept in memory, and call after call served on the
               channel until the broker closes it (docs/design/run.md).

Nothing here is a security boundary: a tool that undoes a shim only spoils
its own determinism (evidence), never its confinement. What a tool sees is
documented in docs/python-host.md.
"""

import base64
import datetime
import errno
import hashlib
import http
import http.client
import io
import json
import os
import random
import selectors
import struct
import sys
import time
import uuid
# _thread, not threading: threading registers an after-fork hook that every
# copy runs in PyOS_AfterFork_Child (its _after_fork rebuilds the thread
# table), about 125 of a copy's 410 page faults when the release itself
# never imports threading (docs/performance.md "Kept workers"). A release
# that does import it gets its hook, as it would anywhere.
from _thread import allocate_lock
from collections.abc import MutableMapping

import copy_files
import copy_libs
import copy_relay
from copy_files import _open, _os_open
from copy_relay import HTTPConnection, HTTPSConnection

MSG_MAX = 64 << 20  # GL_MSG_MAX (lib/json/msg.h)
KEY_MAX = 256  # GL_MSG_KEY_MAX (lib/json/msg.h)
TICK_NS = 1_000_000  # each read of a monotonic clock advances it by 1 ms
ORIGIN_NS = 1_000 * 1_000_000_000  # the monotonic clocks start at 1000 s,
# plus an offset below 1 s derived from the seed (Twin.__init__)

try:  # CPython's own SHA-256: unlike hashlib's OpenSSL one, its first use in
    # a fresh copy touches no library state (about 0.1 ms less per copy)
    from _sha256 import sha256 as _sha256
except ImportError:  # Python 3.12 renamed the module
    _sha256 = hashlib.sha256

_twin = None  # the copy's Twin; None in the germline: shims act as originals
_prepared = False
MCP_ENTRY = None  # set by germline_host for a "protocol": "mcp-stdio" release
# An MCP server's start and handshake need no data, so a copy runs them
# before its call message arrives (a pooled copy while it waits: gl-run
# --pool), under twin inputs drawn once in the germline by prepare(): the
# same in every copy of the germline, so copies of one call still agree,
# and no more predictable than what the release's own import drew
# (docs/mcp.md "Before the call").
_precall_twin = None  # (time, seed hex)


# ---- the channel: 4-byte big-endian length + JSON -------------------------

class Channel:
    def __init__(self, fd):
        self.fd = fd
        self.lock = allocate_lock()  # one exchange at a time, even from threads

    def _read(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = os.read(self.fd, n - len(buf))
            if not chunk:
                raise EOFError("broker closed the channel")
            buf += chunk
        return bytes(buf)

    def recv(self):
        (n,) = struct.unpack(">I", self._read(4))
        if n > MSG_MAX:
            raise ValueError("message of %d bytes from the broker" % n)
        return json.loads(self._read(n))

    def send(self, msg):
        self.send_raw(json.dumps(msg, separators=(",", ":"), allow_nan=False))

    def send_raw(self, text):
        data = text.encode()
        data = struct.pack(">I", len(data)) + data
        while data:
            data = data[os.write(self.fd, data):]

    def ask(self, msg, want):
        with self.lock:
            self.send(msg)
            reply = self.recv()
        if isinstance(reply, dict) and reply.get("type") == "refused":
            # e.g. a state value deeper than the pipeline reads (SPEC §2):
            # refused, never stored; the tool may go on
            raise ValueError("germline: %s" % reply.get("detail"))
        if not isinstance(reply, dict) or reply.get("type") != want:
            raise RuntimeError("germline: expected %r from the broker, got %.80r" % (want, reply))
        return reply


# ---- twin inputs (A4): clocks and randomness from (time, seed) only -------

class Twin:
    """Everything a copy may observe as 'now' or 'random', derived from the
    broker's twin inputs, so that two copies of one call behave identically."""

    def __init__(self, t, seed_hex):
        self.time = float(t)
        self.seed = bytes.fromhex(seed_hex)
        # The performance counters are twin inputs too (paper §IV-F): their
        # origin comes from the seed, so copies of one call agree and copies
        # with different seeds (gl-run --no-twin) do not.
        offset = int.from_bytes(self.derive(b"counter", 4), "big") % 1_000_000_000
        self.ns = ORIGIN_NS + offset
        self.block = 0
        self.pool = b""

    def derive(self, what, n=32):
        return _sha256(self.seed + b"\0" + what).digest()[:n]

    def tick(self):
        self.ns += TICK_NS
        return self.ns

    def advance(self, seconds):
        if seconds and seconds > 0:
            self.ns += int(seconds * 1e9)

    def urandom(self, n):
        """A deterministic stream: SHA-256(seed || 0 || "urandom" || counter)."""
        n = int(n)
        if n < 0:
            raise ValueError("negative argument not allowed")
        while len(self.pool) < n:
            self.pool += self.derive(b"urandom" + self.block.to_bytes(8, "big"))
            self.block += 1
        out, self.pool = self.pool[:n], self.pool[n:]
        return out

    def install(self):
        """Seed what keeps its own state: random, uuid1, numpy."""
        random._inst.seed(int.from_bytes(self.derive(b"random"), "big"))
        uuid._node = int.from_bytes(self.derive(b"uuid-node", 6), "big") | (1 << 40)
        np = sys.modules.get("numpy")
        if np is not None and hasattr(np, "random"):
            np.random.seed(int.from_bytes(self.derive(b"numpy", 4), "big"))


# The originals, kept here (prepare() never rewrites this module).
_real_time, _real_time_ns, _real_sleep = time.time, time.time_ns, time.sleep
_real_localtime, _real_gmtime, _real_ctime = time.localtime, time.gmtime, time.ctime
_real_asctime, _real_strftime = time.asctime, time.strftime
_real_clock_gettime, _real_clock_gettime_ns = time.clock_gettime, time.clock_gettime_ns
_real_counters = {n: getattr(time, n) for n in (
    "monotonic", "perf_counter", "process_time", "thread_time",
    "monotonic_ns", "perf_counter_ns", "process_time_ns", "thread_time_ns")}
_real_datetime = datetime.datetime
_real_urandom = os.urandom
_real_times = os.times
_real_getrandom = getattr(os, "getrandom", None)
_real_seed = random.Random.seed
_real_module_seed = random.seed  # a method bound to the shared instance
_real_http, _real_https = http.client.HTTPConnection, getattr(http.client, "HTTPSConnection", None)
_real_open, _real_os_open = io.open, os.open
_real_stat, _real_lstat, _real_fstat = os.stat, os.lstat, os.fstat
_real_scandir = os.scandir


def _time():
    return _twin.time if _twin else _real_time()


def _time_ns():
    return int(round(_twin.time * 1e9)) if _twin else _real_time_ns()


def _sleep(seconds):
    _real_sleep(seconds)
    if _twin:
        _twin.advance(seconds)


def _now_or(secs):
    return (_twin.time if _twin else _real_time()) if secs is None else secs


def _localtime(secs=None):
    return _real_localtime(_now_or(secs))


def _gmtime(secs=None):
    return _real_gmtime(_now_or(secs))


def _ctime(secs=None):
    return _real_ctime(_now_or(secs))


def _asctime(t=None):
    return _real_asctime(_real_localtime(_now_or(None)) if t is None else t)


def _strftime(fmt, t=None):
    return _real_strftime(fmt, _real_localtime(_now_or(None)) if t is None else t)


def _counter_shim(name):
    real = _real_counters[name]
    if name.endswith("_ns"):
        return lambda: _twin.tick() if _twin else real()
    return lambda: _twin.tick() / 1e9 if _twin else real()


def _clock_gettime(clk):
    if not _twin:
        return _real_clock_gettime(clk)
    return _twin.time if clk == time.CLOCK_REALTIME else _twin.tick() / 1e9


def _clock_gettime_ns(clk):
    if not _twin:
        return _real_clock_gettime_ns(clk)
    return _time_ns() if clk == time.CLOCK_REALTIME else _twin.tick()


def _times():
    # os.times(): CPU times and "elapsed" (a real clock since boot) become
    # the deterministic counter, like process_time and monotonic.
    if not _twin:
        return _real_times()
    t = _twin.tick() / 1e9
    return os.times_result((t, 0.0, 0.0, 0.0, t))


def _urandom(n):
    return _twin.urandom(n) if _twin else _real_urandom(n)


def _getrandom(size, flags=0):
    return _twin.urandom(size) if _twin else _real_getrandom(size, flags)


def _seed(self, a=None, version=2):
    # Random() and random.seed() without an argument read the kernel's
    # entropy in C: in a copy, take it from the twin stream instead.
    if a is None and _twin:
        a = int.from_bytes(_twin.urandom(32), "big")
    _real_seed(self, a, version)


# ---- the minimal root's times (docs/witness.md "What a witness records") --
#
# The germline's root is an empty tmpfs made at launch (lib/sandbox/root.c): its
# inodes ("/", "/dev", "/tmp", the directories above each bind mount) carry
# the launch's real clock in their times, which no utimensat can undo for
# ctime. With an import twin, os.stat, os.lstat and os.fstat report the
# import twin's time for them instead, the same in gl-run and in gl-replay;
# every other file (the bind mounts: the interpreter, the release,
# /dev/null) is the host's, unchanged. os.scandir's entries answer stat()
# in C, without os.stat: they are wrapped too, since a copy lists its own
# scratch /tmp (a file it wrote there would otherwise show the real clock
# through DirEntry.stat(): the call's time in gl-run, the replay's in
# gl-replay, a distinguisher).

_root_dev = None  # st_dev of the minimal root, with an import twin only
_root_ns = 0
# Every tmpfs whose inodes are retimed: the root, the germline's import
# /tmp, and a copy's own scratch /tmp (mounted by the broker before the call
# arrives, lib/sandbox/scratch.h). A file the release writes there would otherwise
# carry the real clock in its times: in gl-run the call's time, in gl-replay
# the replay's, a distinguisher (issue 14 item 5); it reads the import
# twin's time instead, the same in both.
_retimed_devs = set()


def _retime_tmp():
    if _root_dev is not None:
        _retimed_devs.add(_real_stat("/tmp").st_dev)


def _retime(st):
    if _root_dev is None or st.st_dev not in _retimed_devs:
        return st
    sec, ns = _root_ns // 1_000_000_000, _root_ns
    seq = list(st[:st.n_sequence_fields])
    seq[7] = seq[8] = seq[9] = sec  # st_atime, st_mtime, st_ctime as integers
    extra = {n: getattr(st, n) for n in ("st_blksize", "st_blocks", "st_rdev") if hasattr(st, n)}
    extra.update(st_atime=ns / 1e9, st_mtime=ns / 1e9, st_ctime=ns / 1e9,
                 st_atime_ns=ns, st_mtime_ns=ns, st_ctime_ns=ns)
    return os.stat_result(seq, extra)


def _stat(path, *, dir_fd=None, follow_symlinks=True):
    return _retime(_real_stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks))


def _lstat(path, *, dir_fd=None):
    return _retime(_real_lstat(path, dir_fd=dir_fd))


def _fstat(fd):
    return _retime(_real_fstat(fd))


class _Entry:
    """An os.scandir entry whose stat() is os.stat's (retimed); the rest is
    the entry's own. os.fspath() takes it like a DirEntry."""

    __slots__ = ("_e",)

    def __init__(self, entry):
        self._e = entry

    name = property(lambda self: self._e.name)
    path = property(lambda self: self._e.path)

    def inode(self):
        return self._e.inode()

    def is_dir(self, *, follow_symlinks=True):
        return self._e.is_dir(follow_symlinks=follow_symlinks)

    def is_file(self, *, follow_symlinks=True):
        return self._e.is_file(follow_symlinks=follow_symlinks)

    def is_symlink(self):
        return self._e.is_symlink()

    def stat(self, *, follow_symlinks=True):
        return _retime(self._e.stat(follow_symlinks=follow_symlinks))

    def __fspath__(self):
        return self._e.__fspath__()

    def __repr__(self):
        return repr(self._e)


class _Scandir:
    """os.scandir's iterator, its entries wrapped (_Entry)."""

    __slots__ = ("_it",)

    def __init__(self, it):
        self._it = it

    def __iter__(self):
        return self

    def __next__(self):
        return _Entry(next(self._it))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._it.close()

    def close(self):
        self._it.close()


def _scandir(path="."):
    return _Scandir(_real_scandir(path))


class _DatetimeMeta(type):
    # isinstance() and issubclass() hold between real and replaced datetimes
    def __instancecheck__(cls, obj):
        return isinstance(obj, _real_datetime)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _real_datetime)


class _Datetime(_real_datetime, metaclass=_DatetimeMeta):
    # now() and utcnow() read the clock in C; date.today() and
    # datetime.today() call time.time(), which is already the shim.
    @classmethod
    def now(cls, tz=None):
        return cls.fromtimestamp(_twin.time, tz) if _twin else super().now(tz)

    @classmethod
    def utcnow(cls):
        return cls.utcfromtimestamp(_twin.time) if _twin else super().utcnow()


_Datetime.__name__ = _Datetime.__qualname__ = "datetime"
_Datetime.__module__ = "datetime"


def _counting_select(real):
    # A selector wait that times out (asyncio's loop) advances the counter by
    # its timeout, so asyncio.sleep(s) ends after about s seconds.
    def select(self, timeout=None):
        ready = real(self, timeout)
        if not ready and timeout and _twin:
            _twin.advance(timeout)
        return ready
    return select


def prepare(import_twin=None, minimal_root=False, scan=True):
    """Install the shims (in the germline, once, before the first fork).
    Rewrites every loaded module's globals that hold an original, including
    names the release imported with `from … import …`.

    import_twin (time, seed hex), from the broker: called before the
    release's import, and until imported() every shim answers from these
    values, so the import reads no real clock nor the kernel's randomness
    through them, and gl-replay, launching with the witness's values,
    rebuilds the same image (paper §IV-F, A2, A4; docs/witness.md "What a
    witness records"). Without it (a witness from before issue 14, the
    baselines' session) the import sees the originals. minimal_root: "/"
    is the germline's minimal root, whose times stat() reports as the
    import twin's; scan: os.scandir's entries too (False only in a test
    build's GL_TEST_SCAN_TWIN_OFF, the landed behaviour)."""
    global _prepared, _precall_twin, _twin, _root_dev, _root_ns
    if _prepared:
        return
    if import_twin is not None:
        _twin = Twin(*import_twin)
        _twin.install()
        if minimal_root:  # "/" is the tmpfs the launch made (lib/sandbox/root.c)
            _root_dev, _root_ns = _real_stat("/").st_dev, int(round(_twin.time * 1e9))
            _retimed_devs.add(_root_dev)
            _retime_tmp()  # the germline's import /tmp
        # MCP's start before the call: from the import twin too
        _precall_twin = (_twin.time, _twin.derive(b"precall").hex())
    else:
        _precall_twin = (_real_time(), _real_urandom(32).hex())
    random.Random.seed = _seed
    if minimal_root:  # no ldconfig, gcc or ld there: the library directory instead
        copy_libs.install()
    for name in ("SelectSelector", "PollSelector", "EpollSelector", "DevpollSelector",
                 "KqueueSelector"):
        cls = getattr(selectors, name, None)
        if cls is not None:
            cls.select = _counting_select(cls.select)
    # uuid1 would ask libuuid (native clock and MAC): use its Python path,
    # which reads time.time_ns and random, with a node set per copy.
    uuid._generate_time_safe = None
    repl = {
        _real_time: _time, _real_time_ns: _time_ns, _real_sleep: _sleep,
        _real_localtime: _localtime, _real_gmtime: _gmtime, _real_ctime: _ctime,
        _real_asctime: _asctime, _real_strftime: _strftime,
        _real_clock_gettime: _clock_gettime, _real_clock_gettime_ns: _clock_gettime_ns,
        _real_datetime: _Datetime, _real_urandom: _urandom, _real_times: _times,
        _real_module_seed: random._inst.seed, _real_http: HTTPConnection,
        _real_open: _open, _real_os_open: _os_open,
    }
    if _root_dev is not None:
        repl.update({_real_stat: _stat, _real_lstat: _lstat, _real_fstat: _fstat})
        if scan:
            repl[_real_scandir] = _scandir
    for name, real in _real_counters.items():
        repl[real] = _counter_shim(name)
    if _real_getrandom is not None:
        repl[_real_getrandom] = _getrandom
    if _real_https is not None:
        repl[_real_https] = HTTPSConnection
    else:  # an interpreter without ssl
        http.client.HTTPSConnection = HTTPSConnection
    global _repl
    _repl = repl
    _replace_everywhere(repl)
    _prepared = True


_repl = None


def imported():
    """After the release's import (germline): the shims also where modules
    the import loaded took an original, and no twin until a copy's call."""
    global _twin
    if _repl is not None:
        _replace_everywhere(_repl)
    _twin = None


def _replace_everywhere(repl):
    # An original is alive (a key of repl), so an equal id is the same object.
    ids = {id(k): v for k, v in repl.items()}
    # the host's own modules keep their originals (they call them)
    mine = [sys.modules.get(n) for n in (__name__, "copy_files", "copy_relay")]
    for mod in list(sys.modules.values()):
        d = getattr(mod, "__dict__", None)
        if any(mod is m for m in mine) or not isinstance(d, dict) or ids.keys().isdisjoint(map(id, d.values())):
            continue
        for k, v in list(d.items()):
            new = ids.get(id(v))
            if new is not None:
                d[k] = new


# ---- the call object -------------------------------------------------------

class Item:
    __slots__ = ("name", "label", "data")

    def __init__(self, name, label, data):
        self.name, self.label, self.data = name, label, data

    def __repr__(self):
        return "Item(%r, label=%r, %d bytes)" % (self.name, self.label, len(self.data))


class State(MutableMapping):
    """The copy's horizon slot. Reads are local; every write (and delete,
    sent as the value null) goes to the broker and waits for its ok. Values
    must be JSON; mutate a value in place and assign it again to keep it."""

    def __init__(self, chan, slot):
        self._chan = chan
        self._d = {k: e.get("value") for k, e in (slot or {}).items()
                   if e.get("value") is not None}

    def __getitem__(self, key):
        return self._d[key]

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError("state keys are strings, not %s" % type(key).__name__)
        if not key or len(key.encode()) > KEY_MAX:
            raise ValueError("state keys have 1 to %d bytes" % KEY_MAX)
        json.dumps(value, allow_nan=False)  # refuse what the broker cannot store
        self._chan.ask({"type": "state_put", "key": key, "value": value}, "ok")
        if value is None:
            self._d.pop(key, None)
        else:
            self._d[key] = value

    def __delitem__(self, key):
        if key not in self._d:
            raise KeyError(key)
        self[key] = None

    def __iter__(self):
        return iter(list(self._d))

    def __len__(self):
        return len(self._d)

    def __repr__(self):
        return "State(%r)" % (self._d,)


class Call:
    __slots__ = ("function", "args", "items", "state")

    def __init__(self, msg, chan, state=None):
        self.function = msg["function"]
        self.args = msg.get("args") or {}
        self.items = {}
        for it in msg.get("items") or []:
            self.items[it["name"]] = Item(it["name"], list(it.get("label") or []),
                                          base64.b64decode(it.get("data") or ""))
        self.state = state if state is not None else State(chan, msg.get("state"))


# ---- run: one call, then exit ---------------------------------------------

def _json_default(obj):
    # bytes in a result become base64 strings (docs/python-host.md)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(obj)).decode()
    raise TypeError("Object of type %s is not JSON serializable" % type(obj).__name__)


def _exception(e):
    return "exception: %s: %s" % (type(e).__name__, e)


def _precall(module):
    """An MCP server's own start and the MCP handshake, before the call
    message: under the twin inputs the germline drew (no channel yet, so no
    HTTP). Returns the exception it raised, or None."""
    global _twin
    if MCP_ENTRY is None:
        return None
    _twin = Twin(*_precall_twin)
    _twin.install()
    try:
        import mcp_host

        mcp_host.start(module, MCP_ENTRY).initialize()
    except BaseException as e:  # noqa: BLE001 — the call's result says it
        return e
    return None


def _await_end(chan):
    """After its result the copy waits for the broker to end it (SIGKILL, or
    EOF), so that the broker can still see which bound it met (RLIMIT_AS,
    RLIMIT_NPROC: lib/sandbox/cgroup.c gl_cg_reached) before its tree is gone."""
    try:
        chan.recv()
    except BaseException:
        pass


def run(fd, module):
    """Serve one call on fd (the copy's channel); never returns."""
    global _twin
    chan = Channel(fd)
    me = os.getpid()
    try:
        prepare()  # a no-op when the germline did it
        _retime_tmp()  # the copy's own /tmp, when already there
        early = _precall(module)
        msg = chan.recv()
        _retime_tmp()  # mounted before the call was sent: certainly there now
        if not isinstance(msg, dict) or msg.get("type") != "call":
            raise RuntimeError("first message is not a call")
        session = msg.get("session") is True
        state = None
        if session:  # a baseline's persistent process: its state is its memory
            _twin = None  # real clocks and randomness from here on
            random.seed()
            state = State(chan, None)
        else:
            _twin = Twin(msg["twin"]["time"], msg["twin"]["seed"])
            _twin.install()
        copy_relay.chan = chan  # its HTTP requests go to the broker from here on
        while True:
            copy_files.set_files(msg)
            call = Call(msg, chan, state)
            try:
                if early is not None:  # the server failed before its call
                    raise early
                if MCP_ENTRY is not None:  # an unmodified MCP server (mcp_host)
                    import mcp_host

                    value = mcp_host.call(module, MCP_ENTRY, call.function, call.args)
                else:
                    value = getattr(module, call.function)(call)
                if os.getpid() != me:  # a child the tool forked returned here
                    os._exit(0)
                out = '{"type":"result","value":%s}' % json.dumps(
                    value, separators=(",", ":"), default=_json_default, allow_nan=False)
            except BaseException as e:  # the tool's failure is its result
                if os.getpid() != me:
                    os._exit(0)
                text = str(e) if type(e).__name__ == "McpError" else _exception(e)
                out = json.dumps({"type": "result", "error": text})
            if MCP_ENTRY is not None:  # the server's log and progress of this call
                import mcp_host

                for field, kept in (("log", mcp_host.take_log()),
                                    ("progress", mcp_host.take_progress())):
                    if kept:
                        try:
                            out = out[:-1] + ',"%s":%s}' % (field, json.dumps(
                                kept, separators=(",", ":"), allow_nan=False))
                        except (TypeError, ValueError):
                            pass  # not JSON: the broker would refuse the message
            chan.send_raw(out)
            if not session:
                _await_end(chan)
                break
            try:
                msg = chan.recv()
            except EOFError:  # the broker ended the session
                break
            if not isinstance(msg, dict) or msg.get("type") != "call":
                raise RuntimeError("a session message is not a call")
    except BaseException as e:  # the host's own failure
        if os.getpid() == me:
            try:
                chan.send({"type": "result", "error": "host: %s: %s" % (type(e).__name__, e)})
            except BaseException:
                pass
        os._exit(1)
    os._exit(0)
