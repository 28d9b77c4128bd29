"""Regression on the label's scale, whose margins are the predictions (squared error,
absolute error, Huber, pinball); the metrics of such margins: rmse, mae, mape, huber, pinball
(on labels (n_rows,), margins (n_rows, n_outputs), optional weights)."""

from __future__ import annotations

import numpy as np

from boosters.objectives.base import weighted_mean


def rmse(y, margins, w):
    return float(np.sqrt(weighted_mean((margins[:, 0] - y) ** 2, w)))


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
