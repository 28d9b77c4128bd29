"""boosters' growth loop against the plain NumPy trainer of naive_grower.py.

Whole trees are compared node by node (boosters numbers children in the order they are
made, as the reference does): split feature, bin threshold, raw threshold, children, row
counts and default directions exactly; leaf values, covers and gains to float64
rounding. The data are pre-binned (small integers, NaN for missing), so both sides use
the same bins, and `histogram_mode="f64"` accumulates exact float64 histograms.

The tolerances, and why: tree_compare.assert_same_as_naive_tree. Ties: the data have
continuous gradients, so two different candidate splits of a node tie only when they
separate the same rows (empty bins in between); both sides then keep the lowest bin, and
their sums are equal exactly.
"""

import numpy as np
import pytest

import boosters as bst
from support import naive_grower as naive
from support.matched_params import boosters_config
from support.prebinned import positive_weights, prebinned_data
from support.tree_compare import assert_same_as_naive


def train_both(X, y, n_rounds, weights=None, **params):
    """(boosters model, reference (base, trees, margins, values), Params)."""
    p = naive.Params(**params)
    model = bst.GBDTModel.train(bst.Dataset(X, y, weights=weights), boosters_config(p, n_rounds), n_threads=2)
    return model, naive.train(X, y, p, n_rounds, weights), p


