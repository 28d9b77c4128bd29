"""Where the boosting loop's rounds grow: the trainer (`trainer.GBDTTrainer.run`) runs the
one boosting loop (rounds, learning rates, DART's choices, callbacks, early stopping, the
scores' bookkeeping) over a backend, which holds the training rows and their margins,
grows each round's trees on them and scores the validation (or training) rows.
`LocalBackend` is one machine; boosters.dask's `DaskBackend` the partitions of a cluster.

A backend has `config` (the training's, targets resolved), `n_outputs`, `base_scores`,
`n_features`, `feature_names`, `categories`, `has_val_set`, `val_names` (the validation
sets' names, in order), `monitored` (the one early stopping watches), `train_scored`
(the training rows are scored each round: no validation set, callbacks that read
scores), `one_round_at_a_time` (its rounds cannot grow in blocks), and:

- ``grow_rounds(first_round, n_rounds, learning_rate, dart)``: the trees of up to
  `n_rounds` rounds (at least one), one list per round, one tree per output; `dart`: the
  round's `dart.DartRound` (its dropped trees are taken out of the margins before the
  gradients and put back at `dart.factor` after the growth), None when nothing is dropped;
- ``val_scores(round_, trees, dart)``: the round's trees (and DART's correction) added to
  the validation margins; per validation set, (metric, label, value, higher_is_better)
  per metric;
- ``train_scores()``: the same on the training rows (when `train_scored`);
- ``finish(result)``: what the run cost, into the `TrainingResult`.
"""

from __future__ import annotations

import numpy as np

from boosters._lib.logs import logger
from boosters.config import GBDTConfig
from boosters.data.dataset import Dataset
from boosters.data.validation import init_score_columns
from boosters.model.prediction import predict_tree
from boosters.objectives.custom import Custom
from boosters.objectives.registry import make_objective
from boosters.training.dart import DartRound, DroppedMargins, scale_down_dropped
from boosters.training.growth.grower import TreeGrower
from boosters.training.linear_leaves import LinearLeafFitter
from boosters.training.scores import monitored_set, score, set_label

AUTO_QUANTIZE_MIN_ROWS = 100_000  # measured crossover (docs/benchmarks/end_to_end.md); RFC-0016 DD-3


def resolve_histogram_mode(config: GBDTConfig, n_rows: int) -> str:
    """"auto": full precision for small data, 16-bit quantized histograms otherwise."""
    if config.histogram_mode != "auto":
        return config.histogram_mode
    return "f64" if n_rows < AUTO_QUANTIZE_MIN_ROWS else "i16"


