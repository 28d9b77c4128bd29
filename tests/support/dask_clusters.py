"""boosters.dask's tests' shared pieces: the clusters (the clients fixture), the data, training
on Dask arrays, lost workers."""

import os

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster

import boosters as bst
from boosters.dask import train
from boosters.dask._driver import LostWorker, Partitions


CHUNKS = 350  # 4 partitions of 1200 rows, the last one short (first-row offsets are exercised)


def no_stealing():
    """Dask's config without work stealing, for the clusters made in its `with` block."""
    return dask.config.set({"distributed.scheduler.work-stealing": False})


@pytest.fixture(scope="module")
def clients():
    """In-process clusters of 1, 2 and 4 single-threaded workers, without work stealing
    (tests place partitions on purpose, on one worker; a loaded machine would otherwise
    see Dask move some of their tasks to the idle one)."""
    with no_stealing():
        clusters = {n: LocalCluster(n_workers=n, threads_per_worker=1, processes=False, dashboard_address=":0")
                    for n in (1, 2, 4)}
    out = {n: Client(cluster, set_as_default=False) for n, cluster in clusters.items()}
    yield out
    for n in out:
        out[n].close()
        clusters[n].close()


def make_data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    signal = np.nan_to_num(X[:, 0]) - 2 * np.nan_to_num(X[:, 1]) + 0.3 * rng.normal(size=n)
    return X, np.round(8 * signal) / 8


def objective_labels(name, y):
    """make_data's labels (multiples of 1/8) made valid for the objective, still exact in
    the base score's sums: 0/1, >= 0, > 0, or three classes 0, 1, 2."""
    if name in ("logistic", "hinge"):
        return (y > 0).astype(np.float64)
    if name in ("poisson", "tweedie"):
        return np.maximum(y, 0.0)
    if name == "gamma":
        return np.abs(y) + 0.125
    if name in ("softmax", "one_vs_rest"):
        return np.digitize(y, [-1.0, 1.0]).astype(np.float64)
    return y


def dask_train(client, X, y, config, weights=None, chunks=CHUNKS, **kwargs):
    """boosters.dask.train of numpy data cut into Dask partitions of `chunks` rows."""
    w = None if weights is None else da.from_array(weights, chunks=chunks)
    return train(client, da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=chunks), config, weights=w,
                 **kwargs)


DEPTHWISE, LEAFWISE = bst.GrowthStrategy.Depthwise, bst.GrowthStrategy.Leafwise

GOSS = dict(goss_top_rate=0.2, goss_other_rate=0.1, learning_rate=0.5)  # 2 warm-up rounds, then GOSS


def train_with_validation(client, X, y, config, **kwargs):
    """(model, stats) of dask_train on the first 1200 rows, the rest the validation set."""
    stats = {}
    model = dask_train(client, X[:1200], y[:1200], config, stats=stats,
                       val_set=(da.from_array(X[1200:], chunks=(150, -1)), da.from_array(y[1200:], chunks=150)),
                       **kwargs)
    return model, stats


def kill_first_worker(partitions):
    """Kill the process of the worker holding the first partition (for lose_a_worker_at)."""
    try:
        partitions.client.run(os._exit, 1, workers=[partitions.workers[0]])
    except Exception:  # the worker dies before it answers
        pass


def lose_a_worker_at(monkeypatch, waits: set, kill=None):
    """For the driver's paths (steps="tasks" or "actors"; the engines' are
    test_worker_engine's): from the driver's waits numbered `waits` (1, 2, ... over the
    training and the validation partitions), each time: the step's tasks submitted, then `kill(partitions)`
    or, without one, LostWorker raised as the liveness check raises it (every worker
    stays: the recovery then rebuilds live states only)."""
    gather, count = Partitions.gather, [0]

    def gather_then_lose(self, futures, histograms=-1):
        count[0] += 1
        if count[0] in waits:
            if kill is None:
                raise LostWorker("simulated")
            kill(self)
        return gather(self, futures, histograms)

    monkeypatch.setattr(Partitions, "gather", gather_then_lose)
