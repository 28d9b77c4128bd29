"""The binned training matrix: stored bin columns, and the features they hold.

A *column* is what is stored and histogrammed: one feature, or a bundle of mutually
exclusive sparse features (exclusive feature bundling, see `bundling.py`). A *feature*
is what splits see. Columns are stored column-major: columns with at most 256 bins in
`bins_u8` (n_u8_columns, n_rows), the others in `bins_u16`.

Histogram layout (RFC-0007): all columns' bins contiguous; column c owns
[column_offsets[c], column_offsets[c + 1]).

A bundled feature f with default (most frequent) bin d keeps its other bins in the
column at values feature_offset[f] + j, j = b for b < d and b - 1 for b > d; rows at
their default bin of every member share the column's value 0. `decode[f]` maps column
values back to f's bins.

Sparse input (`sparse_binning.py`) stores features in columns of kind SPARSE: instead
of a dense column the matrix keeps `sparse_indptr` / `sparse_bins`, a CSR of every row's
entries away from its feature's default bin (`sparse_default`, the bin of 0) as histogram
indices (uint32, in feature order within a row), and one more SPARSE column of one bin,
holding no feature, where every row is counted (`sparse_totals_bin`).
"""

from __future__ import annotations

import numpy as np

U8, U16, SPARSE = 0, 1, 2  # column_kind codes: which bin matrix stores the column (SPARSE: the CSR)


