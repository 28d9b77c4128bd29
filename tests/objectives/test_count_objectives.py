"""The log-link regressions: Objective.poisson(), .gamma(), .tweedie(p) and their deviances.

Gradients against the losses written out in NumPy (and their finite differences), models
against LightGBM's ``poisson`` / ``gamma`` / ``tweedie`` with matched settings, save/load,
quantized histograms, both growth strategies and the label checks.
"""

import pickle

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.metrics import mean_gamma_deviance, mean_poisson_deviance, mean_tweedie_deviance

import boosters as bst
from boosters.io.validation import objective_from_json
from boosters.objectives import evaluate
from boosters.objectives.counts import POISSON_MAX_DELTA_STEP
from boosters.objectives.registry import make_objective

KINDS = ["poisson", "gamma", "tweedie"]
POWER = 1.5  # LightGBM's default tweedie_variance_power


def objective_of(kind, power=POWER):
    return bst.Objective.tweedie(power) if kind == "tweedie" else bst.Objective(kind)


def loss(kind, f, y, power=POWER):
    """The per-row loss the objective minimises (up to terms without f)."""
    if kind == "poisson":
        return np.exp(f) - y * f
    if kind == "gamma":
        return y * np.exp(-f) + f
    return np.exp((2 - power) * f) / (2 - power) - y * np.exp((1 - power) * f) / (1 - power)


def naive_gradients(kind, f, y, power=POWER):
    """(grad, hess) of `loss` in f; Poisson's hessian at f + max_delta_step, as LightGBM's."""
    if kind == "poisson":
        return np.exp(f) - y, np.exp(f + POISSON_MAX_DELTA_STEP)
    if kind == "gamma":
        return 1 - y * np.exp(-f), y * np.exp(-f)
    a, b = np.exp((2 - power) * f), y * np.exp((1 - power) * f)
    return a - b, (2 - power) * a - (1 - power) * b


def labels(kind, mu, rng):
    """Counts for Poisson, gamma draws for gamma, and for Tweedie a compound Poisson-gamma
    (many exact zeros, a skewed positive tail) with mean mu."""
    if kind == "poisson":
        return rng.poisson(mu).astype(float)
    if kind == "gamma":
        return rng.gamma(2.0, mu / 2.0)
    counts = rng.poisson(mu / 2.0)  # N ~ Poisson(mu / 2) claims of Gamma(shape 2, scale 1) (mean 2): mean mu
    return np.array([rng.gamma(2.0, 1.0, size=n).sum() for n in counts])


def synthetic(kind, n, seed, integer_features=False):
    """4 features, log-mean a function of the first two (integer features bin identically in
    boosters and LightGBM)."""
    rng = np.random.default_rng(seed)
    if integer_features:
        X = rng.integers(0, 20, size=(n, 4)).astype(float)
        log_mu = X[:, 0] / 10 - 1 + 0.5 * np.sin(X[:, 1])
    else:
        X = rng.normal(size=(n, 4))
        log_mu = 0.7 * X[:, 0] + 0.3 * np.sin(2 * X[:, 1])
    return X, labels(kind, np.exp(log_mu), rng)


def gradients(kind, f, y, w=None, n_threads=1):
    out = np.empty((1, len(y), 2), dtype=np.float32)
    make_objective(objective_of(kind)).gradients(np.ascontiguousarray(f[None, :]), y, w, out, n_threads)
    return out[0, :, 0].astype(np.float64), out[0, :, 1].astype(np.float64)


# -- gradients ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_gradients_match_the_naive_formula(kind, weighted):
    """float32 outputs of float64 formulas: 1e-6 relative (float32 has 24 bits)."""
    rng = np.random.default_rng(0)
    f = rng.normal(0.5, 1.0, size=500)
    y = labels(kind, np.exp(rng.normal(0.5, 1.0, size=500)), rng)
    w = rng.uniform(0.1, 3.0, size=500) if weighted else None
    grad, hess = gradients(kind, f, y, w, n_threads=2)
    want_grad, want_hess = naive_gradients(kind, f, y)
    scale = 1.0 if w is None else w
    np.testing.assert_allclose(grad, scale * want_grad, rtol=1e-6, atol=1e-6 * np.abs(scale * want_grad).max())
    np.testing.assert_allclose(hess, scale * want_hess, rtol=1e-6)
    assert np.all(hess > 0)


