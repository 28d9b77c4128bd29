"""Naive NumPy twins of the optimized kernels: the tests compare the two."""

import numpy as np

from boosters.data.binned import BinnedMatrix


def naive_bins(X: np.ndarray, upper_edges: list[np.ndarray]) -> np.ndarray:
    """(n_rows, n_features) bins: 0 for NaN, else 1 + first edge index with x <= edge."""
    X = np.asarray(X, dtype=np.float64)
    out = np.zeros(X.shape, dtype=np.int64)
    for f, edges in enumerate(upper_edges):
        col = X[:, f]
        present = ~np.isnan(col)
        out[present, f] = 1 + np.searchsorted(edges, col[present], side="left")
    return out


def naive_histogram(binned: BinnedMatrix, gh: np.ndarray, rows=None) -> np.ndarray:
    """(total_bins, 2) float64 histogram of `rows` (all rows if None), rows added in order."""
    dense = binned.to_dense().astype(np.int64)
    rows = np.arange(binned.n_rows) if rows is None else np.asarray(rows)
    g = gh[rows].astype(np.float64)
    hist = np.zeros((binned.total_bins, 2))
    for f in range(binned.n_features):
        idx = binned.hist_offsets[f] + dense[rows, f]
        np.add.at(hist[:, 0], idx, g[:, 0])  # sequential, in row order: same sums as the kernel
        np.add.at(hist[:, 1], idx, g[:, 1])
    return hist


def binned_from_dense(dense: np.ndarray, n_bins) -> BinnedMatrix:
    """A BinnedMatrix holding the given (n_rows, n_features) integer bins."""
    dense = np.asarray(dense)
    binned = BinnedMatrix.allocate(dense.shape[0], np.asarray(n_bins))
    for f in range(dense.shape[1]):
        col = binned.feature_bins(f)
        col[:] = dense[:, f]
    return binned


def random_binned(rng, n_rows: int, n_bins) -> BinnedMatrix:
    n_bins = np.asarray(n_bins)
    dense = np.stack([rng.integers(0, b, size=n_rows) for b in n_bins], axis=1)
    return binned_from_dense(dense, n_bins)


def random_gradients(rng, n_rows: int) -> np.ndarray:
    gh = np.empty((n_rows, 2), dtype=np.float32)
    gh[:, 0] = rng.normal(size=n_rows)
    gh[:, 1] = rng.uniform(0.01, 1.0, size=n_rows)
    return gh
