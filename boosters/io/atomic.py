"""Model files on disk: written so that they are never seen half-written (model saves,
checkpoints), and read only when they are regular files (a FIFO would block the reader,
a device would be read or replaced)."""

from __future__ import annotations

import os
import re
import uuid

from boosters._lib import leftovers
from boosters._lib.files import open_regular_file, require_regular

_TEMPORARY = r"\.boosters-tmp-(\d+)-[0-9a-f]+"  # after the target's name: write_atomically's new files
_MODEL_FILE = "a model file"


def _path(path) -> str:
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    return os.fsdecode(path)


def write_target(path) -> str:
    """The file that `write_atomically(path, ...)` replaces: `path` with its symbolic links
    resolved (the links stay). OSError naming `path` when that file exists and is not a
    regular file (a directory, FIFO, device or socket): it is refused, never replaced."""
    path = _path(path)
    target = os.path.realpath(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:  # a new file (or a dangling link's target)
        return target
    require_regular(path, mode, _MODEL_FILE)
    return target


def write_atomically(path, data: bytes) -> None:
    """Write `data` to a new file beside the file at `path` (str or path-like; through its
    symbolic links, see `write_target`), flush it to disk, then rename it over that file
    (atomic on POSIX and Windows): a reader sees the old file or the new one, never part
    of one, even when the process dies or Ctrl-C arrives mid-write.

    The new file is ``<target>.boosters-tmp-<pid>-<random>``, locked while it is written:
    one left by a killed process is removed by the next save of the same target
    (`_lib/leftovers.py`)."""
    target = write_target(path)
    directory, name = os.path.split(target)
    leftovers.remove_leftovers(directory or ".", re.compile(re.escape(name) + _TEMPORARY))
    # in the target's directory: the rename stays atomic
    temporary = f"{target}.boosters-tmp-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    # os.open, not tempfile.mkstemp: the file gets the umask's mode (0644), as open() gives it
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    locked = None
    try:
        # through fd, not by opening the path again: another process's cleaning could remove
        # it in between; then held until after the rename, and left alone by any cleaning
        locked = leftovers.lock(fd, blocking=True)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    finally:
        if locked is not None:
            os.close(locked)


def read_regular_file(path) -> bytes:
    """The bytes of the file at `path` (str or path-like). OSError naming `path` when it is
    not a regular file (a directory, FIFO, device or socket): see
    `_lib.files.open_regular_file`."""
    with open_regular_file(_path(path), _MODEL_FILE) as f:
        return f.read()
