"""init_score: starting margins per row on the training and validation Datasets and at
prediction (LightGBM's init_score, XGBoost's base_margin), against LightGBM, XGBoost and
exact identities."""

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

import boosters as bst


def integer_data(n=2000, seed=0, kind="regression"):
    """Integer features (both libraries bin them the same, so trees can be equal)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 20, size=(n, 4)).astype(float)
    signal = X[:, 0] / 5 + np.sin(X[:, 1]) - X[:, 2] / 10
    if kind == "regression":
        return X, signal + 0.2 * rng.normal(size=n)
    return X, (signal - signal.mean() + rng.logistic(size=n) > 0).astype(float)


def matched(kind, n_rounds=20):
    """The leaf-wise setting of tests/objectives/test_count_objectives.py's LightGBM comparison."""
    objective = bst.Objective.squared() if kind == "regression" else bst.Objective.logistic()
    ours = bst.GBDTConfig(objective=objective, n_estimators=n_rounds, learning_rate=0.1, growth_strategy="leafwise",
                          n_leaves=15, max_depth=None, min_child_weight=5.0, min_samples_leaf=1, l2=0.0,
                          subsample=1.0, histogram_mode="f64")
    theirs = dict(objective="regression" if kind == "regression" else "binary", num_leaves=15, learning_rate=0.1,
                  min_sum_hessian_in_leaf=5.0, min_data_in_leaf=1, lambda_l2=0.0, max_bin=255, min_data_in_bin=1,
                  feature_pre_filter=False, deterministic=True, force_col_wise=True, num_threads=1, verbose=-1)
    return ours, theirs


@pytest.mark.parametrize("kind", ["regression", "binary"])
def test_training_from_init_score_matches_lightgbm(kind):
    """LightGBM with init_score boosts from it without boost_from_average; so does
    boosters (start 0, the init_score alone). Integer features: the same trees, so the
    margins agree within 1e-6 after 20 rounds (LightGBM's predict leaves the init_score
    out, its raw score + init_score is compared)."""
    X, y = integer_data(kind=kind)
    init = np.random.default_rng(1).normal(scale=0.5, size=len(y)) + (1.0 if kind == "regression" else 0.0)
    ours, theirs = matched(kind)
    model = bst.GBDTModel.train(bst.Dataset(X, y, init_score=init), ours)
    booster = lgb.train(theirs, lgb.Dataset(X, y, init_score=init), 20)
    assert model.forest.base_scores.tolist() == [0.0]
    expected = booster.predict(X, raw_score=True) + init
    assert np.ptp(expected - init) > 0.5  # the trees learnt something
    np.testing.assert_allclose(model.predict_raw(X, init_score=init), expected, atol=1e-6)


