"""DART (``booster="dart"``): dropout of earlier rounds, normalisation, the margins the
training keeps, early stopping, save/load, and quality against LightGBM's and XGBoost's
DART with matched settings."""

import pickle
import warnings

import lightgbm as lgb
import numpy as np
import pytest
import scipy.sparse as sp
import xgboost as xgb
from sklearn.metrics import log_loss

import boosters as bst
from boosters.callbacks import learning_rate, record_evaluation
from boosters.io.validation import DART_FIELDS, config_from_json, config_to_json
from boosters.sklearn import GBDTRegressor
from boosters.training.dart import DartDropout
from boosters.objectives import evaluate
from support.tree_compare import same_trees

# incrementally corrected margins against a fresh prediction of the final trees: sums of
# the same numbers in another order and scaled copies, ~1e-15 relative apart
MARGIN_RTOL = 1e-9


def regression_data(n=1500, seed=0, noise=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + X[:, 2] * X[:, 3] + noise * rng.normal(size=n)
    return X, y


def class_data(n=1500, seed=0, n_classes=3):
    X, score = regression_data(n, seed)
    return X, np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])).astype(np.float64)


def trees(model):
    return model.trees


def dart(**params):
    return dict(booster="dart", **params)


# ----------------------------------------------------------------------------------------
# no dropout, every dropout


@pytest.mark.parametrize("no_drop", [dict(skip_drop=1.0), dict(drop_rate=0.0)])
@pytest.mark.parametrize("objective", ["squared", "softmax"])
@pytest.mark.parametrize("with_val", [False, True])
def test_without_dropout_dart_is_plain_boosting_exactly(no_drop, objective, with_val):
    X, y = regression_data() if objective == "squared" else class_data()
    obj = bst.Objective.squared() if objective == "squared" else bst.Objective.softmax(3)
    val = bst.Dataset(X[:300], y[:300]) if with_val else None
    cfg = bst.GBDTConfig(n_estimators=12, learning_rate=0.3, objective=obj, max_depth=4)
    plain = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg, val_set=val)
    dropped = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg.replace(**dart(**no_drop)), val_set=val)
    assert same_trees(plain, dropped)
    assert dropped.eval_history == plain.eval_history


@pytest.mark.parametrize("growth", ["depthwise", "leafwise"])
def test_dropping_every_round_refits_the_first_tree(growth):
    """drop_rate=1, skip_drop=0, no max_drop: every round drops all earlier rounds, so it
    fits the base margins again: the first round's tree w0 (a plain 1-round model's, up to
    the 1e-16 residue of adding and taking off the trees). With k dropped rounds the new
    tree is lr / (k + 1) * w0 and the dropped ones are scaled by k / (k + 1): after 3 rounds
    every tree is lr / 3 * w0 (their sum the 1-round model)."""
    X, y = regression_data()
    lr = 0.3
    cfg = bst.GBDTConfig(n_estimators=3, learning_rate=lr, growth_strategy=growth, max_depth=4, n_leaves=8,
                         booster="dart", drop_rate=1.0, skip_drop=0.0, max_drop=None,
                         subsample=1.0)  # every round's tree fits the same rows
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg)
    first = trees(bst.GBDTModel.train(bst.Dataset(X, y), config=cfg.replace(n_estimators=1, booster="gbdt")))[0]
    assert len(trees(model)) == 3
    for tree in trees(model):
        assert np.array_equal(tree.split_feature, first.split_feature)
        assert np.array_equal(tree.threshold, first.threshold)
        np.testing.assert_allclose(tree.value, first.value / 3, rtol=1e-10)
    # XGBoost's normalisation (a = lr): round 1 grows lr / (1 + lr) w0 and scales round 0 by
    # 1 / (1 + lr); round 2 grows lr / (2 + lr) w0 and scales both earlier by 2 / (2 + lr)
    xgb_mode = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg.replace(xgboost_dart_mode=True))
    w0 = first.value / lr
    expected = [lr / (1 + lr) * 2 / (2 + lr), lr / (1 + lr) * 2 / (2 + lr), lr / (2 + lr)]
    for tree, scale in zip(trees(xgb_mode), expected):
        np.testing.assert_allclose(tree.value, scale * w0, rtol=1e-10)


