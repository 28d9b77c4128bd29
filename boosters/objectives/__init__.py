"""Objectives and metrics: what each one is and does, defined once.

Below config/, training/ and model/ (it imports only data/ and _lib/), so that the trainer
reads an objective's gradients and start, and a loaded model its output transform, from
the same definition. The public values Objective, CustomObjective and Metric ask the
definition of their name (boosters.config re-exports them)."""

from boosters.objectives.metric import Metric
from boosters.objectives.objective import CustomObjective, Objective
from boosters.objectives.registry import (METRICS, OBJECTIVES, evaluate, make_objective, metric_fn, objective_fn,
                                          resolve_targets)

__all__ = ["METRICS", "OBJECTIVES", "CustomObjective", "Metric", "Objective", "evaluate", "make_objective",
           "metric_fn", "objective_fn", "resolve_targets"]
