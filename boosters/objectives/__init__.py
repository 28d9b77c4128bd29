"""Objectives and metrics: what each one is and does, defined once.

Below config/, training/ and model/ (it imports only data/ and _lib/), so that the trainer
reads an objective's gradients and start, and a loaded model its output transform, from
the same definition."""

from boosters.objectives.registry import OBJECTIVES, evaluate, make_objective, objective_fn

__all__ = ["OBJECTIVES", "evaluate", "make_objective", "objective_fn"]
