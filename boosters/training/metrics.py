"""Evaluation metrics on margins (n_rows, n_outputs), optionally weighted; labels (n_rows,), or
(n_rows, k) for multi-target regression."""

from __future__ import annotations

import functools

import numpy as np

from boosters.config import Metric


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _mean(values, weights):
    return float(np.average(values, weights=weights))


def rmse(y, margins, w):
    return float(np.sqrt(_mean((margins[:, 0] - y) ** 2, w)))


def mae(y, margins, w):
    return _mean(np.abs(margins[:, 0] - y), w)


def logloss(y, margins, w):
    if margins.shape[1] == 1:  # binary: log(1 + e^m) - y m, stable for any margin
        m = margins[:, 0]
        return _mean(_softplus(m) - y * m, w)
    top = margins.max(axis=1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(margins - top).sum(axis=1))
    return _mean(log_norm - margins[np.arange(len(y)), y.astype(np.int64)], w)


def margin_accuracy(y, margins, w, threshold):
    """Share of rows whose class, [margin > threshold], is the label; a probability label y
    counts y right for class 1 and 1 - y for class 0 (XGBoost's error@t, complemented)."""
    return _mean(np.where(margins[:, 0] > threshold, y, 1.0 - y), w)


def accuracy(y, margins, w):
    if margins.shape[1] == 1:
        return margin_accuracy(y, margins, w, 0.0)
    return _mean(np.argmax(margins, axis=1) == y, w)  # softmax, one-vs-rest: the most likely class


def one_vs_rest_logloss(y, margins, w):
    """Per row, the sum over the classes k of the binary log loss of output k against [y == k]."""
    is_class = y[:, None] == np.arange(margins.shape[1])
    return _mean((_softplus(margins) - is_class * margins).sum(axis=1), w)


def auc(y, margins, w):
    """Weighted ROC AUC; tied scores count one half. A probability label y counts as weight
    y positive and 1 - y negative (as XGBoost's auc; 0/1 labels as usual)."""
    score = margins[:, 0]
    w = np.ones_like(score) if w is None else w
    order = np.argsort(score, kind="stable")
    score, label, weight = score[order], y[order], w[order]
    w_pos, w_neg = weight * label, weight * (1.0 - label)
    total_pos, total_neg = w_pos.sum(), w_neg.sum()
    if total_pos == 0 or total_neg == 0:
        return float("nan")
    # per group of tied scores: negatives strictly below, and half of the tied ones
    starts = np.flatnonzero(np.r_[True, score[1:] != score[:-1]])
    neg_in_group = np.add.reduceat(w_neg, starts)
    pos_in_group = np.add.reduceat(w_pos, starts)
    neg_below = np.cumsum(neg_in_group) - neg_in_group
    return float(np.sum(pos_in_group * (neg_below + 0.5 * neg_in_group)) / (total_pos * total_neg))


def poisson_deviance(y, margins, w):
    mu = np.exp(margins[:, 0])
    y_log_ratio = np.where(y > 0, y * (np.log(np.where(y > 0, y, 1.0)) - margins[:, 0]), 0.0)  # 0 log 0 = 0
    return _mean(2.0 * (y_log_ratio - (y - mu)), w)


def gamma_deviance(y, margins, w):
    log_ratio = np.log(y) - margins[:, 0]  # log(y / mu)
    return _mean(2.0 * (np.exp(log_ratio) - log_ratio - 1.0), w)


def tweedie_deviance(y, margins, w, p):
    f = margins[:, 0]
    unit = (np.power(y, 2.0 - p) / ((1.0 - p) * (2.0 - p)) - y * np.exp((1.0 - p) * f) / (1.0 - p)
            + np.exp((2.0 - p) * f) / (2.0 - p))
    return _mean(2.0 * unit, w)


def mape(y, margins, w):
    """LightGBM's: |y - f| / max(1, |y|)."""
    return _mean(np.abs(y - margins[:, 0]) / np.maximum(1.0, np.abs(y)), w)


def huber(y, margins, w, delta):
    r = np.abs(margins[:, 0] - y)
    return _mean(np.where(r <= delta, 0.5 * r * r, delta * (r - 0.5 * delta)), w)


def pinball(y, margins, w, alpha):
    """Mean pinball loss; with several levels (a multi-quantile model), the mean over the
    levels, on the sorted quantiles the model predicts."""
    levels = np.atleast_1d(alpha)
    predictions = np.sort(margins, axis=1) if margins.shape[1] > 1 else margins
    r = y[:, None] - predictions  # (n_rows, n_levels)
    loss = np.where(r >= 0, levels * r, (levels - 1.0) * r)
    return float(np.mean([_mean(loss[:, k], w) for k in range(len(levels))]))


