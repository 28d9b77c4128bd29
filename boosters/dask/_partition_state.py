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

import copy
from typing import Any
from dataclasses import dataclass

import numpy as np

from boosters._lib.arrays import unique
from boosters._lib.threads import effective_n_threads
from boosters.data.dataset import Dataset
from boosters.dask._quantile_select import digits_of, narrowed
from boosters.data.groups import query_boundaries
from boosters.data.validation import as_feature_matrix
from boosters.objectives.custom import Custom
from boosters.objectives.registry import make_objective
from boosters.training.growth._node_steps import build_nodes, node_count, node_sums, split_many, unpack
from boosters.training.partition._partition import RowPartitioner
from boosters.training._sampling import RowSampler, bayesian_weights, goss_draw_range, goss_scores
from boosters.training.histograms._build import FloatHistogramBuilder, QuantizedHistogramBuilder
from boosters.training.histograms._quantize import quantize_block
from boosters.training.histograms.layout import choose_layout
from boosters.training._linear_leaves import normal_equations
from boosters.training.dart import DroppedMargins
from boosters.training.linear_leaves import add_linear_change, leaf_of_rows

SLOTS = 16  # nodes built per builder call: the state's histogram slots
PACKED_WORDS = {32: np.int64, 16: np.int32, 8: np.int16}  # a quantized slot's bits per sum -> its words


@dataclass(frozen=True)
class Settings:
    """What every partition of a training shares: `features` the usable features,
    `max_nodes` of a tree, `quantizer` (bits, levels, seed) for quantized histograms
    (None: float64), the histogram layout asked for and the prefetch switch;
    `row_sample`: each round's trees see the single-machine row sample, uniform
    ("uniform", n_rows of the training, rows per round, seed), whole queries of a ranking
    objective ("queries", n_queries of the training, queries per round, seed: the
    single-machine query sampler's draw over the query indices) or GOSS ("goss", seed,
    weight of the drawn rows); None: every row."""
    features: np.ndarray
    max_nodes: int
    quantizer: tuple | None
    histogram_layout: str = "auto"
    prefetch: bool = True
    row_sample: tuple | None = None
    raw_rows: bool = False  # DART, linear leaves: the partitions keep their raw rows (trees predict on them)
    n_threads: int = 1  # each partition's kernels' threads on its worker (worker_threads: -1 all the worker's)
    bootstrap: tuple | None = None  # the Bayesian bootstrap: (seed, temperature), rows weighed by their global index


def worker_threads(n_threads: int) -> int:
    """The threads a task's kernels use on its Dask worker: `n_threads` when positive;
    0 and -1 the worker's thread count (Dask's nthreads: the cores it was given, as
    XGBoost's and LightGBM's Dask training read it), -k that many but k - 1 (at least one,
    as joblib's n_jobs); outside a worker (a lazy prediction computed elsewhere), the
    process's cores (effective_n_threads). The model does not depend on them."""
    if n_threads > 0:
        return n_threads
    try:
        from distributed import get_worker
        every = get_worker().state.nthreads
    except (ImportError, ValueError, AttributeError):
        return effective_n_threads(n_threads)
    return every if n_threads >= -1 else max(1, every + 1 + n_threads)


