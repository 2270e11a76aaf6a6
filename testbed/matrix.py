#!/usr/bin/python3
"""The scripted security matrix (issue 6; paper §VII-A, §VII-C, Fig. 3,
Table XI, §VII-E): every attack release and every benign release, under
every runtime, in N trials, judged by the disclosure oracle.

    matrix.py [--trials N] [--seed S] [--cases LIST] [--runtimes LIST]
              [--jobs J] [--out FILE.json] [--keep DIR] [--sessions DIRS]
              [--bin DIR] [--no-existence-bit] [--pipeline] [--verbose]

Cases: each update release <server>-<variant> (testbed/variants.py: the
modules of testbed/releases/ and the generated variants) is a case of
its server's session testbed/sessions/<server>.json, except the xtool
releases, which form one case driven by sessions/xtool.json; each server's
1.0.0 is a benign case. Runtimes: gl-run --mode sigpin, sigifc, confined,
fresh, nosplit, germline. Each trial has a fresh world (world.py, its seed
derived from S), a fresh publisher key pair and the releases signed with
it; each run a fresh GL_HOME (a copy of the trial's template), one
gl-plan | gl-run pipeline for the whole session (agent.py), its slice of
the sink logs, and oracle.py's verdict. Germline's triggers go to gl-replay.
--pipeline: each session's steps are sent without waiting for earlier
records, through gl-run --jobs 2 --unordered, with the OCR sink holding
each reply PIPELINE_HOLD s (docs/security-matrix.md "Pipelined runs").
Prints the table, writes the JSON (default build/matrix/matrix.json).
docs/security-matrix.md explains what is counted. Standard library only.
"""

import argparse
import base64
import json
import math
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent  # noqa: E402
import oracle  # noqa: E402
import variants  # noqa: E402
from harness import (ROOT, TESTBED, Procs, Sinks, Stopped, Trial,  # noqa: E402
                     copy_home, derive, rmtree, set_subreaper)

RUNTIMES = ["sigpin", "sigifc", "confined", "fresh", "nosplit", "germline"]
ATTACKERS = ["evil.example"]
BIT_RELEASE = "rt-bit"
BIT_CALLS = 64
# --pipeline: the OCR sink answers each request this many seconds after it
# came, so that a call posting to it stays in flight while others run
PIPELINE_HOLD = 0.5
# What germline's triggers must replay to (issue 6 "Must show"; paper §VII-E).
EXPECTED_REPLAY = {"pool": "item_witness", "launder": "item_witness",
                   "evasive": "item_witness", "capsule": "state_divergence"}


class Case:
    def __init__(self, name, kind, variant, session, releases):
        self.name, self.kind, self.variant = name, kind, variant
        self.session = session          # sessions/<session>.json
        self.releases = releases        # server -> release directory name
        self.steps = None

    def servers(self):
        return {self.name.split("-", 1)[0]} if self.kind == "benign" else set(self.releases)


def discover(release_names, session_dirs):
    """Every case, and the list of release directories to sign."""
    names = sorted(release_names)
    servers = sorted(n[:-len("-1.0.0")] for n in names if n.endswith("-1.0.0"))
    cases, xtool = [], {}
    for n in names:
        server, variant = n.split("-", 1)
        if variant == "1.0.0":
            cases.append(Case(n, "benign", "benign", server, {}))
        elif variant.startswith("xtool"):
            xtool[server] = n
        else:
            cases.append(Case(n, "attack", variant, server, {server: n}))
    if xtool:
        cases.append(Case("xtool", "attack", "xtool", "xtool", xtool))
        # the same session with every server's 1.0.0: xtool's reference for
        # attribution (not a benign case: its steps are not counted)
        cases.append(Case("xtool-1.0.0", "reference", "xtool-1.0.0", "xtool", {}))
    skipped = []
    for c in cases:
        # an attack case may have a session of its own, sessions/<case>.json
        # (docs-atfork, docs-denied); else its server's
        names = [c.name, c.session] if c.kind == "attack" else [c.session]
        for d, n in [(d, n) for n in names for d in session_dirs]:
            p = os.path.join(d, n + ".json")
            if os.path.exists(p):
                with open(p, encoding="utf-8") as f:
                    c.steps = json.load(f)["steps"]
                c.session_file = os.path.relpath(p, ROOT)
                c.session = n
                break
        if c.steps is None:
            skipped.append(c.name)
    return [c for c in cases if c.steps is not None], servers, names, skipped


