"""What a Dask worker keeps of one partition, and the tasks that run on it.

Nothing here imports dask: these are plain functions on plain objects, run by Dask
tasks pinned to the worker that holds the partition's state (see `_driver.py`).

A partition is binned once, with the global bin edges, and kept with its labels,
weights and margins. Per tree, its row partitioner follows the driver's splits, so
that each growth step costs the worker one histogram build over the rows of the nodes
it is asked for (the smaller child of each split parent: the driver derives the larger
one by subtraction).

Quantized histograms ("i16", "i8") are exact integer sums, whatever the order of
addition: each partition quantizes its rows with the global scales (from the reduced
maxima of the tree's gradients) and each row's own random bits (its global row index),
as the single-machine quantizer does, so the trees equal the single-machine ones.
"""

from __future__ import annotations

import numpy as np

# the kernels' checked Python entry points (the growth loop calls them from Cython)
from boosters._testing.kernels import (
    build_histogram_gathered, build_histogram_packed, node_count, node_rows, split_many,
)
from boosters.training._partition import RowPartitioner
from boosters.training.histograms._quantize import quantize_block


class PartitionState:
    """One partition's binned rows, labels, weights, margins (n_outputs, n_rows) and the
    current tree's row partition. Mutated in place by the tasks below: a task that reads
    it must run on the worker that holds it."""

    def __init__(self, X, y, weights, mapper, objective, base_scores, max_nodes: int, first_row: int,
                 quantizer=None):
        """`quantizer`: (bits, levels, seed) for quantized histograms, None for float64."""
        self.binned = mapper.transform(np.asarray(X), n_threads=1)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.weights = None if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
        self.objective = objective
        self.n_rows = self.binned.n_rows
        self.margins = np.repeat(np.asarray(base_scores, dtype=np.float64)[:, None], self.n_rows, axis=1)
        self.gradients = np.empty((len(base_scores), self.n_rows, 2), dtype=np.float32)
        self.partitioner = RowPartitioner(self.binned, max_nodes, 1)
        self.output = 0
        self.tree = -1  # the tree being grown; a state rebuilt by Dask after losing its worker has -1
        self.first_row = first_row
        self.quantizer = quantizer
        if quantizer is not None:
            self.packed = np.empty(self.n_rows, dtype=np.int32 if quantizer[0] == 16 else np.int16)

    def expect(self, tree: int) -> None:
        """Raise unless this state is growing `tree`: Dask rebuilds a lost worker's results
        from their inputs, and a rebuilt state has lost its margins and row partition (it
        must never be trained on silently)."""
        if self.tree != tree:
            raise RuntimeError(f"boosters.dask: the state of the partition starting at row {self.first_row} was "
                               f"lost (its worker died?) and rebuilt from its data; expected tree {tree}, it is "
                               f"at {self.tree}: restart the training")

    def histograms(self, nodes) -> np.ndarray:
        """Each node's histogram over its rows here: float64 (len(nodes), total_bins, 2),
        summed in partition order (a fixed order: the same sums on any worker), or
        quantized, int64 words (len(nodes), total_bins) of 32-bit packed sums (exact)."""
        if self.quantizer is not None:
            hist = np.zeros((len(nodes), self.binned.total_bins), dtype=np.int64)
            for i, node in enumerate(nodes):
                build_histogram_packed(self.binned, self.packed, hist[i], rows=node_rows(self.partitioner, node))
            return hist
        hist = np.zeros((len(nodes), self.binned.total_bins, 2))
        gh = self.gradients[self.output]
        for i, node in enumerate(nodes):
            rows = node_rows(self.partitioner, node)
            build_histogram_gathered(self.binned, rows, np.ascontiguousarray(gh[rows]), hist[i])
        return hist


def make_state(X, y, weights, mapper, objective, base_scores, max_nodes, first_row, quantizer):
    return PartitionState(X, y, weights, mapper, objective, base_scores, max_nodes, first_row, quantizer)