def choices(n_draws, n_rounds, **params):
    dropout = DartDropout(bst.GBDTConfig(booster="dart", **params), 1)
    return [dropout._choose(n_rounds) for _ in range(n_draws)]


def test_dropout_selection_rates():
    """The selection against its probabilities over 20000 draws (tolerances ~4 standard
    errors): skip_drop is the share of rounds without dropout; otherwise each of n earlier
    rounds drops with probability min(drop_rate, max_drop / n), at most max_drop of them."""
    skipped = np.mean([len(c) == 0 for c in choices(20000, 40, drop_rate=1.0, skip_drop=0.3, max_drop=None)])
    assert abs(skipped - 0.3) < 0.015  # never dropping nothing otherwise: drop_rate 1
    counts = [len(c) for c in choices(20000, 40, drop_rate=0.1, skip_drop=0.0, max_drop=None)]
    assert abs(np.mean(counts) - 4.0) < 0.06  # binomial(40, 0.1): sd 1.9, standard error 0.013
    capped = choices(20000, 40, drop_rate=0.1, skip_drop=0.0, max_drop=2)  # rate min(0.1, 2 / 40)
    assert max(len(c) for c in capped) == 2
    assert abs(np.mean([len(c) == 0 for c in capped]) - 0.95 ** 40) < 0.01
    assert all(np.all(np.diff(c) > 0) and (len(c) == 0 or 0 <= c[0] and c[-1] < 40) for c in capped)
    assert len(choices(1, 0, skip_drop=0.0)[0]) == 0  # the first round has nothing to drop


# ----------------------------------------------------------------------------------------
# the margins the training keeps


FEATURES = {
    "depthwise": dict(max_depth=4),
    "leafwise": dict(growth_strategy="leafwise", n_leaves=12),
    "subsample": dict(subsample=0.7),
    "goss": dict(goss_top_rate=0.3, goss_other_rate=0.2),
    "i16": dict(histogram_mode="i16"),
    "xgboost_mode": dict(xgboost_dart_mode=True),
    "no_max_drop": dict(max_drop=None),
    "softmax": dict(objective=bst.Objective.softmax(3)),
    "logistic": dict(objective=bst.Objective.logistic()),
    "categorical": dict(max_onehot_cats=2),
    "sparse": dict(),
}


def feature_data(name, n=1200, seed=0):
    if name in ("softmax", "logistic"):
        X, y = class_data(n, seed, 3 if name == "softmax" else 2)
    else:
        X, y = regression_data(n, seed)
    if name == "categorical":
        X[:, 5] = np.random.default_rng(seed).integers(0, 6, size=n)
        y = y + np.array([0, 2, -1, 0.5, 3, -2])[X[:, 5].astype(int)]
    if name == "sparse":
        X[np.abs(X) < 0.8] = 0.0
        X = sp.csr_matrix(X)
    return X, y


def dataset(name, X, y):
    return bst.Dataset(X, y, categorical_features=[5] if name == "categorical" else None)


