"""The matrix harness's machinery (testbed/matrix.py; docs/security-matrix.md):
the processes it starts, each trial's world and signed releases, and one set
of sinks per worker. Standard library only.

Every process is started in a process group of its own and registered in
Procs, so that Procs.kill_all() — on success, failure, SIGINT or SIGTERM —
ends every one of them and their descendants (gl-run's germlines and copies
die with gl-run: PR_SET_PDEATHSIG).
"""

import hashlib
import hmac
import json
import os
import shutil
import signal
import subprocess
import threading
import time

TESTBED = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTBED)
PY = "/usr/bin/python3"


class Stopped(Exception):
    """The harness is stopping (a signal, or another worker failed)."""


def set_subreaper():
    """Make this process the child subreaper (prctl PR_SET_CHILD_SUBREAPER),
    so that a process a release leaves behind (docs-helper's double-forked
    helper: re-parented away from its germline) becomes our child, where
    Procs.sweep finds it. Returns False where the prctl failed."""
    import ctypes
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _proc_stat(pid):
    """(state, pgid) of a process, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            st = f.read().decode("latin-1")
    except OSError:
        return None
    f = st[st.rindex(")") + 2:].split()
    return f[0], int(f[2])


class Procs:
    """Registry of the process groups the harness started."""

    def __init__(self):
        self.lock = threading.Lock()
        self.groups = {}
        self.killed = set()  # the groups done() or kill_all() have killed
        self.stopping = False

    def orphans(self):
        """Our children that we did not start (re-parented to us as the
        subreaper), living ones only: [{"pid","comm","cwd"}]. Zombies are
        reaped; members of a group we killed are dying, not left behind."""
        out = []
        with self.lock:
            pids = set()
            for t in os.listdir("/proc/self/task"):
                try:
                    with open("/proc/self/task/%s/children" % t) as f:
                        pids |= {int(x) for x in f.read().split()}
                except OSError:
                    pass
            for pid in sorted(pids - set(self.groups)):
                st = _proc_stat(pid)
                if st is None or st[0] in "ZX":
                    try:
                        os.waitpid(pid, os.WNOHANG)
                    except ChildProcessError:
                        pass
                    continue
                if st[1] in self.killed:
                    continue
                info = {"pid": pid}
                for k, path in (("comm", "/proc/%d/comm"), ("cwd", "/proc/%d/cwd")):
                    try:
                        info[k] = (os.readlink(path % pid) if k == "cwd" else
                                   open(path % pid).read().strip())
                    except OSError:
                        info[k] = None
                out.append(info)
        return out

    def sweep(self, under=None):
        """Kill (SIGKILL) and reap every orphan whose working directory is
        under `under` (every orphan when None), and the children they leave
        in turn; returns the ones found."""
        found = []
        for _ in range(50):
            these = [o for o in self.orphans()
                     if under is None or (o["cwd"] or "").startswith(under.rstrip("/") + "/")]
            if not these:
                break
            for o in these:
                try:
                    os.kill(o["pid"], signal.SIGKILL)
                    os.waitpid(o["pid"], 0)
                except (ProcessLookupError, ChildProcessError):
                    pass
            found += these
        return found

    def popen(self, argv, **kw):
        with self.lock:
            if self.stopping:
                raise Stopped()
            p = subprocess.Popen(argv, process_group=0, **kw)
            self.groups[p.pid] = p
        return p

    def done(self, p):
        """p has been waited for: forget its group (after killing any
        descendant left in it)."""
        with self.lock:
            self.groups.pop(p.pid, None)
            self.killed.add(p.pid)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass

    def run(self, argv, timeout=300, check=True, input=None, **kw):
        """Run argv to completion (stdin: `input` bytes, else /dev/null);
        returns (rc, stdout bytes, stderr bytes)."""
        p = self.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL, **kw)
        try:
            out, err = p.communicate(input=input, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.done(p)
            p.communicate()
            raise RuntimeError("%s: timed out after %ss" % (argv[0], timeout))
        finally:
            self.done(p)
        if self.stopping:
            raise Stopped()
        if check and p.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), p.returncode,
                                                        err.decode(errors="replace")[-2000:]))
        return p.returncode, out, err

    def kill_all(self, first=signal.SIGTERM, grace=2.0):
        """Stop everything: `first` to every group, SIGKILL after `grace` s."""
        with self.lock:
            self.stopping = True
            groups = dict(self.groups)
            self.killed |= set(groups)
        for pid in groups:
            try:
                os.killpg(pid, first)
            except OSError:
                pass
        end = time.monotonic() + grace
        for p in groups.values():
            try:
                p.wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for pid in groups:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        for p in groups.values():
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        # the leaders are reaped; wait for the rest of each group (a
        # sanitizer build takes a while to die) so that none outlives us
        end = time.monotonic() + 15
        left = set(groups)
        while left and time.monotonic() < end:
            for pid in list(left):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    left.discard(pid)
            if left:
                time.sleep(0.05)
        # and whatever a release left behind, re-parented to us (subreaper)
        self.sweep()


def derive(seed, what, n=16):
    """n hex digits derived from the matrix seed: HMAC-SHA256(seed, what)."""
    return hmac.new(str(seed).encode(), what.encode(), hashlib.sha256).hexdigest()[:n]


def rmtree(path):
    """Remove a tree that holds read-only installed releases."""
    if not os.path.lexists(path):
        return
    for d, dirs, _ in os.walk(path):
        for x in dirs:
            try:
                os.chmod(os.path.join(d, x), 0o700)
            except OSError:
                pass
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass
    shutil.rmtree(path, ignore_errors=True)


def copy_home(src, dst):
    """A fresh GL_HOME: a copy of the trial's template (pinned root and
    installed releases), so no state, slot, witness or damp state carries over."""
    shutil.copytree(src, dst, symlinks=True)


class Trial:
    """One trial: a fresh world, a fresh publisher key pair, the releases
    signed with it and installed once into a template GL_HOME."""

    def __init__(self, procs, work, seed, index, bins, assembled, releases):
        self.index = index
        self.dir = os.path.join(work, "trial-%d" % index)
        self.world_seed = "%s/trial-%d" % (seed, index)
        self.world = os.path.join(self.dir, "world")
        self.home_template = os.path.join(self.dir, "glhome")
        self.pub = os.path.join(self.dir, "pub")
        os.makedirs(self.pub)
        env = dict(os.environ, GL_HOME=self.home_template, HOME=self.dir)
        env.pop("GL_PASSPHRASE", None)
        run = procs.run
        run([PY, os.path.join(TESTBED, "world.py"), "--seed", self.world_seed,
             "--out", self.world], env=env)
        sign = os.path.join(bins, "gl-sign")
        verify = os.path.join(bins, "gl-verify")
        for k in ("root", "tk"):
            run([sign, "keygen", "--no-passphrase", k], cwd=self.pub, env=env)
        run([sign, "init", "repo", "--root-key", "root", "--targets-key", "tk"],
            cwd=self.pub, env=env)
        run([verify, "pin", os.path.join(self.pub, "repo")], env=env)
        self.sha = {}
        for name in releases:
            archive = name + ".tar.gz"
            run([sign, "pack", os.path.join(assembled, name), archive], cwd=self.pub, env=env)
            run([sign, "add", "repo", "--key", "tk", archive], cwd=self.pub, env=env)
            _, out, _ = run([verify, "install", os.path.join(self.pub, "repo"), archive],
                            cwd=self.pub, env=env)
            self.sha[name] = json.loads(out)["release"]["sha256"]
        with open(os.path.join(self.world, "world.json"), encoding="utf-8") as f:
            self.world_json = json.load(f)
        with open(os.path.join(self.world, "policy.json"), encoding="utf-8") as f:
            self.policy = json.load(f)
        self.items = {i["name"]: i for i in self.world_json["items"]}

    def policy_for(self, sinks):
        """The trial's policy with the routes of one worker's sinks (written
        once per trial and worker)."""
        path = os.path.join(self.dir, "policy-w%d.json" % sinks.index)
        if not os.path.exists(path):
            pol = dict(self.policy, routes=dict(sinks.routes))
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                json.dump(pol, f, indent=1, sort_keys=True)
            os.rename(path + ".tmp", path)
        return path


class Sinks:
    """One testbed/sinks.py process for one worker, for the whole matrix:
    the destinations are the same in every trial. A run's records are the
    bytes its logs grew by while it ran (mark/slice)."""

    def __init__(self, procs, work, index, world_dir, attackers, hold=None):
        self.index = index
        self.dir = os.path.join(work, "sinks-w%d" % index)
        self.logs = os.path.join(self.dir, "logs")
        os.makedirs(self.logs)
        for f in ("world.json", "policy.json"):
            shutil.copyfile(os.path.join(world_dir, f), os.path.join(self.dir, f))
        pidfile = os.path.join(self.dir, "sinks.pid")
        argv = [PY, os.path.join(TESTBED, "sinks.py"), "--world", self.dir,
                "--logs", self.logs, "--pidfile", pidfile]
        for a in attackers:
            argv += ["--attacker", a]
        for h, sec in sorted((hold or {}).items()):  # sinks.py --hold
            argv += ["--hold", "%s=%s" % (h, sec)]
        self.procs = procs
        self.proc = procs.popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=open(os.path.join(self.dir, "sinks.err"), "wb"))
        end = time.monotonic() + 30
        while not os.path.exists(pidfile):
            if self.proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError("sinks.py did not start (see %s/sinks.err)" % self.dir)
            time.sleep(0.05)
        with open(os.path.join(self.dir, "routes.json"), encoding="utf-8") as f:
            self.routes = json.load(f)

    def mark(self):
        """The current size of every log."""
        out = {}
        for h in self.routes:
            p = os.path.join(self.logs, h + ".jsonl")
            out[h] = os.path.getsize(p) if os.path.exists(p) else 0
        return out

    def slice(self, mark, dest):
        """The records appended since `mark`, as [(host, record)], also
        written to dest/HOST.jsonl (oracle.py --logs reads them there)."""
        os.makedirs(dest, exist_ok=True)
        recs = []
        for h, off in mark.items():
            p = os.path.join(self.logs, h + ".jsonl")
            if not os.path.exists(p):
                continue
            with open(p, "rb") as f:
                f.seek(off)
                data = f.read()
            if data:
                with open(os.path.join(dest, h + ".jsonl"), "wb") as f:
                    f.write(data)
                for line in data.decode("utf-8").splitlines():
                    if line.strip():
                        rec = json.loads(line)
                        recs.append((rec.get("sink") or h, rec))
        return recs

    def stop(self):
        try:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.procs.done(self.proc)
