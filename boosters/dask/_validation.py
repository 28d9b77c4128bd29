"""The validation set of a Dask training: each partition of (X_val, y_val) kept on a
worker with its margins, updated tree by tree; the metric reduced from per-partition
sums (a fixed order), for `eval_history` and early stopping.

Only metrics that are a mean over rows (after a transform) reduce this way: rmse (the
mean squared error, then its root), mae, logloss; they agree with the single-machine
scores to float64 rounding.
"""

from __future__ import annotations

import math

import numpy as np

from boosters.data.validation import as_feature_matrix, as_labels
from boosters.model.tree import predict_tree
from boosters.training.metrics import evaluate

# metric name -> (mean of the partition from its score, score from the overall mean)
MEAN_METRICS = {"rmse": (np.square, math.sqrt), "mae": (float, float), "logloss": (float, float)}


class ValidationState:
    def __init__(self, X, y, objective, base_scores):
        self.X = as_feature_matrix(X, "val_set X")
        self.y = as_labels(y, len(self.X), "val_set y")
        objective.check_labels(self.y)
        self.margins = np.repeat(np.asarray(base_scores, dtype=np.float64)[None, :], len(self.X), axis=0)


def make_validation_state(X, y, objective, base_scores) -> ValidationState:
    return ValidationState(X, y, objective, base_scores)


def score_round(state: ValidationState, trees: list, metric) -> np.ndarray:
    """Add a round's trees (one per output) to the margins; (the metric's mean here x rows,
    rows): the partition's share of the overall mean."""
    for k, tree in enumerate(trees):
        state.margins[:, k] += predict_tree(tree, state.X, 1, check=False)
    to_mean = MEAN_METRICS[metric.name][0]
    n = len(state.y)
    return np.array([to_mean(evaluate(metric, state.y, state.margins)) * n if n else 0.0, float(n)])


def overall_score(metric, sums: np.ndarray) -> float:
    return MEAN_METRICS[metric.name][1](sums[0] / sums[1])
