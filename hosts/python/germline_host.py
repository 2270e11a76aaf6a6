"""The germline's Python main (paper §VI "Germline and copies"; SPEC §10).

Started by the broker's verified launch as
    python3 -I -B <host_dir>/germline_host.py <release_dir> <entry>
with stdio on /dev/null and the control socket on fd 3. It imports the
release's entry module once (the release's initialisation, before any user
data exists: assumption A2), then lets copy_host install its shims (copy_host.prepare) and hands over to
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


def main():
    host_dir = os.path.dirname(os.path.abspath(__file__))
    session = sys.argv[1:2] == ["--session"]
    if session:
        del sys.argv[1]
    release_dir, entry = sys.argv[1], sys.argv[2]
    mcp = _is_mcp(release_dir)
    if session:  # the baselines' persistent, unconfined process
        sys.path[:0] = [host_dir, release_dir]
        import importlib

        module = importlib.import_module(entry)
        import copy_host

        copy_host.prepare()
        if mcp:
            _mcp_setup(copy_host, entry)
        copy_host.run(CTL_FD, module)
    # -I leaves the script's directory out of sys.path: the host first (for
    # _germline and copy_host), then the release root.
    sys.path[:0] = [host_dir, release_dir]
    import _germline

    # Held in locals, before the release's code runs.
    serve, report_error = _germline.serve, _germline.report_error
    import importlib

    try:
        module = importlib.import_module(entry)
    except BaseException as exc:  # noqa: BLE001 — any failure refuses the release
        report_error(CTL_FD, "import %s: %s" % (entry, _short_traceback(exc)))
        os._exit(1)
    try:
        # The copy side's shims (clocks, randomness, http.client) are
        # installed here, once, after the release's import and before the
        # first fork, so that names the release took are replaced too.
        import copy_host

        copy_host.prepare()
        if mcp:
            _mcp_setup(copy_host, entry)
    except BaseException as exc:  # noqa: BLE001
        report_error(CTL_FD, "copy_host: %s" % _short_traceback(exc))
        os._exit(1)
    fd = serve(CTL_FD)  # returns only in a copy
    copy_host.run(fd, module)


if __name__ == "__main__":
    main()
