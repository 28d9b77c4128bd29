"""Every objective and metric by name: the bound objective of a training, its number of
targets, evaluating a metric."""

from __future__ import annotations

import difflib

import numpy as np

from boosters.objectives.base import MetricFn, ObjectiveFn, n_targets
from boosters.objectives.classification import (Accuracy, Auc, Error, Hinge, Logistic, LogLoss, MarginAccuracy,
                                                MulticlassAccuracy, MulticlassError, MulticlassLogLoss, OneVsRest,
                                                OneVsRestLogLoss, Softmax)
from boosters.objectives.counts import Gamma, GammaDeviance, Poisson, PoissonDeviance, Tweedie, TweedieDeviance
from boosters.objectives.custom import Custom
from boosters.objectives.ranking import LambdaRank, Map, Ndcg, Pairwise
from boosters.objectives.regression import (Absolute, Huber, HuberLoss, Mae, Mape, Mse, Pinball, PinballLoss, Rmse,
                                            Squared)

OBJECTIVES = (Squared, Absolute, Huber, Pinball, Poisson, Gamma, Tweedie,  # by family
              Logistic, Softmax, OneVsRest, Hinge, LambdaRank, Pairwise, Custom)
METRICS = (Rmse, Mse, Mae, Mape, HuberLoss, PinballLoss, PoissonDeviance, GammaDeviance, TweedieDeviance,
           LogLoss, MulticlassLogLoss, OneVsRestLogLoss, Auc, Accuracy, MulticlassAccuracy, Error, MulticlassError,
           MarginAccuracy, Ndcg, Map)


def by_name(definitions: tuple) -> dict:
    """Every name Objective (or Metric) takes, the definitions' names and aliases -> the
    definition and the parameter defaults that name implies."""
    return {**{alias: (fn, defaults) for fn in definitions for alias, defaults in fn.aliases.items()},
            **{fn.name: (fn, {}) for fn in definitions}}


_BY_NAME = by_name(OBJECTIVES)
_METRICS_BY_NAME = by_name(METRICS)

# LightGBM's and XGBoost's objective and metric names that boosters does not have, with what to use
# instead (the names boosters maps are the definitions' aliases)
REFUSED_OBJECTIVES = {
    **dict.fromkeys(("rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart"),
                    "XE-NDCG is not supported: use 'lambdarank' (or 'pairwise')"),
    "reg:pseudohubererror": "pseudo-Huber is not supported: 'huber' is the Huber loss (LightGBM's), delta=...",
    "reg:squaredlogerror": "squared log error is not supported: train 'regression' on log1p(y)",
    "survival:cox": "survival objectives are not supported", "survival:aft": "survival objectives are not supported",
    "rank:map": "use 'lambdarank' (NDCG gradients) and metric='map'",
    "fair": "the Fair loss is not supported: use 'huber' or 'l1'",
    "mape": "the MAPE objective is not supported: use 'l1' with weights 1 / max(1, |y|), or metric='mape'",
    "cross_entropy_lambda": "not supported: use 'cross_entropy' (labels in [0, 1])",
    "xentlambda": "not supported: use 'cross_entropy' (labels in [0, 1])",
    "multi:softmax_legacy": "use 'multi:softprob'",
}
REFUSED_METRICS = {
    **dict.fromkeys(("poisson", "poisson-nloglik"), "boosters scores Poisson models by 'poisson_deviance', not "
                                                    "the negative log-likelihood"),
    **dict.fromkeys(("gamma", "gamma-nloglik"), "boosters scores gamma models by 'gamma_deviance', not the "
                                                "negative log-likelihood"),
    **dict.fromkeys(("tweedie", "tweedie-nloglik"), "boosters scores Tweedie models by 'tweedie_deviance', not the "
                                                    "negative log-likelihood"),
    **dict.fromkeys(("aucpr", "average_precision"), "not supported: use 'auc' or 'map' (ranking)"),
    "auc_mu": "not supported: use 'multiclass_logloss' or 'multiclass_accuracy'",
    "rmsle": "not supported: train and score on log1p(y) with 'rmse'",
    "multi_logloss_ova": "use 'one_vs_rest_logloss'",
}


