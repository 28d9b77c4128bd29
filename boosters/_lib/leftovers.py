"""Scratch files and folders that a killed process leaves behind, and how the next process
recognises and removes them.

A scratch path's name holds its owner's PID (``...-<pid>-...``) and the owner holds an
exclusive `flock` on it while it exists. A process killed by SIGKILL, the out-of-memory
killer or a power cut cannot remove its scratch paths, so the next one making such a
path in the same directory removes every match whose process no longer runs and whose
lock is free: never a live process's (the lock also protects a live process in another
PID namespace, e.g. another container sharing the directory; the kernel releases it when
its process dies). Out-of-core bin folders (`data/bin_files.py`) and the temporary files
of model saves (`io/atomic.py`) are such paths.
"""

from __future__ import annotations

import os
import re
import shutil

try:
    import fcntl
except ImportError:  # Windows: no flock; leftovers are not cleaned there (see `pid_runs`)
    fcntl = None  # type: ignore[assignment]  # checked before each use (`lock`)


def pid_runs(pid: int) -> bool:
    """Whether process `pid` runs (True where that cannot be told safely)."""
    if os.name == "nt" or pid <= 0 or pid == os.getpid():
        return True  # on Windows, os.kill(pid, 0) would terminate the process
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process; larger than any PID
        return False
    except PermissionError:  # another user's process
        return True
    return True


def lock(path_or_fd: str | int, blocking: bool) -> int | None:
    """A new descriptor holding an exclusive flock on the file or folder `path_or_fd` (a
    path, or an open descriptor, duplicated: the lock is then held on that descriptor's
    open file, even after it is closed, until the new one is), None where there is no
    flock. OSError when `blocking` is False and another process holds it."""
    if fcntl is None:
        return None
    fd = os.dup(path_or_fd) if isinstance(path_or_fd, int) else os.open(path_or_fd, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except OSError:
        os.close(fd)
        if not blocking:  # held by another process (or not lockable): left alone
            raise
        return None  # a file system without flock: the PID alone tells
    return fd


def remove_leftovers(parent: str, name: re.Pattern) -> list[str]:
    """Remove the entries of folder `parent` whose name matches `name` (its first group:
    the owner's PID) and whose owner no longer runs, files and folders; returns their paths."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        match = name.fullmatch(entry.name)
        if not match or entry.is_symlink() or pid_runs(int(match[1])):
            continue
        try:
            fd = lock(entry.path, blocking=False)
        except OSError:  # locked: its owner lives (in another PID namespace); or already gone
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
            removed.append(entry.path)
        except OSError:
            pass
        finally:
            if fd is not None:
                os.close(fd)
    return removed
