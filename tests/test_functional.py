"""The functional API (bst.train, bst.cv) as LightGBM's and XGBoost's users call it: a
params dict, named validation sets (the training set among them), their callbacks,
evals_result, continued training from a model or a file, and cross-validation whose
means and deviations are those of training each fold by hand."""

import logging

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import GroupKFold, KFold

import boosters as bst
from boosters import functional
from boosters.callbacks import early_stopping, record_evaluation
from support.tree_compare import assert_same_trees


def make_data(n=700, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, X[:, 0] - X[:, 1] ** 2 + 0.3 * rng.normal(size=n)


PARAMS = {"max_depth": 3, "learning_rate": 0.3}


def test_train_with_lightgbm_habits_gives_the_boosters_model():
    X, y = make_data()
    train_set, valid = bst.Dataset(X[:500], y[:500]), bst.Dataset(X[500:], y[500:])
    scores = {}
    model = bst.train(PARAMS, train_set, 60, valid_sets=[train_set, valid],
                      callbacks=[lgb.early_stopping(3, verbose=False), lgb.record_evaluation(scores)])
    reference = bst.GBDTModel.train(train_set, bst.GBDTConfig(n_estimators=60, **PARAMS), val_set=valid,
                                    callbacks=[early_stopping(3)])
    assert model.n_trees < 60 and model.to_bytes() == reference.to_bytes()
    assert list(scores) == ["training", "valid_1"]  # LightGBM's default names
    assert scores["valid_1"]["rmse"] == list(reference.eval_history)  # up to the round it stopped at
    assert scores["training"]["rmse"][-1] < scores["valid_1"]["rmse"][-1]
    # LightGBM's habit predict(num_iteration=best_iteration) counts rounds; boosters' best_iteration is
    # 0-based, so it would leave the best round out: said, not silently done
    with pytest.warns(UserWarning, match="leaves out the best round"):
        fewer = model.predict(X, num_iteration=model.best_iteration)
    assert np.array_equal(fewer, model[:model.best_iteration].predict(X))
    assert np.array_equal(model.predict(X, num_iteration=model.best_iteration + 1), model.predict(X))


def test_train_with_xgboost_habits():
    X, y = make_data(seed=1)
    dtrain, dvalid = bst.Dataset(X[:500], y[:500]), bst.Dataset(X[500:], y[500:])
    scores = {}
    model = bst.train(PARAMS, dtrain, num_boost_round=60, evals=[(dtrain, "train"), (dvalid, "eval")],
                      evals_result=scores, early_stopping_rounds=3)
    reference = bst.GBDTModel.train(dtrain, bst.GBDTConfig(n_estimators=60, early_stopping_rounds=3, **PARAMS),
                                    val_set=dvalid)
    assert model.to_bytes() == reference.to_bytes() and list(scores) == ["train", "eval"]
    with_callback = bst.train(PARAMS, dtrain, 60, evals=[(dvalid, "eval")],
                              callbacks=[xgb.callback.EarlyStopping(rounds=3)])
    assert_same_trees(with_callback, reference)  # (its config has no early_stopping_rounds: not the same bytes)
    assert with_callback.best_iteration == reference.best_iteration < 59


def test_other_callbacks_of_theirs_say_how_to_write_them():
    X, y = make_data()
    with pytest.raises(TypeError, match="LightGBM's reset_parameter"):
        bst.train(PARAMS, bst.Dataset(X, y), 3, callbacks=[lgb.reset_parameter(learning_rate=[0.1] * 3)])
    with pytest.raises(TypeError, match="xgboost's LearningRateScheduler"):
        bst.train(PARAMS, bst.Dataset(X, y), 3, callbacks=[xgb.callback.LearningRateScheduler([0.1] * 3)])


@pytest.mark.parametrize("route", ["model", "path", "xgb_model"])
def test_continued_training_is_the_longer_training(tmp_path, route):
    # float64 histograms and no sampling: 10 rounds then 10 more are the 20-round model
    # (the new rounds grow from the first model's margins, its raw predictions)
    params = {**PARAMS, "subsample": 1.0}
    X, y = make_data(seed=2)
    train_set, valid = bst.Dataset(X[:500], y[:500]), bst.Dataset(X[500:], y[500:])
    longer = bst.train(params, train_set, 20, valid_sets=[valid])
    first = bst.train(params, train_set, 10)
    start = {"model": dict(init_model=first), "xgb_model": dict(xgb_model=first)}.get(route)
    if start is None:
        first.save(tmp_path / "first.json")
        start = dict(init_model=str(tmp_path / "first.json"))
    scores = {}
    continued = bst.train(params, train_set, 10, valid_sets=[valid], evals_result=scores, **start)
    assert_same_trees(continued, longer)
    assert np.array_equal(continued.predict_raw(X), longer.predict_raw(X))
    assert scores["valid_0"]["rmse"] == list(longer.eval_history)[10:]  # the valid margins started there too


def test_continued_training_refuses_another_objective():
    X, y = make_data()
    first = bst.train({**PARAMS, "objective": bst.Objective.absolute()}, bst.Dataset(X, y), 3)
    with pytest.raises(ValueError, match="init_model: its objective"):
        bst.train(PARAMS, bst.Dataset(X, y), 3, init_model=first)


def fold_by_hand(X, y, train_rows, test_rows, config):
    model = bst.GBDTModel.train(bst.Dataset(X[train_rows], y[train_rows]), config,
                                val_set=bst.Dataset(X[test_rows], y[test_rows]))
    return list(model.eval_history)


def test_cv_means_and_deviations_are_the_folds_by_hand():
    X, y = make_data(seed=3)
    folds = list(KFold(4, shuffle=True, random_state=0).split(X))
    result = bst.cv(PARAMS, bst.Dataset(X, y), 15, folds=folds)
    config = bst.GBDTConfig(n_estimators=15, **PARAMS)
    by_hand = np.array([fold_by_hand(X, y, a, b, config) for a, b in folds])
    assert sorted(result) == ["valid rmse-mean", "valid rmse-stdv"]
    np.testing.assert_array_equal(result["valid rmse-mean"], by_hand.mean(axis=0))
    np.testing.assert_array_equal(result["valid rmse-stdv"], by_hand.std(axis=0))
    # a scikit-learn splitter is the same folds
    splitter = bst.cv(PARAMS, bst.Dataset(X, y), 15, folds=KFold(4, shuffle=True, random_state=0))
    assert splitter == result


def test_cv_early_stopping_ends_at_the_best_mean_round():
    X, y = make_data(seed=4)
    full = bst.cv({**PARAMS, "learning_rate": 0.8}, bst.Dataset(X, y), 80, nfold=3)
    stopped = bst.cv({**PARAMS, "learning_rate": 0.8}, bst.Dataset(X, y), 80, nfold=3, early_stopping_rounds=4)
    means = full["valid rmse-mean"]
    best = len(stopped["valid rmse-mean"]) - 1
    assert best < 79 and means[best] == min(means[:best + 5])
    assert stopped["valid rmse-mean"] == means[:best + 1]


def test_cv_folds_keep_classes_and_queries_whole():
    X, y = make_data(seed=5)
    labels = (y > np.quantile(y, 0.8)).astype(float)  # 20% positives
    result = bst.cv({**PARAMS, "objective": bst.Objective.logistic()}, bst.Dataset(X, labels), 3, nfold=5,
                    return_cvbooster=True, eval_train_metric=True)
    assert len(result["cvbooster"]) == 5 and "train logloss-mean" in result
    # stratified by default for a classifier: every fold holds 28 of the 140 positives
    folds = functional._folds(bst.Dataset(X, labels), 5, True, True, 0)
    assert [int(labels[test].sum()) for _, test in folds] == [28] * 5
    assert sorted(np.concatenate([test for _, test in folds]).tolist()) == list(range(700))
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(70), 10)
    relevance = rng.integers(0, 3, size=700).astype(float)
    ranked = bst.cv({**PARAMS, "objective": bst.Objective.lambdarank()}, bst.Dataset(X, relevance, qid=qid), 3,
                    nfold=4)
    assert len(ranked["valid ndcg@10-mean"]) == 3  # folds of whole queries (a cut query is a ValueError)
    by_group = bst.cv({**PARAMS, "objective": bst.Objective.lambdarank()}, bst.Dataset(X, relevance, qid=qid), 3,
                      folds=GroupKFold(4))
    assert len(by_group["valid ndcg@10-mean"]) == 3


