"""Multi-target regression: the objective's number of targets, from the labels' shape."""

from __future__ import annotations

import numpy as np

from boosters.objectives.objective import _MULTI_TARGET, _OBJECTIVE_NAMES, Objective
from boosters.objectives.base import n_targets


def resolve_targets(objective: Objective, train_y: np.ndarray, val_y: np.ndarray | None) -> Objective:
    """`objective` with as many targets as `train_y` has columns (a 2-D y of k columns
    trains k tree groups). ValueError when an objective of one label per row gets a 2-D
    y, when `objective.n_targets` was given and y disagrees, or when the validation
    labels have another number of targets."""
    k = n_targets(train_y)
    if k > 1 and objective.name not in _MULTI_TARGET:
        names = ", ".join(name for name in _MULTI_TARGET if name in _OBJECTIVE_NAMES)
        raise ValueError(f"y: shape {train_y.shape} holds {k} targets per row, which only multi-target "
                         f"regression takes ({names}); {objective!r} takes one label per row")
    if objective.n_targets is not None and objective.n_targets != k:
        raise ValueError(f"y: {objective!r} needs y of shape (n_rows, {objective.n_targets}), got {train_y.shape}")
    if val_y is not None and n_targets(val_y) != k:
        raise ValueError(f"val_set: y has {n_targets(val_y)} target(s) per row (shape {val_y.shape}) but the "
                         f"training y has {k}")
    return objective if k == 1 or objective.n_targets == k else objective._with_targets(k)
