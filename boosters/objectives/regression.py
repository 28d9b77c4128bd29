"""Regression on the label's scale, whose margins are the predictions: squared error, absolute
error, Huber, pinball (quantiles); and the metrics of such margins: rmse, mae, mape, huber,
pinball (on labels (n_rows,), margins (n_rows, n_outputs), optional weights)."""

from __future__ import annotations

import math

import numpy as np

import boosters.objectives._quantile as _quantile  # (by its full name: mypy then knows it, as Any)
from boosters.objectives import transforms
from boosters.objectives.base import MetricFn, ObjectiveFn, per_target, weighted_mean
from boosters.objectives.parameters import ALPHA, DELTA, N_TARGETS

VALUE_OBJECTIVES = ("squared", "absolute", "huber", "pinball")  # margins are the predictions: the metrics below


class Squared(ObjectiveFn):
    """(f - y)^2 / 2; starts from the weighted mean of each target."""

    name = kernel = "squared"
    aliases = {name: {} for name in ("regression", "regression_l2", "l2", "mean_squared_error", "mse", "l2_root",
                                     "root_mean_squared_error", "rmse", "reg:squarederror", "reg:linear")}
    parameters = (N_TARGETS,)

    @classmethod
    def default_metric(cls, spec):
        return "rmse", {}

    def gradient_bound(self, y):
        # |margin - y| with margins between the labels' extremes
        return 2.0 * float(np.abs(y).max()) if y.size else 0.0

    def init_scores(self, y, weights):
        return per_target(weighted_mean, y, weights)  # a 2-D y: each column's mean


class QuantileRegression(ObjectiveFn):
    """Absolute error (the median) and pinball (alpha-quantiles, one output per level): the
    gradients only point the way; after each tree the leaves are renewed to the weighted
    quantile of their rows' residuals (training/growth/_leaf_renewal). Each output starts from its level's
    quantile of the labels (LightGBM's BoostFromScore)."""

    def init_scores(self, y, weights):
        if y.ndim == 2:  # absolute with several targets: each column's median
            return per_target(lambda labels, w: _quantile.quantile(labels, w, 0.5), y, weights)
        return np.array([_quantile.quantile(y, weights, a) for a in self.levels])

    def kernel_parameters(self):
        return self.levels  # absolute: 0.5, unused by its gradient

    def gradient_kernel(self, margins, y, weights, out, n_threads):
        kernel = super().gradient_kernel(margins, y, weights, out, n_threads)
        kernel.leaf_quantiles = self.levels
        return kernel


class Absolute(QuantileRegression):
    """|f - y|: the median of each target."""

    name = kernel = "absolute"
    aliases = {"regression_l1": {}, "l1": {}, "mean_absolute_error": {}, "mae": {}, "reg:absoluteerror": {}}
    parameters = (N_TARGETS,)

    @classmethod
    def default_metric(cls, spec):
        return "mae", {}

    @classmethod
    def quantile_levels(cls, spec):
        return np.full(spec.n_outputs, 0.5)  # one output per target


class Pinball(QuantileRegression):
    """The pinball loss of each level alpha: its quantile, one output per level."""

    name = kernel = "pinball"
    aliases = {"quantile": {}, "reg:quantileerror": {}}
    parameters = (ALPHA,)  # one level, or several (one output each)
    transform = staticmethod(transforms.sorted_quantiles)  # one level: the margin itself

    @classmethod
    def outputs(cls, spec):
        return len(spec.alpha) if isinstance(spec.alpha, tuple) else 1  # one per quantile level

    @classmethod
    def default_metric(cls, spec):
        return "pinball", {"alpha": spec.alpha}

    @classmethod
    def only_default_metric(cls, spec):
        return isinstance(spec.alpha, tuple)  # several levels: only the pinball metric of the same levels

    @classmethod
    def quantile_levels(cls, spec):
        return np.atleast_1d(np.asarray(spec.alpha, dtype=np.float64))


