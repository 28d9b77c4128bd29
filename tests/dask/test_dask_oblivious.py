"""boosters.dask grows oblivious (symmetric) trees with the single-machine growth loop:
the same trees as one machine, field by field, and the same predictions bit for bit
(the labels are exact multiples of 1/8: see test_dask.py)."""

import numpy as np
import pytest

import boosters as bst
from support.tree_compare import assert_same_trees
from support.dask_clusters import clients, dask_train, make_data  # noqa: F401 (clients: the fixture)


@pytest.mark.parametrize("mode, objective", [("i16", "squared"), ("f64", "logistic"), ("i8", "softmax")])
def test_oblivious_trees_equal_single_machine_training(clients, mode, objective):
    X, y = make_data()
    if objective == "logistic":
        y = (y > 0).astype(np.float64)
    if objective == "softmax":
        y = np.digitize(y, [-1.0, 1.0]).astype(np.float64)
    made = bst.Objective.softmax(3) if objective == "softmax" else getattr(bst.Objective, objective)()
    config = bst.GBDTConfig(n_estimators=3, max_depth=4, growth_strategy="oblivious", histogram_mode=mode,
                            objective=made)
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    for n_workers in (1, 2):
        model = dask_train(clients[n_workers], X, y, config)
        assert_same_trees(model, reference)
        assert np.array_equal(model.predict(X), reference.predict(X))
    assert reference.trees[0].n_nodes >= 7  # the trees really have levels


def test_oblivious_categorical_levels_equal_single_machine_training(clients):
    # integer codes of categorical features: a level's split sends one category left
    rng = np.random.default_rng(5)
    X, y = make_data()
    X[:, 2] = rng.integers(0, 12, size=len(X))
    y = y + np.round(8 * rng.normal(size=12))[X[:, 2].astype(int)] / 8
    # one category of 12 in each of a level's leaves: children of a few rows
    config = bst.GBDTConfig(n_estimators=3, max_depth=4, growth_strategy="oblivious", histogram_mode="i16",
                            min_samples_leaf=1)
    reference = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[2]), config)
    model = dask_train(clients[2], X, y, config, categorical_features=[2])
    assert_same_trees(model, reference)
    assert np.array_equal(model.predict(X), reference.predict(X))
    assert any((tree.category_set >= 0).any() for tree in reference.trees)
