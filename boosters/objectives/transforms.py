"""Output transforms: margins -> predictions; each objective's definition names its own
(ObjectiveFn.transform), which the model applies."""

from __future__ import annotations

import numpy as np


def identity(margins: np.ndarray) -> np.ndarray:
    """Squared error: the margins are the predictions, (n_rows,) for one output,
    (n_rows, n_targets) for multi-target regression."""
    return margins[:, 0] if margins.shape[1] == 1 else margins


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp overflows to inf for margins < -709: 1/(1+inf) = 0
        return 1.0 / (1.0 + np.exp(-x))


def sigmoid(margins: np.ndarray) -> np.ndarray:
    """Logistic: P(y=1)."""
    return _sigmoid(margins[:, 0])


def sigmoid_per_class(margins: np.ndarray) -> np.ndarray:
    """One-vs-rest: each class's own P(y=k), (n_rows, n_classes); rows not normalised (as LightGBM)."""
    return _sigmoid(margins)


def hinge_class(margins: np.ndarray) -> np.ndarray:
    """Hinge: the class, 1.0 where the margin is > 0, else 0.0 (as XGBoost's binary:hinge)."""
    return (margins[:, 0] > 0).astype(np.float64)


def exponential(margins: np.ndarray) -> np.ndarray:
    """Poisson, gamma, Tweedie: the mean exp(margin) (margins are log-means)."""
    with np.errstate(over="ignore"):  # margins > 709 give inf, as the mean they stand for
        return np.exp(margins[:, 0])


def sorted_quantiles(margins: np.ndarray) -> np.ndarray:
    """Pinball: one level's quantile, (n_rows,); several levels' sorted per row, (n_rows,
    n_levels), so that they do not cross (monotone rearrangement; the levels are increasing)."""
    return margins[:, 0] if margins.shape[1] == 1 else np.sort(margins, axis=1)


def softmax(margins: np.ndarray) -> np.ndarray:
    """Softmax: class probabilities, (n_rows, n_classes)."""
    shifted = margins - margins.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def raw(margins: np.ndarray) -> np.ndarray:
    """A custom objective: the margins themselves ((n_rows,) for one output), as LightGBM."""
    return margins[:, 0] if margins.shape[1] == 1 else margins
