"""Content fingerprints: a result cached from an array is reused only while the array holds
the same values (a caller may change it in place)."""

from __future__ import annotations

import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_CHUNK_BYTES = 1 << 22  # crc32 runs at a few GB/s per thread (and releases the GIL)


def _chunks(arr: np.ndarray):
    if arr.flags.c_contiguous or arr.flags.f_contiguous:
        raw = arr.ravel(order="K").view(np.uint8)  # a view: the array's bytes in memory order
        for start in range(0, raw.size, _CHUNK_BYTES):
            yield raw[start:start + _CHUNK_BYTES]
    else:  # a strided view: copy a block of rows at a time
        rows = max(1, _CHUNK_BYTES // max(1, arr[:1].nbytes))
        for start in range(0, arr.shape[0], rows):
            yield np.ascontiguousarray(arr[start:start + rows])


def fingerprint(arr: np.ndarray, n_threads: int = 1) -> tuple:
    """Shape, dtype and a CRC-32 per 4 MiB of the contents: equal for equal arrays, and
    different after any change of a value but with probability 2**-32."""
    chunks = _chunks(arr)
    if n_threads > 1 and arr.nbytes > 2 * _CHUNK_BYTES:
        with ThreadPoolExecutor(n_threads) as pool:
            crcs = tuple(pool.map(zlib.crc32, chunks))
    else:
        crcs = tuple(map(zlib.crc32, chunks))
    return arr.shape, arr.dtype.str, crcs
