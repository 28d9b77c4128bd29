"""Linear leaves at training (`GBDTConfig(linear_leaves=True)`; LightGBM's linear_tree).

After a tree's structure is found, each leaf fits a linear model of the numeric features
split on along its path, on the raw values of its rows, by one Newton step on the round's
gradients g and hessians h (LightGBM's method, Eq. 3 of Shi et al. 2019, "Gradient
boosting with piece-wise linear regression trees"): with Z the rows' feature values and a
column of ones (the intercept),

    beta = argmin 1/2 beta' (Z' H Z + l2 D) beta + (Z' g)' beta + l1 |D beta|_1

where D selects the coefficients (the intercept is not penalised). Without `linear_l1` this
is the solution of (Z' H Z + l2 D) beta = -Z' g (the least-squares solution of smallest
norm when the matrix is singular), as LightGBM (``linear_lambda`` is `linear_l2`); with it,
coordinate descent. The learning rate then scales beta. As in LightGBM:

- rows with a non-finite value (NaN, +-inf) in one of the leaf's features are left out of
  the fit, and predict the leaf's constant value (model/linear.py);
- a leaf with fewer such rows than coefficients + 1, and every leaf of the first round's
  trees, keeps its constant value (an intercept, no terms);
- with row sampling the fit uses the round's sampled rows (GOSS: their re-weighted
  gradients), the margins of every row are updated;
- coefficients that come out exactly 0 (l1) are dropped.

The rounds then grow one at a time: each round's gradients read the margins the linear
models changed. The leaves' sums are taken in one pass over the rows (_linear_leaves.pyx).
"""

from __future__ import annotations

import numpy as np

from boosters.model._linear import add_linear_outputs
from boosters.model._predict import predict_leaves
from boosters.model.tree import Tree
from boosters.training._linear_leaves import normal_equations

CD_MAX_SWEEPS = 1000  # coordinate descent (linear_l1 > 0): sweeps at most, ...
CD_TOLERANCE = 1e-12  # ... until no coefficient moves by more than this (relative to the largest)


def newton_coefficients(A: np.ndarray, b: np.ndarray, l1: float) -> np.ndarray:
    """argmin 1/2 beta' A beta + b' beta + l1 * sum |beta[:-1]| for a symmetric positive
    semi-definite A (the last coefficient, the intercept, is not penalised)."""
    if l1 == 0.0:
        return np.linalg.lstsq(A, -b, rcond=None)[0]
    beta = np.zeros(len(b))
    for _ in range(CD_MAX_SWEEPS):
        largest_move = 0.0
        for j in range(len(b)):
            if A[j, j] <= 0.0:  # the objective does not depend on beta[j]
                continue
            rest = b[j] + A[j] @ beta - A[j, j] * beta[j]
            threshold = l1 if j < len(b) - 1 else 0.0
            new = -np.sign(rest) * max(abs(rest) - threshold, 0.0) / A[j, j]
            largest_move = max(largest_move, abs(new - beta[j]))
            beta[j] = new
        if largest_move <= CD_TOLERANCE * max(1.0, np.abs(beta).max()):
            break
    return beta


def path_features(tree: Tree, numeric: np.ndarray) -> list[list[int]]:
    """Per node, the sorted distinct numeric features split on from the root to it."""
    paths: list[list[int]] = [[] for _ in range(tree.n_nodes)]
    for node in range(tree.n_nodes):  # children come after their parent
        f = int(tree.split_feature[node])
        if f >= 0:
            below = sorted(set(paths[node]) | {f}) if numeric[f] else paths[node]
            paths[tree.left_child[node]] = paths[tree.right_child[node]] = below
    return paths


class LinearLeafFitter:
    """Fits the linear leaves of each round's trees and moves the training margins from
    the trees' constant leaves to their linear ones.

    `X`: the dense training matrix; `numeric`: per feature, False for a categorical one;
    `gradients`: the (n_outputs, n_rows, 2) float32 (grad, hess) the round's trees were
    grown on; `margins`: the (n_outputs, n_rows) training margins (IN and OUT)."""

    def __init__(self, X: np.ndarray, numeric: np.ndarray, gradients: np.ndarray, margins: np.ndarray,
                 l1: float, l2: float, n_threads: int):
        self.X, self.numeric = X, numeric
        self.gradients, self.margins = gradients, margins
        self.l1, self.l2, self.n_threads = l1, l2, n_threads
        self.all_rows = np.arange(X.shape[0], dtype=np.int64)

    def fit_round(self, trees: list[Tree], round_: int, learning_rate: float, sampled: np.ndarray | None) -> None:
        """Give the round's trees (one per output, grown this round) linear leaves and
        update the margins; `sampled`: the rows the round sampled (None: every row)."""
        rows = self.all_rows if sampled is None else sampled.astype(np.int64)
        for k, tree in enumerate(trees):
            leaves = leaf_of_rows(tree, self.X, self.n_threads)
            self._fit_tree(tree, k, leaves[:, 0], round_ == 0, learning_rate, rows)
            add_linear_change(tree, self.X, leaves, self.margins[k], self.n_threads)

    def _fit_tree(self, tree: Tree, k: int, leaf_of_row: np.ndarray, first_round: bool, learning_rate: float,
                  rows: np.ndarray) -> None:
        """Set the tree's linear arrays: each leaf's Newton step (normal equations summed in
        one pass over `rows`, then solved together), or its constant value."""
        paths, fitted = fitted_leaves(tree, self.numeric, first_round)
        sums = None
        if fitted:
            slots = leaf_slots(tree, fitted, paths)
            sums = empty_sums(slots)
            normal_equations(self.X, rows, leaf_of_row, *slots, self.gradients[k], *sums)
        set_linear_leaves(tree, paths, fitted, sums, learning_rate, self.l1, self.l2)


