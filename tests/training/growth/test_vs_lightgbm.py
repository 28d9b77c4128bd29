"""Leaf-wise boosters against LightGBM, number for number, on pre-binned data.

Every tree of a few boosting rounds is walked from the root next to LightGBM's dump
(tree_compare.py): the same split features, the same training rows sent left, the same
row counts and hessian sums in every node, gains equal to LightGBM's / 2 (minus
min_gain_to_split), leaf values and margins equal to float64 rounding. Labels and
weights are float32 values (LightGBM stores them so), so both compute the same float32
gradients; the sums then differ only in summation order and LightGBM's 1e-15 hessian
epsilons: values to 1e-10 relative (+1e-12), margins to 1e-9. With weights LightGBM
rounds (f - y) to float32 before weighting it: float32 precision then (1e-6, 1e-5).
Node hessian sums: 1e-5 relative inside the tree (the dump prints 6 digits), 1e-10 at leaves.

Where boosters and LightGBM differ by design, the test says so and checks the difference
itself against naive_grower.py: LightGBM does not try, in a node's descendants, a
feature that could not split the node ("skip_features_unsplittable_in_parent").
"""

import dataclasses

import lightgbm as lgb
import numpy as np
import pytest

import boosters as bst
from support import naive_grower as naive
from support.matched_params import boosters_config, lightgbm_params
from support.prebinned import positive_weights, prebinned_data
from support.tree_compare import assert_trees_match, lightgbm_trees

N_ROUNDS = 5
LEAFWISE = dict(leafwise=True, max_depth=None, n_leaves=31, min_child_weight=1e-3, learning_rate=0.3)


def value_tol(rtol):
    return lambda tree, node, their_node: rtol * abs(their_node.value) + 1e-12


def value_rtol(weights):
    """LightGBM rounds (f - y) to float32 before it multiplies by the weight (boosters
    rounds the product): with weights, gradients agree to float32 precision only."""
    return 1e-10 if weights is None else 1e-6


def train_lightgbm(X, y, p, weights=None, n_rounds=N_ROUNDS):
    return lgb.train(lightgbm_params(p), lgb.Dataset(X, y, weight=weights), num_boost_round=n_rounds)


def lightgbm_biases(p, y, weights, n_trees):
    """LightGBM adds the base score to the values of its first tree (per class)."""
    w = np.ones(len(y)) if weights is None else weights
    base = naive.base_scores(p.objective, y, w, p.n_classes)
    return np.concatenate([base, np.zeros(n_trees - len(base))])


def assert_model_matches_lightgbm(trees, booster, X, y, p, weights=None):
    bins, _ = naive.prebin(X)
    theirs = lightgbm_trees(booster)
    return assert_trees_match(trees, theirs, X, bins, biases=lightgbm_biases(p, y, weights, len(theirs)),
                              value_tol=value_tol(value_rtol(weights)), gain_offset=2 * p.min_gain_to_split, library="LightGBM")


# ----------------------------------------------------------------------------------
# Settings where LightGBM's feature shortcut changes no tree: boosters == LightGBM
# ----------------------------------------------------------------------------------

DIRECT = {
    "squared": dict(),
    "few-leaves": dict(n_leaves=8),
    "max-depth": dict(max_depth=4),
    "min-samples-leaf": dict(min_samples_leaf=30),  # constant hessians: exact row counts
    "min-child-weight": dict(min_child_weight=40.0),
    "no-l2": dict(l2=0.0, min_child_weight=0.0),
    "l1": dict(l1=2.0),
    "l1-min-gain": dict(l1=2.0, min_gain_to_split=1.0),
    "weights": dict(),
    "logistic": dict(objective="logistic"),
    "logistic-max-depth": dict(objective="logistic", max_depth=5),
    "logistic-weights": dict(objective="logistic"),
}


