"""Row sampling (`subsample`, GOSS): the rows each round draws, the trees grown on them
only, the margins of every row, determinism, and quality against LightGBM.

The sampler's draws are reproduced here in NumPy from the documented recipe
(training/_sampling.pyx): a per-row uniform u = (splitmix64(key + row) >> 11) / 2**53
with key = splitmix64(seed ^ splitmix64(round + salt)), then selection sampling (row i
of the n - i left is taken when u * (n - i) < rows still needed). Everything compared
to these references is compared exactly (row sets, tree structure), or to float64
rounding (values, margins), as stated at each check.
"""

import lightgbm
import numpy as np
import pytest

import boosters as bst
from support import naive_grower as naive
from boosters.bench.datasets import make_covertype, make_friedman, train_test_split
from boosters.model.prediction import predict_tree
from boosters._testing.kernels import sample_rows
from boosters.training._sampling import RowSampler
from boosters.objectives.registry import make_objective
from boosters.training.growth.grower import TreeGrower
from boosters.training.sampling import goss_warmup_rounds, make_row_sampler
from support.matched_params import boosters_config, lightgbm_params
from support.prebinned import prebinned_data
from support.tree_compare import assert_same_as_naive, goes_left

SAMPLING_SALT = 0x3C6EF372FE94F82B
GOSS = dict(goss_top_rate=0.2, goss_other_rate=0.1)


# -- the sampler's draws, in NumPy ---------------------------------------------------------------

