"""The binned training matrix: feature-major bin indices plus the histogram layout."""

from __future__ import annotations

import numpy as np

U8, U16 = 0, 1  # feature_kind codes: which bin matrix stores the feature


class BinnedMatrix:
    """Bin indices of every (row, feature), stored feature-major.

    Features with at most 256 bins live in `bins_u8` (n_u8_features, n_rows), the others
    in `bins_u16`; `feature_kind[f]` / `feature_column[f]` say where feature f is.
    `hist_offsets[f]` is where feature f's bins start in a flat histogram (RFC-0007
    layout: all features' bins contiguous), `total_bins` its length.
    """

    def __init__(self, bins_u8: np.ndarray, bins_u16: np.ndarray, feature_kind: np.ndarray,
                 feature_column: np.ndarray, n_bins: np.ndarray):
        self.bins_u8 = bins_u8
        self.bins_u16 = bins_u16
        self.feature_kind = np.ascontiguousarray(feature_kind, dtype=np.int8)
        self.feature_column = np.ascontiguousarray(feature_column, dtype=np.int32)
        self.n_bins = np.ascontiguousarray(n_bins, dtype=np.int32)
        self.n_features = len(self.n_bins)
        self.n_rows = bins_u8.shape[1] if bins_u8.shape[0] else bins_u16.shape[1]
        self.hist_offsets = np.zeros(self.n_features + 1, dtype=np.int64)
        np.cumsum(self.n_bins, out=self.hist_offsets[1:])
        self.total_bins = int(self.hist_offsets[-1])

    @classmethod
    def allocate(cls, n_rows: int, n_bins: np.ndarray) -> "BinnedMatrix":
        """Uninitialised storage for `n_rows` rows of features with the given bin counts."""
        n_bins = np.asarray(n_bins, dtype=np.int32)
        kind = np.where(n_bins <= 256, U8, U16).astype(np.int8)
        column = np.zeros(len(n_bins), dtype=np.int32)
        for k in (U8, U16):
            members = np.flatnonzero(kind == k)
            column[members] = np.arange(len(members), dtype=np.int32)
        bins_u8 = np.empty((int(np.sum(kind == U8)), n_rows), dtype=np.uint8)
        bins_u16 = np.empty((int(np.sum(kind == U16)), n_rows), dtype=np.uint16)
        return cls(bins_u8, bins_u16, kind, column, n_bins)

    def feature_bins(self, feature: int) -> np.ndarray:
        """The bin index of every row for one feature (a view, uint8 or uint16)."""
        storage = self.bins_u8 if self.feature_kind[feature] == U8 else self.bins_u16
        return storage[self.feature_column[feature]]

    def to_dense(self) -> np.ndarray:
        """(n_rows, n_features) uint16 copy of all bins; for tests and debugging."""
        out = np.empty((self.n_rows, self.n_features), dtype=np.uint16)
        for f in range(self.n_features):
            out[:, f] = self.feature_bins(f)
        return out

    @property
    def nbytes(self) -> int:
        return self.bins_u8.nbytes + self.bins_u16.nbytes
