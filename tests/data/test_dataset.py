"""Dataset.binned: the binned form is public, cached per binning setting, and never stale
after the caller changes X or the weights in place."""

import numpy as np
import pytest

import boosters as bst
from boosters.data.binning import BinMapper
from boosters.data.bundling import bin_and_bundle
from boosters.data.fingerprint import fingerprint


def data(n=2000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X[:, 0] + np.sin(2 * X[:, 1]) + 0.1 * rng.normal(size=n)


def test_binned_is_the_binning_of_x():
    X, y = data()
    ds = bst.Dataset(X, y)
    mapper, binned = ds.binned(max_bins=64, seed=3, bundling=False, n_threads=2)
    want = BinMapper(64, seed=3).fit(X, None, 2)
    np.testing.assert_array_equal(binned.to_dense(), want.transform(X, 2).to_dense())
    for got, expected in zip(mapper.upper_edges, want.upper_edges):
        np.testing.assert_array_equal(got, expected)
    _, bundled = ds.binned(max_bins=64, seed=3, bundling=True)
    np.testing.assert_array_equal(bundled.to_dense(), bin_and_bundle(want, X, 2, want.sample_rows).to_dense())


def test_binned_is_cached_per_setting():
    X, y = data()
    ds = bst.Dataset(X, y)
    first = ds.binned(max_bins=32, seed=1)
    assert ds.binned(max_bins=32, seed=1, n_threads=1) is first  # the thread count does not change bins
    other = ds.binned(max_bins=16, seed=1)
    assert other is not first and max(other[0].n_bins) <= 16
    assert ds.binned(max_bins=32, seed=1) is first  # both settings kept


def test_binned_rejects_bad_settings():
    X, y = data(n=50)
    ds = bst.Dataset(X, y)
    with pytest.raises(ValueError, match="max_bins"):
        ds.binned(max_bins=1)
    with pytest.raises(TypeError, match="bundling"):
        ds.binned(bundling="yes")


def test_in_place_change_of_x_is_seen_by_the_next_training():
    """Train, change X in place, train again: the second model is the model of the new X
    (it was trained on the stale cached bins before the fingerprint)."""
    X, y = data()
    ds = bst.Dataset(X, y)
    cfg = bst.GBDTConfig(n_estimators=5, max_depth=3)
    before = bst.GBDTModel.train(ds, config=cfg)
    mapper_before = ds.binned(cfg.max_bins, cfg.seed, cfg.enable_bundling)[0]
    X[:, 0] = -3 * X[:, 0] + 10  # the caller's array, referenced by the Dataset
    after = bst.GBDTModel.train(ds, config=cfg)
    fresh = bst.GBDTModel.train(bst.Dataset(X.copy(), y), config=cfg)
    assert after.to_bytes() == fresh.to_bytes()
    assert np.array_equal(after.predict(X), fresh.predict(X))
    assert not np.array_equal(after.predict(X), before.predict(X))
    assert ds.binned(cfg.max_bins, cfg.seed, cfg.enable_bundling)[0] is not mapper_before


def test_in_place_change_of_one_value_rebins():
    X, y = data(n=500)
    ds = bst.Dataset(X, y)
    first = ds.binned()
    X[123, 2] = 1e6  # a single new value: a new top edge
    second = ds.binned()
    assert second is not first
    assert second[0].upper_edges[2][-2] > first[0].upper_edges[2][-2]
    assert ds.binned() is second  # unchanged since: cached again


def test_in_place_change_of_weights_rebins():
    X, y = data(n=500)
    w = np.ones(len(y))
    ds = bst.Dataset(X, y, weights=w)
    first = ds.binned(max_bins=8)
    w[: len(w) // 2] = 100.0  # bin edges follow the weighted quantiles
    second = ds.binned(max_bins=8)
    assert second is not first
    want = BinMapper(8, seed=42).fit(X, w, 1)
    for got, expected in zip(second[0].upper_edges, want.upper_edges):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_fingerprint_sees_any_change(layout):
    rng = np.random.default_rng(1)
    base = rng.normal(size=(3000, 600))  # > 8 MiB: several chunks, threaded
    X = {"C": base, "F": np.asfortranarray(base), "strided": base[:, ::2]}[layout]
    before = fingerprint(X, n_threads=2)
    assert fingerprint(X, n_threads=1) == before  # the thread count does not matter
    for row, col in [(0, 0), (1500, 100), (2999, X.shape[1] - 1)]:
        old = X[row, col]
        X[row, col] = np.nextafter(old, np.inf)  # the smallest change
        assert fingerprint(X, n_threads=2) != before, (row, col)
        X[row, col] = old
        assert fingerprint(X, n_threads=2) == before
    assert fingerprint(X.astype(np.float32)) != before


def test_lightgbms_dataset_names():
    # lgb.Dataset(X, label=y, weight=w, feature_name=..., categorical_feature=..., reference=train)
    # carries over: the same Dataset as boosters' names; a name with its alias is refused
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    X[:, 2] = rng.integers(0, 4, size=50)
    y, w = rng.normal(size=50), rng.uniform(0.5, 2.0, size=50)
    own = bst.Dataset(X, y, weights=w, feature_names=["a", "b", "c"], categorical_features=["c"])
    theirs = bst.Dataset(X, label=y, weight=w, feature_name=["a", "b", "c"], categorical_feature=["c"],
                         reference=own)
    assert np.array_equal(theirs.y, own.y) and np.array_equal(theirs.weights, own.weights)
    assert theirs.feature_names == own.feature_names and theirs.categorical_features == own.categorical_features == [2]
    with pytest.raises(ValueError, match="y and label are the same parameter"):
        bst.Dataset(X, y, label=y)
    with pytest.raises(TypeError, match="reference must be a Dataset"):
        bst.Dataset(X, y, reference=X)