@pytest.mark.parametrize("kind", KINDS)
def test_gradients_are_derivatives_of_the_loss(kind):
    """Central differences (step 1e-4: truncation error ~1e-8 relative) against float32
    kernel outputs: 1e-5 relative. Poisson's hessian is the second derivative times
    exp(max_delta_step), LightGBM's damping."""
    rng = np.random.default_rng(1)
    f = rng.normal(0.0, 1.0, size=200)
    y = labels(kind, np.exp(rng.normal(0.0, 1.0, size=200)), rng)
    if kind == "gamma":
        assert np.all(y > 0)
    h = 1e-4
    grad, hess = gradients(kind, f, y)
    np.testing.assert_allclose(grad, (loss(kind, f + h, y) - loss(kind, f - h, y)) / (2 * h), rtol=1e-5, atol=1e-6)
    second = (loss(kind, f + h, y) - 2 * loss(kind, f, y) + loss(kind, f - h, y)) / h ** 2
    damping = np.exp(POISSON_MAX_DELTA_STEP) if kind == "poisson" else 1.0
    np.testing.assert_allclose(hess, damping * second, rtol=1e-5)


@pytest.mark.parametrize("power", [1.1, 1.5, 1.9])
def test_tweedie_power_reaches_the_kernel(power):
    rng = np.random.default_rng(2)
    f, y = rng.normal(size=100), labels("tweedie", np.ones(100), rng)
    out = np.empty((1, 100, 2), dtype=np.float32)
    make_objective(bst.Objective.tweedie(power)).gradients(f[None, :].copy(), y, None, out, 1)
    want_grad, want_hess = naive_gradients("tweedie", f, y, power)
    np.testing.assert_allclose(out[0, :, 0], want_grad, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out[0, :, 1], want_hess, rtol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_start_is_log_of_weighted_mean(kind):
    rng = np.random.default_rng(3)
    y = labels(kind, np.full(300, 2.0), rng)
    w = rng.uniform(0.5, 2.0, size=300)
    start = make_objective(objective_of(kind)).init_scores(y, w)
    assert start == pytest.approx([np.log(np.average(y, weights=w))], rel=1e-14)


# -- metrics --------------------------------------------------------------------------------

@pytest.mark.parametrize("metric, reference", [
    (bst.Metric.poisson_deviance(), mean_poisson_deviance),
    (bst.Metric.gamma_deviance(), mean_gamma_deviance),
    (bst.Metric.tweedie_deviance(1.3), lambda y, mu, sample_weight: mean_tweedie_deviance(
        y, mu, sample_weight=sample_weight, power=1.3)),
])
@pytest.mark.parametrize("weighted", [False, True])
def test_deviances_match_scikit_learn(metric, reference, weighted):
    """Both in float64: 1e-10 relative."""
    rng = np.random.default_rng(4)
    margins = rng.normal(size=(400, 1))
    kind = "gamma" if metric.name == "gamma_deviance" else "tweedie"  # Tweedie labels include zeros
    y = labels(kind, np.exp(rng.normal(size=400)), rng)
    w = rng.uniform(0.1, 2.0, size=400) if weighted else None
    assert evaluate(metric, y, margins, w) == pytest.approx(reference(y, np.exp(margins[:, 0]), sample_weight=w),
                                                            rel=1e-10)


def test_default_metrics_are_the_objectives_deviances():
    assert bst.Metric.default_for(bst.Objective.poisson()) == bst.Metric.poisson_deviance()
    assert bst.Metric.default_for(bst.Objective.gamma()) == bst.Metric.gamma_deviance()
    assert bst.Metric.default_for(bst.Objective.tweedie(1.2)) == bst.Metric.tweedie_deviance(1.2)
    assert bst.Metric("tweedie_deviance@1.2") == bst.Metric.tweedie_deviance(1.2)
    assert not bst.Metric.poisson_deviance().supports(bst.Objective.squared())
    assert not bst.Metric.rmse().supports(bst.Objective.poisson())


# -- against LightGBM -----------------------------------------------------------------------

def matched_configs(kind, n_rounds, min_samples_leaf=20, min_child_weight=1e-3):
    """The same leaf-wise setting in boosters and LightGBM (see tests/support/matched_params.py)."""
    ours = bst.GBDTConfig(objective=objective_of(kind), n_estimators=n_rounds, learning_rate=0.1,
                          growth_strategy=bst.GrowthStrategy.Leafwise, n_leaves=15, max_depth=None,
                          min_child_weight=min_child_weight, min_samples_leaf=min_samples_leaf, l2=0.0,
                          histogram_mode="f64", max_bins=256, subsample=1.0)
    theirs = dict(objective=kind, num_leaves=15, learning_rate=0.1, min_sum_hessian_in_leaf=min_child_weight,
                  min_data_in_leaf=min_samples_leaf, lambda_l2=0.0, max_bin=255, min_data_in_bin=1,
                  feature_pre_filter=False, deterministic=True, force_col_wise=True, num_threads=1, verbose=-1)
    if kind == "tweedie":
        theirs["tweedie_variance_power"] = POWER
    return ours, theirs


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_trees_equal_lightgbm(kind, weighted):
    """Integer features bin the same in both libraries, so the trees are the same (start,
    splits, leaf values): margins within 1e-6 after 20 rounds (measured: at most 2e-8,
    Poisson unweighted identical). Both libraries estimate a child's row count from
    hessian sums, each its own way (user guide, min_samples_leaf), so with these varying
    hessians min_samples_leaf admits different leaves (measured: with 20, LightGBM keeps
    an 18-row leaf; with 1, it passes over a 5-row node's split that boosters takes):
    leaves are limited by the exact hessian sum instead (min_child_weight 5)."""
    X, y = synthetic(kind, 3000, seed=0, integer_features=True)
    w = np.random.default_rng(5).uniform(0.5, 2.0, size=len(y)) if weighted else None
    ours, theirs = matched_configs(kind, 20, min_samples_leaf=1, min_child_weight=5.0)
    model = bst.GBDTModel.train(bst.Dataset(X, y, weights=w), ours)
    booster = lgb.train(theirs, lgb.Dataset(X, y, weight=w), 20)
    expected = booster.predict(X, raw_score=True)
    assert np.ptp(expected) > 0.5  # the trees have learnt something
    np.testing.assert_allclose(model.predict_raw(X).ravel(), expected, atol=1e-6)
    np.testing.assert_allclose(model.predict(X), booster.predict(X), rtol=1e-5)  # exp(margin) both


@pytest.mark.parametrize("kind", KINDS)
def test_validation_deviance_close_to_lightgbm(kind):
    """Continuous features bin slightly differently, so trees drift apart: the validation
    deviance after 100 rounds within 2% of LightGBM's (measured: Poisson 0.03%, gamma
    0.8% better, Tweedie 0.6% worse) and below the constant model's (measured: 0.62,
    0.53 and 0.89 times it; Tweedie's many zeros leave less to learn)."""
    X, y = synthetic(kind, 3000, seed=0)
    Xv, yv = synthetic(kind, 2000, seed=1)
    ours, theirs = matched_configs(kind, 100)
    model = bst.GBDTModel.train(bst.Dataset(X, y), ours, val_set=bst.Dataset(Xv, yv))
    booster = lgb.train(theirs, lgb.Dataset(X, y), 100)
    metric = ours.resolved_metric
    theirs_deviance = evaluate(metric, yv, booster.predict(Xv, raw_score=True)[:, None])
    ours_deviance = model.ensemble.eval_history[-1]
    assert ours_deviance == pytest.approx(evaluate(metric, yv, model.predict_raw(Xv).reshape(-1, 1)), rel=1e-12)
    assert abs(ours_deviance - theirs_deviance) < 0.02 * theirs_deviance
    constant = evaluate(metric, yv, np.full((len(yv), 1), np.log(y.mean())))
    assert ours_deviance < 0.95 * constant


# -- training paths -------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("histogram_mode", ["i16", "i8"])
@pytest.mark.parametrize("growth", [bst.GrowthStrategy.Depthwise, bst.GrowthStrategy.Leafwise])
def test_quantized_histograms_and_growth_strategies(kind, histogram_mode, growth):
    """Quantized gradients fit as well as full precision: validation deviance after 50
    rounds within 2% of the f64 model's (measured: i16 within 0.6%, i8 within 1.1%)."""
    X, y = synthetic(kind, 2000, seed=0)
    Xv, yv = synthetic(kind, 1000, seed=1)
    config = bst.GBDTConfig(objective=objective_of(kind), n_estimators=50, learning_rate=0.1, min_samples_leaf=20,
                            growth_strategy=growth)
    deviances = [bst.GBDTModel.train(bst.Dataset(X, y), config.replace(histogram_mode=mode),
                                     val_set=bst.Dataset(Xv, yv)).ensemble.eval_history[-1]
                 for mode in ("f64", histogram_mode)]
    assert np.all(np.isfinite(deviances))
    assert abs(deviances[1] - deviances[0]) < 0.02 * deviances[0]


@pytest.mark.parametrize("kind", KINDS)
def test_save_load_and_pickle_predict_identically(kind, tmp_path):
    X, y = synthetic(kind, 500, seed=0)
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(objective=objective_of(kind, 1.3),
                                                                  n_estimators=5))
    path = tmp_path / "model.bst"
    model.save(path)
    for copy in (bst.GBDTModel.load(path), bst.GBDTModel.from_bytes(model.to_bytes()),
                 pickle.loads(pickle.dumps(model))):
        assert copy.objective == model.objective
        np.testing.assert_array_equal(copy.predict(X), model.predict(X))
    np.testing.assert_array_equal(model.predict(X), np.exp(model.predict_raw(X).ravel()))
    if kind == "tweedie":
        assert bst.GBDTModel.load(path).objective.variance_power == 1.3


