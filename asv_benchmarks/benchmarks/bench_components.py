"""Kernel throughput on a 500k x 50 matrix, in row x feature updates per second."""

import numpy as np

from boosters.data.binning import BinMapper
from boosters.training.histograms._columnwise import (
    build_histogram_contiguous,
    build_histogram_gathered,
    gather_gradients,
    subtract_histograms,
)

from ._data import N_FEATURES, N_ROWS, best_seconds, binned_matrix, gradients, node_rows, raw_matrix

THREADS = [1, 2]


class RootHistogram:
    """Histogram of all rows in storage order (the root node)."""

    params = THREADS
    param_names = ["n_threads"]

    def setup(self, n_threads):
        self.binned, self.gh = binned_matrix(), gradients()
        self.hist = np.zeros((self.binned.total_bins, 2))

    def time_build(self, n_threads):
        build_histogram_contiguous(self.binned, self.gh, self.hist, n_threads=n_threads)

    def track_updates_per_second(self, n_threads):
        return N_ROWS * N_FEATURES / best_seconds(lambda: self.time_build(n_threads))

    track_updates_per_second.unit = "updates/s"


class GatheredHistogram:
    """Histogram of a node holding a sorted random half of the rows, with pre-gathered
    (ordered) gradients; software prefetch on or off."""

    params = (THREADS, [True, False])
    param_names = ["n_threads", "prefetch"]

    def setup(self, n_threads, prefetch):
        self.binned, gh, self.rows = binned_matrix(), gradients(), node_rows()
        self.ordered = np.empty((len(self.rows), 2), dtype=np.float32)
        gather_gradients(gh, self.rows, self.ordered)
        self.hist = np.zeros((self.binned.total_bins, 2))

    def time_build(self, n_threads, prefetch):
        build_histogram_gathered(self.binned, self.rows, self.ordered, self.hist,
                                 n_threads=n_threads, prefetch=prefetch)

    def track_updates_per_second(self, n_threads, prefetch):
        return len(self.rows) * N_FEATURES / best_seconds(lambda: self.time_build(n_threads, prefetch))

    track_updates_per_second.unit = "updates/s"


class GatherGradients:
    params = THREADS
    param_names = ["n_threads"]

    def setup(self, n_threads):
        self.gh, self.rows = gradients(), node_rows()
        self.out = np.empty((len(self.rows), 2), dtype=np.float32)

    def time_gather(self, n_threads):
        gather_gradients(self.gh, self.rows, self.out, n_threads=n_threads)


class Subtraction:
    """sibling = parent - child over the whole flat histogram (50 x 256 bins)."""

    def setup(self):
        rng = np.random.default_rng(4)
        total_bins = binned_matrix().total_bins
        self.parent, self.child = rng.normal(size=(2, total_bins, 2))
        self.out = np.empty_like(self.parent)

    def time_subtract(self):
        subtract_histograms(self.parent, self.child, self.out)


class Binning:
    """Fit bin edges (200k-row sample) and map 500k x 50 float64 values to bins."""

    params = THREADS
    param_names = ["n_threads"]
    timeout = 300

    def setup(self, n_threads):
        self.X = raw_matrix()
        self.mapper = BinMapper(256).fit(self.X, n_threads=n_threads)

    def time_fit(self, n_threads):
        BinMapper(256).fit(self.X, n_threads=n_threads)

    def time_transform(self, n_threads):
        self.mapper.transform(self.X, n_threads=n_threads)

    def track_transform_values_per_second(self, n_threads):
        return self.X.size / best_seconds(lambda: self.time_transform(n_threads), repeats=3)

    track_transform_values_per_second.unit = "values/s"
