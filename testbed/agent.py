"""The scripted agent of the security matrix (issue 6 item 4; paper §VII-A;
testbed/sessions/README.md; docs/security-matrix.md).

run_session() runs one session's steps, in order, through ONE
`gl-plan | gl-run --mode M` pipeline, so that a persistent runtime keeps its
process across the session. For each step it builds the envelope (items
with their labels from world.json, earlier values passed as items), sends
it, reads the record, and where the step says `forward` POSTs the value to
that sink itself — only if the value's label lies inside the destination's
clearance, where the runtime reports a label (sigpin reports none: the
agent always forwards). Its sends are written for oracle.py
--agent-forwarded. With pipeline=True (testbed/matrix.py --pipeline) it
sends every step whose inputs are known without waiting for earlier
records, through gl-run --jobs 2 --unordered, and samples the copies
alive at once (Overlap; docs/security-matrix.md "Pipelined runs").
Standard library only.
"""

import base64
import hashlib
import http.client
import json
import os
import queue
import subprocess
import threading

from harness import Stopped

STEP_TIMEOUT = 180  # seconds for one record; gl-run's own deadline is 30 s a copy
AGENT_PATH = "/agent"


def canon(v):
    """The agent's JSON text of a value (what it forwards and passes on)."""
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(v):
    return hashlib.sha256(canon(v).encode()).hexdigest()[:16]


def agent_result(rec):
    """The agent's entry of a record's results (the first one if no consumer
    is the agent), or None."""
    res = rec.get("results") or []
    for r in res:
        if r.get("consumer") == "agent":
            return r
    return res[0] if res else None


def envelope(step, trial, sha, values):
    """The call envelope of a step, or (None, why) when an earlier value it
    needs is missing."""
    items = []
    for name in step.get("items", []):
        it = trial.items.get(name)
        if it is None:
            raise ValueError("step %s: no item %r in world.json" % (step["id"], name))
        items.append({"name": name, "label": it["label"], "path": it["path"]})
    items += step.get("data_items", [])  # the harness's own (existence bit)
    for ref in step.get("items_from_steps", []):
        prev = values.get(ref["step"])
        if prev is None:
            return None, "dependency %s failed" % ref["step"]
        items.append({"name": ref["name"], "label": prev[1],
                      "data": base64.b64encode(canon(prev[0]).encode()).decode()})
    env = {"id": step["id"], "release": sha, "function": step["function"],
           "args": step.get("args", {}), "items": items,
           "consumers": step.get("consumers", ["agent"])}
    if "destinations" in step:
        env["destinations"] = step["destinations"]
    return env, None


def forward(routes, dest, value):
    """POST the value's JSON text to the sink of dest (Host: dest)."""
    body = canon(value).encode()
    host, port = routes[dest].rsplit(":", 1)
    c = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        c.request("POST", AGENT_PATH, body=body,
                  headers={"Host": dest, "Content-Type": "application/json"})
        c.getresponse().read()
    finally:
        c.close()
    return {"destination": dest, "method": "POST", "path": AGENT_PATH,
            "body": base64.b64encode(body).decode()}


def cleared(label, clearance):
    return set(label) <= set(clearance)


REPORT_FIELDS = ("id", "ok", "error", "detail", "copies", "delivered", "denied", "triggers")


def report(rec, clearance):
    """A step's status report (sessions/README.md "report"): the record's
    fields other than the values, as a careless host posts them. What a
    copy chose carries a label (SPEC §6; docs/gl-run.md "Field labels"):
    record.labels.X[i] for the entry X[i] of delivered, denied and
    triggers, labels.call for the call-wide fields, "label" on a result;
    anything labelled outside the destination's clearance is left out. An
    unlabelled field (sigpin labels nothing) is sent."""
    labels = rec.get("labels") if isinstance(rec.get("labels"), dict) else {}

    def ok(lab):
        return not isinstance(lab, list) or cleared(lab, clearance)

    out = {}
    for k in REPORT_FIELDS:
        if k not in rec:
            continue
        v = rec[k]
        if k in ("delivered", "denied", "triggers") and isinstance(v, list):
            labs = labels.get(k) if isinstance(labels.get(k), list) else []
            v = [x for i, x in enumerate(v) if ok(labs[i] if i < len(labs) else None)]
        elif k in ("detail", "copies") and not ok(labels.get("call")):
            continue
        out[k] = v
    out["results"] = [{kk: vv for kk, vv in r.items() if kk != "value"}
                      for r in rec.get("results") or [] if isinstance(r, dict) and ok(r.get("label"))]
    return out


