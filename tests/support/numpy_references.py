"""Independent NumPy references of training: the leaf every row reaches (a plain walk of a
tree), the objectives' gradients."""

import numpy as np


def leaf_index(tree, X):
    """Leaf node reached by every row of X, by a plain NumPy walk of the tree
    (x <= threshold goes left, NaN follows default_left)."""
    X = np.asarray(X, dtype=np.float64)
    node = np.zeros(X.shape[0], dtype=np.int64)
    for _ in range(tree.n_nodes):
        f = tree.split_feature[node]
        internal = f >= 0
        if not internal.any():
            break
        rows = np.flatnonzero(internal)
        x = X[rows, f[rows]]
        n = node[rows]
        left = np.where(np.isnan(x), tree.default_left[n].astype(bool), x <= tree.threshold[n])
        node[rows] = np.where(left, tree.left_child[n], tree.right_child[n])
    assert np.all(tree.split_feature[node] < 0)
    return node


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def gradients(objective, margins, y, w=None):
    """(g, h), float32-rounded like the library's kernels, then float64."""
    w = np.ones(len(y)) if w is None else w
    if objective == "squared":
        g, h = w * (margins[:, 0] - y), w * np.ones(len(y))
    elif objective == "logistic":
        p = sigmoid(margins[:, 0])
        g, h = w * (p - y), w * np.maximum(p * (1 - p), 1e-16)
    else:
        raise ValueError(objective)
    return g.astype(np.float32).astype(np.float64), h.astype(np.float32).astype(np.float64)
