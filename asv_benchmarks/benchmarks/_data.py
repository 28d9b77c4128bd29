"""Benchmark inputs, built once per process."""

import functools

import numpy as np

from boosters.data.binned import BinnedMatrix

N_ROWS, N_FEATURES, N_BINS = 500_000, 50, 256


@functools.lru_cache(maxsize=None)
def raw_matrix():
    """500k x 50 float64 features (C order) with 2% missing values."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_ROWS, N_FEATURES))
    X[rng.random(X.shape) < 0.02] = np.nan
    return X


@functools.lru_cache(maxsize=None)
def binned_matrix():
    """500k x 50 binned matrix, 256 bins per feature (uint8), random bins."""
    rng = np.random.default_rng(1)
    binned = BinnedMatrix.allocate(N_ROWS, np.full(N_FEATURES, N_BINS))
    binned.bins_u8[:] = rng.integers(0, N_BINS, size=binned.bins_u8.shape, dtype=np.uint8)
    return binned


@functools.lru_cache(maxsize=None)
def gradients():
    rng = np.random.default_rng(2)
    gh = np.empty((N_ROWS, 2), dtype=np.float32)
    gh[:, 0] = rng.normal(size=N_ROWS)
    gh[:, 1] = rng.uniform(0.1, 1.0, size=N_ROWS)
    return gh


@functools.lru_cache(maxsize=None)
def node_rows(fraction=0.5):
    """A sorted random half of the rows, as a partitioned node holds them."""
    rng = np.random.default_rng(3)
    return np.sort(rng.choice(N_ROWS, int(N_ROWS * fraction), replace=False)).astype(np.uint32)


def best_seconds(fn, repeats=7):
    import time

    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best
