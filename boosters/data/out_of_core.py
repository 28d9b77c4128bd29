"""Datasets larger than memory: features read in row blocks, binned to a matrix on disk.

The raw feature matrix is never held. A source (an iterable of batches, a ``.npy`` file
or a Parquet file read by blocks of rows) is read again for each pass:

1. at construction: row count, labels and weights (one value per row: they stay in
   memory), checks of every value, and the largest code of each categorical feature;
2. when training first asks for the bins (`binned`): the rows of the seeded stratified
   sample `BinMapper` takes from in-memory data (the row count is known by then, so they
   are the same rows), whence the same bin edges and the same bundles;
3. then every block is binned (`BinMapper.transform`) and encoded in the bundled layout
   (`BundleLayout.encode`) into a `BinnedMatrix` whose bin arrays are ``.npy`` files
   mapped into memory (`bin_files.allocate_npy`). A bundle that the full data
   contradicts is split and the pass repeated, as `bin_and_bundle` does in memory.

Every pass must read the same rows in the same order: each block of a later pass is
compared with the first pass's by a fingerprint (`passes.PassMarks`), and a change is
refused with a ValueError rather than training the labels of some rows on the features of
others. A source file is read with ordinary reads, never mapped (`npy_file.NpyFile`): a
file truncated meanwhile raises a ValueError, where a mapping would die of SIGBUS.

So the model equals the one trained on the same rows in memory, tree for tree. Training
reads the mapped bins through the operating system's page cache: pages are file-backed,
not anonymous memory, and are evicted under memory pressure. What stays in memory is per
row (labels, margins, gradients, row indices: ~40-60 bytes a row) plus the bin sample.
The files are removed when the Dataset is closed or garbage collected; those of a killed
process by the next Dataset made in the same directory; a full disk raises an OSError
(`bin_files`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import weakref

import numpy as np

from boosters._lib.threads import effective_n_threads
from boosters.data.bin_files import BinDirectory, allocate_npy, remove_leftovers
from boosters.data.binned import BinnedMatrix
from boosters.data.binning import DEFAULT_BIN_SAMPLE, BinMapper, stratified_sample
from boosters.data.block_sources import (DEFAULT_BLOCK_ROWS, batch_reader, check_block_rows, check_label_weight,
                                         npy_reader, parquet_reader)
from boosters.data.bundling import BundleLayout, find_bundles
from boosters.data.categories import categorical_indices, feature_label
from boosters.data.category_learner import CategoryLearner
from boosters.data.dataset import Dataset
from boosters.data.frames import as_frame, frame_matrix
from boosters.data.groups import query_boundaries
from boosters.data.passes import PassMarks, content_mark
from boosters.data.validation import as_feature_matrix, as_init_score, as_labels, as_vector

BIN_BLOCK_ROWS = 16384  # rows of the bin sample binned at a time


class OutOfCoreDataset(Dataset):
    """A `Dataset` whose features are read from a source in row blocks and whose bins are
    kept in memory-mapped files (see the module notes); built by `Dataset.from_batches`,
    `Dataset.from_npy` and `Dataset.from_parquet`.

    It trains as any Dataset (`GBDTModel.train`, as the training set). It holds no raw
    features, so what needs them refuses it with a ValueError: a validation set,
    ``linear_leaves``, DART, `GBDTModel.predict` (predict the batches instead). Close it
    (`close`, or ``with``) to remove its files at once; otherwise they go when it is
    garbage collected.

    Parameters
    ----------
    read_blocks : callable
        Returns a fresh iterator of ``(X_block, y_block, w_block, where)``: a 2-D array or
        a frame, labels and weights of its rows (or None), and how messages name it.
    y, weights : array-like, optional
        Labels and weights given whole instead of per block.
    feature_names, categorical_features, group, qid, init_score :
        As for `Dataset` (`group`, `qid` and `init_score` whole, one entry per row or query).
    directory : str or path, optional
        Where the bin files go, in a folder of their own (removed on close); the system's
        temporary directory by default. Folders left there by killed processes are removed.
    source : str
        How `repr` names the source.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(1000, 3))
    >>> with bst.Dataset.from_batches([(X[:600], X[:600, 0]), (X[600:], X[600:, 0])]) as data:
    ...     print(data)
    Dataset(1000 rows, 3 features, out of core from 2 batches, labels)
    """

    def __init__(self, read_blocks, y=None, weights=None, feature_names=None, categorical_features=None,
                 group=None, qid=None, init_score=None, directory=None, source: str = "batches"):
        self._read_blocks, self._source = read_blocks, source
        self._marks = PassMarks(source)
        self._scan(y, weights, feature_names, categorical_features)
        self.group_boundaries = query_boundaries(group, qid, self._n_rows)
        self.init_score = None if init_score is None else as_init_score(init_score, self._n_rows)
        self._binned_cache: dict = {}
        self._open_directory(directory)

    def _scan(self, y, weights, feature_names, categorical_features) -> None:
        """Pass 1: every block checked; rows, labels, weights, categorical code ranges."""
        n_rows, n_features, names, dtype = 0, None, None, None
        ys: list[np.ndarray] = []
        ws: list[np.ndarray] = []
        n_blocks = 0
        for raw, yb, wb, where in self._read_blocks():
            frame = as_frame(raw)
            if n_features is None:
                names = None if frame is None else frame.names
                self._set_features(raw, frame, feature_names, categorical_features)
                n_features = self._n_features
            X, mark = self._matrix(raw, where, learn=True)
            self._marks.record(_with_labels(mark, yb, wb))
            block_names = None if frame is None else frame.names
            if X.shape[1] != n_features:
                raise ValueError(f"{where}: {X.shape[1]} features, the first block had {n_features}")
            if block_names != names:
                raise ValueError(f"{where}: columns {block_names}, the first block had {names}")
            for given, value, per_block, name in ((y, yb, ys, "y"), (weights, wb, ws, "weights")):
                if given is not None and value is not None:
                    raise ValueError(f"{name} is given both whole and with the blocks of {self._source}")
                if n_blocks and (value is not None) != bool(per_block):  # as the first block
                    raise ValueError(f"{where} {'has' if value is not None else 'lacks'} {name}, unlike the "
                                     f"first block")
                if value is not None:
                    value = np.array(value)  # a copy: a view would keep the whole batch alive
                    if len(value) != X.shape[0]:
                        raise ValueError(f"{where}: {name} has {len(value)} values for {X.shape[0]} rows")
                    per_block.append(value)
            dtype = X.dtype if dtype is None else np.result_type(dtype, X.dtype)
            n_rows += X.shape[0]
            n_blocks += 1
        if n_blocks == 0 or n_rows == 0:
            raise ValueError(f"{self._source} holds no rows; need at least one row and one feature")
        if n_rows >= 2**32:
            raise ValueError(f"{self._source} has {n_rows} rows; at most 2**32 - 1 are supported")
        self._n_rows, self._n_blocks, self._dtype = n_rows, n_blocks, dtype
        self.categories = {f: learner.categories() for f, learner in self._learners.items()}
        if ys:
            y = np.concatenate(ys)
        self.y = None if y is None else as_labels(y, n_rows, "y")
        w = np.concatenate(ws) if ws else weights
        self.weights = None
        if w is not None:
            w = as_vector(w, n_rows, "weights")
            if np.any(w < 0):
                raise ValueError("weights must be >= 0")
            if not np.any(w > 0):
                raise ValueError("weights must not all be zero")
            self.weights = w

    def _set_features(self, raw, frame, feature_names, categorical_features) -> None:
        """Features, names and categorical features, from the first block."""
        if frame is None:
            n_features = as_feature_matrix(raw, "X").shape[1]
        else:
            n_features = frame.shape[1]
            if feature_names is None:
                feature_names = frame.names
            if categorical_features is None:
                categorical_features = "auto"
        if feature_names is not None:
            feature_names = [str(name) for name in feature_names]
            if len(feature_names) != n_features:
                raise ValueError(f"feature_names has {len(feature_names)} names but the data has {n_features} "
                                 f"features")
            if len(set(feature_names)) != n_features:
                raise ValueError("feature_names must be unique")
        self._n_features = n_features
        self.feature_names = feature_names
        auto = [] if frame is None else frame.categorical_columns()
        self.categorical_features = categorical_indices(categorical_features, n_features, feature_names, auto)
        self._learners = {f: CategoryLearner(feature_label(f, feature_names)) for f in self.categorical_features}

    def _matrix(self, raw, where: str, learn: bool = False, n_threads: int = 1) -> tuple[np.ndarray, dict]:
        """A block as the float matrix the in-memory Dataset would hold for its rows, and
        its mark (`passes.PassMarks`): a categorical column's values mapped to codes by the
        categories of all rows (while `learn`ing them, in pass 1, the codes are not known
        yet: zeros; the mark is taken before they are filled in, the same on every pass)."""
        frame = as_frame(raw)
        if frame is None:
            X = as_feature_matrix(raw, where)
            if learn:
                for f, learner in self._learners.items():
                    learner.see_codes(X[:, f])
            return X, {"features": content_mark(X, n_threads)}
        encoded = {}

        def reader(f, learner):
            def read(column):
                if column.numeric:
                    codes = column.floats(np.float64)
                    if learn:
                        learner.see_codes(codes)
                    return codes
                encoded[f] = column.encoded()
                if learn:
                    learner.see_encoded(*encoded[f])
                return 0.0
            return read
        X = frame_matrix(frame, where, {f: reader(f, learner) for f, learner in self._learners.items()})
        mark = {"features": content_mark(X, n_threads)}
        for f, (indices, values, _) in encoded.items():
            learner = self._learners[f]
            mark[f"category column {learner.label}"] = (content_mark(indices), content_mark(values))
            if not learn:
                X[:, f] = learner.encode(indices, values)
        return X, mark

    def _open_directory(self, directory) -> None:
        """The bin files' own folder (`bin_files`), removed with the Dataset; first, the
        folders that killed processes left in the same directory are removed."""
        if directory is None:
            parent = tempfile.gettempdir()
        else:
            parent = os.fspath(directory)
            if not os.path.isdir(parent):
                raise ValueError(f"directory {parent!r} is not an existing directory")
        remove_leftovers(parent)
        folder = BinDirectory(parent)
        self._directory = folder.path
        self._cleanup = weakref.finalize(self, folder.remove)

    # -- what Dataset offers -------------------------------------------------------------

    @property
    def X(self):
        """Not available: the raw features were never held (ValueError)."""
        raise ValueError(f"this Dataset is out of core (built from {self._source}): it holds no raw features, "
                         f"only their bins, so it cannot serve as a validation set, for prediction, linear_leaves "
                         f"or DART; predict the batches themselves")

    @property
    def is_sparse(self) -> bool:
        """Always False: the blocks are read dense."""
        return False

    @property
    def n_rows(self) -> int:
        """The number of rows."""
        return self._n_rows

    @property
    def n_features(self) -> int:
        """The number of features."""
        return self._n_features

    @property
    def shape(self) -> tuple[int, int]:
        """(n_rows, n_features)."""
        return (self._n_rows, self._n_features)

    @property
    def directory(self) -> str:
        """The directory of the bin files."""
        return self._directory

    def binned(self, max_bins: int = 256, seed: int = 42, bundling: bool = True,
               n_threads: int = 0) -> tuple[BinMapper, BinnedMatrix]:
        """The bins, as `Dataset.binned` makes them in memory (the same parameters and
        results), in memory-mapped files: the BinnedMatrix's arrays are `numpy.memmap`.

        Two passes over the source the first time per setting (the sample, then the
        binning), cached afterwards.

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(1000, 2))
        >>> with bst.Dataset.from_batches([X[:500], X[500:]]) as data:
        ...     mapper, binned = data.binned(max_bins=16)
        ...     print(mapper.n_bins, binned.n_rows, type(binned.bins_u8).__name__)
        [16 16] 1000 memmap
        """
        if not isinstance(bundling, bool):
            raise TypeError(f"bundling must be True or False, got {bundling!r}")
        if not self._cleanup.alive:
            raise ValueError("this Dataset is closed")
        key = (max_bins, seed, bundling)
        cached = self._binned_cache.get(key)
        if cached is None:
            number = len(self._binned_cache)
            try:
                cached = self._binned_cache[key] = self._bin(max_bins, seed, bundling, effective_n_threads(n_threads),
                                                             number)
            except BaseException:  # no half-written files stay (a full disk, a changed source, Ctrl-C)
                self._remove_files(("sample", f"bins{number}_"))
                raise
        return cached

    def _remove_files(self, prefixes: tuple[str, ...]) -> None:
        """Remove the bin files whose names start with one of `prefixes`."""
        with contextlib.suppress(OSError):
            for name in os.listdir(self._directory):
                if name.startswith(prefixes):
                    with contextlib.suppress(OSError):
                        os.remove(os.path.join(self._directory, name))

    def _blocks(self, n_threads: int):
        """(first row, X block) of each block of a new pass over the source; ValueError
        when a block differs from the first pass's (`passes.PassMarks`)."""
        start = index = 0
        for raw, yb, wb, where in self._read_blocks():
            X, mark = self._matrix(raw, where, n_threads=n_threads)
            self._marks.check(index, _with_labels(mark, yb, wb), where)
            yield start, X
            start += X.shape[0]
            index += 1
        self._marks.check_count(index)

    def _sample(self, rows: np.ndarray | None, n_threads: int) -> np.ndarray:
        """Pass 2: the sampled rows (all rows when None), in row order, in a mapped file."""
        n = self._n_rows if rows is None else len(rows)
        # on disk too: with many features it is as large as the memory the training uses
        sample = allocate_npy(os.path.join(self._directory, "sample.npy"), self._dtype, (n, self._n_features))
        for start, X in self._blocks(n_threads):
            if rows is None:
                sample[start:start + X.shape[0]] = X
                continue
            lo, hi = np.searchsorted(rows, [start, start + X.shape[0]])
            sample[lo:hi] = X[rows[lo:hi] - start]
        return sample

    def _fit(self, max_bins: int, seed: int, n_threads: int) -> tuple[BinMapper, np.ndarray]:
        """The mapper `Dataset.binned` fits, from the same rows; and those rows' values."""
        rows = stratified_sample(self._n_rows, DEFAULT_BIN_SAMPLE, seed) if self._n_rows > DEFAULT_BIN_SAMPLE else None
        sample = self._sample(rows, n_threads)
        weights = None if self.weights is None else (self.weights if rows is None else self.weights[rows])
        mapper = BinMapper(max_bins, seed=seed, categorical_features=self.categorical_features)
        mapper.fit(sample, weights, n_threads)
        # a categorical feature's bins come from all rows, not the sample (see binning.py)
        for f, learner in self._learners.items():
            mapper.set_categorical(f, *learner.edges())
        mapper.sample_rows = rows
        return mapper, sample

    def _bin(self, max_bins: int, seed: int, bundling: bool, n_threads: int, number: int):
        mapper, sample = self._fit(max_bins, seed, n_threads)
        default_bin = np.zeros(self._n_features, dtype=np.int32)
        bundles: list = []
        if bundling:  # found on the sample, as bin_and_bundle does (on every row when they all fit in it)
            blocks = ((start, sample[start:start + BIN_BLOCK_ROWS]) for start in range(0, len(sample), BIN_BLOCK_ROWS))
            sample_bins, _ = self._encode(mapper, BundleLayout(mapper.n_bins, [], default_bin), blocks, len(sample),
                                          "sample_bins", n_threads)
            bundles, default_bin = find_bundles(sample_bins, mapper.is_usable & ~mapper.is_categorical)
            del sample_bins
        del sample
        self._remove_files(("sample",))
        while True:
            layout = BundleLayout(mapper.n_bins, bundles, default_bin)
            out, conflicts = self._encode(mapper, layout, self._blocks(n_threads), self._n_rows, f"bins{number}",
                                          n_threads)
            if not conflicts.any():
                return mapper, out
            del out  # its files are written anew
            bundles = [members for members, bad in zip(bundles, conflicts) if not bad]

    def _encode(self, mapper: BinMapper, layout: BundleLayout, blocks, n_rows: int, stem: str, n_threads: int):
        """The blocks binned and encoded in `layout` into mapped files; and, per bundle,
        whether some row had two of its members away from their default bins."""
        out = self._allocate(layout, n_rows, stem)
        conflicts = np.zeros(len(layout.bundles), dtype=bool)
        for start, X in blocks:
            conflicts |= layout.encode(mapper.transform(X, n_threads), out, start)
        for bins in (out.bins_u8, out.bins_u16):
            if isinstance(bins, np.memmap):
                bins.flush()
        return out, conflicts

    def _allocate(self, layout: BundleLayout, n_rows: int, stem: str) -> BinnedMatrix:
        """`layout.allocate`, with the bins in .npy files mapped into memory."""
        def storage(n_columns, dtype, name):
            if n_columns == 0:  # an empty file cannot be mapped
                return np.empty((0, n_rows), dtype=dtype)
            return allocate_npy(os.path.join(self._directory, f"{stem}_{name}.npy"), dtype, (n_columns, n_rows))
        return BinnedMatrix(storage(layout.n_u8, np.uint8, "u8"), storage(layout.n_u16, np.uint16, "u16"),
                            layout.kind, layout.index, layout.column_n_bins, layout.n_bins, layout.feature_column,
                            layout.feature_offset, layout.feature_default)

    def close(self) -> None:
        """Remove the bin files now (the Dataset cannot train afterwards).

        Examples
        --------
        >>> data = bst.Dataset.from_batches([np.ones((10, 2))])
        >>> data.close()
        """
        self._binned_cache.clear()
        self._cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        parts = [f"{self.n_rows} rows", f"{self.n_features} features", f"out of core from {self._source}"]
        if self.y is not None:
            parts.append("labels" if self.y.ndim == 1 else f"labels of {self.y.shape[1]} targets")
        if self.weights is not None:
            parts.append("weights")
        if self.group_boundaries is not None:
            parts.append(f"{self.n_groups} query groups")
        if self.init_score is not None:
            parts.append("init_score")
        if self.categorical_features:
            parts.append(f"categorical_features={self.categorical_features}")
        return f"Dataset({', '.join(parts)})"