# -- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind, y, message", [
    ("poisson", [1.0, -1.0, 2.0], "y: poisson objective needs labels >= 0, found -1.0"),
    ("tweedie", [1.0, -0.5, 2.0], "y: tweedie objective needs labels >= 0, found -0.5"),
    ("gamma", [1.0, 0.0, 2.0], r"y: gamma objective needs labels > 0, found 0.0"),
    ("gamma", [1.0, -3.0, 2.0], r"y: gamma objective needs labels > 0, found -3.0"),
    ("poisson", [0.0, 0.0, 0.0], r"y: poisson objective needs some training label > 0 \(with weight > 0\)"),
    ("tweedie", [0.0, 0.0, 0.0], r"y: tweedie objective needs some training label > 0 \(with weight > 0\)"),
])
def test_label_errors(kind, y, message):
    X = np.arange(3.0)[:, None]
    with pytest.raises(ValueError, match=message):
        bst.GBDTModel.train(bst.Dataset(X, np.array(y)), bst.GBDTConfig(objective=objective_of(kind)))
    if "training" not in message:  # invalid labels in a validation set too (all 0 is fine there)
        good = bst.Dataset(X, np.array([1.0, 2.0, 3.0]))
        with pytest.raises(ValueError, match=message):
            bst.GBDTModel.train(good, bst.GBDTConfig(objective=objective_of(kind)),
                                val_set=bst.Dataset(X, np.array(y)))


