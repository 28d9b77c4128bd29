"""Kernel throughput on a 500k x 50 matrix, in row x feature updates per second."""

import numpy as np

from boosters._testing.kernels import (
    build_histogram_contiguous,
    build_histogram_gathered,
    build_histogram_packed,
    build_nodes,
    find_best_splits,
    gather_gradients,
    node_count,
    quantize_gradients,
    split,
    subtract_histograms,
)
from boosters.data.binning import BinMapper

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


class QuantizedHistogram:
    """Packed-integer (i16 / i8) column-wise histograms of the root and of a gathered node."""

    params = (["i16", "i8"], THREADS)
    param_names = ["histogram_mode", "n_threads"]

    def setup(self, mode, n_threads):
        from boosters.training.histograms._quantize import max_levels

        self.binned, gh, self.rows = binned_matrix(), gradients(), node_rows()
        bits = 16 if mode == "i16" else 8
        self.packed = np.empty(N_ROWS, dtype=np.int32 if bits == 16 else np.int16)
        quantize_gradients(gh, self.packed, max_levels(N_ROWS, bits), 0, 0, n_threads)
        self.hist = np.zeros(self.binned.total_bins, dtype=np.int64)

    def time_root(self, mode, n_threads):
        build_histogram_packed(self.binned, self.packed, self.hist, n_threads=n_threads)

    def time_gathered(self, mode, n_threads):
        build_histogram_packed(self.binned, self.packed, self.hist, rows=self.rows, n_threads=n_threads)


class Quantize:
    """Gradient discretization of 500k rows (scales, stochastic rounding, packing)."""

    params = THREADS
    param_names = ["n_threads"]

    def setup(self, n_threads):
        from boosters.training.histograms._quantize import max_levels

        self.gh = gradients()
        self.out = np.empty(N_ROWS, dtype=np.int32)
        self.levels = max_levels(N_ROWS, 16)

    def time_quantize(self, n_threads):
        quantize_gradients(self.gh, self.out, self.levels, 0, 0, n_threads)


class NodeHistogram:
    """The grower's builder on a partitioned node (a random half of the rows), both
    layouts and precisions; throughput in row x column updates per second."""

    params = (["column", "row"], ["f64", "i16"], THREADS)
    param_names = ["layout", "histogram_mode", "n_threads"]

    def setup(self, layout, mode, n_threads):
        from boosters.training.partition._partition import RowPartitioner
        from boosters.training.histograms._build import FloatHistogramBuilder, QuantizedHistogramBuilder
        from boosters.training.histograms._quantize import max_levels

        binned, gh = binned_matrix(), gradients()
        self.part = RowPartitioner(binned, 3, n_threads)
        split(self.part, 0, 0, 128, False, 1, 2)
        if mode == "i16":
            pool = np.zeros((3, binned.total_bins), dtype=np.int64)
            self.builder = QuantizedHistogramBuilder(binned, pool, None, n_threads, True, 64, layout)
            packed = np.empty(N_ROWS, dtype=np.int32)
            quantize_gradients(gh, packed, max_levels(N_ROWS, 16), 0, 0, n_threads)
            self.builder.set_quantized(packed)
        else:
            pool = np.zeros((3, binned.total_bins, 2))
            self.builder = FloatHistogramBuilder(binned, pool, None, n_threads, True, 64, layout)
            self.builder.set_gradients(gh)

    def time_build(self, layout, mode, n_threads):
        build_nodes(self.builder, [1], self.part, [1])

    def track_updates_per_second(self, layout, mode, n_threads):
        return node_count(self.part, 1) * N_FEATURES / best_seconds(lambda: self.time_build(layout, mode, n_threads))

    track_updates_per_second.unit = "updates/s"


class NarrowBins:
    """The grower's quantized builder on a small node (~7.8k of 500k rows): 64-bit bins
    (levels None: the word limit) against the node's own width (3 levels: 32-bit bins)."""

    params = (["column", "row"], [None, 3], THREADS)
    param_names = ["layout", "quantization_levels", "n_threads"]

    def setup(self, layout, levels, n_threads):
        from boosters.training.partition._partition import RowPartitioner
        from boosters.training.histograms._build import QuantizedHistogramBuilder

        binned = binned_matrix()
        self.part = RowPartitioner(binned, 3, n_threads)
        split(self.part, 0, 0, 4, False, 1, 2)
        packed = np.empty(N_ROWS, dtype=np.int32)
        quantize_gradients(gradients(), packed, 3, 0, 0, n_threads)
        self.builder = QuantizedHistogramBuilder(binned, np.zeros((3, binned.total_bins), dtype=np.int64), None,
                                                 n_threads, True, 64, layout)
        self.builder.set_quantized(packed, levels)

    def time_build(self, layout, levels, n_threads):
        build_nodes(self.builder, [1], self.part, [1])

    def track_updates_per_second(self, layout, levels, n_threads):
        return node_count(self.part, 1) * N_FEATURES / best_seconds(lambda: self.time_build(layout, levels, n_threads))

    track_updates_per_second.unit = "updates/s"


class SplitScan:
    """Best-split search over a 50-feature x 256-bin histogram of two nodes."""

    def setup(self):
        from boosters.training.split._split import FloatSplitFinder

        binned = binned_matrix()
        pool = np.zeros((2, binned.total_bins, 2))
        build_histogram_contiguous(binned, gradients(), pool[0])
        pool[1] = pool[0]
        self.finder = FloatSplitFinder(pool, binned.hist_offsets, binned.n_bins, np.arange(N_FEATURES), l1=0.0,
                                       l2=0.0, min_child_weight=1e-3, min_gain_to_split=0.0, min_samples_leaf=20)
        g, h = pool[0, :256].sum(axis=0)
        self.args = ([0, 1], [g, g], [h, h], [N_ROWS, N_ROWS])

    def time_find(self):
        find_best_splits(self.finder, *self.args)


class Partition:
    """Stable partition of all rows (the root) and of a gathered node, by one feature."""

    params = THREADS
    param_names = ["n_threads"]

    def setup(self, n_threads):
        from boosters.training.partition._partition import RowPartitioner

        self.part = RowPartitioner(binned_matrix(), 5, n_threads)

    def time_root_and_child(self, n_threads):
        self.part.reset()
        split(self.part, 0, 0, 128, False, 1, 2)
        split(self.part, 1, 1, 64, False, 3, 4)
