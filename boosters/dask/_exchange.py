"""The partitions' side of growing one tree, written once for both ways a sum over the
partitions is made: the driver's tasks or actor calls (`_driver.DaskTreeGrower`), and the
engines' worker-to-worker exchange (`_engine.WorkerEngine`, one engine per worker, each
running this over the same sums).

The growth loop is the single-machine engine's (`TreeGrower.exchanging`, over no rows of
its own); this is its exchange: each step's splits go to every partition, which moves its
rows and builds the histograms asked for, and the sums go into the loop (`step`). Around
the loop: the tree's start on the partitions (`_start_tree`), GOSS's exact selection
(`_goss_sample`), the quantile leaves' selection (`_leaf_quantiles`) and the linear
leaves' normal equations (`_fit_linear`). A subclass says how a sum over the partitions is
made (`_sum`) and how a pass over them in order is made (`_chain`); both follow
`_reduction`'s order, so every way gives the same bits.
"""

from __future__ import annotations

import numpy as np

from boosters.dask import _partition_state as tasks
from boosters.dask import _quantile_select as select
from boosters.dask._reduction import in_order
from boosters.data.binned import BinnedMatrix
from boosters.objectives.registry import objective_fn
from boosters.training.growth.grower import TreeGrower
from boosters.training.linear_leaves import empty_sums, fitted_leaves, leaf_slots, set_linear_leaves


