"""Each boosting round's score, for the callbacks and the model's `eval_history`."""

from __future__ import annotations

import warnings

import numpy as np

from boosters.config import GBDTConfig
from boosters.data.categories import recode
from boosters.data.dataset import Dataset
from boosters.model.tree import predict_tree
from boosters.training.metrics import evaluate

# why a validation metric can be NaN, for its error message
_NAN_HINTS = {"auc": "AUC needs both classes in the validation labels"}


class RoundScores:
    """The metric after each round: on the validation set (its margins updated tree by
    tree, coded with the training's categories as at prediction), or, without one and
    when a callback reads scores (`train_scores`), on the training rows (`margins`, which
    the grower updates). `evals_result` holds them, as callbacks see them, keyed by the
    metric's label ("ndcg@10"): {"valid": {label: history}} or {"train": {label: [...]}};
    `history` is the model's eval_history."""

    def __init__(self, config: GBDTConfig, train: Dataset, val_set: Dataset | None, margins: np.ndarray,
                 base: np.ndarray, history: list, train_scores: bool, early_stopping: bool, n_threads: int):
        self.metric = config.resolved_metric
        self.train, self.val_set, self.margins = train, val_set, margins
        self.early_stopping, self.n_threads = early_stopping, n_threads
        self.evals_result: dict = {}
        self.nan_warned = False
        if val_set is not None:
            self.val_margins = np.tile(base, (val_set.n_rows, 1))
            self.val_X = recode(val_set.X, val_set.categories, train.categories, train.feature_names, "val_set")
            self._scores = history
            self.evals_result["valid"] = {self.metric.label: history}
        elif train_scores:
            self._scores = []
            self.evals_result["train"] = {self.metric.label: self._scores}
        else:
            self._scores = None

    def add(self, round_: int, trees: list) -> None:
        """Score round `round_`, whose trees (one per output) were just grown."""
        if self.val_set is None:
            if self._scores is not None:
                self._scores.append(evaluate(self.metric, self.train.y, self.margins.T, self.train.weights,
                                             self.train.group_boundaries))
            return
        for k, tree in enumerate(trees):
            self.val_margins[:, k] += predict_tree(tree, self.val_X, self.n_threads, check=False)
        score = evaluate(self.metric, self.val_set.y, self.val_margins, self.val_set.weights,
                         self.val_set.group_boundaries)
        self._scores.append(score)
        if np.isnan(score):  # never a best round; early stopping cannot work without a score
            name, hint = self.metric.label, _NAN_HINTS.get(self.metric.name, "no defined value on this data")
            if self.early_stopping:
                raise ValueError(f"val_set: the validation {name} is NaN at round {round_ + 1} ({hint}); "
                                 f"early stopping cannot select a round from it")
            if not self.nan_warned:
                self.nan_warned = True
                warnings.warn(f"val_set: the validation {name} is NaN from round {round_ + 1} ({hint})",
                              RuntimeWarning, stacklevel=5)