def splitmix64(x):
    x = np.asarray(x, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def row_draws(seed, round_, n):
    """The uniforms of round `round_`, one per row."""
    with np.errstate(over="ignore"):
        stream = splitmix64(np.array([round_], dtype=np.uint64) + np.uint64(SAMPLING_SALT))
        key = splitmix64(np.array([seed], dtype=np.uint64) ^ stream)
        bits = splitmix64(key + np.arange(n, dtype=np.uint64)) >> np.uint64(11)
    return bits.astype(np.float64) * 2.0 ** -53


def selection_sample(u, candidates, k):
    """k of `candidates` (increasing rows), row i taken when u[i] * (candidates left) < still needed."""
    taken, left = [], len(candidates)
    for i in candidates:
        if u[i] * left < k - len(taken):
            taken.append(i)
        left -= 1
    return np.array(taken, dtype=np.int64)


def uniform_reference(seed, round_, n, m):
    return selection_sample(row_draws(seed, round_, n), range(n), m)


def goss_reference(seed, round_, gh, top_k, other_k, weight):
    """(sample, re-weighted copy of gh (n_outputs, n, 2) float32, top rows, drawn rows)."""
    n = gh.shape[1]
    score = np.zeros(n)
    for k in range(gh.shape[0]):  # summed output by output, as the kernel
        score = score + np.abs(gh[k, :, 0].astype(np.float64) * gh[k, :, 1].astype(np.float64))
    by_score = np.lexsort((np.arange(n), -score))  # largest first; ties: lower rows first
    top = np.sort(by_score[:top_k])
    rest = np.setdiff1d(np.arange(n), top)
    drawn = selection_sample(row_draws(seed, round_, n), rest, other_k)
    out = gh.copy()
    out[:, drawn, :] *= np.float32(weight)
    return np.union1d(top, drawn), out, top, drawn


# -- the sampler against NumPy ----------------------------------------------------------------------

@pytest.mark.parametrize("n, m", [(1, 1), (10, 1), (10, 9), (1000, 500), (1001, 137)])
def test_uniform_sample_is_the_reference_selection(n, m):
    sampler = RowSampler("uniform", n, 1, 7, 1, n_sample=m)
    gh = np.zeros((1, n, 2), dtype=np.float32)
    for round_ in range(3):
        rows, others = sample_rows(sampler, round_, gh)
        np.testing.assert_array_equal(rows, uniform_reference(7, round_, n, m))
        assert len(rows) == m  # exactly the asked size, in increasing order, the others after it
        np.testing.assert_array_equal(np.sort(np.concatenate([rows, others])), np.arange(n))
        assert np.all(np.diff(rows) > 0) and np.all(np.diff(others) > 0)


def test_uniform_sample_takes_every_row_equally_often():
    """Over 4000 rounds each of 50 rows is drawn Binomial(4000, 0.2) times: mean 800,
    sd 25.3. All within 5 sd (a bias of 0.03 in a row's rate would fail); and two rows
    are drawn together 160 times on average (pairs within 5 sd of 160 +- 12): the draws
    are not correlated between rows. Deterministic (seeded), so it cannot flake."""
    n, m, rounds = 50, 10, 4000
    sampler = RowSampler("uniform", n, 1, 3, 1, n_sample=m)
    gh = np.zeros((1, n, 2), dtype=np.float32)
    taken = np.zeros((rounds, n), dtype=bool)
    for r in range(rounds):
        taken[r, sample_rows(sampler, r, gh)[0]] = True
    counts = taken.sum(axis=0)
    assert np.all(np.abs(counts - 800) < 5 * 25.3), counts
    pairs = (taken.T.astype(np.int64) @ taken)[np.triu_indices(n, 1)]
    expected = rounds * (m / n) * ((m - 1) / (n - 1))
    assert np.all(np.abs(pairs - expected) < 5 * np.sqrt(expected)), (pairs.min(), pairs.max())


@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("ties", [False, True])
def test_goss_sample_and_weights_are_the_reference(n_outputs, ties):
    """The top set (largest sum of |g h|; with many equal scores: lower rows first), the
    rows drawn from the rest, and their gradients and hessians times (1 - a) / b in
    float32: all exactly as NumPy computes them."""
    n, a, b = 2000, 0.2, 0.1
    rng = np.random.default_rng(5)
    gh = rng.normal(size=(n_outputs, n, 2)).astype(np.float32)
    gh[..., 1] = np.abs(gh[..., 1])
    if ties:  # few distinct scores: the top set's last score is shared by many rows
        gh[..., 0] = np.round(gh[..., 0])
        gh[..., 1] = 1.0
    top_k, other_k, weight = round(a * n), round(b * n), (1 - a) / b
    sampler = RowSampler("goss", n, n_outputs, 11, 2, top_k=top_k, other_k=other_k, weight=weight,
                         warmup_rounds=2)
    assert sample_rows(sampler, 0, gh.copy()) is None and sample_rows(sampler, 1, gh.copy()) is None
    for round_ in (2, 3):
        ours = gh.copy()
        rows, others = sample_rows(sampler, round_, ours)
        sample, reweighted, top, drawn = goss_reference(11, round_, gh, top_k, other_k, weight)
        np.testing.assert_array_equal(rows, sample)
        assert len(rows) == top_k + other_k and len(drawn) == other_k
        np.testing.assert_array_equal(ours, reweighted)  # bit for bit
        np.testing.assert_array_equal(ours[:, drawn], gh[:, drawn] * np.float32(8.0))  # (1 - 0.2) / 0.1
        np.testing.assert_array_equal(ours[:, top], gh[:, top])  # the top rows keep their gradients
        np.testing.assert_array_equal(np.sort(np.concatenate([rows, others])), np.arange(n))
    if ties:
        score = np.abs(gh[0, :, 0] * gh[0, :, 1]) if n_outputs == 1 else None
        if score is not None:
            threshold = np.sort(score)[::-1][top_k - 1]
            assert (score == threshold).sum() > 50  # the case really has ties at the boundary


def test_sampler_sizes_follow_the_config():
    n = 1000
    assert make_row_sampler(bst.GBDTConfig(subsample=1.0), n, 1, 1) is None
    assert make_row_sampler(bst.GBDTConfig(), n, 1, 1).n_sample == 800  # the default, 0.8
    assert make_row_sampler(bst.GBDTConfig(subsample=0.9996), n, 1, 1) is None  # rounds to every row
    uniform = make_row_sampler(bst.GBDTConfig(subsample=0.2345), n, 1, 1)
    assert (uniform.n_sample, uniform.warmup_rounds) == (234, 0)
    assert make_row_sampler(bst.GBDTConfig(subsample=1e-9), n, 1, 1).n_sample == 1
    goss = make_row_sampler(bst.GBDTConfig(learning_rate=0.1, **GOSS), n, 3, 1)
    assert (goss.top_k, goss.other_k, goss.n_sample, goss.warmup_rounds) == (200, 100, 300, 10)
    assert goss.weight == (1 - 0.2) / 0.1
    assert goss_warmup_rounds(0.3) == 3 and goss_warmup_rounds(2.0) == 0
    tiny = make_row_sampler(bst.GBDTConfig(goss_top_rate=0.01, goss_other_rate=0.01), 10, 1, 1)
    assert (tiny.top_k, tiny.other_k) == (1, 0)


# -- trees grown on the sample only -----------------------------------------------------------

def naive_leaves(tree, bins):
    """The leaf of every row of `bins` in a naive_grower tree (boosters' rule: value bins
    1..b go left, missing by default_left)."""
    node_of = np.zeros(len(bins), dtype=np.int64)
    for i in range(tree.n_nodes):  # children come after their parent
        if tree.left_child[i] >= 0:
            here = node_of == i
            left = goes_left(tree, i, bins[:, tree.split_feature[i]])
            node_of[here & left] = tree.left_child[i]
            node_of[here & ~left] = tree.right_child[i]
    return node_of


def reference_training(X, y, p, n_rounds, draw):
    """naive_grower's boosting, each round's trees grown on the rows `draw(round, gh)`
    returns (with gh, possibly re-weighted), every row's margin updated; (base, trees,
    margins, values) as naive_grower.train returns them."""
    bins, values = naive.prebin(X)
    n_value_bins = [len(v) for v in values]
    w = np.ones(len(y))
    base = naive.base_scores(p.objective, y, w, p.n_classes)
    margins = np.tile(base, (len(y), 1))
    trees = []
    for round_ in range(n_rounds):
        per_output = naive.gradients(p.objective, margins, y, w)
        gh = np.stack([np.column_stack([g, h]) for g, h in per_output]).astype(np.float32)
        rows, gh = draw(round_, gh)
        for k in range(len(per_output)):
            g, h = gh[k, :, 0].astype(np.float64), gh[k, :, 1].astype(np.float64)
            tree = naive.grow_tree(bins[rows], n_value_bins, g[rows], h[rows], p)
            trees.append(tree)
            margins[:, k] += tree.value[naive_leaves(tree, bins)]
    return base, trees, margins, values


@pytest.mark.parametrize("leafwise", [False, True])
@pytest.mark.parametrize("objective", ["squared", "softmax"])
def test_subsample_trees_are_the_reference_grown_on_the_sampled_rows(objective, leafwise):
    """Each round: the rows of uniform_reference, naive_grower's tree on exactly those
    rows (root n_samples = the sample size), every row's margin updated."""
    X, y = prebinned_data(seed=1, objective=objective)
    p = naive.Params(objective=objective, n_classes=3 if objective == "softmax" else 1, leafwise=leafwise,
                     max_depth=None if leafwise else 4, n_leaves=12)
    n, m = len(y), round(0.4 * len(y))
    config = boosters_config(p, 4, subsample=0.4, seed=9)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=2)
    reference = reference_training(X, y, p, 4, lambda r, gh: (uniform_reference(9, r, n, m), gh))
    assert all(t.n_samples[0] == m for t in model.trees)
    assert_same_as_naive(model, reference, p, X)


