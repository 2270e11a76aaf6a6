"""A fresh process per call (bench/run.sh, baseline (c); the paper's "fresh
process per call"): started as `/usr/bin/python3 -I -B fresh_call.py RELEASE_DIR` (-B as a germline: the
release tree stays as installed)
with one call envelope on stdin; imports the release's entry module, runs the
one call with every item's contents (the call object of docs/python-host.md,
state empty), prints {"id","ok","value"} and exits. Unconfined: the cost of a
fresh interpreter and of the release's initialisation, nothing else."""
import base64
import importlib
import json
import sys


class Item:
    __slots__ = ("name", "label", "data")

    def __init__(self, name, label, data):
        self.name, self.label, self.data = name, label, data


class Call:
    __slots__ = ("function", "args", "items", "state")


def main():
    release = sys.argv[1]
    with open(release + "/manifest.json") as f:
        manifest = json.load(f)
    sys.path.insert(0, release)
    module = importlib.import_module(manifest["entry"])
    env = json.loads(sys.stdin.read())
    call = Call()
    call.function, call.args, call.state = env["function"], env.get("args") or {}, {}
    call.items = {it["name"]: Item(it["name"], list(it.get("label") or []),
                                   base64.b64decode(it.get("data") or ""))
                  for it in env.get("items") or []}
    value = getattr(module, call.function)(call)
    sys.stdout.write(json.dumps({"id": env.get("id"), "ok": True, "value": value}) + "\n")


if __name__ == "__main__":
    main()
