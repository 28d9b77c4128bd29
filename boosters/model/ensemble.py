"""Ensemble: what fitting produces and a model file holds."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from boosters.config import GBDTConfig, Objective
from boosters.model.forest import Forest
from boosters.objectives.registry import objective_fn


@dataclass(eq=False)
class Ensemble:
    """A forest and what gives it meaning: the objective (its output transform), the
    features it was fitted on (their names, and the categories of the categorical ones:
    data is coded with them before it reaches the forest), and the record of the fit
    (config, evaluation)."""

    forest: Forest
    objective: Objective
    n_features: int
    feature_names: list[str] | None = None
    config: GBDTConfig | None = None
    best_iteration: int | None = None   # 0-based boosting round with the best validation score
    best_score: float | None = None
    eval_history: list[float] = field(default_factory=list)  # validation score per round
    # categorical feature -> its raw values in code order, or None (trained on integer codes)
    categories: dict[int, np.ndarray | None] = field(default_factory=dict)
    # cat_encoding="ordered_ctr": categorical feature -> its target statistic per code, then
    # the prior (data/target_statistics.py); the trees split on these numbers
    target_statistics: dict[int, np.ndarray] = field(default_factory=dict)

    def __post_init__(self):
        if self.forest.n_groups != self.objective.n_outputs:
            raise ValueError(f"the forest has {self.forest.n_groups} output groups but {self.objective!r} "
                             f"has {self.objective.n_outputs}")

    @property
    def categorical_features(self) -> list[int]:
        """The sorted indices of the categorical features."""
        return sorted(self.categories)

    def predict_margins(self, X: np.ndarray, n_threads: int) -> np.ndarray:
        """(n_rows, n_outputs) margins of a checked float matrix with `n_features` columns."""
        return self.forest.predict_margins(X, n_threads)

    def transform(self, margins: np.ndarray) -> np.ndarray:
        """The objective's predictions from (n_rows, n_outputs) margins: its output transform."""
        return objective_fn(self.objective).transform(margins)

    def predict(self, X: np.ndarray, n_threads: int) -> np.ndarray:
        """The objective's predictions: values, P(y=1), or class probabilities."""
        return self.transform(self.predict_margins(X, n_threads))