CASES = {
    "depthwise": dict(max_depth=4),
    "depthwise-deep": dict(max_depth=7, min_child_weight=0.0),
    "leafwise": dict(leafwise=True, max_depth=None, n_leaves=24),
    "leafwise-max-depth": dict(leafwise=True, max_depth=3, n_leaves=31),
    "l1-l2": dict(max_depth=5, l1=3.0, l2=0.25),
    "min-gain": dict(leafwise=True, max_depth=None, n_leaves=40, min_gain_to_split=4.0),
    "min-child-weight": dict(max_depth=6, min_child_weight=60.0),
    "min-samples-leaf": dict(leafwise=True, max_depth=None, n_leaves=30, min_samples_leaf=50),
    "no-l2": dict(max_depth=5, l2=0.0, min_child_weight=0.0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_squared_error_trees_equal_the_reference(case):
    X, y = prebinned_data(seed=1)
    params = dict(objective="squared", learning_rate=0.3, **CASES[case])
    model, reference, p = train_both(X, y, 4, **params)
    assert_same_as_naive(model, reference, p, X)
    # the case really exercises its limit
    first = reference[1][0]
    assert first.n_nodes >= 7
    if p.leafwise and p.max_depth is None and p.min_gain_to_split == 0 and p.min_samples_leaf == 1:
        assert (first.split_feature < 0).sum() == p.n_leaves


@pytest.mark.parametrize("strategy", ["depthwise", "leafwise"])
@pytest.mark.parametrize("limits", [dict(), dict(min_samples_leaf=40, min_child_weight=2.0),
                                    dict(l1=0.5, min_gain_to_split=0.2)], ids=["plain", "min-rows", "l1-min-gain"])
def test_logistic_trees_equal_the_reference(strategy, limits):
    # hessians vary per row: min_samples_leaf works on hessian-estimated row counts
    X, y = prebinned_data(seed=2, objective="logistic")
    growth = dict(leafwise=True, max_depth=None, n_leaves=20) if strategy == "leafwise" else dict(max_depth=5)
    model, reference, p = train_both(X, y, 4, objective="logistic", learning_rate=0.5, **growth, **limits)
    assert_same_as_naive(model, reference, p, X)
    np.testing.assert_allclose(model.predict(X), 1 / (1 + np.exp(-reference[2][:, 0])), rtol=1e-10)


@pytest.mark.parametrize("strategy", ["depthwise", "leafwise"])
def test_softmax_trees_equal_the_reference(strategy):
    X, y = prebinned_data(n=2000, seed=3, objective="softmax", n_classes=3)
    growth = dict(leafwise=True, max_depth=None, n_leaves=12) if strategy == "leafwise" else dict(max_depth=4)
    model, reference, p = train_both(X, y, 3, objective="softmax", n_classes=3, learning_rate=0.5, **growth)
    assert_same_as_naive(model, reference, p, X)


@pytest.mark.parametrize("objective", ["squared", "logistic"])
def test_weighted_trees_equal_the_reference(objective):
    X, y = prebinned_data(seed=4, objective=objective)
    w = positive_weights(len(y), seed=5)
    model, reference, p = train_both(X, y, 4, weights=w, objective=objective, max_depth=5,
                                     min_samples_leaf=10, min_child_weight=3.0)
    assert_same_as_naive(model, reference, p, X)


def test_missing_only_at_prediction_follows_the_reference():
    """Features with no NaN in a node send NaN to the larger child; a row of NaNs
    predicts what the reference's walk through the larger children gives."""
    X, y = prebinned_data(seed=6, nan_share=0.0)
    model, reference, p = train_both(X, y, 3, max_depth=5)
    assert_same_as_naive(model, reference, p, X)
    expected = reference[0][0]
    for tree in reference[1]:
        node = 0
        while tree.split_feature[node] >= 0:
            node = tree.left_child[node] if tree.default_left[node] else tree.right_child[node]
        expected += tree.value[node]
    np.testing.assert_allclose(model.predict_raw(np.full((1, X.shape[1]), np.nan)), [expected], rtol=1e-12)


def test_exclusive_features_bundled_give_the_reference_trees():
    """One-hot columns are stored in shared columns (bundling): the trees do not change."""
    rng = np.random.default_rng(7)
    X, y = prebinned_data(n=3000, seed=7)
    category = rng.integers(0, 6, size=len(y))
    one_hot = (category[:, None] == np.arange(6)).astype(np.float64)
    y = y + 0.8 * (category == 2) - 0.6 * (category == 4)
    X = np.hstack([X, one_hot])
    for leafwise in (False, True):
        growth = dict(leafwise=True, max_depth=None, n_leaves=20) if leafwise else dict(max_depth=5)
        model, reference, p = train_both(X, y, 3, **growth)
        assert_same_as_naive(model, reference, p, X)
        used = set(np.concatenate([t.split_feature for t in model.trees]).tolist())
        assert used & set(range(6, 12)), "no one-hot column was split on"


# -- exact ties ----------------------------------------------------------------------------

def test_duplicated_feature_ties_keep_the_lowest_feature():
    X, y = prebinned_data(seed=8)
    X = np.hstack([X, X[:, [3, 5]]])  # features 6 and 7 repeat 3 and 5: every split on them ties
    for growth in (dict(max_depth=5), dict(leafwise=True, max_depth=None, n_leaves=24)):
        model, reference, p = train_both(X, y, 3, **growth)
        assert_same_as_naive(model, reference, p, X)
        used = np.concatenate([t.split_feature for t in model.trees])
        assert np.any(used == 3) and np.any(used == 5)
        assert not np.any(used >= 6)


def mirrored_data(n_half=1024, seed=9):
    """Two halves told apart by feature 0 whose gradients are exact negatives of each
    other: labels y and -y in multiples of 1/8, so the base score (their mean) is 0 and
    every sum is exact. Squares of negated sums are equal, so the halves' nodes have
    bit-identical gains: leaf-wise growth meets ties between nodes at every step."""
    rng = np.random.default_rng(seed)
    X_half = np.column_stack([rng.integers(0, k, size=n_half) for k in (5, 12, 30)]).astype(np.float64)
    X_half[rng.uniform(size=n_half) < 0.1, 1] = np.nan
    y_half = np.round(8 * (1.5 + np.sin(X_half[:, 0]) + 0.05 * X_half[:, 2] + 0.3 * rng.normal(size=n_half))) / 8
    X = np.vstack([np.column_stack([np.zeros(n_half), X_half]), np.column_stack([np.ones(n_half), X_half])])
    return X, np.concatenate([y_half, -y_half])


@pytest.mark.parametrize("n_leaves", [4, 7, 16])
def test_leafwise_ties_between_nodes_expand_the_lowest_node_first(n_leaves):
    X, y = mirrored_data()
    model, reference, p = train_both(X, y, 2, leafwise=True, max_depth=None, n_leaves=n_leaves, l2=0.0,
                                     learning_rate=0.5)
    assert_same_as_naive(model, reference, p, X)
    tree = reference[1][0]
    assert tree.split_feature[0] == 0  # the halves are split first
    gains = tree.gain[tree.split_feature >= 0]
    assert len(np.unique(gains)) < len(gains)  # the test really met ties
