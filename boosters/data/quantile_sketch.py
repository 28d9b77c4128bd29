"""A mergeable weighted quantile sketch (seed 004): bin edges for rows that are never in
one place, from summaries that are built block by block and merged.

A summary of one feature's (value, weight) pairs keeps some of the values, sorted and
distinct, each with bounds on its weighted rank (XGBoost's WQSummary keeps the same):

    rmin[i] <= weight of the values  < values[i]
    rmax[i] >= weight of the values <= values[i]
    wmin[i] <= weight of values[i] itself

Built from a block it is exact (every distinct value, exact ranks). Two summaries merge
into one of the union of their values, whose bounds are the sums of theirs; `prune(size)`
keeps `size` values: those the summary answers for `size` evenly spaced ranks.

`max_error()` is a bound E such that `query(r)` returns a value whose true rank interval
[weight below it, weight up to and including it] lies within E of r, for every r in
[0, total]. With next_lo[i] = rmin[i] + wmin[i] (a lower bound of the weight up to and
including values[i]) and prev_hi[i] = rmax[i] - wmin[i] (an upper bound of the weight
below it), E is the largest of

    (prev_hi[i + 1] - next_lo[i]) / 2    (the rank mass between neighbours, unseen)
    (prev_hi[i] - next_lo[i]) / 2        (the uncertainty of one kept value)
    prev_hi[0], total - next_lo[-1]      (the ends)

It is 0 for an exact summary; a merge's error is at most the sum of the two errors, and
a prune adds at most total / (2 (size - 1)). So a binary tree of merges of depth d over
summaries pruned to `size` is within (d + 1) * total / (2 (size - 1)) of the truth,
whatever the data (the test checks each of these steps against brute-force ranks).
"""

from __future__ import annotations

import numbers

import numpy as np

from boosters._lib.threads import effective_n_threads
from boosters.data._binning import gather_columns
from boosters.data._distinct import distinct_values
from boosters.data.binning import FEATURES_PER_PASS, BinMapper, _distinct_values, edges_from_distinct