def select(cases, spec):
    """--cases: case names (docs-pool), variants (pool) or kinds (benign)."""
    if not spec:
        return cases
    want = set(spec.split(","))
    out = [c for c in cases if c.name in want or c.variant in want or c.kind in want]
    if any(c.name == "xtool" for c in out) and not any(c.name == "xtool-1.0.0" for c in out):
        out += [c for c in cases if c.name == "xtool-1.0.0"]
    unknown = want - {x for c in cases for x in (c.name, c.variant, c.kind)}
    if unknown:
        sys.exit("matrix.py: --cases: no case %s" % ",".join(sorted(unknown)))
    return out


class Matrix:
    def __init__(self, args, procs, work, cases, servers, release_names):
        self.args, self.procs, self.work = args, procs, work
        self.cases, self.servers = cases, servers
        self.release_names = release_names
        self.bins = os.path.abspath(args.bin)
        self.trials = []
        self.results = []
        self.bits = []
        self.lock = threading.Lock()

    # ---- one run ---------------------------------------------------------
    def shas(self, trial, case):
        out = {s: trial.sha["%s-1.0.0" % s] for s in self.servers}
        for s, n in case.releases.items():
            out[s] = trial.sha[n]
        out["bit"] = trial.sha.get(BIT_RELEASE)
        return out

    def run_case(self, sinks, trial, case, runtime):
        t0 = time.monotonic()
        rundir = os.path.join(self.work, "runs", "t%d-%s-%s" % (trial.index, case.name, runtime))
        os.makedirs(rundir)
        home = os.path.join(rundir, "glhome")
        copy_home(trial.home_template, home)
        policy = trial.policy_for(sinks)
        mark = sinks.mark()
        out = {"case": case.name, "kind": case.kind, "variant": case.variant,
               "runtime": runtime, "trial": trial.index}
        stats = {}
        try:
            records, steps, sends = agent.run_session(
                self.procs, self.bins, runtime, policy, home, sinks.routes,
                trial.policy["clearances"], case.steps, trial, self.shas(trial, case), rundir,
                pipeline=self.args.pipeline, stats=stats)
        except (RuntimeError, OSError, ValueError) as e:
            if self.procs.stopping:
                raise Stopped()
            out.update(error=str(e), discloses=False, disclosures=[], steps=[], triggers=[],
                       survivors=self.survivors(rundir))
            return out
        # a process of the release still running once gl-run has ended
        # (docs-helper): recorded, then killed (docs/security-matrix.md)
        out["survivors"] = self.survivors(rundir)
        if self.args.keep:
            with open(os.path.join(rundir, "records.jsonl"), "w", encoding="utf-8") as f:
                for r in records:
                    f.write(json.dumps(r) + "\n")
        logs = os.path.join(rundir, "logs")
        recs = sinks.slice(mark, logs)
        sends_file = os.path.join(rundir, "agent-sends.jsonl")
        with open(sends_file, "w", encoding="utf-8") as f:
            for s in sends:
                f.write(json.dumps(s) + "\n")
        # the oracle (the same code as oracle.py --world --logs
        # --agent-forwarded, in-process): outside the runtime under test
        verdict = oracle.judge(trial.world_json, trial.policy, recs, sends)
        ds = [{k: d[k] for k in ("sink", "item", "label", "encoding", "source", "where")}
              for d in verdict["disclosures"]]
        triggers = []
        for r in records:
            for tr in r.get("triggers") or []:
                triggers.append({"step": r.get("id"), "destination": tr.get("destination"),
                                 "kind": tr.get("kind"), "position": tr.get("position")})
        if self.args.pipeline:
            # the evidence that calls were in flight at once: copies of two
            # calls of one germline alive together (agent.Overlap), records
            # out of input order (--unordered), two requests open at a sink
            sent = [s["id"] for s in case.steps if s["id"] in stats.get("order", [])]
            out["pipeline"] = dict(stats.get("overlap") or {}, order=stats.get("order"),
                                   reordered=stats.get("order") != sent,
                                   sink_open_max=max([r.get("open", 0) for _, r in recs] or [0]))
        out.update(discloses=bool(ds), disclosures=ds,
                   tool=sum(d["source"] == "tool" for d in ds),
                   agent=sum(d["source"] == "agent" for d in ds),
                   requests=len(recs), steps=steps, triggers=triggers,
                   forwards={"sent": sum(1 for s in steps if s.get("forwarded") is True),
                             "blocked": sum(1 for s in steps if s.get("forwarded") is False)})
        if triggers:
            out["replay"] = self.replay(home, records)
            # a trigger that got no verdict (docs-bigresult: a record past
            # gl-replay's line limit is skipped, not refused)
            out["unverified_triggers"] = max(0, len(triggers) - sum(
                1 for v in out["replay"] if v.get("outcome")))
        out["elapsed_s"] = round(time.monotonic() - t0, 2)
        if not self.args.keep:
            rmtree(rundir)
        return out

    def survivors(self, rundir):
        return [{"comm": o.get("comm"), "cwd": os.path.relpath(o["cwd"], rundir)
                 if o.get("cwd") else None} for o in self.procs.sweep(rundir)]

    def replay(self, home, records):
        """gl-replay on the run's result records, with the run's GL_HOME
        (its witnesses and installed releases; item contents are in the
        witnesses: gl-run --witness-items)."""
        data = "".join(json.dumps(r) + "\n" for r in records if r.get("triggers")).encode()
        env = dict(os.environ, GL_HOME=home)
        _, o, e = self.procs.run([os.path.join(self.bins, "gl-replay")], input=data,
                                 env=env, check=False, timeout=600)
        out = []
        for line in o.decode().splitlines():
            v = json.loads(line)
            if "results" in v:
                continue  # a result record passed through
            if v.get("ok") is False:
                out.append({"call": v.get("call"), "error": v.get("error"),
                            "detail": v.get("detail")})
            else:
                out.append({k: v.get(k) for k in ("call", "destination", "kind", "position",
                                                  "outcome", "event", "probe_differs",
                                                  "control_differs", "mirror_differs",
                                                  "tries")})
        if not out:
            out.append({"error": "gl-replay", "detail": e.decode(errors="replace")[-500:]})
        return out

    # ---- existence bit (Lemma 2) ----------------------------------------
    def run_bit(self, sinks, trial, runtime):
        t0 = time.monotonic()
        secret = derive(self.args.seed, "existence-bit/trial-%d" % trial.index)
        bits = [(int(secret, 16) >> i) & 1 for i in range(BIT_CALLS)]
        inv = trial.items["Documents/finance/invoice-1042.pdf"]
        with open(inv["path"], "rb") as f:
            inv_data = base64.b64encode(f.read()).decode()
        data_items = [{"name": "invoice.pdf", "label": inv["label"], "data": inv_data},
                      {"name": "secret.txt", "label": ["hr"],
                       "data": base64.b64encode(secret.encode()).decode()}]
        steps = [{"id": "b%d" % i, "release": "bit", "function": "ocr_pdf", "args": {"i": i},
                  "items": [], "data_items": data_items} for i in range(BIT_CALLS)]
        rundir = os.path.join(self.work, "runs", "t%d-bit-%s" % (trial.index, runtime))
        os.makedirs(rundir)
        home = os.path.join(rundir, "glhome")
        copy_home(trial.home_template, home)
        ocr = os.path.join(sinks.logs, "ocr.example.jsonl")
        size = [os.path.getsize(ocr) if os.path.exists(ocr) else 0]
        seen, trig = [], []

        def after(step, rec):
            now = os.path.getsize(ocr) if os.path.exists(ocr) else 0
            seen.append(1 if now > size[0] else 0)
            size[0] = now
            trig.append(len(rec.get("triggers") or []))

        out = {"trial": trial.index, "runtime": runtime, "secret_bits": "".join(map(str, bits))}
        try:
            agent.run_session(self.procs, self.bins, runtime, trial.policy_for(sinks), home,
                              sinks.routes, trial.policy["clearances"], steps, trial,
                              self.shas(trial, Case("bit", "bit", "bit", "bit", {})), rundir,
                              after=after)
        except (RuntimeError, OSError, ValueError) as e:
            if self.procs.stopping:
                raise Stopped()
            out["error"] = str(e)
            return out
        dep = [i for i in range(len(seen)) if bits[i] == 0]  # the full view omits the request
        mi, h = mutual_information(bits[:len(seen)], seen)
        out.update(observed="".join(map(str, seen)),
                   matches=sum(1 for i in range(len(seen)) if seen[i] == bits[i]),
                   mutual_information=round(mi, 3), secret_entropy=round(h, 3),
                   bits_recovered=round(len(seen) * mi / h) if h else 0,
                   triggers=sum(trig),
                   triggers_on_dependent=sum(1 for i in dep if trig[i]),
                   dependent=len(dep),
                   triggers_elsewhere=sum(1 for i in range(len(seen)) if trig[i] and bits[i]),
                   elapsed_s=round(time.monotonic() - t0, 2))
        if not self.args.keep:
            rmtree(rundir)
        return out

    # ---- scheduling -------------------------------------------------------
    def setup(self):
        assembled = os.path.join(self.work, "releases")
        self.procs.run(["/bin/bash", os.path.join(TESTBED, "assemble.sh"), assembled])
        names = sorted({"%s-1.0.0" % s for s in self.servers} |
                       {n for c in self.cases for n in c.releases.values()})
        if self.args.existence_bit:
            shutil.copytree(os.path.join(TESTBED, BIT_RELEASE), os.path.join(assembled, BIT_RELEASE))
            names.append(BIT_RELEASE)
        self.trials = [None] * self.args.trials
        errs = []

        def prep(i):
            try:
                self.trials[i] = Trial(self.procs, self.work, self.args.seed, i, self.bins,
                                       assembled, names)
                if self.args.pipeline:
                    # the worst case: calls of any horizons in flight at once
                    # (the policy's default, "same-clearance", would keep the
                    # docs sessions' other slots out of the agent's calls)
                    self.trials[i].policy["concurrency"] = "any"
            except Exception as e:  # reported below; Stopped included
                errs.append(e)

        pending = list(range(self.args.trials))
        while pending:
            batch, pending = pending[:self.args.jobs], pending[self.args.jobs:]
            ts = [threading.Thread(target=prep, args=(i,), daemon=True) for i in batch]
            for t in ts:
                t.start()
            for t in ts:
                while t.is_alive():
                    t.join(0.2)
            if errs:
                raise errs[0]

    def tasks(self):
        out = []
        for tr in self.trials:
            for c in self.cases:
                rts = list(self.args.runtimes)
                if c.kind in ("benign", "reference") and "sigpin" not in rts:
                    rts.insert(0, "sigpin")  # the benign reference (docs/security-matrix.md)
                for rt in rts:
                    out.append(("case", tr, c, rt))
            if self.args.existence_bit:
                out += [("bit", tr, None, "lazy"), ("bit", tr, None, "germline")]
        # long sessions first, so that two workers finish together
        out.sort(key=lambda t: -(len(t[2].steps) if t[2] else BIT_CALLS))
        return out

    def run_all(self):
        q = queue.Queue()
        for t in self.tasks():
            q.put(t)
        total, errors = q.qsize(), []
        # progress on a terminal only (issue 17): "\rmatrix.py: k of n runs"
        tty = sys.stderr.isatty() and not self.args.verbose

        def progress():
            if tty:
                done = len(self.results) + len(self.bits)
                print("\rmatrix.py: %d of %d runs" % (done, total), end="",
                      file=sys.stderr, flush=True)

        def worker(i):
            try:
                hold = {"ocr.example": PIPELINE_HOLD} if self.args.pipeline else {}
                sinks = Sinks(self.procs, self.work, i, self.trials[0].world, ATTACKERS, hold)
                try:
                    while True:
                        try:
                            kind, tr, c, rt = q.get_nowait()
                        except queue.Empty:
                            return
                        if kind == "bit":
                            r = self.run_bit(sinks, tr, rt)
                            with self.lock:
                                self.bits.append(r)
                                progress()
                        else:
                            r = self.run_case(sinks, tr, c, rt)
                            with self.lock:
                                self.results.append(r)
                                progress()
                                if self.args.verbose:
                                    print("  %-22s %-9s t%d %s" % (c.name, rt, tr.index,
                                          "DISCLOSES" if r.get("discloses") else
                                          ("error: " + r["error"]) if r.get("error") else "-"),
                                          file=sys.stderr, flush=True)
                finally:
                    sinks.stop()
            except Stopped:
                pass
            except Exception as e:  # a harness failure: stop everything
                errors.append(e)
                self.procs.stopping = True

        ws = [threading.Thread(target=worker, args=(i,), daemon=True)
              for i in range(self.args.jobs)]
        for w in ws:
            w.start()
        for w in ws:
            while w.is_alive():
                w.join(0.2)
        if tty:
            print(file=sys.stderr, flush=True)  # ends the progress line
        if errors:
            raise errors[0]