def leaf_of_rows(tree: Tree, X: np.ndarray, n_threads: int) -> np.ndarray:
    """(n_rows, 1) int32: the leaf of every row of X (the trees were grown on the training
    rows' bins: their value thresholds send each row where its bin went)."""
    leaves = np.zeros((X.shape[0], 1), dtype=np.int32)
    offsets = np.array([0, tree.n_nodes], dtype=np.int64)
    category_args: tuple[np.ndarray, ...] = ()
    if np.any(tree.category_set >= 0):
        category_args = (tree.category_set, np.array([0, len(tree.cat_boundaries) - 1]), tree.cat_boundaries,
                         tree.cat_bitsets)
    predict_leaves(X, tree.split_feature, tree.threshold, tree.default_left, tree.left_child,
                   tree.right_child, offsets, leaves, n_threads, *category_args)
    return leaves


def fitted_leaves(tree: Tree, numeric: np.ndarray, first_round: bool) -> tuple[list, list[int]]:
    """Per node its path's numeric features, and the leaves that fit a linear model (none
    in the first round; those with a numeric feature on their path)."""
    paths = path_features(tree, numeric)
    return paths, ([] if first_round else [int(leaf) for leaf in np.flatnonzero(tree.is_leaf) if paths[leaf]])


def leaf_slots(tree: Tree, fitted: list[int], paths: list) -> tuple:
    """normal_equations' (slot_of_node, slot_features, slot_n_features) of the fitted leaves."""
    n_features = np.array([len(paths[leaf]) for leaf in fitted], dtype=np.int32)
    slot_features = np.zeros((len(fitted), int(n_features.max())), dtype=np.int32)
    for s, leaf in enumerate(fitted):
        slot_features[s, :n_features[s]] = paths[leaf]
    slot_of_node = np.full(tree.n_nodes, -1, dtype=np.int64)
    slot_of_node[fitted] = np.arange(len(fitted))
    return slot_of_node, slot_features, n_features


def empty_sums(slots: tuple) -> tuple:
    """Zeroed (A, b, n_fit) for normal_equations, which adds each row's terms to them (a
    pass over more rows can go on from where another left them)."""
    n_slots, m = slots[1].shape
    return np.zeros((n_slots, m + 1, m + 1)), np.zeros((n_slots, m + 1)), np.zeros(n_slots, dtype=np.int64)


def set_linear_leaves(tree: Tree, paths: list, fitted: list[int], sums, learning_rate: float, l1: float,
                      l2: float) -> None:
    """Set the tree's linear arrays: each fitted leaf's Newton step from its summed normal
    equations (`sums`: (A, b, n_fit) of leaf_slots' slots, the lower triangle of A; None
    without fitted leaves), solved together, or its constant value."""
    const = np.where(tree.is_leaf, tree.value, 0.0)
    n_terms = np.zeros(tree.n_nodes, dtype=np.int32)
    features, coefs = [], []
    if fitted:
        A, b, n_fit = sums
        A = A + np.tril(A, -1).transpose(0, 2, 1)  # the kernel sums the lower triangle
        for s, leaf in enumerate(fitted):
            n = len(paths[leaf])
            A[s, np.arange(n), np.arange(n)] += l2
        for s, leaf in enumerate(fitted):
            n = len(paths[leaf])
            if n_fit[s] < n + 1:  # too few rows with finite values: the constant
                continue
            beta = newton_coefficients(A[s, :n + 1, :n + 1], b[s, :n + 1], l1)
            if not np.all(np.isfinite(beta)):  # a degenerate leaf (hessians 0): the constant
                continue
            beta = learning_rate * beta
            kept = beta[:-1] != 0.0
            const[leaf] = beta[-1]
            n_terms[leaf] = int(kept.sum())
            features.append(np.asarray(paths[leaf], dtype=np.int32)[kept])
            coefs.append(beta[:-1][kept])
    tree.linear_const, tree.linear_n_terms = const, n_terms
    tree.linear_features = np.concatenate(features) if features else np.zeros(0, np.int32)
    tree.linear_coefs = np.concatenate(coefs) if coefs else np.zeros(0)


def add_linear_change(tree: Tree, X: np.ndarray, leaves: np.ndarray, margins: np.ndarray, n_threads: int) -> None:
    """margins (of X's rows, holding the tree's constant leaf values) moved to its linear
    leaves: + (linear output - constant value), row by row."""
    outputs = np.zeros((X.shape[0], 1))
    add_linear_outputs(X, leaves, np.array([0, tree.n_nodes], dtype=np.int64), np.zeros(1, np.int32),
                       tree.value, *tree.linear_leaves(), outputs, n_threads)
    margins += outputs[:, 0] - tree.value[leaves[:, 0]]


def check_linear_training(train, config) -> None:
    """ValueError when the training data cannot have linear leaves (sparse X)."""
    if config.linear_leaves and train.is_sparse:
        raise ValueError("linear_leaves needs dense training data (X is a scipy.sparse matrix or has sparse "
                         "columns): pass X.toarray() or set linear_leaves=False")

