"""Trainings in several Python threads at once: boosting rounds grow without the GIL
(several per nogil block without a validation set, one per block with one), so two
trainings really run side by side, and each must give exactly the model it gives alone
(no state shared between trainings, nothing that depends on the other thread)."""

import numpy as np
import pytest

import boosters as bst
from boosters.bench.datasets import make_covertype, make_friedman
from support.tree_compare import assert_same_model
from support.threads import in_threads

CONFIGS = {
    "f64 leaf-wise": dict(histogram_mode="f64", growth_strategy="leafwise", max_depth=None, n_leaves=31),
    "i16 depth-wise": dict(histogram_mode="i16", growth_strategy="depthwise", max_depth=5),
    "i8 leaf-wise, LRU pool": dict(histogram_mode="i8", growth_strategy="leafwise", max_depth=None, n_leaves=31,
                                   cache_size=6, quantization_levels=7),
}


def train(X, y, objective, settings, n_threads):
    config = bst.GBDTConfig(n_estimators=12, learning_rate=0.2, objective=objective, **settings)
    return bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=n_threads)


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("n_threads", [1, 2])
def test_two_trainings_in_two_threads_equal_sequential_ones(name, n_threads):
    X1, y1 = make_friedman(20_000, 10, seed=1)
    X2, y2 = make_covertype(15_000, seed=2)
    jobs = [lambda: train(X1, y1, bst.Objective.squared(), CONFIGS[name], n_threads),
            lambda: train(X2, y2, bst.Objective.softmax(7), CONFIGS[name], n_threads)]
    sequential = [job() for job in jobs]
    concurrent = in_threads(jobs)
    for alone, beside in zip(sequential, concurrent):
        assert_same_model(alone, beside)
    assert len(sequential[1].trees) == 12 * 7  # one tree per class and round


def test_the_same_training_in_two_threads_gives_one_model():
    X, y = make_friedman(20_000, 10, seed=3)
    X[np.random.default_rng(3).random(X.shape) < 0.05] = np.nan
    job = lambda: train(X, y, bst.Objective.squared(), CONFIGS["i16 depth-wise"], 1)  # noqa: E731
    a, b = in_threads([job, job])
    assert_same_model(a, b)
    assert_same_model(a, job())


def test_trainings_with_validation_sets_in_two_threads_equal_sequential_ones():
    """With a validation set, each round's trees are evaluated between rounds (one round
    per nogil block, the validation margins with the GIL); early stopping picks the same
    round."""
    X1, y1 = make_friedman(20_000, 10, seed=4)
    X2, y2 = make_covertype(15_000, seed=5)

    def job(X, y, objective, settings):
        config = bst.GBDTConfig(n_estimators=30, learning_rate=0.5, objective=objective, early_stopping_rounds=3,
                                **settings)
        return bst.GBDTModel.train(bst.Dataset(X[3000:], y[3000:]), config, val_set=bst.Dataset(X[:3000], y[:3000]),
                                   n_threads=1)

    jobs = [lambda: job(X1, y1, bst.Objective.squared(), CONFIGS["f64 leaf-wise"]),
            lambda: job(X2, y2, bst.Objective.softmax(7), CONFIGS["i16 depth-wise"])]
    sequential = [j() for j in jobs]
    concurrent = in_threads(jobs)
    for alone, beside in zip(sequential, concurrent):
        assert_same_model(alone, beside)
        assert alone.best_iteration == beside.best_iteration
        assert alone.eval_history == beside.eval_history  # every round's validation score, exactly
        assert len(alone.eval_history) < 30  # early stopping stopped it
    assert len(sequential[1].trees) % 7 == 0
