"""Each boosting round's scores, for the callbacks and the model's `eval_history`."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from boosters.config import GBDTConfig, Metric
from boosters.data.dataset import Dataset
from boosters.objectives.base import MetricFn
from boosters.objectives.registry import evaluate, metric_fn


def set_label(name: str) -> str:
    """How errors name a validation set: "val_set" for the single one, else by its name."""
    return "val_set" if name == "valid" else f"val_set {name!r}"


def monitored_set(val_names: list, held_out: list) -> str:
    """The set early stopping and eval_history follow: the last one that is not the
    training rows themselves (`held_out`: the others), as LightGBM; "valid" without any."""
    return (held_out or val_names or ["valid"])[-1]


def score(metric, dataset: Dataset, margins: np.ndarray) -> tuple[str, float, bool]:
    """(label, value, higher_is_better) of `metric` on (n_rows, n_outputs) margins of
    `dataset`: a built-in Metric, or a callable (margins, dataset) -> (name, value,
    higher_is_better), given the margins read-only as (n_rows,) for one output."""
    if isinstance(metric, Metric):
        value = evaluate(metric, dataset.y, margins, dataset.weights, dataset.group_boundaries)
        return metric.label, value, metric.higher_is_better
    view = (margins[:, 0] if margins.shape[1] == 1 else margins).view()
    view.flags.writeable = False
    result = metric(view, dataset)
    if (not isinstance(result, tuple) or len(result) != 3 or not isinstance(result[0], str)
            or not isinstance(result[1], numbers.Real) or not isinstance(result[2], (bool, np.bool_))):
        raise TypeError(f"metric: the custom metric {getattr(metric, '__name__', metric)!r} must return "
                        f"(name: str, value: float, higher_is_better: bool), got {result!r}")
    return result[0], float(result[1]), bool(result[2])


class RoundScores:
    """The metrics after each round (every one of `config.resolved_metrics`), as the
    `backend` scores them (see backend.py): on each validation set's rows (their margins
    updated tree by tree, from their init_score if they have one, coded with the
    training's categories as at prediction), or, without one and when a callback reads
    scores (`backend.train_scored`), on the training rows. `evals_result` holds them, as
    callbacks see them, keyed by the set's name (`backend.val_names`: "valid" for a single
    validation set) and each metric's label ("ndcg@10"; a callable's name as it returns
    it): {"valid": {label: history}} or {"train": {label: [...]}}, in the sets' and the
    metrics' order, from the first round on; `history`, the model's eval_history, is the
    first metric's on the `monitored` set (backend.monitored: the last validation set that
    is not the training set). `higher_is_better`: label -> whether a higher score is
    better."""

    def __init__(self, config: GBDTConfig, backend, history: list, early_stopping: bool):
        self.metrics = config.resolved_metrics
        self.backend, self.early_stopping, self.history = backend, early_stopping, history
        self.evals_result: dict = {}
        self.higher_is_better: dict = {}
        self.nan_warned = False
        self.valid = backend.has_val_set
        self.monitored = backend.monitored
        if self.valid:
            for name in backend.val_names:
                self.evals_result[name] = {}
        elif backend.train_scored:
            self.evals_result["train"] = {}

    def add(self, round_: int, trees: list, dart=None) -> None:
        """Score round `round_`, whose trees (one per output) were just grown (`dart`: its
        dropout, dart.DartRound, None when nothing was dropped)."""
        if not self.valid:
            if self.evals_result:
                self._record("train", self.backend.train_scores(), round_)
            return
        for name, set_scores in zip(self.backend.val_names, self.backend.val_scores(round_, trees, dart)):
            scores = self._record(name, set_scores, round_)
            self._check_nan(name, scores, round_)

    def _check_nan(self, name: str, scores: list, round_: int) -> None:
        """A NaN score is never a best round; early stopping (on the monitored set's first
        metric) cannot work without one: an error; elsewhere a warning, once."""
        for i, (metric, label, value) in enumerate(scores):
            if not math.isnan(value):
                continue
            hint = metric_fn(metric).nan_hint if isinstance(metric, Metric) else MetricFn.nan_hint
            where = set_label(name)
            if self.early_stopping and i == 0 and name == self.monitored:
                raise ValueError(f"{where}: the validation {label} is NaN at round {round_ + 1} ({hint}); "
                                 f"early stopping cannot select a round from it")
            if not self.nan_warned:
                self.nan_warned = True
                warnings.warn(f"{where}: the validation {label} is NaN from round {round_ + 1} ({hint})",
                              RuntimeWarning, stacklevel=7)

    def _record(self, name: str, scores: list, round_: int) -> list[tuple]:
        """Every metric's score on set `name`, (metric, label, value, higher_is_better)
        each, appended to its history (made at the first round scored: the monitored
        set's first metric's is the model's eval_history); (metric, label, value) each."""
        histories = self.evals_result[name]
        if not histories:
            labels = [label for _, label, _, _ in scores]
            if len(set(labels)) != len(labels):
                raise ValueError(f"metric: two metrics have the same name in {labels}; give each its own name")
            for i, (_, label, _, higher) in enumerate(scores):
                histories[label] = self.history if i == 0 and self.valid and name == self.monitored else []
                self.higher_is_better[label] = higher
        for _, label, value, _ in scores:
            if label not in histories:
                raise ValueError(f"metric: a custom metric changed its name to {label!r} at round {round_ + 1}")
            histories[label].append(value)
        return [(metric, label, value) for metric, label, value, _ in scores]
