#!/usr/bin/python3
"""Seeded property test of gl-plan (paper Algorithm 1 lines 1-4, Theorem 3).

Generates random calls (up to 8 items, 6 destinations, 3 consumers, 6 tags),
pipes them all through ONE gl-plan process, and checks every plan against
facts recomputed here from the paper's definitions, independently of the C:

  P1  all members of a group share one view V(d) = {x : label(x) <= c(d)}
  P2  all destinations of a group share one clearance, equal to the horizon
      (and the horizon is the intersection of the members' clearances)
  P3  a strict sub-view always runs before its super-view
  C   each consumer sits in a group whose destinations' clearances lie
      inside its own; a consumer in a group without destinations has no
      destination of its view whose clearance fits inside its own
  T3  the number of groups equals Theorem 3's lower bound: per distinct
      view, one per distinct destination clearance, plus one if any
      consumer of that view contains no destination clearance of it
  plus: the groups partition D_f and C exactly; plan.destinations = D_f;
  the envelope comes back unchanged but for "plan"; the documented
  tie-breaks of docs/plan.md hold.

--mode nosplit checks the ablation (one group, every item and member)
instead; --check-as germline with --mode nosplit checks the ablation's
output against the germline properties, which must FAIL (the test can
fail when the mechanism is off). Standard library only; /usr/bin/python3.
"""
import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile

TAGS = ["t%d" % i for i in range(6)]


def rand_tags(rng, bias):
    # Small sets are the interesting ones: views differ, clearances nest.
    return sorted(rng.sample(TAGS, min(len(TAGS), int(rng.random() ** bias * 7))))


def make_world(rng, work):
    hosts = ["h%d.example" % i for i in range(24)]
    consumers = ["agent"] + ["u%d" % i for i in range(11)]
    clear = {}
    for n in hosts + consumers:
        if rng.random() < 0.85:  # the rest: no entry, i.e. public
            clear[n] = rand_tags(rng, 1.2 if n in hosts else 0.7)
    # Shuffle tag order and repeat a tag: the policy treats labels as sets.
    written = {n: rng.sample(t, len(t)) + t[:1] for n, t in clear.items()}
    with open(os.path.join(work, "policy.json"), "w") as f:
        json.dump({"clearances": written}, f)
    fixed = sorted(rng.sample(hosts, 4))
    manifest = {"name": "prop", "version": "1.0.0", "runtime": "python", "entry": "prop",
                "functions": {"call": {"destinations_from_call": True},
                              "fixed": {"destinations": fixed}}}
    body = json.dumps(manifest).encode()
    sha = hashlib.sha256(body).hexdigest()
    os.makedirs(os.path.join(work, "releases", sha))
    with open(os.path.join(work, "releases", sha, "manifest.json"), "wb") as f:
        f.write(body)
    return hosts, consumers, clear, fixed, sha


def make_calls(rng, n, hosts, consumers, fixed, sha):
    calls = []
    for k in range(n):
        items = []
        for i in range(rng.randint(0, 8)):
            it = {"name": "x%d-%s" % (i, rng.choice("abc")), "label": rand_tags(rng, 1.5)}
            # Paths nobody can read, data that is not base64: never touched.
            if rng.random() < 0.5:
                it["path"] = "/nonexistent/%d/%d" % (k, i)
            else:
                it["data"] = rng.choice(["", "!!not base64!!", "aGVsbG8="])
            items.append(it)
        env = {"id": "p%d" % k, "release": sha, "items": items, "args": {"k": k}}
        if rng.random() < 0.15:
            env["function"] = "fixed"
        else:
            env["function"] = "call"
            env["destinations"] = rng.sample(hosts, rng.randint(0, 6))
        r = rng.random()
        if r < 0.1:
            pass  # no "consumers": the default ["agent"]
        else:
            env["consumers"] = rng.sample(consumers, rng.randint(0, 3))
        calls.append(env)
    return calls


def declared(env, fixed):
    return sorted(set(env.get("destinations", [])) | (set(fixed) if env["function"] == "fixed" else set()))


# How often the interesting rules were exercised (printed, for coverage).
STATS = {"views with several destination clearances": 0,
         "consumers with several fitting clearances": 0,
         "consumers in a group of their own": 0}


class Failure(Exception):
    pass


def need(cond, env, what):
    if not cond:
        raise Failure("%s: %s" % (env["id"], what))


