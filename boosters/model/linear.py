"""Linear leaves at prediction (LightGBM's linear trees, RFC-0008 LinearLeafConfig).

A leaf of a linear tree outputs its intercept plus, for each of its terms, a coefficient
times the row's raw value of the term's feature (learning rate applied to both). A row
whose value of one of its leaf's features is not finite (NaN, +-inf) gets the leaf's
constant value (`Tree.value`) instead, as LightGBM does for NaN. Leaves without terms
output their intercept, which is then their constant value.

The trees are walked by the prediction kernel (`predict_leaves`); the linear part is a
vectorised pass over the (row, tree) leaves, one term position at a time.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class LinearLeaves(NamedTuple):
    """Every node's linear model, the nodes of a forest concatenated (or one tree's)."""

    const: np.ndarray         # float64 per node: a leaf's intercept; 0 at internal nodes
    term_offsets: np.ndarray  # int64, n_nodes + 1: node i's terms are term_offsets[i]:term_offsets[i + 1]
    features: np.ndarray      # int32 per term: the feature it multiplies
    coefs: np.ndarray         # float64 per term

    @property
    def n_features(self) -> int:
        """Features the terms read (largest feature + 1; 0 without terms)."""
        return int(self.features.max()) + 1 if self.features.size else 0


def leaf_outputs(linear: LinearLeaves, value: np.ndarray, nodes: np.ndarray, X: np.ndarray) -> np.ndarray:
    """float64 of `nodes`' shape (n_rows, n_trees): the output of leaf nodes[r, t] (an index
    into `linear`'s and `value`'s nodes) for row r of the dense matrix X."""
    out = linear.const[nodes]
    start = linear.term_offsets[nodes]
    count = linear.term_offsets[nodes + 1] - start
    missing = np.zeros(nodes.shape, dtype=bool)
    rows = np.broadcast_to(np.arange(nodes.shape[0])[:, None], nodes.shape)
    for p in range(int(count.max()) if count.size else 0):
        has = count > p   # (row, tree) pairs whose leaf has a p-th term
        term = start[has] + p
        x = X[rows[has], linear.features[term]].astype(np.float64)
        finite = np.isfinite(x)
        out[has] += np.where(finite, linear.coefs[term] * np.where(finite, x, 0.0), 0.0)
        missing[has] |= ~finite
    if missing.any():
        out[missing] = value[nodes[missing]]
    return out