def mutual_information(s, o):
    """Empirical I(S;O) and H(S) in bits over the pairs (s_i, o_i)."""
    n = len(s)
    if not n:
        return 0.0, 0.0
    joint, ps, po = {}, {}, {}
    for a, b in zip(s, o):
        joint[(a, b)] = joint.get((a, b), 0) + 1
        ps[a] = ps.get(a, 0) + 1
        po[b] = po.get(b, 0) + 1
    mi = sum(c / n * math.log2((c / n) / ((ps[a] / n) * (po[b] / n))) for (a, b), c in joint.items())
    h = -sum(c / n * math.log2(c / n) for c in ps.values())
    return max(0.0, mi), h


# ---- summary and output ------------------------------------------------------
def summarise(results, runtimes):
    """Attribution and benign steps (docs/security-matrix.md); returns the
    summary dict."""
    by = {(r["case"], r["runtime"], r["trial"]): r for r in results}
    # attribution: a disclosure that also occurs in the same session's
    # flow-compliant run (same runtime and trial) is not the tool's (§VII-A)
    for r in results:
        if r["kind"] != "attack":
            continue
        ref_case = "xtool-1.0.0" if r["case"] == "xtool" else r["case"].split("-", 1)[0] + "-1.0.0"
        ref = by.get((ref_case, r["runtime"], r["trial"]))
        base = {(d["sink"], d["item"]) for d in (ref or {}).get("disclosures", [])}
        for d in r["disclosures"]:
            d["attributable"] = (d["sink"], d["item"]) not in base
        r["attributable"] = sum(d["attributable"] for d in r["disclosures"])
    # benign steps: ok, every result ok, the agent's value = sigpin's value
    # of the same step for the same 1.0.0 in the same trial
    for r in results:
        if r["kind"] != "benign":
            continue
        ref = by.get((r["case"], "sigpin", r["trial"]))
        refv = {s["step"]: s.get("value") for s in (ref or {}).get("steps", [])}
        for s in r["steps"]:
            s["complete"] = bool(s.get("ok")) and s.get("value") is not None \
                and s.get("value") == refv.get(s["step"])
    summ = {"runtimes": {}, "variants": {}}
    variants = sorted({r["variant"] for r in results if r["kind"] == "attack"})
    for rt in runtimes:
        att = [r for r in results if r["runtime"] == rt and r["kind"] == "attack"]
        ben = [r for r in results if r["runtime"] == rt and r["kind"] == "benign"]
        steps = [s for r in ben for s in r["steps"]]
        summ["runtimes"][rt] = {
            "attack_runs": len(att),
            "disclosing": sum(r["discloses"] for r in att),
            "tool_attributable": sum(bool(r.get("attributable")) for r in att),
            "tool_sent": sum(bool(r.get("tool")) for r in att),
            "benign_runs": len(ben),
            "benign_disclosing": sum(r["discloses"] for r in ben),
            "benign_steps": len(steps),
            "benign_complete": sum(bool(s.get("complete")) for s in steps),
            "forwards_blocked_benign": sum(r.get("forwards", {}).get("blocked", 0) for r in ben),
            "triggers_attack": sum(len(r["triggers"]) for r in att),
            "triggers_benign": sum(len(r["triggers"]) for r in ben),
            "errors": sum(1 for r in att + ben if r.get("error")),
        }
    for v in variants:
        row = {}
        for rt in runtimes:
            rs = [r for r in results if r["variant"] == v and r["runtime"] == rt]
            row[rt] = {"disclosing": sum(r["discloses"] for r in rs), "runs": len(rs),
                       "tool_attributable": sum(bool(r.get("attributable")) for r in rs),
                       "survivors": sum(len(r.get("survivors") or []) for r in rs),
                       "unverified_triggers": sum(r.get("unverified_triggers", 0) for r in rs)}
        summ["variants"][v] = row
    replay = {}
    for r in results:
        for v in r.get("replay", []):
            key = v.get("outcome") or ("error:%s" % v.get("error"))
            replay.setdefault(r["variant"], {}).setdefault(key, 0)
            replay[r["variant"]][key] += 1
    summ["replay"] = replay
    summ["replay_expected"] = {v: {"expected": want, "got": replay.get(v, {}),
                                   "ok": bool(replay.get(v)) and set(replay[v]) == {want}}
                               for v, want in EXPECTED_REPLAY.items()
                               if v in variants and "germline" in runtimes}
    return summ


