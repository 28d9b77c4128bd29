"""Continued training (LightGBM's `init_model`, XGBoost's `xgb_model`): the new trees grow
from an existing model's margins, its raw predictions, given to the training as each
Dataset's init_score; the model returned is the old trees followed by the new ones."""

from __future__ import annotations

import copy

import numpy as np

from boosters.model.ensemble import Ensemble


def starting_from(model, dataset, name: str):
    """`dataset` whose margins start from `model`'s raw predictions (its init_score); the
    rows, labels and cached bins are `dataset`'s own (a shallow copy)."""
    if dataset.init_score is not None:
        raise ValueError(f"{name}: init_model starts the margins from its predictions; the Dataset has an "
                         f"init_score too (drop one of them)")
    started = copy.copy(dataset)
    raw = model.predict_raw(dataset)
    started.init_score = np.ascontiguousarray(raw)
    return started


def continued(old: Ensemble, new: Ensemble) -> Ensemble:
    """The old ensemble's trees followed by the new one's (grown from its margins, base 0):
    the old base scores, the new training's record (config, scores, its best round
    counted from the old model's first)."""
    if old.objective != new.objective:
        raise ValueError(f"init_model: its objective {old.objective!r} is not the training's {new.objective!r}")
    if old.feature_names != new.feature_names or old.n_features != new.n_features:
        raise ValueError("init_model: it was trained on other features than the training data's")
    ensemble = copy.copy(new)
    forest = copy.deepcopy(old.forest)
    for tree, group in zip(new.forest.trees, new.forest.tree_group):
        forest.add(tree, group)
    forest.flat(grown=True)
    ensemble.forest = forest
    if ensemble.best_iteration is not None:
        ensemble.best_iteration += old.forest.n_trees // forest.n_groups
    return ensemble
