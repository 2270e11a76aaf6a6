"""bench/timing-channel.sh's measurement (issue 19, "Timing is a channel we
measure"; docs/sandbox.md "Timing between concurrent copies").

  driver.py --root ROOT --release SHA --work DIR [--gl-run PATH] [--trials 3]
            [--bits 32] [--slot-ms 50] [--lead-s 1.0] [--listen-s 1.5]
            [--modes cpu,mem] [--configs LIST] [--verbose]

The release bench/releases/timing: `send` holds a secret item (label
{secret}, consumer `vault` cleared for it, no destination) and modulates
contention per slot with the item's bits; `receive`, a different call with
a public horizon, measures its own progress, decodes and POSTs the bits to
sink.example, a real HTTP sink on loopback (tests/fixtures/sink.py). Each
trial draws a fresh random secret; the bits read back from the sink's log
are compared with it: bit error rate p, and the capacity of a binary
symmetric channel C = bits/s x (1 - H2(p)) in bits per second, where
bits/s = 1000 / (2 x slot_ms) (a bit is two slots, Manchester coded).
"contrast" is (idle - busy) / idle of the receiver's progress over the
preamble slots it aligned on, averaged over trials: what it saw of the
modulation (its search picks the best-looking offset, so noise alone reads
above 0).

Configurations (each a real gl-run session, both calls real calls):
  seq         one gl-run, the two calls one after the other (--jobs 1 when
              gl-run has --jobs): copies never run at the same time
  procs2      two gl-run processes on one GL_HOME started together, one call
              each: copies of different calls at the same time on the same
              CPUs (what --jobs 2 "any" does, before --jobs exists)
  any, same-clearance, none
              one gl-run --jobs 2 with the policy's "concurrency" set so
              (only when gl-run --help lists --jobs)
Every figure printed comes from this one run.
"""
import argparse
import base64
import json
import math
import os
import subprocess
import sys
import time

PY = "/usr/bin/python3"


def h2(p):
    return 0.0 if p <= 0 or p >= 1 else -p * math.log2(p) - (1 - p) * math.log2(1 - p)


def bits_of(data):
    return [(b >> (7 - i)) & 1 for b in data for i in range(8)]


