"""The sources an out-of-core Dataset reads (data/out_of_core.py), each as a `read` callable
that starts a pass over it: every call yields the source's row blocks from the first one,
as (X, y, w, where) with X a 2-D array or a frame, the labels and weights of its rows (or
None) and how messages name the block. A source is an iterable of batches (arrays, tuples,
frames), a ``.npy`` file or a Parquet file."""

from __future__ import annotations

import numbers
import os

from boosters._lib.files import require_regular_file
from boosters.data.frames import frame_library
from boosters.data.npy_file import NpyFile
from boosters.data.passes import check_size
from boosters.data.validation import column_names

DEFAULT_BLOCK_ROWS = 65536
_PARQUET_FILE = "a Parquet file"


def check_block_rows(block_rows) -> int:
    """block_rows (rows a file is read by at a time): a positive int."""
    if isinstance(block_rows, bool) or not isinstance(block_rows, numbers.Integral) or block_rows < 1:
        raise ValueError(f"block_rows must be a positive int, got {block_rows!r}")
    return int(block_rows)


def check_label_weight(label, weight) -> None:
    """label and weight: column names (or None), and not the same column."""
    for value, name in ((label, "label"), (weight, "weight")):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a column name (str) or None, got {type(value).__name__}")
    if label is not None and label == weight:
        raise ValueError(f"label and weight are the same column {label!r}; give the weights in another column")


def _split_frame(batch, label, weight, where: str):
    """(features, labels, weights) of a frame batch whose label and weight are columns."""
    if type(batch).__name__ == "RecordBatch":
        import pyarrow  # a RecordBatch exists only when pyarrow does
        batch = pyarrow.Table.from_batches([batch])
    library = frame_library(batch)
    names = column_names(batch)
    assert names is not None  # the callers pass frames only
    taken = [c for c in (label, weight) if c is not None]
    for column in taken:
        if column not in names:
            raise ValueError(f"{where}: no column {column!r} (label or weight); columns are {names}")
    if library == "pyarrow":
        y, w = (None if c is None else batch.column(c).to_numpy() for c in (label, weight))
        features = batch.drop_columns(taken)
    elif library == "pandas":
        y, w = (None if c is None else batch[c].to_numpy() for c in (label, weight))
        features = batch.drop(columns=taken)
    else:
        y, w = (None if c is None else batch[c].to_numpy() for c in (label, weight))
        features = batch.drop(taken)
    return features, y, w


def batch_reader(batches, label, weight):
    """Reads `batches` (see `Dataset.from_batches`): arrays, (X, y, weights) tuples or frames
    with `label` and `weight` columns."""
    if callable(batches):
        def fresh():
            iterator = batches()
            if iterator is None:
                raise ValueError("batches() returned None; it must return an iterable of batches")
            return iterator
    else:
        try:
            iter(batches)
        except TypeError:
            raise TypeError(f"batches must be an iterable of batches or a callable returning one, got "
                            f"{type(batches).__name__}") from None
        if iter(batches) is batches:
            raise ValueError("batches is an iterator, which can be read once; out-of-core binning reads the data "
                             "three times: pass a callable returning a fresh iterator, or a list")
        def fresh():
            return batches

    def read():
        for i, batch in enumerate(fresh()):
            where = f"batches[{i}]"
            if isinstance(batch, tuple):
                if not 1 <= len(batch) <= 3:
                    raise ValueError(f"{where}: a tuple batch is (X,), (X, y) or (X, y, weights); got "
                                     f"{len(batch)} items")
                if label is not None or weight is not None:
                    raise ValueError(f"{where}: label / weight name columns of frame batches; a tuple batch "
                                     f"carries its labels and weights itself")
                X, y, w = (*batch, None, None)[:3]
            elif frame_library(batch) is not None or type(batch).__name__ == "RecordBatch":
                X, y, w = _split_frame(batch, label, weight, where)
            else:
                if label is not None or weight is not None:
                    raise ValueError(f"{where}: label / weight name columns of frame batches; give array batches "
                                     f"as (X, y) or (X, y, weights) tuples")
                X, y, w = batch, None, None
            yield X, y, w, where
    return read


def npy_reader(path, block_rows: int):
    """Reads a 2-D ``.npy`` file in blocks of `block_rows` rows (see `npy_file.NpyFile`)."""
    file = NpyFile(path, "path")

    def read():
        for _, X in file.blocks(block_rows):
            yield X, None, None, "path"
    return read


def parquet_reader(path, label, weight, block_rows: int):
    """Reads a Parquet file in batches of `block_rows` rows, `label` and `weight` naming
    columns; a file that is not a readable Parquet file is a ValueError, now or on a pass."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("reading Parquet needs pyarrow: pip install 'boosters[arrow]'") from None
    try:
        require_regular_file(os.fspath(path), _PARQUET_FILE)  # pyarrow would block on a FIFO
        pq.ParquetFile(os.fspath(path)).close()
        size = os.stat(path).st_size
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise ValueError(f"path: cannot read {path!r} as a Parquet file: {exc}") from None

    def read():
        check_size("path", os.fspath(path), size)
        try:
            require_regular_file(os.fspath(path), _PARQUET_FILE)
            file = pq.ParquetFile(os.fspath(path))
        except (OSError, ValueError) as exc:
            raise ValueError(f"path: cannot read {path!r} again: {exc}") from None
        with file:
            batches = file.iter_batches(batch_size=block_rows)
            while True:
                try:
                    batch = next(batches, None)
                except (OSError, ValueError) as exc:  # changed while read: pyarrow raises, no SIGBUS
                    raise ValueError(f"path: reading {path!r} failed: {exc}") from None
                if batch is None:
                    return
                yield (*_split_frame(batch, label, weight, "path"), "path")
    return read