class Huber(ObjectiveFn):
    """Huber loss (LightGBM's huber): starts from the (weighted) mean label, as LightGBM."""

    name = kernel = "huber"
    parameters = (DELTA, N_TARGETS)

    @classmethod
    def default_metric(cls, spec):
        return "huber", {"delta": spec.delta}

    def gradient_bound(self, y):
        return self.spec.delta

    def init_scores(self, y, weights):
        return per_target(weighted_mean, y, weights)  # a 2-D y: each column's mean

    def kernel_parameters(self):
        return self.spec.delta


def rmse(y, margins, w):
    return float(np.sqrt(weighted_mean((margins[:, 0] - y) ** 2, w)))


def mse(y, margins, w):
    return weighted_mean((margins[:, 0] - y) ** 2, w)


def mae(y, margins, w):
    return weighted_mean(np.abs(margins[:, 0] - y), w)


def mape(y, margins, w):
    """LightGBM's: |y - f| / max(1, |y|)."""
    return weighted_mean(np.abs(y - margins[:, 0]) / np.maximum(1.0, np.abs(y)), w)


def huber(y, margins, w, delta):
    r = np.abs(margins[:, 0] - y)
    return weighted_mean(np.where(r <= delta, 0.5 * r * r, delta * (r - 0.5 * delta)), w)


def pinball(y, margins, w, alpha):
    """Mean pinball loss; with several levels (a multi-quantile model), the mean over the
    levels, on the sorted quantiles the model predicts."""
    levels = np.atleast_1d(alpha)
    predictions = np.sort(margins, axis=1) if margins.shape[1] > 1 else margins
    r = y[:, None] - predictions  # (n_rows, n_levels)
    loss = np.where(r >= 0, levels * r, (levels - 1.0) * r)
    return float(np.mean([weighted_mean(loss[:, k], w) for k in range(len(levels))]))


class Rmse(MetricFn):
    aliases = {"l2_root": {}, "root_mean_squared_error": {}}
    name, objectives, per_target, row_mean = "rmse", VALUE_OBJECTIVES, True, (np.square, math.sqrt)
    function = staticmethod(rmse)


class Mse(MetricFn):  # LightGBM's "l2" metric
    aliases = {"l2": {}, "mean_squared_error": {}, "regression_l2": {}, "regression": {}}
    name, objectives, per_target, row_mean = "mse", VALUE_OBJECTIVES, True, (float, float)
    function = staticmethod(mse)


class Mae(MetricFn):
    aliases = {"l1": {}, "mean_absolute_error": {}, "regression_l1": {}}
    name, objectives, per_target, row_mean = "mae", VALUE_OBJECTIVES, True, (float, float)
    function = staticmethod(mae)


class Mape(MetricFn):
    aliases = {"mean_absolute_percentage_error": {}}
    name, objectives, per_target, row_mean = "mape", VALUE_OBJECTIVES, True, (float, float)
    function = staticmethod(mape)


class HuberLoss(MetricFn):
    name, objectives, per_target, row_mean = "huber", VALUE_OBJECTIVES, True, (float, float)
    parameters = (DELTA,)
    function = staticmethod(huber)

    @classmethod
    def score(cls, metric, y, margins, w, groups):
        return huber(y, margins, w, metric.delta)


class PinballLoss(MetricFn):
    aliases = {"quantile": {}}
    name, objectives, row_mean = "pinball", VALUE_OBJECTIVES, (float, float)
    parameters = (ALPHA,)
    function = staticmethod(pinball)

    @classmethod
    def supports(cls, metric, objective):
        # several levels score only a model of those levels (Pinball.only_default_metric)
        return not isinstance(metric.alpha, tuple) and super().supports(metric, objective)

    @classmethod
    def score(cls, metric, y, margins, w, groups):  # a multi-quantile model's outputs are levels of the one label
        return pinball(y, margins, w, metric.alpha)