@pytest.mark.parametrize("leafwise", [False, True])
def test_goss_trees_are_the_reference_grown_on_the_goss_rows(leafwise):
    """learning_rate 0.5: rounds 0 and 1 use every row (LightGBM's warm-up of
    int(1 / learning_rate) rounds), rounds 2-4 the GOSS sample with re-weighted
    gradients, as goss_reference computes it from the reference's gradients."""
    X, y = prebinned_data(seed=2)
    p = naive.Params(objective="squared", leafwise=leafwise, max_depth=None if leafwise else 4, n_leaves=12,
                     learning_rate=0.5)
    n = len(y)
    config = boosters_config(p, 5, seed=4, goss_top_rate=0.3, goss_other_rate=0.2)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=2)

    def draw(round_, gh):
        if round_ < 2:
            return np.arange(n), gh
        rows, gh, _, _ = goss_reference(4, round_, gh, round(0.3 * n), round(0.2 * n), 0.7 / 0.2)
        return rows, gh

    reference = reference_training(X, y, p, 5, draw)
    assert [t.n_samples[0] for t in model.trees] == [n, n] + [round(0.5 * n)] * 3
    assert_same_as_naive(model, reference, p, X)


# -- the margins of rows outside the sample ----------------------------------------------------------

MARGIN_CASES = {
    "subsample f64 leaf-wise": (bst.Objective.squared(), dict(subsample=0.3, histogram_mode="f64",
                                                              growth_strategy="leafwise", n_leaves=16)),
    "subsample i16 depth-wise softmax": (bst.Objective.softmax(7), dict(subsample=0.6, histogram_mode="i16",
                                                                         max_depth=4)),
    "goss i8 row layout logistic": (bst.Objective.logistic(), dict(histogram_mode="i8", histogram_layout="row",
                                                                    growth_strategy="leafwise", n_leaves=16,
                                                                    learning_rate=0.5, **GOSS)),
    "goss f64 column layout softmax": (bst.Objective.softmax(7), dict(histogram_mode="f64",
                                                                       histogram_layout="column", max_depth=5,
                                                                       learning_rate=0.5, **GOSS)),
}


