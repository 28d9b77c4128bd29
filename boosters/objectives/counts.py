"""Log-link regression of counts and positive values (Poisson, gamma, Tweedie): margins are
log-means, predictions exp(margin); the mean unit deviances that score them."""

from __future__ import annotations

import numpy as np

from boosters.objectives import transforms
from boosters.objectives.base import MetricFn, ObjectiveFn, weighted_mean
from boosters.objectives.parameters import VARIANCE_POWER

LOG_LINK = ("poisson", "gamma", "tweedie")  # any of them: all predict a positive mean

POISSON_MAX_DELTA_STEP = 0.7  # LightGBM's poisson_max_delta_step default


class LogLink(ObjectiveFn):
    """Poisson, gamma and Tweedie regression: labels >= 0; the start is log of the (weighted)
    mean label (LightGBM's boost_from_average)."""

    transform = staticmethod(transforms.exponential)

    @classmethod
    def default_metric(cls, spec):
        return f"{cls.name}_deviance", {}

    def check_labels(self, y):
        if np.any(y < 0):
            raise ValueError(f"y: {self.name} objective needs labels >= 0, found {float(y.min())}")

    def gradient_bound(self, y):
        # mean and label near each other: |gradient| about max(y)
        return float(y.max()) if y.size else 0.0

    def init_scores(self, y, weights):
        # training labels only: a validation set may well be all 0
        mean = weighted_mean(y, weights)
        if mean <= 0:
            raise ValueError(f"y: {self.name} objective needs some training label > 0 (with weight > 0): "
                             f"the start, log of the mean label, would be -inf")
        return np.array([np.log(mean)])


class Poisson(LogLink):
    name = kernel = "poisson"
    aliases = {"count:poisson": {}}

    def kernel_parameters(self):
        return POISSON_MAX_DELTA_STEP


class Gamma(LogLink):
    name = kernel = "gamma"
    aliases = {"reg:gamma": {}}

    def check_labels(self, y):
        if np.any(y <= 0):
            raise ValueError(f"y: gamma objective needs labels > 0, found {float(y.min())}")

    def gradient_bound(self, y):
        return float(y.max() / y.min()) if y.size else 0.0  # about max(y) / min(y)


class Tweedie(LogLink):
    name = kernel = "tweedie"
    aliases = {"reg:tweedie": {}}
    parameters = (VARIANCE_POWER,)

    @classmethod
    def default_metric(cls, spec):
        return "tweedie_deviance", {"variance_power": spec.variance_power}

    def kernel_parameters(self):
        return self.spec.variance_power


def poisson_deviance(y, margins, w):
    mu = np.exp(margins[:, 0])
    y_log_ratio = np.where(y > 0, y * (np.log(np.where(y > 0, y, 1.0)) - margins[:, 0]), 0.0)  # 0 log 0 = 0
    return weighted_mean(2.0 * (y_log_ratio - (y - mu)), w)


def gamma_deviance(y, margins, w):
    log_ratio = np.log(y) - margins[:, 0]  # log(y / mu)
    return weighted_mean(2.0 * (np.exp(log_ratio) - log_ratio - 1.0), w)


def tweedie_deviance(y, margins, w, p):
    f = margins[:, 0]
    unit = (np.power(y, 2.0 - p) / ((1.0 - p) * (2.0 - p)) - y * np.exp((1.0 - p) * f) / (1.0 - p)
            + np.exp((2.0 - p) * f) / (2.0 - p))
    return weighted_mean(2.0 * unit, w)


class PoissonDeviance(MetricFn):
    name, objectives, row_mean = "poisson_deviance", LOG_LINK, (float, float)
    function = staticmethod(poisson_deviance)


class GammaDeviance(MetricFn):
    name, objectives, row_mean = "gamma_deviance", LOG_LINK, (float, float)
    function = staticmethod(gamma_deviance)


class TweedieDeviance(MetricFn):
    name, objectives, row_mean = "tweedie_deviance", LOG_LINK, (float, float)
    parameters = (VARIANCE_POWER,)
    function = staticmethod(tweedie_deviance)

    @classmethod
    def score(cls, metric, y, margins, w, groups):
        return tweedie_deviance(y, margins, w, metric.variance_power)
