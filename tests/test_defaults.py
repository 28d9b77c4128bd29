"""The defaults chosen on 19 real datasets (docs/benchmarks/defaults.md), and how other
libraries' names meet them: XGBoost's names keep XGBoost's depth-wise trees, LightGBM's
num_leaves its leaf-wise ones, and the default row sample yields to GOSS and the
Bayesian bootstrap."""

import numpy as np
import pytest

import boosters as bst
from boosters.sklearn import GBDTClassifier, GBDTRegressor
from support.tree_compare import assert_same_model

Leafwise, Depthwise = bst.GrowthStrategy.Leafwise, bst.GrowthStrategy.Depthwise


def test_the_defaults_are_the_studys():
    c = bst.GBDTConfig()
    assert (c.n_estimators, c.learning_rate, c.growth_strategy, c.n_leaves, c.max_depth) == (100, 0.05, Leafwise, 15,
                                                                                             None)
    assert (c.min_samples_leaf, c.min_child_weight, c.subsample, c.l2, c.max_bins) == (20, 1e-3, 0.8, 1.0, 256)


@pytest.mark.parametrize("params", [dict(objective="binary:logistic"), dict(gamma=0.0), dict(eta=0.3, max_leaves=0),
                                    dict(grow_policy="depthwise")])
def test_xgboost_names_grow_xgboosts_depthwise_trees(params):
    config = bst.GBDTConfig(**params)
    assert config.growth_strategy is Depthwise and config.max_depth == 6


def test_leaf_limits_by_each_librarys_name():
    assert bst.GBDTConfig(num_leaves=63).growth_strategy is Leafwise  # LightGBM's
    assert bst.GBDTConfig(grow_policy="lossguide", max_leaves=8).n_leaves == 8
    with pytest.raises(ValueError, match="max_leaves|n_leaves"):  # XGBoost's, without lossguide: depth-wise trees
        bst.GBDTConfig(max_leaves=8)
    config = bst.GBDTConfig(max_depth=4)  # boosters' own names: leaf-wise, depth-limited
    assert (config.growth_strategy, config.max_depth, config.n_leaves) == (Leafwise, 4, 15)


def test_the_default_row_sample_yields_to_goss_and_the_bayesian_bootstrap():
    assert bst.GBDTConfig(goss_top_rate=0.2, goss_other_rate=0.1).subsample == 1.0
    assert bst.GBDTConfig(bagging_temperature=1.0).subsample == 1.0
    assert bst.GBDTConfig(bootstrap_type="Bayesian").subsample == 1.0
    with pytest.raises(ValueError, match="subsample"):  # a share given on purpose is not dropped
        bst.GBDTConfig(subsample=0.5, goss_top_rate=0.2, goss_other_rate=0.1)
    with pytest.raises(ValueError, match="subsample"):
        bst.GBDTConfig(subsample=0.5, bagging_temperature=1.0)


def data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.normal(size=n)
    return X, y


def test_default_models_are_seeded_and_thread_independent():
    X, y = data()
    one = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=20), n_threads=1)
    two = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=20), n_threads=2)
    assert_same_model(one, two, X)
    other_seed = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=20, seed=7), n_threads=1)
    assert not np.array_equal(one.predict(X), other_seed.predict(X))  # the rows are sampled


def test_the_estimators_take_the_configs_defaults():
    assert GBDTRegressor().config(bst.Objective.squared()) == bst.GBDTConfig()
    assert GBDTClassifier().config(bst.Objective.logistic()) == bst.GBDTConfig(objective=bst.Objective.logistic())
    assert GBDTRegressor(max_leaves=8, grow_policy="lossguide").config(bst.Objective.squared()).n_leaves == 8
