"""The tests' tree comparisons, each written once:

- two boosters models, exactly: assert_same_trees (the forest), assert_same_model (and
  the saved bytes), same_trees (a yes or no, for "these differ");
- a boosters model against naive_grower.py's reference: assert_same_as_naive;
- trees of boosters (or of naive_grower.py) against LightGBM's and XGBoost's model
  dumps: assert_trees_match.

Against LightGBM and XGBoost: the libraries number nodes differently, so the comparison
walks both trees from the root together, carrying the training rows that reach each
node. At each split: the same feature, and the same rows sent left (LightGBM's
thresholds lie between values and XGBoost's are the next value, so rows, not raw
thresholds, are compared; boosters keeps the lowest of equivalent bins, LightGBM the
highest). The row counts and hessian sums (cover) of every node, the gains and the leaf
values are compared as numbers.

One exact tie is allowed, and counted: a split whose two sides are the other library's
sides swapped (e.g. a node where the feature has one value besides the missing ones:
"values left, missing right" and "missing left, values right" have bit-identical gains,
since the gain is symmetric in its two children). Each library breaks it its own way.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import numpy as np

from . import naive_grower as naive


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


# -- boosters against boosters, exactly -----------------------------------------------------------

def differing_tree_arrays(a, b) -> list[str]:
    """Names of the arrays of two trees (every field of a Tree: structure, thresholds,
    values, gains, covers, counts, categories, linear leaves) that differ in value or dtype."""
    names = []
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if x is None or y is None:
            same = x is None and y is None
        else:
            same = x.dtype == y.dtype and np.array_equal(x, y)
        if not same:
            names.append(field.name)
    return names


def assert_same_tree_list(trees, expected):
    """As many trees, each array equal to the expected tree's, exactly."""
    assert len(trees) == len(expected), f"{len(trees)} trees, expected {len(expected)}"
    for t, (a, b) in enumerate(zip(trees, expected)):
        differ = differing_tree_arrays(a, b)
        assert not differ, f"tree {t}: {', '.join(differ)} differ"


def same_trees(a, b) -> bool:
    """Models a and b have as many trees, each with every array equal."""
    return a.n_trees == b.n_trees and not any(differing_tree_arrays(s, t) for s, t in zip(a.trees, b.trees))


def assert_same_trees(model, expected):
    """The same forest exactly: base scores, tree groups (outputs), and every array of
    every tree."""
    np.testing.assert_array_equal(model.forest.base_scores, expected.forest.base_scores, err_msg="base_scores")
    assert list(model.forest.tree_group) == list(expected.forest.tree_group), "tree groups differ"
    assert_same_tree_list(model.trees, expected.trees)


def assert_same_model(model, expected, X=None):
    """The same forest, not empty (empty ones prove nothing), and the same saved bytes
    (objective, config, feature names, ...); with X, bit-identical raw predictions too."""
    assert model.n_trees > 0, "no trees to compare"
    assert_same_trees(model, expected)
    if X is not None:
        np.testing.assert_array_equal(model.predict_raw(X), expected.predict_raw(X))
    assert model.to_bytes() == expected.to_bytes()


# -- boosters against naive_grower.py -------------------------------------------------------------

NAIVE_EXACT = ("split_feature", "threshold_bin", "default_left", "left_child", "right_child", "n_samples")


def assert_same_as_naive_tree(ours, ref, values, p, label):
    """One tree against the reference's: structure, bins, counts and raw thresholds
    exactly; covers, values and gains to float64 rounding. The reference sums each node's
    gradients over its rows, boosters from histograms and the subtraction trick, so sums
    differ by a few ulps of sum |g|: values to 1e-12 * sum |g| / (H + l2) (scaled by the
    learning rate), covers to 1e-12 relative (positive hessians: no cancellation), gains to
    1e-9 of the tree's largest gain."""
    assert ours.n_nodes == ref.n_nodes, f"{label}: {ours.n_nodes} nodes, the reference has {ref.n_nodes}"
    for name in NAIVE_EXACT:
        np.testing.assert_array_equal(getattr(ours, name), getattr(ref, name), err_msg=f"{label}: {name}")
    internal = np.flatnonzero(ref.split_feature >= 0)
    expected_threshold = [naive.threshold_value(values[ref.split_feature[i]], ref.threshold_bin[i]) for i in internal]
    np.testing.assert_array_equal(ours.threshold[internal], expected_threshold, err_msg=f"{label}: threshold")
    np.testing.assert_allclose(ours.cover, ref.cover, rtol=1e-12, err_msg=f"{label}: cover")
    value_tol = 1e-12 * p.learning_rate * ref.abs_grad / (ref.cover + p.l2) + 1e-300
    bad = np.abs(ours.value - ref.value) > value_tol
    assert not bad.any(), f"{label}: values differ at nodes {np.flatnonzero(bad)}: {ours.value[bad]} vs {ref.value[bad]}"
    gain_tol = 1e-9 * max(1.0, np.abs(ref.gain).max())
    np.testing.assert_allclose(ours.gain, ref.gain, rtol=0, atol=gain_tol, err_msg=f"{label}: gain")


def assert_same_as_naive(model, reference, p, X):
    """A model against the reference's training (base, trees, margins, bin values, as
    naive_grower.train returns them): every tree, and every row's margin to float64
    rounding of the leaf values' sums."""
    _, trees, margins, values = reference
    assert model.n_trees == len(trees)  # counts first: zip would hide a missing tree
    for t, (ours, ref) in enumerate(zip(model.trees, trees)):
        assert_same_as_naive_tree(ours, ref, values, p, f"tree {t}")
    np.testing.assert_allclose(model.predict_raw(X).reshape(margins.shape), margins, rtol=1e-10, atol=1e-10)
