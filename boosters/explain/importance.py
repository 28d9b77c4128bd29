"""Feature importance: how often, and with how much gain, the trees split on each feature."""

from __future__ import annotations

import numpy as np

from boosters.model.tree import Forest

IMPORTANCE_TYPES = ("split", "gain")


def feature_importance(forest: Forest, n_features: int, importance_type: str = "split") -> np.ndarray:
    """Per feature (float64, length n_features): the number of splits on it ("split") or
    their total gain ("gain")."""
    if importance_type not in IMPORTANCE_TYPES:
        raise ValueError(f"importance_type must be 'split' or 'gain', got {importance_type!r}")
    nodes = forest.flat().arrays
    internal = nodes["split_feature"] >= 0
    weights = nodes["gain"][internal] if importance_type == "gain" else None
    counts = np.bincount(nodes["split_feature"][internal], weights=weights, minlength=n_features)
    return counts.astype(np.float64)