class WeightedQuantileSummary:
    """Rank bounds of some of one feature's values (see the module docstring); immutable:
    `merge` and `prune` return new summaries."""

    def __init__(self, values: np.ndarray, rmin: np.ndarray, rmax: np.ndarray, wmin: np.ndarray, total: float):
        self.values, self.rmin, self.rmax, self.wmin = values, rmin, rmax, wmin
        self.total = float(total)

    @classmethod
    def from_values(cls, values, weights=None) -> "WeightedQuantileSummary":
        """The exact summary of a block of values (NaN and zero-weight values skipped)."""
        values = np.asarray(values, dtype=np.float64).ravel()
        keep = ~np.isnan(values)
        if weights is not None:
            weights = np.asarray(weights, dtype=np.float64).ravel()
            keep &= weights > 0  # a row of zero weight says nothing about the ranks
            weights = weights[keep]
        if not keep.any():
            return cls.empty()
        return cls.from_distinct(*_distinct_values(values[keep], weights))  # the binning's own

    @classmethod
    def from_distinct(cls, distinct: np.ndarray, weight: np.ndarray) -> "WeightedQuantileSummary":
        """The exact summary of sorted distinct values and their positive weights."""
        if len(distinct) == 0:
            return cls.empty()
        distinct = np.asarray(distinct, dtype=np.float64) + 0.0  # -0.0 -> 0.0: one zero, whichever the blocks hold
        rank_up_to = np.cumsum(weight, dtype=np.float64)
        return cls(distinct, np.concatenate([[0.0], rank_up_to[:-1]]), rank_up_to,
                   np.asarray(weight, dtype=np.float64), rank_up_to[-1])

    @classmethod
    def empty(cls) -> "WeightedQuantileSummary":
        return cls(np.empty(0), np.empty(0), np.empty(0), np.empty(0), 0.0)

    def __len__(self) -> int:
        return len(self.values)

    def add(self, values, weights=None) -> "WeightedQuantileSummary":
        """This summary merged with the exact summary of a block of values."""
        return self.merge(WeightedQuantileSummary.from_values(values, weights))

    def _next_lo(self) -> np.ndarray:
        return self.rmin + self.wmin

    def _prev_hi(self) -> np.ndarray:
        return self.rmax - self.wmin

    def _bounds_at(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rmin, rmax, wmin) of this summary's data at each of the sorted `values`: its
        own entry's where it keeps the value, else from its neighbours (the weight below
        v is at least the weight up to the kept value before v, the weight up to v at
        most the weight below the kept value after v)."""
        n = len(self.values)
        if n == 0:
            zeros = np.zeros(len(values))
            return zeros, zeros + self.total, zeros
        after = np.searchsorted(self.values, values)  # first kept value >= v
        at = np.minimum(after, n - 1)
        kept = self.values[at] == values
        before = np.maximum(after - 1, 0)
        rmin = np.where(kept, self.rmin[at], np.where(after > 0, self._next_lo()[before], 0.0))
        rmax = np.where(kept, self.rmax[at], np.where(after < n, self._prev_hi()[at], self.total))
        return rmin, rmax, np.where(kept, self.wmin[at], 0.0)

    def merge(self, other: "WeightedQuantileSummary") -> "WeightedQuantileSummary":
        """The summary of both summaries' data (every value either keeps; bounds summed,
        so merge(a, b) and merge(b, a) are equal to the bit)."""
        if not isinstance(other, WeightedQuantileSummary):
            raise TypeError(f"other must be a WeightedQuantileSummary, got {type(other).__name__}")
        if self.total == 0 or other.total == 0:  # nothing to add (summaries are immutable)
            return other if self.total == 0 else self
        values = np.union1d(self.values, other.values)
        mine, theirs = self._bounds_at(values), other._bounds_at(values)
        rmin, rmax, wmin = (a + b for a, b in zip(mine, theirs))
        return WeightedQuantileSummary(values, rmin, rmax, wmin, self.total + other.total)

    def _query_indices(self, ranks: np.ndarray) -> np.ndarray:
        """For each rank r, the kept value whose bounds are nearest r: below the midpoint
        of its bounds a value is at most r - next_lo away, above it prev_hi - r (both
        nondecreasing along the values), so the best is one of the two neighbours of r
        among the midpoints."""
        next_lo, prev_hi = self._next_lo(), self._prev_hi()
        right = np.searchsorted((next_lo + prev_hi) / 2, ranks, side="right")
        left = np.maximum(right - 1, 0)
        right_c = np.minimum(right, len(self.values) - 1)
        take_left = (right == len(self.values)) | ((right > 0) & (ranks - next_lo[left] <= prev_hi[right_c] - ranks))
        return np.where(take_left, left, right_c)

    def query(self, ranks) -> np.ndarray:
        """The kept values answering weighted ranks in [0, total] (within max_error)."""
        ranks = np.asarray(ranks, dtype=np.float64)
        if len(self.values) == 0:
            raise ValueError("query: the summary is empty (no values with positive weight)")
        return self.values[self._query_indices(ranks)]

    def prune(self, size: int) -> "WeightedQuantileSummary":
        """At most `size` (>= 2) kept values: those answering ranks total * j / (size - 1),
        j = 0..size-1 (the first and last value always among them); the error grows by
        total / (2 (size - 1)) at most."""
        if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 2:
            raise ValueError(f"size must be an int >= 2, got {size!r}")
        if len(self.values) <= size:
            return self
        keep = np.unique(self._query_indices(self.total * np.arange(size) / (size - 1)))
        return WeightedQuantileSummary(self.values[keep], self.rmin[keep], self.rmax[keep], self.wmin[keep],
                                       self.total)

    def max_error(self) -> float:
        """The bound E of the module docstring on the rank error of `query`."""
        if len(self.values) == 0:
            return 0.0
        next_lo, prev_hi = self._next_lo(), self._prev_hi()
        terms = [prev_hi[0], self.total - next_lo[-1], np.max(prev_hi - next_lo) / 2, 0.0]
        if len(self.values) > 1:
            terms.append(np.max(prev_hi[1:] - next_lo[:-1]) / 2)
        return float(max(terms))

    def entry_weights(self) -> np.ndarray:
        """The weight each kept value stands for: its own, plus the estimated weight of the
        dropped values between it and the kept value before (the midpoint of the bounds).
        Their running sum estimates each value's rank up to and including it: exactly
        the distinct values' weights when the summary is exact."""
        weights = self.wmin.copy()
        between_lo = self.rmin[1:] - self.rmax[:-1]
        between_hi = self._prev_hi()[1:] - self._next_lo()[:-1]
        weights[1:] += np.maximum((between_lo + between_hi) / 2, 0.0)
        return weights


