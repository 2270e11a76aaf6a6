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
--agent-forwarded. Standard library only.
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


def run_session(procs, bins, runtime, policy_path, gl_home, routes, clearances,
                steps, trial, shas, rundir, after=None):
    """Run the steps under `runtime`; returns (records, step results, sends).

    shas maps a step's "release" (a server name) to the installed sha256;
    after(step, record), when given, is called once each record is read."""
    plan = "nosplit" if runtime == "nosplit" else "germline"
    extra = "--witness-items" if runtime == "germline" else ""
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
    records, results, sends, values = [], [], [], {}
    try:
        for step in steps:
            env_, why = envelope(step, trial, shas[step["release"]], values)
            out = {"step": step["id"], "function": step["function"]}
            if env_ is None:
                out.update(ok=False, error="skipped", detail=why)
                results.append(out)
                continue
            p.stdin.write((json.dumps(env_) + "\n").encode())
            p.stdin.flush()
            try:
                line = lines.get(timeout=STEP_TIMEOUT)
            except queue.Empty:
                raise RuntimeError("step %s: no record after %ss" % (step["id"], STEP_TIMEOUT))
            if procs.stopping:
                raise Stopped()
            if line is None:
                raise RuntimeError("step %s: gl-run ended early (see %s/gl-run.err)"
                                   % (step["id"], rundir))
            rec = json.loads(line)
            records.append(rec)
            if after:
                after(step, rec)
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
            results.append(out)
        p.stdin.close()
        t.join(STEP_TIMEOUT)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
        procs.done(p)
        err.close()
    return records, results, sends
