"""Exclusive feature bundling: lossless storage, exact feature histograms, same trees."""

import numpy as np
import pytest

import boosters as bst
from boosters.data.binning import BinMapper
from boosters.data.bundling import MAX_BUNDLE_BINS, bundle_features, find_bundles
from boosters.bench.datasets import make_covertype
from boosters._testing.kernels import (build_histogram_contiguous, build_histogram_gathered, build_histogram_packed,
                                       find_best_splits, node_rows, quantize_gradients, split)
from boosters.training.histograms._quantize import max_levels
from boosters.training.partition._partition import RowPartitioner
from boosters.training.split._split import FloatSplitFinder, QuantizedSplitFinder

from support.naive import naive_best_split, naive_histogram, naive_packed_histogram


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


MULTI_VALUES = ([1.0, 2.0, 3.0], [-2.0, -1.0, 1.0, 2.0], [-3.0, -1.5, 0.5, 2.0, 4.0],
                list(range(1, 10)), [-4.0, -3.0, -2.0, -1.0, 1.0, 2.0, 3.0, 4.0], [0.25, 0.5, 0.75])


def multi_valued_sparse_data(n=8000, seed=0):
    """3 dense columns and 6 exclusive sparse features (at most one away from 0 in a row)
    taking 3 to 9 distinct non-zero values; three have negative values too, so their
    default bin (0, the most frequent) lies between value bins, and one has NaNs. y
    depends on the values non-monotonically (splits inside each feature's range)."""
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(n, 3))
    active = rng.integers(0, 9, n)  # 0..5: that sparse feature is away from 0; 6..8: none
    sparse = np.zeros((n, len(MULTI_VALUES)))
    for k, values in enumerate(MULTI_VALUES):
        rows = active == k
        sparse[rows, k] = rng.choice(values, rows.sum())
    sparse[(active == 3) & (rng.random(n) < 0.15), 3] = np.nan
    y = (dense[:, 0] + np.sin(2.0 * sparse[:, 0]) + 1.5 * (sparse[:, 1] == -1) - np.abs(sparse[:, 2])
         + np.cos(np.nan_to_num(sparse[:, 3], nan=4.5)) + 0.5 * sparse[:, 4] * (sparse[:, 4] % 2 == 0)
         + 4 * sparse[:, 5] * dense[:, 1] + rng.normal(size=n) * 0.2)
    return np.column_stack([dense, sparse]), y


@pytest.fixture(scope="module")
def multi_valued_pair():
    X, y = multi_valued_sparse_data()
    mapper = BinMapper().fit(X)
    plain = mapper.transform(X)
    bundled = bundle_features(plain, mapper.is_usable)
    # the case under test: every sparse feature bundled, with more than two values
    assert all(bundled.is_bundled(f) for f in range(3, 9))
    assert all(plain.n_bins[f] >= 4 for f in range(3, 9))
    assert any(bundled.feature_default_bin[f] > 1 for f in range(3, 9))  # 0 between value bins
    np.testing.assert_array_equal(bundled.to_dense(), plain.to_dense())
    return plain, bundled, y


