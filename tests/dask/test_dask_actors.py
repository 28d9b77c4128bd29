"""boosters.dask.train(steps="actors"): the growth steps run by one Dask actor per worker
instead of tasks. The models must be those of steps="tasks" and of single-machine
training, bit for bit (trees field by field, predictions), on 1, 2 and 4 workers, through
lost workers too. The data and helpers are test_dask's.
"""


import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster

import boosters as bst
from boosters.dask import DaskGBDTClassifier, train
from boosters.dask._driver import Partitions, balanced
from support.dask_clusters import (
    CHUNKS, DEPTHWISE, GOSS, LEAFWISE, clients, dask_train, kill_first_worker,  # noqa: F401
    lose_a_worker_at,
    make_data, objective_labels, train_with_validation,
)
from support.tree_compare import assert_same_trees

ACTORS = dict(steps="actors")


@pytest.mark.parametrize("mode, objective, growth, n_workers", [
    ("i16", "squared", DEPTHWISE, 2), ("f64", "logistic", LEAFWISE, 4), ("i8", "softmax", DEPTHWISE, 1),
    ("i16", "logistic", LEAFWISE, 4)])
def test_actor_steps_equal_single_machine_training(clients, mode, objective, growth, n_workers):
    X, y = make_data()
    y = objective_labels(objective, y)
    spec = bst.Objective.softmax(3) if objective == "softmax" else getattr(bst.Objective, objective)()
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, n_leaves=6, growth_strategy=growth, histogram_mode=mode,
                            objective=spec)
    model = dask_train(clients[n_workers], X, y, config, **ACTORS)
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    assert_same_trees(model, reference)
    assert np.array_equal(model.predict(X), reference.predict(X))


@pytest.mark.parametrize("sampling", [dict(subsample=0.6, colsample_bynode=0.7), GOSS])
def test_actor_steps_with_categories_and_row_sampling(clients, sampling):
    rng = np.random.default_rng(3)
    n = 1200
    frame = pd.DataFrame({"x": rng.normal(size=n), "c": pd.Categorical(rng.integers(0, 6, n).astype(str))})
    y = frame["x"].to_numpy() + frame["c"].cat.codes.to_numpy() % 3 + 0.2 * rng.normal(size=n)
    y = np.round(8 * y) / 8  # multiples of 1/8: the base score's sums are exact (test_dask's docstring)
    config = bst.GBDTConfig(n_estimators=4, max_depth=3, histogram_mode="i16", max_onehot_cats=2, **sampling)
    X = dd.from_pandas(frame, npartitions=3)
    model = train(clients[2], X, dd.from_pandas(pd.Series(y), npartitions=3), config, **ACTORS)
    reference = bst.GBDTModel.train(bst.Dataset(frame, y), config)
    assert_same_trees(model, reference)


def test_actor_steps_validation_and_early_stopping(clients):
    X, y = make_data(n=1600, seed=4)
    config = bst.GBDTConfig(n_estimators=30, max_depth=3, learning_rate=0.5, histogram_mode="i16",
                            early_stopping_rounds=2)
    by_actors, _ = train_with_validation(clients[4], X, y, config, **ACTORS)
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], y[:1200]), config,
                                    val_set=bst.Dataset(X[1200:], y[1200:]))
    assert by_actors.best_iteration == reference.best_iteration < 29  # it stopped early
    assert_same_trees(by_actors, reference)
    np.testing.assert_allclose(by_actors.eval_history, reference.eval_history, rtol=1e-12)  # means: float64 rounding


@pytest.mark.parametrize("mode, root_waits", [("i16", 2), ("f64", 1)])
def test_actor_round_trips(clients, mode, root_waits):
    # the root takes two waits when quantized (the driver reduces the gradient maxima, then
    # the partitions quantize with them and build the root's histogram), then one per level;
    # every partition's histograms reach the driver
    X, y = make_data()
    stats = {}
    model = dask_train(clients[2], X, y, bst.GBDTConfig(n_estimators=2, max_depth=3, histogram_mode=mode,
                                                        growth_strategy="depthwise", subsample=1.0),
                       stats=stats, **ACTORS)
    assert all(np.sum(np.asarray(t.left_child) >= 0) == 7 for t in model.forest.trees)  # full depth-3 trees
    assert stats["round_trips"] == 2 * (root_waits + 3)
    built = 2 * (1 + 1 + 2)  # per tree: the root, the smaller child of the root and of each depth-1 node
    assert stats["partition_bytes"] == 4 * built * 5 * 256 * (8 if mode == "i16" else 16)


