"""Classification (logistic, softmax, one-vs-rest, hinge): margins are log-odds or class
scores; the metrics that score them (log losses, AUC, accuracies)."""

from __future__ import annotations

import numpy as np

from boosters.objectives.base import weighted_mean


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def logloss(y, margins, w):
    if margins.shape[1] == 1:  # binary: log(1 + e^m) - y m, stable for any margin
        m = margins[:, 0]
        return weighted_mean(_softplus(m) - y * m, w)
    top = margins.max(axis=1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(margins - top).sum(axis=1))
    return weighted_mean(log_norm - margins[np.arange(len(y)), y.astype(np.int64)], w)


def margin_accuracy(y, margins, w, threshold):
    """Share of rows whose class, [margin > threshold], is the label; a probability label y
    counts y right for class 1 and 1 - y for class 0 (XGBoost's error@t, complemented)."""
    return weighted_mean(np.where(margins[:, 0] > threshold, y, 1.0 - y), w)


def accuracy(y, margins, w):
    if margins.shape[1] == 1:
        return margin_accuracy(y, margins, w, 0.0)
    return weighted_mean(np.argmax(margins, axis=1) == y, w)  # softmax, one-vs-rest: the most likely class


def one_vs_rest_logloss(y, margins, w):
    """Per row, the sum over the classes k of the binary log loss of output k against [y == k]."""
    is_class = y[:, None] == np.arange(margins.shape[1])
    return weighted_mean((_softplus(margins) - is_class * margins).sum(axis=1), w)


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