def start_margins(objective, train: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """The forest's base scores and the training margins (n_outputs, n_rows) it boosts
    from: the objective's constant start, or with `train.init_score` that alone (base 0:
    the start is not added, as LightGBM's boost_from_average and XGBoost's base_score
    are not with an init_score / base_margin)."""
    if train.init_score is None:
        base = objective.init_scores(train.y, train.weights)
        return base, np.repeat(base[:, None], train.n_rows, axis=1)
    columns = init_score_columns(train.init_score, objective.n_outputs, "train: init_score")
    return np.zeros(objective.n_outputs), np.array(columns.T, order="C")  # a copy: the rounds update it


class ValidationSet:
    """One validation set of a local training: its name, its Dataset, its rows as the model
    reads them (`X`) and its margins, updated tree by tree; `X` None: the training set
    itself (LightGBM's `valid_sets=[train, ...]`), scored on the training margins."""

    def __init__(self, name: str, dataset: Dataset, X, base_scores: np.ndarray, n_outputs: int):
        self.name, self.dataset, self.X = name, dataset, X
        if X is None:
            return
        self.margins = np.tile(base_scores, (dataset.n_rows, 1))
        if dataset.init_score is not None:
            self.margins += init_score_columns(dataset.init_score, n_outputs, f"{set_label(name)}: init_score")


class LocalBackend:
    """One machine: the training rows binned, their margins and the `TreeGrower` that grows
    rounds on them (many in one nogil block when nothing reads the driver between them);
    the validation sets (`evals`: (name, Dataset, its features as the model reads them,
    None for the training set itself) each) and their margins, updated tree by tree."""

    def __init__(self, config: GBDTConfig, train: Dataset, evals: list, train_scored: bool, n_threads: int):
        self.config, self.train, self.n_threads = config, train, n_threads
        self.has_val_set, self.train_scored = bool(evals), train_scored
        self.val_names = [name for name, _, _ in evals]
        self.monitored = monitored_set(self.val_names, [name for name, _, X in evals if X is not None])
        self.n_features, self.feature_names, self.categories = train.n_features, train.feature_names, train.categories
        self.target_statistics: dict = {}  # cat_encoding="ordered_ctr": set by the trainer (the model's tables)
        objective = make_objective(config.objective, train.group_boundaries)
        objective.check_labels(train.y)
        objective.check_scale(train.y, train.weights)
        for _, dataset, X in evals:
            if X is not None:
                objective.check_labels(dataset.y)
        mapper, binned = train.binned(config.max_bins, config.seed, config.enable_bundling, n_threads)
        self.base_scores, self.margins = start_margins(objective, train)
        self.dropped = DroppedMargins()  # DART: a round's dropped trees, out of the margins while it grows
        self.n_outputs = objective.n_outputs
        gradients = np.empty((objective.n_outputs, train.n_rows, 2), dtype=np.float32)
        gradient_kernel = objective.gradient_kernel(self.margins, train.y, train.weights, gradients, n_threads)
        self.grower = TreeGrower(binned, mapper, config, n_threads, gradient_kernel, self.margins,
                                 resolve_histogram_mode(config, train.n_rows), feature_names=train.feature_names,
                                 query_groups=train.group_boundaries if config.objective.needs_groups else None)
        if config.linear_leaves:
            self.grower.linear_leaves = LinearLeafFitter(train.X, ~mapper.is_categorical, gradients, self.margins,
                                                         config.linear_l1, config.linear_l2, n_threads)
        self.val_sets = [ValidationSet(name, dataset, X, self.base_scores, self.n_outputs)
                         for name, dataset, X in evals]
        # a custom objective's gradients come from Python before each round
        self.before_round = ((lambda: objective.fill(train)) if isinstance(objective, Custom)
                             else None)
        self.one_round_at_a_time = bool(evals) or self.before_round is not None

    def grow_rounds(self, first_round: int, n_rounds: int, learning_rate: float,
                    dart: DartRound | None = None) -> list[list]:
        if dart is not None:  # the gradients of the margins without the dropped trees (an out-of-core
            self.dropped.take_out(self.margins, dart, self.train.X, self._threads())  # Dataset has no X)
        if self.before_round is not None:
            self.before_round()
        self.grower.rounds.learning_rate = learning_rate
        block = self.grower.grow_rounds(first_round, n_rounds)
        self.dropped.put_back(self.margins)  # at their new scale
        return block

    def val_scores(self, round_: int, trees: list, dart: DartRound | None = None) -> list[list[tuple]]:
        out = []
        for val in self.val_sets:
            if val.X is None:  # the training set: its margins hold the round already
                out.append(self.train_scores())
                continue
            scale_down_dropped(val.margins, dart, val.X, self._threads())
            for k, tree in enumerate(trees):
                val.margins[:, k] += predict_tree(tree, val.X, self._threads(), check=False)
            out.append([(metric, *score(metric, val.dataset, val.margins))
                        for metric in self.config.resolved_metrics])
        return out

    def _threads(self) -> int:
        """The threads the cores can run now: the growing rounds' team (_lib/load.py)."""
        return self.grower.load.n_threads

    def train_scores(self) -> list[tuple]:
        return [(metric, *score(metric, self.train, self.margins.T)) for metric in self.config.resolved_metrics]

    def finish(self, result) -> None:
        grower = self.grower
        if grower.n_evictions and self.config.verbosity >= 1:
            logger.info("note: %d histograms were evicted and rebuilt; a larger cache_size avoids that",
                        grower.n_evictions)
        result.n_evictions, result.kernel_timings = grower.n_evictions, grower.loop.timings
