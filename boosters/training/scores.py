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
    `backend` scores them (see backend.py): on the validation rows (its margins updated
    tree by tree, from its init_score if it has one, coded with the training's categories
    as at prediction), or, without them and when a callback reads scores
    (`backend.train_scored`), on the training rows. `evals_result` holds them, as
    callbacks see them, keyed by each metric's label ("ndcg@10"; a callable's name as it
    returns it): {"valid": {label: history}} or {"train": {label: [...]}}, in the metrics'
    order, from the first round on; `history`, the model's eval_history, is the first
    metric's. `higher_is_better`: label -> whether a higher score is better."""

    def __init__(self, config: GBDTConfig, backend, history: list, early_stopping: bool):
        self.metrics = config.resolved_metrics
        self.backend, self.early_stopping, self.history = backend, early_stopping, history
        self.evals_result: dict = {}
        self.higher_is_better: dict = {}
        self.nan_warned = False
        self.valid = backend.has_val_set
        if self.valid:
            self._scores = self.evals_result["valid"] = {}
        elif backend.train_scored:
            self._scores = self.evals_result["train"] = {}
        else:
            self._scores = None

    def add(self, round_: int, trees: list, dart=None) -> None:
        """Score round `round_`, whose trees (one per output) were just grown (`dart`: its
        dropout, dart.DartRound, None when nothing was dropped)."""
        if not self.valid:
            if self._scores is not None:
                self._record(self.backend.train_scores(), round_)
            return
        scores = self._record(self.backend.val_scores(round_, trees, dart), round_)
        for i, (metric, label, value) in enumerate(scores):
            if not math.isnan(value):
                continue
            # never a best round; early stopping (on the first metric) cannot work without a score
            hint = metric_fn(metric).nan_hint if isinstance(metric, Metric) else MetricFn.nan_hint
            if self.early_stopping and i == 0:
                raise ValueError(f"val_set: the validation {label} is NaN at round {round_ + 1} ({hint}); "
                                 f"early stopping cannot select a round from it")
            if not self.nan_warned:
                self.nan_warned = True
                warnings.warn(f"val_set: the validation {label} is NaN from round {round_ + 1} ({hint})",
                              RuntimeWarning, stacklevel=6)

    def _record(self, scores: list, round_: int) -> list[tuple]:
        """Every metric's score, (metric, label, value, higher_is_better) each, appended to
        its history (made at the first round scored: the first metric's is the model's
        eval_history); (metric, label, value) each."""
        if not self.higher_is_better:
            labels = [label for _, label, _, _ in scores]
            if len(set(labels)) != len(labels):
                raise ValueError(f"metric: two metrics have the same name in {labels}; give each its own name")
            for i, (_, label, _, higher) in enumerate(scores):
                self._scores[label] = self.history if i == 0 and self.valid else []
                self.higher_is_better[label] = higher
        for _, label, value, _ in scores:
            if label not in self._scores:
                raise ValueError(f"metric: a custom metric changed its name to {label!r} at round {round_ + 1}")
            self._scores[label].append(value)
        return [(metric, label, value) for metric, label, value, _ in scores]
