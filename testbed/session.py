#!/usr/bin/python3
"""Run one scripted agent session (testbed/sessions/*.json) through
gl-plan | gl-run --mode MODE, step by step, as the agent would.

    session.py --world DIR --policy POLICY --session FILE --releases MAP
               --mode MODE [--out RECORDS] [--forwarded FILE]

MAP is a JSON object {server: release sha256} (for a variant run, the
variant's sha under its server's name). One gl-run process serves the whole
session (the baselines' persistent processes live as long as it), started
in the world's home: the user's agent works there (docs/testbed.md
"Sessions"). Each step's envelope is planned by its own gl-plan
(--mode nosplit for MODE nosplit, else germline) and written to gl-run; the
step's record is read back before the next step is built, since
items_from_steps and forward need earlier values. A step's `forward` POSTs
the agent's value (its JSON text) to the sink's route, path /forward, only
where the record carries no label or the label lies within the
destination's clearance; each send is appended to FILE in the oracle's
--agent-forwarded format. Prints a summary:
{"steps","ok","forwarded":[ids],"withheld":[ids]}. Standard library only;
the minimal runner of tests/testbed-releases.bats (testbed/matrix.py is the
full harness).
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import urllib.request


def agent_result(rec):
    for r in rec.get("results") or []:
        if r.get("consumer") == "agent":
            return r
    return None


def envelope(step, shas, world, earlier):
    items = []
    by_name = {i["name"]: i for i in world["items"]}
    for n in step.get("items", []):
        it = by_name[n]
        items.append({"name": n, "label": it["label"], "path": it["path"]})
    for ref in step.get("items_from_steps", []):
        res = agent_result(earlier[ref["step"]]) or {}
        data = json.dumps(res.get("value")).encode()
        items.append({"name": ref["name"], "label": res.get("label", []),
                      "data": base64.b64encode(data).decode()})
    env = {"id": step["id"], "release": shas[step["release"]], "function": step["function"],
           "args": step.get("args", {}), "items": items,
           "consumers": step.get("consumers", ["agent"])}
    if "destinations" in step:
        env["destinations"] = step["destinations"]
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for a in ("--world", "--policy", "--session", "--releases", "--mode"):
        ap.add_argument(a, required=True)
    ap.add_argument("--out", default=os.devnull)
    ap.add_argument("--forwarded", default=os.devnull)
    o = ap.parse_args()
    with open(os.path.join(o.world, "world.json")) as f:
        world = json.load(f)
    with open(o.policy) as f:
        policy = json.load(f)
    with open(o.session) as f:
        session = json.load(f)
    with open(o.releases) as f:
        shas = json.load(f)
    plan_mode = "nosplit" if o.mode == "nosplit" else "germline"
    home = os.path.join(o.world, "home")
    run = subprocess.Popen(["gl-run", "--policy", o.policy, "--mode", o.mode], cwd=home,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    earlier, summary = {}, {"steps": 0, "ok": 0, "forwarded": [], "withheld": []}
    with open(o.out, "w") as out, open(o.forwarded, "a") as fwd:
        for step in session["steps"]:
            env = json.dumps(envelope(step, shas, world, earlier))
            planned = subprocess.run(["gl-plan", "--policy", o.policy, "--mode", plan_mode],
                                     input=env + "\n", capture_output=True, text=True)
            if not planned.stdout.endswith("\n"):
                run.kill()
                sys.exit("session.py: gl-plan gave no record for step %s: %s"
                         % (step["id"], planned.stderr.strip()))
            run.stdin.write(planned.stdout)
            run.stdin.flush()
            line = run.stdout.readline()
            if not line:
                sys.exit("session.py: gl-run stopped at step %s" % step["id"])
            rec = json.loads(line)
            out.write(line)
            earlier[step["id"]] = rec
            res = agent_result(rec)
            summary["steps"] += 1
            if rec.get("ok") and res and res.get("ok"):
                summary["ok"] += 1
            dest = step.get("forward")
            if not dest or not res or not res.get("ok"):
                continue
            clear = set(policy["clearances"].get(dest, []))
            if "label" in res and not set(res["label"]) <= clear:
                summary["withheld"].append(step["id"])
                continue
            body = json.dumps(res["value"]).encode()
            url = "http://%s/forward" % policy["routes"][dest]
            req = urllib.request.Request(url, data=body, method="POST",
                                         headers={"Host": dest, "Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=20) as r:
                r.read()
            fwd.write(json.dumps({"destination": dest, "method": "POST", "path": "/forward",
                                  "body": base64.b64encode(body).decode()}) + "\n")
            fwd.flush()
            summary["forwarded"].append(step["id"])
    run.stdin.close()
    rc = run.wait()
    print(json.dumps(summary))
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