class PartitionExchange:
    """The growth of one tree over partitions (`grow_on_partitions`) and the growth loop's
    exchange (GrowthLoop's `exchange`: `step`, `leaf_sums`). Subclasses give
    `_sum(function, *args, each=None, op=tasks.add, any_order=False)`: the sum (by op) of
    function(state_i, *args, *each[i]) over the partitions, in `_reduction`'s order; and
    `_chain(function, first, *args, every=False)`: function(state_i, *args, previous) on the
    partitions in order, `previous` the result of the one before (`first` for the first),
    returning the last result, or every partition's (`every`)."""

    def _sum(self, function, *args, each=None, op=tasks.add, any_order: bool = False):
        raise NotImplementedError  # a subclass's (see above)

    def _chain(self, function, first, *args, every: bool = False):
        raise NotImplementedError  # a subclass's (see above)

    def _take_training(self, config, n_rows: int, quantizer) -> None:
        """What both the driver's bookkeeping and the partitions' side read of the training."""
        self.quantizer, self.n_rows = quantizer, n_rows  # quantizer: the partitions' (bits, levels, seed)
        self.n_outputs = config.objective.n_outputs  # trees per round
        self.linear = config.linear_leaves  # linear leaves: fitted after each tree (_fit_linear)

    def _build_engine(self, mapper, config, feature_names) -> None:
        """The growth engine (its loop over no rows, this its exchange) and what the steps
        around the loop read (after `_take_training`)."""
        self.engine = TreeGrower.exchanging(self, BinnedMatrix.allocate(0, mapper.n_bins), mapper, config,
                                            self.n_rows, self.n_outputs, "f64" if self.quantizer is None else "i16",
                                            feature_names)
        self.histograms = self.engine.pool.data  # slot i: node i's histogram, summed over the partitions
        # absolute, pinball: the leaves renewed to their residuals' quantile at each output's level
        self.leaf_quantiles = objective_fn(config.objective).quantile_levels(config.objective)
        # linear leaves: on the partitions' raw rows (normal equations chained over them)
        self.numeric = ~np.asarray(mapper.is_categorical)
        self.linear_l1, self.linear_l2 = config.linear_l1, config.linear_l2

    def grow_on_partitions(self, tree_index: int, output: int, start: tuple, sample,
                           goss: tuple[int, int, int] | None, n_rows: int,
                           learning_rate: float):
        """The training's tree `tree_index` (of `output`) grown on the partitions.
        `start`: (previous_leaves, new_round, dart), see tasks.start_tree; `sample`: per
        partition, its part of a new round's uniform row sample (None: none drawn);
        `goss`: (round, top_k, other_k) when the round's GOSS sample is to be drawn first,
        else None; `n_rows`: the tree's rows (its sample's). Returns (the tree, its growth
        steps as sent, and with `goss` where the selection pass stood at each partition's
        first row, else None)."""
        previous_leaves, new_round, dart = start
        self.tree_index, self.output = tree_index, output
        goss_starts = None
        if goss is not None:  # the previous tree added and the round's gradients computed there
            goss_starts = self._goss_sample(*goss, tree_index, previous_leaves, dart)
            previous_leaves, new_round = None, False
        self.steps: list = []  # the splits sent to the partitions, step by step
        self._start_tree((tree_index, previous_leaves, output, new_round, dart if new_round else None), sample)
        tree = self.engine.grow_exchanged(output, tree_index, n_rows, learning_rate,
                                          None if self.leaf_quantiles is None else self._leaf_quantiles)
        if self.linear:
            self._fit_linear(tree, learning_rate)
        return tree, self.steps, goss_starts

    def _start_tree(self, start: tuple, sample) -> None:
        """tasks.start_tree(*start) on the partitions, and the root's histogram summed into
        slot 0; quantized: the gradients' maxima first (the same in any order), which give
        the quantization's scales."""
        if self.quantizer is None:
            self.histograms[0] = self._sum(tasks.start_float_tree, *start, each=sample)
            return
        maxima = self._sum(tasks.start_tree, *start, each=sample, op=tasks.maximum, any_order=True)
        self.histograms[0] = self._sum(tasks.root_histogram, start[0], maxima, any_order=True)
        self.engine.builder.scales[:] = tasks.quantization_scales(maxima, self.quantizer[1])

    # -- the growth loop's exchange ------------------------------------------------------------

    def step(self, loop, n_splits: int, n_built: int, n_leaves: int) -> None:
        """One growth step of `loop` (GrowthLoop.step_splits, step_nodes): every partition
        splits its rows and builds the histograms of the children to build; their sums
        (integers, quantized histograms: in any order; float64 histograms: in the
        partitions' fixed order) go into the pool, the left children's rows into
        step_counts, and on the tree's last step the leaves' float sums (quantized
        training) into leaf_sums, added in the partitions' order."""
        splits = np.asarray(loop.step_splits)[:n_splits]
        sent = self._with_categories(splits[:, :6].copy(), splits, loop)
        self.steps.append(sent)
        built = np.asarray(loop.step_nodes)[:n_built].tolist()
        leaves = np.asarray(loop.step_nodes)[:n_leaves].tolist()
        counts, hist, leaf_sums = self._sum(tasks.split_and_build, self.tree_index, sent, built, leaves,
                                            op=tasks.add_each, any_order=self.quantizer is not None)
        self._count_histograms(hist)
        np.asarray(loop.step_counts)[:n_splits] = counts[0]
        for node, histogram in zip(built, hist):
            self.histograms[node] = histogram
        if leaves:
            np.asarray(loop.leaf_sums)[:n_leaves] = in_order(leaf_sums)

    def leaf_sums(self, loop, n_leaves: int) -> None:
        """The float gradient sums of the leaves step_nodes[:n_leaves] into leaf_sums,
        added in the partitions' order."""
        leaves = np.asarray(loop.step_nodes)[:n_leaves].tolist()
        sums = in_order(self._sum(tasks.keyed, tasks.leaf_sums, self.tree_index, leaves, any_order=True))
        np.asarray(loop.leaf_sums)[:n_leaves] = sums

    def _count_histograms(self, histograms: list) -> None:
        """A step's histograms were summed (the driver's path counts their bytes)."""

    @staticmethod
    def _with_categories(splits: np.ndarray, step: np.ndarray, loop) -> np.ndarray:
        """The step's split rows as the partitions take them (tasks.split_rows): when a
        split is categorical, every row gets a flag (1: categorical) and the words of its
        bitset of the bins going left."""
        categorical = step[:, 6].astype(bool)
        if not categorical.any():
            return splits
        words = np.asarray(loop.category_bins)
        extra = np.zeros((len(splits), 1 + words.shape[1]), dtype=np.int64)
        extra[categorical, 0] = 1
        extra[categorical, 1:] = words[splits[categorical, 0]]
        return np.hstack([splits, extra])

    # -- the steps around the loop -------------------------------------------------------------

    def _goss_sample(self, round_: int, top_k: int, other_k: int, tree_index: int, previous_leaves, dart) -> list:
        """The round's GOSS sample, the single-machine one: the previous tree added and the
        round's gradients and scores computed on every partition, the top_k-th largest
        score found exactly by a radix select over the partitions' summed digit counts,
        then the selection pass over the rows in partition order (`_chain`, each
        partition's rows drawn from where the one before left the pass). Returns where
        the pass stood at each partition's first row (what `tasks.resume` takes)."""
        k, prefix, fixed_low = top_k, 0, 64
        counts = self._sum(tasks.start_goss_round, tree_index, previous_leaves, dart, select.SHIFTS[0],
                           any_order=True)
        for j, shift in enumerate(select.SHIFTS):
            if j:
                counts = self._sum(tasks.goss_digits, tree_index, prefix, fixed_low, shift, any_order=True)
            from_top, rank = select.digit_at(np.asarray(counts)[::-1], k - 1)  # the k-th largest's digit
            digit, k = len(counts) - 1 - from_top, rank + 1
            prefix, fixed_low = prefix | (digit << shift), shift
        threshold = float(np.array(prefix, dtype=np.uint64).view(np.float64))
        # k: the rows scoring the threshold itself that the top set takes (the first ones)
        start = (threshold, k, self.n_rows - top_k, other_k)
        ends = self._chain(tasks.goss_draw, start, tree_index, round_, every=True)
        return [start] + ends[:-1]

    def _fit_linear(self, tree, learning_rate: float) -> None:
        """The tree's linear leaves, as single-machine LinearLeafFitter fits them: the
        normal equations summed over the partitions' rows in partition order (the
        single-machine sums, in row order; `_chain`), then solved."""
        paths, fitted = fitted_leaves(tree, self.numeric, self.tree_index // self.n_outputs == 0)
        sums = None
        if fitted:
            slots = leaf_slots(tree, fitted, paths)
            sums = self._chain(tasks.linear_sums, empty_sums(slots), self.tree_index, tree, slots)
        set_linear_leaves(tree, paths, fitted, sums, learning_rate, self.linear_l1, self.linear_l2)

    def _leaf_quantiles(self, leaves: list, counts: list) -> list:
        """Absolute and pinball: the quantile (the output's level) of each leaf's rows'
        residuals, selected exactly over the partitions (_quantile_select)."""
        index = self.tree_index

        def digits(prefixes, fixed_low, shift):
            return self._sum(select.leaf_digits, index, prefixes, fixed_low, shift, any_order=True)

        def smallest_above(keys):
            return self._sum(select.leaf_min_above, index, keys, op=select.min_of, any_order=True)

        start = self._sum(select.leaf_start, index, leaves, any_order=True)
        assert self.leaf_quantiles is not None  # passed to the engine only then
        alpha = float(self.leaf_quantiles[self.output])
        return select.select_quantiles(start, digits, smallest_above, counts, [alpha] * len(leaves))