class Overlap:
    """Samples gl-run's process tree while a pipelined session runs (every
    PERIOD s, in a thread): the copies alive at that moment, each a process
    in a PID namespace of its own nested in its germline's (NSpid "H N 1",
    N = 3 + its call's lane: docs/design/run.md "Workers"), grouped by the
    germline's init, their parent. The copies of one call run one after
    another ("Two groups of one call"), so two copies alive under one init
    are copies of two calls of one germline in flight at once: evidence
    from the copies themselves, not from timing."""

    PERIOD = 0.005

    def __init__(self, root):
        self.root = root
        self.samples = self.together = self.max_all = self.max_one = 0
        self.numbers = set()  # the N of two copies of one germline seen at once
        self.halt = threading.Event()
        self.t = threading.Thread(target=self._loop, daemon=True)
        self.t.start()

    @staticmethod
    def _children(pid):
        out = []
        try:
            for t in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                    out += [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            pass
        return out

    @staticmethod
    def _status(pid):
        """(ppid, NSpid numbers) of a live process, or None."""
        ppid, ns = None, []
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("PPid:"):
                        ppid = int(line.split()[1])
                    elif line.startswith("NSpid:"):
                        ns = [int(x) for x in line.split()[1:]]
                    elif line.startswith("State:") and line.split()[1] in "ZX":
                        return None
        except (OSError, ValueError, IndexError):
            return None
        return ppid, ns

    def _snapshot(self):
        by_init, todo, seen = {}, [self.root], set()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            kids = self._children(pid)
            todo += kids
            st = self._status(pid) if pid != self.root else None
            if st and len(st[1]) >= 3 and st[1][-1] == 1:
                by_init.setdefault(st[0], []).append(st[1][-2])
        self.samples += 1
        self.max_all = max(self.max_all, sum(len(v) for v in by_init.values()))
        for nums in by_init.values():
            self.max_one = max(self.max_one, len(nums))
            if len(nums) >= 2:
                self.together += 1
                self.numbers.add(tuple(sorted(nums)))

    def _loop(self):
        while not self.halt.wait(self.PERIOD):
            self._snapshot()

    def stop(self):
        self.halt.set()
        self.t.join(5)

    def result(self):
        return {"samples": self.samples, "max_live_copies": self.max_all,
                "max_live_one_germline": self.max_one, "snapshots_two_calls": self.together,
                "numbers_together": [list(x) for x in sorted(self.numbers)[:8]]}


def finish(step, rec, routes, clearances, values, sends, after=None):
    """The agent's part once a step's record is in: `after`, the value kept
    for later steps, the forward (only inside the destination's clearance
    where the runtime reports a label) and the status report; returns the
    step's result."""
    if after:
        after(step, rec)
    out = {"step": step["id"], "function": step["function"]}
    r = agent_result(rec)
    ok = bool(rec.get("ok")) and all(x.get("ok") for x in rec.get("results", []))
    out.update(ok=ok, triggers=len(rec.get("triggers") or []))
    if not rec.get("ok"):
        out["error"] = rec.get("error")
    if r is not None and r.get("ok"):
        label = r.get("label")  # absent under sigpin
        values[step["id"]] = (r.get("value"), label or [])
        out["value"] = digest(r.get("value"))
        out["label"] = label
        dest = step.get("forward")
        if dest:
            if label is None or cleared(label, clearances.get(dest, [])):
                sends.append(forward(routes, dest, r.get("value")))
                out["forwarded"] = True
            else:
                out["forwarded"] = False
    elif r is not None:
        out["error"] = r.get("error") or out.get("error")
    if step.get("report"):
        sends.append(forward(routes, step["report"],
                             report(rec, clearances.get(step["report"], []))))
        out["reported"] = True
    return out


def _next_record(procs, lines, what, rundir):
    try:
        line = lines.get(timeout=STEP_TIMEOUT)
    except queue.Empty:
        raise RuntimeError("%s: no record after %ss" % (what, STEP_TIMEOUT))
    if procs.stopping:
        raise Stopped()
    if line is None:
        raise RuntimeError("%s: gl-run ended early (see %s/gl-run.err)" % (what, rundir))
    return json.loads(line)


def _sequential(procs, p, lines, steps, trial, shas, rundir, finish_):
    """One step at a time: send it, read its record, then build the next."""
    records, results, values = [], [], {}
    for step in steps:
        env_, why = envelope(step, trial, shas[step["release"]], values)
        if env_ is None:
            results.append({"step": step["id"], "function": step["function"],
                            "ok": False, "error": "skipped", "detail": why})
            continue
        p.stdin.write((json.dumps(env_) + "\n").encode())
        p.stdin.flush()
        rec = _next_record(procs, lines, "step %s" % step["id"], rundir)
        records.append(rec)
        results.append(finish_(step, rec, values))
    return records, results, [r.get("id") for r in records]


def _pipelined(procs, p, lines, steps, trial, shas, rundir, finish_):
    """Every step whose inputs are known is sent at once, without waiting
    for earlier records (a step with items_from_steps waits for the records
    of those steps); records are read as gl-run --unordered writes them and
    matched by id. Forwards and reports as _sequential, each when its
    record is in. Records and results come back in session order; the
    third value is the ids in the order their records arrived."""
    pos = {s["id"]: i for i, s in enumerate(steps)}
    if len(pos) != len(steps):
        raise ValueError("pipelined session: step ids are not unique")
    pending, inflight, done, values, order = list(steps), {}, {}, {}, []
    while pending or inflight:
        waiting = set(pos) - set(done)  # steps whose record is not in yet
        still = []
        for step in pending:
            deps = [ref["step"] for ref in step.get("items_from_steps", [])]
            # an earlier step's record not in yet (a later step's value is
            # missing, as in _sequential: envelope() skips the step)
            if any(d in waiting and pos[d] < pos[step["id"]] for d in deps):
                still.append(step)
                continue
            env_, why = envelope(step, trial, shas[step["release"]], values)
            if env_ is None:
                done[step["id"]] = (None, {"step": step["id"], "function": step["function"],
                                           "ok": False, "error": "skipped", "detail": why})
                continue
            p.stdin.write((json.dumps(env_) + "\n").encode())
            inflight[step["id"]] = step
        p.stdin.flush()
        if len(still) == len(pending) and not inflight:
            raise ValueError("pipelined session: steps %s wait for each other"
                             % ",".join(s["id"] for s in still))
        pending = still
        if not inflight:
            continue
        rec = _next_record(procs, lines, "steps %s" % ",".join(inflight), rundir)
        step = inflight.pop(rec.get("id"), None) if isinstance(rec.get("id"), str) else None
        if step is None:
            raise RuntimeError("a record for no step in flight (id %r)" % (rec.get("id"),))
        order.append(step["id"])
        done[step["id"]] = (rec, finish_(step, rec, values))
    ids = sorted(done, key=pos.get)
    return ([done[i][0] for i in ids if done[i][0] is not None],
            [done[i][1] for i in ids], order)


def run_session(procs, bins, runtime, policy_path, gl_home, routes, clearances,
                steps, trial, shas, rundir, after=None, pipeline=False, stats=None):
    """Run the steps under `runtime`; returns (records, step results, sends).

    shas maps a step's "release" (a server name) to the installed sha256;
    after(step, record), when given, is called once each record is read.
    pipeline: gl-run --jobs 2 --unordered and _pipelined (else one step at
    a time); stats, a dict, gets "order" (the ids as their records came)
    and, pipelined, "overlap" (Overlap.result: copies seen alive at once)."""
    plan = "nosplit" if runtime == "nosplit" else "germline"
    extra = "--witness-items" if runtime == "germline" else ""
    if pipeline:
        extra += " --jobs 2 --unordered"
    # The user's agent works in the user's home: HOME and the working
    # directory are the world's (a tool that reads ~/.credentials reads the
    # world's, where its runtime lets it).
    home = os.path.join(trial.world, "home")
    env = dict(os.environ, GL_HOME=gl_home, HOME=home)
    err = open(os.path.join(rundir, "gl-run.err"), "wb")
    sh = ('"$1/gl-plan" --policy "$2" --mode "$3" | '
          '"$1/gl-run" --policy "$2" --mode "$4" $5')
    p = procs.popen(["/bin/sh", "-c", sh, "sh", bins, policy_path, plan, runtime, extra],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env,
                    cwd=home)
    lines = queue.Queue()

    def reader():
        for line in p.stdout:
            lines.put(line)
        lines.put(None)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    sends = []
    watch = Overlap(p.pid) if pipeline else None

    def finish_(step, rec, values):
        return finish(step, rec, routes, clearances, values, sends, after)

    try:
        run = _pipelined if pipeline else _sequential
        records, results, order = run(procs, p, lines, steps, trial, shas, rundir, finish_)
        p.stdin.close()
        t.join(STEP_TIMEOUT)
        p.wait(timeout=60)
    finally:
        if watch:
            watch.stop()
        if p.poll() is None:
            p.kill()
        procs.done(p)
        err.close()
    if stats is not None:
        stats["order"] = order
        if watch:
            stats["overlap"] = watch.result()
    return records, results, sends
