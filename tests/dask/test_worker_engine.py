"""The growth engine on every worker (boosters/dask/_engine.py, `train(..., _engine="worker")`,
a prototype): its models are the default path's, byte for byte (the same sums in the same
order), on 1, 2 and 4 workers, in-process and in worker processes; what it does not
support yet is refused; a lost worker ends the training with an error, never a hang."""

import time

import numpy as np
import pytest
from distributed import Client, LocalCluster

import boosters as bst
from boosters.dask import _engine
from support.dask_clusters import clients  # noqa: F401 - a fixture
from support.dask_clusters import LEAFWISE, dask_train, kill_first_worker, make_data, no_stealing, objective_labels

CASES = {
    "f64 depth-wise": dict(max_depth=3),
    "f64 leaf-wise": dict(growth_strategy=LEAFWISE, n_leaves=7, max_depth=None),
    "i16 depth-wise": dict(histogram_mode="i16", max_depth=4),
    "i8 leaf-wise, renewed leaves off": dict(histogram_mode="i8", growth_strategy=LEAFWISE, n_leaves=6,
                                             max_depth=None, renew_leaves=False),
    "softmax": dict(objective=bst.Objective.softmax(3), max_depth=3),
    "monotone, column sampling": dict(max_depth=3, monotone_constraints=[1, 0, 0, 0, 0], colsample_bynode=0.6),
    "logistic, min_samples_leaf": dict(objective=bst.Objective.logistic(), max_depth=4, min_samples_leaf=40),
}


@pytest.mark.parametrize("n_workers", [1, 2, 4])
@pytest.mark.parametrize("case", list(CASES))
def test_the_worker_engine_grows_the_default_paths_model(clients, case, n_workers):
    settings = CASES[case]
    X, y = make_data()
    objective = settings.get("objective")
    y = objective_labels(objective.name, y) if objective is not None else y
    config = bst.GBDTConfig(n_estimators=4, **settings)
    client = clients[n_workers]
    default = dask_train(client, X, y, config)
    engine = dask_train(client, X, y, config, _engine="worker")
    assert engine.to_bytes() == default.to_bytes()


def test_the_worker_engine_with_categories_and_weights(clients):
    X, y = make_data()
    X[:, 2] = np.floor(np.abs(X[:, 2]) * 3) % 7
    X[np.isnan(X[:, 2]), 2] = 0.0
    weights = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    config = bst.GBDTConfig(n_estimators=3, max_depth=3)
    default = dask_train(clients[2], X, y, config, weights=weights, categorical_features=[2])
    engine = dask_train(clients[2], X, y, config, weights=weights, categorical_features=[2], _engine="worker")
    assert engine.to_bytes() == default.to_bytes()


@pytest.mark.parametrize("settings", [dict(subsample=0.5), dict(booster="dart"), dict(linear_leaves=True),
                                      dict(objective=bst.Objective.absolute())])
def test_what_the_prototype_does_not_support_is_refused(clients, settings):
    X, y = make_data()
    with pytest.raises(ValueError, match="_engine='worker' does not support"):
        dask_train(clients[2], X, y, bst.GBDTConfig(n_estimators=2, **settings), _engine="worker")


def test_the_worker_engine_in_worker_processes():
    X, y = make_data()
    config = bst.GBDTConfig(n_estimators=3, max_depth=4, histogram_mode="i16")
    with no_stealing(), LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        default = dask_train(client, X, y, config)
        engine = dask_train(client, X, y, config, _engine="worker")
    assert engine.to_bytes() == default.to_bytes()


def test_a_lost_worker_ends_the_training_with_an_error(monkeypatch):
    # the worker holding the first partition dies before tree 2: the other engine, waiting
    # for its parts, is aborted; the driver says the prototype does not recover
    grow = _engine.WorkerEngines.grow_tree

    def kill_then_grow(self, previous_leaves, output, new_round, tree_index):
        if tree_index == 2:
            kill_first_worker(self.partitions)
        return grow(self, previous_leaves, output, new_round, tree_index)

    monkeypatch.setattr(_engine.WorkerEngines, "grow_tree", kill_then_grow)
    X, y = make_data()
    with no_stealing(), LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        start = time.monotonic()
        with pytest.raises(RuntimeError, match="does not recover yet"):
            dask_train(client, X, y, bst.GBDTConfig(n_estimators=5, max_depth=3), _engine="worker")
        assert time.monotonic() - start < 120