@pytest.mark.parametrize("name", list(FEATURES))
def test_training_and_validation_margins_match_the_final_trees(name):
    """The training margins (scored every round for a callback) and the validation
    margins are corrected in place when rounds are dropped and rescaled: their last score
    is the score of the final model's predictions (MARGIN_RTOL)."""
    X, y = feature_data(name)
    Xv, yv = feature_data(name, n=400, seed=1)
    cfg = bst.GBDTConfig(n_estimators=25, learning_rate=0.3, booster="dart", drop_rate=0.3, skip_drop=0.2,
                         **FEATURES[name])
    metric = cfg.resolved_metric
    recorded = {}
    model = bst.GBDTModel.train(dataset(name, X, y), config=cfg, callbacks=[record_evaluation(recorded)])
    train_score = evaluate(metric, y, model.predict_raw(X).reshape(len(y), -1))
    assert np.isclose(recorded["train"][metric.label][-1], train_score, rtol=MARGIN_RTOL, atol=0)
    model = bst.GBDTModel.train(dataset(name, X, y), config=cfg, val_set=dataset(name, Xv, yv))
    val_score = evaluate(metric, yv, model.predict_raw(Xv).reshape(len(yv), -1))
    assert np.isclose(model.eval_history[-1], val_score, rtol=MARGIN_RTOL, atol=0)
    # dropout did happen: some tree was rescaled, so its values are not a plain model's
    plain = bst.GBDTModel.train(dataset(name, X, y), config=cfg.replace(booster="gbdt"))
    assert not same_trees(model, plain)


def test_learning_rate_schedule_with_dart():
    """A learning-rate callback sets the rate a round's new trees are divided from: with
    skip_drop=1 the plain model's trees exactly; with dropout (XGBoost's normalisation, which
    reads the rate) the training margins still match the final trees (MARGIN_RTOL)."""
    X, y = regression_data()
    schedule = [0.5 * 0.9 ** r for r in range(15)]
    cfg = bst.GBDTConfig(n_estimators=15, max_depth=4, booster="dart", drop_rate=0.4, skip_drop=0.0,
                         xgboost_dart_mode=True)
    plain = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg.replace(booster="gbdt"),
                                callbacks=[learning_rate(schedule)])
    no_drop = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg.replace(skip_drop=1.0),
                                  callbacks=[learning_rate(schedule)])
    assert same_trees(plain, no_drop)
    recorded = {}
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg,
                                callbacks=[learning_rate(schedule), record_evaluation(recorded)])
    rmse = float(np.sqrt(np.mean((model.predict(X) - y) ** 2)))
    assert np.isclose(recorded["train"]["rmse"][-1], rmse, rtol=MARGIN_RTOL, atol=0)
    assert not same_trees(model, plain)


# ----------------------------------------------------------------------------------------
# seeds and threads


def test_seeded_and_independent_of_the_thread_count():
    X, y = regression_data()
    cfg = bst.GBDTConfig(n_estimators=30, learning_rate=0.3, max_depth=4, booster="dart", drop_rate=0.2,
                         skip_drop=0.3, subsample=0.8, seed=5)
    one = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg, n_threads=1)
    two = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg, n_threads=2)
    assert same_trees(one, two)
    assert one.to_bytes() == two.to_bytes()
    other = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg.replace(seed=6), n_threads=1)
    assert not same_trees(one, other)


# ----------------------------------------------------------------------------------------
# early stopping, save/load, estimators


def test_early_stopping_keeps_the_trees_as_they_were_at_the_best_round():
    """Later rounds rescale earlier trees; the model cut back to the best round has them
    scaled as after that round: its validation score is the best one (MARGIN_RTOL)."""
    X, y = regression_data(1500, noise=1.5)
    Xv, yv = regression_data(500, seed=1, noise=1.5)
    cfg = bst.GBDTConfig(n_estimators=200, learning_rate=0.5, max_depth=6, booster="dart", drop_rate=0.5,
                         skip_drop=0.0, early_stopping_rounds=5)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg, val_set=bst.Dataset(Xv, yv))
    best = model.best_iteration
    assert best is not None and model.n_trees == best + 1 < len(model.eval_history) < 200
    rmse = float(np.sqrt(np.mean((model.predict(Xv) - yv) ** 2)))
    assert np.isclose(rmse, model.eval_history[best], rtol=MARGIN_RTOL, atol=0)
    assert model.eval_history[best] == min(model.eval_history)


