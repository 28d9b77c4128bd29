"""The backend of the one boosting loop (training/backend.py) on a Dask cluster: the
trainer (`GBDTTrainer.run`) runs the rounds, the learning rates, DART's choices, early
stopping and the scores' bookkeeping; this grows each round's trees on the partitions
(`_driver.DaskTreeGrower`, one tree per output), scores the validation partitions, and
survives a lost worker: every partition is rebuilt from the finished trees and the tree
grows (or the round is scored) again, giving the undisturbed model.
"""

from __future__ import annotations

import copy

from boosters.dask import _partition_state as tasks
from boosters.dask import _validation
from boosters.dask._driver import DaskTreeGrower, LostWorker, Partitions
from boosters.dask._reduction import in_order
from boosters.training.dart import DartRound
from boosters.training.scores import monitored_set

MAX_RECOVERIES = 3  # lost workers survived in a row (while growing one tree or scoring one round)


class DaskBackend:
    """The training partitions' `grower`; `validation`: the partitions of every validation
    set (_validation.ValidationState each, its `set_index` the set's place in
    `val_names`), None without a val_set, each scored with every metric of the config
    (_validation.check_metric) as the partitions' shares summed in their order, set by set.
    `training_sets`: the names of the sets that are the training rows themselves (scored
    as the others, never monitored: as LocalBackend's)."""

    one_round_at_a_time = True  # every round's DART record and score go to the partitions
    train_scored = False        # the training rows are not scored (no callbacks read them)

    def __init__(self, config, grower: DaskTreeGrower, base_scores, n_features: int, feature_names, categories: dict,
                 validation: Partitions | None = None, val_names: list | None = None, training_sets=()):
        self.config, self.grower, self.validation = config, grower, validation
        self.n_outputs = config.objective.n_outputs
        self.base_scores, self.n_features = base_scores, n_features
        self.feature_names, self.categories = feature_names, categories
        self.has_val_set = validation is not None
        self.val_names = list(val_names or ["valid"]) if validation is not None else []
        self.monitored = monitored_set(self.val_names, [name for name in self.val_names if name not in training_sets])
        self.metrics = tuple(config.resolved_metrics) if validation is not None else ()
        self.previous: tuple | None = None  # the last tree's (output, leaf nodes, values): the partitions add them next
        # per scored round: its trees as scored (copies: DART later gives the forest's trees
        # new values) and its DART record, which a rebuilt validation partition adds again
        self.scored: list[tuple] = []
        self.recoveries = 0

    def grow_rounds(self, first_round: int, n_rounds: int, learning_rate: float,
                    dart: DartRound | None = None) -> list[list]:
        """Round `first_round`'s trees (one round a call), each grown again after a lost worker."""
        grower = self.grower
        grower.learning_rate = learning_rate
        if self.config.booster == "dart":  # the partitions apply it at the round's start (and when rebuilt)
            grower.dart_rounds.append(dart)
        trees = []
        for k in range(self.n_outputs):
            index = first_round * self.n_outputs + k
            trees.append(self._surviving(lambda: grower.grow_tree(self.previous, k, new_round=k == 0,
                                                                  tree_index=index)))
            self.previous = (k, *grower.leaves(trees[-1]))
        return [trees]

    def val_scores(self, round_: int, trees: list, dart: DartRound | None = None) -> list[list[tuple]]:
        """The round's trees (and its DART correction) added on every validation partition,
        and every metric of each set's rows, reduced in the partitions' order; per set,
        (metric, label, value, higher_is_better) per metric."""
        values = self._surviving(lambda: self._score(trees, dart))
        self.scored.append(([copy.copy(tree) for tree in trees], dart))
        return [[(metric, metric.label, value, metric.higher_is_better) for metric, value in zip(self.metrics, row)]
                for row in values]

    def _score(self, trees: list, dart) -> list[list[float]]:
        """Per set, per metric, its value: one task per worker and round for every set."""
        p = self.validation
        assert p is not None  # called with a validation set only
        shares = p.gather(p.summed(_validation.keyed_round, trees, self.metrics, dart, any_order=True))
        by_set: list[list] = [[] for _ in self.val_names]
        for (set_index, first_row), share in shares:
            by_set[set_index].append((first_row, share))
        # float sums, in the partitions' order within each set
        return [[_validation.overall_score(metric, sums)
                 for metric, sums in zip(self.metrics, in_order(keyed, tasks.add_each))] for keyed in by_set]

    def train_scores(self) -> list[tuple]:  # pragma: no cover - train_scored is False
        raise NotImplementedError("boosters.dask does not score the training rows")

    def finish(self, result) -> None:
        """Nothing to add to the result: what the run cost is in `stats()`."""

    def stats(self) -> dict:
        """What the training cost in communication (see boosters.dask.train's `stats`)."""
        p, grower = self.grower.partitions, self.grower
        return dict(round_trips=p.round_trips, driver_bytes=p.driver_bytes, partition_bytes=p.partition_bytes,
                    recoveries=self.recoveries, partition_workers=len(set(p.workers)), step_tasks=p.step_tasks,
                    sample_bytes=grower.sample_bytes, sample_seconds=grower.sample_seconds)

    def _recover(self) -> None:
        """After a lost worker: the training and validation partitions rebuilt from the
        finished trees and scored rounds."""
        self.recoveries += 1
        self.grower.resume(self.n_outputs)
        if self.validation is not None:
            self.validation.recover(_validation.resume, self.scored)

    def _surviving(self, step):
        """step(), done again after _recover() when a worker holding partitions is lost (and
        _recover() again when one is lost while recovering); RuntimeError after
        MAX_RECOVERIES of them in a row."""
        failures = 0
        while True:
            try:
                return step()
            except LostWorker as lost:
                while True:
                    failures += 1
                    if failures > MAX_RECOVERIES:
                        raise RuntimeError(f"{lost}; gave up after {MAX_RECOVERIES} recoveries in a row") from lost
                    try:
                        self._recover()
                        break
                    except LostWorker as again:
                        lost = again
