"""boosters against XGBoost `hist` (depth-wise and lossguide), number for number, on
pre-binned data.

Every tree of a few rounds is walked from the root next to XGBoost's JSON dump
(tree_compare.py): the same split features, the same training rows sent left, hessian
sums (cover), gains (XGBoost's = 2 x boosters' + 2 min_gain_to_split, gamma = 2
min_gain_to_split) and leaf values; then the margins. XGBoost keeps predictions, leaf
values and gains in float32, so its gradients after the first round differ from
boosters' (float64 margins) by about a float32 rounding: leaf values are compared to
1e-5 relative (+1e-7), gains to 1e-4 of the root's, margins to 1e-5. Ties: see
tree_compare.py (mirrored sides); other exact ties need equal gains from different
rows, which continuous gradients do not give.
"""

import numpy as np
import pytest
import xgboost as xgb

import boosters as bst
from support import naive_grower as naive
from support.matched_params import boosters_config, xgboost_params
from support.prebinned import positive_weights, prebinned_data
from support.tree_compare import assert_trees_match, xgboost_trees

N_ROUNDS = 5


def value_tol(tree, node, their_node):
    return 1e-5 * abs(their_node.value) + 1e-7


def train_and_compare(p, X, y, weights=None, n_rounds=N_ROUNDS):
    """Train both, assert the trees and margins match; returns (boosters model, mirrored ties)."""
    model = bst.GBDTModel.train(bst.Dataset(X, y, weights=weights), boosters_config(p, n_rounds), n_threads=2)
    w = np.ones(len(y)) if weights is None else weights
    base = naive.base_scores(p.objective, y, w, p.n_classes)
    dtrain = xgb.DMatrix(X, y, weight=weights, missing=np.nan)
    if p.objective == "softmax":  # one start per class: the log priors, as boosters
        dtrain.set_base_margin(np.tile(base, (len(y), 1)))
        base_score = None
    else:
        base_score = float(np.sum(w * y) / np.sum(w))  # XGBoost takes a probability for logistic
    booster = xgb.train(xgboost_params(p, base_score), dtrain, num_boost_round=n_rounds)
    assert model.n_trees == n_rounds * (p.n_classes if p.objective == "softmax" else 1)
    bins, _ = naive.prebin(X)
    ties = assert_trees_match(model.trees, xgboost_trees(booster), X, bins, biases=np.zeros(model.n_trees),
                              value_tol=value_tol, gain_offset=2 * p.min_gain_to_split, gain_rtol=1e-4,
                              library="XGBoost")
    theirs = booster.predict(dtrain, output_margin=True)
    np.testing.assert_allclose(model.predict_raw(X), theirs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(model.predict(X), booster.predict(dtrain), rtol=1e-5, atol=1e-6)  # probabilities
    return model, ties


DEPTHWISE = dict(max_depth=5, learning_rate=0.3)

DEPTHWISE_CASES = {
    "squared": dict(),
    "shallow": dict(max_depth=3),
    "deep-no-min-hessian": dict(max_depth=7, min_child_weight=0.0),
    "l1": dict(l1=2.0),
    "no-l2": dict(l2=0.0),
    "min-child-weight": dict(min_child_weight=20.0),
    "min-gain-gamma": dict(min_gain_to_split=3.0),
    "weights": dict(),
    "logistic": dict(objective="logistic"),
    "logistic-l1-min-child-weight": dict(objective="logistic", l1=0.5, min_child_weight=2.0),
    "logistic-min-gain": dict(objective="logistic", min_gain_to_split=0.5),
    "logistic-weights": dict(objective="logistic", max_depth=4),
}


@pytest.mark.parametrize("case", list(DEPTHWISE_CASES))
def test_depthwise_model_equals_xgboost_hist(case):
    p = naive.Params(**{**DEPTHWISE, **DEPTHWISE_CASES[case]})
    X, y = prebinned_data(seed=1, objective=p.objective)
    w = positive_weights(len(y), seed=2) if case.endswith("weights") else None
    model, _ = train_and_compare(p, X, y, w)
    assert min(t.n_leaves for t in model.trees) >= 4


LOSSGUIDE_CASES = {
    "squared": dict(n_leaves=20),
    "max-depth": dict(n_leaves=31, max_depth=4),
    "logistic": dict(objective="logistic", n_leaves=24),
    "l1-min-gain": dict(n_leaves=31, l1=1.0, min_gain_to_split=1.0),
}


@pytest.mark.parametrize("case", list(LOSSGUIDE_CASES))
def test_leafwise_model_equals_xgboost_lossguide(case):
    p = naive.Params(**{"leafwise": True, "max_depth": None, "learning_rate": 0.3, **LOSSGUIDE_CASES[case]})
    X, y = prebinned_data(seed=4, objective=p.objective)
    model, _ = train_and_compare(p, X, y)
    assert model.trees[0].n_leaves == min(p.n_leaves, 2 ** (p.max_depth or 30))  # the limits are reached
    if p.max_depth is not None:
        assert max(t.depth() for t in model.trees) == p.max_depth


def test_two_class_softmax_equals_xgboost():
    """With two classes boosters' softmax hessian K/(K-1) p (1 - p) is XGBoost's 2 p (1 - p)."""
    p = naive.Params(objective="softmax", n_classes=2, max_depth=4, learning_rate=0.5)
    X, y = prebinned_data(seed=5, objective="softmax", n_classes=2)
    train_and_compare(p, X, y, n_rounds=3)


def test_mirrored_tie_is_met_and_broken_by_the_documented_rule():
    """A deep tree on data with NaN meets nodes where the feature has one value besides the
    missing ones: "values left, missing right" (bin b, missing-right) and "missing left,
    values right" (bin 1, missing-left) tie exactly. boosters keeps the lower bin, so
    the missing rows go left; XGBoost sends them right. Everything else is equal."""
    p = naive.Params(max_depth=7, min_child_weight=0.0, learning_rate=0.3)
    X, y = prebinned_data(seed=1)
    model, ties = train_and_compare(p, X, y)
    assert ties >= 1
