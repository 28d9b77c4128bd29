"""Writing a file so that it is never seen half-written (model saves, checkpoints)."""

from __future__ import annotations

import os
import uuid


def write_atomically(path, data: bytes) -> None:
    """Write `data` to a new file beside `path` (str or path-like), flush it to disk, then
    rename it over `path` (atomic on POSIX and Windows): a reader sees the old file or the
    new one, never part of one, even when the process dies or Ctrl-C arrives mid-write."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fsdecode(path)
    temporary = f"{path}.{uuid.uuid4().hex[:12]}.tmp"
    # os.open, not tempfile.mkstemp: the file gets the umask's mode (0644), as open() gives it
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