class PartitionState:
    """One partition's binned rows, labels, weights, margins (n_outputs, n_rows) and the
    current tree's row partition. Mutated in place by the tasks below: a task that reads
    it must run on the worker that holds it."""

    candidates: np.ndarray  # GOSS's radix select: the scores' keys narrowed pass by pass (set by the goss tasks)
    scores: np.ndarray  # GOSS: the round's scores (set by draw_sample)

    def __init__(self, binned, y, weights, objective, base_scores, settings: Settings, first_row: int, rows=None):
        self.binned, self.y, self.weights = binned, y, weights
        self.objective, self.base_scores, self.settings = objective, base_scores, settings
        self.rows = rows  # a custom objective's: this partition's rows as the Dataset its function takes
        self.raw: np.ndarray | None = None  # DART's, linear leaves': this partition's raw rows (trees predict on them)
        self.dropped = DroppedMargins()  # DART: the round's dropped trees, put back at the next round's start
        self.linear_leaves: np.ndarray | None = None  # linear leaves: the rows' leaves of the tree linear_sums summed last
        if rows is not None:  # its own copy: the function's buffers are bound to this state's
            self.objective = copy.copy(objective)
        self.first_row = first_row
        self.n_threads = threads = worker_threads(settings.n_threads)  # where it is built (a rebuilt state: anew)
        self.n_rows = binned.n_rows
        self.margins = np.repeat(np.asarray(base_scores, dtype=np.float64)[:, None], self.n_rows, axis=1)
        self.gradients = np.empty((len(base_scores), self.n_rows, 2), dtype=np.float32)
        self.sampler: Any = None  # (a RowSampler) uniform: the training's row sampler; this partition draws its part of each round's
        self.goss: tuple[int, float] | None = None  # GOSS: (seed, weight); the round's scores in self.scores
        self.query_bounds: np.ndarray | None = None
        self.first_query = 0  # sampling whole queries: this partition's, its first's index
        if settings.row_sample is not None and settings.row_sample[0] in ("uniform", "queries"):
            _, n_total, n_sample, seed = settings.row_sample  # rows, or queries
            self.sampler = RowSampler("uniform", n_total, len(base_scores), seed, 1, n_sample=n_sample)
        elif settings.row_sample is not None:
            self.goss = settings.row_sample[1:]
        self.partitioner = RowPartitioner(binned, settings.max_nodes, threads, sampling=settings.row_sample is not None)
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
            self.builder = QuantizedHistogramBuilder(binned, self.pool, columns, threads, settings.prefetch,
                                                     layout=layout)
            self.builder.set_quantized(self.packed, levels)
        else:
            self.pool = np.zeros((n_slots, binned.total_bins, 2))
            self.builder = FloatHistogramBuilder(binned, self.pool, columns, threads, settings.prefetch, layout=layout)

    def __reduce__(self):
        """Pickled (Dask moving or spilling the state) as the partition's data only: what it
        unpickles to is a fresh state, as one Dask rebuilds from the lineage (its row
        partition and margins are gone; `expect` refuses to train on it, `resume` rebuilds
        it from the finished trees, reading only this data)."""
        return _state_of, (self.data(),)

    def data(self) -> tuple:
        """What the training never mutates (the partition's data): all a rebuilt state
        starts from (_state_of)."""
        return (self.binned, self.y, self.weights, self.objective, self.base_scores, self.settings, self.first_row,
                self.rows, self.raw, self.query_bounds, self.first_query)

    def compute_gradients(self, round_: int) -> None:
        """The gradients of the current margins for round `round_`; a custom objective's from
        its function, called with this partition's margins and rows (as XGBoost's Dask
        interface does); with the Bayesian bootstrap, times the rows' weights of the round
        (the single-machine sampler's, by global row)."""
        self.objective.gradients(self.margins, self.y, self.weights, self.gradients, self.n_threads)
        if self.rows is not None:
            self.objective.fill(self.rows)
        if self.settings.bootstrap is not None:
            seed, temperature = self.settings.bootstrap
            self.gradients *= bayesian_weights(seed, round_, self.first_row, self.n_rows, temperature)[None, :, None]

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
            if quantized:
                self._widen(len(batch), out[start:start + len(batch)])
            else:
                out[start:start + len(batch)] = self.pool[:len(batch)]
        return out

    def _widen(self, n_slots: int, out: np.ndarray) -> None:
        """out[i] = the quantized pool's slot i as int64 words (g << 32) + h, the sums of
        slot_sums, for i < n_slots: a slot's words are as narrow as its rows allow here (its
        `sum_bits`), widened all slots of a width at once; 32-bit sums are those words."""
        bits = np.asarray(self.builder.sum_bits)[:n_slots]
        for width in np.unique(bits).tolist():
            slots = slice(None) if len(bits) and bits.min() == bits.max() else np.flatnonzero(bits == width)
            words = self.pool[:n_slots][slots].view(PACKED_WORDS[width])[:, :self.binned.total_bins]
            if width == 32:  # already (g << 32) + h
                out[slots] = words
            else:
                g, h = unpack(words)
                out[slots] = (g << 32) + h

    def replay(self, output: int, steps: list, leaves, values, outside=None, linear=None) -> None:
        """Add a finished tree's leaf values to the margins of `output`: its growth steps'
        splits (each an array of rows as `split_nodes` takes) applied again from the root
        (every row, or the round's sample), which puts every row in the leaf it had (the
        same calls in the same order); then the rows outside the sample (see add_outside)."""
        self.partitioner.reset()
        for splits in steps:
            split_rows(self.partitioner, splits)
        self.partitioner.add_leaf_values(leaves, values, self.margins[output])
        if outside is not None:
            self.add_outside(output, outside, leaves, values)
        if linear is not None:
            self.add_linear(output, linear)

    def add_linear(self, output: int, tree) -> None:
        """A finished tree with linear leaves, whose constant leaf values the margins of
        `output` hold: moved to its linear outputs, as single-machine LinearLeafFitter does
        (the rows' leaves from linear_sums when it just summed this tree)."""
        assert self.raw is not None  # kept for linear leaves (settings.raw_rows)
        leaves, self.linear_leaves = self.linear_leaves, None
        if leaves is None:
            leaves = leaf_of_rows(tree, self.raw, self.n_threads)
        add_linear_change(tree, self.raw, leaves, self.margins[output], self.n_threads)

    def linear_sums(self, tree, slots: tuple, sums: tuple) -> tuple:
        """The current tree's normal equations (linear_leaves.leaf_slots' `slots`) summed on
        from `sums` (the partitions before this one) over this partition's rows (the
        round's sampled ones), in row order: with the partitions chained in order, the
        single-machine sums, bit for bit."""
        A, b, n_fit = (np.array(a) for a in sums)  # writable copies
        part = self.partitioner
        rows = (np.arange(self.n_rows, dtype=np.int64) if part.n_sampled < 0
                else np.asarray(part.sample)[:part.n_sampled].astype(np.int64))
        assert self.raw is not None  # kept for linear leaves (settings.raw_rows)
        self.linear_leaves = leaf_of_rows(tree, self.raw, self.n_threads)  # add_linear's next, for this tree
        normal_equations(self.raw, rows, self.linear_leaves[:, 0], *slots, self.gradients[self.output], A, b, n_fit)
        return A, b, n_fit

    def draw_sample(self, round_: int, spec) -> None:
        """This partition's part of the round's row sample, which the partitioner's root holds
        from now on. Uniform: `spec` is how many sampled rows lie before this partition;
        GOSS: where the round's selection pass stands at its first row (goss_draw_range;
        the round's gradients computed, re-weighted here), None in a warm-up round (every row)."""
        part = self.partitioner
        if self.query_bounds is not None:
            part.n_sampled = self.draw_queries(round_, spec)
        elif self.sampler is not None:
            part.n_sampled = self.sampler.draw_range(round_, self.first_row, self.first_row + self.n_rows, spec,
                                                     part.sample)
        elif spec is None:
            part.n_sampled = -1
        else:
            self.scores = goss_scores(self.gradients)
            part.n_sampled = self.draw_goss(round_, spec)[0]
        part.reset()

    def draw_queries(self, round_: int, n_before: int) -> int:
        """Sampling whole queries: this partition's queries of the round's sample (the
        single-machine draw over the query indices, `n_before` sampled queries before this
        partition's first), their rows then the other queries' rows (both increasing) into
        the partitioner's sample, as RowSampler's "queries" kind lays them out; returns the
        sampled rows."""
        bounds = self.query_bounds
        assert bounds is not None and self.sampler is not None  # sampling whole queries
        order = np.empty(len(bounds) - 1, dtype=np.uint32)
        k = self.sampler.draw_range(round_, self.first_query, self.first_query + len(order), n_before, order)
        order = order.astype(np.int64)
        sizes = np.diff(bounds)[order]
        ends = np.cumsum(sizes)
        rows = np.repeat(bounds[order], sizes) + np.arange(self.n_rows) - np.repeat(ends - sizes, sizes)
        np.asarray(self.partitioner.sample)[:self.n_rows] = rows
        return int(ends[k - 1]) if k else 0

    def draw_goss(self, round_: int, at: tuple) -> tuple:
        """GOSS's selection over this partition's rows (self.scores: the round's), from
        where the round's pass stands at its first row: (rows taken, where it stands after)."""
        assert self.goss is not None  # a GOSS training's state
        seed, weight = self.goss
        return goss_draw_range(seed, round_, weight, self.scores, self.gradients, self.first_row, at,
                               self.partitioner.sample)

    def add_outside(self, output: int, steps: list, leaves, values) -> None:
        """Add a finished tree's leaf values to the margins of the rows outside the round's
        sample: the tree's growth `steps` (each an array of rows as `split_nodes` takes, with
        the tree's default directions, as at prediction) applied to those rows alone, as
        single-machine training's RowPartitioner.add_tree_outside_sample does. The sample stays."""
        part, n = self.partitioner, self.n_rows
        k = part.n_sampled
        if k < 0 or k == n:
            return
        rows = np.asarray(part.sample)
        rows[:n] = np.concatenate([rows[k:n], rows[:k]])  # the root: the other rows
        part.n_sampled = n - k
        part.reset()
        for splits in steps:
            split_rows(part, splits)
        part.add_leaf_values(leaves, values, self.margins[output])
        rows[:n] = np.concatenate([rows[n - k:n], rows[:n - k]])
        part.n_sampled = k
        part.reset()