@pytest.mark.parametrize("name", sorted(MARGIN_CASES))
def test_training_margins_are_the_predictions_of_every_row(name):
    """The rounds keep every row's margin: the sampled rows' through the partition, the
    others' by replaying each tree's splits on them (bundled one-hot columns decoded, NaN
    by the tree's default direction). Equal to the model's predictions up to the order of the
    float64 additions (1e-12). The data: covertype-like (10 numeric columns with 5% NaN,
    44 one-hot columns stored in bundles)."""
    objective, settings = MARGIN_CASES[name]
    X, y = make_covertype(6_000, binary=objective.name == "logistic", seed=3)
    X[np.random.default_rng(0).uniform(size=X.shape) < 0.05 * (np.arange(X.shape[1]) < 10)] = np.nan
    config = bst.GBDTConfig(n_estimators=6, objective=objective, **settings)
    obj = make_objective(objective)
    mapper, binned = bst.Dataset(X, y).binned(config.max_bins, config.seed, config.enable_bundling, 2)
    assert binned.n_columns < X.shape[1]  # some features are bundled
    base = obj.init_scores(y, None)
    margins = np.repeat(base[:, None], len(y), axis=1)
    kernel = obj.gradient_kernel(margins, y, None, np.empty((obj.n_outputs, len(y), 2), np.float32), 2)
    grower = TreeGrower(binned, mapper, config, 2, kernel, margins, config.histogram_mode)
    rounds = []
    while len(rounds) < config.n_estimators:  # in blocks of at most BLOCK_SECONDS
        rounds += grower.grow_rounds(len(rounds), config.n_estimators - len(rounds))
    sampled = {int(t.n_samples[0]) for trees in rounds[3:] for t in trees}
    assert sampled == {make_row_sampler(config, len(y), obj.n_outputs, 1).n_sample}  # really sampled
    for k in range(obj.n_outputs):
        predicted = base[k] + sum(predict_tree(trees[k], X, 1) for trees in rounds)
        np.testing.assert_allclose(margins[k], predicted, rtol=1e-12, atol=1e-12)
    assert np.ptp(margins) > 0.5  # the trees moved the margins