class BinnedMatrix:
    def __init__(self, bins_u8, bins_u16, column_kind, column_index, column_n_bins, n_bins,
                 feature_column, feature_offset=None, feature_default_bin=None, sparse=None):
        self.bins_u8 = bins_u8
        # The SPARSE columns (None: none): indptr int64 (n_rows + 1), entries uint32, the
        # default bin per column int32 (-1: the
        # totals column), column starts int64 (n_columns + 1) and rows uint32 of the CSR's
        # transpose: each column's rows with an entry, in order)
        self.sparse_indptr, self.sparse_bins, self.sparse_default, self.sparse_col_indptr, self.sparse_col_rows = \
            (None,) * 5 if sparse is None else (sparse[0], sparse[1], np.ascontiguousarray(sparse[2], dtype=np.int32),
                                                sparse[3], sparse[4])
        self.bins_u16 = bins_u16
        self.n_rows = bins_u8.shape[1] if bins_u8.shape[0] else bins_u16.shape[1]
        # columns
        self.column_kind = np.ascontiguousarray(column_kind, dtype=np.int8)
        self.column_index = np.ascontiguousarray(column_index, dtype=np.int32)
        self.column_n_bins = np.ascontiguousarray(column_n_bins, dtype=np.int32)
        self.n_columns = len(self.column_n_bins)
        self.column_offsets = np.zeros(self.n_columns + 1, dtype=np.int64)
        np.cumsum(self.column_n_bins, out=self.column_offsets[1:])
        self.total_bins = int(self.column_offsets[-1])
        # features
        self.n_bins = np.ascontiguousarray(n_bins, dtype=np.int32)
        self.n_features = len(self.n_bins)
        self.feature_column = np.ascontiguousarray(feature_column, dtype=np.int32)
        self.feature_offset = (np.zeros(self.n_features, dtype=np.int32) if feature_offset is None
                               else np.ascontiguousarray(feature_offset, dtype=np.int32))
        self.feature_default_bin = (np.full(self.n_features, -1, dtype=np.int32) if feature_default_bin is None
                                    else np.ascontiguousarray(feature_default_bin, dtype=np.int32))
        self._build_decode_tables()

    def _build_decode_tables(self) -> None:
        """decode_tables: all bundled features' value -> bin maps concatenated (uint16);
        decode_start[f] is where f's map starts, -1 for a feature stored alone."""
        self.decode_start = np.full(self.n_features, -1, dtype=np.int64)
        tables, start = [], 0
        for f in np.flatnonzero(self.feature_default_bin >= 0):
            table = np.full(self.column_n_bins[self.feature_column[f]], self.feature_default_bin[f], dtype=np.uint16)
            d, j = self.feature_default_bin[f], np.arange(self.n_bins[f] - 1)
            table[self.feature_offset[f] + j] = np.where(j < d, j, j + 1)
            self.decode_start[f] = start
            start += len(table)
            tables.append(table)
        self.decode_tables = np.concatenate(tables) if tables else np.zeros(1, dtype=np.uint16)

    @classmethod
    def allocate(cls, n_rows: int, n_bins) -> "BinnedMatrix":
        """Uninitialised storage for `n_rows` rows, one column per feature."""
        n_bins = np.asarray(n_bins, dtype=np.int32)
        kind = np.where(n_bins <= 256, U8, U16).astype(np.int8)
        index = np.zeros(len(n_bins), dtype=np.int32)
        for k in (U8, U16):
            members = np.flatnonzero(kind == k)
            index[members] = np.arange(len(members), dtype=np.int32)
        bins_u8 = np.empty((int(np.sum(kind == U8)), n_rows), dtype=np.uint8)
        bins_u16 = np.empty((int(np.sum(kind == U16)), n_rows), dtype=np.uint16)
        return cls(bins_u8, bins_u16, kind, index, n_bins, n_bins, np.arange(len(n_bins)))

    @property
    def hist_offsets(self) -> np.ndarray:
        """The histogram layout: where each column's bins start (n_columns + 1 entries).
        Without bundling every feature is its own column, in feature order."""
        return self.column_offsets

    @property
    def feature_kind(self) -> np.ndarray:
        """Storage kind (U8 / U16) of the column holding each feature."""
        return self.column_kind[self.feature_column]

    def column_bins(self, column: int) -> np.ndarray:
        """The stored values of one column for every row (a view)."""
        if self.column_kind[column] == SPARSE:
            return self._sparse_column_values(column)
        storage = self.bins_u8 if self.column_kind[column] == U8 else self.bins_u16
        return storage[self.column_index[column]]

    @property
    def has_sparse(self) -> bool:
        return self.sparse_indptr is not None

    @property
    def sparse_totals_bin(self) -> int:
        """The histogram bin that holds a node's (grad, hess) totals when some columns are
        sparse (the totals column, where the sparse kernel counts every row); -1 otherwise."""
        if not self.has_sparse:
            return -1
        return int(self.column_offsets[np.flatnonzero(self.sparse_default < 0)[0]])

    def _sparse_column_values(self, column: int) -> np.ndarray:
        """A SPARSE column's bins for every row, decoded from the CSR."""
        lo = self.column_offsets[column]
        entries = self.sparse_bins.astype(np.int64)
        mine = (entries >= lo) & (entries < lo + self.column_n_bins[column])
        rows = np.repeat(np.arange(self.n_rows), np.diff(self.sparse_indptr))
        out = np.full(self.n_rows, max(0, self.sparse_default[column]), dtype=np.uint16)
        out[rows[mine]] = entries[mine] - lo
        return out

    def feature_bins(self, feature: int) -> np.ndarray:
        """The bin of every row for one feature: a view for a feature stored alone, a
        decoded copy for a bundled one."""
        values = self.column_bins(self.feature_column[feature])
        start = self.decode_start[feature]
        if start < 0:
            return values
        return self.decode_tables[start:start + self.column_n_bins[self.feature_column[feature]]][values]

    def is_bundled(self, feature: int) -> bool:
        return self.decode_start[feature] >= 0

    def to_dense(self) -> np.ndarray:
        """(n_rows, n_features) uint16 copy of all feature bins; for tests and debugging."""
        out = np.empty((self.n_rows, self.n_features), dtype=np.uint16)
        for f in range(self.n_features):
            out[:, f] = self.feature_bins(f)
        return out

    @property
    def nbytes(self) -> int:
        sparse = sum(a.nbytes for a in (self.sparse_indptr, self.sparse_bins, self.sparse_col_indptr,
                                          self.sparse_col_rows)) if self.has_sparse else 0
        return self.bins_u8.nbytes + self.bins_u16.nbytes + sparse
