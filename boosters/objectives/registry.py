"""Every objective and metric by name: the bound objective of a training, evaluating a metric."""

from __future__ import annotations

import numpy as np

from boosters.objectives.base import MetricFn, ObjectiveFn
from boosters.objectives.classification import (Accuracy, Auc, Hinge, Logistic, LogLoss, MarginAccuracy,
                                                MulticlassAccuracy, MulticlassLogLoss, OneVsRest, OneVsRestLogLoss,
                                                Softmax)
from boosters.objectives.counts import Gamma, GammaDeviance, Poisson, PoissonDeviance, Tweedie, TweedieDeviance
from boosters.objectives.custom import Custom
from boosters.objectives.ranking import LambdaRank, Map, Ndcg, Pairwise
from boosters.objectives.regression import Absolute, Huber, HuberLoss, Mae, Mape, Pinball, PinballLoss, Rmse, Squared

OBJECTIVES = (Squared, Absolute, Huber, Pinball, Poisson, Gamma, Tweedie,  # by family
              Logistic, Softmax, OneVsRest, Hinge, LambdaRank, Pairwise, Custom)
METRICS = (Rmse, Mae, Mape, HuberLoss, PinballLoss, PoissonDeviance, GammaDeviance, TweedieDeviance,
           LogLoss, MulticlassLogLoss, OneVsRestLogLoss, Auc, Accuracy, MulticlassAccuracy, MarginAccuracy,
           Ndcg, Map)
_BY_NAME = {fn.name: fn for fn in OBJECTIVES}
METRICS_BY_NAME = {fn.name: fn for fn in METRICS}


def objective_fn(objective) -> type[ObjectiveFn]:
    """The definition of `objective` (an Objective, or its name)."""
    name = objective if isinstance(objective, str) else objective.name
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"objective must be one of {[fn.name for fn in OBJECTIVES]}, got {name!r}") from None


def names(task: str) -> tuple[str, ...]:
    """The objectives an estimator of `task` ("regression", "classification", "ranking")
    takes by name, in the registry's order."""
    return tuple(fn.name for fn in OBJECTIVES if fn.task == task)


def make_objective(spec, groups: np.ndarray | None = None) -> ObjectiveFn:
    """The objective's functions, bound to `spec` (an Objective); `groups`: the training rows'
    query boundaries (ranking)."""
    return objective_fn(spec)(spec, groups)


def metric_fn(metric) -> type[MetricFn]:
    """The definition of `metric` (a Metric, or its name)."""
    name = metric if isinstance(metric, str) else getattr(metric, "name", None)
    try:
        return METRICS_BY_NAME[name]
    except (KeyError, TypeError):
        raise ValueError(f"metric must be one of {[fn.name for fn in METRICS]}, got {metric!r}") from None


def evaluate(metric, y: np.ndarray, margins: np.ndarray, weights: np.ndarray | None = None,
             groups: np.ndarray | None = None) -> float:
    """`metric` (a Metric) of (n_rows, n_outputs) margins against labels; ranking metrics per
    query group (`groups`: the query boundaries, Dataset.group_boundaries)."""
    fn = metric_fn(metric)
    if fn.needs_groups and groups is None:
        raise ValueError(f"metric {metric.label} scores query groups: the evaluated Dataset needs group= or qid=")
    if y.ndim == 2 and fn.per_target:  # multi-target regression (only per-target metrics can score it)
        return per_target_mean(lambda yk, mk, w: fn.score(metric, yk, mk, w, groups), y, margins, weights)
    return fn.score(metric, y, margins, weights, groups)


def per_target_mean(metric, y: np.ndarray, margins: np.ndarray, weights) -> float:
    """Multi-target regression: the mean over the targets (columns of y, (n_rows, k), and
    of the margins) of each target's metric, so that each target counts the same whatever
    its scale (as scikit-learn's ``multioutput="uniform_average"``)."""
    return float(np.mean([metric(y[:, k], margins[:, k:k + 1], weights) for k in range(y.shape[1])]))
