"""What the objectives and metrics share."""

from __future__ import annotations

import numpy as np


def weighted_mean(values: np.ndarray, weights: np.ndarray | None) -> float:
    """The mean of `values`, weighted by `weights` (None: equal weights)."""
    return float(np.average(values, weights=weights))
