"""Where an out-of-core Dataset's bin files go, how they are cleaned, and how they are
made so that a full disk raises an OSError instead of killing the process.

Each Dataset writes into a folder of its own, ``boosters-bins-<pid>-<random>``, in the
``directory`` it is given or else the system's temporary directory (`tempfile.gettempdir`,
i.e. ``$TMPDIR``), and holds an exclusive `flock` on that folder while it is open. The
folder is removed when the Dataset is closed or garbage collected; the folder of a killed
process is removed by the next Dataset made in the same directory (`_lib/leftovers.py`:
never a live process's).

A bin file is a ``.npy`` file whose blocks are reserved on disk (`os.posix_fallocate`)
before it is mapped into memory: writing through a mapping into a sparse file on a full
file system would kill the process with SIGBUS; reserving fails with a clean ENOSPC,
raised as an OSError naming the directory and the bytes needed, and the file is removed.
"""

from __future__ import annotations

import errno
import io
import os
import re
import shutil
import tempfile

import numpy as np

from boosters._lib import leftovers

PREFIX = "boosters-bins-"
_NAME = re.compile(re.escape(PREFIX) + r"(\d+)-[a-z0-9_]+")
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


class BinDirectory:
    """A Dataset's own folder of bin files, locked while it exists (see the module notes)."""

    def __init__(self, parent: str):
        self._pid = os.getpid()
        for _ in range(3):  # another process's cleaning may remove a folder before it is locked
            self.path = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent)
            try:
                self._fd = leftovers.lock(self.path, blocking=True)
            except FileNotFoundError:  # removed before it was opened
                continue
            if self._fd is None or _same_inode(self.path, self._fd):
                return
            os.close(self._fd)  # removed between the open and the lock
        raise OSError(f"directory {parent!r}: could not make a bin folder (each one was removed at once)")

    def remove(self) -> None:
        """Remove the folder and its files, then release the lock (not in a forked child:
        the folder is its parent's)."""
        if os.getpid() != self._pid:
            return
        shutil.rmtree(self.path, ignore_errors=True)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def remove_leftovers(parent: str) -> list[str]:
    """Remove the bin folders in `parent` left by processes that no longer run; returns
    their paths."""
    return leftovers.remove_leftovers(parent, _NAME)


def _same_inode(path: str, fd: int) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def allocate_npy(path: str, dtype, shape: tuple[int, ...]) -> np.memmap:
    """A new ``.npy`` file of zeros mapped into memory (as `numpy.lib.format.open_memmap`
    with ``mode="w+"``), its blocks reserved on disk first: OSError (ENOSPC) naming the
    directory and the bytes needed when they do not fit, and no file left behind."""
    dtype = np.dtype(dtype)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": np.lib.format.dtype_to_descr(dtype),
                                                  "fortran_order": False, "shape": tuple(shape)})
    offset = len(header.getvalue())
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    try:
        with open(path, "wb") as file:
            file.write(header.getvalue())
            file.flush()
            _reserve(file, offset + nbytes)
    except OSError as exc:
        _remove_file(path)
        if exc.errno not in _NO_SPACE:
            raise
        directory = os.path.dirname(path)
        free = shutil.disk_usage(directory).free
        raise OSError(exc.errno, f"no room for the out-of-core bin files in {directory!r}: "
                                 f"{os.path.basename(path)} needs {offset + nbytes} bytes, {free} are free; "
                                 f"free some space or pass directory= (or set TMPDIR to) a folder with room") from None
    return np.memmap(path, dtype=dtype, mode="r+", offset=offset, shape=tuple(shape))


def _reserve(file, size: int) -> None:
    """Blocks on disk for the first `size` bytes of `file`: OSError (ENOSPC) when full."""
    try:
        os.posix_fallocate(file.fileno(), 0, size)
        return
    except AttributeError:  # no posix_fallocate (macOS, Windows)
        pass
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise
    chunk = bytes(1 << 20)  # write the zeros: as safe, slower
    file.seek(0, os.SEEK_END)
    for start in range(file.tell(), size, len(chunk)):
        file.write(chunk[:min(len(chunk), size - start)])
    file.flush()
    os.fsync(file.fileno())


def _remove_file(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