# -- determinism, the API around it ---------------------------------------------------------------------

def friedman(n=20_000, seed=0):
    X, y = make_friedman(n, 8, seed=seed)
    X[np.random.default_rng(seed).uniform(size=X.shape) < 0.03] = np.nan
    return X, y


@pytest.mark.parametrize("settings", [dict(subsample=0.5, histogram_mode="f64", histogram_layout="row"),
                                      dict(subsample=0.6, histogram_mode="i16", growth_strategy="leafwise"),
                                      dict(histogram_mode="f64", histogram_layout="column", learning_rate=0.5, **GOSS),
                                      dict(histogram_mode="i16", learning_rate=0.5, **GOSS)])
def test_sampled_models_do_not_depend_on_the_thread_count(settings):
    """40,000 rows (samples of 20,000 and more): partitions (the sampled rows' and the
    others'), the quantizer and the GOSS scores run in parallel at 2 threads; the models
    are equal byte for byte."""
    X, y = friedman(40_000)
    config = bst.GBDTConfig(n_estimators=8, **settings)
    one, two = (bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=t) for t in (1, 2))
    assert one.to_bytes() == two.to_bytes()


def test_seed_changes_the_sample_and_the_loaded_config_retrains_the_same_model():
    X, y = friedman(3_000)
    ds = bst.Dataset(X, y)
    config = bst.GBDTConfig(n_estimators=5, subsample=0.5, seed=1)
    model = bst.GBDTModel.train(ds, config)
    loaded = bst.GBDTModel.from_bytes(model.to_bytes())
    assert (loaded.config.subsample, loaded.config.goss_top_rate, loaded.config.goss_other_rate) == (0.5, None, None)
    assert bst.GBDTModel.train(ds, loaded.config).to_bytes() == model.to_bytes()
    other_seed = bst.GBDTModel.train(ds, config.replace(seed=2))
    assert not other_seed.trees[0].equals(model.trees[0])
    goss = bst.GBDTModel.train(ds, bst.GBDTConfig(n_estimators=6, learning_rate=0.5, **GOSS))
    goss_loaded = bst.GBDTModel.from_bytes(goss.to_bytes())
    assert (goss_loaded.config.goss_top_rate, goss_loaded.config.goss_other_rate) == (0.2, 0.1)
    assert bst.GBDTModel.train(ds, goss_loaded.config).to_bytes() == goss.to_bytes()


def test_subsample_one_is_the_unsampled_training():
    """subsample=1.0 makes no sampler: the code path of a training without sampling. So
    does GOSS in its warm-up rounds (every row, the root in row order): the same trees,
    array for array, as without sampling."""
    X, y = friedman(3_000)
    ds = bst.Dataset(X, y)
    assert make_row_sampler(bst.GBDTConfig(subsample=1.0), len(y), 1, 1) is None
    plain = bst.GBDTModel.train(ds, bst.GBDTConfig(n_estimators=4, learning_rate=0.3, subsample=1.0))
    warmup = bst.GBDTModel.train(ds, bst.GBDTConfig(n_estimators=4, learning_rate=0.3, **GOSS))  # 3 warm-up rounds
    assert all(a.equals(b) for a, b in zip(warmup.trees[:3], plain.trees[:3], strict=True))
    assert warmup.trees[3].n_samples[0] == 900 and not warmup.trees[3].equals(plain.trees[3])