def test_save_load_keeps_the_dart_config_and_predictions(tmp_path):
    X, y = regression_data()
    cfg = bst.GBDTConfig(n_estimators=15, booster="dart", drop_rate=0.25, skip_drop=0.1, max_drop=3,
                         xgboost_dart_mode=True)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg)
    model.save(tmp_path / "dart.npz")
    for loaded in (bst.GBDTModel.from_bytes(model.to_bytes()), bst.GBDTModel.load(tmp_path / "dart.npz"),
                   pickle.loads(pickle.dumps(model))):
        assert loaded.config == cfg
        assert np.array_equal(loaded.predict(X), model.predict(X))
    written = config_to_json(cfg)
    assert {name: written[name] for name in DART_FIELDS} == dict(booster="dart", drop_rate=0.25, skip_drop=0.1,
                                                                 max_drop=3, xgboost_dart_mode=True)
    # a plain config's JSON has no DART keys: the files older versions write; one key away
    # from its default is written alone
    assert not set(DART_FIELDS) & set(config_to_json(bst.GBDTConfig()))
    assert set(DART_FIELDS) & set(config_to_json(bst.GBDTConfig(max_drop=None))) == {"max_drop"}
    assert config_from_json(config_to_json(bst.GBDTConfig(max_drop=None))) == bst.GBDTConfig(max_drop=None)


def test_estimator_takes_the_dart_parameters():
    X, y = regression_data()
    est = GBDTRegressor(n_estimators=20, booster="dart", drop_rate=0.3, skip_drop=0.0).fit(X, y)
    assert est.get_params()["booster"] == "dart"
    ref = bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTConfig(n_estimators=20, booster="dart",
                                                                       drop_rate=0.3, skip_drop=0.0))
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))


@pytest.mark.parametrize("name, value, message", [
    ("booster", "goss", "booster must be one of"), ("drop_rate", 1.5, "drop_rate must be in"),
    ("skip_drop", -0.1, "skip_drop must be"), ("max_drop", 0, "max_drop"), ("xgboost_dart_mode", "yes", "xgboost"),
])
def test_bad_dart_parameters_are_named(name, value, message):
    with pytest.raises((ValueError, TypeError), match=message):
        bst.GBDTConfig(**{name: value})


# ----------------------------------------------------------------------------------------
# against LightGBM and XGBoost


def held_out_rmse(predict, Xv, yv):
    return float(np.sqrt(np.mean((predict(Xv) - yv) ** 2)))


def lightgbm_dart(X, y, rounds, lr, xgboost_mode, seed):
    params = dict(objective="regression", boosting="dart", num_leaves=15, learning_rate=lr, lambda_l2=1.0,
                  min_sum_hessian_in_leaf=5.0, min_data_in_leaf=1, max_bin=255, min_data_in_bin=1,
                  uniform_drop=True, drop_rate=0.1, skip_drop=0.5, max_drop=50, xgboost_dart_mode=xgboost_mode,
                  drop_seed=seed, num_threads=1, deterministic=True, verbose=-1)
    return lgb.train(params, lgb.Dataset(X, y), rounds).predict


