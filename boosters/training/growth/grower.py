"""The tree grower (RFC-0008): sets up the kernels of a training and grows each boosting
round's trees (one per output).

Growing a tree repeats one step on a set of leaves with known best splits:

1. partition their rows;
2. histograms of the children: build the smaller child, derive the larger one as
   parent - smaller in the parent's pool slot (subtraction trick); if the parent's
   histogram was evicted, build both; skip children that can never be split;
3. find the best split of every child.

Depth-wise expands a whole level per step; leaf-wise the single best leaf; oblivious
a whole level by one split, found over all of the level's histograms. The loop
itself is `_grow.GrowthLoop` (Cython: no interpreter time per split), and whole rounds
(gradients, trees, margin updates) grow without the GIL in `_rounds.BoostingRounds`; this
module sets them up and copies each grown tree into a `Tree`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from boosters._lib.arrays import unique
from boosters._lib.load import ThreadsForLoad
from boosters.config import GBDTConfig, GrowthStrategy
from boosters.model.tree import Tree
from boosters.objectives._gradients import CustomGradients, GradientKernel
from boosters.training.growth._grow import GrowthLoop
from boosters.training.growth._rounds import BoostingRounds
from boosters.training.histograms._build import FloatHistogramBuilder, QuantizedHistogramBuilder
from boosters.training.histograms._pool import HistogramPool
from boosters.training.histograms._quantize import max_levels
from boosters.training.histograms.layout import choose_layout
from boosters.training.partition._partition import RowPartitioner
from boosters.training.sampling import make_row_sampler
from boosters.training.split._split import FloatSplitFinder, QuantizedSplitFinder
from boosters.training.split.constraints import make_node_constraints

if TYPE_CHECKING:
    from boosters.training.linear_leaves import LinearLeafFitter


# rounds of one nogil block: their trees' nodes take at most ~4 MB (65 bytes a node) and
# their growth about 0.1 s (Ctrl-C is handled between blocks; a busy Python thread costs
# each block one switch interval, 5 ms, at most)
BLOCK_NODES = 1 << 16
BLOCK_SECONDS = 0.1
BLOCK_CATEGORY_WORDS = 1 << 22  # categorical splits' bitsets of a block: 16 MB at most (thousands of codes)


def max_tree_nodes(config: GBDTConfig, n_rows: int) -> int:
    """The most nodes a tree can have: ``2 * n_leaves - 1`` leaf-wise, ``2**(max_depth + 1) - 1``
    depth-wise, and never more than ``2 * n_rows - 1`` (a leaf holds a row at least). The
    row bound caps the depth first: 2**(2**62 + 1) would never finish computing."""
    row_bound = 2 * n_rows - 1
    if config.growth_strategy is GrowthStrategy.Leafwise:
        return max(1, min(2 * config.n_leaves - 1, row_bound))
    return max(1, min(2 ** (min(config.max_depth, row_bound.bit_length()) + 1) - 1, row_bound))


def oblivious_slots(config: GBDTConfig, max_nodes: int) -> int:
    """Histogram slots oblivious growth needs: the nodes of the deepest level that is
    searched for a split, 2**(max_depth - 1) (a step pins a parent's slot and its smaller
    child's); 0 for the other strategies."""
    if config.growth_strategy is not GrowthStrategy.Oblivious:
        return 0
    return min(max_nodes, 2 ** (min(config.max_depth, max_nodes.bit_length()) - 1))


class TreeGrower:
    """Grows boosting rounds: per round the gradients of `margins` (`gradients`, a kernel
    bound to them), a tree per output and the margins' update.

    `histogram_mode` "f64" accumulates float64 histograms; "i16" / "i8" quantize each
    tree's gradients to 16 / 8-bit integers and accumulate exact packed integer
    histograms (see histograms/_quantize.pyx), then renew the leaf values from the
    full-precision gradients when `config.renew_leaves`. The mode picks the builder's and
    the split finder's classes, once.
    """

    def __init__(self, binned, bin_mapper, config: GBDTConfig, n_threads: int, gradients: GradientKernel,
                 margins: np.ndarray, histogram_mode: str = "f64", feature_names=None, query_groups=None,
                 exchange=None, n_rows: int | None = None):
        """`exchange`, `n_rows`: a training whose n_rows rows live elsewhere (see
        `exchanging`); `binned` then holds none of them, only the bins' layout."""
        distributed = exchange is not None
        leafwise = config.growth_strategy is GrowthStrategy.Leafwise
        features = np.flatnonzero(bin_mapper.is_usable).astype(np.int32)
        columns = unique(binned.feature_column[features]).astype(np.int32)  # what holds them
        first_column_bins: tuple[int, ...] = (0, 0)
        if len(features) > 0:
            first_column_bins = tuple(int(b) for b in binned.column_offsets[columns[0]:columns[0] + 2])
        if binned.has_sparse:  # a sparse column's bins miss its default rows: the totals have a bin
            first_column_bins = (binned.sparse_totals_bin, binned.sparse_totals_bin + 1)
        max_nodes = max_tree_nodes(config, binned.n_rows if n_rows is None else n_rows)
        self.quantized = histogram_mode in ("i16", "i8")
        if self.quantized and not distributed:
            bits = 16 if histogram_mode == "i16" else 8
            self.levels = max_levels(binned.n_rows, bits, config.quantization_levels)
            self.packed = np.empty(binned.n_rows, dtype=np.int32 if bits == 16 else np.int16)
        oblivious = config.growth_strategy is GrowthStrategy.Oblivious
        # distributed: an identity pool (the exchange writes node i's sums into slot i; no eviction);
        # oblivious: a level's histograms at least (its split is found over them all)
        slots = max_nodes if distributed else max(config.cache_size, oblivious_slots(config, max_nodes))
        try:  # zeroed pages: only the slots a training uses take memory
            self.pool = HistogramPool(slots, binned.total_bins, max_nodes, self.quantized)
        except MemoryError:
            if not oblivious:
                raise
            raise MemoryError(f"growth_strategy='oblivious' holds a level's histograms at once: max_depth="
                              f"{config.max_depth} asks for {slots} histograms of {binned.total_bins} bins each; lower "
                              "max_depth") from None
        sampler = None if distributed else make_row_sampler(config, binned.n_rows, len(margins), n_threads,
                                                            query_groups)
        self.partitioner = RowPartitioner(binned, max_nodes, n_threads, sampling=sampler is not None)
        self.layout = choose_layout(binned, columns, config.histogram_layout)
        params = dict(l1=config.l1, l2=config.l2, min_child_weight=config.min_child_weight,
                      min_gain_to_split=config.min_gain_to_split, min_samples_leaf=config.min_samples_leaf,
                      n_threads=n_threads)
        if self.quantized:  # the builder quantizes each tree's gradients; the finder reads its scales
            self.builder = QuantizedHistogramBuilder(binned, self.pool.data, columns, n_threads, config.prefetch,
                                                     layout=self.layout)
            if distributed:  # sums over the machines' rows: the widest words
                self.builder.sum_over_machines()
            else:
                self.builder.set_quantizer(self.packed, self.levels, config.seed)
            self.finder = QuantizedSplitFinder.for_binned(self.pool.data, binned, features, sum_bits=self.builder.sum_bits,
                                                          scales=self.builder.scales, **params)
        else:
            self.builder = FloatHistogramBuilder(binned, self.pool.data, columns, n_threads, config.prefetch,
                                                 layout=self.layout)
            self.finder = FloatSplitFinder.for_binned(self.pool.data, binned, features, **params)
        categorical = bin_mapper.is_categorical
        # column sampling, interaction and monotone constraints (None: none, the finder scans as before)
        self.constraints = make_node_constraints(config, features, binned.n_features, feature_names, max_nodes,
                                                 self.finder.max_batch, categorical)
        if self.constraints is not None:
            self.finder.constrain(self.constraints.allowed, self.constraints.bounds, self.constraints.direction)
        if categorical.any():
            self.finder.use_categorical(categorical, max_onehot_cats=config.max_onehot_cats,
                                        cat_smooth=config.cat_smooth, cat_l2=config.cat_l2,
                                        max_cat_threshold=config.max_cat_threshold,
                                        min_data_per_group=config.min_data_per_group)
        self.loop = GrowthLoop(
            self.builder, self.finder, self.partitioner, self.pool, leafwise=leafwise,
            max_leaves=config.n_leaves if leafwise else max_nodes,
            max_depth=None if config.max_depth is None else min(config.max_depth, max_nodes),
            min_samples_leaf=config.min_samples_leaf, totals_bins=first_column_bins,
            renew_leaf_sums=self.quantized and config.renew_leaves, constraints=self.constraints, exchange=exchange,
            oblivious=oblivious)
        # every feature's upper bin edges, concatenated: value thresholds of bin thresholds
        edges = [np.asarray(e, dtype=np.float64) for e in bin_mapper.upper_edges]
        self.linear_leaves: LinearLeafFitter | None = None
        self.load = ThreadsForLoad(n_threads)
        self.rounds = BoostingRounds(self.loop, gradients, margins, np.concatenate(edges or [np.zeros(0)]),
                                     np.cumsum([0] + [len(e) for e in edges]), config.l1, config.l2,
                                     config.learning_rate,
                                     # distributed: one tree a call (grow_exchanged), no block of rounds
                                     1 if distributed else max(
                                         1, min(config.n_estimators, BLOCK_NODES // (len(margins) * max_nodes),
                                                BLOCK_CATEGORY_WORDS // (len(margins) * max_nodes * max(
                                                    1, (self.finder.max_cat_bins + 31) // 32)))),
                                     sampler, random_strength=config.random_strength, seed=config.seed)

    @classmethod
    def exchanging(cls, exchange, layout, bin_mapper, config: GBDTConfig, n_rows: int, n_outputs: int,
                   histogram_mode: str, feature_names=None) -> TreeGrower:
        """The grower of a training whose `n_rows` rows live on other machines (boosters.dask):
        this loop, split finder, constraints and tree assembly over no rows of its own;
        `exchange` splits the machines' rows and brings what they summed (GrowthLoop).
        `layout`: a BinnedMatrix of the training's bins (no rows needed). Grow with
        `grow_exchanged`."""
        margins = np.zeros((n_outputs, 0))
        no_rows = CustomGradients(margins, np.zeros((n_outputs, 0, 2), dtype=np.float32))  # the machines' business
        return cls(layout, bin_mapper, config, 1, no_rows, margins, histogram_mode, feature_names,
                   exchange=exchange, n_rows=n_rows)

    def grow_exchanged(self, output: int, tree_index: int, root_count: int, learning_rate: float,
                       leaf_quantiles=None) -> Tree:
        """The training's tree `tree_index` (of `output`), over `root_count` rows, grown
        through the exchange (the machines started the tree and summed the root's
        histogram into `pool.data[0]`). `leaf_quantiles(leaves, counts)`: absolute and
        pinball, the quantiles the leaves are renewed to, selected over the machines."""
        self.rounds.learning_rate = learning_rate
        self.rounds.grow_exchanged(output, tree_index, root_count)
        size = int(self.rounds.n_nodes[0])
        if leaf_quantiles is not None:
            leaves = np.flatnonzero(self.rounds.trees["left_child"][0, :size] < 0)
            quantiles = leaf_quantiles(leaves.tolist(), self.rounds.trees["n_samples"][0, leaves].tolist())
            self.rounds.renew_exchanged(np.asarray(quantiles, dtype=np.float64))
        return self._tree(0, size)

    def grow_rounds(self, first_round: int, n_rounds: int) -> list[list[Tree]]:
        """Grow up to n_rounds rounds from first_round, in one nogil block (fewer when they
        would take over BLOCK_SECONDS or fill the block's buffers; at least one); the trees
        of each round grown, one per output. With `linear_leaves` (a LinearLeafFitter, set
        by the trainer) one round, whose trees then get their linear leaves."""
        rounds = self.rounds
        if self.linear_leaves is not None:  # the next round's gradients read the margins they change
            n_rounds = 1
        rounds.use_threads(self.load.n_threads)  # the team the cores can run now (_lib/load.py)
        self.load.started()
        n_grown = rounds.grow_block(first_round, min(n_rounds, rounds.max_rounds), BLOCK_SECONDS)
        self.load.finished()
        n_out = rounds.n_outputs
        sizes = rounds.n_nodes.tolist()
        block = [[self._tree(t, sizes[t]) for t in range(r * n_out, (r + 1) * n_out)] for r in range(n_grown)]
        if self.linear_leaves is not None:
            self.linear_leaves.fit_round(block[0], first_round, rounds.learning_rate, self._sampled_rows())
        return block

    def _sampled_rows(self) -> np.ndarray | None:
        """The rows of the last round's sample (increasing), None without one."""
        n_sampled = self.partitioner.n_sampled
        if n_sampled < 0:
            return None
        return np.asarray(self.partitioner.sample)[:n_sampled].astype(np.int64)

    def _tree(self, t: int, size: int) -> Tree:
        """Tree t of the last block: its nodes, and its categorical splits' sets."""
        rounds = self.rounds
        n_sets = int(rounds.n_cat_sets[t])
        boundaries = rounds.cat_boundaries[t, :n_sets + 1].copy()
        return Tree(**{name: a[t, :size].copy() for name, a in rounds.trees.items()},
                    cat_boundaries=boundaries, cat_bitsets=rounds.cat_bitsets[t, :boundaries[-1]].copy())

    @property
    def n_evictions(self) -> int:
        return self.pool.n_evictions