def _state_of(data: tuple) -> PartitionState:
    """A fresh state (no tree grown: tree -1) of a partition's data (PartitionState.data)."""
    *arguments, raw, query_bounds, first_query = data
    state = PartitionState(*arguments)
    state.raw, state.query_bounds, state.first_query = raw, query_bounds, first_query
    return state


def make_state(X, y, weights, mapper, objective, base_scores, settings: Settings, first_row: int,
               qid=None, first_query: int = 0) -> PartitionState:
    """The partition's state; `qid`: a ranking objective's query ids of these rows (its
    gradients are computed within this partition's queries; `first_query`: the index of
    the first of them in the whole training, for sampling whole queries)."""
    binned = mapper.transform(np.asarray(X), n_threads=worker_threads(settings.n_threads))
    if qid is not None:
        objective = make_objective(objective.spec, query_boundaries(None, np.asarray(qid), len(qid)))
    weights = None if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    # DART, linear leaves: the rows as Dataset keeps the ones single-machine training predicts on
    raw = as_feature_matrix(X, "X") if settings.raw_rows else None
    rows = (Dataset(np.asarray(X) if raw is None else raw, y, weights)  # one copy of the rows for both
            if isinstance(objective, Custom) else None)
    state = PartitionState(binned, y, weights, objective, base_scores, settings, first_row, rows)
    state.raw = raw
    if settings.row_sample is not None and settings.row_sample[0] == "queries":
        state.query_bounds, state.first_query = objective.groups, first_query
    return state