def _query_positions(groups: np.ndarray, key: np.ndarray):
    """Rows ordered by `key` descending within each query (ties in row order), the query
    of each ordered row and its 0-based position in its query."""
    query = np.repeat(np.arange(len(groups) - 1), np.diff(groups))
    order = np.lexsort((-key, query))  # stable: by query, then by key descending
    position = np.arange(len(key)) - groups[query]
    return order, query, position


def _query_mean(per_query: np.ndarray, groups: np.ndarray, w) -> float:
    """Mean over the queries; with weights, each query weighs its rows' mean weight (as LightGBM)."""
    if w is None:
        return float(per_query.mean())
    query_weight = np.add.reduceat(w, groups[:-1]) / np.diff(groups)
    return float(np.sum(per_query * query_weight) / np.sum(query_weight))


def _dcg(gain, key, groups, k):
    """Per query: DCG@k of its rows ordered by `key` descending (ties in row order)."""
    order, _, position = _query_positions(groups, key)
    contribution = np.where(position < k, gain[order] / np.log2(2.0 + position), 0.0)
    return np.add.reduceat(contribution, groups[:-1])


def ideal_dcg(y, groups, k):
    """Per query: the best DCG@k of its labels `y` (gain 2^label - 1, discount
    1/log2(2 + position)), the rows sorted by label; 0 without a relevant row.
    NDCG's denominator, and lambdarank's (computed once per training)."""
    return _dcg(np.exp2(y) - 1.0, y, groups, k)


def ndcg(y, margins, w, groups, k):
    """Mean NDCG@k over the queries (gain 2^label - 1, discount 1/log2(2 + position);
    a query whose ideal DCG is 0 scores 1), as LightGBM."""
    ideal = ideal_dcg(y, groups, k)
    actual = _dcg(np.exp2(y) - 1.0, margins[:, 0], groups, k)
    per_query = np.ones(len(ideal))
    np.divide(actual, ideal, out=per_query, where=ideal > 0)
    return _query_mean(per_query, groups, w)


def average_precision(y, margins, w, groups, k):
    """Mean AP@k over the queries (relevant: label > 0.5; a query's sum of precision@i at
    the relevant positions i <= k over min(k, its relevant rows); 1 without any), as LightGBM."""
    order, _, position = _query_positions(groups, margins[:, 0])
    relevant = (y[order] > 0.5).astype(np.float64)
    hits = np.cumsum(relevant)
    hits -= np.repeat(hits[groups[:-1]] - relevant[groups[:-1]], np.diff(groups))  # per query
    precision = np.where((position < k) & (relevant > 0), hits / (position + 1.0), 0.0)
    n_relevant = np.add.reduceat(relevant, groups[:-1])
    per_query = np.ones(len(n_relevant))
    np.divide(np.add.reduceat(precision, groups[:-1]), np.minimum(n_relevant, k), out=per_query,
              where=n_relevant > 0)
    return _query_mean(per_query, groups, w)


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


def evaluate(metric: Metric, y: np.ndarray, margins: np.ndarray, weights: np.ndarray | None = None,
             groups: np.ndarray | None = None) -> float:
    """Score (n_rows, n_outputs) margins against labels; ranking metrics per query group
    (`groups`: the query boundaries, Dataset.group_boundaries)."""
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


def check_groups(config, train, val_set, train_scored: bool) -> None:
    """The datasets have the query groups that the objective and metric need, before the
    first round; GOSS would split queries, so it is refused with a ranking objective
    (subsample draws whole queries). `train_scored`: the training rows are scored each
    round (no val_set, and callbacks that read the scores), so a ranking metric needs
    the training set's groups."""
    objective = config.objective
    if objective.needs_groups and train.group_boundaries is None:
        raise ValueError(f"train: {objective!r} needs query groups: pass group= (sizes) or qid= (per-row query "
                         f"ids) to Dataset")
    for metric in config.resolved_metrics:
        if not isinstance(metric, Metric) or not metric.needs_groups:
            continue
        scored, name = (val_set, "val_set") if val_set is not None else (train, "train")
        if scored.group_boundaries is None and (val_set is not None or train_scored):
            raise ValueError(f"{name}: metric {metric.label} scores query groups: pass group= or qid= to its Dataset")
    if objective.needs_groups and config.goss_top_rate is not None:
        raise ValueError(f"goss_top_rate / goss_other_rate: GOSS picks rows by gradient and would split the query "
                         f"groups that {objective!r} ranks; use subsample (it draws whole queries)")
