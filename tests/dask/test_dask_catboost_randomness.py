"""boosters.dask with CatBoost's Bayesian bootstrap (each partition weighs its rows by
their global index: the single-machine trees) and random_strength (refused)."""

import numpy as np
import pytest

import boosters as bst
from support.tree_compare import assert_same_trees
from support.dask_clusters import CHUNKS, DEPTHWISE, LEAFWISE, clients, dask_train, make_data  # noqa: F401


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


def test_random_strength_is_refused(clients):
    X, y = make_data()
    with pytest.raises(ValueError, match="random_strength"):
        dask_train(clients[1], X, y, bst.GBDTConfig(n_estimators=2, random_strength=1.0))