def _with_labels(mark: dict, y, w) -> dict:
    """A block's mark with its labels and weights (when the block gives them)."""
    for name, values in (("labels", y), ("weights", w)):
        if values is not None:
            mark[name] = content_mark(values)
    return mark


# -- one function per source (their readers: data/block_sources.py) ---------------------------

def from_batches(batches, label=None, weight=None, feature_names=None, categorical_features=None,
                 group=None, qid=None, init_score=None, directory=None) -> OutOfCoreDataset:
    """See `Dataset.from_batches`."""
    check_label_weight(label, weight)
    reader = batch_reader(batches, label, weight)
    n = len(batches) if isinstance(batches, (list, tuple)) else None
    source = "batches" if n is None else f"{n} batch{'es' if n != 1 else ''}"
    return OutOfCoreDataset(reader, feature_names=feature_names, categorical_features=categorical_features,
                            group=group, qid=qid, init_score=init_score, directory=directory, source=source)


def from_npy(path, y=None, weights=None, feature_names=None, categorical_features=None, group=None, qid=None,
             init_score=None, directory=None, block_rows: int = DEFAULT_BLOCK_ROWS) -> OutOfCoreDataset:
    """See `Dataset.from_npy`."""
    reader = npy_reader(path, check_block_rows(block_rows))
    return OutOfCoreDataset(reader, y, weights, feature_names, categorical_features, group, qid, init_score,
                            directory, source=os.path.basename(os.fspath(path)))


def from_parquet(path, label=None, weight=None, feature_names=None, categorical_features=None, group=None,
                 qid=None, init_score=None, directory=None, block_rows: int = DEFAULT_BLOCK_ROWS) -> OutOfCoreDataset:
    """See `Dataset.from_parquet`."""
    check_label_weight(label, weight)
    reader = parquet_reader(path, label, weight, check_block_rows(block_rows))
    return OutOfCoreDataset(reader, feature_names=feature_names, categorical_features=categorical_features,
                            group=group, qid=qid, init_score=init_score, directory=directory,
                            source=os.path.basename(os.fspath(path)))
