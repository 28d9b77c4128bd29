"""Random trees and forests (built node by node) and the rows they predict, for the
prediction kernels' tests."""

import numpy as np

from boosters.model.forest import Forest
from boosters.model.tree import Tree


N_FEATURES = 6


def random_tree(rng, X, max_depth, p_split=0.85):
    """Nodes in breadth-first order (children after their parent); thresholds mostly
    taken from X's own values, so rows hit x == threshold exactly."""
    feature, threshold, default_left, left, right, value = [], [], [], [], [], []

    def add():
        for lst in (feature, threshold, default_left, left, right, value):
            lst.append(0)
        feature[-1], left[-1], right[-1] = -1, -1, -1
        return len(feature) - 1

    queue = [(add(), 0)]
    while queue:
        node, depth = queue.pop(0)
        if depth < max_depth and (depth == 0 or rng.random() < p_split):
            f = int(rng.integers(0, X.shape[1]))
            col = X[:, f].astype(np.float64)
            col = col[~np.isnan(col)]
            feature[node] = f
            threshold[node] = float(rng.choice(col)) if len(col) and rng.random() < 0.8 else float(rng.normal())
            default_left[node] = int(rng.integers(0, 2))
            value[node] = float(rng.normal())  # internal nodes have a weight too: never output
            left[node] = add()
            right[node] = add()
            queue += [(left[node], depth + 1), (right[node], depth + 1)]
        else:
            value[node] = float(rng.normal())
    n = len(feature)
    return Tree(feature, threshold, np.zeros(n), default_left, left, right, value,
                np.zeros(n), np.ones(n), np.ones(n))


def make_X(rng, n_rows, dtype, nan_frac=0.1):
    X = rng.normal(size=(n_rows, N_FEATURES))
    X[:, 2] = np.round(X[:, 2])  # many ties with the thresholds
    X[rng.random(X.shape) < nan_frac] = np.nan
    X[:, 5] = np.nan  # a feature that is always missing
    return X.astype(dtype)


def make_forest(rng, X, n_trees, n_groups, max_depth=6):
    forest = Forest(n_groups, rng.normal(size=n_groups))
    for t in range(n_trees):
        forest.add(random_tree(rng, X, max_depth), int(rng.integers(0, n_groups)) if n_groups > 1 else 0)
    return forest
