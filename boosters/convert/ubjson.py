"""A bounded reader of Universal Binary JSON (ubjson.org, big-endian), enough for the
.ubj models XGBoost writes, with no dependency.

A hostile input is a ValueError, never a crash, a hang or a huge allocation: nesting is
limited, and every count is checked against the bytes left before anything is allocated
(an element takes at least one byte). Strongly typed numeric arrays (``[$d#L<n>...``,
XGBoost's node arrays) become NumPy arrays; everything else becomes Python values as
`json.loads` gives them.
"""

from __future__ import annotations

import struct
from typing import NoReturn

import numpy as np

MAX_DEPTH = 100
# marker -> big-endian NumPy dtype of the numbers UBJSON has
NUMBER_DTYPES = {b"i": ">i1", b"U": ">u1", b"I": ">i2", b"l": ">i4", b"L": ">i8", b"d": ">f4", b"D": ">f8"}
_STRUCTS = {marker: struct.Struct(">" + code) for marker, code in zip(NUMBER_DTYPES, "bBhiqfd")}


def loads(data: bytes):
    """The value UBJSON `data` encodes; ValueError("not valid UBJSON: ...") otherwise.

    Parameters
    ----------
    data : bytes
        One UBJSON value (an XGBoost .ubj model is one object), nothing after it.

    Returns
    -------
    object
        dicts, lists, str, int, float, bool, None, and 1-D NumPy arrays for typed
        numeric arrays.
    """
    reader = _Reader(bytes(data))
    value = reader.value(reader.marker(), 0)
    if reader.pos != len(reader.data):
        raise ValueError(f"not valid UBJSON: {len(reader.data) - reader.pos} bytes after the value")
    return value


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def fail(self, what: str) -> NoReturn:
        raise ValueError(f"not valid UBJSON: {what} at byte {self.pos}")

    def take(self, n: int) -> bytes:
        if n < 0 or n > len(self.data) - self.pos:
            self.fail(f"{n} bytes wanted, {len(self.data) - self.pos} left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def marker(self) -> bytes:
        """The next marker, skipping no-ops (N)."""
        while True:
            m = self.take(1)
            if m != b"N":
                return m

    def number(self, marker: bytes):
        fmt = _STRUCTS[marker]
        value = fmt.unpack(self.take(fmt.size))[0]
        return float(value) if marker in (b"d", b"D") else int(value)

    def count(self, marker: bytes | None = None) -> int:
        """A length: an integer of any integer type, >= 0 and at most the bytes left."""
        marker = self.marker() if marker is None else marker
        if marker not in (b"i", b"U", b"I", b"l", b"L"):
            self.fail(f"a length must be an integer, got marker {marker!r}")
        n = self.number(marker)
        if n < 0 or n > len(self.data) - self.pos:
            self.fail(f"length {n} is negative or past the end")
        return n

    def string(self) -> str:
        raw = self.take(self.count())
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.fail("a string is not UTF-8")

    def value(self, marker: bytes, depth: int):
        if marker in _STRUCTS:
            return self.number(marker)
        if marker == b"Z":
            return None
        if marker in (b"T", b"F"):
            return marker == b"T"
        if marker == b"S":
            return self.string()
        if marker == b"C":
            return self.take(1).decode("latin-1")
        if marker in (b"[", b"{"):
            if depth >= MAX_DEPTH:
                self.fail(f"containers nested deeper than {MAX_DEPTH}")
            return self.array(depth + 1) if marker == b"[" else self.object(depth + 1)
        self.fail(f"unknown or unsupported marker {marker!r}")  # H (high precision) included

    def container_header(self) -> tuple[bytes | None, int | None]:
        """The optional ($ type) and (# count) of a container."""
        kind, n = None, None
        if self.data[self.pos:self.pos + 1] == b"$":
            self.pos += 1
            kind = self.take(1)
            if kind not in NUMBER_DTYPES:
                self.fail(f"typed containers of {kind!r} are not supported")
            if self.take(1) != b"#":
                self.fail("a typed container needs a count")
        elif self.data[self.pos:self.pos + 1] == b"#":
            self.pos += 1
        else:
            return None, None
        return kind, self.count()

    def array(self, depth: int):
        kind, n = self.container_header()
        if kind is not None:
            assert n is not None  # a typed container has a count (container_header)
            dtype = np.dtype(NUMBER_DTYPES[kind])
            if n > (len(self.data) - self.pos) // dtype.itemsize:
                self.fail(f"typed array of {n} items is past the end")
            return np.frombuffer(self.take(n * dtype.itemsize), dtype=dtype).astype(dtype.newbyteorder("="))
        if n is not None:
            return [self.value(self.marker(), depth) for _ in range(n)]
        out = []
        while (m := self.marker()) != b"]":
            out.append(self.value(m, depth))
        return out

    def object(self, depth: int):
        kind, n = self.container_header()
        if kind is not None:
            self.fail("typed objects are not supported")
        out = {}
        if n is not None:
            for _ in range(n):
                key = self.string()
                out[key] = self.value(self.marker(), depth)
            return out
        while self.data[self.pos:self.pos + 1] != b"}":
            if self.pos >= len(self.data):
                self.fail("an object is not closed")
            if self.data[self.pos:self.pos + 1] == b"N":
                self.pos += 1
                continue
            key = self.string()
            out[key] = self.value(self.marker(), depth)
        self.pos += 1
        return out
