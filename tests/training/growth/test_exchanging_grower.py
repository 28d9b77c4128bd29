"""The growth loop over rows that live elsewhere (TreeGrower.exchanging, the engine
boosters.dask runs on the driver): what the loop hands its exchange at each step, how it
records what comes back, and that a failing exchange reaches the caller. The Dask tests
check the whole path against the Dask models as they were and against one machine."""

import numpy as np
import pytest

import boosters as bst
from boosters.data.binned import BinnedMatrix
from boosters.data.binning import BinMapper
from boosters.training.growth.grower import TreeGrower

N_ROWS = 1_000


class Gone(RuntimeError):
    pass


class ScriptedExchange:
    """Machines whose rows always split 300 left, the rest right, and whose leaves'
    float sums are (-1, 2): records every call."""

    def __init__(self, fail_at_step: int = -1):
        self.steps, self.leaf_calls, self.fail_at_step = [], [], fail_at_step

    def step(self, loop, n_splits, n_built, n_leaves):
        if len(self.steps) == self.fail_at_step:
            raise Gone("a worker left")
        self.steps.append((np.asarray(loop.step_splits)[:n_splits].copy(),
                           np.asarray(loop.step_nodes)[:n_built].copy(), n_leaves))
        np.asarray(loop.step_counts)[:n_splits] = 300
        np.asarray(loop.leaf_sums)[:n_leaves] = (-1.0, 2.0)

    def leaf_sums(self, loop, n_leaves):
        nodes = np.asarray(loop.step_nodes)[:n_leaves].copy()
        self.leaf_calls.append(nodes)
        np.asarray(loop.leaf_sums)[:n_leaves] = (-1.0, 2.0)


def engine(exchange, **settings):
    mapper = BinMapper(max_bins=4).fit(np.linspace(0.0, 1.0, 50).reshape(-1, 1))  # 3 value bins + missing
    # depth-wise (boosters' default growth before version 0.2): a depth-1 tree's children
    # come with its only, and last, step
    config = bst.GBDTConfig(**{"n_estimators": 1, "growth_strategy": "depthwise", "max_depth": 1,
                               "min_samples_leaf": 1, **settings})
    return TreeGrower.exchanging(exchange, BinnedMatrix.allocate(0, mapper.n_bins), mapper, config, N_ROWS, 1,
                                 settings.get("histogram_mode", "f64"))


def root_histogram(grower):
    """Bin 1: 300 rows of gradient -1; bins 2 and 3: 700 rows of gradient +1 (hessian 1)."""
    histogram = np.zeros_like(grower.pool.data[0])
    histogram[1] = (-300.0, 300.0)
    histogram[2] = (350.0, 350.0)
    histogram[3] = (350.0, 350.0)
    return histogram


def test_a_step_sends_the_split_builds_nothing_at_the_depth_limit_and_records_the_counts_it_gets():
    exchange = ScriptedExchange()
    grower = engine(exchange)
    grower.pool.data[0] = root_histogram(grower)
    tree = grower.grow_exchanged(0, 0, N_ROWS, 0.5)
    (splits, built, n_leaves), = exchange.steps
    # parent 0, feature 0, bin 1 (bins 1.. go left), left 1, right 2, not categorical
    assert splits[:, [0, 1, 2, 4, 5, 6]].tolist() == [[0, 0, 1, 1, 2, 0]]
    assert built.size == 0 and n_leaves == 0  # children at max_depth are leaves; float64: no renewal
    assert tree.n_samples.tolist() == [N_ROWS, 300, 700]
    assert tree.cover.tolist() == [1000.0, 300.0, 700.0]
    # Newton leaves, times the learning rate: -lr * G / (H + l2)
    np.testing.assert_allclose(tree.value[1:], [0.5 * 300 / (300 + 1.0), -0.5 * 700 / (700 + 1.0)], rtol=1e-15)


def test_the_smaller_child_by_hessian_is_built_and_the_larger_one_subtracted():
    exchange = ScriptedExchange()
    grower = engine(exchange, max_depth=2)

    def step(loop, n_splits, n_built, n_leaves):
        ScriptedExchange.step(exchange, loop, n_splits, n_built, n_leaves)
        for node in np.asarray(loop.step_nodes)[:n_built]:
            grower.pool.data[node] = 0.0
            grower.pool.data[node, 1] = (-300.0, 300.0)
    exchange.step = step
    grower.pool.data[0] = root_histogram(grower)
    tree = grower.grow_exchanged(0, 0, N_ROWS, 0.5)
    first_built = exchange.steps[0][1]
    assert first_built.tolist() == [1]  # the left child: hessian 300 of 1000
    # the right child's histogram is the root's minus the left one's: bins 2 and 3 only
    np.testing.assert_array_equal(grower.pool.data[2, 1:], [(0.0, 0.0), (350.0, 350.0), (350.0, 350.0)])
    assert tree.split_feature[0] == 0 and tree.n_samples[0] == N_ROWS


def test_quantized_training_gets_the_leaves_float_sums_with_the_last_step():
    exchange = ScriptedExchange()
    grower = engine(exchange, histogram_mode="i16", renew_leaves=True)
    words = np.zeros(grower.pool.data.shape[1], dtype=np.int64)
    for b, (g, h) in {1: (-300, 300), 2: (350, 350), 3: (350, 350)}.items():
        words[b] = (g << 32) + h
    grower.pool.data[0] = words
    grower.builder.scales[:] = (1.0, 1.0)
    tree = grower.grow_exchanged(0, 0, N_ROWS, 0.5)
    (_, built, n_leaves), = exchange.steps
    assert built.size == 0 and n_leaves == 2  # the two children, with the last (and only) step
    assert exchange.leaf_calls == []
    assert tree.cover.tolist()[1:] == [2.0, 2.0]  # the sums the exchange brought


def test_a_single_leaf_asks_for_its_float_sums():
    exchange = ScriptedExchange()
    grower = engine(exchange)
    tree = grower.grow_exchanged(0, 0, 1, 0.5)  # one row: nothing to split
    assert exchange.steps == [] and [c.tolist() for c in exchange.leaf_calls] == [[0]]
    assert tree.n_samples.tolist() == [1] and tree.cover.tolist() == [2.0]


def test_what_the_exchange_raises_reaches_the_caller_and_the_next_tree_grows():
    exchange = ScriptedExchange(fail_at_step=0)
    grower = engine(exchange)
    grower.pool.data[0] = root_histogram(grower)
    with pytest.raises(Gone, match="a worker left"):
        grower.grow_exchanged(0, 0, N_ROWS, 0.5)
    exchange.fail_at_step = -1
    grower.pool.data[0] = root_histogram(grower)
    assert grower.grow_exchanged(0, 1, N_ROWS, 0.5).n_samples.tolist() == [N_ROWS, 300, 700]


def test_an_exchanging_grower_needs_no_rows_and_refuses_local_growth():
    grower = engine(ScriptedExchange())
    with pytest.raises(ValueError, match="grow_exchanged"):
        grower.grow_rounds(0, 1)
