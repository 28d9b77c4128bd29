"""Log-link regression of counts and positive values (Poisson, gamma, Tweedie): margins are
log-means; the mean unit deviances that score them."""

from __future__ import annotations

import numpy as np

from boosters.objectives.base import weighted_mean


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
