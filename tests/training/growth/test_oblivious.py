"""Oblivious (symmetric) trees, growth_strategy="oblivious": against the NumPy reference
of naive_oblivious.py node by node (tolerances: tree_compare.assert_same_as_naive_tree),
the symmetric structure, thread independence, and the whole path a model takes
(prediction, save and load, SHAP, importance, export)."""

import numpy as np
import pytest

import boosters as bst
from support import naive_grower as naive
from support import naive_oblivious
from support.matched_params import boosters_config
from support.prebinned import positive_weights, prebinned_data
from support.tree_compare import assert_same_as_naive, assert_same_model


def train_both(X, y, n_rounds, weights=None, n_threads=2, **params):
    """(boosters model, reference (base, trees, margins, values), Params)."""
    p = naive.Params(**params)
    config = boosters_config(p, n_rounds).replace(growth_strategy="oblivious")
    model = bst.GBDTModel.train(bst.Dataset(X, y, weights=weights), config, n_threads=n_threads)
    return model, naive_oblivious.train(X, y, p, n_rounds, weights), p


def assert_symmetric(tree):
    """Every split node of a depth has the same feature, threshold and missing side."""
    depth = np.zeros(tree.n_nodes, dtype=int)
    for i in range(tree.n_nodes):
        for child in (tree.left_child[i], tree.right_child[i]):
            if child >= 0:
                depth[child] = depth[i] + 1
    split = tree.split_feature >= 0
    for d in np.unique(depth[split]):
        at = split & (depth == d)
        for name in ("split_feature", "threshold_bin", "default_left"):
            assert len(np.unique(getattr(tree, name)[at])) == 1, f"depth {d}: {name} differs"


CASES = {
    "plain": dict(max_depth=4),
    "deep": dict(max_depth=7, min_child_weight=0.0),
    "l1-l2": dict(max_depth=5, l1=3.0, l2=0.25),
    "min-gain": dict(max_depth=5, min_gain_to_split=4.0),
    "min-child-weight": dict(max_depth=6, min_child_weight=60.0),
    "min-samples-leaf": dict(max_depth=6, min_samples_leaf=50),
    "no-l2": dict(max_depth=5, l2=0.0, min_child_weight=0.0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_squared_error_trees_equal_the_reference(case):
    X, y = prebinned_data(seed=1)
    model, reference, p = train_both(X, y, 4, objective="squared", learning_rate=0.3, **CASES[case])
    assert_same_as_naive(model, reference, p, X)
    for tree in model.trees:
        assert_symmetric(tree)
    assert reference[1][0].n_nodes >= 7  # the case grows real trees


def test_a_node_where_the_level_split_is_invalid_stays_a_leaf():
    # the limits leave some nodes of a level unsplit: the reference agrees on which
    X, y = prebinned_data(seed=1)
    model, reference, p = train_both(X, y, 3, objective="squared", max_depth=6, min_samples_leaf=50)
    assert_same_as_naive(model, reference, p, X)
    tree = model.trees[0]
    leaves_above_the_bottom = (tree.split_feature < 0) & (tree_depths(tree) < tree_depths(tree).max())
    assert leaves_above_the_bottom.any()


def tree_depths(tree):
    depth = np.zeros(tree.n_nodes, dtype=int)
    for i in range(tree.n_nodes):
        for child in (tree.left_child[i], tree.right_child[i]):
            if child >= 0:
                depth[child] = depth[i] + 1
    return depth


@pytest.mark.parametrize("limits", [dict(), dict(min_samples_leaf=40, min_child_weight=2.0),
                                    dict(l1=0.5, min_gain_to_split=0.2)], ids=["plain", "min-rows", "l1-min-gain"])
def test_logistic_trees_equal_the_reference(limits):
    X, y = prebinned_data(seed=2, objective="logistic")
    model, reference, p = train_both(X, y, 4, objective="logistic", learning_rate=0.5, max_depth=5, **limits)
    assert_same_as_naive(model, reference, p, X)


def test_softmax_trees_equal_the_reference():
    X, y = prebinned_data(n=2000, seed=3, objective="softmax", n_classes=3)
    model, reference, p = train_both(X, y, 3, objective="softmax", n_classes=3, learning_rate=0.5, max_depth=4)
    assert model.n_trees == 9  # one tree per class per round
    assert_same_as_naive(model, reference, p, X)


def test_weighted_trees_equal_the_reference():
    X, y = prebinned_data(seed=4)
    model, reference, p = train_both(X, y, 3, weights=positive_weights(len(y), seed=4), max_depth=5)
    assert_same_as_naive(model, reference, p, X)
