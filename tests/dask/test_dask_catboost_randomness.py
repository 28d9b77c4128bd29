"""boosters.dask with CatBoost's Bayesian bootstrap (each partition weighs its rows by
their global index: the single-machine trees) and random_strength (refused)."""

import numpy as np
import pytest

import boosters as bst
from support.tree_compare import assert_same_trees
from support.dask_clusters import (  # noqa: F401 (clients: the fixture)
    CHUNKS, DEPTHWISE, LEAFWISE, clients, dask_train, lose_a_worker_at, make_data, train_with_validation,
)


@pytest.mark.parametrize("growth, n_workers, chunks", [(DEPTHWISE, 2, CHUNKS), (LEAFWISE, 4, 180)])
def test_bayesian_bootstrap_equals_single_machine_training(clients, growth, n_workers, chunks):
    # quantized histograms are exact integer sums of the same weighted gradients: the
    # single-machine trees, bit for bit (float64 sums of weighted gradients would depend
    # on the order of addition)
    X, y = make_data(seed=10)
    shape = dict(max_depth=4) if growth is DEPTHWISE else dict(n_leaves=8)
    config = bst.GBDTConfig(n_estimators=4, growth_strategy=growth, histogram_mode="i16", bagging_temperature=1.0,
                            **shape)
    model = dask_train(clients[n_workers], X, y, config, chunks=chunks)
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    assert_same_trees(model, reference)
    assert np.array_equal(model.predict(X), reference.predict(X))
    plain = bst.GBDTModel.train(bst.Dataset(X, y), config.replace(bagging_temperature=None))
    assert not np.array_equal(model.predict(X), plain.predict(X))


def test_bayesian_bootstrap_survives_recoveries(clients, monkeypatch):
    # lost at roots, mid-tree and at validation scores: the rebuilt partitions recompute
    # each round's gradients with that round's weights (resume), the same trees
    X, y = make_data(n=1600, seed=18)
    config = bst.GBDTConfig(n_estimators=5, max_depth=3, histogram_mode="i16", bagging_temperature=1.0,
                            learning_rate=0.5, growth_strategy="depthwise")
    undisturbed, _ = train_with_validation(clients[2], X, y, config)
    lose_a_worker_at(monkeypatch, {3, 9, 14, 20})
    model, stats = train_with_validation(clients[2], X, y, config, steps="tasks")
    assert stats["recoveries"] == 4
    assert_same_trees(model, undisturbed)
    assert model.eval_history == undisturbed.eval_history


def test_random_strength_is_refused(clients):
    X, y = make_data()
    with pytest.raises(ValueError, match="random_strength"):
        dask_train(clients[1], X, y, bst.GBDTConfig(n_estimators=2, random_strength=1.0))
