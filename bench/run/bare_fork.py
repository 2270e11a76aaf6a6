"""The reference for germline's noop (bench/run.sh): a bare fork-and-wait of
the same warm Python process. Started as
    /usr/bin/python3 -I -B bare_fork.py RELEASE_DIR HOST_DIR WARMUP CALLS
it imports what a germline imports before its first fork (the release's
entry module, and the host's copy_host with its modules), then times, in
this process, os.fork() + the child calling noop and os._exit(0) + waitpid,
WARMUP + CALLS times; prints the last CALLS times in ms, one per line.
No namespaces, no confinement, no broker, no messages."""
import importlib
import json
import os
import sys
import time


def main():
    release, host_dir, warm, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with open(release + "/manifest.json") as f:
        manifest = json.load(f)
    sys.path[:0] = [host_dir, release]
    module = importlib.import_module(manifest["entry"])
    import copy_host  # noqa: F401 — the germline's image holds it too

    noop, clock, out = module.noop, time.perf_counter, []
    for i in range(warm + n):
        t0 = clock()
        pid = os.fork()
        if pid == 0:
            noop(None)
            os._exit(0)
        os.waitpid(pid, 0)
        out.append((clock() - t0) * 1e3)
    sys.stdout.write("".join("%.4f\n" % ms for ms in out[warm:]))


if __name__ == "__main__":
    main()
