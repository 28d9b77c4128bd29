"""Trees of boosters (or of naive_grower.py) against LightGBM's and XGBoost's model dumps.

The libraries number nodes differently, so the comparison walks both trees from the
root together, carrying the training rows that reach each node. At each split: the same
feature, and the same rows sent left (LightGBM's thresholds lie between values and
XGBoost's are the next value, so rows, not raw thresholds, are compared; boosters keeps
the lowest of equivalent bins, LightGBM the highest). The row counts and hessian sums
(cover) of every node, the gains and the leaf values are compared as numbers.

One exact tie is allowed, and counted: a split whose two sides are the other library's
sides swapped (e.g. a node where the feature has one value besides the missing ones:
"values left, missing right" and "missing left, values right" have bit-identical gains,
since the gain is symmetric in its two children). Each library breaks it its own way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np


@dataclass
class Node:
    """A node of a LightGBM or XGBoost tree."""
    value: float = 0.0             # leaves: the output
    cover: float = 0.0             # hessian sum
    cover_rtol: float = 1e-6       # what the dump keeps of it
    count: int | None = None       # training rows (LightGBM only)
    feature: int = -1              # -1 at leaves
    threshold: float = 0.0
    strict: bool = False           # x < threshold goes left (XGBoost), else x <= threshold
    default_left: bool = False
    gain: float = 0.0              # the raw gain: 2 (boosters' gain + min_gain_to_split)
    left: Node | None = None
    right: Node | None = None

    def goes_left(self, x):
        below = x < self.threshold if self.strict else x <= self.threshold
        return np.where(np.isnan(x), self.default_left, below)


def lightgbm_trees(booster) -> list[Node]:
    def convert(d):
        if "leaf_index" in d:
            return Node(value=d["leaf_value"], cover=d["leaf_weight"], cover_rtol=1e-10, count=d["leaf_count"])
        # internal weights are printed to 6 significant digits (leaf weights in full)
        return Node(cover=d["internal_weight"], cover_rtol=1e-5, count=d["internal_count"],
                    feature=d["split_feature"],
                    threshold=d["threshold"], default_left=d["default_left"], gain=d["split_gain"],
                    left=convert(d["left_child"]), right=convert(d["right_child"]))

    return [convert(info["tree_structure"]) for info in booster.dump_model()["tree_info"]]


def xgboost_trees(booster) -> list[Node]:
    def convert(d):
        if "leaf" in d:
            return Node(value=d["leaf"], cover=d["cover"])  # float32 values: 1e-6
        children = {c["nodeid"]: convert(c) for c in d["children"]}
        return Node(cover=d["cover"], feature=int(d["split"].lstrip("f")), threshold=d["split_condition"],
                    strict=True, default_left=d["missing"] == d["yes"], gain=d["gain"],
                    left=children[d["yes"]], right=children[d["no"]])

    return [convert(json.loads(text)) for text in booster.get_dump(dump_format="json", with_stats=True)]


def goes_left(tree, node, node_bins):
    """boosters' rule: value bins 1..threshold_bin go left, missing (bin 0) by default_left."""
    b = node_bins
    return ((b >= 1) & (b <= tree.threshold_bin[node])) | ((b == 0) & bool(tree.default_left[node]))


def assert_trees_match(trees, theirs: list[Node], X, bins, *, biases, value_tol, gain_offset=0.0,
                       gain_rtol=1e-5, library="the other library") -> int:
    """Assert that `trees` (boosters' or the reference's, in boosting order) equal
    `theirs`; returns the number of mirrored ties met.

    biases[t]: what the other library added to tree t's values (LightGBM puts the base
    score into its first trees). value_tol(ours, their_node): the allowed difference of
    a leaf value. gain_offset: what the other library's gain has on top of 2 x boosters'
    (2 min_gain_to_split for LightGBM; XGBoost's gain is the same)."""
    assert len(trees) == len(theirs), f"{len(trees)} trees, {library} has {len(theirs)}"
    n_ties = 0
    for t, (tree, root) in enumerate(zip(trees, theirs)):
        stack = [(0, root, np.arange(X.shape[0]))]
        while stack:
            i, node, rows = stack.pop()
            where = f"tree {t} node {i} ({len(rows)} rows)"
            assert tree.n_samples[i] == len(rows), where
            assert node.count is None or node.count == len(rows), f"{where}: {library} counts {node.count}"
            np.testing.assert_allclose(tree.cover[i], node.cover, rtol=node.cover_rtol, err_msg=f"{where}: cover")
            if node.feature < 0:
                assert tree.split_feature[i] < 0, f"{where}: split here (gain {tree.gain[i]}), not by {library}"
                expected = node.value - biases[t]
                assert abs(tree.value[i] - expected) <= value_tol(tree, i, node), \
                    f"{where}: leaf value {tree.value[i]!r}, {library} {expected!r}"
                continue
            f = tree.split_feature[i]
            assert f >= 0, f"{where}: a leaf here, {library} splits on feature {node.feature} (gain {node.gain})"
            assert f == node.feature, f"{where}: feature {f} (gain {2 * tree.gain[i]}), " \
                                      f"{library} {node.feature} (gain {node.gain})"
            ours_left = goes_left(tree, i, bins[rows, f])
            their_left = node.goes_left(X[rows, f])
            left, right = tree.left_child[i], tree.right_child[i]
            if np.array_equal(ours_left, their_left):
                pairs = ((left, node.left), (right, node.right))
            else:
                assert np.array_equal(ours_left, ~their_left), f"{where}: other rows go left than in {library}"
                n_ties += 1
                pairs = ((left, node.right), (right, node.left))
            np.testing.assert_allclose(2 * tree.gain[i] + gain_offset, node.gain, rtol=gain_rtol,
                                       atol=gain_rtol * abs(root.gain), err_msg=f"{where}: gain")
            for ours, their_child in pairs:
                child_rows = rows[ours_left] if ours == left else rows[~ours_left]
                stack.append((ours, their_child, child_rows))
    return n_ties
