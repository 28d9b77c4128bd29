"""A 2-D numeric ``.npy`` file read a block of rows at a time with ordinary reads.

Not through a memory map: a mapped file truncated while it is read kills the process with
SIGBUS; a read returns short, raised here as a ValueError. A block read is anonymous
memory (a mapped one was page cache), so a block is also kept under `READ_BYTES`. The
header is checked once, with errors naming the file (not a regular file, since opening a
FIFO blocks; a damaged header, a ``.npz`` archive, a non-numeric or non-2-D array, a file
shorter than its header says); each later pass first checks that the file still has the
size it had (`NpyFile.blocks`).
"""

from __future__ import annotations

import os

import numpy as np

from boosters._lib.files import open_regular_file
from boosters.data.passes import check_size

_ZIP_MAGIC = b"PK\x03\x04"
_NPY_FILE = "a .npy file"
READ_BYTES = 1 << 23  # at most this much of the file in memory at a time (unless a row is larger)


class NpyFile:
    """The header of a ``.npy`` file holding a 2-D numeric array, and its rows by blocks.

    Parameters
    ----------
    path : str or path
        The file.
    name : str
        The argument that gave it, for messages.
    """

    def __init__(self, path, name: str = "path"):
        self.path, self.name = os.fspath(path), name
        try:
            with open_regular_file(self.path, _NPY_FILE) as file:
                self.shape, self.fortran, self.dtype, self.offset = self._header(file)
                self.size = os.fstat(file.fileno()).st_size
        except OSError as exc:
            raise ValueError(f"{name}: cannot read {self.path!r} as a .npy file: {exc}") from None
        if self.dtype.kind not in "biuf":
            raise ValueError(f"{name}: {self.path!r} holds dtype {self.dtype}; need a numeric array (bool, int or "
                             f"float)")
        if len(self.shape) != 2:
            raise ValueError(f"{name}: {self.path!r} holds an array of shape {self.shape}; need 2-D "
                             f"(n_rows, n_features)")
        self.nbytes = self.shape[0] * self.shape[1] * self.dtype.itemsize
        if self.size < self.offset + self.nbytes:
            raise ValueError(f"{name}: {self.path!r} has {self.size} bytes, its header gives an array of "
                             f"{self.offset + self.nbytes}: the file is truncated")

    def _header(self, file):
        """(shape, Fortran order, dtype, offset of the data) from the header."""
        magic = file.read(len(_ZIP_MAGIC))
        if magic == _ZIP_MAGIC:
            raise ValueError(f"{self.name}: {self.path!r} is a .npz archive, which is not supported: pass a .npy "
                             f"file holding one array (np.save(path, X))")
        file.seek(0)
        try:
            version = np.lib.format.read_magic(file)
            read = {(1, 0): np.lib.format.read_array_header_1_0,
                    (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read is None:
                raise ValueError(f"format version {version} (boosters reads 1.0 and 2.0)")
            shape, fortran, dtype = read(file)
        except Exception as exc:  # noqa: BLE001 (numpy's parser raises ValueError, SyntaxError, TokenError, ...)
            raise ValueError(f"{self.name}: {self.path!r} is not a .npy file or its header is damaged: "
                             f"{exc}") from None
        return tuple(shape), bool(fortran), np.dtype(dtype), file.tell()

    def blocks(self, block_rows: int):
        """(first row, rows) of each block of at most `block_rows` rows (and `READ_BYTES`),
        read anew; ValueError when the file's size changed since it was opened, or it ends
        early."""
        row_bytes = max(1, self.shape[1] * self.dtype.itemsize)
        block_rows = max(1, min(block_rows, READ_BYTES // row_bytes))
        try:
            file = open_regular_file(self.path, _NPY_FILE, buffering=0)
        except OSError as exc:
            raise ValueError(f"{self.name}: cannot read {self.path!r} again: {exc}") from None
        with file:
            check_size(self.name, self.path, self.size, os.fstat(file.fileno()).st_size)
            for start in range(0, self.shape[0], block_rows):
                yield start, self._read(file, start, min(self.shape[0], start + block_rows))

    def _read(self, file, start: int, stop: int) -> np.ndarray:
        n_rows, n_features = self.shape
        itemsize = self.dtype.itemsize
        out = np.empty((stop - start, n_features), dtype=self.dtype, order="F" if self.fortran else "C")
        if self.fortran:  # a column's rows are contiguous in the file
            for j in range(n_features):
                self._read_into(file, out[:, j], self.offset + (j * n_rows + start) * itemsize)
        else:
            self._read_into(file, out, self.offset + start * n_features * itemsize)
        return out if self.dtype.isnative else out.astype(self.dtype.newbyteorder("="))

    def _read_into(self, file, out: np.ndarray, position: int) -> None:
        view = out.data.cast("B")  # out: C-contiguous
        file.seek(position)
        done = 0
        while done < len(view):
            n = file.readinto(view[done:])
            if not n:
                raise ValueError(f"{self.name}: {self.path!r} ends at byte {position + done}, before the "
                                 f"{self.offset + self.nbytes} bytes its header gives: it was truncated while "
                                 f"being read")
            done += n
