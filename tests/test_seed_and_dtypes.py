"""The seed reaches every random choice (quantized gradients' stochastic rounding, the
binning row sample) and nothing else; the input's float width does not change a model."""

import numpy as np
import pytest

import boosters as bst
from support.tree_compare import differing_tree_arrays


def continuous_data(n, d=4, seed=0, nan_share=0.05):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n)
    X[rng.uniform(size=X.shape) < nan_share] = np.nan
    return X, y


def train(X, y, **params):
    return bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(**params), n_threads=2)


def differing_arrays(a, b):
    """Names of the tree arrays that differ somewhere (the models must have as many trees)."""
    assert a.n_trees == b.n_trees
    return {name for ta, tb in zip(a.trees, b.trees) for name in differing_tree_arrays(ta, tb)}


@pytest.mark.parametrize("mode", ["i16", "i8"])
@pytest.mark.parametrize("renew_leaves", [True, False])
def test_seed_drives_quantized_rounding(mode, renew_leaves):
    X, y = continuous_data(3000)
    params = dict(n_estimators=4, max_depth=5, histogram_mode=mode, renew_leaves=renew_leaves)
    a = train(X, y, seed=1, **params)
    assert differing_arrays(a, train(X, y, seed=1, **params)) == set()
    changed = differing_arrays(a, train(X, y, seed=2, **params))
    # gains come from the rounded gradients; leaf values too unless renewed from the exact ones
    assert "gain" in changed
    if not renew_leaves:
        assert "value" in changed


def test_seed_drives_the_binning_sample():
    """Above 200k rows the bin edges come from a seeded 200k-row sample."""
    X, y = continuous_data(210_000, d=3, nan_share=0.0)
    params = dict(n_estimators=1, max_depth=3, histogram_mode="f64", max_bins=64)
    a = train(X, y, seed=1, **params)
    assert differing_arrays(a, train(X, y, seed=1, **params)) == set()
    assert "threshold" in differing_arrays(a, train(X, y, seed=2, **params))


def test_seed_changes_nothing_without_random_choices():
    """Full-precision histograms, fewer rows than the binning sample: nothing is random."""
    X, y = continuous_data(3000)
    params = dict(n_estimators=4, max_depth=5, histogram_mode="f64", subsample=1.0)
    assert differing_arrays(train(X, y, seed=1, **params), train(X, y, seed=12345, **params)) == set()


@pytest.mark.parametrize("strategy", ["depthwise", "leafwise"])
@pytest.mark.parametrize("mode", ["f64", "i16"])
def test_float32_and_float64_input_train_the_same_model(strategy, mode):
    """Non-integer float32 values, and the same values widened to float64: one model."""
    X, y = continuous_data(4000, d=5, nan_share=0.08)
    X32 = (X * 3.7).astype(np.float32)
    X64 = X32.astype(np.float64)
    assert not np.array_equal(X64, np.round(X64), equal_nan=True)  # really non-integer
    params = dict(n_estimators=5, growth_strategy=strategy, max_depth=5, n_leaves=24, histogram_mode=mode)
    a, b = train(X32, y, **params), train(X64, y, **params)
    assert a.n_trees == b.n_trees == 5
    assert differing_arrays(a, b) == set()
    for X_pred in (X32, X64):
        assert np.array_equal(a.predict_raw(X_pred), b.predict_raw(X_pred))
