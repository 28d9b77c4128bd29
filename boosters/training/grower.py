"""The tree grower (RFC-0008): sets up the kernels of a training and grows one tree per
boosting round.

Growing a tree repeats one step on a set of leaves with known best splits:

1. partition their rows;
2. histograms of the children: build the smaller child, derive the larger one as
   parent - smaller in the parent's pool slot (subtraction trick); if the parent's
   histogram was evicted, build both; skip children that can never be split;
3. find the best split of every child.

Depth-wise expands a whole level per step; leaf-wise the single best leaf. The loop
itself is `_grow.GrowthLoop` (Cython: no interpreter time per split); this module
prepares the gradients of each tree and turns the grown nodes into a `Tree`.
"""

from __future__ import annotations

import numpy as np

from boosters._lib.arrays import unique
from boosters.config import GBDTConfig, GrowthStrategy
from boosters.model.tree import Tree
from boosters.training._grow import GrowthLoop, leaf_values
from boosters.training._partition import RowPartitioner
from boosters.training._split import FloatSplitFinder, QuantizedSplitFinder
from boosters.training.histograms._build import FloatHistogramBuilder, QuantizedHistogramBuilder
from boosters.training.histograms._pool import HistogramPool
from boosters.training.histograms._quantize import max_levels
from boosters.training.layout import choose_layout


class TreeGrower:
    """Grows one tree per call to `grow` from (n_rows, 2) float32 gradients.

    `histogram_mode` "f64" accumulates float64 histograms; "i16" / "i8" quantize each
    tree's gradients to 16 / 8-bit integers and accumulate exact packed integer
    histograms (see histograms/_quantize.pyx), then renew the leaf values from the
    full-precision gradients when `config.renew_leaves`. The mode picks the builder's and
    the split finder's classes, once.
    """

    def __init__(self, binned, bin_mapper, config: GBDTConfig, n_threads: int, histogram_mode: str = "f64"):
        leafwise = config.growth_strategy is GrowthStrategy.Leafwise
        self.l1, self.l2 = config.l1, config.l2
        self.learning_rate = config.learning_rate
        features = np.flatnonzero(bin_mapper.is_usable).astype(np.int32)
        columns = unique(binned.feature_column[features]).astype(np.int32)  # what holds them
        first_column_bins = (0, 0)
        if len(features) > 0:
            first_column_bins = tuple(int(b) for b in binned.column_offsets[columns[0]:columns[0] + 2])
        max_nodes = 2 * config.n_leaves - 1 if leafwise else 2 ** (config.max_depth + 1) - 1
        max_nodes = max(1, min(max_nodes, 2 * binned.n_rows - 1))
        self.quantized = histogram_mode in ("i16", "i8")
        if self.quantized:
            bits = 16 if histogram_mode == "i16" else 8
            self.levels = max_levels(binned.n_rows, bits, config.quantization_levels)
            self.packed = np.empty(binned.n_rows, dtype=np.int32 if bits == 16 else np.int16)
        self.pool = HistogramPool(config.cache_size, binned.total_bins, max_nodes, self.quantized)
        self.partitioner = RowPartitioner(binned, max_nodes, n_threads)
        self.layout = choose_layout(binned, columns, config.histogram_layout)
        params = dict(l1=config.l1, l2=config.l2, min_child_weight=config.min_child_weight,
                      min_gain_to_split=config.min_gain_to_split, min_samples_leaf=config.min_samples_leaf,
                      n_threads=n_threads)
        if self.quantized:  # the builder quantizes each tree's gradients; the finder reads its scales
            self.builder = QuantizedHistogramBuilder(binned, self.pool.data, columns, n_threads, config.prefetch,
                                                     layout=self.layout)
            self.builder.set_quantizer(self.packed, self.levels, config.seed)
            self.finder = QuantizedSplitFinder.for_binned(self.pool.data, binned, features, sum_bits=self.builder.sum_bits,
                                                          scales=self.builder.scales, **params)
        else:
            self.builder = FloatHistogramBuilder(binned, self.pool.data, columns, n_threads, config.prefetch,
                                                 layout=self.layout)
            self.finder = FloatSplitFinder.for_binned(self.pool.data, binned, features, **params)
        self.loop = GrowthLoop(
            self.builder, self.finder, self.partitioner, self.pool, leafwise=leafwise,
            max_leaves=config.n_leaves if leafwise else max_nodes, max_depth=config.max_depth,
            min_samples_leaf=config.min_samples_leaf, totals_bins=first_column_bins,
            renew_leaf_sums=self.quantized and config.renew_leaves)
        # every feature's upper bin edges, concatenated: value thresholds of bin thresholds
        edges = bin_mapper.upper_edges
        self.edges = np.concatenate([np.asarray(e, dtype=np.float64) for e in edges] or [np.zeros(0)])
        self.edge_offsets = np.cumsum([0] + [len(e) for e in edges]).astype(np.int64)
        self._leaves = self._leaf_values = None

    def grow(self, gradients: np.ndarray, tree_index: int = 0) -> Tree:
        """Grow a tree; `tree_index` (which tree of the training this is) seeds the
        stochastic rounding of quantized gradients."""
        self.builder.set_gradients(gradients)
        self.partitioner.reset()
        self.pool.reset()
        return self._finish(self.loop.grow(gradients, tree_index))

    def update_predictions(self, margins: np.ndarray) -> None:
        """Add the last grown tree's leaf values to the training margins (one output
        column, float64, contiguous), reading each leaf's rows from the partition."""
        self.partitioner.add_leaf_values(self._leaves, self._leaf_values, margins)

    @property
    def n_evictions(self) -> int:
        return self.pool.n_evictions

    def _finish(self, n_nodes: int) -> Tree:
        # copies: the loop's arrays are reused by the next tree
        loop = self.loop
        feature, threshold_bin, default_left, left, right, gain, sum_g, sum_h, count = (
            np.array(a[:n_nodes]) for a in (loop.feature, loop.threshold_bin, loop.default_left, loop.left,
                                            loop.right, loop.gain, loop.sum_g, loop.sum_h, loop.count))
        # value bins 1..b go left: the threshold is bin b's upper edge (x <= edge goes left)
        threshold = np.zeros(n_nodes)
        split = feature >= 0
        threshold[split] = self.edges[self.edge_offsets[feature[split]] + threshold_bin[split] - 1]
        leaves = np.flatnonzero(left < 0)
        values = np.empty(n_nodes)
        leaf_values(sum_g, sum_h, self.l1, self.l2, self.learning_rate, values)
        self._leaves = leaves.astype(np.int64)
        self._leaf_values = values[leaves]
        return Tree(feature, threshold, threshold_bin, default_left, left, right, values, gain, sum_h, count)