def test_actor_steps_survive_recoveries(clients, monkeypatch):
    # lost (as the liveness check sees it) at tree 0's root histogram, at a level of tree 1,
    # at round 1's validation score and at tree 2's last level: the undisturbed model
    X, y = make_data(n=1600, seed=8)
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="i16", growth_strategy="depthwise")

    def run():
        stats = {}
        model = dask_train(clients[2], X[:1200], y[:1200], config, stats=stats, steps="actors",
                           val_set=(da.from_array(X[1200:], chunks=(150, -1)), da.from_array(y[1200:], chunks=150)))
        return model, stats

    undisturbed, _ = run()
    # waits per tree 5 (2 at the root), validation 1: tree 0 1-5 (lost at 2, again 3-7),
    # validation 8, tree 1 9-13 (lost at 11, again 12-16), validation 17 (lost, again 18),
    # tree 2 19-23 (lost at 23, again 24-28), validation 29
    lose_a_worker_at(monkeypatch, {2, 11, 17, 23})
    model, stats = run()
    assert stats["recoveries"] == 4
    assert all(np.sum(np.asarray(t.left_child) >= 0) == 7 for t in model.forest.trees)  # the waits are as counted
    assert_same_trees(model, undisturbed)
    assert model.eval_history == undisturbed.eval_history
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], y[:1200]), config)
    assert_same_trees(model, reference)


def test_actor_steps_survive_a_killed_worker_process(monkeypatch):
    # a worker process holding partitions (and an actor) dies in the middle of tree 1: the
    # actor call fails or never answers, Dask recomputes the lost states, a new actor starts
    # on the worker now holding them, the tree grows again: the single-machine model
    X, y = make_data(n=1200, seed=9)
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="i16")

    lose_a_worker_at(monkeypatch, {7}, kill_first_worker)  # tree 1's first level (waits 1-5 tree 0, 6-7 tree 1's root)
    stats = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        model = train(client, da.from_array(X, chunks=(CHUNKS, 5)), da.from_array(y, chunks=CHUNKS), config,
                      stats=stats, **ACTORS)
    assert stats["recoveries"] >= 1
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    assert_same_trees(model, reference)
    assert np.array_equal(model.predict(X), reference.predict(X))


def test_estimator_takes_steps(clients):
    X, y = make_data(seed=5)
    y = (y > np.median(y)).astype(int)
    Xd, yd = da.from_array(X, chunks=(CHUNKS, -1)), da.from_array(y, chunks=CHUNKS)
    by_tasks = DaskGBDTClassifier(n_estimators=3, max_depth=3, client=clients[2]).fit(Xd, yd)
    by_actors = DaskGBDTClassifier(n_estimators=3, max_depth=3, client=clients[2], steps="actors").fit(Xd, yd)
    assert by_actors.get_params()["steps"] == "actors"
    assert_same_trees(by_actors.booster_, by_tasks.booster_)


def test_bad_steps(clients):
    X, y = make_data()
    with pytest.raises(ValueError, match="steps"):
        dask_train(clients[1], X, y, bst.GBDTConfig(n_estimators=1), steps="sockets")


def on_one_worker(client, X, y, worker):
    """X and y as Dask arrays whose blocks are all on `worker`, under new keys: from_array's
    default keys hash the data, and the same data an earlier test of this cluster persisted
    may still be held (on any worker) until its futures are collected, so persist would find
    them there instead of putting them on `worker`."""
    arrays = [da.from_array(X, chunks=(CHUNKS, -1), name=False), da.from_array(y, chunks=CHUNKS, name=False)]
    return client.persist(arrays, workers=[worker])


