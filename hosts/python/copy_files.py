"""copy_files: a copy's file items (SPEC §11; docs/mcp.md "File items").

open(), io.open and os.open are replaced in every loaded module by _open and
_os_open below (copy_host.prepare); copy_host.run calls set_files with each
call message. Outside a copy (_files is None) they are the originals."""

import base64
import errno
import io
import os

_files = None  # the copy's file items: {absolute path: bytes, or None outside its view}
# the originals, taken when copy_host imports this module (before prepare);
# copy_host._replace_everywhere skips this module, so they stay the originals
_real_open, _real_os_open = io.open, os.open

# A copy never gains file access its germline lacked (Landlock layers only
# restrict), and the germline may not read the user's files (A2). So the
# broker reads an item's file and sends its contents in the call message
# (the paper's "view's items as memfd files"); here open(), io.open,
# os.open and pathlib serve exactly those paths from a fresh memfd holding
# the contents. An item outside the copy's view raises PermissionError
# (EACCES), as Landlock would; any other path goes to the real open, where
# the minimal root and Landlock decide (the user's files are in neither:
# such a path does not exist in the copy, FileNotFoundError).

_WRITE_MODES = set("wax+")


def _item_path(file):
    if _files is None or isinstance(file, int):
        return None
    try:
        path = os.fsdecode(os.fspath(file))
    except TypeError:
        return None
    path = os.path.normpath(path if path.startswith("/") else os.path.join(os.getcwd(), path))
    return path if path in _files else None


def _deny(path):
    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)


def _memfd(data):
    fd = os.memfd_create("germline-item", os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _open(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None,
          closefd=True, opener=None):
    path = _item_path(file)
    if path is None:
        return _real_open(file, mode, buffering, encoding, errors, newline, closefd, opener)
    data = _files[path]
    if data is None or not _WRITE_MODES.isdisjoint(mode):
        _deny(path)
    f = _real_open(_memfd(data), mode, buffering, encoding, errors, newline, True)
    raw = getattr(getattr(f, "buffer", f), "raw", f)
    try:
        raw.name = path
    except (AttributeError, TypeError):
        pass
    return f


def _os_open(path, flags, mode=0o777, *, dir_fd=None):
    p = _item_path(path) if dir_fd is None else None
    if p is None:
        return _real_os_open(path, flags, mode, dir_fd=dir_fd)
    data = _files[p]
    if data is None or flags & (os.O_ACCMODE | os.O_CREAT | os.O_TRUNC | os.O_APPEND):
        _deny(p)
    return _memfd(data)


def set_files(msg):
    """The file items of a call message: absolute item names."""
    global _files
    files = {}
    for it in msg.get("items") or []:
        name = it.get("name")
        if isinstance(name, str) and name.startswith("/"):
            files[name] = None if it.get("view") is False else base64.b64decode(it.get("data") or "")
    _files = files
