"""Exclusive feature bundling: lossless storage, exact feature histograms, same trees."""

import numpy as np
import pytest

import boosters as bst
from boosters.data.binning import BinMapper
from boosters.data.bundling import MAX_BUNDLE_BINS, bundle_features, find_bundles
from boosters.bench.datasets import make_covertype
from boosters._testing.kernels import build_histogram_contiguous, find_best_splits, node_rows, split
from boosters.training._partition import RowPartitioner
from boosters.training._split import FloatSplitFinder

from naive import naive_best_split, naive_histogram


def one_hot_data(n=6000, seed=0):
    """3 dense columns, a 5-way one-hot group, a 12-way one-hot group with NaNs."""
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(n, 3))
    a = rng.integers(0, 5, n)
    b = rng.integers(0, 12, n)
    onehot_a = np.eye(5)[a]
    onehot_b = np.eye(12)[b]
    onehot_b[rng.random(n) < 0.05, 3] = np.nan  # missing values in one member
    X = np.column_stack([dense, onehot_a, onehot_b])
    y = dense[:, 0] + (a == 2) * 1.5 - (b == 7) * 2.0 + (b == 3) * dense[:, 1] + rng.normal(size=n) * 0.2
    return X, y


@pytest.fixture(scope="module")
def binned_pair():
    X, y = one_hot_data()
    mapper = BinMapper().fit(X)
    plain = mapper.transform(X)
    return mapper, plain, bundle_features(plain, mapper.is_usable), y


def test_one_hot_groups_become_bundles_and_dense_features_stay_alone(binned_pair):
    mapper, plain, bundled, _ = binned_pair
    bundles, _ = find_bundles(plain, mapper.is_usable)
    members = sorted(tuple(b) for b in bundles)
    # all one-hot columns are exclusive within their group; the greedy may merge the two
    # groups' columns only where they never co-occur, which one-hot groups always do
    assert all(set(b) <= set(range(3, 20)) for b in members)
    assert bundled.n_columns < plain.n_columns
    for f in range(3):
        assert not bundled.is_bundled(f)
    assert all(n <= MAX_BUNDLE_BINS for n in bundled.column_n_bins)


def test_bundled_members_are_never_non_default_in_the_same_row(binned_pair):
    mapper, plain, bundled, _ = binned_pair
    for c in range(bundled.n_columns):
        members = [f for f in range(bundled.n_features) if bundled.feature_column[f] == c and bundled.is_bundled(f)]
        if len(members) < 2:
            continue
        away = np.stack([plain.feature_bins(f) != bundled.feature_default_bin[f] for f in members])
        assert away.sum(axis=0).max() <= 1


def test_decoding_gives_back_every_feature_bin_exactly(binned_pair):
    _, plain, bundled, _ = binned_pair
    np.testing.assert_array_equal(bundled.to_dense(), plain.to_dense())


def test_dense_data_is_not_bundled():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 6))
    mapper = BinMapper().fit(X)
    plain = mapper.transform(X)
    assert bundle_features(plain, mapper.is_usable) is plain


def test_bundle_column_histograms_give_exact_feature_splits(binned_pair):
    """The split finder reading bundled columns finds what a naive search over the
    unbundled per-feature histograms finds."""
    _, plain, bundled, _ = binned_pair
    rng = np.random.default_rng(2)
    gh = np.column_stack([rng.normal(size=plain.n_rows), rng.uniform(0.5, 1.5, plain.n_rows)]).astype(np.float32)
    hist = np.zeros((1, bundled.total_bins, 2))
    build_histogram_contiguous(bundled, gh, hist[0])
    plain_hist = naive_histogram(plain, gh)
    G, H = gh.astype(np.float64).sum(axis=0)
    params = dict(l1=0.0, l2=1.0, min_child_weight=1.0, min_gain_to_split=0.0, min_samples_leaf=5)
    features = np.arange(plain.n_features)
    for subset in (features, features[3:], [4, 9, 15]):
        finder = FloatSplitFinder.for_binned(hist, bundled, subset, **params)
        (got,) = find_best_splits(finder, [0], [G], [H], [plain.n_rows])
        want = naive_best_split(plain_hist, plain.hist_offsets, plain.n_bins, subset, G, H, plain.n_rows, **params)
        assert (got[1], got[2], got[3]) == (want[1], want[2], want[3])
        assert got[0] == pytest.approx(want[0], rel=1e-9)