@pytest.mark.parametrize("kind", ["poisson", "tweedie"])
def test_zero_training_mean_is_an_error_and_zero_validation_labels_are_not(kind):
    X = np.arange(4.0)[:, None]
    config = bst.GBDTConfig(objective=objective_of(kind), n_estimators=2, min_samples_leaf=1)
    weighted_out = bst.Dataset(X, np.array([0.0, 0.0, 5.0, 0.0]), weights=np.array([1.0, 1.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match=f"y: {kind} objective needs some training label > 0"):
        bst.GBDTModel.train(weighted_out, config)
    model = bst.GBDTModel.train(bst.Dataset(X, np.array([0.0, 1.0, 2.0, 3.0])), config,
                                val_set=bst.Dataset(X, np.zeros(4)))
    assert np.all(np.isfinite(model.eval_history))


@pytest.mark.parametrize("power, error", [(1.0, ValueError), (2.0, ValueError), (0.5, ValueError),
                                          (float("nan"), ValueError), ("1.5", TypeError)])
def test_variance_power_errors(power, error):
    with pytest.raises(error, match="variance_power"):
        bst.Objective.tweedie(power)
    with pytest.raises(error, match="variance_power"):
        bst.Metric.tweedie_deviance(power)


def test_variance_power_only_for_tweedie():
    with pytest.raises(ValueError, match="variance_power only applies to tweedie"):
        bst.Objective("poisson", variance_power=1.5)
    assert bst.Objective.tweedie() == bst.Objective("tweedie") != bst.Objective.tweedie(1.2)
    assert repr(bst.Objective.tweedie(1.2)) == "Objective.tweedie(1.2)"


def test_tweedie_metric_round_trips_through_the_model_file():
    X, y = synthetic("tweedie", 300, seed=0)
    config = bst.GBDTConfig(objective=bst.Objective.tweedie(1.2), metric=bst.Metric.tweedie_deviance(1.7),
                            n_estimators=3)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config)
    loaded = bst.GBDTModel.from_bytes(model.to_bytes())
    assert loaded.ensemble.config.metric == bst.Metric.tweedie_deviance(1.7)
    assert loaded.objective == bst.Objective.tweedie(1.2)


@pytest.mark.parametrize("data, message", [
    ({"name": "poisson", "n_classes": None, "variance_power": 1.5}, "variance_power only applies to tweedie"),
    ({"name": "tweedie", "n_classes": None, "variance_power": 2.5}, "variance_power must be < 2"),
    ({"name": "cox", "n_classes": None}, "objective must be one of"),
])
def test_bad_objective_in_a_file_is_a_value_error(data, message):
    with pytest.raises(ValueError, match=message):
        objective_from_json(data)


def test_bad_tweedie_metric_label():
    with pytest.raises(ValueError, match="tweedie_deviance@p needs a number p, got 'x'"):
        bst.Metric("tweedie_deviance@x")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sampling", [dict(subsample=0.7, colsample_bytree=0.8),
                                      dict(goss_top_rate=0.2, goss_other_rate=0.1)])