def xgboost_dart(X, y, rounds, lr, seed):
    params = dict(objective="reg:squarederror", booster="dart", tree_method="hist", grow_policy="lossguide",
                  max_depth=0, max_leaves=15, eta=lr, reg_lambda=1.0, min_child_weight=5.0, max_bin=256,
                  rate_drop=0.1, skip_drop=0.5, sample_type="uniform", normalize_type="tree",
                  base_score=float(np.mean(y)), seed=seed, nthread=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = xgb.train(params, xgb.DMatrix(X, y), rounds)
    return lambda Xv: model.predict(xgb.DMatrix(Xv))


# (number of data sets and seeds, tolerance): one run varies by ~5% with its dropout draws,
# the mean of three by less; the three-seed variants are the slow ones
SEEDS_AND_TOLERANCE = [pytest.param(1, 0.10, id="1-seed"), pytest.param(3, 0.05, id="3-seeds", marks=pytest.mark.slow)]


@pytest.mark.parametrize("n_seeds, tolerance", SEEDS_AND_TOLERANCE)
@pytest.mark.parametrize("xgboost_mode", [False, True])
def test_quality_against_lightgbm_and_xgboost_dart(xgboost_mode, n_seeds, tolerance):
    """Held-out RMSE of DART with matched trees (leaf-wise, 15 leaves, l2 1, min hessian 5)
    and dropout (uniform, drop_rate 0.1, skip_drop 0.5, max_drop 50), averaged over data
    sets and seeds: within `tolerance` of the better of LightGBM's DART of the same
    normalisation and, for XGBoost's normalisation, XGBoost's (normalize_type="tree");
    and clearly better than the base score alone. (Measured: ours 1.5% above LightGBM
    with the paper's normalisation, 3% below both with XGBoost's, over 3 seeds.)"""
    rounds, lr = 60, 0.3
    ours, theirs, base = [], [], []
    for seed in range(n_seeds):
        X, y = regression_data(2500, seed)
        Xv, yv = regression_data(1000, seed + 10)
        cfg = bst.GBDTConfig(n_estimators=rounds, learning_rate=lr, growth_strategy="leafwise", n_leaves=15,
                             min_child_weight=5.0, histogram_mode="f64", booster="dart", xgboost_dart_mode=xgboost_mode,
                             seed=seed)
        ours.append(held_out_rmse(bst.GBDTModel.train(bst.Dataset(X, y), config=cfg).predict, Xv, yv))
        refs = [held_out_rmse(lightgbm_dart(X, y, rounds, lr, xgboost_mode, seed), Xv, yv)]
        if xgboost_mode:
            refs.append(held_out_rmse(xgboost_dart(X, y, rounds, lr, seed), Xv, yv))
        theirs.append(refs)
        base.append(float(np.std(yv)))
    best_reference = min(np.mean(theirs, axis=0))
    assert np.mean(ours) <= (1 + tolerance) * best_reference, (ours, theirs)
    assert np.mean(ours) < 0.5 * np.mean(base)


@pytest.mark.parametrize("n_seeds, tolerance", [pytest.param(1, 0.05, id="1-seed"),
                                               pytest.param(3, 0.03, id="3-seeds", marks=pytest.mark.slow)])
def test_binary_log_loss_against_lightgbm_dart(n_seeds, tolerance):
    """Logistic DART (same trees and dropout settings as above, min hessian 1): the held-out
    log loss of the predicted probabilities, averaged over data sets and seeds, within
    `tolerance` of LightGBM's DART (3 runs measured 0.5% apart on average; single runs
    vary by ~3%)."""
    rounds, lr = 60, 0.3
    ours, theirs = [], []
    for seed in range(n_seeds):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(3500, 6))
        y = (2 * X[:, 0] + np.sin(3 * X[:, 1]) + X[:, 2] * X[:, 3] + rng.normal(size=3500) > 0).astype(np.float64)
        (X, Xv), (y, yv) = np.split(X, [2500]), np.split(y, [2500])
        cfg = bst.GBDTConfig(n_estimators=rounds, learning_rate=lr, objective=bst.Objective.logistic(),
                             growth_strategy="leafwise", n_leaves=15, histogram_mode="f64", booster="dart", seed=seed)
        ours.append(log_loss(yv, bst.GBDTModel.train(bst.Dataset(X, y), config=cfg).predict(Xv)))
        params = dict(objective="binary", boosting="dart", num_leaves=15, learning_rate=lr, lambda_l2=1.0,
                      min_sum_hessian_in_leaf=1.0, min_data_in_leaf=1, uniform_drop=True, drop_rate=0.1,
                      skip_drop=0.5, max_drop=50, drop_seed=seed, num_threads=1, verbose=-1)
        theirs.append(log_loss(yv, lgb.train(params, lgb.Dataset(X, y), rounds).predict(Xv)))
    assert np.mean(ours) <= (1 + tolerance) * np.mean(theirs), (ours, theirs)
    assert np.mean(ours) < 0.6 * log_loss(yv, np.full(len(yv), np.mean(y)))  # far better than the base rate
