"""Classification (logistic, softmax, one-vs-rest, hinge): margins are log-odds or class
scores; the metrics that score them (log losses, AUC, accuracies)."""

from __future__ import annotations

import numpy as np

from boosters.objectives import transforms
from boosters.objectives.base import MetricFn, ObjectiveFn, weighted_mean
from boosters.objectives.parameters import N_CLASSES, THRESHOLD

EPS = 1e-15  # probabilities are clipped to [EPS, 1 - EPS] for a finite start


class Logistic(ObjectiveFn):
    """Cross-entropy: 0/1 labels or probability labels in [0, 1], the same gradients p - y."""

    name = kernel = "logistic"
    # cross_entropy: LightGBM's, labels in [0, 1]; binary:logitraw trains the same (predict_raw: its output)
    aliases = {name: {} for name in ("binary", "binary:logistic", "reg:logistic", "cross_entropy", "xentropy",
                                     "binary:logitraw")}
    task = "classification"
    transform = staticmethod(transforms.sigmoid)

    @classmethod
    def default_metric(cls, spec):
        return "logloss", {}

    def check_labels(self, y):
        bad = ~((y >= 0) & (y <= 1))  # NaN too
        if np.any(bad):
            raise ValueError(f"y: logistic objective needs labels in [0, 1] (classes 0/1 or probabilities), "
                             f"found {y[np.argmax(bad)]}")

    def init_scores(self, y, weights):
        p = min(max(weighted_mean(y, weights), EPS), 1 - EPS)
        return np.array([np.log(p / (1 - p))])


class Hinge(ObjectiveFn):
    """XGBoost's binary:hinge: labels 0/1, predictions are classes."""

    name = kernel = "hinge"
    aliases = {"binary:hinge": {}}
    task = "classification"
    transform = staticmethod(transforms.hinge_class)

    @classmethod
    def default_metric(cls, spec):
        return "accuracy", {}

    def check_labels(self, y):
        bad = (y != 0) & (y != 1)
        if np.any(bad):
            raise ValueError(f"y: hinge objective needs labels 0 or 1, found {y[np.argmax(bad)]}")

    def init_scores(self, y, weights):
        """XGBoost's (>= 2.0) start: the Newton step from margin 0, the weighted mean of
        2y - 1, turned into a class (1.0 where > 0, else 0.0) as its base_score is."""
        return np.array([1.0 if weighted_mean(2.0 * y - 1.0, weights) > 0 else 0.0])


class ClassShares(ObjectiveFn):
    """Softmax and one-vs-rest: integer labels 0..k-1, one output per class."""

    task = "classification"
    parameters = (N_CLASSES,)

    @classmethod
    def outputs(cls, spec):
        return spec.n_classes

    def check_labels(self, y):
        k = self.n_outputs
        bad = (y != np.floor(y)) | (y < 0) | (y >= k)
        if np.any(bad):
            raise ValueError(f"y: {self.name}({k}) needs integer labels in 0..{k - 1}, found {y[np.argmax(bad)]}")

    def label_sums(self, y, weights):
        """The weighted class counts (one per class): the start is a function of them."""
        return np.bincount(y.astype(np.int64), weights=weights, minlength=self.n_outputs).astype(np.float64)

    def init_scores_from_sums(self, sums):
        """init_scores of the classes 0..k-1 weighted by their counts."""
        return self.init_scores(np.arange(len(sums) - 1, dtype=np.float64), sums[:-1])


class Softmax(ClassShares):
    name = kernel = "softmax"
    aliases = {"multiclass": {}, "multi:softprob": {}, "multi:softmax": {}}  # multi:softmax: see docs/migration.md
    transform = staticmethod(transforms.softmax)

    @classmethod
    def default_metric(cls, spec):
        return "multiclass_logloss", {}

    def init_scores(self, y, weights):
        w = np.ones_like(y) if weights is None else weights
        prior = np.bincount(y.astype(np.int64), weights=w, minlength=self.n_outputs) / w.sum()
        return np.log(np.maximum(prior, EPS))


class OneVsRest(ClassShares):
    """LightGBM's multiclassova: output k is a logistic model of [y == k]."""

    name = kernel = "one_vs_rest"
    aliases = {"multiclassova": {}, "multiclass_ova": {}, "ova": {}, "ovr": {}}
    transform = staticmethod(transforms.sigmoid_per_class)

    @staticmethod
    def class_probabilities(p):
        """The independent sigmoids normalised to sum to 1."""
        return p / p.sum(axis=1, keepdims=True)

    @classmethod
    def default_metric(cls, spec):
        return "one_vs_rest_logloss", {}

    def init_scores(self, y, weights):
        # each output's log-odds of its class share, clipped as Logistic's
        w = np.ones_like(y) if weights is None else weights
        share = np.bincount(y.astype(np.int64), weights=w, minlength=self.n_outputs) / w.sum()
        share = np.clip(share, EPS, 1 - EPS)
        return np.log(share / (1 - share))

    def kernel_parameters(self):
        return np.arange(self.n_outputs, dtype=np.float64)  # output k's class: its label is [y == k]


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


def error(y, margins, w):
    """1 - accuracy: XGBoost's error (merror for several classes), LightGBM's binary_error."""
    return 1.0 - accuracy(y, margins, w)


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


class LogLoss(MetricFn):
    aliases = {"binary_logloss": {}, "binary": {}, "xentropy": {}, "cross_entropy": {}}
    name, objectives, row_mean = "logloss", ("logistic", "softmax"), (float, float)
    function = staticmethod(logloss)


class MulticlassLogLoss(MetricFn):
    aliases = {"multi_logloss": {}, "mlogloss": {}, "multiclass": {}, "softmax": {}}
    name, objectives, row_mean = "multiclass_logloss", ("softmax",), (float, float)
    function = staticmethod(logloss)


class OneVsRestLogLoss(MetricFn):
    name, objectives, row_mean = "one_vs_rest_logloss", ("one_vs_rest",), (float, float)
    function = staticmethod(one_vs_rest_logloss)


class Auc(MetricFn):
    name, objectives, higher_is_better = "auc", ("logistic", "hinge"), True  # hinge margins: scores as logistic's
    nan_hint = "AUC needs both classes in the validation labels"
    function = staticmethod(auc)


class Accuracy(MetricFn):  # one-vs-rest's argmax is its class
    name, objectives, higher_is_better = "accuracy", ("logistic", "softmax", "hinge", "one_vs_rest"), True
    row_mean = (float, float)
    function = staticmethod(accuracy)


class MulticlassAccuracy(MetricFn):
    name, objectives, higher_is_better = "multiclass_accuracy", ("softmax", "one_vs_rest"), True
    row_mean = (float, float)
    function = staticmethod(accuracy)


class Error(MetricFn):
    aliases = {"binary_error": {}}
    name, objectives, row_mean = "error", ("logistic", "softmax", "hinge", "one_vs_rest"), (float, float)
    function = staticmethod(error)


class MulticlassError(MetricFn):
    aliases = {"merror": {}, "multi_error": {}}
    name, objectives, row_mean = "multiclass_error", ("softmax", "one_vs_rest"), (float, float)
    function = staticmethod(error)


class MarginAccuracy(MetricFn):
    name, objectives, higher_is_better, row_mean = "margin_accuracy", ("logistic", "hinge"), True, (float, float)
    parameters = (THRESHOLD,)
    function = staticmethod(margin_accuracy)

    @classmethod
    def score(cls, metric, y, margins, w, groups):
        return margin_accuracy(y, margins, w, metric.threshold)