def _node_row_sets(rng, n_rows):
    """All rows, and random subsets of them (nodes of other sizes and sums)."""
    return [None] + [np.sort(rng.choice(n_rows, size, replace=False)).astype(np.uint32)
                     for size in (n_rows // 2, n_rows // 7)]


@pytest.mark.parametrize("quantized", [False, True], ids=["f64", "i16"])
def test_multi_valued_bundled_features_split_as_unbundled(multi_valued_pair, quantized):
    """Every bundled feature alone (each scan on its own, not only the overall winner)
    and all together, on several gradient draws and node row sets: the finder reading
    the bundle columns finds the split a naive search over the unbundled per-feature
    histograms finds: same feature, bin and missing direction; gain and left sums to
    1e-9 relative (float64: the default bin is a difference of sums, f64 mode; the
    dequantized integer sums are exact, i16 mode)."""
    plain, bundled, _ = multi_valued_pair
    rng = np.random.default_rng(7)
    params = dict(l1=0.0, l2=1.0, min_child_weight=1.0, min_gain_to_split=0.0, min_samples_leaf=5)
    subsets = [[f] for f in range(3, 9)] + [list(range(plain.n_features))]
    n_found = 0
    for draw in range(3):
        gh = np.column_stack([rng.normal(size=plain.n_rows),
                              rng.uniform(0.5, 1.5, plain.n_rows)]).astype(np.float32)
        if quantized:
            packed = np.empty(plain.n_rows, dtype=np.int32)
            sg, sh = quantize_gradients(gh, packed, max_levels(plain.n_rows, 16), draw, 0, 1)
        for rows in _node_row_sets(rng, plain.n_rows):
            count = plain.n_rows if rows is None else len(rows)
            if quantized:
                hist = np.empty((1, bundled.total_bins), dtype=np.int64)
                build_histogram_packed(bundled, packed, hist[0], rows=rows)
                q_g, q_h = naive_packed_histogram(plain, packed, rows)
                plain_hist = np.column_stack([q_g / sg, q_h / sh])
            else:
                hist = np.zeros((1, bundled.total_bins, 2))
                if rows is None:
                    build_histogram_contiguous(bundled, gh, hist[0])
                else:
                    build_histogram_gathered(bundled, rows, np.ascontiguousarray(gh[rows]), hist[0])
                plain_hist = naive_histogram(plain, gh, rows)
            G, H = plain_hist[plain.hist_offsets[0]:plain.hist_offsets[1]].sum(axis=0)
            for subset in subsets:
                finder_class = QuantizedSplitFinder if quantized else FloatSplitFinder
                finder = finder_class.for_binned(hist, bundled, np.array(subset), **params)
                if quantized:
                    finder.set_scales(sg, sh)
                (got,) = find_best_splits(finder, [0], [G], [H], [count])
                want = naive_best_split(plain_hist, plain.hist_offsets, plain.n_bins, subset, G, H, count, **params)
                assert (got is None) == (want is None), (subset, got, want)
                if got is None:
                    continue
                n_found += 1
                assert got[1:4] == want[1:4], (subset, got, want)
                np.testing.assert_allclose(got[0], want[0], rtol=1e-9)
                np.testing.assert_allclose(got[5:7], want[5:7], rtol=1e-9, atol=1e-9 * count)
    assert n_found >= 40


@pytest.mark.parametrize("histogram_mode", ["f64", "i16"])
@pytest.mark.parametrize("growth", ["leafwise", "depthwise"])
def test_trees_on_multi_valued_bundles_equal_the_unbundled_trees(histogram_mode, growth):
    """Whole trees, with and without bundling: the same splits (feature, bin, missing
    direction), row counts, and values to 1e-9 (float64 sums in another order); the
    sparse features are split on, at inner bins too. min_samples_leaf=20 keeps nodes
    away from a few rows, where two features often cut off the same rows: a tie that
    float64 rounding of sums taken in another order breaks either way."""
    X, y = multi_valued_sparse_data(6000, seed=3)
    models = []
    for enable in (True, False):
        config = bst.GBDTConfig(n_estimators=12, learning_rate=0.3, growth_strategy=growth, max_depth=5,
                                n_leaves=20, min_samples_leaf=20, cache_size=64, enable_bundling=enable,
                                histogram_mode=histogram_mode)
        models.append(bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=2))
    with_bundles, without = models
    assert len(with_bundles.trees) == len(without.trees) == 12
    for t_b, t_p in zip(with_bundles.trees, without.trees):
        np.testing.assert_array_equal(t_b.split_feature, t_p.split_feature)
        np.testing.assert_array_equal(t_b.threshold_bin, t_p.threshold_bin)
        np.testing.assert_array_equal(t_b.default_left, t_p.default_left)
        np.testing.assert_array_equal(t_b.n_samples, t_p.n_samples)
        np.testing.assert_allclose(t_b.value, t_p.value, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(with_bundles.predict(X), without.predict(X), rtol=1e-9, atol=1e-9)
    used = [(f, b) for t in without.trees for f, b in zip(t.split_feature, t.threshold_bin) if f >= 3]
    assert {f for f, _ in used} == set(range(3, 9))
    assert any(b > 1 for _, b in used)  # a threshold past the features' first value bin