def test_thread_names_and_rounds():
    X, y = make_data()
    data = bst.Dataset(X, y)
    one = bst.train({**PARAMS, "nthread": 1}, data, 5)
    assert bst.train({**PARAMS, "num_threads": -1}, data, 5).to_bytes() == one.to_bytes()
    assert bst.train({**PARAMS, "n_jobs": None}, data, 5).to_bytes() == one.to_bytes()
    with pytest.raises(ValueError, match="thread counts given twice with different values"):
        bst.train({**PARAMS, "nthread": 1, "n_jobs": 2}, data, 5)
    with pytest.raises(TypeError, match="params must be a dict"):
        bst.train([("max_depth", 3)], data, 5)
    assert bst.train({**PARAMS, "n_estimators": 7}, data).n_trees == 7
    assert bst.train(PARAMS, data).n_trees == 100  # GBDTConfig's default


def test_rounds_in_params_win_over_num_boost_round(caplog):
    X, y = make_data()
    with caplog.at_level(logging.WARNING, logger="boosters"):
        model = bst.train({**PARAMS, "n_estimators": 4}, bst.Dataset(X, y), num_boost_round=9)
    assert model.n_trees == 4 and "num_boost_round=9 is ignored" in caplog.text
    assert mean_squared_error(y, model.predict(X)) < np.var(y)
