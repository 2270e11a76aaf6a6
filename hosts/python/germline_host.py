"""The germline's Python main (paper §VI "Germline and copies"; SPEC §10).

Started by the broker's verified launch as
    python3 -Ps -B <host_dir>/germline_host.py <release_dir> <entry> <sec> <usec> <seed> 1
(PYTHONHASHSEED in the broker's environment; `-I` and no twin for a
witness from before issue 14), with stdio on /dev/null and the control
socket on fd 3. It lets copy_host install its shims under the import twin
(copy_host.prepare), imports the release's entry module once (the release's
initialisation, before any user data exists: assumption A2) and hands over to
_germline.serve, which only serves fork requests and returns in a copy,
with the copy's channel, to copy_host.run.
Only glue lives here; the security-critical parts are in C (_germline.c).

    python3 -I -B <host_dir>/germline_host.py --session <release_dir> <entry>

is the unconfined session process of the baselines sigpin and sigifc (SPEC
§6; paper §VII-A "Runtimes": Sig+Pin, Sig+IFC): started by gl-run without any
restriction, its channel on fd 3, it imports the entry module and serves
call after call (copy_host.run in session mode) until the broker closes the
channel. No _germline, no fork server, no confinement.
"""
import os
import sys

CTL_FD = 3


def _short_traceback(exc):
    """A short, printable account of an import failure: the last frames
    and the exception, ASCII only (the broker sanitizes it again)."""
    import traceback

    lines = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4)
    text = "".join(lines)[-3000:]
    return text.encode("ascii", "backslashreplace").decode("ascii")


def _is_mcp(release_dir):
    """Is the release an MCP server ("protocol": "mcp-stdio", SPEC §11)?
    Read from the release's own manifest, which the broker verified before
    the launch; the host is not trusted with it anyway (docs/mcp.md)."""
    import json

    try:
        with open(os.path.join(release_dir, "manifest.json"), "rb") as f:
            return json.loads(f.read(4 << 20)).get("protocol") == "mcp-stdio"
    except (OSError, ValueError, AttributeError):
        return False


def _mcp_setup(copy_host, entry):
    # Loaded in the germline, so that no copy pays for the import.
    import mcp_host

    mcp_host.prepare()
    copy_host.MCP_ENTRY = entry


def _operator_args():
    """The operator's public args for the release (SPEC §4 "config";
    docs/secrets.md) as its sys.argv[1:], in place of the host's own
    arguments; out of os.environ before the release runs."""
    args = os.environ.pop("GL_RELEASE_ARGS", None)
    if args is not None:
        import json

        sys.argv[1:] = [str(a) for a in json.loads(args)]


def main():
    host_dir = os.path.dirname(os.path.abspath(__file__))
    session = sys.argv[1:2] == ["--session"]
    if session:
        del sys.argv[1]
    release_dir, entry = sys.argv[1], sys.argv[2]
    mcp = _is_mcp(release_dir)
    if session:  # the baselines' persistent, unconfined process
        _operator_args()
        sys.path[:0] = [host_dir, release_dir]
        import importlib

        module = importlib.import_module(entry)
        import copy_host

        copy_host.prepare()
        if mcp:
            _mcp_setup(copy_host, entry)
        copy_host.run(CTL_FD, module)
    # The import twin (paper §IV-F, A4): <sec> <usec> <seed hex> after the
    # entry, from the broker (gl-run: drawn at launch; gl-replay: the
    # witness's), then 1 when "/" is the minimal root (0 only in a test
    # build's GL_OFF_ROOT; 2, a test build's GL_TEST_SCAN_TWIN_OFF: the
    # minimal root, os.scandir's entries not retimed). Taken out of
    # sys.argv before the release runs.
    import_twin, minimal_root, scan = None, False, True
    if len(sys.argv) == 7:
        sec, usec, seed, root = sys.argv[3:7]
        import_twin, minimal_root = (int(sec) + int(usec) / 1e6, seed), root in ("1", "2")
        scan = root != "2"
        del sys.argv[3:]
    _operator_args()
    # The operator's weaker profile is for _germline only, not for the
    # release to read (gl-replay's germline has none): out of os.environ.
    profile = os.environ.pop("GL_PROFILE", None)
    # Each copy takes its lane's host uid (docs/sandbox.md "Host uids"):
    # for _germline too, checked from outside whatever the release does.
    copy_uids = os.environ.pop("GL_COPY_UIDS", None) == "1"
    # -I (or -Ps) leaves the script's directory out of sys.path: the host
    # first (for _germline and copy_host), then the release root.
    sys.path[:0] = [host_dir, release_dir]
    import _germline

    # Held in locals, before the release's code runs.
    serve, report_error = _germline.serve, _germline.report_error
    import importlib

    if import_twin is not None:
        # The copy side's shims (clocks, randomness, http.client) go in
        # before the release's import, answering from the import twin: the
        # import reads no real clock nor kernel randomness through Python.
        try:
            import copy_host

            copy_host.prepare(import_twin, minimal_root, scan)
        except BaseException as exc:  # noqa: BLE001
            report_error(CTL_FD, "copy_host: %s" % _short_traceback(exc))
            os._exit(1)
    try:
        module = importlib.import_module(entry)
    except BaseException as exc:  # noqa: BLE001 — any failure refuses the release
        report_error(CTL_FD, "import %s: %s" % (entry, _short_traceback(exc)))
        os._exit(1)
    try:
        # Without an import twin the shims are installed here, after the
        # release's import; either way before the first fork, and names
        # the release took are replaced too (copy_host.imported).
        import copy_host

        copy_host.prepare()
        copy_host.imported()
        if mcp:
            _mcp_setup(copy_host, entry)
    except BaseException as exc:  # noqa: BLE001
        report_error(CTL_FD, "copy_host: %s" % _short_traceback(exc))
        os._exit(1)
    fd = serve(CTL_FD, profile, copy_uids)  # returns only in a copy
    copy_host.run(fd, module)


if __name__ == "__main__":
    main()
