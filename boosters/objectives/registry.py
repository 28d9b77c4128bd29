"""Every objective and metric by name: evaluating a metric."""

from __future__ import annotations

import functools

import numpy as np

from boosters.objectives.classification import accuracy, auc, logloss, margin_accuracy, one_vs_rest_logloss
from boosters.objectives.counts import gamma_deviance, poisson_deviance, tweedie_deviance
from boosters.objectives.ranking import average_precision, ndcg
from boosters.objectives.regression import huber, mae, mape, pinball, rmse

_RANKING = {"ndcg": ndcg, "map": average_precision}

_METRICS = {
    "rmse": rmse,
    "mae": mae,
    "logloss": logloss,
    "auc": auc,
    "accuracy": accuracy,
    "multiclass_logloss": logloss,
    "multiclass_accuracy": accuracy,
    "poisson_deviance": poisson_deviance,
    "gamma_deviance": gamma_deviance,
    "one_vs_rest_logloss": one_vs_rest_logloss,
    "mape": mape,
}


def evaluate(metric, y: np.ndarray, margins: np.ndarray, weights: np.ndarray | None = None,
             groups: np.ndarray | None = None) -> float:
    """`metric` (a Metric) of (n_rows, n_outputs) margins against labels; ranking metrics per
    query group (`groups`: the query boundaries, Dataset.group_boundaries)."""
    if metric.needs_groups:
        if groups is None:
            raise ValueError(f"metric {metric.label} scores query groups: the evaluated Dataset needs group= or qid=")
        return _RANKING[metric.name](y, margins, weights, groups, metric.k)
    if metric.name == "tweedie_deviance":
        return tweedie_deviance(y, margins, weights, metric.variance_power)
    if metric.name == "pinball":  # a multi-quantile model's outputs are levels of the one label
        return pinball(y, margins, weights, metric.alpha)
    if metric.name == "margin_accuracy":
        return margin_accuracy(y, margins, weights, metric.threshold)
    function = functools.partial(huber, delta=metric.delta) if metric.name == "huber" else _METRICS[metric.name]
    if y.ndim == 2:
        return per_target_mean(function, y, margins, weights)
    return function(y, margins, weights)


def per_target_mean(metric, y: np.ndarray, margins: np.ndarray, weights) -> float:
    """Multi-target regression: the mean over the targets (columns of y, (n_rows, k), and
    of the margins) of each target's metric, so that each target counts the same whatever
    its scale (as scikit-learn's ``multioutput="uniform_average"``)."""
    return float(np.mean([metric(y[:, k], margins[:, k:k + 1], weights) for k in range(y.shape[1])]))