def table(summ, bits, runtimes):
    w = max([len(v) for v in summ["variants"]] + [22]) + 1
    lines = ["%-*s" % (w, "variant") + "".join("%10s" % rt for rt in runtimes)]
    for v, row in summ["variants"].items():
        lines.append("%-*s" % (w, v) + "".join(
            "%10s" % ("%d/%d" % (row[rt]["disclosing"], row[rt]["runs"])) for rt in runtimes))
    rs = summ["runtimes"]
    n = rs[runtimes[0]]["attack_runs"] if runtimes else 0
    lines.append("%-*s" % (w, "all (%d runs)" % n) + "".join(
        "%10s" % ("%d/%d" % (rs[rt]["disclosing"], rs[rt]["attack_runs"])) for rt in runtimes))
    lines.append("%-*s" % (w, "rate") + "".join(
        "%10s" % ("%.1f%%" % (100.0 * rs[rt]["disclosing"] / rs[rt]["attack_runs"])
                  if rs[rt]["attack_runs"] else "-") for rt in runtimes))
    lines.append("%-*s" % (w, "tool-attributable") + "".join(
        "%10s" % ("%d/%d" % (rs[rt]["tool_attributable"], rs[rt]["attack_runs"])) for rt in runtimes))
    lines.append("%-*s" % (w, "benign steps") + "".join(
        "%10s" % ("%d/%d" % (rs[rt]["benign_complete"], rs[rt]["benign_steps"])) for rt in runtimes))
    lines.append("%-*s" % (w, "benign runs disclosing") + "".join(
        "%10s" % ("%d/%d" % (rs[rt]["benign_disclosing"], rs[rt]["benign_runs"])) for rt in runtimes))
    lines.append("%-*s" % (w, "benign forwards blocked") + "".join(
        "%10s" % rs[rt]["forwards_blocked_benign"] for rt in runtimes))
    errs = sum(rs[rt]["errors"] for rt in runtimes)
    if errs:
        lines.append("%-*s" % (w, "harness errors") + "".join("%10s" % rs[rt]["errors"]
                                                              for rt in runtimes))
    if "germline" in rs:
        g = rs["germline"]
        lines.append("")
        lines.append("germline triggers: %d in attack runs, %d in benign runs"
                     % (g["triggers_attack"], g["triggers_benign"]))
        for v, got in sorted(summ["replay"].items()):
            want = EXPECTED_REPLAY.get(v)
            lines.append("  replay %-14s %s%s" % (v, ", ".join(
                "%s %d" % kv for kv in sorted(got.items())),
                "" if not want else ("   (expected %s: %s)" % (
                    want, "ok" if set(got) == {want} else "DIFFERS"))))
        for v, e in sorted(summ["replay_expected"].items()):
            if not e["got"]:
                lines.append("  replay %-14s no trigger   (expected %s: DIFFERS)"
                             % (v, e["expected"]))
    odd = [(v, rt, row[rt]) for v, row in summ["variants"].items() for rt in runtimes
           if row[rt]["survivors"] or row[rt]["unverified_triggers"]]
    if odd:
        lines.append("")
        lines.append("left behind (processes alive once gl-run ended, killed by the harness) "
                     "and triggers without a verdict:")
        for v, rt, c in odd:
            lines.append("  %-22s %-9s survivors %d, unverified triggers %d"
                         % (v, rt, c["survivors"], c["unverified_triggers"]))
    if bits:
        lines.append("")
        lines.append("existence bit (Lemma 2, %d calls per trial):" % BIT_CALLS)
        for rt in ("lazy", "germline"):
            bs = [b for b in bits if b["runtime"] == rt and "error" not in b]
            if not bs:
                continue
            lines.append("  %-9s bits recovered %s; mutual information %s bit/call; "
                         "triggers on secret-dependent calls %d/%d, elsewhere %d" % (
                             rt, " ".join("%d/%d" % (b["bits_recovered"], BIT_CALLS) for b in bs),
                             " ".join("%.3f" % b["mutual_information"] for b in bs),
                             sum(b["triggers_on_dependent"] for b in bs),
                             sum(b["dependent"] for b in bs),
                             sum(b["triggers_elsewhere"] for b in bs)))
        for b in bits:
            if "error" in b:
                lines.append("  %s trial %d: error %s" % (b["runtime"], b["trial"], b["error"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--seed", default="germline-matrix")
    ap.add_argument("--cases", default="", help="comma-separated case names, variants or 'benign'")
    ap.add_argument("--runtimes", default=",".join(RUNTIMES))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "matrix", "matrix.json"))
    ap.add_argument("--keep", metavar="DIR", help="work in DIR (must not exist) and keep it")
    ap.add_argument("--sessions", default=os.path.join(TESTBED, "sessions"),
                    help="session directories, ':'-separated, searched in order")
    ap.add_argument("--bin", default=os.environ.get("GL_BIN") or os.path.join(ROOT, "bin"),
                    help="the gl-* binaries (default $GL_BIN, else bin/)")
    ap.add_argument("--no-existence-bit", dest="existence_bit", action="store_false")
    ap.add_argument("--pipeline", action="store_true",
                    help="send every step whose inputs are known at once (gl-run --jobs 2 --unordered)")
    ap.add_argument("--verbose", "-v", action="store_true", help="a line per run on stderr")
    args = ap.parse_args()
    args.runtimes = [x for x in args.runtimes.split(",") if x]
    if set(args.runtimes) - set(RUNTIMES):
        ap.error("--runtimes: one of " + ",".join(RUNTIMES))
    if not 1 <= args.trials <= 100 or not 1 <= args.jobs <= 16:
        ap.error("--trials 1..100, --jobs 1..16")
    cases, servers, names, skipped = discover(variants.names(), args.sessions.split(":"))
    cases = select(cases, args.cases)
    for s in skipped:
        print("matrix.py: %s: no session file, skipped" % s, file=sys.stderr)

    procs = Procs()
    subreaper = set_subreaper()

    def on_signal(signum, frame):
        raise KeyboardInterrupt()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if args.keep:
        os.makedirs(args.keep)
        work = os.path.abspath(args.keep)
    else:
        work = tempfile.mkdtemp(prefix="gl-matrix.")
    rc = 0
    t0 = time.monotonic()
    m = Matrix(args, procs, work, cases, servers, names)
    try:
        m.setup()
        m.run_all()
    except KeyboardInterrupt:
        print("matrix.py: interrupted; stopping every process it started", file=sys.stderr)
        rc = 130
    except (Stopped, RuntimeError, OSError, ValueError) as e:
        print("matrix.py: %s" % e, file=sys.stderr)
        rc = 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        procs.kill_all()
        if not args.keep:
            rmtree(work)
    if rc:
        return rc
    wall = time.monotonic() - t0
    results = sorted(m.results, key=lambda r: (r["case"], r["runtime"], r["trial"]))
    bits = sorted(m.bits, key=lambda b: (b["runtime"], b["trial"]))
    shown = [r for r in results if r["runtime"] in args.runtimes]
    summ = summarise(results, args.runtimes)
    cmd = "testbed/matrix.py " + " ".join(sys.argv[1:])
    print(table(summ, bits, args.runtimes))
    print("\n%s: %d runs in %.0f s (--jobs %d)" % (cmd.strip(), len(results) + len(bits),
                                                   wall, args.jobs))
    doc = {"format": "germline.matrix", "version": 1, "seed": args.seed,
           "trials": args.trials, "runtimes": args.runtimes,
           "cases": [{"name": c.name, "kind": c.kind, "variant": c.variant,
                      "session": c.session_file, "releases": c.releases} for c in cases],
           "skipped": skipped, "pipeline": args.pipeline, "summary": summ, "subreaper": subreaper, "runs": shown, "existence_bit": bits,
           "timing": {"wall_s": round(wall, 1), "jobs": args.jobs}}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".tmp", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    os.rename(args.out + ".tmp", args.out)
    errs = sum(1 for r in results if r.get("error")) + sum(1 for b in bits if "error" in b)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