def quantization_scales(maxima, levels: int) -> tuple[float, float]:
    """(scale_g, scale_h) from the tree's max |grad| and max hess: _quantize.quantize_rows'."""
    return tuple(float(levels / m) if m > 0 else 0.0 for m in maxima)


def label_sums(y, weights) -> np.ndarray:
    """(sum of w y, sum of w) of a partition: the base score's weighted mean, reduced."""
    y = np.asarray(y, dtype=np.float64)
    if weights is None:
        return np.array([y.sum(), float(len(y))])
    w = np.asarray(weights, dtype=np.float64)
    return np.array([(w * y).sum(), w.sum()])


def start_tree(state: PartitionState, tree: int, previous_leaves, output: int, new_round: bool) -> np.ndarray:
    """Add the previous tree's leaf values to the margins (previous_leaves: (output, leaf
    nodes, values) or None), then start tree `tree` (of the training) for `output`: the
    round's gradients (when `new_round`), the partition reset. Returns max |grad| and max
    |hess| here."""
    state.expect(tree - 1)
    state.tree = tree
    if previous_leaves is not None:
        k, leaves, values = previous_leaves
        state.partitioner.add_leaf_values(leaves, values, state.margins[k])
    if new_round:
        state.objective.gradients(state.margins, state.y, state.weights, state.gradients, 1)
    state.output = output
    state.partitioner.reset()
    gh = state.gradients[output]
    return np.abs(gh).max(axis=0).astype(np.float64) if state.n_rows else np.zeros(2)


def root_histogram(state: PartitionState, tree_index: int, maxima: np.ndarray) -> np.ndarray:
    """The root's histogram here; quantized: the tree's gradients quantized first, with
    the scales of the global `maxima` (tree_index seeds the rounding, as single-machine)."""
    state.expect(tree_index)
    if state.quantizer is not None:
        _, levels, seed = state.quantizer
        scale_g, scale_h = quantization_scales(maxima, levels)
        quantize_block(state.gradients[state.output], state.packed, levels, seed, tree_index, state.first_row,
                       scale_g, scale_h)
    return state.histograms([0])


def leaf_sums(state: PartitionState, tree: int, leaves) -> np.ndarray:
    """(len(leaves), 2) float64: the leaves' float gradient sums here (renewed leaf values)."""
    state.expect(tree)
    gh = state.gradients[state.output]
    return np.array([gh[node_rows(state.partitioner, node)].sum(axis=0, dtype=np.float64) for node in leaves]
                    ).reshape(len(leaves), 2)


def split_nodes(state: PartitionState, tree: int, splits: np.ndarray) -> np.ndarray:
    """Apply the driver's splits, rows (parent, feature, threshold_bin, default_left, left,
    right); returns (2, n_splits) int64: the rows each left / right child got here."""
    state.expect(tree)
    if len(splits) == 0:
        return np.zeros((2, 0), dtype=np.int64)
    parents = splits[:, 0]
    counts = np.array([node_count(state.partitioner, p) for p in parents], dtype=np.int64)
    lefts = split_many(state.partitioner, *(splits[:, j] for j in range(6)))
    return np.stack([lefts, counts - lefts])


def smaller_children_histograms(state: PartitionState, tree: int, splits: np.ndarray, counts: np.ndarray,
                                min_rows: int) -> np.ndarray:
    """Histograms here of the smaller child (by the global `counts`, (2, n): left, right;
    a tie picks the left) of each split with a child of at least `min_rows` rows (the
    others' children can never be split), in split order."""
    state.expect(tree)
    nodes = [int(s[4]) if counts[0, i] <= counts[1, i] else int(s[5])
             for i, s in enumerate(splits) if counts[:, i].max() >= min_rows]
    return state.histograms(nodes)


def add(a, b):
    """The reduction's step: the fixed tree of these makes the sum's order fixed."""
    return a + b


def maximum(a, b):
    return np.maximum(a, b)
