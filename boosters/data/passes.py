"""The passes over an out-of-core source read the same data.

The first pass keeps the labels and weights of every row; the later ones read only the
features. A source that gave other rows on a later pass, or the same rows in another
order, would train the first pass's labels against other rows' features: so each block of
the first pass leaves a mark (a CRC-32 fingerprint of its features, of the dictionary
encoding of its category columns and of its labels and weights, see `fingerprint`), and
each later pass's block must leave the same mark. The fingerprint costs one read of the
block at a few GB/s, small against binning it. A file source is also checked for its size
before each pass (a truncated file is refused before it is read).
"""

from __future__ import annotations

import os
import zlib

import numpy as np

from boosters.data.fingerprint import fingerprint


def content_mark(values, n_threads: int = 1) -> tuple:
    """A fingerprint of an array's values (object arrays by their repr)."""
    arr = np.asarray(values)
    if arr.dtype.hasobject:
        return arr.shape, "object", zlib.crc32(repr(arr.tolist()).encode())
    return fingerprint(arr, n_threads)


def check_size(name: str, path: str, then: int, now: int | None = None) -> None:
    """ValueError when a source file's size (`now`, else read here) changed since the
    Dataset was made (checked before a pass reads it), or it cannot be read."""
    if now is None:
        try:
            now = os.stat(path).st_size
        except OSError as exc:
            raise ValueError(f"{name}: cannot read {path!r} again: {exc}") from None
    if now != then:
        raise ValueError(f"{name}: {path!r} changed since the Dataset was made ({then} bytes then, {now} now); "
                         f"out-of-core training reads it again on each pass, so it must stay as it was")


class PassMarks:
    """The marks of the first pass's blocks, and the check of a later pass's."""

    def __init__(self, source: str):
        self.source = source
        self.first: list[dict] = []

    def record(self, mark: dict) -> None:
        """The next block's mark, on the first pass."""
        self.first.append(mark)

    def check(self, index: int, mark: dict, where: str) -> None:
        """ValueError when block `index` of a later pass differs from the first pass's."""
        if index >= len(self.first):
            raise ValueError(f"{self.source} gave more than {len(self.first)} blocks on a later pass, "
                             f"{len(self.first)} on the first; {self._rule}")
        first = self.first[index]
        differ = [part for part in sorted(first.keys() | mark.keys()) if first.get(part) != mark.get(part)]
        if differ:
            parts = f"{', '.join(differ[:-1])} and {differ[-1]}" if len(differ) > 1 else differ[0]
            raise ValueError(f"{where} (block {index}) differs from the first pass over {self.source}: its "
                             f"{parts} changed (other values, or the rows in another order); "
                             f"{self._rule}")

    def check_count(self, n_blocks: int) -> None:
        """ValueError when a later pass ended after fewer blocks than the first."""
        if n_blocks != len(self.first):
            raise ValueError(f"{self.source} gave {n_blocks} blocks on a later pass, {len(self.first)} on the first; "
                             f"{self._rule}")

    _rule = ("out-of-core training reads the source three times or more and must get the same rows on every pass, "
             "in the same order")