def test_sampling_categorical_features_and_early_stopping(kind, sampling):
    """A categorical feature carrying the log-mean of each category, sampled rows and
    columns, early stopping on the deviance: the model closes at least 70% of the gap
    in validation deviance between the constant model and the true means (measured:
    0.81 to 0.96)."""
    rng = np.random.default_rng(6)
    n = 3000
    category = rng.integers(0, 6, size=n)
    X = np.column_stack([category.astype(float), rng.normal(size=(n, 2))])
    log_mu = np.array([-1.0, 0.0, 1.0, -0.5, 0.5, 1.5])[category]
    y = labels(kind, np.exp(log_mu), rng)
    train, val = slice(0, 2000), slice(2000, None)
    config = bst.GBDTConfig(objective=objective_of(kind), n_estimators=200, learning_rate=0.1, seed=1,
                            early_stopping_rounds=10, **sampling)
    model = bst.GBDTModel.train(bst.Dataset(X[train], y[train], categorical_features=[0]), config,
                                val_set=bst.Dataset(X[val], y[val], categorical_features=[0]))
    constant = evaluate(config.resolved_metric, y[val], np.full((n - 2000, 1), np.log(y[train].mean())))
    truth = evaluate(config.resolved_metric, y[val], log_mu[val, None])
    best = model.eval_history[model.best_iteration]
    assert model.best_iteration < 199  # stopped early
    assert best == min(model.eval_history)
    assert constant - best > 0.7 * (constant - truth)


@pytest.mark.parametrize("with_val_set", [False, True])  # the fast path grows blocks of rounds; with a val_set, one
def test_a_diverging_training_is_an_error_not_a_model_of_nan(with_val_set):
    """gamma at learning rate 10 overflows exp(margin) within a few rounds: every later tree was
    NaN and the model predicted NaN without a word. The trainer checks every tree as it comes
    (in the fast path too, where a block grows many rounds) and names its round and the
    learning rate."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4))
    y = rng.poisson(np.exp(X[:, 0])) + 0.5
    config = bst.GBDTConfig(objective=bst.Objective.gamma(), learning_rate=10.0, n_estimators=50)
    val_set = bst.Dataset(X[:100], y[:100]) if with_val_set else None
    with pytest.raises(ValueError, match=r"diverged: the tree of round 5 .*learning_rate"):  # its first NaN tree
        bst.GBDTModel.train(bst.Dataset(X, y), config, val_set=val_set, n_threads=1)
    # the same data at an ordinary rate trains to finite predictions
    model = bst.GBDTModel.train(bst.Dataset(X, y), config.replace(learning_rate=0.1), val_set=val_set, n_threads=1)
    assert np.all(np.isfinite(model.predict(X)))


def test_a_diverging_dask_training_is_an_error_not_a_model_of_nan():
    """The same on Dask: its rounds run in the same boosting loop, which checks every tree."""
    import dask.array as da
    from distributed import Client, LocalCluster

    from boosters.dask import train

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4))
    y = rng.poisson(np.exp(X[:, 0])) + 0.5
    config = bst.GBDTConfig(objective=bst.Objective.gamma(), learning_rate=10.0, n_estimators=50)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        with pytest.raises(ValueError, match=r"diverged: the tree of round 5 .*learning_rate"):
            train(client, da.from_array(X, chunks=(250, -1)), da.from_array(y, chunks=250), config)