def name_hint(name, known, refused: dict) -> str:
    """What a refusal of the objective / metric `name` adds: for a LightGBM or XGBoost name
    boosters does not have (`refused`), why and what to use instead; else the closest of the
    `known` names (" (did you mean 'x'?)"), or nothing."""
    if isinstance(name, str) and name in refused:
        return f" ({name!r} is not supported in boosters: {refused[name]})"
    close = difflib.get_close_matches(name, [*known, *refused], n=1) if isinstance(name, str) else []
    if close and close[0] in refused:  # a LightGBM / XGBoost name boosters refuses: say what to use
        return f" (did you mean {close[0]!r}? boosters does not have it: {refused[close[0]]})"
    return f" (did you mean {close[0]!r}?)" if close else ""


def objective_names_known() -> list[str]:
    """Every name Objective takes: the definitions' names and aliases, sorted."""
    return sorted(_BY_NAME)


def objective_named(name) -> tuple[type[ObjectiveFn], dict] | None:
    """The definition `name` (its name or an alias) stands for, with the parameter defaults
    the name implies; None when no objective has that name."""
    return _BY_NAME.get(name) if isinstance(name, str) else None


def objective_fn(objective) -> type[ObjectiveFn]:
    """The definition of `objective` (an Objective, or its name)."""
    name = objective if isinstance(objective, str) else objective.name
    found = objective_named(name)
    if found is None:
        raise ValueError(f"objective must be one of {[fn.name for fn in OBJECTIVES]}, got {name!r}")
    return found[0]


def checked(fn, key: str, value, definitions: tuple) -> object:
    """The value definition `fn` keeps for the parameter `key` (an Objective's or a Metric's
    attribute): `value`, or the parameter's default when None, checked; None when `fn` does
    not take it, where a value given is an error naming the `definitions` that do."""
    parameter = next((p for p in fn.parameters if p.name == key), None)
    if parameter is None:
        if value is not None:
            raise ValueError(f"{key} only applies to {owners(key, definitions)}, not {fn.name}")
        return None
    return parameter.check(parameter.default if value is None else value, fn.name)


def owners(key: str, definitions: tuple = OBJECTIVES) -> str:
    """The definitions that take the parameter `key`, as messages name them ("softmax and
    one_vs_rest"), in the registry's order."""
    takers = [fn for fn in definitions if fn.takes(key)]
    parameter = next(p for p in takers[0].parameters if p.name == key)
    return parameter.applies_to(tuple(fn.name for fn in takers))


def names(task: str) -> tuple[str, ...]:
    """The objectives an estimator of `task` ("regression", "classification", "ranking")
    takes by name, in the registry's order."""
    return tuple(fn.name for fn in OBJECTIVES if fn.task == task)


def make_objective(spec, groups: np.ndarray | None = None) -> ObjectiveFn:
    """The objective's functions, bound to `spec` (an Objective); `groups`: the training rows'
    query boundaries (ranking)."""
    return objective_fn(spec)(spec, groups)


def resolve_targets(objective, train_y: np.ndarray, val_y: np.ndarray | None):
    """`objective` (an Objective) with as many targets as `train_y` has columns (a 2-D y of
    k columns trains k tree groups). ValueError when an objective of one label per row gets
    a 2-D y, when `objective.n_targets` was given and y disagrees, or when the validation
    labels have another number of targets."""
    k = n_targets(train_y)
    if k > 1 and not objective_fn(objective).takes("n_targets"):
        raise ValueError(f"y: shape {train_y.shape} holds {k} targets per row, which only multi-target "
                         f"regression takes ({owners('n_targets')}); {objective!r} takes one label per row")
    if objective.n_targets is not None and objective.n_targets != k:
        raise ValueError(f"y: {objective!r} needs y of shape (n_rows, {objective.n_targets}), got {train_y.shape}")
    if val_y is not None and n_targets(val_y) != k:
        raise ValueError(f"val_set: y has {n_targets(val_y)} target(s) per row (shape {val_y.shape}) but the "
                         f"training y has {k}")
    return objective if k == 1 or objective.n_targets == k else objective._with_targets(k)


def metric_named(name) -> tuple[type[MetricFn], dict] | None:
    """The definition `name` (its name or an alias) stands for, with the parameter defaults
    the name implies; None when no metric has that name."""
    return _METRICS_BY_NAME.get(name) if isinstance(name, str) else None


def metric_names() -> list[str]:
    """Every name Metric takes (the definitions' names and aliases), sorted."""
    return sorted(_METRICS_BY_NAME)


def metric_fn(metric) -> type[MetricFn]:
    """The definition of `metric` (a Metric, or its name)."""
    found = metric_named(metric if isinstance(metric, str) else getattr(metric, "name", None))
    if found is None:
        raise ValueError(f"metric must be one of {[fn.name for fn in METRICS]}, got {metric!r}")
    return found[0]


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