class QuantileSketch:
    """Weighted quantile summaries of every feature of a matrix's rows, each pruned to
    `size` values, and whether the feature has missing values; `add` blocks of rows,
    `merge` sketches of other rows, then `bin_mapper` the bin edges."""

    def __init__(self, n_features: int, size: int):
        if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) or n_features < 1:
            raise ValueError(f"n_features must be a positive int, got {n_features!r}")
        if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 2:
            raise ValueError(f"size must be an int >= 2, got {size!r}")
        self.size: int = int(size)
        self.summaries: list[WeightedQuantileSummary] = [WeightedQuantileSummary.empty() for _ in range(n_features)]
        self.has_missing: np.ndarray = np.zeros(n_features, dtype=bool)

    @property
    def n_features(self) -> int:
        return len(self.summaries)

    def add(self, X, weights=None, n_threads: int = 1) -> "QuantileSketch":
        """Summarise a block of rows (n_rows, n_features), weighted by `weights` (n_rows,
        finite, >= 0; None: 1 each), into this sketch (in place; returns it). Unweighted
        columns are sorted by the binning's own kernel, in `n_threads` threads (0: all)."""
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X must have shape (n_rows, {self.n_features}), got {X.shape}")
        if X.dtype.kind not in "biuf":
            raise ValueError(f"X must be numeric (bool, int or float); got dtype {X.dtype}")
        if X.dtype.type not in (np.float32, np.float64):
            X = X.astype(np.float64)
        if weights is not None:
            weights = np.asarray(weights, dtype=np.float64)
            if weights.shape != (X.shape[0],):
                raise ValueError(f"weights must have shape ({X.shape[0]},), got {weights.shape}")
            if not np.all(np.isfinite(weights)) or np.any(weights < 0):
                raise ValueError("weights must be finite and >= 0")
        if X.shape[0] == 0:
            return self
        exact = self._unweighted(X, n_threads) if weights is None else self._weighted(X, weights)
        self.summaries = [s.merge(e).prune(self.size) for s, e in zip(self.summaries, exact)]
        return self

    def _unweighted(self, X: np.ndarray, n_threads: int) -> list:
        """The exact summaries of X's columns, from the distinct values and counts that
        BinMapper.fit finds (a few adjacent columns at a time, sorted in place)."""
        n_rows, exact = X.shape[0], []
        rows = np.arange(n_rows, dtype=np.int64)
        width = min(FEATURES_PER_PASS, self.n_features)
        block = np.empty((width, n_rows), dtype=np.float64)
        counts = np.empty((width, n_rows), dtype=np.uint32)
        n_distinct, n_present = np.empty(width, dtype=np.int64), np.empty(width, dtype=np.int64)
        for first in range(0, self.n_features, FEATURES_PER_PASS):
            width = min(FEATURES_PER_PASS, self.n_features - first)
            gather_columns(X, rows, first, block[:width])
            distinct_values(block[:width], counts[:width], n_distinct[:width], n_present[:width],
                            effective_n_threads(n_threads))
            for j in range(width):
                self.has_missing[first + j] |= bool(n_present[j] < n_rows)
                k = n_distinct[j]
                exact.append(WeightedQuantileSummary.from_distinct(block[j, :k].copy(), counts[j, :k]))
        return exact

    def _weighted(self, X: np.ndarray, weights: np.ndarray) -> list:
        exact = []
        for f in range(self.n_features):
            column = np.asarray(X[:, f], dtype=np.float64)
            self.has_missing[f] |= bool(np.isnan(column).any())
            exact.append(WeightedQuantileSummary.from_values(column, weights))
        return exact

    def merge(self, other: "QuantileSketch") -> "QuantileSketch":
        """A new sketch of both sketches' rows (each feature's summaries merged, pruned)."""
        if not isinstance(other, QuantileSketch):
            raise TypeError(f"other must be a QuantileSketch, got {type(other).__name__}")
        if other.n_features != self.n_features or other.size != self.size:
            raise ValueError(f"other sketches {other.n_features} features to size {other.size}, this one "
                             f"{self.n_features} to size {self.size}")
        merged = QuantileSketch(self.n_features, self.size)
        merged.summaries = [a.merge(b).prune(self.size) for a, b in zip(self.summaries, other.summaries)]
        merged.has_missing = self.has_missing | other.has_missing
        return merged

    def max_error(self) -> np.ndarray:
        """Each feature's rank error bound (in weight; divide by `total` for a fraction)."""
        return np.array([s.max_error() for s in self.summaries])

    def total(self) -> np.ndarray:
        """Each feature's summarised weight (its non-missing rows' weights)."""
        return np.array([s.total for s in self.summaries])

    def bin_mapper(self, max_bins: int = 256, seed: int = 0) -> BinMapper:
        """A fitted BinMapper (numeric features) whose edges come from the sketch as
        `BinMapper.fit` makes them from a sample's distinct values and weights (the
        summaries' kept values and `entry_weights`): the same edges as fit on all the
        rows while every summary is exact (at most `size` distinct values per feature)."""
        mapper = BinMapper(max_bins, seed=seed)
        edges = [edges_from_distinct(s.values, s.entry_weights(), mapper.max_bins - 1) for s in self.summaries]
        has_values = np.array([len(s) > 0 for s in self.summaries])
        # as fit_sparse (sparse_binning.py) sets them, for a mapper fitted without a sample
        mapper.sample_rows = None
        mapper.upper_edges = edges
        mapper.is_usable = np.array([len(e) > 1 for e in edges]) | (self.has_missing & has_values)
        mapper.is_categorical = np.zeros(self.n_features, dtype=bool)
        mapper.n_bins = np.array([len(e) + 1 for e in edges], dtype=np.int32)
        mapper.n_features = self.n_features
        return mapper