def test_partition_on_bundled_features_matches_unbundled(binned_pair):
    _, plain, bundled, _ = binned_pair
    for feature in range(plain.n_features):
        for default_left in (False, True):
            a, b = RowPartitioner(plain, 3, 1), RowPartitioner(bundled, 3, 1)
            threshold = max(1, int(plain.n_bins[feature]) // 2)
            assert split(a, 0, feature, threshold, default_left, 1, 2) == split(b, 0, feature, threshold, default_left, 1, 2)
            np.testing.assert_array_equal(node_rows(a, 1), node_rows(b, 1))
            np.testing.assert_array_equal(node_rows(a, 2), node_rows(b, 2))


@pytest.mark.parametrize("growth", ["leafwise", "depthwise"])
def test_trees_split_on_the_same_features_with_and_without_bundling(growth):
    X, y = one_hot_data(8000, seed=3)
    models = []
    for enable in (True, False):
        config = bst.GBDTConfig(n_estimators=15, learning_rate=0.2, growth_strategy=growth, max_depth=5,
                                n_leaves=20, cache_size=64, enable_bundling=enable)
        models.append(bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=2))
    with_bundles, without = models
    assert len(with_bundles.trees) == len(without.trees) == 15
    for t_b, t_p in zip(with_bundles.trees, without.trees):
        np.testing.assert_array_equal(t_b.split_feature, t_p.split_feature)
        np.testing.assert_array_equal(t_b.threshold_bin, t_p.threshold_bin)
        np.testing.assert_array_equal(t_b.default_left, t_p.default_left)
        np.testing.assert_array_equal(t_b.n_samples, t_p.n_samples)
        np.testing.assert_allclose(t_b.value, t_p.value, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(with_bundles.predict(X), without.predict(X), rtol=1e-9, atol=1e-9)


def test_covertype_one_hot_groups_bundle_into_few_columns():
    X, y = make_covertype(20_000, binary=True, seed=4)
    mapper = BinMapper().fit(X)
    bundled = bundle_features(mapper.transform(X), mapper.is_usable)
    assert bundled.n_columns <= 14  # 10 terrain columns + the wilderness and soil groups
    models = [bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(
        n_estimators=10, objective=bst.Objective.logistic(), growth_strategy="leafwise", max_depth=None,
        cache_size=31, enable_bundling=enable), n_threads=1) for enable in (True, False)]
    assert len(models[0].trees) == len(models[1].trees) == 10
    for t_b, t_p in zip(models[0].trees, models[1].trees):
        np.testing.assert_array_equal(t_b.split_feature, t_p.split_feature)


def test_chunked_binning_into_bundles_equals_bundling_the_full_matrix(monkeypatch):
    """Bundles found on the binning sample, X binned chunk by chunk straight into them."""
    import boosters.data.bundling as bundling
    from boosters.data.bundling import bin_and_bundle

    monkeypatch.setattr(bundling, "CHUNK_ROWS", 4096)  # several chunks
    X, _ = one_hot_data(30_000, seed=5)
    mapper = BinMapper(sample_size=8_000).fit(X)
    assert mapper.sample_rows is not None and len(mapper.sample_rows) == 8_000
    chunked = bin_and_bundle(mapper, X, 2, mapper.sample_rows)
    full = bundle_features(mapper.transform(X), mapper.is_usable)
    assert chunked.n_columns == full.n_columns < X.shape[1]
    np.testing.assert_array_equal(chunked.to_dense(), full.to_dense())
    np.testing.assert_array_equal(chunked.to_dense(), mapper.transform(X).to_dense())


def test_bundle_contradicted_outside_the_sample_is_split_back():
    from boosters.data.binning import stratified_sample
    from boosters.data.bundling import bin_and_bundle

    rng = np.random.default_rng(6)
    n, sample_size = 20_000, 2_000
    group = rng.integers(0, 4, n)
    X = np.column_stack([rng.normal(size=n), np.eye(4)[group]])
    sampled = set(stratified_sample(n, sample_size, 0).tolist())
    clash = [r for r in range(n) if r not in sampled][:3]
    X[clash, 1] = X[clash, 2] = 1.0  # features 1 and 2 both "on", only outside the sample
    mapper = BinMapper(sample_size=sample_size, seed=0).fit(X)
    binned = bin_and_bundle(mapper, X, 1, mapper.sample_rows)
    np.testing.assert_array_equal(binned.to_dense(), mapper.transform(X).to_dense())  # nothing lost
    assert binned.feature_column[1] != binned.feature_column[2]
