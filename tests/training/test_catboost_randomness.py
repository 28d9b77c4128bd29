"""CatBoost's random_strength (noise on the split search's scores) and Bayesian bootstrap
(bagging_temperature): off by default and then today's models; draws against NumPy
references of their formulas; the same models at any thread count; errors."""

import sys
from pathlib import Path

import numpy as np
import pytest

import boosters as bst
from boosters._testing.kernels import find_best_splits, leaf_scores, noise_sd, split_gains, split_noise
from boosters.training._sampling import bayesian_weights
from boosters.training.sampling import make_row_sampler
from boosters.training.split._split import FloatSplitFinder

from support.naive import binned_from_dense, dense_bins, naive_histogram, random_gradients

MODELS = Path(__file__).parents[1] / "models"
U64 = np.uint64
MASK = (1 << 64) - 1


# -- NumPy references of the draws ---------------------------------------------------------

def splitmix64(x):
    """boosters/_lib/random.pxd's splitmix64 on uint64 arrays (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = np.asarray(x, dtype=U64) + U64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> U64(30))) * U64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> U64(27))) * U64(0x94D049BB133111EB)
        return x ^ (x >> U64(31))


def uniform01(key, counter):
    return (splitmix64(U64(key) + np.asarray(counter, dtype=U64)) >> U64(11)).astype(np.float64) * 2.0 ** -53


def stream_key(seed, stream, salt):
    return splitmix64(U64(seed) ^ splitmix64(U64((stream + salt) & MASK)))


def reference_noise(seed, tree, node, feature, counters):
    """The standard normal of each candidate: Box-Muller's cosine half over two uniforms
    of the stream keyed by (seed, tree, node, feature)."""
    tree_key = stream_key(seed, tree, 0x510E527FADE682D1)
    node_key = splitmix64(tree_key ^ splitmix64(U64(node)))
    key = splitmix64(node_key + U64(feature))
    c = np.asarray(counters, dtype=U64)
    u1 = 1.0 - uniform01(key, U64(2) * c)
    u2 = uniform01(key, U64(2) * c + U64(1))
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def reference_weights(seed, round_, rows, temperature):
    key = stream_key(seed, round_, 0xA54FF53A5F1D36F1)
    return (-np.log(1.0 - uniform01(key, rows))) ** temperature


def test_noise_draws_match_the_reference_and_are_standard_normal():
    counters = np.arange(200_000, dtype=np.uint64)
    z = split_noise(42, 7, 3, 5, counters)
    # the same hash and formula; libm's and NumPy's log / cos may differ in the last ulp
    np.testing.assert_allclose(z, reference_noise(42, 7, 3, 5, counters), rtol=1e-12, atol=1e-12)
    # N(0, 1): mean within 5 standard errors (1 / sqrt(n)), variance within 5 (sqrt(2 / n))
    n = len(z)
    assert abs(z.mean()) < 5 / np.sqrt(n)
    assert abs(z.var() - 1.0) < 5 * np.sqrt(2.0 / n)
    # another node, feature, tree or seed: other draws
    for args in ((42, 7, 4, 5), (42, 7, 3, 6), (42, 8, 3, 5), (43, 7, 3, 5)):
        assert not np.allclose(split_noise(*args, counters[:100]), z[:100])


def test_noise_scale_follows_catboosts_formula():
    rng = np.random.default_rng(0)
    gh = rng.normal(size=(3000, 2)).astype(np.float32)
    g = gh[:, 0].astype(np.float64)
    for strength, round_, lr in ((1.0, 0, 0.3), (2.5, 10, 0.1), (1.0, 60, 0.3)):
        L = len(g) * np.exp(-round_ * lr)  # CatBoost's exp(log(n) - model length)
        expected = 0.5 * strength * np.sqrt(np.mean(g * g)) * L / (1.0 + L)
        assert noise_sd(strength, gh, round_, lr) == pytest.approx(expected, rel=1e-12)
    assert noise_sd(0.0, gh, 0, 0.3) == 0.0


def test_bayesian_weights_match_the_reference_and_their_moments():
    n = 400_000
    w = bayesian_weights(7, 3, 0, n, 1.0)
    np.testing.assert_allclose(w, reference_weights(7, 3, np.arange(n), 1.0), rtol=1e-12)
    # temperature 1: exponential(1), mean 1 and variance 1; 5 standard errors of each
    # (the variance's: sqrt((mu4 - 1) / n), mu4 = 9 for an exponential)
    assert abs(w.mean() - 1.0) < 5 / np.sqrt(n)
    assert abs(w.var() - 1.0) < 5 * np.sqrt(8.0 / n)
    # a row's weight depends on its index only: any range draws the same
    np.testing.assert_array_equal(bayesian_weights(7, 3, 1000, 50, 1.0), w[1000:1050])
    np.testing.assert_array_equal(bayesian_weights(7, 3, 0, 1000, 0.0), np.ones(1000))
    np.testing.assert_allclose(bayesian_weights(7, 3, 0, 1000, 2.0), w[:1000] ** 2, rtol=1e-12)
    assert not np.array_equal(bayesian_weights(7, 4, 0, 1000, 1.0), w[:1000])  # another round


# -- the noisy split search against a brute force ------------------------------------------

def naive_noisy_best_split(hist, offsets, n_bins, G, H, count, noise, l2):
    """Every numeric candidate (feature, bin, missing right then left) with a gain > 0
    competes by gain + noise(feature, counters); the winner keeps its gain. No child
    limits (min_child_weight = min_samples_leaf = 0)."""
    parent = float(leaf_scores(G, H, 0.0, l2))
    best_key, best = -np.inf, None
    for f in range(len(n_bins)):
        fh = np.asarray(hist[offsets[f]:offsets[f] + n_bins[f]], dtype=np.float64)
        gm, hm = fh[0]
        has_missing = bool(gm != 0.0 or hm != 0.0)
        cg, ch = np.cumsum(fh[1:, 0]), np.cumsum(fh[1:, 1])
        for dl in ((False, True) if has_missing else (False,)):
            last = n_bins[f] - 1 if (has_missing and not dl) else n_bins[f] - 2
            b = np.arange(1, last + 1)
            gl = cg[b - 1] + (gm if dl else 0.0)
            hl = ch[b - 1] + (hm if dl else 0.0)
            gain = split_gains(gl, hl, G - gl, H - hl, parent, 0.0, l2, 0.0)
            key = np.where(gain > 0, gain + noise(f, 2 * b + dl), -np.inf)
            for j in range(len(b)):  # tie order: feature, then missing right, then bin
                if key[j] > best_key:
                    best_key, best = key[j], (float(gain[j]), f, int(b[j]), dl)
    return best


def test_noisy_search_picks_the_highest_gain_plus_noise():
    rng = np.random.default_rng(5)
    n_bins = [3, 17, 64, 9]
    dense = dense_bins(rng, 4000, n_bins, [0.2, 0.0, 0.1, 0.3])
    binned = binned_from_dense(dense, n_bins)
    gh = random_gradients(rng, 4000)
    gh[:, 0] += np.where(dense[:, 1] > 8, 0.3, -0.2)
    pool, G, H, C = np.zeros((6, binned.total_bins, 2)), [], [], []
    for i in range(6):
        rows = np.sort(rng.choice(4000, 1500, replace=False))
        pool[i] = naive_histogram(binned, gh, rows)
        G.append(float(gh[rows, 0].astype(np.float64).sum()))
        H.append(float(gh[rows, 1].astype(np.float64).sum()))
        C.append(1500)
    finder = FloatSplitFinder(pool, binned.hist_offsets, binned.n_bins, np.arange(4), l1=0.0, l2=1.0,
                              min_child_weight=0.0, min_gain_to_split=0.0, min_samples_leaf=0)
    clean = find_best_splits(finder, np.arange(6), G, H, C)
    changed = 0
    for sd in (0.0, 2.0, 200.0):
        finder.use_noise(11, 2, sd)
        found = find_best_splits(finder, np.arange(6), G, H, C)
        for i in range(6):  # node i of a batch without node ids is node i
            expected = naive_noisy_best_split(pool[i], binned.hist_offsets, n_bins, G[i], H[i], C[i],
                                              lambda f, c: sd * reference_noise(11, 2, i, f, c), 1.0)
            assert found[i][:4] == pytest.approx(expected, rel=1e-9)
            changed += found[i][1:3] != clean[i][1:3]
        if sd == 0.0:
            assert found == clean
    assert changed > 0  # the noise did move some splits


# -- whole trainings -----------------------------------------------------------------------

def test_off_by_default_gives_todays_models():
    # the v1 model files were written by an earlier version: retrained with the options
    # off, every one predicts what it predicted then, bit for bit (with the defaults of
    # then, before version 0.2: depth-wise, every row, children down to 1 row, hessian 1)
    then = dict(growth_strategy="depthwise", subsample=1.0, min_samples_leaf=1, min_child_weight=1.0)
    sys.path.insert(0, str(MODELS))
    try:
        import make_models
    finally:
        sys.path.remove(str(MODELS))
    for name, X, ds, config in make_models.models():
        saved = bst.GBDTModel.load(MODELS / "v1" / f"{name}.bst")
        model = bst.GBDTModel.train(ds, config=config.replace(random_strength=0.0, bagging_temperature=None, **then))
        assert np.array_equal(model.predict_raw(X), saved.predict_raw(X)), name


def data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[rng.random(n) < 0.05, 2] = np.nan
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.5 * np.nan_to_num(X[:, 2]) + 0.5 * rng.normal(size=n)
    return X, y


CASES = [dict(random_strength=1.0), dict(random_strength=3.0, growth_strategy="leafwise", histogram_mode="i8"),
         dict(bagging_temperature=1.0), dict(bagging_temperature=2.0, histogram_mode="i16"),
         dict(random_strength=1.0, bagging_temperature=1.0, colsample_bynode=0.7)]


@pytest.mark.parametrize("options", CASES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_same_model_at_1_and_2_threads_and_the_options_show(options):
    X, y = data()
    config = bst.GBDTConfig(n_estimators=15, max_depth=4, **options)
    one, two = (bst.GBDTModel.train(bst.Dataset(X, y), config=config, n_threads=t) for t in (1, 2))
    assert one.to_json_bytes() == two.to_json_bytes()
    plain = bst.GBDTModel.train(bst.Dataset(X, y), config=config.replace(random_strength=0.0, bagging_temperature=None))
    assert not np.array_equal(one.predict_raw(X), plain.predict_raw(X))
    other_seed = bst.GBDTModel.train(bst.Dataset(X, y), config=config.replace(seed=7), n_threads=1)
    assert not np.array_equal(one.predict_raw(X), other_seed.predict_raw(X))
    # the config travels with the model
    loaded = bst.GBDTModel.from_json_bytes(one.to_json_bytes())
    assert loaded.config == config
    assert np.array_equal(loaded.predict_raw(X), one.predict_raw(X))
    assert np.allclose(one.shap_values(X[:50]).sum(axis=-1), one.predict_raw(X[:50]), atol=1e-6)


def test_noise_never_enters_the_stored_gains():
    # every split's stored gain is its true gain, recomputed from the nodes' sums: H is a
    # node's cover, G = -value * (H + l2) / learning_rate (l1 = 0)
    X, y = data()
    config = bst.GBDTConfig(n_estimators=5, max_depth=3, random_strength=5.0)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=config)

    def score(tree, node):
        H = tree.cover[node]
        G = -tree.value[node] * (H + config.l2) / config.learning_rate
        return G * G / (H + config.l2)

    n_splits = 0
    for tree in model.forest.trees:
        for node in np.flatnonzero(tree.split_feature >= 0):
            left, right = tree.left_child[node], tree.right_child[node]
            gain = 0.5 * (score(tree, left) + score(tree, right) - score(tree, node))
            assert tree.gain[node] == pytest.approx(gain, rel=1e-6, abs=1e-9)
            n_splits += 1
    assert n_splits > 10


def test_temperature_0_is_no_bootstrap():
    # its weights are all 1 (test above), so the training skips them: the same model
    X, y = data()
    config = bst.GBDTConfig(n_estimators=10, max_depth=4, subsample=1.0)  # no row sampling either
    a = bst.GBDTModel.train(bst.Dataset(X, y), config=config)
    b = bst.GBDTModel.train(bst.Dataset(X, y), config=config.replace(bagging_temperature=0.0))
    assert np.array_equal(a.predict_raw(X), b.predict_raw(X))
    assert make_row_sampler(config.replace(bagging_temperature=0.0), 100, 1, 1) is None
    sampler = make_row_sampler(config.replace(bagging_temperature=0.5), 100, 1, 1)
    assert sampler.temperature == 0.5 and sampler.n_sample == 100


def test_bayesian_weights_multiply_each_rounds_gradients():
    # a stump of one round: its root's cover is the weighted hessian sum (squared error:
    # hessians 1, so the sum of the round's weights) and its value -G / (H + l2) shrunk
    X, y = data(n=500)
    config = bst.GBDTConfig(n_estimators=1, max_depth=1, bagging_temperature=1.0, seed=3, learning_rate=1.0)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=config)
    w = bayesian_weights(3, 0, 0, len(y), 1.0)
    g = (model.forest.base_scores[0] - y).astype(np.float32)
    g_w = (g.astype(np.float64) * w).astype(np.float32).astype(np.float64)
    h_w = w.astype(np.float32).astype(np.float64)
    tree = model.forest.trees[0]
    assert tree.cover[0] == pytest.approx(h_w.sum(), rel=1e-9)
    assert tree.value[0] == pytest.approx(-g_w.sum() / (h_w.sum() + 1.0), rel=1e-6)


def test_estimators_and_catboost_names():
    from boosters.sklearn import GBDTRegressor
    X, y = data(n=800)
    est = GBDTRegressor(n_estimators=5, random_strength=1.0, bootstrap_type="Bayesian", bagging_temperature=0.5)
    est.fit(X, y)
    assert est.get_params()["random_strength"] == 1.0
    assert est.booster_.config.bagging_temperature == 0.5
    assert bst.GBDTConfig(bootstrap_type="Bayesian").bagging_temperature == 1.0  # CatBoost's default
    assert bst.GBDTConfig(bootstrap_type="Bayesian", bagging_temperature=None).bagging_temperature == 1.0
    assert bst.GBDTConfig(bootstrap_type="No").bagging_temperature is None
    assert bst.GBDTConfig(bootstrap_type="No").subsample == 1.0  # every row, not boosters' default share
    assert bst.GBDTConfig(bootstrap_type="Bernoulli", subsample=0.7).subsample == 0.7


@pytest.mark.parametrize("params, error, words", [
    (dict(random_strength=-1.0), ValueError, "random_strength"),
    (dict(random_strength=float("nan")), ValueError, "random_strength"),
    (dict(random_strength="1"), TypeError, "random_strength"),
    (dict(bagging_temperature=-0.5), ValueError, "bagging_temperature"),
    (dict(bagging_temperature=float("inf")), ValueError, "bagging_temperature"),
    (dict(bagging_temperature=1.0, subsample=0.5), ValueError, "subsample"),
    (dict(bagging_temperature=1.0, goss_top_rate=0.2, goss_other_rate=0.1), ValueError, "GOSS"),
    (dict(bootstrap_type="MVS"), ValueError, "bootstrap_type"),
    (dict(bootstrap_type="No", bagging_temperature=1.0), ValueError, "bagging_temperature"),
    (dict(bootstrap_type="Bernoulli"), ValueError, "subsample"),
])
def test_bad_input(params, error, words):
    with pytest.raises(error, match=words):
        bst.GBDTConfig(**params)


@pytest.mark.parametrize("mode", ["i16", "i8"])
def test_quantized_histograms_see_the_weighted_gradients(mode):
    # the quantizer's scales come from the weighted gradients: the first tree's root
    # split is the float64 one, and its leaves' renewed sums (full precision, squared
    # error's hessians 1) add up to the round's weights
    X, y = data(n=4000)
    config = bst.GBDTConfig(n_estimators=1, max_depth=3, bagging_temperature=1.0, seed=5, learning_rate=1.0)
    exact = bst.GBDTModel.train(bst.Dataset(X, y), config=config.replace(histogram_mode="f64")).forest.trees[0]
    quantized = bst.GBDTModel.train(bst.Dataset(X, y), config=config.replace(histogram_mode=mode)).forest.trees[0]
    assert (quantized.split_feature[0], quantized.threshold[0]) == (exact.split_feature[0], exact.threshold[0])
    w = bayesian_weights(5, 0, 0, len(y), 1.0)
    leaves = exact.split_feature < 0
    assert quantized.cover[quantized.split_feature < 0].sum() == pytest.approx(
        w.astype(np.float32).astype(np.float64).sum(), rel=1e-9)
    np.testing.assert_allclose(np.sort(quantized.value[quantized.split_feature < 0]), np.sort(exact.value[leaves]),
                               rtol=0.05, atol=0.02)
