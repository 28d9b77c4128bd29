"""Linear leaves at prediction (LightGBM's linear trees, RFC-0008 LinearLeafConfig).

A leaf of a linear tree outputs its intercept plus, for each of its terms, a coefficient
times the row's raw value of the term's feature (learning rate applied to both). A row
whose value of one of its leaf's features is not finite (NaN, +-inf) gets the leaf's
constant value (`Tree.value`) instead, as LightGBM does for NaN. Leaves without terms
output their intercept, which is then their constant value.

The trees are walked by the prediction kernel (`predict_leaves`), then `_linear.pyx` adds
the leaves' linear models.
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
