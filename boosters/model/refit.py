"""Refit: a forest's leaf values renewed on new data, the trees' structure kept (LightGBM's
``Booster.refit``). Tree by tree in boosting order, from the new rows' margins before it:
each leaf's Newton value from the rows that reach it (the training's leaf weight, L1
soft-thresholded, times the learning rate), blended with the old one,
``decay_rate * old + (1 - decay_rate) * new``; the rows' margins then take the tree's new
values, as the next tree's gradients need."""

from __future__ import annotations

import copy

import numpy as np

from boosters.model.forest import Forest
from boosters.objectives.registry import make_objective, objective_fn


def refused(objective, config, forest: Forest) -> str | None:
    """Why a forest cannot be refit, None when it can."""
    if config is None:
        return "the model has no training config (its l1, l2 and learning rate are unknown)"
    if objective.name == "custom":
        return "a custom objective's gradients need its training Dataset"
    if objective_fn(objective).quantile_levels(objective) is not None:
        return f"{objective.name}'s leaves are quantiles of their rows' residuals, not Newton steps"
    if objective.needs_groups:
        return "a ranking objective's gradients need query groups"
    if config.booster == "dart":
        return "DART rescaled its trees after they grew: their learning rates are not the config's"
    if any(tree.linear_const is not None for tree in forest.trees):
        return "linear leaves are fitted, not Newton steps"
    return None


def soft_threshold(g: np.ndarray, l1: float) -> np.ndarray:
    return np.sign(g) * np.maximum(np.abs(g) - l1, 0.0)


def refit_forest(forest: Forest, objective, config, X, y: np.ndarray, weights, decay_rate: float,
                 n_threads: int) -> Forest:
    """A new forest: `forest`'s trees with leaf values refit on (X, y, weights); X as
    Forest.predict_leaves takes it, y checked by the objective."""
    fn = make_objective(objective, None)
    fn.check_labels(y)
    n_out, n_rows = forest.n_groups, len(y)
    margins = np.repeat(np.asarray(forest.base_scores, dtype=np.float64)[:, None], n_rows, axis=1)
    gradients = np.empty((n_out, n_rows, 2), dtype=np.float32)
    kernel = fn.gradient_kernel(margins, y, weights, gradients, n_threads)
    leaves = forest.predict_leaves(X, n_threads)
    refit = Forest(n_out, forest.base_scores)
    for t, (tree, k) in enumerate(zip(forest.trees, forest.tree_group)):
        if t % n_out == 0:  # a round's gradients: from the margins before its trees
            kernel.run()
        rows_leaf = leaves[:, t]
        g = np.bincount(rows_leaf, weights=gradients[k, :, 0].astype(np.float64), minlength=tree.n_nodes)
        h = np.bincount(rows_leaf, weights=gradients[k, :, 1].astype(np.float64), minlength=tree.n_nodes)
        is_leaf = np.asarray(tree.left_child) < 0
        denominator = h + config.l2
        step = np.divide(-soft_threshold(g, config.l1), denominator, out=np.zeros_like(g), where=denominator > 0)
        value = np.array(tree.value, dtype=np.float64)
        if decay_rate < 1.0:  # 1: the leaves as they are (a blend would turn -0.0 into 0.0)
            value[is_leaf] = decay_rate * value[is_leaf] + (1.0 - decay_rate) * config.learning_rate * step[is_leaf]
        new = copy.copy(tree)
        new.value = value
        refit.add(new, k)
        margins[k] += value[rows_leaf]
    refit.flat(grown=True)
    return refit
