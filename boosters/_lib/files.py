"""Files read by path that must be regular files: opening a FIFO for reading blocks until
a writer comes (forever), a link to /dev/zero never ends, a directory cannot be read.
Used by the model loaders and savers (`io/atomic.py`) and the out-of-core sources
(`data/npy_file.py`, `data/block_sources.py`)."""

from __future__ import annotations

import os
import stat

NOT_REGULAR = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def require_regular(path: str, mode: int, what: str) -> None:
    """OSError naming `path` and what it is when `mode` (an ``st_mode``) is not a regular
    file's; `what` is the file's role, for example "a model file"."""
    if not stat.S_ISREG(mode):
        kind = next((name for is_kind, name in NOT_REGULAR if is_kind(mode)), "not a regular file")
        raise OSError(f"{path!r} is {kind}: {what} must be a regular file")


def require_regular_file(path: str, what: str) -> None:
    """OSError when the file at `path` (through its symbolic links) is missing or not a
    regular file, checked with a stat: nothing is opened."""
    require_regular(path, os.stat(path).st_mode, what)


def open_regular_file(path: str, what: str, buffering: int = -1):
    """The file at `path` opened for binary reading. OSError when it is not a regular
    file, checked before it is opened (opening a FIFO blocks) and again on the open file
    (opened without blocking, in case the path changed in between)."""
    require_regular_file(path, what)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    file = os.fdopen(fd, "rb", buffering=buffering)
    try:
        require_regular(path, os.fstat(file.fileno()).st_mode, what)
    except BaseException:
        file.close()
        raise
    return file