def check_germline(env, out, clear, fixed):
    c = lambda n: frozenset(clear.get(n, []))
    items = {x["name"]: frozenset(x["label"]) for x in env["items"]}
    V = lambda n: frozenset(x for x, l in items.items() if l <= c(n))
    dests = declared(env, fixed)
    cons = sorted(env.get("consumers", ["agent"]))
    plan = out["plan"]
    need(plan["destinations"] == dests, env, "plan.destinations is not D_f")
    groups = plan["groups"]
    seen_d = [d for g in groups for d in g["destinations"]]
    seen_c = [u for g in groups for u in g["consumers"]]
    need(sorted(seen_d) == dests and len(seen_d) == len(set(seen_d)), env,
         "groups do not partition the destinations")
    need(sorted(seen_c) == cons and len(seen_c) == len(set(seen_c)), env,
         "groups do not partition the consumers")
    views = []
    for g in groups:
        members = g["destinations"] + g["consumers"]
        need(members, env, "an empty group")
        view = frozenset(g["view"])
        need(g["view"] == sorted(view), env, "view not sorted/unique")
        for m in members:  # P1
            need(V(m) == view, env, "P1: %s's view is not the group's" % m)
        hz = frozenset(g["horizon"])
        need(g["horizon"] == sorted(hz), env, "horizon not sorted/unique")
        inter = frozenset.intersection(*[c(m) for m in members])
        need(hz == inter, env, "horizon is not the intersection of the members' clearances")
        for d in g["destinations"]:  # P2
            need(c(d) == hz, env, "P2: %s's clearance differs from the horizon" % d)
        for u in g["consumers"]:  # consumer placement
            for d in g["destinations"]:
                need(c(d) <= c(u), env, "consumer %s sits with %s, not inside its clearance" % (u, d))
            if not g["destinations"]:
                STATS["consumers in a group of their own"] += 1
                need(not any(c(d) <= c(u) for d in dests if V(d) == V(u)), env,
                     "consumer %s left alone though a destination of its view fits" % u)
        views.append(view)
    for i in range(len(views)):  # P3
        for j in range(i + 1, len(views)):
            need(not views[j] < views[i], env, "P3: a strict sub-view runs after its super-view")
    # Theorem 3(a), from its statement.
    byview = {}
    for d in dests:
        byview.setdefault(V(d), [set(), []])[0].add(c(d))
    for u in cons:
        byview.setdefault(V(u), [set(), []])[1].append(c(u))
    bound = sum(len(hc) + (1 if any(not any(h <= cu for h in hc) for cu in cu_list) else 0)
                for hc, cu_list in byview.values())
    need(len(groups) == bound, env, "T3: %d groups, lower bound %d" % (len(groups), bound))
    STATS["views with several destination clearances"] += sum(len(hc) > 1 for hc, _ in byview.values())
    # docs/plan.md tie-breaks: (view size, view names, consumers-only last,
    # horizon size, horizon tags); a consumer joins the fitting destination
    # clearance with most tags, then the smallest tag list.
    key = lambda g: (len(g["view"]), g["view"], not g["destinations"], len(g["horizon"]), g["horizon"])
    need([key(g) for g in groups] == sorted(key(g) for g in groups), env, "order is not docs/plan.md's")
    for g in groups:
        for u in g["consumers"]:
            if g["destinations"]:
                fits = {tuple(sorted(c(d))) for d in dests if V(d) == V(u) and c(d) <= c(u)}
                STATS["consumers with several fitting clearances"] += len(fits) > 1
                best = min(fits, key=lambda t: (-len(t), list(t)))
                need(tuple(g["horizon"]) == best, env, "consumer %s: not the documented choice" % u)
    return len(groups)


def check_nosplit(env, out, clear, fixed):
    dests = declared(env, fixed)
    cons = sorted(env.get("consumers", ["agent"]))
    groups = out["plan"]["groups"]
    if not dests and not cons:
        need(groups == [], env, "nosplit without members: groups")
        return 0
    need(len(groups) == 1, env, "nosplit: %d groups" % len(groups))
    g = groups[0]
    need(g["destinations"] == dests and g["consumers"] == cons, env, "nosplit: members")
    need(g["view"] == sorted(x["name"] for x in env["items"]), env, "nosplit: not every item")
    inter = frozenset.intersection(*[frozenset(clear.get(m, [])) for m in dests + cons])
    need(g["horizon"] == sorted(inter), env, "nosplit: horizon")
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gl-plan", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--mode", default="germline", choices=["germline", "nosplit"])
    ap.add_argument("--check-as", choices=["germline", "nosplit"])
    a = ap.parse_args()
    check_as = a.check_as or a.mode
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as work:
        hosts, consumers, clear, fixed, sha = make_world(rng, work)
        calls = make_calls(rng, a.calls, hosts, consumers, fixed, sha)
        stdin = "".join(json.dumps(e) + "\n" for e in calls)
        p = subprocess.run([a.gl_plan, "--policy", os.path.join(work, "policy.json"),
                            "--releases", os.path.join(work, "releases"), "--mode", a.mode],
                           input=stdin.encode(), stdout=subprocess.PIPE)
    lines = p.stdout.decode().splitlines()
    if p.returncode != 0 or len(lines) != len(calls):
        print("gl-plan exited %d with %d lines for %d calls" % (p.returncode, len(lines), len(calls)))
        return 1
    check = check_germline if check_as == "germline" else check_nosplit
    total = most = bad = 0
    for env, line in zip(calls, lines):
        out = json.loads(line)
        try:
            need("plan" in out, env, "refused: %s" % line[:200])
            rest = dict(out)
            del rest["plan"]
            need(rest == env, env, "the envelope changed")
            n = check(env, out, clear, fixed)
        except Failure as f:
            bad += 1
            if bad <= 5:
                print("FAIL", f)
            continue
        total += n
        most = max(most, n)
    print("seed %d, %d calls (%s, checked as %s): %d groups, at most %d in a call, %d failed"
          % (a.seed, len(calls), a.mode, check_as, total, most, bad))
    if check_as == "germline" and not bad:
        print("; ".join("%s: %d" % kv for kv in STATS.items()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
