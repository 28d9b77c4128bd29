"""boosters.dask with many partitions per worker: each worker sums its own partitions'
results before anything travels, in an order that keeps the models bit for bit those of
any other partitioning of the rows (integer sums) or of any other placement of the
partitions (float sums: the fixed tree over the partitions). The data and helpers are
test_dask's."""

import numpy as np
import pytest

import boosters as bst
from boosters.dask import _partition_state as tasks
from boosters.dask._driver import DRIVER_FANIN, DriverSum
from boosters.dask._reduction import localized, pairwise_levels, parts_by_worker, reduction_tree
from boosters.dask._step_runner import fold
from support.dask_clusters import clients, dask_train, make_data  # noqa: F401
from support.tree_compare import assert_same_trees

PLACEMENTS = {"one worker": ["a"] * 13, "contiguous": ["a"] * 7 + ["b"] * 6, "interleaved": ["a", "b"] * 6 + ["a"],
              "scattered": list("abcabbcaacbcb")}


def summed_as_the_training_sums(values, workers, any_order, keep):
    """The sum of values[i] (partition i on workers[i]) as Partitions.summed adds them: each
    worker's held parts by `fold`, the rest by a DriverSum (the values stand for results).
    It rebuilds Partitions.summed from the same helpers, so the two tests using it are unit
    tests of the helpers; a drift in Partitions.summed itself fails the end-to-end tests
    below (the models of many partitions against single-machine training)."""
    trees = reduction_tree(workers, any_order, keep)
    parts = parts_by_worker(trees, workers)
    sums = {}
    for worker, held in parts.items():
        indices, local = localized(held)
        assert all(workers[i] == worker for i in indices)
        for tree, positions in zip(held, local):
            sums[tree] = fold(lambda v: v, [values[i] for i in indices], (), [()] * len(indices), positions, tasks.add)

    driver = DriverSum(trees, sums, tasks.add)
    return driver.finish(driver.futures), parts


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_float_sums_keep_the_fixed_order_wherever_the_partitions_are(placement):
    # float64 values of widely spread magnitudes, whose sum depends on the order of addition:
    # whichever worker holds which partition, the workers' parts and the driver's additions
    # add them in the order of pairwise_levels over the partitions, bit for bit
    rng = np.random.default_rng(0)
    values = [rng.normal(size=8) * 10.0 ** rng.integers(-12, 12, size=8) for _ in range(13)]
    expected = pairwise_levels(values, tasks.add)[0]
    assert not np.array_equal(expected, pairwise_levels(values[::-1], tasks.add)[0])  # the order shows
    workers = PLACEMENTS[placement]
    for keep in (DRIVER_FANIN, 1):  # tasks (the driver adds the last few sums), actors (the driver adds the rest)
        total, parts = summed_as_the_training_sums(values, workers, False, keep)
        assert np.array_equal(total, expected)
    if placement in ("one worker", "contiguous"):  # a worker holding neighbours sends a few sums, not one each
        assert sum(len(held) for held in parts.values()) <= (1 if placement == "one worker" else len(values) // 2)


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_integer_sums_are_one_per_worker(placement):
    rng = np.random.default_rng(1)
    values = [rng.integers(-2 ** 40, 2 ** 40, size=8) for _ in range(13)]
    workers = PLACEMENTS[placement]
    total, parts = summed_as_the_training_sums(values, workers, True, DRIVER_FANIN)
    assert np.array_equal(total, np.sum(values, axis=0))
    assert sorted(parts) == sorted(set(workers)) and all(len(held) == 1 for held in parts.values())


@pytest.mark.parametrize("steps, renew_leaves", [("tasks", False), ("actors", False), ("tasks", True),
                                                 pytest.param("actors", True, marks=pytest.mark.slow)])
def test_many_partitions_cost_the_driver_what_few_do(clients, steps, renew_leaves):  # noqa: F811
    # the same rows in 2 and in 12 partitions on 2 workers, quantized: the same model, and
    # the same round trips and tasks (or actor calls): each worker sends one sum per step
    # whatever number of partitions it holds; the same bytes at the driver too, but for
    # the renewed leaves' float sums (one per partition, added by the driver in order)
    X, y = make_data()
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="i16", renew_leaves=renew_leaves)
    few, many = {}, {}
    few_model = dask_train(clients[2], X, y, config, chunks=600, stats=few, steps=steps)
    many_model = dask_train(clients[2], X, y, config, chunks=100, stats=many, steps=steps)
    assert_same_trees(many_model, few_model)
    assert few["partition_workers"] == many["partition_workers"] == 2
    assert many["round_trips"] == few["round_trips"]
    leaf_sums = 3 * (12 - 2) * 8 * 2 * 8 if renew_leaves else 0  # per tree and partition: 8 leaves' (g, h)
    assert many["driver_bytes"] == few["driver_bytes"] + leaf_sums
    assert many["step_tasks"] == few["step_tasks"]


def test_float64_sums_with_many_partitions_equal_single_machine_training(clients):  # noqa: F811
    # float64 histograms and renewed leaf sums over 12 partitions on 2 and 4 workers: the
    # fixed tree over the partitions, so the same trees on any number of workers, and
    # those of one machine (labels in multiples of 1/8)
    X, y = make_data()
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="f64")
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    for n_workers in (2, 4):
        assert_same_trees(dask_train(clients[n_workers], X, y, config, chunks=100), reference)
    quantized = config.replace(histogram_mode="i16")  # the last step's float leaf sums: the fixed tree
    assert_same_trees(dask_train(clients[4], X, y, quantized, chunks=100),
                      bst.GBDTModel.train(bst.Dataset(X, y), quantized))
