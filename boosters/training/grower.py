"""Tree growers (RFC-0008): depth-wise and leaf-wise expansion over the Cython kernels.

Growing a tree repeats one step, `_expand`, on a set of leaves with known best splits:

1. partition their rows (one kernel call for the whole set);
2. histograms of the children: build the smaller child, derive the larger one as
   parent - smaller in the parent's pool slot (subtraction trick); if the parent's
   histogram was evicted, build both; skip children that can never be split;
3. find the best split of every child (one call).

Depth-wise expands a whole level per step; leaf-wise the single best leaf.
"""

from __future__ import annotations

import heapq

import numpy as np

from boosters._lib.arrays import unique
from boosters.config import GBDTConfig, GrowthStrategy
from boosters.model.tree import Tree
from boosters.training._partition import RowPartitioner
from boosters.training._split import SplitFinder, leaf_weight
from boosters.training.histograms._build import HistogramBuilder
from boosters.training.histograms._quantize import max_levels, quantize_gradients
from boosters.training.histograms.pool import HistogramPool
from boosters.training.layout import choose_layout

# A best split as returned by SplitFinder.find_best_many
GAIN, FEATURE, BIN, DEFAULT_LEFT, HAS_MISSING, LEFT_G, LEFT_H = range(7)


class _Nodes:
    """Per-node growth state and the tree arrays being filled, as parallel lists."""

    def __init__(self):
        self.depth, self.sum_g, self.sum_h, self.count, self.best = [], [], [], [], []
        self.feature, self.threshold, self.threshold_bin, self.default_left = [], [], [], []
        self.left, self.right, self.gain = [], [], []

    def add(self, depth: int, sum_g: float, sum_h: float, count: int) -> int:
        self.depth.append(depth)
        self.sum_g.append(sum_g)
        self.sum_h.append(sum_h)
        self.count.append(count)
        self.best.append(None)
        self.feature.append(-1)
        self.threshold.append(0.0)
        self.threshold_bin.append(0)
        self.default_left.append(False)
        self.left.append(-1)
        self.right.append(-1)
        self.gain.append(0.0)
        return len(self.depth) - 1