def test_a_sample_of_every_row_grows_the_unsampled_trees():
    """GOSS with a + b = 1 samples every row with weight (1 - a) / b = 1: the root is then
    a list of all rows (gathered kernels, the quantizer's row list) instead of rows in
    order. i16: exact integer histograms, the same random rounding per row, so the same
    trees exactly; f64: the root's sums in another order, so the same structure and
    values to 1e-12."""
    X, y = friedman(5_000)
    ds = bst.Dataset(X, y)
    for mode in ("i16", "f64"):
        config = bst.GBDTConfig(n_estimators=4, learning_rate=1.0, histogram_mode=mode, histogram_layout="row",
                                subsample=1.0)
        plain = bst.GBDTModel.train(ds, config)
        everything = bst.GBDTModel.train(ds, config.replace(goss_top_rate=0.5, goss_other_rate=0.5))
        for a, b in zip(plain.trees, everything.trees, strict=True):
            for name in ("split_feature", "threshold_bin", "left_child", "right_child", "n_samples",
                         "default_left"):
                np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=f"{mode} {name}")
            if mode == "i16":
                assert a.equals(b)
            np.testing.assert_allclose(a.value, b.value, rtol=1e-12, atol=1e-12)


def test_early_stopping_and_val_set_with_sampling():
    """With a validation set rounds grow one at a time; the sample only depends on the
    round, so the trees are those grown without it; early stopping keeps the best round."""
    X, y = friedman(4_000)
    train, val = bst.Dataset(X[:3000], y[:3000]), bst.Dataset(X[3000:], y[3000:])
    for settings in (dict(subsample=0.5), dict(learning_rate=0.5, **GOSS)):
        config = bst.GBDTConfig(n_estimators=30, max_depth=8, **settings)
        alone = bst.GBDTModel.train(train, config)
        with_val = bst.GBDTModel.train(train, config, val_set=val)
        assert all(a.equals(b) for a, b in zip(alone.trees, with_val.trees, strict=True))
        stopped = bst.GBDTModel.train(train, config.replace(early_stopping_rounds=3, learning_rate=1.0), val_set=val)
        assert stopped.n_trees == stopped.best_iteration + 1 < 30


# -- quality against LightGBM --------------------------------------------------------------------------

def lightgbm_rmse(X_train, y_train, X_test, y_test, p, n_rounds, **sampling):
    params = {**lightgbm_params(p), "seed": 3, **sampling}
    booster = lightgbm.train(params, lightgbm.Dataset(X_train, y_train, params={"max_bin": 255}), n_rounds)
    return float(np.sqrt(np.mean((booster.predict(X_test) - y_test) ** 2)))


def test_quality_matches_lightgbm_bagging_and_goss():
    """Friedman #1 (noise sd 1), 20k training rows, 100 leaf-wise rounds of 31 leaves,
    learning rate 0.1: test RMSE of subsample=0.5 against LightGBM's bagging
    (bagging_fraction=0.5, bagging_freq=1) and of GOSS (0.2, 0.1) against
    data_sample_strategy="goss", each within 5% of LightGBM's (the irreducible error is
    1.0; sampling noise between two seeds of one library is about 1%), and neither
    sampling worse than 10% above boosters without sampling."""
    X, y = make_friedman(25_000, 10, seed=6)
    X_train, X_test, y_train, y_test = train_test_split(X, y, 0.2, seed=6)
    p = naive.Params(objective="squared", leafwise=True, max_depth=None, n_leaves=31, learning_rate=0.1,
                     min_samples_leaf=20, min_child_weight=1e-3)
    ds = bst.Dataset(X_train, y_train)

    def ours(**sampling):
        model = bst.GBDTModel.train(ds, boosters_config(p, 100, seed=3, **sampling), n_threads=1)
        return float(np.sqrt(np.mean((model.predict(X_test) - y_test) ** 2)))

    plain = ours()
    bagging, goss = ours(subsample=0.5), ours(**GOSS)
    lgb_bagging = lightgbm_rmse(X_train, y_train, X_test, y_test, p, 100, bagging_fraction=0.5, bagging_freq=1)
    lgb_goss = lightgbm_rmse(X_train, y_train, X_test, y_test, p, 100, data_sample_strategy="goss",
                             top_rate=0.2, other_rate=0.1)
    assert bagging < 1.05 * lgb_bagging, (bagging, lgb_bagging)
    assert goss < 1.05 * lgb_goss, (goss, lgb_goss)
    assert max(bagging, goss) < 1.1 * plain, (plain, bagging, goss)
