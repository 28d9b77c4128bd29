"""Evaluation metrics on margins (n_rows, n_outputs), optionally weighted."""

from __future__ import annotations

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


def accuracy(y, margins, w):
    predicted = (margins[:, 0] > 0).astype(np.float64) if margins.shape[1] == 1 else np.argmax(margins, axis=1)
    return _mean(predicted == y, w)


def auc(y, margins, w):
    """Weighted ROC AUC; tied scores count one half."""
    score = margins[:, 0]
    w = np.ones_like(score) if w is None else w
    order = np.argsort(score, kind="stable")
    score, pos, weight = score[order], y[order] == 1, w[order]
    w_pos, w_neg = np.where(pos, weight, 0.0), np.where(pos, 0.0, weight)
    total_pos, total_neg = w_pos.sum(), w_neg.sum()
    if total_pos == 0 or total_neg == 0:
        return float("nan")
    # per group of tied scores: negatives strictly below, and half of the tied ones
    starts = np.flatnonzero(np.r_[True, score[1:] != score[:-1]])
    neg_in_group = np.add.reduceat(w_neg, starts)
    pos_in_group = np.add.reduceat(w_pos, starts)
    neg_below = np.cumsum(neg_in_group) - neg_in_group
    return float(np.sum(pos_in_group * (neg_below + 0.5 * neg_in_group)) / (total_pos * total_neg))


_METRICS = {
    "rmse": rmse,
    "mae": mae,
    "logloss": logloss,
    "auc": auc,
    "accuracy": accuracy,
    "multiclass_logloss": logloss,
    "multiclass_accuracy": accuracy,
}


def evaluate(metric: Metric, y: np.ndarray, margins: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Score (n_rows, n_outputs) margins against labels."""
    return _METRICS[metric.name](y, margins, weights)
