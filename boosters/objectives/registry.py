"""Every objective and metric by name: the bound objective of a training, evaluating a metric."""

from __future__ import annotations

import functools

import numpy as np

from boosters.objectives.base import ObjectiveFn
from boosters.objectives.classification import (Hinge, Logistic, OneVsRest, Softmax, accuracy, auc, logloss,
                                                margin_accuracy, one_vs_rest_logloss)
from boosters.objectives.counts import Gamma, Poisson, Tweedie, gamma_deviance, poisson_deviance, tweedie_deviance
from boosters.objectives.custom import Custom
from boosters.objectives.ranking import LambdaRank, Pairwise, average_precision, ndcg
from boosters.objectives.regression import Absolute, Huber, Pinball, Squared, huber, mae, mape, pinball, rmse

OBJECTIVES = (Squared, Absolute, Huber, Pinball, Poisson, Gamma, Tweedie,  # by family
              Logistic, Softmax, OneVsRest, Hinge, LambdaRank, Pairwise, Custom)
_BY_NAME = {fn.name: fn for fn in OBJECTIVES}


def objective_fn(objective) -> type[ObjectiveFn]:
    """The definition of `objective` (an Objective, or its name)."""
    name = objective if isinstance(objective, str) else objective.name
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"objective must be one of {[fn.name for fn in OBJECTIVES]}, got {name!r}") from None


def make_objective(spec, groups: np.ndarray | None = None) -> ObjectiveFn:
    """The objective's functions, bound to `spec` (an Objective); `groups`: the training rows'
    query boundaries (ranking)."""
    return objective_fn(spec)(spec, groups)


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