class TreeGrower:
    """Grows one tree per call to `grow` from (n_rows, 2) float32 gradients.

    `histogram_mode` "f64" accumulates float64 histograms; "i16" / "i8" quantize each
    tree's gradients to 16 / 8-bit integers and accumulate exact packed integer
    histograms (see histograms/_quantize.pyx), then renew the leaf values from the
    full-precision gradients when `config.renew_leaves`.
    """

    def __init__(self, binned, bin_mapper, config: GBDTConfig, n_threads: int, histogram_mode: str = "f64"):
        self.leafwise = config.growth_strategy is GrowthStrategy.Leafwise
        self.max_depth = config.max_depth
        self.max_leaves = config.n_leaves if self.leafwise else None
        self.min_samples_leaf = config.min_samples_leaf
        self.l1, self.l2 = config.l1, config.l2
        self.learning_rate = config.learning_rate
        self.upper_edges = bin_mapper.upper_edges
        self.n_rows = binned.n_rows
        features = np.flatnonzero(bin_mapper.is_usable).astype(np.int32)
        columns = unique(binned.feature_column[features]).astype(np.int32)  # what holds them
        self.has_features = len(features) > 0
        if self.has_features:
            self.first_column_bins = tuple(binned.column_offsets[columns[0]:columns[0] + 2])
        if self.leafwise:
            max_nodes = 2 * config.n_leaves - 1
        else:
            max_nodes = 2 ** (config.max_depth + 1) - 1
        max_nodes = max(1, min(max_nodes, 2 * binned.n_rows - 1))
        self.quantized = histogram_mode in ("i16", "i8")
        self.renew_leaves = config.renew_leaves
        self.seed = config.seed
        self.n_threads = n_threads
        if self.quantized:
            bits = 16 if histogram_mode == "i16" else 8
            self.levels = max_levels(binned.n_rows, bits)
            self.packed = np.empty(binned.n_rows, dtype=np.int32 if bits == 16 else np.int16)
        self.pool = HistogramPool(config.cache_size, binned.total_bins, max_nodes, self.quantized)
        self.partitioner = RowPartitioner(binned, max_nodes, n_threads)
        self.layout = choose_layout(binned, columns, config.histogram_layout)
        self.builder = HistogramBuilder(binned, self.pool.data, columns, n_threads, config.prefetch,
                                        layout=self.layout)
        self.finder = SplitFinder.for_binned(
            self.pool.data, binned, features,
            l1=config.l1, l2=config.l2, min_child_weight=config.min_child_weight,
            min_gain_to_split=config.min_gain_to_split, min_samples_leaf=config.min_samples_leaf,
            n_threads=n_threads,
        )
        self._leaves = self._leaf_values = None

    # -- public -------------------------------------------------------------------

    def grow(self, gradients: np.ndarray, tree_index: int = 0) -> Tree:
        """Grow a tree; `tree_index` (which tree of the training this is) seeds the
        stochastic rounding of quantized gradients."""
        if self.quantized:
            scales = quantize_gradients(gradients, self.packed, self.levels, self.seed, tree_index, self.n_threads)
            self.builder.set_quantized(self.packed)
            self.finder.set_scales(*scales)
        else:
            self.builder.set_gradients(gradients)
        self.partitioner.reset()
        self.pool.reset()
        nodes = _Nodes()
        root = nodes.add(0, 0.0, 0.0, self.n_rows)
        if self._splittable(nodes, root):
            slot, _ = self.pool.acquire(root)
            self.builder.build_nodes([slot], self.partitioner, [root])
            # The root's sums are those of any column of its histogram: consistent with
            # every histogram sum that follows.
            nodes.sum_g[root], nodes.sum_h[root] = self.finder.column_totals(slot, *self.first_column_bins)
            self._find_splits(nodes, [root], [slot])
        else:
            sums = gradients.sum(axis=0, dtype=np.float64)
            nodes.sum_g[root], nodes.sum_h[root] = float(sums[0]), float(sums[1])
        if self.leafwise:
            self._grow_leafwise(nodes)
        else:
            self._grow_depthwise(nodes)
        return self._finish(nodes, gradients)

    def update_predictions(self, margins: np.ndarray) -> None:
        """Add the last grown tree's leaf values to the training margins (one output
        column, float64, contiguous), reading each leaf's rows from the partition."""
        self.partitioner.add_leaf_values(self._leaves, self._leaf_values, margins)

    @property
    def n_evictions(self) -> int:
        return self.pool.n_evictions

    # -- growth strategies ----------------------------------------------------------

    def _grow_depthwise(self, nodes: _Nodes) -> None:
        level = [0]
        while level:
            parents = [n for n in level if nodes.best[n] is not None]
            level = self._expand(nodes, parents, children_final=False) if parents else []

    def _grow_leafwise(self, nodes: _Nodes) -> None:
        heap = [(-nodes.best[0][GAIN], 0)] if nodes.best[0] is not None else []
        n_leaves = 1
        while heap and n_leaves < self.max_leaves:
            _, node = heapq.heappop(heap)  # best gain first; ties: lowest node id
            n_leaves += 1
            for child in self._expand(nodes, [node], children_final=n_leaves == self.max_leaves):
                if nodes.best[child] is not None:
                    heapq.heappush(heap, (-nodes.best[child][GAIN], child))

    # -- one expansion step -----------------------------------------------------------

    def _splittable(self, nodes: _Nodes, node: int) -> bool:
        return (self.has_features
                and (self.max_depth is None or nodes.depth[node] < self.max_depth)
                and nodes.count[node] >= max(2, 2 * self.min_samples_leaf))

    def _expand(self, nodes: _Nodes, parents: list[int], children_final: bool) -> list[int]:
        """Split `parents` by their best splits; returns the children, with their best
        splits found unless `children_final` (they will stay leaves)."""
        lefts, rights = [], []
        for p in parents:
            depth = nodes.depth[p] + 1
            lefts.append(nodes.add(depth, 0.0, 0.0, 0))
            rights.append(nodes.add(depth, 0.0, 0.0, 0))
        best = [nodes.best[p] for p in parents]
        n_left = self.partitioner.split_many(
            parents, [b[FEATURE] for b in best], [b[BIN] for b in best],
            [b[DEFAULT_LEFT] for b in best], lefts, rights)
        for p, left, right, split, nl in zip(parents, lefts, rights, best, n_left.tolist()):
            self._record_split(nodes, p, left, right, split, nl)
        children = [c for pair in zip(lefts, rights) for c in pair]
        if children_final:
            for p in parents:
                self.pool.release(p)
            return children
        group_size = len(parents) if self.pool.identity else max(1, self.pool.n_slots // 2)
        for start in range(0, len(parents), group_size):
            self._children_histograms(nodes, parents[start:start + group_size],
                                      lefts[start:start + group_size], rights[start:start + group_size])
        return children

    def _record_split(self, nodes: _Nodes, parent: int, left: int, right: int, split, n_left: int) -> None:
        feature, bin_ = split[FEATURE], split[BIN]
        n_right = nodes.count[parent] - n_left
        nodes.feature[parent] = feature
        nodes.threshold_bin[parent] = bin_
        nodes.threshold[parent] = float(self.upper_edges[feature][bin_ - 1])
        # A feature with no missing values here sends them (at prediction) to the larger child.
        nodes.default_left[parent] = split[DEFAULT_LEFT] if split[HAS_MISSING] else n_left >= n_right
        nodes.left[parent], nodes.right[parent] = left, right
        nodes.gain[parent] = split[GAIN]
        g, h = nodes.sum_g[parent], nodes.sum_h[parent]
        nodes.sum_g[left], nodes.sum_h[left], nodes.count[left] = split[LEFT_G], split[LEFT_H], n_left
        nodes.sum_g[right], nodes.sum_h[right], nodes.count[right] = g - split[LEFT_G], h - split[LEFT_H], n_right

    def _children_histograms(self, nodes: _Nodes, parents, lefts, rights) -> None:
        """Histograms and best splits of the children of a group of parents that fits
        the pool: at most two pinned slots per parent."""
        pool = self.pool
        build_slots, build_nodes = [], []
        sub_parent, sub_small, sub_out = [], [], []
        pinned, evaluate_nodes, evaluate_slots = [], [], []
        for parent, left, right in zip(parents, lefts, rights):
            small, large = (left, right) if nodes.count[left] <= nodes.count[right] else (right, left)
            need_small, need_large = self._splittable(nodes, small), self._splittable(nodes, large)
            parent_slot = pool.get(parent)
            if not (need_small or need_large):
                pool.release(parent)
                continue
            if parent_slot is None:  # evicted: build what is needed directly
                for child, needed in ((small, need_small), (large, need_large)):
                    if needed:
                        slot, _ = pool.acquire(child)
                        pool.pin(slot)
                        pinned.append(slot)
                        build_slots.append(slot)
                        build_nodes.append(child)
                        evaluate_nodes.append(child)
                        evaluate_slots.append(slot)
                continue
            pool.pin(parent_slot)
            pinned.append(parent_slot)
            small_slot, _ = pool.acquire(small)
            pool.pin(small_slot)
            pinned.append(small_slot)
            build_slots.append(small_slot)
            build_nodes.append(small)
            if need_small:
                evaluate_nodes.append(small)
                evaluate_slots.append(small_slot)
            if need_large:
                large_slot = pool.move_mapping(parent, large)
                sub_parent.append(parent_slot)
                sub_small.append(small_slot)
                sub_out.append(large_slot)
                evaluate_nodes.append(large)
                evaluate_slots.append(large_slot)
            else:
                pool.release(parent)
        self.builder.build_nodes(build_slots, self.partitioner, build_nodes)
        self.builder.subtract_many(sub_parent, sub_small, sub_out)
        self._find_splits(nodes, evaluate_nodes, evaluate_slots)
        for slot in pinned:
            pool.unpin(slot)
        for child in build_nodes:  # small children that will never be split
            if not self._splittable(nodes, child):
                pool.release(child)

    def _find_splits(self, nodes: _Nodes, node_ids: list[int], slots: list[int]) -> None:
        if not node_ids:
            return
        results = self.finder.find_best_many(
            slots, [nodes.sum_g[n] for n in node_ids], [nodes.sum_h[n] for n in node_ids],
            [nodes.count[n] for n in node_ids])
        for node, split in zip(node_ids, results):
            nodes.best[node] = split
            if split is None:
                self.pool.release(node)

    # -- result ---------------------------------------------------------------------------

    def _finish(self, nodes: _Nodes, gradients: np.ndarray) -> Tree:
        leaves = [n for n, left in enumerate(nodes.left) if left < 0]
        if self.quantized and self.renew_leaves and len(leaves) > 1:
            # the structure came from quantized histograms; the leaf values come from the
            # full-precision gradients of each leaf's rows
            sum_g, sum_h = self.partitioner.leaf_sums(leaves, gradients)
            for n, g, h in zip(leaves, sum_g.tolist(), sum_h.tolist()):
                nodes.sum_g[n], nodes.sum_h[n] = g, h
        lr = self.learning_rate
        values = [lr * leaf_weight(g, h, self.l1, self.l2) for g, h in zip(nodes.sum_g, nodes.sum_h)]
        self._leaves = np.asarray(leaves, dtype=np.int64)
        self._leaf_values = np.asarray([values[n] for n in leaves], dtype=np.float64)
        return Tree(nodes.feature, nodes.threshold, nodes.threshold_bin, nodes.default_left,
                    nodes.left, nodes.right, values, nodes.gain, nodes.sum_h, nodes.count)
