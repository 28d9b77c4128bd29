"""What a Dask worker keeps of one partition, and the tasks that run on it.

Nothing here imports dask: these are plain functions on plain objects, run by Dask
tasks pinned to the worker that holds the partition's state (see `_driver.py`).

A partition is binned once, with the global bin edges, and kept with its labels,
weights and margins. Per tree, its row partitioner follows the driver's splits, so
that each growth step costs the worker one call of the library's histogram builder
over the nodes it is asked for (the smaller child of each split parent: the driver
derives the larger one by subtraction).

Quantized histograms ("i16", "i8") are exact integer sums, whatever the order of
addition: each partition quantizes its rows with the global scales (from the reduced
maxima of the tree's gradients) and each row's own random bits (its global row index),
as the single-machine quantizer does, so the trees equal the single-machine ones.

Everything a state holds beyond its binned rows, labels and weights is a cache of the
trees so far: `resume` rebuilds it (margins, gradients) from the finished trees, which
is how a training goes on after losing a worker.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from boosters._lib.arrays import unique
from boosters.training._node_steps import build_nodes, node_count, node_sums, slot_sums, split_many
from boosters.training._partition import RowPartitioner
from boosters.training.histograms._build import FloatHistogramBuilder, QuantizedHistogramBuilder
from boosters.training.histograms._quantize import quantize_block
from boosters.training.layout import choose_layout

SLOTS = 16  # nodes built per builder call: the state's histogram slots


@dataclass(frozen=True)
class Settings:
    """What every partition of a training shares: `features` the usable features,
    `max_nodes` of a tree, `quantizer` (bits, levels, seed) for quantized histograms
    (None: float64), the histogram layout asked for and the prefetch switch."""
    features: np.ndarray
    max_nodes: int
    quantizer: tuple | None
    histogram_layout: str = "auto"
    prefetch: bool = True


class PartitionState:
    """One partition's binned rows, labels, weights, margins (n_outputs, n_rows) and the
    current tree's row partition. Mutated in place by the tasks below: a task that reads
    it must run on the worker that holds it."""

    def __init__(self, binned, y, weights, objective, base_scores, settings: Settings, first_row: int):
        self.binned, self.y, self.weights = binned, y, weights
        self.objective, self.base_scores, self.settings = objective, base_scores, settings
        self.first_row = first_row
        self.n_rows = binned.n_rows
        self.margins = np.repeat(np.asarray(base_scores, dtype=np.float64)[:, None], self.n_rows, axis=1)
        self.gradients = np.empty((len(base_scores), self.n_rows, 2), dtype=np.float32)
        self.partitioner = RowPartitioner(binned, settings.max_nodes, 1)
        self.output = 0
        self.tree = -1  # the tree being grown; a state rebuilt by Dask after losing its worker has -1
        self.quantizer = settings.quantizer
        columns = unique(binned.feature_column[settings.features]).astype(np.int32)
        layout = choose_layout(binned, columns, settings.histogram_layout)
        n_slots = min(SLOTS, settings.max_nodes)
        if self.quantizer is not None:
            bits, levels, _ = self.quantizer
            self.packed = np.empty(self.n_rows, dtype=np.int32 if bits == 16 else np.int16)
            self.pool = np.zeros((n_slots, binned.total_bins), dtype=np.int64)
            self.builder = QuantizedHistogramBuilder(binned, self.pool, columns, 1, settings.prefetch, layout=layout)
            self.builder.set_quantized(self.packed, levels)
        else:
            self.pool = np.zeros((n_slots, binned.total_bins, 2))
            self.builder = FloatHistogramBuilder(binned, self.pool, columns, 1, settings.prefetch, layout=layout)

    def expect(self, tree: int) -> None:
        """Raise unless this state is growing `tree`: Dask rebuilds a lost worker's results
        from their inputs, and a rebuilt state has lost its margins and row partition (it
        must never be trained on silently)."""
        if self.tree != tree:
            raise RuntimeError(f"boosters.dask: the state of the partition starting at row {self.first_row} was "
                               f"lost (its worker died?) and rebuilt from its data; expected tree {tree}, it is "
                               f"at {self.tree}: restart the training")

    def histograms(self, nodes) -> np.ndarray:
        """Each node's histogram over its rows here, built by the library's histogram
        builder SLOTS nodes at a time: float64 (len(nodes), total_bins, 2), each sum in a
        fixed order (the same sums on any worker), or quantized, int64 words (len(nodes),
        total_bins) of 32-bit packed sums (exact; the partitions' words add up)."""
        nodes = list(nodes)
        quantized = self.quantizer is not None
        shape = (len(nodes),) + self.pool.shape[1:]
        out = np.empty(shape, dtype=np.int64 if quantized else np.float64)
        for start in range(0, len(nodes), len(self.pool)):
            batch = nodes[start:start + len(self.pool)]
            build_nodes(self.builder, np.arange(len(batch)), self.partitioner, batch)
            for slot in range(len(batch)):
                if quantized:  # a slot's words are as narrow as its rows allow here: widened
                    g, h = slot_sums(self.builder, slot)
                    out[start + slot] = (g << 32) + h
                else:
                    out[start + slot] = self.pool[slot]
        return out

    def replay(self, output: int, steps: list, leaves, values) -> None:
        """Add a finished tree's leaf values to the margins of `output`: its growth steps'
        splits (each an array of rows as `split_nodes` takes) applied again from the root,
        which puts every row in the leaf it had (the same calls in the same order)."""
        self.partitioner.reset()
        for splits in steps:
            split_many(self.partitioner, *(splits[:, j] for j in range(6)))
        self.partitioner.add_leaf_values(leaves, values, self.margins[output])


def make_state(X, y, weights, mapper, objective, base_scores, settings: Settings, first_row: int) -> PartitionState:
    binned = mapper.transform(np.asarray(X), n_threads=1)
    weights = None if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    return PartitionState(binned, np.ascontiguousarray(y, dtype=np.float64), weights, objective, base_scores,
                          settings, first_row)


def resume(state: PartitionState, finished: list, n_outputs: int) -> PartitionState:
    """A new state of `state`'s partition, ready to grow tree len(finished) of the
    training: margins and the round's gradients rebuilt from the `finished` trees, each
    (output, growth steps, leaf nodes, leaf values), in training order.

    Only what the training never mutates is read from `state` (binned rows, labels,
    weights): it may be a state Dask rebuilt from the data after its worker died, or a
    live one that a task of the abandoned tree is still using."""
    new = PartitionState(state.binned, state.y, state.weights, state.objective, state.base_scores,
                         state.settings, state.first_row)
    n_trees = len(finished)
    round_start = n_trees - n_trees % n_outputs  # the round's gradients: from the margins before its trees
    for t in range(round_start):
        new.replay(*finished[t])
    new.objective.gradients(new.margins, new.y, new.weights, new.gradients, 1)
    for t in range(round_start, n_trees):
        new.replay(*finished[t])
    new.tree = n_trees - 1  # the next tree starts with nothing to add (start_tree without previous leaves)
    return new


def quantization_scales(maxima, levels: int) -> tuple[float, float]:
    """(scale_g, scale_h) from the tree's max |grad| and max hess: _quantize.quantize_rows'."""
    return tuple(float(levels / m) if m > 0 else 0.0 for m in maxima)


# objectives whose start is a function of the weighted class counts (one per class);
# every other supported objective's start is a function of the weighted mean label
CLASS_COUNT_OBJECTIVES = ("softmax", "one_vs_rest")


def label_sums(objective, y, weights) -> tuple[np.ndarray, np.ndarray]:
    """A partition's share of what the objective's start needs, and of its gradients'
    scale check. First: sums over the rows, whose last entry is the sum of the weights:
    the weighted class counts then the weight (multiclass), else (sum of w y, sum of w).
    Second: extremes, (-min y, max y, max w) (-inf when the partition has no rows).
    `combine_label_sums` reduces them."""
    y = np.asarray(y, dtype=np.float64)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    total = float(len(y)) if w is None else w.sum()
    if objective.spec.name in CLASS_COUNT_OBJECTIVES:
        counts = np.bincount(y.astype(np.int64), weights=w, minlength=objective.n_outputs).astype(np.float64)
        sums = np.append(counts, total)
    else:
        sums = np.array([y.sum() if w is None else (w * y).sum(), total])
    if len(y) == 0:
        return sums, np.full(3, -np.inf)
    return sums, np.array([-y.min(), y.max(), 1.0 if w is None else w.max()])


def combine_label_sums(a: tuple, b: tuple) -> tuple:
    """The reduction's step for label_sums: the sums added, the extremes' maximum."""
    return a[0] + b[0], np.maximum(a[1], b[1])


def base_scores(objective, sums: np.ndarray) -> np.ndarray:
    """The objective's own start (`init_scores`) from the reduced label_sums: of the
    classes 0..k-1 weighted by their counts (multiclass), else of the weighted mean label
    (every other supported objective starts from a function of it)."""
    if objective.spec.name in CLASS_COUNT_OBJECTIVES:
        return objective.init_scores(np.arange(len(sums) - 1, dtype=np.float64), sums[:-1])
    return objective.init_scores(np.array([sums[0] / sums[1]]), None)


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
    if state.quantizer is None:
        state.builder.set_gradients(state.gradients[output])
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
    """(len(leaves), 2) float64: the leaves' float gradient sums here, added in row order
    as the single-machine renewed leaves."""
    state.expect(tree)
    return node_sums(state.partitioner, leaves, state.gradients[state.output])


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


def split_and_build(state: PartitionState, tree: int, splits: np.ndarray, build: list, leaves: list) -> tuple:
    """A growth step here: split_nodes(splits), then the histograms of the `build` nodes
    (children of those splits) and, at the tree's last step, the leaf sums of `leaves`
    (either may be empty). Returns (counts, histograms, leaf sums)."""
    counts = split_nodes(state, tree, splits)
    return counts, state.histograms(build), leaf_sums(state, tree, leaves)


def add(a, b):
    """The reduction's step: the fixed tree of these makes the sum's order fixed."""
    return a + b


def add_each(a: tuple, b: tuple) -> tuple:
    """The reduction's step for tuples of arrays: their sums, entry by entry."""
    return tuple(x + y for x, y in zip(a, b))


def maximum(a, b):
    return np.maximum(a, b)
