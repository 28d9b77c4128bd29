"""Checks of the constraints on trained models: monotone margins along a feature, every
root-to-leaf path's features within one interaction group."""

import numpy as np


def grid_margins(model, X, feature, n_rows=40, n_grid=60, seed=1):
    """Raw margins (rows, grid, outputs) with `feature` swept over a grid (beyond the
    data's range on both sides) and the other features fixed at random training rows."""
    rng = np.random.default_rng(seed)
    base = X[rng.choice(len(X), n_rows, replace=False)]
    grid = np.linspace(np.nanmin(X[:, feature]) - 1, np.nanmax(X[:, feature]) + 1, n_grid)
    Z = np.repeat(base, n_grid, axis=0)
    Z[:, feature] = np.tile(grid, n_rows)
    return model.predict_raw(Z).reshape(n_rows, n_grid, -1)


def assert_monotone(model, X, feature, direction):
    """Exactly monotone (no tolerance): every tree is monotone, and float rounding of
    a sum is monotone in each term, so the summed margins are too."""
    steps = np.diff(grid_margins(model, X, feature), axis=1) * direction
    assert steps.min() >= 0.0, f"feature {feature}: a step of {steps.min()} against direction {direction}"


def path_feature_sets(tree):
    """The set of split features on every root-to-leaf path."""
    out, stack = [], [(0, frozenset())]
    while stack:
        node, used = stack.pop()
        if tree.split_feature[node] < 0:
            out.append(used)
            continue
        used = used | {int(tree.split_feature[node])}
        stack += [(tree.left_child[node], used), (tree.right_child[node], used)]
    return out


def assert_paths_within_groups(model, groups):
    """Every path's features lie in one group, or are one feature in no group."""
    listed = set().union(*groups)
    paths = [p for t in model.trees for p in path_feature_sets(t)]
    for path in paths:
        alone = len(path) == 1 and not path <= listed
        assert alone or any(path <= g for g in groups), f"path {sorted(path)} mixes groups {groups}"
    return paths