def query_runs(qid, name: str = "qid") -> tuple[np.ndarray, np.ndarray]:
    """A partition's query ids, one per query (ValueError naming `name` unless each query's
    rows are consecutive here), and their sizes."""
    qid = np.asarray(qid)
    try:
        bounds = query_boundaries(None, qid, len(qid))
    except ValueError as error:  # Dataset's messages start with "qid": name the argument given here
        message = str(error)
        raise ValueError(name + message[3:] if message.startswith("qid") else message) from None
    assert bounds is not None  # (None only when neither group nor qid is given)
    return qid[bounds[:-1]], np.diff(bounds)


def resume(state: PartitionState, finished: list, n_outputs: int, dart_rounds: list, samples=None) -> PartitionState:
    """A new state of `state`'s partition, ready to grow tree len(finished) of the
    training: margins and the round's gradients rebuilt from the `finished` trees, each
    (output, growth steps, leaf nodes, leaf values, the steps for the rows outside the
    row sample or None, the tree when it has linear leaves or None), in training order.
    `dart_rounds`: DART's record of each round chosen so far (see dart_round; empty
    without DART), applied at each round's start.
    `samples`: with row sampling, per round so far (the current one included) the
    sampled rows before this partition (see draw_sample).

    Only what the training never mutates is read from `state` (binned rows, labels,
    weights): it may be a state Dask rebuilt from the data after its worker died, or a
    live one that a task of the abandoned tree is still using."""
    new = _state_of(state.data())
    n_trees = len(finished)
    round_start = n_trees - n_trees % n_outputs  # the round's gradients: from the margins before its trees

    def start_round(t):  # DART, the gradients (GOSS: every round's) and the row sample, before the round's first tree
        if t % n_outputs:
            return
        if t // n_outputs < len(dart_rounds):
            dart_round(new, dart_rounds[t // n_outputs])
        if t == round_start or new.goss is not None:
            new.compute_gradients(t // n_outputs)
        if samples is not None and t // n_outputs < len(samples):
            new.draw_sample(t // n_outputs, samples[t // n_outputs])

    for t in range(n_trees):
        start_round(t)
        new.replay(*finished[t])
    if n_trees == round_start:
        start_round(n_trees)
    new.tree = n_trees - 1  # the next tree starts with nothing to add (start_tree without previous leaves)
    return new


def quantization_scales(maxima, levels: int) -> tuple[float, float]:
    """(scale_g, scale_h) from the tree's max |grad| and max hess: _quantize.quantize_rows'."""
    scale_g, scale_h = (float(levels / m) if m > 0 else 0.0 for m in maxima)
    return scale_g, scale_h


def label_sums(objective, y, weights) -> tuple[np.ndarray, np.ndarray]:
    """A partition's share of what the objective's start needs, and of its gradients'
    scale check. First: sums over the rows, whose last entry is the sum of the weights:
    the weighted class counts then the weight (multiclass), else (sum of w y, sum of w).
    Second: extremes, (-min y, max y, max w) (-inf when the partition has no rows).
    `combine_label_sums` reduces them."""
    y = np.asarray(y, dtype=np.float64)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    total = float(len(y)) if w is None else w.sum()
    sums = np.append(objective.label_sums(y, w), total)
    if len(y) == 0:
        return sums, np.full(3, -np.inf)
    return sums, np.array([-y.min(), y.max(), 1.0 if w is None else w.max()])


def combine_label_sums(a: tuple, b: tuple) -> tuple:
    """The reduction's step for label_sums: the sums added, the extremes' maximum."""
    return a[0] + b[0], np.maximum(a[1], b[1])


def base_scores(objective, sums: np.ndarray) -> np.ndarray:
    """The objective's own start from the reduced label_sums: its init_scores_from_sums
    (multiclass: of the classes 0..k-1 weighted by their counts, else of the weighted mean
    label)."""
    return objective.init_scores_from_sums(sums)


def start_tree(state: PartitionState, tree: int, previous_leaves, output: int, new_round: bool, dart=None,
               sample=None) -> np.ndarray:
    """Add the previous tree's leaf values to the margins (previous_leaves: (output, leaf
    nodes, values) or None; with a row sample, then its splits for the other rows), then
    start tree `tree` (of the training) for `output`: when `new_round`, DART's dropout
    (`dart`, see dart_round) and the round's gradients and row sample (`sample`: (round,
    sampled rows before this partition), None: every row), the partition reset. Returns
    max |grad| and max |hess| of the tree's rows here."""
    state.expect(tree - 1)
    state.tree = tree
    _add_previous(state, previous_leaves)
    if new_round:
        dart_round(state, dart)
        state.compute_gradients(tree // len(state.base_scores))
        if sample is not None:
            state.draw_sample(*sample)
    state.output = output
    state.partitioner.reset()
    if state.quantizer is None:
        state.builder.set_gradients(state.gradients[output])
    gh = state.gradients[output]
    if state.partitioner.n_sampled >= 0:  # the quantizer's scales: from the sampled rows, as single-machine
        gh = gh[np.asarray(state.partitioner.sample)[:state.partitioner.n_sampled]]
    if not len(gh):
        return np.zeros(2)
    # column by column: numpy's axis-0 max over an (n, 2) array is ~50x slower than this
    return np.array([np.abs(gh[:, 0]).max(), np.abs(gh[:, 1]).max()], dtype=np.float64)


def start_float_tree(state: PartitionState, tree: int, previous_leaves, output: int, new_round: bool, dart=None,
                     sample=None) -> np.ndarray:
    """start_tree, then the root's histogram: with float64 histograms (no quantization
    scales to agree on first) a tree starts in one call."""
    start_tree(state, tree, previous_leaves, output, new_round, dart, sample)
    return root_histogram(state, tree, None)


def dart_round(state: PartitionState, dart) -> None:
    """DART at a round's start, in the single-machine order (backend.LocalBackend): the
    round before's dropped trees put back at their new scale (+ factor x their margins),
    then this round's dropped trees taken out (`dart`: the round's dart.DartRound, None:
    nothing dropped), their margins kept for the next round."""
    state.dropped.take_out(state.margins, dart, state.raw, state.n_threads)


def _add_previous(state: PartitionState, previous_leaves) -> None:
    """The previous tree's leaf values added to the margins (see start_tree)."""
    if previous_leaves is not None:  # (output, leaf nodes, values[, outside steps or None[, linear tree or None]])
        k, leaves, values, *rest = previous_leaves
        state.partitioner.add_leaf_values(leaves, values, state.margins[k])
        if rest and rest[0] is not None:
            state.add_outside(k, rest[0], leaves, values)
        if len(rest) > 1 and rest[1] is not None:
            state.add_linear(k, rest[1])


def start_goss_round(state: PartitionState, tree: int, previous_leaves, dart, shift: int) -> np.ndarray:
    """A GOSS round's start (before start_tree, with new_round False): the previous
    tree's leaf values added, DART's dropout (see dart_round), the round's gradients and
    scores; returns the first pass's digit counts of the scores (goss_digits)."""
    state.expect(tree - 1)
    _add_previous(state, previous_leaves)
    dart_round(state, dart)
    state.compute_gradients(tree // len(state.base_scores))
    state.scores = goss_scores(state.gradients)
    state.candidates = state.scores.view(np.uint64)  # the radix select's: narrowed pass by pass
    return goss_digits(state, tree, 0, 64, shift)


def goss_digits(state: PartitionState, tree: int, prefix: int, fixed_low: int, shift: int) -> np.ndarray:
    """A pass of the round's distributed radix select (_quantile_select's digits): (2048,)
    int64 counts of the digit at `shift` of the scores' bit patterns (non-negative doubles:
    ordered as integers) that agree with `prefix` from bit `fixed_low` up (64: every
    score); those are kept as the candidates of the next pass."""
    state.expect(tree - 1)
    state.candidates = narrowed(state.candidates, prefix, fixed_low)
    return digits_of(state.candidates, shift)


def goss_draw(state: PartitionState, tree: int, round_: int, at: tuple) -> tuple:
    """This partition's part of the round's GOSS sample, from where the round's pass
    over the rows stands at its first row (the previous partition's result): the
    partitioner's root holds it from now on. Returns where the pass stands after it."""
    state.expect(tree - 1)
    k, after = state.draw_goss(round_, at)
    state.partitioner.n_sampled = k
    state.partitioner.reset()
    return after


def root_histogram(state: PartitionState, tree_index: int, maxima: np.ndarray | None) -> np.ndarray:
    """The root's histogram here; quantized: the tree's gradients quantized first, with
    the scales of the global `maxima` (tree_index seeds the rounding, as single-machine)."""
    state.expect(tree_index)
    if state.quantizer is not None:
        _, levels, seed = state.quantizer
        assert maxima is not None  # quantized: the exchange passes the maxima
        scale_g, scale_h = quantization_scales(maxima, levels)
        quantize_block(state.gradients[state.output], state.packed, levels, seed, tree_index, state.first_row,
                       scale_g, scale_h, state.n_threads)
    return state.histograms([0])


def leaf_sums(state: PartitionState, tree: int, leaves) -> np.ndarray:
    """(len(leaves), 2) float64: the leaves' float gradient sums here, added in row order
    as the single-machine renewed leaves."""
    state.expect(tree)
    return node_sums(state.partitioner, leaves, state.gradients[state.output])


def split_rows(partitioner, splits: np.ndarray) -> np.ndarray:
    """split_many of the driver's split rows (parent, feature, threshold_bin, default_left,
    left, right), which a step with categorical splits extends with a flag (1: categorical)
    and the words of its bitset of the bins going left (as int64); the left counts."""
    categorical = () if splits.shape[1] == 6 else (splits[:, 6], splits[:, 7:])
    return split_many(partitioner, *(splits[:, j] for j in range(6)), *categorical)


def split_nodes(state: PartitionState, tree: int, splits: np.ndarray) -> np.ndarray:
    """Apply the driver's splits, rows (parent, feature, threshold_bin, default_left, left,
    right[, categorical, bitset words...]: see split_rows); returns (2, n_splits) int64:
    the rows each left / right child got here."""
    state.expect(tree)
    if len(splits) == 0:
        return np.zeros((2, 0), dtype=np.int64)
    parents = splits[:, 0]
    counts = np.array([node_count(state.partitioner, p) for p in parents], dtype=np.int64)
    lefts = split_rows(state.partitioner, splits)
    return np.stack([lefts, counts - lefts])


def split_and_build(state: PartitionState, tree: int, splits: np.ndarray, build: list, leaves: list) -> tuple:
    """A growth step here: split_nodes(splits), then the histograms of the `build` nodes
    (children of those splits) and, at the tree's last step, the leaf sums of `leaves`
    (either may be empty). Returns (counts, histograms, leaf sums), the leaf sums (floats)
    keyed as `keyed` keys them ([] without leaves)."""
    counts = split_nodes(state, tree, splits)
    return counts, state.histograms(build), keyed(state, leaf_sums, tree, leaves) if leaves else []


def keyed(state, function, *args) -> list:
    """[(state.first_row, function(state, *args))]: a float result that the sums carry to
    the driver as it is (lists add up by concatenation, in any order), keyed by the
    partition's first row, for the driver to add in the partitions' order
    (_driver.in_order): small floats travel one per partition, in one task per worker."""
    return [(state.first_row, function(state, *args))]


def add(a, b):
    """The reduction's step: the fixed tree of these makes the sum's order fixed."""
    return a + b


def add_each(a: tuple, b: tuple) -> tuple:
    """The reduction's step for tuples of arrays (or of keyed lists): their sums, entry by entry."""
    return tuple(x + y for x, y in zip(a, b))


def maximum(a, b):
    return np.maximum(a, b)


def linear_sums(state: PartitionState, tree_index: int, tree, slots: tuple, sums: tuple) -> tuple:
    """A link of the chain over the partitions that sums a tree's normal equations (see
    PartitionState.linear_sums)."""
    state.expect(tree_index)
    return state.linear_sums(tree, slots, sums)