class Timing:
    def __init__(self, opt):
        self.opt = opt
        self.gl_run = opt.gl_run or os.path.join(opt.root, "bin", "gl-run")
        self.work = opt.work
        self.sink_log = os.path.join(self.work, "sink.log")
        self.has_jobs = "--jobs" in subprocess.run(
            [self.gl_run, "--help"], capture_output=True, text=True).stdout
        self.sink = None

    def start_sink(self):
        port_file = os.path.join(self.work, "sink.port")
        open(self.sink_log, "w").close()
        self.sink = subprocess.Popen(
            [PY, os.path.join(self.opt.root, "tests", "fixtures", "sink.py"),
             "--port-file", port_file, "--log", self.sink_log],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if os.path.exists(port_file) and os.path.getsize(port_file):
                break
            time.sleep(0.05)
        with open(port_file) as f:
            self.port = int(f.read().strip())

    def stop_sink(self):
        if self.sink:
            self.sink.terminate()
            self.sink.wait()

    def policy(self, concurrency):
        p = {"clearances": {"vault": ["secret"], "agent": [], "sink.example": []},
             "routes": {"sink.example": "127.0.0.1:%d" % self.port}}
        if concurrency:
            p["concurrency"] = concurrency
        path = os.path.join(self.work, "policy-%s.json" % (concurrency or "plain"))
        with open(path, "w") as f:
            json.dump(p, f)
        return path

    def envelopes(self, k, secret, mode):
        args = {"slot_ms": self.opt.slot_ms, "mode": mode, "lead_s": self.opt.lead_s}
        send = {"id": "send-%d" % k, "release": self.opt.release, "function": "send",
                "args": args, "consumers": ["vault"],
                "items": [{"name": "secret.bin", "label": ["secret"],
                           "data": base64.b64encode(secret).decode()}]}
        recv = {"id": "recv-%d" % k, "release": self.opt.release, "function": "receive",
                "args": dict(args, nbits=len(secret) * 8, listen_s=self.opt.listen_s),
                "consumers": ["agent"], "items": []}
        return json.dumps(send) + "\n", json.dumps(recv) + "\n"

    def gl_run_proc(self, policy, extra):
        return subprocess.Popen([self.gl_run, "--policy", policy, "--deadline", "60"] + extra,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def session(self, config, lines):
        """Run the two envelopes as `config` does; returns gl-run's records."""
        if config == "procs2":
            procs = [self.gl_run_proc(self.policy(None), []) for _ in lines]
            for p, line in zip(procs, lines):  # both started before either is read
                try:
                    p.stdin.write(line)
                    p.stdin.close()
                except BrokenPipeError:
                    pass  # it exited: its stderr says why
            outs = [(p.stdout.read(), p.stderr.read(), p.wait()) for p in procs]
            return [r for out, _, _ in outs for r in out.splitlines()], \
                "".join(e for _, e, _ in outs)
        if config == "seq":
            p = self.gl_run_proc(self.policy(None), ["--jobs", "1"] if self.has_jobs else [])
        else:
            p = self.gl_run_proc(self.policy(config), ["--jobs", "2"])
        out, err = p.communicate("".join(lines))
        return out.splitlines(), err

    def sink_bits(self, seen):
        with open(self.sink_log) as f:
            new = f.readlines()[seen:]
        if len(new) != 1:
            return None
        return json.loads(base64.b64decode(json.loads(new[0])["body"]))

    def trial(self, config, mode, k):
        secret = os.urandom(self.opt.bits // 8)
        with open(self.sink_log) as f:
            seen = len(f.readlines())
        t0 = time.monotonic()
        recs, err = self.session(config, self.envelopes(k, secret, mode))
        wall = time.monotonic() - t0
        got = self.sink_bits(seen)
        oks = [json.loads(r).get("ok") for r in recs if r.strip()]
        if got is None or len(oks) != 2 or not all(oks):
            sys.exit("bench: timing: %s/%s trial %d: records %s, sink %r; stderr %s"
                     % (config, mode, k, recs, got, err[-800:]))
        want = bits_of(secret)
        have = [int(c) for c in got["bits"]]
        if len(have) != len(want):
            sys.exit("bench: timing: %d bits decoded, %d sent" % (len(have), len(want)))
        errs = sum(a != b for a, b in zip(want, have))
        contrast = (got["idle"] - got["busy"]) / got["idle"] if got["idle"] else 0.0
        return {"bits": len(want), "errors": errs, "contrast": contrast, "wall": wall,
                "sent": "".join(map(str, want)), "decoded": got["bits"],
                "offset": got.get("offset_bins")}

    def configs(self):
        if self.opt.configs:
            return self.opt.configs.split(",")
        return ["seq", "any", "same-clearance", "none"] if self.has_jobs else ["seq", "procs2"]

    def run(self):
        rate = 500.0 / self.opt.slot_ms  # data bits/s: Manchester, two slots a bit
        print("timing channel: slot %d ms (%.0f data bits/s raw: Manchester), %d data bits"
              " + a 24-slot preamble a trial, %d trials; gl-run --jobs: %s"
              % (self.opt.slot_ms, rate, self.opt.bits, self.opt.trials,
                 "yes" if self.has_jobs else "no (procs2: two gl-run processes)"))
        print("%-5s %-15s %6s %6s %7s %9s %9s %7s  %s" % ("mode", "config", "bits", "errors",
                                                         "BER", "C (b/s)", "contrast", "wall s",
                                                         "errors per trial"))
        rows = []
        for mode in self.opt.modes.split(","):
            for config in self.configs():
                ts = [self.trial(config, mode, k) for k in range(self.opt.trials)]
                if self.opt.verbose:
                    for t in ts:
                        print("  sent %s\n  got  %s  (offset %s bins)"
                              % (t["sent"], t["decoded"], t["offset"]))
                n = sum(t["bits"] for t in ts)
                e = sum(t["errors"] for t in ts)
                p = e / n
                cap = rate * (1 - h2(p))
                row = {"mode": mode, "config": config, "bits": n, "errors": e, "ber": p,
                       "capacity_bps": cap,
                       "contrast": sum(t["contrast"] for t in ts) / len(ts),
                       "wall_s": sum(t["wall"] for t in ts) / len(ts)}
                rows.append(row)
                row["trial_errors"] = [t["errors"] for t in ts]
                print("%-5s %-15s %6d %6d %7.3f %9.2f %9.3f %7.1f  %s"
                      % (mode, config, n, e, p, cap, row["contrast"], row["wall_s"],
                         ",".join(map(str, row["trial_errors"]))), flush=True)
        # the sampling floor: with n bits of a useless channel (p = 0.5), the
        # measured p is off by about 1/(2 sqrt n), which alone gives C > 0
        for mode in self.opt.modes.split(","):
            n = next(r["bits"] for r in rows if r["mode"] == mode)
            floor = rate * (1 - h2(0.5 - 1 / (2 * math.sqrt(n))))
            print("%s: a channel carrying nothing reads C ~ %.2f b/s at %d bits (sampling)"
                  % (mode, floor, n))
        print("json: " + json.dumps(rows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--release", required=True, help="the timing release's sha256")
    ap.add_argument("--gl-run", default="", help="default: ROOT/bin/gl-run")
    ap.add_argument("--work", required=True)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--bits", type=int, default=32)
    ap.add_argument("--slot-ms", type=int, default=50)
    ap.add_argument("--lead-s", type=float, default=1.0)
    ap.add_argument("--listen-s", type=float, default=1.5)
    ap.add_argument("--modes", default="cpu,mem")
    ap.add_argument("--configs", default="")
    ap.add_argument("--verbose", action="store_true")
    opt = ap.parse_args()
    if opt.bits % 8 or not 8 <= opt.bits <= 512:
        sys.exit("bench: timing: --bits must be a multiple of 8, 8 to 512")
    t = Timing(opt)
    t.start_sink()
    try:
        t.run()
    finally:
        t.stop_sink()


if __name__ == "__main__":
    main()