def test_balanced_keeps_holders_and_moves_only_the_surplus():
    assert balanced(["a", "a", "b", "b"], ["a", "b"]) == ["a", "a", "b", "b"]
    assert balanced(["a", "a", "a", "a"], ["a", "b"]) == ["a", "a", "b", "b"]
    assert balanced(["a", "a", "a", "b", "b"], ["a", "b", "c"]) == ["a", "a", "c", "b", "b"]
    assert balanced(["a", "a", "a"], ["a", "b", "c"]) == ["a", "c", "b"]
    assert balanced(["a", "b"], []) == ["a", "b"]


@pytest.mark.parametrize("steps", ["tasks", "actors"])
def test_a_recovery_spreads_crowded_partitions(clients, monkeypatch, steps):
    # every partition on one of two workers (as after a loss, before a replacement joins):
    # a recovery rebuilds half of them on the other worker; the model does not change
    X, y = make_data()
    client = clients[2]
    first = sorted(client.scheduler_info()["workers"])[0]
    Xd, yd = on_one_worker(client, X, y, first)
    config = bst.GBDTConfig(n_estimators=2, max_depth=3, histogram_mode="i16")
    lose_a_worker_at(monkeypatch, {2})
    stats = {}
    with pytest.warns(UserWarning, match="held by 1 of the 2 workers"):
        model = train(client, Xd, yd, config, stats=stats, steps=steps)
    assert stats["recoveries"] == 1 and stats["partition_workers"] == 2
    assert_same_trees(model, bst.GBDTModel.train(bst.Dataset(X, y), config))


def test_a_state_pickles_to_its_partition_data_only():
    # Dask moving (or spilling) a state pickles it: it comes back as a rebuilt state (no
    # row partition, tree -1), which training refuses and recovery rebuilds
    import pickle
    from boosters.dask import _partition_state as tasks
    from boosters.data.binning import BinMapper
    from boosters.objectives.registry import make_objective

    X, y = make_data(n=300)
    state = tasks.make_state(X, y, None, BinMapper().fit(X), make_objective(bst.Objective.squared()), np.zeros(1),
                             tasks.Settings(np.arange(5, dtype=np.int32), 15, None), 0)
    state.tree = 3
    moved = pickle.loads(pickle.dumps(state))
    assert moved.tree == -1 and moved.n_rows == 300 and np.array_equal(moved.y, state.y)
    with pytest.raises(RuntimeError, match="was lost .* rebuilt from its data"):
        moved.expect(3)


def test_partitions_crowded_on_one_worker_are_warned_of(clients):
    # every block on one of the two workers: that worker trains alone (the other idles)
    X, y = make_data()
    client = clients[2]
    first = sorted(client.scheduler_info()["workers"])[0]
    Xd, yd = on_one_worker(client, X, y, first)
    with pytest.warns(UserWarning, match="held by 1 of the 2 workers"):
        model = train(client, Xd, yd, bst.GBDTConfig(n_estimators=2, max_depth=2), **ACTORS)
    assert_same_trees(model, bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=2, max_depth=2)))


def test_an_error_of_the_step_itself_is_raised_not_recovered(clients, monkeypatch):
    # an OSError raised by the user's custom objective inside an actor call is the step's
    # error: raised as it is, never taken for a lost worker (no recovery)
    def unreadable(margins, dataset):
        raise FileNotFoundError("weights.csv")

    monkeypatch.setattr(Partitions, "recover", lambda *args, **kwargs: pytest.fail("recovered"))
    X, y = make_data()
    with pytest.raises(FileNotFoundError, match="weights.csv"):
        dask_train(clients[2], X, y, bst.GBDTConfig(n_estimators=1, objective=bst.Objective.custom(unreadable)),
                   **ACTORS)


def test_actor_steps_with_dart(clients):
    X, y = make_data(n=1600, seed=17)
    config = bst.GBDTConfig(n_estimators=8, max_depth=3, histogram_mode="i16", booster="dart", drop_rate=0.4,
                            skip_drop=0.1, learning_rate=0.3)
    model = dask_train(clients[2], X, y, config, **ACTORS)
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    assert_same_trees(model, reference)
