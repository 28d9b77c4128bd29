"""Per-feature bin edges (fit) and the value -> bin mapping (transform).

Edges come from a seeded row sample (default 200k rows). A feature with at most
`max_bins - 1` distinct values gets one bin per value, cut at midpoints between
neighbours; otherwise bins hold equal shares of the (weighted) sample. Bin 0 of every
feature is the missing-value bin, so `max_bins` counts it: 256 bins = 255 value bins
+ missing, which is LightGBM's `max_bin=255`, stored as uint8.

A categorical feature's code c (0, 1, ...; NaN missing) goes to bin c + 1, whatever
`max_bins`: its bin count comes from the largest code over all rows (not the sample),
up to MAX_CATEGORIES codes (uint16 columns above 255 codes).
"""

from __future__ import annotations

import numbers
import numpy as np

from boosters._lib.arrays import unique
from boosters._lib.threads import effective_n_threads
from boosters.data._binning import gather_columns, map_to_bins
from boosters.data._distinct import distinct_values
from boosters.data.binned import BinnedMatrix
from boosters.data.categories import MAX_CATEGORIES
from boosters.data.validation import as_feature_matrix

MAX_BINS_LIMIT = 65535
DEFAULT_BIN_SAMPLE = 200_000


def _midpoints(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Cut points c with lo <= c < hi, robust to overflow and adjacent floats."""
    with np.errstate(invalid="ignore", over="ignore"):
        mid = lo / 2 + hi / 2
    mid = np.where(np.isnan(mid), 0.0, mid)  # lo = -inf, hi = +inf: any finite cut will do
    mid = np.where(mid >= hi, lo, mid)
    return np.where(mid < lo, lo, mid)


def _equal_weight_cuts(weight: np.ndarray, n_bins: int) -> np.ndarray:
    """Indices i of distinct values to cut after so that the bins hold equal weight.

    A value heavier than a bin's share (weight >= total / n_bins) gets a bin of its
    own: cuts right before and after it. The remaining bins split the weight of the
    other values evenly (what LightGBM's GreedyFindBin does, vectorised).
    """
    heavy = weight >= weight.sum() / n_bins
    heavy_idx = np.flatnonzero(heavy)
    cuts = [heavy_idx - 1, heavy_idx]
    n_light_bins = n_bins - 2 * len(heavy_idx)
    light_cum = np.cumsum(np.where(heavy, 0.0, weight))
    if n_light_bins > 1 and light_cum[-1] > 0:
        targets = light_cum[-1] * np.arange(1, n_light_bins) / n_light_bins
        cuts.append(np.searchsorted(light_cum, targets, side="left"))
    idx = unique(np.concatenate(cuts))
    return idx[(idx >= 0) & (idx < len(weight) - 1)]


def feature_upper_edges(values: np.ndarray, weights: np.ndarray | None, max_value_bins: int) -> np.ndarray:
    """Upper edges of the value bins of one feature (last edge +inf), from its sampled
    non-NaN values (may contain +-inf)."""
    if values.size == 0:
        return np.array([np.inf])
    return edges_from_distinct(*_distinct_values(values, weights), max_value_bins)


def edges_from_distinct(distinct: np.ndarray, weight: np.ndarray, max_value_bins: int) -> np.ndarray:
    """Upper edges from the sorted distinct values of a feature and their weights."""
    if len(distinct) == 0:
        return np.array([np.inf])
    if len(distinct) <= max_value_bins:
        cuts = _midpoints(distinct[:-1], distinct[1:])
    else:
        idx = _equal_weight_cuts(weight, max_value_bins)
        cuts = _midpoints(distinct[idx], distinct[idx + 1])
    return unique(np.append(cuts, np.inf))


def stratified_sample(n_rows: int, size: int, seed: int) -> np.ndarray:
    """`size` sorted distinct rows: one uniformly random row in each of `size` equal
    strata of [0, n_rows). O(size) memory (choice without replacement permutes all rows)."""
    bounds = np.arange(size + 1, dtype=np.int64) * n_rows // size  # integer strata, none empty
    u = np.random.default_rng(seed).random(size)
    return bounds[:-1] + (u * np.diff(bounds)).astype(np.int64)


SMALL_INTEGER_RANGE = 1 << 16  # as in _distinct.pyx
FEATURES_PER_PASS = 8


def _distinct_values(values: np.ndarray, weights: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and their (weighted) counts. Integer-valued columns with a
    small range (counts, codes, one-hot flags) are counted in O(n) instead of sorted."""
    low, high = values.min(), values.max()
    if np.isfinite(low) and np.isfinite(high) and high / 2 - low / 2 < SMALL_INTEGER_RANGE / 2:
        offsets = (values - low).astype(np.int64)
        if np.array_equal(offsets + low, values):  # every value is low + an integer
            counts = np.bincount(offsets, weights=weights, minlength=1)
            present = np.flatnonzero(counts)
            return present + low, counts[present].astype(np.float64)
    if weights is None:
        distinct, counts = np.unique(values, return_counts=True)
        return distinct, counts.astype(np.float64)
    distinct, inverse = np.unique(values, return_inverse=True)
    return distinct, np.bincount(inverse, weights=weights, minlength=len(distinct))


def categorical_edges(codes: np.ndarray, feature: int) -> tuple[np.ndarray, bool, bool]:
    """Upper edges c + 1/2 (code c -> bin c + 1) of a categorical column, from all its
    rows, with whether it has missing values and codes; ValueError for a code that is
    not an integer in [0, MAX_CATEGORIES)."""
    present = codes[~np.isnan(codes)]
    if present.size == 0:
        return np.array([np.inf]), codes.size > 0, False
    bad = (present < 0) | (present >= MAX_CATEGORIES) | (present != np.floor(present))
    if bad.any():
        raise ValueError(f"categorical feature {feature}: codes must be integers in [0, {MAX_CATEGORIES}) "
                         f"or NaN, got {present[bad][0]!r}")
    n_codes = int(present.max()) + 1
    edges = np.append(np.arange(n_codes - 1, dtype=np.float64) + 0.5, np.inf)
    return edges, present.size < codes.size, True


def is_usable(edges: np.ndarray, has_missing: bool, has_values: bool) -> bool:
    """Whether a feature with these edges can be split on: more than one bin of values, or
    values and missing ones (a split then separates the two)."""
    return len(edges) > 1 or (has_missing and has_values)


class BinMapper:
    """Learns per-feature bin edges from a row sample and maps values to bins.

    Attributes after `fit`: `upper_edges` (list of float64 arrays, one per feature),
    `n_bins` (bins per feature, missing bin included), `is_usable` (False for constant
    or all-NaN features, which can never be split on), `is_categorical`.
    """

    def __init__(self, max_bins: int = 256, sample_size: int = DEFAULT_BIN_SAMPLE, seed: int = 0,
                 categorical_features=()):
        if isinstance(max_bins, bool) or not isinstance(max_bins, numbers.Integral):
            raise TypeError(f"max_bins must be an int, got {type(max_bins).__name__}")
        if not 2 <= max_bins <= MAX_BINS_LIMIT:
            raise ValueError(f"max_bins must be in [2, {MAX_BINS_LIMIT}], got {max_bins}")
        if isinstance(sample_size, bool) or not isinstance(sample_size, numbers.Integral) or sample_size < 1:
            raise ValueError(f"sample_size must be a positive int, got {sample_size!r}")
        self.max_bins: int = int(max_bins)
        self.sample_size: int = int(sample_size)
        self.seed: int = seed
        self.categorical_features: tuple[int, ...] = tuple(int(f) for f in categorical_features)

    def fit(self, X, sample_weight: np.ndarray | None = None, n_threads: int = 0) -> "BinMapper":
        """Learn the edges from the row sample (sorting in n_threads threads)."""
        X = as_feature_matrix(X)
        n_rows, n_features = X.shape
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if sample_weight.shape != (n_rows,):
                raise ValueError(f"sample_weight must have shape ({n_rows},), got {sample_weight.shape}")
        rows = None
        if n_rows > self.sample_size:
            rows = stratified_sample(n_rows, self.sample_size, self.seed)
        self.sample_rows = rows  # None: every row
        weights = None
        if sample_weight is not None:
            weights = sample_weight[rows] if rows is not None else sample_weight

        # The sample is read a few adjacent features at a time: one pass over a sampled
        # row's cache line serves them all (a single column would cost a miss per value).
        # Unweighted blocks get their distinct values and counts in place, in parallel.
        results = []
        sampled = rows if rows is not None else np.arange(n_rows, dtype=np.int64)
        width = min(FEATURES_PER_PASS, n_features)
        block = np.empty((width, len(sampled)), dtype=np.float64)
        counts = np.empty((width, len(sampled)), dtype=np.uint32) if weights is None else None
        n_distinct = np.empty(width, dtype=np.int64)
        n_present = np.empty(width, dtype=np.int64)
        n_threads = effective_n_threads(n_threads)
        max_value_bins = self.max_bins - 1
        for first in range(0, n_features, FEATURES_PER_PASS):
            width = min(FEATURES_PER_PASS, n_features - first)
            gather_columns(X, sampled, first, block[:width])
            if weights is None:
                assert counts is not None  # made when unweighted
                distinct_values(block[:width], counts[:width], n_distinct[:width], n_present[:width], n_threads)
                for j in range(width):
                    k = n_distinct[j]
                    edges = edges_from_distinct(block[j, :k], counts[j, :k].astype(np.float64), max_value_bins)
                    results.append((edges, n_present[j] < len(sampled), n_present[j] > 0))
            else:
                for j in range(width):
                    present = ~np.isnan(block[j])
                    keep = present & (weights > 0)  # rows of zero weight say nothing
                    edges = feature_upper_edges(block[j][keep], weights[keep], max_value_bins)
                    results.append((edges, not present.all(), keep.any()))
        # constant or all-NaN features can never be split on; a constant one with
        # missing values can (missing vs the value)
        self.is_categorical = np.zeros(n_features, dtype=bool)
        for f in self.categorical_features:
            if not 0 <= f < n_features:
                raise ValueError(f"categorical feature {f} outside the {n_features} features of X")
            results[f] = categorical_edges(X[:, f], f)
            self.is_categorical[f] = True
        self.upper_edges = [edges for edges, _, _ in results]
        self.is_usable = np.array([is_usable(*result) for result in results], dtype=bool)
        self.n_bins = np.array([len(e) + 1 for e in self.upper_edges], dtype=np.int32)
        self.n_features = n_features
        return self

    def set_categorical(self, feature: int, edges: np.ndarray, has_missing: bool, has_values: bool) -> None:
        """Bin categorical `feature` by `categorical_edges` of all its rows, where `fit` saw
        only a sample of them (out-of-core and Dask data: the rows come block by block)."""
        self.upper_edges[feature] = edges
        self.is_usable[feature] = is_usable(edges, has_missing, has_values)
        self.n_bins[feature] = len(edges) + 1
        self.is_categorical[feature] = True

    def transform(self, X, n_threads: int = 0) -> BinnedMatrix:
        """Bin X with the fitted edges (GIL released, parallel)."""
        X = as_feature_matrix(X)
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features but the bin mapper was fit on {self.n_features}")
        binned = BinnedMatrix.allocate(X.shape[0], self.n_bins)
        edge_offsets = np.zeros(self.n_features + 1, dtype=np.int64)
        np.cumsum([len(e) for e in self.upper_edges], out=edge_offsets[1:])
        map_to_bins(X, np.concatenate(self.upper_edges), edge_offsets, binned.column_kind,
                    binned.column_index, binned.bins_u8, binned.bins_u16, effective_n_threads(n_threads))
        return binned

    def fit_transform(self, X, sample_weight=None, n_threads: int = 0) -> BinnedMatrix:
        return self.fit(X, sample_weight, n_threads).transform(X, n_threads)

    def bin_upper_value(self, feature: int, value_bin: int) -> float:
        """Largest value (inclusive) that maps to value bin `value_bin` (>= 1) of `feature`."""
        return float(self.upper_edges[feature][value_bin - 1])
