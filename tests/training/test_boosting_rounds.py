"""Boosting rounds grown without the GIL, several per nogil block (training/_rounds.pyx):
how the rounds are grouped into blocks never changes a model, and the margins the rounds
keep are the model's predictions."""

import numpy as np
import pytest

import boosters as bst
from boosters.bench.datasets import make_covertype, make_friedman
from boosters.model.prediction import predict_tree
from boosters.objectives.registry import make_objective
from boosters.training.growth import grower as grower_module
from boosters.training.growth.grower import TreeGrower
from support.tree_compare import assert_same_model, assert_same_tree_list

N_ROUNDS = 10
CASES = {
    "squared f64 leaf-wise": (bst.Objective.squared(), dict(histogram_mode="f64", growth_strategy="leafwise",
                                                             max_depth=None, n_leaves=15)),
    "softmax i16 depth-wise": (bst.Objective.softmax(7), dict(histogram_mode="i16", growth_strategy="depthwise",
                                                               max_depth=3)),
    "logistic i8 leaf-wise": (bst.Objective.logistic(), dict(histogram_mode="i8", growth_strategy="leafwise",
                                                              max_depth=None, n_leaves=15)),
}


def data(objective):
    if objective.name == "softmax":
        return make_covertype(6_000, seed=4)
    X, y = make_friedman(6_000, 8, seed=4)
    if objective.name == "logistic":
        y = (y > np.median(y)).astype(np.float64)
    return X, y


def train_recording_blocks(monkeypatch, objective, settings, val=False):
    """The model, and how many rounds each nogil block grew."""
    grow, blocks = TreeGrower.grow_rounds, []

    def grow_and_record(self, first_round, n_rounds):
        rounds = grow(self, first_round, n_rounds)
        blocks.append(len(rounds))
        return rounds

    monkeypatch.setattr(TreeGrower, "grow_rounds", grow_and_record)
    X, y = data(objective)
    config = bst.GBDTConfig(n_estimators=N_ROUNDS, learning_rate=0.3, objective=objective, **settings)
    val_set = bst.Dataset(X[:1000], y[:1000]) if val else None
    model = bst.GBDTModel.train(bst.Dataset(X[1000:], y[1000:]), config, val_set=val_set, n_threads=1)
    return model, blocks


@pytest.mark.parametrize("name", sorted(CASES))
def test_rounds_in_blocks_give_the_model_of_rounds_one_at_a_time(monkeypatch, name):
    """Exactly the same trees (quantized: each tree's seed is its number in the training,
    whatever block it grows in) with one round per block, all rounds in one block, and
    blocks cut by the node budget (3 rounds: 3 + 3 + 3 + 1)."""
    objective, settings = CASES[name]
    monkeypatch.setattr(grower_module, "BLOCK_SECONDS", 0.0)  # a block stops after its first round
    one_at_a_time, blocks = train_recording_blocks(monkeypatch, objective, settings)
    assert blocks == [1] * N_ROUNDS
    monkeypatch.setattr(grower_module, "BLOCK_SECONDS", float("inf"))
    all_at_once, blocks = train_recording_blocks(monkeypatch, objective, settings)
    assert blocks == [N_ROUNDS]
    max_nodes = 2 * settings["n_leaves"] - 1 if "n_leaves" in settings else 2 ** (settings["max_depth"] + 1) - 1
    monkeypatch.setattr(grower_module, "BLOCK_NODES", 3 * objective.n_outputs * max_nodes)
    in_threes, blocks = train_recording_blocks(monkeypatch, objective, settings)
    assert blocks == [3, 3, 3, 1]
    assert len(one_at_a_time.trees) == N_ROUNDS * objective.n_outputs
    assert max(t.n_nodes for t in one_at_a_time.trees) > 5  # real trees
    for other in (all_at_once, in_threes):
        assert_same_model(other, one_at_a_time)


def test_a_validation_set_grows_one_round_per_block(monkeypatch):
    """Each round's trees are evaluated on the validation set before the next round."""
    objective, settings = CASES["squared f64 leaf-wise"]
    monkeypatch.setattr(grower_module, "BLOCK_SECONDS", float("inf"))
    model, blocks = train_recording_blocks(monkeypatch, objective, settings, val=True)
    assert blocks == [1] * N_ROUNDS
    assert len(model.eval_history) == N_ROUNDS


@pytest.fixture
def grower_setup():
    """A TreeGrower on 3,000 rows of squared error, its margins and gradient kernel."""
    X, y = make_friedman(3_000, 6, seed=8)
    config = bst.GBDTConfig(n_estimators=20, growth_strategy="leafwise", max_depth=None, n_leaves=8,
                            histogram_mode="f64", learning_rate=0.5)
    mapper, binned = bst.Dataset(X, y).binned(config.max_bins, config.seed, config.enable_bundling, 1)
    margins = np.full((1, len(y)), y.mean())
    kernel = make_objective(config.objective).gradient_kernel(margins, y, None, np.empty((1, len(y), 2), np.float32), 1)
    return X, y, config, mapper, binned, margins, kernel


def test_a_block_stops_after_max_seconds_and_the_margins_follow_the_trees(grower_setup):
    X, y, config, mapper, binned, margins, kernel = grower_setup
    base = margins[0, 0]
    grower = TreeGrower(binned, mapper, config, 1, kernel, margins)
    rounds = grower.rounds
    assert rounds.max_rounds == config.n_estimators
    assert rounds.grow_block(0, 5, 0.0) == 1  # the time is up after the first round
    assert rounds.grow_block(1, 5, float("inf")) == 5
    with pytest.raises(ValueError, match="n_rounds"):
        rounds.grow_block(6, 0, 1.0)
    with pytest.raises(ValueError, match="n_rounds"):
        rounds.grow_block(6, config.n_estimators + 1, 1.0)
    late = [round_[0] for round_ in grower.grow_rounds(6, 3)]  # rounds 6-8
    # the same 9 rounds in one block, from the start
    replayed = np.full((1, len(y)), base)
    replay = TreeGrower(binned, mapper, config, 1, make_objective(config.objective).gradient_kernel(
        replayed, y, None, np.empty((1, len(y), 2), np.float32), 1), replayed)
    trees = [round_[0] for round_ in replay.grow_rounds(0, 9)]
    assert len(trees) == 9
    assert_same_tree_list(trees[6:], late)
    np.testing.assert_array_equal(replayed, margins)
    # the rounds add leaf values through the partition (bins), the model walks the value
    # thresholds: the same leaves, so equal up to the order of the float64 additions
    predicted = base + sum(predict_tree(t, X, 1) for t in trees)
    np.testing.assert_allclose(margins[0], predicted, rtol=1e-12, atol=1e-12)
    assert np.ptp(margins) > 1.0  # the trees moved the margins


def test_the_margins_must_be_those_the_gradient_kernel_reads(grower_setup):
    X, y, config, mapper, binned, margins, kernel = grower_setup
    with pytest.raises(ValueError, match="margins must be the array"):
        TreeGrower(binned, mapper, config, 1, kernel, margins.copy())