@pytest.mark.parametrize("case", list(DIRECT))
def test_leafwise_model_equals_lightgbm(case):
    p = naive.Params(**{**LEAFWISE, **DIRECT[case]})
    X, y = prebinned_data(seed=1, objective=p.objective)
    w = positive_weights(len(y), seed=2) if case.endswith("weights") else None
    model = bst.GBDTModel.train(bst.Dataset(X, y, weights=w), boosters_config(p, N_ROUNDS), n_threads=2)
    booster = train_lightgbm(X, y, p, w)
    assert model.n_trees == N_ROUNDS
    assert_model_matches_lightgbm(model.trees, booster, X, y, p, w)
    rtol = 10 * value_rtol(w)
    np.testing.assert_allclose(model.predict_raw(X), booster.predict(X, raw_score=True), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(model.predict(X), booster.predict(X), rtol=rtol, atol=rtol)
    assert sum(t.n_leaves for t in model.trees) > 5 * N_ROUNDS  # real trees


@pytest.mark.xfail(strict=True, reason=(
    "min_samples_leaf with varying hessians: boosters estimates a child's rows as "
    "round(H_child * count / H), LightGBM sums round(H_bin * count / H) over the child's bins; "
    "a documented difference (user guide, min_samples_leaf). Tree 4 node 48 (110 rows): boosters "
    "estimates 40 rows left (valid at min_samples_leaf=40), LightGBM 39"))
def test_logistic_min_samples_leaf_equals_lightgbm():
    p = naive.Params(**{**LEAFWISE, "objective": "logistic", "min_samples_leaf": 40})
    X, y = prebinned_data(seed=1, objective="logistic")
    model = bst.GBDTModel.train(bst.Dataset(X, y), boosters_config(p, N_ROUNDS), n_threads=2)
    assert_model_matches_lightgbm(model.trees, train_lightgbm(X, y, p), X, y, p)


def test_no_missing_values_in_a_node_either_way():
    """Without NaN at training, each library picks some default direction; the rows and
    values still agree, and boosters sends NaN to the larger child at prediction."""
    p = naive.Params(**LEAFWISE)
    X, y = prebinned_data(seed=3, nan_share=0.0)
    model = bst.GBDTModel.train(bst.Dataset(X, y), boosters_config(p, N_ROUNDS), n_threads=2)
    assert_model_matches_lightgbm(model.trees, train_lightgbm(X, y, p), X, y, p)
    for tree in model.trees:
        internal = tree.split_feature >= 0
        larger_left = tree.n_samples[tree.left_child[internal]] >= tree.n_samples[tree.right_child[internal]]
        assert np.array_equal(tree.default_left[internal].astype(bool), larger_left)


# ----------------------------------------------------------------------------------
# Settings where the shortcut matters: LightGBM == the reference with the shortcut,
# boosters == the reference without it
# ----------------------------------------------------------------------------------

SHORTCUT = {
    "min-gain": dict(min_gain_to_split=3.0),  # LightGBM min_gain_to_split=6
    "logistic-l1": dict(objective="logistic", l1=0.5, min_child_weight=2.0),
    "logistic-min-gain": dict(objective="logistic", min_gain_to_split=0.5),
    "logistic-max-depth-l2": dict(objective="logistic", max_depth=5, l2=3.0, min_child_weight=0.5),
    "softmax": dict(objective="softmax", n_classes=3, n_leaves=15),
}


def _same_structure(a, b):
    return len(a) == len(b) and all(np.array_equal(getattr(s, name), getattr(t, name))
               for s, t in zip(a, b) for name in ("split_feature", "threshold_bin", "default_left"))


@pytest.mark.parametrize("case", list(SHORTCUT))
def test_lightgbm_differs_only_by_its_feature_shortcut(case):
    p = naive.Params(**{**LEAFWISE, **SHORTCUT[case]})
    X, y = prebinned_data(seed=1 if p.objective != "softmax" else 3, objective=p.objective)
    shortcut = dataclasses.replace(p, skip_features_unsplittable_in_parent=True)
    n_rounds = N_ROUNDS if p.objective != "softmax" else 3
    _, reference, _, _ = naive.train(X, y, p, n_rounds)
    _, reference_shortcut, _, _ = naive.train(X, y, shortcut, n_rounds)
    assert len(reference) == len(reference_shortcut)
    assert not _same_structure(reference, reference_shortcut)  # the case shows the difference
    assert_model_matches_lightgbm(reference_shortcut, train_lightgbm(X, y, p, n_rounds=n_rounds), X, y, p)
    model = bst.GBDTModel.train(bst.Dataset(X, y), boosters_config(p, n_rounds), n_threads=2)
    assert model.n_trees == len(reference)
    assert _same_structure(model.trees, reference)  # the full comparison: test_naive_grower.py