def test_training_from_base_margin_is_close_to_xgboost():
    """XGBoost's base_margin replaces base_score the same way. Depth-wise, float data (bins
    differ a little): held-out RMSE within 3% of XGBoost's (measured: 0.3%)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 4))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.normal(size=3000)
    init = 0.5 * X[:, 0]  # a prior model's guess
    train, test = slice(0, 2000), slice(2000, None)
    model = bst.GBDTModel.train(bst.Dataset(X[train], y[train], init_score=init[train]),
                                bst.GBDTConfig(n_estimators=30, learning_rate=0.1, max_depth=4, histogram_mode="f64",
                                               growth_strategy="depthwise", subsample=1.0, min_samples_leaf=1,
                                               min_child_weight=1.0))  # XGBoost's defaults
    booster = xgb.train(dict(tree_method="hist", max_depth=4, eta=0.1, max_bin=256, nthread=1),
                        xgb.DMatrix(X[train], y[train], base_margin=init[train]), 30)
    ours = model.predict(X[test], init_score=init[test])
    theirs = booster.predict(xgb.DMatrix(X[test], base_margin=init[test]))
    rmse = lambda p: np.sqrt(np.mean((p - y[test]) ** 2))  # noqa: E731
    assert abs(rmse(ours) - rmse(theirs)) < 0.03 * rmse(theirs)
    assert rmse(ours) < 0.6 * np.std(y[test])


def test_constant_init_score_is_the_default_start():
    """init_score = the mean label everywhere is exactly the squared error's own start:
    the same trees (bit for bit), and predict(init_score=mean) the default model's
    predictions."""
    X, y = integer_data()
    config = bst.GBDTConfig(n_estimators=10)
    default = bst.GBDTModel.train(bst.Dataset(X, y), config)
    mean = default.forest.base_scores[0]
    shifted = bst.GBDTModel.train(bst.Dataset(X, y, init_score=np.full(len(y), mean)), config)
    for a, b in zip(shifted.trees, default.trees):
        np.testing.assert_array_equal(a.value, b.value)
    # the same sums in another order (init + trees vs base + trees): equal to 1e-12
    np.testing.assert_allclose(shifted.predict(X, init_score=np.full(len(y), mean)), default.predict(X),
                               rtol=0, atol=1e-12)


def test_continued_training_from_a_model_margins():
    """Training 5 more rounds from a 5-round model's margins gives the 10-round model:
    margins equal to 1e-9 (sums of the same leaf values in another order)."""
    X, y = integer_data(kind="binary")
    # every row each round: a round's row sample depends on its index among the rounds
    config = bst.GBDTConfig(n_estimators=5, objective=bst.Objective.logistic(), subsample=1.0)
    first = bst.GBDTModel.train(bst.Dataset(X, y), config)
    second = bst.GBDTModel.train(bst.Dataset(X, y, init_score=first.predict_raw(X)), config)
    whole = bst.GBDTModel.train(bst.Dataset(X, y), config.replace(n_estimators=10))
    np.testing.assert_allclose(second.predict_raw(X, init_score=first.predict_raw(X)), whole.predict_raw(X),
                               atol=1e-9)
    p = second.predict(X, init_score=first.predict_raw(X))  # the link after the init_score
    np.testing.assert_allclose(p, whole.predict(X), atol=1e-9)


def test_validation_init_score_is_added_to_the_scored_margins():
    """A validation Dataset's init_score starts its margins: eval_history is the metric
    of predict_raw(X_val, init_score=...), to 1e-12; predict of that Dataset uses it."""
    X, y = integer_data(kind="binary")
    rng = np.random.default_rng(4)
    init = rng.normal(size=len(y))
    train = bst.Dataset(X[:1500], y[:1500], init_score=init[:1500])
    val = bst.Dataset(X[1500:], y[1500:], init_score=init[1500:])
    model = bst.GBDTModel.train(train, bst.GBDTConfig(n_estimators=5, objective=bst.Objective.logistic()),
                                val_set=val)
    margins = model.predict_raw(X[1500:], init_score=init[1500:])
    logloss = np.mean(np.logaddexp(0.0, margins) - y[1500:] * margins)
    assert model.eval_history[-1] == pytest.approx(logloss, rel=1e-12)
    np.testing.assert_array_equal(model.predict_raw(val), margins)  # the Dataset's own init_score
    np.testing.assert_array_equal(model.predict_raw(val, init_score=np.zeros(500)), model.predict_raw(X[1500:]))


def test_multiclass_init_score_has_one_column_per_class():
    """softmax(3): init_score (n_rows, 3); margins = init_score + trees (base 0)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 3))
    y = np.digitize(X[:, 0], [-0.5, 0.5]).astype(float)
    init = rng.normal(size=(600, 3))
    config = bst.GBDTConfig(n_estimators=4, objective=bst.Objective.softmax(3))
    model = bst.GBDTModel.train(bst.Dataset(X, y, init_score=init), config)
    assert model.forest.base_scores.tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(model.predict_raw(X, init_score=init), model.predict_raw(X) + init, rtol=0, atol=1e-12)
    p = model.predict(X, init_score=init)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    with pytest.raises(ValueError, match="train: init_score has 1 value\\(s\\) per row but the model has 3"):
        bst.GBDTModel.train(bst.Dataset(X, y, init_score=init[:, 0]), config)
    with pytest.raises(ValueError, match="init_score has 2 value\\(s\\) per row but the model has 3"):
        model.predict(X, init_score=init[:, :2])


@pytest.mark.parametrize("init_score, message", [
    (np.zeros(9), "init_score has 9 values but X has 10 rows"),
    (np.zeros((10, 2, 1)), "init_score must have shape \\(10,\\) or \\(10, n_outputs\\)"),
    (np.array([np.nan] + [0.0] * 9), "init_score contains NaN or inf"),
    (np.full((10, 2), np.inf), "init_score contains NaN or inf"),
    (np.array(["a"] * 10), "init_score must be numeric"),
])
def test_bad_init_score_is_a_clear_error(init_score, message):
    with pytest.raises(ValueError, match=message):
        bst.Dataset(np.zeros((10, 2)), np.zeros(10), init_score=init_score)


def test_init_score_is_kept_read_only_and_shown():
    init = np.arange(10.0)
    data = bst.Dataset(np.zeros((10, 2)), np.zeros(10), init_score=init.reshape(-1, 1))
    assert data.init_score.shape == (10,) and not data.init_score.flags.writeable
    assert "init_score" in repr(data)


def test_sklearn_fit_takes_init_score_and_eval_init_score():
    """fit(init_score=, eval_init_score=) are the Datasets' init_score (LightGBM's fit
    arguments): the estimator's model is GBDTModel.train's, and its evals_result_ the
    scores of predict_raw(X_val, init_score=...) (1e-12)."""
    from boosters.sklearn import GBDTClassifier, GBDTRegressor

    X, y = integer_data(1000, kind="binary")
    init = np.random.default_rng(6).normal(size=len(y))
    clf = GBDTClassifier(n_estimators=5, n_threads=2).fit(X[:700], y[:700], init_score=init[:700],
                                                          eval_set=(X[700:], y[700:]),
                                                          eval_init_score=[init[700:]])
    model = bst.GBDTModel.train(bst.Dataset(X[:700], y[:700], init_score=init[:700]),
                                bst.GBDTConfig(n_estimators=5, objective=bst.Objective.logistic()))
    np.testing.assert_array_equal(clf.decision_function(X), model.predict_raw(X))
    margins = model.predict_raw(X[700:], init_score=init[700:])
    logloss = np.mean(np.logaddexp(0.0, margins) - y[700:] * margins)
    assert clf.evals_result_["valid"]["logloss"][-1] == pytest.approx(logloss, rel=1e-12)
    with pytest.raises(ValueError, match="eval_init_score is given without an eval_set"):
        GBDTRegressor(n_estimators=2).fit(X, y, eval_init_score=init)
    with pytest.raises(ValueError, match="init_score has 10 values but X has 1000 rows"):
        GBDTRegressor(n_estimators=2).fit(X, y, init_score=init[:10])
